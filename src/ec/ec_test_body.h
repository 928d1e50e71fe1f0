/* ec_test_body.h - curve and pairing tests shared by ec_bn254_test.c and ec_bls12_381_test.c.
 *
 * Checks group laws across the affine / Jacobian / XYZZ / mixed forms, variable-time against
 * constant-time scalar multiplication, subgroup checks (including points off the subgroup),
 * and pairing bilinearity, non-degeneracy and e^r = 1. With --dump FILE it writes scalar
 * multiples and pairings for tests/oracle/arith.js (BigInt curve math; ffjavascript pairing).
 */
#include "ff/ff_test_body.h"
#include "ec/ec.h"

static void rnd_scalar(uint64_t k[4])
{
    fr_t t;
    rnd_fr(&t);
    fr_to_std(&t, &t);
    memcpy(k, t.l, 32);
}

static void g1_rnd(g1_aff_t *o, uint64_t k[4])
{
    g1_aff_t g;
    g1_jac_t t;
    g1_generator(&g);
    rnd_scalar(k);
    g1_jac_mul(&t, &g, k);
    g1_jac_to_aff(o, &t);
}

static void g2_rnd(g2_aff_t *o, uint64_t k[4])
{
    g2_aff_t g;
    g2_jac_t t;
    g2_generator(&g);
    rnd_scalar(k);
    g2_jac_mul(&t, &g, k);
    g2_jac_to_aff(o, &t);
}

/* k = a*b mod r, all std */
static void scalar_mul(uint64_t o[4], const uint64_t a[4], const uint64_t b[4])
{
    fr_t x, y;
    memcpy(x.l, a, 32);
    memcpy(y.l, b, 32);
    fr_from_std(&x, &x);
    fr_from_std(&y, &y);
    fr_mul(&x, &x, &y);
    fr_to_std(&x, &x);
    memcpy(o, x.l, 32);
}

/* The group-law checks are the same text for G1 and G2. */
#define GROUP_LAWS(G, B)                                                                           \
    static void G##_laws(int iters)                                                                \
    {                                                                                              \
        G##_aff_t g, p, q, r;                                                                      \
        uint64_t kp[4], kq[4];                                                                     \
        G##_generator(&g);                                                                         \
        CHECK(G##_aff_on_curve(&g), #G " generator on curve");                                     \
        CHECK(G##_aff_in_subgroup(&g), #G " generator in subgroup");                               \
        G##_jac_t t, u, w;                                                                         \
        G##_jac_mul(&t, &g, FR_MODULUS);                                                           \
        CHECK(G##_jac_is_inf(&t), #G " [r]G = O");                                                 \
        G##_jac_mul_ct(&t, &g, FR_MODULUS);                                                        \
        CHECK(G##_jac_is_inf(&t), #G " ct [r]G = O");                                              \
        for (int it = 0; it < iters; it++) {                                                       \
            G##_rnd(&p, kp);                                                                       \
            G##_rnd(&q, kq);                                                                       \
            CHECK(G##_aff_on_curve(&p), #G " random point on curve");                              \
            /* ct and vartime scalar mul agree */                                                  \
            G##_jac_mul(&t, &g, kp);                                                               \
            G##_jac_mul_ct(&u, &g, kp);                                                            \
            CHECK(G##_jac_eq(&t, &u), #G " mul == mul_ct");                                        \
            /* P + Q three ways */                                                                 \
            G##_jac_t jp, jq;                                                                      \
            G##_jac_from_aff(&jp, &p);                                                             \
            G##_jac_from_aff(&jq, &q);                                                             \
            G##_jac_add(&t, &jp, &jq);                                                             \
            G##_jac_add_aff(&u, &jp, &q);                                                          \
            CHECK(G##_jac_eq(&t, &u), #G " add == add_aff");                                       \
            G##_xyzz_t x1, x2;                                                                     \
            G##_xyzz_set_inf(&x1);                                                                 \
            G##_xyzz_add_aff(&x1, &x1, &p);                                                        \
            G##_xyzz_add_aff(&x1, &x1, &q);                                                        \
            G##_xyzz_to_jac(&w, &x1);                                                              \
            CHECK(G##_jac_eq(&t, &w), #G " xyzz add_aff");                                         \
            /* [kp+kq]G */                                                                         \
            {                                                                                      \
                fr_t a, b;                                                                         \
                memcpy(a.l, kp, 32);                                                               \
                memcpy(b.l, kq, 32);                                                               \
                fr_from_std(&a, &a);                                                               \
                fr_from_std(&b, &b);                                                               \
                fr_add(&a, &a, &b);                                                                \
                fr_to_std(&a, &a);                                                                 \
                G##_jac_mul(&u, &g, a.l);                                                          \
                CHECK(G##_jac_eq(&t, &u), #G " [a]G + [b]G = [a+b]G");                             \
            }                                                                                      \
            /* doubling: add(P, P) == dbl(P) == xyzz paths */                                      \
            G##_jac_add(&t, &jp, &jp);                                                             \
            G##_jac_dbl(&u, &jp);                                                                  \
            CHECK(G##_jac_eq(&t, &u), #G " add(P,P) == dbl(P)");                                   \
            G##_jac_add_aff(&w, &jp, &p);                                                          \
            CHECK(G##_jac_eq(&t, &w), #G " add_aff(P,P) == dbl(P)");                               \
            G##_xyzz_from_aff(&x1, &p);                                                            \
            G##_xyzz_add_aff(&x2, &x1, &p);                                                        \
            G##_xyzz_to_jac(&w, &x2);                                                              \
            CHECK(G##_jac_eq(&t, &w), #G " xyzz add_aff(P,P)");                                    \
            G##_xyzz_add(&x2, &x1, &x1);                                                           \
            G##_xyzz_to_jac(&w, &x2);                                                              \
            CHECK(G##_jac_eq(&t, &w), #G " xyzz add(P,P)");                                        \
            /* xyzz add of non-normalized points vs Jacobian */                                    \
            G##_xyzz_t x3;                                                                         \
            G##_xyzz_from_aff(&x3, &q);                                                            \
            G##_xyzz_add_aff(&x3, &x3, &g);                                                        \
            G##_xyzz_add(&x2, &x2, &x3);                                                           \
            G##_xyzz_to_jac(&w, &x2);                                                              \
            G##_jac_add_aff(&u, &t, &q);                                                           \
            G##_jac_add_aff(&u, &u, &g);                                                           \
            CHECK(G##_jac_eq(&u, &w), #G " xyzz add general");                                     \
            /* P + (-P) = O in every form */                                                       \
            G##_aff_neg(&r, &p);                                                                   \
            G##_jac_add_aff(&t, &jp, &r);                                                          \
            CHECK(G##_jac_is_inf(&t), #G " P + -P (mixed)");                                       \
            G##_jac_neg(&u, &jp);                                                                  \
            G##_jac_add(&t, &jp, &u);                                                              \
            CHECK(G##_jac_is_inf(&t), #G " P + -P");                                               \
            G##_xyzz_add_aff(&x2, &x1, &r);                                                        \
            CHECK(G##_xyzz_is_inf(&x2), #G " xyzz P + -P");                                        \
            /* infinity is neutral */                                                              \
            G##_jac_set_inf(&t);                                                                   \
            G##_jac_add(&u, &t, &jp);                                                              \
            CHECK(G##_jac_eq(&u, &jp), #G " O + P");                                               \
            G##_aff_t inf;                                                                         \
            G##_aff_set_inf(&inf);                                                                 \
            G##_jac_add_aff(&u, &jp, &inf);                                                        \
            CHECK(G##_jac_eq(&u, &jp), #G " P + O (mixed)");                                       \
            G##_jac_mul_ct(&u, &inf, kp);                                                          \
            CHECK(G##_jac_is_inf(&u), #G " [k]O (ct)");                                            \
            /* [a]([b]G) = [ab]G */                                                                \
            uint64_t ab[4];                                                                        \
            scalar_mul(ab, kp, kq);                                                                \
            G##_jac_mul(&t, &p, kq);                                                               \
            G##_jac_mul(&u, &g, ab);                                                               \
            CHECK(G##_jac_eq(&t, &u), #G " [b]([a]G) = [ab]G");                                    \
            /* affine round trip and equality */                                                   \
            G##_jac_to_aff(&r, &jp);                                                               \
            CHECK(G##_aff_eq(&r, &p), #G " to_aff(from_aff(P))");                                  \
        }                                                                                          \
        /* small scalars in ct mul: 0, 1, 2, 3 */                                                  \
        for (uint64_t s = 0; s < 4; s++) {                                                         \
            uint64_t k[4] = {s, 0, 0, 0};                                                          \
            G##_jac_mul_ct(&t, &g, k);                                                             \
            G##_jac_set_inf(&u);                                                                   \
            for (uint64_t i = 0; i < s; i++)                                                       \
                G##_jac_add_aff(&u, &u, &g);                                                       \
            CHECK(G##_jac_eq(&t, &u), #G " ct [%llu]G", (unsigned long long)s);                    \
        }                                                                                          \
        /* batch to affine with infinities */                                                      \
        G##_jac_t pts[7];                                                                          \
        G##_aff_t out[7];                                                                          \
        for (int i = 0; i < 7; i++) {                                                              \
            G##_rnd(&p, kp);                                                                       \
            G##_jac_from_aff(&pts[i], &p);                                                         \
            G##_jac_dbl(&pts[i], &pts[i]);                                                         \
        }                                                                                          \
        G##_jac_set_inf(&pts[3]);                                                                  \
        G##_batch_to_aff(out, pts, 7);                                                             \
        for (int i = 0; i < 7; i++) {                                                              \
            G##_jac_to_aff(&r, &pts[i]);                                                           \
            CHECK(G##_aff_eq(&r, &out[i]), #G " batch_to_aff %d", i);                              \
        }                                                                                          \
    }

GROUP_LAWS(g1, fq)
GROUP_LAWS(g2, fq2)

/* A point on the curve outside the r-torsion (found from random x); the subgroup check must
 * reject it when the cofactor is not 1. */
static void subgroup_checks(void)
{
    static const fq_t b1 = {G1_B_L};
    static const fq2_t b2 = G2_B_L;
    for (int tries = 0; tries < 100; tries++) {
        g1_aff_t p;
        fq_t rhs;
        rnd_fq(&p.x);
        fq_sqr(&rhs, &p.x);
        fq_mul(&rhs, &rhs, &p.x);
        fq_add(&rhs, &rhs, &b1);
        if (!fq_sqrt(&p.y, &rhs))
            continue;
        CHECK(g1_aff_on_curve(&p), "g1 constructed point on curve");
        CHECK(g1_aff_in_subgroup(&p) == (bool)G1_COFACTOR_IS_ONE, "g1 subgroup check of a random curve point");
        fq_add(&p.y, &p.y, &FQ_ONE);
        CHECK(!g1_aff_on_curve(&p), "g1 off-curve point rejected");
        break;
    }
    for (int tries = 0; tries < 100; tries++) {
        g2_aff_t p;
        fq2_t rhs;
        rnd_fq2(&p.x);
        fq2_sqr(&rhs, &p.x);
        fq2_mul(&rhs, &rhs, &p.x);
        fq2_add(&rhs, &rhs, &b2);
        if (!fq2_sqrt(&p.y, &rhs))
            continue;
        CHECK(g2_aff_on_curve(&p), "g2 constructed point on curve");
        CHECK(!g2_aff_in_subgroup(&p), "g2 subgroup check rejects a random twist point");
        fq_add(&p.y.c0, &p.y.c0, &FQ_ONE);
        CHECK(!g2_aff_on_curve(&p), "g2 off-curve point rejected");
        break;
    }
}

static void pairing_checks(int iters)
{
    g1_aff_t g1, p, pn;
    g2_aff_t g2, q;
    uint64_t a[4], b[4], ab[4];
    fq12_t e, e1, e2;
    g1_generator(&g1);
    g2_generator(&g2);
    pairing(&e, &g1, &g2);
    CHECK(!fq12_is_one(&e), "e(G1, G2) != 1 (non-degenerate)");
    fq12_pow(&e1, &e, FR_MODULUS, FR_LIMBS);
    CHECK(fq12_is_one(&e1), "e(G1, G2)^r = 1");
    for (int it = 0; it < iters; it++) {
        g1_rnd(&p, a);
        g2_rnd(&q, b);
        scalar_mul(ab, a, b);
        pairing(&e1, &p, &q);
        fq12_pow(&e2, &e, ab, 4);
        CHECK(fq12_eq(&e1, &e2), "e(aP, bQ) = e(P, Q)^(ab)");
        /* e(aP, bQ) e(-abP, Q) = 1 */
        g1_jac_t t;
        g1_jac_mul(&t, &g1, ab);
        g1_jac_to_aff(&pn, &t);
        g1_aff_neg(&pn, &pn);
        g1_aff_t ps[2] = {p, pn};
        g2_aff_t qs[2] = {q, g2};
        CHECK(pairing_product_is_one(ps, qs, 2), "e(aP, bQ) e(-abP, Q) = 1");
        ps[1] = p;
        CHECK(!pairing_product_is_one(ps, qs, 2), "product check rejects a wrong pair");
    }
    /* fast final exponentiation == canonical one raised to PAIRING_SNARKJS_POW_L;
     * cyclotomic squaring == squaring on unitary elements */
    {
        static const uint64_t c[4] = PAIRING_SNARKJS_POW_L;
        fq12_t m, fa, fb, u1, u2;
        g1_rnd(&p, a);
        g2_rnd(&q, b);
        pairing_miller_loop(&m, &p, &q);
        pairing_final_exp(&fa, &m);
        pairing_final_exp_canonical(&fb, &m);
        fq12_pow(&fb, &fb, c, 4);
        CHECK(fq12_eq(&fa, &fb), "fast final exponentiation = canonical^c");
        pairing_final_exp_easy(&u1, &m);
        fq12_cyclotomic_sqr(&u2, &u1);
        fq12_sqr(&u1, &u1);
        CHECK(fq12_eq(&u1, &u2), "cyclotomic square");
        pairing_line l;
        rnd_fq2(&l.a);
        rnd_fq2(&l.b);
        rnd_fq2(&l.c);
        u1 = m;
        u2 = m;
        pairing_mul_line(&u1, &l);
        pairing_mul_line_dense(&u2, &l);
        CHECK(fq12_eq(&u1, &u2), "sparse line multiplication");
    }
    /* multi-Miller loop == product of single Miller loops, a pair with infinity included */
    {
        g1_aff_t ps[4];
        g2_aff_t qs[4];
        g2_proj_t T[4];
        fq12_t m, prod, one;
        fq12_set_one(&prod);
        for (int k = 0; k < 4; k++) {
            g1_rnd(&ps[k], a);
            g2_rnd(&qs[k], b);
        }
        g1_aff_set_inf(&ps[2]);
        for (int k = 0; k < 4; k++) {
            pairing_miller_loop(&m, &ps[k], &qs[k]);
            fq12_mul(&prod, &prod, &m);
        }
        pairing_miller_loop_multi(&m, ps, qs, 4, T);
        CHECK(fq12_eq(&m, &prod), "multi-Miller loop = product of Miller loops");
        pairing_miller_loop_multi(&m, ps, qs, 0, T);
        fq12_set_one(&one);
        CHECK(fq12_eq(&m, &one), "multi-Miller loop over no pairs = 1");
    }
    g1_aff_t inf;
    g1_aff_set_inf(&inf);
    pairing(&e1, &inf, &g2);
    CHECK(fq12_is_one(&e1), "e(O, Q) = 1");
}

static void put_g1(FILE *f, const g1_aff_t *p)
{
    put_fq(f, &p->x);
    put_fq(f, &p->y);
}

static void put_g2(FILE *f, const g2_aff_t *p)
{
    put_fq2(f, &p->x);
    put_fq2(f, &p->y);
}

static void put_scalar(FILE *f, const uint64_t k[4])
{
    put_limbs(f, k, 4);
}

static void dump_curves(FILE *f, int n, int npair)
{
    g1_aff_t g1, p, q, r;
    g2_aff_t g2, p2, q2, r2;
    uint64_t k[4], kk[4];
    g1_generator(&g1);
    g2_generator(&g2);
    fputs("g1_gen", f), put_g1(f, &g1), fputc('\n', f);
    fputs("g2_gen", f), put_g2(f, &g2), fputc('\n', f);
    for (int i = 0; i < n; i++) {
        g1_jac_t t;
        g1_rnd(&p, k);
        fputs("g1_mul", f), put_scalar(f, k), put_g1(f, &p), fputc('\n', f);
        g1_rnd(&q, kk);
        g1_jac_from_aff(&t, &p);
        g1_jac_add_aff(&t, &t, &q);
        g1_jac_to_aff(&r, &t);
        fputs("g1_add", f), put_g1(f, &p), put_g1(f, &q), put_g1(f, &r), fputc('\n', f);
        g2_jac_t t2;
        g2_rnd(&p2, k);
        fputs("g2_mul", f), put_scalar(f, k), put_g2(f, &p2), fputc('\n', f);
        g2_rnd(&q2, kk);
        g2_jac_from_aff(&t2, &p2);
        g2_jac_add_aff(&t2, &t2, &q2);
        g2_jac_to_aff(&r2, &t2);
        fputs("g2_add", f), put_g2(f, &p2), put_g2(f, &q2), put_g2(f, &r2), fputc('\n', f);
    }
    for (int i = 0; i < npair; i++) {
        fq12_t e;
        if (i == 0) {
            p = g1;
            p2 = g2;
        } else {
            g1_rnd(&p, k);
            g2_rnd(&p2, kk);
        }
        pairing(&e, &p, &p2);
        fputs("pairing", f), put_g1(f, &p), put_g2(f, &p2), put_fq12(f, &e), fputc('\n', f);

    }
}

static void bench_curves(void)
{
    g1_aff_t g, p;
    uint64_t k[4];
    double t_jac, t_xyzz, t_dbl, t_pair;
    g1_generator(&g);
    g1_rnd(&p, k);
    g1_jac_t acc;
    g1_jac_from_aff(&acc, &g);
    BENCH_MIN(t_jac, 200, g1_jac_add_aff(&acc, &acc, &p));
    BENCH_MIN(t_dbl, 200, g1_jac_dbl(&acc, &acc));
    g1_xyzz_t x;
    g1_xyzz_from_aff(&x, &g);
    BENCH_MIN(t_xyzz, 200, g1_xyzz_add_aff(&x, &x, &p));
    g2_aff_t g2;
    g2_generator(&g2);
    fq12_t e;
    double t0 = now_ns();
    for (int i = 0; i < 3; i++) {
        double t1 = now_ns();
        pairing(&e, &g, &g2);
        double t = now_ns() - t1;
        t_pair = i == 0 || t < t_pair ? t : t_pair;
    }
    (void)t0;
    printf("%s: g1 jac_add_aff %.0f ns, g1 jac_dbl %.0f ns, g1 xyzz_add_aff %.0f ns, pairing %.2f ms "
           "(informational) [%d]\n",
           CURVE_NAME, t_jac, t_dbl, t_xyzz, t_pair / 1e6, (int)((acc.x.l[0] ^ x.x.l[0] ^ e.c0.c0.c0.l[0]) & 1));
}
