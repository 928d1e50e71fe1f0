/* gpu_nocuda.c - the CUDA backend entry points for a build without nvcc.
 *
 * The Makefile compiles this file only when CUDA is not built (it skips *_nocuda.c
 * otherwise), so a CPU-only cuzk still links and says clearly why --backend gpu fails.
 */
#include <stdlib.h>

#include "gpu/fixed_base.h"
#include "groth16/backend.h"

cuzk_backend *gpu_backend_create(cuzk_curve_id curve, int device, char *err)
{
    (void)curve;
    (void)device;
    cuzk_errf(err, CUZK_ENODEV, "this cuzk was built without CUDA");
    return NULL;
}

int gpu_device_count(void)
{
    return 0;
}

void *gpu_host_alloc(size_t bytes, int *pinned)
{
    *pinned = 0;
    return aligned_alloc(64, (bytes + 63) / 64 * 64 + (bytes ? 0 : 64));
}

void gpu_host_free(void *p, int pinned)
{
    (void)pinned;
    free(p);
}

uint64_t gpu_token_next(void)
{
    static uint64_t next;
    return __atomic_add_fetch(&next, 1, __ATOMIC_RELAXED);
}

uint64_t gpu_mem_charge(int device, int64_t delta)
{
    (void)device;
    (void)delta;
    return 0;
}

uint64_t gpu_device_mem(int device)
{
    (void)device;
    return 0;
}

double gpu_h2d_bandwidth(int device, size_t bytes, char *err)
{
    (void)device;
    (void)bytes;
    cuzk_errf(err, CUZK_ENODEV, "this cuzk was built without CUDA");
    return -1;
}

/* the fixed-base kernels of dev-circuit (fixed_base.h) */
#define GPU_FIXED_BASE_STUBS(C)                                                                     \
    cuzk_err gpu_fixed_base_g1_##C(gpu_fixed_base **out, const void *h_table, unsigned w,        \
                                   unsigned nwin, char *err)                                     \
    {                                                                                            \
        (void)h_table;                                                                           \
        (void)w;                                                                                 \
        (void)nwin;                                                                              \
        *out = NULL;                                                                             \
        return cuzk_errf(err, CUZK_ENODEV, "this cuzk was built without CUDA");                  \
    }                                                                                            \
    cuzk_err gpu_fixed_base_g2_##C(gpu_fixed_base **out, const void *h_table, unsigned w,        \
                                   unsigned nwin, char *err)                                     \
    {                                                                                            \
        return gpu_fixed_base_g1_##C(out, h_table, w, nwin, err);                                \
    }                                                                                            \
    cuzk_err gpu_fixed_base_run_##C(gpu_fixed_base *fb, void *h_out, const void *h_k, size_t n,  \
                                    char *err)                                                   \
    {                                                                                            \
        (void)fb;                                                                                \
        (void)h_out;                                                                             \
        (void)h_k;                                                                               \
        (void)n;                                                                                 \
        return cuzk_errf(err, CUZK_ENODEV, "this cuzk was built without CUDA");                  \
    }                                                                                            \
    const char *gpu_fixed_base_device_##C(const gpu_fixed_base *fb)                              \
    {                                                                                            \
        (void)fb;                                                                                \
        return "none";                                                                           \
    }                                                                                            \
    void gpu_fixed_base_free_##C(gpu_fixed_base *fb) { (void)fb; }

GPU_FIXED_BASE_STUBS(bn254)
GPU_FIXED_BASE_STUBS(bls12_381)
