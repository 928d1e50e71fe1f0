/* prover.c - curve-agnostic Groth16 entry points: workspace layout, blinding scalars,
 * the named steps, and dispatch to the per-curve cores (curve_exports.h). */
#include "groth16/prover.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "groth16/curve_exports.h"
#include "util/le.h"

#define FR_BYTES 32

size_t groth16_ws_size(const zkey_file *z)
{
    return 3 * (size_t)z->domain_size * FR_BYTES;
}

void groth16_ws_init(groth16_ws *ws, const zkey_file *z, void *mem, const uint8_t *wtns)
{
    memset(ws, 0, sizeof *ws);
    size_t n = z->domain_size * (size_t)(FR_BYTES / 8);
    ws->wtns = wtns;
    ws->a = mem;
    ws->b = ws->a + n;
    ws->c = ws->b + n;
}

/* uniform in [1, r): rejection sampling on the bit length of r */
static cuzk_err random_scalar(uint8_t out[32], const cuzk_curve_info *c, char *err)
{
    int top = 31;
    while (top > 0 && c->r_le[top] == 0)
        top--;
    uint8_t mask = 0xff;
    while (mask >> 1 >= c->r_le[top])
        mask >>= 1;
    for (int tries = 0; tries < 1000; tries++) {
        size_t got = 0;
        while (got < 32) {
            ssize_t k = getrandom(out + got, 32 - got, 0);
            if (k < 0) {
                if (errno == EINTR)
                    continue;
                return cuzk_errf(err, CUZK_EIO, "getrandom: %s", strerror(errno));
            }
            got += (size_t)k;
        }
        for (int i = top + 1; i < 32; i++)
            out[i] = 0;
        out[top] &= mask;
        if (le_less(out, c->r_le, 32) && !le_is_zero(out, 32))
            return CUZK_OK;
    }
    return cuzk_errf(err, CUZK_EINTERNAL, "could not draw a random scalar");
}

cuzk_err groth16_rs_random(groth16_rs *rs, const cuzk_curve_info *c, char *err)
{
    cuzk_err e = random_scalar(rs->r, c, err);
    return e ? e : random_scalar(rs->s, c, err);
}

int groth16_rs_from_env(groth16_rs *rs, const cuzk_curve_info *c, char *err)
{
    const char *v = getenv("CUZK_TEST_RS");
    if (!v || !*v)
        return 0;
    char buf[256];
    const char *comma = strchr(v, ',');
    if (!comma || (size_t)(comma - v) >= sizeof buf || strlen(comma + 1) >= sizeof buf) {
        cuzk_errf(err, CUZK_EINVAL, "CUZK_TEST_RS must be \"r,s\" (two decimal numbers below the group order)");
        return -1;
    }
    memcpy(buf, v, (size_t)(comma - v));
    buf[comma - v] = 0;
    if (!le_from_dec(rs->r, 32, buf, c->r_le) || !le_from_dec(rs->s, 32, comma + 1, c->r_le)) {
        cuzk_errf(err, CUZK_EINVAL, "CUZK_TEST_RS: r and s must be decimal numbers below the group order of %s",
                  c->label);
        return -1;
    }
    return 1;
}

cuzk_err groth16_step_abc(cuzk_backend *be, void *ks, groth16_ws *ws, char *err)
{
    ws->abc_token = ws->h_token = ws->w_token = 0; /* only a backend that leaves them on a device sets them */
    ws->host_missing = 0;
    return be->eval_abc(be, ks, ws, err);
}

cuzk_err groth16_step_h(cuzk_backend *be, void *ks, groth16_ws *ws, char *err)
{
    ws->h_token = 0;
    ws->host_missing &= ~(unsigned)GROTH16_HOST_H;
    return be->compute_h(be, ks, ws, err);
}

cuzk_err groth16_step_msm(cuzk_backend *be, void *ks, groth16_ws *ws, char *err)
{
    return be->msm_all(be, ks, ws, err);
}

cuzk_err groth16_step_assemble(cuzk_proof *out, const zkey_file *z, const groth16_ws *ws,
                               const groth16_rs *rs, char *err)
{
    switch (z->curve->id) {
    case CURVE_BN254: return bn254_assemble(out, z, ws, rs, err);
    case CURVE_BLS12_381: return bls12_381_assemble(out, z, ws, rs, err);
    default: return cuzk_errf(err, CUZK_ECURVE, "unsupported curve");
    }
}

/* memcpy of a large witness on several threads: one core copies a few GB/s, which at 2^20
 * constraints and more is a real part of a GPU proof. Falls back to one thread. */
typedef struct copy_part {
    uint8_t *dst;
    const uint8_t *src;
    size_t n;
} copy_part;

static void *copy_part_run(void *arg)
{
    copy_part *c = arg;
    memcpy(c->dst, c->src, c->n);
    return NULL;
}

static void copy_parallel(uint8_t *dst, const uint8_t *src, size_t n)
{
    enum { MAX_T = 8, MIN_PART = 4u << 20 };
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t t = n / MIN_PART;
    if (t > MAX_T)
        t = MAX_T;
    if (cpus > 0 && t > (size_t)cpus)
        t = (size_t)cpus;
    if (t < 2) {
        memcpy(dst, src, n);
        return;
    }
    pthread_t th[MAX_T];
    copy_part part[MAX_T];
    size_t per = (n / t + 63) / 64 * 64, started = 0;
    for (size_t i = 0; i < t; i++) {
        size_t off = i * per;
        part[i] = (copy_part){dst + off, src + off, off >= n ? 0 : (n - off < per ? n - off : per)};
        /* part 0, and any part whose thread could not start, is copied here */
        if (i > 0 && pthread_create(&th[i], NULL, copy_part_run, &part[i]) == 0)
            started |= (size_t)1 << i;
    }
    for (size_t i = 0; i < t; i++)
        if (!(started >> i & 1))
            memcpy(part[i].dst, part[i].src, part[i].n);
    for (size_t i = 1; i < t; i++)
        if (started >> i & 1)
            pthread_join(th[i], NULL);
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

cuzk_err groth16_prove(cuzk_proof *out, cuzk_backend *be, void *ks, const zkey_file *z,
                       const wtns_file *w, const groth16_rs *rs, char *err)
{
    return groth16_prove_timed(out, be, ks, z, w, rs, NULL, 0, NULL, err);
}

size_t groth16_prove_mem_size(const zkey_file *z)
{
    return (groth16_ws_size(z) + 32 * (size_t)z->n_vars + 63) / 64 * 64;
}

cuzk_err groth16_prove_timed(cuzk_proof *out, cuzk_backend *be, void *ks, const zkey_file *z,
                             const wtns_file *w, const groth16_rs *rs, uint8_t *mem, int pinned,
                             groth16_times *t, char *err)
{
    groth16_times tt = {0};
    double t0 = mono_s();
    cuzk_err e = zkey_check_witness(z, w, err);
    if (e)
        return e;
    if (be->curve != z->curve->id)
        return cuzk_errf(err, CUZK_ECURVE, "backend is for %s but the key is %s",
                         curve_info(be->curve)->label, z->curve->label);
    groth16_rs fresh;
    if (!rs) {
        if ((e = groth16_rs_random(&fresh, z->curve, err)))
            return e;
        rs = &fresh;
    }
    /* the witness payload in a .wtns file is only 4-byte aligned: copy it behind a, b, c */
    size_t bytes = groth16_ws_size(z), wbytes = 32 * (size_t)z->n_vars;
    uint8_t *own = NULL;
    if (!mem) {
        mem = own = aligned_alloc(64, groth16_prove_mem_size(z));
        pinned = 0;
        if (!mem)
            return cuzk_errf(err, CUZK_ENOMEM, "cannot allocate %zu bytes for the prover's buffers",
                             bytes + wbytes);
    }
    copy_parallel(mem + bytes, w->values, wbytes);
    groth16_ws ws;
    groth16_ws_init(&ws, z, mem, mem + bytes);
    ws.pinned = pinned;
    ws.keep_on_device = 1; /* only the MSM results are read, by the assembly */
    double t1 = mono_s();
    tt.setup = t1 - t0;
    /* the witness MSMs may run on the device while a/b/c run on the CPU (msm_all waits for them) */
    if (be->msm_early && (e = be->msm_early(be, ks, &ws, 0, err)))
        goto done;
    tt.early = ws.early != NULL;
    if ((e = groth16_step_abc(be, ks, &ws, err)))
        goto done;
    tt.abc = mono_s() - t1;
    t1 += tt.abc;
    if ((e = groth16_step_h(be, ks, &ws, err)))
        goto done;
    tt.h = mono_s() - t1;
    t1 += tt.h;
    if ((e = groth16_step_msm(be, ks, &ws, err)))
        goto done;
    tt.msm = mono_s() - t1;
    t1 += tt.msm;
    if ((e = groth16_step_assemble(out, z, &ws, rs, err)))
        goto done;
    tt.assemble = mono_s() - t1;
    if (t)
        *t = tt;
done:
    if (ws.early) { /* a step before msm_all failed */
        char scratch[CUZK_ERRLEN];
        be->msm_early(be, ks, &ws, 1, scratch);
    }
    free(own);
    memset(&fresh, 0, sizeof fresh);
    return e;
}

/* OVERLAP (groth16_prove_batch): where a key's passes serve fewer partitions than the batch (a
 * streamed key's key_info batch_max; one for a resident key), a feeder thread copies each
 * partition's witness in and runs its a/b/c and h in order while the caller's thread runs each
 * pass's MSMs as soon as its partitions are ready, so the device's h steps of the next pass run
 * beside the MSMs of this one (two locks in a device backend, as between the daemon's workers);
 * on a device backend by default (batch_pass_size). A failure on either side stops the other at
 * its next partition. */
typedef struct {
    cuzk_backend *be;
    void *ks;
    const zkey_file *z;
    const wtns_file *w;
    uint8_t *mem;
    size_t per, bytes; /* one partition's share of mem; its workspace's part */
    int pinned;
    groth16_ws *ws;
    int n;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int ready; /* partitions whose witness, a/b/c and h are done */
    int stop;  /* the MSM side failed: feed no more */
    cuzk_err e;
    char err[CUZK_ERRLEN];
    double setup, abc, h;
} batch_feed;

/* the feeder's work for partitions [from, to) */
static void batch_feed_range(batch_feed *f, int from, int to)
{
    /* CUZK_TEST_FEED_DELAY_MS (tests): each partition's steps start this late, so that an MSM
       side that did not wait for them would read them unfinished */
    const char *d = getenv("CUZK_TEST_FEED_DELAY_MS");
    long delay = d ? atol(d) : 0;
    for (int i = from; i < to; i++) {
        if (delay > 0 && delay < 10000)
            nanosleep(&(struct timespec){delay / 1000, (delay % 1000) * 1000000L}, NULL);
        pthread_mutex_lock(&f->mu);
        int stop = f->stop;
        pthread_mutex_unlock(&f->mu);
        if (stop)
            break;
        char err[CUZK_ERRLEN] = "";
        double t = mono_s(), t1;
        uint8_t *m = f->mem + (size_t)i * f->per;
        copy_parallel(m + f->bytes, f->w->values, 32 * (size_t)f->z->n_vars);
        groth16_ws_init(&f->ws[i], f->z, m, m + f->bytes);
        f->ws[i].pinned = f->pinned;
        t1 = mono_s();
        f->setup += t1 - t;
        t = t1;
        /* a/b/c may stay on a device (its h step reads them there, or evaluates them again);
           h must reach the host buffer, where msm_batch takes it from */
        f->ws[i].keep_on_device = 1;
        cuzk_err e = groth16_step_abc(f->be, f->ks, &f->ws[i], err);
        f->ws[i].keep_on_device = 0;
        t1 = mono_s();
        f->abc += t1 - t;
        if (!e)
            e = groth16_step_h(f->be, f->ks, &f->ws[i], err);
        f->h += mono_s() - t1;
        pthread_mutex_lock(&f->mu);
        if (e) {
            f->e = e;
            memcpy(f->err, err, sizeof f->err);
        } else {
            f->ready = i + 1;
        }
        pthread_cond_broadcast(&f->cv);
        pthread_mutex_unlock(&f->mu);
        if (e)
            break;
    }
}

static void *batch_feed_main(void *arg)
{
    batch_feed *f = arg;
    batch_feed_range(f, 0, f->n);
    return NULL;
}

/* the partitions a pass of this key serves (n: all at once), and whether the feeder overlaps
   the passes (*threaded) */
static int batch_pass_size(cuzk_backend *be, void *ks, int n, int *threaded)
{
    /* CUZK_BATCH_OVERLAP 0: the stages in turn; 1: overlapped on any backend. By default they
       overlap on a device backend only: on the CPU both stages use every core, and beside each
       other they take longer (measured: 6 partitions of tests/data's bls12381 merkle, 547 ms
       overlapped against 493 in turn). A key whose steps hold its device one at a time and
       use no CPU (serial_steps) gains nothing from the overlap and loses the device copies
       its steps leave for the next: its passes take their partitions in turn, each group fed
       just before its pass, so that the witness and h a pass reads are still on the device */
    const char *o = getenv("CUZK_BATCH_OVERLAP");
    int on = o && *o ? *o == '1' : be->device >= 0;
    *threaded = 0;
    if (!be->msm_batch || !be->key_info || n < 2)
        return n;
    groth16_key_info ki;
    memset(&ki, 0, sizeof ki);
    be->key_info(be, ks, &ki);
    int p = ki.batch_max ? (int)ki.batch_max : 1;
    if (p >= n)
        return n;
    if (ki.serial_steps && !(o && *o == '1'))
        return p;
    if (!on)
        return n;
    *threaded = 1;
    return p;
}

cuzk_err groth16_prove_batch(cuzk_proof *out, cuzk_backend *be, void *ks, const zkey_file *z, const wtns_file *w,
                             const groth16_rs *rs, int n, uint8_t *mem, int pinned, groth16_times *t, char *err)
{
    groth16_times tt = {0};
    size_t bytes = groth16_ws_size(z), per = groth16_prove_mem_size(z);
    groth16_ws *ws = calloc((size_t)n, sizeof *ws);
    groth16_ws **wp = calloc((size_t)n, sizeof *wp);
    groth16_rs fresh;
    cuzk_err e = zkey_check_witness(z, w, err);
    double t1;
    if (!ws || !wp) {
        e = cuzk_errf(err, CUZK_ENOMEM, "out of memory");
        goto done;
    }
    if (e)
        goto done;
    for (int i = 0; i < n; i++)
        wp[i] = &ws[i];
    /* each partition's witness, a/b/c and h by the feeder (on a thread of its own where the
       stages overlap, else here, each pass's partitions before it), the MSMs of each pass once
       its partitions are fed */
    int threaded, pass = batch_pass_size(be, ks, n, &threaded);
    batch_feed f = {.be = be, .ks = ks, .z = z, .w = w, .mem = mem, .per = per, .bytes = bytes, .pinned = pinned,
                    .ws = ws, .n = n};
    pthread_t th;
    if (pthread_mutex_init(&f.mu, NULL)) {
        e = cuzk_errf(err, CUZK_ENOMEM, "--batch: no mutex");
        goto done;
    }
    if (pthread_cond_init(&f.cv, NULL)) {
        pthread_mutex_destroy(&f.mu);
        e = cuzk_errf(err, CUZK_ENOMEM, "--batch: no condition variable");
        goto done;
    }
    if (threaded && pthread_create(&th, NULL, batch_feed_main, &f)) {
        pthread_cond_destroy(&f.cv);
        pthread_mutex_destroy(&f.mu);
        e = cuzk_errf(err, CUZK_ENOMEM, "--batch: no thread for the a/b/c and h steps");
        goto done;
    }
    /* overlapped, a short pass (n not a multiple of the pass size) goes first: it waits for the
       feeder's fewest partitions, and the passes stay as few */
    int first = threaded && n % pass ? n % pass : pass;
    for (int g = 0; g < n && !e;) {
        int cnt = g == 0 ? first : n - g < pass ? n - g : pass, fed;
        if (!threaded)
            batch_feed_range(&f, g, g + cnt);
        pthread_mutex_lock(&f.mu);
        while (f.ready < g + cnt && !f.e)
            pthread_cond_wait(&f.cv, &f.mu);
        fed = f.ready >= g + cnt;
        pthread_mutex_unlock(&f.mu);
        if (!fed)
            break; /* the feeder failed: its error below */
        double tm = mono_s();
        if (be->msm_batch)
            e = be->msm_batch(be, ks, wp + g, cnt, err);
        else
            for (int i = g; i < g + cnt && !e; i++)
                e = groth16_step_msm(be, ks, &ws[i], err);
        tt.msm += mono_s() - tm;
        tt.passes++;
        g += cnt;
    }
    pthread_mutex_lock(&f.mu);
    f.stop = 1;
    pthread_mutex_unlock(&f.mu);
    if (threaded)
        pthread_join(th, NULL);
    pthread_cond_destroy(&f.cv);
    pthread_mutex_destroy(&f.mu);
    tt.first_pass = first;
    tt.overlapped = threaded;
    tt.setup = f.setup;
    tt.abc = f.abc;
    tt.h = f.h;
    if (!e && f.e) {
        e = f.e;
        memcpy(err, f.err, CUZK_ERRLEN);
    }
    if (e)
        goto done;
    t1 = mono_s();
    for (int i = 0; i < n; i++) {
        const groth16_rs *r = rs;
        if (!r) {
            if ((e = groth16_rs_random(&fresh, z->curve, err)))
                goto done;
            r = &fresh;
        }
        if ((e = groth16_step_assemble(&out[i], z, &ws[i], r, err)))
            goto done;
    }
    tt.assemble = mono_s() - t1;
    if (t)
        *t = tt;
done:
    memset(&fresh, 0, sizeof fresh);
    free(ws);
    free(wp);
    return e;
}

cuzk_err groth16_public_from_wtns(cuzk_public *out, const zkey_file *z, const wtns_file *w, char *err)
{
    memset(out, 0, sizeof *out);
    if (w->n_witness < z->n_public + 1)
        return cuzk_errf(err, CUZK_EFORMAT, "witness has %u values, fewer than the %u public signals + 1",
                         w->n_witness, z->n_public);
    out->curve = z->curve->id;
    out->n = z->n_public;
    out->values = malloc(32 * (size_t)(out->n ? out->n : 1));
    if (!out->values)
        return cuzk_errf(err, CUZK_ENOMEM, "out of memory");
    memcpy(out->values, w->values + 32, 32 * (size_t)out->n);
    return CUZK_OK;
}

cuzk_err groth16_verify(const cuzk_vk *vk, const cuzk_public *pub, const cuzk_proof *proof, char *err)
{
    if (vk->curve != proof->curve || vk->curve != pub->curve)
        return cuzk_errf(err, CUZK_ECURVE, "verification key, public input and proof are not on one curve");
    if (vk->curve == CURVE_BN254)
        return bn254_verify(vk, pub, proof, err);
    if (vk->curve == CURVE_BLS12_381)
        return bls12_381_verify(vk, pub, proof, err);
    return cuzk_errf(err, CUZK_ECURVE, "unsupported curve");
}

cuzk_err groth16_vk_from_zkey(cuzk_vk *out, uint8_t *alphabeta, const zkey_file *z, char *err)
{
    if (z->curve->id == CURVE_BN254)
        return bn254_vk_from_zkey(out, alphabeta, z, err);
    return bls12_381_vk_from_zkey(out, alphabeta, z, err);
}

cuzk_err cpu_fault_oom(char *err)
{
    static _Atomic long left = -2; /* CUZK_FAULT_OOM calls still to fail; -2 before it is read */
    long expect = -2;
    if (atomic_load(&left) == -2) {
        const char *v = getenv("CUZK_FAULT_OOM");
        atomic_compare_exchange_strong(&left, &expect, v && *v ? atol(v) : 0);
    }
    long n = atomic_load(&left);
    while (n > 0 && !atomic_compare_exchange_weak(&left, &n, n - 1))
        ;
    if (n > 0)
        return cuzk_errf(err, CUZK_ENOMEM, "cpu: device memory exhausted (injected: CUZK_FAULT_OOM, %ld more)", n - 1);
    const char *f = getenv("CUZK_FAULT_OOM_FILE");
    if (f && *f && access(f, F_OK) == 0)
        return cuzk_errf(err, CUZK_ENOMEM, "cpu: device memory exhausted (injected: CUZK_FAULT_OOM_FILE %s exists)", f);
    return CUZK_OK;
}

cuzk_backend *cpu_backend_create(cuzk_curve_id curve, int threads, char *err)
{
    if (curve == CURVE_BN254)
        return bn254_cpu_backend_create(threads, err);
    if (curve == CURVE_BLS12_381)
        return bls12_381_cpu_backend_create(threads, err);
    cuzk_errf(err, CUZK_ECURVE, "unsupported curve");
    return NULL;
}
