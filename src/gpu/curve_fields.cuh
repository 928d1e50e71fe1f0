/* curve_fields.cuh - the field types of one curve (Fr, Fq, Fq2 over ff.cuh), shared by the
 * backend and the fixed-base kernels of the translation unit that includes it.
 *
 * Included after the curve's params_<curve>.cuh with GPU_P and GPU_SYM defined (see
 * backend_impl.cuh); the types live in namespace GPU_SYM(ff) so the two curves' units
 * never clash.
 */
#pragma once
#include "gpu/ff.cuh"

namespace GPU_SYM(ff) {
FP_PARAMS(fr_params, 8, GPU_P(FR_P), GPU_P(FR_M0), GPU_P(FR_RR), GPU_P(FR_ONE), GPU_P(FR_NPINV));
FP_PARAMS(fq_params, GPU_P(FQ_LIMBS32), GPU_P(FQ_P), GPU_P(FQ_M0), GPU_P(FQ_RR), GPU_P(FQ_ONE), GPU_P(FQ_NPINV));
typedef fp_t<fr_params> fr;
typedef fp_t<fq_params> fq;
typedef fp2_t<fq> fq2;
} // namespace GPU_SYM(ff)
