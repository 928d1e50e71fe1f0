/* curve.h - curve-agnostic description of the two supported curves.
 *
 * Everything above the per-curve arithmetic (file formats, JSON, engine, CLI) names a
 * curve by cuzk_curve_id and reads its sizes and moduli from cuzk_curve_info. The
 * arithmetic itself is compiled once per curve (see docs/DESIGN.md).
 */
#ifndef CUZK_CURVES_CURVE_H
#define CUZK_CURVES_CURVE_H

#include <stddef.h>
#include <stdint.h>

typedef enum cuzk_curve_id { CURVE_BN254 = 0, CURVE_BLS12_381 = 1, CURVE_COUNT = 2 } cuzk_curve_id;

typedef struct cuzk_curve_info {
    cuzk_curve_id id;
    const char *name;    /* snarkjs name written to JSON: "bn128" / "bls12381" */
    const char *label;   /* human name: "BN254" / "BLS12-381" */
    size_t fr_bytes;     /* n8r: 32 for both */
    size_t fq_bytes;     /* n8q: 32 (BN254) / 48 (BLS12-381) */
    size_t g1_bytes;     /* affine G1 = 2*fq_bytes */
    size_t g2_bytes;     /* affine G2 = 4*fq_bytes */
    uint8_t r_le[32];    /* scalar field modulus, little-endian */
    uint8_t q_le[48];    /* base field modulus, little-endian (first fq_bytes used) */
} cuzk_curve_info;

const cuzk_curve_info *curve_info(cuzk_curve_id id);

/* Finds the curve whose scalar field (r, as in .wtns/.r1cs headers) is p (n8 bytes LE).
 * Returns NULL when p is neither curve's r. */
const cuzk_curve_info *curve_by_r(const uint8_t *p_le, size_t n8);
/* Same for the base field q (as in .zkey headers). */
const cuzk_curve_info *curve_by_q(const uint8_t *p_le, size_t n8);
/* Accepts the spellings snarkjs accepts: bn128/bn254/altbn128, bls12381/BLS12-381 (case
 * and punctuation insensitive). Returns NULL for anything else. */
const cuzk_curve_info *curve_by_name(const char *name);

#endif
