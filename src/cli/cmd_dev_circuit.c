/* cmd_dev_circuit.c - `cuzk dev-circuit`: a synthetic circuit of any size with an INSECURE
 * development setup (proving key, satisfying witness, verification key) for tests and
 * benchmarks. The work is in groth16/devcircuit.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "curves/curve.h"
#include "groth16/devcircuit.h"

static const char dev_help[] =
    "usage: cuzk dev-circuit --curve bn128|bls12381 --constraints N --out DIR [options]\n"
    "\n"
    "Writes DIR/circuit.zkey (Groth16 proving key, snarkjs format), DIR/witness.wtns (a\n"
    "witness that satisfies the circuit) and DIR/vk.json (verification key) for a\n"
    "synthetic circuit of exactly N constraints.\n"
    "\n"
    "  *** INSECURE: the setup's toxic waste is derived from the seed and therefore known;\n"
    "  *** anyone can forge proofs for these keys. For tests and benchmarks only.\n"
    "\n"
    "options:\n"
    "  --curve C          bn128 (alias bn254) or bls12381\n"
    "  --constraints N    number of constraints (also 2^K, or with a k/m suffix: 64k, 1m)\n"
    "  --out DIR          output folder (created if missing)\n"
    "  --public K         public signals (default 1)\n"
    "  --dense            random full-field values and coefficients everywhere (default: a\n"
    "                     hash/range-check-like mix where most values are 0 or 1)\n"
    "  --seed S           selects circuit, witness and setup (default 1)\n"
    "  --r1cs             also write DIR/circuit.r1cs\n"
    "  --threads N        worker threads (default: all online CPUs)\n"
    "  --backend B        where the key's points are computed: cpu, gpu (fails with exit\n"
    "                     code 4 when there is no usable GPU) or auto (default: the GPU\n"
    "                     when there is one, else the CPU). The key is the same byte for byte.\n"
    "  -q, --quiet        no progress lines on stderr\n";

/* N, 2^K, Nk, Nm (binary multiples: 1k = 1024) */
static int parse_count(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    if (!strncmp(s, "2^", 2)) {
        unsigned long k = strtoul(s + 2, &end, 10);
        if (errno || end == s + 2 || *end || k > 40)
            return 0;
        *out = 1ull << k;
        return 1;
    }
    if (*s < '0' || *s > '9')
        return 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return 0;
    if (*end == 'k' || *end == 'K') {
        v <<= 10;
        end++;
    } else if (*end == 'm' || *end == 'M') {
        v <<= 20;
        end++;
    }
    if (*end)
        return 0;
    *out = v;
    return 1;
}

int cmd_dev_circuit(int argc, char **argv)
{
    dev_circuit_params p = {.n_public = 1, .seed = 1, .report = stdout};
    const char *curve = NULL;
    uint64_t n = 0;
    int have_n = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(dev_help, stdout);
            return 0;
        } else if (!strcmp(a, "--dense")) {
            p.dense = 1;
        } else if (!strcmp(a, "--r1cs")) {
            p.write_r1cs = 1;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            p.quiet = 1;
        } else if (!strcmp(a, "--curve") && v) {
            curve = v;
            i++;
        } else if (!strcmp(a, "--out") && v) {
            p.out_dir = v;
            i++;
        } else if (!strcmp(a, "--constraints") && v) {
            if (!parse_count(v, &n) || n < 1 || n >= (1ull << DEV_MAX_LOG_DOMAIN)) {
                fprintf(stderr, "cuzk dev-circuit: --constraints wants a number from 1 to 2^%d - 1, got '%s'\n",
                        DEV_MAX_LOG_DOMAIN, v);
                return EXIT_USAGE;
            }
            have_n = 1;
            i++;
        } else if (!strcmp(a, "--public") && v) {
            uint64_t k;
            if (!parse_count(v, &k) || k >= (1ull << DEV_MAX_LOG_DOMAIN)) {
                fprintf(stderr, "cuzk dev-circuit: --public wants a count, got '%s'\n", v);
                return EXIT_USAGE;
            }
            p.n_public = (uint32_t)k;
            i++;
        } else if (!strcmp(a, "--seed") && v) {
            char *end;
            errno = 0;
            p.seed = strtoull(v, &end, 0);
            if (errno || end == v || *end || *v == '-') {
                fprintf(stderr, "cuzk dev-circuit: --seed wants a non-negative integer, got '%s'\n", v);
                return EXIT_USAGE;
            }
            i++;
        } else if (!strcmp(a, "--backend") && v) {
            if (!strcmp(v, "auto"))
                p.backend = DEV_BACKEND_AUTO;
            else if (!strcmp(v, "cpu"))
                p.backend = DEV_BACKEND_CPU;
            else if (!strcmp(v, "gpu"))
                p.backend = DEV_BACKEND_GPU;
            else {
                fprintf(stderr, "cuzk dev-circuit: --backend wants cpu, gpu or auto, got '%s'\n", v);
                return EXIT_USAGE;
            }
            i++;
        } else if ((!strcmp(a, "--threads") || !strcmp(a, "-t")) && v) {
            char *end;
            long t = strtol(v, &end, 10);
            if (*end || t < 1 || t > 4096) {
                fprintf(stderr, "cuzk dev-circuit: --threads wants a number from 1 to 4096, got '%s'\n", v);
                return EXIT_USAGE;
            }
            p.threads = (int)t;
            i++;
        } else {
            fprintf(stderr, "cuzk dev-circuit: unknown or incomplete option '%s'\n%s", a, dev_help);
            return EXIT_USAGE;
        }
    }
    if (!curve || !have_n || !p.out_dir) {
        fprintf(stderr, "cuzk dev-circuit: --curve, --constraints and --out are required\n%s", dev_help);
        return EXIT_USAGE;
    }
    const cuzk_curve_info *ci = curve_by_name(curve);
    if (!ci) {
        fprintf(stderr, "cuzk dev-circuit: unknown curve '%s' (expected bn128 or bls12381)\n", curve);
        return EXIT_USAGE;
    }
    p.curve = ci->id;
    p.n_constraints = (uint32_t)n;
    if (n + p.n_public >= (1ull << DEV_MAX_LOG_DOMAIN)) {
        fprintf(stderr, "cuzk dev-circuit: constraints + public must stay below 2^%d\n", DEV_MAX_LOG_DOMAIN);
        return EXIT_USAGE;
    }
    fprintf(stderr, "cuzk dev-circuit: WARNING: INSECURE development setup from a known toxic waste "
                    "(seed %llu); never use these keys for anything real\n",
            (unsigned long long)p.seed);
    char err[CUZK_ERRLEN] = "";
    cuzk_err e = dev_circuit_generate(&p, err);
    if (e) {
        fprintf(stderr, "cuzk: %s\n", err);
        return cli_exit_code(e);
    }
    return 0;
}
