/* curve.c - the table of supported curves (constants from tools/gen_curve_info.py). */
#include "curves/curve.h"

#include <ctype.h>
#include <string.h>

#include "curves/curve_info_gen.h"

static const cuzk_curve_info curves[CURVE_COUNT] = {
    {CURVE_BN254, "bn128", "BN254", 32, 32, 64, 128, BN254_R_LE, BN254_Q_LE},
    {CURVE_BLS12_381, "bls12381", "BLS12-381", 32, 48, 96, 192, BLS12_381_R_LE, BLS12_381_Q_LE},
};

const cuzk_curve_info *curve_info(cuzk_curve_id id)
{
    return (unsigned)id < CURVE_COUNT ? &curves[id] : NULL;
}

const cuzk_curve_info *curve_by_r(const uint8_t *p_le, size_t n8)
{
    for (int i = 0; i < CURVE_COUNT; i++)
        if (n8 == curves[i].fr_bytes && memcmp(p_le, curves[i].r_le, n8) == 0)
            return &curves[i];
    return NULL;
}

const cuzk_curve_info *curve_by_q(const uint8_t *p_le, size_t n8)
{
    for (int i = 0; i < CURVE_COUNT; i++)
        if (n8 == curves[i].fq_bytes && memcmp(p_le, curves[i].q_le, n8) == 0)
            return &curves[i];
    return NULL;
}

const cuzk_curve_info *curve_by_name(const char *name)
{
    char norm[32];
    size_t n = 0;
    for (; *name && n + 1 < sizeof norm; name++)
        if (isalnum((unsigned char)*name))
            norm[n++] = (char)tolower((unsigned char)*name);
    norm[n] = 0;
    if (!strcmp(norm, "bn128") || !strcmp(norm, "bn254") || !strcmp(norm, "altbn128"))
        return &curves[CURVE_BN254];
    if (!strcmp(norm, "bls12381"))
        return &curves[CURVE_BLS12_381];
    return NULL;
}
