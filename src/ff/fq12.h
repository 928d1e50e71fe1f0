/* fq12.h - Fq6 = Fq2[v]/(v^3 - xi) and Fq12 = Fq6[w]/(w^2 - v), the pairing target field.
 * Included by ff/ff.h. This is the tower snarkjs/ffjavascript uses, so the 12 Fq
 * coefficients of an fq12_t in memory order (c0.c0.c0, c0.c0.c1, c0.c1.c0, ...) are the
 * nesting of vk_alphabeta_12.
 * Formulas: Devegili, O hEigeartaigh, Scott, Dahab 2006 (Karatsuba Fq6 mul 6M~, CH-SQR2
 * squaring); Fq12 is quadratic over Fq6 (Karatsuba 3 Fq6 mul, complex squaring 2 Fq6 mul).
 */
#ifndef CUZK_FF_FQ12_H
#define CUZK_FF_FQ12_H

typedef struct fq6_t { fq2_t c0, c1, c2; } fq6_t;   /* c0 + c1 v + c2 v^2 */
typedef struct fq12_t { fq6_t c0, c1; } fq12_t;      /* c0 + c1 w */

/* FQ12_FROB[k][m] = xi^(m (q^k - 1)/6): (c w^m)^(q^k) = c^(q^k) FQ12_FROB[k][m] w^m */
__attribute__((unused)) static const fq2_t FQ12_FROB[12][6] = FQ12_FROB_L;

/* ---------------------------------------------------------------- Fq6 */

static inline void fq6_set_zero(fq6_t *o)
{
    fq2_set_zero(&o->c0);
    fq2_set_zero(&o->c1);
    fq2_set_zero(&o->c2);
}

static inline void fq6_set_one(fq6_t *o)
{
    fq2_set_one(&o->c0);
    fq2_set_zero(&o->c1);
    fq2_set_zero(&o->c2);
}

static inline bool fq6_is_zero(const fq6_t *a)
{
    return fq2_is_zero(&a->c0) & fq2_is_zero(&a->c1) & fq2_is_zero(&a->c2);
}

static inline bool fq6_eq(const fq6_t *a, const fq6_t *b)
{
    return fq2_eq(&a->c0, &b->c0) & fq2_eq(&a->c1, &b->c1) & fq2_eq(&a->c2, &b->c2);
}

static inline void fq6_add(fq6_t *o, const fq6_t *a, const fq6_t *b)
{
    fq2_add(&o->c0, &a->c0, &b->c0);
    fq2_add(&o->c1, &a->c1, &b->c1);
    fq2_add(&o->c2, &a->c2, &b->c2);
}

static inline void fq6_sub(fq6_t *o, const fq6_t *a, const fq6_t *b)
{
    fq2_sub(&o->c0, &a->c0, &b->c0);
    fq2_sub(&o->c1, &a->c1, &b->c1);
    fq2_sub(&o->c2, &a->c2, &b->c2);
}

static inline void fq6_dbl(fq6_t *o, const fq6_t *a)
{
    fq2_dbl(&o->c0, &a->c0);
    fq2_dbl(&o->c1, &a->c1);
    fq2_dbl(&o->c2, &a->c2);
}

static inline void fq6_neg(fq6_t *o, const fq6_t *a)
{
    fq2_neg(&o->c0, &a->c0);
    fq2_neg(&o->c1, &a->c1);
    fq2_neg(&o->c2, &a->c2);
}

/* o = v * a = xi a2 + a0 v + a1 v^2 */
static inline void fq6_mul_by_nonresidue(fq6_t *o, const fq6_t *a)
{
    fq2_t t;
    fq2_mul_by_nonresidue(&t, &a->c2);
    o->c2 = a->c1;
    o->c1 = a->c0;
    o->c0 = t;
}

/* Karatsuba over the cubic extension, 6 Fq2 muls:
 * c0 = v0 + xi((a1+a2)(b1+b2) - v1 - v2), c1 = (a0+a1)(b0+b1) - v0 - v1 + xi v2,
 * c2 = (a0+a2)(b0+b2) - v0 - v2 + v1, vi = ai bi. */
static inline void fq6_mul(fq6_t *o, const fq6_t *a, const fq6_t *b)
{
    fq2_t v0, v1, v2, s, t, c0, c1, c2;
    fq2_mul(&v0, &a->c0, &b->c0);
    fq2_mul(&v1, &a->c1, &b->c1);
    fq2_mul(&v2, &a->c2, &b->c2);

    fq2_add(&s, &a->c1, &a->c2);
    fq2_add(&t, &b->c1, &b->c2);
    fq2_mul(&s, &s, &t);
    fq2_sub(&s, &s, &v1);
    fq2_sub(&s, &s, &v2);
    fq2_mul_by_nonresidue(&s, &s);
    fq2_add(&c0, &s, &v0);

    fq2_add(&s, &a->c0, &a->c1);
    fq2_add(&t, &b->c0, &b->c1);
    fq2_mul(&s, &s, &t);
    fq2_sub(&s, &s, &v0);
    fq2_sub(&s, &s, &v1);
    fq2_mul_by_nonresidue(&t, &v2);
    fq2_add(&c1, &s, &t);

    fq2_add(&s, &a->c0, &a->c2);
    fq2_add(&t, &b->c0, &b->c2);
    fq2_mul(&s, &s, &t);
    fq2_sub(&s, &s, &v0);
    fq2_sub(&s, &s, &v2);
    fq2_add(&c2, &s, &v1);

    o->c0 = c0;
    o->c1 = c1;
    o->c2 = c2;
}

/* CH-SQR2: s0 = a0^2, s1 = 2 a0 a1, s2 = (a0 - a1 + a2)^2, s3 = 2 a1 a2, s4 = a2^2;
 * c0 = s0 + xi s3, c1 = s1 + xi s4, c2 = s1 + s2 + s3 - s0 - s4. 2M + 3S in Fq2. */
static inline void fq6_sqr(fq6_t *o, const fq6_t *a)
{
    fq2_t s0, s1, s2, s3, s4, t;
    fq2_sqr(&s0, &a->c0);
    fq2_mul(&s1, &a->c0, &a->c1);
    fq2_dbl(&s1, &s1);
    fq2_sub(&s2, &a->c0, &a->c1);
    fq2_add(&s2, &s2, &a->c2);
    fq2_sqr(&s2, &s2);
    fq2_mul(&s3, &a->c1, &a->c2);
    fq2_dbl(&s3, &s3);
    fq2_sqr(&s4, &a->c2);

    fq2_mul_by_nonresidue(&t, &s3);
    fq2_add(&o->c0, &s0, &t);
    fq2_mul_by_nonresidue(&t, &s4);
    fq2_add(&t, &s1, &t);
    fq2_add(&o->c2, &s1, &s2);
    fq2_add(&o->c2, &o->c2, &s3);
    fq2_sub(&o->c2, &o->c2, &s0);
    fq2_sub(&o->c2, &o->c2, &s4);
    o->c1 = t;
}

/* o = a * b with b in Fq2 */
static inline void fq6_mul_fq2(fq6_t *o, const fq6_t *a, const fq2_t *b)
{
    fq2_mul(&o->c0, &a->c0, b);
    fq2_mul(&o->c1, &a->c1, b);
    fq2_mul(&o->c2, &a->c2, b);
}

/* o = a * (b + c v) (sparse, 5 Fq2 mul, Karatsuba):
 * (a0 + a1 v + a2 v^2)(b + c v) = (a0 b + xi a2 c) + (a0 c + a1 b) v + (a1 c + a2 b) v^2 */
static inline void fq6_mul_by_01(fq6_t *o, const fq6_t *a, const fq2_t *b, const fq2_t *c)
{
    fq2_t aa, bb, t0, t1, r0, r1, r2;
    fq2_mul(&aa, &a->c0, b);
    fq2_mul(&bb, &a->c1, c);
    fq2_mul(&t0, &a->c2, c);
    fq2_mul_by_nonresidue(&t0, &t0);
    fq2_add(&r0, &t0, &aa);
    fq2_add(&t0, &a->c0, &a->c1);
    fq2_add(&t1, b, c);
    fq2_mul(&t0, &t0, &t1);
    fq2_sub(&t0, &t0, &aa);
    fq2_sub(&r1, &t0, &bb);
    fq2_mul(&t0, &a->c2, b);
    fq2_add(&r2, &t0, &bb);
    o->c0 = r0;
    o->c1 = r1;
    o->c2 = r2;
}

/* o = a * (c v) (sparse, 3 Fq2 mul): (a0 + a1 v + a2 v^2) c v = xi a2 c + a0 c v + a1 c v^2 */
static inline void fq6_mul_by_1(fq6_t *o, const fq6_t *a, const fq2_t *c)
{
    fq2_t r0, r1, r2;
    fq2_mul(&r0, &a->c2, c);
    fq2_mul_by_nonresidue(&r0, &r0);
    fq2_mul(&r1, &a->c0, c);
    fq2_mul(&r2, &a->c1, c);
    o->c0 = r0;
    o->c1 = r1;
    o->c2 = r2;
}

/* inverse via the norm to Fq2: t0 = a0^2 - xi a1 a2, t1 = xi a2^2 - a0 a1, t2 = a1^2 - a0 a2,
 * d = a0 t0 + xi (a2 t1 + a1 t2), a^-1 = (t0, t1, t2)/d. 0 maps to 0. */
static inline void fq6_inv(fq6_t *o, const fq6_t *a)
{
    fq2_t t0, t1, t2, s, d;
    fq2_sqr(&t0, &a->c0);
    fq2_mul(&s, &a->c1, &a->c2);
    fq2_mul_by_nonresidue(&s, &s);
    fq2_sub(&t0, &t0, &s);

    fq2_sqr(&t1, &a->c2);
    fq2_mul_by_nonresidue(&t1, &t1);
    fq2_mul(&s, &a->c0, &a->c1);
    fq2_sub(&t1, &t1, &s);

    fq2_sqr(&t2, &a->c1);
    fq2_mul(&s, &a->c0, &a->c2);
    fq2_sub(&t2, &t2, &s);

    fq2_mul(&d, &a->c2, &t1);
    fq2_mul(&s, &a->c1, &t2);
    fq2_add(&d, &d, &s);
    fq2_mul_by_nonresidue(&d, &d);
    fq2_mul(&s, &a->c0, &t0);
    fq2_add(&d, &d, &s);
    fq2_inv(&d, &d);

    fq2_mul(&o->c0, &t0, &d);
    fq2_mul(&o->c1, &t1, &d);
    fq2_mul(&o->c2, &t2, &d);
}

/* ---------------------------------------------------------------- Fq12 */

static inline void fq12_set_zero(fq12_t *o)
{
    fq6_set_zero(&o->c0);
    fq6_set_zero(&o->c1);
}

static inline void fq12_set_one(fq12_t *o)
{
    fq6_set_one(&o->c0);
    fq6_set_zero(&o->c1);
}

static inline bool fq12_is_zero(const fq12_t *a)
{
    return fq6_is_zero(&a->c0) & fq6_is_zero(&a->c1);
}

static inline bool fq12_eq(const fq12_t *a, const fq12_t *b)
{
    return fq6_eq(&a->c0, &b->c0) & fq6_eq(&a->c1, &b->c1);
}

static inline bool fq12_is_one(const fq12_t *a)
{
    fq12_t one;
    fq12_set_one(&one);
    return fq12_eq(a, &one);
}

static inline void fq12_add(fq12_t *o, const fq12_t *a, const fq12_t *b)
{
    fq6_add(&o->c0, &a->c0, &b->c0);
    fq6_add(&o->c1, &a->c1, &b->c1);
}

static inline void fq12_sub(fq12_t *o, const fq12_t *a, const fq12_t *b)
{
    fq6_sub(&o->c0, &a->c0, &b->c0);
    fq6_sub(&o->c1, &a->c1, &b->c1);
}

static inline void fq12_dbl(fq12_t *o, const fq12_t *a)
{
    fq6_dbl(&o->c0, &a->c0);
    fq6_dbl(&o->c1, &a->c1);
}

static inline void fq12_neg(fq12_t *o, const fq12_t *a)
{
    fq6_neg(&o->c0, &a->c0);
    fq6_neg(&o->c1, &a->c1);
}

/* o = conj(a) = a^(q^6) = c0 - c1 w; the inverse for unitary elements */
static inline void fq12_conj(fq12_t *o, const fq12_t *a)
{
    o->c0 = a->c0;
    fq6_neg(&o->c1, &a->c1);
}

/* Karatsuba: c0 = a0 b0 + v a1 b1, c1 = (a0+a1)(b0+b1) - a0 b0 - a1 b1. 3 Fq6 mul. */
static inline void fq12_mul(fq12_t *o, const fq12_t *a, const fq12_t *b)
{
    fq6_t v0, v1, s, t;
    fq6_mul(&v0, &a->c0, &b->c0);
    fq6_mul(&v1, &a->c1, &b->c1);
    fq6_add(&s, &a->c0, &a->c1);
    fq6_add(&t, &b->c0, &b->c1);
    fq6_mul(&s, &s, &t);
    fq6_sub(&s, &s, &v0);
    fq6_sub(&o->c1, &s, &v1);
    fq6_mul_by_nonresidue(&v1, &v1);
    fq6_add(&o->c0, &v0, &v1);
}

/* f = f * (a + b w + c v w) (sparse line of a D-type twist, 13 Fq2 mul instead of 18):
 * with l0 = a, l1 = b + c v: f0 l0 + v f1 l1 + ((f0 + f1)(l0 + l1) - f0 l0 - f1 l1) w. */
static inline void fq12_mul_by_034(fq12_t *f, const fq2_t *a, const fq2_t *b, const fq2_t *c)
{
    fq6_t t0, t1, s;
    fq2_t ab;
    fq6_mul_fq2(&t0, &f->c0, a);
    fq6_mul_by_01(&t1, &f->c1, b, c);
    fq6_add(&s, &f->c0, &f->c1);
    fq2_add(&ab, a, b);
    fq6_mul_by_01(&s, &s, &ab, c);
    fq6_sub(&s, &s, &t0);
    fq6_sub(&f->c1, &s, &t1);
    fq6_mul_by_nonresidue(&t1, &t1);
    fq6_add(&f->c0, &t0, &t1);
}

/* f = f * (a + b v + c v w) (sparse line of an M-type twist, 13 Fq2 mul):
 * with l0 = a + b v, l1 = c v: same Karatsuba as fq12_mul_by_034. */
static inline void fq12_mul_by_014(fq12_t *f, const fq2_t *a, const fq2_t *b, const fq2_t *c)
{
    fq6_t t0, t1, s;
    fq2_t bc;
    fq6_mul_by_01(&t0, &f->c0, a, b);
    fq6_mul_by_1(&t1, &f->c1, c);
    fq6_add(&s, &f->c0, &f->c1);
    fq2_add(&bc, b, c);
    fq6_mul_by_01(&s, &s, a, &bc);
    fq6_sub(&s, &s, &t0);
    fq6_sub(&f->c1, &s, &t1);
    fq6_mul_by_nonresidue(&t1, &t1);
    fq6_add(&f->c0, &t0, &t1);
}

/* complex squaring: ab = a0 a1, c0 = (a0 + a1)(a0 + v a1) - ab - v ab, c1 = 2 ab. 2 Fq6 mul. */
static inline void fq12_sqr(fq12_t *o, const fq12_t *a)
{
    fq6_t ab, s, t;
    fq6_mul(&ab, &a->c0, &a->c1);
    fq6_add(&s, &a->c0, &a->c1);
    fq6_mul_by_nonresidue(&t, &a->c1);
    fq6_add(&t, &t, &a->c0);
    fq6_mul(&s, &s, &t);
    fq6_sub(&s, &s, &ab);
    fq6_mul_by_nonresidue(&t, &ab);
    fq6_sub(&o->c0, &s, &t);
    fq6_dbl(&o->c1, &ab);
}

/* o = a^-1 = (a0 - a1 w)/(a0^2 - v a1^2); 0 maps to 0 */
static inline void fq12_inv(fq12_t *o, const fq12_t *a)
{
    fq6_t t0, t1;
    fq6_sqr(&t0, &a->c0);
    fq6_sqr(&t1, &a->c1);
    fq6_mul_by_nonresidue(&t1, &t1);
    fq6_sub(&t0, &t0, &t1);
    fq6_inv(&t0, &t0);
    fq6_mul(&o->c0, &a->c0, &t0);
    fq6_mul(&t1, &a->c1, &t0);
    fq6_neg(&o->c1, &t1);
}

/* o = a^(q^power): conjugate each Fq2 coefficient power times, then scale the coefficient
 * of w^m by xi^(m (q^power - 1)/6). c0 = (w^0, w^2, w^4), c1 = (w^1, w^3, w^5). */
static inline void fq12_frobenius(fq12_t *o, const fq12_t *a, unsigned power)
{
    power %= 12;
    const fq2_t *k = FQ12_FROB[power];
    fq2_frobenius(&o->c0.c0, &a->c0.c0, power);
    fq2_frobenius(&o->c0.c1, &a->c0.c1, power);
    fq2_frobenius(&o->c0.c2, &a->c0.c2, power);
    fq2_frobenius(&o->c1.c0, &a->c1.c0, power);
    fq2_frobenius(&o->c1.c1, &a->c1.c1, power);
    fq2_frobenius(&o->c1.c2, &a->c1.c2, power);
    if (power == 0)
        return;
    fq2_mul(&o->c0.c1, &o->c0.c1, &k[2]);
    fq2_mul(&o->c0.c2, &o->c0.c2, &k[4]);
    fq2_mul(&o->c1.c0, &o->c1.c0, &k[1]);
    fq2_mul(&o->c1.c1, &o->c1.c1, &k[3]);
    fq2_mul(&o->c1.c2, &o->c1.c2, &k[5]);
}

/* o = a^e (e little-endian words), square-and-multiply, variable time in e */
static inline void fq12_pow(fq12_t *o, const fq12_t *a, const uint64_t *e, size_t nlimbs)
{
    fq12_t r, b = *a;
    fq12_set_one(&r);
    for (size_t i = nlimbs; i-- > 0;)
        for (int j = 63; j >= 0; j--) {
            fq12_sqr(&r, &r);
            if ((e[i] >> j) & 1)
                fq12_mul(&r, &r, &b);
        }
    *o = r;
}

/* ---------------------------------------------------------------- cyclotomic subgroup */

/* (a + b y)^2 in Fq4 = Fq2[y]/(y^2 - xi): c0 = a^2 + xi b^2, c1 = (a+b)^2 - a^2 - b^2 */
static inline void fq4_sqr(fq2_t *c0, fq2_t *c1, const fq2_t *a, const fq2_t *b)
{
    fq2_t t0, t1, t2;
    fq2_sqr(&t0, a);
    fq2_sqr(&t1, b);
    fq2_mul_by_nonresidue(&t2, &t1);
    fq2_add(&t2, &t2, &t0);
    fq2_add(c1, a, b);
    fq2_sqr(c1, c1);
    fq2_sub(c1, c1, &t0);
    fq2_sub(c1, c1, &t1);
    *c0 = t2;
}

/* o = a^2 for a in the cyclotomic subgroup (a^(q^6+1)... = 1, e.g. after the easy part of the
 * final exponentiation): Granger, Scott, "Faster squaring in the cyclotomic subgroup of
 * sixth degree extensions", PKC 2010. 3 Fq4 squarings (9 Fq2 sqr) instead of 2 Fq6 muls.
 * With a viewed over Fq4 as (z0 + z1 y, z2 + z3 y, z4 + z5 y) where z0 = c0.c0,
 * z1 = c1.c1, z2 = c1.c0, z3 = c0.c2, z4 = c0.c1, z5 = c1.c2:
 * A' = 3A^2 - 2 conj(A), B' = 3 xi C^2 + 2 conj(B), C' = 3 B^2 - 2 conj(C) in those terms. */
static inline void fq12_cyclotomic_sqr(fq12_t *o, const fq12_t *a)
{
    fq2_t z0 = a->c0.c0, z4 = a->c0.c1, z3 = a->c0.c2;
    fq2_t z2 = a->c1.c0, z1 = a->c1.c1, z5 = a->c1.c2;
    fq2_t t0, t1, t2, t3;
    fq4_sqr(&t0, &t1, &z0, &z1);
    fq2_sub(&z0, &t0, &z0); /* z0 = 3 t0 - 2 z0 */
    fq2_dbl(&z0, &z0);
    fq2_add(&z0, &z0, &t0);
    fq2_add(&z1, &t1, &z1); /* z1 = 3 t1 + 2 z1 */
    fq2_dbl(&z1, &z1);
    fq2_add(&z1, &z1, &t1);
    fq4_sqr(&t0, &t1, &z2, &z3);
    fq4_sqr(&t2, &t3, &z4, &z5);
    fq2_sub(&z4, &t0, &z4); /* z4 = 3 t0 - 2 z4 */
    fq2_dbl(&z4, &z4);
    fq2_add(&z4, &z4, &t0);
    fq2_add(&z5, &t1, &z5); /* z5 = 3 t1 + 2 z5 */
    fq2_dbl(&z5, &z5);
    fq2_add(&z5, &z5, &t1);
    fq2_mul_by_nonresidue(&t0, &t3); /* z2 = 3 xi t3 + 2 z2 */
    fq2_add(&z2, &t0, &z2);
    fq2_dbl(&z2, &z2);
    fq2_add(&z2, &z2, &t0);
    fq2_sub(&z3, &t2, &z3); /* z3 = 3 t2 - 2 z3 */
    fq2_dbl(&z3, &z3);
    fq2_add(&z3, &z3, &t2);
    o->c0.c0 = z0;
    o->c0.c1 = z4;
    o->c0.c2 = z3;
    o->c1.c0 = z2;
    o->c1.c1 = z1;
    o->c1.c2 = z5;
}

/* o = a^CURVE_PARAM (the curve's |u| or |x|, 64 bits) for a in the cyclotomic subgroup,
 * then conjugated (= inverted) when the parameter is negative: o = a^param. */
static inline void fq12_cyclotomic_exp_param(fq12_t *o, const fq12_t *a)
{
    const uint64_t e = CURVE_PARAM;
    fq12_t r = *a;
    int top = 63 - __builtin_clzll(e);
    for (int i = top - 1; i >= 0; i--) {
        fq12_cyclotomic_sqr(&r, &r);
        if ((e >> i) & 1)
            fq12_mul(&r, &r, a);
    }
#if CURVE_PARAM_NEG
    fq12_conj(&r, &r);
#endif
    *o = r;
}

#endif
