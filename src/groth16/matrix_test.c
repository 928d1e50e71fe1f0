/* matrix_test.c - tests of the pre-compiled constraint matrix (matrix.c).
 *
 * For every snarkjs-made fixture key under tests/data/<curve>/<circuit>/ (or the folder in
 * argv[1]):
 *   - the CSR from matrix_build is compared with a plain reference that, for each row of A
 *     then B, walks all raw section-4 records in file order and lists the ones of that row;
 *   - save then load gives the same offsets, signals and coefficients (and the loaded one is
 *     a mapping whose coefficients are 64-byte aligned);
 *   - the cache is rejected, each with its own status and a message saying why, when it is
 *     truncated (inside the header and inside the payload), bit-flipped in the payload, in
 *     the magic, in the version, when it was made for another key (another fixture, and the
 *     same key with one coefficient changed), or when it is missing;
 *   - matrix_save replaces an existing file atomically and leaves no temp file behind.
 */
#include <dirent.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "groth16/formats.h"
#include "groth16/matrix.h"
#include "util/check.h"

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* the reference: row r of the CSR (r < n: A row r, else B row r - n) must list exactly the
 * records (m, row) = (r / n, r % n) of section 4, in file order */
static int check_against_records(const cuzk_matrix *m, const zkey_file *z)
{
    size_t n = z->domain_size;
    int bad = 0;
    if (m->n != z->domain_size || m->n_vars != z->n_vars || m->n_entries != z->n_coefs || m->row_ptr[0] != 0 ||
        m->row_ptr[2 * n] != z->n_coefs)
        return 1;
    for (size_t r = 0; r < 2 * n && !bad; r++) {
        uint32_t want_m = (uint32_t)(r / n), want_row = (uint32_t)(r % n);
        uint32_t at = m->row_ptr[r];
        for (uint32_t i = 0; i < z->n_coefs && !bad; i++) {
            const uint8_t *rec = z->coefs + (size_t)i * 44;
            if (rd32(rec) != want_m || rd32(rec + 4) != want_row)
                continue;
            if (at >= m->row_ptr[r + 1] || m->sig[at] != rd32(rec + 8) || memcmp(m->val + (size_t)at * 32, rec + 12, 32))
                bad = 1;
            at++;
        }
        if (at != m->row_ptr[r + 1])
            bad = 1;
    }
    return bad;
}

static int same_matrix(const cuzk_matrix *a, const cuzk_matrix *b)
{
    return a->n == b->n && a->n_vars == b->n_vars && a->n_entries == b->n_entries &&
           !memcmp(a->fingerprint, b->fingerprint, MATRIX_FP_BYTES) &&
           !memcmp(a->row_ptr, b->row_ptr, (2 * (size_t)a->n + 1) * 4) &&
           !memcmp(a->sig, b->sig, a->n_entries * 4) && !memcmp(a->val, b->val, a->n_entries * 32);
}

static uint8_t *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc(sz > 0 ? (size_t)sz : 1);
    if (p && sz > 0 && fread(p, 1, (size_t)sz, f) != (size_t)sz) {
        free(p);
        p = NULL;
    }
    fclose(f);
    *size = (size_t)sz;
    return p;
}

static int write_file(const char *path, const uint8_t *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int ok = n == 0 || fwrite(p, 1, n, f) == n; /* p may be NULL for an empty file */
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* writes img (with changes) to path, loads it against z, and expects status want with
 * `needle` in the message */
static void expect_reject(const char *what, const char *path, const uint8_t *img, size_t n, const zkey_file *z,
                          matrix_status want, const char *needle)
{
    char err[CUZK_ERRLEN] = "";
    cuzk_matrix *m = NULL;
    matrix_status st = MATRIX_OK;
    if (write_file(path, img, n)) {
        CHECK(0, "%s: cannot write %s", what, path);
        return;
    }
    cuzk_err rc = matrix_load(&m, &st, path, z, NULL, NULL, NULL, err);
    CHECK(rc != CUZK_OK && m == NULL, "%s: a bad cache was accepted", what);
    CHECK(st == want, "%s: status %s, expected %s (%s)", what, matrix_status_name(st), matrix_status_name(want), err);
    CHECK(strstr(err, needle) != NULL, "%s: message '%s' lacks '%s'", what, err, needle);
    CHECK(rc == (want == MATRIX_MISSING || want == MATRIX_UNREADABLE ? CUZK_EIO : CUZK_EFORMAT), "%s: code %d", what,
          (int)rc);
    matrix_free(m);
}

typedef struct prog {
    uint64_t calls, last_done, last_total;
} prog;

static void on_progress(void *ctx, const char *phase, uint64_t done, uint64_t total)
{
    prog *p = ctx;
    (void)phase;
    p->calls++;
    p->last_done = done;
    p->last_total = total;
}

static void test_key(const char *dir, const char *other_zkey, const char *tmp)
{
    char path[1024], cache[1100], err[CUZK_ERRLEN] = "";
    zkey_file z;
    snprintf(path, sizeof path, "%s/circuit.zkey", dir);
    if (zkey_open(&z, path, err)) {
        CHECK(0, "zkey_open %s: %s", path, err);
        return;
    }
    cuzk_matrix *built = NULL, *loaded = NULL;
    prog pr = {0};
    cuzk_err rc = matrix_build(&built, &z, NULL, on_progress, &pr, err);
    CHECK(!rc, "%s: matrix_build: %s", dir, err);
    if (rc) {
        zkey_close(&z);
        return;
    }
    CHECK(!check_against_records(built, &z), "%s: CSR differs from the section-4 records", dir);
    CHECK(pr.calls >= 1 && pr.last_done == pr.last_total, "%s: build progress did not reach its total", dir);
    CHECK(((uintptr_t)built->val & 63) == 0 && ((uintptr_t)built->sig & 7) == 0, "%s: alignment", dir);
    CHECK(built->mem_size == matrix_bytes(&z), "%s: matrix_bytes %llu, image %zu", dir,
          (unsigned long long)matrix_bytes(&z), built->mem_size);
    uint8_t fp[MATRIX_FP_BYTES];
    matrix_fingerprint(fp, &z);
    CHECK(!memcmp(fp, built->fingerprint, sizeof fp), "%s: fingerprint of the build differs", dir);

    /* round trip; a second save replaces the first atomically */
    snprintf(cache, sizeof cache, "%s/m.csr", tmp);
    unlink(cache);
    rc = matrix_save(built, cache, err);
    CHECK(!rc, "%s: matrix_save: %s", dir, err);
    rc = matrix_save(built, cache, err);
    CHECK(!rc, "%s: matrix_save over an existing file: %s", dir, err);
    {
        glob_t g;
        char pat[1200];
        snprintf(pat, sizeof pat, "%s/m.csr.tmp*", tmp);
        int left = glob(pat, 0, NULL, &g) == 0 ? (int)g.gl_pathc : 0;
        globfree(&g);
        CHECK(left == 0, "%s: %d temp files left after save", dir, left);
    }
    matrix_status st = MATRIX_MISSING;
    prog pl = {0};
    rc = matrix_load(&loaded, &st, cache, &z, NULL, on_progress, &pl, err);
    CHECK(!rc && st == MATRIX_OK && loaded, "%s: matrix_load: %s", dir, err);
    if (loaded) {
        CHECK(loaded->mapped, "%s: the loaded matrix is not a mapping", dir);
        CHECK(same_matrix(built, loaded), "%s: loaded matrix differs from the built one", dir);
        CHECK(!check_against_records(loaded, &z), "%s: loaded CSR differs from the records", dir);
        CHECK(((uintptr_t)loaded->val & 63) == 0, "%s: loaded coefficients not 64-byte aligned", dir);
        CHECK(pl.calls >= 1 && pl.last_done == pl.last_total, "%s: load progress did not reach its total", dir);
        matrix_free(loaded);
        loaded = NULL;
    }
    /* the fingerprint passed in is used as given */
    rc = matrix_load(&loaded, &st, cache, &z, fp, NULL, NULL, err);
    CHECK(!rc, "%s: matrix_load with fingerprint: %s", dir, err);
    matrix_free(loaded);
    loaded = NULL;

    size_t n = 0;
    uint8_t *img = read_file(cache, &n);
    CHECK(img && n == built->mem_size, "%s: cache file size %zu, image %zu", dir, n, built->mem_size);
    if (img) {
        char bad[1100];
        snprintf(bad, sizeof bad, "%s/bad.csr", tmp);
        uint8_t *cp = malloc(n);
        /* truncations */
        expect_reject("empty", bad, img, 0, &z, MATRIX_TRUNCATED, "truncated");
        expect_reject("cut in the header", bad, img, 100, &z, MATRIX_TRUNCATED, "truncated");
        expect_reject("cut in the payload", bad, img, n - 1, &z, MATRIX_TRUNCATED, "truncated");
        expect_reject("cut to the header", bad, img, MATRIX_HEADER_BYTES, &z, MATRIX_TRUNCATED, "truncated");
        /* one bit flipped: in a coefficient, a signal, a row offset */
        size_t spots[3] = {n - 17, MATRIX_HEADER_BYTES + (2 * (size_t)z.domain_size + 1) * 4 + 9,
                           MATRIX_HEADER_BYTES + 2};
        for (int i = 0; i < 3; i++) {
            memcpy(cp, img, n);
            cp[spots[i]] ^= 0x10;
            expect_reject("bit flip in the payload", bad, cp, n, &z, MATRIX_CORRUPT, "checksum");
        }
        memcpy(cp, img, n);
        cp[70] ^= 1; /* the stored checksum itself */
        expect_reject("bit flip in the checksum", bad, cp, n, &z, MATRIX_CORRUPT, "checksum");
        memcpy(cp, img, n);
        cp[1] ^= 0x20;
        expect_reject("bad magic", bad, cp, n, &z, MATRIX_BAD_MAGIC, "magic");
        memcpy(cp, img, n);
        cp[8] = 99;
        expect_reject("future version", bad, cp, n, &z, MATRIX_BAD_VERSION, "version 99");
        memcpy(cp, img, n);
        cp[40] ^= 4;
        expect_reject("fingerprint changed", bad, cp, n, &z, MATRIX_WRONG_KEY, "fingerprint");
        memcpy(cp, img, n);
        cp[16] ^= 1; /* n */
        expect_reject("domain size changed", bad, cp, n, &z, MATRIX_WRONG_KEY, "another key");
        free(cp);
        free(img);
        unlink(bad);
    }
    snprintf(path, sizeof path, "%s/none.csr", tmp);
    expect_reject("missing", path, NULL, 0, &z, MATRIX_TRUNCATED, "truncated"); /* empty file first */
    unlink(path);
    {
        cuzk_matrix *m = NULL;
        rc = matrix_load(&m, &st, path, &z, NULL, NULL, NULL, err);
        CHECK(rc == CUZK_EIO && st == MATRIX_MISSING && !m && strstr(err, "No such file"),
              "missing file: status %s (%s)", matrix_status_name(st), err);
    }

    /* a cache made for another key */
    if (other_zkey) {
        zkey_file o;
        if (zkey_open(&o, other_zkey, err) == CUZK_OK) {
            cuzk_matrix *m = NULL;
            rc = matrix_load(&m, &st, cache, &o, NULL, NULL, NULL, err);
            CHECK(rc == CUZK_EFORMAT && st == MATRIX_WRONG_KEY && !m && strstr(err, "another key"),
                  "%s cache used for %s: status %s (%s)", dir, other_zkey, matrix_status_name(st), err);
            zkey_close(&o);
        } else {
            CHECK(0, "zkey_open %s: %s", other_zkey, err);
        }
    }
    /* the same key with one coefficient changed: same shape, other fingerprint */
    {
        size_t zn = 0;
        uint8_t *zimg = read_file(z.map.path, &zn);
        char zpath[1100];
        snprintf(zpath, sizeof zpath, "%s/changed.zkey", tmp);
        if (zimg && z.n_coefs > 0) {
            size_t off = (size_t)(z.coefs - (const uint8_t *)z.map.base) + (size_t)(z.n_coefs / 2) * 44 + 12;
            zimg[off] ^= 1; /* low bit of v: still below r */
            CHECK(!write_file(zpath, zimg, zn), "cannot write %s", zpath);
            zkey_file c;
            if (zkey_open(&c, zpath, err) == CUZK_OK) {
                cuzk_matrix *m = NULL;
                rc = matrix_load(&m, &st, cache, &c, NULL, NULL, NULL, err);
                CHECK(rc == CUZK_EFORMAT && st == MATRIX_WRONG_KEY && !m && strstr(err, "fingerprint"),
                      "%s: cache used for the key with a changed coefficient: status %s (%s)", dir,
                      matrix_status_name(st), err);
                uint8_t fp2[MATRIX_FP_BYTES];
                matrix_fingerprint(fp2, &c);
                CHECK(memcmp(fp, fp2, sizeof fp), "%s: changed key has the same fingerprint", dir);
                zkey_close(&c);
            } else {
                CHECK(0, "zkey_open %s: %s", zpath, err);
            }
            unlink(zpath);
        }
        free(zimg);
    }
    unlink(cache);
    matrix_free(built);
    zkey_close(&z);
}

int main(int argc, char **argv)
{
    const char *root = argc > 1 ? argv[1] : "tests/data";
    char tmp[] = "/tmp/cuzk-matrix-test.XXXXXX";
    if (!mkdtemp(tmp)) {
        perror("mkdtemp");
        return 2;
    }
    char pat[1024];
    snprintf(pat, sizeof pat, "%s/*/*/circuit.zkey", root);
    glob_t g;
    int nkeys = 0;
    if (glob(pat, 0, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; i++) {
            char dir[1024];
            snprintf(dir, sizeof dir, "%s", g.gl_pathv[i]);
            *strrchr(dir, '/') = 0;
            /* "another key": the next fixture in the list */
            test_key(dir, g.gl_pathc > 1 ? g.gl_pathv[(i + 1) % g.gl_pathc] : NULL, tmp);
            nkeys++;
        }
        globfree(&g);
    }
    rmdir(tmp);
    CHECK(nkeys > 0, "no fixture keys under %s", root);
    printf("matrix_test: %d keys, %d checks, %d failures\n", nkeys, checks, failures);
    return failures ? 1 : 0;
}
