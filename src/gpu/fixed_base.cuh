/* fixed_base.cuh - fixed-base scalar multiplication on the GPU: out[i] = [k[i]]G for one
 * generator G, the points of `cuzk dev-circuit`'s proving key (C interface: fixed_base.h).
 *
 * Included by one translation unit per curve (gpu_bn254.cu, gpu_bls12_381.cu) after that
 * curve's params_<curve>.cuh, with GPU_P and GPU_SYM defined as for backend_impl.cuh.
 *
 * DESIGN. The host builds the table t[i * half + (d - 1)] = d * 2^(w i) * G (affine,
 * 1 <= d <= half = 2^(w-1), window i < nwin) once and it is uploaded once per handle. A
 * product then costs nwin mixed additions and no doublings:
 *   fb_mul_kernel        one thread per scalar: Montgomery -> std form, the signed-digit
 *                        recoding of devsetup.h's dev_fb_recode (same digits, window by
 *                        window), k = sum d_i 2^(w i); the sum of the entries +-t[i][|d_i|]
 *                        in XYZZ coordinates (ec.cuh add_affine: 8M + 2S, which also
 *                        handles an infinite sum, a doubling and P + (-P)).
 *   xyzz_to_affine_kernel (ec.cuh) XYZZ -> affine, one inversion per EC_AFFINE_BATCH
 *                        points.
 * Every field result is fully reduced (ff.cuh), so the bytes equal the CPU path's.
 * The scalars go through in chunks sized from cudaMemGetInfo: per scalar 32 bytes in,
 * an XYZZ point, a prefix product and an affine point out.
 * Variable time: the scalars are the development setup's, public by design.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if !defined(FF_HOST_EMU) || defined(CUDA_EMU_RT) /* the kernels alone on the CPU (fb_emu) leave the runtime out */
extern "C" {
#include "gpu/fixed_base.h"
}
#include "gpu/cuda_util.cuh"
#endif
#include "gpu/curve_fields.cuh"
#include "gpu/ec.cuh"

namespace GPU_SYM(fb) {

using GPU_SYM(ff)::fr;
using GPU_SYM(ff)::fq;
using GPU_SYM(ff)::fq2;

#define FB_THREADS 256
#define FB_MIN_CHUNK 1024   /* fewer scalars per chunk than this: the device is too full */

/* d_acc[j] = [k_j]G (XYZZ), k_j the Montgomery scalar at d_k + 32 j, j < m. */
template <class F>
__global__ void __launch_bounds__(FB_THREADS)
fb_mul_kernel(xyzz_t<F> *d_acc, const uint8_t *d_k, size_t m, const affine_t<F> *d_tab, unsigned w,
              unsigned nwin)
{
    size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= m)
        return;
    const fr k = fr::load(d_k + 32 * j).from_mont();
    const uint32_t half = 1u << (w - 1), mask = (1u << w) - 1;
    uint32_t carry = 0;
    xyzz_t<F> acc = xyzz_t<F>::inf();
#pragma unroll 1
    for (unsigned i = 0; i < nwin; i++) {
        /* bits w i .. w i + w - 1 of k (zero past bit 255), plus the carry: dev_fb_recode */
        uint32_t bit = i * w, limb = bit / 32, sh = bit % 32;
        uint32_t v = limb < 8 ? k.v[limb] >> sh : 0;
        if (sh + w > 32 && limb + 1 < 8)
            v |= k.v[limb + 1] << (32 - sh);
        uint32_t x = (v & mask) + carry;
        int32_t d;
        if (x > half) {
            d = (int32_t)x - (int32_t)(1u << w);
            carry = 1;
        } else {
            d = (int32_t)x;
            carry = 0;
        }
        if (d == 0)
            continue;
        /* never infinity: d 2^(w i) is not a multiple of the prime group order */
        affine_t<F> q = affine_t<F>::load(d_tab + (size_t)i * half + (uint32_t)(d > 0 ? d : -d) - 1);
        if (d < 0)
            q.y = q.y.neg();
        acc.add_affine(q);
    }
    acc.store(d_acc + j);
}

#if !defined(FF_HOST_EMU) || defined(CUDA_EMU_RT)
/* The handle behind gpu_fixed_base. */
struct fb_impl {
    int g2;           /* 0: G1 over fq, 1: G2 over fq2 */
    unsigned w, nwin; /* window bits (2..16), windows */
    void *d_table;    /* nwin * 2^(w-1) affine points */
    char device[256]; /* the device's name */
};

static cuzk_err fb_cuda_err(char *err, cudaError_t e, const char *what)
{
    return cuzk_errf(err, e == cudaErrorMemoryAllocation ? CUZK_ENOMEM : CUZK_EDEVICE,
                     "gpu fixed-base: %s: %s", what, cudaGetErrorString(e));
}

static cuzk_err fb_create(gpu_fixed_base **out, int g2, const void *h_table, unsigned w, unsigned nwin,
                          char *err)
{
    cudaError_t cu_err = cudaSuccess;
    const char *cu_what = "";
    int count = 0, dev = 0;
    size_t aff = g2 ? sizeof(affine_t<fq2>) : sizeof(affine_t<fq>);
    size_t bytes = 0;
    cudaDeviceProp prop;
    fb_impl *f = nullptr;
    *out = nullptr;
    if (w < 2 || w > 16 || nwin == 0 || (size_t)nwin * w > 256 + w || !h_table)
        return cuzk_errf(err, CUZK_EINVAL, "gpu fixed-base: bad table (window %u bits, %u windows)", w, nwin);
    bytes = (size_t)nwin * ((size_t)1 << (w - 1)) * aff;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1) {
        cudaGetLastError();
        return cuzk_errf(err, CUZK_ENODEV, "gpu: no CUDA device found");
    }
    f = (fb_impl *)calloc(1, sizeof *f);
    if (!f)
        return cuzk_errf(err, CUZK_ENOMEM, "gpu fixed-base: out of host memory");
    f->g2 = g2;
    f->w = w;
    f->nwin = nwin;
    CUDA_TRY(cudaGetDevice(&dev));
    CUDA_TRY(cudaGetDeviceProperties(&prop, dev));
    snprintf(f->device, sizeof f->device, "%s", prop.name);
    CUDA_TRY(cudaMalloc(&f->d_table, bytes));
    CUDA_TRY(cudaMemcpy(f->d_table, h_table, bytes, cudaMemcpyHostToDevice));
    *out = (gpu_fixed_base *)f;
    return CUZK_OK;
fail:
    cudaFree(f->d_table);
    free(f);
    return fb_cuda_err(err, cu_err, cu_what);
}

/* scalars per chunk: what the free device memory holds (less a reserve for the runtime
 * and other users), capped by CUZK_TEST_FB_CHUNK and n; 0 when below FB_MIN_CHUNK */
static size_t fb_chunk(size_t free_b, size_t per, size_t n)
{
    size_t reserve = free_b / 16 > ((size_t)256 << 20) ? free_b / 16 : ((size_t)256 << 20);
    size_t c = free_b > reserve ? (free_b - reserve) / per : 0;
    if (c < FB_MIN_CHUNK && c < n)
        return 0;
    const char *cap = getenv("CUZK_TEST_FB_CHUNK");
    if (cap && atol(cap) > 0 && (size_t)atol(cap) < c)
        c = (size_t)atol(cap);
    return c < n ? c : n;
}

template <class F>
static cuzk_err fb_run(fb_impl *f, void *h_out, const void *h_k, size_t n, char *err)
{
    cudaError_t cu_err = cudaSuccess;
    const char *cu_what = "";
    const size_t per = 32 + sizeof(xyzz_t<F>) + sizeof(F) + sizeof(affine_t<F>);
    size_t free_b = 0, total_b = 0, chunk = 0, done = 0, m = 0;
    uint8_t *d_k = nullptr;
    xyzz_t<F> *d_acc = nullptr;
    F *d_pre = nullptr;
    affine_t<F> *d_out = nullptr;
    if (n == 0)
        return CUZK_OK;
    CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
    chunk = fb_chunk(free_b, per, n);
    if (chunk == 0)
        return cuzk_errf(err, CUZK_ENOMEM, "gpu fixed-base: only %zu MiB of %zu MiB free on the device",
                         free_b >> 20, total_b >> 20);
    /* the free memory can shrink between the query and the allocation: halve and retry */
    for (;;) {
        cu_err = cudaMalloc(&d_k, 32 * chunk);
        if (cu_err == cudaSuccess)
            cu_err = cudaMalloc(&d_acc, chunk * sizeof *d_acc);
        if (cu_err == cudaSuccess)
            cu_err = cudaMalloc(&d_pre, chunk * sizeof *d_pre);
        if (cu_err == cudaSuccess)
            cu_err = cudaMalloc(&d_out, chunk * sizeof *d_out);
        if (cu_err == cudaSuccess)
            break;
        cu_what = "cudaMalloc of the chunk buffers";
        if (cu_err != cudaErrorMemoryAllocation || chunk <= FB_MIN_CHUNK)
            goto fail;
        cudaGetLastError();
        cudaFree(d_k);
        cudaFree(d_acc);
        cudaFree(d_pre);
        cudaFree(d_out);
        d_k = nullptr;
        d_acc = nullptr;
        d_pre = nullptr;
        d_out = nullptr;
        chunk /= 2;
    }
    for (done = 0; done < n; done += m) {
        m = n - done < chunk ? n - done : chunk;
        size_t threads2 = (m + EC_AFFINE_BATCH - 1) / EC_AFFINE_BATCH;
        CUDA_TRY(cudaMemcpy(d_k, (const uint8_t *)h_k + 32 * done, 32 * m, cudaMemcpyHostToDevice));
        fb_mul_kernel<F><<<(unsigned)((m + FB_THREADS - 1) / FB_THREADS), FB_THREADS>>>(
            d_acc, d_k, m, (const affine_t<F> *)f->d_table, f->w, f->nwin);
        CUDA_TRY(cudaGetLastError());
        xyzz_to_affine_kernel<F><<<(unsigned)((threads2 + FB_THREADS - 1) / FB_THREADS), FB_THREADS>>>(
            d_out, d_acc, d_pre, m);
        CUDA_TRY(cudaGetLastError());
        CUDA_TRY(cudaMemcpy((uint8_t *)h_out + sizeof(affine_t<F>) * done, d_out, sizeof(affine_t<F>) * m,
                            cudaMemcpyDeviceToHost));
    }
fail:
    cudaFree(d_k);
    cudaFree(d_acc);
    cudaFree(d_pre);
    cudaFree(d_out);
    if (cu_err != cudaSuccess)
        return fb_cuda_err(err, cu_err, cu_what);
    return CUZK_OK;
}

#endif /* FF_HOST_EMU */
} // namespace GPU_SYM(fb)

#if !defined(FF_HOST_EMU) || defined(CUDA_EMU_RT)

extern "C" cuzk_err GPU_SYM(gpu_fixed_base_g1)(gpu_fixed_base **out, const void *h_table, unsigned w,
                                               unsigned nwin, char *err)
{
    return GPU_SYM(fb)::fb_create(out, 0, h_table, w, nwin, err);
}

extern "C" cuzk_err GPU_SYM(gpu_fixed_base_g2)(gpu_fixed_base **out, const void *h_table, unsigned w,
                                               unsigned nwin, char *err)
{
    return GPU_SYM(fb)::fb_create(out, 1, h_table, w, nwin, err);
}

extern "C" cuzk_err GPU_SYM(gpu_fixed_base_run)(gpu_fixed_base *fb, void *h_out, const void *h_k, size_t n,
                                                char *err)
{
    GPU_SYM(fb)::fb_impl *f = (GPU_SYM(fb)::fb_impl *)fb;
    if (f->g2)
        return GPU_SYM(fb)::fb_run<GPU_SYM(fb)::fq2>(f, h_out, h_k, n, err);
    return GPU_SYM(fb)::fb_run<GPU_SYM(fb)::fq>(f, h_out, h_k, n, err);
}

extern "C" const char *GPU_SYM(gpu_fixed_base_device)(const gpu_fixed_base *fb)
{
    return ((const GPU_SYM(fb)::fb_impl *)fb)->device;
}

extern "C" void GPU_SYM(gpu_fixed_base_free)(gpu_fixed_base *fb)
{
    GPU_SYM(fb)::fb_impl *f = (GPU_SYM(fb)::fb_impl *)fb;
    if (!f)
        return;
    cudaFree(f->d_table);
    free(f);
}
#endif /* FF_HOST_EMU */
