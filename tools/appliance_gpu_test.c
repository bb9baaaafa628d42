/* The appliance path on a GPU (skipped without one): `cache warm --models
 * 14B` must plan every kernel the GPU engine opens for a 14B model, plain and
 * with the rotated residual, so that an engine in a process without NVRTC
 * opens from that cache alone and steps exactly as one that compiles.
 * (cache_test checks the plan's names without a GPU; this runs it.) */
#include "jit/jit.h"
#include "jit/nvrtc.h"
#include "loader/model.h"
#include "loader/synthetic.h"
#include "rt/cu.h"
#include "rt/engine.h"
#include "test/t.h"
#include "util/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STEPS 4

static char g_bin[1024], g_self[1024];

/* Greedy tokens from token 1 on the GPU engine, as "t1 t2 ...". */
static int gpu_tokens(const char *path, char *out, size_t n)
{
    lr_model *m;
    int rc = lr_model_open(path, 0, &m);
    if (rc) return rc;
    lr_engine_opts o = { .max_context = STEPS + 4 };
    lr_engine *g = NULL;
    rc = lr_engine_gpu_ops.open(m, &o, &g);
    int32_t tok = 1;
    size_t k = 0;
    out[0] = 0;
    for (int s = 0; s < STEPS && !rc; s++) {
        rc = g->ops->step_greedy(g, tok, &tok);
        if (!rc) k += (size_t)snprintf(out + k, n - k, "%s%d", s ? " " : "", (int)tok);
    }
    if (g) g->ops->close(g);
    lr_model_close(m);
    return rc;
}

/* The child: NVRTC off (LEECHRT_NVRTC=none in its environment), kernels
 * from dir only; prints its tokens, or the error. */
static int child(const char *dir, const char *path)
{
    lr_jit_set_cache_dir(dir);
    if (lr_nvrtc_available()) return fprintf(stderr, "child: NVRTC is available\n"), 3;
    char toks[256];
    if (gpu_tokens(path, toks, sizeof toks)) return fprintf(stderr, "child: %s\n", lr_errmsg()), 2;
    printf("%s\n", toks);
    return 0;
}

static int run_child(const char *dir, const char *path, char *out, size_t n)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "LEECHRT_NVRTC=none '%s' --appliance-child '%s' '%s'", g_self, dir, path);
    FILE *f = popen(cmd, "r");
    if (!f) return -1;
    out[0] = 0;
    if (!fgets(out, (int)n, f)) out[0] = 0;
    out[strcspn(out, "\n")] = 0;
    return pclose(f);
}

static int test_engine_from_warmed_cache(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, lr_errmsg());
    T_SKIP_IF(!lr_nvrtc_available(), "NVRTC not installed (cache warm needs it)");
    T_SKIP_IF(access(g_bin, X_OK) != 0, "cache tool not built");
    char dir[64] = "/tmp/lrappl.XXXXXX", cmd[2048];
    T_ASSERT(mkdtemp(dir), "mkdtemp");
    /* warmed for this device (its name picks the tuning table's rows, as the engine's lookups do) */
    const lr_device_info *d = lr_cu_device();
    snprintf(cmd, sizeof cmd, "'%s' --dir %s warm --models 14B --device '%s' --arch sm_%d%d --smem-budget %d >/dev/null",
             g_bin, dir, d->name, d->cc_major, d->cc_minor, lr_cu_smem_budget());
    T_ASSERT(system(cmd) == 0, "cache warm failed: %s", cmd);
    int rc = T_PASS;
    for (int rres = 0; rres <= 1 && rc == T_PASS; rres++) {
        lr_model_config c;
        T_OK(lr_synth_config("14B", &c));
        c.n_layers = 1;
        char path[256], want[256], got[256];
        snprintf(path, sizeof path, "/tmp/lr_appliance_%d_%d.lrt", rres, (int)getpid());
        lr_synth_opts o = { .seed = 5, .gain_bits = 1, .rotated_residual = rres };
        T_OK(lr_synth_write(path, &c, &o));
        T_OK(gpu_tokens(path, want, sizeof want));
        const int st = run_child(dir, path, got, sizeof got);
        printf("    14B, 1 layer, %s residual: compiled %s, warmed cache only %s (child exit %d)\n",
               rres ? "rotated" : "plain", want, got, st);
        if (st != 0 || strcmp(want, got)) rc = T_FAIL;
        unlink(path);
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) rc = T_FAIL;
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "--appliance-child")) return child(argv[2], argv[3]);
    snprintf(g_self, sizeof g_self, "%s", argv[0]);
    char dir[4000];
    if (t_bin_dir(dir, sizeof dir)) snprintf(g_bin, sizeof g_bin, "%s/cache", dir);
    static const t_case cases[] = { T_CASE(test_engine_from_warmed_cache) };
    return t_main(__FILE__, cases, (int)(sizeof cases / sizeof cases[0]), argc, argv);
}
