/* witgen.h - circom witness generators run as child processes: a registered circuit is a
 * proving key plus the program that turns one circuit input (JSON) into a .wtns file.
 *
 * Two kinds of generator, both written by circom:
 *   native  the C++ witness program (`circom --c`, built with make):
 *             GEN input.json out.wtns
 *   wasm    the WebAssembly one (`circom --wasm`), run by node with the generate_witness.js
 *           circom writes next to it (in <name>_js/):
 *             node <dir>/generate_witness.js GEN.wasm input.json out.wtns
 *
 * DESIGN. witgen_run starts the program with posix_spawn (no shell, argv as given, stdin
 * /dev/null, stdout and stderr into one pipe, its own process group, signal mask and the
 * dispositions of SIGINT/SIGTERM/SIGPIPE reset), keeps the last WITGEN_OUTPUT_MAX bytes of
 * what it prints, and polls every 50 ms for its exit, the timeout and the caller's stop
 * predicate; on timeout or stop the whole process group is killed with SIGKILL and
 * reaped. A generator that exits non-zero (circom's answer to an input that violates an
 * assert: "Assert Failed", or to a missing input signal) fails with a message ending in
 * the tail of its output, stack-trace lines left out.
 */
#ifndef CUZK_ENGINE_WITGEN_H
#define CUZK_ENGINE_WITGEN_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

#define WITGEN_NAME_MAX 64       /* bytes of a circuit name incl. NUL */
#define WITGEN_PATH_MAX 1024     /* bytes of a path incl. NUL */
#define WITGEN_OUTPUT_MAX 16384  /* bytes of generator output kept (the last ones) */
#define WITGEN_REASON_MAX 300    /* bytes of that output quoted in a failure message */

typedef enum witgen_kind {
    WITGEN_NATIVE = 0,  /* circom C++ witness program */
    WITGEN_WASM = 1     /* circom .wasm, run with node and generate_witness.js */
} witgen_kind;

typedef struct witgen_circuit {
    char name[WITGEN_NAME_MAX];       /* 1..63 bytes of [A-Za-z0-9_.-] */
    char zkey[WITGEN_PATH_MAX];       /* absolute path of the proving key */
    char generator[WITGEN_PATH_MAX];  /* absolute path of the program or the .wasm */
    char script[WITGEN_PATH_MAX];     /* WASM: absolute path of generate_witness.js; else "" */
    witgen_kind kind;
} witgen_circuit;

/* Parses a registration "NAME=ZKEY,GENERATOR", makes both paths absolute and checks the
 * files: the key is readable; a generator ending in ".wasm" is readable and has
 * generate_witness.js beside it, any other is an executable regular file. */
cuzk_err witgen_circuit_parse(witgen_circuit *out, const char *spec, char *err);

/* Finds a program: a name with a '/' is taken as a path, any other is looked up in $PATH.
 * Writes the absolute path of an executable regular file. */
cuzk_err witgen_find_program(char *out, size_t cap, const char *prog, char *err);

/* bytes of the .wtns file circom writes for a circuit of n_vars wires (32-byte field
 * elements, both curves): header 12 + section 1 (12 + 4 + 32 + 4) + section 2 (12 + 32 n) */
static inline uint64_t witgen_wtns_bytes(uint32_t n_vars)
{
    return 76 + 32 * (uint64_t)n_vars;
}

typedef struct witgen_opts {
    const char *node;          /* node program (absolute), for WITGEN_WASM */
    int64_t timeout_ms;        /* the generator is killed after this long (> 0) */
    int (*stop)(void *ctx);    /* polled every 50 ms; non-zero kills the generator; may be NULL */
    void *stop_ctx;
} witgen_opts;

/* Runs c's generator on input_json, which writes out_wtns. CUZK_OK when it exited 0 and
 * the file exists; CUZK_EINVAL when it failed (exit status or signal, then its output's
 * tail), CUZK_ETIMEOUT, CUZK_ECANCELED (stop), CUZK_EIO (could not be started). Blocks. */
cuzk_err witgen_run(const witgen_circuit *c, const witgen_opts *o, const char *input_json,
                    const char *out_wtns, char *err);

#endif
