/* LEECHRT_TUNE: entries parse into overrides that lr_tuning_lookup returns
 * ahead of the table, for the named shape only; garbage is refused naming
 * the setting and leaves the previous overrides; unset clears them. */
#include "kernels/gemv_leech.h"
#include "kernels/tuning.h"
#include "test/t.h"
#include "util/err.h"

#include <string.h>

static int test_override(void)
{
    int k[LR_TUNE_KNOBS];
    T_OK(lr_tuning_override_set("LEECHRT_TUNE", "leech_p14s:7168x5120=768,1,2,1,1,1,0,0,7168,0;"
                                                "f16:10x20=1/2/3/4/5/6/7/8/9/-10"));
    T_ASSERT(lr_tuning_lookup("leech_p14s", 7168, 5120, k) == 1 && k[0] == 768 && k[8] == 7168 && k[9] == 0,
             "override not returned: %d %d", k[0], k[8]);
    T_ASSERT(lr_tuning_lookup("f16", 10, 20, k) == 1 && k[0] == 1 && k[9] == -10, "second entry: %d %d", k[0], k[9]);
    T_ASSERT(!lr_tuning_override_lookup("leech_p14s", 5120, 7168, k), "transposed shape matched");
    T_ASSERT(!lr_tuning_override_lookup("leech_p14", 7168, 5120, k), "other arm matched");
    /* the geometry follows: 768 threads, the balanced split with ilv and pro */
    lr_leech_geom g = lr_gemv_leech_p14s_default_geom(7168, 5120);
    T_ASSERT(g.threads == 768 && g.bal == 2 && g.ilv == 1 && g.pro == 1, "geometry %d bal %d ilv %d pro %d", g.threads,
             g.bal, g.ilv, g.pro);
    /* extra3's highest bit, the 3-bit form (20), passes, and sets the int8 mode */
    T_OK(lr_tuning_override_set("LEECHRT_TUNE", "leech_p14s:7168x5120=128/1/2/1/1/-1/0/-1/1114113/0"));
    g = lr_gemv_leech_p14s_default_geom(7168, 5120);
    T_ASSERT(g.c3 == 1 && g.i8 == 1 && g.xw == 1 && g.side == 1, "c3 %d i8 %d xw %d side %d", g.c3, g.i8, g.xw, g.side);
    T_OK(lr_tuning_override_set("LEECHRT_TUNE", "leech_p14s:7168x5120=768,1,2,1,1,1,0,0,7168,0;"
                                                "f16:10x20=1/2/3/4/5/6/7/8/9/-10"));
    static const char *bad[] = {
        "leech_p14s",                                      /* no shape */
        ":7168x5120=1,2,3,4,5,6,7,8,9,10",                 /* no arm */
        "leech_p14s:7168x5120=1,2,3,4,5,6,7,8,9",          /* 9 knobs */
        "leech_p14s:7168x5120=1,2,3,4,5,6,7,8,9,10,11",    /* 11 */
        "leech_p14s:7168*5120=1,2,3,4,5,6,7,8,9,10",       /* separator */
        "leech_p14s:0x5120=1,2,3,4,5,6,7,8,9,10",          /* rows */
        "leech_p14s:7168x5120=1,2,3,4,5,6,7,8,9,ten",      /* garbage */
        "leech_p14s:7168x5120=1,2,3,4,5,6,7,8,9,10;x",     /* a bad second entry */
        "leech_p14s:7168x5120=1,2,3,4,5,6,7,8,9/",         /* a separator, no knob */
        "leech_p14s:7168x5120=1;2,3,4,5,6,7,8,9,10",       /* ';' inside */
        "a_very_long_arm_name_beyond_31_characters:1x1=1,2,3,4,5,6,7,8,9,10",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        T_ASSERT(lr_tuning_override_set("GPU engine: LEECHRT_TUNE", bad[i]) == LR_EINVAL, "'%s' accepted", bad[i]);
        T_ASSERT(strstr(lr_errmsg(), "LEECHRT_TUNE") != NULL, "'%s': %s", bad[i], lr_errmsg());
        T_ASSERT(lr_tuning_override_lookup("leech_p14s", 7168, 5120, k), "'%s' dropped the overrides", bad[i]);
    }
    lr_clear_error();
    T_OK(lr_tuning_override_set("LEECHRT_TUNE", NULL));
    T_ASSERT(!lr_tuning_override_lookup("leech_p14s", 7168, 5120, k), "unset kept the overrides");
    T_OK(lr_tuning_override_set("LEECHRT_TUNE", ""));
    return T_PASS;
}

/* tune_gemv --vary-side's candidates: the looked-up geometry with 0-4 side
 * warps, other knobs and extra3 bits kept; an extra3 of -1 becomes the side
 * bits alone; the SwiGLU and 3-bit arms fall back as their getters do; no
 * row, none. */
static int test_side_candidates(void)
{
    int c[5][LR_TUNE_KNOBS], now = -2;
    T_OK(lr_tuning_override_set("LEECHRT_TUNE", "leech_p14s:34816x5120=768,1,2,1,1,1,0,0,265216,0;"
                                                 "leech_p14s:7168x5120=128,1,2,1,1,-1,0,-1,-1,0"));
    T_ASSERT(lr_tuning_side_candidates("leech_p14s_swiglu", 34816, 5120, c, &now) == 5 && now == 4, "no fallback to leech_p14s's row");
    for (int s = 0; s < 5; s++) {
        T_ASSERT(c[s][8] == (3072 | s << 16), "side %d: extra3 %d", s, c[s][8]);
        T_ASSERT(c[s][0] == 768 && c[s][2] == 2 && c[s][9] == 0, "side %d: other knobs changed", s);
    }
    T_ASSERT(lr_tuning_side_candidates("leech_p14s", 7168, 5120, c, &now) == 5 && now == 0, "q|k|v row");
    T_ASSERT(c[0][8] == -1 && c[1][8] == 65536 && c[4][8] == 4 << 16 && c[2][5] == -1, "extra3 -1: %d %d %d", c[0][8],
             c[1][8], c[4][8]);
    T_ASSERT(lr_tuning_side_candidates("leech_p14s", 7168, 5121, c, NULL) == 0, "a shape with no row");
    /* side bits past the candidates' 0-4: none of them is the geometry in use */
    T_OK(lr_tuning_override_set("LEECHRT_TUNE", "leech_p14s:5120x5120=672,1,2,1,1,1,1,0,331800,0"));
    T_ASSERT(lr_tuning_side_candidates("leech_p14s", 5120, 5120, c, &now) == 5 && now == -1 && c[4][8] == (4120 | 4 << 16),
             "side bits 5: now %d", now);
    T_OK(lr_tuning_override_set("LEECHRT_TUNE", "leech_p14s:34816x5120=768,1,2,1,1,1,0,0,265216,0;"
                                                 "leech_p14s:7168x5120=128,1,2,1,1,-1,0,-1,-1,0"));
    /* the 3-bit arms: their own row first, else Planes14S's, as their getters */
    T_ASSERT(lr_tuning_side_candidates("leech_p14s3", 7168, 5120, c, NULL) == 5 && c[0][0] == 128, "leech_p14s3 fallback");
    T_ASSERT(lr_tuning_side_candidates("leech_p14s3_swiglu", 34816, 5120, c, &now) == 5 && now == 4 && c[2][8] == (3072 | 2 << 16),
             "leech_p14s3_swiglu fallback");
    T_OK(lr_tuning_override_set("LEECHRT_TUNE", "leech_p14s:7168x5120=128,1,2,1,1,-1,0,-1,-1,0;"
                                                 "leech_p14s3:7168x5120=768,1,2,1,1,1,1,0,3072,0;"
                                                 "leech_p14s_swiglu:34816x5120=704,1,2,1,1,1,0,0,3072,0;"
                                                 "leech_p14s:34816x5120=768,1,2,1,1,1,0,0,265216,0"));
    T_ASSERT(lr_tuning_side_candidates("leech_p14s3", 7168, 5120, c, &now) == 5 && c[0][0] == 768 && now == 0, "leech_p14s3's own row");
    T_ASSERT(lr_tuning_side_candidates("leech_p14s3_swiglu", 34816, 5120, c, &now) == 5 && c[0][0] == 704 && now == 0,
             "leech_p14s_swiglu's row before leech_p14s's");
    T_ASSERT(lr_tuning_side_candidates("leech_p14s3_swiglu", 7168, 5121, c, NULL) == 0, "a shape with no row");
    T_OK(lr_tuning_override_set("LEECHRT_TUNE", NULL));
    return T_PASS;
}

T_MAIN(T_CASE(test_override), T_CASE(test_side_candidates))
