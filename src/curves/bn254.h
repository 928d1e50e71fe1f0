/* bn254.h - selects BN254 (alt_bn128) for this translation unit.
 *
 * A per-curve translation unit includes exactly one curve header first, then the layer
 * headers (ff, ec, ...), which compile against the names defined here (docs/DESIGN.md,
 * "One curve per translation unit"). The numeric constants live in the generated
 * bn254_consts.h (tools/gen_constants.py).
 *
 * CURVE_BN254 is defined as itself so that `#ifdef CURVE_BN254` selects curve-specific
 * code while the enum constant of the same name in curves/curve.h keeps its value;
 * use CURVE_IS_BN254 in `#if` expressions.
 */
#ifdef CUZK_CURVES_BLS12_381_H
#error "only one curve header (bn254.h or bls12_381.h) may be included per translation unit"
#endif
#ifndef CUZK_CURVES_BN254_H
#define CUZK_CURVES_BN254_H

#include "curves/curve.h"
#include "curves/bn254_consts.h"

#define CURVE_BN254 CURVE_BN254
#define CURVE_IS_BN254 1
#define CURVE_IS_BLS12_381 0
#define CURVE_ID ((cuzk_curve_id)0) /* == CURVE_BN254 in curve.h */
#define CURVE_NAME "bn254"
#define CURVE_SYM(x) bn254_##x

#endif
