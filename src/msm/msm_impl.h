/* msm_impl.h - the Pippenger MSM body, written once for a group and included by msm.h
 * once per group (G1 over fq, G2 over fq2). No include guard on purpose.
 *
 * Before including, define:
 *   MSM_G(x)    the group's name for x:   g1_##x   (g1_aff_t, g1_xyzz_add_aff, ...)
 *   MSM_N(x)    this file's names:        msm_g1_##x
 *   MSM_F(x)    the base field's name:    fq_##x (G1), fq2_##x (G2)
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
    MSM_N(xyzz_t) *buckets;     /* pool_size x 2^(c-1) buckets, one set per worker (batch
                                   mode: the overflow buckets) */
    MSM_N(jac_t) *win;          /* n_windows x n_chunk partial window sums */
    /* batch-affine mode (see msm.h, step 3) */
    int batch;                  /* 1: affine buckets with batched inversions */
    size_t batch_size;          /* B: additions per shared inversion; also the queue capacity */
    struct MSM_N(bscr) *bscr;   /* pool_size per-worker scratch sets */
} MSM_N(ctx);

/* Batch-affine scratch of one worker (nb = 2^(c-1) buckets, B = batch_size). */
typedef struct MSM_N(bscr) {
    MSM_N(aff_t) *bk;   /* nb affine buckets, meaningful where st has MSM_HAS */
    uint8_t *st;        /* nb bucket states: MSM_HAS | MSM_BUSY | MSM_OVF */
    MSM_N(xyzz_t) *ovf; /* nb overflow buckets, meaningful where st has MSM_OVF */
    const MSM_N(aff_t) *bases; /* the MSM's bases, which point references index */
    uint32_t *bb;       /* B: bucket of batch entry i */
    uint32_t *bi;       /* B: point reference of entry i: base index | MSM_NEG (add -base) */
    MSM_F(t) *den;      /* B: denominator of entry i (x2 - x1, or 2y to double, or 1) */
    MSM_F(t) *pre;      /* B: product of the denominators before entry i */
    uint8_t *kind;      /* B: 0 add, 1 double, 2 cancels to infinity */
    uint32_t *qb;       /* B: queued point's bucket (its bucket was busy) */
    uint32_t *qi;       /* B: queued point reference */
    size_t k;           /* entries in the batch, <= B */
    size_t q;           /* entries in the queue, <= B */
} MSM_N(bscr);

/* the point a reference names: a base, or its negation written to tmp */
static inline const MSM_N(aff_t) *MSM_N(b_point)(const MSM_N(bscr) *s, uint32_t ref,
                                                 MSM_N(aff_t) *tmp)
{
    const MSM_N(aff_t) *p = &s->bases[ref & ~MSM_NEG];
    if (!(ref & MSM_NEG))
        return p;
    MSM_G(aff_neg)(tmp, p);
    return tmp;
}

/* Runs the k pending additions bk[bb[i]] += point(bi[i]) with one inversion (Montgomery's trick):
 * lambda = (y2 - y1)/(x2 - x1) (or 3x^2/2y to double), x3 = lambda^2 - x1 - x2,
 * y3 = lambda (x1 - x3) - y1. Cost per entry 5M + 1S plus 1/k of an inversion. The prefix
 * products run as MSM_CHAINS interleaved chains (entry i in chain i % MSM_CHAINS), so
 * their multiplications do not wait on each other; the chains' products are inverted
 * together by a small Montgomery's trick of their own. */
static inline void MSM_N(b_flush)(MSM_N(bscr) *s)
{
    size_t k = s->k;
    if (!k)
        return;
    MSM_F(t) acc[MSM_CHAINS], inv[MSM_CHAINS], cpre[MSM_CHAINS], d, lam, t;
    for (int c = 0; c < MSM_CHAINS; c++)
        MSM_F(set_one)(&acc[c]);
    for (size_t i = 0; i < k; i++) {
        MSM_N(aff_t) tmp;
        const MSM_N(aff_t) *a = &s->bk[s->bb[i]];
        const MSM_N(aff_t) *p = &s->bases[s->bi[i] & ~MSM_NEG]; /* x is the same for -p */
        MSM_F(sub)(&d, &p->x, &a->x);
        s->kind[i] = 0;
        if (MSM_F(is_zero)(&d)) {
            p = MSM_N(b_point)(s, s->bi[i], &tmp);
            if (MSM_F(eq)(&p->y, &a->y) && !MSM_F(is_zero)(&a->y)) {
                s->kind[i] = 1; /* P + P */
                MSM_F(dbl)(&d, &a->y);
            } else {
                s->kind[i] = 2; /* P + (-P) */
                MSM_F(set_one)(&d);
            }
        }
        s->den[i] = d;
        s->pre[i] = acc[i % MSM_CHAINS];
        MSM_F(mul)(&acc[i % MSM_CHAINS], &acc[i % MSM_CHAINS], &d);
    }
    /* inv[c] = 1 / acc[c] with one inversion */
    MSM_F(t) all = acc[0];
    for (int c = 1; c < MSM_CHAINS; c++) {
        cpre[c] = all;
        MSM_F(mul)(&all, &all, &acc[c]);
    }
    MSM_F(inv)(&all, &all);
    for (int c = MSM_CHAINS - 1; c > 0; c--) {
        MSM_F(mul)(&inv[c], &all, &cpre[c]);
        MSM_F(mul)(&all, &all, &acc[c]);
    }
    inv[0] = all;
    for (size_t i = k; i-- > 0;) {
        uint32_t b = s->bb[i];
        MSM_N(aff_t) *a = &s->bk[b], tmp;
        const MSM_N(aff_t) *p = MSM_N(b_point)(s, s->bi[i], &tmp);
        MSM_F(t) *ci = &inv[i % MSM_CHAINS]; /* 1 / (den of the chain's entries up to i) */
        MSM_F(mul)(&d, ci, &s->pre[i]);      /* 1 / den[i] */
        MSM_F(mul)(ci, ci, &s->den[i]);
        s->st[b] &= (uint8_t)~MSM_BUSY;
        if (s->kind[i] == 2) {
            s->st[b] &= (uint8_t)~MSM_HAS;
            continue;
        }
        if (s->kind[i] == 1) {
            MSM_F(sqr)(&t, &a->x);
            MSM_F(dbl)(&lam, &t);
            MSM_F(add)(&t, &lam, &t);
            MSM_F(mul)(&lam, &t, &d);
        } else {
            MSM_F(sub)(&t, &p->y, &a->y);
            MSM_F(mul)(&lam, &t, &d);
        }
        MSM_F(sqr)(&t, &lam);
        MSM_F(sub)(&t, &t, &a->x);
        MSM_F(sub)(&t, &t, &p->x); /* x3 */
        MSM_F(sub)(&d, &a->x, &t);
        MSM_F(mul)(&d, &lam, &d);
        MSM_F(sub)(&a->y, &d, &a->y);
        a->x = t;
    }
    s->k = 0;
}

/* bucket b += p, now or later: an empty bucket takes p as it is; a bucket already in the
 * batch queues p (or, with the queue full, adds it to its XYZZ overflow bucket); any
 * other bucket joins the batch. The caller flushes when the batch holds B entries. */
static inline void MSM_N(b_insert)(MSM_N(bscr) *s, uint32_t b, uint32_t ref, size_t qcap)
{
    uint8_t st = s->st[b];
    MSM_N(aff_t) tmp;
    if (!(st & MSM_HAS)) {
        s->bk[b] = *MSM_N(b_point)(s, ref, &tmp);
        s->st[b] = st | MSM_HAS;
        return;
    }
    if (st & MSM_BUSY) {
        if (s->q < qcap) {
            s->qb[s->q] = b;
            s->qi[s->q] = ref;
            s->q++;
            return;
        }
        const MSM_N(aff_t) *p = MSM_N(b_point)(s, ref, &tmp);
        if (st & MSM_OVF)
            MSM_G(xyzz_add_aff)(&s->ovf[b], &s->ovf[b], p);
        else
            MSM_G(xyzz_from_aff)(&s->ovf[b], p);
        s->st[b] = st | MSM_OVF;
        return;
    }
    s->st[b] = st | MSM_BUSY;
    s->bb[s->k] = b;
    s->bi[s->k] = ref;
    s->k++;
}

/* re-inserts the queued points (those whose bucket is still busy stay queued) */
static inline void MSM_N(b_drain)(MSM_N(bscr) *s, size_t B)
{
    size_t n0 = s->q;
    s->q = 0;
    for (size_t r = 0; r < n0; r++) {
        uint32_t b = s->qb[r], ref = s->qi[r]; /* b_insert may rewrite slot s->q <= r */
        MSM_N(b_insert)(s, b, ref, B);
        if (s->k == B)
            MSM_N(b_flush)(s);
    }
}

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

/* Pass 2 in batch-affine mode: same contract as task_window. */
static inline void MSM_N(task_window_batch)(void *ctxp, size_t task, int worker)
{
    MSM_N(ctx) *x = ctxp;
    unsigned w = (unsigned)(task % x->n_windows);
    size_t chunk = task / x->n_windows;
    size_t j0 = chunk * x->chunk_per, j1 = j0 + x->chunk_per;
    if (j1 > x->m)
        j1 = x->m;
    unsigned c = x->c;
    size_t nb = (size_t)1 << (c - 1), B = x->batch_size;
    MSM_N(bscr) *s = &x->bscr[worker];
    memset(s->st, 0, nb);
    s->k = s->q = 0;

    for (size_t j = j0; j < j1; j++) {
        uint32_t i = x->idx[j];
        int d = msm_digit(msm_limbs(&x->scalars[i]), w, c);
        if (j + 1 < j1) {
            int dn = msm_digit(msm_limbs(&x->scalars[x->idx[j + 1]]), w, c);
            if (dn)
                __builtin_prefetch(&s->bk[(dn > 0 ? dn : -dn) - 1], 1);
            __builtin_prefetch(&x->bases[x->idx[j + 1]], 0);
        }
        if (d == 0)
            continue;
        if (d > 0)
            MSM_N(b_insert)(s, (uint32_t)(d - 1), i, B);
        else
            MSM_N(b_insert)(s, (uint32_t)(-d - 1), i | MSM_NEG, B);
        if (s->k == B) {
            MSM_N(b_flush)(s);
            MSM_N(b_drain)(s, B);
        }
    }
    MSM_N(b_flush)(s);
    MSM_N(b_drain)(s, B);
    MSM_N(b_flush)(s);
    /* what is still queued goes to the overflow buckets (nothing is busy any more) */
    for (size_t r = 0; r < s->q; r++) {
        uint32_t b = s->qb[r];
        MSM_N(aff_t) tmp;
        const MSM_N(aff_t) *p = MSM_N(b_point)(s, s->qi[r], &tmp);
        if (s->st[b] & MSM_OVF)
            MSM_G(xyzz_add_aff)(&s->ovf[b], &s->ovf[b], p);
        else
            MSM_G(xyzz_from_aff)(&s->ovf[b], p);
        s->st[b] |= MSM_OVF;
    }
    s->q = 0;

    MSM_N(xyzz_t) run, sum;
    MSM_G(xyzz_set_inf)(&run);
    MSM_G(xyzz_set_inf)(&sum);
    for (size_t b = nb; b-- > 0;) {
        uint8_t st = s->st[b];
        if (st & MSM_HAS)
            MSM_G(xyzz_add_aff)(&run, &run, &s->bk[b]);
        if (st & MSM_OVF)
            MSM_G(xyzz_add)(&run, &run, &s->ovf[b]);
        MSM_G(xyzz_add)(&sum, &sum, &run);
    }
    MSM_G(xyzz_to_jac)(&x->win[(size_t)w * x->n_chunk + chunk], &sum);
}

/* carves the batch-mode scratch of every worker out of one block (NULL on failure) */
static inline void *MSM_N(bscr_alloc)(MSM_N(ctx) *x, size_t threads)
{
    size_t nb = (size_t)1 << (x->c - 1), B = x->batch_size;
    size_t per = 0;
#define MSM_CARVE(bytes) (per += ((bytes) + 63) & ~(size_t)63)
    MSM_CARVE(nb * sizeof(MSM_N(aff_t)));
    MSM_CARVE(nb);
    MSM_CARVE(B * sizeof(uint32_t));
    MSM_CARVE(B * sizeof(uint32_t));
    MSM_CARVE(B * sizeof(MSM_F(t)));
    MSM_CARVE(B * sizeof(MSM_F(t)));
    MSM_CARVE(B);
    MSM_CARVE(B * sizeof(uint32_t));
    MSM_CARVE(B * sizeof(uint32_t));
#undef MSM_CARVE
    x->bscr = calloc(threads, sizeof *x->bscr);
    uint8_t *mem = malloc(threads * per + 64);
    if (!x->bscr || !mem) {
        free(mem);
        return NULL;
    }
    uint8_t *p = (uint8_t *)(((uintptr_t)mem + 63) & ~(uintptr_t)63);
#define MSM_TAKE(field, bytes)                                                                     \
    do {                                                                                           \
        s->field = (void *)p;                                                                      \
        p += ((bytes) + 63) & ~(size_t)63;                                                         \
    } while (0)
    for (size_t t = 0; t < threads; t++) {
        MSM_N(bscr) *s = &x->bscr[t];
        MSM_TAKE(bk, nb * sizeof(MSM_N(aff_t)));
        MSM_TAKE(st, nb);
        MSM_TAKE(bb, B * sizeof(uint32_t));
        MSM_TAKE(bi, B * sizeof(uint32_t));
        MSM_TAKE(den, B * sizeof(MSM_F(t)));
        MSM_TAKE(pre, B * sizeof(MSM_F(t)));
        MSM_TAKE(kind, B);
        MSM_TAKE(qb, B * sizeof(uint32_t));
        MSM_TAKE(qi, B * sizeof(uint32_t));
        s->ovf = x->buckets + t * nb;
        s->bases = x->bases;
    }
#undef MSM_TAKE
    return mem;
}

/* *acc = sum over windows w of 2^(c w) (win[w per] + ... + win[w per + per - 1]), by Horner
 * from the top window: its c (n_windows - 1) doublings are one dependent chain. Also used for
 * the GPU backend's window sums (prover_core.h, msm_windows_g1/g2). */
static inline void MSM_N(combine_windows)(MSM_N(jac_t) *acc, const MSM_N(jac_t) *win, unsigned n_windows,
                                          size_t per, unsigned c)
{
    MSM_G(jac_set_inf)(acc);
    for (unsigned w = n_windows; w-- > 0;) {
        if (w + 1 < n_windows)
            for (unsigned i = 0; i < c; i++)
                MSM_G(jac_dbl)(acc, acc);
        for (size_t k = 0; k < per; k++)
            MSM_G(jac_add)(acc, acc, &win[(size_t)w * per + k]);
    }
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
    void *bmem = NULL; /* batch-mode scratch block */
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
    x.c = msm_window_bits(x.m, nbits, &x.batch);
    x.batch_size = msm_batch_size(x.c);
    x.n_windows = (nbits + 1 + x.c - 1) / x.c;
    x.n_chunk = msm_chunks(x.m, x.c, x.n_windows, threads);
    x.chunk_per = msm_div_up(x.m, x.n_chunk);
    x.n_chunk = msm_div_up(x.m, x.chunk_per);
    x.buckets = malloc(threads * ((size_t)1 << (x.c - 1)) * sizeof *x.buckets);
    x.win = malloc((size_t)x.n_windows * x.n_chunk * sizeof *x.win);
    if (!x.buckets || !x.win)
        goto plain;
    if (x.batch && !(bmem = MSM_N(bscr_alloc)(&x, threads)))
        x.batch = 0; /* the XYZZ buckets need no more memory */
    pool_run(pool, (size_t)x.n_windows * x.n_chunk,
             x.batch ? MSM_N(task_window_batch) : MSM_N(task_window), &x);

    MSM_N(jac_t) acc;
    MSM_N(combine_windows)(&acc, x.win, x.n_windows, x.n_chunk, x.c);
    MSM_G(jac_add)(o, o, &acc);
    goto done;

plain:
    MSM_N(run_plain)(o, bases, scalars, n);
done:
    free(bmem);
    free(x.bscr);
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
