/* Planes14S from the model artifact: tensor views (loader/model.h), one
 * or several concatenated by rows (fused q|k|v, gate|up), to a host layout
 * (layouts/leech_vram/p14s.h). The views' input rotations: see
 * lr_p14_views_rotation (layouts/leech_vram/p14_layout.h). */
#ifndef LR_LEECH_VRAM_P14S_LAYOUT_H
#define LR_LEECH_VRAM_P14S_LAYOUT_H
#include "layouts/leech_vram/p14s.h"
#include "loader/model.h"

/* Errors name the tensors (mismatched gain widths, columns, balls, codecs). */
int lr_p14s_unfold_views(const lr_tensor_view *const *views, int nviews, int nthreads, lr_p14s *L);
/* Two views of equal rows interleaved (gate|up; lr_p14s_unfold_pair). */
int lr_p14s_unfold_views_pair(const lr_tensor_view *const views[2], int nthreads, lr_p14s *L);

#endif
