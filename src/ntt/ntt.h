/* ntt.h - CPU number-theoretic transform over Fr (per curve: included into a curve's
 * translation unit after the curve parameters and the field headers, see docs/DESIGN.md).
 *
 *   ntt_fr(a, log_n, inverse, pool)        in place, natural order in and out:
 *       forward  A[k] = sum_i a[i] w^(i*k),   w = fr_root_of_unity(log_n)
 *       inverse  a[i] = 1/n sum_k A[k] w^(-i*k)
 *   ntt_fr_coset_shift(a, log_n, g, pool)  a[i] *= g^i
 *
 * DESIGN. Radix-2 decimation in time: a bit-reversal permutation, then log_n butterfly
 * stages. The first NTT_BLOCK_LOG stages stay inside blocks of 2^NTT_BLOCK_LOG elements
 * (64 KiB), so one task per block runs them all out of cache; every later stage is one
 * pool_run over ranges of butterflies. Each stage of half-size m = 2^s reads its twiddles
 * w_(s+1)^j, j < m, from a contiguous table; since w_s = w_(s+1)^2 (FORMATS.md, roots of
 * unity) the table for stage s is the same for every transform size, so the tables are
 * built once per s on first use and kept for the life of the process (guarded by a
 * mutex, read lock-free afterwards; n entries in all for a transform of size n). The
 * inverse transform is the forward one followed by a[i] <-> a[n-i] and a scaling by 1/n.
 * If a table cannot be allocated the transform still runs, computing twiddles as it goes.
 * This is variable-time code; NTT inputs are public or witness-derived values, never r, s.
 *
 * Cost: (n/2) log2(n) Fr multiplications, plus n for the inverse scaling.
 */
#ifndef CUZK_NTT_NTT_H
#define CUZK_NTT_NTT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ff/ff.h"
#include "util/pool.h"

#define NTT_BLOCK_LOG 11    /* elements per cache block: 2^11 x 32 bytes = 64 KiB */
#define NTT_MAX_LOG 40      /* more than either field's 2-adicity (28, 32) */
#define NTT_TASK_MIN_LOG 10 /* at least 2^10 butterflies per task in a stage */

/* ---- twiddle tables -------------------------------------------------------------- */

typedef struct ntt_tw_cache {
    _Atomic(fr_t *) stage[NTT_MAX_LOG]; /* stage[s]: 2^s entries w_(s+1)^j (Montgomery), or NULL */
    pthread_mutex_t mu;                 /* serializes table construction */
} ntt_tw_cache;

static inline ntt_tw_cache *ntt_tw_cache_get(void)
{
    static ntt_tw_cache cache = {.mu = PTHREAD_MUTEX_INITIALIZER};
    return &cache;
}

/* Table for stage s (half-size 2^s): w_(s+1)^j for j < 2^s. NULL if out of memory. */
static inline const fr_t *ntt_twiddles(unsigned s)
{
    ntt_tw_cache *c = ntt_tw_cache_get();
    fr_t *t = atomic_load_explicit(&c->stage[s], memory_order_acquire);
    if (t)
        return t;
    pthread_mutex_lock(&c->mu);
    t = atomic_load_explicit(&c->stage[s], memory_order_relaxed);
    if (!t) {
        size_t m = (size_t)1 << s;
        t = malloc(m * sizeof *t);
        if (t) {
            fr_t w;
            fr_root_of_unity(&w, s + 1);
            t[0] = FR_ONE;
            for (size_t j = 1; j < m; j++)
                fr_mul(&t[j], &t[j - 1], &w);
            atomic_store_explicit(&c->stage[s], t, memory_order_release);
        }
    }
    pthread_mutex_unlock(&c->mu);
    return t;
}

/* ---- butterflies ----------------------------------------------------------------- */

/* radix-2 DIT butterfly: (x, y) <- (x + w y, x - w y) */
static inline void ntt_butterfly(fr_t *x, fr_t *y, const fr_t *w)
{
    fr_t t;
    fr_mul(&t, y, w);
    fr_sub(y, x, &t);
    fr_add(x, x, &t);
}

/* Butterflies k in [k0, k1) of stage s over a (k indexes the n/2 butterflies of the stage:
 * block k >> s, offset j = k & (2^s - 1)). tw = stage table or NULL (compute on the fly). */
static inline void ntt_stage_range(fr_t *a, unsigned s, size_t k0, size_t k1, const fr_t *tw)
{
    size_t m = (size_t)1 << s;
    if (tw) {
        for (size_t k = k0; k < k1;) {
            size_t j = k & (m - 1);
            fr_t *base = a + ((k >> s) << (s + 1));
            size_t jend = m;
            if (k1 - k < m - j)
                jend = j + (k1 - k);
            for (size_t jj = j; jj < jend; jj++)
                ntt_butterfly(&base[jj], &base[jj + m], &tw[jj]);
            k += jend - j;
        }
        return;
    }
    /* no table: w_(s+1)^j by repeated multiplication, restarted at each block */
    fr_t wm;
    fr_root_of_unity(&wm, s + 1);
    for (size_t k = k0; k < k1;) {
        size_t j = k & (m - 1);
        fr_t *base = a + ((k >> s) << (s + 1));
        size_t jend = m;
        if (k1 - k < m - j)
            jend = j + (k1 - k);
        fr_t w;
        uint64_t e = j;
        fr_pow(&w, &wm, &e, 1);
        for (size_t jj = j; jj < jend; jj++) {
            ntt_butterfly(&base[jj], &base[jj + m], &w);
            fr_mul(&w, &w, &wm);
        }
        k += jend - j;
    }
}

static inline size_t ntt_bitrev(size_t i, unsigned log_n)
{
    uint64_t x = (uint64_t)i;
    x = ((x >> 1) & 0x5555555555555555ull) | ((x & 0x5555555555555555ull) << 1);
    x = ((x >> 2) & 0x3333333333333333ull) | ((x & 0x3333333333333333ull) << 2);
    x = ((x >> 4) & 0x0f0f0f0f0f0f0f0full) | ((x & 0x0f0f0f0f0f0f0f0full) << 4);
    x = __builtin_bswap64(x);
    return log_n ? (size_t)(x >> (64 - log_n)) : 0;
}

/* ---- parallel passes ------------------------------------------------------------- */

typedef struct ntt_job {
    fr_t *a;
    unsigned log_n;
    unsigned s;          /* current stage (stage pass) */
    size_t per_task;     /* elements or butterflies per task */
    const fr_t *tw;      /* stage table (stage pass) */
    const fr_t *tws[NTT_BLOCK_LOG]; /* tables of the in-block stages */
    unsigned block_log;  /* log2 of the block size of the in-block pass */
    fr_t g;              /* coset generator / scale factor */
} ntt_job;

static inline void ntt_task_bitrev(void *ctx, size_t task, int worker)
{
    (void)worker;
    ntt_job *j = ctx;
    size_t n = (size_t)1 << j->log_n;
    size_t i0 = task * j->per_task, i1 = i0 + j->per_task;
    if (i1 > n)
        i1 = n;
    for (size_t i = i0; i < i1; i++) {
        size_t r = ntt_bitrev(i, j->log_n);
        if (i < r) {
            fr_t t = j->a[i];
            j->a[i] = j->a[r];
            j->a[r] = t;
        }
    }
}

static inline void ntt_task_blocks(void *ctx, size_t task, int worker)
{
    (void)worker;
    ntt_job *j = ctx;
    size_t bsize = (size_t)1 << j->block_log;
    fr_t *blk = j->a + task * bsize;
    for (unsigned s = 0; s < j->block_log; s++)
        ntt_stage_range(blk, s, 0, bsize / 2, j->tws[s]);
}

static inline void ntt_task_stage(void *ctx, size_t task, int worker)
{
    (void)worker;
    ntt_job *j = ctx;
    size_t half = (size_t)1 << (j->log_n - 1);
    size_t k0 = task * j->per_task, k1 = k0 + j->per_task;
    if (k1 > half)
        k1 = half;
    ntt_stage_range(j->a, j->s, k0, k1, j->tw);
}

/* a[i] *= g * step^i for i in the task's range; here used with j->g as step */
static inline void ntt_task_coset(void *ctx, size_t task, int worker)
{
    (void)worker;
    ntt_job *j = ctx;
    size_t n = (size_t)1 << j->log_n;
    size_t i0 = task * j->per_task, i1 = i0 + j->per_task;
    if (i1 > n)
        i1 = n;
    fr_t w;
    uint64_t e = i0;
    fr_pow(&w, &j->g, &e, 1);
    for (size_t i = i0; i < i1; i++) {
        fr_mul(&j->a[i], &j->a[i], &w);
        fr_mul(&w, &w, &j->g);
    }
}

/* a[i] <-> a[n-i] for 0 < i < n/2 and a[i] *= 1/n */
static inline void ntt_task_inv_fix(void *ctx, size_t task, int worker)
{
    (void)worker;
    ntt_job *j = ctx;
    size_t n = (size_t)1 << j->log_n;
    size_t i0 = task * j->per_task, i1 = i0 + j->per_task;
    if (i1 > n / 2 + 1)
        i1 = n / 2 + 1;
    for (size_t i = i0; i < i1; i++) {
        size_t r = (n - i) & (n - 1);
        if (r == i) {
            fr_mul(&j->a[i], &j->a[i], &j->g);
        } else {
            fr_t t;
            fr_mul(&t, &j->a[i], &j->g);
            fr_mul(&j->a[i], &j->a[r], &j->g);
            j->a[r] = t;
        }
    }
}

static inline size_t ntt_div_up(size_t a, size_t b)
{
    return (a + b - 1) / b;
}

/* elements per task for an O(n) pass: about 4 tasks per participant, at least 2^12 */
static inline size_t ntt_linear_chunk(size_t n, pool_t *pool)
{
    size_t per = ntt_div_up(n, 4 * (size_t)pool_size(pool));
    if (per < 4096)
        per = 4096;
    return per;
}

static inline void ntt_fr(fr_t *a, unsigned log_n, int inverse, pool_t *pool)
{
    if (log_n == 0)
        return; /* size 1: the identity, and 1/n = 1 */
    size_t n = (size_t)1 << log_n;
    ntt_job j;
    memset(&j, 0, sizeof j);
    j.a = a;
    j.log_n = log_n;

    j.per_task = ntt_linear_chunk(n, pool);
    pool_run(pool, ntt_div_up(n, j.per_task), ntt_task_bitrev, &j);

    j.block_log = log_n < NTT_BLOCK_LOG ? log_n : NTT_BLOCK_LOG;
    for (unsigned s = 0; s < j.block_log; s++)
        j.tws[s] = ntt_twiddles(s);
    pool_run(pool, n >> j.block_log, ntt_task_blocks, &j);

    size_t half = n / 2;
    size_t per = ntt_div_up(half, 4 * (size_t)pool_size(pool));
    if (per < ((size_t)1 << NTT_TASK_MIN_LOG))
        per = (size_t)1 << NTT_TASK_MIN_LOG;
    j.per_task = per;
    for (unsigned s = j.block_log; s < log_n; s++) {
        j.s = s;
        j.tw = ntt_twiddles(s);
        pool_run(pool, ntt_div_up(half, per), ntt_task_stage, &j);
    }

    if (inverse) {
        fr_from_u64(&j.g, (uint64_t)n);
        fr_inv(&j.g, &j.g);
        j.per_task = ntt_linear_chunk(n / 2 + 1, pool);
        pool_run(pool, ntt_div_up(n / 2 + 1, j.per_task), ntt_task_inv_fix, &j);
    }
}

static inline void ntt_fr_coset_shift(fr_t *a, unsigned log_n, const fr_t *g, pool_t *pool)
{
    size_t n = (size_t)1 << log_n;
    ntt_job j;
    memset(&j, 0, sizeof j);
    j.a = a;
    j.log_n = log_n;
    j.g = *g;
    j.per_task = ntt_linear_chunk(n, pool);
    pool_run(pool, ntt_div_up(n, j.per_task), ntt_task_coset, &j);
}

#endif
