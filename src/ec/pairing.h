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
 * Final exponentiation: f^((q^6-1)(q^2+1)) (easy part), then the hard part
 * (q^4 - q^2 + 1)/r. Variable time: all inputs are public.
 */
#ifndef CUZK_EC_PAIRING_H
#define CUZK_EC_PAIRING_H

typedef struct pairing_line { fq2_t a, b, c; } pairing_line; /* sparse coefficients, see top */

/* f = f * line (sparse). D-type: line = a + b w + c v w; M-type: a + b v + c v w. */
static inline void pairing_mul_line(fq12_t *f, const pairing_line *l)
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

/* o = a^((q^12 - 1)/r) */
static inline void pairing_final_exp(fq12_t *o, const fq12_t *a)
{
    static const uint64_t hard[FINAL_EXP_HARD_LIMBS] = FINAL_EXP_HARD_L;
    fq12_t t0, t1;
    /* easy part: a^(q^6 - 1) = conj(a)/a, then ^(q^2 + 1) */
    fq12_inv(&t0, a);
    fq12_conj(&t1, a);
    fq12_mul(&t0, &t1, &t0);
    fq12_frobenius(&t1, &t0, 2);
    fq12_mul(&t0, &t1, &t0);
    /* hard part */
    fq12_pow(o, &t0, hard, FINAL_EXP_HARD_LIMBS);
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
