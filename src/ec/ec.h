/* ec.h - G1 (over Fq) and G2 (over Fq2, the sextic twist) of the selected curve.
 * Include a curve header first. BN254: G2 lives on the D-type twist y^2 = x^3 + 3/xi, G1
 * has cofactor 1. BLS12-381: G2 on the M-type twist y^2 = x^3 + 4 xi; both groups have a
 * cofactor and need a real subgroup check ([r]P == O). Names follow docs/DESIGN.md; beyond
 * the contract: G_aff_set_inf, G_xyzz_is_inf, G_xyzz_from_aff, G_xyzz_dbl, G_proj_t and
 * G_proj_add (complete addition used by G_jac_mul_ct), and in ec/pairing.h
 * pairing_final_exp_easy / _hard / _canonical and pairing_mul_line(_dense).
 */
#ifndef CUZK_EC_EC_H
#define CUZK_EC_EC_H

#include "ff/ff.h"

#define EC g1
#define BF fq
#define B_T fq_t
#define EC_B {G1_B_L}
#define EC_B3 {G1_B3_L}
#define EC_GEN G1_GEN_L
#define EC_COFACTOR_ONE G1_COFACTOR_IS_ONE
#include "ec/ec_template.h"

#define EC g2
#define BF fq2
#define B_T fq2_t
#define EC_B G2_B_L
#define EC_B3 G2_B3_L
#define EC_GEN G2_GEN_L
#define EC_COFACTOR_ONE 0
#include "ec/ec_template.h"

#include "ec/pairing.h"

#endif
