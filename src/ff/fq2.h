/* fq2.h - Fq2 = Fq[u]/(u^2 + 1), the base field of G2 and the bottom of the Fq12 tower.
 * Included by ff/ff.h. Both curves use u^2 = -1 (q = 3 mod 4); the cubic non-residue
 * xi = FQ2_XI_C0 + FQ2_XI_C1*u (9+u for BN254, 1+u for BLS12-381) defines Fq6.
 * Formulas: Devegili, O hEigeartaigh, Scott, Dahab, "Multiplication and Squaring on
 * Pairing-Friendly Fields", 2006 (Karatsuba mul 3M, complex squaring 2M).
 */
#ifndef CUZK_FF_FQ2_H
#define CUZK_FF_FQ2_H

typedef struct fq2_t { fq_t c0, c1; } fq2_t; /* c0 + c1*u */

static inline void fq2_set_zero(fq2_t *o)
{
    fq_set_zero(&o->c0);
    fq_set_zero(&o->c1);
}

static inline void fq2_set_one(fq2_t *o)
{
    fq_set_one(&o->c0);
    fq_set_zero(&o->c1);
}

static inline bool fq2_is_zero(const fq2_t *a)
{
    return fq_is_zero(&a->c0) & fq_is_zero(&a->c1);
}

static inline bool fq2_is_one(const fq2_t *a)
{
    return fq_is_one(&a->c0) & fq_is_zero(&a->c1);
}

static inline bool fq2_eq(const fq2_t *a, const fq2_t *b)
{
    return fq_eq(&a->c0, &b->c0) & fq_eq(&a->c1, &b->c1);
}

static inline void fq2_add(fq2_t *o, const fq2_t *a, const fq2_t *b)
{
    fq_add(&o->c0, &a->c0, &b->c0);
    fq_add(&o->c1, &a->c1, &b->c1);
}

static inline void fq2_sub(fq2_t *o, const fq2_t *a, const fq2_t *b)
{
    fq_sub(&o->c0, &a->c0, &b->c0);
    fq_sub(&o->c1, &a->c1, &b->c1);
}

static inline void fq2_dbl(fq2_t *o, const fq2_t *a)
{
    fq_dbl(&o->c0, &a->c0);
    fq_dbl(&o->c1, &a->c1);
}

static inline void fq2_neg(fq2_t *o, const fq2_t *a)
{
    fq_neg(&o->c0, &a->c0);
    fq_neg(&o->c1, &a->c1);
}

/* o = conjugate(a) = a^q */
static inline void fq2_conj(fq2_t *o, const fq2_t *a)
{
    o->c0 = a->c0;
    fq_neg(&o->c1, &a->c1);
}

/* Karatsuba: (a0 + a1 u)(b0 + b1 u) = (a0b0 - a1b1) + ((a0+a1)(b0+b1) - a0b0 - a1b1) u. 3M */
static inline void fq2_mul(fq2_t *o, const fq2_t *a, const fq2_t *b)
{
    fq_t v0, v1, s, t;
    fq_mul(&v0, &a->c0, &b->c0);
    fq_mul(&v1, &a->c1, &b->c1);
    fq_add(&s, &a->c0, &a->c1);
    fq_add(&t, &b->c0, &b->c1);
    fq_mul(&s, &s, &t);
    fq_sub(&o->c0, &v0, &v1);
    fq_add(&t, &v0, &v1);
    fq_sub(&o->c1, &s, &t);
}

/* complex squaring: (a0 + a1 u)^2 = (a0+a1)(a0-a1) + 2 a0 a1 u. 2M */
static inline void fq2_sqr(fq2_t *o, const fq2_t *a)
{
    fq_t s, d, m;
    fq_add(&s, &a->c0, &a->c1);
    fq_sub(&d, &a->c0, &a->c1);
    fq_mul(&m, &a->c0, &a->c1);
    fq_mul(&o->c0, &s, &d);
    fq_dbl(&o->c1, &m);
}

/* o = a * b with b in Fq */
static inline void fq2_mul_fq(fq2_t *o, const fq2_t *a, const fq_t *b)
{
    fq_mul(&o->c0, &a->c0, b);
    fq_mul(&o->c1, &a->c1, b);
}

/* o = a^-1 = conj(a) / (a0^2 + a1^2); 0 maps to 0 */
static inline void fq2_inv(fq2_t *o, const fq2_t *a)
{
    fq_t t0, t1;
    fq_sqr(&t0, &a->c0);
    fq_sqr(&t1, &a->c1);
    fq_add(&t0, &t0, &t1);
    fq_inv(&t0, &t0);
    fq_mul(&o->c0, &a->c0, &t0);
    fq_mul(&t1, &a->c1, &t0);
    fq_neg(&o->c1, &t1);
}

/* o = k*a for a small constant k (add chain) */
static inline void fq_mul_small(fq_t *o, const fq_t *a, unsigned k)
{
    fq_t acc, b = *a;
    fq_set_zero(&acc);
    while (k) {
        if (k & 1)
            fq_add(&acc, &acc, &b);
        k >>= 1;
        if (k)
            fq_dbl(&b, &b);
    }
    *o = acc;
}

/* o = xi * a, xi = FQ2_XI_C0 + FQ2_XI_C1 u:
 * (a0 + a1 u)(x0 + x1 u) = (x0 a0 - x1 a1) + (x0 a1 + x1 a0) u, x0, x1 small. */
static inline void fq2_mul_by_nonresidue(fq2_t *o, const fq2_t *a)
{
    fq_t t0, t1, u0, u1;
#if FQ2_XI_C0 == 1
    t0 = a->c0;
    t1 = a->c1;
#else
    fq_mul_small(&t0, &a->c0, FQ2_XI_C0);
    fq_mul_small(&t1, &a->c1, FQ2_XI_C0);
#endif
#if FQ2_XI_C1 == 1
    u0 = a->c0;
    u1 = a->c1;
#else
    fq_mul_small(&u0, &a->c0, FQ2_XI_C1);
    fq_mul_small(&u1, &a->c1, FQ2_XI_C1);
#endif
    fq_sub(&o->c0, &t0, &u1);
    fq_add(&o->c1, &t1, &u0);
}

/* o = a^(q^power): conjugation for odd powers */
static inline void fq2_frobenius(fq2_t *o, const fq2_t *a, unsigned power)
{
    if (power & 1)
        fq2_conj(o, a);
    else
        *o = *a;
}

static inline void fq2_pow(fq2_t *o, const fq2_t *a, const uint64_t *e, size_t nlimbs)
{
    fq2_t r, b = *a;
    fq2_set_one(&r);
    for (size_t i = nlimbs; i-- > 0;)
        for (int j = 63; j >= 0; j--) {
            fq2_sqr(&r, &r);
            if ((e[i] >> j) & 1)
                fq2_mul(&r, &r, &b);
        }
    *o = r;
}

/* o = sqrt(a) in Fq2 and true when a is a square (complex method for q = 3 mod 4:
 * Adj, Rodriguez-Henriquez, "Square root computation over even extension fields", alg. 9). */
static inline bool fq2_sqrt(fq2_t *o, const fq2_t *a)
{
    static const uint64_t e1[FQ_LIMBS] = FQ_SQRT_EXP_L; /* (q+1)/4 */
    uint64_t e3[FQ_LIMBS];                              /* (q-3)/4 = (q+1)/4 - 1 */
    for (int i = 0; i < FQ_LIMBS; i++)
        e3[i] = e1[i];
    e3[0] -= 1; /* (q+1)/4 is odd-or-even but never has low limb 0 for these q */
    fq2_t a1, alpha, x0, t;
    fq2_pow(&a1, a, e3, FQ_LIMBS);
    fq2_mul(&x0, &a1, a);     /* a^((q+1)/4) */
    fq2_mul(&alpha, &a1, &x0); /* a^((q-1)/2) */
    fq2_t minus_one;
    fq2_set_one(&minus_one);
    fq2_neg(&minus_one, &minus_one);
    if (fq2_eq(&alpha, &minus_one)) {
        /* x = u * x0 */
        fq_t c0 = x0.c0;
        fq_neg(&t.c0, &x0.c1);
        t.c1 = c0;
    } else {
        /* b = (1 + alpha)^((q-1)/2), x = b * x0 */
        static const uint64_t eh[FQ_LIMBS] = FQ_LEGENDRE_EXP_L;
        fq2_t b1, one;
        fq2_set_one(&one);
        fq2_add(&b1, &alpha, &one);
        fq2_pow(&b1, &b1, eh, FQ_LIMBS);
        fq2_mul(&t, &b1, &x0);
    }
    fq2_t c;
    fq2_sqr(&c, &t);
    *o = t;
    return fq2_eq(&c, a);
}

#endif
