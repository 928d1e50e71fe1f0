/* ff.h - the fields of the selected curve: Fr, Fq (Montgomery, 64-bit limbs) and the tower
 * Fq2, Fq6, Fq12. Include a curve header (curves/bn254.h or curves/bls12_381.h) first.
 *
 * Names follow docs/DESIGN.md ("Names every per-curve layer relies on"). Everything is
 * static inline, so a translation unit pays only for what it uses. Beyond the contract:
 * F_is_one, F_half, F_std_is_canonical, F_mul_c / F_mul_ref / F_sqr_ref (portable and
 * reference twins of the fast paths, for tests), fq_is_odd, fq2_sqrt, fq2_conj,
 * fq2_mul_fq, fq2_frobenius, fq2_pow, fq6_*, fq12_pow, fq12_mul_by_034 / _014 (sparse),
 * fq12_cyclotomic_sqr, fq12_cyclotomic_exp_param.
 * Speed: on x86-64 with BMI2+ADX (-march of any CPU since ~2014) Fr/Fq multiplication is
 * MULX/ADCX/ADOX assembly (ff/fp_x86_4.h, ff/fp_x86_6.h); elsewhere, or with
 * -DCUZK_FF_NO_ASM, the portable C of ff/fp_template.h.
 */
#ifndef CUZK_FF_FF_H
#define CUZK_FF_FF_H

#ifndef CURVE_SYM
#error "include curves/bn254.h or curves/bls12_381.h before ff/ff.h"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ff/fp_words.h"

/* Elements: little-endian 64-bit limbs, Montgomery form unless a name says std. */
typedef struct fr_t { uint64_t l[FR_LIMBS]; } fr_t;
typedef struct fq_t { uint64_t l[FQ_LIMBS]; } fq_t;

__attribute__((unused)) static const uint64_t FR_MODULUS[FR_LIMBS] = FR_MODULUS_L;
__attribute__((unused)) static const uint64_t FQ_MODULUS[FQ_LIMBS] = FQ_MODULUS_L;
__attribute__((unused)) static const fr_t FR_ONE = {FR_ONE_L};
__attribute__((unused)) static const fq_t FQ_ONE = {FQ_ONE_L};


#define FP fr
#define FP_T fr_t
#define FP_N FR_LIMBS
#define FP_MOD FR_MODULUS
#define FP_ONE FR_ONE
#define FP_R2 FR_R2_L
#define FP_INV FR_INV
#define FP_PM2 FR_PM2_L
#include "ff/fp_template.h"

#define FP fq
#define FP_T fq_t
#define FP_N FQ_LIMBS
#define FP_MOD FQ_MODULUS
#define FP_ONE FQ_ONE
#define FP_R2 FQ_R2_L
#define FP_INV FQ_INV
#define FP_PM2 FQ_PM2_L
#include "ff/fp_template.h"

/* o = primitive 2^log_n-th root of unity (Montgomery), from the generator-5 root of order
 * 2^FR_TWO_ADICITY by repeated squaring. log_n > FR_TWO_ADICITY has none: o = 0. */
static inline void fr_root_of_unity(fr_t *o, unsigned log_n)
{
    static const fr_t root = {FR_ROOT_L};
    if (log_n > FR_TWO_ADICITY) {
        fr_set_zero(o);
        return;
    }
    fr_t t = root;
    for (unsigned i = log_n; i < FR_TWO_ADICITY; i++)
        fr_sqr(&t, &t);
    *o = t;
}

/* o = sqrt(a) = a^((q+1)/4) (q = 3 mod 4) and true when a is a square; otherwise false and o
 * is unspecified. Which of the two roots is returned is not specified. */
static inline bool fq_sqrt(fq_t *o, const fq_t *a)
{
    static const uint64_t e[FQ_LIMBS] = FQ_SQRT_EXP_L;
    fq_t r, c;
    fq_pow(&r, a, e, FQ_LIMBS);
    fq_sqr(&c, &r);
    bool ok = fq_eq(&c, a);
    *o = r;
    return ok;
}

/* true when the std-form value of a is odd (used for sign conventions) */
static inline bool fq_is_odd(const fq_t *a)
{
    fq_t t;
    fq_to_std(&t, a);
    return t.l[0] & 1;
}

#include "ff/fq2.h"
#include "ff/fq12.h"

#endif
