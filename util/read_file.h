/* Whole-file reads into memory: a file, a pipe or FIFO (read to its end, not
 * to a size fstat reports), or standard input. */
#ifndef LR_READ_FILE_H
#define LR_READ_FILE_H
#include <stddef.h>

/* How lr_read_file_opts reads; all zero is lr_read_file. */
typedef struct lr_read_opts {
    size_t max;     /* bytes at most (0: no limit); a longer input is an error naming max */
    int truncate;   /* with max: keep the first max bytes of a longer input instead */
    int dash_stdin; /* "-" is standard input (read to its end and left open) */
} lr_read_opts;

/* Reads a whole file into a malloc'd buffer, NUL-terminated (*n excludes the
 * NUL; an empty file gives a buffer holding just it). On failure *data is NULL
 * and the message names the file: LR_EIO when it cannot be opened or read,
 * LR_EINVAL for a folder or an input past max, LR_ENOMEM. */
int lr_read_file_opts(const char *path, const lr_read_opts *o, void **data, size_t *n);

/* lr_read_file_opts with no limit and no "-". */
int lr_read_file(const char *path, void **data, size_t *n);

#endif
