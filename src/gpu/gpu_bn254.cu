/* gpu_bn254.cu - the CUDA backend and the fixed-base kernels instantiated for BN254. */
#include "gpu/params_bn254.cuh"
#define GPU_P(x) BN254_##x
#define GPU_SYM(x) x##_bn254
#define GPU_C(x) bn254_##x /* the C side's per-curve exports (curve_exports.h) */
#define GPU_CURVE_ID CURVE_BN254
#define MSM_ACC_MINB 6 /* G1 accumulation: at most 80 registers (H200: 2^24 G1 123 -> 89 ms) */
#define MSM_ACC_MINB2 3 /* G2 accumulation: at most 168 registers (H200: 2^24 G2 379 -> 310 ms) */
#include "gpu/backend_impl.cuh"
#include "gpu/fixed_base.cuh"
