/* verify_batch_core.h - per-curve part of Groth16 batch verification (verify_batch.c).
 *
 * Included once per curve translation unit (curve_impl.h) after prover_core.h, whose point
 * import it reuses (g1_import, g2_import: coordinates below q, on the curve, in the
 * prime-order subgroup), in the order CURVE_SYM(verify) imports them, so each proof is
 * accepted or refused at import exactly as single verification would.
 *
 * DESIGN. Single verification checks, per proof,
 *     t = e(-A, B) e(L, gamma2) e(C, delta2) e(alpha1, beta2) == 1,  L = IC_0 + sum_j pub_j IC_j.
 * For the m proofs that pass import and weights r_i (uniform in [1, 2^128), drawn by the
 * caller from the OS CSPRNG) this checks prod_i t_i^(r_i) == 1, by bilinearity
 *     prod_i e(-r_i A_i, B_i) * e(sum_i r_i L_i, gamma2) * e(sum_i r_i C_i, delta2)
 *       * e((sum_i r_i) alpha1, beta2) == 1.
 * e(alpha1, beta2)^(sum r_i) is folded in as one more pair rather than taken as a GT power:
 * cuzk_vk does not carry e(alpha1, beta2), and computing it would cost a Miller loop and a
 * second final exponentiation before the exponentiation itself.
 * Cost for m proofs: ONE multi-Miller loop over m + 3 pairs (pairing_miller_loop_multi: m + 3
 * sets of line evaluations, one shared Fq12 squaring per step) and ONE final exponentiation,
 * against 4m Miller loops and m final exponentiations one by one. In G1: m variable-time
 * multiplications by the 128-bit r_i (r_i A_i), an m-point MSM (sum r_i C_i), an
 * (n_public + 1)-point MSM for sum_i r_i L_i = (sum r_i) IC_0 + sum_j (sum_i r_i pub_ij) IC_j
 * (the inner sums in Fr: m n_public Fr multiplications instead of m n_public-point sums),
 * one multiplication of alpha1, and one inversion for every affine conversion together.
 * Validation stays per proof and is not batched: the subgroup check of each B_i (a full-width
 * G2 scalar multiplication) costs about as much as B_i's share of the Miller loop.
 *
 * Soundness. Every point is in its prime-order subgroup (import), so each t_i lies in the
 * order-r subgroup of GT. If some t_k != 1, then for any fixed other weights at most one
 * residue of r_k mod r makes the product 1, and r_k < 2^128 < r is uniform over 2^128 - 1
 * values: a batch holding an invalid proof passes with probability at most 1/(2^128 - 1).
 * The weights are fresh for every call and drawn after the proofs are fixed, so variable-time
 * use of them (jac_mul, MSM) reveals nothing that an adversary could still use.
 */

/* o = b mod r in Montgomery form, for any 256-bit std value b (cuzk_public values are below r
 * when they come from the readers; a caller's may not be, and single verification multiplies
 * IC_j by the raw 256-bit value, which is the same as by its residue: IC_j has order r) */
static void verify_batch_fr_from_any(fr_t *o, const uint8_t *b)
{
    static const uint64_t mod[FR_LIMBS] = FR_MODULUS_L;
    fr_t t;
    memcpy(&t, b, sizeof t);
    while (!fr_std_is_canonical(&t)) {
        unsigned char br = 0;
        for (int i = 0; i < FR_LIMBS; i++)
            br = ff_sbb(br, t.l[i], mod[i], &t.l[i]);
    }
    fr_from_std(o, &t);
}

/* Scratch layout (each array starts 64-byte aligned), for n proofs and P = n_public:
 *   p    g1_aff_t [n+3]   G1 side of the pairs (first A_i, then the affine pairs)
 *   pj   g1_jac_t [n+3]   the same, Jacobian
 *   q    g2_aff_t [n+3]   G2 side: B_i, then gamma2, delta2, beta2
 *   T    g2_proj_t[n+3]   multi-Miller loop twist points
 *   c    g1_aff_t [n]     C_i, the MSM's bases
 *   w    fr_t     [n]     r_i, std (the MSM's scalars)
 *   wm   fr_t     [n]     r_i, Montgomery
 *   ic   g1_aff_t [P+1]   IC_j
 *   s    fr_t     [P+1]   sum_i r_i pub_ij (s_0 = sum_i r_i), Montgomery then std */
typedef struct verify_batch_scr {
    g1_aff_t *p, *c, *ic;
    g1_jac_t *pj;
    g2_aff_t *q;
    g2_proj_t *T;
    fr_t *w, *wm, *s;
} verify_batch_scr;

static size_t verify_batch_carve(verify_batch_scr *o, void *mem, size_t n, uint32_t n_public)
{
    size_t off = 0, np = (size_t)n_public + 1;
    uint8_t *base = mem;
#define VB_TAKE(field, type, count)                                                                \
    do {                                                                                           \
        if (o)                                                                                     \
            o->field = (type *)(void *)(base + off);                                               \
        off += ((count) * sizeof(type) + 63) / 64 * 64;                                            \
    } while (0)
    VB_TAKE(p, g1_aff_t, n + 3);
    VB_TAKE(pj, g1_jac_t, n + 3);
    VB_TAKE(q, g2_aff_t, n + 3);
    VB_TAKE(T, g2_proj_t, n + 3);
    VB_TAKE(c, g1_aff_t, n);
    VB_TAKE(w, fr_t, n);
    VB_TAKE(wm, fr_t, n);
    VB_TAKE(ic, g1_aff_t, np);
    VB_TAKE(s, fr_t, np);
#undef VB_TAKE
    return off;
}

size_t CURVE_SYM(verify_batch_scratch_size)(size_t n, uint32_t n_public);
size_t CURVE_SYM(verify_batch_scratch_size)(size_t n, uint32_t n_public)
{
    return verify_batch_carve(NULL, NULL, n, n_public);
}

/* one proof's import, as CURVE_SYM(verify) does it: the length of its public input, then
 * pi_a, pi_b, pi_c */
static cuzk_err verify_batch_import_proof(g1_aff_t *a, g2_aff_t *b, g1_aff_t *c, const cuzk_vk *vk,
                                          const cuzk_public *pub, const cuzk_proof *proof, char *err)
{
    cuzk_err e;
    if (pub->n != vk->n_public)
        return cuzk_errf(err, CUZK_EFORMAT, "public input has %u values, the verification key expects %u",
                         pub->n, vk->n_public);
    if ((e = g1_import(a, &proof->a, "proof pi_a", err)) || (e = g2_import(b, &proof->b, "proof pi_b", err)) ||
        (e = g1_import(c, &proof->c, "proof pi_c", err)))
        return e;
    return CUZK_OK;
}

/* the key's import, in CURVE_SYM(verify)'s order: alpha1, gamma2, delta2, beta2, IC */
static cuzk_err verify_batch_import_vk(g1_aff_t *alpha1, g2_aff_t *gamma2, g2_aff_t *delta2, g2_aff_t *beta2,
                                       g1_aff_t *ic, const cuzk_vk *vk, char *err)
{
    cuzk_err e;
    if ((e = g1_import(alpha1, &vk->alpha1, "vk_alpha_1", err)) ||
        (e = g2_import(gamma2, &vk->gamma2, "vk_gamma_2", err)) ||
        (e = g2_import(delta2, &vk->delta2, "vk_delta_2", err)) ||
        (e = g2_import(beta2, &vk->beta2, "vk_beta_2", err)))
        return e;
    for (uint32_t j = 0; j <= vk->n_public; j++) {
        char what[32];
        snprintf(what, sizeof what, "vk IC[%u]", j);
        if ((e = g1_import(&ic[j], &vk->ic[j], what, err)))
            return e;
    }
    return CUZK_OK;
}

/* The weighted check over n proofs (see the top). weights: n x 16 bytes, little-endian, each
 * nonzero. bad: n ints, written: 1 for a proof refused at import (not on the curve, not in the
 * subgroup: CUZK_EVERIFY one by one), else 0; every proof is refused when the key is.
 * Returns CUZK_OK when the product over the proofs not marked holds (or none is left),
 * CUZK_EVERIFY when it does not, other codes for malformed input (a coordinate not below q, a
 * public input of the wrong length, as single verification answers them; err names the proof).
 * scratch: CURVE_SYM(verify_batch_scratch_size)(n, vk->n_public) bytes, 64-byte aligned. */
cuzk_err CURVE_SYM(verify_batch)(const cuzk_vk *vk, const cuzk_public *const *pub, const cuzk_proof *const *proof,
                                 size_t n, const uint8_t *weights, int *bad, void *scratch, char *err);
cuzk_err CURVE_SYM(verify_batch)(const cuzk_vk *vk, const cuzk_public *const *pub, const cuzk_proof *const *proof,
                                 size_t n, const uint8_t *weights, int *bad, void *scratch, char *err)
{
    verify_batch_scr S;
    verify_batch_carve(&S, scratch, n, vk->n_public);
    char why[CUZK_ERRLEN];
    cuzk_err e;
    size_t m = 0; /* proofs past import, packed at the front of S.p, S.q, S.c, S.w */
    for (size_t i = 0; i < n; i++) {
        bad[i] = 0;
        e = verify_batch_import_proof(&S.p[m], &S.q[m], &S.c[m], vk, pub[i], proof[i], why);
        if (e == CUZK_EVERIFY) {
            bad[i] = 1;
            continue;
        }
        if (e)
            return cuzk_errf(err, e, "proof %zu: %s", i, why);
        memset(&S.w[m], 0, sizeof S.w[m]);
        memcpy(&S.w[m], weights + 16 * i, 16);
        fr_from_std(&S.wm[m], &S.w[m]);
        m++;
    }
    g1_aff_t alpha1;
    g2_aff_t gamma2, delta2, beta2;
    e = verify_batch_import_vk(&alpha1, &gamma2, &delta2, &beta2, S.ic, vk, why);
    if (e == CUZK_EVERIFY) { /* every proof fails against this key */
        for (size_t i = 0; i < n; i++)
            bad[i] = 1;
        return CUZK_OK;
    }
    if (e && m > 0)
        return cuzk_errf(err, e, "%s", why);
    if (m == 0)
        return CUZK_OK;

    /* s_j = sum_i r_i pub_ij (s_0 = sum_i r_i), in Fr */
    uint32_t np = vk->n_public;
    for (uint32_t j = 0; j <= np; j++)
        fr_set_zero(&S.s[j]);
    for (size_t i = 0, k = 0; i < n; i++) {
        if (bad[i])
            continue;
        fr_t v;
        fr_add(&S.s[0], &S.s[0], &S.wm[k]);
        for (uint32_t j = 0; j < np; j++) {
            verify_batch_fr_from_any(&v, pub[i]->values + 32 * (size_t)j);
            fr_mul(&v, &v, &S.wm[k]);
            fr_add(&S.s[j + 1], &S.s[j + 1], &v);
        }
        k++;
    }
    for (uint32_t j = 0; j <= np; j++)
        fr_to_std(&S.s[j], &S.s[j]);

    /* G1 side: -(r_i A_i), sum r_i L_i, sum r_i C_i, (sum r_i) alpha1 */
    for (size_t k = 0; k < m; k++) {
        g1_jac_mul(&S.pj[k], &S.p[k], S.w[k].l);
        g1_jac_neg(&S.pj[k], &S.pj[k]);
    }
    msm_g1(&S.pj[m], S.ic, S.s, (size_t)np + 1, NULL);
    msm_g1(&S.pj[m + 1], S.c, S.w, m, NULL);
    g1_jac_mul(&S.pj[m + 2], &alpha1, S.s[0].l);
    g1_batch_to_aff(S.p, S.pj, m + 3);
    S.q[m] = gamma2;
    S.q[m + 1] = delta2;
    S.q[m + 2] = beta2;

    fq12_t f, t;
    pairing_miller_loop_multi(&f, S.p, S.q, m + 3, S.T);
    pairing_final_exp(&t, &f);
    if (!fq12_is_one(&t))
        return cuzk_errf(err, CUZK_EVERIFY, "batch pairing check failed: some proof is not valid");
    return CUZK_OK;
}
