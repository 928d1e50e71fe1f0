/* ntt_test_body.h - NTT tests shared by ntt_bn254_test.c and ntt_bls12_381_test.c.
 *
 * Oracles: a plain O(n^2) DFT (sizes 2^1..2^10, forward and inverse, several pool sizes),
 * direct Horner evaluation of the polynomial at w^k for sampled k (sizes past the cache
 * block, where the parallel stage passes run), the defining property of the root
 * (w^(n/2) = -1), a[i] * g^i computed by repeated multiplication for the coset shift, and
 * round trips at 2^16. Also the table-free twiddle path used when memory runs out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ff/ff.h"
#include "ntt/ntt.h"
#include "util/check.h"
#include "util/pool.h"

static uint64_t g_rng = 0x2545f4914f6cdd1dull;
static uint64_t rnd64(void) /* splitmix64 */
{
    uint64_t z = (g_rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void rnd_fr(fr_t *o)
{
    fr_t t;
    do {
        for (int i = 0; i < FR_LIMBS; i++)
            t.l[i] = rnd64();
        t.l[FR_LIMBS - 1] &= (FR_BITS % 64) ? ((1ull << (FR_BITS % 64)) - 1) : ~0ull;
    } while (!fr_std_is_canonical(&t));
    fr_from_std(o, &t);
}

static fr_t *rnd_vec(size_t n)
{
    fr_t *a = malloc(n * sizeof *a);
    if (!a) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    for (size_t i = 0; i < n; i++)
        rnd_fr(&a[i]);
    return a;
}

/* o[k] = scale * sum_i a[i] w^(ik) */
static void dft_naive(fr_t *o, const fr_t *a, size_t n, const fr_t *w, const fr_t *scale)
{
    fr_t wk = FR_ONE; /* w^k */
    for (size_t k = 0; k < n; k++) {
        fr_t acc, x = FR_ONE, t;
        fr_set_zero(&acc);
        for (size_t i = 0; i < n; i++) {
            fr_mul(&t, &a[i], &x);
            fr_add(&acc, &acc, &t);
            fr_mul(&x, &x, &wk);
        }
        fr_mul(&o[k], &acc, scale);
        fr_mul(&wk, &wk, w);
    }
}

/* sum_i a[i] x^i (Horner) */
static void poly_eval(fr_t *o, const fr_t *a, size_t n, const fr_t *x)
{
    fr_t acc;
    fr_set_zero(&acc);
    for (size_t i = n; i-- > 0;) {
        fr_mul(&acc, &acc, x);
        fr_add(&acc, &acc, &a[i]);
    }
    *o = acc;
}

static void test_roots(void)
{
    for (unsigned k = 1; k <= FR_TWO_ADICITY; k++) {
        fr_t w, t, minus_one;
        fr_root_of_unity(&w, k);
        t = w;
        for (unsigned i = 1; i < k; i++)
            fr_sqr(&t, &t); /* w^(2^(k-1)) */
        fr_neg(&minus_one, &FR_ONE);
        CHECK(fr_eq(&t, &minus_one), "root of order 2^%u: w^(n/2) != -1", k);
    }
}

static void test_small_vs_dft(pool_t *pool, const char *pname)
{
    for (unsigned log_n = 0; log_n <= 10; log_n++) {
        size_t n = (size_t)1 << log_n;
        fr_t *a = rnd_vec(n), *b = malloc(n * sizeof *b), *ref = malloc(n * sizeof *ref);
        fr_t w, winv, ninv;
        fr_root_of_unity(&w, log_n);
        fr_inv(&winv, &w);
        fr_from_u64(&ninv, (uint64_t)n);
        fr_inv(&ninv, &ninv);

        memcpy(b, a, n * sizeof *b);
        ntt_fr(b, log_n, 0, pool);
        dft_naive(ref, a, n, &w, &FR_ONE);
        CHECK(memcmp(b, ref, n * sizeof *b) == 0, "%s: forward NTT 2^%u != DFT", pname, log_n);

        memcpy(b, a, n * sizeof *b);
        ntt_fr(b, log_n, 1, pool);
        dft_naive(ref, a, n, &winv, &ninv);
        CHECK(memcmp(b, ref, n * sizeof *b) == 0, "%s: inverse NTT 2^%u != inverse DFT", pname,
              log_n);

        /* coset shift against repeated multiplication */
        fr_t g, gi = FR_ONE;
        rnd_fr(&g);
        memcpy(b, a, n * sizeof *b);
        ntt_fr_coset_shift(b, log_n, &g, pool);
        int ok = 1;
        for (size_t i = 0; i < n; i++) {
            fr_t t;
            fr_mul(&t, &a[i], &gi);
            ok &= fr_eq(&t, &b[i]);
            fr_mul(&gi, &gi, &g);
        }
        CHECK(ok, "%s: coset shift 2^%u", pname, log_n);
        free(a);
        free(b);
        free(ref);
    }
}

/* sizes past the cache block: sampled outputs against Horner evaluation, then round trip */
static void test_large(unsigned log_n, pool_t *pool, const char *pname, int samples)
{
    size_t n = (size_t)1 << log_n;
    fr_t *a = rnd_vec(n), *b = malloc(n * sizeof *b);
    fr_t w;
    fr_root_of_unity(&w, log_n);
    memcpy(b, a, n * sizeof *b);
    ntt_fr(b, log_n, 0, pool);
    for (int s = 0; s < samples; s++) {
        size_t k = s == 0 ? 0 : s == 1 ? n - 1 : s == 2 ? n / 2 : (size_t)(rnd64() & (n - 1));
        uint64_t e = k;
        fr_t x, v;
        fr_pow(&x, &w, &e, 1);
        poly_eval(&v, a, n, &x);
        CHECK(fr_eq(&v, &b[k]), "%s: NTT 2^%u output %zu != polynomial at w^%zu", pname, log_n, k,
              k);
    }
    ntt_fr(b, log_n, 1, pool);
    CHECK(memcmp(a, b, n * sizeof *b) == 0, "%s: round trip 2^%u", pname, log_n);
    /* inverse first, then forward */
    ntt_fr(b, log_n, 1, pool);
    ntt_fr(b, log_n, 0, pool);
    CHECK(memcmp(a, b, n * sizeof *b) == 0, "%s: inverse-forward round trip 2^%u", pname, log_n);
    /* coset round trip: shift by g then by g^-1 */
    fr_t g, ginv;
    rnd_fr(&g);
    fr_inv(&ginv, &g);
    ntt_fr_coset_shift(b, log_n, &g, pool);
    ntt_fr_coset_shift(b, log_n, &ginv, pool);
    CHECK(memcmp(a, b, n * sizeof *b) == 0, "%s: coset shift round trip 2^%u", pname, log_n);
    free(a);
    free(b);
}

/* the table-free twiddle path (taken when a table cannot be allocated) gives the same result */
static void test_no_table(unsigned log_n)
{
    size_t n = (size_t)1 << log_n;
    fr_t *a = rnd_vec(n), *b = malloc(n * sizeof *b);
    memcpy(b, a, n * sizeof *b);
    ntt_fr(a, log_n, 0, NULL);
    ntt_job j;
    memset(&j, 0, sizeof j);
    j.a = b;
    j.log_n = log_n;
    j.per_task = n;
    ntt_task_bitrev(&j, 0, 0);
    for (unsigned s = 0; s < log_n; s++) {
        /* in uneven pieces, to cross block boundaries mid-range */
        size_t half = n / 2, step = half / 3 + 1;
        for (size_t k = 0; k < half; k += step)
            ntt_stage_range(b, s, k, k + step < half ? k + step : half, NULL);
    }
    CHECK(memcmp(a, b, n * sizeof *b) == 0, "table-free NTT 2^%u differs", log_n);
    free(a);
    free(b);
}

static int ntt_test_main(void)
{
    pool_t *p2 = pool_create(2), *p3 = pool_create(3);
    if (!p2 || !p3) {
        fprintf(stderr, "pool_create failed\n");
        return 2;
    }
    test_roots();
    test_small_vs_dft(NULL, "no pool");
    test_small_vs_dft(p3, "pool 3");
    test_no_table(9);
    test_no_table(13);
    test_large(12, p2, "pool 2", 8);
    test_large(13, p3, "pool 3", 8);
    test_large(14, NULL, "no pool", 4);
    test_large(16, p2, "pool 2", 6);
    test_large(16, p3, "pool 3", 3);
    pool_destroy(p2);
    pool_destroy(p3);
    if (failures) {
        fprintf(stderr, "%s: %d NTT checks failed\n", CURVE_NAME, failures);
        return 1;
    }
    printf("%s: NTT checks passed\n", CURVE_NAME);
    return 0;
}
