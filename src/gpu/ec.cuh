/* ec.cuh - short Weierstrass points (a = 0) on the GPU, generic over the base field
 * (fp_t for G1, fp2_t for G2).
 *
 * DESIGN. MSM buckets are XYZZ (x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2; infinity is ZZ = 0):
 * adding an affine base costs 8M + 2S and needs no inversion (Bernstein-Lange EFD,
 * "g1p/shortw/xyzz": madd-2008-s, add-2008-s, dbl-2008-s-1, mdbl-2008-s-1). Affine
 * points are exactly as stored in a zkey: (x, y) in Montgomery form, all zero = infinity.
 * The formulas do not use the curve constant b. Variable time (MSM inputs are public
 * bases and witness scalars, none of them secret to the prover).
 */
#pragma once
#include "gpu/ff.cuh"
#include <type_traits>

/* 1: the point formulas (the mixed addition of an MSM's level 0, add, dbl) take their products
   from one out-of-line function (squares too, or for Fp2 from a second one); 0: inline. Inline,
   the mixed addition's eight products and two squares are some 12 000 instructions for 12
   limbs, far more than the instruction cache holds, and warps stall on instruction fetch; out
   of line, the product can also be mul_eo at any number of limbs (two carry chains: more
   independent work per instruction). Set per curve by the including unit (measured on the
   H200, dev/cuda/NOTES.md). */
#ifndef EC_MUL_CALL
#define EC_MUL_CALL 0
#endif
/* the same for G2 (fields of more than 48 bytes); 2: the Fp2 product and square are composed
   inline of the base field's out-of-line product (one 12-limb product, not three, a call) */
#ifndef EC_MUL_CALL2
#define EC_MUL_CALL2 EC_MUL_CALL
#endif
#define EC_MUL_CALL_OF(F) (sizeof(F) <= 48 ? EC_MUL_CALL : EC_MUL_CALL2)
#ifndef EC_ARG_PRMT
#define EC_ARG_PRMT 1
#endif
/* an out-of-line product's argument, with EC_ARG_PRMT copied through the ALU pipe
   (ff_alu_copy) into the registers of the call, where ptxas would move it with IMAD.MOVs on
   the IMAD pipe the products need (NOTES study 14) */
template <class F>
FF_INLINE F ec_arg(const F &a)
{
#if EC_ARG_PRMT
    return ff_alu_copy(a);
#else
    return a;
#endif
}
/* the out-of-line product: mul_eo where F has it (fp_t), else F's own */
template <class F>
FF_INLINE auto ec_prod(const F &a, const F &b, int) -> decltype(F::mul_eo(a, b))
{
    return F::mul_eo(a, b);
}
template <class F>
FF_INLINE F ec_prod(const F &a, const F &b, long)
{
    return a * b;
}
template <class F>
__device__ __noinline__ F ec_mul_call(const F a, const F b)
{
    return ec_prod(a, b, 0);
}
template <class F>
__device__ __noinline__ F ec_sqr_call(const F a)
{
    return a.sqr();
}
/* squares through ec_mul_call where the product is mul_eo (fp_t), or with FF_SQR_AP through
   ec_sqr_call (sqr_ap: a quarter fewer products, a second function); Fp2 keeps its complex
   square */
template <class F>
FF_INLINE auto ec_sqr_of(const F &a, int) -> decltype(F::mul_eo(a, a))
{
#if FF_SQR_AP
    return ec_sqr_call<F>(ec_arg(a));
#else
    return ec_mul_call<F>(ec_arg(a), ec_arg(a));
#endif
}
template <class F>
FF_INLINE F ec_sqr_of(const F &a, long)
{
    return ec_sqr_call<F>(a);
}
template <class F>
struct ec_is_fp2 : std::false_type {
};
template <class B>
struct ec_is_fp2<fp2_t<B>> : std::true_type {
};
/* the base field's out-of-line product, for fp2_t::mul_by and sqr_by */
struct ec_called_product {
    template <class B>
    FF_INLINE B operator()(const B &x, const B &y) const
    {
        return ec_mul_call<B>(ec_arg(x), ec_arg(y));
    }
};
template <class F>
FF_INLINE F ec_mul(const F &a, const F &b)
{
    if constexpr (EC_MUL_CALL_OF(F) == 2 && ec_is_fp2<F>::value)
        return F::mul_by(a, b, ec_called_product{});
    else if constexpr (EC_MUL_CALL_OF(F) != 0)
        return ec_mul_call<F>(ec_arg(a), ec_arg(b));
    else
        return a * b;
}
template <class F>
FF_INLINE F ec_sqr(const F &a)
{
    if constexpr (EC_MUL_CALL_OF(F) == 2 && ec_is_fp2<F>::value)
        return a.sqr_by(ec_called_product{});
    else if constexpr (EC_MUL_CALL_OF(F) != 0)
        return ec_sqr_of(a, 0);
    else
        return a.sqr();
}

template <class F>
struct affine_t {
    F x, y;
    FF_INLINE bool is_inf() const { return x.is_zero() && y.is_zero(); }
    static FF_INLINE affine_t load(const void *p)
    {
        const uint8_t *q = (const uint8_t *)p;
        return affine_t{F::load(q), F::load(q + sizeof(F))};
    }
};

template <class F>
struct xyzz_t {
    F x, y, zz, zzz;

    static FF_INLINE xyzz_t inf() { return xyzz_t{F::zero(), F::zero(), F::zero(), F::zero()}; }
    FF_INLINE bool is_inf() const { return zz.is_zero(); }
    FF_INLINE void neg() { y = y.neg(); }

    static FF_INLINE xyzz_t from_affine(const affine_t<F> &p)
    {
        if (p.is_inf())
            return inf();
        return xyzz_t{p.x, p.y, F::one(), F::one()};
    }

    /* dbl-2008-s-1: U = 2Y, V = U^2, W = U V, S = X V, M = 3X^2,
       X3 = M^2 - 2S, Y3 = M(S - X3) - W Y, ZZ3 = V ZZ, ZZZ3 = W ZZZ.  6M + 3S */
    __device__ __noinline__ void dbl()
    {
        if (is_inf())
            return;
        F u = y.dbl();
        F v = ec_sqr(u);
        F w = ec_mul(u, v);
        F s = ec_mul(x, v);
        F x2 = ec_sqr(x);
        F m = x2.dbl() + x2;
        F x3 = ec_sqr(m) - s.dbl();
        y = ec_mul(m, s - x3) - ec_mul(w, y);
        x = x3;
        zz = ec_mul(zz, v);
        zzz = ec_mul(zzz, w);
    }

    /* mdbl-2008-s-1 of an affine point into *this. 2M + 4S */
    FF_INLINE void set_dbl_affine(const affine_t<F> &p)
    {
        F u = p.y.dbl();
        F v = ec_sqr(u);
        F w = ec_mul(u, v);
        F s = ec_mul(p.x, v);
        F x2 = ec_sqr(p.x);
        F m = x2.dbl() + x2;
        x = ec_sqr(m) - s.dbl();
        y = ec_mul(m, s - x) - ec_mul(w, p.y);
        zz = v;
        zzz = w;
    }

    /* madd-2008-s: *this += p (p affine, not infinity).
       U2 = X2 ZZ1, S2 = Y2 ZZZ1, P = U2 - X1, R = S2 - Y1, PP = P^2, PPP = P PP, Q = X1 PP,
       X3 = R^2 - PPP - 2Q, Y3 = R(Q - X3) - Y1 PPP, ZZ3 = ZZ1 PP, ZZZ3 = ZZZ1 PPP.  8M + 2S */
    FF_INLINE void add_affine(const affine_t<F> &p)
    {
        if (is_inf()) {
            *this = xyzz_t{p.x, p.y, F::one(), F::one()};
            return;
        }
        F pp_ = ec_mul(p.x, zz) - x;
        F r = ec_mul(p.y, zzz) - y;
        if (pp_.is_zero()) {
            if (r.is_zero())
                set_dbl_affine(p);
            else
                *this = inf();
            return;
        }
        madd_finish(pp_, r);
    }

    /* add_affine of the point stored at p (zkey layout, not infinity), negated when neg, read
       from memory as the formula needs it: x for P, then y for R, and both again only on the
       rare doubling path, so neither coordinate stays live across the products that do not use
       it (the level-0 accumulation of G2 is short of registers). */
    FF_INLINE void add_affine_at(const uint8_t *p, bool neg)
    {
        if (is_inf()) {
            affine_t<F> a = affine_t<F>::load(p);
            *this = xyzz_t{a.x, neg ? a.y.neg() : a.y, F::one(), F::one()};
            return;
        }
        F pp_ = ec_mul(F::load(p), zz) - x;
        F py = F::load(p + sizeof(F));
        F r = ec_mul(neg ? py.neg() : py, zzz) - y;
        if (pp_.is_zero()) {
            affine_t<F> a{load_fresh(p), load_fresh(p + sizeof(F))};
            if (neg)
                a.y = a.y.neg();
            if (r.is_zero())
                set_dbl_affine(a);
            else
                *this = inf();
            return;
        }
        madd_finish(pp_, r);
    }

    /* the rest of madd-2008-s from P = U2 - X1 and R = S2 - Y1 (P nonzero) */
    FF_INLINE void madd_finish(const F &pp_, const F &r)
    {
        /* each product as soon as its inputs exist (the asm carry chains keep source order),
           so PP dies after Q and X1 with it: BLS12-381 G2 level 0 spills less, 312 -> 274 ms
           at 2^22 */
        F pp = ec_sqr(pp_);
        F ppp = ec_mul(pp_, pp);
        zz = ec_mul(zz, pp);
        F q = ec_mul(x, pp);
        zzz = ec_mul(zzz, ppp);
        x = ec_sqr(r) - ppp - q.dbl();
        y = ec_mul(r, q - x) - ec_mul(y, ppp);
    }

    /* a field element read from memory again (not merged with an earlier read of it, which
       would keep that value live until here) */
    static FF_INLINE F load_fresh(const uint8_t *p)
    {
#ifdef FF_HOST_EMU
        return F::load(p);
#else
        F r;
        uint32_t *o = (uint32_t *)&r;
#pragma unroll
        for (unsigned i = 0; i < sizeof(F) / 16; i++)
            asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                         : "=r"(o[4 * i]), "=r"(o[4 * i + 1]), "=r"(o[4 * i + 2]), "=r"(o[4 * i + 3])
                         : "l"(p + 16 * i));
        return r;
#endif
    }

    /* add-2008-s: *this += b.  12M + 2S */
    __device__ __noinline__ void add(const xyzz_t &b)
    {
        if (b.is_inf())
            return;
        if (is_inf()) {
            *this = b;
            return;
        }
        F u1 = ec_mul(x, b.zz);
        F u2 = ec_mul(b.x, zz);
        F s1 = ec_mul(y, b.zzz);
        F s2 = ec_mul(b.y, zzz);
        F pp_ = u2 - u1;
        F r = s2 - s1;
        if (pp_.is_zero()) {
            if (r.is_zero())
                dbl();
            else
                *this = inf();
            return;
        }
        F pp = ec_sqr(pp_);
        F ppp = ec_mul(pp_, pp);
        F q = ec_mul(u1, pp);
        F x3 = ec_sqr(r) - ppp - q.dbl();
        y = ec_mul(r, q - x3) - ec_mul(s1, ppp);
        x = x3;
        zz = ec_mul(ec_mul(zz, b.zz), pp);
        zzz = ec_mul(ec_mul(zzz, b.zzz), ppp);
    }

    /* *this = k * *this for a small public k (double and add, variable time) */
    __device__ __noinline__ void mul_small(uint32_t k)
    {
        xyzz_t acc = inf();
        xyzz_t base = *this;
        while (k) {
            if (k & 1)
                acc.add(base);
            k >>= 1;
            if (k)
                base.dbl();
        }
        *this = acc;
    }

    /* (add, dbl and mul_small are out of line: they serve the bucket reduction and the
       partial levels, where one copy per kernel keeps code size and build time down) */

    /* Jacobian (X ZZ^2, Y ZZZ^2, ZZZ): X/Z^2 = X ZZ^2/ZZ^3, Y/Z^3 = Y ZZZ^2/ZZZ^3.
       Writes X|Y|Z (3 field elements) at p; infinity gives Z = 0. */
    FF_INLINE void store_jacobian(void *p) const
    {
        uint8_t *q = (uint8_t *)p;
        F zz2 = zz.sqr();
        F zzz2 = zzz.sqr();
        (x * zz2).store(q);
        (y * zzz2).store(q + sizeof(F));
        zzz.store(q + 2 * sizeof(F));
    }
    static FF_INLINE xyzz_t load(const void *p)
    {
        const uint8_t *q = (const uint8_t *)p;
        return xyzz_t{F::load(q), F::load(q + sizeof(F)), F::load(q + 2 * sizeof(F)),
                      F::load(q + 3 * sizeof(F))};
    }
    FF_INLINE void store(void *p) const
    {
        uint8_t *q = (uint8_t *)p;
        x.store(q);
        y.store(q + sizeof(F));
        zz.store(q + 2 * sizeof(F));
        zzz.store(q + 3 * sizeof(F));
    }
};

/* ---- affine results: batched inversion ----
 * xyzz_to_affine_kernel: XYZZ -> affine with one inversion per EC_AFFINE_BATCH points: each
 * thread takes the points j = t, t + T, t + 2T, ... (T threads in all), Montgomery's trick
 * over D_j = ZZ_j ZZZ_j (3M per point forward and back), one Fermat inversion D^(p-2) (about
 * log p squarings; in Fp2 through the norm), then x = X ZZZ/D, y = Y ZZ/D (X/ZZ and Y/ZZZ
 * without assuming ZZ^3 = ZZZ^2). Infinity (ZZ = 0) is skipped in the products and written
 * as all zero, the zkey's infinity. Every field result is fully reduced (ff.cuh). */
#define EC_AFFINE_BATCH 32 /* points per inversion in xyzz_to_affine_kernel */

/* 1/a = a^(p-2) (Fermat; 0 for a = 0). Left-to-right over the 32N bits of p - 2 (the
 * lowest limb of p is odd and > 2, so no borrow): 32N squarings, about 16N multiplications. */
template <class C>
__device__ __noinline__ fp_t<C> ec_inv(const fp_t<C> &a)
{
    fp_t<C> r = fp_t<C>::one();
#pragma unroll 1
    for (int i = C::N - 1; i >= 0; i--) {
        uint32_t e = C::p(i) - (i == 0 ? 2u : 0u);
#pragma unroll 1
        for (int b = 31; b >= 0; b--) {
            r = r.sqr();
            if ((e >> b) & 1)
                r = r * a;
        }
    }
    return r;
}

/* 1/(a0 + a1 u) = (a0 - a1 u)/(a0^2 + a1^2) in Fp[u]/(u^2 + 1) */
template <class F>
__device__ __forceinline__ fp2_t<F> ec_inv(const fp2_t<F> &a)
{
    F t = ec_inv(a.c0.sqr() + a.c1.sqr());
    return fp2_t<F>{a.c0 * t, (a.c1 * t).neg()};
}

/* ---- 1/a in variable time (MSM level 0 in affine rounds, msm.cuh) ----
 * Binary extended Euclid on the integer held by a (aR, its Montgomery form): u = aR, v = p,
 * x1 = 1, x2 = 0, keeping x1 aR = u and x2 aR = v (mod p). Both u and v stay odd: the larger
 * takes the difference, then sheds its k trailing zeros while its x is divided by 2^k mod p
 * ((x + m p) / 2^k with m = x (-1/p) mod 2^k, which the Montgomery constant M0 gives). At
 * u = v = 1, x1 = 1/(aR), and its product by R^2 R^2 (one Montgomery product: R^3 / R) is
 * 1/a in Montgomery form. About 32N steps of ~17N instructions each, a few times cheaper
 * than ec_inv's 48N products. The time depends on a, as the MSM's does on its scalars (see
 * msm.cuh DESIGN). 0 for a = 0. */
template <class C>
__device__ __forceinline__ void ec_vt_div2k(fp_t<C> &x, unsigned k) /* x / 2^k mod p, 1 <= k <= 32 */
{
    const int N = C::N;
    uint32_t m = x.v[0] * C::m0(), w[N + 1];
    if (k < 32)
        m &= (1u << k) - 1;
    uint64_t cy = 0;
#pragma unroll
    for (int i = 0; i < N; i++) {
        uint64_t t = (uint64_t)m * C::p(i) + x.v[i] + cy;
        w[i] = (uint32_t)t;
        cy = t >> 32;
    }
    w[N] = (uint32_t)cy;
#pragma unroll
    for (int i = 0; i < N; i++)
        w[i] = k == 32 ? w[i + 1] : __funnelshift_r(w[i], w[i + 1], k);
    x = fp_t<C>::reduce_once(w, 0); /* w < p / 2^k + p < 2p */
}

template <class C>
__device__ __noinline__ fp_t<C> ec_inv_vt(const fp_t<C> &a)
{
    const int N = C::N;
    if (a.is_zero())
        return a;
    uint32_t u[N], v[N];
    fp_t<C> x1 = fp_t<C>::zero(), x2 = fp_t<C>::zero();
    x1.v[0] = 1;
#pragma unroll
    for (int i = 0; i < N; i++)
        u[i] = a.v[i], v[i] = C::p(i);
    bool first = true; /* u may be even at the start; after that the difference is */
#pragma unroll 1
    for (;;) {
        uint32_t d[N], br = 0, nz = 0;
        fp_t<C> xt;
        bool lt = false;
        if (first) {
#pragma unroll
            for (int i = 0; i < N; i++)
                d[i] = u[i];
            xt = x1;
            first = false;
            if (d[0] & 1)
                continue;
        } else {
#pragma unroll
            for (int i = 0; i < N; i++) {
                uint64_t t = (uint64_t)u[i] - v[i] - br;
                d[i] = (uint32_t)t;
                br = (uint32_t)(t >> 32) & 1;
                nz |= d[i];
            }
            if (!nz)
                break; /* u = v = gcd = 1 */
            lt = br;   /* u < v: v takes v - u */
            uint32_t c = 1;
#pragma unroll
            for (int i = 0; i < N; i++) { /* d = |u - v| */
                uint64_t t = (uint64_t)(lt ? ~d[i] : d[i]) + (lt ? c : 0);
                c = (uint32_t)(t >> 32);
                d[i] = (uint32_t)t;
            }
            xt = lt ? x2 - x1 : x1 - x2;
        }
        /* d is even and nonzero: shed its trailing zeros, halving xt as often */
#pragma unroll 1
        while (d[0] == 0) {
#pragma unroll
            for (int i = 0; i < N - 1; i++)
                d[i] = d[i + 1];
            d[N - 1] = 0;
            ec_vt_div2k<C>(xt, 32);
        }
        unsigned k = __ffs(d[0]) - 1;
        if (k) {
#pragma unroll
            for (int i = 0; i < N - 1; i++)
                d[i] = __funnelshift_r(d[i], d[i + 1], k);
            d[N - 1] >>= k;
            ec_vt_div2k<C>(xt, k);
        }
#pragma unroll
        for (int i = 0; i < N; i++)
            u[i] = lt ? u[i] : d[i], v[i] = lt ? d[i] : v[i];
        if (lt)
            x2 = xt;
        else
            x1 = xt;
    }
    fp_t<C> rr;
#pragma unroll
    for (int i = 0; i < N; i++)
        rr.v[i] = C::rr(i);
    return x1 * (rr * rr);
}

/* the same in Fp2, through the norm as ec_inv */
template <class F>
__device__ __forceinline__ fp2_t<F> ec_inv_vt(const fp2_t<F> &a)
{
    F t = ec_inv_vt(a.c0.sqr() + a.c1.sqr());
    return fp2_t<F>{a.c0 * t, (a.c1 * t).neg()};
}

/* d_out[j] = d_acc[j] in affine coordinates (all zero for infinity), j < m; d_pre: m
 * elements of scratch. Launch with about m / EC_AFFINE_BATCH threads. */
template <class F>
__global__ void __launch_bounds__(256)
xyzz_to_affine_kernel(affine_t<F> *d_out, const xyzz_t<F> *d_acc, F *d_pre, size_t m)
{
    const size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    if (t >= m)
        return;
    F prod = F::one();
    size_t last = t;
#pragma unroll 1
    for (size_t j = t; j < m; j += stride) {
        last = j;
        const F zz = F::load(&d_acc[j].zz);
        if (zz.is_zero())
            continue;
        prod.store(d_pre + j); /* product of the D's before j */
        prod = prod * (zz * F::load(&d_acc[j].zzz));
    }
    F inv = ec_inv(prod); /* 1/(product of all D's) */
#pragma unroll 1
    for (size_t j = last;; j -= stride) {
        const xyzz_t<F> p = xyzz_t<F>::load(d_acc + j);
        F x = F::zero(), y = F::zero();
        if (!p.zz.is_zero()) {
            F di = inv * F::load(d_pre + j); /* 1/D_j */
            inv = inv * (p.zz * p.zzz);      /* 1/(product of the D's before j) */
            x = p.x * (di * p.zzz);          /* X/ZZ */
            y = p.y * (di * p.zz);           /* Y/ZZZ */
        }
        x.store(&d_out[j].x);
        y.store(&d_out[j].y);
        if (j == t)
            break;
    }
}
