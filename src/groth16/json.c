/* json.c - snarkjs JSON for proofs, public signals and verification keys (proof.h).
 *
 * Shapes: docs/FORMATS.md section 5.
 *
 * DESIGN. Writing is done by hand so the bytes match snarkjs 0.7.6 exactly: snarkjs
 * writes proof.json, public.json and verification_key.json with bfj.write(obj, {space:
 * 1}), which is JSON.stringify(obj, null, 1) except that an empty array is "[\n]" (at
 * its indentation) rather than "[]"; there is no trailing newline. Numbers are decimal
 * strings, points affine with z = "1"; the point at infinity is ["0","1","0"] (G1) and
 * [["0","0"],["1","0"],["0","0"]] (G2), as ffjavascript's toObject writes it.
 * Reading uses jansson and accepts what `snarkjs groth16 verify` accepts: decimal or
 * 0x-hex strings (or small JSON integers), points of 2 or 3 coordinates, the third being 1
 * (affine) or 0 (infinity), no protocol/curve in the proof, curve aliases. Unlike
 * snarkjs, coordinates >= q are rejected rather than reduced.
 */
#include "groth16/proof.h"
#include "util/le.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- decimal <-> little-endian ---- */

#define NUM_MAX 128 /* bytes: the widest integer dec_from_le renders */

void dec_from_le(char *out, size_t cap, const uint8_t *le, size_t n)
{
    if (!cap)
        return;
    if (n > NUM_MAX)
        n = NUM_MAX;
    uint32_t w[NUM_MAX / 4] = {0}; /* little-endian 32-bit limbs */
    for (size_t i = 0; i < n; i++)
        w[i / 4] |= (uint32_t)le[i] << (8 * (i % 4));
    size_t nw = (n + 3) / 4;
    char tmp[NUM_MAX * 3 + 2]; /* digits, least significant first */
    size_t nd = 0;
    for (;;) {
        while (nw && !w[nw - 1])
            nw--;
        if (!nw)
            break;
        uint64_t rem = 0; /* divide by 10^9, keep the remainder */
        for (size_t i = nw; i-- > 0;) {
            uint64_t cur = rem << 32 | w[i];
            w[i] = (uint32_t)(cur / 1000000000u);
            rem = cur % 1000000000u;
        }
        int last = 1;
        for (size_t i = 0; i < nw; i++)
            if (w[i])
                last = 0;
        for (int k = 0; k < 9 && (rem || !last); k++) {
            tmp[nd++] = (char)('0' + rem % 10);
            rem /= 10;
        }
    }
    if (!nd)
        tmp[nd++] = '0';
    size_t o = 0;
    while (nd && o + 1 < cap)
        out[o++] = tmp[--nd];
    out[o] = 0;
}

enum { NUM_OK = 0, NUM_SYNTAX = 1, NUM_WIDE = 2, NUM_BOUND = 3 };

/* Parses decimal or 0x-hex into n LE bytes; one of NUM_*. */
static int num_parse(uint8_t *le, size_t n, const char *s, const uint8_t *bound_le)
{
    memset(le, 0, n);
    unsigned base = 10;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
    }
    if (!*s)
        return NUM_SYNTAX;
    for (; *s; s++) {
        unsigned d;
        if (*s >= '0' && *s <= '9')
            d = (unsigned)(*s - '0');
        else if (base == 16 && *s >= 'a' && *s <= 'f')
            d = (unsigned)(*s - 'a' + 10);
        else if (base == 16 && *s >= 'A' && *s <= 'F')
            d = (unsigned)(*s - 'A' + 10);
        else
            return NUM_SYNTAX;
        unsigned carry = d; /* le = le * base + d */
        for (size_t i = 0; i < n; i++) {
            unsigned v = le[i] * base + carry;
            le[i] = (uint8_t)v;
            carry = v >> 8;
        }
        if (carry)
            return NUM_WIDE;
    }
    if (bound_le) {
        for (size_t i = n; i-- > 0;)
            if (le[i] != bound_le[i])
                return le[i] < bound_le[i] ? NUM_OK : NUM_BOUND;
        return NUM_BOUND;
    }
    return NUM_OK;
}

int le_from_dec(uint8_t *le, size_t n, const char *s, const uint8_t *bound_le)
{
    return num_parse(le, n, s, bound_le) == NUM_OK;
}

/* ---- writer: bfj/JSON.stringify(obj, null, 1) layout ---- */

typedef struct jw {
    char *buf;
    size_t len, cap;
    int depth;     /* open containers */
    int first;     /* next item is the first of its container */
    int after_key; /* next value follows "key": on the same line */
    int oom;
} jw;

static void jw_put(jw *w, const char *s, size_t n)
{
    if (w->oom)
        return;
    if (w->len + n + 1 > w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 4096;
        while (cap < w->len + n + 1)
            cap *= 2;
        char *b = realloc(w->buf, cap);
        if (!b) {
            w->oom = 1;
            return;
        }
        w->buf = b;
        w->cap = cap;
    }
    memcpy(w->buf + w->len, s, n);
    w->len += n;
    w->buf[w->len] = 0;
}

static void jw_puts(jw *w, const char *s) { jw_put(w, s, strlen(s)); }

static void jw_newline(jw *w)
{
    jw_put(w, "\n", 1);
    for (int i = 0; i < w->depth; i++)
        jw_put(w, " ", 1);
}

/* separator and indentation before a value or a key */
static void jw_item(jw *w)
{
    if (w->after_key) {
        w->after_key = 0;
        return;
    }
    if (w->depth == 0)
        return;
    if (!w->first)
        jw_put(w, ",", 1);
    w->first = 0;
    jw_newline(w);
}

static void jw_open(jw *w, char c)
{
    jw_item(w);
    jw_put(w, &c, 1);
    w->depth++;
    w->first = 1;
}

static void jw_close(jw *w, char c)
{
    w->depth--;
    jw_newline(w);
    jw_put(w, &c, 1);
    w->first = 0;
}

static void jw_key(jw *w, const char *k)
{
    jw_item(w);
    jw_put(w, "\"", 1);
    jw_puts(w, k);
    jw_put(w, "\": ", 3);
    w->after_key = 1;
}

static void jw_str(jw *w, const char *s)
{
    jw_item(w);
    jw_put(w, "\"", 1);
    jw_puts(w, s);
    jw_put(w, "\"", 1);
}

static void jw_uint(jw *w, unsigned long long v)
{
    char b[32];
    snprintf(b, sizeof b, "%llu", v);
    jw_item(w);
    jw_puts(w, b);
}

static void jw_num(jw *w, const uint8_t *le, size_t n)
{
    char d[NUM_MAX * 3 + 2];
    dec_from_le(d, sizeof d, le, n);
    jw_str(w, d);
}

static void jw_g1(jw *w, const g1_std *p, size_t fq)
{
    jw_open(w, '[');
    if (p->inf) {
        jw_str(w, "0");
        jw_str(w, "1");
        jw_str(w, "0");
    } else {
        jw_num(w, p->x, fq);
        jw_num(w, p->y, fq);
        jw_str(w, "1");
    }
    jw_close(w, ']');
}

static void jw_fq2(jw *w, const uint8_t *c0, const uint8_t *c1, size_t fq)
{
    jw_open(w, '[');
    jw_num(w, c0, fq);
    jw_num(w, c1, fq);
    jw_close(w, ']');
}

static void jw_fq2_small(jw *w, const char *c0, const char *c1)
{
    jw_open(w, '[');
    jw_str(w, c0);
    jw_str(w, c1);
    jw_close(w, ']');
}

static void jw_g2(jw *w, const g2_std *p, size_t fq)
{
    jw_open(w, '[');
    if (p->inf) {
        jw_fq2_small(w, "0", "0");
        jw_fq2_small(w, "1", "0");
        jw_fq2_small(w, "0", "0");
    } else {
        jw_fq2(w, p->x0, p->x1, fq);
        jw_fq2(w, p->y0, p->y1, fq);
        jw_fq2_small(w, "1", "0");
    }
    jw_close(w, ']');
}

static char *jw_finish(jw *w)
{
    if (w->oom || !w->buf) {
        free(w->buf);
        return NULL;
    }
    return w->buf;
}

char *proof_to_json(const cuzk_proof *p)
{
    const cuzk_curve_info *cv = curve_info(p->curve);
    if (!cv)
        return NULL;
    jw w = {0};
    jw_open(&w, '{');
    jw_key(&w, "pi_a");
    jw_g1(&w, &p->a, cv->fq_bytes);
    jw_key(&w, "pi_b");
    jw_g2(&w, &p->b, cv->fq_bytes);
    jw_key(&w, "pi_c");
    jw_g1(&w, &p->c, cv->fq_bytes);
    jw_key(&w, "protocol");
    jw_str(&w, "groth16");
    jw_key(&w, "curve");
    jw_str(&w, cv->name);
    jw_close(&w, '}');
    return jw_finish(&w);
}

char *public_to_json(const cuzk_public *pub)
{
    const cuzk_curve_info *cv = curve_info(pub->curve);
    if (!cv)
        return NULL;
    jw w = {0};
    jw_open(&w, '[');
    for (uint32_t i = 0; i < pub->n; i++)
        jw_num(&w, pub->values + (size_t)i * cv->fr_bytes, cv->fr_bytes);
    jw_close(&w, ']');
    return jw_finish(&w);
}

static char *vk_to_json(const cuzk_vk *vk, const uint8_t *ab)
{
    const cuzk_curve_info *cv = curve_info(vk->curve);
    if (!cv)
        return NULL;
    size_t fq = cv->fq_bytes;
    jw w = {0};
    jw_open(&w, '{');
    jw_key(&w, "protocol");
    jw_str(&w, "groth16");
    jw_key(&w, "curve");
    jw_str(&w, cv->name);
    jw_key(&w, "nPublic");
    jw_uint(&w, vk->n_public);
    jw_key(&w, "vk_alpha_1");
    jw_g1(&w, &vk->alpha1, fq);
    jw_key(&w, "vk_beta_2");
    jw_g2(&w, &vk->beta2, fq);
    jw_key(&w, "vk_gamma_2");
    jw_g2(&w, &vk->gamma2, fq);
    jw_key(&w, "vk_delta_2");
    jw_g2(&w, &vk->delta2, fq);
    if (ab) { /* Fq12 = 2 x Fq6 = 2 x 3 x Fq2, coefficients in tower order */
        jw_key(&w, "vk_alphabeta_12");
        jw_open(&w, '[');
        for (int i = 0; i < 2; i++) {
            jw_open(&w, '[');
            for (int j = 0; j < 3; j++)
                jw_fq2(&w, ab + (size_t)(6 * i + 2 * j) * fq, ab + (size_t)(6 * i + 2 * j + 1) * fq,
                       fq);
            jw_close(&w, ']');
        }
        jw_close(&w, ']');
    }
    jw_key(&w, "IC");
    jw_open(&w, '[');
    for (uint32_t i = 0; vk->ic && i <= vk->n_public; i++)
        jw_g1(&w, &vk->ic[i], fq);
    jw_close(&w, ']');
    jw_close(&w, '}');
    return jw_finish(&w);
}

static cuzk_err write_text(const char *path, const char *text, const char *what, char *err)
{
    if (!text)
        return cuzk_errf(err, CUZK_ENOMEM, "%s: out of memory formatting the %s", path, what);
    FILE *f = fopen(path, "w");
    if (!f)
        return cuzk_errf(err, CUZK_EIO, "%s: cannot create: %s", path, strerror(errno));
    size_t n = strlen(text);
    int ok = fwrite(text, 1, n, f) == n;
    int e = errno;
    if (fclose(f) != 0 && ok) {
        ok = 0;
        e = errno;
    }
    if (!ok)
        return cuzk_errf(err, CUZK_EIO, "%s: cannot write the %s: %s", path, what, strerror(e));
    return CUZK_OK;
}

cuzk_err proof_write_json(const cuzk_proof *p, const char *path, char *err)
{
    if (!curve_info(p->curve))
        return cuzk_errf(err, CUZK_EINVAL, "%s: proof has no valid curve", path);
    char *s = proof_to_json(p);
    cuzk_err rc = write_text(path, s, "proof", err);
    free(s);
    return rc;
}

cuzk_err public_write_json(const cuzk_public *pub, const char *path, char *err)
{
    if (!curve_info(pub->curve))
        return cuzk_errf(err, CUZK_EINVAL, "%s: public signals have no valid curve", path);
    char *s = public_to_json(pub);
    cuzk_err rc = write_text(path, s, "public signals", err);
    free(s);
    return rc;
}

cuzk_err vk_write_json(const cuzk_vk *vk, const uint8_t *alphabeta_fq12_std, const char *path,
                       char *err)
{
    if (!curve_info(vk->curve))
        return cuzk_errf(err, CUZK_EINVAL, "%s: verification key has no valid curve", path);
    if (!vk->ic)
        return cuzk_errf(err, CUZK_EINVAL, "%s: verification key has no IC points", path);
    char *s = vk_to_json(vk, alphabeta_fq12_std);
    cuzk_err rc = write_text(path, s, "verification key", err);
    free(s);
    return rc;
}

/* ---- readers ---- */

typedef struct jr {
    const char *path;               /* for messages */
    const cuzk_curve_info *cv;
    char *err;
} jr;

static cuzk_err jr_load(json_t **root, const char *path, char *err)
{
    json_error_t je;
    *root = json_load_file(path, 0, &je);
    if (*root)
        return CUZK_OK;
    if (json_error_code(&je) == json_error_cannot_open_file)
        return cuzk_errf(err, CUZK_EIO, "%s: cannot open: %s", path, je.text);
    return cuzk_errf(err, CUZK_EFORMAT, "%s: not valid JSON (line %d, column %d): %s", path,
                     je.line, je.column, je.text);
}

/* the document from a file (text NULL), or from text (path then names it in messages) */
static cuzk_err jr_root(json_t **root, const char *path, const char *text, char *err)
{
    if (!text)
        return jr_load(root, path, err);
    json_error_t je;
    *root = json_loads(text, 0, &je);
    if (*root)
        return CUZK_OK;
    return cuzk_errf(err, CUZK_EFORMAT, "%s: not valid JSON (line %d, column %d): %s", path, je.line, je.column,
                     je.text);
}

/* One number (decimal/0x-hex string or a non-negative JSON integer) below bound. */
static cuzk_err jr_num(const jr *r, uint8_t *le, size_t n, const json_t *v, const uint8_t *bound,
                       const char *bound_name, const char *where)
{
    char buf[32];
    const char *s;
    if (json_is_string(v)) {
        s = json_string_value(v);
    } else if (json_is_integer(v) && json_integer_value(v) >= 0) {
        snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v));
        s = buf;
    } else {
        return cuzk_errf(r->err, CUZK_EFORMAT,
                         "%s: %s must be a decimal or 0x-hex string", r->path, where);
    }
    switch (num_parse(le, n, s, bound)) {
    case NUM_OK:
        return CUZK_OK;
    case NUM_SYNTAX:
        return cuzk_errf(r->err, CUZK_EFORMAT,
                         "%s: %s is \"%.60s\", not a decimal or 0x-hex number", r->path, where, s);
    default:
        return cuzk_errf(r->err, CUZK_EFORMAT, "%s: %s is not below %s of %s", r->path, where,
                         bound_name, r->cv->label);
    }
}

static int le_is_one(const uint8_t *a, size_t n)
{
    return a[0] == 1 && le_is_zero(a + 1, n - 1);
}

static cuzk_err jr_array(const jr *r, const json_t *v, size_t min, size_t max, const char *where,
                         const char *shape)
{
    if (!json_is_array(v))
        return cuzk_errf(r->err, CUZK_EFORMAT, "%s: %s must be %s", r->path, where, shape);
    size_t n = json_array_size(v);
    if (n < min || n > max)
        return cuzk_errf(r->err, CUZK_EFORMAT, "%s: %s has %zu elements, expected %s", r->path,
                         where, n, shape);
    return CUZK_OK;
}

static cuzk_err jr_g1(const jr *r, g1_std *p, const json_t *v, const char *name)
{
    const size_t fq = r->cv->fq_bytes;
    char where[96];
    cuzk_err rc;
    memset(p, 0, sizeof *p);
    if ((rc = jr_array(r, v, 2, 3, name, "a G1 point [x, y] or [x, y, z]")))
        return rc;
    for (int i = 0; i < 2; i++) {
        snprintf(where, sizeof where, "%s[%d]", name, i);
        if ((rc = jr_num(r, i ? p->y : p->x, fq, json_array_get(v, (size_t)i), r->cv->q_le, "q",
                         where)))
            return rc;
    }
    if (json_array_size(v) == 3) {
        uint8_t z[FQ_MAX];
        snprintf(where, sizeof where, "%s[2]", name);
        if ((rc = jr_num(r, z, fq, json_array_get(v, 2), r->cv->q_le, "q", where)))
            return rc;
        if (le_is_zero(z, fq)) {
            memset(p, 0, sizeof *p);
            p->inf = 1;
            return CUZK_OK;
        }
        if (!le_is_one(z, fq))
            return cuzk_errf(r->err, CUZK_EFORMAT,
                             "%s: %s has z = %s; only affine points (z = 1) or infinity (z = 0) "
                             "are supported",
                             r->path, name, json_is_string(json_array_get(v, 2))
                                                ? json_string_value(json_array_get(v, 2))
                                                : "(number)");
    }
    p->inf = le_is_zero(p->x, fq) && le_is_zero(p->y, fq);
    return CUZK_OK;
}

/* an Fq2 [c0, c1]; returns its coefficients */
static cuzk_err jr_fq2(const jr *r, uint8_t *c0, uint8_t *c1, const json_t *v, const char *name)
{
    const size_t fq = r->cv->fq_bytes;
    char where[96];
    cuzk_err rc;
    if ((rc = jr_array(r, v, 2, 2, name, "an Fq2 element [c0, c1]")))
        return rc;
    snprintf(where, sizeof where, "%s[0]", name);
    if ((rc = jr_num(r, c0, fq, json_array_get(v, 0), r->cv->q_le, "q", where)))
        return rc;
    snprintf(where, sizeof where, "%s[1]", name);
    return jr_num(r, c1, fq, json_array_get(v, 1), r->cv->q_le, "q", where);
}

static cuzk_err jr_g2(const jr *r, g2_std *p, const json_t *v, const char *name)
{
    const size_t fq = r->cv->fq_bytes;
    char where[96];
    cuzk_err rc;
    memset(p, 0, sizeof *p);
    if ((rc = jr_array(r, v, 2, 3, name, "a G2 point [x, y] or [x, y, z] of Fq2 pairs")))
        return rc;
    snprintf(where, sizeof where, "%s[0]", name);
    if ((rc = jr_fq2(r, p->x0, p->x1, json_array_get(v, 0), where)))
        return rc;
    snprintf(where, sizeof where, "%s[1]", name);
    if ((rc = jr_fq2(r, p->y0, p->y1, json_array_get(v, 1), where)))
        return rc;
    if (json_array_size(v) == 3) {
        uint8_t z0[FQ_MAX], z1[FQ_MAX];
        snprintf(where, sizeof where, "%s[2]", name);
        if ((rc = jr_fq2(r, z0, z1, json_array_get(v, 2), where)))
            return rc;
        if (le_is_zero(z0, fq) && le_is_zero(z1, fq)) {
            memset(p, 0, sizeof *p);
            p->inf = 1;
            return CUZK_OK;
        }
        if (!le_is_one(z0, fq) || !le_is_zero(z1, fq))
            return cuzk_errf(r->err, CUZK_EFORMAT,
                             "%s: %s has z != [\"1\", \"0\"]; only affine points (z = 1) or "
                             "infinity (z = 0) are supported",
                             r->path, name);
    }
    p->inf = le_is_zero(p->x0, fq) && le_is_zero(p->x1, fq) && le_is_zero(p->y0, fq) &&
             le_is_zero(p->y1, fq);
    return CUZK_OK;
}

static const json_t *jr_field(const jr *r, const json_t *obj, const char *key, cuzk_err *rc)
{
    const json_t *v = json_object_get(obj, key);
    if (!v)
        *rc = cuzk_errf(r->err, CUZK_EFORMAT, "%s: missing \"%s\"", r->path, key);
    return v;
}

/* optional "protocol": must be "groth16" when present */
static cuzk_err jr_protocol(const jr *r, const json_t *obj)
{
    const json_t *v = json_object_get(obj, "protocol");
    if (!v)
        return CUZK_OK;
    if (!json_is_string(v))
        return cuzk_errf(r->err, CUZK_EFORMAT, "%s: \"protocol\" must be a string", r->path);
    if (strcmp(json_string_value(v), "groth16") != 0)
        return cuzk_errf(r->err, CUZK_EFORMAT,
                         "%s: protocol is \"%.40s\"; cuzk handles Groth16 only", r->path,
                         json_string_value(v));
    return CUZK_OK;
}

/* "curve" as a curve (aliases allowed) */
static cuzk_err jr_curve(const jr *r, const json_t *v, const cuzk_curve_info **out)
{
    if (!json_is_string(v))
        return cuzk_errf(r->err, CUZK_EFORMAT, "%s: \"curve\" must be a string", r->path);
    *out = curve_by_name(json_string_value(v));
    if (!*out)
        return cuzk_errf(r->err, CUZK_ECURVE,
                         "%s: unknown curve \"%.40s\" (expected bn128 or bls12381)", r->path,
                         json_string_value(v));
    return CUZK_OK;
}

static cuzk_err proof_in(cuzk_proof *out, cuzk_curve_id curve, const char *path, const char *text, char *err)
{
    memset(out, 0, sizeof *out);
    jr r = {.path = path, .cv = curve_info(curve), .err = err};
    if (!r.cv)
        return cuzk_errf(err, CUZK_EINVAL, "%s: no such curve (id %d)", path, (int)curve);
    json_t *root;
    cuzk_err rc = jr_root(&root, path, text, err);
    if (rc)
        return rc;
    const json_t *a, *b, *c, *cvv;
    if (!json_is_object(root)) {
        rc = cuzk_errf(err, CUZK_EFORMAT, "%s: a proof must be a JSON object", path);
        goto out;
    }
    if ((rc = jr_protocol(&r, root)))
        goto out;
    if ((cvv = json_object_get(root, "curve"))) {
        const cuzk_curve_info *pc = NULL;
        if ((rc = jr_curve(&r, cvv, &pc)))
            goto out;
        if (pc != r.cv) {
            rc = cuzk_errf(err, CUZK_ECURVE, "%s: proof is for %s but the key is %s", path,
                           pc->label, r.cv->label);
            goto out;
        }
    }
    if (!(a = jr_field(&r, root, "pi_a", &rc)) || !(b = jr_field(&r, root, "pi_b", &rc)) ||
        !(c = jr_field(&r, root, "pi_c", &rc)))
        goto out;
    if ((rc = jr_g1(&r, &out->a, a, "pi_a")) || (rc = jr_g2(&r, &out->b, b, "pi_b")) ||
        (rc = jr_g1(&r, &out->c, c, "pi_c")))
        goto out;
    out->curve = curve;
out:
    json_decref(root);
    return rc;
}

static cuzk_err public_in(cuzk_public *out, cuzk_curve_id curve, const char *path, const char *text, char *err)
{
    memset(out, 0, sizeof *out);
    jr r = {.path = path, .cv = curve_info(curve), .err = err};
    if (!r.cv)
        return cuzk_errf(err, CUZK_EINVAL, "%s: no such curve (id %d)", path, (int)curve);
    json_t *root;
    cuzk_err rc = jr_root(&root, path, text, err);
    if (rc)
        return rc;
    if (!json_is_array(root)) {
        rc = cuzk_errf(err, CUZK_EFORMAT, "%s: public signals must be a JSON array", path);
        goto out;
    }
    size_t n = json_array_size(root), fr = r.cv->fr_bytes;
    if (n > UINT32_MAX) {
        rc = cuzk_errf(err, CUZK_EFORMAT, "%s: %zu public signals is too many", path, n);
        goto out;
    }
    out->values = malloc(n ? n * fr : 1);
    if (!out->values) {
        rc = cuzk_errf(err, CUZK_ENOMEM, "%s: out of memory for %zu public signals", path, n);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        char where[48];
        snprintf(where, sizeof where, "public signal %zu", i);
        if ((rc = jr_num(&r, out->values + i * fr, fr, json_array_get(root, i), r.cv->r_le, "r",
                         where)))
            goto out;
    }
    out->n = (uint32_t)n;
    out->curve = curve;
out:
    if (rc)
        public_free(out);
    json_decref(root);
    return rc;
}

cuzk_err proof_read_json(cuzk_proof *out, cuzk_curve_id curve, const char *path, char *err)
{
    return proof_in(out, curve, path, NULL, err);
}

cuzk_err proof_from_json(cuzk_proof *out, cuzk_curve_id curve, const char *text, char *err)
{
    return proof_in(out, curve, "proof", text, err);
}

cuzk_err public_read_json(cuzk_public *out, cuzk_curve_id curve, const char *path, char *err)
{
    return public_in(out, curve, path, NULL, err);
}

cuzk_err public_from_json(cuzk_public *out, cuzk_curve_id curve, const char *text, char *err)
{
    return public_in(out, curve, "public signals", text, err);
}

cuzk_err vk_read_json(cuzk_vk *out, const char *path, char *err)
{
    memset(out, 0, sizeof *out);
    jr r = {.path = path, .err = err};
    json_t *root;
    cuzk_err rc = jr_load(&root, path, err);
    if (rc)
        return rc;
    const json_t *v, *ic;
    if (!json_is_object(root)) {
        rc = cuzk_errf(err, CUZK_EFORMAT, "%s: a verification key must be a JSON object", path);
        goto out;
    }
    if ((rc = jr_protocol(&r, root)))
        goto out;
    if (!(v = jr_field(&r, root, "curve", &rc)) || (rc = jr_curve(&r, v, &r.cv)))
        goto out;
    out->curve = r.cv->id;
    if (!(v = jr_field(&r, root, "vk_alpha_1", &rc)) ||
        (rc = jr_g1(&r, &out->alpha1, v, "vk_alpha_1")))
        goto out;
    if (!(v = jr_field(&r, root, "vk_beta_2", &rc)) || (rc = jr_g2(&r, &out->beta2, v, "vk_beta_2")))
        goto out;
    if (!(v = jr_field(&r, root, "vk_gamma_2", &rc)) ||
        (rc = jr_g2(&r, &out->gamma2, v, "vk_gamma_2")))
        goto out;
    if (!(v = jr_field(&r, root, "vk_delta_2", &rc)) ||
        (rc = jr_g2(&r, &out->delta2, v, "vk_delta_2")))
        goto out;
    if (!(ic = jr_field(&r, root, "IC", &rc)))
        goto out;
    if (!json_is_array(ic) || json_array_size(ic) == 0 ||
        json_array_size(ic) - 1 > UINT32_MAX) {
        rc = cuzk_errf(err, CUZK_EFORMAT,
                       "%s: \"IC\" must be a non-empty array of G1 points (nPublic + 1)", path);
        goto out;
    }
    size_t n = json_array_size(ic);
    out->ic = calloc(n, sizeof *out->ic);
    if (!out->ic) {
        rc = cuzk_errf(err, CUZK_ENOMEM, "%s: out of memory for %zu IC points", path, n);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        char where[32];
        snprintf(where, sizeof where, "IC[%zu]", i);
        if ((rc = jr_g1(&r, &out->ic[i], json_array_get(ic, i), where)))
            goto out;
    }
    out->n_public = (uint32_t)(n - 1);
out:
    if (rc)
        vk_free(out);
    json_decref(root);
    return rc;
}

void vk_free(cuzk_vk *vk)
{
    free(vk->ic);
    vk->ic = NULL;
}

void public_free(cuzk_public *pub)
{
    free(pub->values);
    pub->values = NULL;
    pub->n = 0;
}
