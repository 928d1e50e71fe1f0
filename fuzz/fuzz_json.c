/* fuzz_json.c - libFuzzer harness for the snarkjs JSON readers (json.c): proof_read_json,
 * public_read_json (each for BN254 and BLS12-381) and vk_read_json.
 *
 * The input is one JSON file (seeds: fuzz/corpus/json/, proofs, public signals and
 * verification keys of both curves); every reader reads it. Beyond "no crash, no leak,
 * no sanitizer report" it checks:
 *   - a refusal is CUZK_EFORMAT or CUZK_ECURVE with a message that names the file, and
 *     owns nothing (vk.ic, public values NULL);
 *   - what a reader accepts, the matching writer writes (proof_write_json,
 *     public_write_json, vk_write_json: the bytes snarkjs writes) and the reader reads
 *     back to the same value: reading is a fixed point of write-then-read, for every
 *     shape the readers accept (hex, 2- or 3-coordinate points, infinity, aliases).
 */
#include <string.h>

#include "common.h"
#include "groth16/proof.h"

static void check_refused(cuzk_err rc, const char *err, const char *path, const char *what)
{
    FUZZ_CHECK(rc == CUZK_EFORMAT || rc == CUZK_ECURVE, "%s: rc %d: %s", what, (int)rc, err);
    FUZZ_CHECK(fuzz_terminated(err, CUZK_ERRLEN) && strstr(err, path),
               "%s: message does not name the file: %s", what, err);
}

static void check_g1(const g1_std *a, const g1_std *b, const char *what)
{
    FUZZ_CHECK(!memcmp(a, b, sizeof *a), "%s changed through write and read", what);
}

static void check_g2(const g2_std *a, const g2_std *b, const char *what)
{
    FUZZ_CHECK(!memcmp(a, b, sizeof *a), "%s changed through write and read", what);
}

static void fuzz_proof(const uint8_t *data, size_t size, cuzk_curve_id curve)
{
    const char *path = fuzz_file(data, size);
    char err[CUZK_ERRLEN] = "";
    cuzk_proof p, q;
    cuzk_err rc = proof_read_json(&p, curve, path, err);
    if (rc) {
        check_refused(rc, err, path, "proof");
        return;
    }
    FUZZ_CHECK(p.curve == curve, "proof curve %d", (int)p.curve);
    rc = proof_write_json(&p, path, err);
    FUZZ_CHECK(rc == CUZK_OK, "proof_write_json: %s", err);
    rc = proof_read_json(&q, curve, path, err);
    FUZZ_CHECK(rc == CUZK_OK, "a written proof does not read back: %s", err);
    FUZZ_CHECK(q.curve == p.curve, "proof curve changed");
    check_g1(&p.a, &q.a, "pi_a");
    check_g2(&p.b, &q.b, "pi_b");
    check_g1(&p.c, &q.c, "pi_c");
}

static void fuzz_public(const uint8_t *data, size_t size, cuzk_curve_id curve)
{
    const char *path = fuzz_file(data, size);
    char err[CUZK_ERRLEN] = "";
    cuzk_public p, q;
    cuzk_err rc = public_read_json(&p, curve, path, err);
    if (rc) {
        check_refused(rc, err, path, "public");
        FUZZ_CHECK(!p.values && !p.n, "refused public signals own memory");
        return;
    }
    size_t fr = curve_info(curve)->fr_bytes;
    rc = public_write_json(&p, path, err);
    FUZZ_CHECK(rc == CUZK_OK, "public_write_json: %s", err);
    rc = public_read_json(&q, curve, path, err);
    FUZZ_CHECK(rc == CUZK_OK, "written public signals do not read back: %s", err);
    FUZZ_CHECK(q.n == p.n && q.curve == p.curve && !memcmp(q.values, p.values, p.n * fr),
               "public signals changed through write and read (%u, %u)", p.n, q.n);
    public_free(&q);
    public_free(&p);
}

static void fuzz_vk(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    char err[CUZK_ERRLEN] = "";
    cuzk_vk v, w;
    cuzk_err rc = vk_read_json(&v, path, err);
    if (rc) {
        check_refused(rc, err, path, "vk");
        FUZZ_CHECK(!v.ic, "refused verification key owns memory");
        return;
    }
    FUZZ_CHECK(v.ic && curve_info(v.curve), "accepted key without IC or curve");
    rc = vk_write_json(&v, NULL, path, err);
    FUZZ_CHECK(rc == CUZK_OK, "vk_write_json: %s", err);
    rc = vk_read_json(&w, path, err);
    FUZZ_CHECK(rc == CUZK_OK, "a written verification key does not read back: %s", err);
    FUZZ_CHECK(w.curve == v.curve && w.n_public == v.n_public, "curve or n_public changed");
    check_g1(&v.alpha1, &w.alpha1, "vk_alpha_1");
    check_g2(&v.beta2, &w.beta2, "vk_beta_2");
    check_g2(&v.gamma2, &w.gamma2, "vk_gamma_2");
    check_g2(&v.delta2, &w.delta2, "vk_delta_2");
    for (uint32_t i = 0; i <= v.n_public; i++)
        check_g1(&v.ic[i], &w.ic[i], "IC");
    vk_free(&w);
    vk_free(&v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_proof(data, size, CURVE_BN254);
    fuzz_proof(data, size, CURVE_BLS12_381);
    fuzz_public(data, size, CURVE_BN254);
    fuzz_public(data, size, CURVE_BLS12_381);
    fuzz_vk(data, size);
    return 0;
}
