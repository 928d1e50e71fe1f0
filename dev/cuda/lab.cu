/* lab.cu - kernel lab for the CUDA backend: field multiplication, NTT and MSM of one curve
 * (built twice, -DLAB_BN254 / -DLAB_BLS12_381), each checked against the plain CPU
 * reference in ref.h on fresh random inputs and timed (median of several runs) against a
 * model bound.
 *
 *   ./lab_bn254 [ff] [ntt] [msm] [big] [prof] [one] [distinct] [sweep] [msm24] [table] [tg1] [tg2] [f52]
 *   (no argument: ff ntt msm)
 *   big: MSMs and NTTs up to 2^24 / 2^26; prof: MSM phase timings; one: one MSM per group for
 *   a profiler; distinct: MSM timings over 2^20..2^24 distinct bases (not checked); sweep:
 *   window bits x level-0 chunk at 2^22 and 2^24 (checked, timed, phases); msm24: the default
 *   shape at 2^24, G1 and G2 (checked, timed, phases); table: window bits over a table of
 *   shifted bases at 2^22 and 2^24 (checked, timed, phases; msm.cuh TABLE); tg1, tg2: G1 or G2
 *   at 2^24 over a table at the backend's window bits (for builds that differ in a knob);
 *   ch=A,B,..: tg1 and tg2 at each of these level-0 chunks (default: the shape's);
 *   f52: the FP64 Montgomery product of ff52.cuh (checked, timed beside ff.cuh's, and both at
 *   once in one thread);
 *   aff=R:C: every MSM over a table takes R affine rounds at level 0 over chunks of C entries
 *   (msm.cuh AFFINE ROUNDS; aff=0: none; aff=0:C: the kernel of the affine rounds with none),
 *   whatever the build's default
 *
 * MSM times run as the backend's do: to the window sums copied to the host (the backend then
 * combines the windows on a CPU core, c (windows - 1) doublings, not timed here).
 *
 * Bounds printed: field mul, the IMAD issue rate (132 SMs x 64 per clock x 1.98 GHz) over
 * 4N^2 IMADs per product; NTT, one read and one write of the vector at 4.0 TB/s; MSM, the
 * mixed additions (n * windows, 10 field products each) at the field-mul bound.
 * Exit status 1 if any check fails.
 */
#include <algorithm>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#if defined(LAB_BN254) && !defined(MSM_ACC_MINB)
#define MSM_ACC_MINB 4 /* as gpu_bn254.cu */
#endif
#if defined(LAB_BN254) && !defined(MSM_ACC_MINB2)
#define MSM_ACC_MINB2 3 /* as gpu_bn254.cu */
#endif
#if defined(LAB_BLS12_381) && !defined(MSM_LAZY_BASE)
#define MSM_LAZY_BASE 1 /* as gpu_bls12_381.cu */
#endif
#ifndef EC_MUL_CALL
#define EC_MUL_CALL 1 /* as both units */
#endif
#if defined(LAB_BLS12_381) && !defined(EC_MUL_CALL2)
#define EC_MUL_CALL2 2 /* as gpu_bls12_381.cu */
#endif
#include "gpu/cuda_util.cuh"
#include "gpu/msm.cuh"
#include "gpu/ntt.cuh"

#if defined(LAB_BN254)
#include "gpu/params_bn254.cuh"
#define LP(x) BN254_##x
#define LAB_NAME "BN254"
#define FR_BITS 254
#define G1_B 3
#else
#include "gpu/params_bls12_381.cuh"
#define LP(x) BLS12_381_##x
#define LAB_NAME "BLS12-381"
#define FR_BITS 255
#define G1_B 4
#endif
#include "ref.h"
#include "ff52.cuh"

FP_PARAMS(fr_params, 8, LP(FR_P), LP(FR_M0), LP(FR_RR), LP(FR_ONE), LP(FR_NPINV));
FP_PARAMS(fq_params, LP(FQ_LIMBS32), LP(FQ_P), LP(FQ_M0), LP(FQ_RR), LP(FQ_ONE), LP(FQ_NPINV));
typedef fp_t<fr_params> fr;
typedef fp_t<fq_params> fq;
typedef fp2_t<fq> fq2;
#define QL (LP(FQ_LIMBS32) / 2) /* 64-bit limbs of Fq */

static int g_fail = 0;
static int g_aff_set = 0; /* aff=R:C given */
static unsigned g_aff_rounds = 0, g_aff_chunk = 0;
static std::vector<unsigned> g_chunks = {0}; /* ch=: level-0 chunks for tg1/tg2 (0: the shape's) */
#define CK(x)                                                                                     \
    do {                                                                                          \
        cudaError_t e_ = (x);                                                                     \
        if (e_ != cudaSuccess) {                                                                  \
            fprintf(stderr, "CUDA error %s at %s:%d: %s\n", cudaGetErrorName(e_), __FILE__, __LINE__, \
                    cudaGetErrorString(e_));                                                      \
            exit(2);                                                                              \
        }                                                                                         \
    } while (0)

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd()
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
template <int L>
static void rand_below(uint64_t *o, const uint64_t *p)
{
    int top = 63;
    while (!(p[L - 1] >> top))
        top--;
    uint64_t mask = top == 63 ? ~0ull : ((1ull << (top + 1)) - 1);
    for (;;) {
        for (int i = 0; i < L; i++)
            o[i] = rnd();
        o[L - 1] &= mask;
        bool lt = false;
        for (int i = L - 1; i >= 0; i--)
            if (o[i] != p[i]) {
                lt = o[i] < p[i];
                break;
            }
        if (lt)
            return;
    }
}

static void load_field(rfield<4> &frr, rfield<QL> &fqr)
{
    uint32_t p32[12];
    CK(cudaMemcpyFromSymbol(p32, LP(FR_P), 32));
    frr.init(p32);
    CK(cudaMemcpyFromSymbol(p32, LP(FQ_P), 4 * LP(FQ_LIMBS32)));
    fqr.init(p32);
}

struct timer {
    cudaEvent_t a, b;
    timer() { cudaEventCreate(&a), cudaEventCreate(&b); }
    void start() { cudaEventRecord(a); }
    float stop()
    {
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float ms;
        cudaEventElapsedTime(&ms, a, b);
        return ms;
    }
};
static float median(std::vector<float> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

static void row(const char *op, const char *size, float ms, double bound_ms, const char *unit, double rate)
{
    printf("| %-22s | %-9s | %-6s | %10.3f | %10.3f | %8.2f %s |\n", op, LAB_NAME, size, ms, bound_ms, rate, unit);
}

/* ------------------------------------------------------------------ field */
template <class F>
__global__ __launch_bounds__(256) void ff_check_kernel(F *out, const F *a, const F *b, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    F x = a[i], y = b[i];
    out[4 * i] = x * y;
    out[4 * i + 1] = x.sqr();
    out[4 * i + 2] = x + y;
    out[4 * i + 3] = x - y;
}

template <class F>
__global__ __launch_bounds__(256) void ff_bench_kernel(F *a, int iters)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    F x = a[2 * i], y = a[2 * i + 1];
    for (int k = 0; k < iters; k++) {
        x = x * y;
        y = y * x;
    }
    a[2 * i] = x;
    a[2 * i + 1] = y;
}

template <class F>
__global__ __launch_bounds__(256) void ff_sqr_bench_kernel(F *a, int iters)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    F x = a[2 * i], y = a[2 * i + 1];
    for (int k = 0; k < iters; k++) {
        x = x.sqr();
        y = y.sqr();
    }
    a[2 * i] = x;
    a[2 * i + 1] = y;
}

template <class F, int L, int E>
static void ff_test(const char *name, const rfield<L> &f)
{
    const size_t n = 1 << 16;
    const int W = L * E;
    rext<L, E> R{&f};
    std::vector<uint64_t> a(n * W), b(n * W), out(4 * n * W);
    for (size_t i = 0; i < n * E; i++) {
        rand_below<L>(&a[i * L], f.p);
        rand_below<L>(&b[i * L], f.p);
    }
    /* edge values: 0, 1, p-1 */
    memset(&a[0], 0, W * 8);
    memcpy(&a[W], f.p, L * 8);
    a[W] -= 1;
    F *d_a, *d_b, *d_o;
    CK(cudaMalloc(&d_a, n * sizeof(F)));
    CK(cudaMalloc(&d_b, n * sizeof(F)));
    CK(cudaMalloc(&d_o, 4 * n * sizeof(F)));
    CK(cudaMemcpy(d_a, a.data(), n * sizeof(F), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_b, b.data(), n * sizeof(F), cudaMemcpyHostToDevice));
    CK(cudaMemset(d_o, 0xa5, 4 * n * sizeof(F)));
    ff_check_kernel<F><<<(unsigned)(n / 256), 256>>>(d_o, d_a, d_b, n);
    CK(cudaGetLastError());
    CK(cudaMemcpy(out.data(), d_o, 4 * n * sizeof(F), cudaMemcpyDeviceToHost));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t r[W];
        const uint64_t *x = &a[i * W], *y = &b[i * W];
        R.mul(r, x, y);
        bad += memcmp(r, &out[(4 * i) * W], W * 8) != 0;
        R.mul(r, x, x);
        bad += memcmp(r, &out[(4 * i + 1) * W], W * 8) != 0;
        R.add(r, x, y);
        bad += memcmp(r, &out[(4 * i + 2) * W], W * 8) != 0;
        R.sub(r, x, y);
        bad += memcmp(r, &out[(4 * i + 3) * W], W * 8) != 0;
    }
    printf("check %-4s mul/sqr/add/sub on %zu random pairs: %s (%zu mismatches)\n", name, n, bad ? "FAIL" : "ok", bad);
    g_fail |= bad != 0;
    /* throughput */
    int sms = 132;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    size_t threads = (size_t)sms * 2048;
    F *d_x;
    CK(cudaMalloc(&d_x, 2 * threads * sizeof(F)));
    CK(cudaMemset(d_x, 0x11, 2 * threads * sizeof(F)));
    int iters = 256;
    double muls = 2.0 * iters * threads * (E == 2 ? 3 : 1);
    int N32 = 2 * L;
    double bound = muls * 4.0 * N32 * N32 / (sms * 64.0 * 1.98e9) * 1e3;
    /* median of 5 timed launches (after one warm-up) of kernel k: x*y chains, or squares */
    auto bench = [&](void (*k)(F *, int), const char *op) {
        timer t;
        std::vector<float> ms;
        for (int rep = 0; rep < 6; rep++) {
            t.start();
            k<<<(unsigned)(threads / 256), 256>>>(d_x, iters);
            float m = t.stop();
            if (rep)
                ms.push_back(m);
        }
        CK(cudaGetLastError());
        double med = median(ms);
        row(op, name, (float)med, bound, "Gmul/s", muls / med / 1e6);
    };
    bench(ff_bench_kernel<F>, "field mul (Gmul/s)");
    if (E == 1)
        bench(ff_sqr_bench_kernel<F>, "field sqr (Gmul/s)");
    cudaFree(d_a), cudaFree(d_b), cudaFree(d_o), cudaFree(d_x);
}

/* ------------------------------------------------------------------ FP64 product (ff52.cuh) */
template <class F, int M>
FF_INLINE void f52_in(double *r, const F &x, const f52_params<M> &P)
{
    double t[M];
    f52_split<M, F::N>(t, x.v);
    f52_mul<M>(r, t, P.to, P);
}
template <class F, int M>
FF_INLINE F f52_out(const double *a, const f52_params<M> &P)
{
    double t[M];
    uint32_t w[F::N];
    f52_mul<M>(t, a, P.from, P);
    f52_join<M, F::N>(w, t);
    return F::reduce_once(w, 0);
}

template <class F, int M>
__global__ __launch_bounds__(256) void f52_check_kernel(F *out, const F *a, const F *b, size_t n, f52_params<M> P)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    double x[M], y[M];
    f52_in<F, M>(x, a[i], P);
    f52_in<F, M>(y, b[i], P);
    f52_mul<M>(x, x, y, P);
    out[i] = f52_out<F, M>(x, P);
}

/* ff_bench_kernel's chains (x = x y, y = y x) in the 52-bit form */
template <class F, int M>
__global__ __launch_bounds__(256) void f52_bench_kernel(F *a, int iters, f52_params<M> P)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    double x[M], y[M];
    f52_in<F, M>(x, a[2 * i], P);
    f52_in<F, M>(y, a[2 * i + 1], P);
    for (int k = 0; k < iters; k++) {
        f52_mul<M>(x, x, y, P);
        f52_mul<M>(y, y, x, P);
    }
    a[2 * i] = f52_out<F, M>(x, P);
    a[2 * i + 1] = f52_out<F, M>(y, P);
}

/* both products in one thread: ff_bench_kernel's chains on a[2i], a[2i + 1] (integer pipe) and
   the FP64 chains on a[2i + 2T], a[2i + 2T + 1], T threads, interleaved */
template <class F, int M>
__global__ __launch_bounds__(256) void f52_hybrid_kernel(F *a, int iters, f52_params<M> P, size_t T)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    F x = a[2 * i], y = a[2 * i + 1];
    double u[M], v[M];
    f52_in<F, M>(u, a[2 * T + 2 * i], P);
    f52_in<F, M>(v, a[2 * T + 2 * i + 1], P);
    for (int k = 0; k < iters; k++) {
        x = x * y;
        f52_mul<M>(u, u, v, P);
        y = y * x;
        f52_mul<M>(v, v, u, P);
    }
    a[2 * i] = x, a[2 * i + 1] = y;
    a[2 * T + 2 * i] = f52_out<F, M>(u, P);
    a[2 * T + 2 * i + 1] = f52_out<F, M>(v, P);
}

/* checked against the reference (single products) and against ff.cuh's chains (the same
   start values give the same values after 2 x 16 products), then timed */
template <class F, int L, int M>
static void f52_test(const char *name, const rfield<L> &f)
{
    const int N = F::N;
    f52_params<M> P = f52_params_of<M>(f.p, L, N);
    const size_t n = 1 << 16;
    std::vector<uint64_t> a(n * L), b(n * L), out(n * L);
    for (size_t i = 0; i < n; i++) {
        rand_below<L>(&a[i * L], f.p);
        rand_below<L>(&b[i * L], f.p);
    }
    memset(&a[0], 0, L * 8);
    memcpy(&a[L], f.p, L * 8);
    a[L] -= 1;
    memcpy(&b[L], &a[L], L * 8);
    F *d_a, *d_b, *d_o;
    CK(cudaMalloc(&d_a, n * sizeof(F)));
    CK(cudaMalloc(&d_b, n * sizeof(F)));
    CK(cudaMalloc(&d_o, n * sizeof(F)));
    CK(cudaMemcpy(d_a, a.data(), n * sizeof(F), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_b, b.data(), n * sizeof(F), cudaMemcpyHostToDevice));
    CK(cudaMemset(d_o, 0xa5, n * sizeof(F)));
    f52_check_kernel<F, M><<<(unsigned)(n / 256), 256>>>(d_o, d_a, d_b, n, P);
    CK(cudaGetLastError());
    CK(cudaMemcpy(out.data(), d_o, n * sizeof(F), cudaMemcpyDeviceToHost));
    rext<L, 1> R{&f};
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t r[L];
        R.mul(r, &a[i * L], &b[i * L]);
        bad += memcmp(r, &out[i * L], L * 8) != 0;
    }
    /* chains: the same random start values through both products */
    int sms = 132;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    size_t threads = (size_t)sms * 2048;
    std::vector<uint64_t> st(4 * threads * L), r1(2 * threads * L), r2(2 * threads * L);
    for (size_t i = 0; i < 4 * threads; i++)
        rand_below<L>(&st[i * L], f.p);
    F *d_x;
    CK(cudaMalloc(&d_x, 4 * threads * sizeof(F)));
    CK(cudaMemcpy(d_x, st.data(), 2 * threads * sizeof(F), cudaMemcpyHostToDevice));
    ff_bench_kernel<F><<<(unsigned)(threads / 256), 256>>>(d_x, 16);
    CK(cudaMemcpy(r1.data(), d_x, 2 * threads * sizeof(F), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(d_x, st.data(), 2 * threads * sizeof(F), cudaMemcpyHostToDevice));
    f52_bench_kernel<F, M><<<(unsigned)(threads / 256), 256>>>(d_x, 16, P);
    CK(cudaGetLastError());
    CK(cudaMemcpy(r2.data(), d_x, 2 * threads * sizeof(F), cudaMemcpyDeviceToHost));
    size_t bad_chain = 0;
    for (size_t i = 0; i < 2 * threads; i++)
        bad_chain += memcmp(&r1[i * L], &r2[i * L], L * 8) != 0;
    printf("check %-4s FP64 product (%d limbs of 52 bits): %zu random pairs %s (%zu mismatches), %zu chains of 32 "
           "against ff.cuh's: %s (%zu mismatches)\n",
           name, M, n, bad ? "FAIL" : "ok", bad, 2 * threads, bad_chain ? "FAIL" : "ok", bad_chain);
    g_fail |= bad != 0 || bad_chain != 0;
    /* throughput: the chains of ff_test's bench, integer and FP64, and both at once */
    CK(cudaMemcpy(d_x, st.data(), 4 * threads * sizeof(F), cudaMemcpyHostToDevice));
    int iters = 256;
    double muls = 2.0 * iters * threads;
    double fp64_ops = 6.0 * M * M + 6.0 * M;
    double bound = muls * fp64_ops / (sms * 64.0 * 1.98e9) * 1e3;
    auto bench = [&](auto launch, double count, const char *op) {
        timer t;
        std::vector<float> ms;
        for (int rep = 0; rep < 6; rep++) {
            t.start();
            launch();
            float m = t.stop();
            if (rep)
                ms.push_back(m);
        }
        CK(cudaGetLastError());
        double med = median(ms);
        row(op, name, (float)med, bound * count / muls, "Gmul/s", count / med / 1e6);
    };
    unsigned blocks = (unsigned)(threads / 256);
    bench([&] { ff_bench_kernel<F><<<blocks, 256>>>(d_x, iters); }, muls, "field mul (Gmul/s)");
    bench([&] { f52_bench_kernel<F, M><<<blocks, 256>>>(d_x, iters, P); }, muls, "field mul FP64 (Gmul/s)");
    bench([&] { f52_hybrid_kernel<F, M><<<blocks, 256>>>(d_x, iters, P, threads); }, 2 * muls,
          "field mul INT+FP64");
    cudaFree(d_a), cudaFree(d_b), cudaFree(d_o), cudaFree(d_x);
}

/* ------------------------------------------------------------------ NTT */
static void host_ntt(std::vector<uint64_t> &a, unsigned log_n, const rfield<4> &f, const uint64_t *w)
{
    size_t n = (size_t)1 << log_n;
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        for (unsigned b = 0; b < log_n; b++)
            j |= ((i >> b) & 1) << (log_n - 1 - b);
        if (i < j)
            for (int k = 0; k < 4; k++)
                std::swap(a[4 * i + k], a[4 * j + k]);
    }
    for (size_t m = 1; m < n; m <<= 1) {
        /* wm = w^(n/(2m)) */
        uint64_t wm[4], e[4] = {n / (2 * m), 0, 0, 0};
        f.pow(wm, w, e);
        for (size_t s = 0; s < n; s += 2 * m) {
            uint64_t tw[4];
            memcpy(tw, f.one, 32);
            for (size_t j = 0; j < m; j++) {
                uint64_t u[4], v[4];
                memcpy(u, &a[4 * (s + j)], 32);
                f.mul(v, &a[4 * (s + j + m)], tw);
                f.add(&a[4 * (s + j)], u, v);
                f.sub(&a[4 * (s + j + m)], u, v);
                f.mul(tw, tw, wm);
            }
        }
    }
}

static fr fr_table(const void *sym, unsigned k)
{
    fr r;
    CK(cudaMemcpyFromSymbol(&r, sym, 32, (size_t)k * 32));
    return r;
}

static void ntt_test(const rfield<4> &f, unsigned max_log)
{
    /* LAB_NTT_LOG=k: only 2^k (a profiler run); LAB_NTT_MAX=k: up to 2^k; LAB_NTT_REPS=r: r - 1
       timed runs a size (default 8) */
    const char *only = getenv("LAB_NTT_LOG"), *top = getenv("LAB_NTT_MAX"), *reps_env = getenv("LAB_NTT_REPS");
    unsigned first = only ? (unsigned)atoi(only) : 4;
    if (only)
        max_log = first;
    else if (top && (unsigned)atoi(top) < max_log)
        max_log = (unsigned)atoi(top);
    const int reps = reps_env && atoi(reps_env) > 1 ? atoi(reps_env) : 8;
    for (unsigned log_n = first; log_n <= max_log; log_n += (log_n < 20 ? 4 : 2)) {
        size_t n = (size_t)1 << log_n;
        ntt_plan<fr> p;
        p.log_n = log_n;
        fr *d_a, *d_b;
        CK(cudaMalloc(&p.d_tw, (n / 2 + 1) * 32));
        CK(cudaMalloc(&p.d_itw, (n / 2 + 1) * 32));
        CK(cudaMalloc(&p.d_tmp, n * 32));
        CK(cudaMalloc(&d_a, n * 32));
        CK(cudaMalloc(&d_b, n * 32));
        fr w = fr_table(LP(FR_ROOTS), log_n), iw = fr_table(LP(FR_IROOTS), log_n), one = fr_table(LP(FR_ROOTS), 0);
        fr ninv = fr_table(LP(FR_NINV), log_n);
        ntt_powers_kernel<fr><<<ntt_blocks((n / 2 + 64) / 64, 256), 256>>>(p.d_tw, n / 2 + 1, w, one);
        ntt_powers_kernel<fr><<<ntt_blocks((n / 2 + 64) / 64, 256), 256>>>(p.d_itw, n / 2 + 1, iw, one);
        CK(ntt_plan_finish(p, n / 2 + 1, 0));
        std::vector<uint64_t> a(4 * n), out(4 * n);
        for (size_t i = 0; i < n; i++)
            rand_below<4>(&a[4 * i], f.p);
        CK(cudaMemcpy(d_a, a.data(), n * 32, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(d_b, d_a, n * 32, cudaMemcpyDeviceToDevice));
        CK(ntt_run(p, d_a, 0, 0));
        CK(cudaMemcpy(out.data(), d_a, n * 32, cudaMemcpyDeviceToHost));
        size_t bad = 0;
        const char *how;
        if (log_n <= 20) {
            std::vector<uint64_t> ref = a;
            host_ntt(ref, log_n, f, (const uint64_t *)&w);
            bad = memcmp(ref.data(), out.data(), n * 32) != 0;
            how = "vs CPU NTT";
        } else {
            /* spot check 2 outputs by Horner evaluation at w^k */
            how = "2 outputs vs CPU Horner";
            for (int s = 0; s < 2; s++) {
                size_t k = rnd() & (n - 1);
                uint64_t x[4], e[4] = {k, 0, 0, 0}, acc[4] = {0, 0, 0, 0};
                f.pow(x, (const uint64_t *)&w, e);
                for (size_t i = n; i-- > 0;) {
                    f.mul(acc, acc, x);
                    f.add(acc, acc, &a[4 * i]);
                }
                bad += memcmp(acc, &out[4 * k], 32) != 0;
            }
        }
        /* inverse round trip */
        CK(ntt_run(p, d_a, 1, 0));
        fr_scale_kernel<fr><<<ntt_blocks(n, 256), 256>>>(d_a, ninv, n);
        CK(cudaMemcpy(out.data(), d_a, n * 32, cudaMemcpyDeviceToHost));
        size_t bad_rt = memcmp(out.data(), a.data(), n * 32) != 0;
        printf("check NTT 2^%u %s: %s; inverse round trip: %s\n", log_n, how, bad ? "FAIL" : "ok",
               bad_rt ? "FAIL" : "ok");
        g_fail |= bad || bad_rt;
        if (log_n >= 16) {
            timer t;
            std::vector<float> ms;
            for (int rep = 0; rep < reps; rep++) {
                t.start();
                CK(ntt_run(p, d_b, 0, 0));
                float m = t.stop();
                if (rep)
                    ms.push_back(m);
            }
            char sz[16];
            snprintf(sz, sizeof sz, "2^%u", log_n);
            double bound = 2.0 * 32 * n / 4.0e12 * 1e3;
            row("NTT forward", sz, median(ms), bound, "GB/s", 2.0 * 32 * n / median(ms) / 1e6);
        }
        ntt_plan_free(p), cudaFree(d_a), cudaFree(d_b);
    }
}

#ifndef LAB_NTT_ONLY /* NTT variants build in seconds without the MSM kernels */
/* ------------------------------------------------------------------ MSM */
/* K random points on y^2 = x^3 + b (G1: the curve's b; G2: the arbitrary b = 4 + 4u, the
 * group law does not depend on b), as affine Montgomery bytes in zkey layout */
template <int E>
static void make_points(std::vector<uint64_t> &pts, size_t K, const rfield<QL> &f)
{
    rext<QL, E> F{&f};
    const int W = QL * E;
    uint64_t b[W];
    memset(b, 0, sizeof b);
    /* b in Montgomery form: G1_B * one, or 4 + 4u */
    uint64_t bb[QL];
    memcpy(bb, f.one, sizeof bb);
    int bv = E == 1 ? G1_B : 4;
    for (int i = 1; i < bv; i++)
        f.add(bb, bb, f.one);
    for (int e = 0; e < E; e++)
        memcpy(b + e * QL, bb, sizeof bb);
    pts.assign(K * 2 * W, 0);
    for (size_t k = 0; k < K;) {
        uint64_t x[W], y2[W], y[W];
        for (int e = 0; e < E; e++)
            rand_below<QL>(x + e * QL, f.p);
        F.mul(y2, x, x);
        F.mul(y2, y2, x);
        F.add(y2, y2, b);
        if (!F.sqrt(y, y2))
            continue;
        memcpy(&pts[k * 2 * W], x, sizeof x);
        memcpy(&pts[k * 2 * W + W], y, sizeof y);
        k++;
    }
}

/* median of 5 timed runs of one MSM after a warm-up */
template <class F>
static float msm_median_ms(const msm_shape &s, const msm_scratch<F> &scr, const uint8_t *d_bases, const uint32_t *d_sc)
{
    timer tm;
    std::vector<float> ms;
    void *hw;
    CK(cudaMallocHost(&hw, (size_t)s.nwin * sizeof(xyzz_t<F>)));
    for (int rep = 0; rep < 6; rep++) {
        tm.start();
        CK(msm_run<F>(s, scr, d_bases, d_sc, 0, 0, nullptr, hw));
        float m = tm.stop();
        if (rep)
            ms.push_back(m);
    }
    cudaFreeHost(hw);
    return median(ms);
}

/* one MSM's phases (msm_prof events), medians of 3 runs after a warm-up */
template <class F>
static void msm_phases(const msm_shape &s, const msm_scratch<F> &scr, const uint8_t *d_bases, const uint32_t *d_sc,
                       const char *what)
{
    msm_prof pr;
    for (int i = 0; i < 6; i++)
        CK(cudaEventCreate(&pr.ev[i]));
    std::vector<float> ph[5];
    void *hw;
    CK(cudaMallocHost(&hw, (size_t)s.nwin * sizeof(xyzz_t<F>)));
    for (int rep = 0; rep < 4; rep++) {
        CK(msm_run<F>(s, scr, d_bases, d_sc, 0, 0, &pr, hw));
        CK(cudaDeviceSynchronize());
        for (int i = 0; i < 5; i++) {
            float m = 0;
            CK(cudaEventElapsedTime(&m, pr.ev[i], pr.ev[i + 1]));
            if (rep)
                ph[i].push_back(m);
        }
    }
    cudaFreeHost(hw);
    printf("phases %sc=%u windows=%u groups=%u: digits+sort %.3f ms, level0 %.3f ms, levels %.3f ms (%u), "
           "reduce %.3f ms, windows to host %.3f ms\n",
           what, s.c, s.nwin, s.groups, median(ph[0]), median(ph[1]), median(ph[2]), pr.levels, median(ph[3]),
           median(ph[4]));
    for (int i = 0; i < 6; i++)
        cudaEventDestroy(pr.ev[i]);
}

template <class F, int E>
static void msm_case(const char *label, size_t n, const std::vector<uint64_t> &pts, size_t K,
                     std::vector<uint64_t> &sc, const rfield<4> &frr, const rfield<QL> &fqr, bool timeit,
                     unsigned c_force = 0, bool phases = false, unsigned chunk_force = 0, int tab = 0)
{
    const int W = QL * E;
    rcurve<QL, E> C{{&fqr}};
    /* a witness's 0/1 mix takes the backend's shape for the witness MSMs */
    bool mix = !strncmp(label, "0/1", 3);
    msm_shape s = msm_shape_of(n, FR_BITS, c_force, mix && !tab, tab, E == 2);
    if (chunk_force)
        msm_shape_set_chunk(s, chunk_force);
    if (tab && g_aff_set)
        msm_shape_set_affine(s, g_aff_rounds, g_aff_chunk, 0, g_aff_chunk != 0);
    size_t bytes = msm_scratch_layout<F>(s, nullptr, nullptr);
    uint8_t *d_scr, *d_bases;
    uint32_t *d_sc;
    CK(cudaMalloc(&d_scr, bytes));
    CK(cudaMalloc(&d_bases, n * 2 * W * 8));
    CK(cudaMalloc(&d_sc, n * 32));
    for (size_t off = 0; off < n; off += K) {
        size_t cnt = std::min(K, n - off);
        CK(cudaMemcpy(d_bases + off * 2 * W * 8, pts.data(), cnt * 2 * W * 8, cudaMemcpyHostToDevice));
    }
    CK(cudaMemcpy(d_sc, sc.data(), n * 32, cudaMemcpyHostToDevice));
    uint8_t *d_tab = nullptr;
    if (tab) { /* the table of shifted bases, built in the MSM scratch; the MSMs read it */
        timer tb;
        CK(cudaMalloc(&d_tab, msm_table_bytes<F>(s)));
        tb.start();
        CK(msm_table_build<F>(d_tab, d_bases, s, d_scr, bytes, 0));
        float ms = tb.stop();
        printf("table of %u copies of %zu points built in %.1f ms (%.2f GB)\n", s.nwin, n, ms,
               msm_table_bytes<F>(s) / 1e9);
        cudaFree(d_bases);
        d_bases = d_tab;
    }
    msm_scratch<F> scr;
    msm_scratch_layout<F>(s, d_scr, &scr);
    CK(cudaMemset(scr.result, 0x5a, 3 * sizeof(F)));
    CK(msm_run<F>(s, scr, d_bases, d_sc, 0));
    CK(cudaDeviceSynchronize());
    std::vector<uint64_t> res(3 * W);
    CK(cudaMemcpy(res.data(), scr.result, 3 * W * 8, cudaMemcpyDeviceToHost));
    /* reference: base i is pts[i mod K]; sum the scalars per point exactly (the test
       points need not have order r, so no reduction mod r) */
    std::vector<uint64_t> agg(K * 5, 0);
    for (size_t i = 0; i < n; i++)
        ref_add_wide(&agg[(i % K) * 5], &sc[i * 4]);
    rpoint<QL, E> acc, t, q;
    C.set_inf(acc);
    for (size_t k = 0; k < K && k < n; k++) {
        C.from_affine(q, &pts[k * 2 * W], &pts[k * 2 * W + W]);
        C.mul(t, q, &agg[k * 5], 5);
        C.add(acc, acc, t);
    }
    rpoint<QL, E> g;
    memcpy(g.x, &res[0], W * 8);
    memcpy(g.y, &res[W], W * 8);
    memcpy(g.z, &res[2 * W], W * 8);
    uint64_t ax[W], ay[W], bx[W], by[W];
    C.to_affine(ax, ay, acc);
    C.to_affine(bx, by, g);
    bool ok = !memcmp(ax, bx, sizeof ax) && !memcmp(ay, by, sizeof ay);
    printf("check MSM %s n=%zu %s (c=%u, %u windows%s, chunk %u, affine rounds %u%s): %s\n", E == 1 ? "G1" : "G2",
           n, label, s.c, s.nwin, tab ? " over a table" : "", s.chunk0, s.aff, s.aff_kernel ? "+" : "", ok ? "ok" : "FAIL");
    g_fail |= !ok;
    if (timeit) {
        float med = msm_median_ms<F>(s, scr, d_bases, d_sc);
        char sz[16];
        unsigned lg = 0;
        while (((size_t)1 << lg) < n)
            lg++;
        snprintf(sz, sizeof sz, "2^%u", lg);
        int sms = 132;
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
        int N32 = 2 * QL;
        /* the level-0 additions: none for a zero scalar, one for a scalar below 2^(c-1) (one
           nonzero digit), every window's for the rest (random ones: w.h.p. no zero digit) */
        double adds = 0;
        for (size_t i = 0; i < n; i++) {
            const uint64_t *k = &sc[i * 4];
            bool zero = !(k[0] | k[1] | k[2] | k[3]), small = !(k[1] | k[2] | k[3]) && k[0] < (1ull << (s.c - 1));
            adds += zero ? 0 : small ? 1 : s.nwin;
        }
        double bound = adds * 10 * (E == 2 ? 3 : 1) * 4.0 * N32 * N32 / (sms * 64.0 * 1.98e9) * 1e3;
        row(E == 1 ? (tab ? "MSM G1 table" : mix ? "MSM G1 0/1 mix" : "MSM G1")
                   : (tab ? "MSM G2 table" : mix ? "MSM G2 0/1 mix" : "MSM G2"),
            sz, med, bound, "Mpts/s", n / med / 1e3);
    }
    if (phases) {
        char what[96];
        snprintf(what, sizeof what, "MSM %s n=%zu %s%s chunk=%u aff=%u%s ", E == 1 ? "G1" : "G2", n, label,
                 tab ? " table" : "", s.chunk0, s.aff, s.aff_kernel ? "+" : "");
        msm_phases<F>(s, scr, d_bases, d_sc, what);
    }
    cudaFree(d_scr), cudaFree(d_bases), cudaFree(d_sc);
}

/* a witness's scalars (as the sparse dev-circuit's and a hash circuit's): half zeros, 40 % ones,
   10 % full-field values */
static void witness_mix(std::vector<uint64_t> &sc, size_t n, const rfield<4> &frr)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rnd() % 10;
        memset(&sc[i * 4], 0, 32);
        if (r < 4)
            sc[i * 4] = 1;
        else if (r == 9)
            rand_below<4>(&sc[i * 4], frr.p);
    }
}

template <class F, int E>
static void msm_test(const rfield<4> &frr, const rfield<QL> &fqr, bool big)
{
    const size_t K = 256;
    std::vector<uint64_t> pts;
    make_points<E>(pts, K, fqr);
    /* two infinities and a repeated point */
    memset(&pts[5 * 2 * QL * E], 0, 2 * QL * E * 8);
    memset(&pts[77 * 2 * QL * E], 0, 2 * QL * E * 8);
    memcpy(&pts[9 * 2 * QL * E], &pts[8 * 2 * QL * E], 2 * QL * E * 8);
    size_t sizes[] = {1, 1000, 4096, 40000};
    for (size_t n : sizes) {
        std::vector<uint64_t> sc(n * 4);
        for (size_t i = 0; i < n; i++)
            rand_below<4>(&sc[i * 4], frr.p);
        msm_case<F, E>("random scalars", n, pts, K, sc, frr, fqr, false);
        msm_case<F, E>("random scalars", n, pts, K, sc, frr, fqr, false, 0, false, 0, 1);
    }
    size_t n = 40000;
    std::vector<uint64_t> sc(n * 4, 0);
    for (size_t i = 0; i < n; i++)
        sc[i * 4] = 1;
    msm_case<F, E>("all scalars 1", n, pts, K, sc, frr, fqr, false);
    msm_case<F, E>("all scalars 1", n, pts, K, sc, frr, fqr, false, 0, false, 0, 1);
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rnd() % 5;
        memset(&sc[i * 4], 0, 32);
        if (r == 1)
            sc[i * 4] = 1;
        else if (r == 2)
            sc[i * 4] = 2;
        else if (r == 3) {
            memcpy(&sc[i * 4], frr.p, 32);
            sc[i * 4] -= 1;
        } else if (r == 4)
            rand_below<4>(&sc[i * 4], frr.p);
    }
    msm_case<F, E>("mix of 0,1,2,r-1,random", n, pts, K, sc, frr, fqr, false);
    msm_case<F, E>("mix of 0,1,2,r-1,random", n, pts, K, sc, frr, fqr, false, 0, false, 0, 1);
    msm_case<F, E>("mix of 0,1,2,r-1,random", n, pts, K, sc, frr, fqr, false, 6, false, 0, 1);
    for (size_t i = 0; i < n; i++)
        memset(&sc[i * 4], 0, 32);
    msm_case<F, E>("all scalars 0", n, pts, K, sc, frr, fqr, false);
    msm_case<F, E>("all scalars 0", n, pts, K, sc, frr, fqr, false, 0, false, 0, 1);
    if (big) {
        for (unsigned lg = 20; lg <= 24; lg += 2) {
            n = (size_t)1 << lg;
            sc.assign(n * 4, 0);
            for (size_t i = 0; i < n; i++)
                rand_below<4>(&sc[i * 4], frr.p);
            msm_case<F, E>("random scalars", n, pts, K, sc, frr, fqr, true);
            msm_case<F, E>("random scalars", n, pts, K, sc, frr, fqr, true, 0, false, 0, 1);
            witness_mix(sc, n, frr); /* the witness MSMs take no table */
            msm_case<F, E>("0/1 mix (50 % 0, 40 % 1, 10 % random)", n, pts, K, sc, frr, fqr, true);
        }
    }
}

/* phase timings: random and 0/1-heavy scalars, several window sizes */
template <class F, int E>
static void msm_prof_run(const rfield<4> &frr, const rfield<QL> &fqr, unsigned lg_max)
{
    const size_t K = 256;
    std::vector<uint64_t> pts;
    make_points<E>(pts, K, fqr);
    for (unsigned lg = 20; lg <= lg_max; lg += 2) {
        size_t n = (size_t)1 << lg;
        std::vector<uint64_t> sc(n * 4, 0);
        for (size_t i = 0; i < n; i++)
            rand_below<4>(&sc[i * 4], frr.p);
        unsigned c0 = msm_window_bits(n);
        for (unsigned c = c0; c <= c0 + 4 && c <= 22; c += 2)
            msm_case<F, E>("random", n, pts, K, sc, frr, fqr, true, c, true);
        witness_mix(sc, n, frr);
        msm_case<F, E>("0/1-heavy", n, pts, K, sc, frr, fqr, true, 0, true);
    }
}

/* window bits and level-0 chunk: checked, timed and split by phase at 2^lg random scalars */
template <class F, int E>
static void msm_sweep(const rfield<4> &frr, const rfield<QL> &fqr, unsigned lg, std::vector<unsigned> cs,
                      std::vector<unsigned> chunks, int tab = 0)
{
    const size_t K = 256, n = (size_t)1 << lg;
    std::vector<uint64_t> pts, sc(n * 4);
    make_points<E>(pts, K, fqr);
    for (size_t i = 0; i < n; i++)
        rand_below<4>(&sc[i * 4], frr.p);
    for (unsigned c : cs)
        for (unsigned ch : chunks)
            msm_case<F, E>("random", n, pts, K, sc, frr, fqr, true, c, true, ch, tab);
}

/* Timing only: n distinct bases with random coordinates below p (off the curve: the addition
 * formulas cost the same on any coordinates, and the result is not checked), so the level-0
 * gathers miss the caches as a resident proving key's do; the checked cases above reuse
 * K = 256 points, which stay in L2. */
__global__ void lab_fill_kernel(uint32_t *o, size_t words, uint32_t seed)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= words)
        return;
    uint32_t x = (uint32_t)i * 0x9e3779b9u ^ seed;
    x ^= x >> 16, x *= 0x7feb352du, x ^= x >> 15, x *= 0x846ca68bu, x ^= x >> 16;
    o[i] = x;
}

template <class F, int E>
static void msm_distinct(const rfield<4> &frr, const rfield<QL> &fqr, unsigned lg_max)
{
    const int W = QL * E;
    for (unsigned lg = 12; lg <= lg_max; lg += 2) {
        size_t n = (size_t)1 << lg;
        /* the default shape, and up to 2^20 points the other sort (one call or one per window) */
        msm_shape shapes[2];
        shapes[0] = shapes[1] = msm_shape_of(n, FR_BITS, 0, 0, 0, E == 2);
        shapes[1].sort_all = !shapes[0].sort_all;
        int nshapes = lg <= 20 ? 2 : 1;
        uint8_t *d_scr, *d_bases;
        uint32_t *d_sc;
        size_t bytes = 0, words = n * 2 * W * 2;
        for (int v = 0; v < nshapes; v++)
            bytes = std::max(bytes, msm_scratch_layout<F>(shapes[v], nullptr, nullptr));
        CK(cudaMalloc(&d_scr, bytes));
        CK(cudaMalloc(&d_bases, words * 4));
        CK(cudaMalloc(&d_sc, n * 32));
        lab_fill_kernel<<<(unsigned)((words + 255) / 256), 256>>>((uint32_t *)d_bases, words, 0x1234u + lg);
        /* the top byte of every Fq coordinate one below p's: every coordinate is < p */
        int top = (int)(fqr.p[QL - 1] >> 56) - 1;
        CK(cudaMemset2D(d_bases + (QL * 8 - 1), QL * 8, top, 1, n * 2 * E));
        std::vector<uint64_t> sc(n * 4);
        for (size_t i = 0; i < n; i++)
            rand_below<4>(&sc[i * 4], frr.p);
        CK(cudaMemcpy(d_sc, sc.data(), n * 32, cudaMemcpyHostToDevice));
        for (int v = 0; v < nshapes; v++) {
            const msm_shape &s = shapes[v];
            msm_scratch<F> scr;
            msm_scratch_layout<F>(s, d_scr, &scr);
            float med = msm_median_ms<F>(s, scr, d_bases, d_sc);
            char sz[16];
            snprintf(sz, sizeof sz, "2^%u", lg);
            row(E == 1 ? "MSM G1 distinct bases" : "MSM G2 distinct bases", sz, med, 0.0, "Mpts/s", n / med / 1e3);
            msm_phases<F>(s, scr, d_bases, d_sc, s.sort_all ? "one sort, " : "sort per window, ");
        }
        cudaFree(d_scr), cudaFree(d_bases), cudaFree(d_sc);
    }
}

template <class F, int E>
static void msm_one(const rfield<4> &frr, const rfield<QL> &fqr)
{
    const size_t K = 256, n = (size_t)1 << 22;
    std::vector<uint64_t> pts, sc(n * 4);
    make_points<E>(pts, K, fqr);
    for (size_t i = 0; i < n; i++)
        rand_below<4>(&sc[i * 4], frr.p);
    msm_case<F, E>("random", n, pts, K, sc, frr, fqr, false);
}

#endif

/* LAB_G1_ONLY / LAB_G2_ONLY: no G2 / G1 MSM (a variant of one group's MSM kernels builds in a
   fraction of the time) */
#ifdef LAB_G1_ONLY
#define LAB_G2(...) ((void)0)
#else
#define LAB_G2(...) __VA_ARGS__
#endif
#ifdef LAB_G2_ONLY
#define LAB_G1(...) ((void)0)
#else
#define LAB_G1(...) __VA_ARGS__
#endif

int main(int argc, char **argv)
{
    bool do_ff = argc < 2, do_ntt = argc < 2, do_msm = argc < 2, big = false, prof = false, one = false,
         distinct = false, sweep = false, msm24 = false, table = false, tg1 = false, tg2 = false, f52 = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "ff"))
            do_ff = true;
        else if (!strcmp(argv[i], "ntt"))
            do_ntt = true;
        else if (!strcmp(argv[i], "msm"))
            do_msm = true;
        else if (!strcmp(argv[i], "big"))
            big = true;
        else if (!strcmp(argv[i], "prof"))
            prof = true;
        else if (!strcmp(argv[i], "one"))
            one = true;
        else if (!strcmp(argv[i], "distinct"))
            distinct = true;
        else if (!strcmp(argv[i], "sweep"))
            sweep = true;
        else if (!strcmp(argv[i], "msm24"))
            msm24 = true;
        else if (!strcmp(argv[i], "table"))
            table = true;
        else if (!strcmp(argv[i], "tg1"))
            tg1 = true;
        else if (!strcmp(argv[i], "tg2"))
            tg2 = true;
        else if (!strcmp(argv[i], "f52"))
            f52 = true;
        else if (!strncmp(argv[i], "ch=", 3)) {
            g_chunks.clear();
            for (char *q = argv[i] + 3; *q;) {
                char *e;
                unsigned long v = strtoul(q, &e, 10);
                if (e == q || v == 0 || (v & (v - 1))) {
                    fprintf(stderr, "ch=A,B,...: level-0 chunks (powers of two) for tg1/tg2\n");
                    return 2;
                }
                g_chunks.push_back((unsigned)v);
                q = *e == ',' ? e + 1 : e;
            }
        } else if (!strncmp(argv[i], "aff=", 4)) {
            g_aff_set = 1;
            if (sscanf(argv[i] + 4, "%u:%u", &g_aff_rounds, &g_aff_chunk) < 1) {
                fprintf(stderr, "aff=R:C: R affine rounds, C entries a chunk\n");
                return 2;
            }
        }
    }
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("SKIP: no CUDA device\n");
        return 0;
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("device: %s, %d SMs, %.0f GiB\n", prop.name, prop.multiProcessorCount, prop.totalGlobalMem / 1073741824.0);
    rfield<4> frr;
    rfield<QL> fqr;
    load_field(frr, fqr);
    printf("| %-22s | %-9s | %-6s | %10s | %10s | %15s |\n", "operation", "curve", "size", "median ms", "bound ms",
           "rate");
    if (do_ff) {
        ff_test<fr, 4, 1>("Fr", frr);
        ff_test<fq, QL, 1>("Fq", fqr);
        ff_test<fq2, QL, 2>("Fq2", fqr);
    }
    if (f52) {
        f52_test<fr, 4, 5>("Fr", frr);
        f52_test<fq, QL, QL == 4 ? 5 : 8>("Fq", fqr);
    }
    if (do_ntt)
        ntt_test(frr, big ? 26 : 20);
#ifndef LAB_NTT_ONLY
    if (one) { /* a single large MSM of each group, for a profiler */
        LAB_G1(msm_one<fq, 1>(frr, fqr));
        LAB_G2(msm_one<fq2, 2>(frr, fqr));
    }
    if (distinct) {
        LAB_G1(msm_distinct<fq, 1>(frr, fqr, 24));
        LAB_G2(msm_distinct<fq2, 2>(frr, fqr, 22));
    }
    if (msm24) { /* the default shape at 2^24, checked, timed, phases */
        LAB_G1(msm_sweep<fq, 1>(frr, fqr, 24, {0}, {0}));
        LAB_G2(msm_sweep<fq2, 2>(frr, fqr, 24, {0}, {0}));
    }
    if (sweep) {
        LAB_G1(msm_sweep<fq, 1>(frr, fqr, 22, {16, 18}, {32, 128}));
        LAB_G1(msm_sweep<fq, 1>(frr, fqr, 24, {16, 18, 20}, {32, 128, 256}));
        LAB_G2(msm_sweep<fq2, 2>(frr, fqr, 22, {16, 18}, {32, 128}));
        LAB_G2(msm_sweep<fq2, 2>(frr, fqr, 24, {16, 18, 20}, {32, 128}));
    }
    if (table) { /* window bits over a table of shifted bases (checked, timed, phases) */
        LAB_G1(msm_sweep<fq, 1>(frr, fqr, 22, {18, 20}, {0}, 1));
        LAB_G1(msm_sweep<fq, 1>(frr, fqr, 24, {20, 22, 24}, {0}, 1));
        LAB_G2(msm_sweep<fq2, 2>(frr, fqr, 24, {22, 24}, {0}, 1));
    }
    if (tg1)
        LAB_G1(msm_sweep<fq, 1>(frr, fqr, 24, {0}, g_chunks, 1));
    if (tg2)
        LAB_G2(msm_sweep<fq2, 2>(frr, fqr, 24, {0}, g_chunks, 1));
    if (prof) {
        LAB_G1(msm_prof_run<fq, 1>(frr, fqr, 24));
        LAB_G2(msm_prof_run<fq2, 2>(frr, fqr, 22));
    }
    if (do_msm) {
        LAB_G1(msm_test<fq, 1>(frr, fqr, big));
        LAB_G2(msm_test<fq2, 2>(frr, fqr, big));
    }
#else
    (void)one, (void)distinct, (void)prof, (void)do_msm, (void)sweep, (void)msm24, (void)table, (void)tg1, (void)tg2;
#endif
    printf("%s\n", g_fail ? "LAB FAILED" : "LAB OK");
    return g_fail;
}
