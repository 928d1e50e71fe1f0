/* msm.h - CPU multi-scalar multiplication (Pippenger) for G1 and G2 (per curve: included
 * into a curve's translation unit after the curve parameters, field and group headers,
 * see docs/DESIGN.md).
 *
 *   msm_g1(o, bases, scalars_std, n, pool)   o = sum_i scalars_std[i] * bases[i]
 *   msm_g2(o, bases, scalars_std, n, pool)
 *
 * bases are affine as stored in the zkey (all-zero = infinity, skipped), scalars are fr_t
 * holding standard-form integers (not Montgomery; any 256-bit value works), the result is
 * Jacobian. pool may be NULL (single-threaded).
 *
 * VARIABLE TIME. Running time and memory access depend on the scalar values. That is
 * acceptable because the scalars here are witness values and h coefficients, which the
 * prover host already holds in plain memory: timing can only reveal them to someone able
 * to observe that host, who could read them directly. The blinding scalars r and s never
 * pass through this code; they are applied with the constant-time G_jac_mul_ct.
 *
 * DESIGN.
 * 1. Scan (parallel over input chunks): scalar 0 and infinity bases are dropped, bases
 *    with scalar 1 are summed directly (real witnesses are mostly 0 and 1), the indices of
 *    the m remaining points are listed.
 * 2. Signed windows: a scalar k is cut into W windows of c bits with Booth recoding,
 *    d_w = v_w + b(wc-1) - 2^c b(wc+c-1), where v_w is the w-th c-bit window and b(i)
 *    bit i of k; sum_w d_w 2^(wc) = k as long as W c > bitlen(k), and |d_w| <= 2^(c-1).
 *    A digit depends on c+1 bits of k only, so every window is computed independently.
 *    Negative digits add -P (negating y is free), so each window needs 2^(c-1) buckets.
 * 3. Buckets (parallel over windows x point chunks), in one of two modes:
 *    XYZZ: each point added to its XYZZ bucket with a mixed XYZZ+affine addition
 *      (8M+2S, EFD "madd-2008-s").
 *    Batch affine (large inputs): buckets are affine, and up to B additions to distinct
 *      buckets are collected and run together with one shared inversion (Montgomery's
 *      trick; 5M+1S each plus 1/B of an inversion). A point whose bucket already has an
 *      addition pending waits in a queue of B entries; when the queue is full (many equal
 *      digits, e.g. repeated scalars) it goes to a per-bucket XYZZ overflow bucket instead,
 *      so the cost degrades to the XYZZ mode rather than to one inversion per point.
 *    A window's sum sum_b b B_b is formed by running sums from the top bucket down
 *    (2 additions per bucket). c and the mode minimize an estimate of the field
 *    multiplications (msm_window_bits); chunks are only added when there are fewer windows
 *    than about 2 per participant, and never smaller than 2^c points, since every chunk
 *    repeats the bucket reduction.
 * 4. Windows combined top down: acc = 2^c acc + S_w (Jacobian), plus the scalar-one sum.
 * If scratch memory cannot be allocated, it falls back to a sum of G_jac_mul (slow, right).
 * Scratch: 4n bytes of indices, pool_size x 2^(c-1) XYZZ buckets (+ as many affine ones and
 * B-entry batch and queue arrays in batch mode), W x chunks partial sums.
 */
#ifndef CUZK_MSM_MSM_H
#define CUZK_MSM_MSM_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ec/ec.h"
#include "ff/ff.h"
#include "util/pool.h"

/* the four little-endian limbs of a std-form scalar */
static inline const uint64_t *msm_limbs(const fr_t *s)
{
    return (const uint64_t *)(const void *)s;
}

static inline size_t msm_div_up(size_t a, size_t b)
{
    return (a + b - 1) / b;
}

/* bits [pos, pos+len) of a 256-bit k (zero past bit 255), len <= 32 */
static inline uint32_t msm_bits(const uint64_t *k, unsigned pos, unsigned len)
{
    unsigned li = pos >> 6, sh = pos & 63;
    if (li >= 4)
        return 0;
    uint64_t v = k[li] >> sh;
    if (sh && li + 1 < 4)
        v |= k[li + 1] << (64 - sh);
    return (uint32_t)(v & ((1ull << len) - 1));
}

/* signed Booth digit of window w (c bits): v_w + b(wc-1) - 2^c b(wc+c-1), in [-2^(c-1), 2^(c-1)] */
static inline int msm_digit(const uint64_t *k, unsigned w, unsigned c)
{
    uint32_t raw = w ? msm_bits(k, w * c - 1, c + 1) : msm_bits(k, 0, c) << 1;
    int d = (int)(raw >> 1) + (int)(raw & 1);
    if ((raw >> c) & 1)
        d -= 1 << c;
    return d;
}

/* bit length of the scalar field modulus r */
static inline unsigned msm_scalar_bits(void)
{
    for (int i = FR_LIMBS - 1; i >= 0; i--)
        if (FR_MODULUS[i])
            return (unsigned)(64 * i + 64 - __builtin_clzll(FR_MODULUS[i]));
    return 0;
}

/* batch-affine bucket states */
#define MSM_HAS 1  /* the affine bucket holds a point */
#define MSM_BUSY 2 /* the bucket has an addition pending in the batch */
#define MSM_OVF 4  /* the XYZZ overflow bucket holds a point */
#define MSM_CHAINS 4 /* independent prefix-product chains in a batch inversion */
#define MSM_NEG 0x80000000u /* in a point reference: add the negated base (indices < 2^31) */

/* additions per shared inversion in batch mode: a quarter of the 2^(c-1) buckets, so a new
 * point finds its bucket busy at most 1/4 of the time, and at most 1024 */
static inline size_t msm_batch_size(unsigned c)
{
    size_t b = c >= 3 ? (size_t)1 << (c - 3) : 1;
    return b < 1024 ? b : 1024;
}

/* Window size c and bucket mode for m points: the c that minimizes the estimated field
 * multiplications W(c) (m a + 2^(c-1) r), W(c) = ceil((nbits+1)/c), where
 *   XYZZ buckets:  a = 10 (madd 8M+2S),                    r = 28 (two XYZZ adds)
 *   batch affine:  a = 6.5 + I/B (5M+1S, the inversion I = 2 FQ_BITS M shared by B),
 *                  r = 24 (one madd, one add); only for c >= 11 (B >= 256).
 * c <= 16 keeps the per-worker bucket memory modest (2^15 buckets: 6 MiB for BN254 G1,
 * 19 MiB for BLS12-381 G2 in batch mode) at a cost of a few percent past 2^22 points. */
static inline unsigned msm_window_bits(size_t m, unsigned nbits, int *batch)
{
    unsigned best = 2;
    int best_batch = 0;
    double best_cost = -1;
    for (unsigned c = 2; c <= 16; c++) {
        double w = (double)((nbits + c) / c), nb = (double)(1u << (c - 1));
        double cost = w * ((double)m * 10.0 + nb * 28.0);
        if (best_cost < 0 || cost < best_cost) {
            best_cost = cost;
            best = c;
            best_batch = 0;
        }
        if (c >= 11) {
            double a = 6.5 + 2.0 * FQ_BITS / (double)msm_batch_size(c);
            cost = w * ((double)m * a + nb * 24.0);
            if (cost < best_cost) {
                best_cost = cost;
                best = c;
                best_batch = 1;
            }
        }
    }
    *batch = best_batch;
    return best;
}

/* point chunks for the bucket pass: enough (window, chunk) tasks for the pool, but chunks of
 * at least 2^c points so the repeated bucket reduction stays a small part */
static inline size_t msm_chunks(size_t m, unsigned c, unsigned n_windows, size_t threads)
{
    size_t want = msm_div_up(2 * threads, n_windows);
    size_t most = m >> c;
    if (want > most)
        want = most;
    return want ? want : 1;
}

#define MSM_G(x) g1_##x
#define MSM_N(x) msm_g1_##x
#define MSM_F(x) fq_##x
#include "msm/msm_impl.h"
#undef MSM_G
#undef MSM_N
#undef MSM_F

#define MSM_G(x) g2_##x
#define MSM_N(x) msm_g2_##x
#define MSM_F(x) fq2_##x
#include "msm/msm_impl.h"
#undef MSM_G
#undef MSM_N
#undef MSM_F

/* o = sum_i scalars_std[i] * bases[i] over G1 / G2; see the top of this file */
static inline void msm_g1(g1_jac_t *o, const g1_aff_t *bases, const fr_t *scalars_std, size_t n,
                          pool_t *pool)
{
    msm_g1_run(o, bases, scalars_std, n, pool);
}

static inline void msm_g2(g2_jac_t *o, const g2_aff_t *bases, const fr_t *scalars_std, size_t n,
                          pool_t *pool)
{
    msm_g2_run(o, bases, scalars_std, n, pool);
}

#endif
