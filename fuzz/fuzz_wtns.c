/* fuzz_wtns.c - libFuzzer harness for the .wtns reader (wtns_open, formats.c).
 *
 * The input is a whole .wtns file (seeds: fuzz/corpus/wtns/). Beyond "no crash, no leak,
 * no sanitizer report" it checks the reader's contract (formats.h, docs/FORMATS.md 2):
 *   - a refusal is CUZK_EFORMAT or CUZK_ECURVE with a message that names the file, and
 *     leaves the wtns_file zeroed;
 *   - an accepted witness's n_witness values lie inside the file (after the 12-byte
 *     container header, two section headers and the 4 + n8 + 4 byte header section) and
 *     are each below r;
 *   - its values survive what public.json does with them: dec_from_le then le_from_dec
 *     (json.c) gives back the same bytes, below r (the first 64 values).
 */
#include <string.h>

#include "common.h"
#include "groth16/formats.h"
#include "groth16/proof.h"
#include "util/le.h"

static void check_accepted(const wtns_file *w, size_t size)
{
    const cuzk_curve_info *cv = w->curve;
    FUZZ_CHECK(cv && w->map.size == size, "curve or mapping missing");
    size_t n8 = cv->fr_bytes;
    uint64_t bytes = (uint64_t)w->n_witness * n8;
    FUZZ_CHECK(fuzz_inside(w->values, bytes, w->map.base, size), "values outside the file");
    FUZZ_CHECK(12 + 2 * 12 + 4 + n8 + 4 + bytes <= size, "%u values in %zu bytes",
               w->n_witness, size);
    for (uint32_t i = 0; i < w->n_witness; i++) {
        const uint8_t *v = w->values + (size_t)i * n8;
        FUZZ_CHECK(le_less(v, cv->r_le, n8), "value %u is not below r", i);
        if (i >= 64)
            continue;
        char dec[100];
        uint8_t back[32];
        dec_from_le(dec, sizeof dec, v, n8);
        FUZZ_CHECK(le_from_dec(back, n8, dec, cv->r_le), "value %u: \"%s\" does not parse", i,
                   dec);
        FUZZ_CHECK(!memcmp(back, v, n8), "value %u: \"%s\" parses to other bytes", i, dec);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    wtns_file w;
    char err[CUZK_ERRLEN];
    memset(err, 0, sizeof err);
    cuzk_err rc = wtns_open(&w, path, err);
    if (rc == CUZK_OK) {
        check_accepted(&w, size);
        wtns_close(&w);
    } else {
        FUZZ_CHECK(rc == CUZK_EFORMAT || rc == CUZK_ECURVE, "rc %d: %s", (int)rc, err);
        FUZZ_CHECK(fuzz_terminated(err, sizeof err) && strstr(err, path),
                   "message does not name the file: %s", err);
        FUZZ_CHECK(!w.map.base && !w.curve && !w.n_witness, "refused witness not zeroed");
    }
    return 0;
}
