/* msm_impl.h - the Pippenger MSM body, written once for a group and included by msm.h
 * once per group (G1 over fq, G2 over fq2). No include guard on purpose.
 *
 * Before including, define:
 *   MSM_G(x)    the group's name for x:   g1_##x   (g1_aff_t, g1_xyzz_add_aff, ...)
 *   MSM_N(x)    this file's names:        msm_g1_##x
 * See msm.h for the algorithm.
 */

typedef MSM_G(aff_t) MSM_N(aff_t);
typedef MSM_G(jac_t) MSM_N(jac_t);
typedef MSM_G(xyzz_t) MSM_N(xyzz_t);

typedef struct MSM_N(ctx) {
    const MSM_N(aff_t) *bases;  /* n affine bases (zkey layout, all-zero = infinity) */
    const fr_t *scalars;        /* n std-form scalars */
    size_t n;
    /* pass 1 (scan): inputs cut into n_scan chunks of scan_per */
    size_t scan_per, n_scan;
    uint32_t *idx;              /* pass 1: chunk k writes its big-scalar indices from k*scan_per;
                                   then compacted to idx[0..m) */
    size_t *scan_count;         /* per scan chunk: indices written */
    MSM_N(xyzz_t) *ones;        /* per scan chunk: sum of bases whose scalar is 1 */
    uint64_t *scan_top;         /* per scan chunk: OR of the top limbs of its big scalars */
    /* pass 2 (buckets): m indices, W windows of c bits, n_chunk chunks of chunk_per */
    size_t m;
    unsigned c, n_windows;
    size_t n_chunk, chunk_per;
    MSM_N(xyzz_t) *buckets;     /* pool_size x 2^(c-1) buckets, one set per worker */
    MSM_N(jac_t) *win;          /* n_windows x n_chunk partial window sums */
} MSM_N(ctx);

/* Pass 1: zero scalars and infinity bases dropped, scalar one summed directly, the rest
 * listed for the bucket pass. */
static inline void MSM_N(task_scan)(void *ctxp, size_t task, int worker)
{
    (void)worker;
    MSM_N(ctx) *x = ctxp;
    size_t i0 = task * x->scan_per, i1 = i0 + x->scan_per;
    if (i1 > x->n)
        i1 = x->n;
    MSM_N(xyzz_t) acc;
    MSM_G(xyzz_set_inf)(&acc);
    uint32_t *out = x->idx + i0;
    size_t cnt = 0;
    uint64_t top = 0;
    for (size_t i = i0; i < i1; i++) {
        const uint64_t *k = msm_limbs(&x->scalars[i]);
        uint64_t hi = k[1] | k[2] | k[3];
        if (!hi && k[0] <= 1) {
            if (k[0] == 1 && !MSM_G(aff_is_inf)(&x->bases[i]))
                MSM_G(xyzz_add_aff)(&acc, &acc, &x->bases[i]);
            continue;
        }
        if (MSM_G(aff_is_inf)(&x->bases[i]))
            continue;
        out[cnt++] = (uint32_t)i;
        top |= k[3];
    }
    x->scan_count[task] = cnt;
    x->ones[task] = acc;
    x->scan_top[task] = top;
}

/* Pass 2: one (window, chunk) pair: bucket accumulation then the running-sum reduction
 * sum_b b * B_b = sum_b (B_top + ... + B_b). */
static inline void MSM_N(task_window)(void *ctxp, size_t task, int worker)
{
    MSM_N(ctx) *x = ctxp;
    unsigned w = (unsigned)(task % x->n_windows);
    size_t chunk = task / x->n_windows;
    size_t j0 = chunk * x->chunk_per, j1 = j0 + x->chunk_per;
    if (j1 > x->m)
        j1 = x->m;
    unsigned c = x->c;
    size_t nb = (size_t)1 << (c - 1);
    MSM_N(xyzz_t) *b = x->buckets + (size_t)worker * nb;
    for (size_t i = 0; i < nb; i++)
        MSM_G(xyzz_set_inf)(&b[i]);

    int d_next = j0 < j1 ? msm_digit(msm_limbs(&x->scalars[x->idx[j0]]), w, c) : 0;
    for (size_t j = j0; j < j1; j++) {
        int d = d_next;
        const MSM_N(aff_t) *p = &x->bases[x->idx[j]];
        if (j + 1 < j1) {
            d_next = msm_digit(msm_limbs(&x->scalars[x->idx[j + 1]]), w, c);
            if (d_next)
                __builtin_prefetch(&b[(d_next > 0 ? d_next : -d_next) - 1], 1);
            __builtin_prefetch(&x->bases[x->idx[j + 1]], 0);
        }
        if (d > 0) {
            MSM_G(xyzz_add_aff)(&b[d - 1], &b[d - 1], p);
        } else if (d < 0) {
            MSM_N(aff_t) q;
            MSM_G(aff_neg)(&q, p);
            MSM_G(xyzz_add_aff)(&b[-d - 1], &b[-d - 1], &q);
        }
    }

    MSM_N(xyzz_t) run, sum;
    MSM_G(xyzz_set_inf)(&run);
    MSM_G(xyzz_set_inf)(&sum);
    for (size_t i = nb; i-- > 0;) {
        MSM_G(xyzz_add)(&run, &run, &b[i]);
        MSM_G(xyzz_add)(&sum, &sum, &run);
    }
    MSM_G(xyzz_to_jac)(&x->win[(size_t)w * x->n_chunk + chunk], &sum);
}

/* Fallback when scratch memory is not available: sum of scalar multiplications. */
static inline void MSM_N(run_plain)(MSM_N(jac_t) *o, const MSM_N(aff_t) *bases,
                                    const fr_t *scalars, size_t n)
{
    MSM_N(jac_t) acc, t;
    MSM_G(jac_set_inf)(&acc);
    for (size_t i = 0; i < n; i++) {
        const uint64_t *k = msm_limbs(&scalars[i]);
        if (!(k[0] | k[1] | k[2] | k[3]) || MSM_G(aff_is_inf)(&bases[i]))
            continue;
        MSM_G(jac_mul)(&t, &bases[i], k);
        MSM_G(jac_add)(&acc, &acc, &t);
    }
    *o = acc;
}

static inline void MSM_N(run_slice)(MSM_N(jac_t) *o, const MSM_N(aff_t) *bases,
                                    const fr_t *scalars, size_t n, pool_t *pool)
{
    MSM_N(ctx) x;
    memset(&x, 0, sizeof x);
    x.bases = bases;
    x.scalars = scalars;
    x.n = n;
    size_t threads = (size_t)pool_size(pool);
    MSM_G(jac_set_inf)(o);
    if (n == 0)
        return;

    /* pass 1 */
    x.scan_per = msm_div_up(n, 4 * threads);
    if (x.scan_per < 4096)
        x.scan_per = 4096;
    x.n_scan = msm_div_up(n, x.scan_per);
    x.idx = malloc(n * sizeof *x.idx);
    x.scan_count = malloc(x.n_scan * sizeof *x.scan_count);
    x.ones = malloc(x.n_scan * sizeof *x.ones);
    x.scan_top = malloc(x.n_scan * sizeof *x.scan_top);
    if (!x.idx || !x.scan_count || !x.ones || !x.scan_top)
        goto plain;
    pool_run(pool, x.n_scan, MSM_N(task_scan), &x);

    MSM_N(xyzz_t) ones;
    MSM_G(xyzz_set_inf)(&ones);
    uint64_t top = 0;
    for (size_t k = 0; k < x.n_scan; k++) {
        if (x.scan_count[k] && x.m != k * x.scan_per)
            memmove(x.idx + x.m, x.idx + k * x.scan_per, x.scan_count[k] * sizeof *x.idx);
        x.m += x.scan_count[k];
        MSM_G(xyzz_add)(&ones, &ones, &x.ones[k]);
        top |= x.scan_top[k];
    }
    MSM_G(xyzz_to_jac)(o, &ones);
    if (x.m == 0)
        goto done;

    /* pass 2: window size by the number of points that need buckets */
    unsigned nbits = msm_scalar_bits();
    if (top >> 63)
        nbits = 256;
    else if (top)
        nbits = nbits > 256 - (unsigned)__builtin_clzll(top) ? nbits
                                                              : 256 - (unsigned)__builtin_clzll(top);
    x.c = msm_window_bits(x.m, nbits);
    x.n_windows = (nbits + 1 + x.c - 1) / x.c;
    x.n_chunk = msm_chunks(x.m, x.c, x.n_windows, threads);
    x.chunk_per = msm_div_up(x.m, x.n_chunk);
    x.n_chunk = msm_div_up(x.m, x.chunk_per);
    x.buckets = malloc(threads * ((size_t)1 << (x.c - 1)) * sizeof *x.buckets);
    x.win = malloc((size_t)x.n_windows * x.n_chunk * sizeof *x.win);
    if (!x.buckets || !x.win)
        goto plain;
    pool_run(pool, (size_t)x.n_windows * x.n_chunk, MSM_N(task_window), &x);

    /* windows, top down: acc = 2^c acc + sum over chunks */
    MSM_N(jac_t) acc;
    MSM_G(jac_set_inf)(&acc);
    for (unsigned w = x.n_windows; w-- > 0;) {
        if (w + 1 < x.n_windows)
            for (unsigned i = 0; i < x.c; i++)
                MSM_G(jac_dbl)(&acc, &acc);
        for (size_t k = 0; k < x.n_chunk; k++)
            MSM_G(jac_add)(&acc, &acc, &x.win[(size_t)w * x.n_chunk + k]);
    }
    MSM_G(jac_add)(o, o, &acc);
    goto done;

plain:
    MSM_N(run_plain)(o, bases, scalars, n);
done:
    free(x.win);
    free(x.buckets);
    free(x.scan_top);
    free(x.ones);
    free(x.scan_count);
    free(x.idx);
}

/* o = sum_i scalars_std[i] * bases[i] (see msm.h) */
static inline void MSM_N(run)(MSM_N(jac_t) *o, const MSM_N(aff_t) *bases, const fr_t *scalars_std,
                              size_t n, pool_t *pool)
{
    /* indices are 32-bit: cut very large inputs into slices */
    const size_t slice = (size_t)1 << 31;
    MSM_N(jac_t) acc, part;
    MSM_G(jac_set_inf)(&acc);
    for (size_t s = 0; s < n; s += slice) {
        size_t len = n - s < slice ? n - s : slice;
        MSM_N(run_slice)(&part, bases + s, scalars_std + s, len, pool);
        MSM_G(jac_add)(&acc, &acc, &part);
    }
    *o = acc;
}
