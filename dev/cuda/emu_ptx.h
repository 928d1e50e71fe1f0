/* emu_ptx.h - what the device code of src/gpu needs to compile and run on the CPU: the CUDA
 * qualifiers as no-ops, uint4 and the intrinsics it uses, one-thread-at-a-time launch indices,
 * and the PTX carry-chain primitives of ff.cuh emulated in C with one global carry flag (set by
 * the .cc forms, read by the c forms). Included first by emu_test.cpp and fb_emu.cpp. */
#pragma once
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <thread>
#include <vector>

#define FF_HOST_EMU 1
#define __device__
#define __host__
#define __constant__
#define __forceinline__ inline
#define __noinline__
#define __global__
#define __launch_bounds__(...)
#define __shared__
#define FF_INLINE inline

struct uint4 {
    uint32_t x, y, z, w;
};
static inline uint4 make_uint4(uint32_t a, uint32_t b, uint32_t c, uint32_t d) { return uint4{a, b, c, d}; }
static inline uint32_t __funnelshift_l(uint32_t lo, uint32_t hi, unsigned s)
{
    s &= 31;
    return s ? (hi << s) | (lo >> (32 - s)) : hi;
}
static inline uint32_t __funnelshift_r(uint32_t lo, uint32_t hi, unsigned s)
{
    s &= 31;
    return s ? (lo >> s) | (hi << (32 - s)) : lo;
}
static inline int __ffs(uint32_t x) { return __builtin_ffs((int)x); }
static inline unsigned atomicAdd(unsigned *p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
static inline unsigned long long __brevll(unsigned long long v)
{
    unsigned long long r = 0;
    for (int i = 0; i < 64; i++)
        r |= ((v >> i) & 1ull) << (63 - i);
    return r;
}
/* the FP64 intrinsics of dev/cuda/ff52.cuh: the bit casts, and a fused multiply-add rounded
   toward zero computed exactly in 128-bit integers (every operand there is an integer) */
static inline long long __double_as_longlong(double x)
{
    long long v;
    memcpy(&v, &x, 8);
    return v;
}
static inline double __longlong_as_double(long long v)
{
    double x;
    memcpy(&x, &v, 8);
    return x;
}
static inline __int128 emu_int_of(double x)
{
    int e;
    double f = frexp(x, &e); /* x = f 2^e, 0.5 <= |f| < 1 */
    if (x == 0)
        return 0;
    __int128 m = (long long)ldexp(f, 53); /* exact: 53 significant bits */
    if (e >= 53)
        return m << (e - 53);
    if ((m & (((__int128)1 << (53 - e)) - 1)) != 0)
        abort(); /* not an integer */
    return m >> (53 - e);
}
static inline double __fma_rz(double a, double b, double c)
{
    __int128 v = emu_int_of(a) * emu_int_of(b) + emu_int_of(c);
    bool neg = v < 0;
    unsigned __int128 u = neg ? -(unsigned __int128)v : (unsigned __int128)v;
    int len = 0;
    while (len < 128 && (u >> len) != 0)
        len++;
    int sh = len > 53 ? len - 53 : 0;
    double r = ldexp((double)(uint64_t)(u >> sh), sh);
    return neg ? -r : r;
}
struct emu_dim {
    unsigned x, y, z;
};
#ifndef CUDA_EMU_RT
[[maybe_unused]] static emu_dim blockIdx, blockDim, gridDim;
[[maybe_unused]] static thread_local emu_dim threadIdx;

/* A block of one thread runs on the calling thread (barriers are no-ops); emu_block runs a
 * block of n threads as n host threads with a real barrier. */
static pthread_barrier_t g_emu_bar;
static std::vector<pthread_barrier_t> g_emu_warp_bar; /* one per 32 threads of the block */
static unsigned g_emu_threads = 1;
static inline void __syncthreads()
{
    if (g_emu_threads > 1)
        pthread_barrier_wait(&g_emu_bar);
}
static inline void __syncwarp()
{
    if (g_emu_threads > 1)
        pthread_barrier_wait(&g_emu_warp_bar[threadIdx.x / 32]);
}
template <class F>
static void emu_block(unsigned n, F fn)
{
    blockDim.x = n;
    if (n == 1) {
        threadIdx.x = 0;
        fn();
        return;
    }
    g_emu_threads = n;
    pthread_barrier_init(&g_emu_bar, nullptr, n);
    g_emu_warp_bar.resize((n + 31) / 32);
    for (unsigned w = 0; w < g_emu_warp_bar.size(); w++)
        pthread_barrier_init(&g_emu_warp_bar[w], nullptr, n - 32 * w < 32 ? n - 32 * w : 32);
    std::vector<std::thread> th;
    for (unsigned i = 0; i < n; i++)
        th.emplace_back([&fn, i] {
            threadIdx.x = i;
            fn();
        });
    for (auto &t : th)
        t.join();
    pthread_barrier_destroy(&g_emu_bar);
    for (auto &b : g_emu_warp_bar)
        pthread_barrier_destroy(&b);
    g_emu_threads = 1;
    blockDim.x = 1;
}
#else /* the emulated runtime (emu_rt/cuda_runtime.h): one kernel at a time, a block's threads as fibers */
extern emu_dim blockIdx, blockDim, gridDim;
extern thread_local emu_dim threadIdx;
int emu_barrier(int pred); /* every thread of the block meets here; the number that passed pred != 0 */
static inline void __syncthreads() { emu_barrier(0); }
static inline void __syncwarp() { emu_barrier(0); } /* the whole block: src/gpu's blocks meet as one */
static inline int __syncthreads_count(int pred) { return emu_barrier(pred); }
#endif
static inline unsigned long long atomicAdd(unsigned long long *p, unsigned long long v)
{
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

static thread_local unsigned g_cf; /* the emulated carry flag */
static inline uint32_t emu_add(uint64_t v, bool setcf)
{
    if (setcf)
        g_cf = (unsigned)(v >> 32) & 1;
    return (uint32_t)v;
}
static inline uint32_t emu_sub(uint32_t a, uint32_t b, unsigned borrow, bool setcf)
{
    uint64_t v = (uint64_t)a - b - borrow;
    if (setcf)
        g_cf = (unsigned)(v >> 63);
    return (uint32_t)v;
}
static inline uint32_t emu_lo(uint32_t a, uint32_t b) { return (uint32_t)((uint64_t)a * b); }
static inline uint32_t emu_hi(uint32_t a, uint32_t b) { return (uint32_t)(((uint64_t)a * b) >> 32); }
#define PTX_ADD_CC(d, a, b) (d) = emu_add((uint64_t)(a) + (b), true)
#define PTX_ADDC_CC(d, a, b) (d) = emu_add((uint64_t)(a) + (b) + g_cf, true)
#define PTX_ADDC(d, a, b) (d) = emu_add((uint64_t)(a) + (b) + g_cf, false)
#define PTX_SUB_CC(d, a, b) (d) = emu_sub((a), (b), 0, true)
#define PTX_SUBC_CC(d, a, b) (d) = emu_sub((a), (b), g_cf, true)
#define PTX_SUBC(d, a, b) (d) = emu_sub((a), (b), g_cf, false)
#define PTX_MADLO_CC(d, a, b, c) (d) = emu_add((uint64_t)emu_lo(a, b) + (c), true)
#define PTX_MADCLO_CC(d, a, b, c) (d) = emu_add((uint64_t)emu_lo(a, b) + (c) + g_cf, true)
#define PTX_MADHI_CC(d, a, b, c) (d) = emu_add((uint64_t)emu_hi(a, b) + (c), true)
#define PTX_MADCHI_CC(d, a, b, c) (d) = emu_add((uint64_t)emu_hi(a, b) + (c) + g_cf, true)
#define PTX_MADCLO(d, a, b, c) (d) = emu_add((uint64_t)emu_lo(a, b) + (c) + g_cf, false)
#define PTX_MADCHI(d, a, b, c) (d) = emu_add((uint64_t)emu_hi(a, b) + (c) + g_cf, false)
