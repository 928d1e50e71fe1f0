/* curve_exports.h - the symbols each per-curve translation unit exports (curve_impl.h),
 * declared for the curve-agnostic dispatch in prover.c. */
#ifndef CUZK_GROTH16_CURVE_EXPORTS_H
#define CUZK_GROTH16_CURVE_EXPORTS_H

#include "groth16/backend.h"
#include "groth16/proof.h"
#include "groth16/prover.h"

/* msm_windows_g1/g2: out (Jacobian) = sum_w 2^(c w) S_w for nwin <= MSM_WINDOWS_MAX XYZZ window
 * sums (window 0 first), the last step of the GPU backend's MSMs */
#define MSM_WINDOWS_MAX 64 /* windows of at least 4 bits over scalars of at most 256 bits */

#define CURVE_EXPORTS(p)                                                                           \
    cuzk_backend *p##cpu_backend_create(int threads, char *err);                                   \
    cuzk_err p##assemble(cuzk_proof *out, const zkey_file *z, const groth16_ws *ws,                \
                         const groth16_rs *rs, char *err);                                         \
    cuzk_err p##verify(const cuzk_vk *vk, const cuzk_public *pub, const cuzk_proof *proof,         \
                       char *err);                                                                 \
    cuzk_err p##vk_from_zkey(cuzk_vk *out, uint8_t *alphabeta, const zkey_file *z, char *err);     \
    size_t p##verify_batch_scratch_size(size_t n, uint32_t n_public);                              \
    cuzk_err p##verify_batch(const cuzk_vk *vk, const cuzk_public *const *pub,                     \
                             const cuzk_proof *const *proof, size_t n, const uint8_t *weights,     \
                             int *bad, void *scratch, char *err);                                  \
    void p##msm_windows_g1(uint64_t *out, const void *win, unsigned nwin, unsigned c);             \
    void p##msm_windows_g2(uint64_t *out, const void *win, unsigned nwin, unsigned c);

CURVE_EXPORTS(bn254_)
CURVE_EXPORTS(bls12_381_)

#endif
