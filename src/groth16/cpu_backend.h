/* cpu_backend.h - the CPU implementation of the backend table (backend.h), per curve.
 *
 * Included once per curve translation unit (curve_impl.h). Multi-threaded through
 * the thread pool: a/b/c evaluation over rows of the CSR of zkey section 4 (matrix.h), NTTs
 * per polynomial, Pippenger MSMs.
 *
 * Section 4 values are v = coef * R^2 mod r as plain integers; a Montgomery product of
 * v with a standard-form witness value w is coef * w * R, i.e. coef * w already in
 * Montgomery form (FORMATS.md section 3), so no conversion of the witness is needed.
 */

typedef struct cpu_impl {
    pool_t *pool; /* worker threads (owned) */
} cpu_impl;

/* Section 4 by row (matrix.h): for matrix m (0 = A, 1 = B), the entries of row i are
 * sig[ptr[m][i] .. ptr[m][i+1]) with coefficients val[...] (raw v, see above). The row
 * offsets of the CSR are global, so ptr[1] is simply ptr[0] + n. */
typedef struct cpu_key {
    const zkey_file *z;
    const uint32_t *ptr[2]; /* domain_size + 1 offsets each, into the matrix */
    const uint32_t *sig;    /* signal (wire) index per entry */
    const fr_t *val;        /* v per entry (64-byte aligned in the matrix) */
    cuzk_matrix *own_matrix; /* the matrix when this backend built it, else NULL (the caller's) */
    const void *bases[ZKEY_BASES]; /* 8-byte aligned bases: the zkey's own or owned[] */
    void *owned[ZKEY_BASES];       /* aligned copies where the zkey section is not aligned */
    unsigned batch;                /* key_info's batch_max: 1, or opts->batch_max under
                                      CUZK_TEST_CPU_BATCH=1 (tests of the daemon's batched device
                                      stage without a GPU) */
} cpu_key;

static void cpu_key_free(cpu_key *k)
{
    if (!k)
        return;
    matrix_free(k->own_matrix);
    for (int i = 0; i < ZKEY_BASES; i++)
        free(k->owned[i]);
    free(k);
}

static cuzk_err cpu_key_attach(cuzk_backend *be, const zkey_file *z, const groth16_key_opts *opts, void **ks,
                               char *err)
{
    (void)be;
    static const groth16_key_opts none;
    if (!opts)
        opts = &none;
    *ks = NULL;
    cuzk_err rc;
    cpu_key *k = calloc(1, sizeof *k);
    if (!k)
        return cuzk_errf(err, CUZK_ENOMEM, "cpu backend: out of memory for key");
    k->z = z;
    const char *tb = getenv("CUZK_TEST_CPU_BATCH");
    k->batch = tb && !strcmp(tb, "1") && opts->batch_max > 1 ? opts->batch_max : 1;
    const cuzk_matrix *m = opts->matrix;
    if (!m) {
        if ((rc = matrix_build(&k->own_matrix, z, NULL, opts->progress, opts->progress_ctx, err)))
            goto fail;
        m = k->own_matrix;
    } else if (m->curve != z->curve->id || m->n != z->domain_size || m->n_vars != z->n_vars || m->n_entries != z->n_coefs) {
        rc = cuzk_errf(err, CUZK_EINVAL, "cpu backend: the constraint matrix given is not this key's");
        goto fail;
    } else if (opts->progress) {
        opts->progress(opts->progress_ctx, "matrix", m->mem_size, m->mem_size); /* referenced, not copied */
    }
    k->ptr[0] = m->row_ptr;
    k->ptr[1] = m->row_ptr + z->domain_size;
    k->sig = m->sig;
    k->val = (const fr_t *)(const void *)m->val;
    /* zkey sections are 4-byte aligned; the arithmetic wants 8 */
    uint64_t total = 0, done = 0;
    for (int i = 0; i < ZKEY_BASES; i++)
        total += (uint64_t)z->n_bases[i] * (i == ZKEY_B2 ? sizeof(g2_aff_t) : sizeof(g1_aff_t));
    for (int i = 0; i < ZKEY_BASES && !opts->abc_only; i++) {
        size_t psize = i == ZKEY_B2 ? sizeof(g2_aff_t) : sizeof(g1_aff_t);
        size_t bytes = (size_t)z->n_bases[i] * psize;
        done += bytes;
        if (((uintptr_t)z->bases[i] & 7) == 0) {
            k->bases[i] = z->bases[i];
        } else {
            k->owned[i] = malloc(bytes ? bytes : 1);
            if (!k->owned[i]) {
                rc = cuzk_errf(err, CUZK_ENOMEM, "cpu backend: out of memory for aligned bases (%zu bytes)", bytes);
                goto fail;
            }
            memcpy(k->owned[i], z->bases[i], bytes);
            k->bases[i] = k->owned[i];
        }
        if (opts->progress)
            opts->progress(opts->progress_ctx, "bases", done, total);
    }
    *ks = k;
    return CUZK_OK;
fail:
    cpu_key_free(k);
    return rc;
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

/* Most entries of a circuit's A and B have a coefficient of 1 or -1, and most of its witness
 * values are 0 or 1 (bits, flags, range checks): such an entry adds or subtracts R (one in
 * Montgomery form) with no product, and c skips the product where a or b is zero. Each path
 * gives the field element the product would, in the same canonical form. */
static void abc_task(void *vctx, size_t task, int worker)
{
    (void)worker;
    abc_ctx *x = vctx;
    static const fr_t r2 = {FR_R2_L};
    fr_t neg_r2;
    fr_neg(&neg_r2, &r2);
    size_t lo = task * x->chunk, hi = lo + x->chunk < x->n ? lo + x->chunk : x->n;
    for (int m = 0; m < 2; m++) {
        const uint32_t *ptr = x->k->ptr[m], *sig = x->k->sig;
        const fr_t *val = x->k->val;
        for (size_t row = lo; row < hi; row++) {
            fr_t acc, t;
            fr_set_zero(&acc);
            for (uint32_t e = ptr[row]; e < ptr[row + 1]; e++) {
                const fr_t *wv = &x->w[sig[e]];
                uint64_t high = 0;
                for (int i = 1; i < FR_LIMBS; i++)
                    high |= wv->l[i];
                if (!high && wv->l[0] <= 1) { /* w is 0 or 1 */
                    if (!wv->l[0])
                        continue;
                    if (fr_eq(&val[e], &r2)) {
                        fr_add(&acc, &acc, &FR_ONE);
                        continue;
                    }
                    if (fr_eq(&val[e], &neg_r2)) {
                        fr_sub(&acc, &acc, &FR_ONE);
                        continue;
                    }
                }
                fr_mul(&t, &val[e], wv);
                fr_add(&acc, &acc, &t);
            }
            x->out[m][row] = acc;
        }
    }
    for (size_t row = lo; row < hi; row++) {
        if (fr_is_zero(&x->out[0][row]) || fr_is_zero(&x->out[1][row]))
            fr_set_zero(&x->c[row]);
        else
            fr_mul(&x->c[row], &x->out[0][row], &x->out[1][row]);
    }
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
    cuzk_err f = cpu_fault_oom(err);
    if (f)
        return f;
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
    cuzk_err f = cpu_fault_oom(err);
    if (f)
        return f;
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

/* msm_all of each: the CPU reads its bases from host memory, there is no pass to share */
static cuzk_err cpu_msm_batch(cuzk_backend *be, void *ks, groth16_ws **ws, int n, char *err)
{
    for (int i = 0; i < n; i++) {
        cuzk_err e = cpu_msm_all(be, ks, ws[i], err);
        if (e)
            return e;
        ws[i]->batch = (unsigned)n;
    }
    return CUZK_OK;
}

static void cpu_key_info(cuzk_backend *be, void *ks, groth16_key_info *out)
{
    (void)be;
    const cpu_key *k = ks;
    memset(out, 0, sizeof *out);
    out->placement = "host";
    snprintf(out->why, sizeof out->why, "host: the CPU backend reads the bases where the key is mapped");
    out->batch_max = k->batch;
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
    be->msm_batch = cpu_msm_batch;
    be->key_info = cpu_key_info;
    be->destroy = cpu_destroy;
    return be;
fail:
    free(impl);
    free(be);
    cuzk_errf(err, CUZK_ENOMEM, "cpu backend: cannot create thread pool");
    return NULL;
}
