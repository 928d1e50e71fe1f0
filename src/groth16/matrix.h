/* matrix.h - the pre-compiled constraint matrix of a Groth16 key: zkey section 4 as a CSR,
 * built once per circuit and cached on disk.
 *
 * DESIGN. Section 4 (FORMATS.md 3) is a list of records (matrix, row, signal, v) in whatever
 * order the writer left. Every prover evaluates A.w and B.w row by row, so it wants the
 * records grouped by row. A cuzk_matrix is that grouping: one row-offset array of 2n+1
 * entries over the A rows (0..n-1) then the B rows (n..2n-1), a signal index per entry and
 * the 32-byte coefficient v exactly as the zkey stores it. Records keep their file order
 * within a row (a stable counting sort), so sums come out in the same order, byte for byte,
 * whoever built the matrix.
 *
 * The in-memory layout is the file layout: a 128-byte header, then the payload (row
 * offsets, signals, coefficients, each aligned), so saving is one write and loading is one
 * mmap. A cache file is tied to its zkey by a fingerprint of section 4 and the shape (curve,
 * n, n_vars, entry count), and the payload carries a checksum, so a changed zkey never
 * reuses a stale cache and a truncated or corrupted file is rejected, never used.
 * Fingerprint and checksum are a fast 256-bit non-cryptographic hash (four 64-bit lanes,
 * each lane's round bijective in its input word, so any single changed word changes the
 * result); they guard against accidents, not against someone forging a cache file in the
 * daemon's own data directory.
 *
 * Cache file (little-endian):
 *   0   magic "cuzkCSR\0"           8 bytes
 *   8   version (1)                 u32
 *   12  curve id (cuzk_curve_id)    u32
 *   16  n (domain size)             u32
 *   20  n_vars                      u32
 *   24  n_entries                   u64
 *   32  fingerprint                 32 bytes (matrix_fingerprint of the zkey)
 *   64  payload checksum            32 bytes (hash of bytes 128 .. end of file)
 *   96  reserved, zero              32 bytes
 *   128 row offsets                 (2n+1) x u32
 *       signals                     n_entries x u32, at the next multiple of 8
 *       coefficients                n_entries x 32 bytes, at the next multiple of 64
 */
#ifndef CUZK_GROTH16_MATRIX_H
#define CUZK_GROTH16_MATRIX_H

#include <stddef.h>
#include <stdint.h>

#include "groth16/formats.h"
#include "util/err.h"

#define MATRIX_FP_BYTES 32
#define MATRIX_HEADER_BYTES 128
#define MATRIX_VERSION 1

typedef struct cuzk_matrix {
    cuzk_curve_id curve;
    uint32_t n;              /* domain size: rows 0..n-1 are A, n..2n-1 are B */
    uint32_t n_vars;         /* signals (wires incl. ONE); every sig[] is below it */
    uint64_t n_entries;      /* section 4 records */
    const uint32_t *row_ptr; /* 2n+1 offsets into sig/val; row r is [row_ptr[r], row_ptr[r+1]) */
    const uint32_t *sig;     /* n_entries signal indices, 8-byte aligned */
    const uint8_t *val;      /* n_entries x 32 bytes: v = coef * R^2 mod r as in the zkey,
                                64-byte aligned (castable to Fr limbs) */
    uint8_t fingerprint[MATRIX_FP_BYTES];
    /* storage: header + payload, the file image */
    void *mem;               /* aligned_alloc'd image (built) or mmap (loaded) */
    size_t mem_size;         /* bytes */
    int mapped;              /* 1: mem is a read-only mmap of a cache file */
} cuzk_matrix;

/* Why a cache file was not used (matrix_load). */
typedef enum matrix_status {
    MATRIX_OK = 0,
    MATRIX_MISSING = 1,   /* no such file */
    MATRIX_UNREADABLE = 2,/* cannot open, stat or map */
    MATRIX_BAD_MAGIC = 3, /* not a cuzk matrix cache */
    MATRIX_BAD_VERSION = 4,
    MATRIX_TRUNCATED = 5, /* shorter (or longer) than its header says */
    MATRIX_WRONG_KEY = 6, /* curve, shape or fingerprint differ from the zkey's */
    MATRIX_CORRUPT = 7,   /* payload checksum mismatch, or offsets/signals out of range */
} matrix_status;

const char *matrix_status_name(matrix_status s); /* "missing", "corrupt", ... */

/* Load progress: phase names a step ("matrix build", "checksum", ...), done/total count its units. */
typedef void (*matrix_progress_fn)(void *ctx, const char *phase, uint64_t done, uint64_t total);

/* Fingerprint of z's section 4 and shape: names the cache file and ties it to the key.
 * Reads all of section 4 (sequentially). */
void matrix_fingerprint(uint8_t fp[MATRIX_FP_BYTES], const zkey_file *z);

/* Bytes a matrix of z takes in memory (= the cache file size). */
uint64_t matrix_bytes(const zkey_file *z);

/* Builds the CSR of z's section 4. fp: z's fingerprint if the caller has it, else NULL
 * (computed here). progress may be NULL (phase "matrix build", in steps of a record: one pass
 * over the records to count each row's, one to place them, 2 n_coefs steps in all).
 * Fails only with CUZK_ENOMEM. */
cuzk_err matrix_build(cuzk_matrix **out, const zkey_file *z, const uint8_t *fp, matrix_progress_fn progress,
                      void *progress_ctx, char *err);

/* Writes m to path atomically: path.tmp.<pid>, fsync, rename, fsync of the folder.
 * CUZK_EIO with the cause on failure (path is then unchanged). */
cuzk_err matrix_save(const cuzk_matrix *m, const char *path, char *err);

/* Maps the cache at path and checks it against z (magic, version, curve, n, n_vars, entry
 * count, fingerprint, payload checksum, offsets and signals in range). fp: z's fingerprint
 * or NULL. On failure *status says why (MATRIX_MISSING: no file) and the return is
 * CUZK_EIO (missing, unreadable) or CUZK_EFORMAT (anything else), with the message in err. */
cuzk_err matrix_load(cuzk_matrix **out, matrix_status *status, const char *path, const zkey_file *z,
                     const uint8_t *fp, matrix_progress_fn progress, void *progress_ctx, char *err);

void matrix_free(cuzk_matrix *m);

/* fp as 64 lowercase hex digits (out: 65 bytes) */
void matrix_fp_hex(char *out, const uint8_t fp[MATRIX_FP_BYTES]);

#endif
