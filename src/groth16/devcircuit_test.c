/* devcircuit_test.c - unit tests of the development setup (devcircuit.h, devsetup.h).
 *
 * Oracles, none of them the code under test:
 *   - fixed-base multiplication (every window width, digit-boundary scalars, random ones)
 *     against the plain double-and-add g1_jac_mul / g2_jac_mul of the ec layer;
 *   - the Lagrange values against the product formula prod_(j!=i) (t - x_j)/(x_i - x_j), and
 *     the odd-coset basis by interpolating (X^n - 1) Q(X) for a random Q;
 *   - circuits: structural rules checked directly, and the witness checked by a plain
 *     evaluation of A*B = C written here;
 *   - generated files: read back through the formats readers, a proof made by the CPU prover
 *     verified by the pairing verifier (BN254 and BLS12-381); snarkjs checks the same files in
 *     tests/t_devcircuit.sh.
 * Per-curve internals are tested on BN254 (the code is one macro-instantiated template).
 */
#include "curves/bn254.h"
#include "ff/ff.h"
#include "ec/ec.h"
#define DEV_SETUP_NO_EXPORT
#define DEV_CHECK_ROWS 7 /* dev_solve's check in many tasks even on small circuits */
#define DEV_SOLVE_ROWS 2 /* and its solve in levels */
#include "groth16/devsetup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "groth16/backend.h"
#include "groth16/formats.h"
#include "groth16/matrix.h"
#include "groth16/proof.h"
#include "groth16/prover.h"
#include "util/check.h"

static dev_rng rng;

static void rand_fr(fr_t *o)
{
    uint8_t b[32];
    dev_rng_scalar(b, &rng, curve_info(CURVE_BN254));
    dev_fr_from_bytes(o, b);
}

/* Montgomery form of the std integer k (k < r) */
static void fr_of_std(fr_t *o, const uint64_t k[4])
{
    fr_t t;
    memcpy(t.l, k, 32);
    fr_from_std(o, &t);
}

/* scalars (std) that stress the signed-digit recoding for width w */
static size_t edge_scalars(uint64_t (*k)[4], unsigned w)
{
    size_t n = 0;
    memset(k, 0, 400 * sizeof *k);
    n++;                 /* 0 */
    k[n++][0] = 1;       /* 1 */
    k[n++][0] = 2;
    for (int s = 1; s <= 2; s++) { /* r - 1, r - 2 */
        memcpy(k[n], FR_MODULUS, 32);
        k[n++][0] -= (uint64_t)s;
    }
    unsigned half = 1u << (w - 1);
    for (unsigned i = 0; i * w + w < 250 && n + 4 < 400; i++) {
        uint32_t vals[] = {half, half + 1, half - 1, (1u << w) - 1};
        for (int v = 0; v < 4; v++) {
            unsigned bit = i * w;
            uint64_t x = vals[v];
            k[n][bit / 64] |= x << (bit % 64);
            if (bit % 64 + w > 64)
                k[n][bit / 64 + 1] |= x >> (64 - bit % 64);
            n++;
        }
    }
    /* all digits maximal: 2^(FR_BITS-1) - 1 is below r */
    for (int l = 0; l < 4; l++)
        k[n][l] = ~0ull;
    k[n++][3] = (1ull << (FR_BITS - 1 - 192)) - 1;
    return n;
}

static void test_fixed_base(pool_t *pool)
{
    g1_aff_t g1;
    g2_aff_t g2;
    g1_generator(&g1);
    g2_generator(&g2);
    static uint64_t ks[400][4];
    unsigned widths[] = {2, 3, 5, 8, 10};
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++) {
        unsigned w = widths[wi];
        dev_fb_g1 t1;
        dev_fb_g2 t2;
        CHECK(dev_fb_g1_init_w(&t1, &g1, w, pool) && dev_fb_g2_init_w(&t2, &g2, w, pool),
              "table w=%u: out of memory", w);
        size_t n = edge_scalars(ks, w);
        for (size_t i = 0; i < n + 24; i++) {
            fr_t k;
            uint64_t kstd[4];
            if (i < n) {
                memcpy(kstd, ks[i], 32);
                fr_of_std(&k, kstd);
            } else {
                rand_fr(&k);
                fr_t s;
                fr_to_std(&s, &k);
                memcpy(kstd, s.l, 32);
            }
            g1_jac_t a, b;
            dev_fb_g1_mul(&a, &t1, &k);
            g1_jac_mul(&b, &g1, kstd);
            CHECK(g1_jac_eq(&a, &b), "G1 fixed base w=%u scalar #%zu differs from g1_jac_mul", w, i);
            if (i % 3 == 0 || i < 8) { /* G2 is slower: a third of the scalars */
                g2_jac_t c, d;
                dev_fb_g2_mul(&c, &t2, &k);
                g2_jac_mul(&d, &g2, kstd);
                CHECK(g2_jac_eq(&c, &d), "G2 fixed base w=%u scalar #%zu differs from g2_jac_mul", w, i);
            }
        }
        dev_fb_g1_free(&t1);
        dev_fb_g2_free(&t2);
    }

    /* the batched run over chunks: zeros give all-zero bytes, the rest match one by one */
    size_t n = 3 * DEV_FB_CHUNK + 17;
    fr_t *k = malloc(n * sizeof *k);
    g1_aff_t *out = malloc(n * sizeof *out);
    g2_aff_t *out2 = malloc(n * sizeof *out2);
    dev_fb_g1 t1;
    dev_fb_g2 t2;
    if (!k || !out || !out2 || !dev_fb_g1_init(&t1, &g1, n, pool) || !dev_fb_g2_init(&t2, &g2, n, pool)) {
        CHECK(0, "out of memory");
        return;
    }
    size_t ne = edge_scalars(ks, t1.w), e = 0;
    for (size_t i = 0; i < n; i++) {
        if (i % 7 == 0)
            fr_set_zero(&k[i]);
        else if (i % 5 == 1 && e < ne)
            fr_of_std(&k[i], ks[e++]); /* checked below: i % 5 == 1 */
        else
            rand_fr(&k[i]);
    }
    char err[CUZK_ERRLEN] = "";
    CHECK(!dev_fb_g1_run(out, k, n, &t1, pool, err) && !dev_fb_g2_run(out2, k, n, &t2, pool, err), "run: %s", err);
    static const uint8_t zero[sizeof(g2_aff_t)];
    for (size_t i = 0; i < n; i++) {
        if (i % 7 != 0 && i % 5 != 1)
            continue;
        fr_t s;
        fr_to_std(&s, &k[i]);
        g1_jac_t j;
        g1_aff_t want;
        g1_jac_mul(&j, &g1, s.l);
        g1_jac_to_aff(&want, &j);
        if (i % 7 == 0)
            CHECK(!memcmp(&out[i], zero, sizeof out[i]) && !memcmp(&out2[i], zero, sizeof out2[i]),
                  "zero scalar #%zu did not give all-zero bytes", i);
        else
            CHECK(g1_aff_eq(&out[i], &want) && g1_aff_on_curve(&out[i]), "G1 run #%zu wrong", i);
        if (i % 15 == 1) {
            g2_jac_t j2;
            g2_aff_t want2;
            g2_jac_mul(&j2, &g2, s.l);
            g2_jac_to_aff(&want2, &j2);
            CHECK(g2_aff_eq(&out2[i], &want2), "G2 run #%zu wrong", i);
        }
    }
    dev_fb_g1_free(&t1);
    dev_fb_g2_free(&t2);
    free(k);
    free(out);
    free(out2);
}

/* L_i(t) by the product formula over the points x_j */
static void lagrange_product(fr_t *o, const fr_t *x, size_t m, size_t i, const fr_t *t)
{
    fr_t num = FR_ONE, den = FR_ONE, d;
    for (size_t j = 0; j < m; j++) {
        if (j == i)
            continue;
        fr_sub(&d, t, &x[j]);
        fr_mul(&num, &num, &d);
        fr_sub(&d, &x[i], &x[j]);
        fr_mul(&den, &den, &d);
    }
    fr_inv(&den, &den);
    fr_mul(o, &num, &den);
}

static void test_lagrange(void)
{
    for (unsigned log_m = 1; log_m <= 6; log_m++) {
        size_t m = (size_t)1 << log_m;
        fr_t t, w, one = FR_ONE, scale, tm, inv_m, L[64], x[64], y;
        rand_fr(&t);
        fr_root_of_unity(&w, log_m);
        uint64_t e[4] = {m, 0, 0, 0};
        fr_pow(&tm, &t, e, 4);
        fr_sub(&scale, &tm, &FR_ONE);
        fr_from_u64(&inv_m, m);
        fr_inv(&inv_m, &inv_m);
        fr_mul(&scale, &scale, &inv_m);
        CHECK(dev_lagrange(L, m, log_m, &t, &one, &scale), "lagrange: out of memory");
        fr_t sum;
        fr_set_zero(&sum);
        x[0] = FR_ONE;
        for (size_t i = 1; i < m; i++)
            fr_mul(&x[i], &x[i - 1], &w);
        for (size_t i = 0; i < m; i++) {
            lagrange_product(&y, x, m, i, &t);
            CHECK(fr_eq(&y, &L[i]), "L_%zu(t) of the %zu-point domain differs from the product formula", i, m);
            fr_add(&sum, &sum, &L[i]);
        }
        CHECK(fr_eq(&sum, &FR_ONE), "sum of the %zu-point Lagrange basis is not 1", m);

        /* odd coset: P = (X^m - 1) Q vanishes on the m-point domain, so on the 2m-point
         * domain P(t) = sum_k L'_(2k+1)(t) P(x'_k), x'_k = w_2m^(2k+1) */
        fr_t g, t2m, q[64], P = FR_ONE, acc;
        fr_root_of_unity(&g, log_m + 1);
        uint64_t e2[4] = {2 * m, 0, 0, 0};
        fr_pow(&t2m, &t, e2, 4);
        fr_sub(&scale, &t2m, &FR_ONE);
        fr_from_u64(&inv_m, 2 * m);
        fr_inv(&inv_m, &inv_m);
        fr_mul(&scale, &scale, &inv_m);
        CHECK(dev_lagrange(L, m, log_m, &t, &g, &scale), "lagrange: out of memory");
        for (size_t i = 0; i < m; i++)
            rand_fr(&q[i]);
        fr_set_zero(&acc);
        fr_t xk = g;
        for (size_t k = 0; k < m; k++) { /* acc += L'_(2k+1)(t) * P(x'_k) */
            fr_t qv, xp, pv;
            fr_set_zero(&qv);
            for (size_t i = m; i-- > 0;) { /* Horner */
                fr_mul(&qv, &qv, &xk);
                fr_add(&qv, &qv, &q[i]);
            }
            fr_pow(&xp, &xk, e, 4);
            fr_sub(&xp, &xp, &FR_ONE);
            fr_mul(&pv, &xp, &qv);
            fr_mul(&pv, &pv, &L[k]);
            fr_add(&acc, &acc, &pv);
            fr_mul(&xk, &xk, &w);
        }
        fr_set_zero(&P);
        for (size_t i = m; i-- > 0;) {
            fr_mul(&P, &P, &t);
            fr_add(&P, &P, &q[i]);
        }
        fr_sub(&tm, &tm, &FR_ONE);
        fr_mul(&P, &P, &tm);
        CHECK(fr_eq(&P, &acc), "odd-coset Lagrange basis of the %zu-point domain does not interpolate", 2 * m);
    }
}

/* plain check of every constraint over the witness bytes (std form) */
static uint64_t unsatisfied(const dev_circuit *c)
{
    uint64_t bad = 0;
    for (uint64_t k = 0; k < c->n_constraints; k++) {
        fr_t s[3];
        for (int m = 0; m < 3; m++) {
            fr_set_zero(&s[m]);
            for (uint64_t i = c->lc_off[3 * k + m]; i < c->lc_off[3 * k + m + 1]; i++) {
                fr_t a, b;
                dev_fr_from_bytes(&a, c->coefs + 32 * (size_t)c->terms[i].coef);
                dev_fr_from_bytes(&b, c->witness + 32 * (size_t)c->terms[i].wire);
                fr_mul(&a, &a, &b);
                fr_add(&s[m], &s[m], &a);
            }
        }
        fr_mul(&s[0], &s[0], &s[1]);
        bad += !fr_eq(&s[0], &s[2]);
    }
    return bad;
}

static void test_circuit(int dense, uint32_t n, uint32_t npub)
{
    dev_circuit_params p = {.curve = CURVE_BN254, .n_constraints = n, .n_public = npub, .dense = dense, .seed = 5};
    dev_circuit c;
    char err[CUZK_ERRLEN] = "";
    cuzk_err e = dev_circuit_build(&c, &p, err);
    CHECK(!e, "build: %s", err);
    if (e)
        return;
    CHECK(c.n_constraints == n && c.n_public == npub, "counts");
    CHECK(c.domain_size > (uint64_t)n + npub && c.domain_size / 2 <= (uint64_t)n + npub, "domain %u for %u rows",
          c.domain_size, n + npub);
    /* each determined wire: created by its constraint only, once, in C only; no constraint
     * reads a wire that is still undetermined (so solving in order works) */
    uint32_t *def = malloc(c.n_wires * sizeof *def); /* constraint that determines the wire, or none */
    for (uint32_t i = 0; i < c.n_wires; i++)
        def[i] = DEV_NO_WIRE;
    uint64_t ab = 0, free_count = 0;
    for (uint32_t k = 0; k < n; k++)
        if (c.out_wire[k] != DEV_NO_WIRE) {
            CHECK(c.out_wire[k] > npub && c.out_wire[k] < c.n_wires, "constraint %u: bad output wire", k);
            CHECK(def[c.out_wire[k]] == DEV_NO_WIRE, "wire %u determined twice", c.out_wire[k]);
            def[c.out_wire[k]] = k;
        }
    for (uint32_t i = 1; i < c.n_wires; i++)
        free_count += def[i] == DEV_NO_WIRE;
    CHECK(free_count == c.n_free_bits + c.n_free_full, "free wires %llu, counted %llu",
          (unsigned long long)free_count, (unsigned long long)(c.n_free_bits + c.n_free_full));
    for (uint32_t k = 0; k < n; k++) {
        int outs = 0;
        for (int m = 0; m < 3; m++)
            for (uint64_t i = c.lc_off[3 * k + m]; i < c.lc_off[3 * k + m + 1]; i++) {
                uint32_t wv = c.terms[i].wire;
                CHECK(wv < c.n_wires && c.terms[i].coef < c.n_coefs, "constraint %u: term out of range", k);
                if (wv == c.out_wire[k]) {
                    outs++;
                    CHECK(m == DEV_C, "constraint %u: output wire in A or B", k);
                } else {
                    CHECK(def[wv] == DEV_NO_WIRE || def[wv] < k, "constraint %u reads wire %u before it is set", k, wv);
                }
                ab += m != DEV_C;
            }
        CHECK(c.out_wire[k] == DEV_NO_WIRE || outs == 1, "constraint %u: output wire appears %d times", k, outs);
    }
    CHECK(ab == c.n_ab_terms, "n_ab_terms");
    for (uint32_t i = 0; i < c.n_coefs; i++) {
        const uint8_t *v = c.coefs + 32 * (size_t)i;
        int zero = 1;
        for (int j = 0; j < 32; j++)
            zero &= v[j] == 0;
        fr_t t;
        memcpy(&t, v, 32);
        CHECK(!zero && fr_std_is_canonical(&t), "coefficient %u is zero or >= r", i);
    }
    /* solve, then check with the plain evaluator; count the value mix */
    fr_t *coef = malloc(c.n_coefs * sizeof *coef), *inv = malloc(c.n_coefs * sizeof *inv);
    uint8_t(*coef2)[32] = malloc(c.n_coefs * sizeof *coef2);
    fr_t *w = malloc(c.n_wires * sizeof *w);
    CHECK(dev_coef_tables(&c, coef, inv, coef2), "coef tables");
    for (uint32_t i = 0; i < c.n_wires; i++)
        dev_fr_from_bytes(&w[i], c.witness + 32 * (size_t)i);
    fr_t *w0 = malloc(c.n_wires * sizeof *w0);
    memcpy(w0, w, c.n_wires * sizeof *w0);
    e = dev_solve(&c, w, coef, inv, NULL, err);
    CHECK(!e, "solve: %s", err);
    {
        /* over a pool the rows are solved level by level (dev_levels): the same witness */
        uint32_t *order = NULL, levels = 0;
        uint64_t *lvl_off = NULL;
        CHECK(dev_levels(&c, &order, &lvl_off, &levels), "levels");
        uint64_t det = 0;
        for (uint32_t k = 0; k < n; k++)
            det += c.out_wire[k] != DEV_NO_WIRE;
        CHECK(lvl_off[levels] == det && levels <= det, "%u levels hold %llu of %llu determined rows", levels,
              (unsigned long long)lvl_off[levels], (unsigned long long)det);
        for (uint32_t l = 0; l < levels; l++)
            for (uint64_t j = lvl_off[l]; j + 1 < lvl_off[l + 1]; j++)
                CHECK(order[j] < order[j + 1], "level %u out of row order", l);
        free(order);
        free(lvl_off);
        pool_t *p4 = pool_create(4);
        fr_t *wp = malloc(c.n_wires * sizeof *wp);
        memcpy(wp, w0, c.n_wires * sizeof *wp);
        e = dev_solve(&c, wp, coef, inv, p4, err);
        CHECK(!e && !memcmp(wp, w, c.n_wires * sizeof *wp), "solve over a pool: %s",
              e ? err : "a different witness");
        free(wp);
        pool_destroy(p4);
    }
    free(w0);
    for (uint32_t i = 0; i < c.n_wires; i++)
        dev_fr_to_bytes(c.witness + 32 * (size_t)i, &w[i]);
    CHECK(unsatisfied(&c) == 0, "%llu constraints not satisfied", (unsigned long long)unsatisfied(&c));
    uint64_t small = 0;
    for (uint32_t i = 0; i < c.n_wires; i++) {
        int s = c.witness[32 * (size_t)i] <= 1;
        for (int j = 1; j < 32; j++)
            s &= c.witness[32 * (size_t)i + j] == 0;
        small += s;
    }
    if (!dense)
        CHECK(small * 10 >= (uint64_t)c.n_wires * 6 || n < 50, "sparse: only %llu of %u values are 0/1",
              (unsigned long long)small, c.n_wires);
    else
        CHECK(small <= 1 + c.n_wires / 10, "dense: %llu of %u values are 0/1", (unsigned long long)small, c.n_wires);
    /* a broken witness is caught: by the plain evaluator (a determined value bumped) and by
     * dev_solve (a bit of a boolean check set to 2; solving cannot repair a free wire) */
    for (uint32_t k = 0; k < n; k++)
        if (c.out_wire[k] != DEV_NO_WIRE) {
            c.witness[32 * (size_t)c.out_wire[k]] ^= 1;
            CHECK(unsatisfied(&c) > 0, "a changed value of wire %u went unnoticed", c.out_wire[k]);
            c.witness[32 * (size_t)c.out_wire[k]] ^= 1;
            break;
        }
    /* two broken bits, the check over a pool of 4 in tasks of 7 rows: the error names the first */
    pool_t *pool = pool_create(4);
    uint32_t broken[2], nb = 0;
    for (uint32_t k = 0; k < n && nb < 2; k++)
        if (c.out_wire[k] == DEV_NO_WIRE && c.lc_off[3 * k + 1] - c.lc_off[3 * k] == 1 &&
            (nb == 0 || k > broken[0] + 2 * DEV_CHECK_ROWS))
            broken[nb++] = k;
    for (uint32_t i = 0; i < nb; i++)
        fr_from_u64(&w[c.terms[c.lc_off[3 * broken[i]]].wire], 2);
    if (nb) {
        char want[64];
        snprintf(want, sizeof want, "constraint %u is", broken[0]);
        CHECK(dev_solve(&c, w, coef, inv, pool, err) == CUZK_EINTERNAL && strstr(err, want),
              "a non-bit in b*(b-1) = 0 at row %u: %s", broken[0], err);
    }
    pool_destroy(pool);
    free(def);
    free(coef);
    free(inv);
    free(coef2);
    free(w);
    dev_circuit_free(&c);
}

static int read_file(const char *path, uint8_t **buf, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    *buf = malloc(*n ? *n : 1);
    int ok = *buf && fread(*buf, 1, *n, f) == *n;
    fclose(f);
    return ok;
}

static int same_file(const char *a, const char *b)
{
    uint8_t *x = NULL, *y = NULL;
    size_t nx = 0, ny = 0;
    int same = read_file(a, &x, &nx) && read_file(b, &y, &ny) && nx == ny && !memcmp(x, y, nx);
    free(x);
    free(y);
    return same;
}

/* The CPU backend's a/b/c (with its paths for witness values 0 and 1 and coefficients 1 and
 * -1) against a plain evaluation that multiplies every entry: the same bytes. BN254 only (fr_t
 * here is BN254's; the backend is one template for both curves). */
static void check_abc(cuzk_backend *be, void *ks, const zkey_file *z, const wtns_file *w, int dense)
{
    char err[CUZK_ERRLEN] = "out of memory";
    cuzk_matrix *m = NULL;
    size_t wbytes = (size_t)w->n_witness * 32;
    void *mem = aligned_alloc(64, (groth16_ws_size(z) + 63) / 64 * 64);
    fr_t *wt = aligned_alloc(64, (wbytes + 63) / 64 * 64);
    CHECK(mem && wt && !matrix_build(&m, z, NULL, NULL, NULL, err), "a/b/c check setup: %s", err);
    if (!mem || !wt || !m) {
        free(mem);
        free(wt);
        return;
    }
    memcpy(wt, w->values, wbytes);
    groth16_ws ws;
    memset(&ws, 0, sizeof ws);
    groth16_ws_init(&ws, z, mem, (const uint8_t *)wt);
    CHECK(!be->eval_abc(be, ks, &ws, err), "eval_abc: %s", err);
    const fr_t *val = (const fr_t *)(const void *)m->val;
    static const fr_t r2 = {FR_R2_L};
    fr_t neg_r2, one_std = {{1, 0, 0, 0}};
    fr_neg(&neg_r2, &r2);
    size_t bad = 0, plus_one = 0, minus_one = 0, other = 0;
    for (size_t row = 0; row < z->domain_size; row++) {
        fr_t ab[2], t;
        for (int mat = 0; mat < 2; mat++) {
            size_t r = row + (size_t)mat * z->domain_size;
            fr_set_zero(&ab[mat]);
            for (uint32_t e = m->row_ptr[r]; e < m->row_ptr[r + 1]; e++) {
                const fr_t *wv = &wt[m->sig[e]];
                fr_mul(&t, &val[e], wv);
                fr_add(&ab[mat], &ab[mat], &t);
                if (fr_eq(wv, &one_std))
                    fr_eq(&val[e], &r2) ? plus_one++ : fr_eq(&val[e], &neg_r2) ? minus_one++ : other++;
            }
        }
        fr_mul(&t, &ab[0], &ab[1]);
        bad += memcmp(&ab[0], ws.a + 4 * row, 32) || memcmp(&ab[1], ws.b + 4 * row, 32) ||
               memcmp(&t, ws.c + 4 * row, 32);
    }
    CHECK(!bad, "a/b/c: %zu of %zu rows differ from the plain evaluation", bad, (size_t)z->domain_size);
    /* the sparse mix reaches both shortcuts */
    CHECK(dense || (plus_one && minus_one), "entries of a witness 1: coefficient 1 %zu, -1 %zu, other %zu",
          plus_one, minus_one, other);
    matrix_free(m);
    free(mem);
    free(wt);
}

/* generate, read back, prove with the CPU prover, verify */
static void test_files(const char *tmp, cuzk_curve_id curve, uint32_t n, uint32_t npub, int dense)
{
    char dir[512], path[600], err[CUZK_ERRLEN] = "";
    snprintf(dir, sizeof dir, "%s/c%d-%u-%d", tmp, (int)curve, n, dense);
    dev_circuit_params p = {.curve = curve, .n_constraints = n, .n_public = npub, .dense = dense,
                            .seed = 11, .write_r1cs = 1, .threads = 2, .quiet = 1, .out_dir = dir};
    cuzk_err e = dev_circuit_generate(&p, err);
    CHECK(!e, "generate %s: %s", dir, err);
    if (e)
        return;
    zkey_file z;
    wtns_file w;
    r1cs_file r;
    snprintf(path, sizeof path, "%s/circuit.zkey", dir);
    e = zkey_open(&z, path, err);
    CHECK(!e, "zkey_open: %s", err);
    if (e)
        return;
    CHECK(z.curve->id == curve && z.n_public == npub && z.domain_size > n + npub, "zkey header");
    snprintf(path, sizeof path, "%s/witness.wtns", dir);
    e = wtns_open(&w, path, err);
    CHECK(!e, "wtns_open: %s", err);
    if (e) {
        zkey_close(&z);
        return;
    }
    e = zkey_check_witness(&z, &w, err);
    CHECK(!e, "zkey_check_witness: %s", err);
    snprintf(path, sizeof path, "%s/circuit.r1cs", dir);
    e = r1cs_open(&r, path, err);
    CHECK(!e, "r1cs_open: %s", err);
    if (!e) {
        CHECK(r.n_constraints == n && r.n_wires == z.n_vars && r.n_pub_out == npub, "r1cs header");
        r1cs_close(&r);
    }

    cuzk_backend *be = cpu_backend_create(curve, 2, err);
    CHECK(be, "cpu backend: %s", err);
    void *ks = NULL;
    if (be && !(e = be->key_attach(be, &z, NULL, &ks, err))) {
        if (curve == CURVE_BN254)
            check_abc(be, ks, &z, &w, dense);
        cuzk_proof proof;
        cuzk_public pub = {0};
        cuzk_vk vk = {0};
        e = groth16_prove(&proof, be, ks, &z, &w, NULL, err);
        CHECK(!e, "prove: %s", err);
        snprintf(path, sizeof path, "%s/vk.json", dir);
        cuzk_err e2 = vk_read_json(&vk, path, err);
        CHECK(!e2, "vk_read_json: %s", err);
        cuzk_err e3 = groth16_public_from_wtns(&pub, &z, &w, err);
        CHECK(!e3, "public: %s", err);
        if (!e && !e2 && !e3) {
            e = groth16_verify(&vk, &pub, &proof, err);
            CHECK(!e, "the proof for %s does not verify: %s", dir, err);
            if (pub.n > 0) {
                pub.values[0] ^= 1;
                CHECK(groth16_verify(&vk, &pub, &proof, err) == CUZK_EVERIFY, "a changed public signal still verifies");
            }
        }
        public_free(&pub);
        if (vk.ic)
            vk_free(&vk);
        be->key_detach(be, ks);
    } else if (be) {
        CHECK(0, "key_attach: %s", err);
    }
    if (be)
        be->destroy(be);
    wtns_close(&w);
    zkey_close(&z);

    /* same seed, one thread: the same bytes */
    char dir2[560], a[700], b[700];
    snprintf(dir2, sizeof dir2, "%s-again", dir);
    p.out_dir = dir2;
    p.threads = 1;
    e = dev_circuit_generate(&p, err);
    CHECK(!e, "generate again: %s", err);
    const char *names[] = {"circuit.zkey", "witness.wtns", "vk.json", "circuit.r1cs"};
    for (int i = 0; i < 4 && !e; i++) {
        snprintf(a, sizeof a, "%s/%s", dir, names[i]);
        snprintf(b, sizeof b, "%s/%s", dir2, names[i]);
        CHECK(same_file(a, b), "%s differs between two runs with the same seed", names[i]);
    }
}

static void test_errors(const char *tmp)
{
    char err[CUZK_ERRLEN], dir[600];
    snprintf(dir, sizeof dir, "%s/e", tmp);
    dev_circuit_params p = {.curve = CURVE_BN254, .n_constraints = 0, .quiet = 1, .out_dir = dir};
    CHECK(dev_circuit_generate(&p, err) == CUZK_EINVAL, "0 constraints accepted");
    p.n_constraints = 1u << DEV_MAX_LOG_DOMAIN;
    CHECK(dev_circuit_generate(&p, err) == CUZK_EINVAL, "2^%d constraints accepted", DEV_MAX_LOG_DOMAIN);
    p.n_constraints = 10;
    p.curve = (cuzk_curve_id)7;
    CHECK(dev_circuit_generate(&p, err) == CUZK_ECURVE, "curve 7 accepted");
    p.curve = CURVE_BN254;
    char file[600];
    snprintf(file, sizeof file, "%s/plainfile", tmp);
    FILE *f = fopen(file, "w");
    if (f)
        fclose(f);
    snprintf(dir, sizeof dir, "%s/plainfile/sub", tmp);
    p.out_dir = dir;
    CHECK(dev_circuit_generate(&p, err) == CUZK_EIO, "output folder under a file accepted");
    p.out_dir = NULL;
    CHECK(dev_circuit_generate(&p, err) == CUZK_EINVAL, "no output folder accepted");
}

int main(void)
{
    dev_rng_init(&rng, 42, 99);
    pool_t *pool = pool_create(2);
    char tmp[] = "/tmp/cuzk-devcircuit-XXXXXX";
    if (!pool || !mkdtemp(tmp)) {
        fprintf(stderr, "setup failed\n");
        return 1;
    }
    test_fixed_base(pool);
    test_lagrange();
    test_circuit(0, 1, 0);
    test_circuit(0, 2000, 3);
    test_circuit(1, 500, 2);
    test_circuit(1, 3, 0);
    test_files(tmp, CURVE_BN254, 300, 2, 0);
    test_files(tmp, CURVE_BN254, 200, 0, 1);
    test_files(tmp, CURVE_BLS12_381, 150, 1, 0);
    test_files(tmp, CURVE_BLS12_381, 100, 3, 1);
    test_errors(tmp);
    pool_destroy(pool);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (failures == 0 && system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmp);
    if (failures) {
        fprintf(stderr, "devcircuit_test: %d failure(s) (files kept in %s)\n", failures, tmp);
        return 1;
    }
    printf("devcircuit_test: all passed\n");
    return 0;
}
