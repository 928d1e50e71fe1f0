/* keys.c - the engine's proving-key cache (LRU eviction under memory pressure), the
 * per-curve backends, and the reusable host buffer pool.
 *
 * DESIGN. A key's bytes (the mapped .zkey plus what each backend builds for it: the
 * CSR copy of the constraint matrix on the CPU, copies of unaligned bases) are charged
 * to the budget when its entry is created, by the dispatcher when it admits the first
 * partition that needs it, or by engine_key_preload. The first partition to run loads
 * it (key_ensure); others wait on e->cv_key. When the head of the scheduler does not
 * fit, the dispatcher frees idle keys (no partition holds them) least recently used
 * first. Preloaded keys are only dropped by engine_key_evict or when nothing else frees
 * enough memory.
 *
 * Workspace buffers (a, b, c and the aligned witness copy) are reused across partitions
 * of the same size: a returned buffer stays charged to the budget while cached, the
 * dispatcher hands it to the next partition that needs that size, and frees the cache
 * first when memory is short.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine_internal.h"
#include "util/log.h"

uint64_t key_bytes_estimate(const zkey_file *z, int n_dev)
{
    uint64_t file = z->map.size;
    /* CPU key state: row offsets for A and B, then signal + coefficient per entry */
    uint64_t csr = 2ull * ((uint64_t)z->domain_size + 1) * 4 + (uint64_t)z->n_coefs * (4 + 32);
    uint64_t copies = 0;
    for (int i = 0; i < ZKEY_BASES; i++)
        if (((uintptr_t)z->bases[i] & 7) != 0)
            copies += (uint64_t)z->n_bases[i] * (i == ZKEY_B2 ? z->curve->g2_bytes : z->curve->g1_bytes);
    uint64_t vk = (uint64_t)(z->n_public + 1) * sizeof(g1_std) + 4096;
    return file + (uint64_t)(1 + n_dev) * (csr + copies) + vk;
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
        for (int d = 0; d < e->n_dev; d++)
            if (k->ks_dev[d] && e->dev_be[c][d])
                e->dev_be[c][d]->key_detach(e->dev_be[c][d], k->ks_dev[d]);
        pthread_mutex_unlock(&e->be_mu);
        vk_free(&k->vk);
        zkey_close(&k->z);
    }
    k->ks_synth = NULL;
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

/* loads path into k (k is KEY_LOADING and owned by this thread) */
static cuzk_err key_load(engine *e, ekey *k, char *err)
{
    cuzk_err rc = zkey_open(&k->z, k->path, err);
    if (rc)
        return rc;
    cuzk_curve_id c = k->z.curve->id;
    if ((rc = groth16_vk_from_zkey(&k->vk, NULL, &k->z, err)))
        goto fail_z;
    cuzk_backend *be = eng_synth_backend(e, c, err);
    if (!be) {
        rc = CUZK_ENOMEM;
        goto fail_vk;
    }
    if ((rc = be->key_attach(be, &k->z, &k->ks_synth, err)))
        goto fail_vk;
    for (int d = 0; d < e->n_dev; d++) {
        cuzk_backend *db = eng_dev_backend(e, c, d, err);
        if (!db) {
            rc = e->use_gpu ? CUZK_ENODEV : CUZK_ENOMEM;
            goto fail_attach;
        }
        if ((rc = db->key_attach(db, &k->z, &k->ks_dev[d], err)))
            goto fail_attach;
    }
    return CUZK_OK;
fail_attach:
    for (int d = 0; d < e->n_dev; d++)
        if (k->ks_dev[d])
            e->dev_be[c][d]->key_detach(e->dev_be[c][d], k->ks_dev[d]);
    memset(k->ks_dev, 0, sizeof k->ks_dev);
    be->key_detach(be, k->ks_synth);
    k->ks_synth = NULL;
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
        LOG(LOG_INFO, "key %s loaded in %lld ms", k->path, (long long)(k->loaded_ms - t0));
    }
    pthread_cond_broadcast(&e->cv_key);
    pthread_mutex_unlock(&e->mu);
    return rc;
}

/* ---- buffer pool ---- */
uint8_t *bufpool_take(engine *e, size_t size, int *reused)
{
    pthread_mutex_lock(&e->bp_mu);
    for (ebuf **pp = &e->bp_free; *pp; pp = &(*pp)->next) {
        if ((*pp)->size == size) {
            ebuf *b = *pp;
            *pp = b->next;
            e->bp_free_bytes -= size;
            e->bp_reuses++;
            pthread_mutex_unlock(&e->bp_mu);
            uint8_t *p = b->p;
            free(b);
            *reused = 1;
            return p;
        }
    }
    e->bp_allocs++;
    e->bp_bytes_total += size;
    pthread_mutex_unlock(&e->bp_mu);
    *reused = 0;
    return aligned_alloc(64, (size + 63) / 64 * 64);
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

void bufpool_give(engine *e, uint8_t *p, size_t size)
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
        b->next = e->bp_free;
        e->bp_free = b;
        e->bp_free_bytes += size;
        pthread_mutex_unlock(&e->bp_mu);
        return;
    }
    e->bp_bytes_total -= size;
    pthread_mutex_unlock(&e->bp_mu);
    free(p);
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
    e->bp_bytes_total -= bytes;
    pthread_mutex_unlock(&e->bp_mu);
    while (list) {
        ebuf *next = list->next;
        free(list->p);
        free(list);
        list = next;
    }
    budget_release(&e->bud, bytes);
    return bytes;
}
