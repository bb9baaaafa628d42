/* The layout registry and the built-in passthrough layouts. */
#include "loader/layout.h"
#include "loader/codec.h"
#include "util/err.h"

#include <pthread.h>
#include <string.h>

/* ---- passthrough: the file's bytes are the device bytes ---- */

static int is_dense(const lr_tensor_view *t)
{
    return t->codec == LR_CODEC_F32 || t->codec == LR_CODEC_F16 || t->codec == LR_CODEC_BF16;
}
static int is_int8g(const lr_tensor_view *t) { return t->codec == LR_CODEC_INT8G; }
static int is_leech(const lr_tensor_view *t) { return t->codec == LR_CODEC_LEECH; }

static int passthrough_plan(const lr_tensor_view *t, lr_layout_plan *p)
{
    memset(p, 0, sizeof *p);
    p->bytes = (size_t)t->data_bytes;
    p->units = 1;
    p->direct = t->data;
    p->nparts = t->nparts;
    for (int i = 0; i < t->nparts; i++) {
        p->parts[i].name = lr_part_name(t->codec, i);
        p->parts[i].offset = (size_t)t->parts[i].offset;
        p->parts[i].bytes = (size_t)t->parts[i].bytes;
    }
    return LR_OK;
}

/* Nothing to unfold; the loader's verification already covered the bytes
 * (checksum, Leech indices inside the ball, finite scales). */
static int passthrough_unfold(const lr_tensor_view *t, const lr_layout_plan *p, uint64_t u0, uint64_t u1, void *dst)
{
    (void)t; (void)p; (void)u0; (void)u1; (void)dst;
    return LR_OK;
}

const lr_layout lr_layout_dense = { "dense", is_dense, passthrough_plan, passthrough_unfold, NULL, NULL };
const lr_layout lr_layout_int8g = { "int8g", is_int8g, passthrough_plan, passthrough_unfold, NULL, NULL };
const lr_layout lr_layout_leech_archive = { "leech-archive", is_leech, passthrough_plan, passthrough_unfold, NULL,
                                            NULL };

/* ---- registry ---- */

#define MAX_LAYOUTS 64
static const lr_layout *g_layouts[MAX_LAYOUTS] = { &lr_layout_dense, &lr_layout_int8g, &lr_layout_leech_archive };
static int g_n = 3;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

int lr_layout_register(const lr_layout *l)
{
    if (!l || !l->name || !l->supports || !l->plan || !l->unfold)
        return LR_FAIL(LR_EINVAL, "layout: name, supports, plan and unfold are required");
    pthread_mutex_lock(&g_lock);
    int rc = LR_OK;
    for (int i = 0; i < g_n && !rc; i++)
        if (!strcmp(g_layouts[i]->name, l->name)) rc = LR_FAIL(LR_EINVAL, "layout %s registered twice", l->name);
    if (!rc && g_n == MAX_LAYOUTS) rc = LR_FAIL(LR_EINVAL, "layout registry full (%d)", MAX_LAYOUTS);
    if (!rc) {
        g_layouts[g_n] = l; /* published by the release store of the count */
        __atomic_store_n(&g_n, g_n + 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

int lr_layout_count(void) { return __atomic_load_n(&g_n, __ATOMIC_ACQUIRE); }

const lr_layout *lr_layout_at(int i) { return i >= 0 && i < lr_layout_count() ? g_layouts[i] : NULL; }

const lr_layout *lr_layout_find(const char *name)
{
    for (int i = 0; i < lr_layout_count(); i++)
        if (!strcmp(g_layouts[i]->name, name)) return g_layouts[i];
    return NULL;
}

const lr_layout *lr_layout_choose(const lr_tensor_view *t, const char *prefer)
{
    for (const char *s = prefer; s && *s;) {
        size_t n = strcspn(s, ",");
        for (int i = 0; i < lr_layout_count(); i++) {
            const lr_layout *l = g_layouts[i];
            if (strlen(l->name) == n && !strncmp(l->name, s, n) && l->supports(t)) return l;
        }
        s += n + (s[n] == ',');
    }
    if (is_dense(t)) return &lr_layout_dense;
    if (is_int8g(t)) return &lr_layout_int8g;
    if (is_leech(t)) return &lr_layout_leech_archive;
    return NULL;
}
