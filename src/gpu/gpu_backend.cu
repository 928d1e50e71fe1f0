/* gpu_backend.cu - curve dispatch of the CUDA backend (groth16/backend.h), the device
 * count, and the page-locked host allocator the daemon's buffer pool uses. A machine
 * without a GPU or driver gets a clean "no CUDA device found" (and pageable memory). */
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

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

extern "C" uint64_t gpu_mem_charge(int device, int64_t delta)
{
    static uint64_t used[64];
    if (device < 0 || device >= 64)
        return 0;
    return __atomic_add_fetch(&used[device], (uint64_t)delta, __ATOMIC_ACQ_REL);
}

/* host-to-device copy rate from page-locked memory: bytes copied in 64 MiB pieces (the streamed
   bases' largest chunks are of that order), best of three runs, in GB/s (1e9 bytes); -1 and err
   on failure */
extern "C" double gpu_h2d_bandwidth(int device, size_t bytes, char *err)
{
    cuda_env_once();
    void *h = nullptr, *d = nullptr;
    cudaEvent_t a = nullptr, b = nullptr;
    double best = -1;
    const size_t piece = (size_t)64 << 20;
    cudaError_t e = cudaSetDevice(device);
    if (e == cudaSuccess)
        e = cudaHostAlloc(&h, bytes, cudaHostAllocPortable);
    if (e == cudaSuccess)
        e = cudaMalloc(&d, bytes);
    if (e == cudaSuccess)
        memset(h, 0x5a, bytes);
    if (e == cudaSuccess && (e = cudaEventCreate(&a)) == cudaSuccess)
        e = cudaEventCreate(&b);
    for (int run = 0; run < 4 && e == cudaSuccess; run++) {
        cudaEventRecord(a, 0);
        for (size_t off = 0; off < bytes && e == cudaSuccess; off += piece)
            e = cudaMemcpyAsync((uint8_t *)d + off, (uint8_t *)h + off, bytes - off < piece ? bytes - off : piece,
                                cudaMemcpyHostToDevice, 0);
        cudaEventRecord(b, 0);
        if (e == cudaSuccess)
            e = cudaEventSynchronize(b);
        float ms = 0;
        if (e == cudaSuccess && run > 0 && cudaEventElapsedTime(&ms, a, b) == cudaSuccess && ms > 0) {
            double r = (double)bytes / (ms * 1e6);
            best = r > best ? r : best;
        }
    }
    if (e != cudaSuccess) {
        cuzk_errf(err, CUZK_EDEVICE, "gpu %d: bandwidth probe: %s", device, cudaGetErrorString(e));
        best = -1;
    }
    if (a)
        cudaEventDestroy(a);
    if (b)
        cudaEventDestroy(b);
    cudaFree(d);
    if (h)
        cudaFreeHost(h);
    return best;
}

extern "C" uint64_t gpu_device_mem(int device)
{
    cuda_env_once();
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, device) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return p.totalGlobalMem;
}
