/* ff52.cuh - a Montgomery product on the FP64 pipe: a field element as M limbs of 52 bits,
 * each held in a double (a kernel lab for the field product; dev/cuda/NOTES.md).
 *
 * DESIGN. ff.cuh's product on 32-bit limbs runs on the integer pipe (IMAD.WIDE and the
 * IADD3.X of its carries) and leaves the FP64 pipe idle; a double's 53-bit significand holds a
 * 52 x 52-bit limb product in two fused multiply-adds rounded toward zero, because both
 * halves can be forced into a fixed binade whose bit pattern is the integer plus a constant:
 *   h = fma_rz(a, b, 2^104)                 = 2^104 + H 2^52,  H = floor(a b / 2^52)
 *   l = fma_rz(a, b, (2^104 + 2^52) - h)    = 2^52 + L,        L = a b mod 2^52
 * (the subtraction is exact: both terms are multiples of 2^52 in one binade; l is exact: it
 * is an integer below 2^53). So bits(h) - bits(2^104) = H and bits(l) - bits(2^52) = L, and
 * both constants have a zero low word. Columns are 64-bit integers (at most 4M terms below
 * 2^52 each). The Montgomery reduction takes one 52-bit digit a round: m = t (-P^-1) mod 2^52
 * by the same pair of FMAs, R = 2^(52M). Inputs and output are below 2P (needs 4P < R:
 * M = 5 for the 254/255-bit fields, 8 for BLS12-381 Fq).
 *
 * Conversions: an element of ff.cuh (32-bit limbs, R32 = 2^(32N)) read as an integer and
 * multiplied by TO = R^2 / R32 mod P is the same element in this form; multiplied by
 * FROM = R32 mod P it goes back (then one conditional subtraction of P).
 */
#pragma once
#include <stdint.h>

template <int M>
struct f52_params {
    double p[M];    /* P in 52-bit limbs */
    double pinv;    /* -P^-1 mod 2^52 */
    double to[M];   /* R^2 / R32 mod P */
    double from[M]; /* R32 mod P */
};

#define F52_MASK 0xfffffffffffffull
#define F52_B52 0x4330000000000000ull  /* bits of 2^52 */
#define F52_B104 0x4670000000000000ull /* bits of 2^104 */

FF_INLINE uint64_t f52_bits(double x) { return (uint64_t)__double_as_longlong(x); }
/* v < 2^52 as a double, exactly */
FF_INLINE double f52_dbl(uint64_t v) { return __longlong_as_double((long long)(v | F52_B52)) - 0x1p52; }

/* c[k] += L, c[k + 1] += H for a b = H 2^52 + L (a, b < 2^52) */
FF_INLINE void f52_mac(uint64_t *c, int k, double a, double b)
{
    double h = __fma_rz(a, b, 0x1p104);
    double l = __fma_rz(a, b, (0x1p104 + 0x1p52) - h);
    c[k] += f52_bits(l) - F52_B52;
    c[k + 1] += f52_bits(h) - F52_B104;
}

/* r = a b / 2^(52M) mod P, below 2P (a, b below 2P; r may alias a or b) */
template <int M>
FF_INLINE void f52_mul(double *r, const double *a, const double *b, const f52_params<M> &P)
{
    uint64_t c[2 * M];
#pragma unroll
    for (int k = 0; k < 2 * M; k++)
        c[k] = 0;
#pragma unroll
    for (int i = 0; i < M; i++)
#pragma unroll
        for (int j = 0; j < M; j++)
            f52_mac(c, i + j, a[i], b[j]);
#pragma unroll
    for (int k = 0; k < M; k++) {
        double t = f52_dbl(c[k] & F52_MASK);
        double mh = __fma_rz(t, P.pinv, 0x1p104);
        double m = __fma_rz(t, P.pinv, (0x1p104 + 0x1p52) - mh) - 0x1p52;
#pragma unroll
        for (int j = 0; j < M; j++)
            f52_mac(c, k + j, m, P.p[j]);
        c[k + 1] += c[k] >> 52; /* c[k] is now a multiple of 2^52 */
    }
#pragma unroll
    for (int k = M; k < 2 * M; k++) {
        r[k - M] = f52_dbl(c[k] & F52_MASK);
        if (k + 1 < 2 * M)
            c[k + 1] += c[k] >> 52;
    }
}

/* N 32-bit words (an integer below 2^(52M)) -> M 52-bit limbs, and back */
template <int M, int N>
FF_INLINE void f52_split(double *r, const uint32_t *w)
{
#pragma unroll
    for (int i = 0; i < M; i++) {
        int bit = 52 * i, q = bit >> 5, s = bit & 31;
        uint64_t v = 0;
#pragma unroll
        for (int k = 0; k < 3; k++) /* the 52 bits lie in words q .. q + 2 */
            if (q + k < N && 32 * k - s < 64)
                v |= k == 0 ? (uint64_t)w[q] >> s : (uint64_t)w[q + k] << (32 * k - s);
        r[i] = f52_dbl(v & F52_MASK);
    }
}
template <int M, int N>
FF_INLINE void f52_join(uint32_t *w, const double *a)
{
#pragma unroll
    for (int q = 0; q < N; q++)
        w[q] = 0;
#pragma unroll
    for (int i = 0; i < M; i++) {
        uint64_t v = f52_bits(a[i] + 0x1p52) & F52_MASK;
        int bit = 52 * i, q = bit >> 5, s = bit & 31;
#pragma unroll
        for (int k = 0; k < 3; k++)
            if (q + k < N && 32 * k - s < 64)
                w[q + k] |= (uint32_t)(k == 0 ? v << s : v >> (32 * k - s));
    }
}

/* ---- host: the constants of f52_params from P's 64-bit words ---- */
template <int M>
static f52_params<M> f52_params_of(const uint64_t *p, int words64, int n32)
{
    f52_params<M> o;
    const int W = 8; /* up to 512 bits */
    uint64_t pp[W] = {0};
    for (int i = 0; i < words64; i++)
        pp[i] = p[i];
    auto limbs = [&](double *r, const uint64_t *x) {
        for (int i = 0; i < M; i++) {
            int bit = 52 * i, q = bit >> 6, s = bit & 63;
            uint64_t v = x[q] >> s;
            if (s > 12 && q + 1 < W)
                v |= x[q + 1] << (64 - s);
            r[i] = (double)(v & F52_MASK);
        }
    };
    /* 2^e mod P by doubling (P > 2^64 here) */
    auto pow2 = [&](double *r, int e) {
        uint64_t x[W] = {1};
        for (int it = 0; it < e; it++) {
            uint64_t cy = 0;
            for (int i = 0; i < W; i++) {
                uint64_t t = x[i] >> 63;
                x[i] = x[i] << 1 | cy;
                cy = t;
            }
            bool ge = true; /* x >= P */
            for (int i = W - 1; i >= 0; i--)
                if (x[i] != pp[i]) {
                    ge = x[i] > pp[i];
                    break;
                }
            if (ge) {
                uint64_t bw = 0;
                for (int i = 0; i < W; i++) {
                    unsigned __int128 d = (unsigned __int128)x[i] - pp[i] - bw;
                    x[i] = (uint64_t)d;
                    bw = (uint64_t)(d >> 127);
                }
            }
        }
        limbs(r, x);
    };
    limbs(o.p, pp);
    uint64_t inv = 1; /* P^-1 mod 2^64 by Newton */
    for (int i = 0; i < 7; i++)
        inv *= 2 - pp[0] * inv;
    o.pinv = (double)((0 - inv) & F52_MASK);
    pow2(o.to, 2 * 52 * M - 32 * n32);
    pow2(o.from, 32 * n32);
    return o;
}
