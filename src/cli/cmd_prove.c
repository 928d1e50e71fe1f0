/* cmd_prove.c - the one-shot commands: prove, verify, zkey export-vk; and the mapping of
 * error codes to exit codes (cli.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "groth16/backend.h"
#include "groth16/formats.h"
#include "groth16/proof.h"
#include "groth16/prover.h"
#include "server/config.h"

int cli_exit_code(cuzk_err e)
{
    switch (e) {
    case CUZK_OK: return 0;
    case CUZK_EVERIFY: return EXIT_INVALID;
    case CUZK_EINVAL: return EXIT_USAGE;
    case CUZK_EIO:
    case CUZK_EFORMAT:
    case CUZK_ECURVE: return EXIT_INPUT;
    case CUZK_ENOMEM:
    case CUZK_ENODEV:
    case CUZK_EDEVICE:
    case CUZK_EBUDGET: return EXIT_RESOURCE;
    case CUZK_ECANCELED:
    case CUZK_ENOTFOUND:
    case CUZK_ESTORE: return EXIT_SERVER;
    case CUZK_ETIMEOUT: return EXIT_TIMEOUT;
    case CUZK_EINTERNAL: return EXIT_INTERNAL;
    case CUZK_ENOSPC: return EXIT_NOSPACE;
    }
    return EXIT_INTERNAL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Key-load progress on stderr. On a terminal one line per phase, redrawn at most 10 times a
 * second: done and total (GiB for the phases counted in bytes), the rate and the time left.
 * Otherwise one line per 10% of a phase, once the load has run for more than a second; silent
 * for quick loads. The rate is that of the units done since the phase's first report (the
 * units before it came at no known speed, from the page cache say), shown once a quarter of a
 * second has passed. */
typedef struct load_progress {
    double t0;         /* start of the load, monotonic s */
    int tty;           /* stderr is a terminal */
    char phase[32];    /* phase of the last line */
    int decile;        /* last tenth printed in that phase, -1 none */
    double phase_t0;   /* the phase's first report */
    uint64_t phase_done0; /* its units done then */
    double drawn;      /* when the terminal line was last drawn */
    int open;          /* a terminal line is open (no newline yet) */
} load_progress;

/* phases whose units are bytes (the others, "matrix build" and "msm table" among them, count
   records or windows) */
static int phase_in_bytes(const char *phase)
{
    return !strncmp(phase, "bases", 5) || !strcmp(phase, "matrix");
}

static void load_progress_cb(void *ctx, const char *phase, uint64_t done, uint64_t total)
{
    load_progress *lp = ctx;
    double now = now_s();
    if (strcmp(lp->phase, phase)) {
        if (lp->open)
            fputc('\n', stderr);
        lp->open = 0;
        snprintf(lp->phase, sizeof lp->phase, "%s", phase);
        lp->decile = -1;
        lp->phase_t0 = now;
        lp->phase_done0 = done;
        lp->drawn = 0;
    }
    double el = now - lp->t0, ph = now - lp->phase_t0;
    /* units a second since the phase's first report; 0: not known yet */
    double rate = ph >= 0.25 && done > lp->phase_done0 ? (double)(done - lp->phase_done0) / ph : 0;
    if (lp->tty) {
        if (done < total && now - lp->drawn < 0.1)
            return;
        lp->drawn = now;
        char eta[32] = "ETA    - s", speed[32] = "     - GiB/s";
        if (rate > 0) {
            snprintf(eta, sizeof eta, "ETA %4.0f s", (double)(total - done) / rate);
            snprintf(speed, sizeof speed, "%6.2f GiB/s", rate / (1u << 30));
        }
        if (phase_in_bytes(phase))
            fprintf(stderr, "\rcuzk prove: loading key: %-10s %7.2f / %.2f GiB  %s  %s ", phase,
                    (double)done / (1u << 30), (double)total / (1u << 30), speed, eta);
        else
            fprintf(stderr, "\rcuzk prove: loading key: %-10s %llu / %llu  %s ", phase, (unsigned long long)done,
                    (unsigned long long)total, eta);
        lp->open = done < total;
        if (!lp->open)
            fputc('\n', stderr);
        return;
    }
    if (el < 1.0)
        return;
    int d = total ? (int)(done * 10 / total) : 10;
    if (d <= lp->decile)
        return;
    lp->decile = d;
    if (phase_in_bytes(phase) && rate > 0)
        fprintf(stderr, "cuzk prove: loading key: %s %d%% of %.2f GiB, %.2f GiB/s (%.1f s)\n", phase, d * 10,
                (double)total / (1u << 30), rate / (1u << 30), el);
    else
        fprintf(stderr, "cuzk prove: loading key: %s %d%% (%.1f s)\n", phase, d * 10, el);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* --repeat: n proofs with the key loaded once and one reused workspace; prints each run with
 * -v and the median and fastest. *st and *t_end describe the last run. */
static cuzk_err prove_repeat(cuzk_proof *proof, cuzk_backend *be, void *ks, const zkey_file *z, const wtns_file *w,
                             const groth16_rs *rs, int n, int verbose, groth16_times *st, double *t_end, char *err)
{
    int pinned = 0;
    size_t bytes = groth16_prove_mem_size(z);
    /* page-locked only for a GPU backend, as the daemon's pool does */
    uint8_t *mem = be->device >= 0 ? gpu_host_alloc(bytes, &pinned) : aligned_alloc(64, bytes);
    double *runs = malloc((size_t)n * sizeof *runs);
    cuzk_err e = CUZK_OK;
    if (!mem || !runs) {
        e = cuzk_errf(err, CUZK_ENOMEM, "cannot allocate %zu bytes for the prover's buffers", bytes);
        goto out;
    }
    for (int i = 0; i < n; i++) {
        double t = now_s();
        if ((e = groth16_prove_timed(proof, be, ks, z, w, rs, mem, pinned, st, err)))
            goto out;
        *t_end = now_s();
        runs[i] = *t_end - t;
        if (verbose)
            fprintf(stderr,
                    "cuzk prove: run %d: %.1f ms (copy-in %.1f, a/b/c %.1f, h %.1f, msm %.1f, assemble %.1f)%s\n",
                    i + 1, 1e3 * runs[i], 1e3 * st->setup, 1e3 * st->abc, 1e3 * st->h, 1e3 * st->msm,
                    1e3 * st->assemble,
                    st->early ? "; the witness sets' MSMs ran beside a/b/c, h waited for them, msm is the h set's" : "");
    }
    qsort(runs, (size_t)n, sizeof *runs, cmp_double);
    fprintf(stderr, "cuzk prove: %d runs (key loaded once, %s workspace): median %.1f ms, fastest %.1f ms\n", n,
            pinned ? "page-locked" : "pageable", 1e3 * runs[n / 2], 1e3 * runs[0]);
out:
    free(runs);
    if (mem)
        gpu_host_free(mem, pinned);
    return e;
}

/* --batch: n proofs of the witness, their MSMs in as few passes over the key's bases as the
 * backend allows (groth16_prove_batch), `reps` times; prints the median batch and its time a
 * partition. With fixed r, s (CUZK_TEST_RS) the n proofs must be the same: a difference fails. */
static cuzk_err prove_batch(cuzk_proof *proof, cuzk_backend *be, void *ks, const zkey_file *z, const wtns_file *w,
                            const groth16_rs *rs, int n, int reps, int verbose, double *t_end, char *err)
{
    int pinned = 0;
    size_t per = groth16_prove_mem_size(z), bytes = per * (size_t)n;
    uint8_t *mem = be->device >= 0 ? gpu_host_alloc(bytes, &pinned) : aligned_alloc(64, bytes);
    cuzk_proof *out = calloc((size_t)n, sizeof *out);
    double *runs = calloc((size_t)reps, sizeof *runs);
    cuzk_err e = CUZK_OK;
    groth16_times st;
    if (!mem || !out || !runs) {
        e = cuzk_errf(err, CUZK_ENOMEM, "cannot allocate %zu bytes for %d partitions' buffers", bytes, n);
        goto out;
    }
    for (int r = 0; r < reps; r++) {
        double t = now_s();
        if ((e = groth16_prove_batch(out, be, ks, z, w, rs, n, mem, pinned, &st, err)))
            goto out;
        *t_end = now_s();
        runs[r] = *t_end - t;
        if (verbose)
            fprintf(stderr,
                    "cuzk prove: batch %d of %d partitions: %.1f ms, %.1f ms a partition (for all: copy-in %.1f, a/b/c "
                    "%.1f, h %.1f, msm %.1f, assemble %.1f; %d MSM call%s, the first for %d partition%s, stages %s)\n",
                    r + 1, n, 1e3 * runs[r], 1e3 * runs[r] / n, 1e3 * st.setup, 1e3 * st.abc, 1e3 * st.h,
                    1e3 * st.msm, 1e3 * st.assemble, st.passes, st.passes == 1 ? "" : "s", st.first_pass,
                    st.first_pass == 1 ? "" : "s", st.overlapped ? "overlapped" : "in turn");
    }
    for (int i = 1; i < n && rs; i++)
        if (memcmp(&out[i], &out[0], sizeof out[0])) {
            e = cuzk_errf(err, CUZK_EINTERNAL, "--batch: proof %d of the batch differs from proof 1", i + 1);
            goto out;
        }
    *proof = out[0];
    qsort(runs, (size_t)reps, sizeof *runs, cmp_double);
    fprintf(stderr, "cuzk prove: %d batches of %d partitions: median %.1f ms, %.1f ms a partition\n", reps, n,
            1e3 * runs[reps / 2], 1e3 * runs[reps / 2] / n);
out:
    free(out);
    free(runs);
    if (mem)
        gpu_host_free(mem, pinned);
    return e;
}

static const char prove_help[] =
    "usage: cuzk prove [options] circuit.zkey witness.wtns proof.json public.json\n"
    "\n"
    "Writes a Groth16 proof and its public signals in snarkjs's JSON format.\n"
    "\n"
    "options:\n"
    "  --threads N            CPU threads (default: all online CPUs)\n"
    "  --backend cpu|gpu|auto where the heavy arithmetic runs (default auto: the GPU when\n"
    "                         one is usable, else the CPU)\n"
    "  --device N             GPU ordinal for --backend gpu|auto (default 0)\n"
    "  --gpu-mem SIZE         device memory the key may use (e.g. 16G; default: what the\n"
    "                         card has free). A key that does not fit stays in page-locked\n"
    "                         host memory and streams to the GPU for each MSM; -v says which\n"
    "  -v, --verbose          print the backend and the time of each step on stderr\n"
    "  --repeat N             prove N times with the key loaded once and one reused (page-\n"
    "                         locked, with a GPU) workspace; -v prints each run (benchmarks)\n"
    "  --batch N              prove the witness N times as the partitions of one job: a\n"
    "                         streamed key's bases cross to the GPU once for as many of them as\n"
    "                         fit (benchmarks, tests; with --repeat, N partitions each time);\n"
    "                         with a GPU, where a pass serves fewer than N, the next\n"
    "                         partitions' copy-in, a/b/c and h run beside its MSMs\n"
    "                         (CUZK_BATCH_OVERLAP=0: in turn; =1: also on the CPU)\n"
    "  --batch-max K          partitions a streamed pass may serve, at most (default: N)\n"
    "\n"
    "environment:\n"
    "  CUZK_TEST_RS=r,s       fixed blinding scalars (decimal) for reproducible proofs;\n"
    "                         for tests only: a proof with known r, s reveals the witness\n";

/* Chooses and creates the backend named by `which` ("cpu", "gpu", "auto"). */
static cuzk_backend *backend_open(const char *which, cuzk_curve_id curve, int threads, int device, char *err,
                                  cuzk_err *code)
{
    *code = CUZK_OK;
    if (!strcmp(which, "cpu"))
        return cpu_backend_create(curve, threads, err);
    if (!strcmp(which, "gpu")) {
        cuzk_backend *be = gpu_backend_create(curve, device, err);
        if (!be)
            *code = CUZK_ENODEV;
        return be;
    }
    if (!strcmp(which, "auto")) {
        if (gpu_device_count() > 0) {
            char gerr[CUZK_ERRLEN] = "";
            cuzk_backend *be = gpu_backend_create(curve, device, gerr);
            if (be)
                return be;
            fprintf(stderr, "cuzk: GPU not usable (%s); proving on the CPU\n", gerr);
        }
        return cpu_backend_create(curve, threads, err);
    }
    *code = cuzk_errf(err, CUZK_EINVAL, "unknown backend '%s' (expected cpu, gpu or auto)", which);
    return NULL;
}

/* *out <- the value of option opt, a whole number from 1 to max; 0 (and a message) if not */
static int count_arg(const char *opt, const char *s, long max, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < 1 || v > max) {
        fprintf(stderr, "cuzk prove: %s wants a number from 1 to %ld, got '%s'\n", opt, max, s);
        return 0;
    }
    *out = (int)v;
    return 1;
}

int cmd_prove(int argc, char **argv)
{
    const char *pos[4];
    int npos = 0, threads = 0, device = 0, verbose = 0, repeat = 0, batch = 0, batch_max = 0;
    uint64_t gpu_mem = 0;
    const char *backend = "auto";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(prove_help, stdout);
            return 0;
        } else if ((!strcmp(a, "--threads") || !strcmp(a, "-t")) && i + 1 < argc) {
            if (!count_arg("--threads", argv[++i], 4096, &threads))
                return EXIT_USAGE;
        } else if (!strcmp(a, "--backend") && i + 1 < argc) {
            backend = argv[++i];
        } else if (!strcmp(a, "--device") && i + 1 < argc) {
            device = atoi(argv[++i]);
        } else if (!strcmp(a, "--gpu-mem") && i + 1 < argc) {
            char serr[CUZK_ERRLEN];
            if (size_parse(&gpu_mem, argv[++i], serr) || !gpu_mem) {
                fprintf(stderr, "cuzk prove: --gpu-mem wants a size such as 16G, got '%s'\n", argv[i]);
                return EXIT_USAGE;
            }
        } else if (!strcmp(a, "--batch") && i + 1 < argc) {
            if (!count_arg("--batch", argv[++i], 64, &batch))
                return EXIT_USAGE;
        } else if (!strcmp(a, "--batch-max") && i + 1 < argc) {
            if (!count_arg("--batch-max", argv[++i], 64, &batch_max))
                return EXIT_USAGE;
        } else if (!strcmp(a, "--repeat") && i + 1 < argc) {
            if (!count_arg("--repeat", argv[++i], 100000, &repeat))
                return EXIT_USAGE;
        } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
            verbose = 1;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "cuzk prove: unknown or incomplete option '%s'\n%s", a, prove_help);
            return EXIT_USAGE;
        } else if (npos < 4) {
            pos[npos++] = a;
        } else {
            fprintf(stderr, "cuzk prove: too many arguments\n%s", prove_help);
            return EXIT_USAGE;
        }
    }
    if (npos != 4) {
        fprintf(stderr, "cuzk prove: expected 4 file arguments, got %d\n%s", npos, prove_help);
        return EXIT_USAGE;
    }
    char err[CUZK_ERRLEN] = "";
    cuzk_err e = CUZK_OK;
    zkey_file z;
    wtns_file w;
    int have_z = 0, have_w = 0;
    cuzk_backend *be = NULL;
    void *ks = NULL;
    cuzk_public pub = {0};
    double t0 = now_s();

    if ((e = zkey_open(&z, pos[0], err)))
        goto fail;
    have_z = 1;
    if ((e = wtns_open(&w, pos[1], err)))
        goto fail;
    have_w = 1;
    if ((e = zkey_check_witness(&z, &w, err)))
        goto fail;
    be = backend_open(backend, z.curve->id, threads, device, err, &e);
    if (!be) {
        if (!e)
            e = CUZK_ENOMEM;
        goto fail;
    }
    double t1 = now_s();
    load_progress lp = {t1, isatty(STDERR_FILENO), "", -1, t1, 0, 0, 0};
    groth16_key_opts kopts = {.progress = load_progress_cb, .progress_ctx = &lp, .gpu_mem = gpu_mem,
                              .batch_max = batch_max > 0 ? (unsigned)batch_max : batch > 0 ? (unsigned)batch : 1};
    e = be->key_attach(be, &z, &kopts, &ks, err);
    if (lp.open)
        fputc('\n', stderr);
    if (e)
        goto fail;
    double t2 = now_s();
    if (verbose && be->key_info) {
        groth16_key_info ki;
        be->key_info(be, ks, &ki);
        fprintf(stderr, "cuzk prove: key placement: %s\n", ki.why);
        if (ki.abc_on_host)
            fprintf(stderr, "cuzk prove: a/b/c on the CPU (the constraint matrix stays in host memory)\n");
        if (!strcmp(ki.placement, "streamed"))
            fprintf(stderr,
                    "cuzk prove: streamed bases: %.2f GiB page-locked on the host, %.2f GiB a pass, %llu points at "
                    "infinity left out\n",
                    (double)ki.host_bytes / (1u << 30), (double)ki.stream_bytes / (1u << 30),
                    (unsigned long long)ki.points_skipped);
    }
    groth16_rs rs;
    int fixed = groth16_rs_from_env(&rs, z.curve, err);
    if (fixed < 0) {
        e = CUZK_EINVAL;
        goto fail;
    }
    cuzk_proof proof;
    groth16_times st;
    double t3 = 0;
    memset(&st, 0, sizeof st);
    if (batch) {
        if ((e = prove_batch(&proof, be, ks, &z, &w, fixed ? &rs : NULL, batch, repeat ? repeat : 1, verbose, &t3,
                             err)))
            goto fail;
    } else if (!repeat) {
        if ((e = groth16_prove_timed(&proof, be, ks, &z, &w, fixed ? &rs : NULL, NULL, 0, &st, err)))
            goto fail;
        t3 = now_s();
    } else if ((e = prove_repeat(&proof, be, ks, &z, &w, fixed ? &rs : NULL, repeat, verbose, &st, &t3, err))) {
        goto fail;
    }
    memset(&rs, 0, sizeof rs);
    if ((e = groth16_public_from_wtns(&pub, &z, &w, err)) || (e = proof_write_json(&proof, pos[2], err)) ||
        (e = public_write_json(&pub, pos[3], err)))
        goto fail;
    if (verbose)
        fprintf(stderr,
                "cuzk prove: %s, %u constraints domain 2^%u, backend %s: open %.3f s, key %.3f s, prove %.3f s\n",
                z.curve->label, z.domain_size, z.log_domain, be->name, t1 - t0, t2 - t1, t3 - t2);
    if (verbose && !batch)
        fprintf(stderr, "cuzk prove: steps: buffers %.1f ms, a/b/c %.1f ms, h %.1f ms, msm %.1f ms, assemble %.1f ms\n",
                1e3 * st.setup, 1e3 * st.abc, 1e3 * st.h, 1e3 * st.msm, 1e3 * st.assemble);
    if (verbose && be->key_info) {
        groth16_key_info ki;
        be->key_info(be, ks, &ki);
        if (ki.passes)
            fprintf(stderr,
                    "cuzk prove: streamed: %llu passes, %.2f GiB copied, the device waited %.1f ms on copies in all\n",
                    (unsigned long long)ki.passes, (double)ki.bytes_copied / (1u << 30), ki.copy_wait_us / 1e3);
    }
fail:
    if (e)
        fprintf(stderr, "cuzk prove: %s\n", err[0] ? err : cuzk_strerror(e));
    public_free(&pub);
    if (ks)
        be->key_detach(be, ks);
    if (be)
        be->destroy(be);
    if (have_w)
        wtns_close(&w);
    if (have_z)
        zkey_close(&z);
    return cli_exit_code(e);
}

static const char verify_help[] =
    "usage: cuzk verify vk.json public.json proof.json\n"
    "\n"
    "Checks a Groth16 proof (snarkjs JSON files, snarkjs's argument order).\n"
    "Exit 0 and prints OK when valid; exit 1 and prints INVALID with the reason when not;\n"
    "exit 3 when a file is missing or malformed.\n";

int cmd_verify(int argc, char **argv)
{
    const char *pos[3];
    int npos = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(verify_help, stdout);
            return 0;
        }
        if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "cuzk verify: unknown option '%s'\n%s", argv[i], verify_help);
            return EXIT_USAGE;
        }
        if (npos == 3) {
            fprintf(stderr, "cuzk verify: too many arguments\n%s", verify_help);
            return EXIT_USAGE;
        }
        pos[npos++] = argv[i];
    }
    if (npos != 3) {
        fprintf(stderr, "cuzk verify: expected 3 file arguments, got %d\n%s", npos, verify_help);
        return EXIT_USAGE;
    }
    char err[CUZK_ERRLEN] = "";
    cuzk_vk vk = {0};
    cuzk_public pub = {0};
    cuzk_proof proof;
    cuzk_err e;
    if ((e = vk_read_json(&vk, pos[0], err)) || (e = public_read_json(&pub, vk.curve, pos[1], err)) ||
        (e = proof_read_json(&proof, vk.curve, pos[2], err)))
        goto out;
    e = groth16_verify(&vk, &pub, &proof, err);
out:
    if (e == CUZK_OK)
        printf("OK\n");
    else if (e == CUZK_EVERIFY)
        printf("INVALID: %s\n", err);
    else
        fprintf(stderr, "cuzk verify: %s\n", err[0] ? err : cuzk_strerror(e));
    vk_free(&vk);
    public_free(&pub);
    return cli_exit_code(e);
}

static const char zkey_help[] = "usage: cuzk zkey export-vk circuit.zkey vk.json\n"
                                "\n"
                                "Writes the verification key of a Groth16 zkey in snarkjs's format.\n";

int cmd_zkey(int argc, char **argv)
{
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        fputs(zkey_help, stdout);
        return 0;
    }
    if (argc != 4 || strcmp(argv[1], "export-vk")) {
        fprintf(stderr, "cuzk zkey: expected 'export-vk circuit.zkey vk.json'\n%s", zkey_help);
        return EXIT_USAGE;
    }
    char err[CUZK_ERRLEN] = "";
    zkey_file z;
    cuzk_vk vk = {0};
    cuzk_err e = zkey_open(&z, argv[2], err);
    if (e)
        goto out;
    uint8_t alphabeta[12 * FQ_MAX];
    if (!(e = groth16_vk_from_zkey(&vk, alphabeta, &z, err)))
        e = vk_write_json(&vk, alphabeta, argv[3], err);
    zkey_close(&z);
out:
    if (e)
        fprintf(stderr, "cuzk zkey export-vk: %s\n", err[0] ? err : cuzk_strerror(e));
    vk_free(&vk);
    return cli_exit_code(e);
}
