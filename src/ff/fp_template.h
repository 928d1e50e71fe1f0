/* fp_template.h - Montgomery arithmetic for one prime field, written once.
 *
 * Included by ff/ff.h once for Fr and once for Fq with these macros defined:
 *   FP        name prefix (fr / fq)          FP_T      element type (fr_t / fq_t)
 *   FP_N      number of 64-bit limbs         FP_MOD    modulus limb array
 *   FP_ONE    Montgomery one (FP_T)          FP_R2     R^2 mod p limb array
 *   FP_INV    -p^-1 mod 2^64                 FP_PM2    p-2 limb array
 * and undefines them at the end.
 *
 * DESIGN. Elements are kept fully reduced (< p) in Montgomery form a*R mod p, R = 2^(64N).
 * Multiplication is CIOS (Koc, Acar, Kaliski, "Analyzing and comparing Montgomery
 * multiplication algorithms", 1996) with the "no-carry" shortcut that holds when the top
 * limb of p is below 2^63 - 1 (true for all four moduli here, which leave >= 1 spare bit):
 * the running sum then never needs an (N+1)-th word (gnark-crypto, "Faster Montgomery
 * multiplication", 2020). Fixed trip counts let the compiler unroll every loop.
 * add/sub/neg/mul/sqr are branch-free (constant time); inv is Fermat (constant time).
 */
#define FP_CAT2(a, b) a##_##b
#define FP_CAT(a, b) FP_CAT2(a, b)
#define FP_FN(x) FP_CAT(FP, x)


/* o = a (copy) */
static inline void FP_FN(copy)(FP_T *o, const FP_T *a)
{
    *o = *a;
}

static inline void FP_FN(set_zero)(FP_T *o)
{
    for (int i = 0; i < FP_N; i++)
        o->l[i] = 0;
}

static inline void FP_FN(set_one)(FP_T *o)
{
    *o = FP_ONE;
}

static inline bool FP_FN(is_zero)(const FP_T *a)
{
    uint64_t t = 0;
    for (int i = 0; i < FP_N; i++)
        t |= a->l[i];
    return t == 0;
}

static inline bool FP_FN(eq)(const FP_T *a, const FP_T *b)
{
    uint64_t t = 0;
    for (int i = 0; i < FP_N; i++)
        t |= a->l[i] ^ b->l[i];
    return t == 0;
}

static inline bool FP_FN(is_one)(const FP_T *a)
{
    return FP_FN(eq)(a, &FP_ONE);
}

/* o = t - p if t >= p else t; t < 2p (branch-free select) */
static inline void FP_FN(reduce_once)(FP_T *o, const uint64_t t[FP_N])
{
    uint64_t s[FP_N];
    unsigned char br = 0;
    for (int i = 0; i < FP_N; i++)
        br = ff_sbb(br, t[i], FP_MOD[i], &s[i]);
    uint64_t keep = 0 - (uint64_t)br; /* all ones when t < p: keep t */
    for (int i = 0; i < FP_N; i++)
        o->l[i] = s[i] ^ ((s[i] ^ t[i]) & keep);
}

/* o = a + b mod p. a + b < 2p < 2^(64N) because p has a spare top bit. */
static inline void FP_FN(add)(FP_T *o, const FP_T *a, const FP_T *b)
{
    uint64_t t[FP_N];
    unsigned char c = 0;
    for (int i = 0; i < FP_N; i++)
        c = ff_adc(c, a->l[i], b->l[i], &t[i]);
    FP_FN(reduce_once)(o, t);
}

static inline void FP_FN(dbl)(FP_T *o, const FP_T *a)
{
    FP_FN(add)(o, a, a);
}

/* o = a - b mod p */
static inline void FP_FN(sub)(FP_T *o, const FP_T *a, const FP_T *b)
{
    uint64_t t[FP_N];
    unsigned char br = 0, c = 0;
    for (int i = 0; i < FP_N; i++)
        br = ff_sbb(br, a->l[i], b->l[i], &t[i]);
    uint64_t mask = 0 - (uint64_t)br; /* add p back when it borrowed */
    for (int i = 0; i < FP_N; i++)
        c = ff_adc(c, t[i], FP_MOD[i] & mask, &o->l[i]);
}

/* o = -a mod p (0 stays 0) */
static inline void FP_FN(neg)(FP_T *o, const FP_T *a)
{
    uint64_t nz = 0;
    for (int i = 0; i < FP_N; i++)
        nz |= a->l[i];
    uint64_t mask = 0 - (uint64_t)(nz != 0);
    unsigned char br = 0;
    for (int i = 0; i < FP_N; i++) {
        uint64_t d;
        br = ff_sbb(br, FP_MOD[i], a->l[i], &d);
        o->l[i] = d & mask;
    }
}

/* o = a / 2 mod p */
static inline void FP_FN(half)(FP_T *o, const FP_T *a)
{
    uint64_t mask = 0 - (a->l[0] & 1), t[FP_N];
    unsigned char c = 0;
    for (int i = 0; i < FP_N; i++)
        c = ff_adc(c, a->l[i], FP_MOD[i] & mask, &t[i]);
    for (int i = 0; i < FP_N - 1; i++)
        o->l[i] = (t[i] >> 1) | (t[i + 1] << 63);
    o->l[FP_N - 1] = (t[FP_N - 1] >> 1) | ((uint64_t)c << 63);
}

/* Reference o = a*b*R^-1 mod p: CIOS, no-carry variant (see top), written with 128-bit
 * accumulators; the tests check FP_FN(mul) against it. */
static inline void FP_FN(mul_ref)(FP_T *o, const FP_T *a, const FP_T *b)
{
    uint64_t t[FP_N];
    for (int i = 0; i < FP_N; i++)
        t[i] = 0;
    for (int i = 0; i < FP_N; i++) {
        uint64_t bi = b->l[i];
        ff_u128 s = (ff_u128)a->l[0] * bi + t[0];
        uint64_t A = (uint64_t)(s >> 64);
        uint64_t t0 = (uint64_t)s;
        uint64_t m = t0 * (uint64_t)FP_INV;
        ff_u128 u = (ff_u128)m * FP_MOD[0] + t0;
        uint64_t C = (uint64_t)(u >> 64);
        for (int j = 1; j < FP_N; j++) {
            s = (ff_u128)a->l[j] * bi + t[j] + A;
            A = (uint64_t)(s >> 64);
            u = (ff_u128)m * FP_MOD[j] + (uint64_t)s + C;
            C = (uint64_t)(u >> 64);
            t[j - 1] = (uint64_t)u;
        }
        t[FP_N - 1] = C + A;
    }
    FP_FN(reduce_once)(o, t);
}

/* Montgomery reduction of a 2N-word value T < p*R: o = T*R^-1 mod p. */
static inline void FP_FN(redc)(FP_T *o, uint64_t T[2 * FP_N])
{
    unsigned char top = 0;
    for (int i = 0; i < FP_N; i++) {
        uint64_t m = T[i] * (uint64_t)FP_INV, c = 0;
        for (int j = 0; j < FP_N; j++) {
            ff_u128 s = (ff_u128)m * FP_MOD[j] + T[i + j] + c;
            T[i + j] = (uint64_t)s;
            c = (uint64_t)(s >> 64);
        }
        top = ff_adc(top, T[i + FP_N], c, &T[i + FP_N]);
    }
    FP_FN(reduce_once)(o, T + FP_N);
}

/* o = a^2*R^-1 mod p: schoolbook square (off-diagonal products once, doubled), then REDC.
 * Cost N(N-1)/2 + N + N^2 word muls. Reference for FP_FN(sqr). */
static inline void FP_FN(sqr_ref)(FP_T *o, const FP_T *a)
{
    uint64_t T[2 * FP_N];
    for (int i = 0; i < 2 * FP_N; i++)
        T[i] = 0;
    for (int i = 0; i < FP_N; i++) {
        uint64_t c = 0;
        for (int j = i + 1; j < FP_N; j++) {
            ff_u128 s = (ff_u128)a->l[i] * a->l[j] + T[i + j] + c;
            T[i + j] = (uint64_t)s;
            c = (uint64_t)(s >> 64);
        }
        T[i + FP_N] = c;
    }
    uint64_t c = 0; /* double */
    for (int i = 0; i < 2 * FP_N; i++) {
        uint64_t v = T[i];
        T[i] = (v << 1) | c;
        c = v >> 63;
    }
    c = 0; /* add the squares on the diagonal */
    for (int i = 0; i < FP_N; i++) {
        ff_u128 p = (ff_u128)a->l[i] * a->l[i];
        ff_u128 s = (ff_u128)T[2 * i] + (uint64_t)p + c;
        T[2 * i] = (uint64_t)s;
        s = (ff_u128)T[2 * i + 1] + (uint64_t)(p >> 64) + (uint64_t)(s >> 64);
        T[2 * i + 1] = (uint64_t)s;
        c = (uint64_t)(s >> 64);
    }
    FP_FN(redc)(o, T);
}

/* o = a*b*R^-1 mod p, the same CIOS as mul_ref arranged for adc chains: per word b[i],
 * t += a*b[i] as two carry chains (low halves into t[0..N], high halves into t[1..N]),
 * then m = t[0]*(-p^-1), t = (t + m*p)/2^64 the same way. N^2 + N(N+1) word muls,
 * 4N(N+1) adc. Inputs < p give t < 2p at the end (spare top bit), one conditional subtract. */
static inline void FP_FN(mul_c)(FP_T *o, const FP_T *a, const FP_T *b)
{
    uint64_t t[FP_N + 2], lo[FP_N], hi[FP_N];
    for (int i = 0; i < FP_N + 2; i++)
        t[i] = 0;
    for (int i = 0; i < FP_N; i++) {
        uint64_t bi = b->l[i];
        unsigned char c = 0;
        for (int j = 0; j < FP_N; j++)
            lo[j] = ff_mul_wide(a->l[j], bi, &hi[j]);
        for (int j = 0; j < FP_N; j++)
            c = ff_adc(c, t[j], lo[j], &t[j]);
        c = ff_adc(c, t[FP_N], 0, &t[FP_N]);
        t[FP_N + 1] = c;
        c = 0;
        for (int j = 0; j < FP_N; j++)
            c = ff_adc(c, t[j + 1], hi[j], &t[j + 1]);
        t[FP_N + 1] += c;
        /* reduction: t + m p is divisible by 2^64 */
        uint64_t m = t[0] * (uint64_t)FP_INV;
        for (int j = 0; j < FP_N; j++)
            lo[j] = ff_mul_wide(m, FP_MOD[j], &hi[j]);
        c = 0;
        for (int j = 0; j < FP_N; j++)
            c = ff_adc(c, t[j], lo[j], &t[j]);
        c = ff_adc(c, t[FP_N], 0, &t[FP_N]);
        t[FP_N + 1] += c;
        c = 0;
        for (int j = 0; j < FP_N; j++)
            c = ff_adc(c, t[j + 1], hi[j], &t[j + 1]);
        t[FP_N + 1] += c;
        for (int j = 0; j < FP_N + 1; j++) /* shift one word (t[0] is 0) */
            t[j] = t[j + 1];
        t[FP_N + 1] = 0;
    }
    FP_FN(reduce_once)(o, t);
}

#if defined(__x86_64__) && defined(__BMI2__) && defined(__ADX__) && !defined(CUZK_FF_NO_ASM) && FP_N == 4
#include "ff/fp_x86_4.h"
#elif defined(__x86_64__) && defined(__BMI2__) && defined(__ADX__) && !defined(CUZK_FF_NO_ASM) && FP_N == 6
#include "ff/fp_x86_6.h"
#else
static inline void FP_FN(mul)(FP_T *o, const FP_T *a, const FP_T *b)
{
    FP_FN(mul_c)(o, a, b);
}
#endif

#ifndef FP_HAVE_SQR
static inline void FP_FN(sqr)(FP_T *o, const FP_T *a)
{
    FP_FN(mul)(o, a, a);
}
#endif
#undef FP_HAVE_SQR

/* std -> Montgomery: a*R^2*R^-1. a must be canonical (< p): check untrusted input with
 * FP_FN(std_is_canonical) first (the no-carry multiplication assumes inputs below p). */
static inline void FP_FN(from_std)(FP_T *o, const FP_T *a)
{
    static const FP_T r2 = {FP_R2};
    FP_FN(mul)(o, a, &r2);
}

/* Montgomery -> std: a*1*R^-1 */
static inline void FP_FN(to_std)(FP_T *o, const FP_T *a)
{
    uint64_t T[2 * FP_N];
    for (int i = 0; i < FP_N; i++) {
        T[i] = a->l[i];
        T[i + FP_N] = 0;
    }
    FP_FN(redc)(o, T);
}

static inline void FP_FN(from_u64)(FP_T *o, uint64_t v)
{
    FP_T t;
    FP_FN(set_zero)(&t);
    t.l[0] = v;
    FP_FN(from_std)(o, &t);
}

/* true when the std-form limbs a are < p */
static inline bool FP_FN(std_is_canonical)(const FP_T *a)
{
    for (int i = FP_N - 1; i >= 0; i--)
        if (a->l[i] != FP_MOD[i])
            return a->l[i] < FP_MOD[i];
    return false;
}

/* o = a^e, e = nlimbs little-endian words (std integer), fixed 4-bit windows: 4 squarings
 * per window and one multiplication by a table entry when the window is not zero. The
 * exponent is treated as public (timing depends on e only, never on a). */
static inline void FP_FN(pow)(FP_T *o, const FP_T *a, const uint64_t *e, size_t nlimbs)
{
    FP_T tab[16], r = FP_ONE;
    tab[0] = FP_ONE;
    tab[1] = *a;
    for (int i = 2; i < 16; i++)
        FP_FN(mul)(&tab[i], &tab[i - 1], a);
    bool started = false;
    for (size_t i = nlimbs; i-- > 0;) {
        for (int j = 60; j >= 0; j -= 4) {
            unsigned d = (unsigned)(e[i] >> j) & 15;
            if (started) {
                for (int k = 0; k < 4; k++)
                    FP_FN(sqr)(&r, &r);
                if (d)
                    FP_FN(mul)(&r, &r, &tab[d]);
            } else if (d) {
                r = tab[d];
                started = true;
            }
        }
    }
    *o = r;
}

/* o = a^(p-2) = a^-1 (Fermat; 0 maps to 0). Constant time: the exponent is the fixed p-2. */
static inline void FP_FN(inv)(FP_T *o, const FP_T *a)
{
    static const uint64_t e[FP_N] = FP_PM2;
    FP_FN(pow)(o, a, e, FP_N);
}

/* o[i] = a[i]^-1 for i < n with one inversion (Montgomery's trick); zero entries give zero.
 * scratch holds n elements; o may alias a. */
static inline void FP_FN(batch_inv)(FP_T *o, const FP_T *a, size_t n, FP_T *scratch)
{
    FP_T acc = FP_ONE, t;
    for (size_t i = 0; i < n; i++) {
        scratch[i] = acc;
        if (!FP_FN(is_zero)(&a[i]))
            FP_FN(mul)(&acc, &acc, &a[i]);
    }
    FP_FN(inv)(&acc, &acc);
    for (size_t i = n; i-- > 0;) {
        if (FP_FN(is_zero)(&a[i])) {
            FP_FN(set_zero)(&o[i]);
            continue;
        }
        FP_FN(mul)(&t, &acc, &scratch[i]);
        FP_FN(mul)(&acc, &acc, &a[i]);
        o[i] = t;
    }
}

#undef FP_FN
#undef FP_CAT
#undef FP_CAT2
#undef FP
#undef FP_T
#undef FP_N
#undef FP_MOD
#undef FP_ONE
#undef FP_R2
#undef FP_INV
#undef FP_PM2
