/* ff_test_body.h - field tests shared by ff_bn254_test.c and ff_bls12_381_test.c.
 *
 * Checks algebraic laws on random elements (ring axioms, inverse, sqrt, Frobenius, the
 * 2-adic root), and with --dump FILE writes random operands and this code's results, in
 * standard form, for tests/oracle/arith.js to recompute with BigInt (tests/t_arith.sh).
 * Prints ns/op for fr_mul and fq_mul (informational only, no timing assertion).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ff/ff.h"
#include "util/check.h"

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;
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

static void rnd_fq(fq_t *o)
{
    fq_t t;
    do {
        for (int i = 0; i < FQ_LIMBS; i++)
            t.l[i] = rnd64();
        t.l[FQ_LIMBS - 1] &= (FQ_BITS % 64) ? ((1ull << (FQ_BITS % 64)) - 1) : ~0ull;
    } while (!fq_std_is_canonical(&t));
    fq_from_std(o, &t);
}

static void rnd_fq2(fq2_t *o)
{
    rnd_fq(&o->c0);
    rnd_fq(&o->c1);
}

static void rnd_fq6(fq6_t *o)
{
    rnd_fq2(&o->c0);
    rnd_fq2(&o->c1);
    rnd_fq2(&o->c2);
}

static void rnd_fq12(fq12_t *o)
{
    rnd_fq6(&o->c0);
    rnd_fq6(&o->c1);
}

/* ---- dump helpers: std-form hex, most significant first ---- */
static void put_limbs(FILE *f, const uint64_t *l, int n)
{
    fputs(" 0x", f);
    for (int i = n - 1; i >= 0; i--)
        fprintf(f, "%016llx", (unsigned long long)l[i]);
}

static void put_fr(FILE *f, const fr_t *a)
{
    fr_t t;
    fr_to_std(&t, a);
    put_limbs(f, t.l, FR_LIMBS);
}

static void put_fq(FILE *f, const fq_t *a)
{
    fq_t t;
    fq_to_std(&t, a);
    put_limbs(f, t.l, FQ_LIMBS);
}

static void put_fq2(FILE *f, const fq2_t *a)
{
    put_fq(f, &a->c0);
    put_fq(f, &a->c1);
}

static void put_fq12(FILE *f, const fq12_t *a)
{
    const fq2_t *c = (const fq2_t *)(const void *)a;
    for (int i = 0; i < 6; i++)
        put_fq2(f, &c[i]);
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void test_prime_field(int iters)
{
    for (int it = 0; it < iters; it++) {
        fr_t a, b, c, t1, t2, t3;
        rnd_fr(&a);
        rnd_fr(&b);
        rnd_fr(&c);
        fr_mul(&t1, &a, &b);
        fr_mul(&t1, &t1, &c);
        fr_mul(&t2, &b, &c);
        fr_mul(&t2, &a, &t2);
        CHECK(fr_eq(&t1, &t2), "fr mul associative");
        fr_add(&t1, &b, &c);
        fr_mul(&t1, &a, &t1);
        fr_mul(&t2, &a, &b);
        fr_mul(&t3, &a, &c);
        fr_add(&t2, &t2, &t3);
        CHECK(fr_eq(&t1, &t2), "fr distributive");
        fr_sqr(&t1, &a);
        fr_mul(&t2, &a, &a);
        CHECK(fr_eq(&t1, &t2), "fr sqr == mul");
        fr_mul(&t1, &a, &b);
        fr_mul_ref(&t2, &a, &b);
        CHECK(fr_eq(&t1, &t2), "fr mul == reference CIOS");
        fr_mul_c(&t2, &a, &b);
        CHECK(fr_eq(&t1, &t2), "fr mul == portable C twin");
        fr_sqr_ref(&t2, &a);
        fr_sqr(&t1, &a);
        CHECK(fr_eq(&t1, &t2), "fr sqr == reference square");
        fr_inv(&t1, &a);
        fr_mul(&t1, &t1, &a);
        CHECK(fr_is_one(&t1), "fr inverse");
        fr_sub(&t1, &a, &b);
        fr_add(&t1, &t1, &b);
        CHECK(fr_eq(&t1, &a), "fr sub/add");
        fr_neg(&t1, &a);
        fr_add(&t1, &t1, &a);
        CHECK(fr_is_zero(&t1), "fr neg");
        fr_to_std(&t1, &a);
        fr_from_std(&t1, &t1);
        CHECK(fr_eq(&t1, &a), "fr std roundtrip");

        fq_t x, y, z, u1, u2, u3;
        rnd_fq(&x);
        rnd_fq(&y);
        rnd_fq(&z);
        fq_mul(&u1, &x, &y);
        fq_mul(&u1, &u1, &z);
        fq_mul(&u2, &y, &z);
        fq_mul(&u2, &x, &u2);
        CHECK(fq_eq(&u1, &u2), "fq mul associative");
        fq_add(&u1, &y, &z);
        fq_mul(&u1, &x, &u1);
        fq_mul(&u2, &x, &y);
        fq_mul(&u3, &x, &z);
        fq_add(&u2, &u2, &u3);
        CHECK(fq_eq(&u1, &u2), "fq distributive");
        fq_sqr(&u1, &x);
        fq_mul(&u2, &x, &x);
        CHECK(fq_eq(&u1, &u2), "fq sqr == mul");
        fq_mul(&u2, &x, &y);
        fq_mul_ref(&u3, &x, &y);
        CHECK(fq_eq(&u2, &u3), "fq mul == reference CIOS");
        fq_mul_c(&u3, &x, &y);
        CHECK(fq_eq(&u2, &u3), "fq mul == portable C twin");
        fq_sqr_ref(&u2, &x);
        CHECK(fq_eq(&u1, &u2), "fq sqr == reference square");
        fq_inv(&u2, &x);
        fq_mul(&u2, &u2, &x);
        CHECK(fq_is_one(&u2), "fq inverse");
        CHECK(fq_sqrt(&u2, &u1), "fq sqrt of a square");
        fq_sqr(&u2, &u2);
        CHECK(fq_eq(&u2, &u1), "fq sqrt squares back");
        fq_half(&u1, &x);
        fq_dbl(&u1, &u1);
        CHECK(fq_eq(&u1, &x), "fq half");
    }
    /* edge values */
    fr_t z, o, t;
    fr_set_zero(&z);
    fr_inv(&t, &z);
    CHECK(fr_is_zero(&t), "fr inv(0) = 0");
    fr_set_one(&o);
    fr_neg(&t, &o);
    fr_add(&t, &t, &o);
    CHECK(fr_is_zero(&t), "fr -1 + 1");
    fr_from_u64(&t, 3);
    fr_t f5, f15;
    fr_from_u64(&f5, 5);
    fr_from_u64(&f15, 15);
    fr_mul(&t, &t, &f5);
    CHECK(fr_eq(&t, &f15), "fr 3*5");
    fq_t m1, nq;
    fq_set_one(&m1);
    fq_neg(&m1, &m1);
    {
        fq_t pm1, s1, s2, one;
        fq_set_one(&one);
        pm1.l[0] = FQ_MODULUS[0] - 1; /* p-1 as a Montgomery value (the largest element) */
        for (int i = 1; i < FQ_LIMBS; i++)
            pm1.l[i] = FQ_MODULUS[i];
        fq_mul(&s1, &pm1, &pm1);
        fq_mul_ref(&s2, &pm1, &pm1);
        CHECK(fq_eq(&s1, &s2), "fq mul of the largest element");
        fq_sqr(&s1, &m1);
        CHECK(fq_eq(&s1, &one), "(-1)^2 = 1");
        fr_t rm1, r1, r2;
        rm1.l[0] = FR_MODULUS[0] - 1;
        for (int i = 1; i < FR_LIMBS; i++)
            rm1.l[i] = FR_MODULUS[i];
        fr_mul(&r1, &rm1, &rm1);
        fr_mul_ref(&r2, &rm1, &rm1);
        CHECK(fr_eq(&r1, &r2), "fr mul of the largest element");
        /* squares and products of extreme limb patterns: p-1-k and small values */
        for (uint64_t k = 0; k < 64; k++) {
            fq_t e = pm1, f, g1, g2;
            e.l[0] -= k;
            fq_sqr(&g1, &e);
            fq_sqr_ref(&g2, &e);
            CHECK(fq_eq(&g1, &g2), "fq sqr of p-1-%llu", (unsigned long long)k);
            fq_set_zero(&f);
            f.l[0] = k;
            f.l[FQ_LIMBS - 1] = k << 40;
            fq_sqr(&g1, &f);
            fq_sqr_ref(&g2, &f);
            CHECK(fq_eq(&g1, &g2), "fq sqr of a sparse value %llu", (unsigned long long)k);
            fq_mul(&g1, &e, &f);
            fq_mul_ref(&g2, &e, &f);
            CHECK(fq_eq(&g1, &g2), "fq mul of extreme values %llu", (unsigned long long)k);
            fr_t er = rm1, h1, h2;
            er.l[0] -= k;
            fr_sqr(&h1, &er);
            fr_sqr_ref(&h2, &er);
            CHECK(fr_eq(&h1, &h2), "fr sqr of r-1-%llu", (unsigned long long)k);
        }
    }
    CHECK(!fq_sqrt(&nq, &m1), "-1 is not a square in Fq");
    /* roots of unity: w^(2^k) = 1, w^(2^(k-1)) = -1 */
    for (unsigned k = 1; k <= FR_TWO_ADICITY; k++) {
        fr_t w;
        fr_root_of_unity(&w, k);
        for (unsigned i = 0; i + 1 < k; i++)
            fr_sqr(&w, &w);
        fr_t m;
        fr_set_one(&m);
        fr_neg(&m, &m);
        CHECK(fr_eq(&w, &m), "root of unity of order 2^%u", k);
    }
    /* pow against repeated multiplication, including exponents 0 and 1 */
    {
        fr_t a, acc, pw;
        rnd_fr(&a);
        fr_set_one(&acc);
        for (uint64_t k = 0; k < 40; k++) {
            uint64_t e[2] = {k, 0};
            fr_pow(&pw, &a, e, 2);
            CHECK(fr_eq(&pw, &acc), "fr_pow exponent %llu", (unsigned long long)k);
            fr_mul(&acc, &acc, &a);
        }
        uint64_t e2[1] = {0};
        fr_pow(&pw, &a, e2, 1);
        CHECK(fr_is_one(&pw), "a^0 = 1");
    }
    fr_t rr;
    fr_root_of_unity(&rr, 0);
    CHECK(fr_is_one(&rr), "root of order 1");
    /* batch inverse with a zero in the middle, in place */
    fr_t v[9], w[9], s[9];
    for (int i = 0; i < 9; i++)
        rnd_fr(&v[i]);
    fr_set_zero(&v[4]);
    memcpy(w, v, sizeof v);
    fr_batch_inv(w, w, 9, s);
    for (int i = 0; i < 9; i++) {
        fr_t e;
        fr_inv(&e, &v[i]);
        CHECK(fr_eq(&e, &w[i]), "batch inv %d", i);
    }
}

static void test_tower(int iters)
{
    for (int it = 0; it < iters; it++) {
        fq2_t a, b, c, t1, t2;
        rnd_fq2(&a);
        rnd_fq2(&b);
        rnd_fq2(&c);
        fq2_mul(&t1, &a, &b);
        fq2_mul(&t1, &t1, &c);
        fq2_mul(&t2, &b, &c);
        fq2_mul(&t2, &a, &t2);
        CHECK(fq2_eq(&t1, &t2), "fq2 associative");
        fq2_sqr(&t1, &a);
        fq2_mul(&t2, &a, &a);
        CHECK(fq2_eq(&t1, &t2), "fq2 sqr");
        fq2_inv(&t1, &a);
        fq2_mul(&t1, &t1, &a);
        CHECK(fq2_is_one(&t1), "fq2 inverse");
        fq2_sqr(&t1, &a);
        CHECK(fq2_sqrt(&t2, &t1), "fq2 sqrt of a square");
        fq2_sqr(&t2, &t2);
        CHECK(fq2_eq(&t1, &t2), "fq2 sqrt squares back");
        fq2_t xi = {FQ_ONE, FQ_ONE};
        fq_mul_small(&xi.c0, &FQ_ONE, FQ2_XI_C0);
        fq_mul_small(&xi.c1, &FQ_ONE, FQ2_XI_C1);
        fq2_mul(&t1, &a, &xi);
        fq2_mul_by_nonresidue(&t2, &a);
        CHECK(fq2_eq(&t1, &t2), "fq2 mul by xi");
        fq2_pow(&t1, &a, FQ_MODULUS, FQ_LIMBS);
        fq2_frobenius(&t2, &a, 1);
        CHECK(fq2_eq(&t1, &t2), "fq2 frobenius = a^q");

        fq6_t x, y, z, u1, u2;
        rnd_fq6(&x);
        rnd_fq6(&y);
        rnd_fq6(&z);
        fq6_mul(&u1, &x, &y);
        fq6_mul(&u1, &u1, &z);
        fq6_mul(&u2, &y, &z);
        fq6_mul(&u2, &x, &u2);
        CHECK(fq6_eq(&u1, &u2), "fq6 associative");
        fq6_add(&u1, &y, &z);
        fq6_mul(&u1, &x, &u1);
        fq6_mul(&u2, &x, &y);
        fq6_t u3;
        fq6_mul(&u3, &x, &z);
        fq6_add(&u2, &u2, &u3);
        CHECK(fq6_eq(&u1, &u2), "fq6 distributive");
        fq6_sqr(&u1, &x);
        fq6_mul(&u2, &x, &x);
        CHECK(fq6_eq(&u1, &u2), "fq6 sqr");
        fq6_inv(&u1, &x);
        fq6_mul(&u1, &u1, &x);
        fq6_t one6;
        fq6_set_one(&one6);
        CHECK(fq6_eq(&u1, &one6), "fq6 inverse");
        /* v^3 = xi */
        fq6_t v;
        fq6_set_zero(&v);
        fq2_set_one(&v.c1);
        fq6_mul(&u1, &v, &v);
        fq6_mul(&u1, &u1, &v);
        fq6_t xi6;
        fq6_set_zero(&xi6);
        xi6.c0 = xi;
        CHECK(fq6_eq(&u1, &xi6), "v^3 = xi");
        fq6_mul(&u1, &x, &v);
        fq6_mul_by_nonresidue(&u2, &x);
        CHECK(fq6_eq(&u1, &u2), "fq6 mul by v");
    }
    for (int it = 0; it < iters / 4 + 1; it++) {
        fq12_t a, b, c, t1, t2;
        rnd_fq12(&a);
        rnd_fq12(&b);
        rnd_fq12(&c);
        fq12_mul(&t1, &a, &b);
        fq12_mul(&t1, &t1, &c);
        fq12_mul(&t2, &b, &c);
        fq12_mul(&t2, &a, &t2);
        CHECK(fq12_eq(&t1, &t2), "fq12 associative");
        fq12_sqr(&t1, &a);
        fq12_mul(&t2, &a, &a);
        CHECK(fq12_eq(&t1, &t2), "fq12 sqr");
        fq12_inv(&t1, &a);
        fq12_mul(&t1, &t1, &a);
        CHECK(fq12_is_one(&t1), "fq12 inverse");
        /* w^2 = v */
        fq12_t w, v;
        fq12_set_zero(&w);
        fq2_set_one(&w.c1.c0);
        fq12_set_zero(&v);
        fq2_set_one(&v.c0.c1);
        fq12_sqr(&t1, &w);
        CHECK(fq12_eq(&t1, &v), "w^2 = v");
        /* Frobenius: equals a^q, a^(q^k) composes, power 12 is the identity */
        fq12_pow(&t1, &a, FQ_MODULUS, FQ_LIMBS);
        fq12_frobenius(&t2, &a, 1);
        CHECK(fq12_eq(&t1, &t2), "fq12 frobenius(1) = a^q");
        t1 = a;
        for (unsigned k = 1; k <= 12; k++) {
            fq12_frobenius(&t1, &t1, 1);
            fq12_frobenius(&t2, &a, k);
            CHECK(fq12_eq(&t1, &t2), "fq12 frobenius(%u) = frobenius(1)^%u", k, k);
        }
        CHECK(fq12_eq(&t1, &a), "fq12 frobenius^12 = id");
        fq12_frobenius(&t1, &a, 6);
        fq12_conj(&t2, &a);
        CHECK(fq12_eq(&t1, &t2), "fq12 frobenius(6) = conj");
    }
}

static void dump_fields(FILE *f, int n)
{
    for (int i = 0; i < n; i++) {
        fr_t a, b, t;
        rnd_fr(&a);
        rnd_fr(&b);
        if (i == 0)
            fr_set_zero(&b);
        fputs("fr_mul", f), put_fr(f, &a), put_fr(f, &b), fr_mul(&t, &a, &b), put_fr(f, &t), fputc('\n', f);
        fputs("fr_add", f), put_fr(f, &a), put_fr(f, &b), fr_add(&t, &a, &b), put_fr(f, &t), fputc('\n', f);
        fputs("fr_sub", f), put_fr(f, &a), put_fr(f, &b), fr_sub(&t, &a, &b), put_fr(f, &t), fputc('\n', f);
        fputs("fr_inv", f), put_fr(f, &a), fr_inv(&t, &a), put_fr(f, &t), fputc('\n', f);
        fq_t x, y, u;
        rnd_fq(&x);
        rnd_fq(&y);
        fputs("fq_mul", f), put_fq(f, &x), put_fq(f, &y), fq_mul(&u, &x, &y), put_fq(f, &u), fputc('\n', f);
        fputs("fq_sqr", f), put_fq(f, &x), fq_sqr(&u, &x), put_fq(f, &u), fputc('\n', f);
        fputs("fq_add", f), put_fq(f, &x), put_fq(f, &y), fq_add(&u, &x, &y), put_fq(f, &u), fputc('\n', f);
        fputs("fq_sub", f), put_fq(f, &x), put_fq(f, &y), fq_sub(&u, &x, &y), put_fq(f, &u), fputc('\n', f);
        fputs("fq_inv", f), put_fq(f, &x), fq_inv(&u, &x), put_fq(f, &u), fputc('\n', f);
        fq2_t p, q, r;
        rnd_fq2(&p);
        rnd_fq2(&q);
        fputs("fq2_mul", f), put_fq2(f, &p), put_fq2(f, &q), fq2_mul(&r, &p, &q), put_fq2(f, &r), fputc('\n', f);
        fputs("fq2_inv", f), put_fq2(f, &p), fq2_inv(&r, &p), put_fq2(f, &r), fputc('\n', f);
        if (i < 8) {
            fq12_t A, B, C;
            rnd_fq12(&A);
            rnd_fq12(&B);
            fputs("fq12_mul", f), put_fq12(f, &A), put_fq12(f, &B), fq12_mul(&C, &A, &B), put_fq12(f, &C),
                fputc('\n', f);
            fputs("fq12_inv", f), put_fq12(f, &A), fq12_inv(&C, &A), put_fq12(f, &C), fputc('\n', f);
            fputs("fq12_frob1", f), put_fq12(f, &A), fq12_frobenius(&C, &A, 1), put_fq12(f, &C), fputc('\n', f);
        }
    }
    fr_t w;
    fr_root_of_unity(&w, FR_TWO_ADICITY);
    fputs("fr_root", f), fprintf(f, " %u", FR_TWO_ADICITY), put_fr(f, &w), fputc('\n', f);
}

/* Informational timing: the best of many short batches, so that a busy machine (other
 * processes, CI neighbours) distorts it as little as possible. Nothing asserts on it. */
#define BENCH_MIN(best, batch, stmt)                                                               \
    do {                                                                                           \
        best = 1e30;                                                                               \
        for (int rep_ = 0; rep_ < 200; rep_++) {                                                   \
            double t0_ = now_ns();                                                                 \
            for (int i_ = 0; i_ < (batch); i_++) {                                                 \
                stmt;                                                                              \
            }                                                                                      \
            double t_ = (now_ns() - t0_) / (batch);                                                \
            if (t_ < best)                                                                         \
                best = t_;                                                                         \
        }                                                                                          \
    } while (0)

static void bench_fields(void)
{
    fr_t a, b;
    fq_t x, y;
    double t_fr, t_fq, t_sqr, t_add;
    rnd_fr(&a);
    rnd_fr(&b);
    rnd_fq(&x);
    rnd_fq(&y);
    BENCH_MIN(t_fr, 1000, fr_mul(&a, &a, &b));
    BENCH_MIN(t_fq, 1000, fq_mul(&x, &x, &y));
    BENCH_MIN(t_sqr, 1000, fq_sqr(&x, &x));
    BENCH_MIN(t_add, 1000, fq_add(&x, &x, &y));
    printf("%s: fr_mul %.1f ns, fq_mul %.1f ns, fq_sqr %.1f ns, fq_add %.1f ns (informational) [%d]\n",
           CURVE_NAME, t_fr, t_fq, t_sqr, t_add, (int)(a.l[0] ^ x.l[0]) & 1);
}
