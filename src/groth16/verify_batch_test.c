/* verify_batch_test.c - tests of Groth16 batch verification (groth16_verify_batch, verify_batch.c).
 *
 * Oracle: one-by-one verification (groth16_verify), which the snarkjs-made fixtures under
 * tests/data/<curve>/merkle/ (or argv[1]) tie to snarkjs: its proof.json must verify alone.
 * Per curve, NDISTINCT distinct valid proofs: snarkjs's proof.json and NDISTINCT - 1 proved
 * here with the CPU backend and fixed, different blinding r, s. Batches of 1, 2 and 64 proofs
 * reuse them in turn (a batch of 64 holds each 16 times: duplicates are fine for batch
 * verification, each copy gets its own weight; the test also runs under ASan, where each
 * CPU proof takes seconds, so it proves 3 per curve rather than 64). Each batch is checked
 * all valid, then with one bad proof at a random position (a public input changed; pi_c
 * replaced by another proof's pi_c, a valid point of the subgroup), against the oracle,
 * asserting that bad[] marks exactly that one. Then the edges, in batches of 8: two bad
 * proofs, a point off the curve, a coordinate not below q, a public input of the wrong
 * length, a curve mismatch, a key with a point off the curve, n = 0 and n < 0.
 * Random positions come from a seed printed at the start (argv[2] sets it).
 * The 64-proof batch against 64 single verifications is timed and printed, not asserted.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "groth16/backend.h"
#include "groth16/formats.h"
#include "groth16/proof.h"
#include "groth16/prover.h"
#include "util/check.h"

#define NDISTINCT 4 /* distinct valid proofs per curve */
#define NMAX 64     /* the largest batch */

static uint64_t rng_state;

static uint64_t rnd64(void) /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct fixture {
    cuzk_curve_id curve;
    const char *name;
    cuzk_vk vk;
    cuzk_public pub;     /* the witness's public signals (public.json) */
    cuzk_public pub_bad; /* the same with signal 0 changed */
    cuzk_proof proof[NDISTINCT];
} fixture;

/* value - 1, or 1 when value is 0: another value below r */
static void le_change(uint8_t *v, size_t n)
{
    int zero = 1;
    for (size_t i = 0; i < n; i++)
        zero &= v[i] == 0;
    if (zero) {
        v[0] = 1;
        return;
    }
    for (size_t i = 0; i < n; i++)
        if (v[i]--)
            break;
}

/* reads the fixture and makes its NDISTINCT proofs; 0 on failure (reported) */
static int fixture_load(fixture *fx, const char *root, const char *sub)
{
    char path[512], err[CUZK_ERRLEN] = "";
    zkey_file z;
    wtns_file w;
    cuzk_err e;
    snprintf(path, sizeof path, "%s/%s/merkle/vk.json", root, sub);
    if ((e = vk_read_json(&fx->vk, path, err))) {
        CHECK(0, "%s: %s", path, err);
        return 0;
    }
    snprintf(path, sizeof path, "%s/%s/merkle/public.json", root, sub);
    e = public_read_json(&fx->pub, fx->curve, path, err);
    CHECK(!e, "%s: %s", path, err);
    if (!e)
        e = public_read_json(&fx->pub_bad, fx->curve, path, err);
    if (e)
        return 0;
    CHECK(fx->pub.n > 0, "%s has public signals", path);
    if (fx->pub.n == 0)
        return 0;
    le_change(fx->pub_bad.values, 32);
    snprintf(path, sizeof path, "%s/%s/merkle/proof.json", root, sub);
    if ((e = proof_read_json(&fx->proof[0], fx->curve, path, err))) {
        CHECK(0, "%s: %s", path, err);
        return 0;
    }
    snprintf(path, sizeof path, "%s/%s/merkle/circuit.zkey", root, sub);
    if ((e = zkey_open(&z, path, err))) {
        CHECK(0, "%s: %s", path, err);
        return 0;
    }
    snprintf(path, sizeof path, "%s/%s/merkle/witness.wtns", root, sub);
    if ((e = wtns_open(&w, path, err))) {
        CHECK(0, "%s: %s", path, err);
        zkey_close(&z);
        return 0;
    }
    cuzk_backend *be = cpu_backend_create(fx->curve, 2, err);
    void *ks = NULL;
    CHECK(be, "cpu backend: %s", err);
    if (be && (e = be->key_attach(be, &z, NULL, &ks, err)))
        CHECK(0, "key_attach: %s", err);
    int ok = be && !e;
    for (int k = 1; ok && k < NDISTINCT; k++) {
        groth16_rs rs;
        memset(&rs, 0, sizeof rs);
        rs.r[0] = (uint8_t)(11 * k + 1);
        rs.r[1] = (uint8_t)k;
        rs.s[0] = (uint8_t)(13 * k + 5);
        rs.s[2] = (uint8_t)k;
        e = groth16_prove(&fx->proof[k], be, ks, &z, &w, &rs, err);
        CHECK(!e, "%s: prove %d: %s", fx->name, k, err);
        ok = !e;
    }
    if (ks)
        be->key_detach(be, ks);
    if (be)
        be->destroy(be);
    wtns_close(&w);
    zkey_close(&z);
    for (int k = 0; ok && k < NDISTINCT; k++) {
        e = groth16_verify(&fx->vk, &fx->pub, &fx->proof[k], err);
        CHECK(!e, "%s: proof %d does not verify alone: %s", fx->name, k, err);
        ok = !e;
        for (int j = 0; ok && j < k; j++)
            CHECK(memcmp(&fx->proof[j], &fx->proof[k], sizeof fx->proof[k]), "%s: proofs %d and %d are the same",
                  fx->name, j, k);
    }
    return ok;
}

static void fixture_free(fixture *fx)
{
    if (fx->vk.ic)
        vk_free(&fx->vk);
    public_free(&fx->pub);
    public_free(&fx->pub_bad);
}

/* the batch against the oracle: the result is what one-by-one verification says, and bad[]
 * marks exactly the proofs groth16_verify rejects, which must be exactly want_bad[] */
static void check_batch(const fixture *fx, const cuzk_public *const *pub, const cuzk_proof *const *proof, int n,
                        const int *want_bad, const char *what)
{
    char err[CUZK_ERRLEN] = "";
    int bad[NMAX], oracle[NMAX], n_oracle = 0, mismatch = 0;
    for (int i = 0; i < n; i++) {
        int j = 0; /* a repeated pair has the same answer: verify it once */
        while (j < i && (pub[j] != pub[i] || proof[j] != proof[i]))
            j++;
        if (j < i) {
            oracle[i] = oracle[j];
        } else {
            cuzk_err e = groth16_verify(&fx->vk, pub[i], proof[i], err);
            CHECK(e == CUZK_OK || e == CUZK_EVERIFY, "%s %s: single verification of %d: %s", fx->name, what, i,
                  err);
            oracle[i] = e != CUZK_OK;
        }
        n_oracle += oracle[i];
        CHECK(oracle[i] == want_bad[i], "%s %s: the oracle says proof %d is %s", fx->name, what, i,
              oracle[i] ? "bad" : "good");
        bad[i] = -1;
    }
    cuzk_err e = groth16_verify_batch(&fx->vk, pub, proof, n, bad, err);
    CHECK(e == (n_oracle ? CUZK_EVERIFY : CUZK_OK), "%s %s (n = %d): batch says %s: %s", fx->name, what, n,
          cuzk_strerror(e), e ? err : "");
    for (int i = 0; i < n; i++)
        mismatch += bad[i] != oracle[i];
    CHECK(!mismatch, "%s %s (n = %d): bad[] differs from one-by-one verification in %d places", fx->name, what, n,
          mismatch);
}

static void test_batches(const fixture *fx)
{
    static const int sizes[] = {1, 2, NMAX};
    const cuzk_public *pub[NMAX];
    const cuzk_proof *proof[NMAX];
    int want[NMAX];
    cuzk_proof tampered;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        int n = sizes[si];
        for (int i = 0; i < n; i++) {
            pub[i] = &fx->pub;
            proof[i] = &fx->proof[i % NDISTINCT];
            want[i] = 0;
        }
        char what[64];
        snprintf(what, sizeof what, "all valid");
        check_batch(fx, pub, proof, n, want, what);

        /* a proof paired with a different public input */
        int pos = (int)(rnd64() % (uint64_t)n);
        pub[pos] = &fx->pub_bad;
        want[pos] = 1;
        snprintf(what, sizeof what, "changed public input at %d", pos);
        check_batch(fx, pub, proof, n, want, what);
        pub[pos] = &fx->pub;
        want[pos] = 0;

        /* pi_c replaced by another valid proof's pi_c (on the curve, in the subgroup) */
        pos = (int)(rnd64() % (uint64_t)n);
        tampered = *proof[pos];
        tampered.c = fx->proof[(pos + 1) % NDISTINCT].c;
        proof[pos] = &tampered;
        want[pos] = 1;
        snprintf(what, sizeof what, "pi_c replaced at %d", pos);
        check_batch(fx, pub, proof, n, want, what);
    }
}

/* two bad proofs, a point off the curve, malformed input, n = 0 and n < 0 */
static void test_edges(const fixture *fx)
{
    const cuzk_public *pub[NMAX];
    const cuzk_proof *proof[NMAX];
    int want[NMAX], bad[NMAX];
    char err[CUZK_ERRLEN] = "";
    int n = 8;
    for (int i = 0; i < n; i++) {
        pub[i] = &fx->pub;
        proof[i] = &fx->proof[i % NDISTINCT];
        want[i] = 0;
    }
    /* two bad: both found */
    int p1 = (int)(rnd64() % 4), p2 = 4 + (int)(rnd64() % 4);
    pub[p1] = pub[p2] = &fx->pub_bad;
    want[p1] = want[p2] = 1;
    check_batch(fx, pub, proof, n, want, "two changed public inputs");
    pub[p1] = pub[p2] = &fx->pub;
    want[p1] = want[p2] = 0;

    /* pi_a off the curve: refused at import, as one by one */
    cuzk_proof off = fx->proof[3 % NDISTINCT];
    off.a.y[0] ^= 1;
    proof[5] = &off;
    want[5] = 1;
    check_batch(fx, pub, proof, n, want, "pi_a off the curve");

    /* malformed: a coordinate not below q, a public input of the wrong length, a curve
     * mismatch: the error groth16_verify gives, bad[] all 0 */
    const cuzk_curve_info *cv = curve_info(fx->curve);
    cuzk_proof big = fx->proof[1 % NDISTINCT];
    memcpy(big.c.x, cv->q_le, cv->fq_bytes);
    proof[5] = &big;
    cuzk_err e = groth16_verify_batch(&fx->vk, pub, proof, n, bad, err);
    int any = 0;
    for (int i = 0; i < n; i++)
        any |= bad[i];
    CHECK(e == CUZK_EFORMAT && !any && strstr(err, "proof 5"), "%s: coordinate = q: %s: %s", fx->name,
          cuzk_strerror(e), err);
    CHECK(groth16_verify(&fx->vk, pub[5], proof[5], err) == CUZK_EFORMAT, "%s: coordinate = q alone", fx->name);
    proof[5] = &fx->proof[5 % NDISTINCT];

    cuzk_public shorter = fx->pub;
    shorter.n--;
    pub[6] = &shorter;
    e = groth16_verify_batch(&fx->vk, pub, proof, n, bad, err);
    CHECK(e == CUZK_EFORMAT && strstr(err, "proof 6"), "%s: short public input: %s: %s", fx->name,
          cuzk_strerror(e), err);
    pub[6] = &fx->pub;

    cuzk_proof other = fx->proof[2 % NDISTINCT];
    other.curve = fx->curve == CURVE_BN254 ? CURVE_BLS12_381 : CURVE_BN254;
    proof[2] = &other;
    e = groth16_verify_batch(&fx->vk, pub, proof, n, bad, err);
    CHECK(e == CUZK_ECURVE && strstr(err, "proof 2"), "%s: curve mismatch: %s: %s", fx->name, cuzk_strerror(e),
          err);
    proof[2] = &fx->proof[2 % NDISTINCT];

    /* a key with alpha1 off the curve: every proof fails, as one by one */
    cuzk_vk vk_off = fx->vk; /* shares ic with fx->vk: not freed */
    vk_off.alpha1.y[0] ^= 1;
    e = groth16_verify_batch(&vk_off, pub, proof, n, bad, err);
    any = 1;
    for (int i = 0; i < n; i++)
        any &= bad[i];
    CHECK(e == CUZK_EVERIFY && any && strstr(err, "vk_alpha_1"), "%s: key off the curve: %s: %s", fx->name,
          cuzk_strerror(e), err);
    CHECK(groth16_verify(&vk_off, pub[0], proof[0], err) == CUZK_EVERIFY, "%s: key off the curve alone", fx->name);

    CHECK(groth16_verify_batch(&fx->vk, pub, proof, 0, bad, err) == CUZK_OK, "%s: n = 0", fx->name);
    CHECK(groth16_verify_batch(&fx->vk, NULL, NULL, 0, NULL, err) == CUZK_OK, "%s: n = 0, no arrays", fx->name);
    CHECK(groth16_verify_batch(&fx->vk, pub, proof, -1, bad, err) == CUZK_EINVAL, "%s: n = -1", fx->name);
}

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif

/* informational: a 64-proof batch against 64 single verifications, best of 3; left out of a
 * sanitized build, where the times say nothing and 64 BLS12-381 verifications take seconds */
static void time_batch(const fixture *fx)
{
#ifdef SANITIZED
    printf("  %s: timing left out (sanitized build)\n", fx->name);
#else
    const cuzk_public *pub[NMAX];
    const cuzk_proof *proof[NMAX];
    int bad[NMAX];
    char err[CUZK_ERRLEN] = "";
    for (int i = 0; i < NMAX; i++) {
        pub[i] = &fx->pub;
        proof[i] = &fx->proof[i % NDISTINCT];
    }
    double t_batch = 1e30, t_single = 1e30;
    for (int rep = 0; rep < 3; rep++) { /* best of 3 */
        double t0 = now_s();
        cuzk_err e = groth16_verify_batch(&fx->vk, pub, proof, NMAX, bad, err);
        double t1 = now_s();
        int ok = !e;
        for (int i = 0; i < NMAX; i++)
            ok &= !groth16_verify(&fx->vk, pub[i], proof[i], err);
        double t2 = now_s();
        CHECK(ok, "%s: timed batch", fx->name);
        t_batch = t1 - t0 < t_batch ? t1 - t0 : t_batch;
        t_single = t2 - t1 < t_single ? t2 - t1 : t_single;
    }
    printf("  %s: %d proofs: batch %.1f ms (one Miller loop over %d pairs, 1 final exponentiation), "
           "one by one %.1f ms (%d Miller loops, %d final exponentiations): %.1fx (informational)\n",
           fx->name, NMAX, t_batch * 1e3, NMAX + 3, t_single * 1e3, 4 * NMAX, NMAX, t_single / t_batch);
#endif
}

int main(int argc, char **argv)
{
    const char *root = argc > 1 ? argv[1] : "tests/data";
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    rng_state = seed;
    printf("verify_batch_test: seed %llu\n", (unsigned long long)seed);
    fixture fx[2] = {{.curve = CURVE_BN254, .name = "bn254"}, {.curve = CURVE_BLS12_381, .name = "bls12-381"}};
    const char *sub[2] = {"bn128", "bls12381"};
    for (int c = 0; c < 2; c++) {
        double t0 = now_s();
        if (fixture_load(&fx[c], root, sub[c])) {
            double t1 = now_s();
            test_batches(&fx[c]);
            test_edges(&fx[c]);
            time_batch(&fx[c]);
            printf("  %s: %d proofs made in %.2f s, checks in %.2f s\n", fx[c].name, NDISTINCT - 1, t1 - t0,
                   now_s() - t1);
        }
        fixture_free(&fx[c]);
    }
    printf("verify_batch_test: %d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
