/* gpu_backend_test.c - the CUDA backend's steps against the CPU backend's, step by step.
 *
 *   gpu_backend_test [circuit.zkey ...]
 *
 * For each key: a fresh random witness (values < r; it need not satisfy the circuit, the
 * steps are plain arithmetic), then eval_abc, compute_h and msm_all on both backends;
 * a/b/c and h must match byte for byte (both keep reduced Montgomery/standard forms),
 * the five MSM results must be the same projective points (X1 Z2^2 = X2 Z1^2 and
 * Y1 Z2^3 = Y2 Z1^3, checked with a small Montgomery multiplication of its own). Then the
 * daemon's path: CPU a/b/c in page-locked buffers, GPU h and MSMs (check_daemon_path).
 * Prints "SKIP" and succeeds when there is no GPU or no key is given (make test runs it
 * bare; tests/gpu.sh gives it keys made by `cuzk dev-circuit`).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "groth16/backend.h"
#include "groth16/formats.h"
#include "groth16/prover.h"

static uint64_t rs_state;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* runs step on be (reps times, GPU_TEST_REPS, default 1), returns the median ms or -1 */
typedef cuzk_err (*step_fn)(cuzk_backend *, void *, groth16_ws *, char *);
static double timed(step_fn f, cuzk_backend *be, void *ks, groth16_ws *ws, char *err, int reps)
{
    double t[16];
    if (reps > 16)
        reps = 16;
    for (int i = 0; i < reps; i++) {
        double t0 = now_ms();
        if (f(be, ks, ws, err))
            return -1;
        t[i] = now_ms() - t0;
    }
    for (int i = 1; i < reps; i++)
        for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
            double x = t[j];
            t[j] = t[j - 1];
            t[j - 1] = x;
        }
    return t[reps / 2];
}
static uint64_t rnd(void)
{
    uint64_t z = (rs_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* ---- Montgomery arithmetic mod q, L 64-bit limbs (L = 4 or 6) ---- */
typedef struct mq {
    int L;
    uint64_t p[6], m0;
} mq;

static void mq_init(mq *f, const uint8_t *q_le, size_t bytes)
{
    f->L = (int)(bytes / 8);
    memcpy(f->p, q_le, bytes);
    uint64_t inv = 1;
    for (int i = 0; i < 7; i++)
        inv *= 2 - f->p[0] * inv;
    f->m0 = 0 - inv;
}

static void mq_mul(const mq *f, uint64_t *o, const uint64_t *a, const uint64_t *b)
{
    int L = f->L;
    uint64_t t[8] = {0};
    for (int i = 0; i < L; i++) {
        unsigned __int128 c = 0;
        for (int j = 0; j < L; j++) {
            c += (unsigned __int128)a[j] * b[i] + t[j];
            t[j] = (uint64_t)c;
            c >>= 64;
        }
        c += t[L];
        t[L] = (uint64_t)c;
        t[L + 1] = (uint64_t)(c >> 64);
        uint64_t m = t[0] * f->m0;
        c = (unsigned __int128)m * f->p[0] + t[0];
        c >>= 64;
        for (int j = 1; j < L; j++) {
            c += (unsigned __int128)m * f->p[j] + t[j];
            t[j - 1] = (uint64_t)c;
            c >>= 64;
        }
        c += t[L];
        t[L - 1] = (uint64_t)c;
        t[L] = t[L + 1] + (uint64_t)(c >> 64);
    }
    int ge = t[L] != 0;
    if (!ge) {
        ge = 1;
        for (int i = L - 1; i >= 0; i--)
            if (t[i] != f->p[i]) {
                ge = t[i] > f->p[i];
                break;
            }
    }
    if (ge) {
        unsigned __int128 bw = 0;
        for (int i = 0; i < L; i++) {
            unsigned __int128 d = (unsigned __int128)t[i] - f->p[i] - bw;
            t[i] = (uint64_t)d;
            bw = (d >> 64) ? 1 : 0;
        }
    }
    memcpy(o, t, (size_t)L * 8);
}

static void mq_sub(const mq *f, uint64_t *o, const uint64_t *a, const uint64_t *b)
{
    int L = f->L;
    unsigned __int128 bw = 0;
    for (int i = 0; i < L; i++) {
        unsigned __int128 d = (unsigned __int128)a[i] - b[i] - bw;
        o[i] = (uint64_t)d;
        bw = (d >> 64) ? 1 : 0;
    }
    if (bw) {
        unsigned __int128 c = 0;
        for (int i = 0; i < L; i++) {
            c += (unsigned __int128)o[i] + f->p[i];
            o[i] = (uint64_t)c;
            c >>= 64;
        }
    }
}

static void mq_add(const mq *f, uint64_t *o, const uint64_t *a, const uint64_t *b)
{
    uint64_t z[6] = {0}, nb[6];
    mq_sub(f, nb, z, b);
    mq_sub(f, o, a, nb);
}

/* element of Fq (E = 1) or Fq2 (E = 2) */
static void mx_mul(const mq *f, int E, uint64_t *o, const uint64_t *a, const uint64_t *b)
{
    int L = f->L;
    if (E == 1) {
        mq_mul(f, o, a, b);
        return;
    }
    uint64_t t0[6], t1[6], t2[6], t3[6];
    mq_mul(f, t0, a, b);
    mq_mul(f, t1, a + L, b + L);
    mq_mul(f, t2, a, b + L);
    mq_mul(f, t3, a + L, b);
    mq_sub(f, o, t0, t1);
    mq_add(f, o + L, t2, t3);
}

static int mx_is_zero(const mq *f, int E, const uint64_t *a)
{
    uint64_t x = 0;
    for (int i = 0; i < E * f->L; i++)
        x |= a[i];
    return x == 0;
}

/* Jacobian points p, q (X|Y|Z, E*L limbs each): same projective point? */
static int jac_equal(const mq *f, int E, const uint64_t *p, const uint64_t *q)
{
    int W = E * f->L;
    const uint64_t *x1 = p, *y1 = p + W, *z1 = p + 2 * W, *x2 = q, *y2 = q + W, *z2 = q + 2 * W;
    int inf1 = mx_is_zero(f, E, z1), inf2 = mx_is_zero(f, E, z2);
    if (inf1 || inf2)
        return inf1 && inf2;
    uint64_t z1s[12], z2s[12], z1c[12], z2c[12], l[12], r[12];
    mx_mul(f, E, z1s, z1, z1);
    mx_mul(f, E, z2s, z2, z2);
    mx_mul(f, E, z1c, z1s, z1);
    mx_mul(f, E, z2c, z2s, z2);
    mx_mul(f, E, l, x1, z2s);
    mx_mul(f, E, r, x2, z1s);
    if (memcmp(l, r, (size_t)W * 8))
        return 0;
    mx_mul(f, E, l, y1, z2c);
    mx_mul(f, E, r, y2, z1c);
    return memcmp(l, r, (size_t)W * 8) == 0;
}

/* whether ws's five MSM results are the points of ref's */
static int msm_all_equal(const mq *f, const groth16_ws *ref, const groth16_ws *ws)
{
    int ok = 1;
    for (int s = 0; s < ZKEY_BASES; s++)
        ok &= jac_equal(f, s == ZKEY_B2 ? 2 : 1, ref->msm[s], ws->msm[s]);
    return ok;
}

static void count_phase(void *ctx, int phase)
{
    int *n = ctx;
    n[phase == GROTH16_PHASE_COPY]++;
}

/* The daemon's path: a/b/c from the CPU backend, then the GPU's compute_h and msm_all on
 * page-locked buffers (ws.pinned, gpu_host_alloc) with none of this workspace's data on the
 * device yet, through the groth16_step_* wrappers and with a phase hook. h and the MSMs must
 * equal the CPU results in ref (the steps above); the MSMs run twice, with h taken device to
 * device from compute_h and, after clearing the token, uploaded from the host. */
static int check_daemon_path(const zkey_file *z, cuzk_backend *cpu, void *ks_c, cuzk_backend *gpu, void *ks_g,
                             const uint8_t *wtns, const groth16_ws *ref, const mq *f)
{
    char err[CUZK_ERRLEN];
    size_t n = z->domain_size, abc = groth16_ws_size(z), wb = 32 * (size_t)z->n_vars;
    int pinned = 0, fails = 0, phases[2] = {0, 0};
    uint8_t *mem = gpu_host_alloc(abc + wb, &pinned);
    if (!mem) {
        fprintf(stderr, "FAIL: out of memory\n");
        return 1;
    }
    memcpy(mem + abc, wtns, wb);
    groth16_ws ws;
    groth16_ws_init(&ws, z, mem, mem + abc);
    ws.pinned = pinned;
    if (groth16_step_abc(cpu, ks_c, &ws, err)) {
        fprintf(stderr, "FAIL: cpu eval_abc: %s\n", err);
        fails = 1;
        goto done;
    }
    ws.phase = count_phase;
    ws.phase_ctx = phases;
    if (groth16_step_h(gpu, ks_g, &ws, err)) {
        fprintf(stderr, "FAIL: compute_h (daemon path): %s\n", err);
        fails = 1;
        goto done;
    }
    int ok = !memcmp(ws.a, ref->a, n * 32) && phases[1] >= 2 && phases[0] >= 1;
    printf("  daemon path (pinned %d): compute_h h: %s (copy phases %d, compute %d)\n", pinned, ok ? "ok" : "FAIL",
           phases[1], phases[0]);
    fails += !ok;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1)
            ws.h_token = 0; /* h from the host this time */
        memset(ws.msm, 0xa5, sizeof ws.msm);
        if (groth16_step_msm(gpu, ks_g, &ws, err)) {
            fprintf(stderr, "FAIL: msm_all (daemon path): %s\n", err);
            fails = 1;
            goto done;
        }
        ok = msm_all_equal(f, ref, &ws);
        printf("  daemon path: msm_all, h %s: %s\n", pass ? "from the host" : "device to device", ok ? "ok" : "FAIL");
        fails += !ok;
    }
done:
    gpu_host_free(mem, pinned);
    return fails;
}

/* The path of groth16_prove (keep_on_device: no host copies of a/b/c and h), for two
 * workspaces whose steps interleave so that each finds its a/b/c, then its h, gone from the
 * device and must compute them again: 1 abc, 2 abc, 1 h, 2 h, 1 msm, 2 msm. Workspace 1 has
 * the witness of ref (CPU results), workspace 2 another witness (wtns2, CPU results ref2),
 * so that one workspace's data taken for the other's fails. Then workspace 1 alone, steps in
 * a row: the device-to-device path. */
static int check_device_chain(const zkey_file *z, cuzk_backend *gpu, void *ks_g, const uint8_t *wtns,
                              const uint8_t *wtns2, const groth16_ws *ref, const groth16_ws *ref2, const mq *f)
{
    char err[CUZK_ERRLEN];
    size_t abc = groth16_ws_size(z), wb = 32 * (size_t)z->n_vars;
    int pinned[2] = {0, 0}, fails = 0;
    uint8_t *mem[2] = {gpu_host_alloc(abc + wb, &pinned[0]), gpu_host_alloc(abc + wb, &pinned[1])};
    groth16_ws ws[2];
    if (!mem[0] || !mem[1]) {
        fprintf(stderr, "FAIL: out of memory\n");
        fails = 1;
        goto done;
    }
    for (int i = 0; i < 2; i++) {
        memcpy(mem[i] + abc, i ? wtns2 : wtns, wb);
        memset(mem[i], 0xa5, abc);
        groth16_ws_init(&ws[i], z, mem[i], mem[i] + abc);
        ws[i].pinned = pinned[i];
        ws[i].keep_on_device = 1;
    }
    for (int i = 0; i < 2; i++)
        if (groth16_step_abc(gpu, ks_g, &ws[i], err)) {
            fprintf(stderr, "FAIL: chained eval_abc %d: %s\n", i + 1, err);
            fails = 1;
            goto done;
        }
    for (int i = 0; i < 2; i++)
        if (groth16_step_h(gpu, ks_g, &ws[i], err)) {
            fprintf(stderr, "FAIL: chained compute_h %d: %s\n", i + 1, err);
            fails = 1;
            goto done;
        }
    /* the host buffers were left alone: what they lack is marked */
    int ok = ws[0].host_missing == (GROTH16_HOST_ABC | GROTH16_HOST_H) &&
             ws[1].host_missing == (GROTH16_HOST_ABC | GROTH16_HOST_H) && mem[0][0] == 0xa5 && mem[1][abc - 1] == 0xa5;
    for (int i = 0; i < 2; i++) {
        memset(ws[i].msm, 0xa5, sizeof ws[i].msm);
        if (groth16_step_msm(gpu, ks_g, &ws[i], err)) {
            fprintf(stderr, "FAIL: chained msm_all %d: %s\n", i + 1, err);
            fails = 1;
            goto done;
        }
        ok &= msm_all_equal(f, i ? ref2 : ref, &ws[i]);
    }
    printf("  kept on the device, two workspaces interleaved (every input recomputed): %s\n", ok ? "ok" : "FAIL");
    fails += !ok;
    memset(ws[0].msm, 0xa5, sizeof ws[0].msm);
    if (groth16_step_abc(gpu, ks_g, &ws[0], err) || groth16_step_h(gpu, ks_g, &ws[0], err) ||
        groth16_step_msm(gpu, ks_g, &ws[0], err)) {
        fprintf(stderr, "FAIL: chained steps: %s\n", err);
        fails = 1;
        goto done;
    }
    ok = msm_all_equal(f, ref, &ws[0]) && ws[0].host_missing == (GROTH16_HOST_ABC | GROTH16_HOST_H);
    printf("  kept on the device, steps in a row: %s\n", ok ? "ok" : "FAIL");
    fails += !ok;
done:
    for (int i = 0; i < 2; i++)
        if (mem[i])
            gpu_host_free(mem[i], pinned[i]);
    return fails;
}

/* fills witness w (nv values) of kind: 0 zeros (but the constant 1), 1 all ones, 2 a mix of 0, 1
   and random values, 3 random values (dense) */
static void make_witness(uint8_t *w, size_t nv, int kind, const uint8_t *r_le)
{
    for (size_t i = 0; i < nv; i++) {
        uint8_t *v = w + 32 * i;
        uint64_t pick = kind == 2 ? rnd() % 4 : kind == 3 ? 2 : (uint64_t)kind;
        memset(v, 0, 32);
        if (i == 0 || pick == 1) {
            v[0] = 1;
        } else if (pick >= 2) {
            for (;;) {
                for (int k = 0; k < 4; k++) {
                    uint64_t x = rnd();
                    memcpy(v + 8 * k, &x, 8);
                }
                v[31] &= 0x7f;
                int lt = 0;
                for (int k = 31; k >= 0; k--)
                    if (v[k] != r_le[k]) {
                        lt = v[k] < r_le[k];
                        break;
                    }
                if (lt)
                    break;
            }
        }
    }
}

/* STREAMED: the key attached again with its bases in host memory (CUZK_GPU_PLACEMENT=streamed)
 * in chunks of `chunk` points (0: the planner's), then msm_all on one workspace and msm_batch
 * on 1, 3 and 10 workspaces (witnesses of all zeros, all ones, mixed, random), against the CPU
 * backend's MSMs of each. With gpu_mem set, the cap alone must make the key stream. */
#define STREAM_WS 10
/* the CPU results the streamed checks compare with: STREAM_WS workspaces (witnesses of all
   zeros, all ones, mixed, random in turn), each in mem[i] = [CPU a|b|c][GPU a|b|c][witness],
   the GPU's a holding the CPU's h */
typedef struct stream_refs {
    cuzk_backend *cpu; /* and its key: the oracle of the a/b/c check */
    void *ks_c;
    uint8_t *mem[STREAM_WS];
    int pinned[STREAM_WS];
    groth16_ws ref[STREAM_WS], ws[STREAM_WS];
} stream_refs;

static int stream_refs_make(stream_refs *r, const zkey_file *z, cuzk_backend *cpu, void *ks_c)
{
    char err[CUZK_ERRLEN];
    size_t abc = groth16_ws_size(z), nv = z->n_vars, wb = 32 * nv;
    memset(r, 0, sizeof *r);
    r->cpu = cpu;
    r->ks_c = ks_c;
    for (int i = 0; i < STREAM_WS; i++) {
        uint8_t *m = r->mem[i] = gpu_host_alloc(2 * abc + wb, &r->pinned[i]);
        if (!m) {
            fprintf(stderr, "FAIL: out of memory\n");
            return 1;
        }
        make_witness(m + 2 * abc, nv, i % 4, z->curve->r_le);
        groth16_ws_init(&r->ref[i], z, m, m + 2 * abc);
        if (cpu->eval_abc(cpu, ks_c, &r->ref[i], err) || cpu->compute_h(cpu, ks_c, &r->ref[i], err) ||
            cpu->msm_all(cpu, ks_c, &r->ref[i], err)) {
            fprintf(stderr, "FAIL: cpu steps: %s\n", err);
            return 1;
        }
        memcpy(m + abc, m, (size_t)z->domain_size * 32);
        groth16_ws_init(&r->ws[i], z, m + abc, m + 2 * abc);
        r->ws[i].pinned = r->pinned[i];
    }
    return 0;
}

static void stream_refs_free(stream_refs *r)
{
    for (int i = 0; i < STREAM_WS; i++)
        if (r->mem[i])
            gpu_host_free(r->mem[i], r->pinned[i]);
}

/* STREAMED: the key attached again with its bases in host memory (CUZK_GPU_PLACEMENT=streamed)
 * in chunks of `chunk` points (0: the planner's), then msm_all on one workspace and msm_batch
 * on 1, 3 and 10 workspaces (witnesses of all zeros, all ones, mixed, random; stream_batch a
 * pass), against
 * the CPU backend's MSMs of each. With gpu_mem set instead, the cap alone must make it stream
 * (may_refuse: or the attach may fail for want of memory, naming the streamed need). */
static unsigned last_sets;       /* the sets the last check_streamed key streamed (bit i: set i) */
static unsigned stream_batch = 4; /* partitions a pass check_streamed asks for */
static int check_streamed(const zkey_file *z, stream_refs *r, cuzk_backend *gpu, const cuzk_matrix *mat, const mq *f,
                          size_t chunk, uint64_t gpu_mem, int may_refuse)
{
    char err[CUZK_ERRLEN], cbuf[32];
    int fails = 0;
    groth16_ws *wp[STREAM_WS];
    void *ks = NULL;
    groth16_key_opts opts = {.matrix = mat, .gpu_mem = gpu_mem, .batch_max = stream_batch};
    if (!gpu_mem)
        setenv("CUZK_GPU_PLACEMENT", "streamed", 1);
    snprintf(cbuf, sizeof cbuf, "%zu", chunk);
    if (chunk)
        setenv("CUZK_GPU_STREAM_CHUNK", cbuf, 1);
    cuzk_err e = gpu->key_attach(gpu, z, &opts, &ks, err);
    unsetenv("CUZK_GPU_PLACEMENT");
    unsetenv("CUZK_GPU_STREAM_CHUNK");
    if (e && may_refuse && e == CUZK_ENOMEM && strstr(err, "streamed")) {
        printf("  streamed key under a cap of %llu bytes: ok, refused: %s\n", (unsigned long long)gpu_mem, err);
        return 0;
    }
    if (e) {
        fprintf(stderr, "FAIL: streamed key attach (chunk %zu, cap %llu): %s\n", chunk, (unsigned long long)gpu_mem,
                err);
        return 1;
    }
    groth16_key_info ki;
    gpu->key_info(gpu, ks, &ki);
    printf("  streamed key: %s\n", ki.why);
    last_sets = ki.sets_streamed;
    if (strcmp(ki.placement, "streamed") || (chunk && ki.chunk_points != chunk)) {
        fprintf(stderr, "FAIL: placement %s, chunk %llu, sets streamed %#x (wanted streamed, chunk %zu)\n",
                ki.placement, (unsigned long long)ki.chunk_points, ki.sets_streamed, chunk);
        gpu->key_detach(gpu, ks);
        return 1;
    }
    for (int i = 0; i < STREAM_WS; i++)
        wp[i] = &r->ws[i];
    memset(r->ws[3].msm, 0xa5, sizeof r->ws[3].msm);
    int ok = gpu->msm_all(gpu, ks, &r->ws[3], err) == CUZK_OK && msm_all_equal(f, &r->ref[3], &r->ws[3]);
    printf("  streamed msm_all (random witness): %s\n", ok ? "ok" : "FAIL");
    fails += !ok;
    static const int batches[3] = {1, 3, STREAM_WS};
    for (int b = 0; b < 3; b++) {
        for (int i = 0; i < batches[b]; i++)
            memset(r->ws[i].msm, 0xa5, sizeof r->ws[i].msm);
        e = gpu->msm_batch(gpu, ks, wp, batches[b], err);
        ok = e == CUZK_OK;
        for (int i = 0; i < batches[b] && ok; i++)
            ok &= msm_all_equal(f, &r->ref[i], &r->ws[i]);
        printf("  streamed msm_batch of %d (zeros, ones, mixed, random): %s%s%s\n", batches[b], ok ? "ok" : "FAIL",
               e ? ": " : "", e ? err : "");
        fails += !ok;
    }
    /* the h step after passes (a lean key's twiddles share its arena with a pass's buffers and
       are built again): a/b/c (their host copies against the CPU's) and h on the device against
       the CPU's h, then one more pass */
    {
        const size_t hb = (size_t)z->domain_size * 32;
        groth16_ws *g = &r->ws[3], t;
        uint8_t *tm = malloc(groth16_ws_size(z));
        memset(g->a, 0xa5, 3 * hb);
        memset(g->msm, 0xa5, sizeof g->msm);
        e = tm ? gpu->eval_abc(gpu, ks, g, err) : CUZK_ENOMEM;
        ok = e == CUZK_OK;
        if (ok) {
            groth16_ws_init(&t, z, tm, g->wtns);
            e = r->cpu->eval_abc(r->cpu, r->ks_c, &t, err);
            ok = e == CUZK_OK && !memcmp(g->a, t.a, hb) && !memcmp(g->b, t.b, hb) && !memcmp(g->c, t.c, hb);
            printf("  streamed eval_abc, host copies against the CPU's: %s\n", ok ? "ok" : "FAIL");
        }
        free(tm);
        if (e == CUZK_OK)
            e = gpu->compute_h(gpu, ks, g, err);
        ok &= e == CUZK_OK && memcmp(g->a, r->ref[3].a, hb) == 0;
        if (ok) {
            e = gpu->msm_all(gpu, ks, g, err);
            ok = e == CUZK_OK && msm_all_equal(f, &r->ref[3], g);
        }
        printf("  streamed h after the passes, then msm_all (random witness): %s%s%s\n", ok ? "ok" : "FAIL",
               e ? ": " : "", e ? err : "");
        fails += !ok;
        memcpy(g->a, r->ref[3].a, hb); /* the next check's h, whatever happened here */
    }
    gpu->key_info(gpu, ks, &ki);
    printf("  streamed: %llu passes, %llu bytes copied, copy wait %.1f ms, %llu points at infinity left out\n",
           (unsigned long long)ki.passes, (unsigned long long)ki.bytes_copied, ki.copy_wait_us / 1e3,
           (unsigned long long)ki.points_skipped);
    gpu->key_detach(gpu, ks);
    return fails;
}

/* device bytes of the key streamed with every set on the bus in chunks of `chunk` points, one
   partition a pass; 0 on failure */
static uint64_t streamed_need(const zkey_file *z, cuzk_backend *gpu, const cuzk_matrix *mat, const char *chunk)
{
    char err[CUZK_ERRLEN];
    void *ks = NULL;
    groth16_key_opts opts = {.matrix = mat, .batch_max = 1};
    setenv("CUZK_GPU_PLACEMENT", "streamed", 1);
    setenv("CUZK_GPU_STREAM_CHUNK", chunk, 1);
    cuzk_err e = gpu->key_attach(gpu, z, &opts, &ks, err);
    unsetenv("CUZK_GPU_PLACEMENT");
    unsetenv("CUZK_GPU_STREAM_CHUNK");
    if (e) {
        fprintf(stderr, "FAIL: streamed key attach for its need: %s\n", err);
        return 0;
    }
    groth16_key_info ki;
    gpu->key_info(gpu, ks, &ki);
    gpu->key_detach(gpu, ks);
    return ki.device_bytes;
}

static int check_key(const char *path, cuzk_backend *cpu, cuzk_backend *gpu)
{
    char err[CUZK_ERRLEN];
    zkey_file z;
    int fails = 0;
    if (zkey_open(&z, path, err)) {
        fprintf(stderr, "FAIL: %s\n", err);
        return 1;
    }
    const cuzk_curve_info *ci = z.curve;
    size_t n = z.domain_size, nv = z.n_vars, abc = groth16_ws_size(&z);
    uint8_t *wtns = malloc(nv * 32);
    uint8_t *mem_c = aligned_alloc(64, (abc + 63) / 64 * 64), *mem_g = aligned_alloc(64, (abc + 63) / 64 * 64);
    void *ks_c = NULL, *ks_g = NULL;
    cuzk_matrix *mat = NULL; /* the GPU takes a shared matrix, the CPU builds its own */
    if (!wtns || !mem_c || !mem_g) {
        fprintf(stderr, "FAIL: out of memory\n");
        fails = 1;
        goto done;
    }
    /* fresh random witness below r; a few 0 and 1 values like real witnesses */
    uint64_t seed = rs_state;
    make_witness(wtns, nv, 2, ci->r_le);
    groth16_ws wc, wg;
    groth16_ws_init(&wc, &z, mem_c, wtns);
    groth16_ws_init(&wg, &z, mem_g, wtns);
    memset(mem_g, 0xa5, abc);
    groth16_key_opts gopts = {0};
    if (matrix_build(&mat, &z, NULL, NULL, NULL, err) ||
        (gopts.matrix = mat, cpu->key_attach(cpu, &z, NULL, &ks_c, err)) ||
        gpu->key_attach(gpu, &z, &gopts, &ks_g, err)) {
        fprintf(stderr, "FAIL: key attach: %s\n", err);
        fails = 1;
        goto done;
    }
    printf("%s: %s, domain 2^%u, %u vars, %u coefficients, witness seed %llu\n", path, ci->label, z.log_domain,
           z.n_vars, z.n_coefs, (unsigned long long)seed);
    int reps = getenv("GPU_TEST_REPS") ? atoi(getenv("GPU_TEST_REPS")) : 1;
    if (reps < 1)
        reps = 1;
    double tc[3], tg[3];
    if ((tc[0] = timed(cpu->eval_abc, cpu, ks_c, &wc, err, 1)) < 0 ||
        (tg[0] = timed(gpu->eval_abc, gpu, ks_g, &wg, err, reps)) < 0) {
        fprintf(stderr, "FAIL: eval_abc: %s\n", err);
        fails = 1;
        goto done;
    }
    int ok = !memcmp(mem_c, mem_g, abc);
    printf("  eval_abc a|b|c (%zu x 3 Fr): %s\n", n, ok ? "ok" : "FAIL");
    fails += !ok;
    /* compute_h overwrites a: time the GPU on copies, then run it once on the real buffers */
    if (reps > 1) {
        uint8_t *tmp = aligned_alloc(64, (abc + 63) / 64 * 64);
        groth16_ws wt;
        if (tmp) {
            groth16_ws_init(&wt, &z, tmp, wtns);
            for (int i = 0; i < reps; i++) {
                memcpy(tmp, mem_g, abc);
                gpu->compute_h(gpu, ks_g, &wt, err);
            }
            free(tmp);
        }
    }
    if ((tc[1] = timed(cpu->compute_h, cpu, ks_c, &wc, err, 1)) < 0 ||
        (tg[1] = timed(gpu->compute_h, gpu, ks_g, &wg, err, 1)) < 0) {
        fprintf(stderr, "FAIL: compute_h: %s\n", err);
        fails = 1;
        goto done;
    }
    ok = !memcmp(wc.a, wg.a, n * 32);
    printf("  compute_h h (%zu Fr): %s\n", n, ok ? "ok" : "FAIL");
    fails += !ok;
    memset(wg.msm, 0xa5, sizeof wg.msm);
    if ((tc[2] = timed(cpu->msm_all, cpu, ks_c, &wc, err, 1)) < 0 ||
        (tg[2] = timed(gpu->msm_all, gpu, ks_g, &wg, err, reps)) < 0) {
        fprintf(stderr, "FAIL: msm_all: %s\n", err);
        fails = 1;
        goto done;
    }
    mq f;
    mq_init(&f, ci->q_le, ci->fq_bytes);
    static const char *names[ZKEY_BASES] = {"A", "B1", "B2", "C", "H"};
    for (int s = 0; s < ZKEY_BASES; s++) {
        ok = jac_equal(&f, s == ZKEY_B2 ? 2 : 1, wc.msm[s], wg.msm[s]);
        printf("  msm %-2s (%u points): %s\n", names[s], z.n_bases[s], ok ? "ok" : "FAIL");
        fails += !ok;
    }
    fails += check_daemon_path(&z, cpu, ks_c, gpu, ks_g, wtns, &wc, &f);
    /* a second witness: the first with its values after the constant 1 rotated by one place,
       and its CPU results */
    if (nv > 2) {
        uint8_t *wtns2 = malloc(nv * 32), *mem2 = aligned_alloc(64, (abc + 63) / 64 * 64);
        groth16_ws w2;
        if (!wtns2 || !mem2) {
            fprintf(stderr, "FAIL: out of memory\n");
            fails++;
        } else {
            memcpy(wtns2, wtns, 32);
            memcpy(wtns2 + 32, wtns + 64, (nv - 2) * 32);
            memcpy(wtns2 + 32 * (nv - 1), wtns + 32, 32);
            groth16_ws_init(&w2, &z, mem2, wtns2);
            if (cpu->eval_abc(cpu, ks_c, &w2, err) || cpu->compute_h(cpu, ks_c, &w2, err) ||
                cpu->msm_all(cpu, ks_c, &w2, err)) {
                fprintf(stderr, "FAIL: cpu steps, second witness: %s\n", err);
                fails++;
            } else {
                fails += check_device_chain(&z, gpu, ks_g, wtns, wtns2, &wc, &w2, &f);
            }
        }
        free(wtns2);
        free(mem2);
    }
    printf("  ms cpu/gpu: eval_abc %.2f/%.2f compute_h %.2f/%.2f msm_all %.2f/%.2f\n", tc[0], tg[0], tc[1], tg[1],
           tc[2], tg[2]);
    /* streamed (GPU_TEST_STREAM=0 leaves it out): chunks that do not divide the sets, small
       chunks, the planner's; then a cap just below the resident need, the resident key detached */
    if (!getenv("GPU_TEST_STREAM") || strcmp(getenv("GPU_TEST_STREAM"), "0")) {
        stream_refs sr;
        if (stream_refs_make(&sr, &z, cpu, ks_c)) {
            fails++;
        } else {
            size_t big = z.n_bases[ZKEY_A] > z.n_bases[ZKEY_H] ? z.n_bases[ZKEY_A] : z.n_bases[ZKEY_H];
            size_t chunks[3] = {big / 3 + 7, 1000, 0};
            for (int c = 0; c < 3; c++)
                fails += check_streamed(&z, &sr, gpu, mat, &f, chunks[c], 0, 0);
            /* the lean layout (backend_impl.cuh LEAN), a/b/c on the device, then on the CPU */
            setenv("CUZK_GPU_LEAN", "1", 1);
            fails += check_streamed(&z, &sr, gpu, mat, &f, big / 5 + 3, 0, 0);
            setenv("CUZK_GPU_ABC", "host", 1);
            fails += check_streamed(&z, &sr, gpu, mat, &f, big / 5 + 3, 0, 0);
            unsetenv("CUZK_GPU_ABC");
            unsetenv("CUZK_GPU_LEAN");
            /* PER SET: the sets asked for stream, the others' chunks come from the device */
            static const struct {
                const char *sets;
                unsigned mask;
            } some[3] = {{"B1,H", 0x12}, {"A,B2,C", 0x0d}, {"H", 0x10}};
            for (int i = 0; i < 3; i++) {
                setenv("CUZK_GPU_STREAM_SETS", some[i].sets, 1);
                int bad = check_streamed(&z, &sr, gpu, mat, &f, i == 1 ? 1000 : big / 3 + 7, 0, 0);
                unsetenv("CUZK_GPU_STREAM_SETS");
                if (!bad && last_sets != some[i].mask) {
                    fprintf(stderr, "FAIL: sets %s asked to stream, %#x streamed\n", some[i].sets, last_sets);
                    bad = 1;
                }
                fails += bad;
            }
            groth16_key_info ki;
            gpu->key_info(gpu, ks_g, &ki);
            gpu->key_detach(gpu, ks_g);
            ks_g = NULL;
            /* a cap one byte under the resident need: the key must stream, unless it is so small
               that the runtime's reserve is most of what it needs (a few hundred constraints),
               where it may also be refused with the bytes it needs */
            fails += check_streamed(&z, &sr, gpu, mat, &f, 0, ki.resident_bytes - 1,
                                    ki.resident_bytes < ((uint64_t)128 << 20));
            /* a cap with room for the h set beside the streamed buffers (chunks of 1000 points,
               so that they are small beside the bases): some sets stay on the device and some
               stream, chosen by the planner */
            uint64_t need1 = streamed_need(&z, gpu, mat, "1000");
            uint64_t hbytes = (uint64_t)z.n_bases[ZKEY_H] * z.curve->g1_bytes;
            /* the set's points and its mask of points at infinity (a byte each), as the planner counts them */
            uint64_t cap = need1 + ((hbytes + 255) & ~(uint64_t)255) + ((z.n_bases[ZKEY_H] + 255) & ~(uint64_t)255);
            if (need1 && cap >= ki.resident_bytes) {
                /* a few hundred constraints: the ring of chunks outweighs the bases */
                printf("  cap of the streamed need + the h set: not below the resident need at this size\n");
            } else if (need1) {
                stream_batch = 1; /* partitions would take the room before any set */
                int bad = check_streamed(&z, &sr, gpu, mat, &f, 1000, cap, 0);
                stream_batch = 4;
                printf("  cap of %llu bytes (streamed need %llu + the h set): sets streamed %#x\n",
                       (unsigned long long)cap, (unsigned long long)need1, last_sets);
                if (!bad && (last_sets == 0 || last_sets == 0x1f)) {
                    fprintf(stderr, "FAIL: under that cap every set %s\n", last_sets ? "streamed" : "stayed");
                    bad = 1;
                }
                fails += bad;
            } else {
                fails++;
            }
        }
        stream_refs_free(&sr);
    }
done:
    if (ks_c)
        cpu->key_detach(cpu, ks_c);
    if (ks_g)
        gpu->key_detach(gpu, ks_g);
    matrix_free(mat);
    free(wtns);
    free(mem_c);
    free(mem_g);
    zkey_close(&z);
    return fails;
}

int main(int argc, char **argv)
{
    char err[CUZK_ERRLEN];
    const char *s = getenv("CUZK_TEST_SEED");
    rs_state = s ? strtoull(s, NULL, 10) : (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32);
    if (gpu_device_count() == 0) {
        cuzk_backend *be = gpu_backend_create(CURVE_BN254, 0, err);
        if (be || strstr(err, "CUDA") == NULL) {
            fprintf(stderr, "FAIL: without a GPU gpu_backend_create must fail naming CUDA, got '%s'\n",
                    be ? "a backend" : err);
            return 1;
        }
        printf("SKIP: no GPU (%s)\n", err);
        return 0;
    }
    if (argc >= 2 && !strcmp(argv[1], "--bandwidth")) { /* bench/stream.sh */
        size_t mib = argc >= 3 ? (size_t)atoi(argv[2]) : 2048;
        double r = gpu_h2d_bandwidth(0, mib << 20, err);
        if (r < 0) {
            fprintf(stderr, "FAIL: %s\n", err);
            return 1;
        }
        printf("h2d page-locked: %.2f GB/s over %zu MiB\n", r, mib);
        return 0;
    }
    if (argc < 2) {
        printf("SKIP: no key given (tests/gpu.sh passes keys made by cuzk dev-circuit)\n");
        return 0;
    }
    int fails = 0;
    for (int i = 1; i < argc; i++) {
        zkey_file z;
        if (zkey_open(&z, argv[i], err)) {
            fprintf(stderr, "FAIL: %s\n", err);
            return 1;
        }
        cuzk_curve_id id = z.curve->id;
        zkey_close(&z);
        cuzk_backend *cpu = cpu_backend_create(id, 0, err);
        cuzk_backend *gpu = cpu ? gpu_backend_create(id, 0, err) : NULL;
        if (!cpu || !gpu) {
            fprintf(stderr, "FAIL: backend: %s\n", err);
            return 1;
        }
        fails += check_key(argv[i], cpu, gpu);
        cpu->destroy(cpu);
        gpu->destroy(gpu);
    }
    printf("%s\n", fails ? "GPU BACKEND TEST FAILED" : "GPU backend matches the CPU backend");
    return fails != 0;
}
