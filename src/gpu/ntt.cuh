/* ntt.cuh - number-theoretic transforms over Fr on the GPU, and the kernels of the
 * Groth16 h computation (FORMATS.md section 4, steps 1-3).
 *
 * DESIGN. Radix-2 decimation in time, natural order in and out. The stages run in groups
 * inside shared memory (ntt_group_kernel); the first group gathers its input in bit-reversed
 * order straight from the source (each element is one 32-byte sector, so the gather wastes
 * no DRAM bandwidth) and writes to a scratch array, the last group writes back, so the
 * bit-reversal permutation costs no pass of its own:
 * stages 0-10 on blocks of 2^11 contiguous elements, then 8 stages at a time on blocks of
 * 8 consecutive columns x 256 strided rows. Twiddles come from a table tw[t] = omega_n^t,
 * t < n/2, built once per key; stage s (span m = 2^s) reads tw[j * n/(2m)]. Cost: n/2 log n
 * multiplies; memory traffic about (1 + ceil((log n - 11) / 8)) passes of 2 * 32n bytes
 * plus the permutation. Variable time is irrelevant (no secrets).
 */
#pragma once
#include "gpu/ff.cuh"

#define NTT_GROUP_LOG 11 /* elements per shared-memory block: 2^11 (64 KB) */

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

/* Stages s .. s+k-1 in shared memory. Index bits of an element: hi | mid (k bits) | lo
 * (s bits). A block takes one hi and 2^lo_bits consecutive lo values (lo_bits <= s, so
 * global accesses come in runs of 2^lo_bits elements) and all 2^k mid values, and does
 * the k stages among them: 2^(k + lo_bits) elements, at most 2^NTT_GROUP_LOG. Stage st
 * pairs mid bit st - s; its twiddle is tw[j * n / 2^(st+1)] with j = index mod 2^st. */
template <class fr>
__global__ __launch_bounds__(512) void ntt_group_kernel(const fr *src, fr *dst, const fr *tw, unsigned log_n,
                                                        unsigned s, unsigned k, unsigned lo_bits, int bitrev_in)
{
    extern __shared__ uint4 smem_raw[];
    fr *sm = (fr *)smem_raw;
    unsigned chunks_log = s - lo_bits;
    size_t b = blockIdx.x;
    size_t lo_chunk = b & (((size_t)1 << chunks_log) - 1);
    size_t hi = b >> chunks_log;
    unsigned cnt = 1u << (k + lo_bits);
    unsigned lmask = (1u << lo_bits) - 1;
    size_t base = (hi << (s + k)) | (lo_chunk << lo_bits);
    if (bitrev_in) { /* s = 0, lo_bits = 0: element e of the block is index base + e */
        for (unsigned e = threadIdx.x; e < cnt; e += blockDim.x)
            sm[e] = src[__brevll((unsigned long long)(base + e)) >> (64 - log_n)];
    } else {
        for (unsigned e = threadIdx.x; e < cnt; e += blockDim.x)
            sm[e] = src[base + ((size_t)(e >> lo_bits) << s) + (e & lmask)];
    }
    __syncthreads();
    for (unsigned t = 0; t < k; t++) {
        unsigned st = s + t;
        unsigned m = 1u << t;
        for (unsigned q = threadIdx.x; q < cnt / 2; q += blockDim.x) {
            unsigned l = q & lmask, p = q >> lo_bits;
            unsigned jm = p & (m - 1);
            unsigned mid0 = ((p >> t) << (t + 1)) | jm;
            unsigned e0 = (mid0 << lo_bits) | l, e1 = ((mid0 + m) << lo_bits) | l;
            size_t j = ((size_t)jm << s) | (lo_chunk << lo_bits) | l;
            fr w = tw[j << (log_n - 1 - st)];
            fr u = sm[e0], v = fr::mul_sos(sm[e1], w); /* mul_eo measured 4% slower here */
            sm[e0] = u + v;
            sm[e1] = u - v;
        }
        __syncthreads();
    }
    for (unsigned e = threadIdx.x; e < cnt; e += blockDim.x)
        dst[base + ((size_t)(e >> lo_bits) << s) + (e & lmask)] = sm[e];
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
    fr *d_tmp;        /* n elements of scratch (the first group's output) */
};

static inline unsigned ntt_blocks(size_t n, unsigned t) { return (unsigned)((n + t - 1) / t); }

#ifndef FF_HOST_EMU
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
    size_t smem_max = ((size_t)1 << NTT_GROUP_LOG) * sizeof(fr);
    cudaError_t e = cudaFuncSetAttribute(ntt_group_kernel<fr>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)smem_max);
    if (e != cudaSuccess)
        return e;
    for (unsigned s = 0; s < log_n;) {
        unsigned lo_bits = s < 3 ? s : 3;
        unsigned k = NTT_GROUP_LOG - lo_bits;
        if (k > log_n - s)
            k = log_n - s;
        unsigned cnt = 1u << (k + lo_bits);
        unsigned threads = cnt / 2 < 512 ? cnt / 2 : 512;
        size_t blocks = n >> (k + lo_bits);
        /* one group: a single block, which reads everything before it writes: in place.
           Otherwise a -> tmp (gathering), tmp in place, last group tmp -> a. */
        bool first = s == 0, last = s + k == log_n;
        const fr *src = first ? d_a : p.d_tmp;
        fr *dst = last ? d_a : p.d_tmp;
        ntt_group_kernel<fr>
            <<<(unsigned)blocks, threads, cnt * sizeof(fr), st>>>(src, dst, tw, log_n, s, k, lo_bits, first);
        s += k;
    }
    return cudaGetLastError();
}
#endif
