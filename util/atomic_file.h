/* Whole-file writes that never leave a partial file: write a temp file in the
 * same folder, fsync, rename over the target. */
#ifndef LR_ATOMIC_FILE_H
#define LR_ATOMIC_FILE_H
#include <stddef.h>
#include <stdio.h>

typedef struct lr_afile {
    FILE *f;
    char tmp[4096];
    char dst[4096];
} lr_afile;

int lr_afile_open(lr_afile *a, const char *path);   /* temp file beside path */
int lr_afile_commit(lr_afile *a);                   /* flush, fsync, rename */
void lr_afile_abort(lr_afile *a);                   /* close and unlink temp */
int lr_write_file_atomic(const char *path, const void *data, size_t n);

#endif
