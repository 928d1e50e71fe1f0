/* gpu_backend.cu - curve dispatch of the CUDA backend (groth16/backend.h), the device
 * count, and the page-locked host allocator the daemon's buffer pool uses. A machine
 * without a GPU or driver gets a clean "no CUDA device found" (and pageable memory). */
#include <cuda_runtime.h>
#include <stdlib.h>

extern "C" {
#include "groth16/backend.h"
}

/* Before the first CUDA call: load every kernel when the context is created, so the first
 * proof does not pay for lazy module loading inside its timed, lock-holding steps (an
 * explicit CUDA_MODULE_LOADING in the environment wins). */
static void cuda_env_once(void)
{
    static int done;
    if (!__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
        setenv("CUDA_MODULE_LOADING", "EAGER", 0);
}

extern "C" cuzk_backend *gpu_backend_create_bn254(int device, char *err);
extern "C" cuzk_backend *gpu_backend_create_bls12_381(int device, char *err);

extern "C" cuzk_backend *gpu_backend_create(cuzk_curve_id curve, int device, char *err)
{
    cuda_env_once();
    switch (curve) {
    case CURVE_BN254: return gpu_backend_create_bn254(device, err);
    case CURVE_BLS12_381: return gpu_backend_create_bls12_381(device, err);
    default: break;
    }
    cuzk_errf(err, CUZK_ECURVE, "gpu: unknown curve %d", (int)curve);
    return nullptr;
}

extern "C" int gpu_device_count(void)
{
    cuda_env_once();
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess)
        return 0;
    return n;
}

extern "C" void *gpu_host_alloc(size_t bytes, int *pinned)
{
    cuda_env_once();
    void *p = nullptr;
    size_t b = (bytes + 63) / 64 * 64 + (bytes ? 0 : 64);
    /* portable: page-locked for every device's context, so any device copies at full speed */
    if (cudaHostAlloc(&p, b, cudaHostAllocPortable) == cudaSuccess) {
        *pinned = 1;
        return p;
    }
    cudaGetLastError(); /* not sticky; clear it so it is not reported by a later call */
    *pinned = 0;
    return aligned_alloc(64, b);
}

extern "C" void gpu_host_free(void *p, int pinned)
{
    if (!p)
        return;
    if (pinned)
        cudaFreeHost(p);
    else
        free(p);
}

extern "C" uint64_t gpu_token_next(void)
{
    static uint64_t next;
    return __atomic_add_fetch(&next, 1, __ATOMIC_RELAXED);
}
