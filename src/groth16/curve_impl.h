/* curve_impl.h - everything that is compiled once per curve, in one translation unit:
 * the field and curve arithmetic, the CPU NTT and MSM, the CPU backend, the prover and
 * verifier cores (single and batch) and the development setup. Include a curve header first
 * (curve_bn254.c, curve_bls12_381.c are the two one-line instantiations). Only the
 * CURVE_SYM(...) functions declared in curve_exports.h leave the translation unit.
 */
#ifndef CUZK_GROTH16_CURVE_IMPL_H
#define CUZK_GROTH16_CURVE_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ff/ff.h"
#include "ec/ec.h"
#include "ec/pairing.h"
#include "ntt/ntt.h"
#include "msm/msm.h"
#include "util/pool.h"

#include "groth16/backend.h"
#include "groth16/curve_exports.h"
#include "groth16/formats.h"
#include "groth16/proof.h"
#include "groth16/prover.h"

#include "groth16/cpu_backend.h"
#include "groth16/prover_core.h"
#include "groth16/verify_batch_core.h"
#include "groth16/devsetup.h"

#endif
