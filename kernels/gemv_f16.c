#include "kernels/kernels.h"
#include "util/err.h"
#include "util/half.h"
#include "kernels/tuning.h"

#include <math.h>

#define GEMV_PARAMS                                                                        \
    .nparams = 5,                                                                          \
    .params = { { "W", LR_T_PTR, LR_E_F16, LR_IN }, { "x", LR_T_PTR, LR_E_F32, LR_IN },   \
                { "y", LR_T_PTR, LR_E_F32, LR_OUT }, { "rows", LR_T_I32, 0, 0 },          \
                { "cols", LR_T_I32, 0, 0 } }

const lr_kernel_desc lr_gemv_f16_desc = {
    .name = "gemv_f16", GEMV_PARAMS,
    .host = (lr_host_fn)lr_gemv_f16_host,
    .host_mag = (lr_host_fn)lr_gemv_f16_host_mag,
};

const lr_kernel_desc lr_gemv_noweights_desc = {
    .name = "gemv_noweights", GEMV_PARAMS,
    .host = (lr_host_fn)lr_gemv_noweights_host,
    .host_mag = (lr_host_fn)lr_gemv_noweights_host_mag,
};

/* f64 reference; `mag` selects sum |w*x|, the scale a row's error is judged by. */
static void gemv(const uint16_t *W, const float *x, float *y, int rows, int cols, int mag, int noweights)
{
    for (int r = 0; r < rows; r++) {
        double s = 0;
        for (int c = 0; c < cols; c++) {
            double w = noweights ? 1.0 : lr_half_to_float(W[(size_t)r * cols + c]);
            double t = w * x[c];
            s += mag ? fabs(t) : t;
        }
        y[r] = (float)s;
    }
}

void lr_gemv_f16_host(const uint16_t *W, const float *x, float *y, int32_t rows, int32_t cols) { gemv(W, x, y, rows, cols, 0, 0); }
void lr_gemv_f16_host_mag(const uint16_t *W, const float *x, float *y, int32_t rows, int32_t cols) { gemv(W, x, y, rows, cols, 1, 0); }
void lr_gemv_noweights_host(const uint16_t *W, const float *x, float *y, int32_t rows, int32_t cols) { gemv(W, x, y, rows, cols, 0, 1); }
void lr_gemv_noweights_host_mag(const uint16_t *W, const float *x, float *y, int32_t rows, int32_t cols) { gemv(W, x, y, rows, cols, 1, 1); }

lr_gemv_geom lr_gemv_f16_default_geom(int rows, int cols)
{
    lr_gemv_geom g = { 256, 2, 4, 0, 1, 0 };
    int t[LR_TUNE_KNOBS];
    if (lr_tuning_lookup("f16", rows, cols, t)) {
        /* knob encoding as in lr_gemv_arm_opts: extra1 1 = x through L1, 2 = x in smem */
        g = (lr_gemv_geom){ t[0], t[1], t[2], t[3], t[4], t[5] == 2 };
        return g;
    }
    /* Small matrices: split columns over warps so the grid still fills the chip. */
    if (rows <= 2048) g.rpw = 1, g.ksplit = 4;
    return g;
}

int lr_gemv_f16_spec(lr_jit_spec *s, lr_launch_geom *g, int rows, int cols, lr_gemv_geom geom, int smem_budget,
                     int noweights)
{
    if (rows <= 0 || cols <= 0) return LR_FAIL(LR_EINVAL, "gemv shape %dx%d", rows, cols);
    if (geom.ksplit <= 0) geom.ksplit = 1;
    if (geom.threads % 32 || geom.threads < 32 || geom.threads > 1024 || geom.rpw < 1 || geom.rpw > 32 ||
        geom.unroll < 1 || (geom.threads / 32) % geom.ksplit)
        return LR_FAIL(LR_EINVAL, "bad gemv geometry threads=%d rpw=%d unroll=%d ksplit=%d", geom.threads, geom.rpw,
                       geom.unroll, geom.ksplit);
    int tile = cols;
    if (geom.xsmem) {
        tile = geom.tile > 0 ? geom.tile : cols;
        int max_tile = ((smem_budget - 1024) / 4) & ~7; /* leave room for the static reduction buffer */
        if (tile > max_tile) tile = max_tile;
        if (tile < 8) return LR_FAIL(LR_ERANGE, "shared-memory budget %d too small for gemv", smem_budget);
        if (tile < cols) tile &= ~7;
    }
    lr_jit_spec_init(s, "gemv_f16.cu", noweights ? "gemv_noweights" : "gemv_f16");
    lr_jit_spec_set(s, "rows", rows);
    lr_jit_spec_set(s, "cols", cols);
    lr_jit_spec_set(s, "threads", geom.threads);
    lr_jit_spec_set(s, "rpw", geom.rpw);
    lr_jit_spec_set(s, "unroll", geom.unroll);
    lr_jit_spec_set(s, "tile", tile);
    lr_jit_spec_set(s, "ksplit", geom.ksplit);
    lr_jit_spec_set(s, "xsmem", geom.xsmem ? 1 : 0);
    if (noweights) lr_jit_spec_set(s, "noweights", 1);
    int rows_per_cta = geom.threads / 32 / geom.ksplit * geom.rpw;
    g->cluster = (lr_dim3){ 0, 0, 0 };
    g->grid = (lr_dim3){ (unsigned)((rows + rows_per_cta - 1) / rows_per_cta), 1, 1 };
    g->block = (lr_dim3){ (unsigned)geom.threads, 1, 1 };
    g->smem = geom.xsmem ? (unsigned)tile * 4u : 0;
    return LR_OK;
}

const lr_shape lr_qwen3_shapes[] = {
    /* hidden, q heads*128, kv heads*128, intermediate */
    { "4B", "q", 4096, 2560 },   { "4B", "k", 1024, 2560 },   { "4B", "v", 1024, 2560 },
    { "4B", "o", 2560, 4096 },   { "4B", "gate", 9728, 2560 }, { "4B", "up", 9728, 2560 },
    { "4B", "down", 2560, 9728 },
    { "8B", "q", 4096, 4096 },   { "8B", "k", 1024, 4096 },   { "8B", "v", 1024, 4096 },
    { "8B", "o", 4096, 4096 },   { "8B", "gate", 12288, 4096 }, { "8B", "up", 12288, 4096 },
    { "8B", "down", 4096, 12288 },
    { "14B", "q", 5120, 5120 },  { "14B", "k", 1024, 5120 },  { "14B", "v", 1024, 5120 },
    { "14B", "o", 5120, 5120 },  { "14B", "gate", 17408, 5120 }, { "14B", "up", 17408, 5120 },
    { "14B", "down", 5120, 17408 },
    { "32B", "q", 8192, 5120 },  { "32B", "k", 1024, 5120 },  { "32B", "v", 1024, 5120 },
    { "32B", "o", 5120, 8192 },  { "32B", "gate", 25600, 5120 }, { "32B", "up", 25600, 5120 },
    { "32B", "down", 5120, 25600 },
};
const int lr_qwen3_nshapes = (int)(sizeof lr_qwen3_shapes / sizeof lr_qwen3_shapes[0]);

const char *const lr_layer_matrix_names[LR_LAYER_MATRICES] = { "q", "k", "v", "o", "gate", "up", "down", "qkv", "gateup" };

void lr_qwen3_layer_shapes(int si, int rows[LR_LAYER_MATRICES], int cols[LR_LAYER_MATRICES])
{
    for (int k = 0; k < 7; k++) rows[k] = lr_qwen3_shapes[si + k].rows, cols[k] = lr_qwen3_shapes[si + k].cols;
    rows[7] = rows[0] + rows[1] + rows[2], cols[7] = cols[0];
    rows[8] = rows[4] + rows[5], cols[8] = cols[4];
}

int lr_bench_copies(int rows, int cols, double bits_per_weight, int l2_bytes)
{
    double bytes = (double)rows * cols * (bits_per_weight > 0 ? bits_per_weight : 16) / 8;
    int copies = (int)ceil(4.0 * l2_bytes / bytes);
    if (copies < LR_BENCH_MIN_COPIES) copies = LR_BENCH_MIN_COPIES;
    if (copies > 64) copies = 64;
    const int fit = (int)(LR_BENCH_MAX_BYTES / bytes);
    if (copies > fit) copies = fit;
    return copies < 2 ? 2 : copies;
}
