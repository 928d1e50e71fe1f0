/* matrix.c - the pre-compiled constraint matrix (matrix.h): CSR build by a stable counting
 * sort, the fingerprint / checksum hash, and the atomic save and validated mmap load of the
 * cache file. Layout and validation rules: matrix.h. */
#include "groth16/matrix.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const uint8_t matrix_magic[8] = {'c', 'u', 'z', 'k', 'C', 'S', 'R', 0};

#define REC_BYTES 44           /* section 4 record: u32 matrix, u32 row, u32 signal, v[32] */
#define PROGRESS_STEP (1u << 20) /* records or 64-byte blocks between progress calls */

/* ---- hash: four 64-bit lanes over 32-byte stripes ----
 * Lane round acc' = rotl(acc + v*P2, 31) * P1 (the xxHash64 round): bijective in acc for a
 * fixed word v and in v for a fixed acc, so changing any one word changes its lane's final
 * state. The tail is zero-padded; the length enters the finalization. */
#define H_P1 0x9E3779B185EBCA87ull
#define H_P2 0xC2B2AE3D27D4EB4Full
#define H_P3 0x165667B19E3779F9ull

typedef struct mhash {
    uint64_t acc[4];
    uint64_t len;     /* bytes fed */
    uint8_t buf[32];  /* partial stripe */
    size_t nbuf;      /* bytes in buf */
} mhash;

static inline uint64_t rotl64(uint64_t x, unsigned r) { return (x << r) | (x >> (64 - r)); }

static inline uint64_t rd64u(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static void mh_init(mhash *h, uint64_t seed)
{
    memset(h, 0, sizeof *h);
    h->acc[0] = seed + H_P1 + H_P2;
    h->acc[1] = seed + H_P2;
    h->acc[2] = seed;
    h->acc[3] = seed - H_P1;
}

static inline void mh_stripe(uint64_t acc[4], const uint8_t *p)
{
    for (int i = 0; i < 4; i++)
        acc[i] = rotl64(acc[i] + rd64u(p + 8 * i) * H_P2, 31) * H_P1;
}

static void mh_update(mhash *h, const void *data, size_t len)
{
    const uint8_t *p = data;
    h->len += len;
    if (h->nbuf) {
        size_t take = 32 - h->nbuf < len ? 32 - h->nbuf : len;
        memcpy(h->buf + h->nbuf, p, take);
        h->nbuf += take;
        p += take;
        len -= take;
        if (h->nbuf < 32)
            return;
        mh_stripe(h->acc, h->buf);
        h->nbuf = 0;
    }
    uint64_t a[4] = {h->acc[0], h->acc[1], h->acc[2], h->acc[3]};
    for (; len >= 32; p += 32, len -= 32)
        mh_stripe(a, p);
    memcpy(h->acc, a, sizeof a);
    memcpy(h->buf, p, len);
    h->nbuf = len;
}

static uint64_t avalanche(uint64_t x)
{
    x ^= x >> 33;
    x *= H_P2;
    x ^= x >> 29;
    x *= H_P3;
    x ^= x >> 32;
    return x;
}

static void mh_final(mhash *h, uint8_t out[MATRIX_FP_BYTES])
{
    if (h->nbuf) {
        memset(h->buf + h->nbuf, 0, 32 - h->nbuf);
        mh_stripe(h->acc, h->buf);
    }
    for (int i = 0; i < 4; i++) {
        uint64_t v = avalanche(h->acc[i] + rotl64(h->acc[(i + 1) & 3], 23) + h->len * H_P3 + (uint64_t)i);
        for (int b = 0; b < 8; b++)
            out[8 * i + b] = (uint8_t)(v >> (8 * b));
    }
}

/* hashes len bytes in 64 MiB steps, reporting (phase, bytes done, len) */
static void mh_update_progress(mhash *h, const uint8_t *p, size_t len, const char *phase, matrix_progress_fn progress,
                               void *ctx)
{
    const size_t step = (size_t)64 << 20;
    for (size_t off = 0; off < len; off += step) {
        size_t k = len - off < step ? len - off : step;
        mh_update(h, p + off, k);
        if (progress)
            progress(ctx, phase, off + k, len);
    }
}

/* ---- layout ---- */

typedef struct layout {
    size_t row_off, sig_off, val_off, size; /* bytes from the start of the image */
} layout;

static size_t align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

static layout layout_of(uint64_t n, uint64_t n_entries)
{
    layout l;
    l.row_off = MATRIX_HEADER_BYTES;
    l.sig_off = align_up(l.row_off + (2 * n + 1) * 4, 8);
    l.val_off = align_up(l.sig_off + n_entries * 4, 64);
    l.size = l.val_off + n_entries * 32;
    return l;
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p) { return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32; }

const char *matrix_status_name(matrix_status s)
{
    switch (s) {
    case MATRIX_OK: return "ok";
    case MATRIX_MISSING: return "missing";
    case MATRIX_UNREADABLE: return "unreadable";
    case MATRIX_BAD_MAGIC: return "bad magic";
    case MATRIX_BAD_VERSION: return "unsupported version";
    case MATRIX_TRUNCATED: return "truncated";
    case MATRIX_WRONG_KEY: return "made for another key";
    case MATRIX_CORRUPT: return "corrupt";
    }
    return "unknown";
}

void matrix_fp_hex(char *out, const uint8_t fp[MATRIX_FP_BYTES])
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < MATRIX_FP_BYTES; i++) {
        out[2 * i] = hex[fp[i] >> 4];
        out[2 * i + 1] = hex[fp[i] & 15];
    }
    out[2 * MATRIX_FP_BYTES] = 0;
}

void matrix_fingerprint(uint8_t fp[MATRIX_FP_BYTES], const zkey_file *z)
{
    mhash h;
    mh_init(&h, 0x6d61747269782d31ull); /* "matrix-1" */
    uint8_t shape[32] = {0};
    put32(shape, (uint32_t)z->curve->id);
    put32(shape + 4, z->domain_size);
    put32(shape + 8, z->n_vars);
    put32(shape + 12, z->n_coefs);
    mh_update(&h, shape, sizeof shape);
    mh_update(&h, z->coefs, (size_t)z->n_coefs * REC_BYTES);
    mh_final(&h, fp);
}

uint64_t matrix_bytes(const zkey_file *z)
{
    return layout_of(z->domain_size, z->n_coefs).size;
}

static void checksum(uint8_t out[MATRIX_FP_BYTES], const uint8_t *img, size_t size, matrix_progress_fn progress,
                     void *ctx)
{
    mhash h;
    mh_init(&h, 0x63686b73756d2d31ull); /* "chksum-1" */
    mh_update_progress(&h, img + MATRIX_HEADER_BYTES, size - MATRIX_HEADER_BYTES, "checksum", progress, ctx);
    mh_final(&h, out);
}

/* points m's views into its image (layout l) */
static void matrix_bind(cuzk_matrix *m, const layout *l)
{
    const uint8_t *img = m->mem;
    m->row_ptr = (const uint32_t *)(const void *)(img + l->row_off);
    m->sig = (const uint32_t *)(const void *)(img + l->sig_off);
    m->val = img + l->val_off;
}

cuzk_err matrix_build(cuzk_matrix **out, const zkey_file *z, const uint8_t *fp, matrix_progress_fn progress,
                      void *progress_ctx, char *err)
{
    *out = NULL;
    size_t n = z->domain_size, rows = 2 * n, nc = z->n_coefs;
    layout l = layout_of(n, nc);
    cuzk_matrix *m = calloc(1, sizeof *m);
    uint8_t *img = aligned_alloc(64, align_up(l.size, 64));
    if (!m || !img) {
        free(m);
        free(img);
        return cuzk_errf(err, CUZK_ENOMEM, "constraint matrix: out of memory for %zu bytes", l.size);
    }
    m->mem = img;
    m->mem_size = l.size;
    m->curve = z->curve->id;
    m->n = z->domain_size;
    m->n_vars = z->n_vars;
    m->n_entries = nc;
    /* header and alignment gaps are zero, so the image (and the file) is deterministic */
    memset(img, 0, l.sig_off);
    memset(img + l.sig_off + nc * 4, 0, l.val_off - (l.sig_off + nc * 4));
    uint32_t *row_ptr = (uint32_t *)(void *)(img + l.row_off);
    uint32_t *sig = (uint32_t *)(void *)(img + l.sig_off);
    uint8_t *val = img + l.val_off;
    uint64_t total = 2 * (uint64_t)nc;

    /* pass 1: entries per row (row index m*n + row) counted two slots ahead, so that after
       the prefix sums row_ptr[r + 1] is the start of row r (the last row's count is never
       needed); pass 2 then uses row_ptr[r + 1] as row r's cursor, which leaves it at the end
       of row r = the start of row r + 1. No second array of 2n cursors. */
    for (size_t e = 0; e < nc; e++) {
        const uint8_t *r = z->coefs + e * REC_BYTES;
        size_t at = (size_t)get32(r) * n + get32(r + 4) + 2;
        if (at <= rows)
            row_ptr[at]++;
        if (progress && (e + 1) % PROGRESS_STEP == 0)
            progress(progress_ctx, "matrix build", e + 1, total);
    }
    for (size_t r = 0; r < rows; r++)
        row_ptr[r + 1] += row_ptr[r];
    /* pass 2: place each record at its row's cursor, keeping file order within a row */
    for (size_t e = 0; e < nc; e++) {
        const uint8_t *r = z->coefs + e * REC_BYTES;
        uint32_t at = row_ptr[(size_t)get32(r) * n + get32(r + 4) + 1]++;
        sig[at] = get32(r + 8);
        memcpy(val + (size_t)at * 32, r + 12, 32);
        if (progress && (e + 1) % PROGRESS_STEP == 0)
            progress(progress_ctx, "matrix build", nc + e + 1, total);
    }
    if (progress)
        progress(progress_ctx, "matrix build", total, total);

    if (fp)
        memcpy(m->fingerprint, fp, MATRIX_FP_BYTES);
    else
        matrix_fingerprint(m->fingerprint, z);
    memcpy(img, matrix_magic, 8);
    put32(img + 8, MATRIX_VERSION);
    put32(img + 12, (uint32_t)m->curve);
    put32(img + 16, m->n);
    put32(img + 20, m->n_vars);
    put32(img + 24, (uint32_t)nc);
    put32(img + 28, (uint32_t)((uint64_t)nc >> 32));
    memcpy(img + 32, m->fingerprint, MATRIX_FP_BYTES);
    checksum(img + 64, img, l.size, NULL, NULL);
    matrix_bind(m, &l);
    *out = m;
    return CUZK_OK;
}

void matrix_free(cuzk_matrix *m)
{
    if (!m)
        return;
    if (m->mapped)
        munmap(m->mem, m->mem_size);
    else
        free(m->mem);
    free(m);
}

/* ---- save ---- */

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n > ((size_t)1 << 30) ? (size_t)1 << 30 : n);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

cuzk_err matrix_save(const cuzk_matrix *m, const char *path, char *err)
{
    static _Atomic unsigned seq;
    char tmp[4096];
    int n = snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&seq, 1));
    if (n < 0 || (size_t)n >= sizeof tmp)
        return cuzk_errf(err, CUZK_EINVAL, "%s: path too long", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return cuzk_errf(err, CUZK_EIO, "%s: cannot create: %s", tmp, strerror(errno));
    const char *what = "write";
    if (write_all(fd, m->mem, m->mem_size) != 0)
        goto fail;
    what = "fsync";
    if (fsync(fd) != 0)
        goto fail;
    what = "close";
    if (close(fd) != 0) {
        fd = -1;
        goto fail;
    }
    fd = -1;
    what = "rename";
    if (rename(tmp, path) != 0)
        goto fail;
    /* make the rename itself durable */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == dir)
        dir[1] = 0;
    else if (slash)
        *slash = 0;
    else
        snprintf(dir, sizeof dir, ".");
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    return CUZK_OK;
fail:;
    int saved = errno;
    if (fd >= 0)
        close(fd);
    unlink(tmp);
    return cuzk_errf(err, CUZK_EIO, "%s: %s failed: %s", path, what, strerror(saved));
}

/* ---- load ---- */

/* sets *status and writes "path: detail" */
static cuzk_err reject(matrix_status *status, matrix_status s, char *err, const char *path, const char *detail)
{
    *status = s;
    return cuzk_errf(err, s == MATRIX_MISSING || s == MATRIX_UNREADABLE ? CUZK_EIO : CUZK_EFORMAT, "%s: %s", path,
                     detail);
}

cuzk_err matrix_load(cuzk_matrix **out, matrix_status *status, const char *path, const zkey_file *z,
                     const uint8_t *fp, matrix_progress_fn progress, void *progress_ctx, char *err)
{
    *out = NULL;
    *status = MATRIX_OK;
    char detail[256];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        snprintf(detail, sizeof detail, "cannot open: %s", strerror(e));
        return reject(status, e == ENOENT ? MATRIX_MISSING : MATRIX_UNREADABLE, err, path, detail);
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return reject(status, MATRIX_UNREADABLE, err, path, "not a readable regular file");
    }
    size_t size = (size_t)st.st_size;
    uint8_t *img = NULL;
    if (size > 0) {
        void *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            snprintf(detail, sizeof detail, "cannot map %zu bytes: %s", size, strerror(errno));
            close(fd);
            return reject(status, MATRIX_UNREADABLE, err, path, detail);
        }
        img = p;
    }
    close(fd);
    cuzk_matrix *m = NULL;
    cuzk_err rc;
    if (size >= 8 && memcmp(img, matrix_magic, 8) != 0) {
        rc = reject(status, MATRIX_BAD_MAGIC, err, path, "not a cuzk matrix cache (bad magic)");
        goto fail;
    }
    if (size < MATRIX_HEADER_BYTES) {
        snprintf(detail, sizeof detail, "truncated: %zu bytes, shorter than the %d-byte header", size,
                 MATRIX_HEADER_BYTES);
        rc = reject(status, MATRIX_TRUNCATED, err, path, detail);
        goto fail;
    }
    uint32_t version = get32(img + 8), curve = get32(img + 12), n = get32(img + 16), n_vars = get32(img + 20);
    uint64_t ne = get64(img + 24);
    if (version != MATRIX_VERSION) {
        snprintf(detail, sizeof detail, "version %u, this cuzk reads version %d", version, MATRIX_VERSION);
        rc = reject(status, MATRIX_BAD_VERSION, err, path, detail);
        goto fail;
    }
    if (curve != (uint32_t)z->curve->id || n != z->domain_size || n_vars != z->n_vars || ne != z->n_coefs) {
        snprintf(detail, sizeof detail,
                 "made for another key: curve %u, n %u, %u vars, %llu entries; the key has curve %u, n %u, %u vars, "
                 "%u entries",
                 curve, n, n_vars, (unsigned long long)ne, (unsigned)z->curve->id, z->domain_size, z->n_vars,
                 z->n_coefs);
        rc = reject(status, MATRIX_WRONG_KEY, err, path, detail);
        goto fail;
    }
    uint8_t zfp[MATRIX_FP_BYTES];
    if (fp)
        memcpy(zfp, fp, sizeof zfp);
    else
        matrix_fingerprint(zfp, z);
    if (memcmp(img + 32, zfp, MATRIX_FP_BYTES) != 0) {
        rc = reject(status, MATRIX_WRONG_KEY, err, path,
                    "made for another key: the fingerprint of section 4 differs");
        goto fail;
    }
    layout l = layout_of(n, ne);
    if (size != l.size) {
        snprintf(detail, sizeof detail, "%s: %zu bytes, expected %zu", size < l.size ? "truncated" : "corrupt", size,
                 l.size);
        rc = reject(status, size < l.size ? MATRIX_TRUNCATED : MATRIX_CORRUPT, err, path, detail);
        goto fail;
    }
    madvise(img, size, MADV_WILLNEED);
    uint8_t sum[MATRIX_FP_BYTES];
    checksum(sum, img, size, progress, progress_ctx);
    if (memcmp(sum, img + 64, MATRIX_FP_BYTES) != 0) {
        rc = reject(status, MATRIX_CORRUPT, err, path, "corrupt: payload checksum mismatch");
        goto fail;
    }
    m = calloc(1, sizeof *m);
    if (!m) {
        rc = cuzk_errf(err, CUZK_ENOMEM, "%s: out of memory", path);
        goto fail;
    }
    m->mem = img;
    m->mem_size = size;
    m->mapped = 1;
    m->curve = z->curve->id;
    m->n = n;
    m->n_vars = n_vars;
    m->n_entries = ne;
    memcpy(m->fingerprint, zfp, MATRIX_FP_BYTES);
    matrix_bind(m, &l);
    /* offsets non-decreasing from 0 to n_entries, signals below n_vars: never index out of range */
    int ok = m->row_ptr[0] == 0 && m->row_ptr[2 * (size_t)n] == ne;
    for (size_t r = 0; ok && r < 2 * (size_t)n; r++)
        ok = m->row_ptr[r] <= m->row_ptr[r + 1];
    uint32_t bad = 0;
    for (size_t e = 0; ok && e < ne; e++)
        bad |= m->sig[e] >= n_vars;
    if (!ok || bad) {
        free(m);
        m = NULL;
        rc = reject(status, MATRIX_CORRUPT, err, path,
                    !ok ? "corrupt: row offsets out of order" : "corrupt: a signal index is out of range");
        goto fail;
    }
    *out = m;
    return CUZK_OK;
fail:
    if (img)
        munmap(img, size);
    return rc;
}
