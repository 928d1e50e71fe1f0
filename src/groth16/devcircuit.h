/* devcircuit.h - synthetic circuits with an INSECURE development setup (`cuzk dev-circuit`).
 *
 * DESIGN. dev_circuit_generate() writes, into one folder, a Groth16 proving key
 * (circuit.zkey, snarkjs layout, docs/FORMATS.md section 3), a satisfying witness
 * (witness.wtns, section 2), the verification key (vk.json, section 5) and optionally the
 * constraint system (circuit.r1cs, section 1) of a synthetic circuit of exactly
 * n_constraints constraints. It is for tests and benchmarks of provers on circuits of any
 * size without a trusted-setup ceremony: the toxic waste (tau, alpha, beta, delta) is
 * derived from the seed, so ANYONE who knows the seed can forge proofs for the key.
 *
 * The work is split in two:
 *   curve-agnostic (devcircuit.c): the circuit shape (constraints as linear combinations
 *     over a table of coefficients), the free witness values (bits, full-field values),
 *     the binary and JSON writers, dispatch;
 *   per curve (devsetup.h, included once per curve translation unit): solving the
 *     remaining witness values, the setup arithmetic (Lagrange basis at tau, a_j, b_j, c_j)
 *     and the fixed-base scalar multiplications that produce the key's points.
 *
 * Circuit shapes. Sparse (default), a mix like hash and range-check circuits: bit
 * decompositions with boolean constraints b*(b-1)=0, XOR/AND of bits, multiplexers,
 * x^5 S-box chains and products of linear combinations with several full-field
 * coefficients; most witness values are 0 or 1. Dense (--dense): every constraint is a
 * product of random linear combinations with random coefficients, every value full-field.
 */
#ifndef CUZK_GROTH16_DEVCIRCUIT_H
#define CUZK_GROTH16_DEVCIRCUIT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "curves/curve.h"
#include "util/err.h"
#include "util/pool.h"

/* Largest circuit: the setup needs a 2n-point domain, n = domain size (BN254 2-adicity 28). */
#define DEV_MAX_LOG_DOMAIN 27
#define DEV_NO_WIRE UINT32_MAX

/* The name written into the zkey's contribution record (section 10, at most 64 bytes). */
#define DEV_CONTRIBUTION_NAME "INSECURE dev setup, toxic waste known (cuzk dev-circuit)"

/* Who computes the key's points (dev_circuit_params.backend). */
enum {
    DEV_BACKEND_AUTO = 0, /* the GPU when there is a usable one, else the CPU */
    DEV_BACKEND_CPU = 1,  /* the CPU */
    DEV_BACKEND_GPU = 2   /* the GPU, or fail with CUZK_ENODEV */
};

typedef struct dev_circuit_params {
    cuzk_curve_id curve;
    uint32_t n_constraints; /* >= 1; n_constraints + n_public < 2^DEV_MAX_LOG_DOMAIN */
    uint32_t n_public;      /* public signals, wires 1..n_public (0 allowed) */
    int dense;              /* 0: sparse bit-heavy mix; 1: random full-field everything */
    uint64_t seed;          /* selects circuit, witness and the (known) toxic waste */
    int write_r1cs;         /* 1: also write DIR/circuit.r1cs */
    int threads;            /* worker threads; <= 0: all online CPUs */
    int backend;            /* DEV_BACKEND_*: where the key's points are computed (same bytes) */
    int quiet;              /* 1: no progress lines on stderr */
    FILE *report;           /* gets the INSECURE warning and the summary (the CLI: stdout); NULL: none */
    const char *out_dir;    /* created if missing */
} dev_circuit_params;

/* One term of a linear combination: coefficient coefs[coef] times wire `wire`. */
typedef struct dev_term {
    uint32_t wire; /* < n_wires */
    uint32_t coef; /* < n_coefs */
} dev_term;

/* Linear combination kinds, in r1cs order */
enum { DEV_A = 0, DEV_B = 1, DEV_C = 2 };

typedef struct dev_circuit {
    const cuzk_curve_info *curve;
    uint32_t n_constraints;
    uint32_t n_public;
    uint32_t n_wires;      /* incl. wire 0 = constant one */
    uint32_t log_domain;   /* domain_size = 2^log_domain > n_constraints + n_public */
    uint32_t domain_size;
    /* Terms of constraint k, matrix m (DEV_A, DEV_B, DEV_C) are
     * terms[lc_off[3k+m] .. lc_off[3k+m+1]); lc_off has 3*n_constraints+1 entries. */
    uint64_t *lc_off;
    dev_term *terms;
    uint64_t n_terms;
    uint64_t n_ab_terms;   /* terms in A and B (section 4 records, without the public rows) */
    /* Per constraint, the wire whose value the constraint determines (it then appears in
     * that constraint only in C, exactly once, created by it), or DEV_NO_WIRE for a pure
     * check such as b*(b-1) = 0. Solving in constraint order never reads an unset wire. */
    uint32_t *out_wire;
    uint8_t *coefs;        /* n_coefs x 32 bytes, standard form LE, each < r and != 0 */
    uint32_t n_coefs;
    /* n_wires x 32 bytes, standard form LE. dev_circuit_build sets wire 0 and the free
     * wires (those no constraint determines); the per-curve setup fills in the rest. */
    uint8_t *witness;
    uint64_t n_free_bits, n_free_full; /* statistics for the summary line */
    uint64_t n_cap_terms, n_cap_coefs, n_cap_wires; /* allocation capacities (internal) */
    char key_backend[384]; /* set by the setup: what computed the key's points, e.g. "cpu (16 threads)" */
} dev_circuit;

/* ---- deterministic generator (xoshiro256**, seeded through splitmix64) ------------
 * Not cryptographic on purpose: everything dev-circuit draws must be reproducible from
 * the seed. */
typedef struct dev_rng { uint64_t s[4]; } dev_rng;

static inline uint64_t dev_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* stream selects an independent sequence for the same seed (circuit, toxic waste, ...) */
static inline void dev_rng_init(dev_rng *g, uint64_t seed, uint64_t stream)
{
    uint64_t x = seed ^ (stream * 0xd1b54a32d192ed03ull);
    for (int i = 0; i < 4; i++)
        g->s[i] = dev_splitmix64(&x);
}

static inline uint64_t dev_rng_next(dev_rng *g)
{
    uint64_t *s = g->s;
    uint64_t x = s[1] * 5, r = ((x << 7) | (x >> 57)) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = (s[3] << 45) | (s[3] >> 19);
    return r;
}

/* uniform in [0, n), n >= 1 (Lemire's multiply-shift; the tiny bias is irrelevant here) */
static inline uint32_t dev_rng_below(dev_rng *g, uint32_t n)
{
    return (uint32_t)(((dev_rng_next(g) >> 32) * (uint64_t)n) >> 32);
}

#define DEV_STREAM_CIRCUIT 1 /* circuit shape and free witness values */
#define DEV_STREAM_TOXIC 2   /* tau, alpha, beta, delta */

/* Uniform nonzero value < r (32 bytes std LE) by rejection sampling on r's bit length. */
void dev_rng_scalar(uint8_t out[32], dev_rng *g, const cuzk_curve_info *c);

/* ---- the circuit ------------------------------------------------------------------ */

/* Builds the circuit shape and the free witness values. Free with dev_circuit_free. */
cuzk_err dev_circuit_build(dev_circuit *c, const dev_circuit_params *p, char *err);
void dev_circuit_free(dev_circuit *c);

/* Writes c (whose witness must be complete) as circuit.r1cs / witness.wtns. */
cuzk_err dev_write_r1cs(const dev_circuit *c, const char *path, char *err);
cuzk_err dev_write_wtns(const dev_circuit *c, const char *path, char *err);

/* Everything: circuit, witness, setup, all files; the warning and summary to p->report. */
cuzk_err dev_circuit_generate(const dev_circuit_params *p, char *err);

/* ---- iden3 binary container writer (FORMATS.md section 0) -------------------------
 * Section sizes are patched in when a section ends. Errors are sticky: the first one is
 * kept and reported by dev_bin_close, so a writer can emit a whole file unchecked. */
typedef struct dev_bin {
    FILE *f;
    const char *path;
    long long size_pos;   /* file offset of the open section's u64 size, or -1 */
    long long data_pos;   /* file offset of the open section's payload */
    cuzk_err e;           /* first error, CUZK_OK if none */
    char msg[CUZK_ERRLEN];
} dev_bin;

cuzk_err dev_bin_open(dev_bin *w, const char *path, const char magic[4], uint32_t version,
                      uint32_t n_sections, char *err);
void dev_bin_section_begin(dev_bin *w, uint32_t type);
void dev_bin_section_end(dev_bin *w);
void dev_bin_write(dev_bin *w, const void *data, size_t n);
void dev_bin_u32(dev_bin *w, uint32_t v);
void dev_bin_u64(dev_bin *w, uint64_t v);
/* Closes the file; returns the first error of the whole write (and unlinks the file then). */
cuzk_err dev_bin_close(dev_bin *w, char *err);

/* ---- per-curve setup (devsetup.h, one instance per curve translation unit) ---------
 * Solves the witness of c in place (checking every constraint), then writes the proving
 * key to zkey_path. log != NULL receives progress lines. */
#define DEV_SETUP_EXPORTS(p)                                                                       \
    cuzk_err p##dev_setup(dev_circuit *c, const dev_circuit_params *params, pool_t *pool,          \
                          const char *zkey_path, FILE *log, char *err);
DEV_SETUP_EXPORTS(bn254_)
DEV_SETUP_EXPORTS(bls12_381_)

#endif
