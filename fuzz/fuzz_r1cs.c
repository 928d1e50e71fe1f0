/* fuzz_r1cs.c - libFuzzer harness for the .r1cs reader (r1cs_open, formats.c).
 *
 * The input is a whole .r1cs file (seeds: fuzz/corpus/r1cs/). Beyond "no crash, no leak,
 * no sanitizer report" it checks the reader's contract (formats.h, docs/FORMATS.md 1):
 *   - a refusal is CUZK_EFORMAT or CUZK_ECURVE with a message that names the file, and
 *     leaves the r1cs_file zeroed;
 *   - an accepted circuit is self-consistent: ONE + outputs + public + private inputs fit
 *     in n_wires, the constraint section lies inside the file, holds at least the 3 x 4
 *     term counts of its n_constraints, and walking it again term by term (count, then
 *     wire < n_wires and a coefficient below r) ends exactly at its last byte.
 */
#include <string.h>

#include "common.h"
#include "groth16/formats.h"
#include "util/le.h"

static void check_accepted(const r1cs_file *r, size_t size)
{
    const cuzk_curve_info *cv = r->curve;
    FUZZ_CHECK(cv && r->map.size == size, "curve or mapping missing");
    uint64_t need = 1 + (uint64_t)r->n_pub_out + r->n_pub_in + r->n_prv_in;
    FUZZ_CHECK(need <= r->n_wires, "%llu signals in %u wires", (unsigned long long)need,
               r->n_wires);
    FUZZ_CHECK(fuzz_inside(r->constraints, r->constraints_size, r->map.base, size),
               "constraints outside the file");
    FUZZ_CHECK((uint64_t)r->n_constraints * 12 <= r->constraints_size,
               "%u constraints in %zu bytes", r->n_constraints, r->constraints_size);
    const uint8_t *p = r->constraints;
    size_t pos = 0, term = 4 + cv->fr_bytes;
    for (uint64_t lc = 0; lc < (uint64_t)r->n_constraints * 3; lc++) {
        uint32_t n;
        FUZZ_CHECK(r->constraints_size - pos >= 4, "combination %llu past the end",
                   (unsigned long long)lc);
        memcpy(&n, p + pos, 4);
        pos += 4;
        FUZZ_CHECK(n <= (r->constraints_size - pos) / term, "combination %llu: %u terms",
                   (unsigned long long)lc, n);
        for (uint32_t t = 0; t < n; t++, pos += term) {
            uint32_t wire;
            memcpy(&wire, p + pos, 4);
            FUZZ_CHECK(wire < r->n_wires, "wire %u of %u", wire, r->n_wires);
            FUZZ_CHECK(le_less(p + pos + 4, cv->r_le, cv->fr_bytes), "coefficient >= r");
        }
    }
    FUZZ_CHECK(pos == r->constraints_size, "constraints end at %zu of %zu", pos,
               r->constraints_size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    r1cs_file r;
    char err[CUZK_ERRLEN];
    memset(err, 0, sizeof err);
    cuzk_err rc = r1cs_open(&r, path, err);
    if (rc == CUZK_OK) {
        check_accepted(&r, size);
        r1cs_close(&r);
    } else {
        FUZZ_CHECK(rc == CUZK_EFORMAT || rc == CUZK_ECURVE, "rc %d: %s", (int)rc, err);
        FUZZ_CHECK(fuzz_terminated(err, sizeof err) && strstr(err, path),
                   "message does not name the file: %s", err);
        FUZZ_CHECK(!r.map.base && !r.curve && !r.n_wires, "refused circuit not zeroed");
    }
    return 0;
}
