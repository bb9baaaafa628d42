#include "kernels/tuning.h"
#include "rt/cu.h"
#include "util/setting.h"

#include <stdio.h>
#include <string.h>

static char g_target[256];
static int g_target_cc;

void lr_tuning_set_target(const char *device_name, int cc)
{
    snprintf(g_target, sizeof g_target, "%s", device_name ? device_name : "");
    g_target_cc = cc;
}

int lr_tuning_sibling = 1;

int lr_tuning_sibling_set(const char *what, const char *s) { return lr_setting_int(what, s, 0, 1, &lr_tuning_sibling); }

static int row_of_device(const lr_tuning_row *t, const char *name, int cc)
{
    return t->cc == cc && !strncmp(name, t->device, strlen(t->device));
}

/* The first tuned device of compute capability cc in tab that is not
 * `name` (NULL: none). */
static const char *sibling_in(const lr_tuning_row *tab, int n, const char *name, int cc)
{
    for (int i = 0; i < n; i++)
        if (tab[i].cc == cc && !row_of_device(&tab[i], name, cc)) return tab[i].device;
    return NULL;
}

int lr_tuning_lookup_in(const lr_tuning_row *tab, int n, const char *name, int cc, const char *arm, int rows, int cols,
                        int knobs[LR_TUNE_KNOBS])
{
    if (!name || !name[0]) return 0;
    /* the device's own row, else (a shape it was not swept on, or a device
       not in the table) its sibling's: the geometries are valid there, each
       spec taking its grid from the running device's SM count and
       shared-memory bound */
    for (int pass = 0; pass < 2; pass++) {
        const char *who = !pass ? name : lr_tuning_sibling ? sibling_in(tab, n, name, cc) : NULL;
        if (!who) break;
        for (int i = 0; i < n; i++) {
            const lr_tuning_row *t = &tab[i];
            if (t->rows == rows && t->cols == cols && !strcmp(t->arm, arm) && row_of_device(t, who, cc)) {
                memcpy(knobs, t->knobs, sizeof t->knobs);
                return 1;
            }
        }
    }
    return 0;
}

void lr_tuning_rows_desc_in(const lr_tuning_row *tab, int n, const char *name, int cc, char *buf, size_t len)
{
    int own = 0;
    const char *dev = NULL;
    for (int i = 0; name && name[0] && i < n; i++)
        if (row_of_device(&tab[i], name, cc)) own++, dev = tab[i].device;
    const char *sib = name && name[0] && lr_tuning_sibling ? sibling_in(tab, n, name, cc) : NULL;
    if (own && sib) snprintf(buf, len, "%s (%d row%s) + %s's elsewhere", dev, own, own > 1 ? "s" : "", sib);
    else if (own) snprintf(buf, len, "%s (%d row%s)", dev, own, own > 1 ? "s" : "");
    else if (sib) snprintf(buf, len, "%s's (borrowed)", sib);
    else snprintf(buf, len, "none (rule of thumb)");
}

/* The target, where one is set, comes ahead of the initialized device: a
 * test that asks for the H200's rows gets them on whatever card it runs on
 * (before, only while no test case had initialized the device yet, so such
 * a case passed or failed by its place in the program). */
const char *lr_tuning_current_device(void)
{
    if (g_target[0]) return g_target;
    const lr_device_info *d = lr_cu_device();
    return d ? d->name : g_target;
}

/* the target's compute capability where one is set, else the current device's */
static int current_cc(void)
{
    if (g_target[0]) return g_target_cc;
    const lr_device_info *d = lr_cu_device();
    return d ? d->cc_major * 10 + d->cc_minor : 0;
}

void lr_tuning_current_rows_desc(char *buf, size_t len)
{
    lr_tuning_rows_desc_in(lr_tuning_table, lr_tuning_table_n, lr_tuning_current_device(), current_cc(), buf, len);
}

int lr_tuning_lookup(const char *arm, int rows, int cols, int knobs[LR_TUNE_KNOBS])
{
    if (lr_tuning_override_lookup(arm, rows, cols, knobs)) return 1;
    return lr_tuning_lookup_in(lr_tuning_table, lr_tuning_table_n, lr_tuning_current_device(), current_cc(), arm, rows,
                               cols, knobs);
}

int lr_tuning_side_candidates(const char *arm, int rows, int cols, int out[5][LR_TUNE_KNOBS], int *now)
{
    /* the rows the geometry getters fall back to, in their order
       (kernels/gemv_leech_p14s.c): the 3-bit arms on Planes14S's */
    static const struct { const char *arm, *then[3]; } chain[] = {
        { "leech_p14s_swiglu", { "leech_p14s" } },
        { "leech_p14s3", { "leech_p14s" } },
        { "leech_p14s3_swiglu", { "leech_p14s_swiglu", "leech_p14s" } },
    };
    int k[LR_TUNE_KNOBS], found = lr_tuning_lookup(arm, rows, cols, k);
    for (size_t i = 0; i < sizeof chain / sizeof chain[0] && !found; i++)
        if (!strcmp(arm, chain[i].arm))
            for (int j = 0; j < 3 && chain[i].then[j] && !found; j++)
                found = lr_tuning_lookup(chain[i].then[j], rows, cols, k);
    if (!found) return 0;
    const int base = k[8] < 0 ? 0 : k[8] & ~(7 << 16);
    for (int s = 0; s <= 4; s++) {
        memcpy(out[s], k, sizeof k);
        out[s][8] = s ? base | s << 16 : k[8] < 0 ? -1 : base;
    }
    const int side = k[8] < 0 ? 0 : k[8] >> 16 & 7;
    if (now) *now = side <= 4 ? side : -1; /* more side warps than a candidate has: none is it */
    return 5;
}
