/* gpu_bls12_381.cu - the CUDA backend and the fixed-base kernels instantiated for BLS12-381. */
#include "gpu/params_bls12_381.cuh"
#define GPU_P(x) BLS12_381_##x
#define GPU_SYM(x) x##_bls12_381
#define GPU_C(x) bls12_381_##x /* the C side's per-curve exports (curve_exports.h) */
#define GPU_CURVE_ID CURVE_BLS12_381
#define MSM_LAZY_BASE 1 /* level 0 reads base coordinates as needed (H200: G2 2^22 359 -> 315 ms) */
#define EC_MUL_CALL 1 /* the mixed addition's products out of line, by mul_eo (H200: 2^24 G1 over a table 185.7 -> 122.3 ms) */
#define EC_MUL_CALL2 2 /* G2: each Fq product of the Fq2 arithmetic out of line (2^24 over a table 612.5 -> 407.1 ms) */
#include "gpu/backend_impl.cuh"
#include "gpu/fixed_base.cuh"
