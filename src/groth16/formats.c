/* formats.c - readers for the iden3 binary containers: .wtns, Groth16 .zkey, .r1cs.
 *
 * Layouts: docs/FORMATS.md sections 0-3.
 *
 * DESIGN. A file is mapped read-only and validated in three passes before anything
 * points into it: (1) the container header and the section table are scanned, every
 * section is bounds-checked against the file size, and each section type we read is
 * indexed (any order; unknown types ignored; a known type twice is an error); (2) the
 * header section is parsed and every other section's size is checked against the counts
 * it declares; (3) the variable-length or value-constrained payloads (zkey section 4,
 * r1cs section 2, witness values) are walked once. Every failure names the file, the
 * section and what was expected versus found, e.g.
 *   "circuit.zkey: section 5 (A points) is 4096 bytes, expected 6400 (100 x 64)".
 * Error codes: CUZK_EIO (cannot open/map), CUZK_EFORMAT (malformed), CUZK_ECURVE (a
 * prime that is no supported curve's, or two inputs on different curves); a witness
 * of the wrong length for its key is CUZK_EFORMAT (an input error, like a bad file).
 * Views into the mapping are not aligned: sections start at whatever offset the writer
 * left, so consumers read them with memcpy (or copy them) rather than cast them.
 */
#include "groth16/formats.h"

#include <stdio.h>
#include <string.h>

#include "groth16/proof.h"
#include "util/mmap.h"

const char *const zkey_set_names[ZKEY_BASES] = {"A", "B1", "B2", "C", "H"};

/* ---- little helpers ---- */

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const uint8_t *p)
{
    return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

/* a < b for n-byte little-endian integers */
static int lt_le(const uint8_t *a, const uint8_t *b, size_t n)
{
    for (size_t i = n; i-- > 0;)
        if (a[i] != b[i])
            return a[i] < b[i];
    return 0;
}

static unsigned long long ull(uint64_t v) { return (unsigned long long)v; }

static cuzk_err map_open(file_map *m, const char *path, char *err)
{
    memset(m, 0, sizeof *m);
    snprintf(m->path, sizeof m->path, "%s", path);
    const void *base;
    size_t size;
    cuzk_err rc = mmap_ro_open(path, &base, &size, err);
    if (rc != CUZK_OK)
        return rc;
    m->base = (void *)base;
    m->size = size;
    return CUZK_OK;
}

static void map_close(file_map *m)
{
    mmap_ro_close(m->base, m->size);
    m->base = NULL;
    m->size = 0;
}

/* ---- the container (FORMATS.md 0) ---- */

#define SECT_MAX 11 /* highest section type any reader indexes + 1 */

typedef struct sect {
    uint64_t off;  /* payload offset in the file, bytes */
    uint64_t size; /* payload size, bytes */
    int present;   /* 0 / 1 */
} sect;

typedef struct container {
    const char *path;      /* for messages */
    const char *ext;       /* "zkey", "wtns", "r1cs" */
    const char *const *names; /* section names by type, NULL = not read by us */
    int n_names;
    const uint8_t *base;
    uint64_t size;
    uint32_t version;
    sect s[SECT_MAX];
} container;

static const char *sect_name(const container *c, uint32_t type)
{
    if (type < (uint32_t)c->n_names && c->names[type])
        return c->names[type];
    return "unknown";
}

/* Writes a printable rendering of a 4-byte magic into out (>= 17 bytes). */
static void magic_str(char *out, const uint8_t *m)
{
    char *o = out;
    for (int i = 0; i < 4; i++) {
        if (m[i] >= 0x20 && m[i] < 0x7f && m[i] != '"' && m[i] != '\\')
            *o++ = (char)m[i];
        else
            o += sprintf(o, "\\x%02x", m[i]);
    }
    *o = 0;
}

/* Parses the container header and indexes the section table (pass 1). */
static cuzk_err container_scan(container *c, const file_map *m, char *err)
{
    c->base = m->base;
    c->size = m->size;
    memset(c->s, 0, sizeof c->s);
    if (c->size == 0)
        return cuzk_errf(err, CUZK_EFORMAT, "%s: file is empty (expected a .%s file)", c->path,
                         c->ext);
    if (c->size < 12)
        return cuzk_errf(err, CUZK_EFORMAT,
                         "%s: file is %llu bytes, too short for the 12-byte .%s header", c->path,
                         ull(c->size), c->ext);
    if (memcmp(c->base, c->ext, 4) != 0) {
        static const char *const known[] = {"zkey", "wtns", "r1cs", "ptau"};
        for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
            if (memcmp(c->base, known[i], 4) == 0)
                return cuzk_errf(err, CUZK_EFORMAT, "%s: this is a .%s file, expected a .%s file",
                                 c->path, known[i], c->ext);
        char got[20];
        magic_str(got, c->base);
        return cuzk_errf(err, CUZK_EFORMAT, "%s: not a .%s file (magic \"%s\", expected \"%s\")",
                         c->path, c->ext, got, c->ext);
    }
    c->version = rd32(c->base + 4);
    uint32_t n_sections = rd32(c->base + 8);
    uint64_t pos = 12;
    for (uint32_t i = 0; i < n_sections; i++) {
        if (c->size - pos < 12)
            return cuzk_errf(err, CUZK_EFORMAT,
                             "%s: truncated: the header announces %u sections but the file ends "
                             "after %u (at byte %llu of %llu)",
                             c->path, n_sections, i, ull(pos), ull(c->size));
        uint32_t type = rd32(c->base + pos);
        uint64_t size = rd64(c->base + pos + 4);
        pos += 12;
        if (size > c->size - pos)
            return cuzk_errf(err, CUZK_EFORMAT,
                             "%s: truncated: section %u (%s) at byte %llu declares %llu bytes but "
                             "only %llu remain in the file",
                             c->path, type, sect_name(c, type), ull(pos), ull(size),
                             ull(c->size - pos));
        if (type < (uint32_t)c->n_names && c->names[type]) {
            if (c->s[type].present)
                return cuzk_errf(err, CUZK_EFORMAT, "%s: section %u (%s) appears twice", c->path,
                                 type, c->names[type]);
            c->s[type].present = 1;
            c->s[type].off = pos;
            c->s[type].size = size;
        }
        pos += size;
    }
    return CUZK_OK;
}

static cuzk_err container_require(const container *c, uint32_t type, char *err)
{
    if (!c->s[type].present)
        return cuzk_errf(err, CUZK_EFORMAT, "%s: section %u (%s) is missing", c->path, type,
                         sect_name(c, type));
    return CUZK_OK;
}

/* Checks that section `type` holds exactly count x elem bytes. */
static cuzk_err container_expect(const container *c, uint32_t type, uint64_t count, uint64_t elem,
                                 char *err)
{
    uint64_t want = count * elem; /* count < 2^33, elem <= 192: no overflow */
    if (c->s[type].size != want)
        return cuzk_errf(err, CUZK_EFORMAT,
                         "%s: section %u (%s) is %llu bytes, expected %llu (%llu x %llu)", c->path,
                         type, sect_name(c, type), ull(c->s[type].size), ull(want), ull(count),
                         ull(elem));
    return CUZK_OK;
}

static const uint8_t *sect_ptr(const container *c, uint32_t type)
{
    return c->base + c->s[type].off;
}

/* Message text for a prime that is no supported curve's field. */
static void prime_str(char *out, size_t cap, const uint8_t *p, size_t n8)
{
    if (n8 <= 64)
        dec_from_le(out, cap, p, n8);
    else
        snprintf(out, cap, "(%zu-byte integer)", n8);
}

/* Finds the curve whose r is the n8-byte prime at p (header of .wtns and .r1cs). */
static cuzk_err curve_from_r(const container *c, uint32_t type, const uint8_t *p, uint32_t n8,
                             const cuzk_curve_info **out, char *err)
{
    *out = curve_by_r(p, n8);
    if (*out)
        return CUZK_OK;
    char dec[200];
    prime_str(dec, sizeof dec, p, n8);
    return cuzk_errf(err, CUZK_ECURVE,
                     "%s: section %u (%s): prime %s (n8 = %u) is not the scalar field r of BN254 "
                     "or BLS12-381",
                     c->path, type, sect_name(c, type), dec, n8);
}

/* ---- .wtns (FORMATS.md 2) ---- */

static const char *const wtns_names[] = {NULL, "header", "witness values"};

cuzk_err wtns_open(wtns_file *out, const char *path, char *err)
{
    memset(out, 0, sizeof *out);
    cuzk_err rc = map_open(&out->map, path, err);
    if (rc != CUZK_OK)
        return rc;
    container c = {.path = path, .ext = "wtns", .names = wtns_names, .n_names = 3};
    if ((rc = container_scan(&c, &out->map, err)) != CUZK_OK)
        goto fail;
    if (c.version != 2) {
        rc = cuzk_errf(err, CUZK_EFORMAT, "%s: .wtns version %u, expected 2", path, c.version);
        goto fail;
    }
    if ((rc = container_require(&c, 1, err)) != CUZK_OK ||
        (rc = container_require(&c, 2, err)) != CUZK_OK)
        goto fail;
    const uint8_t *h = sect_ptr(&c, 1);
    if (c.s[1].size < 4) {
        rc = cuzk_errf(err, CUZK_EFORMAT, "%s: section 1 (header) is %llu bytes, too short", path,
                       ull(c.s[1].size));
        goto fail;
    }
    uint32_t n8 = rd32(h);
    if (c.s[1].size != 8 + (uint64_t)n8) {
        rc = cuzk_errf(err, CUZK_EFORMAT,
                       "%s: section 1 (header) is %llu bytes, expected %llu (n8 = %u: 4 + n8 + 4)",
                       path, ull(c.s[1].size), ull(8 + (uint64_t)n8), n8);
        goto fail;
    }
    if ((rc = curve_from_r(&c, 1, h + 4, n8, &out->curve, err)) != CUZK_OK)
        goto fail;
    out->n_witness = rd32(h + 4 + n8);
    if ((rc = container_expect(&c, 2, out->n_witness, n8, err)) != CUZK_OK)
        goto fail;
    out->values = sect_ptr(&c, 2);
    for (uint32_t i = 0; i < out->n_witness; i++)
        if (!lt_le(out->values + (size_t)i * n8, out->curve->r_le, n8)) {
            rc = cuzk_errf(err, CUZK_EFORMAT,
                           "%s: section 2 (witness values): value %u is not below r of %s", path,
                           i, out->curve->label);
            goto fail;
        }
    return CUZK_OK;
fail:
    wtns_close(out);
    return rc;
}

void wtns_close(wtns_file *w)
{
    map_close(&w->map);
    memset(w, 0, sizeof *w);
}

/* ---- .zkey, Groth16 (FORMATS.md 3) ---- */

static const char *const zkey_names[] = {
    NULL,           "header",    "Groth16 header", "IC points", "coefficients", "A points",
    "B1 points",    "B2 points", "C points",       "H points",  "contributions"};

/* log2 of the largest power-of-two domain with roots of unity (FORMATS.md 4: S) */
static unsigned two_adicity(const cuzk_curve_info *cv)
{
    return cv->id == CURVE_BN254 ? 28 : 32;
}

/* Parses section 2 (pass 2, header part). */
static cuzk_err zkey_header(zkey_file *z, const container *c, char *err)
{
    const char *path = c->path;
    const uint8_t *h = sect_ptr(c, 2);
    uint64_t size = c->s[2].size;
    if (size < 4)
        return cuzk_errf(err, CUZK_EFORMAT, "%s: section 2 (Groth16 header) is %llu bytes, too short",
                         path, ull(size));
    uint32_t n8q = rd32(h);
    if (n8q != 32 && n8q != 48)
        return cuzk_errf(err, CUZK_ECURVE,
                         "%s: section 2 (Groth16 header): n8q = %u, expected 32 (BN254) or 48 "
                         "(BLS12-381)",
                         path, n8q);
    if (size < 8 + (uint64_t)n8q)
        return cuzk_errf(err, CUZK_EFORMAT, "%s: section 2 (Groth16 header) is %llu bytes, too short",
                         path, ull(size));
    const uint8_t *q = h + 4;
    uint32_t n8r = rd32(h + 4 + n8q);
    const cuzk_curve_info *cv = curve_by_q(q, n8q);
    if (!cv) {
        char dec[200];
        prime_str(dec, sizeof dec, q, n8q);
        return cuzk_errf(err, CUZK_ECURVE,
                         "%s: section 2 (Groth16 header): q = %s is not the base field of BN254 or "
                         "BLS12-381",
                         path, dec);
    }
    if (n8r != cv->fr_bytes)
        return cuzk_errf(err, CUZK_ECURVE,
                         "%s: section 2 (Groth16 header): n8r = %u, expected %zu for %s", path, n8r,
                         cv->fr_bytes, cv->label);
    uint64_t want = 4 + n8q + 4 + n8r + 12 + 3 * cv->g1_bytes + 3 * cv->g2_bytes;
    if (size != want)
        return cuzk_errf(err, CUZK_EFORMAT,
                         "%s: section 2 (Groth16 header) is %llu bytes, expected %llu for %s", path,
                         ull(size), ull(want), cv->label);
    const uint8_t *r = q + n8q + 4;
    if (memcmp(r, cv->r_le, n8r) != 0) {
        const cuzk_curve_info *other = curve_by_r(r, n8r);
        if (other)
            return cuzk_errf(err, CUZK_ECURVE,
                             "%s: section 2 (Groth16 header): q is %s's but r is %s's", path,
                             cv->label, other->label);
        char dec[200];
        prime_str(dec, sizeof dec, r, n8r);
        return cuzk_errf(err, CUZK_ECURVE,
                         "%s: section 2 (Groth16 header): r = %s is not the scalar field of %s",
                         path, dec, cv->label);
    }
    const uint8_t *p = r + n8r;
    z->curve = cv;
    z->n_vars = rd32(p);
    z->n_public = rd32(p + 4);
    z->domain_size = rd32(p + 8);
    p += 12;
    if ((uint64_t)z->n_public + 1 > z->n_vars)
        return cuzk_errf(err, CUZK_EFORMAT,
                         "%s: section 2 (Groth16 header): n_public = %u needs at least %llu "
                         "variables, the key has %u",
                         path, z->n_public, ull((uint64_t)z->n_public + 1), z->n_vars);
    uint32_t d = z->domain_size;
    if (d == 0 || (d & (d - 1)) != 0)
        return cuzk_errf(err, CUZK_EFORMAT,
                         "%s: section 2 (Groth16 header): domain size %u is not a power of two",
                         path, d);
    z->log_domain = 0;
    while ((1u << z->log_domain) < d)
        z->log_domain++;
    if (z->log_domain >= two_adicity(cv))
        return cuzk_errf(err, CUZK_EFORMAT,
                         "%s: section 2 (Groth16 header): domain size 2^%u is too large for %s "
                         "(at most 2^%u)",
                         path, z->log_domain, cv->label, two_adicity(cv) - 1);
    z->alpha1 = p;
    p += cv->g1_bytes;
    z->beta1 = p;
    p += cv->g1_bytes;
    z->beta2 = p;
    p += cv->g2_bytes;
    z->gamma2 = p;
    p += cv->g2_bytes;
    z->delta1 = p;
    p += cv->g1_bytes;
    z->delta2 = p;
    return CUZK_OK;
}

/* Checks section 4 against the header and walks its records once (pass 3). */
static cuzk_err zkey_coefs(zkey_file *z, const container *c, char *err)
{
    const char *path = c->path;
    uint64_t size = c->s[4].size;
    size_t n8r = z->curve->fr_bytes, rec = 12 + n8r;
    if (size < 4)
        return cuzk_errf(err, CUZK_EFORMAT,
                         "%s: section 4 (coefficients) is %llu bytes, too short for its count",
                         path, ull(size));
    const uint8_t *s = sect_ptr(c, 4);
    z->n_coefs = rd32(s);
    uint64_t want = 4 + (uint64_t)z->n_coefs * rec;
    if (size != want)
        return cuzk_errf(err, CUZK_EFORMAT,
                         "%s: section 4 (coefficients) is %llu bytes, expected %llu (4 + %u x %zu)",
                         path, ull(size), ull(want), z->n_coefs, rec);
    z->coefs = s + 4;
    const uint8_t *p = z->coefs;
    for (uint32_t i = 0; i < z->n_coefs; i++, p += rec) {
        uint32_t m = rd32(p), row = rd32(p + 4), sig = rd32(p + 8);
        if (m > 1)
            return cuzk_errf(err, CUZK_EFORMAT,
                             "%s: section 4 (coefficients) record %u: matrix %u, expected 0 (A) "
                             "or 1 (B)",
                             path, i, m);
        if (row >= z->domain_size)
            return cuzk_errf(err, CUZK_EFORMAT,
                             "%s: section 4 (coefficients) record %u: row %u is outside the "
                             "domain of %u rows",
                             path, i, row, z->domain_size);
        if (sig >= z->n_vars)
            return cuzk_errf(err, CUZK_EFORMAT,
                             "%s: section 4 (coefficients) record %u: signal %u, but the key has "
                             "%u variables",
                             path, i, sig, z->n_vars);
        if (!lt_le(p + 12, z->curve->r_le, n8r))
            return cuzk_errf(err, CUZK_EFORMAT,
                             "%s: section 4 (coefficients) record %u: value is not below r of %s",
                             path, i, z->curve->label);
    }
    return CUZK_OK;
}

cuzk_err zkey_open(zkey_file *out, const char *path, char *err)
{
    memset(out, 0, sizeof *out);
    cuzk_err rc = map_open(&out->map, path, err);
    if (rc != CUZK_OK)
        return rc;
    container c = {.path = path, .ext = "zkey", .names = zkey_names, .n_names = 11};
    if ((rc = container_scan(&c, &out->map, err)) != CUZK_OK)
        goto fail;
    if (c.version < 1 || c.version > 2) {
        rc = cuzk_errf(err, CUZK_EFORMAT, "%s: .zkey version %u, expected 1 or 2", path,
                       c.version);
        goto fail;
    }
    if ((rc = container_require(&c, 1, err)) != CUZK_OK)
        goto fail;
    if (c.s[1].size != 4) {
        rc = cuzk_errf(err, CUZK_EFORMAT, "%s: section 1 (header) is %llu bytes, expected 4", path,
                       ull(c.s[1].size));
        goto fail;
    }
    uint32_t protocol = rd32(sect_ptr(&c, 1));
    if (protocol != 1) {
        const char *what = protocol == 2 ? "a PLONK key" : protocol == 10 ? "an FFLONK key" : NULL;
        if (what)
            rc = cuzk_errf(err, CUZK_EFORMAT,
                           "%s: this is %s (protocol %u); cuzk proves Groth16 only (protocol 1)",
                           path, what, protocol);
        else
            rc = cuzk_errf(err, CUZK_EFORMAT,
                           "%s: section 1 (header): unknown protocol %u, expected 1 (Groth16)",
                           path, protocol);
        goto fail;
    }
    for (uint32_t t = 2; t <= 9; t++)
        if ((rc = container_require(&c, t, err)) != CUZK_OK)
            goto fail;
    if ((rc = zkey_header(out, &c, err)) != CUZK_OK)
        goto fail;
    const cuzk_curve_info *cv = out->curve;
    uint64_t n_c = (uint64_t)out->n_vars - out->n_public - 1;
    if ((rc = container_expect(&c, 3, (uint64_t)out->n_public + 1, cv->g1_bytes, err)) ||
        (rc = container_expect(&c, 5, out->n_vars, cv->g1_bytes, err)) ||
        (rc = container_expect(&c, 6, out->n_vars, cv->g1_bytes, err)) ||
        (rc = container_expect(&c, 7, out->n_vars, cv->g2_bytes, err)) ||
        (rc = container_expect(&c, 8, n_c, cv->g1_bytes, err)) ||
        (rc = container_expect(&c, 9, out->domain_size, cv->g1_bytes, err)))
        goto fail;
    if ((rc = zkey_coefs(out, &c, err)) != CUZK_OK)
        goto fail;
    out->ic = sect_ptr(&c, 3);
    static const uint32_t base_sect[ZKEY_BASES] = {5, 6, 7, 8, 9};
    for (int i = 0; i < ZKEY_BASES; i++)
        out->bases[i] = sect_ptr(&c, base_sect[i]);
    out->n_bases[ZKEY_A] = out->n_vars;
    out->n_bases[ZKEY_B1] = out->n_vars;
    out->n_bases[ZKEY_B2] = out->n_vars;
    out->n_bases[ZKEY_C] = (uint32_t)n_c;
    out->n_bases[ZKEY_H] = out->domain_size;
    return CUZK_OK;
fail:
    zkey_close(out);
    return rc;
}

void zkey_close(zkey_file *z)
{
    map_close(&z->map);
    memset(z, 0, sizeof *z);
}

cuzk_err zkey_check_witness(const zkey_file *z, const wtns_file *w, char *err)
{
    if (!z->curve || !w->curve)
        return cuzk_errf(err, CUZK_EINVAL, "key or witness is not open");
    if (z->curve != w->curve)
        return cuzk_errf(err, CUZK_ECURVE, "witness is for %s but the key is %s (%s, %s)",
                         w->curve->label, z->curve->label, w->map.path, z->map.path);
    if (w->n_witness != z->n_vars)
        return cuzk_errf(err, CUZK_EFORMAT, "witness has %u values, the key expects %u (%s, %s)",
                         w->n_witness, z->n_vars, w->map.path, z->map.path);
    size_t n8 = w->curve->fr_bytes;
    uint8_t one[32] = {1};
    if (w->n_witness == 0 || memcmp(w->values, one, n8) != 0) {
        char dec[100] = "missing";
        if (w->n_witness)
            dec_from_le(dec, sizeof dec, w->values, n8);
        return cuzk_errf(err, CUZK_EFORMAT,
                         "%s: witness value 0 (the constant ONE wire) is %s, expected 1",
                         w->map.path, dec);
    }
    /* every value is below r: wtns_open checked them (checking them again on every proof cost
       a 2^24-constraint proof about 90 ms of one CPU core) */
    return CUZK_OK;
}

/* ---- .r1cs (FORMATS.md 1) ---- */

static const char *const r1cs_names[] = {NULL, "header", "constraints", "wire-to-label map"};

/* Walks section 2 once: nConstraints x 3 linear combinations (pass 3). */
static cuzk_err r1cs_constraints(r1cs_file *r, const container *c, char *err)
{
    static const char lc_name[3] = {'A', 'B', 'C'};
    const uint8_t *p = sect_ptr(c, 2);
    uint64_t size = c->s[2].size, pos = 0;
    size_t n8 = r->curve->fr_bytes, term = 4 + n8;
    for (uint32_t k = 0; k < r->n_constraints; k++)
        for (int l = 0; l < 3; l++) {
            if (size - pos < 4)
                return cuzk_errf(err, CUZK_EFORMAT,
                                 "%s: section 2 (constraints) ends inside constraint %u of %u "
                                 "(%llu bytes)",
                                 c->path, k, r->n_constraints, ull(size));
            uint32_t n_terms = rd32(p + pos);
            pos += 4;
            if ((uint64_t)n_terms * term > size - pos)
                return cuzk_errf(err, CUZK_EFORMAT,
                                 "%s: section 2 (constraints): constraint %u, %c has %u terms but "
                                 "only %llu bytes remain",
                                 c->path, k, lc_name[l], n_terms, ull(size - pos));
            for (uint32_t t = 0; t < n_terms; t++, pos += term) {
                uint32_t wire = rd32(p + pos);
                if (wire >= r->n_wires)
                    return cuzk_errf(err, CUZK_EFORMAT,
                                     "%s: section 2 (constraints): constraint %u, %c: wire %u but "
                                     "the circuit has %u wires",
                                     c->path, k, lc_name[l], wire, r->n_wires);
                if (!lt_le(p + pos + 4, r->curve->r_le, n8))
                    return cuzk_errf(err, CUZK_EFORMAT,
                                     "%s: section 2 (constraints): constraint %u, %c: coefficient "
                                     "of wire %u is not below the prime",
                                     c->path, k, lc_name[l], wire);
            }
        }
    if (pos != size)
        return cuzk_errf(err, CUZK_EFORMAT,
                         "%s: section 2 (constraints) is %llu bytes, but its %u constraints end "
                         "at %llu",
                         c->path, ull(size), r->n_constraints, ull(pos));
    r->constraints = p;
    r->constraints_size = (size_t)size;
    return CUZK_OK;
}

cuzk_err r1cs_open(r1cs_file *out, const char *path, char *err)
{
    memset(out, 0, sizeof *out);
    cuzk_err rc = map_open(&out->map, path, err);
    if (rc != CUZK_OK)
        return rc;
    container c = {.path = path, .ext = "r1cs", .names = r1cs_names, .n_names = 4};
    if ((rc = container_scan(&c, &out->map, err)) != CUZK_OK)
        goto fail;
    if (c.version != 1) {
        rc = cuzk_errf(err, CUZK_EFORMAT, "%s: .r1cs version %u, expected 1", path, c.version);
        goto fail;
    }
    if ((rc = container_require(&c, 1, err)) != CUZK_OK ||
        (rc = container_require(&c, 2, err)) != CUZK_OK)
        goto fail;
    const uint8_t *h = sect_ptr(&c, 1);
    if (c.s[1].size < 4) {
        rc = cuzk_errf(err, CUZK_EFORMAT, "%s: section 1 (header) is %llu bytes, too short", path,
                       ull(c.s[1].size));
        goto fail;
    }
    uint32_t n8 = rd32(h);
    uint64_t want = 4 + (uint64_t)n8 + 4 * 4 + 8 + 4;
    if (c.s[1].size != want) {
        rc = cuzk_errf(err, CUZK_EFORMAT,
                       "%s: section 1 (header) is %llu bytes, expected %llu (n8 = %u)", path,
                       ull(c.s[1].size), ull(want), n8);
        goto fail;
    }
    if ((rc = curve_from_r(&c, 1, h + 4, n8, &out->curve, err)) != CUZK_OK)
        goto fail;
    const uint8_t *p = h + 4 + n8;
    out->n_wires = rd32(p);
    out->n_pub_out = rd32(p + 4);
    out->n_pub_in = rd32(p + 8);
    out->n_prv_in = rd32(p + 12);
    out->n_labels = rd64(p + 16);
    out->n_constraints = rd32(p + 24);
    uint64_t need = 1 + (uint64_t)out->n_pub_out + out->n_pub_in + out->n_prv_in;
    if (need > out->n_wires) {
        rc = cuzk_errf(err, CUZK_EFORMAT,
                       "%s: section 1 (header): %u wires cannot hold ONE + %u outputs + %u public "
                       "inputs + %u private inputs",
                       path, out->n_wires, out->n_pub_out, out->n_pub_in, out->n_prv_in);
        goto fail;
    }
    if (c.s[3].present && (rc = container_expect(&c, 3, out->n_wires, 8, err)) != CUZK_OK)
        goto fail;
    if ((rc = r1cs_constraints(out, &c, err)) != CUZK_OK)
        goto fail;
    return CUZK_OK;
fail:
    r1cs_close(out);
    return rc;
}

void r1cs_close(r1cs_file *r)
{
    map_close(&r->map);
    memset(r, 0, sizeof *r);
}
