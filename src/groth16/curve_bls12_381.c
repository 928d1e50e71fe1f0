/* curve_bls12_381.c - the BLS12-381 instantiation of the per-curve code (curve_impl.h). */
#include "curves/bls12_381.h"
#include "groth16/curve_impl.h"
