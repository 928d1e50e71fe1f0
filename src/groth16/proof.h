/* proof.h - curve-agnostic proof and verification-key values and their snarkjs JSON.
 *
 * Coordinates are STANDARD form (not Montgomery), little-endian, fq_bytes each, as
 * snarkjs writes them in decimal. JSON shapes: docs/FORMATS.md section 5.
 */
#ifndef CUZK_GROTH16_PROOF_H
#define CUZK_GROTH16_PROOF_H

#include <stddef.h>
#include <stdint.h>

#include "curves/curve.h"
#include "util/err.h"

#define FQ_MAX 48 /* bytes of the widest base field */

typedef struct g1_std { uint8_t x[FQ_MAX], y[FQ_MAX]; int inf; } g1_std;
/* Fq2 element c0 + c1*u: x = (x0, x1), y = (y0, y1) */
typedef struct g2_std { uint8_t x0[FQ_MAX], x1[FQ_MAX], y0[FQ_MAX], y1[FQ_MAX]; int inf; } g2_std;

typedef struct cuzk_proof {
    cuzk_curve_id curve;
    g1_std a;
    g2_std b;
    g1_std c;
} cuzk_proof;

typedef struct cuzk_vk {
    cuzk_curve_id curve;
    uint32_t n_public;
    g1_std alpha1;
    g2_std beta2, gamma2, delta2;
    g1_std *ic;           /* n_public + 1 entries, owned (free with vk_free) */
} cuzk_vk;

/* public signals: n x 32 bytes standard LE (each < r) */
typedef struct cuzk_public {
    cuzk_curve_id curve;
    uint32_t n;
    uint8_t *values;      /* owned (free with public_free) */
} cuzk_public;

/* ---- JSON writers: byte for byte what snarkjs writes (bfj with 1-space indent, decimal strings,
 * no trailing newline) ---- */
cuzk_err proof_write_json(const cuzk_proof *p, const char *path, char *err);
cuzk_err public_write_json(const cuzk_public *pub, const char *path, char *err);
cuzk_err vk_write_json(const cuzk_vk *vk, const uint8_t *alphabeta_fq12_std /* 12*fq_bytes or NULL */,
                       const char *path, char *err);
/* same, into a malloc'd string (caller frees) */
char *proof_to_json(const cuzk_proof *p);
char *public_to_json(const cuzk_public *pub);

/* ---- JSON readers (accept every shape snarkjs accepts: decimal or 0x-hex strings,
 * 2- or 3-element points with z = 1, curve aliases) ---- */
cuzk_err proof_read_json(cuzk_proof *out, cuzk_curve_id curve, const char *path, char *err);
cuzk_err public_read_json(cuzk_public *out, cuzk_curve_id curve, const char *path, char *err);
cuzk_err vk_read_json(cuzk_vk *out, const char *path, char *err);
/* the same two from JSON text (what the daemon's journal keeps) */
cuzk_err proof_from_json(cuzk_proof *out, cuzk_curve_id curve, const char *text, char *err);
cuzk_err public_from_json(cuzk_public *out, cuzk_curve_id curve, const char *text, char *err);
void vk_free(cuzk_vk *vk);
void public_free(cuzk_public *pub);

/* ---- decimal <-> little-endian bytes ---- */
/* writes the decimal form of the n-byte LE integer into out (cap bytes incl. NUL) */
void dec_from_le(char *out, size_t cap, const uint8_t *le, size_t n);
/* parses decimal or 0x-hex into n LE bytes; fails if it does not fit or is >= bound_le (if given) */
int le_from_dec(uint8_t *le, size_t n, const char *s, const uint8_t *bound_le);

#endif
