/* json_test.c - tests of the snarkjs JSON readers/writers and the decimal conversions (json.c).
 *
 * Oracles: the moduli's decimal forms printed by tools/gen_curve_info.py (Python big
 * integers) and 2^256-1; the proof.json, public.json and vk.json that snarkjs wrote under
 * tests/data/<curve>/<circuit>/ (or argv[1]), which must come back byte for byte after a
 * read and a write; and the shapes snarkjs accepts or rejects (docs/FORMATS.md 5).
 */
#include <dirent.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "groth16/proof.h"
#include "util/check.h"

static char tmpdir[256];

static const char *tmp_path(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    return path;
}

static const char *write_text(const char *name, const char *text)
{
    const char *path = tmp_path(name);
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(2);
    }
    return path;
}

static char *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, len = 0;
    char *b = malloc(cap + 1);
    size_t k;
    while (b && (k = fread(b + len, 1, cap - len, f)) > 0) {
        len += k;
        if (len == cap) {
            cap *= 2;
            char *nb = realloc(b, cap + 1);
            if (!nb) {
                free(b);
                b = NULL;
            }
            b = nb;
        }
    }
    fclose(f);
    if (b)
        b[len] = 0;
    *n = len;
    return b;
}

/* ---- decimal conversions ---- */

/* decimal forms from tools/gen_curve_info.py (see src/curves/curve_info_gen.h) */
static const char BN_Q[] =
    "21888242871839275222246405745257275088696311157297823662689037894645226208583";
static const char BN_R[] =
    "21888242871839275222246405745257275088548364400416034343698204186575808495617";
static const char BLS_Q[] = "40024095552216673934177898257359041565568828199390078853320581361240316"
                            "50490837864442687629129015664037894272559787";
static const char BLS_R[] =
    "52435875175126190479447740508185965837690552500527637822603658699938581184513";
static const char MAX256[] =
    "115792089237316195423570985008687907853269984665640564039457584007913129639935";

static void test_decimal(void)
{
    const cuzk_curve_info *bn = curve_info(CURVE_BN254), *bls = curve_info(CURVE_BLS12_381);
    char d[200];
    struct { const uint8_t *le; size_t n; const char *dec; } known[] = {
        {bn->q_le, 32, BN_Q}, {bn->r_le, 32, BN_R}, {bls->q_le, 48, BLS_Q}, {bls->r_le, 32, BLS_R}};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        dec_from_le(d, sizeof d, known[i].le, known[i].n);
        CHECK(!strcmp(d, known[i].dec), "dec_from_le modulus %zu: %s", i, d);
        uint8_t le[48];
        CHECK(le_from_dec(le, known[i].n, known[i].dec, NULL) &&
                  !memcmp(le, known[i].le, known[i].n),
              "le_from_dec modulus %zu", i);
        CHECK(!le_from_dec(le, known[i].n, known[i].dec, known[i].le),
              "a modulus is not below itself (%zu)", i);
    }
    uint8_t z[48] = {0}, one[48] = {1}, ff[48], le[48];
    memset(ff, 0xff, sizeof ff);
    dec_from_le(d, sizeof d, z, 32);
    CHECK(!strcmp(d, "0"), "zero: %s", d);
    dec_from_le(d, sizeof d, one, 32);
    CHECK(!strcmp(d, "1"), "one: %s", d);
    dec_from_le(d, sizeof d, ff, 32);
    CHECK(!strcmp(d, MAX256), "2^256-1: %s", d);
    CHECK(le_from_dec(le, 32, MAX256, NULL) && !memcmp(le, ff, 32), "parse 2^256-1");
    CHECK(!le_from_dec(le, 32, "115792089237316195423570985008687907853269984665640564039457584007913129639936", NULL),
          "2^256 does not fit 32 bytes");
    CHECK(le_from_dec(le, 48, "115792089237316195423570985008687907853269984665640564039457584007913129639936", NULL) &&
              le[32] == 1 && le[31] == 0,
          "2^256 fits 48 bytes");
    /* powers of ten crossing the 10^9 chunks of dec_from_le */
    uint8_t p[32] = {0};
    le_from_dec(p, 32, "1000000000000000000", NULL);
    dec_from_le(d, sizeof d, p, 32);
    CHECK(!strcmp(d, "1000000000000000000"), "10^18: %s", d);
    le_from_dec(p, 32, "1000000000000000001", NULL);
    dec_from_le(d, sizeof d, p, 32);
    CHECK(!strcmp(d, "1000000000000000001"), "10^18+1: %s", d);
    /* hex */
    CHECK(le_from_dec(le, 32, "0x30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001",
                      NULL) &&
              !memcmp(le, bn->r_le, 32),
          "hex r");
    CHECK(le_from_dec(le, 32, "0X1F", NULL) && le[0] == 31 && le[1] == 0, "0X1F");
    CHECK(le_from_dec(le, 32, "000123", NULL) && le[0] == 123, "leading zeros");
    CHECK(le_from_dec(le, 32, "0", bn->r_le) && le[0] == 0, "zero below r");
    uint8_t rm1[32];
    memcpy(rm1, bn->r_le, 32);
    rm1[0] -= 1;
    dec_from_le(d, sizeof d, rm1, 32);
    CHECK(le_from_dec(le, 32, d, bn->r_le) && !memcmp(le, rm1, 32), "r-1 below r");
    static const char *const bad[] = {"", "0x", "12a", "-1", " 1", "1 ", "+1", "1.5", "0xg", "1e3"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(!le_from_dec(le, 32, bad[i], NULL), "\"%s\" must not parse", bad[i]);
    /* truncation keeps the buffer terminated */
    char small[5];
    dec_from_le(small, sizeof small, ff, 32);
    CHECK(strlen(small) == 4, "small buffer terminated");
}

/* ---- round trips ---- */

static uint64_t rng = 0x2545f4914f6cdd1dull;
static void rand_fe(uint8_t *o, size_t n) /* below 2^(8n-8): below every modulus */
{
    for (size_t i = 0; i < n; i++) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        o[i] = (uint8_t)(rng >> 32);
    }
    o[n - 1] = 0;
}

static void rand_g1(g1_std *p, size_t fq)
{
    memset(p, 0, sizeof *p);
    rand_fe(p->x, fq);
    rand_fe(p->y, fq);
}

static void rand_g2(g2_std *p, size_t fq)
{
    memset(p, 0, sizeof *p);
    rand_fe(p->x0, fq);
    rand_fe(p->x1, fq);
    rand_fe(p->y0, fq);
    rand_fe(p->y1, fq);
}

static int g1_eq(const g1_std *a, const g1_std *b)
{
    return a->inf == b->inf && !memcmp(a->x, b->x, FQ_MAX) && !memcmp(a->y, b->y, FQ_MAX);
}

static int g2_eq(const g2_std *a, const g2_std *b)
{
    return a->inf == b->inf && !memcmp(a->x0, b->x0, FQ_MAX) && !memcmp(a->x1, b->x1, FQ_MAX) &&
           !memcmp(a->y0, b->y0, FQ_MAX) && !memcmp(a->y1, b->y1, FQ_MAX);
}

static void test_roundtrip(cuzk_curve_id curve)
{
    const cuzk_curve_info *cv = curve_info(curve);
    size_t fq = cv->fq_bytes;
    char err[CUZK_ERRLEN] = "";
    for (int iter = 0; iter < 3; iter++) {
        cuzk_proof p = {.curve = curve}, q;
        rand_g1(&p.a, fq);
        rand_g2(&p.b, fq);
        rand_g1(&p.c, fq);
        if (iter == 1) { /* infinity in every slot */
            memset(&p.a, 0, sizeof p.a);
            p.a.inf = 1;
            memset(&p.b, 0, sizeof p.b);
            p.b.inf = 1;
        }
        if (iter == 2) /* the largest coordinate: q - 1 */
        {
            memcpy(p.c.x, cv->q_le, fq);
            p.c.x[0] -= 1;
        }
        const char *path = tmp_path("proof.json");
        CHECK(proof_write_json(&p, path, err) == CUZK_OK, "write proof: %s", err);
        cuzk_err rc = proof_read_json(&q, curve, path, err);
        CHECK(rc == CUZK_OK, "read proof back: %s", err);
        CHECK(q.curve == curve && g1_eq(&p.a, &q.a) && g2_eq(&p.b, &q.b) && g1_eq(&p.c, &q.c),
              "proof round trip %d on %s", iter, cv->label);
        char *s = proof_to_json(&p);
        size_t n;
        char *f = read_all(path, &n);
        CHECK(s && f && !strcmp(s, f), "proof_to_json equals the file");
        if (iter == 1)
            CHECK(s && strstr(s, "\"pi_a\": [\n  \"0\",\n  \"1\",\n  \"0\"\n ]") &&
                      strstr(s, "\"pi_b\": [\n  [\n   \"0\",\n   \"0\"\n  ],\n  [\n   \"1\",\n   \"0\"\n  ],\n  [\n   \"0\",\n   \"0\"\n  ]\n ]"),
                  "infinity written as snarkjs does: %s", s);
        free(s);
        free(f);
    }
    /* public signals, including none */
    for (uint32_t n = 0; n < 4; n++) {
        uint8_t vals[3 * 32];
        for (uint32_t i = 0; i < n; i++)
            rand_fe(vals + 32 * i, 32);
        cuzk_public pub = {.curve = curve, .n = n, .values = vals}, back;
        const char *path = tmp_path("public.json");
        CHECK(public_write_json(&pub, path, err) == CUZK_OK, "write public: %s", err);
        CHECK(public_read_json(&back, curve, path, err) == CUZK_OK, "read public: %s", err);
        CHECK(back.n == n && (!n || !memcmp(back.values, vals, 32 * n)), "public round trip %u", n);
        public_free(&back);
        if (n == 0) {
            char *s = public_to_json(&pub);
            CHECK(s && !strcmp(s, "[\n]"), "empty public.json is \"[\\n]\" as bfj writes it");
            free(s);
        }
    }
    /* verification key */
    g1_std ic[3];
    cuzk_vk vk = {.curve = curve, .n_public = 2, .ic = ic}, back;
    rand_g1(&vk.alpha1, fq);
    rand_g2(&vk.beta2, fq);
    rand_g2(&vk.gamma2, fq);
    rand_g2(&vk.delta2, fq);
    for (int i = 0; i < 3; i++)
        rand_g1(&ic[i], fq);
    uint8_t ab[12 * FQ_MAX];
    for (int i = 0; i < 12; i++)
        rand_fe(ab + i * fq, fq);
    const char *path = tmp_path("vk.json");
    CHECK(vk_write_json(&vk, ab, path, err) == CUZK_OK, "write vk: %s", err);
    cuzk_err rc = vk_read_json(&back, path, err);
    CHECK(rc == CUZK_OK, "read vk: %s", err);
    if (rc == CUZK_OK) {
        CHECK(back.curve == curve && back.n_public == 2 && g1_eq(&back.alpha1, &vk.alpha1) &&
                  g2_eq(&back.beta2, &vk.beta2) && g2_eq(&back.gamma2, &vk.gamma2) &&
                  g2_eq(&back.delta2, &vk.delta2) && g1_eq(&back.ic[0], &ic[0]) &&
                  g1_eq(&back.ic[2], &ic[2]),
              "vk round trip");
        vk_free(&back);
        CHECK(back.ic == NULL, "vk_free clears ic");
    }
    /* alphabeta nesting: [[[c000, c001], [c010, c011], [c020, c021]], [[c100 ...]]] */
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    json_t *abj = json_object_get(root, "vk_alphabeta_12");
    int nest_ok = json_array_size(abj) == 2;
    for (size_t i = 0; nest_ok && i < 2; i++) {
        json_t *f6 = json_array_get(abj, i);
        nest_ok = json_array_size(f6) == 3;
        for (size_t j = 0; nest_ok && j < 3; j++) {
            json_t *f2 = json_array_get(f6, j);
            nest_ok = json_array_size(f2) == 2;
            for (size_t k = 0; nest_ok && k < 2; k++) {
                uint8_t le[48] = {0};
                nest_ok = le_from_dec(le, fq, json_string_value(json_array_get(f2, k)), NULL) &&
                          !memcmp(le, ab + (6 * i + 2 * j + k) * fq, fq);
            }
        }
    }
    CHECK(nest_ok, "vk_alphabeta_12 nesting and order");
    json_decref(root);
    CHECK(vk_write_json(&vk, NULL, path, err) == CUZK_OK, "write vk without alphabeta: %s", err);
    size_t n;
    char *s = read_all(path, &n);
    CHECK(s && !strstr(s, "alphabeta") && strstr(s, "\"IC\""), "alphabeta omitted when NULL");
    free(s);
}

/* ---- shapes snarkjs accepts and rejects ---- */

static char *json_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *json_fmt(const char *fmt, ...)
{
    static char buf[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return buf;
}

/* a valid-looking BN254 proof body with placeholders */
#define PA "[\"1\", \"2\", \"1\"]"
#define PB "[[\"1\", \"2\"], [\"3\", \"4\"], [\"1\", \"0\"]]"

static void proof_case(const char *text, cuzk_err want, const char *substr, const char *what)
{
    char err[CUZK_ERRLEN] = "";
    cuzk_proof p;
    const char *path = write_text("case.json", text);
    cuzk_err rc = proof_read_json(&p, CURVE_BN254, path, err);
    CHECK(rc == want, "%s: code %d, expected %d (%s)", what, rc, want, err);
    if (substr)
        CHECK(strstr(err, substr) != NULL, "%s: message \"%s\" lacks \"%s\"", what, err, substr);
}

static void test_proof_shapes(void)
{
    char err[CUZK_ERRLEN] = "";
    cuzk_proof p;
    /* accepted: no protocol/curve (rapidsnark), 2-element points, hex, integers, aliases */
    proof_case("{\"pi_a\": [\"1\", \"2\"], \"pi_b\": [[\"1\", \"2\"], [\"3\", \"4\"]], \"pi_c\": [\"0x5\", 6]}",
               CUZK_OK, NULL, "minimal proof");
    const char *path = tmp_path("case.json");
    CHECK(proof_read_json(&p, CURVE_BN254, path, err) == CUZK_OK && p.c.x[0] == 5 &&
              p.c.y[0] == 6 && p.b.x1[0] == 2 && p.b.y0[0] == 3 && !p.a.inf,
          "values of the minimal proof");
    static const char *const aliases[] = {"bn128", "bn254", "BN254", "altbn128", "alt_bn128", "BN-128"};
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        proof_case(json_fmt("{\"pi_a\": %s, \"pi_b\": %s, \"pi_c\": %s, \"protocol\": \"groth16\", \"curve\": \"%s\"}",
                            PA, PB, PA, aliases[i]),
                   CUZK_OK, NULL, aliases[i]);
    proof_case(json_fmt("{\"pi_a\": [\"0\", \"1\", \"0\"], \"pi_b\": [[\"0\", \"0\"], [\"1\", \"0\"], [\"0\", \"0\"]], \"pi_c\": %s}", PA),
               CUZK_OK, NULL, "infinity");
    CHECK(proof_read_json(&p, CURVE_BN254, path, err) == CUZK_OK && p.a.inf && p.b.inf && !p.c.inf,
          "infinity flags");
    /* rejected */
    proof_case("{\"pi_a\": [\"1\", \"2\", \"1\"], \"pi_b\": ", CUZK_EFORMAT, "not valid JSON (line 1",
               "truncated JSON");
    proof_case("[1, 2]", CUZK_EFORMAT, "must be a JSON object", "array root");
    proof_case(json_fmt("{\"pi_a\": %s, \"pi_c\": %s}", PA, PA), CUZK_EFORMAT, "missing \"pi_b\"",
               "missing pi_b");
    proof_case(json_fmt("{\"pi_a\": [\"1\", \"2\", \"1\", \"1\"], \"pi_b\": %s, \"pi_c\": %s}", PB, PA),
               CUZK_EFORMAT, "pi_a has 4 elements", "pi_a arity");
    proof_case(json_fmt("{\"pi_a\": [\"1\"], \"pi_b\": %s, \"pi_c\": %s}", PB, PA), CUZK_EFORMAT,
               "pi_a has 1 elements", "pi_a arity 1");
    proof_case(json_fmt("{\"pi_a\": %s, \"pi_b\": [[\"1\", \"2\", \"3\"], [\"3\", \"4\"]], \"pi_c\": %s}", PA, PA),
               CUZK_EFORMAT, "pi_b[0] has 3 elements", "Fq2 arity");
    proof_case(json_fmt("{\"pi_a\": %s, \"pi_b\": [\"1\", \"2\"], \"pi_c\": %s}", PA, PA),
               CUZK_EFORMAT, "pi_b[0] must be an Fq2 element", "G2 as G1");
    proof_case(json_fmt("{\"pi_a\": [\"1\", \"2\", \"2\"], \"pi_b\": %s, \"pi_c\": %s}", PB, PA),
               CUZK_EFORMAT, "pi_a has z = 2", "z = 2");
    proof_case(json_fmt("{\"pi_a\": %s, \"pi_b\": [[\"1\", \"2\"], [\"3\", \"4\"], [\"0\", \"1\"]], \"pi_c\": %s}", PA, PA),
               CUZK_EFORMAT, "pi_b has z !=", "G2 z = u");
    proof_case(json_fmt("{\"pi_a\": [\"%s\", \"2\"], \"pi_b\": %s, \"pi_c\": %s}", BN_Q, PB, PA),
               CUZK_EFORMAT, "pi_a[0] is not below q of BN254", "x = q");
    proof_case(json_fmt("{\"pi_a\": %s, \"pi_b\": [[\"1\", \"%s\"], [\"3\", \"4\"]], \"pi_c\": %s}", PA, MAX256, PA),
               CUZK_EFORMAT, "pi_b[0][1] is not below q of BN254", "x1 = 2^256-1");
    proof_case(json_fmt("{\"pi_a\": %s, \"pi_b\": %s, \"pi_c\": [\"1\", \"-2\"]}", PA, PB),
               CUZK_EFORMAT, "pi_c[1] is \"-2\", not a decimal", "negative");
    proof_case(json_fmt("{\"pi_a\": %s, \"pi_b\": %s, \"pi_c\": [\"1\", 2.5]}", PA, PB),
               CUZK_EFORMAT, "pi_c[1] must be a decimal or 0x-hex string", "float");
    proof_case(json_fmt("{\"pi_a\": %s, \"pi_b\": %s, \"pi_c\": %s, \"protocol\": \"plonk\"}", PA, PB, PA),
               CUZK_EFORMAT, "protocol is \"plonk\"", "plonk proof");
    proof_case(json_fmt("{\"pi_a\": %s, \"pi_b\": %s, \"pi_c\": %s, \"curve\": \"bls12381\"}", PA, PB, PA),
               CUZK_ECURVE, "proof is for BLS12-381 but the key is BN254", "curve mismatch");
    proof_case(json_fmt("{\"pi_a\": %s, \"pi_b\": %s, \"pi_c\": %s, \"curve\": \"secp256k1\"}", PA, PB, PA),
               CUZK_ECURVE, "unknown curve \"secp256k1\"", "unknown curve");
    cuzk_err rc = proof_read_json(&p, CURVE_BN254, tmp_path("nope.json"), err);
    CHECK(rc == CUZK_EIO && strstr(err, "cannot open"), "missing proof file: %d %s", rc, err);
    /* a 48-byte BLS12-381 coordinate is fine there, and too big for BN254 */
    const char *bls = json_fmt("{\"pi_a\": [\"%s\", \"2\"], \"pi_b\": %s, \"pi_c\": %s}",
                               "4002409555221667393417789825735904156556882819939007885332058136124031650490837864442687629129015664037894272559786",
                               PB, PA);
    write_text("case.json", bls);
    CHECK(proof_read_json(&p, CURVE_BLS12_381, path, err) == CUZK_OK && p.a.x[47] == 0x1a,
          "BLS q-1 accepted: %s", err);
    proof_case(bls, CUZK_EFORMAT, "pi_a[0] is not below q of BN254", "BLS coordinate on BN254");
}

static void test_public_vk_shapes(void)
{
    char err[CUZK_ERRLEN] = "";
    cuzk_public pub;
    const char *path = write_text("pub.json", "[\"1\", \"0x10\", 7]");
    CHECK(public_read_json(&pub, CURVE_BN254, path, err) == CUZK_OK && pub.n == 3 &&
              pub.values[32] == 16 && pub.values[64] == 7,
          "public shapes: %s", err);
    public_free(&pub);
    path = write_text("pub.json", json_fmt("[\"1\", \"%s\"]", BN_R));
    cuzk_err rc = public_read_json(&pub, CURVE_BN254, path, err);
    CHECK(rc == CUZK_EFORMAT && strstr(err, "public signal 1 is not below r of BN254"),
          "public >= r: %d %s", rc, err);
    CHECK(pub.values == NULL, "failed read frees the values");
    path = write_text("pub.json", "{\"a\": 1}");
    rc = public_read_json(&pub, CURVE_BN254, path, err);
    CHECK(rc == CUZK_EFORMAT && strstr(err, "must be a JSON array"), "public object: %s", err);
    path = write_text("pub.json", "[\"1\",]");
    rc = public_read_json(&pub, CURVE_BN254, path, err);
    CHECK(rc == CUZK_EFORMAT && strstr(err, "not valid JSON"), "public bad JSON: %s", err);

    const char *G2 = "[[\"1\", \"2\"], [\"3\", \"4\"], [\"1\", \"0\"]]";
    cuzk_vk vk;
    path = write_text("vk.json", json_fmt("{\"curve\": \"BLS12-381\", \"vk_alpha_1\": [\"1\", \"2\"], "
                                          "\"vk_beta_2\": %s, \"vk_gamma_2\": %s, \"vk_delta_2\": %s, "
                                          "\"IC\": [[\"1\", \"2\"], [\"3\", \"4\", \"1\"]]}",
                                          G2, G2, G2));
    rc = vk_read_json(&vk, path, err);
    CHECK(rc == CUZK_OK && vk.curve == CURVE_BLS12_381 && vk.n_public == 1 && vk.ic[1].x[0] == 3,
          "minimal vk (no protocol, nPublic or alphabeta): %d %s", rc, err);
    vk_free(&vk);
    path = write_text("vk.json", json_fmt("{\"vk_alpha_1\": [\"1\", \"2\"], \"vk_beta_2\": %s, "
                                          "\"vk_gamma_2\": %s, \"vk_delta_2\": %s, \"IC\": [[\"1\", \"2\"]]}",
                                          G2, G2, G2));
    rc = vk_read_json(&vk, path, err);
    CHECK(rc == CUZK_EFORMAT && strstr(err, "missing \"curve\""), "vk without curve: %s", err);
    path = write_text("vk.json", json_fmt("{\"curve\": \"bn128\", \"vk_alpha_1\": [\"1\", \"2\"], "
                                          "\"vk_beta_2\": %s, \"vk_gamma_2\": %s, \"vk_delta_2\": %s, \"IC\": []}",
                                          G2, G2, G2));
    rc = vk_read_json(&vk, path, err);
    CHECK(rc == CUZK_EFORMAT && strstr(err, "\"IC\" must be a non-empty array"), "empty IC: %s", err);
    path = write_text("vk.json", json_fmt("{\"curve\": \"bn128\", \"vk_alpha_1\": [\"1\", \"2\"], "
                                          "\"vk_beta_2\": %s, \"vk_gamma_2\": %s, \"IC\": [[\"1\", \"2\"]]}",
                                          G2, G2));
    rc = vk_read_json(&vk, path, err);
    CHECK(rc == CUZK_EFORMAT && strstr(err, "missing \"vk_delta_2\""), "no delta: %s", err);
    path = write_text("vk.json", json_fmt("{\"curve\": \"bn128\", \"vk_alpha_1\": [\"1\", \"2\"], "
                                          "\"vk_beta_2\": %s, \"vk_gamma_2\": %s, \"vk_delta_2\": %s, "
                                          "\"IC\": [[\"1\", \"2\"], [\"1\"]]}",
                                          G2, G2, G2));
    rc = vk_read_json(&vk, path, err);
    CHECK(rc == CUZK_EFORMAT && strstr(err, "IC[1] has 1 elements"), "bad IC point: %s", err);
    CHECK(vk.ic == NULL, "failed vk read frees IC");
}

/* ---- random damage: every answer names the file, nothing crashes ---- */

static void test_json_damage(void)
{
    const cuzk_curve_info *cv = curve_info(CURVE_BN254);
    cuzk_proof p = {.curve = CURVE_BN254};
    rand_g1(&p.a, cv->fq_bytes);
    rand_g2(&p.b, cv->fq_bytes);
    rand_g1(&p.c, cv->fq_bytes);
    char *good = proof_to_json(&p);
    if (!good) {
        CHECK(0, "proof_to_json");
        return;
    }
    size_t n = strlen(good);
    char *t = malloc(n + 1);
    static const char junk[] = "\"[]{},:0x9-. ";
    int bad = 0;
    for (int k = 0; k < 400 && bad < 5 && t; k++) {
        memcpy(t, good, n + 1);
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        size_t at = (size_t)(rng >> 8) % n;
        if (k % 3 == 0)
            t[at] = junk[(rng >> 40) % (sizeof junk - 1)];
        else if (k % 3 == 1)
            memmove(t + at, t + at + 1, n - at); /* delete one character */
        else
            t[at] = 0; /* cut */
        char err[CUZK_ERRLEN] = "";
        cuzk_proof q;
        const char *path = write_text("damage.json", t);
        cuzk_err rc = proof_read_json(&q, CURVE_BN254, path, err);
        checks++;
        if (rc != CUZK_OK && ((rc != CUZK_EFORMAT && rc != CUZK_ECURVE) || !strstr(err, path))) {
            bad++;
            CHECK(0, "damaged proof %d: code %d, message %s", k, rc, err);
        }
    }
    free(t);
    free(good);
}

/* ---- snarkjs's own files come back byte for byte ---- */

static int same_file_text(const char *orig, const char *mine, const char *what)
{
    size_t n1, n2;
    char *a = read_all(orig, &n1), *b = read_all(mine, &n2);
    int same = a && b && n1 == n2 && !memcmp(a, b, n1);
    if (!same && a && b) {
        size_t i = 0;
        while (i < n1 && i < n2 && a[i] == b[i])
            i++;
        CHECK(0, "%s differs from snarkjs's %s at byte %zu of %zu/%zu", what, orig, i, n1, n2);
    } else {
        CHECK(same, "%s: cannot compare %s", what, orig);
    }
    free(a);
    free(b);
    return same;
}

/* vk_alphabeta_12 parsed independently of json.c, into tower order */
static int alphabeta_from_file(uint8_t *ab, const char *path, size_t fq)
{
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    json_t *a = json_object_get(root, "vk_alphabeta_12");
    int ok = a != NULL;
    for (size_t k = 0; ok && k < 12; k++) {
        json_t *v = json_array_get(json_array_get(json_array_get(a, k / 6), (k / 2) % 3), k % 2);
        ok = json_is_string(v) && le_from_dec(ab + k * fq, fq, json_string_value(v), NULL);
    }
    json_decref(root);
    return ok;
}

static int test_fixture_dir(const char *dir)
{
    char pv[600], pp[600], pu[600], err[CUZK_ERRLEN] = "";
    snprintf(pv, sizeof pv, "%s/vk.json", dir);
    if (access(pv, R_OK) != 0)
        snprintf(pv, sizeof pv, "%s/verification_key.json", dir);
    snprintf(pp, sizeof pp, "%s/proof.json", dir);
    snprintf(pu, sizeof pu, "%s/public.json", dir);
    if (access(pv, R_OK) != 0 || access(pp, R_OK) != 0 || access(pu, R_OK) != 0)
        return 0;
    int failures_before = failures;
    cuzk_vk vk;
    cuzk_err rc = vk_read_json(&vk, pv, err);
    CHECK(rc == CUZK_OK, "%s: %s", pv, err);
    if (rc)
        return 1;
    const cuzk_curve_info *cv = curve_info(vk.curve);
    uint8_t ab[12 * FQ_MAX];
    CHECK(alphabeta_from_file(ab, pv, cv->fq_bytes), "%s: vk_alphabeta_12", pv);
    CHECK(vk_write_json(&vk, ab, tmp_path("fx_vk.json"), err) == CUZK_OK, "write vk: %s", err);
    same_file_text(pv, tmp_path("fx_vk.json"), "vk.json");
    cuzk_proof p;
    rc = proof_read_json(&p, vk.curve, pp, err);
    CHECK(rc == CUZK_OK, "%s: %s", pp, err);
    if (rc == CUZK_OK) {
        CHECK(proof_write_json(&p, tmp_path("fx_proof.json"), err) == CUZK_OK, "%s", err);
        same_file_text(pp, tmp_path("fx_proof.json"), "proof.json");
    }
    cuzk_public pub;
    rc = public_read_json(&pub, vk.curve, pu, err);
    CHECK(rc == CUZK_OK, "%s: %s", pu, err);
    if (rc == CUZK_OK) {
        CHECK(pub.n == vk.n_public, "public.json has %u values, vk %u", pub.n, vk.n_public);
        CHECK(public_write_json(&pub, tmp_path("fx_public.json"), err) == CUZK_OK, "%s", err);
        same_file_text(pu, tmp_path("fx_public.json"), "public.json");
        public_free(&pub);
    }
    printf("  fixture %s: %s, %u public: vk/proof/public JSON %s\n", dir, cv->label,
           vk.n_public, failures == failures_before ? "identical to snarkjs's" : "DIFFER");
    vk_free(&vk);
    return 1;
}

static int test_fixtures(const char *root)
{
    int n = 0;
    DIR *d1 = opendir(root);
    if (!d1)
        return 0;
    struct dirent *e1;
    while ((e1 = readdir(d1))) {
        if (e1->d_name[0] == '.')
            continue;
        char p1[300];
        snprintf(p1, sizeof p1, "%s/%s", root, e1->d_name);
        DIR *d2 = opendir(p1);
        if (!d2)
            continue;
        struct dirent *e2;
        while ((e2 = readdir(d2))) {
            if (e2->d_name[0] == '.')
                continue;
            char p2[580];
            snprintf(p2, sizeof p2, "%s/%s", p1, e2->d_name);
            struct stat st;
            if (stat(p2, &st) == 0 && S_ISDIR(st.st_mode))
                n += test_fixture_dir(p2);
        }
        closedir(d2);
    }
    closedir(d1);
    return n;
}

int main(int argc, char **argv)
{
    /* many small files are written: prefer a RAM file system */
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR")
                       : access("/dev/shm", W_OK) == 0 ? "/dev/shm"
                                                       : "/tmp";
    snprintf(tmpdir, sizeof tmpdir, "%s/json_test.XXXXXX", base);
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 2;
    }
    test_decimal();
    for (int c = 0; c < CURVE_COUNT; c++)
        test_roundtrip((cuzk_curve_id)c);
    test_proof_shapes();
    test_public_vk_shapes();
    test_json_damage();
    const char *root = argc > 1 ? argv[1] : "tests/data";
    if (!test_fixtures(root))
        printf("  no snarkjs fixtures under %s: synthetic cases only\n", root);
    static const char *const leftovers[] = {"proof.json", "public.json", "vk.json", "case.json",
                                            "pub.json", "fx_vk.json", "fx_proof.json",
                                            "fx_public.json", "damage.json"};
    for (size_t i = 0; i < sizeof leftovers / sizeof leftovers[0]; i++)
        unlink(tmp_path(leftovers[i]));
    rmdir(tmpdir);
    printf("json_test: %d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
