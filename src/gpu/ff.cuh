/* ff.cuh - prime-field arithmetic on the GPU: Montgomery Fp with 32-bit limbs, and Fp2.
 *
 * DESIGN. An element is N little-endian 32-bit limbs in Montgomery form with R = 2^(32N),
 * which is the host's R = 2^(64*LIMBS): a zkey coordinate or a host fr_t can be
 * reinterpreted as an fp_t without conversion. Every operation returns a fully reduced
 * value in [0, p), so device results compare byte for byte with the CPU's; the exceptions say
 * so in their names (mul_shoup_lazy, add_m and sub_m with M = 2: values below 2p, for the
 * NTT's butterflies).
 *
 * Multiplication has two forms (see mul_eo, mul_sos; operator* picks by limb count). mul_sos
 * is a schoolbook product into 2N limbs followed by a separate Montgomery
 * reduction (SOS, Koc-Acar-Kaliski 1996), both written as PTX carry chains: each row adds
 * the low halves (mad.lo.cc / madc.lo.cc) in one chain and the high halves (mad.hi.cc /
 * madc.hi.cc) one limb further up in a second chain. Squaring computes the N(N-1)/2 cross
 * products once, doubles them and adds the diagonal: about 40% fewer multiplies than mul.
 * Cost of mul: 2N^2 + N multiply-adds (N = 8: 136, N = 12: 300).
 *
 * The carry flag must survive between consecutive asm statements; every statement is
 * `asm volatile`, so the compiler keeps their order and inserts nothing that clobbers
 * CC between them (the approach of sppark's mont_t and of most CUDA bigint code).
 */
#pragma once
#include <stdint.h>

#ifndef FF_EO_LIMBS
#define FF_EO_LIMBS 8 /* operator* takes mul_eo up to this many limbs (see operator*) */
#endif
#ifndef FF_MUL_AP
#define FF_MUL_AP 1 /* mul_eo's users, and mul_shoup's halves, get mul_ap's rows (see there); 0: mul_eo's
                     rows (H200: 57.3 against 51.6 G products/s, NOTES study 15) */
#endif
#ifndef FF_SQR_AP
#define FF_SQR_AP 0 /* 1: fp_t::sqr is sqr_ap (see there), and the point formulas call it */
#endif
#ifndef FP2_LAZY
#define FP2_LAZY 0 /* Fp2 products reduced once per coefficient (see fp2_t::operator*) */
#endif

#ifndef FF_HOST_EMU /* dev/cuda/emu_test.cpp compiles this file for the CPU with its own primitives */
#define FF_INLINE __device__ __forceinline__

/* ---- PTX primitives: d = a op b (+carry) ---- */
#define PTX_ADD_CC(d, a, b) asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b))
#define PTX_ADDC_CC(d, a, b) asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b))
#define PTX_ADDC(d, a, b) asm volatile("addc.u32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b))
#define PTX_SUB_CC(d, a, b) asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b))
#define PTX_SUBC_CC(d, a, b) asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b))
#define PTX_SUBC(d, a, b) asm volatile("subc.u32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b))
/* d = lo/hi(a*b) + c */
#define PTX_MADLO_CC(d, a, b, c) asm volatile("mad.lo.cc.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c))
#define PTX_MADCLO_CC(d, a, b, c) asm volatile("madc.lo.cc.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c))
#define PTX_MADHI_CC(d, a, b, c) asm volatile("mad.hi.cc.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c))
#define PTX_MADCHI_CC(d, a, b, c) asm volatile("madc.hi.cc.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c))
#define PTX_MADCLO(d, a, b, c) asm volatile("madc.lo.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c))
#define PTX_MADCHI(d, a, b, c) asm volatile("madc.hi.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c))
#endif

/* a copy of any value of 32-bit words (an element, a pair of them) made by identity permutes,
   which run on the ALU pipe and which ptxas does not look through: where it would otherwise
   copy registers with IMAD.MOV, which takes the IMAD pipe (NOTES study 14) */
template <class T>
FF_INLINE T ff_alu_copy(const T &a)
{
#ifdef FF_HOST_EMU
    return a;
#else
    T r;
    const uint32_t *s = (const uint32_t *)&a;
    uint32_t *d = (uint32_t *)&r;
#pragma unroll
    for (int i = 0; i < (int)(sizeof(T) / 4); i++)
        asm volatile("prmt.b32 %0, %1, 0, 0x3210;" : "=r"(d[i]) : "r"(s[i]));
    return r;
#endif
}

/* A field's constants as a type (a type, not pointer template arguments, so the host
 * stubs of kernels templated on a field stay plain): N limbs, P modulus, M0 = -P^-1 mod
 * 2^32, RR = R^2 mod P, ONE = R mod P, NPINV = -P^-1 mod R, all __constant__ arrays. */
#define FP_PARAMS(name, N_, P_, M0_, RR_, ONE_, NPINV_)                               \
    struct name {                                                                   \
        static const int N = N_;                                                    \
        static __device__ __forceinline__ uint32_t p(int i) { return P_[i]; }       \
        static __device__ __forceinline__ uint32_t m0() { return M0_; }             \
        static __device__ __forceinline__ uint32_t rr(int i) { return RR_[i]; }     \
        static __device__ __forceinline__ uint32_t one(int i) { return ONE_[i]; }   \
        static __device__ __forceinline__ uint32_t npinv(int i) { return NPINV_[i]; } \
    }

/* fp_t<C>: an element of the field described by C (FP_PARAMS). Requires 2P < 2^(32N) + P
 * (true for every modulus here: the top limb of P is nonzero). */
template <class C>
struct fp_t {
    typedef C params;
    static const int N = C::N;
    static const int LIMBS = N;
    uint32_t v[N];

    static FF_INLINE fp_t zero()
    {
        fp_t r;
#pragma unroll
        for (int i = 0; i < N; i++)
            r.v[i] = 0;
        return r;
    }
    static FF_INLINE fp_t one()
    {
        fp_t r;
#pragma unroll
        for (int i = 0; i < N; i++)
            r.v[i] = C::one(i);
        return r;
    }
    FF_INLINE bool is_zero() const
    {
        uint32_t acc = 0;
#pragma unroll
        for (int i = 0; i < N; i++)
            acc |= v[i];
        return acc == 0;
    }
    FF_INLINE bool operator==(const fp_t &b) const
    {
        uint32_t acc = 0;
#pragma unroll
        for (int i = 0; i < N; i++)
            acc |= v[i] ^ b.v[i];
        return acc == 0;
    }
    FF_INLINE bool operator!=(const fp_t &b) const { return !(*this == b); }

    /* limb i of M P, M = 1 or 2 (2P < 2^(32N): the top limb of P is below 2^31 for every
       modulus here) */
    template <int M>
    static FF_INLINE uint32_t pm(int i)
    {
        return M == 1 ? C::p(i) : (C::p(i) << 1) | (i ? C::p(i - 1) >> 31 : 0u);
    }

    /* t (N limbs) + top*2^(32N), known < 2 M P: subtract M P once if the value is >= M P */
    template <int M = 1>
    static FF_INLINE fp_t reduce_once(const uint32_t *t, uint32_t top)
    {
        fp_t r, o;
        uint32_t bw;
        PTX_SUB_CC(r.v[0], t[0], pm<M>(0));
#pragma unroll
        for (int i = 1; i < N; i++)
            PTX_SUBC_CC(r.v[i], t[i], pm<M>(i));
        PTX_SUBC(bw, top, 0u); /* 0xffffffff iff t + top*2^32N < M P */
#pragma unroll
        for (int i = 0; i < N; i++)
            o.v[i] = bw == 0xffffffffu ? t[i] : r.v[i];
        return o;
    }

    /* a + b and a - b mod M P for a, b in [0, M P): with M = 2 the NTT's butterflies on values
       kept below 2P (ntt_group_kernel, NTT_LAZY) */
    template <int M>
    static FF_INLINE fp_t add_m(const fp_t &a, const fp_t &b)
    {
        uint32_t t[N], c;
        PTX_ADD_CC(t[0], a.v[0], b.v[0]);
#pragma unroll
        for (int i = 1; i < N; i++)
            PTX_ADDC_CC(t[i], a.v[i], b.v[i]);
        PTX_ADDC(c, 0u, 0u);
        return reduce_once<M>(t, c);
    }
    template <int M>
    static FF_INLINE fp_t sub_m(const fp_t &a, const fp_t &b)
    {
        fp_t r;
        uint32_t bw;
        PTX_SUB_CC(r.v[0], a.v[0], b.v[0]);
#pragma unroll
        for (int i = 1; i < N; i++)
            PTX_SUBC_CC(r.v[i], a.v[i], b.v[i]);
        PTX_SUBC(bw, 0u, 0u); /* 0 or all ones */
        PTX_ADD_CC(r.v[0], r.v[0], pm<M>(0) & bw);
#pragma unroll
        for (int i = 1; i < N; i++)
            PTX_ADDC_CC(r.v[i], r.v[i], pm<M>(i) & bw);
        return r;
    }
    friend FF_INLINE fp_t operator+(const fp_t &a, const fp_t &b) { return add_m<1>(a, b); }
    friend FF_INLINE fp_t operator-(const fp_t &a, const fp_t &b) { return sub_m<1>(a, b); }
    FF_INLINE fp_t neg() const
    {
        fp_t r = zero() - *this;
        return r;
    }
    FF_INLINE fp_t dbl() const { return *this + *this; }

    /* Montgomery reduction of t[0..2N-1] (< P * 2^(32N)): returns t * 2^(-32N) mod P */
    static FF_INLINE fp_t redc(uint32_t *t)
    {
        uint32_t c = 0; /* carry into limb i+N at the start of row i */
#pragma unroll
        for (int i = 0; i < N; i++) {
            uint32_t m = t[i] * C::m0();
            PTX_MADLO_CC(t[i], m, C::p(0), t[i]);
#pragma unroll
            for (int j = 1; j < N; j++)
                PTX_MADCLO_CC(t[i + j], m, C::p(j), t[i + j]);
            PTX_ADDC_CC(t[i + N], t[i + N], c);
            PTX_ADDC(c, 0u, 0u);
            PTX_MADHI_CC(t[i + 1], m, C::p(0), t[i + 1]);
#pragma unroll
            for (int j = 1; j < N; j++)
                PTX_MADCHI_CC(t[i + 1 + j], m, C::p(j), t[i + 1 + j]);
            PTX_ADDC(c, c, 0u);
        }
        return reduce_once(t + N, c);
    }

    /* ---- rows by even and odd limbs (mul_eo, mul_wide, redc_eo). E[j] is limb j, O[j] is
     * limb j + 1. A product row adds a_(2k) b_i (low half at limb i+2k, high half at i+2k+1)
     * to E and a_(2k+1) b_i to O, each in one carry chain in which the two halves of one
     * product are neighbours, which ptxas fuses into one IMAD.WIDE.U32(.X); a reduction row
     * adds m_i P the same way. Limbs above i + N are untouched by row i, so each chain's carry
     * lands in a fresh limb. ---- */

    /* product row 0: E, O = a_even b_0, a_odd b_0 (limbs 0 .. N) */
    static FF_INLINE void eo_row0(uint32_t *e, uint32_t *o, const uint32_t *a, const uint32_t *b)
    {
#pragma unroll
        for (int k = 0; k < N; k += 2) {
            uint64_t pe = (uint64_t)a[k] * b[0], po = (uint64_t)a[k + 1] * b[0];
            e[k] = (uint32_t)pe;
            e[k + 1] = (uint32_t)(pe >> 32);
            o[k] = (uint32_t)po;
            o[k + 1] = (uint32_t)(po >> 32);
        }
        e[N] = o[N] = 0;
    }

    /* product row i >= 1: E, O += a_even b_i, a_odd b_i from limb i, carries into limb i + N */
    static FF_INLINE void eo_row(uint32_t *e, uint32_t *o, const uint32_t *a, const uint32_t *b, int i)
    {
        PTX_MADLO_CC(e[i], a[0], b[i], e[i]);
        PTX_MADCHI_CC(e[i + 1], a[0], b[i], e[i + 1]);
#pragma unroll
        for (int k = 2; k < N; k += 2) {
            PTX_MADCLO_CC(e[i + k], a[k], b[i], e[i + k]);
            PTX_MADCHI_CC(e[i + k + 1], a[k], b[i], e[i + k + 1]);
        }
        PTX_ADDC(e[i + N], 0u, 0u);
        PTX_MADLO_CC(o[i], a[1], b[i], o[i]);
        PTX_MADCHI_CC(o[i + 1], a[1], b[i], o[i + 1]);
#pragma unroll
        for (int k = 2; k < N; k += 2) {
            PTX_MADCLO_CC(o[i + k], a[k + 1], b[i], o[i + k]);
            PTX_MADCHI_CC(o[i + k + 1], a[k + 1], b[i], o[i + k + 1]);
        }
        PTX_ADDC(o[i + N], 0u, 0u);
    }

    /* reduction row i: m_i = T_i * m0, where T_i = E[i] + O[i-1] + c (c: the carry out of the
     * limbs below i), and E, O += m_i P from limb i; then c = what limb i, now 0 mod 2^32,
     * carries into limb i + 1 (0..2) */
    static FF_INLINE void eo_redc_row(uint32_t *e, uint32_t *o, int i, uint32_t &c)
    {
        uint32_t below = i ? o[i - 1] : 0u; /* limb i of O */
        uint32_t m = (e[i] + below + c) * C::m0();
        PTX_MADLO_CC(e[i], m, C::p(0), e[i]);
        PTX_MADCHI_CC(e[i + 1], m, C::p(0), e[i + 1]);
#pragma unroll
        for (int k = 2; k < N; k += 2) {
            PTX_MADCLO_CC(e[i + k], m, C::p(k), e[i + k]);
            PTX_MADCHI_CC(e[i + k + 1], m, C::p(k), e[i + k + 1]);
        }
        PTX_ADDC(e[i + N], e[i + N], 0u);
        PTX_MADLO_CC(o[i], m, C::p(1), o[i]);
        PTX_MADCHI_CC(o[i + 1], m, C::p(1), o[i + 1]);
#pragma unroll
        for (int k = 2; k < N; k += 2) {
            PTX_MADCLO_CC(o[i + k], m, C::p(k + 1), o[i + k]);
            PTX_MADCHI_CC(o[i + k + 1], m, C::p(k + 1), o[i + k + 1]);
        }
        PTX_ADDC(o[i + N], o[i + N], 0u);
        c = (uint32_t)(((uint64_t)e[i] + below + c) >> 32);
    }

    /* r = limbs N .. 2N-1 of e + o + c 2^(32N) (c: the carry into limb N), where limb j of o is
     * o[j - OFF] (mul_eo's O: OFF 1; mul_ap's Y: 0, and e then has a limb 2N); returns the top
     * limb */
    template <int OFF>
    static FF_INLINE uint32_t fold_rows(uint32_t *r, const uint32_t *e, const uint32_t *o, uint32_t c)
    {
        uint32_t top;
        PTX_ADD_CC(r[0], e[N], o[N - OFF]);
#pragma unroll
        for (int j = 1; j < N; j++)
            PTX_ADDC_CC(r[j], e[N + j], o[N + j - OFF]);
        PTX_ADDC(top, OFF ? 0u : e[2 * N], o[2 * N - OFF]);
        PTX_ADD_CC(r[0], r[0], c);
#pragma unroll
        for (int j = 1; j < N; j++)
            PTX_ADDC_CC(r[j], r[j], 0u);
        PTX_ADDC(top, top, 0u);
        return top;
    }
    static FF_INLINE uint32_t eo_fold(uint32_t *r, const uint32_t *e, const uint32_t *o, uint32_t c)
    {
        return fold_rows<1>(r, e, o, c);
    }

    /* CIOS by even and odd limbs: product row i, then reduction row i. ~40% more products
     * per second than mul_sos on the H200, at the cost of 2N live accumulator limbs. With
     * FF_MUL_AP, mul_ap's rows instead (the same products, register pairs that stay put). */
    static FF_INLINE fp_t mul_eo(const fp_t &a, const fp_t &b)
    {
#if FF_MUL_AP
        return mul_ap(a, b);
#else
        return mul_eo_rows(a, b);
#endif
    }
    /* mul_eo's own rows, whatever FF_MUL_AP (emu_test checks both forms) */
    static FF_INLINE fp_t mul_eo_rows(const fp_t &a, const fp_t &b)
    {
        uint32_t e[2 * N], o[2 * N], c = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            if (i == 0)
                eo_row0(e, o, a.v, b.v);
            else
                eo_row(e, o, a.v, b.v, i);
            eo_redc_row(e, o, i, c);
        }
        /* the result is below 2P: N limbs and a top bit */
        uint32_t r[N];
        uint32_t top = eo_fold(r, e, o, c);
        return reduce_once(r, top);
    }

    /* ---- rows by the parity of the limb position (mul_ap). An IMAD.WIDE.U32 reads its addend
     * from and writes its result to an aligned register pair. mul_eo's rows put the pairs of
     * E and O at limbs i + 2k, whose parity flips from row to row, so ptxas moves about 100
     * registers a product (MOV and IMAD.MOV; the latter take the IMAD pipe the products
     * need). Here X holds the pairs that start at even limbs and Y those that start at odd
     * limbs, both indexed by limb: row i adds u * s_k (s = a or P) at limb i + k to X when
     * i + k is even, else to Y, so a limb's pair never changes. X[j] + Y[j] is limb j. ---- */

    /* arr += u * s_j at limbs base + j for j = j0, j0 + 2, .. < jend (pairs), one carry chain,
     * its carry into the limb after the last pair. That limb lies above every earlier row's
     * chain, so it holds at most a few earlier carries, and a later row's chain takes it in. */
    static FF_INLINE void ap_chain(uint32_t *arr, int base, const uint32_t *s, int j0, int jend, uint32_t u)
    {
        if (j0 >= jend)
            return;
        PTX_MADLO_CC(arr[base + j0], s[j0], u, arr[base + j0]);
        PTX_MADCHI_CC(arr[base + j0 + 1], s[j0], u, arr[base + j0 + 1]);
        int j = j0 + 2;
#pragma unroll
        for (; j < jend; j += 2) {
            PTX_MADCLO_CC(arr[base + j], s[j], u, arr[base + j]);
            PTX_MADCHI_CC(arr[base + j + 1], s[j], u, arr[base + j + 1]);
        }
        PTX_ADDC(arr[base + j], arr[base + j], 0u);
    }
    /* row i of s = a (u = b_i) or s = P (u = m_i): the products at even limbs into x, at odd
     * limbs into y; each array's chain carries into limb i + N or i + N + 1. (Adding BLS12-381
     * Fr's limbs 1 and 2^32 - 1 instead of multiplying them saved their IMAD.HI but cost more
     * in register moves: 538 -> 549 units for two products.) */
    static FF_INLINE void ap_rows(uint32_t *x, uint32_t *y, int i, const uint32_t *s, uint32_t u)
    {
        ap_chain(x, i, s, i & 1, N, u);
        ap_chain(y, i, s, 1 - (i & 1), N, u);
    }

    /* the reduction row's multiplier m = t m0 (t: limb i of the running sum). For BLS12-381 Fr
     * m0 is 2^32 - 1, and ptxas, which knows it, turns m P_k into -(t P_k) and splits every
     * product of the row into IMAD.X and IMAD.HI.X (3 units instead of an IMAD.WIDE's 2, study
     * 14); an identity permute it does not look through keeps m a plain value. */
    static FF_INLINE uint32_t ap_m(uint32_t t)
    {
        return ff_alu_copy(t * C::m0());
    }

    /* CIOS by limb parity: product row i, then reduction row i, as mul_eo (the same 2N^2 + N
     * products), with limb i of the running sum x_i + y_i + c (c: the carry out of limb i - 1,
     * whose value is then 0 mod 2^32) */
    static FF_INLINE fp_t mul_ap(const fp_t &a, const fp_t &b)
    {
#ifdef CUDA_EMU_RT
        /* the whole backend on the CPU (dev/cuda/emu_rt): the same product (the same m, so the
           same t, and one subtraction of P) in 64-bit limbs, several times faster than the
           emulated carry chains, which emu_test checks */
        if (N % 2 == 0) {
            static const rfield<N / 2> f = emu_field<N / 2>([](int j) { return C::p(j); });
            fp_t r;
            emu_field_mul(f, r.v, a.v, b.v);
            return r;
        }
#endif
        uint32_t x[2 * N + 1], y[2 * N + 1], p[N], c = 0;
#pragma unroll
        for (int j = 0; j <= 2 * N; j++)
            x[j] = y[j] = 0;
#pragma unroll
        for (int j = 0; j < N; j++)
            p[j] = C::p(j);
#pragma unroll
        for (int i = 0; i < N; i++) {
            ap_rows(x, y, i, a.v, b.v[i]);
            ap_rows(x, y, i, p, ap_m(x[i] + y[i] + c));
            c = (uint32_t)(((uint64_t)x[i] + y[i] + c) >> 32);
        }
        /* (x + y) / 2^(32N) + c < 2P: N limbs and a top bit */
        uint32_t r[N];
        uint32_t top = fold_rows<0>(r, x, y, c);
        return reduce_once(r, top);
    }

    /* the Montgomery reduction rows of mul_ap on x = t_lo (limbs 0 .. N-1, the rest zero) and
     * y = 0, then + t_hi: (t + m P) / 2^(32N) < 2P for t < P 2^(32N) */
    static FF_INLINE fp_t ap_redc(uint32_t *x, uint32_t *y, const uint32_t *t_hi)
    {
        uint32_t p[N], c = 0;
#pragma unroll
        for (int j = 0; j < N; j++)
            p[j] = C::p(j);
#pragma unroll
        for (int i = 0; i < N; i++) {
            ap_rows(x, y, i, p, ap_m(x[i] + y[i] + c));
            c = (uint32_t)(((uint64_t)x[i] + y[i] + c) >> 32);
        }
        uint32_t r[N];
        uint32_t top = fold_rows<0>(r, x, y, c);
        PTX_ADD_CC(r[0], r[0], t_hi[0]);
#pragma unroll
        for (int j = 1; j < N; j++)
            PTX_ADDC_CC(r[j], r[j], t_hi[j]);
        PTX_ADDC(top, top, 0u);
        return reduce_once(r, top);
    }

    /* a^2 with the cross products a_i a_j (i < j) once, in mul_ap's parity rows: N(N-1)/2 wide
     * products, doubled (funnel shifts), plus the N squares a_i^2 (all at even limbs, one
     * chain), then mul_ap's reduction rows: 3N^2/2 + 3N/2 products against mul_ap's 2N^2 + N */
    static FF_INLINE fp_t sqr_ap(const fp_t &a)
    {
        uint32_t x[2 * N + 1], y[2 * N + 1], t[2 * N];
#pragma unroll
        for (int j = 0; j <= 2 * N; j++)
            x[j] = y[j] = 0;
        /* row i: a_i a_j at limb i + j, into x when i + j is even (j = i + 2, i + 4, ..) */
#pragma unroll
        for (int i = 0; i < N - 1; i++) {
            ap_chain(x, i, a.v, i + 2, N, a.v[i]);
            ap_chain(y, i, a.v, i + 1, N, a.v[i]);
        }
        /* t = 2 (x + y) + the squares (the cross sum is < 2^(64N-1)) */
        PTX_ADD_CC(t[0], x[0], y[0]);
#pragma unroll
        for (int j = 1; j < 2 * N - 1; j++)
            PTX_ADDC_CC(t[j], x[j], y[j]);
        PTX_ADDC(t[2 * N - 1], x[2 * N - 1], y[2 * N - 1]);
#pragma unroll
        for (int j = 2 * N - 1; j > 0; j--)
            t[j] = __funnelshift_l(t[j - 1], t[j], 1);
        t[0] <<= 1;
        PTX_MADLO_CC(t[0], a.v[0], a.v[0], t[0]);
        PTX_MADCHI_CC(t[1], a.v[0], a.v[0], t[1]);
#pragma unroll
        for (int i = 1; i < N - 1; i++) {
            PTX_MADCLO_CC(t[2 * i], a.v[i], a.v[i], t[2 * i]);
            PTX_MADCHI_CC(t[2 * i + 1], a.v[i], a.v[i], t[2 * i + 1]);
        }
        PTX_MADCLO_CC(t[2 * N - 2], a.v[N - 1], a.v[N - 1], t[2 * N - 2]);
        PTX_MADCHI(t[2 * N - 1], a.v[N - 1], a.v[N - 1], t[2 * N - 1]);
#pragma unroll
        for (int j = 0; j <= 2 * N; j++)
            x[j] = j < N ? t[j] : 0, y[j] = 0;
        return ap_redc(x, y, t + N);
    }

    /* ---- products by a constant with a precomputed quotient (Shoup), for the NTT's twiddles.
     * For a constant w < P and wq = floor(w 2^(32N) / P), and any a < 2^(32N): q = floor(a wq /
     * 2^(32N)) and r = a w - q P lie in [0, 2P), so with 2P < 2^(32N) (Fr of both curves) r is
     * the low half of a w minus the low half of q P. a in Montgomery form and w in standard form
     * give a w in Montgomery form. Cost: two low halves and one high half of a product, 99 of
     * the 136 wide limb products of mul_eo at N = 8. ---- */

    /* one step of a carry chain: d += lo or hi half of a b, with the carry in unless first and
     * the carry out unless last */
    template <bool HI>
    static FF_INLINE void mac_step(uint32_t &d, uint32_t a, uint32_t b, bool first, bool last)
    {
        if (first && last)
            d += HI ? (uint32_t)(((uint64_t)a * b) >> 32) : a * b;
        else if (first) {
            if (HI)
                PTX_MADHI_CC(d, a, b, d);
            else
                PTX_MADLO_CC(d, a, b, d);
        } else if (last) {
            if (HI)
                PTX_MADCHI(d, a, b, d);
            else
                PTX_MADCLO(d, a, b, d);
        } else {
            if (HI)
                PTX_MADCHI_CC(d, a, b, d);
            else
                PTX_MADCLO_CC(d, a, b, d);
        }
    }

    /* arr += u * s_j at limbs base + j for j = j0, j0 + 2, .. (mul_ap's pairs), cut at limb
     * N - 1: a pair whose high half would land at limb N lends only its low half, and the carry
     * out of limb N - 1 is dropped */
    static FF_INLINE void ap_chain_low(uint32_t *arr, int base, const uint32_t *s, int j0, uint32_t u)
    {
#pragma unroll
        for (int j = j0; base + j <= N - 1; j += 2) {
            const bool pair = base + j + 1 <= N - 1, last = base + j + 2 > N - 1;
            mac_step<false>(arr[base + j], s[j], u, j == j0, last && !pair);
            if (pair)
                mac_step<true>(arr[base + j + 1], s[j], u, false, last);
        }
    }

    /* The two row sums of mul_shoup's halves, x (limb j at x[j]) plus y (limb j at y[j - OFF]):
     * mul_ap's rows (OFF = 0) or mul_eo's (OFF = 1, y's limb 0 is zero). fold_low: r = limbs
     * 0 .. N - 1 of the sum, the carry out dropped. fold_high: q = limbs N .. 2N - 1 of the sum
     * from limb N - 2 up (the lower limbs are not part of it), returning limb N - 1. */
    template <int OFF>
    static FF_INLINE void fold_low(uint32_t *r, const uint32_t *x, const uint32_t *y)
    {
        if (OFF)
            r[0] = x[0];
        PTX_ADD_CC(r[OFF], x[OFF], y[0]);
#pragma unroll
        for (int j = OFF + 1; j < N - 1; j++)
            PTX_ADDC_CC(r[j], x[j], y[j - OFF]);
        PTX_ADDC(r[N - 1], x[N - 1], y[N - 1 - OFF]);
    }
    template <int OFF>
    static FF_INLINE uint32_t fold_high(uint32_t *q, const uint32_t *x, const uint32_t *y)
    {
        uint32_t s_lo, s_top;
        PTX_ADD_CC(s_lo, x[N - 2], y[N - 2 - OFF]);
        PTX_ADDC_CC(s_top, x[N - 1], y[N - 1 - OFF]);
#pragma unroll
        for (int j = 0; j < N - 1; j++)
            PTX_ADDC_CC(q[j], x[N + j], y[N + j - OFF]);
        PTX_ADDC(q[N - 1], x[2 * N - 1], y[2 * N - 1 - OFF]);
        (void)s_lo;
        return s_top;
    }

    /* r = a b mod 2^(32N), by mul_ap's parity rows cut at limb N - 1 */
    static FF_INLINE void mul_low_ap(uint32_t *r, const uint32_t *a, const uint32_t *b)
    {
        uint32_t x[N], y[N];
#pragma unroll
        for (int j = 0; j < N; j++)
            x[j] = y[j] = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            ap_chain_low(x, i, a, i & 1, b[i]);
            ap_chain_low(y, i, a, 1 - (i & 1), b[i]);
        }
        fold_low<0>(r, x, y);
    }

    /* r = a b mod 2^(32N), by mul_eo's even and odd rows cut at limb N - 1 (every loop below
     * unrolls completely, so the accumulators stay in registers) */
    static FF_INLINE void mul_low_eo(uint32_t *r, const uint32_t *a, const uint32_t *b)
    {
        uint32_t e[N], o[N]; /* e[j]: limb j; o[j]: limb j + 1 */
#pragma unroll
        for (int j = 0; j < N; j++)
            e[j] = o[j] = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
#pragma unroll
            for (int k = 0; k < N; k += 2) {
                if (i + k <= N - 1)
                    mac_step<false>(e[i + k], a[k], b[i], k == 0, i + k == N - 1);
                if (i + k + 1 <= N - 1)
                    mac_step<true>(e[i + k + 1], a[k], b[i], false, i + k + 1 == N - 1);
            }
#pragma unroll
            for (int k = 0; k < N; k += 2) {
                if (i + k <= N - 2)
                    mac_step<false>(o[i + k], a[k + 1], b[i], k == 0, i + k == N - 2);
                if (i + k + 1 <= N - 2)
                    mac_step<true>(o[i + k + 1], a[k + 1], b[i], false, i + k + 1 == N - 2);
            }
        }
        fold_low<1>(r, e, o);
    }

    /* the first even k >= lo (lo may be negative) */
    static constexpr __host__ __device__ int even_from(int lo) { return lo <= 0 ? 0 : (lo + 1) & ~1; }

    /* mul_high_part by mul_ap's parity rows: the same products (those at limbs >= N - 2), so
     * the same S, q and limb N - 1 */
    static FF_INLINE uint32_t mul_high_part_ap(uint32_t *q, const uint32_t *a, const uint32_t *b)
    {
        uint32_t x[2 * N + 1], y[2 * N + 1];
#pragma unroll
        for (int j = 0; j <= 2 * N; j++)
            x[j] = y[j] = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            const int k0 = N - 2 - i > 0 ? N - 2 - i : 0; /* the first column kept */
            const int kx = k0 + ((i + k0) & 1), ky = k0 + ((i + k0 + 1) & 1);
            ap_chain(x, i, a, kx, N, b[i]);
            ap_chain(y, i, a, ky, N, b[i]);
        }
        return fold_high<0>(q, x, y);
    }

    /* q = floor(S / 2^(32N)) for S = the sum of the limb products a_k b_i of column i + k >= N - 2
     * (the rest of a b is below (N - 1) 2^(32(N-1))); returns limb N - 1 of S. When that limb
     * is at most 2^32 - 1 - N, q = floor(a b / 2^(32N)) exactly. */
    static FF_INLINE uint32_t mul_high_part_eo(uint32_t *q, const uint32_t *a, const uint32_t *b)
    {
        uint32_t e[2 * N], o[2 * N]; /* e[j]: limb j; o[j]: limb j + 1 */
#pragma unroll
        for (int j = 0; j < 2 * N; j++)
            e[j] = o[j] = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            const int ke = even_from(N - 2 - i), ko = even_from(N - 3 - i); /* first pair of each chain */
#pragma unroll
            for (int k = 0; k < N; k += 2) {
                if (k >= ke) {
                    mac_step<false>(e[i + k], a[k], b[i], k == ke, false);
                    mac_step<true>(e[i + k + 1], a[k], b[i], false, false);
                }
            }
            PTX_ADDC(e[i + N], e[i + N], 0u);
#pragma unroll
            for (int k = 0; k < N; k += 2) {
                if (k >= ko) {
                    mac_step<false>(o[i + k], a[k + 1], b[i], k == ko, false);
                    mac_step<true>(o[i + k + 1], a[k + 1], b[i], false, false);
                }
            }
            PTX_ADDC(o[i + N], o[i + N], 0u);
        }
        return fold_high<1>(q, e, o);
    }

    /* mul_shoup's halves in mul_ap's rows with FF_MUL_AP, else in mul_eo's */
    static FF_INLINE void mul_low(uint32_t *r, const uint32_t *a, const uint32_t *b)
    {
#if FF_MUL_AP
        mul_low_ap(r, a, b);
#else
        mul_low_eo(r, a, b);
#endif
    }
    static FF_INLINE uint32_t mul_high_part(uint32_t *q, const uint32_t *a, const uint32_t *b)
    {
#if FF_MUL_AP
        return mul_high_part_ap(q, a, b);
#else
        return mul_high_part_eo(q, a, b);
#endif
    }

    /* floor(a b / 2^(32N)) exactly (mul_shoup's rare case), out of line */
    static __device__ __noinline__ fp_t mul_high_exact(const fp_t a, const fp_t b)
    {
        uint32_t w[2 * N];
        mul_wide(w, a.v, b.v);
        fp_t q;
#pragma unroll
        for (int j = 0; j < N; j++)
            q.v[j] = w[N + j];
        return q;
    }

    /* floor(a b / 2^(32N)): mul_high_part, or mul_high_exact where its limb N - 1 exceeds FAST_MAX */
    template <uint32_t FAST_MAX = 0xffffffffu - (uint32_t)N>
    static FF_INLINE fp_t mul_high(const fp_t &a, const fp_t &b)
    {
        fp_t q;
        if (mul_high_part(q.v, a.v, b.v) > FAST_MAX)
            q = mul_high_exact(a, b); /* out of line: inline measured no faster in the NTT */
        return q;
    }

    /* a w mod P in [0, 2P), not reduced (see above: for any a below 2^(32N)); FAST_MAX below
       2^32 - 1 - N takes the exact quotient more often (dev/cuda/emu_test.cpp checks that path
       with FAST_MAX = 0) */
    template <uint32_t FAST_MAX = 0xffffffffu - (uint32_t)N>
    static FF_INLINE fp_t mul_shoup_lazy(const fp_t &a, const fp_t &w, const fp_t &wq)
    {
        fp_t q = mul_high<FAST_MAX>(a, wq), r;
        uint32_t lo[N], qp[N], pc[N];
#pragma unroll
        for (int k = 0; k < N; k++)
            pc[k] = C::p(k);
        mul_low(lo, a.v, w.v);
        mul_low(qp, pc, q.v);
        PTX_SUB_CC(r.v[0], lo[0], qp[0]);
#pragma unroll
        for (int j = 1; j < N - 1; j++)
            PTX_SUBC_CC(r.v[j], lo[j], qp[j]);
        PTX_SUBC(r.v[N - 1], lo[N - 1], qp[N - 1]);
        return r;
    }
    /* a w mod P, reduced */
    template <uint32_t FAST_MAX = 0xffffffffu - (uint32_t)N>
    static FF_INLINE fp_t mul_shoup(const fp_t &a, const fp_t &w, const fp_t &wq)
    {
        return reduce_once(mul_shoup_lazy<FAST_MAX>(a, w, wq).v, 0u);
    }

    /* wq = floor(w 2^(32N) / P) for the w < P whose Montgomery form is wm = w R mod P (fully
     * reduced), R = 2^(32N): w R = wq P + wm, so wq P = -wm mod R, and as P is odd and wq < R,
     * wq = -wm P^-1 mod R, the low half of wm times the constant NPINV. One low half of a
     * product, where a long division takes 32N shift-and-subtract steps. */
    static FF_INLINE fp_t shoup_quotient_mont(const fp_t &wm)
    {
        fp_t q;
        uint32_t ni[N];
#pragma unroll
        for (int k = 0; k < N; k++)
            ni[k] = C::npinv(k);
        mul_low(q.v, wm.v, ni);
        return q;
    }
    /* the same for w < P in standard form */
    FF_INLINE fp_t shoup_quotient() const { return shoup_quotient_mont(to_mont()); }

    /* ---- lazy reduction (fp2_t::mul_lazy): products kept as 2N limbs, reduced once ---- */

    /* w[0..2N-1] = a * b for any N-limb a, b (no reduction): mul_eo's product rows */
    static FF_INLINE void mul_wide(uint32_t *w, const uint32_t *a, const uint32_t *b)
    {
        uint32_t e[2 * N], o[2 * N];
        eo_row0(e, o, a, b);
#pragma unroll
        for (int i = 1; i < N; i++)
            eo_row(e, o, a, b, i);
        /* E + O * 2^32 (its top limb and the carry out are 0: a b < 2^64N) */
        w[0] = e[0];
        PTX_ADD_CC(w[1], e[1], o[0]);
#pragma unroll
        for (int j = 2; j < 2 * N - 1; j++)
            PTX_ADDC_CC(w[j], e[j], o[j - 1]);
        PTX_ADDC(w[2 * N - 1], e[2 * N - 1], o[2 * N - 2]);
    }

    /* Montgomery reduction of t[0..2N-1] < P * 2^(32N) by mul_eo's reduction rows on the low
     * half (E = t_lo, O = 0), the high half added at the end: (t + m P) / 2^(32N) < 2P */
    static FF_INLINE fp_t redc_eo(const uint32_t *t)
    {
        uint32_t e[2 * N], o[2 * N], c = 0;
#pragma unroll
        for (int j = 0; j < N; j++) {
            e[j] = t[j];
            e[N + j] = 0;
            o[j] = o[N + j] = 0;
        }
#pragma unroll
        for (int i = 0; i < N; i++)
            eo_redc_row(e, o, i, c);
        uint32_t r[N];
        uint32_t top = eo_fold(r, e, o, c);
        PTX_ADD_CC(r[0], r[0], t[N]);
#pragma unroll
        for (int j = 1; j < N; j++)
            PTX_ADDC_CC(r[j], r[j], t[N + j]);
        PTX_ADDC(top, top, 0u);
        return reduce_once(r, top);
    }

    /* r = a + b as N limbs, not reduced (< 2P, which fits when P < 2^(32N-1)) */
    static FF_INLINE void add_raw(uint32_t *r, const fp_t &a, const fp_t &b)
    {
        PTX_ADD_CC(r[0], a.v[0], b.v[0]);
#pragma unroll
        for (int i = 1; i < N - 1; i++)
            PTX_ADDC_CC(r[i], a.v[i], b.v[i]);
        PTX_ADDC(r[N - 1], a.v[N - 1], b.v[N - 1]);
    }

    /* Product scanning by rows into 2N limbs (low halves in one chain, high halves in the
     * next), then a separate REDC: fewer live registers than mul_eo. */
    static FF_INLINE fp_t mul_sos(const fp_t &a, const fp_t &b)
    {
        uint32_t t[2 * N];
#pragma unroll
        for (int i = 0; i < 2 * N; i++)
            t[i] = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            /* t[i..i+N-1] += lo(a*b_i), carry into t[i+N], t[i+N+1] */
            PTX_MADLO_CC(t[i], a.v[0], b.v[i], t[i]);
#pragma unroll
            for (int j = 1; j < N; j++)
                PTX_MADCLO_CC(t[i + j], a.v[j], b.v[i], t[i + j]);
            if (i + N + 1 < 2 * N) {
                PTX_ADDC_CC(t[i + N], t[i + N], 0u);
                PTX_ADDC(t[i + N + 1], 0u, 0u);
            } else {
                PTX_ADDC(t[i + N], t[i + N], 0u);
            }
            /* t[i+1..i+N] += hi(a*b_i) */
            PTX_MADHI_CC(t[i + 1], a.v[0], b.v[i], t[i + 1]);
#pragma unroll
            for (int j = 1; j < N; j++)
                PTX_MADCHI_CC(t[i + 1 + j], a.v[j], b.v[i], t[i + 1 + j]);
            if (i + N + 1 < 2 * N)
                PTX_ADDC(t[i + N + 1], t[i + N + 1], 0u);
        }
        return redc(t);
    }

    /* mul_eo for 8 limbs (Fr of both curves, BN254 Fq). For 12 limbs (BLS12-381 Fq) inline in
     * the G1 MSM it ran slower (251 -> 326 ms at 2^24: register pressure), so operator* keeps
     * mul_sos there, while Fp2 products, which gained (1298 -> 1071 ms for G2), call mul_eo
     * directly, and so does the MSM's out-of-line product (ec.cuh ec_mul_call), where mul_eo is
     * the faster at every limb count. FF_EO_LIMBS (a benchmark knob): the most limbs operator*
     * takes mul_eo for. */
    friend FF_INLINE fp_t operator*(const fp_t &a, const fp_t &b)
    {
        return N <= FF_EO_LIMBS ? mul_eo(a, b) : mul_sos(a, b);
    }

    FF_INLINE fp_t sqr() const
    {
#if FF_SQR_AP
        return sqr_ap(*this);
#endif
        /* where operator* takes mul_eo, so does the square: its IMAD.WIDE pairs beat the
           chains below even with half the cross products (H200, 8 limbs: 45.3 Gmul/s for these
           chains, 50.8 for mul_eo; BN254 G1 2^24 level 0 56.3 -> 54.7 ms). For 12 limbs the
           chains stay (22.0 Gmul/s against mul_sos's 16.5). */
        if (N <= FF_EO_LIMBS)
            return mul_eo(*this, *this);
        const uint32_t *a = v;
        uint32_t t[2 * N];
#pragma unroll
        for (int i = 0; i < 2 * N; i++)
            t[i] = 0;
        /* cross products a_i*a_j, i < j: row i covers limbs 2i+1 .. i+N+1 */
#pragma unroll
        for (int i = 0; i < N - 1; i++) {
            PTX_MADLO_CC(t[2 * i + 1], a[i], a[i + 1], t[2 * i + 1]);
#pragma unroll
            for (int j = i + 2; j < N; j++)
                PTX_MADCLO_CC(t[i + j], a[i], a[j], t[i + j]);
            if (i + N + 1 < 2 * N) {
                PTX_ADDC_CC(t[i + N], t[i + N], 0u);
                PTX_ADDC(t[i + N + 1], 0u, 0u);
            } else {
                PTX_ADDC(t[i + N], t[i + N], 0u);
            }
            PTX_MADHI_CC(t[2 * i + 2], a[i], a[i + 1], t[2 * i + 2]);
#pragma unroll
            for (int j = i + 2; j < N; j++)
                PTX_MADCHI_CC(t[i + 1 + j], a[i], a[j], t[i + 1 + j]);
            if (i + N + 1 < 2 * N)
                PTX_ADDC(t[i + N + 1], t[i + N + 1], 0u);
        }
        /* double (the cross sum is < 2^(64N-1)) */
        t[2 * N - 1] = __funnelshift_l(t[2 * N - 2], t[2 * N - 1], 1);
#pragma unroll
        for (int i = 2 * N - 2; i > 0; i--)
            t[i] = __funnelshift_l(t[i - 1], t[i], 1);
        t[0] <<= 1;
        /* + diagonal a_i^2 at limbs 2i, 2i+1 */
        PTX_MADLO_CC(t[0], a[0], a[0], t[0]);
        PTX_MADCHI_CC(t[1], a[0], a[0], t[1]);
#pragma unroll
        for (int i = 1; i < N; i++) {
            PTX_MADCLO_CC(t[2 * i], a[i], a[i], t[2 * i]);
            PTX_MADCHI_CC(t[2 * i + 1], a[i], a[i], t[2 * i + 1]);
        }
        return redc(t);
    }

    /* standard form -> Montgomery (x * R^2 * R^-1) */
    FF_INLINE fp_t to_mont() const
    {
        fp_t rr;
#pragma unroll
        for (int i = 0; i < N; i++)
            rr.v[i] = C::rr(i);
        return *this * rr;
    }
    /* Montgomery -> standard form (x * R^-1) */
    FF_INLINE fp_t from_mont() const
    {
        uint32_t t[2 * N];
#pragma unroll
        for (int i = 0; i < N; i++) {
            t[i] = v[i];
            t[N + i] = 0;
        }
        return redc(t);
    }

    /* this^e for a small public exponent (square and multiply, variable time) */
    FF_INLINE fp_t pow_u64(uint64_t e) const
    {
        fp_t r = one(), b = *this;
        while (e) {
            if (e & 1)
                r = r * b;
            b = b.sqr();
            e >>= 1;
        }
        return r;
    }

    /* 16-byte vector loads/stores (p 16-byte aligned; every layout here is) */
    static FF_INLINE fp_t load(const void *p)
    {
        fp_t r;
        const uint4 *q = (const uint4 *)p;
#pragma unroll
        for (int i = 0; i < N / 4; i++) {
            uint4 x = q[i];
            r.v[4 * i] = x.x;
            r.v[4 * i + 1] = x.y;
            r.v[4 * i + 2] = x.z;
            r.v[4 * i + 3] = x.w;
        }
        return r;
    }
    FF_INLINE void store(void *p) const
    {
        uint4 *q = (uint4 *)p;
#pragma unroll
        for (int i = 0; i < N / 4; i++)
            q[i] = make_uint4(v[4 * i], v[4 * i + 1], v[4 * i + 2], v[4 * i + 3]);
    }
};

/* Fp2 = Fp[u]/(u^2 + 1) (both curves use the non-residue -1). */
template <class F>
struct fp2_t {
    static const int LIMBS = 2 * F::LIMBS;
    F c0, c1;

    static FF_INLINE fp2_t zero() { return fp2_t{F::zero(), F::zero()}; }
    static FF_INLINE fp2_t one() { return fp2_t{F::one(), F::zero()}; }
    FF_INLINE bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
    FF_INLINE bool operator==(const fp2_t &b) const { return c0 == b.c0 && c1 == b.c1; }
    FF_INLINE bool operator!=(const fp2_t &b) const { return !(*this == b); }
    friend FF_INLINE fp2_t operator+(const fp2_t &a, const fp2_t &b) { return fp2_t{a.c0 + b.c0, a.c1 + b.c1}; }
    friend FF_INLINE fp2_t operator-(const fp2_t &a, const fp2_t &b) { return fp2_t{a.c0 - b.c0, a.c1 - b.c1}; }
    FF_INLINE fp2_t neg() const { return fp2_t{c0.neg(), c1.neg()}; }
    FF_INLINE fp2_t dbl() const { return fp2_t{c0.dbl(), c1.dbl()}; }
    /* the base field's mul_eo, as a product for mul_by and sqr_by */
    struct eo_product {
        FF_INLINE F operator()(const F &x, const F &y) const { return F::mul_eo(x, y); }
    };
    /* Karatsuba: 3M by the base-field product m(x, y), which must take operands below 2P: the
       third product's are the sums unreduced, and its REDC brings the result below P all the
       same, since 4P < R for both curves (two conditional subtractions fewer) */
    template <class M>
    static FF_INLINE fp2_t mul_by(const fp2_t &a, const fp2_t &b, M m)
    {
        F v0 = m(a.c0, b.c0), v1 = m(a.c1, b.c1), sa, sb;
        F::add_raw(sa.v, a.c0, a.c1);
        F::add_raw(sb.v, b.c0, b.c1);
        F s = m(sa, sb);
        return fp2_t{v0 - v1, s - v0 - v1};
    }
    /* Karatsuba: 3M (with FP2_LAZY, mul_lazy) */
    friend FF_INLINE fp2_t operator*(const fp2_t &a, const fp2_t &b)
    {
#if FP2_LAZY
        return mul_lazy(a, b);
#else
        return mul_by(a, b, eo_product{});
#endif
    }
    /* Karatsuba with lazy reduction: the three products stay 2N limbs wide and only c0 and c1
       are reduced, two REDCs instead of three (needs 2P < 2^(32N), true of both curves):
       c1 = (a0 + a1)(b0 + b1) - a0 b0 - a1 b1 = a0 b1 + a1 b0 < 2P^2 exactly, and
       c0 = a0 b0 - a1 b1, plus P 2^(32N) when negative; both below P 2^(32N) */
    static FF_INLINE fp2_t mul_lazy(const fp2_t &a, const fp2_t &b)
    {
        const int N = F::LIMBS;
        uint32_t t0[2 * N], t1[2 * N], s[2 * N], d[2 * N], bw;
        F::mul_wide(t0, a.c0.v, b.c0.v);
        F::mul_wide(t1, a.c1.v, b.c1.v);
        PTX_ADD_CC(s[0], t0[0], t1[0]);
#pragma unroll
        for (int j = 1; j < 2 * N - 1; j++)
            PTX_ADDC_CC(s[j], t0[j], t1[j]);
        PTX_ADDC(s[2 * N - 1], t0[2 * N - 1], t1[2 * N - 1]);
        PTX_SUB_CC(d[0], t0[0], t1[0]);
#pragma unroll
        for (int j = 1; j < 2 * N; j++)
            PTX_SUBC_CC(d[j], t0[j], t1[j]);
        PTX_SUBC(bw, 0u, 0u); /* 0 or all ones */
        PTX_ADD_CC(d[N], d[N], F::params::p(0) & bw);
#pragma unroll
        for (int j = 1; j < N - 1; j++)
            PTX_ADDC_CC(d[N + j], d[N + j], F::params::p(j) & bw);
        PTX_ADDC(d[2 * N - 1], d[2 * N - 1], F::params::p(N - 1) & bw);
        uint32_t sa[N], sb[N];
        F::add_raw(sa, a.c0, a.c1);
        F::add_raw(sb, b.c0, b.c1);
        F::mul_wide(t0, sa, sb);
        PTX_SUB_CC(t0[0], t0[0], s[0]);
#pragma unroll
        for (int j = 1; j < 2 * N - 1; j++)
            PTX_SUBC_CC(t0[j], t0[j], s[j]);
        PTX_SUBC(t0[2 * N - 1], t0[2 * N - 1], s[2 * N - 1]);
        return fp2_t{F::redc_eo(d), F::redc_eo(t0)};
    }
    /* complex squaring: (a0+a1)(a0-a1), 2 a0 a1: 2M by the base-field product m (as mul_by) */
    template <class M>
    FF_INLINE fp2_t sqr_by(M m) const
    {
        F t = m(c0, c1), sa;
        F::add_raw(sa.v, c0, c1); /* unreduced, as in mul_by */
        return fp2_t{m(sa, c0 - c1), t.dbl()};
    }
    FF_INLINE fp2_t sqr() const { return sqr_by(eo_product{}); }
    static FF_INLINE fp2_t load(const void *p)
    {
        const uint8_t *q = (const uint8_t *)p;
        return fp2_t{F::load(q), F::load(q + 4 * F::LIMBS)};
    }
    FF_INLINE void store(void *p) const
    {
        uint8_t *q = (uint8_t *)p;
        c0.store(q);
        c1.store(q + 4 * F::LIMBS);
    }
};
