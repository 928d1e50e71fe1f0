/* ntt.cuh - number-theoretic transforms over Fr on the GPU, and the kernels of the
 * Groth16 h computation (FORMATS.md section 4, steps 1-3).
 *
 * DESIGN. Radix-2 decimation in time, natural order in and out: a bit-reversal
 * permutation, then the first 10 stages (butterfly spans 1..512) inside shared memory,
 * one block per 1024 contiguous elements, then one global pass per remaining stage.
 * Twiddles come from a table tw[t] = omega_n^t, t < n/2, built once per key; stage s
 * (span m = 2^s) reads tw[j * n/(2m)]. Cost: n/2 log n multiplies; memory traffic
 * (log n - 9) passes of 2 * 32n bytes. Variable time is irrelevant (no secrets).
 */
#pragma once
#include "gpu/ff.cuh"

#define NTT_SMEM_LOG 10 /* stages done in shared memory: 2^10 elements per block */

/* table[i] = start * base^i, i < count (64 consecutive entries per thread) */
template <class fr>
__global__ __launch_bounds__(256) void ntt_powers_kernel(fr *table, size_t count, fr base, fr start)
{
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t i0 = t * 64;
    if (i0 >= count)
        return;
    fr x = start * base.pow_u64(i0);
    size_t end = i0 + 64 < count ? i0 + 64 : count;
    for (size_t i = i0; i < end; i++) {
        table[i] = x;
        x = x * base;
    }
}

template <class fr>
__global__ __launch_bounds__(256) void ntt_bitrev_kernel(fr *a, unsigned log_n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >> log_n)
        return;
    size_t j = __brevll((unsigned long long)i) >> (64 - log_n);
    if (i < j) {
        fr x = a[i], y = a[j];
        a[i] = y;
        a[j] = x;
    }
}

/* stages 0 .. min(log_n, NTT_SMEM_LOG)-1 on blocks of 2^min(log_n, NTT_SMEM_LOG) elements */
template <class fr>
__global__ __launch_bounds__(512) void ntt_smem_kernel(fr *a, const fr *tw, unsigned log_n)
{
    extern __shared__ uint4 smem_raw[];
    fr *s = (fr *)smem_raw;
    unsigned lb = log_n < NTT_SMEM_LOG ? log_n : NTT_SMEM_LOG;
    unsigned bsize = 1u << lb;
    size_t base = (size_t)blockIdx.x << lb;
    for (unsigned i = threadIdx.x; i < bsize; i += blockDim.x)
        s[i] = a[base + i];
    __syncthreads();
    for (unsigned st = 0; st < lb; st++) {
        unsigned m = 1u << st;
        for (unsigned k = threadIdx.x; k < bsize / 2; k += blockDim.x) {
            unsigned j = k & (m - 1);
            unsigned i0 = ((k >> st) << (st + 1)) | j;
            fr w = tw[(size_t)j << (log_n - 1 - st)];
            fr u = s[i0], v = s[i0 + m] * w;
            s[i0] = u + v;
            s[i0 + m] = u - v;
        }
        __syncthreads();
    }
    for (unsigned i = threadIdx.x; i < bsize; i += blockDim.x)
        a[base + i] = s[i];
}

/* one radix-2 stage of span m = 2^st over the whole array */
template <class fr>
__global__ __launch_bounds__(256) void ntt_stage_kernel(fr *a, const fr *tw, unsigned log_n, unsigned st)
{
    size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= ((size_t)1 << (log_n - 1)))
        return;
    size_t m = (size_t)1 << st;
    size_t j = k & (m - 1);
    size_t i0 = ((k >> st) << (st + 1)) | j;
    fr w = tw[j << (log_n - 1 - st)];
    fr u = a[i0], v = a[i0 + m] * w;
    a[i0] = u + v;
    a[i0 + m] = u - v;
}

/* a[i] *= b[i] */
template <class fr>
__global__ __launch_bounds__(256) void fr_mul_vec_kernel(fr *a, const fr *b, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        a[i] = a[i] * b[i];
}

/* a[i] *= c */
template <class fr>
__global__ __launch_bounds__(256) void fr_scale_kernel(fr *a, fr c, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        a[i] = a[i] * c;
}

/* c[i] = a[i] * b[i] (the C evaluations, FORMATS.md 4 step 1) */
template <class fr>
__global__ __launch_bounds__(256) void fr_mul3_kernel(fr *c, const fr *a, const fr *b, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] * b[i];
}

/* h[i] = std(a[i] * b[i] - c[i]), written over a (FORMATS.md 4 step 3) */
template <class fr>
__global__ __launch_bounds__(256) void h_combine_kernel(fr *a, const fr *b, const fr *c, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        a[i] = (a[i] * b[i] - c[i]).from_mont();
}

/* Sparse A/B evaluation (FORMATS.md 4 step 1) from a CSR by row: rows 0..n-1 are the A
 * matrix, n..2n-1 the B matrix. val[e] = coef * R^2 (zkey section 4), w std form, so
 * val * w * R^-1 = coef * w in Montgomery form. out = a (rows < n) then b (contiguous). */
template <class fr>
__global__ __launch_bounds__(256) void eval_ab_kernel(fr *out, const uint32_t *row_ptr, const uint32_t *col,
                                                      const fr *val, const fr *w, size_t rows)
{
    size_t r = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    fr acc = fr::zero();
    for (uint32_t e = row_ptr[r], end = row_ptr[r + 1]; e < end; e++)
        acc = acc + val[e] * w[col[e]];
    out[r] = acc;
}

template <class fr>
struct ntt_plan {
    unsigned log_n;
    fr *d_tw, *d_itw; /* n/2 forward / inverse twiddles */
};

static inline unsigned ntt_blocks(size_t n, unsigned t) { return (unsigned)((n + t - 1) / t); }

/* natural order in and out; inverse=1 uses the inverse twiddles and does NOT scale by
 * 1/n (callers fold the scale into a following multiply) */
template <class fr>
static cudaError_t ntt_run(const ntt_plan<fr> &p, fr *d_a, int inverse, cudaStream_t st)
{
    unsigned log_n = p.log_n;
    size_t n = (size_t)1 << log_n;
    if (log_n == 0)
        return cudaSuccess;
    const fr *tw = inverse ? p.d_itw : p.d_tw;
    ntt_bitrev_kernel<fr><<<ntt_blocks(n, 256), 256, 0, st>>>(d_a, log_n);
    unsigned lb = log_n < NTT_SMEM_LOG ? log_n : NTT_SMEM_LOG;
    size_t smem = ((size_t)1 << lb) * sizeof(fr);
    unsigned threads = (1u << lb) / 2 < 512 ? (1u << lb) / 2 : 512;
    ntt_smem_kernel<fr><<<(unsigned)(n >> lb), threads, smem, st>>>(d_a, tw, log_n);
    for (unsigned s = lb; s < log_n; s++)
        ntt_stage_kernel<fr><<<ntt_blocks(n / 2, 256), 256, 0, st>>>(d_a, tw, log_n, s);
    return cudaGetLastError();
}
