/* formats.h - readers for the iden3 binary files (.r1cs, .wtns, Groth16 .zkey).
 *
 * Layouts: docs/FORMATS.md (sections 0-3). Files are memory-mapped read-only; the views
 * below point into the mapping and stay valid until the matching *_close(). Sections
 * may come in any order; unknown section types are ignored; every size and count is
 * cross-checked against the header and each malformation gets its own message naming
 * the file, the section, and what was expected versus found.
 *
 * Sections are only 4-byte aligned inside the files: the uint8_t pointers below may not be
 * cast to 8-byte element types; copy (memcpy) or re-lay out what is read as limbs.
 */
#ifndef CUZK_GROTH16_FORMATS_H
#define CUZK_GROTH16_FORMATS_H

#include <stddef.h>
#include <stdint.h>

#include "curves/curve.h"
#include "util/err.h"

typedef struct file_map {
    void *base;   /* mmap address (NULL for an empty file) */
    size_t size;  /* bytes */
    char path[256];
} file_map;

/* ---- .wtns ---- */
typedef struct wtns_file {
    file_map map;
    const cuzk_curve_info *curve;  /* from the prime in section 1 (must be a curve's r) */
    uint32_t n_witness;            /* values in section 2 */
    const uint8_t *values;         /* n_witness x 32 bytes, standard form LE, each < r */
} wtns_file;

cuzk_err wtns_open(wtns_file *out, const char *path, char *err);
void wtns_close(wtns_file *w);

/* ---- .zkey (Groth16) ---- */
enum { ZKEY_A = 0, ZKEY_B1 = 1, ZKEY_B2 = 2, ZKEY_C = 3, ZKEY_H = 4, ZKEY_BASES = 5 };
/* the base sets' names, in that order: "A", "B1", "B2", "C", "H" */
extern const char *const zkey_set_names[ZKEY_BASES];

typedef struct zkey_file {
    file_map map;
    const cuzk_curve_info *curve; /* from q in section 2 (r must match the same curve) */
    uint32_t n_vars;              /* wires incl. constant ONE */
    uint32_t n_public;            /* public outputs + public inputs */
    uint32_t domain_size;         /* power of two */
    uint32_t log_domain;          /* log2(domain_size) */
    /* verification/proving constants, affine, Montgomery LE exactly as stored (FORMATS.md 3) */
    const uint8_t *alpha1, *beta1, *delta1; /* G1 */
    const uint8_t *beta2, *gamma2, *delta2; /* G2 */
    const uint8_t *ic;            /* (n_public+1) x G1 */
    uint32_t n_coefs;             /* section 4 records */
    const uint8_t *coefs;         /* n_coefs x 44 bytes: u32 matrix, u32 row, u32 signal, v[32] */
    const uint8_t *bases[ZKEY_BASES]; /* sections 5,6,7,8,9 */
    uint32_t n_bases[ZKEY_BASES];     /* n_vars, n_vars, n_vars, n_vars-n_public-1, domain_size */
} zkey_file;

/* Opens and validates a Groth16 zkey (protocol 1, version <= 2). Checks every section
 * size; checks that section 4 rows are < domain_size, signals < n_vars, matrix in {0,1}. */
cuzk_err zkey_open(zkey_file *out, const char *path, char *err);
void zkey_close(zkey_file *z);

/* Checks that a witness fits a key: same curve, n_witness == n_vars, value[0] == 1 (that each
 * value is below r, wtns_open has checked). */
cuzk_err zkey_check_witness(const zkey_file *z, const wtns_file *w, char *err);

/* ---- .r1cs ---- */
typedef struct r1cs_file {
    file_map map;
    const cuzk_curve_info *curve;
    uint32_t n_wires, n_pub_out, n_pub_in, n_prv_in, n_constraints;
    uint64_t n_labels;
    const uint8_t *constraints;   /* section 2 start; variable-length records (FORMATS.md 1) */
    size_t constraints_size;
} r1cs_file;

cuzk_err r1cs_open(r1cs_file *out, const char *path, char *err);
void r1cs_close(r1cs_file *r);

#endif
