/* fuzz_request.c - libFuzzer harness for the daemon's request-body parsers: the job
 * submission (POST /v1/jobs, api_jobs_submit) and the key routes (POST /v1/keys/preload and
 * /v1/keys/evict, their {"zkey": PATH} body), entered through the route dispatcher
 * api_handle as the HTTP listener calls it.
 *
 * The input is one request body (seeds: fuzz/corpus/request/); it is sent to each of the
 * three routes. No engine runs: api_jobs.c's handlers reach the engine only through
 * engine.h, and this file defines every engine_* function they call as a stub, so the
 * linker takes these and never pulls engine.o out of the library. The stubs record what
 * reached them and check it against engine.h's contract. The parser is the daemon's own
 * code; what is not reached is the raw .wtns upload (Content-Type:
 * application/octet-stream): headers and the query string come from a libmicrohttpd
 * connection, and a request without one has neither, so every body takes the JSON path.
 *
 * Beyond "no crash, no leak, no sanitizer report" it checks:
 *   - every reply is a JSON object: {"error": "..."} with a 4xx/5xx status, or (only
 *     after the engine accepted) the job or key with 200/201;
 *   - a job spec that reaches engine_submit is one engine.h allows: 1..1024 partitions,
 *     exactly one of witness paths, witness data or circuit inputs, absolute paths, every
 *     uploaded witness non-empty and readable to its last byte, every circuit input a JSON
 *     object, a known kind and priority.
 */
#include <string.h>

#include "common.h"
#include "engine/engine.h"
#include "server/api.h"

static int submitted; /* engine_submit calls for the current input */
static int key_calls; /* engine_key_preload/evict calls for the current input */

/* ---- the engine, stubbed (engine.h) ---- */

cuzk_err engine_submit(engine *e, const engine_job_spec *s, char id[ENGINE_ID_LEN], int *existed,
                       char *err)
{
    (void)e;
    submitted++;
    FUZZ_CHECK(s->n_partitions >= 1 && s->n_partitions <= ENGINE_MAX_PARTITIONS, "%zu partitions",
               s->n_partitions);
    int n_src = !!s->witness_paths + !!s->witness_data + !!s->inputs;
    FUZZ_CHECK(n_src == 1, "%d witness sources", n_src);
    FUZZ_CHECK(!s->circuit == !s->inputs, "circuit without inputs or inputs without circuit");
    if (!s->circuit)
        FUZZ_CHECK(s->zkey_path && s->zkey_path[0] == '/', "zkey path not absolute");
    FUZZ_CHECK((unsigned)s->kind < KIND_COUNT, "kind %d", (int)s->kind);
    FUZZ_CHECK(s->priority >= -1 && s->priority < PRIO_COUNT, "priority %d", s->priority);
    unsigned sum = 0;
    for (size_t i = 0; i < s->n_partitions; i++) {
        if (s->witness_paths) {
            FUZZ_CHECK(s->witness_paths[i] && s->witness_paths[i][0] == '/',
                       "witness path %zu not absolute", i);
        } else if (s->witness_data) {
            FUZZ_CHECK(s->witness_data[i] && s->witness_sizes && s->witness_sizes[i] > 0,
                       "witness %zu empty", i);
            for (size_t k = 0; k < s->witness_sizes[i]; k++) /* ASan: every byte is there */
                sum += s->witness_data[i][k];
        } else {
            json_error_t je;
            json_t *o = json_loads(s->inputs[i], 0, &je);
            FUZZ_CHECK(json_is_object(o), "input %zu is not a JSON object: %s", i, s->inputs[i]);
            json_decref(o);
        }
    }
    if (s->idempotency_key)
        sum += (unsigned)strlen(s->idempotency_key);
    /* answer with each outcome a handler must relay: accepted, seen before, refused */
    if (s->n_partitions % 4 == 3)
        return cuzk_errf(err, (sum & 1) ? CUZK_EBUDGET : CUZK_EFORMAT, "refused by the stub");
    snprintf(id, ENGINE_ID_LEN, "j-%zu", s->n_partitions);
    *existed = s->n_partitions % 4 == 2;
    return CUZK_OK;
}

cuzk_err engine_get_job(engine *e, const char *id, engine_job_info *out, char *err)
{
    (void)e;
    memset(out, 0, sizeof *out);
    if (!strcmp(id, "j-1"))
        return cuzk_errf(err, CUZK_ENOTFOUND, "no job %s", id);
    snprintf(out->id, sizeof out->id, "%s", id);
    out->state = JOB_QUEUED;
    out->kind = KIND_CUSTOM;
    out->priority = PRIO_NORMAL;
    return CUZK_OK;
}

static cuzk_err key_call(const char *path, char *err)
{
    key_calls++;
    FUZZ_CHECK(path && path[0] == '/', "key path not absolute");
    return path[1] == 'x' ? cuzk_errf(err, CUZK_EINVAL, "key %s is in use", path) : CUZK_OK;
}

cuzk_err engine_key_preload(engine *e, const char *zkey_path, char *err)
{
    (void)e;
    return key_call(zkey_path, err);
}

cuzk_err engine_key_evict(engine *e, const char *zkey_path, char *err)
{
    (void)e;
    return key_call(zkey_path, err);
}

/* the other routes' engine calls: never reached by the three routes fuzzed here */
#define UNREACHED() FUZZ_CHECK(0, "%s reached", __func__)
json_t *engine_job_json(engine *e, const char *id, char *err)
{
    (void)e, (void)id, (void)err;
    UNREACHED();
    return NULL;
}
cuzk_err engine_wait(engine *e, const char *id, int64_t timeout_ms, engine_job_info *out, char *err)
{
    (void)e, (void)id, (void)timeout_ms, (void)out, (void)err;
    UNREACHED();
    return CUZK_EINTERNAL;
}
cuzk_err engine_cancel(engine *e, const char *id, char *err)
{
    (void)e, (void)id, (void)err;
    UNREACHED();
    return CUZK_EINTERNAL;
}
json_t *engine_list(engine *e, const char *state_filter, int limit)
{
    (void)e, (void)state_filter, (void)limit;
    UNREACHED();
    return NULL;
}
cuzk_err engine_fetch_proof(engine *e, const char *id, uint32_t part, char **proof_json,
                            char **public_json, char *err)
{
    (void)e, (void)id, (void)part, (void)proof_json, (void)public_json, (void)err;
    UNREACHED();
    return CUZK_EINTERNAL;
}
json_t *engine_circuits_json(engine *e)
{
    (void)e;
    UNREACHED();
    return NULL;
}
json_t *engine_status_json(engine *e)
{
    (void)e;
    UNREACHED();
    return NULL;
}
char *engine_metrics_text(engine *e)
{
    (void)e;
    UNREACHED();
    return NULL;
}
char *engine_trace_json(engine *e, int64_t since_ms)
{
    (void)e, (void)since_ms;
    UNREACHED();
    return NULL;
}
json_t *engine_gpu_timeline(engine *e, int64_t window_ms, int64_t step_ms)
{
    (void)e, (void)window_ms, (void)step_ms;
    UNREACHED();
    return NULL;
}

/* ---- the harness ---- */

static void post(api_ctx *a, const char *path, const char *body, size_t len)
{
    http_req req = {.method = "POST", .path = path, .body = body, .body_len = len, .conn = NULL};
    http_resp resp = {.status = 200, .type = "application/json", .body = NULL, .len = 0};
    submitted = key_calls = 0;
    api_handle(a, &req, &resp);
    int engine_called = !strcmp(path, "/v1/jobs") ? submitted : key_calls;
    FUZZ_CHECK(resp.body && resp.len == strlen(resp.body), "%s: no reply body", path);
    json_error_t je;
    json_t *j = json_loadb(resp.body, resp.len, 0, &je);
    FUZZ_CHECK(json_is_object(j), "%s: reply %d is not a JSON object: %s", path, resp.status,
               resp.body);
    if (resp.status >= 400) {
        FUZZ_CHECK(resp.status < 600 && json_is_string(json_object_get(j, "error")),
                   "%s: status %d without an error: %s", path, resp.status, resp.body);
    } else {
        FUZZ_CHECK((resp.status == 200 || resp.status == 201) && engine_called,
                   "%s: status %d but the engine was not asked", path, resp.status);
    }
    json_decref(j);
    free(resp.body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static api_ctx a = {.listen = "fuzz", .backend = "cpu", .max_body = 1 << 20};
    /* the listener hands handlers a NUL-terminated copy of the body */
    char *body = malloc(size + 1);
    FUZZ_CHECK(body, "out of memory");
    memcpy(body, data, size);
    body[size] = 0;
    post(&a, "/v1/jobs", body, size);
    post(&a, "/v1/keys/preload", body, size);
    post(&a, "/v1/keys/evict", body, size);
    free(body);
    return 0;
}
