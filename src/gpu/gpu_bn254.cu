/* gpu_bn254.cu - the CUDA backend and the fixed-base kernels instantiated for BN254. */
#include "gpu/params_bn254.cuh"
#define GPU_P(x) BN254_##x
#define GPU_SYM(x) x##_bn254
#define GPU_C(x) bn254_##x /* the C side's per-curve exports (curve_exports.h) */
#define GPU_CURVE_ID CURVE_BN254
#define EC_MUL_CALL 1 /* the mixed addition's products out of line (H200: 2^24 G1 over a table 65.1 -> 58.8 ms) */
#define MSM_ACC_MINB 4 /* G1 accumulation: at most 128 registers (with EC_MUL_CALL; 6 blocks: 60.7 ms) */
#define MSM_ACC_MINB2 3 /* G2 accumulation: at most 168 registers (H200: 2^24 G2 379 -> 310 ms; with EC_MUL_CALL,
                           whose Fq2 product is out of line, over a table 221.8 -> 191.6 ms; no cap 307.6) */
#include "gpu/backend_impl.cuh"
#include "gpu/fixed_base.cuh"
