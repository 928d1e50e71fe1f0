/* shoup_probe.cu - the twiddle product forms in isolation: chains of mul_eo, mul_shoup and its
 * parts over BN254 Fr, timed (products per second); with cuobjdump, their SASS side by side.
 *   make -C dev/cuda shoup_probe && dev/cuda/shoup_probe */
#include <cuda_runtime.h>
#include <stdio.h>
#include "gpu/ff.cuh"
#include "gpu/params_bn254.cuh"
FP_PARAMS(fr_params, 8, BN254_FR_P, BN254_FR_M0, BN254_FR_RR, BN254_FR_ONE, BN254_FR_NPINV);
typedef fp_t<fr_params> fr;

template <int K>
__global__ __launch_bounds__(256) void chain(fr *a, const fr *w, int iters)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    fr x = a[2 * i], y = a[2 * i + 1], c = w[0], cq = w[1];
    for (int k = 0; k < iters; k++) {
        if (K == 0) {
            x = fr::mul_eo(x, c);
            y = fr::mul_eo(y, c);
        } else if (K == 1) {
            x = fr::mul_shoup(x, c, cq);
            y = fr::mul_shoup(y, c, cq);
        } else if (K == 2) {
            x = fr::template mul_shoup<0xffffffffu>(x, c, cq);
            y = fr::template mul_shoup<0xffffffffu>(y, c, cq);
        } else if (K == 3) {
            fr t;
            fr::mul_low(t.v, x.v, c.v);
            x = t;
            fr::mul_low(t.v, y.v, c.v);
            y = t;
        } else {
            fr t;
            fr::mul_high_part(t.v, x.v, cq.v);
            x = t;
            fr::mul_high_part(t.v, y.v, cq.v);
            y = t;
        }
    }
    a[2 * i] = x, a[2 * i + 1] = y;
}

int main()
{
    int sms = 132;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    size_t threads = (size_t)sms * 2048;
    fr *d_a, *d_w;
    cudaMalloc(&d_a, 2 * threads * sizeof(fr));
    cudaMalloc(&d_w, 2 * sizeof(fr));
    cudaMemset(d_a, 0x11, 2 * threads * sizeof(fr));
    cudaMemset(d_w, 0x07, 2 * sizeof(fr));
    const char *names[] = {"mul_eo", "mul_shoup", "mul_shoup (no exact path)", "mul_low", "mul_high_part"};
    void (*ks[])(fr *, const fr *, int) = {chain<0>, chain<1>, chain<2>, chain<3>, chain<4>};
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0), cudaEventCreate(&e1);
    for (int k = 0; k < 5; k++) {
        float best = 1e9;
        for (int rep = 0; rep < 4; rep++) {
            cudaEventRecord(e0);
            ks[k]<<<(unsigned)(threads / 256), 256>>>(d_a, d_w, 128);
            cudaEventRecord(e1);
            cudaEventSynchronize(e1);
            float ms;
            cudaEventElapsedTime(&ms, e0, e1);
            best = ms < best ? ms : best;
        }
        printf("%-28s %7.1f G/s (%s)\n", names[k], 2.0 * 128 * threads / best / 1e6,
               cudaGetErrorString(cudaGetLastError()));
    }
    return 0;
}
