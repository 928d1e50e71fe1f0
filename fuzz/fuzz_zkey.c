/* fuzz_zkey.c - libFuzzer harness for the Groth16 .zkey reader (zkey_open, formats.c).
 *
 * The input is a whole .zkey file (seeds: fuzz/corpus/zkey/). Beyond "no crash, no leak,
 * no sanitizer report" it checks the reader's contract (formats.h, docs/FORMATS.md 3):
 *   - a refusal is CUZK_EFORMAT or CUZK_ECURVE with a message that names the file, and
 *     leaves the zkey_file zeroed;
 *   - an accepted key is self-consistent: n_public + 1 <= n_vars, the domain a power of
 *     two equal to 2^log_domain, every view (the six constants, IC, the coefficients, the
 *     five base sections) inside the file, the section sizes it implies no more than the
 *     input's length, and every coefficient record within the matrix, row and signal
 *     ranges that matrix_build relies on;
 *   - what `cuzk zkey export-vk` does next with an accepted key (groth16_vk_from_zkey,
 *     without the pairing) runs clean on it.
 */
#include <string.h>

#include "common.h"
#include "groth16/formats.h"
#include "groth16/proof.h"
#include "groth16/prover.h"

static void check_accepted(const zkey_file *z, size_t size)
{
    const cuzk_curve_info *cv = z->curve;
    const uint8_t *base = z->map.base;
    FUZZ_CHECK(cv && z->map.size == size, "curve or mapping missing");
    FUZZ_CHECK((uint64_t)z->n_public + 1 <= z->n_vars, "n_public %u, n_vars %u", z->n_public,
               z->n_vars);
    FUZZ_CHECK(z->log_domain < 32 && (1u << z->log_domain) == z->domain_size,
               "domain %u, log %u", z->domain_size, z->log_domain);
    const uint8_t *g1s[] = {z->alpha1, z->beta1, z->delta1};
    const uint8_t *g2s[] = {z->beta2, z->gamma2, z->delta2};
    for (int i = 0; i < 3; i++) {
        FUZZ_CHECK(fuzz_inside(g1s[i], cv->g1_bytes, base, size), "G1 constant %d outside", i);
        FUZZ_CHECK(fuzz_inside(g2s[i], cv->g2_bytes, base, size), "G2 constant %d outside", i);
    }
    uint64_t n_ic = (uint64_t)z->n_public + 1, rec = 12 + cv->fr_bytes;
    FUZZ_CHECK(fuzz_inside(z->ic, n_ic * cv->g1_bytes, base, size), "IC outside");
    FUZZ_CHECK(fuzz_inside(z->coefs, z->n_coefs * rec, base, size), "coefficients outside");
    const uint32_t want[ZKEY_BASES] = {z->n_vars, z->n_vars, z->n_vars,
                                       z->n_vars - z->n_public - 1, z->domain_size};
    uint64_t bases = 0;
    for (int i = 0; i < ZKEY_BASES; i++) {
        size_t elem = i == ZKEY_B2 ? cv->g2_bytes : cv->g1_bytes;
        FUZZ_CHECK(z->n_bases[i] == want[i], "base set %d has %u points, expected %u", i,
                   z->n_bases[i], want[i]);
        FUZZ_CHECK(fuzz_inside(z->bases[i], (uint64_t)z->n_bases[i] * elem, base, size),
                   "base set %d outside", i);
        bases += (uint64_t)z->n_bases[i] * elem;
    }
    /* container header, nine section headers, section 1, the Groth16 header (section 2),
       IC, coefficients and bases: the least a key with these counts can occupy */
    uint64_t need = 12 + 9 * 12 + 4 + (4 + cv->fq_bytes + 4 + cv->fr_bytes + 12 +
                                         3 * cv->g1_bytes + 3 * cv->g2_bytes) +
                    n_ic * cv->g1_bytes + 4 + z->n_coefs * rec + bases;
    FUZZ_CHECK(need <= size, "counts need %llu bytes, the input has %zu",
               (unsigned long long)need, size);
    for (uint32_t i = 0; i < z->n_coefs; i++) {
        uint32_t f[3];
        memcpy(f, z->coefs + i * rec, sizeof f); /* little-endian host */
        FUZZ_CHECK(f[0] <= 1 && f[1] < z->domain_size && f[2] < z->n_vars,
                   "coefficient %u: matrix %u, row %u, signal %u", i, f[0], f[1], f[2]);
    }
    cuzk_vk vk;
    char err[CUZK_ERRLEN] = "";
    cuzk_err rc = groth16_vk_from_zkey(&vk, NULL, z, err);
    FUZZ_CHECK(rc == CUZK_OK || rc == CUZK_ENOMEM, "export-vk: %s", err);
    if (rc == CUZK_OK)
        FUZZ_CHECK(vk.n_public == z->n_public && vk.ic && vk.curve == cv->id, "vk counts");
    vk_free(&vk);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    zkey_file z;
    char err[CUZK_ERRLEN];
    memset(err, 0, sizeof err);
    cuzk_err rc = zkey_open(&z, path, err);
    if (rc == CUZK_OK) {
        check_accepted(&z, size);
        zkey_close(&z);
    } else {
        FUZZ_CHECK(rc == CUZK_EFORMAT || rc == CUZK_ECURVE, "rc %d: %s", (int)rc, err);
        FUZZ_CHECK(fuzz_terminated(err, sizeof err) && strstr(err, path),
                   "message does not name the file: %s", err);
        FUZZ_CHECK(!z.map.base && !z.curve && !z.n_vars, "refused key not zeroed");
    }
    return 0;
}
