#include "jit/timeline.h"
#include "jit/jit.h"
#include "util/err.h"

#include <stdlib.h>
#include <string.h>

/* lr_common.cuh's lr_tl_cfg, as the device lays it out */
typedef struct {
    uint64_t count, recs;
    uint32_t cap, mod;
} tl_cfg;

typedef struct {
    CUfunction orig, twin;
    CUmodule mod;
    char name[1024];
} twin;

static twin *g_tw;
static int g_ntw, g_captw;
static tl_cfg g_cfg;

/* Tells twin i (id i + 1) the buffer. */
static int tell(int i)
{
    CUdeviceptr p;
    size_t n;
    int rc = lr_cu_module_global(g_tw[i].mod, "lr_tl", &p, &n);
    if (rc) return rc;
    if (n != sizeof(tl_cfg)) return LR_FAIL(LR_EINVAL, "timeline: lr_tl is %zu bytes in %s, not %zu", n, g_tw[i].name, sizeof(tl_cfg));
    tl_cfg c = g_cfg;
    c.mod = (uint32_t)i + 1;
    return lr_cu_h2d(p, &c, sizeof c);
}

int lr_jit_timeline_buffer(CUdeviceptr count, CUdeviceptr recs, unsigned cap)
{
    g_cfg = (tl_cfg){ count, recs, cap, 0 };
    if (!count || !recs) g_cfg = (tl_cfg){ 0, 0, 0, 0 };
    for (int i = 0; i < g_ntw; i++) {
        int rc = tell(i);
        if (rc) return rc;
    }
    return LR_OK;
}

int lr_jit_timeline_twin(CUfunction f, CUfunction *out)
{
    *out = NULL;
    for (int i = 0; i < g_ntw; i++)
        if (g_tw[i].orig == f || g_tw[i].twin == f) return *out = g_tw[i].twin, LR_OK;
    lr_jit_spec s;
    int rc = lr_jit_lookup(f, &s, NULL);
    if (rc) return lr_wrap(rc, "timeline twin");
    if (g_ntw == g_captw) {
        int cap = g_captw ? 2 * g_captw : 32;
        twin *t = realloc(g_tw, sizeof *t * (size_t)cap);
        if (!t) return LR_FAIL(LR_ENOMEM, "out of memory");
        g_tw = t, g_captw = cap;
    }
    twin *t = &g_tw[g_ntw];
    memset(t, 0, sizeof *t);
    t->orig = f;
    lr_jit_kernel_name(&s, t->name, sizeof t->name);
    if ((rc = lr_jit_spec_set(&s, "timeline", 1))) return rc;
    if ((rc = lr_jit_get(&s, &t->twin))) return lr_wrap(rc, "timeline twin of %s", t->name);
    if ((rc = lr_jit_lookup(t->twin, NULL, &t->mod))) return rc;
    g_ntw++;
    if ((rc = tell(g_ntw - 1))) return rc;
    *out = t->twin;
    return LR_OK;
}

const char *lr_jit_timeline_name(unsigned id) { return id >= 1 && (int)id <= g_ntw ? g_tw[id - 1].name : NULL; }

CUfunction lr_jit_timeline_map(CUfunction f, void *user)
{
    (void)user;
    CUfunction t;
    return lr_jit_timeline_twin(f, &t) ? NULL : t;
}

void lr_jit_timeline_reset(void)
{
    free(g_tw);
    g_tw = NULL, g_ntw = g_captw = 0;
    g_cfg = (tl_cfg){ 0, 0, 0, 0 };
}
