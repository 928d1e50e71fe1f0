/* devcircuit.c - the curve-agnostic half of `cuzk dev-circuit` (see devcircuit.h): the
 * synthetic circuit shape with its free witness values, the .r1cs/.wtns writers, the
 * binary container writer used for the .zkey, and the driver that runs the per-curve
 * setup (devsetup.h) and writes vk.json.
 *
 * File layouts: docs/FORMATS.md sections 0 (container), 1 (.r1cs), 2 (.wtns), 5 (JSON).
 */
#include "groth16/devcircuit.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "groth16/backend.h"
#include "groth16/formats.h"
#include "groth16/proof.h"
#include "groth16/prover.h"
#include "util/le.h"

/* The per-curve setups live in the curve translation units (curve_impl.h includes
 * devsetup.h). */

_Static_assert(sizeof(DEV_CONTRIBUTION_NAME) - 1 <= 64, "snarkjs keeps at most 64 bytes of a name");

/* ---- small little-endian helpers ---------------------------------------------------- */

/* o = a - 2^k for a >= 2^k (32 bytes LE) */
static void le_sub_pow2(uint8_t o[32], const uint8_t a[32], unsigned k)
{
    unsigned borrow = 0;
    for (unsigned i = 0; i < 32; i++) {
        unsigned sub = (i == k / 8 ? 1u << (k % 8) : 0) + borrow;
        unsigned v = a[i];
        borrow = v < sub;
        o[i] = (uint8_t)(v + (borrow ? 256 : 0) - sub);
    }
}

void dev_rng_scalar(uint8_t out[32], dev_rng *g, const cuzk_curve_info *c)
{
    int top = 31;
    while (top > 0 && c->r_le[top] == 0)
        top--;
    uint8_t mask = 0xff;
    while (mask >> 1 >= c->r_le[top])
        mask >>= 1;
    for (;;) { /* accepts with probability > 1/2 per draw */
        for (int i = 0; i < 4; i++) {
            uint64_t v = dev_rng_next(g);
            memcpy(out + 8 * i, &v, 8);
        }
        for (int i = top + 1; i < 32; i++)
            out[i] = 0;
        out[top] &= mask;
        if (le_less(out, c->r_le, 32) && !le_is_zero(out, 32))
            return;
    }
}

/* ---- circuit builder ---------------------------------------------------------------- */

/* Coefficient table layout: 0 = 1, 1 = -1, then 2^i at COEF_POW(i) and -2^i at
 * COEF_NEGPOW(i) for i < 64, then random full-field coefficients. */
#define COEF_ONE 0
#define COEF_MONE 1
#define COEF_POW(i) (2 + 2 * (i))
#define COEF_NEGPOW(i) (3 + 2 * (i))
#define COEF_FIXED 130

#define RING 4096 /* recent wires the gadgets draw their operands from (locality, like real circuits) */

typedef struct builder {
    dev_circuit *c;
    const dev_circuit_params *p;
    dev_rng g;
    uint32_t k;                  /* constraints emitted */
    uint32_t bits[RING], n_bits; /* recent bit-valued wires (ring, n_bits total pushed) */
    uint32_t vals[RING], n_vals; /* recent general-valued wires */
    int oom;
} builder;

static void *grow(void *p, uint64_t *cap, uint64_t need, size_t elem, int *oom)
{
    if (need <= *cap)
        return p;
    uint64_t n = *cap ? *cap : 1024;
    while (n < need)
        n *= 2;
    void *q = realloc(p, n * elem);
    if (!q) {
        *oom = 1;
        return NULL;
    }
    *cap = n;
    return q;
}

static uint32_t new_wire(builder *b)
{
    dev_circuit *c = b->c;
    uint64_t old = c->n_cap_wires;
    uint8_t *w = grow(c->witness, &c->n_cap_wires, (uint64_t)c->n_wires + 1, 32, &b->oom);
    if (!w)
        return 0;
    c->witness = w;
    if (c->n_cap_wires > old)
        memset(w + old * 32, 0, (c->n_cap_wires - old) * 32);
    return c->n_wires++;
}

static void push_bit(builder *b, uint32_t w) { b->bits[b->n_bits++ % RING] = w; }
static void push_val(builder *b, uint32_t w) { b->vals[b->n_vals++ % RING] = w; }

static uint32_t pick_bit(builder *b)
{
    uint32_t n = b->n_bits < RING ? b->n_bits : RING;
    return b->bits[dev_rng_below(&b->g, n)];
}

static uint32_t pick_val(builder *b)
{
    uint32_t n = b->n_vals < RING ? b->n_vals : RING;
    return b->vals[dev_rng_below(&b->g, n)];
}

static uint32_t free_bit(builder *b)
{
    uint32_t w = new_wire(b);
    if (!b->oom)
        b->c->witness[32 * (size_t)w] = (uint8_t)(dev_rng_next(&b->g) >> 63);
    b->c->n_free_bits++;
    return w;
}

static uint32_t free_full(builder *b)
{
    uint32_t w = new_wire(b);
    if (!b->oom)
        dev_rng_scalar(b->c->witness + 32 * (size_t)w, &b->g, b->c->curve);
    b->c->n_free_full++;
    return w;
}

static uint32_t coef_random(builder *b)
{
    dev_circuit *c = b->c;
    uint64_t cap = c->n_cap_coefs;
    uint8_t *t = grow(c->coefs, &cap, (uint64_t)c->n_coefs + 1, 32, &b->oom);
    if (!t)
        return COEF_ONE;
    c->coefs = t;
    c->n_cap_coefs = cap;
    dev_rng_scalar(t + 32 * (size_t)c->n_coefs, &b->g, c->curve);
    return c->n_coefs++;
}

/* A coefficient as circuits have them: mostly +-1, sometimes small powers, sometimes any. */
static uint32_t coef_mixed(builder *b)
{
    uint32_t r = dev_rng_below(&b->g, 8);
    if (r < 3)
        return r == 0 ? COEF_MONE : COEF_ONE;
    if (r < 5)
        return COEF_POW(dev_rng_below(&b->g, 64));
    return coef_random(b);
}

/* Emits one constraint A*B = C. out: the wire it determines (only in C) or DEV_NO_WIRE. */
static void emit(builder *b, const dev_term *ta, uint32_t na, const dev_term *tb, uint32_t nb,
                 const dev_term *tc, uint32_t nc, uint32_t out)
{
    dev_circuit *c = b->c;
    if (b->oom)
        return;
    dev_term *t = grow(c->terms, &c->n_cap_terms, c->n_terms + na + nb + nc, sizeof *t, &b->oom);
    if (!t)
        return;
    c->terms = t;
    uint64_t *off = c->lc_off + 3 * (size_t)b->k;
    off[0] = c->n_terms;
    if (na)
        memcpy(t + c->n_terms, ta, na * sizeof *t);
    c->n_terms += na;
    off[1] = c->n_terms;
    if (nb)
        memcpy(t + c->n_terms, tb, nb * sizeof *t);
    c->n_terms += nb;
    off[2] = c->n_terms;
    if (nc)
        memcpy(t + c->n_terms, tc, nc * sizeof *t);
    c->n_terms += nc;
    off[3] = c->n_terms;
    c->n_ab_terms += na + nb;
    c->out_wire[b->k++] = out;
}

#define T(w, k) ((dev_term){(w), (k)})

/* b*(b-1) = 0 on a fresh free bit */
static uint32_t g_bool(builder *b)
{
    uint32_t x = free_bit(b);
    dev_term A[] = {T(x, COEF_ONE)}, B[] = {T(x, COEF_ONE), T(0, COEF_MONE)};
    emit(b, A, 1, B, 2, NULL, 0, DEV_NO_WIRE);
    push_bit(b, x);
    return x;
}

/* range check: nb fresh bits with boolean constraints, then x = sum 2^i b_i (nb+1 rows) */
static void g_range(builder *b, unsigned nb)
{
    dev_term C[65];
    uint32_t bit[64];
    for (unsigned i = 0; i < nb; i++)
        bit[i] = g_bool(b);
    uint32_t x = new_wire(b);
    C[0] = T(x, COEF_ONE);
    for (unsigned i = 0; i < nb; i++)
        C[1 + i] = T(bit[i], COEF_NEGPOW(i));
    emit(b, NULL, 0, NULL, 0, C, nb + 1, x);
    push_val(b, x);
}

/* z = x XOR y = x + y - 2xy:  (2x) * y = x + y - z  (x == y gives (2x) * x = 2x - z) */
static void g_xor(builder *b)
{
    uint32_t x = pick_bit(b), y = pick_bit(b), z = new_wire(b);
    dev_term A[] = {T(x, COEF_POW(1))}, B[] = {T(y, COEF_ONE)};
    dev_term C[] = {T(x, COEF_ONE), T(y, COEF_ONE), T(z, COEF_MONE)};
    if (x == y) {
        C[0] = T(x, COEF_POW(1));
        C[1] = T(z, COEF_MONE);
    }
    emit(b, A, 1, B, 1, C, x == y ? 2 : 3, z);
    push_bit(b, z);
}

/* z = x AND y */
static void g_and(builder *b)
{
    uint32_t x = pick_bit(b), y = pick_bit(b), z = new_wire(b);
    dev_term A[] = {T(x, COEF_ONE)}, B[] = {T(y, COEF_ONE)}, C[] = {T(z, COEF_ONE)};
    emit(b, A, 1, B, 1, C, 1, z);
    push_bit(b, z);
}

/* z = s ? y : x = x + s*(y - x):  s * (y - x) = z - x */
static void g_mux(builder *b)
{
    uint32_t s = pick_bit(b), x = pick_val(b), y = pick_val(b), z = new_wire(b);
    if (x == y)
        y = 0; /* the constant: z = s ? 1 : x */
    dev_term A[] = {T(s, COEF_ONE)}, B[] = {T(y, COEF_ONE), T(x, COEF_MONE)};
    dev_term C[] = {T(z, COEF_ONE), T(x, COEF_MONE)};
    emit(b, A, 1, B, 2, C, 2, z);
    push_val(b, z);
}

/* Poseidon-style S-box x^5: x2 = x*x, x4 = x2*x2, x5 = x4*x (3 rows) */
static void g_sbox(builder *b)
{
    uint32_t x = pick_val(b), x2 = new_wire(b);
    dev_term A[] = {T(x, COEF_ONE)}, C2[] = {T(x2, COEF_ONE)};
    emit(b, A, 1, A, 1, C2, 1, x2);
    uint32_t x4 = new_wire(b);
    dev_term A2[] = {T(x2, COEF_ONE)}, C4[] = {T(x4, COEF_ONE)};
    emit(b, A2, 1, A2, 1, C4, 1, x4);
    uint32_t x5 = new_wire(b);
    dev_term A4[] = {T(x4, COEF_ONE)}, C5[] = {T(x5, COEF_ONE)};
    emit(b, A4, 1, A, 1, C5, 1, x5);
    push_val(b, x5);
}

/* t = (c0 + sum c_i w_i) * y with 3..6 distinct terms (round constants, MDS-like mixing) */
static void g_lc(builder *b)
{
    dev_term A[8];
    uint32_t n = 0, want = 3 + dev_rng_below(&b->g, 4);
    A[n++] = T(0, coef_random(b));
    for (uint32_t i = 0; i < want; i++) {
        uint32_t w = dev_rng_below(&b->g, 4) == 0 ? pick_bit(b) : pick_val(b);
        int dup = 0;
        for (uint32_t j = 0; j < n; j++)
            dup |= A[j].wire == w;
        if (!dup)
            A[n++] = T(w, coef_mixed(b));
    }
    uint32_t y = pick_val(b), t = new_wire(b);
    dev_term B[] = {T(y, COEF_ONE)}, C[] = {T(t, COEF_ONE)};
    emit(b, A, n, B, 1, C, 1, t);
    push_val(b, t);
}

/* one sparse gadget, at most `left` rows */
static void g_sparse(builder *b, uint32_t left)
{
    uint32_t r = dev_rng_below(&b->g, 100);
    if (r < 30 && left >= 9) {
        static const unsigned widths[] = {8, 16, 32, 64};
        unsigned nb = widths[dev_rng_below(&b->g, 4)];
        while (nb + 1 > left)
            nb /= 2;
        g_range(b, nb);
    } else if (b->n_bits < 2 || r < 30) {
        g_bool(b);
    } else if (r < 55) {
        g_xor(b);
    } else if (r < 70) {
        g_and(b);
    } else if (r < 76) {
        g_mux(b);
    } else if (r < 88 && left >= 3) {
        g_sbox(b);
    } else {
        g_lc(b);
    }
}

/* random linear combination of n distinct wires below `limit` with random coefficients */
static uint32_t dense_lc(builder *b, dev_term *t, uint32_t n, uint32_t limit)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t w = dev_rng_below(&b->g, limit);
        int dup = 0;
        for (uint32_t j = 0; j < k; j++)
            dup |= t[j].wire == w;
        if (!dup)
            t[k++] = T(w, coef_random(b));
    }
    return k;
}

/* one dense row: (sum) * (sum) = c_out*out + (sum), all values and coefficients full-field */
static void g_dense(builder *b)
{
    dev_term A[5], B[4], C[3];
    uint32_t na = dense_lc(b, A, 1 + dev_rng_below(&b->g, 4), b->c->n_wires);
    if (dev_rng_below(&b->g, 3) == 0) {
        uint32_t w = free_full(b);
        A[na++] = T(w, coef_random(b));
    }
    uint32_t nb = dense_lc(b, B, 1 + dev_rng_below(&b->g, 3), b->c->n_wires);
    uint32_t nc = 1 + dense_lc(b, C + 1, dev_rng_below(&b->g, 3), b->c->n_wires);
    uint32_t out = new_wire(b);
    C[0] = T(out, coef_random(b));
    emit(b, A, na, B, nb, C, nc, out);
}

void dev_circuit_free(dev_circuit *c)
{
    free(c->lc_off);
    free(c->terms);
    free(c->out_wire);
    free(c->coefs);
    free(c->witness);
    memset(c, 0, sizeof *c);
}

cuzk_err dev_circuit_build(dev_circuit *c, const dev_circuit_params *p, char *err)
{
    memset(c, 0, sizeof *c);
    c->curve = curve_info(p->curve);
    if (!c->curve)
        return cuzk_errf(err, CUZK_ECURVE, "dev-circuit: unsupported curve");
    uint64_t rows = (uint64_t)p->n_constraints + p->n_public;
    if (p->n_constraints < 1 || rows >= (1ull << DEV_MAX_LOG_DOMAIN))
        return cuzk_errf(err, CUZK_EINVAL,
                         "dev-circuit: constraints + public must be in [1, 2^%d), got %llu + %u",
                         DEV_MAX_LOG_DOMAIN, (unsigned long long)p->n_constraints, p->n_public);
    c->n_constraints = p->n_constraints;
    c->n_public = p->n_public;
    /* smallest power of two > n_constraints + n_public (FORMATS.md section 3, domainSize) */
    c->log_domain = 0;
    while ((1ull << c->log_domain) <= rows)
        c->log_domain++;
    c->domain_size = 1u << c->log_domain;

    builder *b = calloc(1, sizeof *b);
    c->lc_off = calloc(3 * (size_t)c->n_constraints + 1, sizeof *c->lc_off);
    c->out_wire = calloc(c->n_constraints, sizeof *c->out_wire);
    c->n_cap_coefs = COEF_FIXED + 1024;
    c->coefs = malloc(c->n_cap_coefs * 32);
    if (!b || !c->lc_off || !c->out_wire || !c->coefs) {
        free(b);
        dev_circuit_free(c);
        return cuzk_errf(err, CUZK_ENOMEM, "dev-circuit: out of memory for %u constraints",
                         p->n_constraints);
    }
    b->c = c;
    b->p = p;
    dev_rng_init(&b->g, p->seed, DEV_STREAM_CIRCUIT);

    /* the fixed coefficients: 1, -1, +-2^i */
    static const uint8_t one[32] = {1};
    memcpy(c->coefs + 32 * COEF_ONE, one, 32);
    le_sub_pow2(c->coefs + 32 * COEF_MONE, c->curve->r_le, 0);
    for (unsigned i = 0; i < 64; i++) {
        uint8_t *pw = c->coefs + 32 * COEF_POW(i);
        memset(pw, 0, 32);
        pw[i / 8] = (uint8_t)(1u << (i % 8));
        le_sub_pow2(c->coefs + 32 * COEF_NEGPOW(i), c->curve->r_le, i);
    }
    c->n_coefs = COEF_FIXED;

    /* wire 0 = 1, then the public signals (free full-field values) */
    uint32_t w0 = new_wire(b);
    if (!b->oom)
        c->witness[32 * (size_t)w0] = 1;
    for (uint32_t i = 0; i < p->n_public; i++)
        push_val(b, free_full(b));
    if (p->dense) {
        for (int i = 0; i < 4; i++)
            free_full(b);
        while (b->k < c->n_constraints && !b->oom)
            g_dense(b);
    } else {
        for (int i = 0; i < 4; i++)
            push_val(b, free_full(b));
        while (b->k < c->n_constraints && !b->oom)
            g_sparse(b, c->n_constraints - b->k);
    }
    int oom = b->oom;
    free(b);
    if (oom) {
        dev_circuit_free(c);
        return cuzk_errf(err, CUZK_ENOMEM, "dev-circuit: out of memory building %u constraints",
                         p->n_constraints);
    }
    return CUZK_OK;
}

/* ---- binary container writer ------------------------------------------------------- */

static void bin_fail(dev_bin *w, cuzk_err e, const char *what)
{
    if (w->e)
        return;
    w->e = e;
    snprintf(w->msg, sizeof w->msg, "%s: %s: %s", w->path, what, strerror(errno));
}

cuzk_err dev_bin_open(dev_bin *w, const char *path, const char magic[4], uint32_t version,
                      uint32_t n_sections, char *err)
{
    memset(w, 0, sizeof *w);
    w->path = path;
    w->size_pos = -1;
    w->f = fopen(path, "wb");
    if (!w->f)
        return cuzk_errf(err, CUZK_EIO, "%s: cannot create: %s", path, strerror(errno));
    setvbuf(w->f, NULL, _IOFBF, 1 << 20);
    dev_bin_write(w, magic, 4);
    dev_bin_u32(w, version);
    dev_bin_u32(w, n_sections);
    return CUZK_OK;
}

void dev_bin_write(dev_bin *w, const void *data, size_t n)
{
    if (w->e || n == 0)
        return;
    if (fwrite(data, 1, n, w->f) != n)
        bin_fail(w, CUZK_EIO, "write failed");
}

void dev_bin_u32(dev_bin *w, uint32_t v)
{
    uint8_t b[4];
    for (int i = 0; i < 4; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    dev_bin_write(w, b, 4);
}

void dev_bin_u64(dev_bin *w, uint64_t v)
{
    uint8_t b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    dev_bin_write(w, b, 8);
}

void dev_bin_section_begin(dev_bin *w, uint32_t type)
{
    if (w->e)
        return;
    dev_bin_u32(w, type);
    w->size_pos = ftello(w->f);
    dev_bin_u64(w, 0); /* patched by dev_bin_section_end */
    w->data_pos = ftello(w->f);
}

void dev_bin_section_end(dev_bin *w)
{
    if (w->e)
        return;
    long long end = ftello(w->f);
    if (end < 0 || w->size_pos < 0 || fseeko(w->f, w->size_pos, SEEK_SET) != 0) {
        bin_fail(w, CUZK_EIO, "seek failed");
        return;
    }
    dev_bin_u64(w, (uint64_t)(end - w->data_pos));
    if (!w->e && fseeko(w->f, end, SEEK_SET) != 0)
        bin_fail(w, CUZK_EIO, "seek failed");
    w->size_pos = -1;
}

cuzk_err dev_bin_close(dev_bin *w, char *err)
{
    if (w->f && fclose(w->f) != 0)
        bin_fail(w, CUZK_EIO, "close failed");
    w->f = NULL;
    if (w->e) {
        unlink(w->path);
        return cuzk_errf(err, w->e, "%s", w->msg);
    }
    return CUZK_OK;
}

/* ---- .r1cs and .wtns ---------------------------------------------------------------- */

static void write_lc(dev_bin *w, const dev_circuit *c, uint64_t from, uint64_t to)
{
    dev_bin_u32(w, (uint32_t)(to - from));
    for (uint64_t i = from; i < to; i++) {
        dev_bin_u32(w, c->terms[i].wire);
        dev_bin_write(w, c->coefs + 32 * (size_t)c->terms[i].coef, 32);
    }
}

cuzk_err dev_write_r1cs(const dev_circuit *c, const char *path, char *err)
{
    dev_bin w;
    cuzk_err e = dev_bin_open(&w, path, "r1cs", 1, 3, err);
    if (e)
        return e;
    /* section 1: header; the public signals are written as public outputs */
    dev_bin_section_begin(&w, 1);
    dev_bin_u32(&w, 32);
    dev_bin_write(&w, c->curve->r_le, 32);
    dev_bin_u32(&w, c->n_wires);
    dev_bin_u32(&w, c->n_public); /* nPubOut */
    dev_bin_u32(&w, 0);           /* nPubIn */
    dev_bin_u32(&w, 0);           /* nPrvIn */
    dev_bin_u64(&w, c->n_wires);  /* nLabels */
    dev_bin_u32(&w, c->n_constraints);
    dev_bin_section_end(&w);
    dev_bin_section_begin(&w, 2);
    for (uint64_t k = 0; k < c->n_constraints; k++)
        for (int m = 0; m < 3; m++)
            write_lc(&w, c, c->lc_off[3 * k + m], c->lc_off[3 * k + m + 1]);
    dev_bin_section_end(&w);
    dev_bin_section_begin(&w, 3); /* wire i has label i */
    for (uint64_t i = 0; i < c->n_wires; i++)
        dev_bin_u64(&w, i);
    dev_bin_section_end(&w);
    return dev_bin_close(&w, err);
}

cuzk_err dev_write_wtns(const dev_circuit *c, const char *path, char *err)
{
    dev_bin w;
    cuzk_err e = dev_bin_open(&w, path, "wtns", 2, 2, err);
    if (e)
        return e;
    dev_bin_section_begin(&w, 1);
    dev_bin_u32(&w, 32);
    dev_bin_write(&w, c->curve->r_le, 32);
    dev_bin_u32(&w, c->n_wires);
    dev_bin_section_end(&w);
    dev_bin_section_begin(&w, 2);
    dev_bin_write(&w, c->witness, 32 * (size_t)c->n_wires);
    dev_bin_section_end(&w);
    return dev_bin_close(&w, err);
}

/* ---- driver ------------------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* mkdir -p */
static cuzk_err make_dir(const char *dir, char *err)
{
    char buf[4096];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof buf)
        return cuzk_errf(err, CUZK_EINVAL, "dev-circuit: bad output folder '%s'", dir);
    memcpy(buf, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != 0)
            continue;
        char keep = buf[i];
        buf[i] = 0;
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return cuzk_errf(err, CUZK_EIO, "%s: cannot create folder: %s", buf, strerror(errno));
        buf[i] = keep;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return cuzk_errf(err, CUZK_EIO, "%s: not a folder", dir);
    return CUZK_OK;
}

static void join(char *out, size_t cap, const char *dir, const char *name)
{
    snprintf(out, cap, "%s/%s", dir, name);
}

cuzk_err dev_circuit_generate(const dev_circuit_params *p, char *err)
{
    dev_circuit c;
    pool_t *pool = NULL;
    cuzk_vk vk = {0};
    zkey_file z = {0};
    int z_open = 0;
    uint8_t alphabeta[12 * FQ_MAX];
    char zkey_path[4200], wtns_path[4200], r1cs_path[4200], vk_path[4200];
    FILE *log = p->quiet ? NULL : stderr;
    double t0 = now_s();

    if (!p->out_dir)
        return cuzk_errf(err, CUZK_EINVAL, "dev-circuit: no output folder");
    if (p->backend == DEV_BACKEND_GPU && gpu_device_count() < 1) /* before any work or file */
#ifdef CUZK_HAVE_CUDA
        return cuzk_errf(err, CUZK_ENODEV, "dev-circuit: --backend gpu, but no CUDA device was found");
#else
        return cuzk_errf(err, CUZK_ENODEV, "dev-circuit: --backend gpu, but this cuzk was built without CUDA");
#endif
    cuzk_err e = make_dir(p->out_dir, err);
    if (e)
        return e;
    join(zkey_path, sizeof zkey_path, p->out_dir, "circuit.zkey");
    join(wtns_path, sizeof wtns_path, p->out_dir, "witness.wtns");
    join(r1cs_path, sizeof r1cs_path, p->out_dir, "circuit.r1cs");
    join(vk_path, sizeof vk_path, p->out_dir, "vk.json");

    e = dev_circuit_build(&c, p, err);
    if (e)
        return e;
    if (log)
        fprintf(log, "dev-circuit: %s, %u constraints (%s), %u public, %u wires, %llu terms, domain 2^%u (%.2f s)\n",
                c.curve->label, c.n_constraints, p->dense ? "dense" : "sparse", c.n_public, c.n_wires,
                (unsigned long long)c.n_terms, c.log_domain, now_s() - t0);

    pool = pool_create(p->threads);
    if (!pool) {
        e = cuzk_errf(err, CUZK_ENOMEM, "dev-circuit: cannot start worker threads");
        goto fail;
    }
    cuzk_err (*setup)(dev_circuit *, const dev_circuit_params *, pool_t *, const char *, FILE *, char *) =
        c.curve->id == CURVE_BN254 ? bn254_dev_setup : bls12_381_dev_setup;
    e = setup(&c, p, pool, zkey_path, log, err);
    if (e)
        goto fail;
    if ((e = dev_write_wtns(&c, wtns_path, err)))
        goto fail;
    if (p->write_r1cs) {
        if ((e = dev_write_r1cs(&c, r1cs_path, err)))
            goto fail;
    } else if (unlink(r1cs_path) != 0 && errno != ENOENT) { /* no stale r1cs of another circuit */
        e = cuzk_errf(err, CUZK_EIO, "%s: cannot remove the old file: %s", r1cs_path, strerror(errno));
        goto fail;
    }

    /* vk.json from the key just written, read back through the ordinary zkey reader */
    if ((e = zkey_open(&z, zkey_path, err)))
        goto fail;
    z_open = 1;
    if ((e = groth16_vk_from_zkey(&vk, alphabeta, &z, err)))
        goto fail;
    if ((e = vk_write_json(&vk, alphabeta, vk_path, err)))
        goto fail;

    FILE *r = p->report;
    if (r) {
        fprintf(r, "*** INSECURE DEVELOPMENT SETUP: the toxic waste is derived from seed %llu and is KNOWN. ***\n"
                   "*** Anyone can forge proofs for this key. Use it for tests and benchmarks only.        ***\n",
                (unsigned long long)p->seed);
        fprintf(r, "curve %s, %u constraints (%s), %u public, %u wires, domain %u\n", c.curve->name,
                c.n_constraints, p->dense ? "dense" : "sparse", c.n_public, c.n_wires, c.domain_size);
        fprintf(r, "key points computed on: %s\n", c.key_backend);
        fprintf(r, "wrote %s\nwrote %s\nwrote %s\n", zkey_path, wtns_path, vk_path);
        if (p->write_r1cs)
            fprintf(r, "wrote %s\n", r1cs_path);
    }
    if (log)
        fprintf(log, "dev-circuit: done in %.2f s\n", now_s() - t0);
fail:
    if (vk.ic)
        vk_free(&vk);
    if (z_open)
        zkey_close(&z);
    pool_destroy(pool);
    dev_circuit_free(&c);
    return e;
}
