/* devsetup.h - per-curve half of `cuzk dev-circuit`: witness solving and an INSECURE
 * Groth16 setup from a known toxic waste, written as a snarkjs .zkey.
 *
 * Included once per curve translation unit (curve_impl.h), after the curve header and the
 * ff/ec layers. Exports CURVE_SYM(dev_setup) (declared in devcircuit.h); everything else
 * is static. Define DEV_SETUP_NO_EXPORT before including to get only the static
 * functions (tests).
 *
 * DESIGN. The key is what snarkjs's `groth16 setup` followed by one contribution would
 * produce (docs/FORMATS.md section 3), computed directly from tau, alpha, beta, delta
 * (gamma = 1) instead of from a powers-of-tau file:
 *   L_i(t)       = (t^n - 1)/n * w^i/(t - w^i)            Lagrange basis of the n-point domain
 *   a_j(t)       = sum_c A[c][j] L_c(t) + [j <= nPublic] L_(nConstraints+j)(t), b_j, c_j likewise
 *   A_j = [a_j]1, B1_j = [b_j]1, B2_j = [b_j]2, IC_j = [beta a_j + alpha b_j + c_j]1 (j <= nPublic),
 *   C_j = [(beta a_j + alpha b_j + c_j)/delta]1 (j > nPublic),
 *   H_k = [L'_(2k+1)(t)/delta]1, L' the Lagrange basis of the 2n-point domain.
 * Cost: the Lagrange values are n + n inversions batched into two (Montgomery's trick);
 * the points are fixed-base scalar multiplications (dev_fb_*): per base a table of
 * d * 2^(w i) * G for signed digits d in 1..2^(w-1), so one product costs about 255/w
 * additions and no doublings. The products of a chunk of scalars advance together, window
 * by window, in affine coordinates with one shared inversion per window (about 6M per
 * addition, no conversion at the end); chunks run over the thread pool. Work: 3 G1
 * products per wire (A, B1, C; zero scalars are free), 1 G2 product per wire (B2) and
 * 2 G1 products per constraint (H).
 * GPU. With a CUDA device (dev_circuit_params.backend auto or gpu) the same tables, built
 * with a wider window (dev_fb_pick_w_gpu), are uploaded once and dev_fb_g1_run /
 * dev_fb_g2_run hand the products to gpu/fixed_base.cuh: one thread per scalar, same digit
 * recoding, XYZZ sums, batched conversion to affine. The points are the same group
 * elements in the same reduced encoding, so the key is byte-identical to the CPU's. With
 * auto, a missing or failing GPU leaves the work to the CPU.
 * All of this is variable-time, which is fine: the secrets are public by design.
 */
#ifndef CUZK_GROTH16_DEVSETUP_H
#define CUZK_GROTH16_DEVSETUP_H

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu/fixed_base.h"
#include "groth16/backend.h"
#include "groth16/devcircuit.h"
#include "util/pool.h"

/* this curve's GPU fixed-base functions (gpu/fixed_base.h) */
#if CURVE_IS_BN254
#define DEV_GPU(x) x##_bn254
#else
#define DEV_GPU(x) x##_bls12_381
#endif

_Static_assert(sizeof(g1_aff_t) == 2 * 8 * FQ_LIMBS, "g1_aff_t must have the zkey's byte layout");
_Static_assert(sizeof(g2_aff_t) == 4 * 8 * FQ_LIMBS, "g2_aff_t must have the zkey's byte layout");
_Static_assert(sizeof(fr_t) == 32, "fr_t must be 32 bytes");

static double dev_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void dev_fr_from_bytes(fr_t *o, const uint8_t *b)
{
    fr_t t;
    memcpy(&t, b, sizeof t);
    fr_from_std(o, &t);
}

static void dev_fr_to_bytes(uint8_t *b, const fr_t *a)
{
    fr_t t;
    fr_to_std(&t, a);
    memcpy(b, &t, sizeof t);
}

/* ---- fixed-base scalar multiplication ------------------------------------------------
 * Table layout: t[i * half + (d - 1)] = d * 2^(w i) * G for window i < nwin, 1 <= d <= half,
 * half = 2^(w-1). Scalars (std form, < r < 2^FR_BITS) are recoded into nwin signed digits
 * in [-(half-1), half]; nwin = ceil((FR_BITS+1)/w) leaves room for the last carry. */

#define DEV_FB_CHUNK 1024          /* scalars per task; one inversion per window per task */
#define DEV_FB_TABLE_MAX (8u << 20) /* bytes a table may take (bigger ones thrash the caches) */

static unsigned dev_fb_nwin(unsigned w) { return (FR_BITS + 1 + w - 1) / w; }

/* window width minimising (3 * table entries + n) * windows within the memory cap (a table
 * entry costs an addition plus its share of a batch conversion; measured on BN254) */
static unsigned dev_fb_pick_w(size_t n, size_t aff_bytes)
{
    unsigned best = 2;
    double best_cost = 1e300;
    for (unsigned w = 2; w <= 16; w++) {
        double half = (double)(1u << (w - 1)), nwin = dev_fb_nwin(w);
        if (half * nwin * (double)aff_bytes > DEV_FB_TABLE_MAX)
            break;
        double cost = nwin * ((double)n + 3 * half);
        if (cost < best_cost) {
            best_cost = cost;
            best = w;
        }
    }
    return best;
}

/* window width for the GPU: the products are cheap there while the table is built on the
 * host, about half * t_cpu (windows in parallel), against n * nwin * t_gpu for the
 * products; t_cpu / t_gpu is about 500 for one addition (estimated for BN254 G1 on 16
 * cores against an H100-class card). Capped at 16 bits (tables of at most 96 MiB). */
static unsigned dev_fb_pick_w_gpu(size_t n)
{
    unsigned best = 4;
    double best_cost = 1e300;
    for (unsigned w = 4; w <= 16; w++) {
        double cost = dev_fb_nwin(w) * (double)n + 500.0 * (double)(1u << (w - 1));
        if (cost < best_cost) {
            best_cost = cost;
            best = w;
        }
    }
    return best;
}

/* signed digits of k (std form): k = sum d_i 2^(w i) */
static void dev_fb_recode(int32_t *d, const uint64_t k[4], unsigned w, unsigned nwin)
{
    uint32_t carry = 0, half = 1u << (w - 1), mask = (1u << w) - 1;
    for (unsigned i = 0; i < nwin; i++) {
        unsigned bit = i * w, limb = bit / 64, sh = bit % 64;
        uint64_t v = limb < 4 ? k[limb] >> sh : 0;
        if (sh + w > 64 && limb + 1 < 4)
            v |= k[limb + 1] << (64 - sh);
        uint32_t x = ((uint32_t)v & mask) + carry;
        if (x > half) {
            d[i] = (int32_t)x - (int32_t)(1u << w);
            carry = 1;
        } else {
            d[i] = (int32_t)x;
            carry = 0;
        }
    }
}

/* DEV_FB_DEFINE(group, base field, base field type): table type, build, multiplication. */
#define DEV_FB_DEFINE(G, BF, BT)                                                                         \
    typedef struct dev_fb_##G {                                                                    \
        unsigned w, nwin, half;                                                                    \
        G##_aff_t *t;        /* nwin * half entries */                                             \
        gpu_fixed_base *gpu; /* t uploaded to the GPU (products there), or NULL: the CPU */        \
    } dev_fb_##G;                                                                                  \
                                                                                                   \
    typedef struct dev_fb_##G##_build_ctx {                                                        \
        dev_fb_##G *tab;                                                                           \
        const G##_aff_t *bases; /* 2^(w i) G, affine */                                            \
        int oom;                                                                                   \
    } dev_fb_##G##_build_ctx;                                                                      \
                                                                                                   \
    static void dev_fb_##G##_build_task(void *vctx, size_t i, int worker)                          \
    {                                                                                              \
        (void)worker;                                                                              \
        dev_fb_##G##_build_ctx *ctx = vctx;                                                        \
        dev_fb_##G *tab = ctx->tab;                                                                \
        G##_jac_t *j = malloc(tab->half * sizeof *j);                                              \
        if (!j) {                                                                                  \
            ctx->oom = 1;                                                                          \
            return;                                                                                \
        }                                                                                          \
        G##_jac_from_aff(&j[0], &ctx->bases[i]);                                                   \
        for (unsigned d = 1; d < tab->half; d++)                                                   \
            G##_jac_add_aff(&j[d], &j[d - 1], &ctx->bases[i]);                                     \
        G##_batch_to_aff(tab->t + (size_t)i * tab->half, j, tab->half);                            \
        free(j);                                                                                   \
    }                                                                                              \
                                                                                                   \
    /* Table of window width w (2..16) for base p. Returns false when out of memory. */           \
    static bool dev_fb_##G##_init_w(dev_fb_##G *tab, const G##_aff_t *p, unsigned w, pool_t *pool) \
    {                                                                                              \
        tab->w = w;                                                                                \
        tab->nwin = dev_fb_nwin(tab->w);                                                           \
        tab->half = 1u << (tab->w - 1);                                                            \
        tab->gpu = NULL;                                                                           \
        tab->t = malloc((size_t)tab->nwin * tab->half * sizeof *tab->t);                           \
        G##_jac_t *bj = malloc(tab->nwin * sizeof *bj);                                            \
        G##_aff_t *ba = malloc(tab->nwin * sizeof *ba);                                            \
        bool ok = tab->t && bj && ba;                                                              \
        if (ok) {                                                                                  \
            G##_jac_from_aff(&bj[0], p);                                                           \
            for (unsigned i = 1; i < tab->nwin; i++) {                                             \
                bj[i] = bj[i - 1];                                                                 \
                for (unsigned k = 0; k < tab->w; k++)                                              \
                    G##_jac_dbl(&bj[i], &bj[i]);                                                   \
            }                                                                                      \
            G##_batch_to_aff(ba, bj, tab->nwin);                                                   \
            dev_fb_##G##_build_ctx ctx = {tab, ba, 0};                                             \
            pool_run(pool, tab->nwin, dev_fb_##G##_build_task, &ctx);                              \
            ok = !ctx.oom;                                                                         \
        }                                                                                          \
        free(bj);                                                                                  \
        free(ba);                                                                                  \
        if (!ok) {                                                                                 \
            free(tab->t);                                                                          \
            tab->t = NULL;                                                                         \
        }                                                                                          \
        return ok;                                                                                 \
    }                                                                                              \
                                                                                                   \
    /* Table for base p, sized for about n scalars. */                                             \
    static bool dev_fb_##G##_init(dev_fb_##G *tab, const G##_aff_t *p, size_t n, pool_t *pool)     \
    {                                                                                              \
        return dev_fb_##G##_init_w(tab, p, dev_fb_pick_w(n, sizeof(G##_aff_t)), pool);             \
    }                                                                                              \
                                                                                                   \
    /* Uploads the table; products then run on the GPU. */                                        \
    static cuzk_err dev_fb_##G##_to_gpu(dev_fb_##G *tab, char *err)                                \
    {                                                                                              \
        return DEV_GPU(gpu_fixed_base_##G)(&tab->gpu, tab->t, tab->w, tab->nwin, err);             \
    }                                                                                              \
                                                                                                   \
    /* Products go back to the CPU. */                                                             \
    static void dev_fb_##G##_gpu_release(dev_fb_##G *tab)                                          \
    {                                                                                              \
        DEV_GPU(gpu_fixed_base_free)(tab->gpu);                                                    \
        tab->gpu = NULL;                                                                           \
    }                                                                                              \
                                                                                                   \
    static void dev_fb_##G##_free(dev_fb_##G *tab)                                                 \
    {                                                                                              \
        dev_fb_##G##_gpu_release(tab);                                                             \
        free(tab->t);                                                                              \
        tab->t = NULL;                                                                             \
    }                                                                                              \
                                                                                                   \
    /* o = [k]G for one scalar k (Montgomery form), Jacobian */                                    \
    static void dev_fb_##G##_mul(G##_jac_t *o, const dev_fb_##G *tab, const fr_t *k_mont)          \
    {                                                                                              \
        fr_t k;                                                                                    \
        int32_t dig[FR_BITS + 2];                                                                  \
        fr_to_std(&k, k_mont);                                                                     \
        dev_fb_recode(dig, k.l, tab->w, tab->nwin);                                                \
        G##_jac_set_inf(o);                                                                        \
        for (unsigned i = 0; i < tab->nwin; i++) {                                                 \
            int32_t d = dig[i];                                                                    \
            if (d > 0) {                                                                           \
                G##_jac_add_aff(o, o, &tab->t[(size_t)i * tab->half + (unsigned)(d - 1)]);         \
            } else if (d < 0) {                                                                    \
                G##_aff_t q;                                                                       \
                G##_aff_neg(&q, &tab->t[(size_t)i * tab->half + (unsigned)(-d - 1)]);              \
                G##_jac_add_aff(o, o, &q);                                                         \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    /* Scratch of one worker for one chunk of lanes (one lane per scalar). */                     \
    typedef struct dev_fb_##G##_lanes {                                                            \
        int32_t *dig;   /* DEV_FB_CHUNK * nwin signed digits */                                    \
        uint8_t *state; /* per lane: 0 infinity so far, 1 affine sum valid, 2 fallback */          \
        uint32_t *idx;  /* lanes taking part in the current window's batch */                      \
        BT *dx, *pre;   /* x differences, prefix products */                                       \
    } dev_fb_##G##_lanes;                                                                          \
                                                                                                   \
    typedef struct dev_fb_##G##_run_ctx {                                                          \
        const dev_fb_##G *tab;                                                                     \
        const fr_t *k;                                                                             \
        G##_aff_t *out;                                                                            \
        size_t n;                                                                                  \
        dev_fb_##G##_lanes *lanes; /* pool_size entries */                                         \
    } dev_fb_##G##_run_ctx;                                                                        \
                                                                                                   \
    /* table entry for digit d != 0 of window i (negated for d < 0) */                             \
    static inline void dev_fb_##G##_entry(G##_aff_t *q, const dev_fb_##G *tab, unsigned i,         \
                                          int32_t d)                                               \
    {                                                                                              \
        if (d > 0) {                                                                               \
            *q = tab->t[(size_t)i * tab->half + (unsigned)(d - 1)];                                \
        } else {                                                                                   \
            q->x = tab->t[(size_t)i * tab->half + (unsigned)(-d - 1)].x;                           \
            BF##_neg(&q->y, &tab->t[(size_t)i * tab->half + (unsigned)(-d - 1)].y);                \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    /* One chunk, all lanes in lock step window by window, sums kept affine: each window adds  \
     * its table entries with one shared inversion (Montgomery's trick), so an addition costs  \
     * about 6M (3M batch share + lambda, x3, y3) instead of a mixed Jacobian addition's 7M+4S \
     * and no final conversion. A lane whose sum meets +-its table entry (x equal; impossible  \
     * for scalars < r by the size of the partial sums, kept for safety) is recomputed in      \
     * Jacobian coordinates by dev_fb_mul. */                                                  \
    static void dev_fb_##G##_run_task(void *vctx, size_t task, int worker)                         \
    {                                                                                              \
        dev_fb_##G##_run_ctx *ctx = vctx;                                                          \
        const dev_fb_##G *tab = ctx->tab;                                                          \
        dev_fb_##G##_lanes *L = &ctx->lanes[worker];                                               \
        size_t from = task * DEV_FB_CHUNK, m = ctx->n - from;                                      \
        if (m > DEV_FB_CHUNK)                                                                      \
            m = DEV_FB_CHUNK;                                                                      \
        G##_aff_t *acc = ctx->out + from, q;                                                       \
        for (size_t j = 0; j < m; j++) {                                                           \
            fr_t k;                                                                                \
            fr_to_std(&k, &ctx->k[from + j]);                                                      \
            dev_fb_recode(L->dig + j * tab->nwin, k.l, tab->w, tab->nwin);                         \
            L->state[j] = 0;                                                                       \
        }                                                                                          \
        for (unsigned i = 0; i < tab->nwin; i++) {                                                 \
            size_t cnt = 0;                                                                        \
            BT prod, inv, lam, t;                                                                  \
            BF##_set_one(&prod);                                                                   \
            for (size_t j = 0; j < m; j++) {                                                       \
                int32_t d = L->dig[j * tab->nwin + i];                                             \
                if (d == 0 || L->state[j] == 2)                                                    \
                    continue;                                                                      \
                dev_fb_##G##_entry(&q, tab, i, d);                                                 \
                if (L->state[j] == 0) {                                                            \
                    acc[j] = q;                                                                    \
                    L->state[j] = 1;                                                               \
                    continue;                                                                      \
                }                                                                                  \
                BF##_sub(&L->dx[cnt], &q.x, &acc[j].x);                                            \
                if (BF##_is_zero(&L->dx[cnt])) {                                                   \
                    L->state[j] = 2;                                                               \
                    continue;                                                                      \
                }                                                                                  \
                L->pre[cnt] = prod;                                                                \
                BF##_mul(&prod, &prod, &L->dx[cnt]);                                               \
                L->idx[cnt++] = (uint32_t)j;                                                       \
            }                                                                                      \
            if (cnt == 0)                                                                          \
                continue;                                                                          \
            BF##_inv(&inv, &prod);                                                                 \
            for (size_t c = cnt; c-- > 0;) {                                                       \
                size_t j = L->idx[c];                                                              \
                G##_aff_t *a = &acc[j];                                                            \
                BF##_mul(&t, &inv, &L->pre[c]); /* 1/dx_c */                                       \
                BF##_mul(&inv, &inv, &L->dx[c]);                                                   \
                dev_fb_##G##_entry(&q, tab, i, L->dig[j * tab->nwin + i]);                         \
                BF##_sub(&lam, &q.y, &a->y);                                                       \
                BF##_mul(&lam, &lam, &t);         /* lambda = (y2 - y1)/(x2 - x1) */               \
                BF##_sqr(&t, &lam);                                                                \
                BF##_sub(&t, &t, &a->x);                                                           \
                BF##_sub(&t, &t, &q.x);           /* x3 = lambda^2 - x1 - x2 */                    \
                BF##_sub(&q.x, &a->x, &t);                                                         \
                BF##_mul(&q.x, &q.x, &lam);                                                        \
                BF##_sub(&a->y, &q.x, &a->y);     /* y3 = lambda (x1 - x3) - y1 */                 \
                a->x = t;                                                                          \
            }                                                                                      \
        }                                                                                          \
        for (size_t j = 0; j < m; j++) {                                                           \
            if (L->state[j] == 0) {                                                                \
                memset(&acc[j], 0, sizeof acc[j]);                                                 \
            } else if (L->state[j] == 2) {                                                         \
                G##_jac_t r;                                                                       \
                dev_fb_##G##_mul(&r, tab, &ctx->k[from + j]);                                      \
                G##_jac_to_aff(&acc[j], &r);                                                       \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    /* out[i] = [k[i]]G on the CPU (affine; zero scalars give the all-zero infinity).          \
     * false: no memory */                                                                         \
    static bool dev_fb_##G##_run_cpu(G##_aff_t *out, const fr_t *k, size_t n,                      \
                                     const dev_fb_##G *tab, pool_t *pool)                          \
    {                                                                                              \
        if (n == 0)                                                                                \
            return true;                                                                           \
        int np = pool_size(pool);                                                                  \
        dev_fb_##G##_run_ctx ctx = {tab, k, out, n, calloc((size_t)np, sizeof *ctx.lanes)};        \
        bool ok = ctx.lanes != NULL;                                                               \
        for (int i = 0; ok && i < np; i++) {                                                       \
            dev_fb_##G##_lanes *L = &ctx.lanes[i];                                                 \
            L->dig = malloc((size_t)DEV_FB_CHUNK * tab->nwin * sizeof *L->dig);                    \
            L->state = malloc(DEV_FB_CHUNK);                                                       \
            L->idx = malloc(DEV_FB_CHUNK * sizeof *L->idx);                                        \
            L->dx = malloc(DEV_FB_CHUNK * sizeof *L->dx);                                          \
            L->pre = malloc(DEV_FB_CHUNK * sizeof *L->pre);                                        \
            ok = L->dig && L->state && L->idx && L->dx && L->pre;                                  \
        }                                                                                          \
        if (ok)                                                                                    \
            pool_run(pool, (n + DEV_FB_CHUNK - 1) / DEV_FB_CHUNK, dev_fb_##G##_run_task, &ctx);    \
        for (int i = 0; ctx.lanes && i < np; i++) {                                                \
            free(ctx.lanes[i].dig);                                                                \
            free(ctx.lanes[i].state);                                                              \
            free(ctx.lanes[i].idx);                                                                \
            free(ctx.lanes[i].dx);                                                                 \
            free(ctx.lanes[i].pre);                                                                \
        }                                                                                          \
        free(ctx.lanes);                                                                           \
        return ok;                                                                                 \
    }                                                                                              \
                                                                                                   \
    /* out[i] = [k[i]]G, on the GPU when the table is there (tab->gpu), else on the CPU. The    \
     * bytes are the same either way. */                                                          \
    static cuzk_err dev_fb_##G##_run(G##_aff_t *out, const fr_t *k, size_t n,                      \
                                     const dev_fb_##G *tab, pool_t *pool, char *err)               \
    {                                                                                              \
        if (tab->gpu)                                                                              \
            return DEV_GPU(gpu_fixed_base_run)(tab->gpu, out, k, n, err);                          \
        if (!dev_fb_##G##_run_cpu(out, k, n, tab, pool))                                           \
            return cuzk_errf(err, CUZK_ENOMEM, "dev-circuit: out of memory for %zu products", n);  \
        return CUZK_OK;                                                                            \
    }

DEV_FB_DEFINE(g1, fq, fq_t)
DEV_FB_DEFINE(g2, fq2, fq2_t)

/* ---- witness -------------------------------------------------------------------------- */

typedef struct dev_lc_sums { fr_t s[3]; } dev_lc_sums;

/* s[m] = sum of matrix m of constraint k; the term of wire `skip` (in C) is left out and
 * its coefficient index returned in *skip_coef. */
static void dev_lc_eval(dev_lc_sums *o, const dev_circuit *c, uint64_t k, const fr_t *w,
                        const fr_t *coef, uint32_t skip, uint32_t *skip_coef)
{
    for (int m = 0; m < 3; m++) {
        fr_set_zero(&o->s[m]);
        for (uint64_t i = c->lc_off[3 * k + m]; i < c->lc_off[3 * k + m + 1]; i++) {
            const dev_term *t = &c->terms[i];
            if (m == DEV_C && t->wire == skip) {
                *skip_coef = t->coef;
                continue;
            }
            fr_t x;
            fr_mul(&x, &coef[t->coef], &w[t->wire]);
            fr_add(&o->s[m], &o->s[m], &x);
        }
    }
}

/* *a = min(*a, v), for the lowest failing row of tasks that run at once */
static void dev_atomic_min(_Atomic uint64_t *a, uint64_t v)
{
    uint64_t cur = atomic_load(a);
    while (v < cur && !atomic_compare_exchange_weak(a, &cur, v))
        ;
}

/* The check of dev_solve: rows [task, task + 1) x DEV_CHECK_ROWS of A*B = C; bad keeps the
 * lowest failing row (UINT64_MAX: none), so a failure names the same row on any pool. */
#ifndef DEV_CHECK_ROWS
#define DEV_CHECK_ROWS 65536 /* rows a task (tests set fewer, to run many tasks on small circuits) */
#endif
typedef struct dev_check_ctx {
    const dev_circuit *c;
    const fr_t *w, *coef;
    _Atomic uint64_t bad;
} dev_check_ctx;

static void dev_check_task(void *ctx, size_t task, int worker)
{
    (void)worker;
    dev_check_ctx *x = ctx;
    uint64_t k1 = ((uint64_t)task + 1) * DEV_CHECK_ROWS;
    if (k1 > x->c->n_constraints)
        k1 = x->c->n_constraints;
    dev_lc_sums s;
    fr_t ab;
    for (uint64_t k = (uint64_t)task * DEV_CHECK_ROWS; k < k1; k++) {
        dev_lc_eval(&s, x->c, k, x->w, x->coef, DEV_NO_WIRE, NULL);
        fr_mul(&ab, &s.s[DEV_A], &s.s[DEV_B]);
        if (!fr_eq(&ab, &s.s[DEV_C])) {
            dev_atomic_min(&x->bad, k);
            return;
        }
    }
}

/* Row k of the solve: its output wire from the others (c_out * w_out = A*B - rest of C); false
 * when the output wire is missing from C. Rows without one (pure checks) do nothing. */
static bool dev_solve_row(const dev_circuit *c, fr_t *w, const fr_t *coef, const fr_t *coef_inv, uint64_t k)
{
    uint32_t out = c->out_wire[k], oc = UINT32_MAX;
    if (out == DEV_NO_WIRE)
        return true;
    dev_lc_sums s;
    fr_t ab, x;
    dev_lc_eval(&s, c, k, w, coef, out, &oc);
    if (oc == UINT32_MAX)
        return false;
    fr_mul(&ab, &s.s[DEV_A], &s.s[DEV_B]);
    fr_sub(&x, &ab, &s.s[DEV_C]);
    fr_mul(&w[out], &x, &coef_inv[oc]);
    return true;
}

/* The solve in levels: a row's level is one more than the highest level of the rows that
 * determine the wires it reads (0 when it reads free wires only), so the rows of one level are
 * independent and run over the pool, one level after another. A random circuit is a few dozen
 * levels deep whatever its size. */
#ifndef DEV_SOLVE_ROWS
#define DEV_SOLVE_ROWS 4096 /* rows a task (tests set fewer: small circuits then solve in levels too) */
#endif
typedef struct dev_level_ctx {
    const dev_circuit *c;
    fr_t *w;
    const fr_t *coef, *coef_inv;
    const uint32_t *rows; /* this level's rows */
    uint64_t n;
    _Atomic uint64_t bad; /* the lowest row whose output wire is missing (UINT64_MAX: none) */
} dev_level_ctx;

static void dev_level_task(void *ctx, size_t task, int worker)
{
    (void)worker;
    dev_level_ctx *x = ctx;
    uint64_t j1 = ((uint64_t)task + 1) * DEV_SOLVE_ROWS;
    for (uint64_t j = (uint64_t)task * DEV_SOLVE_ROWS; j < j1 && j < x->n; j++)
        if (!dev_solve_row(x->c, x->w, x->coef, x->coef_inv, x->rows[j]))
            dev_atomic_min(&x->bad, x->rows[j]);
}

/* the determined rows of c in level order (*order, *lvl_off[0 .. *levels]: level l is
 * order[lvl_off[l] .. lvl_off[l + 1])); false: out of memory */
static bool dev_levels(const dev_circuit *c, uint32_t **order, uint64_t **lvl_off, uint32_t *levels)
{
    uint64_t rows = c->n_constraints;
    uint32_t *det = calloc(c->n_wires ? c->n_wires : 1, sizeof *det); /* level + 1 of a wire's row; 0: free */
    uint32_t *lv = malloc((rows ? rows : 1) * sizeof *lv), L = 0;
    *order = NULL;
    *lvl_off = NULL;
    if (!det || !lv) {
        free(det);
        free(lv);
        return false;
    }
    for (uint64_t k = 0; k < rows; k++) {
        uint32_t out = c->out_wire[k], l = 0;
        if (out == DEV_NO_WIRE)
            continue;
        for (uint64_t i = c->lc_off[3 * k]; i < c->lc_off[3 * k + 3]; i++) {
            uint32_t wi = c->terms[i].wire;
            if (wi != out && det[wi] > l)
                l = det[wi];
        }
        lv[k] = l;
        det[out] = l + 1;
        if (l + 1 > L)
            L = l + 1;
    }
    uint64_t *off = calloc((size_t)L + 2, sizeof *off);
    uint32_t *ord = malloc((rows ? rows : 1) * sizeof *ord);
    if (!off || !ord) {
        free(det);
        free(lv);
        free(off);
        free(ord);
        return false;
    }
    for (uint64_t k = 0; k < rows; k++)
        if (c->out_wire[k] != DEV_NO_WIRE)
            off[lv[k] + 2]++;
    for (uint32_t l = 0; l < L; l++)
        off[l + 2] += off[l + 1];
    for (uint64_t k = 0; k < rows; k++) /* in row order within a level */
        if (c->out_wire[k] != DEV_NO_WIRE)
            ord[off[lv[k] + 1]++] = (uint32_t)k;
    free(det);
    free(lv);
    *order = ord;
    *lvl_off = off;
    *levels = L;
    return true;
}

/* Fills in the determined wires, then checks every constraint A*B = C again over the complete
 * witness, both over the pool (the solve level by level, see dev_levels; in row order where the
 * levels are too thin to share out, or without memory for them). w: n_wires (Montgomery), in and
 * out. */
static cuzk_err dev_solve(const dev_circuit *c, fr_t *w, const fr_t *coef, const fr_t *coef_inv,
                          pool_t *pool, char *err)
{
    uint32_t *order = NULL, levels = 0;
    uint64_t *lvl_off = NULL, lost = UINT64_MAX;
    if (pool_size(pool) > 1 && dev_levels(c, &order, &lvl_off, &levels) &&
        (uint64_t)levels * DEV_SOLVE_ROWS <= lvl_off[levels]) {
        for (uint32_t l = 0; l < levels && lost == UINT64_MAX; l++) {
            dev_level_ctx x = {.c = c, .w = w, .coef = coef, .coef_inv = coef_inv, .rows = order + lvl_off[l],
                               .n = lvl_off[l + 1] - lvl_off[l]};
            atomic_init(&x.bad, UINT64_MAX);
            pool_run(pool, (x.n + DEV_SOLVE_ROWS - 1) / DEV_SOLVE_ROWS, dev_level_task, &x);
            lost = atomic_load(&x.bad);
        }
    } else {
        for (uint64_t k = 0; k < c->n_constraints && lost == UINT64_MAX; k++)
            if (!dev_solve_row(c, w, coef, coef_inv, k))
                lost = k;
    }
    free(order);
    free(lvl_off);
    if (lost != UINT64_MAX)
        return cuzk_errf(err, CUZK_EINTERNAL, "dev-circuit: constraint %llu lost its output wire",
                         (unsigned long long)lost);
    dev_check_ctx chk = {.c = c, .w = w, .coef = coef};
    atomic_init(&chk.bad, UINT64_MAX);
    pool_run(pool, (c->n_constraints + DEV_CHECK_ROWS - 1) / DEV_CHECK_ROWS, dev_check_task, &chk);
    uint64_t bad = atomic_load(&chk.bad);
    if (bad != UINT64_MAX)
        return cuzk_errf(err, CUZK_EINTERNAL, "dev-circuit: constraint %llu is not satisfied",
                         (unsigned long long)bad);
    return CUZK_OK;
}

/* ---- setup arithmetic ----------------------------------------------------------------- */

typedef struct dev_toxic { fr_t tau, alpha, beta, delta, delta_inv, s1, s2; } dev_toxic;

static void dev_rng_fr(fr_t *o, dev_rng *g)
{
    uint8_t b[32];
    dev_rng_scalar(b, g, curve_info(CURVE_ID));
    dev_fr_from_bytes(o, b);
}

/* tau, alpha, beta, delta from the seed; tau is redrawn while it lies on the 2n domain */
static void dev_toxic_init(dev_toxic *t, uint64_t seed, unsigned log_n)
{
    dev_rng g;
    dev_rng_init(&g, seed, DEV_STREAM_TOXIC);
    uint64_t e2n[4] = {(uint64_t)2 << log_n, 0, 0, 0};
    fr_t x;
    do {
        dev_rng_fr(&t->tau, &g);
        fr_pow(&x, &t->tau, e2n, 4);
    } while (fr_eq(&x, &FR_ONE));
    dev_rng_fr(&t->alpha, &g);
    dev_rng_fr(&t->beta, &g);
    dev_rng_fr(&t->delta, &g);
    dev_rng_fr(&t->s1, &g);
    dev_rng_fr(&t->s2, &g);
    fr_inv(&t->delta_inv, &t->delta);
}

/* o[i] = scale * x_i/(t - x_i) for the m points x_i = g w^i, w the primitive m-th root.
 * g = 1, scale = (t^m - 1)/m: the Lagrange basis L_i(t) of the m-point domain.
 * g = w_(2m), scale = (t^2m - 1)/(2m): x_i = w_(2m)^(2i+1), so o[i] = L'_(2i+1)(t), the
 * odd-indexed Lagrange basis of the 2m-point domain. Cost: 3m mul + one batched inversion. */
static bool dev_lagrange(fr_t *o, size_t m, unsigned log_m, const fr_t *t, const fr_t *g,
                         const fr_t *scale)
{
    fr_t *pw = malloc(m * sizeof *pw), *scratch = malloc(m * sizeof *scratch);
    if (!pw || !scratch) {
        free(pw);
        free(scratch);
        return false;
    }
    fr_t w, x = *g;
    fr_root_of_unity(&w, log_m);
    for (size_t i = 0; i < m; i++) {
        pw[i] = x;
        fr_sub(&o[i], t, &x);
        fr_mul(&x, &x, &w);
    }
    fr_batch_inv(o, o, m, scratch);
    for (size_t i = 0; i < m; i++) {
        fr_mul(&o[i], &o[i], &pw[i]);
        fr_mul(&o[i], &o[i], scale);
    }
    free(pw);
    free(scratch);
    return true;
}

/* ---- the key ---------------------------------------------------------------------------- */

typedef struct dev_key_ctx {
    const dev_circuit *c;
    pool_t *pool;
    FILE *log;
    dev_bin *out;
    dev_fb_g1 t1;
    dev_fb_g2 t2;
    int backend;           /* DEV_BACKEND_AUTO / _CPU / _GPU, as asked for */
    int used_cpu, used_gpu; /* 1 once a section's points were made there */
    char gpu_name[256];    /* the device's name, "" before the upload */
    double t0;
} dev_key_ctx;

static void dev_log(dev_key_ctx *k, const char *what, size_t n)
{
    if (k->log)
        fprintf(k->log, "dev-circuit: %-28s %10zu  (%.2f s)\n", what, n, dev_now() - k->t0);
}

/* The tables of the key's two generators: uploaded to the GPU when k->backend allows it
 * and a device is there (with auto, a failed upload leaves the work to the CPU). n1, n2:
 * about how many G1 and G2 products follow. */
static cuzk_err dev_tables_init(dev_key_ctx *k, size_t n1, size_t n2, char *err)
{
    g1_aff_t g1;
    g2_aff_t g2;
    cuzk_err e = CUZK_OK;
    g1_generator(&g1);
    g2_generator(&g2);
    if (k->backend != DEV_BACKEND_CPU && gpu_device_count() > 0) {
        if (!dev_fb_g1_init_w(&k->t1, &g1, dev_fb_pick_w_gpu(n1), k->pool) ||
            !dev_fb_g2_init_w(&k->t2, &g2, dev_fb_pick_w_gpu(n2), k->pool))
            return cuzk_errf(err, CUZK_ENOMEM, "dev-circuit: out of memory for the fixed-base tables");
        if (!(e = dev_fb_g1_to_gpu(&k->t1, err)) && !(e = dev_fb_g2_to_gpu(&k->t2, err))) {
            snprintf(k->gpu_name, sizeof k->gpu_name, "%s", DEV_GPU(gpu_fixed_base_device)(k->t1.gpu));
            return CUZK_OK;
        }
        if (k->backend == DEV_BACKEND_GPU)
            return e;
        if (k->log)
            fprintf(k->log, "dev-circuit: the GPU is not usable (%s); the CPU makes the points\n", err);
        dev_fb_g1_free(&k->t1); /* back to the CPU's window width */
        dev_fb_g2_free(&k->t2);
    } else if (k->backend == DEV_BACKEND_GPU) {
#ifdef CUZK_HAVE_CUDA
        return cuzk_errf(err, CUZK_ENODEV, "dev-circuit: --backend gpu, but no CUDA device was found");
#else
        return cuzk_errf(err, CUZK_ENODEV,
                         "dev-circuit: --backend gpu, but this cuzk was built without CUDA");
#endif
    }
    if (!dev_fb_g1_init(&k->t1, &g1, n1, k->pool) || !dev_fb_g2_init(&k->t2, &g2, n2, k->pool))
        return cuzk_errf(err, CUZK_ENOMEM, "dev-circuit: out of memory for the fixed-base tables");
    return CUZK_OK;
}

/* After a GPU failure under auto: the rest on the CPU (same tables, same bytes). */
static void dev_gpu_fallback(dev_key_ctx *k, const char *why)
{
    if (k->log)
        fprintf(k->log, "dev-circuit: the GPU failed (%s); the CPU makes the remaining points\n", why);
    dev_fb_g1_gpu_release(&k->t1);
    dev_fb_g2_gpu_release(&k->t2);
}

/* DEV_SECTION_DEFINE(group, table): dev_section_<group>(k, type, s, n, what, err) writes
 * [s[i]]G for i < n as section `type` of the key. */
#define DEV_SECTION_DEFINE(G, T)                                                                   \
    static cuzk_err dev_section_##G(dev_key_ctx *k, uint32_t type, const fr_t *s, size_t n,        \
                                    const char *what, char *err)                                   \
    {                                                                                              \
        G##_aff_t *p = malloc((n ? n : 1) * sizeof *p);                                            \
        if (!p)                                                                                    \
            return cuzk_errf(err, CUZK_ENOMEM, "dev-circuit: out of memory for %s", what);         \
        cuzk_err e = dev_fb_##G##_run(p, s, n, &k->T, k->pool, err);                               \
        if (e && k->T.gpu && k->backend == DEV_BACKEND_AUTO) {                                     \
            dev_gpu_fallback(k, err);                                                              \
            e = dev_fb_##G##_run(p, s, n, &k->T, k->pool, err);                                    \
        }                                                                                          \
        if (!e) {                                                                                  \
            if (k->T.gpu)                                                                          \
                k->used_gpu = 1;                                                                   \
            else                                                                                   \
                k->used_cpu = 1;                                                                   \
            dev_bin_section_begin(k->out, type);                                                   \
            dev_bin_write(k->out, p, n * sizeof *p);                                               \
            dev_bin_section_end(k->out);                                                           \
            dev_log(k, what, n);                                                                   \
        }                                                                                          \
        free(p);                                                                                   \
        return e;                                                                                  \
    }

DEV_SECTION_DEFINE(g1, t1)
DEV_SECTION_DEFINE(g2, t2)

static void dev_g1_of(g1_aff_t *o, const dev_fb_g1 *t, const fr_t *k)
{
    g1_jac_t j;
    dev_fb_g1_mul(&j, t, k);
    g1_jac_to_aff(o, &j);
}

static void dev_g2_of(g2_aff_t *o, const dev_fb_g2 *t, const fr_t *k)
{
    g2_jac_t j;
    dev_fb_g2_mul(&j, t, k);
    g2_jac_to_aff(o, &j);
}

/* Section 4 value of a coefficient: coef * R^2 mod r as a std integer (FORMATS.md 3). */
static void dev_coef_r2(uint8_t out[32], const fr_t *coef_mont)
{
    fr_t t;
    fr_from_std(&t, coef_mont); /* reads coef*R as an integer: coef*R*R */
    memcpy(out, &t, 32);
}

static void dev_coef_record(dev_bin *w, uint32_t matrix, uint32_t row, uint32_t wire,
                            const uint8_t v[32])
{
    uint8_t rec[44];
    for (int i = 0; i < 4; i++) {
        rec[i] = (uint8_t)(matrix >> (8 * i));
        rec[4 + i] = (uint8_t)(row >> (8 * i));
        rec[8 + i] = (uint8_t)(wire >> (8 * i));
    }
    memcpy(rec + 12, v, 32);
    dev_bin_write(w, rec, sizeof rec);
}

/* coef[i] (Montgomery), coef_inv[i] = 1/coef[i], coef2[i] = section 4 value; false: no memory */
static bool dev_coef_tables(const dev_circuit *c, fr_t *coef, fr_t *coef_inv, uint8_t (*coef2)[32])
{
    fr_t *scratch = malloc(c->n_coefs * sizeof *scratch);
    if (!scratch)
        return false;
    for (uint32_t i = 0; i < c->n_coefs; i++) {
        dev_fr_from_bytes(&coef[i], c->coefs + 32 * (size_t)i);
        dev_coef_r2(coef2[i], &coef[i]);
    }
    fr_batch_inv(coef_inv, coef, c->n_coefs, scratch);
    free(scratch);
    return true;
}

#ifndef DEV_SETUP_NO_EXPORT
/* abc[3j + m] += coef * L[row] for every term (row, m, wire j, coef): task t of `tasks` owns
 * the wires [t nw / tasks, (t + 1) nw / tasks) and scans all terms for them, so no two tasks
 * write one sum (a scan of the term list per task, against a product per term in all) */
typedef struct dev_abc_ctx {
    const dev_circuit *c;
    const fr_t *coef, *L;
    fr_t *abc;
    size_t tasks;
} dev_abc_ctx;

static void dev_abc_task(void *ctx, size_t task, int worker)
{
    (void)worker;
    const dev_abc_ctx *x = ctx;
    const dev_circuit *c = x->c;
    uint64_t nw = c->n_wires, lo = nw * task / x->tasks, hi = nw * (task + 1) / x->tasks;
    for (uint64_t q = 0; q < c->n_constraints; q++)
        for (int m = 0; m < 3; m++)
            for (uint64_t i = c->lc_off[3 * q + m]; i < c->lc_off[3 * q + m + 1]; i++) {
                uint64_t j = c->terms[i].wire;
                if (j < lo || j >= hi)
                    continue;
                fr_t t;
                fr_mul(&t, &x->coef[c->terms[i].coef], &x->L[q]);
                fr_add(&x->abc[3 * j + m], &x->abc[3 * j + m], &t);
            }
}

cuzk_err CURVE_SYM(dev_setup)(dev_circuit *c, const dev_circuit_params *params, pool_t *pool,
                              const char *zkey_path, FILE *log, char *err)
{
    const cuzk_curve_info *ci = curve_info(CURVE_ID);
    size_t nw = c->n_wires, n = c->domain_size, npub = c->n_public;
    fr_t *coef = malloc(c->n_coefs * sizeof *coef), *coef_inv = malloc(c->n_coefs * sizeof *coef);
    fr_t *w = malloc(nw * sizeof *w), *L = NULL, *abc = NULL, *sc = NULL;
    uint8_t(*coef2)[32] = malloc(c->n_coefs * sizeof *coef2);
    dev_key_ctx k = {.c = c, .pool = pool, .log = log, .backend = params->backend, .t0 = dev_now()};
    dev_bin out = {0};
    int out_open = 0;
    dev_toxic tx;
    cuzk_err e = CUZK_OK;
    if (!coef || !coef_inv || !w || !coef2)
        goto oom;

    /* witness: free values in, determined values solved, all constraints checked */
    if (!dev_coef_tables(c, coef, coef_inv, coef2))
        goto oom;
    for (size_t i = 0; i < nw; i++)
        dev_fr_from_bytes(&w[i], c->witness + 32 * i);
    if ((e = dev_solve(c, w, coef, coef_inv, pool, err)))
        goto fail;
    for (size_t i = 0; i < nw; i++)
        dev_fr_to_bytes(c->witness + 32 * i, &w[i]);
    free(w);
    w = NULL;
    dev_log(&k, "witness solved and checked", nw);

    /* toxic waste and the Lagrange basis at tau */
    dev_toxic_init(&tx, params->seed, c->log_domain);
    L = malloc(n * sizeof *L);
    abc = calloc(3 * nw, sizeof *abc);
    sc = malloc((nw > n ? nw : n) * sizeof *sc);
    if (!L || !abc || !sc)
        goto oom;
    {
        fr_t one = FR_ONE, tn, scale, nn;
        uint64_t en[4] = {n, 0, 0, 0};
        fr_pow(&tn, &tx.tau, en, 4);
        fr_sub(&scale, &tn, &FR_ONE); /* (t^n - 1)/n */
        fr_from_u64(&nn, n);
        fr_inv(&nn, &nn);
        fr_mul(&scale, &scale, &nn);
        if (!dev_lagrange(L, n, c->log_domain, &tx.tau, &one, &scale))
            goto oom;
    }
    /* a_j, b_j, c_j: abc[3j + m] */
    {
        dev_abc_ctx ax = {.c = c, .coef = coef, .L = L, .abc = abc, .tasks = (size_t)pool_size(pool)};
        pool_run(pool, ax.tasks, dev_abc_task, &ax);
    }
    for (size_t j = 0; j <= npub; j++) /* the public-input rows {0, nConstraints+j, j, 1} */
        fr_add(&abc[3 * j + DEV_A], &abc[3 * j + DEV_A], &L[c->n_constraints + j]);
    dev_log(&k, "polynomials evaluated at tau", nw);

    /* fixed-base tables, on the GPU if allowed and present */
    if ((e = dev_tables_init(&k, 3 * nw + n, nw, err)))
        goto fail;
    dev_log(&k, "fixed-base tables (window bits)", k.t1.w);
    if (log) {
        if (k.t1.gpu)
            fprintf(log, "dev-circuit: the key's points are made on the GPU (%s)\n", k.gpu_name);
        else
            fprintf(log, "dev-circuit: the key's points are made on the CPU (%d threads)\n", pool_size(pool));
    }

    if ((e = dev_bin_open(&out, zkey_path, "zkey", 1, 10, err)))
        goto fail;
    out_open = 1;
    k.out = &out;

    /* section 1: protocol; section 2: header and the verification constants */
    dev_bin_section_begin(&out, 1);
    dev_bin_u32(&out, 1);
    dev_bin_section_end(&out);
    {
        g1_aff_t alpha1, beta1, delta1;
        g2_aff_t beta2, gamma2, delta2;
        dev_g1_of(&alpha1, &k.t1, &tx.alpha);
        dev_g1_of(&beta1, &k.t1, &tx.beta);
        dev_g2_of(&beta2, &k.t2, &tx.beta);
        g2_generator(&gamma2);
        dev_g1_of(&delta1, &k.t1, &tx.delta);
        dev_g2_of(&delta2, &k.t2, &tx.delta);
        dev_bin_section_begin(&out, 2);
        dev_bin_u32(&out, (uint32_t)ci->fq_bytes);
        dev_bin_write(&out, ci->q_le, ci->fq_bytes);
        dev_bin_u32(&out, 32);
        dev_bin_write(&out, ci->r_le, 32);
        dev_bin_u32(&out, c->n_wires);
        dev_bin_u32(&out, c->n_public);
        dev_bin_u32(&out, c->domain_size);
        dev_bin_write(&out, &alpha1, sizeof alpha1);
        dev_bin_write(&out, &beta1, sizeof beta1);
        dev_bin_write(&out, &beta2, sizeof beta2);
        dev_bin_write(&out, &gamma2, sizeof gamma2);
        dev_bin_write(&out, &delta1, sizeof delta1);
        dev_bin_write(&out, &delta2, sizeof delta2);
        dev_bin_section_end(&out);

        /* section 3: IC_j = [beta a_j + alpha b_j + c_j]1, j <= nPublic */
        for (size_t j = 0; j <= npub; j++) {
            fr_t x;
            fr_mul(&sc[j], &tx.beta, &abc[3 * j + DEV_A]);
            fr_mul(&x, &tx.alpha, &abc[3 * j + DEV_B]);
            fr_add(&sc[j], &sc[j], &x);
            fr_add(&sc[j], &sc[j], &abc[3 * j + DEV_C]);
        }
        if ((e = dev_section_g1(&k, 3, sc, npub + 1, "section 3 (IC)", err)))
            goto fail;

        /* section 4: A and B entries in r1cs order, then the public-input rows */
        dev_bin_section_begin(&out, 4);
        dev_bin_u32(&out, (uint32_t)(c->n_ab_terms + npub + 1));
        for (uint64_t q = 0; q < c->n_constraints; q++)
            for (int m = DEV_A; m <= DEV_B; m++)
                for (uint64_t i = c->lc_off[3 * q + m]; i < c->lc_off[3 * q + m + 1]; i++)
                    dev_coef_record(&out, (uint32_t)m, (uint32_t)q, c->terms[i].wire,
                                    coef2[c->terms[i].coef]);
        {
            uint8_t one_r2[32];
            dev_coef_r2(one_r2, &FR_ONE);
            for (size_t j = 0; j <= npub; j++)
                dev_coef_record(&out, 0, (uint32_t)(c->n_constraints + j), (uint32_t)j, one_r2);
        }
        dev_bin_section_end(&out);
        dev_log(&k, "section 4 (coefficients)", (size_t)(c->n_ab_terms + npub + 1));

        /* sections 5, 6, 7: A, B1, B2 */
        for (size_t j = 0; j < nw; j++)
            sc[j] = abc[3 * j + DEV_A];
        if ((e = dev_section_g1(&k, 5, sc, nw, "section 5 (A)", err)))
            goto fail;
        for (size_t j = 0; j < nw; j++)
            sc[j] = abc[3 * j + DEV_B];
        if ((e = dev_section_g1(&k, 6, sc, nw, "section 6 (B1)", err)))
            goto fail;
        if ((e = dev_section_g2(&k, 7, sc, nw, "section 7 (B2)", err)))
            goto fail;

        /* section 8: C_j = [(beta a_j + alpha b_j + c_j)/delta]1, j > nPublic */
        for (size_t j = npub + 1; j < nw; j++) {
            fr_t x, *y = &sc[j - npub - 1];
            fr_mul(y, &tx.beta, &abc[3 * j + DEV_A]);
            fr_mul(&x, &tx.alpha, &abc[3 * j + DEV_B]);
            fr_add(y, y, &x);
            fr_add(y, y, &abc[3 * j + DEV_C]);
            fr_mul(y, y, &tx.delta_inv);
        }
        if ((e = dev_section_g1(&k, 8, sc, nw - npub - 1, "section 8 (C)", err)))
            goto fail;

        /* section 9: H_k = [L'_(2k+1)(tau)/delta]1 on the odd points of the 2n domain */
        {
            fr_t g, t2n, scale, nn;
            uint64_t e2n[4] = {2 * (uint64_t)n, 0, 0, 0};
            fr_root_of_unity(&g, c->log_domain + 1);
            fr_pow(&t2n, &tx.tau, e2n, 4);
            fr_sub(&scale, &t2n, &FR_ONE);
            fr_from_u64(&nn, 2 * (uint64_t)n);
            fr_inv(&nn, &nn);
            fr_mul(&scale, &scale, &nn);
            fr_mul(&scale, &scale, &tx.delta_inv);
            if (!dev_lagrange(sc, n, c->log_domain, &tx.tau, &g, &scale))
                goto oom;
        }
        if ((e = dev_section_g1(&k, 9, sc, n, "section 9 (H)", err)))
            goto fail;

        /* section 10: one contribution record naming the setup insecure. deltaAfter = delta1;
         * g1_s = [s1]1, g1_sx = [s1 delta]1, g2_spx = [s2 delta]2 (a well-formed but
         * unverifiable proof of knowledge: there is no powers-of-tau transcript). */
        g1_aff_t g1_s, g1_sx;
        g2_aff_t g2_spx;
        fr_t x;
        dev_g1_of(&g1_s, &k.t1, &tx.s1);
        fr_mul(&x, &tx.s1, &tx.delta);
        dev_g1_of(&g1_sx, &k.t1, &x);
        fr_mul(&x, &tx.s2, &tx.delta);
        dev_g2_of(&g2_spx, &k.t2, &x);
        static const uint8_t zero64[64] = {0};
        const char *name = DEV_CONTRIBUTION_NAME;
        uint8_t len = (uint8_t)strlen(name);
        dev_bin_section_begin(&out, 10);
        dev_bin_write(&out, zero64, 64); /* csHash: not computed */
        dev_bin_u32(&out, 1);
        dev_bin_write(&out, &delta1, sizeof delta1);
        dev_bin_write(&out, &g1_s, sizeof g1_s);
        dev_bin_write(&out, &g1_sx, sizeof g1_sx);
        dev_bin_write(&out, &g2_spx, sizeof g2_spx);
        dev_bin_write(&out, zero64, 64); /* transcript */
        dev_bin_u32(&out, 0);            /* type: contribution */
        dev_bin_u32(&out, 2u + len);     /* params: 1 = name */
        uint8_t hdr[2] = {1, len};
        dev_bin_write(&out, hdr, 2);
        dev_bin_write(&out, name, len);
        dev_bin_section_end(&out);
    }
    out_open = 0;
    e = dev_bin_close(&out, err);
    if (!e)
        dev_log(&k, "zkey written", 10);
    if (k.used_gpu && k.used_cpu)
        snprintf(c->key_backend, sizeof c->key_backend, "gpu (%s) and cpu (%d threads, after a GPU failure)",
                 k.gpu_name, pool_size(pool));
    else if (k.used_gpu)
        snprintf(c->key_backend, sizeof c->key_backend, "gpu (%s)", k.gpu_name);
    else
        snprintf(c->key_backend, sizeof c->key_backend, "cpu (%d threads)", pool_size(pool));
    goto fail;

oom:
    e = cuzk_errf(err, CUZK_ENOMEM, "dev-circuit: out of memory for the setup of %u constraints",
                  c->n_constraints);
fail:
    if (out_open) {
        out.e = out.e ? out.e : e;
        char tmp[CUZK_ERRLEN];
        dev_bin_close(&out, tmp);
    }
    dev_fb_g1_free(&k.t1);
    dev_fb_g2_free(&k.t2);
    free(coef);
    free(coef_inv);
    free(coef2);
    free(w);
    free(L);
    free(abc);
    free(sc);
    return e;
}
#endif

#endif
