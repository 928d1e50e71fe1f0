/* cuda_runtime.h (emulated) - the part of the CUDA runtime that src/gpu uses, run on the CPU,
 * so that the whole CUDA backend (host code and kernels) builds with g++ and proves on a
 * machine without a GPU (`make emu`: build-emu/bin/cuzk, tests/t_gpu_rt_emu.sh).
 *
 * Device memory is host memory; every allocation is recorded, and a copy or memset that does
 * not lie inside one allocation of the right kind stops the process with its call site.
 * Streams and events keep CUDA's ordering rules and nothing more: an operation waits for the
 * one before it on its stream, for the event records a cudaStreamWaitEvent named, and for the
 * legacy default stream's rules. Operations run only when the host needs them (a
 * synchronisation, a query, a blocking copy, cudaFree) and, among those ready, in an order
 * drawn from CUZK_EMU_SEED, so a missing wait shows as a wrong result in some seeds instead
 * of never. Kernels run block by block, each block's threads as fibers that meet at
 * __syncthreads. The field and curve arithmetic come from dev/cuda/emu_ptx.h (PTX carry
 * chains in C). What it cannot show: timing, and races inside one kernel.
 */
#pragma once
#define CUDA_EMU_RT 1
#include "emu_ptx.h"

#include <stddef.h>
#include <stdint.h>
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

typedef int cudaError_t;
enum {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInvalidDevice = 101,
    cudaErrorNoDevice = 100,
    cudaErrorNotReady = 600,
};
enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4,
};
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
#define cudaStreamDefault 0x0
#define cudaStreamNonBlocking 0x1
#define cudaEventDefault 0x0
#define cudaEventDisableTiming 0x2
#define cudaHostAllocDefault 0x0
#define cudaHostAllocPortable 0x1

typedef struct emu_stream *cudaStream_t;
typedef struct emu_event *cudaEvent_t;

struct dim3 {
    unsigned x, y, z;
    dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
struct cudaDeviceProp {
    char name[256];
    size_t totalGlobalMem;
    int multiProcessorCount;
    int major, minor;
    size_t sharedMemPerBlockOptin;
};

const char *cudaGetErrorString(cudaError_t e);
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
cudaError_t cudaGetDeviceCount(int *n);
cudaError_t cudaSetDevice(int d);
cudaError_t cudaGetDevice(int *d);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int d);
cudaError_t cudaMemGetInfo(size_t *free_b, size_t *total_b);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest);

cudaError_t cudaMalloc(void **p, size_t bytes);
template <class T>
static inline cudaError_t cudaMalloc(T **p, size_t bytes)
{
    return cudaMalloc((void **)p, bytes);
}
cudaError_t cudaFree(void *p);
cudaError_t cudaHostAlloc(void **p, size_t bytes, unsigned flags);
template <class T>
static inline cudaError_t cudaHostAlloc(T **p, size_t bytes, unsigned flags)
{
    return cudaHostAlloc((void **)p, bytes, flags);
}
cudaError_t cudaMallocHost(void **p, size_t bytes);
cudaError_t cudaFreeHost(void *p);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind, cudaStream_t st = 0);
cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                              cudaMemcpyKind kind, cudaStream_t st = 0);
cudaError_t cudaMemset(void *p, int v, size_t bytes);
cudaError_t cudaMemsetAsync(void *p, int v, size_t bytes, cudaStream_t st = 0);
cudaError_t emu_memcpy_symbol(void *dst, const void *sym, size_t bytes, size_t off);
/* as CUDA's two forms: a symbol's address (the C form), or the symbol itself (the C++ template) */
static inline cudaError_t cudaMemcpyFromSymbol(void *dst, const void *sym, size_t bytes, size_t off = 0,
                                               cudaMemcpyKind kind = cudaMemcpyDeviceToHost)
{
    (void)kind;
    return emu_memcpy_symbol(dst, sym, bytes, off);
}
template <class T>
static inline cudaError_t cudaMemcpyFromSymbol(void *dst, const T &sym, size_t bytes, size_t off = 0,
                                               cudaMemcpyKind kind = cudaMemcpyDeviceToHost)
{
    (void)kind;
    return emu_memcpy_symbol(dst, (const void *)&sym, bytes, off);
}

cudaError_t cudaStreamCreate(cudaStream_t *s);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags);
cudaError_t cudaStreamCreateWithPriority(cudaStream_t *s, unsigned flags, int prio);
cudaError_t cudaStreamDestroy(cudaStream_t s);
cudaError_t cudaStreamSynchronize(cudaStream_t s);
cudaError_t cudaStreamQuery(cudaStream_t s);
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned flags = 0);
cudaError_t cudaEventCreate(cudaEvent_t *e);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned flags);
cudaError_t cudaEventDestroy(cudaEvent_t e);
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s = 0);
cudaError_t cudaEventSynchronize(cudaEvent_t e);
cudaError_t cudaEventQuery(cudaEvent_t e);
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b);

cudaError_t emu_func_set_smem(const void *fn, int bytes);
template <class F>
static inline cudaError_t cudaFuncSetAttribute(F *fn, cudaFuncAttribute attr, int v)
{
    return attr == cudaFuncAttributeMaxDynamicSharedMemorySize ? emu_func_set_smem((const void *)fn, v)
                                                               : cudaErrorInvalidValue;
}

/* ---- the field product of the emulated build (ff.cuh's mul_ap): dev/cuda/ref.h's CIOS ---- */
#include "ref.h"
template <int L, class PF>
static rfield<L> emu_field(PF limb)
{
    uint32_t p32[2 * L];
    for (int j = 0; j < 2 * L; j++)
        p32[j] = limb(j);
    rfield<L> f;
    f.init(p32);
    return f;
}
template <int L>
static inline void emu_field_mul(const rfield<L> &f, uint32_t *o, const uint32_t *a, const uint32_t *b)
{
    uint64_t x[L], y[L], r[L];
    memcpy(x, a, sizeof x); /* 32-bit limbs, little-endian: the same bytes */
    memcpy(y, b, sizeof y);
    f.mul(r, x, y);
    memcpy(o, r, sizeof r);
}

/* the schedule's seed from here on (tests of the runtime itself; CUZK_EMU_SEED sets the first) */
void emu_reseed(int seed);

/* ---- kernels ---- */
struct emu_cfg_t {
    dim3 grid, block;
    size_t smem;
    cudaStream_t st;
};
static inline emu_cfg_t emu_cfg(dim3 g, dim3 b, size_t smem = 0, cudaStream_t st = 0)
{
    return emu_cfg_t{g, b, smem, st};
}
/* queues one launch: checks its shape as the driver would (an error goes to cudaGetLastError),
   then runs body once per thread of the grid when the schedule reaches it */
void emu_enqueue_kernel(const emu_cfg_t &c, const void *fn, const char *name, std::function<void()> body);
template <class... P, class... A>
static inline void emu_launch(const emu_cfg_t &c, const char *name, void (*k)(P...), A &&...a)
{
    std::tuple<std::decay_t<P>...> args(std::forward<A>(a)...); /* by value, as a launch does */
    emu_enqueue_kernel(c, (const void *)k, name, [k, args]() { std::apply(k, args); });
}
