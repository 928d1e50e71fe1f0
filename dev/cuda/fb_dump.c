/* fb_dump.c - the CPU oracle of fb_emu.cpp: writes, for one curve and one window width, the
 * fixed-base tables of the G1 and G2 generators (devsetup.h dev_fb_*_init_w), scalars that
 * stress the signed-digit recoding (0, 1, 2, r-1, r-2, digit values half, half+1, half-1,
 * 2^w-1 in every window, all digits maximal) plus random ones, and the CPU path's products
 * of them (dev_fb_*_run_cpu, the code dev-circuit uses without a GPU).
 *   usage: fb_dump_<curve> W N_RANDOM OUT_FILE
 * File: u64 w, nwin, n; G1 table; G2 table; n scalars (Montgomery, 32 bytes); n G1 points;
 * n G2 points (affine, zkey layout). Build: make -C dev/cuda fb-emu.
 */
#ifdef FB_BLS12_381
#include "curves/bls12_381.h"
#else
#include "curves/bn254.h"
#endif
#include "ff/ff.h"
#include "ec/ec.h"
#define DEV_SETUP_NO_EXPORT
#include "groth16/devsetup.h"

/* std scalars that stress the recoding for width w, in Montgomery form; returns the count */
static size_t edge_scalars(fr_t *out, unsigned w)
{
    static uint64_t k[400][4];
    size_t n = 0;
    memset(k, 0, sizeof k);
    n++; /* 0 */
    k[n++][0] = 1;
    k[n++][0] = 2;
    for (int s = 1; s <= 2; s++) {
        memcpy(k[n], FR_MODULUS, 32);
        k[n++][0] -= (uint64_t)s;
    }
    unsigned half = 1u << (w - 1);
    for (unsigned i = 0; i * w + w < 250 && n + 5 < 400; i++) {
        const uint32_t vals[] = {half, half + 1, half - 1, (1u << w) - 1};
        for (int v = 0; v < 4; v++) {
            unsigned bit = i * w;
            k[n][bit / 64] |= (uint64_t)vals[v] << (bit % 64);
            if (bit % 64 + w > 64)
                k[n][bit / 64 + 1] |= (uint64_t)vals[v] >> (64 - bit % 64);
            n++;
        }
    }
    for (int l = 0; l < 4; l++) /* all digits maximal: 2^(FR_BITS-1) - 1 < r */
        k[n][l] = ~0ull;
    k[n++][3] = (1ull << (FR_BITS - 1 - 192)) - 1;
    for (size_t i = 0; i < n; i++) {
        fr_t t;
        memcpy(t.l, k[i], 32);
        fr_from_std(&out[i], &t);
    }
    return n;
}

int main(int argc, char **argv)
{
    if (argc != 4 || atoi(argv[1]) < 2 || atoi(argv[1]) > 16) {
        fprintf(stderr, "usage: %s W(2..16) N_RANDOM OUT_FILE\n", argv[0]);
        return 2;
    }
    unsigned w = (unsigned)atoi(argv[1]);
    size_t nr = (size_t)atol(argv[2]), n;
    pool_t *pool = pool_create(0);
    fr_t *k = malloc((400 + nr) * sizeof *k);
    g1_aff_t g1, *o1 = malloc((400 + nr) * sizeof *o1);
    g2_aff_t g2, *o2 = malloc((400 + nr) * sizeof *o2);
    dev_fb_g1 t1;
    dev_fb_g2 t2;
    dev_rng rng;
    if (!pool || !k || !o1 || !o2)
        return 1;
    dev_rng_init(&rng, 1000 + w, 9);
    n = edge_scalars(k, w);
    for (size_t i = 0; i < nr; i++) {
        uint8_t b[32];
        dev_rng_scalar(b, &rng, curve_info(CURVE_ID));
        dev_fr_from_bytes(&k[n++], b);
    }
    g1_generator(&g1);
    g2_generator(&g2);
    if (!dev_fb_g1_init_w(&t1, &g1, w, pool) || !dev_fb_g2_init_w(&t2, &g2, w, pool) ||
        !dev_fb_g1_run_cpu(o1, k, n, &t1, pool) || !dev_fb_g2_run_cpu(o2, k, n, &t2, pool))
        return 1;
    FILE *f = fopen(argv[3], "wb");
    uint64_t hdr[3] = {w, t1.nwin, n};
    size_t entries = (size_t)t1.nwin * t1.half;
    if (!f || fwrite(hdr, 8, 3, f) != 3 || fwrite(t1.t, sizeof *t1.t, entries, f) != entries ||
        fwrite(t2.t, sizeof *t2.t, entries, f) != entries || fwrite(k, 32, n, f) != n ||
        fwrite(o1, sizeof *o1, n, f) != n || fwrite(o2, sizeof *o2, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "%s: cannot write %s\n", argv[0], argv[3]);
        return 1;
    }
    dev_fb_g1_free(&t1);
    dev_fb_g2_free(&t2);
    free(k);
    free(o1);
    free(o2);
    pool_destroy(pool);
    return 0;
}
