/* Launch-geometry tuning table: winners of the sweeps (tools/tune_gemv),
 * keyed by device (name prefix + compute capability), arm and shape, compiled
 * into the library (kernels/tuning_table.c, generated). A shape or device
 * not in the table gets the arm's rule-of-thumb default. */
#ifndef LR_TUNING_H
#define LR_TUNING_H
#include <stddef.h>

#define LR_TUNE_KNOBS 10 /* threads, rpw, unroll, tile, ksplit/extra0, xsmem/extra1, minb, extra2, extra3, extra4 */

typedef struct lr_tuning_row {
    const char *device; /* prefix of the device name, e.g. "NVIDIA H200" */
    int cc;             /* 90 */
    const char *arm;
    int rows, cols;
    int knobs[LR_TUNE_KNOBS];
    double us;          /* measured time of the winner */
} lr_tuning_row;

extern const lr_tuning_row lr_tuning_table[];
extern const int lr_tuning_table_n;

/* 1 and the knobs when the current device (or, while one is set, the target
 * of lr_tuning_set_target) has an entry for (arm, rows, cols), or,
 * with lr_tuning_sibling on, its sibling has (the first other tuned device of
 * its compute capability: an H100 gets the H200's rows where it has none of
 * its own, the same SM; each
 * spec still takes its grid from the running device's SM count); 0
 * otherwise (the rule-of-thumb defaults). */
int lr_tuning_lookup(const char *arm, int rows, int cols, int knobs[LR_TUNE_KNOBS]);
/* The same over a given table (tests). */
int lr_tuning_lookup_in(const lr_tuning_row *tab, int n, const char *name, int cc, const char *arm, int rows, int cols,
                        int knobs[LR_TUNE_KNOBS]);
/* For reports (bench_engine's tuning_rows column; no commas): "DEV (K rows)" when
 * the device has rows of its own, "+ SIB's elsewhere" after it while its sibling
 * fills the other shapes, "SIB's (borrowed)" with none of its own, else
 * "none (rule of thumb)". Overrides (LEECHRT_TUNE) are not counted. */
void lr_tuning_rows_desc_in(const lr_tuning_row *tab, int n, const char *name, int cc, char *buf, size_t len);
/* The same for the current device, or the target while one is set. */
void lr_tuning_current_rows_desc(char *buf, size_t len);
/* The target's name while one is set, else the current device's ("" when neither is;
 * the target's lives in a buffer the next lr_tuning_set_target overwrites). */
const char *lr_tuning_current_device(void);
/* Whether shapes a device has no row for take its sibling's: 1 (default) or 0, set from
 * LEECHRT_TUNE_SIBLING through lr_tuning_sibling_set (garbage refused naming
 * `what`, the value unchanged). */
extern int lr_tuning_sibling;
int lr_tuning_sibling_set(const char *what, const char *s);
/* tune_gemv --vary-side: the geometry lr_tuning_lookup gives the Planes14S
 * arm `arm` for (rows, cols), falling back as the engine's getters do (the
 * SwiGLU arm to leech_p14s's row; leech_p14s3 to leech_p14s's; the 3-bit
 * SwiGLU arm to leech_p14s_swiglu's, then leech_p14s's), with 0-4 side
 * warps (extra3 bits 16-18; an extra3 of -1, every feature off, becomes the
 * side bits alone): 5 knob vectors in out, or 0 when there is no row. *now
 * (when not NULL): the index of the vector that is the looked-up geometry
 * itself, the one the engine runs today (-1 if none is). */
int lr_tuning_side_candidates(const char *arm, int rows, int cols, int out[5][LR_TUNE_KNOBS], int *now);
/* LEECHRT_TUNE (s: its value; NULL or "" = none): geometries that
 * lr_tuning_lookup returns ahead of the table, whatever the device, as
 * "ARM:ROWSxCOLS=K1,...,K10" entries separated by ';' (the table's knob
 * order; the knobs may be separated by '/' too, for bench_engine --env). Garbage is refused naming `what`, and the previous overrides stay. */
int lr_tuning_override_set(const char *what, const char *s);
/* 1 and the knobs when an override names (arm, rows, cols). */
int lr_tuning_override_lookup(const char *arm, int rows, int cols, int knobs[LR_TUNE_KNOBS]);
/* Look up as if running on this device (name prefix, cc), ahead of the
 * initialized device if there is one, until called with NULL: lets a machine
 * without a GPU warm the cubin cache for one, and a test check one device's
 * rows on another. */
void lr_tuning_set_target(const char *device_name, int cc);

/* The fastest candidate per (device, shape) among the rows of arm `arm` in a
 * tune_gemv CSV (columns commit, device "NAME (sm_XY)", arm, rows, cols, us
 * and the knob columns; repeated headers of appended runs skipped), only
 * rows of the comma-separated `commits` unless NULL. row.device/row.arm point
 * into the pick itself (re-point them after copying a pick). */
typedef struct lr_tuning_pick {
    lr_tuning_row row;
    char device[64], arm[32];
} lr_tuning_pick;
int lr_tuning_csv_best(const char *path, const char *arm, const char *commits, lr_tuning_pick *picks, int max, int *n);
/* Whether the engine runs a candidate with these knobs as measured (rows it
 * does not are left out of the table). */
int lr_tuning_engine_runs(const char *arm, const int knobs[LR_TUNE_KNOBS]);
/* The rows of a tuning table's C source as tools/tune_gemv writes it (text of
 * len bytes; `path` names it in messages), in file order: at most max, row
 * pointers into the picks themselves. LR_EFORMAT (naming the file and line)
 * for anything else, LR_ERANGE past max rows. */
int lr_tuning_table_parse(const char *text, size_t len, const char *path, lr_tuning_pick *rows, int max, int *n);
/* The same from an open stream; `path` names it in messages. */
#include <stdio.h>
int lr_tuning_csv_best_stream(FILE *f, const char *path, const char *arm, const char *commits, lr_tuning_pick *picks,
                              int max, int *n);

#endif
