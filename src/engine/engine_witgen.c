/* engine_witgen.c - the engine's registered circuits: jobs that carry circuit inputs
 * (JSON) instead of witnesses, and the witness generation that is the CPU work of their
 * synthesis stage.
 *
 * DESIGN. A circuit is registered at start-up (engine_config.circuits, `cuzk serve
 * --circuit NAME=ZKEY,GENERATOR`) and checked then: key and generator exist, node is
 * found when a .wasm generator needs it. engine_submit writes each partition's input
 * into DATA/input/ (fsync'd) and journals the job with the circuit's name; the input file
 * takes the place of the witness path in the partition row (owned: deleted with the job).
 * The synthesis worker runs the generator (witgen.c) into DATA/witness/gen-<job>-<i>.wtns,
 * loads that file exactly like a submitted witness and deletes it, so nothing downstream
 * knows the difference. A generator's own memory is not charged to the budget; the
 * generated file is (as the witness file of the partition, witgen_wtns_bytes).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine_internal.h"
#include "util/log.h"

cuzk_err eng_circuits_load(engine *e, char *err)
{
    size_t n = e->cfg.n_circuits;
    e->node[0] = 0;
    if (!n)
        return CUZK_OK;
    e->circuits = calloc(n, sizeof *e->circuits);
    if (!e->circuits)
        return cuzk_errf(err, CUZK_ENOMEM, "out of memory");
    int need_node = 0;
    for (size_t i = 0; i < n; i++) {
        witgen_circuit *c = &e->circuits[i];
        cuzk_err rc = witgen_circuit_parse(c, e->cfg.circuits[i] ? e->cfg.circuits[i] : "", err);
        if (rc)
            return rc;
        for (size_t k = 0; k < i; k++)
            if (!strcmp(e->circuits[k].name, c->name))
                return cuzk_errf(err, CUZK_EINVAL, "circuit %s is registered twice", c->name);
        zkey_file z;
        if ((rc = zkey_open(&z, c->zkey, err))) {
            cuzk_err_prefix(err, "circuit %s", c->name);
            return rc;
        }
        zkey_close(&z);
        need_node |= c->kind == WITGEN_WASM;
        e->n_circuits = i + 1;
    }
    if (need_node) {
        const char *node = e->cfg.node && *e->cfg.node ? e->cfg.node : "node";
        cuzk_err rc = witgen_find_program(e->node, sizeof e->node, node, err);
        if (rc) {
            cuzk_err_prefix(err, "node (needed by the .wasm witness generators; set --node)");
            return rc;
        }
    }
    for (size_t i = 0; i < n; i++)
        LOG(LOG_INFO, "circuit %s: key %s, %s generator %s", e->circuits[i].name, e->circuits[i].zkey,
            e->circuits[i].kind == WITGEN_WASM ? "wasm" : "native", e->circuits[i].generator);
    return CUZK_OK;
}

const witgen_circuit *eng_circuit_find(engine *e, const char *name)
{
    for (size_t i = 0; name && i < e->n_circuits; i++)
        if (!strcmp(e->circuits[i].name, name))
            return &e->circuits[i];
    return NULL;
}

json_t *engine_circuits_json(engine *e)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < e->n_circuits; i++) {
        const witgen_circuit *c = &e->circuits[i];
        json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:s}", "name", c->name, "zkey", c->zkey, "generator",
                                           c->generator, "kind", c->kind == WITGEN_WASM ? "wasm" : "native"));
    }
    return a;
}

typedef struct stop_ctx {
    engine *e;
    ejob *j;
} stop_ctx;

static int witgen_should_stop(void *vctx)
{
    stop_ctx *s = vctx;
    return !atomic_load(&s->e->running) || __atomic_load_n(&s->j->stopping, __ATOMIC_ACQUIRE);
}

cuzk_err eng_witgen_partition(engine *e, epart *p, char *out, size_t cap, char *err)
{
    ejob *j = p->job;
    snprintf(out, cap, "%s/witness/gen-%s-%u.wtns", e->data_dir, j->ids, p->index);
    unlink(out); /* a previous attempt's */
    stop_ctx sc = {e, j};
    witgen_opts o = {.node = e->node,
                     .timeout_ms = e->cfg.witgen_timeout_s * 1000,
                     .stop = witgen_should_stop,
                     .stop_ctx = &sc};
    cuzk_err rc = witgen_run(j->gen, &o, p->witness, out, err);
    if (rc)
        unlink(out);
    /* a generator that failed on a data dir without room for its witness: no space, not a
       bad input (the engine waits until there is room) */
    if (rc == CUZK_EINVAL && eng_disk_short(e, witgen_wtns_bytes(p->key->z.n_vars))) {
        cuzk_err_prefix(err, "no room for the witness in %s", e->data_dir);
        rc = CUZK_ENOSPC;
    }
    return rc;
}

void eng_witgen_sweep(engine *e)
{
    char dir[ENGINE_PATH_MAX + 16];
    snprintf(dir, sizeof dir, "%s/witness", e->data_dir);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d)))
        if (!strncmp(de->d_name, "gen-", 4)) {
            char path[ENGINE_PATH_MAX + 300];
            snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
            unlink(path);
        }
    closedir(d);
}
