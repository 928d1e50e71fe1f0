/* formats_test.c - tests of the .zkey/.wtns/.r1cs readers (formats.c).
 *
 * Builds synthetic files byte by byte from the layouts in docs/FORMATS.md (an
 * independent writer, not formats.c), then breaks them one way at a time (truncated inside
 * the header and at and inside every section, wrong magic/version/curve, counts that disagree, bad records, duplicate or
 * missing sections, empty and missing files) and asserts the error code and a message
 * substring. Valid snarkjs-made fixtures under tests/data/<curve>/<circuit>/ (or the
 * directory given as argv[1]) are opened and cross-checked against each other and against
 * the public.json snarkjs wrote.
 */
#include <dirent.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "groth16/formats.h"
#include "groth16/proof.h"
#include "util/check.h"

/* ---- byte buffers and containers ---- */

typedef struct bytes {
    uint8_t *p;
    size_t n, cap;
} bytes;

static void b_put(bytes *b, const void *src, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        if (!b->p) {
            fprintf(stderr, "out of memory\n");
            exit(2);
        }
    }
    if (n)
        memcpy(b->p + b->n, src, n);
    b->n += n;
}

static void b_u32(bytes *b, uint32_t v)
{
    uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    b_put(b, x, 4);
}

static void b_u64(bytes *b, uint64_t v)
{
    b_u32(b, (uint32_t)v);
    b_u32(b, (uint32_t)(v >> 32));
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint8_t rnd8(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint8_t)(rng_state >> 24);
}

static void b_rand(bytes *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t v = rnd8();
        b_put(b, &v, 1);
    }
}

/* a field value below 2^248 (so below every modulus here), n8 bytes */
static void b_small_fe(bytes *b, size_t n8)
{
    b_rand(b, n8 - 1);
    uint8_t z = 0;
    b_put(b, &z, 1);
}

typedef struct sec {
    uint32_t type;
    bytes b;
} sec;

typedef struct bin {
    char magic[5];
    uint32_t version;
    int n;
    sec s[16];
} bin;

static sec *bin_add(bin *f, uint32_t type)
{
    sec *s = &f->s[f->n++];
    memset(s, 0, sizeof *s);
    s->type = type;
    return s;
}

static sec *bin_find(bin *f, uint32_t type)
{
    for (int i = 0; i < f->n; i++)
        if (f->s[i].type == type)
            return &f->s[i];
    return NULL;
}

static void bin_free(bin *f)
{
    for (int i = 0; i < f->n; i++)
        free(f->s[i].b.p);
    f->n = 0;
}

static bin bin_copy(const bin *f)
{
    bin c = *f;
    for (int i = 0; i < f->n; i++) {
        memset(&c.s[i].b, 0, sizeof c.s[i].b);
        b_put(&c.s[i].b, f->s[i].b.p, f->s[i].b.n);
    }
    return c;
}

static bytes bin_bytes(const bin *f)
{
    bytes o = {0};
    b_put(&o, f->magic, 4);
    b_u32(&o, f->version);
    b_u32(&o, (uint32_t)f->n);
    for (int i = 0; i < f->n; i++) {
        b_u32(&o, f->s[i].type);
        b_u64(&o, f->s[i].b.n);
        b_put(&o, f->s[i].b.p, f->s[i].b.n);
    }
    return o;
}

static char tmpdir[256];

static const char *write_file(const char *name, const void *p, size_t n)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f) != 0) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(2);
    }
    return path;
}

static const char *write_bin(const char *name, const bin *f)
{
    bytes b = bin_bytes(f);
    const char *path = write_file(name, b.p, b.n);
    free(b.p);
    return path;
}

/* ---- synthetic files ---- */

typedef struct zparams {
    cuzk_curve_id curve;
    uint32_t n_vars, n_public, domain, n_coefs;
} zparams;

/* A Groth16 zkey in snarkjs's setup order 1,2,4,3,9,8,5,6,7,10; points are random bytes
 * (the readers do not check curve membership). */
static bin zkey_build(const zparams *zp)
{
    const cuzk_curve_info *cv = curve_info(zp->curve);
    size_t g1 = cv->g1_bytes, g2 = cv->g2_bytes;
    bin f = {.magic = "zkey", .version = 1};
    b_u32(&bin_add(&f, 1)->b, 1);
    sec *h = bin_add(&f, 2);
    b_u32(&h->b, (uint32_t)cv->fq_bytes);
    b_put(&h->b, cv->q_le, cv->fq_bytes);
    b_u32(&h->b, 32);
    b_put(&h->b, cv->r_le, 32);
    b_u32(&h->b, zp->n_vars);
    b_u32(&h->b, zp->n_public);
    b_u32(&h->b, zp->domain);
    b_rand(&h->b, 3 * g1 + 3 * g2);
    sec *c = bin_add(&f, 4);
    b_u32(&c->b, zp->n_coefs);
    for (uint32_t i = 0; i < zp->n_coefs; i++) {
        b_u32(&c->b, i & 1);
        b_u32(&c->b, i % zp->domain);
        b_u32(&c->b, i % zp->n_vars);
        b_small_fe(&c->b, 32);
    }
    b_rand(&bin_add(&f, 3)->b, (zp->n_public + 1) * g1);
    b_rand(&bin_add(&f, 9)->b, zp->domain * g1);
    b_rand(&bin_add(&f, 8)->b, (zp->n_vars - zp->n_public - 1) * g1);
    b_rand(&bin_add(&f, 5)->b, zp->n_vars * g1);
    b_rand(&bin_add(&f, 6)->b, zp->n_vars * g1);
    b_rand(&bin_add(&f, 7)->b, zp->n_vars * g2);
    b_rand(&bin_add(&f, 10)->b, 100);
    return f;
}

static bin wtns_build(cuzk_curve_id curve, uint32_t n)
{
    const cuzk_curve_info *cv = curve_info(curve);
    bin f = {.magic = "wtns", .version = 2};
    sec *h = bin_add(&f, 1);
    b_u32(&h->b, 32);
    b_put(&h->b, cv->r_le, 32);
    b_u32(&h->b, n);
    sec *v = bin_add(&f, 2);
    b_u32(&v->b, 1);
    for (int i = 0; i < 7; i++)
        b_u32(&v->b, 0);
    for (uint32_t i = 1; i < n; i++)
        b_small_fe(&v->b, 32);
    return f;
}

/* r1cs: 3 constraints over 6 wires (1 output, 1 public input, 2 private inputs), written
 * in circom's section order 2,1,3. */
static bin r1cs_build(cuzk_curve_id curve)
{
    const cuzk_curve_info *cv = curve_info(curve);
    bin f = {.magic = "r1cs", .version = 1};
    sec *c = bin_add(&f, 2);
    for (int k = 0; k < 3; k++)
        for (int l = 0; l < 3; l++) {
            uint32_t nt = (uint32_t)(l == 2 ? 1 : k);
            b_u32(&c->b, nt);
            for (uint32_t t = 0; t < nt; t++) {
                b_u32(&c->b, (uint32_t)(k + t + l) % 6);
                b_small_fe(&c->b, 32);
            }
        }
    sec *h = bin_add(&f, 1);
    b_u32(&h->b, 32);
    b_put(&h->b, cv->r_le, 32);
    b_u32(&h->b, 6);
    b_u32(&h->b, 1);
    b_u32(&h->b, 1);
    b_u32(&h->b, 2);
    b_u64(&h->b, 9);
    b_u32(&h->b, 3);
    sec *m = bin_add(&f, 3);
    for (uint64_t i = 0; i < 6; i++)
        b_u64(&m->b, i);
    return f;
}

/* ---- expectation helpers ---- */

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

typedef cuzk_err (*open_fn)(const char *path, char *err);

static cuzk_err open_zkey(const char *path, char *err)
{
    zkey_file z;
    cuzk_err rc = zkey_open(&z, path, err);
    if (rc == CUZK_OK)
        zkey_close(&z);
    else
        CHECK(z.map.base == NULL && z.curve == NULL, "failed open left state behind");
    return rc;
}

static cuzk_err open_wtns(const char *path, char *err)
{
    wtns_file w;
    cuzk_err rc = wtns_open(&w, path, err);
    if (rc == CUZK_OK)
        wtns_close(&w);
    return rc;
}

static cuzk_err open_r1cs(const char *path, char *err)
{
    r1cs_file r;
    cuzk_err rc = r1cs_open(&r, path, err);
    if (rc == CUZK_OK)
        r1cs_close(&r);
    return rc;
}

static void expect(open_fn fn, const bin *f, cuzk_err code, const char *substr, const char *what)
{
    char err[CUZK_ERRLEN] = "";
    const char *path = write_bin("case.bin", f);
    cuzk_err rc = fn(path, err);
    CHECK(rc == code, "%s: code %d (%s), expected %d; message: %s", what, rc, cuzk_strerror(rc),
          code, err);
    if (substr)
        CHECK(strstr(err, substr) != NULL, "%s: message \"%s\" lacks \"%s\"", what, err, substr);
    if (code != CUZK_OK)
        CHECK(strstr(err, path) != NULL, "%s: message \"%s\" does not name the file", what, err);
}

/* Cut points: inside the container header, and for every section its table entry (start,
 * inside, end) and its payload (first byte, second byte, middle, last byte). */
static size_t cut_points(const bin *f, size_t *cuts, size_t cap)
{
    size_t n = 0, off = 12;
    static const size_t head[] = {0, 1, 4, 8, 11};
    for (size_t i = 0; i < sizeof head / sizeof head[0] && n < cap; i++)
        cuts[n++] = head[i];
    for (int i = 0; i < f->n && n + 8 <= cap; i++) {
        size_t sz = f->s[i].b.n, pay = off + 12;
        cuts[n++] = off;
        cuts[n++] = off + 1;
        cuts[n++] = off + 4;
        cuts[n++] = off + 11;
        if (sz) {
            cuts[n++] = pay;
            cuts[n++] = pay + sz / 2;
            cuts[n++] = pay + sz - 1;
            if (sz > 1)
                cuts[n++] = pay + 1;
        }
        off = pay + sz;
    }
    return n;
}

/* every cut must fail with EFORMAT and a truncation message */
static void truncation_sweep(open_fn fn, const bin *f, const char *what)
{
    bytes b = bin_bytes(f);
    size_t cuts[256];
    size_t ncut = cut_points(f, cuts, 256);
    int bad = 0;
    for (size_t k = 0; k < ncut && bad < 5; k++) {
        size_t cut = cuts[k];
        char err[CUZK_ERRLEN] = "";
        const char *path = write_file("cut.bin", b.p, cut);
        cuzk_err rc = fn(path, err);
        int ok_msg = cut == 0 ? strstr(err, "empty") != NULL
                     : cut < 12 ? strstr(err, "too short") != NULL
                                : strstr(err, "truncated") != NULL;
        checks++;
        if (rc != CUZK_EFORMAT || !ok_msg) {
            bad++;
            CHECK(0, "%s cut at %zu of %zu: code %d, message: %s", what, cut, b.n, rc, err);
        }
    }
    free(b.p);
}

/* ---- zkey ---- */

static void test_zkey_good(cuzk_curve_id curve)
{
    const cuzk_curve_info *cv = curve_info(curve);
    zparams zp = {curve, 9, 2, 16, 13};
    bin f = zkey_build(&zp);
    char err[CUZK_ERRLEN] = "";
    zkey_file z;
    const char *path = write_bin("good.zkey", &f);
    cuzk_err rc = zkey_open(&z, path, err);
    CHECK(rc == CUZK_OK, "good %s zkey: %s", cv->label, err);
    if (rc)
        goto out;
    CHECK(z.curve == cv, "curve");
    CHECK(z.n_vars == 9 && z.n_public == 2 && z.domain_size == 16 && z.log_domain == 4,
          "header counts %u %u %u %u", z.n_vars, z.n_public, z.domain_size, z.log_domain);
    CHECK(z.n_coefs == 13, "n_coefs %u", z.n_coefs);
    const uint8_t *h = bin_find(&f, 2)->b.p + 4 + cv->fq_bytes + 4 + 32 + 12;
    size_t g1 = cv->g1_bytes, g2 = cv->g2_bytes;
    CHECK(!memcmp(z.alpha1, h, g1) && !memcmp(z.beta1, h + g1, g1) &&
              !memcmp(z.beta2, h + 2 * g1, g2) && !memcmp(z.gamma2, h + 2 * g1 + g2, g2) &&
              !memcmp(z.delta1, h + 2 * g1 + 2 * g2, g1) &&
              !memcmp(z.delta2, h + 3 * g1 + 2 * g2, g2),
          "header points in the order alpha1 beta1 beta2 gamma2 delta1 delta2");
    CHECK(!memcmp(z.ic, bin_find(&f, 3)->b.p, 3 * g1), "IC view");
    CHECK(!memcmp(z.coefs, bin_find(&f, 4)->b.p + 4, 13 * 44), "coefficient view");
    static const uint32_t types[ZKEY_BASES] = {5, 6, 7, 8, 9};
    static const uint32_t counts[ZKEY_BASES] = {9, 9, 9, 6, 16};
    for (int i = 0; i < ZKEY_BASES; i++) {
        size_t el = i == ZKEY_B2 ? g2 : g1;
        CHECK(z.n_bases[i] == counts[i], "n_bases[%d] = %u", i, z.n_bases[i]);
        CHECK(!memcmp(z.bases[i], bin_find(&f, types[i])->b.p, counts[i] * el), "bases[%d] view",
              i);
    }
    zkey_close(&z);
    CHECK(z.map.base == NULL, "close clears the struct");
    zkey_close(&z); /* closing twice is harmless */

    /* any section order, unknown sections ignored, version 2 accepted */
    bin g = bin_copy(&f);
    for (int i = 0; i < g.n / 2; i++) {
        sec t = g.s[i];
        g.s[i] = g.s[g.n - 1 - i];
        g.s[g.n - 1 - i] = t;
    }
    b_rand(&bin_add(&g, 77)->b, 33);
    b_rand(&bin_add(&g, 77)->b, 5);
    g.version = 2;
    expect(open_zkey, &g, CUZK_OK, NULL, "reversed order + unknown sections");
    bin_free(&g);

    /* zero-length C section: n_vars == n_public + 1 */
    zparams zq = {curve, 3, 2, 8, 4};
    g = zkey_build(&zq);
    expect(open_zkey, &g, CUZK_OK, NULL, "all wires public");
    bin_free(&g);
out:
    bin_free(&f);
}

static void test_zkey_bad(cuzk_curve_id curve)
{
    const cuzk_curve_info *cv = curve_info(curve);
    const char *L = cv->label;
    zparams zp = {curve, 9, 2, 16, 13};
    bin f = zkey_build(&zp);
    char msg[256];
    bin g;

    truncation_sweep(open_zkey, &f, "zkey");

    g = bin_copy(&f);
    memcpy(g.magic, "zkez", 4);
    expect(open_zkey, &g, CUZK_EFORMAT, "not a .zkey file (magic \"zkez\"", "wrong magic");
    memcpy(g.magic, "wtns", 4);
    expect(open_zkey, &g, CUZK_EFORMAT, "this is a .wtns file, expected a .zkey", "wtns magic");
    bin_free(&g);

    g = bin_copy(&f);
    g.version = 3;
    expect(open_zkey, &g, CUZK_EFORMAT, ".zkey version 3, expected 1 or 2", "version 3");
    g.version = 0;
    expect(open_zkey, &g, CUZK_EFORMAT, ".zkey version 0", "version 0");
    bin_free(&g);

    g = bin_copy(&f);
    put32(bin_find(&g, 1)->b.p, 2);
    expect(open_zkey, &g, CUZK_EFORMAT, "PLONK key (protocol 2)", "plonk");
    put32(bin_find(&g, 1)->b.p, 10);
    expect(open_zkey, &g, CUZK_EFORMAT, "FFLONK key (protocol 10)", "fflonk");
    put32(bin_find(&g, 1)->b.p, 7);
    expect(open_zkey, &g, CUZK_EFORMAT, "unknown protocol 7", "protocol 7");
    b_u32(&bin_find(&g, 1)->b, 0);
    expect(open_zkey, &g, CUZK_EFORMAT, "section 1 (header) is 8 bytes, expected 4",
           "protocol section size");
    bin_free(&g);

    /* every required section missing, and duplicated */
    static const char *names[] = {"", "header", "Groth16 header", "IC points", "coefficients",
                                  "A points", "B1 points", "B2 points", "C points", "H points"};
    for (uint32_t t = 1; t <= 9; t++) {
        g = bin_copy(&f);
        sec *s = bin_find(&g, t);
        free(s->b.p);
        *s = g.s[--g.n];
        snprintf(msg, sizeof msg, "section %u (%s) is missing", t, names[t]);
        expect(open_zkey, &g, CUZK_EFORMAT, msg, "missing section");
        bin_free(&g);
        g = bin_copy(&f);
        sec *d = bin_add(&g, t);
        b_put(&d->b, bin_find(&g, t)->b.p, bin_find(&g, t)->b.n);
        snprintf(msg, sizeof msg, "section %u (%s) appears twice", t, names[t]);
        expect(open_zkey, &g, CUZK_EFORMAT, msg, "duplicate section");
        bin_free(&g);
    }
    /* duplicate contributions section is rejected too; it is still optional */
    g = bin_copy(&f);
    b_rand(&bin_add(&g, 10)->b, 3);
    expect(open_zkey, &g, CUZK_EFORMAT, "section 10 (contributions) appears twice", "dup 10");
    bin_free(&g);

    /* point sections one element short and one byte long */
    size_t g1 = cv->g1_bytes, g2 = cv->g2_bytes;
    struct { uint32_t t; uint32_t count; size_t el; } ps[] = {
        {3, 3, g1}, {5, 9, g1}, {6, 9, g1}, {7, 9, g2}, {8, 6, g1}, {9, 16, g1}};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
        g = bin_copy(&f);
        bin_find(&g, ps[i].t)->b.n -= ps[i].el;
        snprintf(msg, sizeof msg, "section %u (%s) is %zu bytes, expected %zu (%u x %zu)", ps[i].t,
                 names[ps[i].t], (ps[i].count - 1) * ps[i].el, ps[i].count * ps[i].el,
                 ps[i].count, ps[i].el);
        expect(open_zkey, &g, CUZK_EFORMAT, msg, "short point section");
        bin_free(&g);
        g = bin_copy(&f);
        b_rand(&bin_find(&g, ps[i].t)->b, 1);
        snprintf(msg, sizeof msg, "section %u (%s) is %zu bytes, expected %zu", ps[i].t,
                 names[ps[i].t], ps[i].count * ps[i].el + 1, ps[i].count * ps[i].el);
        expect(open_zkey, &g, CUZK_EFORMAT, msg, "long point section");
        bin_free(&g);
    }

    /* section 2: curve and counts */
    size_t fq = cv->fq_bytes;
    uint8_t *h;
    g = bin_copy(&f);
    h = bin_find(&g, 2)->b.p;
    h[4] ^= 2; /* q + 2 or q - 2: not a supported modulus */
    expect(open_zkey, &g, CUZK_ECURVE, "is not the base field of BN254 or BLS12-381", "wrong q");
    bin_free(&g);
    g = bin_copy(&f);
    h = bin_find(&g, 2)->b.p;
    memcpy(h + 4 + fq + 4, curve_info(curve == CURVE_BN254 ? CURVE_BLS12_381 : CURVE_BN254)->r_le,
           32);
    snprintf(msg, sizeof msg, "q is %s's but r is %s's", L,
             curve_info(curve == CURVE_BN254 ? CURVE_BLS12_381 : CURVE_BN254)->label);
    expect(open_zkey, &g, CUZK_ECURVE, msg, "mixed q and r");
    h[4 + fq + 4 + 5] ^= 1;
    snprintf(msg, sizeof msg, "is not the scalar field of %s", L);
    expect(open_zkey, &g, CUZK_ECURVE, msg, "wrong r");
    bin_free(&g);
    g = bin_copy(&f);
    put32(bin_find(&g, 2)->b.p, 40);
    expect(open_zkey, &g, CUZK_ECURVE, "n8q = 40, expected 32 (BN254) or 48 (BLS12-381)", "n8q");
    bin_free(&g);
    g = bin_copy(&f);
    put32(bin_find(&g, 2)->b.p + 4 + fq, 48);
    expect(open_zkey, &g, CUZK_ECURVE, "n8r = 48, expected 32", "n8r");
    bin_free(&g);
    g = bin_copy(&f);
    b_u32(&bin_find(&g, 2)->b, 0);
    snprintf(msg, sizeof msg, "section 2 (Groth16 header) is %zu bytes, expected %zu for %s",
             curve == CURVE_BN254 ? (size_t)664 : (size_t)968,
             curve == CURVE_BN254 ? (size_t)660 : (size_t)964, L);
    expect(open_zkey, &g, CUZK_EFORMAT, msg, "header size");
    bin_free(&g);
    size_t cnt = 4 + fq + 4 + 32;
    g = bin_copy(&f);
    put32(bin_find(&g, 2)->b.p + cnt + 8, 12);
    expect(open_zkey, &g, CUZK_EFORMAT, "domain size 12 is not a power of two", "domain 12");
    put32(bin_find(&g, 2)->b.p + cnt + 8, 0);
    expect(open_zkey, &g, CUZK_EFORMAT, "domain size 0 is not a power of two", "domain 0");
    bin_free(&g);
    g = bin_copy(&f);
    put32(bin_find(&g, 2)->b.p + cnt + 4, 9);
    expect(open_zkey, &g, CUZK_EFORMAT, "n_public = 9 needs at least 10 variables, the key has 9",
           "n_public");
    bin_free(&g);
    g = bin_copy(&f);
    put32(bin_find(&g, 2)->b.p + cnt, 10); /* n_vars 10: sections 5-8 disagree */
    expect(open_zkey, &g, CUZK_EFORMAT, "section 5 (A points) is", "n_vars vs section 5");
    bin_free(&g);
    if (curve == CURVE_BN254) {
        g = bin_copy(&f);
        put32(bin_find(&g, 2)->b.p + cnt + 8, 1u << 28);
        expect(open_zkey, &g, CUZK_EFORMAT, "domain size 2^28 is too large for BN254", "2^28");
        bin_free(&g);
    }

    /* section 4 */
    g = bin_copy(&f);
    put32(bin_find(&g, 4)->b.p, 14);
    expect(open_zkey, &g, CUZK_EFORMAT,
           "section 4 (coefficients) is 576 bytes, expected 620 (4 + 14 x 44)", "n_coefs");
    bin_find(&g, 4)->b.n = 3;
    expect(open_zkey, &g, CUZK_EFORMAT, "section 4 (coefficients) is 3 bytes, too short",
           "coefs tiny");
    bin_free(&g);
    struct { size_t off; uint32_t v; const char *msg; } rec[] = {
        {0, 2, "record 5: matrix 2, expected 0 (A) or 1 (B)"},
        {4, 16, "record 5: row 16 is outside the domain of 16 rows"},
        {8, 9, "record 5: signal 9, but the key has 9 variables"},
    };
    for (size_t i = 0; i < sizeof rec / sizeof rec[0]; i++) {
        g = bin_copy(&f);
        put32(bin_find(&g, 4)->b.p + 4 + 5 * 44 + rec[i].off, rec[i].v);
        expect(open_zkey, &g, CUZK_EFORMAT, rec[i].msg, "bad record");
        bin_free(&g);
    }
    g = bin_copy(&f);
    memcpy(bin_find(&g, 4)->b.p + 4 + 12 * 44 + 12, cv->r_le, 32);
    expect(open_zkey, &g, CUZK_EFORMAT, "record 12: value is not below r", "record value = r");
    bin_free(&g);

    /* a section that claims more bytes than the file has */
    g = bin_copy(&f);
    bytes b = bin_bytes(&g);
    put32(b.p + 12 + 4, 0xffffff00u); /* size of the first section */
    {
        char err[CUZK_ERRLEN] = "";
        const char *path = write_file("big.zkey", b.p, b.n);
        cuzk_err rc = open_zkey(path, err);
        CHECK(rc == CUZK_EFORMAT && strstr(err, "truncated: section 1 (header)"),
              "oversized section: %d %s", rc, err);
    }
    free(b.p);
    bin_free(&g);
    bin_free(&f);
}

/* ---- wtns ---- */

static void test_wtns(cuzk_curve_id curve)
{
    const cuzk_curve_info *cv = curve_info(curve);
    bin f = wtns_build(curve, 9);
    char err[CUZK_ERRLEN] = "", msg[256];
    wtns_file w;
    const char *path = write_bin("w.wtns", &f);
    cuzk_err rc = wtns_open(&w, path, err);
    CHECK(rc == CUZK_OK, "good wtns: %s", err);
    if (rc == CUZK_OK) {
        CHECK(w.curve == cv && w.n_witness == 9, "wtns header");
        CHECK(!memcmp(w.values, bin_find(&f, 2)->b.p, 9 * 32), "wtns values view");
        wtns_close(&w);
    }
    truncation_sweep(open_wtns, &f, "wtns");
    bin g = bin_copy(&f);
    g.version = 1;
    expect(open_wtns, &g, CUZK_EFORMAT, ".wtns version 1, expected 2", "wtns version");
    bin_free(&g);
    g = bin_copy(&f);
    memcpy(g.magic, "zkey", 4);
    expect(open_wtns, &g, CUZK_EFORMAT, "this is a .zkey file, expected a .wtns", "wtns magic");
    bin_free(&g);
    g = bin_copy(&f);
    memcpy(bin_find(&g, 1)->b.p + 4, cv->q_le, 32); /* BN254 q: 32 bytes, not an r */
    expect(open_wtns, &g, CUZK_ECURVE, "is not the scalar field r of BN254 or BLS12-381",
           "wtns prime");
    bin_free(&g);
    g = bin_copy(&f);
    bin_find(&g, 2)->b.n -= 32;
    expect(open_wtns, &g, CUZK_EFORMAT,
           "section 2 (witness values) is 256 bytes, expected 288 (9 x 32)", "wtns count");
    bin_free(&g);
    g = bin_copy(&f);
    b_u32(&bin_find(&g, 1)->b, 0);
    expect(open_wtns, &g, CUZK_EFORMAT, "section 1 (header) is 44 bytes, expected 40", "wtns h");
    bin_free(&g);
    g = bin_copy(&f);
    memcpy(bin_find(&g, 2)->b.p + 4 * 32, cv->r_le, 32);
    snprintf(msg, sizeof msg, "value 4 is not below r of %s", cv->label);
    expect(open_wtns, &g, CUZK_EFORMAT, msg, "wtns value = r");
    bin_free(&g);
    g = bin_copy(&f);
    sec *d = bin_add(&g, 2);
    b_put(&d->b, bin_find(&g, 2)->b.p, 32);
    expect(open_wtns, &g, CUZK_EFORMAT, "section 2 (witness values) appears twice", "wtns dup");
    bin_free(&g);
    bin_free(&f);
}

/* f as a file whose sections all lie beyond 4 GiB: an unknown section of `hole` bytes first,
 * left as a hole of a sparse file (nothing is written or read there) */
static const char *write_bin_far(const char *name, const bin *f, uint64_t hole)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    bytes b = bin_bytes(f), head = {0};
    b_put(&head, b.p, 8); /* magic, version */
    b_u32(&head, (uint32_t)f->n + 1);
    b_u32(&head, 77);
    b_u64(&head, hole);
    FILE *o = fopen(path, "wb");
    if (!o || fwrite(head.p, 1, head.n, o) != head.n || fseeko(o, (off_t)hole, SEEK_CUR) != 0 ||
        fwrite(b.p + 12, 1, b.n - 12, o) != b.n - 12 || fclose(o) != 0) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(2);
    }
    free(head.p);
    free(b.p);
    return path;
}

/* 64-bit offsets: a .zkey and a .wtns whose sections start past 4 GiB (a partition key of tens
 * of GiB has its later sections there) read the same as the compact files */
static void test_far_sections(cuzk_curve_id curve)
{
    const cuzk_curve_info *cv = curve_info(curve);
    const uint64_t hole = ((uint64_t)5 << 30) + 3; /* past 4 GiB, and odd: unaligned views */
    char err[CUZK_ERRLEN] = "";
    zparams zp = {curve, 9, 2, 16, 13};
    bin f = zkey_build(&zp);
    zkey_file z;
    const char *path = write_bin_far("far.zkey", &f, hole);
    cuzk_err rc = zkey_open(&z, path, err);
    CHECK(rc == CUZK_OK, "%s zkey with its sections past 4 GiB: %s", cv->label, err);
    if (rc == CUZK_OK) {
        static const uint32_t types[ZKEY_BASES] = {5, 6, 7, 8, 9};
        CHECK(z.n_vars == 9 && z.domain_size == 16 && z.n_coefs == 13, "far zkey header counts");
        CHECK((uint64_t)((const uint8_t *)z.bases[0] - (const uint8_t *)z.map.base) > ((uint64_t)1 << 32),
              "far zkey: the A section lies past 4 GiB");
        CHECK(!memcmp(z.coefs, bin_find(&f, 4)->b.p + 4, 13 * 44), "far zkey: coefficient view");
        for (int i = 0; i < ZKEY_BASES; i++)
            CHECK(!memcmp(z.bases[i], bin_find(&f, types[i])->b.p,
                          (size_t)z.n_bases[i] * (i == ZKEY_B2 ? cv->g2_bytes : cv->g1_bytes)),
                  "far zkey: bases[%d] view", i);
        zkey_close(&z);
    }
    unlink(path);
    bin_free(&f);
    f = wtns_build(curve, 9);
    wtns_file w;
    path = write_bin_far("far.wtns", &f, hole);
    rc = wtns_open(&w, path, err);
    CHECK(rc == CUZK_OK, "%s wtns with its values past 4 GiB: %s", cv->label, err);
    if (rc == CUZK_OK) {
        CHECK(w.n_witness == 9 && !memcmp(w.values, bin_find(&f, 2)->b.p, 9 * 32), "far wtns values view");
        wtns_close(&w);
    }
    unlink(path);
    bin_free(&f);
}

static void test_check_witness(void)
{
    char err[CUZK_ERRLEN] = "";
    zparams zp = {CURVE_BN254, 9, 2, 16, 13};
    bin fz = zkey_build(&zp);
    zkey_file z;
    CHECK(zkey_open(&z, write_bin("k.zkey", &fz), err) == CUZK_OK, "key: %s", err);
    struct { cuzk_curve_id c; uint32_t n; int one; cuzk_err rc; const char *msg; } cases[] = {
        {CURVE_BN254, 9, 1, CUZK_OK, NULL},
        {CURVE_BLS12_381, 9, 1, CUZK_ECURVE, "witness is for BLS12-381 but the key is BN254"},
        {CURVE_BN254, 7, 1, CUZK_EFORMAT, "witness has 7 values, the key expects 9"},
        {CURVE_BN254, 9, 0, CUZK_EFORMAT, "witness value 0 (the constant ONE wire) is 2, expected 1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bin fw = wtns_build(cases[i].c, cases[i].n);
        if (!cases[i].one)
            bin_find(&fw, 2)->b.p[0] = 2;
        wtns_file w;
        err[0] = 0;
        CHECK(wtns_open(&w, write_bin("k.wtns", &fw), err) == CUZK_OK, "wtns %zu: %s", i, err);
        cuzk_err rc = zkey_check_witness(&z, &w, err);
        CHECK(rc == cases[i].rc, "check_witness case %zu: %d %s", i, rc, err);
        if (cases[i].msg)
            CHECK(strstr(err, cases[i].msg) != NULL, "check_witness case %zu: \"%s\"", i, err);
        wtns_close(&w);
        bin_free(&fw);
    }
    zkey_close(&z);
    bin_free(&fz);
}

/* ---- r1cs ---- */

static void test_r1cs(cuzk_curve_id curve)
{
    const cuzk_curve_info *cv = curve_info(curve);
    bin f = r1cs_build(curve);
    char err[CUZK_ERRLEN] = "";
    r1cs_file r;
    cuzk_err rc = r1cs_open(&r, write_bin("c.r1cs", &f), err);
    CHECK(rc == CUZK_OK, "good r1cs: %s", err);
    if (rc == CUZK_OK) {
        CHECK(r.curve == cv && r.n_wires == 6 && r.n_pub_out == 1 && r.n_pub_in == 1 &&
                  r.n_prv_in == 2 && r.n_labels == 9 && r.n_constraints == 3,
              "r1cs header");
        CHECK(r.constraints_size == bin_find(&f, 2)->b.n &&
                  !memcmp(r.constraints, bin_find(&f, 2)->b.p, r.constraints_size),
              "r1cs constraints view");
        r1cs_close(&r);
    }
    truncation_sweep(open_r1cs, &f, "r1cs");
    bin g = bin_copy(&f);
    g.version = 2;
    expect(open_r1cs, &g, CUZK_EFORMAT, ".r1cs version 2, expected 1", "r1cs version");
    bin_free(&g);
    g = bin_copy(&f);
    bin_find(&g, 1)->b.p[4] = 0;
    expect(open_r1cs, &g, CUZK_ECURVE, "is not the scalar field r", "r1cs prime");
    bin_free(&g);
    g = bin_copy(&f);
    put32(bin_find(&g, 1)->b.p + 36 + 12, 5); /* 5 private inputs do not fit in 6 wires */
    expect(open_r1cs, &g, CUZK_EFORMAT,
           "6 wires cannot hold ONE + 1 outputs + 1 public inputs + 5 private inputs", "counts");
    bin_free(&g);
    g = bin_copy(&f);
    put32(bin_find(&g, 1)->b.p + 36 + 24, 4); /* 4 constraints declared, 3 present */
    expect(open_r1cs, &g, CUZK_EFORMAT, "section 2 (constraints) ends inside constraint 3 of 4",
           "constraint count");
    put32(bin_find(&g, 1)->b.p + 36 + 24, 2);
    expect(open_r1cs, &g, CUZK_EFORMAT, "but its 2 constraints end at", "fewer constraints");
    bin_free(&g);
    g = bin_copy(&f);
    /* constraint 0: A and B empty, C has one term: u32 0, u32 0, u32 1, u32 wire */
    put32(bin_find(&g, 2)->b.p + 12, 6);
    expect(open_r1cs, &g, CUZK_EFORMAT, "constraint 0, C: wire 6 but the circuit has 6 wires",
           "wire range");
    bin_free(&g);
    g = bin_copy(&f);
    memcpy(bin_find(&g, 2)->b.p + 16, cv->r_le, 32);
    expect(open_r1cs, &g, CUZK_EFORMAT, "coefficient of wire", "coef = p");
    bin_free(&g);
    g = bin_copy(&f);
    put32(bin_find(&g, 2)->b.p + 8, 1000);
    expect(open_r1cs, &g, CUZK_EFORMAT, "constraint 0, C has 1000 terms", "term count");
    bin_free(&g);
    g = bin_copy(&f);
    bin_find(&g, 3)->b.n -= 8;
    expect(open_r1cs, &g, CUZK_EFORMAT, "section 3 (wire-to-label map) is 40 bytes, expected 48",
           "label map");
    bin_free(&g);
    g = bin_copy(&f);
    sec *s3 = bin_find(&g, 3);
    free(s3->b.p);
    *s3 = g.s[--g.n];
    expect(open_r1cs, &g, CUZK_OK, NULL, "no label map");
    bin_free(&g);
    bin_free(&f);
}

/* ---- random corruption: any answer is fine except a crash or a silent bad view ---- */

static void corrupt_sweep(open_fn fn, const bin *f, const char *what, int rounds)
{
    bytes b = bin_bytes(f);
    uint8_t *c = malloc(b.n);
    if (!c)
        exit(2);
    int bad = 0;
    for (int k = 0; k < rounds && bad < 5; k++) {
        memcpy(c, b.p, b.n);
        int flips = 1 + rnd8() % 4;
        for (int i = 0; i < flips; i++) {
            size_t at = ((size_t)rnd8() << 16 | (size_t)rnd8() << 8 | rnd8()) % b.n;
            c[at] ^= (uint8_t)(1u << (rnd8() % 8));
        }
        char err[CUZK_ERRLEN] = "";
        const char *path = write_file("flip.bin", c, b.n);
        cuzk_err rc = fn(path, err);
        checks++;
        if (rc != CUZK_OK && (rc != CUZK_EFORMAT && rc != CUZK_ECURVE)) {
            bad++;
            CHECK(0, "%s corruption %d: code %d (%s)", what, k, rc, err);
        } else if (rc != CUZK_OK && !strstr(err, path)) {
            bad++;
            CHECK(0, "%s corruption %d: message does not name the file: %s", what, k, err);
        }
    }
    free(c);
    free(b.p);
}

/* ---- files that are not there ---- */

static void test_missing(void)
{
    char err[CUZK_ERRLEN] = "", path[600];
    snprintf(path, sizeof path, "%s/does-not-exist.zkey", tmpdir);
    zkey_file z;
    cuzk_err rc = zkey_open(&z, path, err);
    CHECK(rc == CUZK_EIO && strstr(err, "cannot open") && strstr(err, "No such file"),
          "missing zkey: %d %s", rc, err);
    wtns_file w;
    rc = wtns_open(&w, tmpdir, err);
    CHECK(rc == CUZK_EIO && strstr(err, "is a directory"), "directory: %d %s", rc, err);
    r1cs_file r;
    rc = r1cs_open(&r, write_file("empty.r1cs", "", 0), err);
    CHECK(rc == CUZK_EFORMAT && strstr(err, "file is empty (expected a .r1cs file)"),
          "empty r1cs: %d %s", rc, err);
}

/* ---- snarkjs fixtures ---- */

static int find_one(char *out, size_t cap, const char *dir, const char *const *pats)
{
    for (; *pats; pats++) {
        char pat[700];
        glob_t gl;
        snprintf(pat, sizeof pat, "%s/%s", dir, *pats);
        if (glob(pat, 0, NULL, &gl) == 0 && gl.gl_pathc > 0) {
            snprintf(out, cap, "%s", gl.gl_pathv[0]);
            globfree(&gl);
            return 1;
        }
        globfree(&gl);
    }
    return 0;
}

/* Opens one fixture directory and cross-checks the files (r1cs header counts, zkey
 * header, witness fit, public.json written by snarkjs = witness values 1..n_public). */
static int test_fixture_dir(const char *dir)
{
    static const char *const zk[] = {"circuit.zkey", "*_final.zkey", "*.zkey", NULL};
    static const char *const wt[] = {"witness.wtns", "*.wtns", NULL};
    static const char *const rc1[] = {"circuit.r1cs", "*.r1cs", NULL};
    static const char *const pu[] = {"public.json", NULL};
    char pz[700], pw[700], pr[700], pp[700], err[CUZK_ERRLEN] = "";
    if (!find_one(pz, sizeof pz, dir, zk) || !find_one(pw, sizeof pw, dir, wt))
        return 0;
    zkey_file z;
    wtns_file w;
    r1cs_file r;
    cuzk_err rc = zkey_open(&z, pz, err);
    CHECK(rc == CUZK_OK, "fixture %s: %s", pz, err);
    if (rc)
        return 1;
    rc = wtns_open(&w, pw, err);
    CHECK(rc == CUZK_OK, "fixture %s: %s", pw, err);
    if (rc == CUZK_OK) {
        rc = zkey_check_witness(&z, &w, err);
        CHECK(rc == CUZK_OK, "fixture witness fits key: %s", err);
        if (find_one(pp, sizeof pp, dir, pu)) {
            cuzk_public pub;
            rc = public_read_json(&pub, z.curve->id, pp, err);
            CHECK(rc == CUZK_OK, "fixture %s: %s", pp, err);
            if (rc == CUZK_OK) {
                CHECK(pub.n == z.n_public, "public.json has %u values, key n_public %u", pub.n,
                      z.n_public);
                for (uint32_t i = 0; i < pub.n && i < z.n_public; i++)
                    CHECK(!memcmp(pub.values + i * 32, w.values + (i + 1) * 32, 32),
                          "public signal %u differs from witness value %u", i, i + 1);
                public_free(&pub);
            }
        }
        wtns_close(&w);
    }
    if (find_one(pr, sizeof pr, dir, rc1)) {
        rc = r1cs_open(&r, pr, err);
        CHECK(rc == CUZK_OK, "fixture %s: %s", pr, err);
        if (rc == CUZK_OK) {
            CHECK(r.curve == z.curve, "r1cs and zkey curves");
            CHECK(r.n_wires == z.n_vars, "r1cs wires %u, zkey vars %u", r.n_wires, z.n_vars);
            CHECK(r.n_pub_out + r.n_pub_in == z.n_public, "public counts");
            /* FORMATS.md 3: smallest power of two > nConstraints + nPublic */
            uint64_t need = (uint64_t)r.n_constraints + z.n_public, d = 1;
            while (d <= need)
                d *= 2;
            CHECK(z.domain_size == d, "domain %u, expected %llu", z.domain_size,
                  (unsigned long long)d);
            CHECK(z.n_coefs >= z.n_public + 1, "coefficient count");
            r1cs_close(&r);
        }
    }
    printf("  fixture %s: %s, %u vars, %u public, domain %u, %u coefficients\n", dir,
           z.curve->label, z.n_vars, z.n_public, z.domain_size, z.n_coefs);
    zkey_close(&z);
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
        char p1[512];
        snprintf(p1, sizeof p1, "%s/%s", root, e1->d_name);
        DIR *d2 = opendir(p1);
        if (!d2)
            continue;
        struct dirent *e2;
        while ((e2 = readdir(d2))) {
            if (e2->d_name[0] == '.')
                continue;
            char p2[1024];
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
    snprintf(tmpdir, sizeof tmpdir, "%s/formats_test.XXXXXX", base);
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 2;
    }
    for (int c = 0; c < CURVE_COUNT; c++) {
        test_zkey_good((cuzk_curve_id)c);
        test_zkey_bad((cuzk_curve_id)c);
        test_wtns((cuzk_curve_id)c);
        test_r1cs((cuzk_curve_id)c);
        test_far_sections((cuzk_curve_id)c);
    }
    for (int c = 0; c < CURVE_COUNT; c++) {
        zparams zp = {(cuzk_curve_id)c, 9, 2, 16, 13};
        bin f = zkey_build(&zp);
        corrupt_sweep(open_zkey, &f, "zkey", 400);
        bin_free(&f);
        f = wtns_build((cuzk_curve_id)c, 9);
        corrupt_sweep(open_wtns, &f, "wtns", 200);
        bin_free(&f);
        f = r1cs_build((cuzk_curve_id)c);
        corrupt_sweep(open_r1cs, &f, "r1cs", 200);
        bin_free(&f);
    }
    test_check_witness();
    test_missing();
    int nfix = test_fixtures(argc > 1 ? argv[1] : "tests/data");
    if (!nfix)
        printf("  no snarkjs fixtures under %s: synthetic files only\n",
               argc > 1 ? argv[1] : "tests/data");

    static const char *const leftovers[] = {"good.zkey", "case.bin", "cut.bin", "big.zkey",
                                            "w.wtns",    "k.zkey",   "k.wtns",  "c.r1cs",
                                            "empty.r1cs", "flip.bin", "far.zkey", "far.wtns"};
    for (size_t i = 0; i < sizeof leftovers / sizeof leftovers[0]; i++) {
        char p[600];
        snprintf(p, sizeof p, "%s/%s", tmpdir, leftovers[i]);
        unlink(p);
    }
    rmdir(tmpdir);
    printf("formats_test: %d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
