/* verify_batch.c - Groth16 batch verification: n proofs of one verification key in one
 * pairing check (groth16_verify_batch, prover.h).
 *
 * DESIGN. The check is the r_i-weighted product of the n single checks (the per-curve
 * CURVE_SYM(verify_batch) in verify_batch_core.h gives the formula, its cost and the
 * soundness argument): with m proofs past point validation it runs ONE multi-Miller loop
 * over m + 3 pairs (m pairs (-r_i A_i, B_i), then (sum r_i L_i, gamma2), (sum r_i C_i,
 * delta2), ((sum r_i) alpha1, beta2)) and ONE final exponentiation, where one-by-one
 * verification runs 4m Miller loops and m final exponentiations.
 *
 * Weights: r_i uniform in [1, 2^128), 16 bytes each from getrandom(2) (the OS CSPRNG, as
 * groth16_rs_random draws r and s), fresh for every call and never exposed, so whoever
 * chose the proofs cannot choose them to cancel; a batch holding an invalid proof passes
 * with probability at most 2^-128.
 *
 * Finding the bad proofs: a proof refused at point validation (off the curve or the
 * subgroup) is marked at once and left out of the product. When the product over the others
 * fails, each of them is verified alone with groth16_verify (n more single verifications, on
 * the failure path only). Bisection would cost about k log2(n) batch checks for k bad proofs
 * and wins only when k is small and n large; one by one is simple, its cost is bounded, and
 * its answer is by construction groth16_verify's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "groth16/curve_exports.h"
#include "groth16/prover.h"
#include "util/le.h"

#define WEIGHT_BYTES 16 /* 128-bit weights */

/* fills b with n bytes from the OS CSPRNG */
static cuzk_err random_bytes(uint8_t *b, size_t n, char *err)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = getrandom(b + got, n - got, 0);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return cuzk_errf(err, CUZK_EIO, "getrandom: %s", strerror(errno));
        }
        got += (size_t)k;
    }
    return CUZK_OK;
}

/* n weights of WEIGHT_BYTES each, uniform in [1, 2^128): a zero one is drawn again */
static cuzk_err draw_weights(uint8_t *w, size_t n, char *err)
{
    cuzk_err e = random_bytes(w, n * WEIGHT_BYTES, err);
    for (size_t i = 0; !e && i < n; i++)
        while (!e && le_is_zero(w + WEIGHT_BYTES * i, WEIGHT_BYTES))
            e = random_bytes(w + WEIGHT_BYTES * i, WEIGHT_BYTES, err);
    return e;
}

cuzk_err groth16_verify_batch(const cuzk_vk *vk, const cuzk_public *const *pub, const cuzk_proof *const *proof,
                              int n, int *bad, char *err)
{
    if (n < 0)
        return cuzk_errf(err, CUZK_EINVAL, "batch verification of %d proofs", n);
    if (n == 0)
        return CUZK_OK;
    if (!vk || !pub || !proof || !bad)
        return cuzk_errf(err, CUZK_EINVAL, "batch verification: missing key, public inputs, proofs or result array");
    for (int i = 0; i < n; i++)
        bad[i] = 0;
    if (vk->curve != CURVE_BN254 && vk->curve != CURVE_BLS12_381)
        return cuzk_errf(err, CUZK_ECURVE, "unsupported curve");
    for (int i = 0; i < n; i++) {
        if (!pub[i] || !proof[i])
            return cuzk_errf(err, CUZK_EINVAL, "proof %d: no proof or public input", i);
        if (vk->curve != proof[i]->curve || vk->curve != pub[i]->curve)
            return cuzk_errf(err, CUZK_ECURVE,
                             "proof %d: verification key, public input and proof are not on one curve", i);
    }

    int bn = vk->curve == CURVE_BN254;
    size_t un = (size_t)n;
    size_t scratch_size = bn ? bn254_verify_batch_scratch_size(un, vk->n_public)
                             : bls12_381_verify_batch_scratch_size(un, vk->n_public);
    uint8_t *w = malloc(un * WEIGHT_BYTES);
    void *scratch = aligned_alloc(64, (scratch_size + 63) / 64 * 64);
    char why[CUZK_ERRLEN] = "", first_why[CUZK_ERRLEN] = "";
    int n_bad = 0, first = -1, fallback_first = -1;
    cuzk_err e;
    if (!w || !scratch) {
        e = cuzk_errf(err, CUZK_ENOMEM, "batch verification of %d proofs: out of memory for %zu bytes", n,
                      scratch_size + un * WEIGHT_BYTES);
        goto done;
    }
    if ((e = draw_weights(w, un, err)))
        goto done;
    e = bn ? bn254_verify_batch(vk, pub, proof, un, w, bad, scratch, err)
           : bls12_381_verify_batch(vk, pub, proof, un, w, bad, scratch, err);
    if (e == CUZK_EVERIFY) {
        /* the product failed: find the bad ones among those it covered */
        for (int i = 0; i < n; i++) {
            if (bad[i])
                continue;
            cuzk_err ei = groth16_verify(vk, pub[i], proof[i], why);
            if (ei == CUZK_EVERIFY) {
                bad[i] = 1;
                if (fallback_first < 0) {
                    fallback_first = i;
                    memcpy(first_why, why, sizeof first_why);
                }
            } else if (ei) {
                e = cuzk_errf(err, ei, "proof %d: %s", i, why);
                goto done;
            }
        }
        if (fallback_first < 0) {
            e = cuzk_errf(err, CUZK_EINTERNAL,
                          "batch pairing check failed but each of the %d proofs verifies alone", n);
            goto done;
        }
    } else if (e) {
        goto done;
    }
    for (int i = 0; i < n; i++)
        if (bad[i] && !n_bad++)
            first = i;
    if (!n_bad) {
        e = CUZK_OK;
        goto done;
    }
    /* the first bad proof's reason: from the fallback, or (refused at import, so at once) from
     * groth16_verify again */
    if (first != fallback_first)
        groth16_verify(vk, pub[first], proof[first], first_why);
    e = cuzk_errf(err, CUZK_EVERIFY, "%d of %d proofs do not verify; proof %d: %s", n_bad, n, first, first_why);
done:
    if (e != CUZK_OK && e != CUZK_EVERIFY)
        for (int i = 0; i < n; i++)
            bad[i] = 0;
    if (w)
        memset(w, 0, un * WEIGHT_BYTES);
    free(w);
    free(scratch);
    return e;
}
