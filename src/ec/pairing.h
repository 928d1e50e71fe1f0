/* pairing.h - optimal ate pairing e: G1 x G2 -> GT (subgroup of Fq12*) and the product
 * check used by Groth16 verification. Included by ec/ec.h.
 *
 * Miller loop: the twist point T runs in homogeneous projective coordinates; each doubling
 * or addition step also yields the line through the untwisted points, evaluated at P, as a
 * sparse Fq12 element (Costello, Lange, Naehrig, "Faster pairing computations on curves
 * with high-degree twists", PKC 2010; Aranha, Karabina, Longa, Gebotys, Lopez, "Faster
 * explicit formulas for computing pairings over ordinary curves", EUROCRYPT 2011).
 * Lines are scaled by Fq2/Fq4 factors, which the final exponentiation removes.
 *   D-type twist (BN254), psi(x, y) = (x w^2, y w^3): line = a + b w + c w^3, slots 0, 3, 4.
 *   M-type twist (BLS12-381), psi(x, y) = (x w^-2, y w^-3): line*w^3 = a + b v + c v w,
 *   slots 0, 1, 4.
 * BN254 loop: 6u+2 in signed digits, then the two Frobenius lines (pi(Q), -pi^2(Q)).
 * BLS12-381 loop: |x| in binary, then f is conjugated because x < 0.
 * Final exponentiation: f^((q^6-1)(q^2+1)) (easy part), then a multiple c of the hard part
 * (q^4 - q^2 + 1)/r, the same c as snarkjs (see pairing_final_exp_hard), so pairing() equals
 * snarkjs's e(P, Q). Variable time: all inputs are public.
 */
#ifndef CUZK_EC_PAIRING_H
#define CUZK_EC_PAIRING_H

typedef struct pairing_line { fq2_t a, b, c; } pairing_line; /* sparse coefficients, see top */

/* f = f * line (sparse). D-type: line = a + b w + c v w; M-type: a + b v + c v w. */
static inline void pairing_mul_line(fq12_t *f, const pairing_line *l)
{
#if CURVE_IS_BN254
    fq12_mul_by_034(f, &l->a, &l->b, &l->c);
#else
    fq12_mul_by_014(f, &l->a, &l->b, &l->c);
#endif
}

/* the same product with a dense multiplication; the tests compare the two */
static inline void pairing_mul_line_dense(fq12_t *f, const pairing_line *l)
{
    fq12_t t;
    fq12_set_zero(&t);
    t.c0.c0 = l->a;
#if CURVE_IS_BN254
    t.c1.c0 = l->b;
#else
    t.c0.c1 = l->b;
#endif
    t.c1.c1 = l->c;
    fq12_mul(f, f, &t);
}

/* T = 2T and the tangent line at T evaluated at P (xp, yp in Fq).
 * A = XY/2, B = Y^2, C = Z^2, E = 3b'C, F = 3E, G = (B+F)/2, H = (Y+Z)^2 - B - C, I = E - B,
 * J = X^2; X3 = A(B - F), Y3 = G^2 - 3E^2, Z3 = BH; line (-H yp, 3J xp, I). */
static inline void pairing_dbl_step(g2_proj_t *T, pairing_line *l, const fq_t *xp, const fq_t *yp)
{
    static const fq2_t b3 = G2_B3_L;
    fq2_t A, B, C, E, F, G, H, I, J, t;
    fq2_mul(&A, &T->x, &T->y);
    fq_half(&A.c0, &A.c0);
    fq_half(&A.c1, &A.c1);
    fq2_sqr(&B, &T->y);
    fq2_sqr(&C, &T->z);
    fq2_mul(&E, &C, &b3);
    fq2_dbl(&F, &E);
    fq2_add(&F, &F, &E);
    fq2_add(&G, &B, &F);
    fq_half(&G.c0, &G.c0);
    fq_half(&G.c1, &G.c1);
    fq2_add(&H, &T->y, &T->z);
    fq2_sqr(&H, &H);
    fq2_sub(&H, &H, &B);
    fq2_sub(&H, &H, &C);
    fq2_sub(&I, &E, &B);
    fq2_sqr(&J, &T->x);

    fq2_sub(&t, &B, &F);
    fq2_mul(&T->x, &A, &t);
    fq2_sqr(&t, &E);
    fq2_dbl(&E, &t);
    fq2_add(&E, &E, &t); /* 3E^2 */
    fq2_sqr(&T->y, &G);
    fq2_sub(&T->y, &T->y, &E);
    fq2_mul(&T->z, &B, &H);

    fq2_t h_yp, j3_xp;
    fq2_neg(&H, &H);
    fq2_mul_fq(&h_yp, &H, yp);
    fq2_dbl(&t, &J);
    fq2_add(&t, &t, &J);
    fq2_mul_fq(&j3_xp, &t, xp);
#if CURVE_IS_BN254
    l->a = h_yp;
    l->b = j3_xp;
    l->c = I;
#else
    l->a = I;
    l->b = j3_xp;
    l->c = h_yp;
#endif
}

/* T = T + Q (Q affine on the twist) and the line through T and Q evaluated at P.
 * theta = Y - yq Z, lambda = X - xq Z, C = theta^2, D = lambda^2, E = lambda D, F = Z C,
 * G = X D, H = E + F - 2G; X3 = lambda H, Y3 = theta (G - H) - E Y, Z3 = Z E;
 * J = theta xq - lambda yq; line (lambda yp, -theta xp, J). */
static inline void pairing_add_step(g2_proj_t *T, pairing_line *l, const g2_aff_t *q, const fq_t *xp,
                                    const fq_t *yp)
{
    fq2_t theta, lambda, C, D, E, F, G, H, J, t;
    fq2_mul(&t, &q->y, &T->z);
    fq2_sub(&theta, &T->y, &t);
    fq2_mul(&t, &q->x, &T->z);
    fq2_sub(&lambda, &T->x, &t);
    fq2_sqr(&C, &theta);
    fq2_sqr(&D, &lambda);
    fq2_mul(&E, &lambda, &D);
    fq2_mul(&F, &T->z, &C);
    fq2_mul(&G, &T->x, &D);
    fq2_add(&H, &E, &F);
    fq2_sub(&H, &H, &G);
    fq2_sub(&H, &H, &G);
    fq2_mul(&T->x, &lambda, &H);
    fq2_sub(&t, &G, &H);
    fq2_mul(&t, &theta, &t);
    fq2_mul(&C, &E, &T->y);
    fq2_sub(&T->y, &t, &C);
    fq2_mul(&T->z, &T->z, &E);
    fq2_mul(&J, &theta, &q->x);
    fq2_mul(&t, &lambda, &q->y);
    fq2_sub(&J, &J, &t);

    fq2_t l_yp, th_xp;
    fq2_mul_fq(&l_yp, &lambda, yp);
    fq2_neg(&theta, &theta);
    fq2_mul_fq(&th_xp, &theta, xp);
#if CURVE_IS_BN254
    l->a = l_yp;
    l->b = th_xp;
    l->c = J;
#else
    l->a = J;
    l->b = th_xp;
    l->c = l_yp;
#endif
}

/* o = f_{loop,Q}(P) with the curve's extra lines (unreduced: apply pairing_final_exp).
 * Either point at infinity gives 1. */
static inline void pairing_miller_loop(fq12_t *o, const g1_aff_t *p, const g2_aff_t *q)
{
    fq12_t f;
    fq12_set_one(&f);
    if (g1_aff_is_inf(p) || g2_aff_is_inf(q)) {
        *o = f;
        return;
    }
    static const signed char digits[ATE_LOOP_LEN] = ATE_LOOP_DIGITS;
    g2_proj_t T;
    pairing_line l;
    g2_aff_t qn;
    T.x = q->x;
    T.y = q->y;
    fq2_set_one(&T.z);
    g2_aff_neg(&qn, q);
    for (int i = 1; i < ATE_LOOP_LEN; i++) {
        if (i > 1)
            fq12_sqr(&f, &f);
        pairing_dbl_step(&T, &l, &p->x, &p->y);
        pairing_mul_line(&f, &l);
        if (digits[i] == 1) {
            pairing_add_step(&T, &l, q, &p->x, &p->y);
            pairing_mul_line(&f, &l);
        } else if (digits[i] == -1) {
            pairing_add_step(&T, &l, &qn, &p->x, &p->y);
            pairing_mul_line(&f, &l);
        }
    }
#if CURVE_IS_BN254
    /* Q1 = pi(Q) = (conj(x) xi^((q-1)/3), conj(y) xi^((q-1)/2)),
     * Q2 = -pi^2(Q) = (x xi^((q^2-1)/3), -y xi^((q^2-1)/2)) */
    g2_aff_t q1, q2;
    fq2_conj(&q1.x, &q->x);
    fq2_mul(&q1.x, &q1.x, &FQ12_FROB[1][2]);
    fq2_conj(&q1.y, &q->y);
    fq2_mul(&q1.y, &q1.y, &FQ12_FROB[1][3]);
    fq2_mul(&q2.x, &q->x, &FQ12_FROB[2][2]);
    fq2_mul(&q2.y, &q->y, &FQ12_FROB[2][3]);
    fq2_neg(&q2.y, &q2.y);
    pairing_add_step(&T, &l, &q1, &p->x, &p->y);
    pairing_mul_line(&f, &l);
    pairing_add_step(&T, &l, &q2, &p->x, &p->y);
    pairing_mul_line(&f, &l);
#endif
#if ATE_LOOP_NEG
    fq12_conj(&f, &f);
#endif
    *o = f;
}

/* o = prod_k f_{loop,q[k]}(p[k]) over n pairs in one loop (a multi-Miller loop): each step
 * squares the one accumulator once and then multiplies in every pair's lines, so n pairs
 * cost ATE_LOOP_LEN - 2 Fq12 squarings in all (not per pair) and no products of separate
 * loop results. It equals the product of pairing_miller_loop over the pairs exactly (same
 * lines, same field elements; the tests check it). Pairs with a point at infinity give 1
 * and are skipped. T: the caller's scratch of n twist points. */
static inline void pairing_miller_loop_multi(fq12_t *o, const g1_aff_t *p, const g2_aff_t *q, size_t n,
                                             g2_proj_t *T)
{
    static const signed char digits[ATE_LOOP_LEN] = ATE_LOOP_DIGITS;
    fq12_t f;
    pairing_line l;
    g2_aff_t qn;
    fq12_set_one(&f);
    for (size_t k = 0; k < n; k++) {
        T[k].x = q[k].x;
        T[k].y = q[k].y;
        fq2_set_one(&T[k].z);
    }
    for (int i = 1; i < ATE_LOOP_LEN; i++) {
        if (i > 1)
            fq12_sqr(&f, &f);
        for (size_t k = 0; k < n; k++) {
            if (g1_aff_is_inf(&p[k]) || g2_aff_is_inf(&q[k]))
                continue;
            pairing_dbl_step(&T[k], &l, &p[k].x, &p[k].y);
            pairing_mul_line(&f, &l);
            if (digits[i] == 1) {
                pairing_add_step(&T[k], &l, &q[k], &p[k].x, &p[k].y);
                pairing_mul_line(&f, &l);
            } else if (digits[i] == -1) {
                g2_aff_neg(&qn, &q[k]);
                pairing_add_step(&T[k], &l, &qn, &p[k].x, &p[k].y);
                pairing_mul_line(&f, &l);
            }
        }
    }
#if CURVE_IS_BN254
    /* the two Frobenius lines of each pair, as in pairing_miller_loop */
    for (size_t k = 0; k < n; k++) {
        if (g1_aff_is_inf(&p[k]) || g2_aff_is_inf(&q[k]))
            continue;
        g2_aff_t q1, q2;
        fq2_conj(&q1.x, &q[k].x);
        fq2_mul(&q1.x, &q1.x, &FQ12_FROB[1][2]);
        fq2_conj(&q1.y, &q[k].y);
        fq2_mul(&q1.y, &q1.y, &FQ12_FROB[1][3]);
        fq2_mul(&q2.x, &q[k].x, &FQ12_FROB[2][2]);
        fq2_mul(&q2.y, &q[k].y, &FQ12_FROB[2][3]);
        fq2_neg(&q2.y, &q2.y);
        pairing_add_step(&T[k], &l, &q1, &p[k].x, &p[k].y);
        pairing_mul_line(&f, &l);
        pairing_add_step(&T[k], &l, &q2, &p[k].x, &p[k].y);
        pairing_mul_line(&f, &l);
    }
#endif
#if ATE_LOOP_NEG
    fq12_conj(&f, &f);
#endif
    *o = f;
}

/* o = a^((q^6 - 1)(q^2 + 1)), the easy part: conj(a)/a, then times its q^2-Frobenius.
 * The result lies in the cyclotomic subgroup (unitary: inverse = conjugate). */
static inline void pairing_final_exp_easy(fq12_t *o, const fq12_t *a)
{
    fq12_t t0, t1;
    fq12_inv(&t0, a);
    fq12_conj(&t1, a);
    fq12_mul(&t0, &t1, &t0);
    fq12_frobenius(&t1, &t0, 2);
    fq12_mul(o, &t1, &t0);
}

/* Hard part. Both chains raise to a fixed multiple c of (q^4 - q^2 + 1)/r with c coprime to r,
 * c = PAIRING_SNARKJS_POW_L, exactly as snarkjs/ffjavascript (wasmcurves) do, so pairing()
 * reproduces snarkjs's vk_alphabeta_12 bit for bit.
 * BN254: Fuentes-Castaneda, Knapp, Rodriguez-Henriquez, "Faster hashing to G2", SAC 2011
 *   (c = 2u(6u^2+3u+1)): 3 exponentiations by u, 3 Frobenius, ~13 mul.
 * BLS12-381: Hayashida, Hayasaka, Teruya, "Efficient final exponentiation via cyclotomic
 *   structure for pairings over families of elliptic curves", 2020 (c = 3):
 *   5 exponentiations by x, 3 Frobenius. */
static inline void pairing_final_exp_hard(fq12_t *o, const fq12_t *f)
{
#if CURVE_IS_BN254
    fq12_t a, b, c, d, e, g, h, i, j, k, l, m, n, t;
    fq12_cyclotomic_exp_param(&a, f); /* f^u */
    fq12_conj(&a, &a);                /* A = f^-u */
    fq12_cyclotomic_sqr(&b, &a);      /* B = A^2 */
    fq12_cyclotomic_sqr(&c, &b);      /* C = B^2 */
    fq12_mul(&d, &c, &b);             /* D = C B */
    fq12_cyclotomic_exp_param(&e, &d);
    fq12_conj(&e, &e); /* E = D^-u */
    fq12_cyclotomic_sqr(&g, &e);      /* F = E^2 */
    fq12_cyclotomic_exp_param(&g, &g);
    fq12_conj(&g, &g);                /* G = F^-u */
    fq12_conj(&h, &d);                /* H = D^-1 */
    fq12_conj(&i, &g);                /* I = G^-1 */
    fq12_mul(&j, &i, &e);             /* J = I E */
    fq12_mul(&k, &j, &h);             /* K = J H */
    fq12_mul(&l, &k, &b);             /* L = K B */
    fq12_mul(&m, &k, &e);             /* M = K E */
    fq12_mul(&n, &m, f);              /* N = M f */
    fq12_frobenius(&t, &l, 1);        /* O = L^q */
    fq12_mul(&n, &t, &n);             /* P = O N */
    fq12_frobenius(&t, &k, 2);        /* Q = K^(q^2) */
    fq12_mul(&n, &t, &n);             /* R = Q P */
    fq12_conj(&t, f);                 /* S = f^-1 */
    fq12_mul(&t, &t, &l);             /* T = S L */
    fq12_frobenius(&t, &t, 3);        /* U = T^(q^3) */
    fq12_mul(o, &t, &n);              /* V = U R */
#else
    fq12_t t0, t1, t2, t3, t4, t5, t6;
    t2 = *f;
    fq12_cyclotomic_sqr(&t1, &t2);
    fq12_conj(&t1, &t1);
    fq12_cyclotomic_exp_param(&t3, &t2);
    fq12_cyclotomic_sqr(&t4, &t3);
    fq12_mul(&t5, &t1, &t3);
    fq12_cyclotomic_exp_param(&t1, &t5);
    fq12_cyclotomic_exp_param(&t0, &t1);
    fq12_cyclotomic_exp_param(&t6, &t0);
    fq12_mul(&t6, &t6, &t4);
    fq12_cyclotomic_exp_param(&t4, &t6);
    fq12_conj(&t5, &t5);
    fq12_mul(&t4, &t4, &t5);
    fq12_mul(&t4, &t4, &t2);
    fq12_conj(&t5, &t2);
    fq12_mul(&t1, &t1, &t2);
    fq12_frobenius(&t1, &t1, 3);
    fq12_mul(&t6, &t6, &t5);
    fq12_frobenius(&t6, &t6, 1);
    fq12_mul(&t3, &t3, &t0);
    fq12_frobenius(&t3, &t3, 2);
    fq12_mul(&t3, &t3, &t1);
    fq12_mul(&t3, &t3, &t6);
    fq12_mul(o, &t3, &t4);
#endif
}

/* o = a^(c (q^12 - 1)/r), c = PAIRING_SNARKJS_POW_L (see pairing_final_exp_hard) */
static inline void pairing_final_exp(fq12_t *o, const fq12_t *a)
{
    fq12_t t;
    pairing_final_exp_easy(&t, a);
    pairing_final_exp_hard(o, &t);
}

/* Reference: o = a^((q^12 - 1)/r) by plain square-and-multiply over the hard exponent; slow,
 * used by the tests to check the fast chains. */
static inline void pairing_final_exp_canonical(fq12_t *o, const fq12_t *a)
{
    static const uint64_t hard[FINAL_EXP_HARD_LIMBS] = FINAL_EXP_HARD_L;
    fq12_t t;
    pairing_final_exp_easy(&t, a);
    fq12_pow(o, &t, hard, FINAL_EXP_HARD_LIMBS);
}

static inline void pairing(fq12_t *o, const g1_aff_t *p, const g2_aff_t *q)
{
    fq12_t f;
    pairing_miller_loop(&f, p, q);
    pairing_final_exp(o, &f);
}

/* true when prod_i e(p[i], q[i]) == 1: one final exponentiation for all pairs */
static inline bool pairing_product_is_one(const g1_aff_t *p, const g2_aff_t *q, size_t n)
{
    fq12_t f, t;
    fq12_set_one(&f);
    for (size_t i = 0; i < n; i++) {
        pairing_miller_loop(&t, &p[i], &q[i]);
        fq12_mul(&f, &f, &t);
    }
    pairing_final_exp(&t, &f);
    return fq12_is_one(&t);
}

#endif
