/* Planes14 from the model artifact: tensor views (loader/model.h) to a
 * host image (one tensor or several concatenated by rows), and the
 * per-tensor "planes14" layout for the loader's hook (loader/layout.h). */
#ifndef LR_LEECH_VRAM_P14_LAYOUT_H
#define LR_LEECH_VRAM_P14_LAYOUT_H
#include "layouts/leech_vram/p14.h"
#include "loader/layout.h"
#include "loader/model.h"

/* Unfolds views (Leech tensors with the same columns, ball and gain width;
 * rows concatenated in order) into a host image with nthreads threads.
 * Errors name the tensors (mismatched gain widths, columns, codecs). The
 * views' rotations are not looked at (see lr_p14_views_rotation). */
int lr_p14_unfold_views(const lr_tensor_view *const *views, int nviews, int nthreads, lr_p14 *L);
/* The views as Leech matrices sharing one layout (1..max of them: Leech
 * codec, 2 dims, the same columns, ball and gain width), errors naming the
 * tensors and `who` (the layout). Shared by the layouts that concatenate
 * tensors (Planes14, Planes14S). */
int lr_leech_views_to_matrices(const lr_tensor_view *const *views, int n, int max, const char *who,
                               lr_leech_matrix *ms);
/* LR_OK and the shared input rotation when every view has the same one
 * (one rotated x can feed the concatenation); LR_EINVAL naming two views
 * that differ. */
int lr_p14_views_rotation(const lr_tensor_view *const *views, int nviews, int *kind, uint64_t *seed);

/* The loader layout "planes14": device bytes = the image of one tensor
 * (parts "records", "ctab", "scale", "tail"), units = row groups of 16. */
extern const lr_layout lr_layout_planes14;
/* Registers the Leech VRAM layouts with the loader (idempotent, thread-safe). */
int lr_leech_vram_register_layouts(void);

#endif
