/* emu_test.cpp - runs the device field and XYZZ code (src/gpu/ff.cuh, ec.cuh) on the CPU,
 * with the PTX carry-chain primitives emulated in C, against the reference in ref.h.
 * Catches carry/limb-index mistakes without a GPU:
 *   g++ -std=c++17 -O1 -I../../src -I. emu_test.cpp -o emu_test && ./emu_test
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define FF_HOST_EMU 1
#define __device__
#define __constant__
#define __forceinline__ inline
#define __noinline__
#define FF_INLINE inline
struct uint4 {
    uint32_t x, y, z, w;
};
static inline uint4 make_uint4(uint32_t a, uint32_t b, uint32_t c, uint32_t d) { return uint4{a, b, c, d}; }
static inline uint32_t __funnelshift_l(uint32_t lo, uint32_t hi, unsigned s)
{
    s &= 31;
    return s ? (hi << s) | (lo >> (32 - s)) : hi;
}
static unsigned g_cf; /* the emulated carry flag */
static inline uint32_t e_add(uint64_t v, bool setcf)
{
    if (setcf)
        g_cf = (unsigned)(v >> 32) & 1;
    return (uint32_t)v;
}
#define PTX_ADD_CC(d, a, b) (d) = e_add((uint64_t)(a) + (b), true)
#define PTX_ADDC_CC(d, a, b) (d) = e_add((uint64_t)(a) + (b) + g_cf, true)
#define PTX_ADDC(d, a, b) (d) = e_add((uint64_t)(a) + (b) + g_cf, false)
static inline uint32_t e_sub(uint32_t a, uint32_t b, unsigned bin, bool setcf)
{
    uint64_t v = (uint64_t)a - b - bin;
    if (setcf)
        g_cf = (unsigned)(v >> 63);
    return (uint32_t)v;
}
#define PTX_SUB_CC(d, a, b) (d) = e_sub((a), (b), 0, true)
#define PTX_SUBC_CC(d, a, b) (d) = e_sub((a), (b), g_cf, true)
#define PTX_SUBC(d, a, b) (d) = e_sub((a), (b), g_cf, false)
static inline uint32_t lo32(uint32_t a, uint32_t b) { return (uint32_t)((uint64_t)a * b); }
static inline uint32_t hi32(uint32_t a, uint32_t b) { return (uint32_t)(((uint64_t)a * b) >> 32); }
#define PTX_MADLO_CC(d, a, b, c) (d) = e_add((uint64_t)lo32(a, b) + (c), true)
#define PTX_MADCLO_CC(d, a, b, c) (d) = e_add((uint64_t)lo32(a, b) + (c) + g_cf, true)
#define PTX_MADHI_CC(d, a, b, c) (d) = e_add((uint64_t)hi32(a, b) + (c), true)
#define PTX_MADCHI_CC(d, a, b, c) (d) = e_add((uint64_t)hi32(a, b) + (c) + g_cf, true)

#include "gpu/ec.cuh"
#include "gpu/ff.cuh"
#include "gpu/params_bls12_381.cuh"
#include "gpu/params_bn254.cuh"
#include "ref.h"

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
        F x, y, z;
        memcpy(&x, a, sizeof x);
        memcpy(&y, b, sizeof y);
        z = x * y;
        R.mul(r, a, b);
        bad += memcmp(&z, r, sizeof r) != 0;
        z = x.sqr();
        R.mul(r, a, a);
        bad += memcmp(&z, r, sizeof r) != 0;
        z = x + y;
        R.add(r, a, b);
        bad += memcmp(&z, r, sizeof r) != 0;
        z = x - y;
        R.sub(r, a, b);
        bad += memcmp(&z, r, sizeof r) != 0;
    }
    printf("%-16s mul/sqr/add/sub x 20000: %s (%d bad)\n", name, bad ? "FAIL" : "ok", bad);
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

FP_PARAMS(bn_fr, 8, BN254_FR_P, BN254_FR_M0, BN254_FR_RR, BN254_FR_ONE);
FP_PARAMS(bn_fq, 8, BN254_FQ_P, BN254_FQ_M0, BN254_FQ_RR, BN254_FQ_ONE);
FP_PARAMS(bls_fr, 8, BLS12_381_FR_P, BLS12_381_FR_M0, BLS12_381_FR_RR, BLS12_381_FR_ONE);
FP_PARAMS(bls_fq, 12, BLS12_381_FQ_P, BLS12_381_FQ_M0, BLS12_381_FQ_RR, BLS12_381_FQ_ONE);

int main()
{
    field_test<fp_t<bn_fr>, 4, 1>("BN254 Fr", BN254_FR_P);
    field_test<fp_t<bn_fq>, 4, 1>("BN254 Fq", BN254_FQ_P);
    field_test<fp2_t<fp_t<bn_fq>>, 4, 2>("BN254 Fq2", BN254_FQ_P);
    field_test<fp_t<bls_fr>, 4, 1>("BLS12-381 Fr", BLS12_381_FR_P);
    field_test<fp_t<bls_fq>, 6, 1>("BLS12-381 Fq", BLS12_381_FQ_P);
    field_test<fp2_t<fp_t<bls_fq>>, 6, 2>("BLS12-381 Fq2", BLS12_381_FQ_P);
    ec_test<fp_t<bn_fq>, 4, 1>("BN254 G1", BN254_FQ_P, 3);
    ec_test<fp2_t<fp_t<bn_fq>>, 4, 2>("BN254 G2", BN254_FQ_P, 4);
    ec_test<fp_t<bls_fq>, 6, 1>("BLS12-381 G1", BLS12_381_FQ_P, 4);
    ec_test<fp2_t<fp_t<bls_fq>>, 6, 2>("BLS12-381 G2", BLS12_381_FQ_P, 4);
    printf("%s\n", fails ? "EMU FAILED" : "EMU OK");
    return fails != 0;
}
