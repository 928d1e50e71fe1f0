/* prover.h - Groth16 proving and verification, curve-agnostic entry points.
 *
 * The procedure is snarkjs's (docs/FORMATS.md section 4), in named steps so the
 * daemon can run them in different pipeline stages:
 *   groth16_step_abc      a/b/c evaluations from section 4 and the witness   (backend)
 *   groth16_step_h        h by iNTT, odd-coset shift, NTT, a*b-c            (backend)
 *   groth16_step_msm      the five MSMs                                      (backend)
 *   groth16_step_assemble piA, piB, piC from the MSMs and blinding r, s     (host)
 */
#ifndef CUZK_GROTH16_PROVER_H
#define CUZK_GROTH16_PROVER_H

#include <stddef.h>
#include <stdint.h>

#include "groth16/backend.h"
#include "groth16/formats.h"
#include "groth16/proof.h"
#include "util/err.h"

/* host bytes one partition needs for its groth16_ws buffers (a, b, c) */
size_t groth16_ws_size(const zkey_file *z);
/* carves a, b, c out of mem (groth16_ws_size bytes, 64-byte aligned) */
void groth16_ws_init(groth16_ws *ws, const zkey_file *z, void *mem, const uint8_t *wtns);

/* Blinding: 32-byte std-form scalars. NULL rs means fresh from the OS CSPRNG. */
typedef struct groth16_rs { uint8_t r[32], s[32]; } groth16_rs;
/* Parses CUZK_TEST_RS="r_decimal,s_decimal" (documented for reproducible tests).
 * Returns 1 and fills rs if the variable is set and valid, 0 if unset, -1 if malformed. */
int groth16_rs_from_env(groth16_rs *rs, const cuzk_curve_info *c, char *err);
cuzk_err groth16_rs_random(groth16_rs *rs, const cuzk_curve_info *c, char *err);

cuzk_err groth16_step_abc(cuzk_backend *be, void *ks, groth16_ws *ws, char *err);
cuzk_err groth16_step_h(cuzk_backend *be, void *ks, groth16_ws *ws, char *err);
cuzk_err groth16_step_msm(cuzk_backend *be, void *ks, groth16_ws *ws, char *err);
cuzk_err groth16_step_assemble(cuzk_proof *out, const zkey_file *z, const groth16_ws *ws,
                               const groth16_rs *rs, char *err);

/* All steps; allocates and frees its own workspace. */
cuzk_err groth16_prove(cuzk_proof *out, cuzk_backend *be, void *ks, const zkey_file *z,
                       const wtns_file *w, const groth16_rs *rs, char *err);

/* Seconds spent in each part of groth16_prove_timed. */
typedef struct groth16_times {
    double setup, abc, h, msm, assemble; /* setup: workspace allocation and witness copy */
    int passes, first_pass, overlapped;  /* groth16_prove_batch: MSM calls (a backend's
                                            msm_batch splits one into its passes), partitions of
                                            the first, whether the stages overlapped */
    int early;                           /* groth16_prove: the witness sets' MSMs ran beside a/b/c
                                            (msm_early); h then includes waiting for them */
} groth16_times;
/* groth16_prove with its times, in a caller's workspace when mem is not NULL: at least
 * groth16_prove_mem_size(z) bytes, 64-byte aligned, pinned = 1 if it is page-locked
 * (gpu_host_alloc). Reusing one workspace is how a resident key is proved repeatedly. */
size_t groth16_prove_mem_size(const zkey_file *z);
cuzk_err groth16_prove_timed(cuzk_proof *out, cuzk_backend *be, void *ks, const zkey_file *z,
                             const wtns_file *w, const groth16_rs *rs, uint8_t *mem, int pinned,
                             groth16_times *t, char *err);

/* n proofs of one witness (out[0..n-1]) with the five MSMs of all n in as few passes over the
 * key's bases as the backend allows (backend msm_batch: a streamed key's chunks cross to the
 * device once for several partitions); each proof gets rs, or fresh random r, s when rs is
 * NULL. mem: n x groth16_prove_mem_size(z) bytes, 64-byte aligned. t: the steps' times summed
 * over the n (msm: the whole batch). On a device backend the witness copies, a/b/c and h of
 * later partitions run on a thread of their own beside the MSMs of earlier ones (OVERLAP in
 * prover.c; CUZK_BATCH_OVERLAP=0|1 turns that off, or on for any backend). */
cuzk_err groth16_prove_batch(cuzk_proof *out, cuzk_backend *be, void *ks, const zkey_file *z, const wtns_file *w,
                             const groth16_rs *rs, int n, uint8_t *mem, int pinned, groth16_times *t, char *err);

/* public signals of a witness: values[1..n_public] */
cuzk_err groth16_public_from_wtns(cuzk_public *out, const zkey_file *z, const wtns_file *w, char *err);

/* Pairing check. CUZK_OK if valid, CUZK_EVERIFY (with the reason) if not, other codes for
 * malformed points (not on curve, not in subgroup) or size mismatches. */
cuzk_err groth16_verify(const cuzk_vk *vk, const cuzk_public *pub, const cuzk_proof *proof, char *err);

/* Batch verification of n proofs of one verification key (verify_batch.c): one pairing check
 * over all n with independent random 128-bit weights from the OS CSPRNG (a multi-Miller loop
 * over n + 3 pairs, ONE final exponentiation), then, only when it fails, groth16_verify one
 * by one to find the bad proofs. Each proof's points are validated exactly as groth16_verify
 * validates them. bad: n ints, all written.
 * CUZK_OK: all n verify (n = 0 included; bad[] all 0).
 * CUZK_EVERIFY: bad[i] = 1 for exactly the proofs groth16_verify rejects; err gives their
 *   count and the first one's reason.
 * Other codes (bad[] all 0): malformed input, as groth16_verify would answer it for some proof
 * (a coordinate not below q, a public input of the wrong length, a curve mismatch; err names
 * the proof), a NULL argument or n < 0 (CUZK_EINVAL), no memory, no randomness. */
cuzk_err groth16_verify_batch(const cuzk_vk *vk, const cuzk_public *const *pub, const cuzk_proof *const *proof,
                              int n, int *bad, char *err);

/* Verification key of a zkey (for export-vk and the self-check). alphabeta (optional,
 * 12*fq_bytes std) receives e(alpha1, beta2) for vk_alphabeta_12. */
cuzk_err groth16_vk_from_zkey(cuzk_vk *out, uint8_t *alphabeta, const zkey_file *z, char *err);

#endif
