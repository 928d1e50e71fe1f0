/* cpu_backend.h - the CPU implementation of the backend table (backend.h), per curve.
 *
 * Included once per curve translation unit (curve_impl.h). Multi-threaded through
 * the thread pool: a/b/c evaluation over rows of a CSR copy of zkey section 4, NTTs
 * per polynomial, Pippenger MSMs.
 *
 * Section 4 values are v = coef * R^2 mod r as plain integers; a Montgomery product of
 * v with a standard-form witness value w is coef * w * R, i.e. coef * w already in
 * Montgomery form (FORMATS.md section 3), so no conversion of the witness is needed.
 */

typedef struct cpu_impl {
    pool_t *pool; /* worker threads (owned) */
} cpu_impl;

/* Section 4 re-laid out by row: for matrix m (0 = A, 1 = B), the entries of row i are
 * sig[m][ptr[m][i] .. ptr[m][i+1]) with coefficients val[...] (raw v, see above). */
typedef struct cpu_key {
    const zkey_file *z;
    uint32_t *ptr[2]; /* domain_size + 1 offsets */
    uint32_t *sig[2]; /* signal (wire) index per entry */
    fr_t *val[2];     /* v per entry */
    const void *bases[ZKEY_BASES]; /* 8-byte aligned bases: the zkey's own or owned[] */
    void *owned[ZKEY_BASES];       /* aligned copies where the zkey section is not aligned */
} cpu_key;

static void cpu_key_free(cpu_key *k)
{
    if (!k)
        return;
    for (int m = 0; m < 2; m++) {
        free(k->ptr[m]);
        free(k->sig[m]);
        free(k->val[m]);
    }
    for (int i = 0; i < ZKEY_BASES; i++)
        free(k->owned[i]);
    free(k);
}

static cuzk_err cpu_key_attach(cuzk_backend *be, const zkey_file *z, void **ks, char *err)
{
    (void)be;
    size_t n = z->domain_size;
    cpu_key *k = calloc(1, sizeof *k);
    if (!k)
        return cuzk_errf(err, CUZK_ENOMEM, "cpu backend: out of memory for key");
    k->z = z;
    size_t count[2] = {0, 0};
    for (int m = 0; m < 2; m++) {
        k->ptr[m] = calloc(n + 1, sizeof(uint32_t));
        if (!k->ptr[m])
            goto nomem;
    }
    /* pass 1: counts per row */
    for (uint32_t i = 0; i < z->n_coefs; i++) {
        const uint8_t *rec = z->coefs + (size_t)i * 44;
        uint32_t m, row;
        memcpy(&m, rec, 4);
        memcpy(&row, rec + 4, 4);
        k->ptr[m][row + 1]++;
        count[m]++;
    }
    for (int m = 0; m < 2; m++) {
        for (size_t i = 0; i < n; i++)
            k->ptr[m][i + 1] += k->ptr[m][i];
        k->sig[m] = malloc((count[m] ? count[m] : 1) * sizeof(uint32_t));
        k->val[m] = malloc((count[m] ? count[m] : 1) * sizeof(fr_t));
        if (!k->sig[m] || !k->val[m])
            goto nomem;
    }
    /* pass 2: fill, keeping record order within a row */
    {
        uint32_t *fill[2];
        fill[0] = malloc(n * sizeof(uint32_t));
        fill[1] = malloc(n * sizeof(uint32_t));
        if (!fill[0] || !fill[1]) {
            free(fill[0]);
            free(fill[1]);
            goto nomem;
        }
        memcpy(fill[0], k->ptr[0], n * sizeof(uint32_t));
        memcpy(fill[1], k->ptr[1], n * sizeof(uint32_t));
        for (uint32_t i = 0; i < z->n_coefs; i++) {
            const uint8_t *rec = z->coefs + (size_t)i * 44;
            uint32_t m, row, sig;
            memcpy(&m, rec, 4);
            memcpy(&row, rec + 4, 4);
            memcpy(&sig, rec + 8, 4);
            uint32_t at = fill[m][row]++;
            k->sig[m][at] = sig;
            memcpy(&k->val[m][at], rec + 12, sizeof(fr_t));
        }
        free(fill[0]);
        free(fill[1]);
    }
    /* zkey sections are 4-byte aligned; the arithmetic wants 8 */
    for (int i = 0; i < ZKEY_BASES; i++) {
        size_t psize = i == ZKEY_B2 ? sizeof(g2_aff_t) : sizeof(g1_aff_t);
        size_t bytes = (size_t)z->n_bases[i] * psize;
        if (((uintptr_t)z->bases[i] & 7) == 0) {
            k->bases[i] = z->bases[i];
            continue;
        }
        k->owned[i] = malloc(bytes ? bytes : 1);
        if (!k->owned[i])
            goto nomem;
        memcpy(k->owned[i], z->bases[i], bytes);
        k->bases[i] = k->owned[i];
    }
    *ks = k;
    return CUZK_OK;
nomem:
    cpu_key_free(k);
    return cuzk_errf(err, CUZK_ENOMEM, "cpu backend: out of memory building the constraint matrix");
}

static void cpu_key_detach(cuzk_backend *be, void *ks)
{
    (void)be;
    cpu_key_free(ks);
}

typedef struct abc_ctx {
    const cpu_key *k;
    const fr_t *w;  /* witness, std form */
    fr_t *out[2];
    fr_t *c;
    size_t n, chunk;
} abc_ctx;

static void abc_task(void *vctx, size_t task, int worker)
{
    (void)worker;
    abc_ctx *x = vctx;
    size_t lo = task * x->chunk, hi = lo + x->chunk < x->n ? lo + x->chunk : x->n;
    for (int m = 0; m < 2; m++) {
        const uint32_t *ptr = x->k->ptr[m], *sig = x->k->sig[m];
        const fr_t *val = x->k->val[m];
        for (size_t row = lo; row < hi; row++) {
            fr_t acc, t;
            fr_set_zero(&acc);
            for (uint32_t e = ptr[row]; e < ptr[row + 1]; e++) {
                const fr_t *wv = &x->w[sig[e]];
                if (fr_is_zero(wv))
                    continue;
                fr_mul(&t, &val[e], wv);
                fr_add(&acc, &acc, &t);
            }
            x->out[m][row] = acc;
        }
    }
    for (size_t row = lo; row < hi; row++)
        fr_mul(&x->c[row], &x->out[0][row], &x->out[1][row]);
}

static cuzk_err cpu_eval_abc(cuzk_backend *be, void *ks, groth16_ws *ws, char *err)
{
    (void)err;
    cpu_impl *impl = be->impl;
    const cpu_key *k = ks;
    abc_ctx x = {k, (const fr_t *)(const void *)ws->wtns, {(fr_t *)ws->a, (fr_t *)ws->b},
                 (fr_t *)ws->c, k->z->domain_size, 4096};
    pool_run(impl->pool, (x.n + x.chunk - 1) / x.chunk, abc_task, &x);
    return CUZK_OK;
}

typedef struct h_ctx {
    fr_t *a, *b, *c;
    size_t n, chunk;
} h_ctx;

static void h_task(void *vctx, size_t task, int worker)
{
    (void)worker;
    h_ctx *x = vctx;
    size_t lo = task * x->chunk, hi = lo + x->chunk < x->n ? lo + x->chunk : x->n;
    for (size_t i = lo; i < hi; i++) {
        fr_t t;
        fr_mul(&t, &x->a[i], &x->b[i]);
        fr_sub(&t, &t, &x->c[i]);
        fr_to_std(&x->a[i], &t);
    }
}

/* FORMATS.md section 4 steps 2-3: for X in {A, B, C}: coefficients = iNTT(X); multiply
 * coefficient i by w_(2n)^i; NTT back, giving X on the odd coset; h = A*B - C there. */
static cuzk_err cpu_compute_h(cuzk_backend *be, void *ks, groth16_ws *ws, char *err)
{
    cpu_impl *impl = be->impl;
    const cpu_key *k = ks;
    unsigned log_n = k->z->log_domain;
    if (log_n + 1 > FR_TWO_ADICITY)
        return cuzk_errf(err, CUZK_EINVAL, "domain 2^%u too large for this curve", log_n);
    fr_t shift;
    fr_root_of_unity(&shift, log_n + 1);
    fr_t *polys[3] = {(fr_t *)ws->a, (fr_t *)ws->b, (fr_t *)ws->c};
    for (int i = 0; i < 3; i++) {
        ntt_fr(polys[i], log_n, 1, impl->pool);
        ntt_fr_coset_shift(polys[i], log_n, &shift, impl->pool);
        ntt_fr(polys[i], log_n, 0, impl->pool);
    }
    h_ctx x = {polys[0], polys[1], polys[2], k->z->domain_size, 8192};
    pool_run(impl->pool, (x.n + x.chunk - 1) / x.chunk, h_task, &x);
    return CUZK_OK;
}

static cuzk_err cpu_msm_all(cuzk_backend *be, void *ks, groth16_ws *ws, char *err)
{
    (void)err;
    cpu_impl *impl = be->impl;
    const cpu_key *k = ks;
    const zkey_file *z = k->z;
    const fr_t *w = (const fr_t *)(const void *)ws->wtns;
    size_t n_priv = z->n_vars - z->n_public - 1;
    msm_g1((g1_jac_t *)ws->msm[ZKEY_A], k->bases[ZKEY_A], w, z->n_vars, impl->pool);
    msm_g1((g1_jac_t *)ws->msm[ZKEY_B1], k->bases[ZKEY_B1], w, z->n_vars, impl->pool);
    msm_g2((g2_jac_t *)ws->msm[ZKEY_B2], k->bases[ZKEY_B2], w, z->n_vars, impl->pool);
    msm_g1((g1_jac_t *)ws->msm[ZKEY_C], k->bases[ZKEY_C], w + z->n_public + 1, n_priv, impl->pool);
    msm_g1((g1_jac_t *)ws->msm[ZKEY_H], k->bases[ZKEY_H], (const fr_t *)ws->a, z->domain_size, impl->pool);
    return CUZK_OK;
}

static void cpu_destroy(cuzk_backend *be)
{
    if (!be)
        return;
    cpu_impl *impl = be->impl;
    if (impl)
        pool_destroy(impl->pool);
    free(impl);
    free(be);
}

cuzk_backend *CURVE_SYM(cpu_backend_create)(int threads, char *err);
cuzk_backend *CURVE_SYM(cpu_backend_create)(int threads, char *err)
{
    cuzk_backend *be = calloc(1, sizeof *be);
    cpu_impl *impl = calloc(1, sizeof *impl);
    if (!be || !impl)
        goto fail;
    impl->pool = pool_create(threads);
    if (!impl->pool)
        goto fail;
    be->name = "cpu";
    be->curve = CURVE_ID;
    be->device = -1;
    be->impl = impl;
    be->key_attach = cpu_key_attach;
    be->key_detach = cpu_key_detach;
    be->eval_abc = cpu_eval_abc;
    be->compute_h = cpu_compute_h;
    be->msm_all = cpu_msm_all;
    be->destroy = cpu_destroy;
    return be;
fail:
    free(impl);
    free(be);
    cuzk_errf(err, CUZK_ENOMEM, "cpu backend: cannot create thread pool");
    return NULL;
}
