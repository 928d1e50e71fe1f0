/* emu_test.cpp - runs the device code (src/gpu/ff.cuh, ec.cuh, and the kernels of ntt.cuh and
 * msm.cuh) on the CPU, with the PTX carry-chain primitives emulated in C, against the
 * reference in ref.h. The MSM kernels run one thread per block in a loop; the NTT kernels,
 * which keep elements in registers across barriers, run each block's threads as host threads
 * (emu_block). The CUB sort is replaced by std::stable_sort. Catches carry, index and
 * bucket-logic mistakes without a GPU:
 *   g++ -std=c++17 -O1 -pthread -I../../src -I. emu_test.cpp -o emu_test && ./emu_test
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "emu_ptx.h"
/* as the CUDA units: the mixed addition's products through ec_mul_call, and for G2 each Fq
   product of the Fq2 arithmetic (gpu_bls12_381.cu; -DEC_MUL_CALL=0: inline, -DEC_MUL_CALL2=1:
   the Fq2 product out of line, as gpu_bn254.cu) */
#ifndef EC_MUL_CALL
#define EC_MUL_CALL 1
#endif
#ifndef EC_MUL_CALL2
#define EC_MUL_CALL2 2
#endif

uint4 smem_raw[4096];
#include <algorithm>
#include <vector>
/* the NTTs below 2^10 points read only the per-stage twiddle tables, the larger ones both */
#define NTT_TW_COMPACT 9

#include "gpu/ec.cuh"
#include "gpu/ff.cuh"
#include "gpu/msm.cuh"
#include "gpu/ntt.cuh"
#include "gpu/params_bls12_381.cuh"
#include "gpu/params_bn254.cuh"
#include "ref.h"
#include "ff52.cuh"

static uint64_t st = 12345;
static uint64_t rnd()
{
    uint64_t z = (st += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
template <int L>
static void rand_below(uint64_t *o, const uint64_t *p)
{
    for (;;) {
        for (int i = 0; i < L; i++)
            o[i] = rnd();
        o[L - 1] &= (1ull << (64 - __builtin_clzll(p[L - 1]))) - 1;
        for (int i = L - 1; i >= 0; i--)
            if (o[i] != p[i]) {
                if (o[i] < p[i])
                    return;
                break;
            }
    }
}

static int fails = 0;

template <class F, int L, int E>
static void field_test(const char *name, const uint32_t *p32)
{
    rfield<L> f;
    f.init(p32);
    rext<L, E> R{&f};
    const int W = L * E;
    int bad = 0;
    for (int it = 0; it < 20000; it++) {
        uint64_t a[W], b[W], r[W];
        for (int e = 0; e < E; e++) {
            rand_below<L>(a + e * L, f.p);
            rand_below<L>(b + e * L, f.p);
        }
        if (it == 0)
            memset(a, 0, sizeof a);
        if (it == 1) {
            memcpy(a, f.p, L * 8);
            a[0] -= 1;
            memcpy(b, a, sizeof b);
        }
        if (it >= 2 && it < 2 + (1 << (2 * E))) { /* every choice of 0 or P - 1 for each
                                                      component of a and b (Fp2: the extremes
                                                      of the lazily reduced products) */
            for (int e = 0; e < E; e++) {
                bool top_a = (it - 2) >> e & 1, top_b = (it - 2) >> (e + E) & 1;
                memcpy(a + e * L, f.p, L * 8);
                a[e * L] -= 1;
                memcpy(b + e * L, a + e * L, L * 8);
                if (!top_a)
                    memset(a + e * L, 0, L * 8);
                if (!top_b)
                    memset(b + e * L, 0, L * 8);
            }
        }
        F x, y, z;
        memcpy(&x, a, sizeof x);
        memcpy(&y, b, sizeof y);
        z = x * y;
        R.mul(r, a, b);
        bad += memcmp(&z, r, sizeof r) != 0;
        if constexpr (E == 2) { /* both Fp2 products, whichever operator* takes */
            z = F::mul_lazy(x, y);
            bad += memcmp(&z, r, sizeof r) != 0;
        } else { /* both 2N^2 + N forms, whichever operator* takes */
            z = F::mul_eo_rows(x, y);
            bad += memcmp(&z, r, sizeof r) != 0;
            z = F::mul_ap(x, y);
            bad += memcmp(&z, r, sizeof r) != 0;
        }
        z = x.sqr();
        R.mul(r, a, a);
        bad += memcmp(&z, r, sizeof r) != 0;
        if constexpr (E == 1) { /* and the square in mul_ap's rows */
            z = F::sqr_ap(x);
            bad += memcmp(&z, r, sizeof r) != 0;
        }
        z = x + y;
        R.add(r, a, b);
        bad += memcmp(&z, r, sizeof r) != 0;
        z = x - y;
        R.sub(r, a, b);
        bad += memcmp(&z, r, sizeof r) != 0;
        /* the variable-time inverse: x z = 1, and equal to Fermat's (ec_inv) on some */
        z = ec_inv_vt(x);
        if (x.is_zero())
            bad += !z.is_zero();
        else
            bad += (x * z) != F::one();
        if (it < 300 && p32[0] > 2) /* ec_inv assumes the low limb of p above 2 (Fq's) */
            bad += z != ec_inv(x);
    }
    printf("%-16s mul/sqr/add/sub/inv x 20000: %s (%d bad)\n", name, bad ? "FAIL" : "ok", bad);
    fails += bad != 0;
}

/* a += P (a below P, so the sum is below 2P < 2^256) */
static void add_p(const rfield<4> &f, uint64_t *a)
{
    unsigned __int128 c = 0;
    for (int i = 0; i < 4; i++) {
        c += (unsigned __int128)a[i] + f.p[i];
        a[i] = (uint64_t)c;
        c >>= 64;
    }
}
/* whether z is below 2P and equal to r (below P) once reduced */
static bool below_2p(const rfield<4> &f, const uint64_t *z, const uint64_t *r)
{
    uint64_t t[4];
    memcpy(t, z, sizeof t);
    if (f.geq(t))
        f.sub_p(t);
    return !f.geq(t) && memcmp(t, r, sizeof t) == 0;
}

/* fp_t::mul_shoup (the NTT's twiddle product) against the reference: a w mod P for a below
 * 2^256 (not only below P) and w below P, with w's quotient from shoup_quotient checked by
 * 0 <= w 2^256 - wq P < P (which only floor(w 2^256 / P) meets), and shoup_quotient_mont of
 * w's Montgomery form against it; the quotient's rare exact path run on every product (FAST_MAX 0)
 * and on about half (FAST_MAX 2^31) */
template <class F>
static void shoup_test(const char *name, const uint32_t *p32)
{
    rfield<4> f;
    f.init(p32);
    int bad = 0, bad_lazy = 0;
    for (int it = 0; it < 20000; it++) {
        uint64_t a[4], w[4], ar[4], wm[4], r[4];
        rand_below<4>(w, f.p);
        for (int i = 0; i < 4; i++)
            a[i] = rnd();
        if (it < 9) { /* a in {0, P - 1, 2^256 - 1} x w in {0, 1, P - 1} */
            memset(a, it / 3 == 2 ? 0xff : 0, sizeof a);
            if (it / 3 == 1)
                memcpy(a, f.p, sizeof a), a[0] -= 1;
            memset(w, 0, sizeof w);
            if (it % 3 == 1)
                w[0] = 1;
            if (it % 3 == 2)
                memcpy(w, f.p, sizeof w), w[0] -= 1;
        }
        memcpy(ar, a, sizeof a);
        while (f.geq(ar))
            f.sub_p(ar);
        f.mul(wm, w, f.rr);  /* w R */
        f.mul(r, ar, wm);    /* a w */
        F x, y, q, z;
        memcpy(&x, a, 32);
        memcpy(&y, w, 32);
        q = y.shoup_quotient();
        /* the same quotient from w's Montgomery form (the NTT tables' path) */
        F ym, q2;
        memcpy(&ym, wm, 32);
        q2 = F::shoup_quotient_mont(ym);
        bad += memcmp(&q, &q2, 32) != 0;
        /* w 2^256 - q P in [0, P) */
        uint64_t qv[4], t[9] = {0};
        memcpy(qv, &q, 32);
        for (int i = 0; i < 4; i++) {
            unsigned __int128 c = 0;
            for (int j = 0; j < 4; j++) {
                c += (unsigned __int128)qv[i] * f.p[j] + t[i + j];
                t[i + j] = (uint64_t)c;
                c >>= 64;
            }
            t[i + 4] = (uint64_t)c;
        }
        uint64_t d[8], bw = 0; /* d = w 2^256 - t */
        for (int i = 0; i < 8; i++) {
            uint64_t hi = i >= 4 ? w[i - 4] : 0;
            unsigned __int128 v = (unsigned __int128)hi - t[i] - bw;
            d[i] = (uint64_t)v;
            bw = (uint64_t)(v >> 64) & 1;
        }
        bool dbad = bw || d[4] || d[5] || d[6] || d[7] || f.geq(d);
        bad += dbad;
        z = F::mul_shoup(x, y, q);
        bad += memcmp(&z, r, 32) != 0;
        z = F::template mul_shoup<0u>(x, y, q);
        bad += memcmp(&z, r, 32) != 0;
        z = F::template mul_shoup<0x80000000u>(x, y, q);
        bad += memcmp(&z, r, 32) != 0;
        /* unreduced: below 2P and a w mod P once reduced */
        z = F::mul_shoup_lazy(x, y, q);
        bad_lazy += !below_2p(f, (const uint64_t *)&z, r);
    }
    /* the sums and differences mod 2P of values in [0, 2P) (the NTT's butterflies with NTT_LAZY),
       the extremes 0 and 2P - 1 among them */
    for (int it = 0; it < 20000; it++) {
        uint64_t a[4], b[4], ar[4], br[4], r[4];
        rand_below<4>(a, f.p);
        rand_below<4>(b, f.p);
        memcpy(ar, a, sizeof a);
        memcpy(br, b, sizeof b);
        if (it & 1)
            add_p(f, a);
        if (it & 2)
            add_p(f, b);
        if (it < 16) { /* 0 or 2P - 1 for each */
            memset(a, 0, sizeof a), memset(ar, 0, sizeof ar), memset(b, 0, sizeof b), memset(br, 0, sizeof br);
            if (it & 4)
                memcpy(a, f.p, sizeof a), add_p(f, a), a[0] -= 1, memcpy(ar, f.p, sizeof ar), ar[0] -= 1;
            if (it & 8)
                memcpy(b, f.p, sizeof b), add_p(f, b), b[0] -= 1, memcpy(br, f.p, sizeof br), br[0] -= 1;
        }
        F x, y, z;
        memcpy(&x, a, 32);
        memcpy(&y, b, 32);
        z = F::template add_m<2>(x, y);
        f.add(r, ar, br);
        bad_lazy += !below_2p(f, (const uint64_t *)&z, r);
        z = F::template sub_m<2>(x, y);
        f.sub(r, ar, br);
        bad_lazy += !below_2p(f, (const uint64_t *)&z, r);
    }
    printf("%-16s mul_shoup_lazy x 20000, sums and differences mod 2P x 20000: %s (%d bad)\n", name,
           bad_lazy ? "FAIL" : "ok", bad_lazy);
    fails += bad_lazy != 0;
    /* the high half where the columns mul_high_part leaves out carry into it: limbs near 2^32 */
    for (int it = 0; it < 2000; it++) {
        F x, y;
        for (int i = 0; i < 8; i++) {
            x.v[i] = 0xffffffffu - (uint32_t)(rnd() % (it < 1000 ? 2 : 65536));
            y.v[i] = 0xffffffffu - (uint32_t)(rnd() % (it < 1000 ? 2 : 65536));
        }
        uint32_t full[16] = {0};
        for (int i = 0; i < 8; i++) {
            uint64_t c = 0;
            for (int j = 0; j < 8; j++) {
                c += (uint64_t)x.v[i] * y.v[j] + full[i + j];
                full[i + j] = (uint32_t)c;
                c >>= 32;
            }
            full[i + 8] = (uint32_t)c;
        }
        F h = F::mul_high(x, y);
        bad += memcmp(h.v, full + 8, 32) != 0;
    }
    /* both row forms of the halves against the schoolbook product: mul_low_eo and
     * mul_low_ap, mul_high_part_eo and mul_high_part_ap (the same columns: the same quotient and
     * limb N - 1, the quotient exact when that limb is at most 2^32 - 1 - N) */
    int bad_lo = 0, bad_hi = 0;
    for (int it = 0; it < 20000; it++) {
        uint32_t x[8], y[8], full[16] = {0}, lo_eo[8], lo_ap[8], q_eo[8], q_ap[8];
        for (int i = 0; i < 8; i++) {
            uint32_t r1 = (uint32_t)rnd(), r2 = (uint32_t)rnd();
            x[i] = it % 4 == 1 ? 0xffffffffu - (r1 & 1) : r1;
            y[i] = it % 4 >= 2 ? 0xffffffffu - (r2 % 3) : r2;
        }
        for (int i = 0; i < 8; i++) {
            uint64_t c = 0;
            for (int j = 0; j < 8; j++) {
                c += (uint64_t)x[i] * y[j] + full[i + j];
                full[i + j] = (uint32_t)c;
                c >>= 32;
            }
            full[i + 8] = (uint32_t)c;
        }
        F::mul_low_eo(lo_eo, x, y);
        F::mul_low_ap(lo_ap, x, y);
        bad_lo += (memcmp(lo_eo, full, 32) != 0) + (memcmp(lo_ap, full, 32) != 0);
        uint32_t top_eo = F::mul_high_part_eo(q_eo, x, y), top_ap = F::mul_high_part_ap(q_ap, x, y);
        bad_hi += top_eo != top_ap || memcmp(q_eo, q_ap, 32) != 0 ||
                  (top_ap <= 0xffffffffu - 8 && memcmp(q_ap, full + 8, 32) != 0);
    }
    printf("%-16s mul_low, mul_low_ap x 20000: %s (%d bad); mul_high_part, its _ap form: %s (%d bad)\n", name,
           bad_lo ? "FAIL" : "ok", bad_lo, bad_hi ? "FAIL" : "ok", bad_hi);
    fails += bad_lo != 0 || bad_hi != 0;
    printf("%-16s mul_shoup x 20000 (3 paths), quotients, high halves: %s (%d bad)\n", name, bad ? "FAIL" : "ok", bad);
    fails += bad != 0;
}

/* ff52.cuh's FP64 Montgomery product against fp_t's: single products of random and extreme
   values through the conversions, and chains of 64 products that stay in the 52-bit form */
template <class F, int M>
static void f52_test(const char *name, const uint32_t *p32)
{
    const int N = F::N;
    uint64_t p64[6];
    for (int i = 0; i < N / 2; i++)
        p64[i] = p32[2 * i] | (uint64_t)p32[2 * i + 1] << 32;
    f52_params<M> P = f52_params_of<M>(p64, N / 2, N);
    auto to52 = [&](double *r, const F &x) {
        double t[M];
        f52_split<M, N>(t, x.v);
        f52_mul<M>(r, t, P.to, P);
    };
    auto from52 = [&](const double *a) {
        double t[M];
        f52_mul<M>(t, a, P.from, P);
        uint32_t w[N];
        f52_join<M, N>(w, t);
        bool ge = true; /* w >= P: subtract once (w < 2P) */
        for (int i = N - 1; i >= 0; i--)
            if (w[i] != p32[i]) {
                ge = w[i] > p32[i];
                break;
            }
        if (ge) {
            uint64_t bw = 0;
            for (int i = 0; i < N; i++) {
                uint64_t d = (uint64_t)w[i] - p32[i] - bw;
                w[i] = (uint32_t)d;
                bw = d >> 63;
            }
        }
        F z;
        memcpy(z.v, w, sizeof w);
        return z;
    };
    int bad = 0;
    for (int it = 0; it < 20000; it++) {
        uint32_t a[N], b[N];
        for (int i = 0; i < N; i++)
            a[i] = (uint32_t)rnd(), b[i] = (uint32_t)rnd();
        a[N - 1] %= p32[N - 1], b[N - 1] %= p32[N - 1];
        if (it < 9) { /* each of 0, 1, P - 1 against each */
            uint32_t *v[2] = {a, b};
            for (int q = 0; q < 2; q++) {
                int k = q ? it / 3 : it % 3;
                memset(v[q], 0, 4 * N);
                if (k == 1)
                    v[q][0] = 1;
                if (k == 2) {
                    memcpy(v[q], p32, 4 * N);
                    v[q][0] -= 1;
                }
            }
        }
        F x, y;
        memcpy(x.v, a, sizeof a);
        memcpy(y.v, b, sizeof b);
        double x52[M], y52[M], z52[M];
        to52(x52, x);
        to52(y52, y);
        f52_mul<M>(z52, x52, y52, P);
        bad += from52(z52) != x * y;
        bad += from52(x52) != x;
        if (it < 200) {
            F cx = x, cy = y;
            for (int k = 0; k < 32; k++) {
                cx = cx * cy, cy = cy * cx;
                f52_mul<M>(x52, x52, y52, P);
                f52_mul<M>(y52, y52, x52, P);
            }
            bad += from52(x52) != cx || from52(y52) != cy;
        }
    }
    printf("%-16s FP64 product (52-bit limbs) x 20000, chains of 64: %s (%d bad)\n", name, bad ? "FAIL" : "ok", bad);
    fails += bad != 0;
}

/* XYZZ sums vs the reference's Jacobian sums on points of y^2 = x^3 + b */
template <class F, int L, int E>
static void ec_test(const char *name, const uint32_t *p32, int bval)
{
    rfield<L> f;
    f.init(p32);
    rcurve<L, E> C{{&f}};
    const int W = L * E;
    uint64_t b[W] = {0}, bb[L];
    memcpy(bb, f.one, sizeof bb);
    for (int i = 1; i < bval; i++)
        f.add(bb, bb, f.one);
    for (int e = 0; e < E; e++)
        memcpy(b + e * L, bb, sizeof bb);
    const int K = 24;
    uint64_t px[K][W], py[K][W];
    for (int k = 0; k < K;) {
        uint64_t y2[W];
        for (int e = 0; e < E; e++)
            rand_below<L>(px[k] + e * L, f.p);
        C.F.mul(y2, px[k], px[k]);
        C.F.mul(y2, y2, px[k]);
        C.F.add(y2, y2, b);
        if (C.F.sqrt(py[k], y2))
            k++;
    }
    memcpy(px[3], px[2], sizeof px[2]); /* repeat -> doubling */
    memcpy(py[3], py[2], sizeof py[2]);
    memcpy(px[7], px[6], sizeof px[6]); /* negation -> infinity */
    uint64_t z[W] = {0};
    C.F.sub(py[7], z, py[6]);
    /* sum in order with add_affine; also a second accumulator via add + dbl */
    xyzz_t<F> acc = xyzz_t<F>::inf(), acc2 = xyzz_t<F>::inf();
    rpoint<L, E> ref, q;
    C.set_inf(ref);
    for (int k = 0; k < K; k++) {
        affine_t<F> a;
        memcpy(&a.x, px[k], W * 8);
        memcpy(&a.y, py[k], W * 8);
        acc.add_affine(a);
        xyzz_t<F> t = xyzz_t<F>::from_affine(a);
        acc2.add(t);
        C.from_affine(q, px[k], py[k]);
        C.add(ref, ref, q);
    }
    acc2.dbl();
    acc2.mul_small(5);
    rpoint<L, E> ref10 = ref, t5;
    uint64_t ten[4] = {10, 0, 0, 0};
    C.mul(ref10, ref, ten);
    (void)t5;
    uint64_t jac[3 * W], ax[W], ay[W], bx[W], by[W];
    acc.store_jacobian(jac);
    rpoint<L, E> g;
    memcpy(g.x, jac, W * 8), memcpy(g.y, jac + W, W * 8), memcpy(g.z, jac + 2 * W, W * 8);
    C.to_affine(ax, ay, ref);
    C.to_affine(bx, by, g);
    bool ok1 = !memcmp(ax, bx, sizeof ax) && !memcmp(ay, by, sizeof ay);
    acc2.store_jacobian(jac);
    memcpy(g.x, jac, W * 8), memcpy(g.y, jac + W, W * 8), memcpy(g.z, jac + 2 * W, W * 8);
    C.to_affine(ax, ay, ref10);
    C.to_affine(bx, by, g);
    bool ok2 = !memcmp(ax, bx, sizeof ax) && !memcmp(ay, by, sizeof ay);
    printf("%-16s xyzz add_affine sum: %s; add/dbl/mul_small: %s\n", name, ok1 ? "ok" : "FAIL", ok2 ? "ok" : "FAIL");
    fails += !ok1 + !ok2;
}

FP_PARAMS(bn_fr, 8, BN254_FR_P, BN254_FR_M0, BN254_FR_RR, BN254_FR_ONE, BN254_FR_NPINV);
FP_PARAMS(bn_fq, 8, BN254_FQ_P, BN254_FQ_M0, BN254_FQ_RR, BN254_FQ_ONE, BN254_FQ_NPINV);
FP_PARAMS(bls_fr, 8, BLS12_381_FR_P, BLS12_381_FR_M0, BLS12_381_FR_RR, BLS12_381_FR_ONE, BLS12_381_FR_NPINV);
FP_PARAMS(bls_fq, 12, BLS12_381_FQ_P, BLS12_381_FQ_M0, BLS12_381_FQ_RR, BLS12_381_FQ_ONE, BLS12_381_FQ_NPINV);

/* ---- NTT: ntt_run's schedule with the kernels run block by block ---- */
template <class fr>
static void emu_ntt(fr *a, const ntt_tw<fr> &tws, unsigned log_n)
{
    size_t n = (size_t)1 << log_n;
    std::vector<fr> tmp(n);
    for (unsigned s = 0; s < log_n;) {
        ntt_group g = ntt_group_at(log_n, s);
        unsigned bits = g.k + g.lo_bits;
        size_t blocks = n >> bits;
        bool first = s == 0, last = s + g.k == log_n;
        fr *src = first ? a : tmp.data(), *dst = last ? a : tmp.data();
        for (size_t b = 0; b < blocks; b++) {
            blockIdx.x = (unsigned)b;
            unsigned L = g.radix_log();
            auto kern = L == 3 ? ntt_group_kernel<fr, 3> : L == 2 ? ntt_group_kernel<fr, 2> : ntt_group_kernel<fr, 1>;
            emu_block(1u << (bits - L), [&] { kern(src, dst, tws, log_n, s, g.k, g.lo_bits, first); });
        }
        s += g.k;
    }
}

/* ntt_warp_same (the rule of NTT_WARP_SYNC) against the rounds' element sets themselves: for
 * every group of every size up to 2^26 and every pair of consecutive rounds it calls
 * warp-local, each warp of the block must store in the first round exactly the elements it
 * loads in the second (the thread-to-element map of ntt_group_kernel). Some pairs must be warp-local and some not (so neither answer for
 * all would pass). */
static void ntt_warp_sync_test()
{
    unsigned local = 0, block = 0, bad = 0;
    for (unsigned log_n = 1; log_n <= 26; log_n++)
        for (unsigned s = 0; s < log_n;) {
            ntt_group g = ntt_group_at(log_n, s);
            unsigned B = g.k + g.lo_bits, L = g.radix_log(), T = B - L, t0 = 0;
            auto warp_of = [&](unsigned pos) { /* element -> the warp that holds it at pos */
                std::vector<unsigned> w(1u << B);
                for (unsigned tid = 0; tid < (1u << T); tid++)
                    for (unsigned j = 0; j < (1u << L); j++) {
                        unsigned et = (tid & ((1u << pos) - 1)) | ((tid >> pos) << (pos + L));
                        w[et | (j << pos)] = tid / 32;
                    }
                return w;
            };
            for (;;) {
                unsigned pos = ntt_round_pos(g.lo_bits, t0, B, L);
                t0 += L - (g.lo_bits + t0 - pos);
                if (t0 >= g.k)
                    break;
                unsigned next = ntt_round_pos(g.lo_bits, t0, B, L);
                bool same = warp_of(pos) == warp_of(next);
                if (ntt_warp_same(pos, next, T, L)) {
                    local++;
                    bad += !same;
                } else {
                    block++;
                }
            }
            s += g.k;
        }
    bool ok = !bad && local > 0 && block > 0;
    printf("NTT round barriers: %u warp-local, %u block-wide, %u wrongly warp-local: %s\n", local, block, bad,
           ok ? "ok" : "FAIL");
    fails += !ok;
}

template <class fr>
static void ntt_test(const char *name, const uint32_t *p32, const uint32_t (*roots)[8], unsigned max_log)
{
    rfield<4> f;
    f.init(p32);
    for (unsigned log_n : {1u, 2u, 3u, 5u, 11u, 12u, 14u, 16u, 17u, 20u}) {
        if (log_n > max_log)
            break;
        size_t n = (size_t)1 << log_n;
        std::vector<fr> a(n), tw(n / 2 + 1);
        fr w, one;
        memcpy(&w, roots[log_n], 32);
        memcpy(&one, roots[0], 32);
        blockDim.x = 1;
        threadIdx.x = 0;
        for (size_t t = 0; t * 64 < n / 2 + 1; t++) {
            blockIdx.x = (unsigned)t;
            ntt_powers_kernel<fr>(tw.data(), n / 2 + 1, w, one);
        }
        std::vector<fr> twq(n / 2 + 1);
        if (NTT_SHOUP) {
            blockDim.x = 256;
            for (size_t b = 0; b * 256 < n / 2 + 1; b++)
                for (threadIdx.x = 0; threadIdx.x < 256; threadIdx.x++) {
                    blockIdx.x = (unsigned)b;
                    ntt_shoup_kernel<fr>(tw.data(), twq.data(), n / 2 + 1);
                }
            threadIdx.x = 0;
            blockDim.x = 1;
        }
        /* the per-stage tables (a small NTT_TW_COMPACT in emu_test's build makes the later
           stages read the full table) */
        size_t cc = (size_t)1 << ntt_compact_log(log_n);
        std::vector<fr> twc(cc), twcq(cc);
        blockDim.x = 1;
        for (size_t i = 0; i < cc; i++) {
            blockIdx.x = (unsigned)i;
            ntt_compact_kernel<fr>(twc.data(), tw.data(), cc, log_n);
            if (NTT_SHOUP)
                ntt_compact_kernel<fr>(twcq.data(), twq.data(), cc, log_n);
        }
        ntt_tw<fr> tws{tw.data(), twq.data(), twc.data(), twcq.data(), ntt_compact_log(log_n)};
        for (size_t i = 0; i < n; i++)
            rand_below<4>((uint64_t *)&a[i], f.p);
        std::vector<fr> in = a;
        emu_ntt<fr>(a.data(), tws, log_n);
        int bad = 0;
        for (int c = 0; c < 24; c++) {
            size_t k = c < 2 ? (size_t)c * (n - 1) : rnd() % n;
            uint64_t x[4], e[4] = {k, 0, 0, 0}, acc[4] = {0, 0, 0, 0};
            f.pow(x, (const uint64_t *)&w, e);
            for (size_t i = n; i-- > 0;) {
                f.mul(acc, acc, x);
                f.add(acc, acc, (const uint64_t *)&in[i]);
            }
            bad += memcmp(acc, &a[k], 32) != 0;
        }
        printf("%-16s NTT 2^%-2u (24 outputs vs Horner): %s\n", name, log_n, bad ? "FAIL" : "ok");
        fails += bad != 0;
    }
}

/* ---- MSM: msm_run's schedule with the kernels run thread by thread ---- */
static int emu_compact_calls; /* passes that took COMPACT's path */
/* msm_run's digits, sort, level 0 and partial levels of shape s into buckets (accum: added to
   what they hold, msm.cuh STREAMED); returns the partial levels run */
template <class F>
static int emu_msm_pass(const msm_shape &s, std::vector<xyzz_t<F>> &buckets, const uint8_t *bases,
                        const uint32_t *scalars, bool accum)
{
    std::vector<uint32_t> keys(s.entries), vals(s.entries);
    std::vector<xyzz_t<F>> ppt[2] = {std::vector<xyzz_t<F>>(s.slots0), std::vector<xyzz_t<F>>(s.slots0)};
    std::vector<uint32_t> pkey[2] = {std::vector<uint32_t>(s.slots0, MSM_KEY_NONE),
                                     std::vector<uint32_t>(s.slots0, MSM_KEY_NONE)};
    blockDim.x = 1;
    threadIdx.x = 0;
    /* the regions that sort alone: (start, length) */
    std::vector<std::pair<size_t, size_t>> regions;
    size_t m = s.entries;
    if (s.compact) { /* msm_compact: classes, their exclusive scan, the nonzero digits' entries */
        std::vector<uint64_t> cls(s.n), off(s.n);
        for (size_t i = 0; i < s.n; i++) {
            blockIdx.x = (unsigned)i;
            msm_class_kernel(cls.data(), scalars, s.n, s.c);
        }
        uint64_t sum = 0;
        for (size_t i = 0; i < s.n; i++)
            off[i] = sum, sum += cls[i];
        const size_t nz = (uint32_t)sum, nf = (size_t)(sum >> 32);
        m = msm_compact_start(s.nwin, nz, nf);
        for (size_t i = 0; i < s.n; i++) {
            blockIdx.x = (unsigned)i;
            msm_digits_compact_kernel(keys.data(), vals.data(), scalars, off.data(), cls.data(), s.n, s.c, s.nwin);
        }
        for (unsigned w = 0; w < s.nwin; w++)
            regions.push_back({msm_compact_start(w, nz, nf), w ? nf : nz});
    } else {
        for (size_t i = 0; i < s.n; i++) {
            blockIdx.x = (unsigned)i;
            msm_digits_kernel(keys.data(), vals.data(), scalars, s.n, s.c, s.nwin, s.tab);
        }
        /* per window, or over a table all entries at once */
        size_t seg = s.tab ? s.entries : s.n;
        for (size_t off = 0; off < s.entries; off += seg)
            regions.push_back({off, seg});
    }
    emu_compact_calls += s.compact;
    if (m == 0)
        return 0;
    /* the sort on the bucket bits */
    for (auto [off, seg] : regions) {
        std::vector<size_t> idx(seg);
        for (size_t i = 0; i < seg; i++)
            idx[i] = off + i;
        std::stable_sort(idx.begin(), idx.end(), [&](size_t x, size_t y) {
            return (keys[x] & ((1u << s.c) - 1)) < (keys[y] & ((1u << s.c) - 1));
        });
        std::vector<uint32_t> k2(seg), v2(seg);
        for (size_t i = 0; i < seg; i++)
            k2[i] = keys[idx[i]], v2[i] = vals[idx[i]];
        std::copy(k2.begin(), k2.end(), keys.begin() + off);
        std::copy(v2.begin(), v2.end(), vals.begin() + off);
    }
    msm_src_affine<F> src0{keys.data(), vals.data(), bases};
    size_t threads = (m + s.chunk0 - 1) / s.chunk0;
    if (s.aff_kernel) {
        size_t slots = (size_t)s.chunk0 * s.aff_threads;
        std::vector<uint32_t> ast(slots);
        std::vector<F> ax(slots / 2), ay(slots / 2), apre(slots / 2);
        unsigned next = 0;
        gridDim.x = 1;
        blockIdx.x = 0;
        emu_block((unsigned)s.aff_threads, [&] {
            msm_affine_kernel<F>(src0, s.entries, s.c, buckets.data(), pkey[0].data(), ppt[0].data(), s.chunk0, s.aff,
                                 ast.data(), ax.data(), ay.data(), apre.data(), &next, s.aff_threads);
        });
    }
    for (size_t t = 0; t < threads && !s.aff_kernel; t++) {
        blockIdx.x = (unsigned)t;
        msm_accumulate_kernel<F, msm_src_affine<F>>(src0, m, s.c, buckets.data(), pkey[0].data(),
                                                    ppt[0].data(), s.chunk0, accum, nullptr);
    }
    /* the partial levels as msm_pass runs them (PARTIAL LEVELS without the host): the selection's
       count is read by the kernel itself (m_dev), the threads of a level are enough for the bound
       nslots, and the level whose bound fits one thread is the last */
    size_t nslots = 2 * threads;
    int cur = 0, levels = 0;
    std::vector<uint32_t> sel;
    for (;;) {
        sel.clear();
        for (size_t i = 0; i < nslots; i++)
            if (pkey[cur][i] != MSM_KEY_NONE)
                sel.push_back((uint32_t)i);
        sel.push_back(0); /* a valid pointer when nothing is selected */
        uint32_t cnt = (uint32_t)sel.size() - 1;
        size_t th = (nslots + MSM_PCHUNK - 1) / MSM_PCHUNK;
        int nxt = cur ^ 1;
        if (th > 1)
            std::fill(pkey[nxt].begin(), pkey[nxt].begin() + 2 * th, MSM_KEY_NONE);
        msm_src_partial<F> src{sel.data(), pkey[cur].data(), ppt[cur].data()};
        for (size_t t = 0; t < th; t++) {
            blockIdx.x = (unsigned)t;
            msm_accumulate_kernel<F, msm_src_partial<F>>(src, 0, s.c, buckets.data(), pkey[nxt].data(),
                                                         ppt[nxt].data(), MSM_PCHUNK, accum, &cnt);
        }
        levels++;
        if (th == 1)
            break;
        nslots = 2 * th;
        cur = nxt;
    }
    return levels;
}

/* msm_run's bucket reduction and the windows' Horner sum: out <- the Jacobian result */
template <class F>
static void emu_msm_reduce(uint8_t *out, const msm_shape &s, std::vector<xyzz_t<F>> &buckets)
{
    std::vector<xyzz_t<F>> groups((size_t)s.rwin * s.groups);
    std::vector<xyzz_t<F>> sums((size_t)s.rwin * msm_wstride(s.c2)), groups2((size_t)s.rwin * s.groups2);
    memset(sums.data(), 0, sums.size() * sizeof(sums[0]));
    for (size_t t = 0; t < (size_t)s.rwin * s.groups; t++) {
        blockIdx.x = (unsigned)t;
        msm_bucket_sums_kernel<F>(groups.data(), sums.data(), buckets.data(), s.c, s.rwin, s.groups, s.c2);
    }
    for (unsigned stride = s.groups / 2; stride >= 1; stride /= 2)
        for (size_t t = 0; t < (size_t)s.rwin * stride; t++) {
            blockIdx.x = (unsigned)t;
            msm_group_pairs_kernel<F>(groups.data(), s.rwin, stride, s.groups);
        }
    if (s.groups > 1) {
        for (size_t t = 0; t < (size_t)s.rwin * s.groups2; t++) {
            blockIdx.x = (unsigned)t;
            msm_bucket_reduce_kernel<F>(groups2.data(), sums.data(), s.c2, s.rwin, s.groups2);
        }
        for (unsigned stride = s.groups2 / 2; stride >= 1; stride /= 2)
            for (size_t t = 0; t < (size_t)s.rwin * stride; t++) {
                blockIdx.x = (unsigned)t;
                msm_group_pairs_kernel<F>(groups2.data(), s.rwin, stride, s.groups2);
            }
        for (size_t t = 0; t < s.rwin; t++) {
            blockIdx.x = (unsigned)t;
            msm_window_join_kernel<F>(groups.data(), groups2.data(), s.rwin, s.groups, s.groups2,
                                      s.c - s.c2);
        }
    }
    blockIdx.x = 0;
    msm_final_kernel<F>(out, groups.data(), s.c, s.rwin, s.groups);
}

template <class F>
static void emu_msm(uint8_t *out, const uint8_t *bases, const uint32_t *scalars, size_t n, unsigned bits,
                    unsigned c_force = 0, int tab = 0, unsigned aff = 0, unsigned aff_chunk = 0, size_t stream = 0,
                    int witness = 0)
{
    if (stream) { /* the streamed schedule (msm.cuh STREAMED): chunks of `stream` points, one bucket set */
        msm_shape s = msm_shape_of(n, bits, c_force, witness);
        std::vector<xyzz_t<F>> buckets(s.nbuckets);
        memset(buckets.data(), 0, buckets.size() * sizeof(buckets[0]));
        int levels = 0;
        for (size_t off = 0; off < n; off += stream) {
            size_t m = n - off < stream ? n - off : stream;
            msm_shape sm = msm_shape_of(m, bits, s.c, witness);
            levels += emu_msm_pass<F>(sm, buckets, bases + off * 2 * sizeof(F), scalars + 8 * off, true);
        }
        emu_msm_reduce<F>(out, s, buckets);
        printf("    (n=%zu c=%u windows=%u streamed in chunks of %zu, partial levels=%d%s) ", n, s.c, s.nwin, stream,
               levels, s.compact ? ", compact" : "");
        return;
    }
    msm_shape s = msm_shape_of(n, bits, c_force, witness, tab);
    /* the affine rounds with 5 persistent threads, run as host threads */
    msm_shape_set_affine(s, aff, aff_chunk, 5, aff_chunk != 0);
    std::vector<uint8_t> table;
    if (tab) { /* msm_table_build: copy 0 the bases, copy w = 2^c copy w - 1 */
        const size_t pt = 2 * sizeof(F);
        table.resize(s.nwin * n * pt);
        memcpy(table.data(), bases, n * pt);
        std::vector<xyzz_t<F>> acc(n);
        std::vector<F> pre(n);
        for (unsigned w = 1; w < s.nwin; w++) {
            blockDim.x = 1;
            threadIdx.x = 0;
            for (size_t j = 0; j < n; j++) {
                blockIdx.x = (unsigned)j;
                msm_table_dbl_kernel<F>(acc.data(), table.data() + (w - 1) * n * pt, n, s.c);
            }
            /* 2 blocks of 3 threads: many points per inversion, interleaved as on the device */
            size_t th = (n + EC_AFFINE_BATCH - 1) / EC_AFFINE_BATCH;
            blockDim.x = (unsigned)(th < 3 ? th : 3);
            gridDim.x = (unsigned)((th + blockDim.x - 1) / blockDim.x);
            gridDim.x = gridDim.x < 2 ? gridDim.x : 2;
            for (unsigned b = 0; b < gridDim.x; b++)
                for (unsigned t = 0; t < blockDim.x; t++) {
                    blockIdx.x = b;
                    threadIdx.x = t;
                    xyzz_to_affine_kernel<F>((affine_t<F> *)(table.data() + w * n * pt), acc.data(), pre.data(), n);
                }
        }
        bases = table.data();
    }
    std::vector<xyzz_t<F>> buckets(s.nbuckets);
    memset(buckets.data(), 0, buckets.size() * sizeof(buckets[0]));
    int levels = emu_msm_pass<F>(s, buckets, bases, scalars, false);
    emu_msm_reduce<F>(out, s, buckets);
    printf("    (n=%zu c=%u windows=%u%s%s partial levels=%d groups=%u+%u) ", n, s.c, s.nwin,
           s.tab ? " over a table" : "", s.compact ? " compact" : "", levels, s.groups, s.groups2);
}

template <class F, int L, int E>
static void msm_test(const char *name, const uint32_t *p32, const uint32_t *r32, unsigned bits, int bval)
{
    rfield<L> f;
    f.init(p32);
    rfield<4> fr_;
    fr_.init(r32);
    rcurve<L, E> C{{&f}};
    const int W = L * E;
    uint64_t b[W] = {0}, bb[L];
    memcpy(bb, f.one, sizeof bb);
    for (int i = 1; i < bval; i++)
        f.add(bb, bb, f.one);
    for (int e = 0; e < E; e++)
        memcpy(b + e * L, bb, sizeof bb);
    const size_t K = 64;
    std::vector<uint64_t> pts(K * 2 * W);
    for (size_t k = 0; k < K;) {
        uint64_t *x = &pts[k * 2 * W], *y = x + W, y2[W];
        for (int e = 0; e < E; e++)
            rand_below<L>(x + e * L, f.p);
        C.F.mul(y2, x, x);
        C.F.mul(y2, y2, x);
        C.F.add(y2, y2, b);
        if (C.F.sqrt(y, y2))
            k++;
    }
    memset(&pts[3 * 2 * W], 0, 2 * W * 8); /* an infinity */
    /* kind 3: random scalars with 12-bit windows (2048 buckets a window: both reductions
       have many groups) */
    /* kinds 4 and 5: kinds 3 and 2 over a table of shifted bases (msm.cuh TABLE); 6, 7 and 8:
       kinds 4, 5 and 1 over a table with affine rounds at level 0 (msm.cuh AFFINE ROUNDS); 9: kind
       5 through the kernel of the affine rounds with none; 10 and 11: kinds 2 and 3 streamed
       (msm.cuh STREAMED) in chunks that do not divide n; 12 to 16: witness shapes (msm.cuh COMPACT):
       a mix that adds small values (window 0 only) and values just past it, all ones, all
       zeros, the mix streamed with its first chunk all zeros, random scalars */
    for (int kind = 0; kind < 17; kind++) {
        int tab = kind >= 4 && kind < 10, witness = kind >= 12;
        static const unsigned aff_rounds[17] = {0, 0, 0, 0, 0, 0, 4, 3, 9, 0, 0, 0, 0, 0, 0, 0, 0},
                              aff_chunk[17] = {0, 0, 0, 0, 0, 0, 256, 16, 64, 32, 0, 0, 0, 0, 0, 0, 0};
        static const size_t stream[17] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 700, 1024, 0, 0, 0, 700, 0};
        int rnd_sc = kind == 0 || kind == 3 || kind == 4 || kind == 6 || kind == 11 || kind == 16;
        size_t n = kind == 0 ? 700 : 3000;
        const uint64_t half = 1ull << (msm_shape_of(n, bits, 0, 1).c - 1);
        std::vector<uint64_t> sc(4 * n, 0), base(n * 2 * W);
        for (size_t i = 0; i < n; i++) {
            memcpy(&base[i * 2 * W], &pts[(i % K) * 2 * W], 2 * W * 8);
            if (rnd_sc)
                rand_below<4>(&sc[4 * i], fr_.p);
            else if (kind == 1 || kind == 8 || kind == 13)
                sc[4 * i] = 1;
            else if (kind == 14 || (kind == 15 && i < 700))
                continue;
            else {
                uint64_t r = rnd() % (witness ? 6 : 4);
                if (r == 1)
                    sc[4 * i] = 1;
                else if (r == 2) {
                    memcpy(&sc[4 * i], fr_.p, 32);
                    sc[4 * i] -= 1;
                } else if (r == 3)
                    rand_below<4>(&sc[4 * i], fr_.p);
                else if (r == 4)
                    sc[4 * i] = 2 + rnd() % (half - 1); /* 2 .. half: a digit in window 0 only */
                else if (r == 5)
                    sc[4 * i] = half + 1 + rnd() % 3; /* a negative digit and a carry */
            }
        }
        uint64_t jac[3 * W];
        printf("%-16s MSM %s%s", name,
               rnd_sc                                  ? "random"
               : kind == 1 || kind == 8 || kind == 13 ? "all ones"
               : kind == 14                            ? "all zeros"
               : witness                               ? "mixed 0/1/r-1/random/small"
                                                       : "mixed 0/1/r-1/random",
               witness ? " (witness shape)" : "");
        if (aff_chunk[kind])
            printf(" affine rounds %u chunk %u", aff_rounds[kind], aff_chunk[kind]);
        emu_msm<F>((uint8_t *)jac, (const uint8_t *)base.data(), (const uint32_t *)sc.data(), n, bits,
                   kind == 3 || kind == 4 || kind == 6 || kind == 11 ? 12 : 0, tab, aff_rounds[kind], aff_chunk[kind],
                   stream[kind], witness);
        std::vector<uint64_t> agg(5 * K, 0);
        for (size_t i = 0; i < n; i++)
            ref_add_wide(&agg[(i % K) * 5], &sc[4 * i]);
        rpoint<L, E> acc, q, t;
        C.set_inf(acc);
        for (size_t k = 0; k < K; k++) {
            C.from_affine(q, &pts[k * 2 * W], &pts[k * 2 * W + W]);
            C.mul(t, q, &agg[5 * k], 5);
            C.add(acc, acc, t);
        }
        rpoint<L, E> g;
        memcpy(g.x, jac, W * 8), memcpy(g.y, jac + W, W * 8), memcpy(g.z, jac + 2 * W, W * 8);
        uint64_t ax[W], ay[W], bx[W], by[W];
        C.to_affine(ax, ay, acc);
        C.to_affine(bx, by, g);
        bool ok = !memcmp(ax, bx, sizeof ax) && !memcmp(ay, by, sizeof ay);
        printf("%s\n", ok ? "ok" : "FAIL");
        fails += !ok;
    }
    if (!emu_compact_calls) { /* the witness kinds above must have taken COMPACT's path */
        printf("%-16s MSM witness shapes: COMPACT never ran: FAIL\n", name);
        fails++;
    }
    emu_compact_calls = 0;
}

static void field_tests()
{
    field_test<fp_t<bn_fr>, 4, 1>("BN254 Fr", BN254_FR_P);
    field_test<fp_t<bn_fq>, 4, 1>("BN254 Fq", BN254_FQ_P);
    field_test<fp2_t<fp_t<bn_fq>>, 4, 2>("BN254 Fq2", BN254_FQ_P);
    field_test<fp_t<bls_fr>, 4, 1>("BLS12-381 Fr", BLS12_381_FR_P);
    field_test<fp_t<bls_fq>, 6, 1>("BLS12-381 Fq", BLS12_381_FQ_P);
    field_test<fp2_t<fp_t<bls_fq>>, 6, 2>("BLS12-381 Fq2", BLS12_381_FQ_P);
    shoup_test<fp_t<bn_fr>>("BN254 Fr", BN254_FR_P);
    shoup_test<fp_t<bls_fr>>("BLS12-381 Fr", BLS12_381_FR_P);
}

static void f52_tests()
{
    f52_test<fp_t<bn_fr>, 5>("BN254 Fr", BN254_FR_P);
    f52_test<fp_t<bn_fq>, 5>("BN254 Fq", BN254_FQ_P);
    f52_test<fp_t<bls_fr>, 5>("BLS12-381 Fr", BLS12_381_FR_P);
    f52_test<fp_t<bls_fq>, 8>("BLS12-381 Fq", BLS12_381_FQ_P);
}

/* the round barriers, and the transforms of both Fr (BN254 up to 2^20: the later groups' shapes
   of ntt_group_at) */
static void ntt_tests()
{
    ntt_warp_sync_test();
    ntt_test<fp_t<bn_fr>>("BN254 Fr", BN254_FR_P, BN254_FR_ROOTS, 20);
    ntt_test<fp_t<bls_fr>>("BLS12-381 Fr", BLS12_381_FR_P, BLS12_381_FR_ROOTS, 17);
}

/* no argument: everything; "msm": the point and MSM tests only (what MSM_LAZY_BASE changes);
   "ff": the field tests only; "f52": the FP64 product only; "ntt": the transforms only */
int main(int argc, char **argv)
{
    const char *only = argc > 1 ? argv[1] : "";
    bool all = strcmp(only, "msm") != 0;
    if (!strcmp(only, "ff") || !strcmp(only, "f52") || !strcmp(only, "ntt")) {
        if (!strcmp(only, "ff"))
            field_tests();
        else if (!strcmp(only, "f52"))
            f52_tests();
        else
            ntt_tests();
        printf("%s\n", fails ? "EMU FAILED" : "EMU OK");
        return fails != 0;
    }
    if (all) {
        field_tests();
        f52_tests();
    }
    ec_test<fp_t<bn_fq>, 4, 1>("BN254 G1", BN254_FQ_P, 3);
    ec_test<fp2_t<fp_t<bn_fq>>, 4, 2>("BN254 G2", BN254_FQ_P, 4);
    ec_test<fp_t<bls_fq>, 6, 1>("BLS12-381 G1", BLS12_381_FQ_P, 4);
    ec_test<fp2_t<fp_t<bls_fq>>, 6, 2>("BLS12-381 G2", BLS12_381_FQ_P, 4);
    if (all)
        ntt_tests();
    msm_test<fp_t<bn_fq>, 4, 1>("BN254 G1", BN254_FQ_P, BN254_FR_P, 254, 3);
    msm_test<fp2_t<fp_t<bn_fq>>, 4, 2>("BN254 G2", BN254_FQ_P, BN254_FR_P, 254, 4);
    msm_test<fp_t<bls_fq>, 6, 1>("BLS12-381 G1", BLS12_381_FQ_P, BLS12_381_FR_P, 255, 4);
    printf("%s\n", fails ? "EMU FAILED" : "EMU OK");
    return fails != 0;
}
