/* prover_core.h - per-curve parts of the Groth16 prover and verifier.
 *
 * Included once per curve translation unit (curve_impl.h). Exports, through CURVE_SYM:
 * assemble (piA, piB, piC from the MSM results and r, s), verify (the pairing check),
 * vk_from_zkey. Everything that touches the blinding scalars r, s uses constant-time
 * scalar multiplication.
 */

/* ---- conversions between curve-agnostic std bytes (proof.h) and Montgomery points ---- */

static void fq_from_std_bytes(fq_t *o, const uint8_t *b)
{
    fq_t t;
    memcpy(&t, b, sizeof t);
    fq_from_std(o, &t);
}

static void fq_to_std_bytes(uint8_t *b, const fq_t *a)
{
    fq_t t;
    fq_to_std(&t, a);
    memcpy(b, &t, sizeof t);
}

/* returns false when a coordinate is >= q */
static bool fq_std_bytes_ok(const uint8_t *b)
{
    for (int i = FQ_LIMBS - 1; i >= 0; i--) {
        uint64_t v;
        memcpy(&v, b + 8 * i, 8);
        if (v != FQ_MODULUS[i])
            return v < FQ_MODULUS[i];
    }
    return false; /* equal to q */
}

static void g1_from_std(g1_aff_t *o, const g1_std *p)
{
    if (p->inf) {
        memset(o, 0, sizeof *o);
        return;
    }
    fq_from_std_bytes(&o->x, p->x);
    fq_from_std_bytes(&o->y, p->y);
}

static void g1_to_std(g1_std *o, const g1_aff_t *p)
{
    memset(o, 0, sizeof *o);
    if (g1_aff_is_inf(p)) {
        o->inf = 1;
        return;
    }
    fq_to_std_bytes(o->x, &p->x);
    fq_to_std_bytes(o->y, &p->y);
}

static void g2_from_std(g2_aff_t *o, const g2_std *p)
{
    if (p->inf) {
        memset(o, 0, sizeof *o);
        return;
    }
    fq_from_std_bytes(&o->x.c0, p->x0);
    fq_from_std_bytes(&o->x.c1, p->x1);
    fq_from_std_bytes(&o->y.c0, p->y0);
    fq_from_std_bytes(&o->y.c1, p->y1);
}

static void g2_to_std(g2_std *o, const g2_aff_t *p)
{
    memset(o, 0, sizeof *o);
    if (g2_aff_is_inf(p)) {
        o->inf = 1;
        return;
    }
    fq_to_std_bytes(o->x0, &p->x.c0);
    fq_to_std_bytes(o->x1, &p->x.c1);
    fq_to_std_bytes(o->y0, &p->y.c0);
    fq_to_std_bytes(o->y1, &p->y.c1);
}

static bool g1_std_ok(const g1_std *p)
{
    return p->inf || (fq_std_bytes_ok(p->x) && fq_std_bytes_ok(p->y));
}

static bool g2_std_ok(const g2_std *p)
{
    return p->inf || (fq_std_bytes_ok(p->x0) && fq_std_bytes_ok(p->x1) && fq_std_bytes_ok(p->y0) &&
                      fq_std_bytes_ok(p->y1));
}

/* Validates and converts a G1 point from a file or request: coordinates < q, on the curve,
 * in the prime-order subgroup. */
static cuzk_err g1_import(g1_aff_t *o, const g1_std *p, const char *what, char *err)
{
    if (!g1_std_ok(p))
        return cuzk_errf(err, CUZK_EFORMAT, "%s: coordinate is not below the field modulus", what);
    g1_from_std(o, p);
    if (g1_aff_is_inf(o))
        return CUZK_OK;
    if (!g1_aff_on_curve(o))
        return cuzk_errf(err, CUZK_EVERIFY, "%s: point is not on the curve", what);
    if (!g1_aff_in_subgroup(o))
        return cuzk_errf(err, CUZK_EVERIFY, "%s: point is not in the prime-order subgroup", what);
    return CUZK_OK;
}

static cuzk_err g2_import(g2_aff_t *o, const g2_std *p, const char *what, char *err)
{
    if (!g2_std_ok(p))
        return cuzk_errf(err, CUZK_EFORMAT, "%s: coordinate is not below the field modulus", what);
    g2_from_std(o, p);
    if (g2_aff_is_inf(o))
        return CUZK_OK;
    if (!g2_aff_on_curve(o))
        return cuzk_errf(err, CUZK_EVERIFY, "%s: point is not on the curve", what);
    if (!g2_aff_in_subgroup(o))
        return cuzk_errf(err, CUZK_EVERIFY, "%s: point is not in the prime-order subgroup", what);
    return CUZK_OK;
}

/* ---- assembly (FORMATS.md section 4, step 4) ----
 * piA = alpha1 + msmA + r*delta1
 * piB = beta2 + msmB2 + s*delta2                 (G2)
 * B1  = beta1 + msmB1 + s*delta1
 * piC = msmC + msmH + s*piA + r*B1 - (r*s)*delta1 */
cuzk_err CURVE_SYM(assemble)(cuzk_proof *out, const zkey_file *z, const groth16_ws *ws,
                             const groth16_rs *rs, char *err);
cuzk_err CURVE_SYM(assemble)(cuzk_proof *out, const zkey_file *z, const groth16_ws *ws,
                             const groth16_rs *rs, char *err)
{
    (void)err;
    /* the zkey's sections are only 4-byte aligned: copy the constants out */
    g1_aff_t alpha1_v, beta1_v, delta1_v;
    g2_aff_t beta2_v, delta2_v;
    memcpy(&alpha1_v, z->alpha1, sizeof alpha1_v);
    memcpy(&beta1_v, z->beta1, sizeof beta1_v);
    memcpy(&delta1_v, z->delta1, sizeof delta1_v);
    memcpy(&beta2_v, z->beta2, sizeof beta2_v);
    memcpy(&delta2_v, z->delta2, sizeof delta2_v);
    const g1_aff_t *alpha1 = &alpha1_v, *beta1 = &beta1_v, *delta1 = &delta1_v;
    const g2_aff_t *beta2 = &beta2_v, *delta2 = &delta2_v;
    uint64_t r[4], s[4], rs_k[4];
    memcpy(r, rs->r, 32);
    memcpy(s, rs->s, 32);
    {
        fr_t rm, sm, t;
        memcpy(&t, r, 32);
        fr_from_std(&rm, &t);
        memcpy(&t, s, 32);
        fr_from_std(&sm, &t);
        fr_mul(&t, &rm, &sm);
        fr_to_std(&t, &t);
        memcpy(rs_k, &t, 32);
    }
    g1_jac_t pa, b1, pc, t1;
    g2_jac_t pb;

    /* piA */
    g1_jac_mul_ct(&pa, delta1, r);
    g1_jac_add(&pa, &pa, (const g1_jac_t *)ws->msm[ZKEY_A]);
    g1_jac_add_aff(&pa, &pa, alpha1);
    /* piB (G2) */
    g2_jac_mul_ct(&pb, delta2, s);
    g2_jac_add(&pb, &pb, (const g2_jac_t *)ws->msm[ZKEY_B2]);
    g2_jac_add_aff(&pb, &pb, beta2);
    /* B1 */
    g1_jac_mul_ct(&b1, delta1, s);
    g1_jac_add(&b1, &b1, (const g1_jac_t *)ws->msm[ZKEY_B1]);
    g1_jac_add_aff(&b1, &b1, beta1);
    /* piC */
    g1_aff_t pa_aff, b1_aff;
    g1_jac_to_aff(&pa_aff, &pa);
    g1_jac_to_aff(&b1_aff, &b1);
    g1_jac_add(&pc, (const g1_jac_t *)ws->msm[ZKEY_C], (const g1_jac_t *)ws->msm[ZKEY_H]);
    g1_jac_mul_ct(&t1, &pa_aff, s);
    g1_jac_add(&pc, &pc, &t1);
    g1_jac_mul_ct(&t1, &b1_aff, r);
    g1_jac_add(&pc, &pc, &t1);
    g1_jac_mul_ct(&t1, delta1, rs_k);
    g1_jac_neg(&t1, &t1);
    g1_jac_add(&pc, &pc, &t1);

    g1_aff_t pc_aff;
    g2_aff_t pb_aff;
    g1_jac_to_aff(&pc_aff, &pc);
    g2_jac_to_aff(&pb_aff, &pb);
    memset(out, 0, sizeof *out);
    out->curve = CURVE_ID;
    g1_to_std(&out->a, &pa_aff);
    g2_to_std(&out->b, &pb_aff);
    g1_to_std(&out->c, &pc_aff);
    memset(r, 0, sizeof r);
    memset(s, 0, sizeof s);
    memset(rs_k, 0, sizeof rs_k);
    return CUZK_OK;
}

/* ---- verification ----
 * e(-piA, piB) * e(vk_x, gamma2) * e(piC, delta2) * e(alpha1, beta2) == 1,
 * vk_x = IC_0 + sum_i pub_i * IC_i. */
cuzk_err CURVE_SYM(verify)(const cuzk_vk *vk, const cuzk_public *pub, const cuzk_proof *proof, char *err);
cuzk_err CURVE_SYM(verify)(const cuzk_vk *vk, const cuzk_public *pub, const cuzk_proof *proof, char *err)
{
    cuzk_err e;
    if (pub->n != vk->n_public)
        return cuzk_errf(err, CUZK_EFORMAT, "public input has %u values, the verification key expects %u",
                         pub->n, vk->n_public);
    g1_aff_t p[4], ic;
    g2_aff_t q[4];
    if ((e = g1_import(&p[0], &proof->a, "proof pi_a", err)) ||
        (e = g2_import(&q[0], &proof->b, "proof pi_b", err)) ||
        (e = g1_import(&p[2], &proof->c, "proof pi_c", err)) ||
        (e = g1_import(&p[3], &vk->alpha1, "vk_alpha_1", err)) ||
        (e = g2_import(&q[1], &vk->gamma2, "vk_gamma_2", err)) ||
        (e = g2_import(&q[2], &vk->delta2, "vk_delta_2", err)) ||
        (e = g2_import(&q[3], &vk->beta2, "vk_beta_2", err)))
        return e;
    g1_aff_neg(&p[0], &p[0]);
    g1_jac_t acc, t;
    if ((e = g1_import(&ic, &vk->ic[0], "vk IC[0]", err)))
        return e;
    g1_jac_from_aff(&acc, &ic);
    for (uint32_t i = 0; i < pub->n; i++) {
        char what[32];
        snprintf(what, sizeof what, "vk IC[%u]", i + 1);
        if ((e = g1_import(&ic, &vk->ic[i + 1], what, err)))
            return e;
        uint64_t k[4];
        memcpy(k, pub->values + 32 * (size_t)i, 32);
        g1_jac_mul(&t, &ic, k);
        g1_jac_add(&acc, &acc, &t);
    }
    g1_jac_to_aff(&p[1], &acc);
    if (!pairing_product_is_one(p, q, 4))
        return cuzk_errf(err, CUZK_EVERIFY, "pairing check failed: the proof is not valid for these public inputs");
    return CUZK_OK;
}

cuzk_err CURVE_SYM(vk_from_zkey)(cuzk_vk *out, uint8_t *alphabeta, const zkey_file *z, char *err);
cuzk_err CURVE_SYM(vk_from_zkey)(cuzk_vk *out, uint8_t *alphabeta, const zkey_file *z, char *err)
{
    memset(out, 0, sizeof *out);
    out->curve = CURVE_ID;
    out->n_public = z->n_public;
    out->ic = calloc((size_t)z->n_public + 1, sizeof(g1_std));
    if (!out->ic)
        return cuzk_errf(err, CUZK_ENOMEM, "out of memory");
    g1_aff_t a1;
    g2_aff_t b2;
    memcpy(&a1, z->alpha1, sizeof a1);
    memcpy(&b2, z->beta2, sizeof b2);
    g1_to_std(&out->alpha1, &a1);
    g2_to_std(&out->beta2, &b2);
    g2_aff_t g;
    memcpy(&g, z->gamma2, sizeof g);
    g2_to_std(&out->gamma2, &g);
    memcpy(&g, z->delta2, sizeof g);
    g2_to_std(&out->delta2, &g);
    for (uint32_t i = 0; i <= z->n_public; i++) {
        g1_aff_t p;
        memcpy(&p, z->ic + (size_t)i * sizeof(g1_aff_t), sizeof p);
        g1_to_std(&out->ic[i], &p);
    }
    if (alphabeta) {
        /* pairing() uses the same final exponentiation as snarkjs (see ec/pairing.h), so
         * this is the vk_alphabeta_12 that snarkjs writes */
        fq12_t e;
        pairing(&e, &a1, &b2);
        /* tower order c0.c0.c0, c0.c0.c1, c0.c1.c0, ... as snarkjs nests vk_alphabeta_12 */
        const fq_t *limbs = (const fq_t *)(const void *)&e;
        for (int i = 0; i < 12; i++)
            fq_to_std_bytes(alphabeta + (size_t)i * sizeof(fq_t), &limbs[i]);
    }
    return CUZK_OK;
}

/* ---- MSM window sums from the GPU backend ----
 * out (Jacobian) = sum_w 2^(c w) S_w over nwin XYZZ window sums (window 0 first, the GPU's
 * limb layout is the host's). The c (nwin - 1) doublings are one dependent chain, which a
 * CPU core runs many times faster than a single GPU thread. */
#define PROVER_MSM_WINDOWS(G)                                                                       \
    void CURVE_SYM(msm_windows_##G)(uint64_t *out, const void *win, unsigned nwin, unsigned c);    \
    void CURVE_SYM(msm_windows_##G)(uint64_t *out, const void *win, unsigned nwin, unsigned c)     \
    {                                                                                              \
        G##_jac_t r, j[MSM_WINDOWS_MAX];                                                           \
        G##_xyzz_t s;                                                                              \
        if (nwin > MSM_WINDOWS_MAX) /* outside the contract (curve_exports.h): never overrun j */  \
            nwin = MSM_WINDOWS_MAX;                                                                \
        for (unsigned w = 0; w < nwin; w++) {                                                      \
            memcpy(&s, (const uint8_t *)win + (size_t)w * sizeof s, sizeof s);                     \
            G##_xyzz_to_jac(&j[w], &s);                                                            \
        }                                                                                          \
        msm_##G##_combine_windows(&r, j, nwin, 1, c);                                              \
        memcpy(out, &r, sizeof r);                                                                 \
    }
PROVER_MSM_WINDOWS(g1)
PROVER_MSM_WINDOWS(g2)
