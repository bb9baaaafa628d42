/* Deterministic, seedable random numbers (SplitMix64 + xoshiro256**) shared by
 * tests, generators and the quantizer, so a seed means the same thing
 * everywhere. */
#ifndef LR_RNG_H
#define LR_RNG_H
#include <math.h>
#include <stdint.h>

typedef struct { uint64_t s[4]; } lr_rng;

static inline uint64_t lr_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline void lr_rng_seed(lr_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++) r->s[i] = lr_splitmix64(&seed);
}

static inline uint64_t lr_rng_u64(lr_rng *r)
{
    uint64_t *s = r->s;
    uint64_t x = s[1] * 5, res = ((x << 7) | (x >> 57)) * 9, t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] ^= t;
    s[3] = (s[3] << 45) | (s[3] >> 19);
    return res;
}

/* Uniform in [0, n) without modulo bias (Lemire). */
static inline uint64_t lr_rng_below(lr_rng *r, uint64_t n)
{
    if (n <= 1) return 0;
    for (;;) {
        uint64_t x = lr_rng_u64(r);
        __uint128_t m = (__uint128_t)x * n;
        uint64_t lo = (uint64_t)m;
        if (lo >= n || lo >= (-n) % n) return (uint64_t)(m >> 64);
    }
}

/* Uniform in [0, 1). */
static inline double lr_rng_unit(lr_rng *r) { return (double)(lr_rng_u64(r) >> 11) * 0x1p-53; }

/* Uniform in (-1, 1), never exactly 0 (tests must not feed zeros). */
static inline double lr_rng_signed(lr_rng *r)
{
    for (;;) {
        double v = 2.0 * lr_rng_unit(r) - 1.0;
        if (v != 0.0) return v;
    }
}

static inline double lr_rng_gauss(lr_rng *r)
{
    double u = lr_rng_unit(r), v = lr_rng_unit(r);
    if (u < 1e-300) u = 1e-300;
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

#endif
