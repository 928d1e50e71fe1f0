/* keys.c - the engine's proving-key cache (LRU eviction under memory pressure), the
 * per-curve backends, and the reusable host buffer pool.
 *
 * DESIGN. A key's bytes (the mapped .zkey, its one constraint matrix shared by every
 * backend, and each CPU backend's copies of unaligned bases) are charged
 * to the budget when its entry is created, by the dispatcher when it admits the first
 * partition that needs it, or by engine_key_preload. The first partition to run loads
 * it (key_ensure); others wait on e->cv_key. When the head of the scheduler does not
 * fit, the dispatcher frees idle keys (no partition holds them) least recently used
 * first. Preloaded keys are only dropped by engine_key_evict or when nothing else frees
 * enough memory.
 *
 * The constraint matrix (groth16/matrix.h) is built once per circuit: key_matrix looks for
 * DATA/matrix/<fingerprint>.csr, maps it when it is valid for the key and otherwise builds
 * the CSR from section 4 and writes the file for the next start. The one matrix is handed to
 * the synthesis backend and to every device backend (groth16_key_opts.matrix), which keep
 * references into it, so it is freed only after they all detached. Load progress (phase,
 * done, total) is published on the key for /status.
 *
 * Workspace buffers (a, b, c and the aligned witness copy) are reused across partitions
 * of the same size: a returned buffer stays charged to the budget while cached, the
 * dispatcher hands it to the next partition that needs that size, and frees the cache
 * first when memory is short. With a GPU backend they are page-locked (gpu_host_alloc), so
 * the device copies straight from and to them at full bus speed without a staging copy.
 * Page-locking is slow (every page is mapped and locked), which is why the pool keeps
 * them: one allocation per size and in-flight slot, then reuse.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/engine_internal.h"
#include "util/log.h"

uint64_t key_bytes_estimate(const engine *e, const zkey_file *z)
{
    int n_dev = e->n_dev;
    uint64_t file = z->map.size;
    /* one constraint matrix (matrix.h), shared by every backend */
    uint64_t csr = matrix_bytes(z);
    /* each CPU backend's aligned copies of unaligned base sections */
    uint64_t copies = 0;
    for (int i = 0; i < ZKEY_BASES; i++)
        if (((uintptr_t)z->bases[i] & 7) != 0)
            copies += (uint64_t)z->n_bases[i] * (i == ZKEY_B2 ? z->curve->g2_bytes : z->curve->g1_bytes);
    uint64_t vk = (uint64_t)(z->n_public + 1) * sizeof(g1_std) + 4096;
    /* a key whose bases do not fit the GPU memory its keys may use streams them from one
       page-locked host copy (groth16_key_info.host_bytes; at most the bases) */
    uint64_t bases = 0, pinned = 0;
    for (int i = 0; i < ZKEY_BASES; i++)
        bases += (uint64_t)z->n_bases[i] * (i == ZKEY_B2 ? z->curve->g2_bytes : z->curve->g1_bytes);
    for (int d = 0; e->use_gpu && d < n_dev && !pinned; d++) {
        uint64_t cap = gpu_device_mem(e->dev_ord[d]);
        if (e->cfg.gpu_mem && e->cfg.gpu_mem < cap)
            cap = e->cfg.gpu_mem;
        if (bases + csr > cap)
            pinned = bases;
    }
    return file + csr + (uint64_t)(1 + n_dev) * copies + vk + pinned;
}

ekey *key_find(engine *e, const char *path)
{
    for (ekey *k = e->keys; k; k = k->next)
        if (!strcmp(k->path, path))
            return k;
    return NULL;
}

ekey *key_new(engine *e, const char *path, uint64_t bytes)
{
    ekey *k = calloc(1, sizeof *k);
    if (!k)
        return NULL;
    snprintf(k->path, sizeof k->path, "%s", path);
    k->bytes = bytes;
    k->state = KEY_EMPTY;
    k->last_used_ms = eng_now_ms();
    k->next = e->keys;
    e->keys = k;
    return k;
}

static void key_unload(engine *e, ekey *k)
{
    if (k->state == KEY_READY) {
        cuzk_curve_id c = k->z.curve->id;
        pthread_mutex_lock(&e->be_mu);
        if (k->ks_synth && e->synth_be[c])
            e->synth_be[c]->key_detach(e->synth_be[c], k->ks_synth);
        if (k->ks_crit && e->crit_be[c])
            e->crit_be[c]->key_detach(e->crit_be[c], k->ks_crit);
        for (int d = 0; d < e->n_dev; d++)
            if (k->ks_dev[d] && e->dev_be[c][d])
                e->dev_be[c][d]->key_detach(e->dev_be[c][d], k->ks_dev[d]);
        pthread_mutex_unlock(&e->be_mu);
        matrix_free(k->matrix);
        vk_free(&k->vk);
        zkey_close(&k->z);
    }
    k->matrix = NULL;
    k->matrix_from = NULL;
    k->ks_synth = NULL;
    k->ks_crit = NULL;
    memset(k->ks_dev, 0, sizeof k->ks_dev);
    k->state = KEY_EMPTY;
}

void key_free(engine *e, ekey *k)
{
    key_unload(e, k);
    budget_release(&e->bud, k->bytes);
    free(k);
}

static int evictable(const ekey *k, const char *keep, int pass)
{
    return !k->refs && k->state != KEY_LOADING && !(k->preloaded && pass == 0) && !(keep && !strcmp(k->path, keep));
}

uint64_t key_idle_bytes(engine *e, const char *keep)
{
    uint64_t sum = 0;
    for (const ekey *k = e->keys; k; k = k->next)
        if (evictable(k, keep, 1))
            sum += k->bytes;
    return sum;
}

uint64_t key_evict_lru(engine *e, uint64_t need, const char *keep)
{
    uint64_t freed = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (;;) {
            uint64_t total, used;
            budget_snapshot(&e->bud, &total, &used, NULL, NULL, NULL, NULL);
            if (need <= total && used <= total - need)
                return freed;
            ekey **best = NULL;
            for (ekey **pp = &e->keys; *pp; pp = &(*pp)->next)
                if (evictable(*pp, keep, pass) && (!best || (*pp)->last_used_ms < (*best)->last_used_ms))
                    best = pp;
            if (!best)
                break;
            ekey *k = *best;
            *best = k->next;
            LOG(LOG_INFO, "evicting key %s (%llu bytes, idle)", k->path, (unsigned long long)k->bytes);
            freed += k->bytes;
            key_free(e, k);
        }
    }
    return freed;
}

cuzk_backend *eng_synth_backend(engine *e, cuzk_curve_id c, char *err)
{
    pthread_mutex_lock(&e->be_mu);
    if (!e->synth_be[c])
        e->synth_be[c] = cpu_backend_create(c, e->cfg.cpu_threads, err);
    cuzk_backend *be = e->synth_be[c];
    pthread_mutex_unlock(&e->be_mu);
    return be;
}

cuzk_backend *eng_crit_synth(engine *e, ekey *k, void **ks, char *err)
{
    cuzk_curve_id c = k->z.curve->id;
    cuzk_backend *be = NULL;
    pthread_mutex_lock(&e->be_mu);
    if (!e->crit_be[c]) {
        int threads = e->cfg.cpu_threads < ENGINE_CRIT_THREADS ? e->cfg.cpu_threads : ENGINE_CRIT_THREADS;
        e->crit_be[c] = cpu_backend_create(c, threads, err);
    }
    if (e->crit_be[c] && !k->ks_crit) {
        groth16_key_opts opts = {.matrix = k->matrix};
        if (e->crit_be[c]->key_attach(e->crit_be[c], &k->z, &opts, &k->ks_crit, err))
            k->ks_crit = NULL;
    }
    if (e->crit_be[c] && k->ks_crit)
        be = e->crit_be[c];
    *ks = k->ks_crit;
    pthread_mutex_unlock(&e->be_mu);
    return be;
}

cuzk_backend *eng_dev_backend(engine *e, cuzk_curve_id c, int dev, char *err)
{
    pthread_mutex_lock(&e->be_mu);
    if (!e->dev_be[c][dev])
        e->dev_be[c][dev] = e->use_gpu ? gpu_backend_create(c, e->dev_ord[dev], err)
                                       : cpu_backend_create(c, e->cfg.cpu_threads, err);
    cuzk_backend *be = e->dev_be[c][dev];
    pthread_mutex_unlock(&e->be_mu);
    return be;
}

/* ---- loading ---- */

typedef struct load_ctx {
    engine *e;
    ekey *k;
    int dev; /* logical device whose backend reports, -1 for the engine or the synthesis backend */
} load_ctx;

/* progress callback of the matrix module and key_attach: published for /status */
static void load_progress(void *vctx, const char *phase, uint64_t done, uint64_t total)
{
    load_ctx *x = vctx;
    pthread_mutex_lock(&x->e->mu);
    if (x->dev >= 0)
        snprintf(x->k->load_phase, sizeof x->k->load_phase, "%s dev%d", phase, x->dev);
    else
        snprintf(x->k->load_phase, sizeof x->k->load_phase, "%s", phase);
    x->k->load_done = done;
    x->k->load_total = total;
    pthread_mutex_unlock(&x->e->mu);
}

/* k->matrix <- the key's constraint matrix: DATA/matrix/<fingerprint>.csr when that file is
 * valid for this key, else built from section 4 and written there (atomically) for the next
 * start. A cache that exists but is unusable (corrupt, truncated, another key's) gets one
 * warning and is overwritten; a data dir that cannot be written only costs a warning. */
static cuzk_err key_matrix(engine *e, ekey *k, char *err)
{
    load_ctx x = {e, k, -1};
    uint8_t fp[MATRIX_FP_BYTES];
    char hex[2 * MATRIX_FP_BYTES + 1], dir[ENGINE_PATH_MAX + 16], path[ENGINE_PATH_MAX + 96];
    load_progress(&x, "fingerprint", 0, 1);
    matrix_fingerprint(fp, &k->z);
    matrix_fp_hex(hex, fp);
    snprintf(dir, sizeof dir, "%s/matrix", e->data_dir);
    snprintf(path, sizeof path, "%s/%.32s.csr", dir, hex);
    char why[CUZK_ERRLEN] = "";
    matrix_status st;
    if (matrix_load(&k->matrix, &st, path, &k->z, fp, load_progress, &x, why) == CUZK_OK) {
        k->matrix_from = "cache";
        return CUZK_OK;
    }
    if (st != MATRIX_MISSING)
        LOG(LOG_WARN, "key %s: matrix cache not used, rebuilding it: %s", k->path, why);
    cuzk_err rc = matrix_build(&k->matrix, &k->z, fp, load_progress, &x, err);
    if (rc)
        return rc;
    k->matrix_from = "built";
    load_progress(&x, "matrix save", 0, 1);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        LOG(LOG_WARN, "key %s: cannot create %s, the matrix is not cached: %s", k->path, dir, strerror(errno));
    else if (matrix_save(k->matrix, path, why) != CUZK_OK)
        LOG(LOG_WARN, "key %s: the matrix is not cached: %s", k->path, why);
    else
        LOG(LOG_INFO, "key %s: matrix cached in %s", k->path, path);
    return CUZK_OK;
}

/* loads path into k (k is KEY_LOADING and owned by this thread) */
static cuzk_err key_load(engine *e, ekey *k, char *err)
{
    cuzk_err rc = zkey_open(&k->z, k->path, err);
    if (rc)
        return rc;
    cuzk_curve_id c = k->z.curve->id;
    load_ctx xs = {e, k, -1}, xd[ENGINE_MAX_DEVICES];
    groth16_key_opts opts = {.progress = load_progress, .progress_ctx = &xs};
    if ((rc = groth16_vk_from_zkey(&k->vk, NULL, &k->z, err)))
        goto fail_z;
    if ((rc = key_matrix(e, k, err)))
        goto fail_vk;
    opts.matrix = k->matrix;
    cuzk_backend *be = eng_synth_backend(e, c, err);
    opts.gpu_mem = e->cfg.gpu_mem;
    opts.batch_max = e->cfg.batch_max > 0 ? (unsigned)e->cfg.batch_max : 1;
    if (!be) {
        rc = CUZK_ENOMEM;
        goto fail_matrix;
    }
    if ((rc = be->key_attach(be, &k->z, &opts, &k->ks_synth, err)))
        goto fail_matrix;
    opts.no_abc = 1; /* synthesis evaluates a/b/c: the devices keep no matrix */
    for (int d = 0; d < e->n_dev; d++) {
        cuzk_backend *db = eng_dev_backend(e, c, d, err);
        if (!db) {
            rc = e->use_gpu ? CUZK_ENODEV : CUZK_ENOMEM;
            goto fail_attach;
        }
        xd[d] = (load_ctx){e, k, d};
        opts.progress_ctx = &xd[d];
        if ((rc = db->key_attach(db, &k->z, &opts, &k->ks_dev[d], err)))
            goto fail_attach;
        k->dev_batch[d] = 1;
        if (db->key_info && db->msm_batch) {
            groth16_key_info ki;
            db->key_info(db, k->ks_dev[d], &ki);
            k->dev_batch[d] = ki.batch_max ? ki.batch_max : 1;
            LOG(LOG_INFO, "key %s on device %d: %s", k->path, d, ki.why);
        }
    }
    return CUZK_OK;
fail_attach:
    for (int d = 0; d < e->n_dev; d++)
        if (k->ks_dev[d])
            e->dev_be[c][d]->key_detach(e->dev_be[c][d], k->ks_dev[d]);
    memset(k->ks_dev, 0, sizeof k->ks_dev);
    be->key_detach(be, k->ks_synth);
    k->ks_synth = NULL;
fail_matrix:
    matrix_free(k->matrix);
    k->matrix = NULL;
    k->matrix_from = NULL;
fail_vk:
    vk_free(&k->vk);
fail_z:
    zkey_close(&k->z);
    return rc;
}

cuzk_err key_ensure(engine *e, ekey *k, char *err)
{
    pthread_mutex_lock(&e->mu);
    while (k->state == KEY_LOADING)
        pthread_cond_wait(&e->cv_key, &e->mu);
    if (k->state == KEY_READY) {
        k->last_used_ms = eng_now_ms();
        pthread_mutex_unlock(&e->mu);
        return CUZK_OK;
    }
    k->state = KEY_LOADING;
    snprintf(k->load_phase, sizeof k->load_phase, "open");
    k->load_done = k->load_total = 0;
    pthread_mutex_unlock(&e->mu);
    int64_t t0 = eng_now_ms();
    cuzk_err rc = key_load(e, k, err);
    pthread_mutex_lock(&e->mu);
    if (rc) {
        /* a failed load is retried by the next user (the file may have been replaced) */
        k->state = KEY_EMPTY;
        snprintf(k->error, sizeof k->error, "%s", err);
    } else {
        k->state = KEY_READY;
        k->loaded_ms = k->last_used_ms = eng_now_ms();
        k->error[0] = 0;
        LOG(LOG_INFO, "key %s loaded in %lld ms (matrix %s)", k->path, (long long)(k->loaded_ms - t0),
            k->matrix_from);
    }
    pthread_cond_broadcast(&e->cv_key);
    pthread_mutex_unlock(&e->mu);
    return rc;
}

/* ---- buffer pool ---- */
static uint8_t *buf_alloc(engine *e, size_t size, int *pinned)
{
    if (e->use_gpu)
        return gpu_host_alloc(size, pinned);
    *pinned = 0;
    return aligned_alloc(64, (size + 63) / 64 * 64);
}

/* a buffer leaves the pool for good (bp_mu held): levels down, frees up */
static void buf_gone_locked(engine *e, size_t size, int pinned)
{
    e->bp_buffers--;
    e->bp_bytes_total -= size;
    if (pinned)
        e->bp_pinned_bytes -= size;
    e->bp_frees++;
}

uint8_t *bufpool_take(engine *e, size_t size, int *reused, int *pinned)
{
    pthread_mutex_lock(&e->bp_mu);
    e->bp_takes++;
    for (ebuf **pp = &e->bp_free; *pp; pp = &(*pp)->next) {
        if ((*pp)->size == size) {
            ebuf *b = *pp;
            *pp = b->next;
            e->bp_free_bytes -= size;
            e->bp_reuses++;
            pthread_mutex_unlock(&e->bp_mu);
            uint8_t *p = b->p;
            *pinned = b->pinned;
            free(b);
            *reused = 1;
            return p;
        }
    }
    pthread_mutex_unlock(&e->bp_mu);
    *reused = 0;
    /* page-locking takes long (the kernel maps and locks every page): outside the lock */
    uint8_t *p = buf_alloc(e, size, pinned);
    pthread_mutex_lock(&e->bp_mu);
    if (p) {
        e->bp_allocs++;
        e->bp_buffers++;
        e->bp_bytes_total += size;
        if (*pinned)
            e->bp_pinned_bytes += size;
    }
    pthread_mutex_unlock(&e->bp_mu);
    return p;
}

int bufpool_has(engine *e, size_t size)
{
    pthread_mutex_lock(&e->bp_mu);
    int found = 0;
    for (ebuf *b = e->bp_free; b && !found; b = b->next)
        found = b->size == size;
    pthread_mutex_unlock(&e->bp_mu);
    return found;
}

void bufpool_give(engine *e, uint8_t *p, size_t size, int pinned)
{
    if (!p)
        return;
    size_t limit = (size_t)(e->cfg.queue_depth + e->cfg.synth_workers + 1);
    pthread_mutex_lock(&e->bp_mu);
    size_t n = 0;
    for (ebuf *b = e->bp_free; b; b = b->next)
        n++;
    ebuf *b = n < limit ? malloc(sizeof *b) : NULL;
    if (b) {
        b->p = p;
        b->size = size;
        b->pinned = pinned;
        b->next = e->bp_free;
        e->bp_free = b;
        e->bp_free_bytes += size;
        pthread_mutex_unlock(&e->bp_mu);
        return;
    }
    buf_gone_locked(e, size, pinned);
    pthread_mutex_unlock(&e->bp_mu);
    gpu_host_free(p, pinned);
    budget_release(&e->bud, size);
}

uint64_t bufpool_cached_bytes(engine *e)
{
    pthread_mutex_lock(&e->bp_mu);
    uint64_t b = e->bp_free_bytes;
    pthread_mutex_unlock(&e->bp_mu);
    return b;
}

uint64_t bufpool_trim(engine *e)
{
    pthread_mutex_lock(&e->bp_mu);
    ebuf *list = e->bp_free;
    uint64_t bytes = e->bp_free_bytes;
    e->bp_free = NULL;
    e->bp_free_bytes = 0;
    for (ebuf *b = list; b; b = b->next)
        buf_gone_locked(e, b->size, b->pinned);
    pthread_mutex_unlock(&e->bp_mu);
    while (list) {
        ebuf *next = list->next;
        gpu_host_free(list->p, list->pinned);
        free(list);
        list = next;
    }
    budget_release(&e->bud, bytes);
    return bytes;
}
