/* ec_template.h - one short-Weierstrass group y^2 = x^3 + b (a = 0), written once.
 *
 * Included by ec/ec.h for G1 (over Fq) and G2 (over Fq2, the twist) with:
 *   EC      name prefix (g1 / g2)       BF      base field prefix (fq / fq2)
 *   B_T     base field element type     EC_B    curve b (B_T, Montgomery)
 *   EC_B3   3b (B_T)                    EC_GEN  generator (affine initializer)
 *   EC_COFACTOR_ONE  1 when every curve point is in the prime-order subgroup
 * and undefines them at the end.
 *
 * Forms: affine {x, y} (all-zero = infinity, the zkey convention), Jacobian {x, y, z}
 * (x = X/Z^2, y = Y/Z^3, Z = 0 infinity), XYZZ {x, y, zz, zzz} (x = X/ZZ, y = Y/ZZZ,
 * ZZ^3 = ZZZ^2, ZZ = 0 infinity) and, internally for the constant-time ladder, homogeneous
 * projective {x, y, z} with the complete formulas of Renes, Costello, Batina 2016.
 * Formula names and costs refer to the Explicit-Formulas Database (EFD,
 * https://hyperelliptic.org/EFD/g1p/auto-shortw-jacobian-0.html and
 * .../auto-shortw-xyzz.html); M = base field mul, S = square.
 * Everything except *_mul_ct is variable time: it handles public data (bases, proofs).
 */
#define EC_CAT2(a, b) a##_##b
#define EC_CAT(a, b) EC_CAT2(a, b)
#define EC_FN(x) EC_CAT(EC, x)
#define BF_FN(x) EC_CAT(BF, x)
#define AFF_T EC_CAT(EC, aff_t)
#define JAC_T EC_CAT(EC, jac_t)
#define XYZZ_T EC_CAT(EC, xyzz_t)
#define PROJ_T EC_CAT(EC, proj_t)

typedef struct AFF_T { B_T x, y; } AFF_T;             /* all-zero = infinity */
typedef struct JAC_T { B_T x, y, z; } JAC_T;          /* z = 0: infinity */
typedef struct XYZZ_T { B_T x, y, zz, zzz; } XYZZ_T;  /* zz = 0: infinity */
typedef struct PROJ_T { B_T x, y, z; } PROJ_T;        /* (0:1:0) infinity */

/* ---------------------------------------------------------------- affine */

static inline bool EC_FN(aff_is_inf)(const AFF_T *p)
{
    return BF_FN(is_zero)(&p->x) & BF_FN(is_zero)(&p->y);
}

static inline void EC_FN(aff_set_inf)(AFF_T *o)
{
    BF_FN(set_zero)(&o->x);
    BF_FN(set_zero)(&o->y);
}

static inline void EC_FN(generator)(AFF_T *o)
{
    static const AFF_T g = EC_GEN;
    *o = g;
}

/* y^2 == x^3 + b; infinity counts as on the curve */
static inline bool EC_FN(aff_on_curve)(const AFF_T *p)
{
    if (EC_FN(aff_is_inf)(p))
        return true;
    static const B_T b = EC_B;
    B_T l, r;
    BF_FN(sqr)(&l, &p->y);
    BF_FN(sqr)(&r, &p->x);
    BF_FN(mul)(&r, &r, &p->x);
    BF_FN(add)(&r, &r, &b);
    return BF_FN(eq)(&l, &r);
}

static inline void EC_FN(aff_neg)(AFF_T *o, const AFF_T *p)
{
    o->x = p->x;
    BF_FN(neg)(&o->y, &p->y); /* -0 = 0 keeps infinity all-zero */
}

static inline bool EC_FN(aff_eq)(const AFF_T *a, const AFF_T *b)
{
    return BF_FN(eq)(&a->x, &b->x) & BF_FN(eq)(&a->y, &b->y);
}

/* ---------------------------------------------------------------- Jacobian */

static inline void EC_FN(jac_set_inf)(JAC_T *o)
{
    BF_FN(set_one)(&o->x);
    BF_FN(set_one)(&o->y);
    BF_FN(set_zero)(&o->z);
}

static inline bool EC_FN(jac_is_inf)(const JAC_T *p)
{
    return BF_FN(is_zero)(&p->z);
}

static inline void EC_FN(jac_from_aff)(JAC_T *o, const AFF_T *p)
{
    if (EC_FN(aff_is_inf)(p)) {
        EC_FN(jac_set_inf)(o);
        return;
    }
    o->x = p->x;
    o->y = p->y;
    BF_FN(set_one)(&o->z);
}

/* x = X/Z^2, y = Y/Z^3: 1 inversion + 3M + 1S */
static inline void EC_FN(jac_to_aff)(AFF_T *o, const JAC_T *p)
{
    if (EC_FN(jac_is_inf)(p)) {
        EC_FN(aff_set_inf)(o);
        return;
    }
    B_T zi, zi2;
    BF_FN(inv)(&zi, &p->z);
    BF_FN(sqr)(&zi2, &zi);
    BF_FN(mul)(&zi, &zi, &zi2);
    BF_FN(mul)(&o->x, &p->x, &zi2);
    BF_FN(mul)(&o->y, &p->y, &zi);
}

static inline void EC_FN(jac_neg)(JAC_T *o, const JAC_T *p)
{
    o->x = p->x;
    BF_FN(neg)(&o->y, &p->y);
    o->z = p->z;
}

/* projective equality: X1 Z2^2 == X2 Z1^2 and Y1 Z2^3 == Y2 Z1^3 */
static inline bool EC_FN(jac_eq)(const JAC_T *a, const JAC_T *b)
{
    bool ia = EC_FN(jac_is_inf)(a), ib = EC_FN(jac_is_inf)(b);
    if (ia || ib)
        return ia == ib;
    B_T z1z1, z2z2, u1, u2, s1, s2;
    BF_FN(sqr)(&z1z1, &a->z);
    BF_FN(sqr)(&z2z2, &b->z);
    BF_FN(mul)(&u1, &a->x, &z2z2);
    BF_FN(mul)(&u2, &b->x, &z1z1);
    BF_FN(mul)(&s1, &a->y, &z2z2);
    BF_FN(mul)(&s1, &s1, &b->z);
    BF_FN(mul)(&s2, &b->y, &z1z1);
    BF_FN(mul)(&s2, &s2, &a->z);
    return BF_FN(eq)(&u1, &u2) & BF_FN(eq)(&s1, &s2);
}

/* dbl-2009-l (a = 0): 2M + 5S.
 * A = X^2, B = Y^2, C = B^2, D = 2((X+B)^2 - A - C), E = 3A, F = E^2,
 * X3 = F - 2D, Y3 = E(D - X3) - 8C, Z3 = 2YZ. */
static inline void EC_FN(jac_dbl)(JAC_T *o, const JAC_T *p)
{
    B_T A, B, C, D, E, F, t;
    BF_FN(sqr)(&A, &p->x);
    BF_FN(sqr)(&B, &p->y);
    BF_FN(sqr)(&C, &B);
    BF_FN(add)(&D, &p->x, &B);
    BF_FN(sqr)(&D, &D);
    BF_FN(sub)(&D, &D, &A);
    BF_FN(sub)(&D, &D, &C);
    BF_FN(dbl)(&D, &D);
    BF_FN(dbl)(&E, &A);
    BF_FN(add)(&E, &E, &A);
    BF_FN(sqr)(&F, &E);
    BF_FN(mul)(&o->z, &p->y, &p->z); /* Y, Z read before X, Y are written */
    BF_FN(dbl)(&o->z, &o->z);
    BF_FN(dbl)(&t, &D);
    BF_FN(sub)(&o->x, &F, &t);
    BF_FN(sub)(&t, &D, &o->x);
    BF_FN(mul)(&t, &E, &t);
    BF_FN(dbl)(&C, &C);
    BF_FN(dbl)(&C, &C);
    BF_FN(dbl)(&C, &C);
    BF_FN(sub)(&o->y, &t, &C);
}

/* add-2007-bl: 11M + 5S, with the exceptional cases (infinity, P == Q, P == -Q).
 * Z1Z1 = Z1^2, Z2Z2 = Z2^2, U1 = X1 Z2Z2, U2 = X2 Z1Z1, S1 = Y1 Z2 Z2Z2, S2 = Y2 Z1 Z1Z1,
 * H = U2 - U1, I = (2H)^2, J = H I, r = 2(S2 - S1), V = U1 I,
 * X3 = r^2 - J - 2V, Y3 = r(V - X3) - 2 S1 J, Z3 = ((Z1+Z2)^2 - Z1Z1 - Z2Z2) H. */
static inline void EC_FN(jac_add)(JAC_T *o, const JAC_T *a, const JAC_T *b)
{
    if (EC_FN(jac_is_inf)(a)) {
        *o = *b;
        return;
    }
    if (EC_FN(jac_is_inf)(b)) {
        *o = *a;
        return;
    }
    B_T z1z1, z2z2, u1, u2, s1, s2, h, i, j, r, v, t;
    BF_FN(sqr)(&z1z1, &a->z);
    BF_FN(sqr)(&z2z2, &b->z);
    BF_FN(mul)(&u1, &a->x, &z2z2);
    BF_FN(mul)(&u2, &b->x, &z1z1);
    BF_FN(mul)(&s1, &a->y, &b->z);
    BF_FN(mul)(&s1, &s1, &z2z2);
    BF_FN(mul)(&s2, &b->y, &a->z);
    BF_FN(mul)(&s2, &s2, &z1z1);
    BF_FN(sub)(&h, &u2, &u1);
    BF_FN(sub)(&r, &s2, &s1);
    if (BF_FN(is_zero)(&h)) {
        if (BF_FN(is_zero)(&r)) {
            EC_FN(jac_dbl)(o, a);
        } else {
            EC_FN(jac_set_inf)(o);
        }
        return;
    }
    BF_FN(dbl)(&r, &r);
    BF_FN(dbl)(&i, &h);
    BF_FN(sqr)(&i, &i);
    BF_FN(mul)(&j, &h, &i);
    BF_FN(mul)(&v, &u1, &i);
    BF_FN(add)(&t, &a->z, &b->z);
    BF_FN(sqr)(&t, &t);
    BF_FN(sub)(&t, &t, &z1z1);
    BF_FN(sub)(&t, &t, &z2z2);
    BF_FN(mul)(&o->z, &t, &h);
    BF_FN(sqr)(&o->x, &r);
    BF_FN(sub)(&o->x, &o->x, &j);
    BF_FN(sub)(&o->x, &o->x, &v);
    BF_FN(sub)(&o->x, &o->x, &v);
    BF_FN(sub)(&t, &v, &o->x);
    BF_FN(mul)(&t, &r, &t);
    BF_FN(mul)(&s1, &s1, &j);
    BF_FN(dbl)(&s1, &s1);
    BF_FN(sub)(&o->y, &t, &s1);
}

/* madd-2007-bl (mixed, Z2 = 1): 7M + 4S, with the exceptional cases.
 * Z1Z1 = Z1^2, U2 = X2 Z1Z1, S2 = Y2 Z1 Z1Z1, H = U2 - X1, HH = H^2, I = 4HH, J = H I,
 * r = 2(S2 - Y1), V = X1 I, X3 = r^2 - J - 2V, Y3 = r(V - X3) - 2 Y1 J,
 * Z3 = (Z1+H)^2 - Z1Z1 - HH. */
static inline void EC_FN(jac_add_aff)(JAC_T *o, const JAC_T *a, const AFF_T *p)
{
    if (EC_FN(aff_is_inf)(p)) {
        *o = *a;
        return;
    }
    if (EC_FN(jac_is_inf)(a)) {
        EC_FN(jac_from_aff)(o, p);
        return;
    }
    B_T z1z1, u2, s2, h, hh, i, j, r, v, t, yj;
    BF_FN(sqr)(&z1z1, &a->z);
    BF_FN(mul)(&u2, &p->x, &z1z1);
    BF_FN(mul)(&s2, &p->y, &a->z);
    BF_FN(mul)(&s2, &s2, &z1z1);
    BF_FN(sub)(&h, &u2, &a->x);
    BF_FN(sub)(&r, &s2, &a->y);
    if (BF_FN(is_zero)(&h)) {
        if (BF_FN(is_zero)(&r)) {
            EC_FN(jac_dbl)(o, a);
        } else {
            EC_FN(jac_set_inf)(o);
        }
        return;
    }
    BF_FN(dbl)(&r, &r);
    BF_FN(sqr)(&hh, &h);
    BF_FN(dbl)(&i, &hh);
    BF_FN(dbl)(&i, &i);
    BF_FN(mul)(&j, &h, &i);
    BF_FN(mul)(&v, &a->x, &i);
    BF_FN(mul)(&yj, &a->y, &j); /* all reads of a happen before o (which may alias a) is written */
    BF_FN(add)(&t, &a->z, &h);
    BF_FN(sqr)(&t, &t);
    BF_FN(sub)(&t, &t, &z1z1);
    BF_FN(sub)(&o->z, &t, &hh);
    BF_FN(sqr)(&o->x, &r);
    BF_FN(sub)(&o->x, &o->x, &j);
    BF_FN(sub)(&o->x, &o->x, &v);
    BF_FN(sub)(&o->x, &o->x, &v);
    BF_FN(sub)(&t, &v, &o->x);
    BF_FN(mul)(&t, &r, &t);
    BF_FN(dbl)(&yj, &yj);
    BF_FN(sub)(&o->y, &t, &yj);
}

/* ---------------------------------------------------------------- XYZZ */

static inline void EC_FN(xyzz_set_inf)(XYZZ_T *o)
{
    BF_FN(set_one)(&o->x);
    BF_FN(set_one)(&o->y);
    BF_FN(set_zero)(&o->zz);
    BF_FN(set_zero)(&o->zzz);
}

static inline bool EC_FN(xyzz_is_inf)(const XYZZ_T *p)
{
    return BF_FN(is_zero)(&p->zz);
}

static inline void EC_FN(xyzz_from_aff)(XYZZ_T *o, const AFF_T *p)
{
    if (EC_FN(aff_is_inf)(p)) {
        EC_FN(xyzz_set_inf)(o);
        return;
    }
    o->x = p->x;
    o->y = p->y;
    BF_FN(set_one)(&o->zz);
    BF_FN(set_one)(&o->zzz);
}

/* dbl-2008-s-1 (a = 0): 6M + 3S.
 * U = 2Y1, V = U^2, W = U V, S = X1 V, M = 3 X1^2, X3 = M^2 - 2S, Y3 = M(S - X3) - W Y1,
 * ZZ3 = V ZZ1, ZZZ3 = W ZZZ1. */
static inline void EC_FN(xyzz_dbl)(XYZZ_T *o, const XYZZ_T *p)
{
    B_T u, v, w, s, m, t;
    BF_FN(dbl)(&u, &p->y);
    BF_FN(sqr)(&v, &u);
    BF_FN(mul)(&w, &u, &v);
    BF_FN(mul)(&s, &p->x, &v);
    BF_FN(sqr)(&m, &p->x);
    BF_FN(dbl)(&t, &m);
    BF_FN(add)(&m, &m, &t);
    BF_FN(mul)(&o->zz, &p->zz, &v);
    BF_FN(mul)(&o->zzz, &p->zzz, &w);
    BF_FN(mul)(&w, &w, &p->y);
    BF_FN(sqr)(&o->x, &m);
    BF_FN(dbl)(&t, &s);
    BF_FN(sub)(&o->x, &o->x, &t);
    BF_FN(sub)(&t, &s, &o->x);
    BF_FN(mul)(&t, &m, &t);
    BF_FN(sub)(&o->y, &t, &w);
}

/* madd-2008-s (mixed, affine p): 8M + 2S, with the exceptional cases.
 * P = X2 ZZ1 - X1, R = Y2 ZZZ1 - Y1, PP = P^2, PPP = P PP, Q = X1 PP,
 * X3 = R^2 - PPP - 2Q, Y3 = R(Q - X3) - Y1 PPP, ZZ3 = ZZ1 PP, ZZZ3 = ZZZ1 PPP. */
static inline void EC_FN(xyzz_add_aff)(XYZZ_T *o, const XYZZ_T *a, const AFF_T *p)
{
    if (EC_FN(aff_is_inf)(p)) {
        *o = *a;
        return;
    }
    if (EC_FN(xyzz_is_inf)(a)) {
        EC_FN(xyzz_from_aff)(o, p);
        return;
    }
    B_T P, R, pp, ppp, q, t, yp;
    BF_FN(mul)(&P, &p->x, &a->zz);
    BF_FN(sub)(&P, &P, &a->x);
    BF_FN(mul)(&R, &p->y, &a->zzz);
    BF_FN(sub)(&R, &R, &a->y);
    if (BF_FN(is_zero)(&P)) {
        if (BF_FN(is_zero)(&R)) {
            XYZZ_T d;
            EC_FN(xyzz_from_aff)(&d, p);
            EC_FN(xyzz_dbl)(o, &d);
        } else {
            EC_FN(xyzz_set_inf)(o);
        }
        return;
    }
    BF_FN(sqr)(&pp, &P);
    BF_FN(mul)(&ppp, &P, &pp);
    BF_FN(mul)(&q, &a->x, &pp);
    BF_FN(mul)(&yp, &a->y, &ppp); /* Y1 PPP; all reads of a before o (may alias a) is written */
    BF_FN(mul)(&o->zz, &a->zz, &pp);
    BF_FN(mul)(&o->zzz, &a->zzz, &ppp);
    BF_FN(sqr)(&t, &R);
    BF_FN(sub)(&t, &t, &ppp);
    BF_FN(sub)(&t, &t, &q);
    BF_FN(sub)(&o->x, &t, &q);
    BF_FN(sub)(&t, &q, &o->x);
    BF_FN(mul)(&t, &R, &t);
    BF_FN(sub)(&o->y, &t, &yp);
}

/* add-2008-s: 12M + 2S, with the exceptional cases.
 * U1 = X1 ZZ2, U2 = X2 ZZ1, S1 = Y1 ZZZ2, S2 = Y2 ZZZ1, P = U2 - U1, R = S2 - S1,
 * PP = P^2, PPP = P PP, Q = U1 PP, X3 = R^2 - PPP - 2Q, Y3 = R(Q - X3) - S1 PPP,
 * ZZ3 = ZZ1 ZZ2 PP, ZZZ3 = ZZZ1 ZZZ2 PPP. */
static inline void EC_FN(xyzz_add)(XYZZ_T *o, const XYZZ_T *a, const XYZZ_T *b)
{
    if (EC_FN(xyzz_is_inf)(a)) {
        *o = *b;
        return;
    }
    if (EC_FN(xyzz_is_inf)(b)) {
        *o = *a;
        return;
    }
    B_T u1, u2, s1, s2, P, R, pp, ppp, q, t;
    BF_FN(mul)(&u1, &a->x, &b->zz);
    BF_FN(mul)(&u2, &b->x, &a->zz);
    BF_FN(mul)(&s1, &a->y, &b->zzz);
    BF_FN(mul)(&s2, &b->y, &a->zzz);
    BF_FN(sub)(&P, &u2, &u1);
    BF_FN(sub)(&R, &s2, &s1);
    if (BF_FN(is_zero)(&P)) {
        if (BF_FN(is_zero)(&R)) {
            EC_FN(xyzz_dbl)(o, a);
        } else {
            EC_FN(xyzz_set_inf)(o);
        }
        return;
    }
    BF_FN(sqr)(&pp, &P);
    BF_FN(mul)(&ppp, &P, &pp);
    BF_FN(mul)(&q, &u1, &pp);
    BF_FN(mul)(&t, &a->zz, &b->zz);
    BF_FN(mul)(&o->zz, &t, &pp);
    BF_FN(mul)(&t, &a->zzz, &b->zzz);
    BF_FN(mul)(&o->zzz, &t, &ppp);
    BF_FN(mul)(&s1, &s1, &ppp);
    BF_FN(sqr)(&t, &R);
    BF_FN(sub)(&t, &t, &ppp);
    BF_FN(sub)(&t, &t, &q);
    BF_FN(sub)(&o->x, &t, &q);
    BF_FN(sub)(&t, &q, &o->x);
    BF_FN(mul)(&t, &R, &t);
    BF_FN(sub)(&o->y, &t, &s1);
}

/* XYZZ -> Jacobian without inversion: with Z = ZZZ, X = x Z^2 = X1 ZZ1^2 and
 * Y = y Z^3 = Y1 ZZZ1^2 (since ZZZ^2 = ZZ^3). 2M + 2S. */
static inline void EC_FN(xyzz_to_jac)(JAC_T *o, const XYZZ_T *a)
{
    if (EC_FN(xyzz_is_inf)(a)) {
        EC_FN(jac_set_inf)(o);
        return;
    }
    B_T t, zzz = a->zzz;
    BF_FN(sqr)(&t, &a->zz);
    BF_FN(mul)(&o->x, &a->x, &t);
    BF_FN(sqr)(&t, &zzz);
    BF_FN(mul)(&o->y, &a->y, &t);
    o->z = zzz;
}

/* ---------------------------------------------------------------- batch to affine */

/* o[i] = affine(p[i]) for i < n with one inversion (Montgomery's trick). The prefix
 * products are parked in o[i].x, so no scratch is needed; o must not overlap p. */
static inline void EC_FN(batch_to_aff)(AFF_T *o, const JAC_T *p, size_t n)
{
    B_T acc, zi, zi2, t;
    BF_FN(set_one)(&acc);
    for (size_t i = 0; i < n; i++) {
        o[i].x = acc;
        if (!EC_FN(jac_is_inf)(&p[i]))
            BF_FN(mul)(&acc, &acc, &p[i].z);
    }
    BF_FN(inv)(&acc, &acc);
    for (size_t i = n; i-- > 0;) {
        if (EC_FN(jac_is_inf)(&p[i])) {
            EC_FN(aff_set_inf)(&o[i]);
            continue;
        }
        BF_FN(mul)(&zi, &acc, &o[i].x); /* 1/z_i */
        BF_FN(mul)(&acc, &acc, &p[i].z);
        BF_FN(sqr)(&zi2, &zi);
        BF_FN(mul)(&t, &zi, &zi2);
        BF_FN(mul)(&o[i].x, &p[i].x, &zi2);
        BF_FN(mul)(&o[i].y, &p[i].y, &t);
    }
}

/* ---------------------------------------------------------------- scalar multiplication */

/* o = [k]p, k = 4 little-endian words (std form), variable time: fixed 4-bit windows over a
 * Jacobian table of 1..15 p, zero windows skipped. For public scalars only. */
static inline void EC_FN(jac_mul)(JAC_T *o, const AFF_T *p, const uint64_t k[4])
{
    JAC_T tab[16], acc;
    EC_FN(jac_set_inf)(&tab[0]);
    EC_FN(jac_from_aff)(&tab[1], p);
    for (int i = 2; i < 16; i++)
        EC_FN(jac_add_aff)(&tab[i], &tab[i - 1], p);
    EC_FN(jac_set_inf)(&acc);
    for (int w = 63; w >= 0; w--) {
        if (!EC_FN(jac_is_inf)(&acc))
            for (int j = 0; j < 4; j++)
                EC_FN(jac_dbl)(&acc, &acc);
        unsigned d = (unsigned)(k[w / 16] >> (4 * (w % 16))) & 15;
        if (d)
            EC_FN(jac_add)(&acc, &acc, &tab[d]);
    }
    *o = acc;
}

/* Complete addition for a = 0 in homogeneous projective coordinates (Renes, Costello,
 * Batina, "Complete addition formulas for prime order elliptic curves", 2016, alg. 7):
 * 12M + 2 mul by 3b, valid for every pair of inputs (doubling, infinity), no branches. */
static inline void EC_FN(proj_add)(PROJ_T *o, const PROJ_T *p, const PROJ_T *q)
{
    static const B_T b3 = EC_B3;
    B_T t0, t1, t2, t3, t4, x3, y3, z3;
    BF_FN(mul)(&t0, &p->x, &q->x);
    BF_FN(mul)(&t1, &p->y, &q->y);
    BF_FN(mul)(&t2, &p->z, &q->z);
    BF_FN(add)(&t3, &p->x, &p->y);
    BF_FN(add)(&t4, &q->x, &q->y);
    BF_FN(mul)(&t3, &t3, &t4);
    BF_FN(add)(&t4, &t0, &t1);
    BF_FN(sub)(&t3, &t3, &t4);
    BF_FN(add)(&t4, &p->y, &p->z);
    BF_FN(add)(&x3, &q->y, &q->z);
    BF_FN(mul)(&t4, &t4, &x3);
    BF_FN(add)(&x3, &t1, &t2);
    BF_FN(sub)(&t4, &t4, &x3);
    BF_FN(add)(&x3, &p->x, &p->z);
    BF_FN(add)(&y3, &q->x, &q->z);
    BF_FN(mul)(&x3, &x3, &y3);
    BF_FN(add)(&y3, &t0, &t2);
    BF_FN(sub)(&y3, &x3, &y3);
    BF_FN(dbl)(&x3, &t0);
    BF_FN(add)(&t0, &x3, &t0);
    BF_FN(mul)(&t2, &b3, &t2);
    BF_FN(add)(&z3, &t1, &t2);
    BF_FN(sub)(&t1, &t1, &t2);
    BF_FN(mul)(&y3, &b3, &y3);
    BF_FN(mul)(&x3, &t4, &y3);
    BF_FN(mul)(&t2, &t3, &t1);
    BF_FN(sub)(&x3, &t2, &x3);
    BF_FN(mul)(&y3, &y3, &t0);
    BF_FN(mul)(&t1, &t1, &z3);
    BF_FN(add)(&y3, &t1, &y3);
    BF_FN(mul)(&t0, &t0, &t3);
    BF_FN(mul)(&z3, &z3, &t4);
    BF_FN(add)(&z3, &z3, &t0);
    o->x = x3;
    o->y = y3;
    o->z = z3;
}

/* o = [k]p in constant time (for the blinding scalars r, s): 64 windows of 4 bits, each
 * 4 complete doublings + 1 complete addition of a table entry selected by a full masked
 * scan. No branch or memory index depends on k or on p. */
static inline void EC_FN(jac_mul_ct)(JAC_T *o, const AFF_T *p, const uint64_t k[4])
{
    PROJ_T tab[16], acc, sel;
    BF_FN(set_zero)(&tab[0].x);
    BF_FN(set_one)(&tab[0].y);
    BF_FN(set_zero)(&tab[0].z);
    /* (x, y, 1), or (0:1:0) for the all-zero infinity encoding, selected without a branch */
    uint64_t inf = 0 - (uint64_t)EC_FN(aff_is_inf)(p);
    tab[1].x = p->x;
    tab[1].y = p->y;
    BF_FN(set_one)(&tab[1].z);
    {
        uint64_t *d = (uint64_t *)(void *)&tab[1];
        const uint64_t *s = (const uint64_t *)(const void *)&tab[0];
        for (size_t i = 0; i < sizeof(PROJ_T) / 8; i++)
            d[i] = (d[i] & ~inf) | (s[i] & inf);
    }
    for (int i = 2; i < 16; i++)
        EC_FN(proj_add)(&tab[i], &tab[i - 1], &tab[1]);
    acc = tab[0];
    for (int w = 63; w >= 0; w--) {
        for (int j = 0; j < 4; j++)
            EC_FN(proj_add)(&acc, &acc, &acc);
        uint64_t d = (k[w / 16] >> (4 * (w % 16))) & 15;
        uint64_t *sd = (uint64_t *)(void *)&sel;
        for (size_t i = 0; i < sizeof(PROJ_T) / 8; i++)
            sd[i] = 0;
        for (uint64_t e = 0; e < 16; e++) {
            uint64_t m = 0 - (uint64_t)(((e ^ d) - 1) >> 63); /* all ones iff e == d */
            const uint64_t *td = (const uint64_t *)(const void *)&tab[e];
            for (size_t i = 0; i < sizeof(PROJ_T) / 8; i++)
                sd[i] |= td[i] & m;
        }
        EC_FN(proj_add)(&acc, &acc, &sel);
    }
    /* projective (X:Y:Z) -> Jacobian (XZ, YZ^2, Z); infinity (Z = 0) stays Z = 0 */
    B_T z2;
    BF_FN(sqr)(&z2, &acc.z);
    BF_FN(mul)(&o->x, &acc.x, &acc.z);
    BF_FN(mul)(&o->y, &acc.y, &z2);
    o->z = acc.z;
    if (EC_FN(jac_is_inf)(o))
        EC_FN(jac_set_inf)(o); /* canonical infinity; depends only on the result */
}

/* true when p is in the prime-order subgroup: [r]p == O (or trivially, cofactor 1).
 * Expects a point on the curve. */
static inline bool EC_FN(aff_in_subgroup)(const AFF_T *p)
{
#if EC_COFACTOR_ONE
    (void)p;
    return true;
#else
    if (EC_FN(aff_is_inf)(p))
        return true;
    JAC_T t;
    EC_FN(jac_mul)(&t, p, FR_MODULUS);
    return EC_FN(jac_is_inf)(&t);
#endif
}

#undef EC_CAT2
#undef EC_CAT
#undef EC_FN
#undef BF_FN
#undef AFF_T
#undef JAC_T
#undef XYZZ_T
#undef PROJ_T
#undef EC
#undef BF
#undef B_T
#undef EC_B
#undef EC_B3
#undef EC_GEN
#undef EC_COFACTOR_ONE
