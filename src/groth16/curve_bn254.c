/* curve_bn254.c - the BN254 instantiation of the per-curve code (curve_impl.h). */
#include "curves/bn254.h"
#include "groth16/curve_impl.h"
