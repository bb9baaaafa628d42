/* The branch-and-bound over Golay codewords for a chunk of up to 16 classes
 * of one coset, one class per lane of a 16-float vector, and the per-class
 * unconstrained bounds. Two builds of the same code (nearest_tree_impl.h):
 * AVX-512 intrinsics, chosen at run time when the CPU has them, and plain C
 * loops over the 16 lanes (any CPU; also what the tests cross-check). */
#include <math.h>
#include <stdlib.h>

#include "layouts/leech/nearest_internal.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define TREE_HAVE_AVX512 1
#endif

/* ---- portable build: 16 lanes as a struct of floats ---- */
typedef struct { float f[LR_NEAREST_LANES]; } vec16;
#define FN_ATTR
#define FN(name) name##_c
#define VEC vec16
static inline vec16 v_load(const float *p) { vec16 v; for (int i = 0; i < 16; i++) v.f[i] = p[i]; return v; }
static inline vec16 v_set1(float x) { vec16 v; for (int i = 0; i < 16; i++) v.f[i] = x; return v; }
static inline vec16 v_add(vec16 a, vec16 b) { for (int i = 0; i < 16; i++) a.f[i] += b.f[i]; return a; }
static inline vec16 v_sub(vec16 a, vec16 b) { for (int i = 0; i < 16; i++) a.f[i] -= b.f[i]; return a; }
static inline vec16 v_fma(vec16 a, vec16 b, vec16 c) { for (int i = 0; i < 16; i++) c.f[i] += a.f[i] * b.f[i]; return c; }
static inline vec16 v_max(vec16 a, vec16 b) { for (int i = 0; i < 16; i++) a.f[i] = a.f[i] > b.f[i] ? a.f[i] : b.f[i]; return a; }
static inline void v_store(float *p, vec16 v) { for (int i = 0; i < 16; i++) p[i] = v.f[i]; }
static inline uint32_t v_gt(vec16 a, vec16 b)
{
    uint32_t m = 0;
    for (int i = 0; i < 16; i++) m |= (uint32_t)(a.f[i] > b.f[i]) << i;
    return m;
}
#include "layouts/leech/nearest_tree_impl.h"
#undef FN_ATTR
#undef FN
#undef VEC

#ifdef TREE_HAVE_AVX512
/* ---- AVX-512 build ---- */
#define FN_ATTR __attribute__((target("avx512f")))
#define FN(name) name##_avx512
#define VEC __m512
FN_ATTR static inline __m512 v512_load(const float *p) { return _mm512_load_ps(p); }
#define v_load v512_load
#define v_set1 _mm512_set1_ps
#define v_add _mm512_add_ps
#define v_sub _mm512_sub_ps
#define v_fma _mm512_fmadd_ps
#define v_max _mm512_max_ps
#define v_store _mm512_store_ps
#define v_gt(a, b) ((uint32_t)_mm512_cmp_ps_mask((a), (b), _CMP_GT_OQ))
#include "layouts/leech/nearest_tree_impl.h"
#endif

/* ---- dispatch ---- */
static int g_variant = -1; /* 0 portable, 1 AVX-512 */

static int variant(void)
{
    int v = __atomic_load_n(&g_variant, __ATOMIC_RELAXED);
    if (v >= 0) return v;
    v = 0;
#ifdef TREE_HAVE_AVX512
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && !getenv("LEECHRT_NO_AVX512")) v = 1;
#endif
    __atomic_store_n(&g_variant, v, __ATOMIC_RELAXED);
    return v;
}

/* Tests and benchmarks: 0 forces the portable build, 1 the AVX-512 one (if
 * the CPU has it); returns the variant now in use. */
int lr_nearest_set_variant(int v)
{
#ifdef TREE_HAVE_AVX512
    __builtin_cpu_init();
    if (v == 1 && !__builtin_cpu_supports("avx512f")) v = 0;
#else
    v = 0;
#endif
    __atomic_store_n(&g_variant, v, __ATOMIC_RELAXED);
    return v;
}

void lr_nearest_tree(lr_nearest_search *s, const int *cls, int n)
{
#ifdef TREE_HAVE_AVX512
    if (variant() == 1) { tree_avx512(s, cls, n); return; }
#else
    (void)variant;
#endif
    tree_c(s, cls, n);
}

void lr_nearest_class_bounds(const lr_nearest_table *t, const float af[24], float *out)
{
#ifdef TREE_HAVE_AVX512
    if (variant() == 1) { bounds_avx512(t, af, out); return; }
#endif
    bounds_c(t, af, out);
}
