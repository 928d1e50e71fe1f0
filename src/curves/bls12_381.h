/* bls12_381.h - selects BLS12-381 for this translation unit.
 *
 * A per-curve translation unit includes exactly one curve header first, then the layer
 * headers (ff, ec, ...), which compile against the names defined here (docs/DESIGN.md,
 * "One curve per translation unit"). The numeric constants live in the generated
 * bls12_381_consts.h (tools/gen_constants.py).
 *
 * CURVE_BLS12_381 is defined as itself so that `#ifdef CURVE_BLS12_381` selects
 * curve-specific code while the enum constant of the same name in curves/curve.h keeps its
 * value; use CURVE_IS_BLS12_381 in `#if` expressions.
 */
#ifdef CUZK_CURVES_BN254_H
#error "only one curve header (bn254.h or bls12_381.h) may be included per translation unit"
#endif
#ifndef CUZK_CURVES_BLS12_381_H
#define CUZK_CURVES_BLS12_381_H

#include "curves/curve.h"
#include "curves/bls12_381_consts.h"

#define CURVE_BLS12_381 CURVE_BLS12_381
#define CURVE_IS_BN254 0
#define CURVE_IS_BLS12_381 1
#define CURVE_ID ((cuzk_curve_id)1) /* == CURVE_BLS12_381 in curve.h */
#define CURVE_NAME "bls12_381"
#define CURVE_SYM(x) bls12_381_##x

#endif
