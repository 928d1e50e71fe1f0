/* api_jobs.c - the job and proving-key routes of the daemon's API (see api.h).
 *
 * Submit takes either JSON
 *   {"zkey": "/abs/circuit.zkey", "witnesses": ["/abs/p0.wtns", ...]          (paths on this host)
 *    | "witness_data": ["<base64 .wtns>", ...],                              (uploaded)
 *    "kind": "porep", "priority": "high", "idempotency_key": "k"}
 * or, for a circuit registered with its witness generator (cuzk serve --circuit),
 *   {"circuit": "NAME", "inputs": [{...}, ...], ...}                        (one object per partition)
 * or a raw .wtns body (Content-Type: application/octet-stream) for one partition, with
 * zkey, kind, priority and idempotency_key in the query string. Every field is checked
 * here before the engine sees it; unknown keys are refused so that a typo does not
 * silently become a default.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/api.h"

/* ---------------------------------------------------------------- base64 */

static int b64_val(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+' || c == '-')
        return 62;
    if (c == '/' || c == '_')
        return 63;
    return -1;
}

/* Decodes standard or URL-safe base64 (padding optional, whitespace ignored) into a
 * malloc'd buffer. Returns NULL with *bad set to the offending offset, or -1 on OOM. */
static uint8_t *b64_decode(const char *s, size_t n, size_t *out_len, long *bad)
{
    uint8_t *o = malloc(n / 4 * 3 + 3);
    if (!o) {
        *bad = -1;
        return NULL;
    }
    size_t k = 0;
    uint32_t acc = 0;
    int bits = 0, pad = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
            continue;
        if (c == '=') {
            pad = 1;
            continue;
        }
        int v = b64_val(c);
        if (v < 0 || pad) {
            free(o);
            *bad = (long)i;
            return NULL;
        }
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            o[k++] = (uint8_t)(acc >> bits);
        }
    }
    *out_len = k;
    return o;
}

/* ---------------------------------------------------------------- helpers */

static json_t *job_info_json(const engine_job_info *in)
{
    int terminal = in->state == JOB_DONE || in->state == JOB_FAILED || in->state == JOB_CANCELED;
    return json_pack("{s:s, s:s, s:s, s:s, s:i, s:i, s:I, s:I, s:s, s:b}", "id", in->id, "state",
                     engine_job_state_name(in->state), "kind", engine_kind_name(in->kind),
                     "priority", engine_priority_name(in->priority), "n_partitions",
                     (int)in->n_partitions, "n_done", (int)in->n_done, "submitted_ms",
                     (json_int_t)in->submitted_ms, "finished_ms", (json_int_t)in->finished_ms,
                     "error", in->error, "terminal", terminal);
}

static void reply_err(http_resp *resp, cuzk_err e, const char *msg)
{
    http_resp_error(resp, api_status_from_err(e), "%s", msg);
}

/* partition index from a path segment */
static int parse_index(const char *s, uint32_t *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (end == s || *end || errno || v >= ENGINE_MAX_PARTITIONS || s[0] == '-')
        return -1;
    *out = (uint32_t)v;
    return 0;
}

static int kind_prio_from(const char *kind_s, const char *prio_s, engine_job_spec *spec,
                          http_resp *resp)
{
    spec->kind = KIND_CUSTOM;
    spec->priority = -1;
    if (kind_s && engine_kind_from_name(kind_s, &spec->kind)) {
        http_resp_error(resp, 400,
                        "unknown kind '%s' (use porep, snap, window-post, winning-post or custom)",
                        kind_s);
        return -1;
    }
    if (prio_s) {
        engine_priority p;
        if (engine_priority_from_name(prio_s, &p)) {
            http_resp_error(resp, 400, "unknown priority '%s' (use low, normal, high or critical)",
                            prio_s);
            return -1;
        }
        spec->priority = (int)p;
    }
    return 0;
}

static void do_submit(api_ctx *a, const engine_job_spec *spec, http_resp *resp)
{
    char id[ENGINE_ID_LEN], err[CUZK_ERRLEN] = "";
    int existed = 0;
    cuzk_err e = engine_submit(a->eng, spec, id, &existed, err);
    if (e) {
        reply_err(resp, e, err[0] ? err : cuzk_strerror(e));
        return;
    }
    engine_job_info info;
    json_t *j;
    if (engine_get_job(a->eng, id, &info, err) == CUZK_OK)
        j = job_info_json(&info);
    else
        j = json_pack("{s:s}", "id", id);
    if (j)
        json_object_set_new(j, "existed", json_boolean(existed));
    api_reply_json(resp, existed ? 200 : 201, j);
}

/* ---------------------------------------------------------------- submit */

static void submit_raw(api_ctx *a, const http_req *req, http_resp *resp)
{
    const char *zkey = http_req_query(req, "zkey");
    if (!zkey || !*zkey) {
        http_resp_error(resp, 400, "a raw witness upload needs ?zkey=/absolute/path.zkey");
        return;
    }
    if (zkey[0] != '/') {
        http_resp_error(resp, 400, "zkey path '%s' must be absolute (it is read by the daemon)",
                        zkey);
        return;
    }
    if (req->body_len == 0) {
        http_resp_error(resp, 400, "empty body: send the .wtns file as the request body");
        return;
    }
    engine_job_spec spec;
    memset(&spec, 0, sizeof spec);
    if (kind_prio_from(http_req_query(req, "kind"), http_req_query(req, "priority"), &spec, resp))
        return;
    const uint8_t *data[1] = {(const uint8_t *)req->body};
    size_t sizes[1] = {req->body_len};
    spec.zkey_path = zkey;
    spec.n_partitions = 1;
    spec.witness_data = data;
    spec.witness_sizes = sizes;
    spec.idempotency_key = http_req_query(req, "idempotency_key");
    do_submit(a, &spec, resp);
}

void api_jobs_submit(api_ctx *a, const http_req *req, http_resp *resp, char **params)
{
    (void)params;
    const char *ctype = http_req_header(req, "Content-Type");
    if (ctype && !strncmp(ctype, "application/octet-stream", 24)) {
        submit_raw(a, req, resp);
        return;
    }
    json_error_t jerr;
    json_t *root = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        if (req->body_len == 0)
            http_resp_error(resp, 400, "empty body: send the job as JSON, e.g. {\"zkey\": "
                                       "\"/abs/c.zkey\", \"witnesses\": [\"/abs/w.wtns\"]}");
        else
            http_resp_error(resp, 400, "request body is not valid JSON: %s (line %d, column %d)",
                            jerr.text, jerr.line, jerr.column);
        return;
    }
    const char **paths = NULL;
    const uint8_t **data = NULL;
    char **inputs = NULL;
    size_t *sizes = NULL, n = 0;
    engine_job_spec spec;
    memset(&spec, 0, sizeof spec);
    if (!json_is_object(root)) {
        http_resp_error(resp, 400, "the job must be a JSON object, got %s",
                        json_is_array(root) ? "an array" : "a scalar");
        goto done;
    }
    static const char *const keys[] = {"zkey", "witnesses", "witness_data", "kind", "priority",
                                       "idempotency_key", "circuit", "inputs"};
    const char *k;
    json_t *v;
    json_object_foreach(root, k, v)
    {
        size_t i = 0;
        while (i < sizeof keys / sizeof keys[0] && strcmp(keys[i], k))
            i++;
        if (i == sizeof keys / sizeof keys[0]) {
            http_resp_error(resp, 400,
                            "unknown key '%s' in the job (allowed: zkey, witnesses, witness_data, "
                            "circuit, inputs, kind, priority, idempotency_key)",
                            k);
            goto done;
        }
        int want_string = strcmp(k, "witnesses") && strcmp(k, "witness_data") && strcmp(k, "inputs");
        if (want_string ? !json_is_string(v) : !json_is_array(v)) {
            http_resp_error(resp, 400, "'%s' must be %s", k,
                            want_string           ? "a string"
                            : !strcmp(k, "inputs") ? "an array of objects (one circuit input per partition)"
                                                   : "an array of strings");
            goto done;
        }
    }
    json_t *jz = json_object_get(root, "zkey");
    json_t *jw = json_object_get(root, "witnesses");
    json_t *jd = json_object_get(root, "witness_data");
    json_t *jc = json_object_get(root, "circuit");
    json_t *jin = json_object_get(root, "inputs");
    if (jc || jin) {
        /* circuit inputs: the daemon runs the circuit's witness generator */
        if (!jc || !jin) {
            http_resp_error(resp, 400, jc ? "missing 'inputs' (one circuit input object per partition)"
                                          : "'inputs' needs 'circuit' (the name of a circuit registered "
                                            "with cuzk serve --circuit; GET /v1/circuits lists them)");
            goto done;
        }
        if (jz || jw || jd) {
            http_resp_error(resp, 400, "a job with 'circuit' and 'inputs' takes no '%s' (the circuit "
                                       "names its key and the daemon generates the witnesses)",
                            jz ? "zkey" : jw ? "witnesses" : "witness_data");
            goto done;
        }
        n = json_array_size(jin);
        if (n == 0 || n > ENGINE_MAX_PARTITIONS) {
            http_resp_error(resp, 400, "'inputs' has %zu entries; a job has 1..%d partitions", n,
                            ENGINE_MAX_PARTITIONS);
            goto done;
        }
        inputs = calloc(n, sizeof *inputs);
        if (!inputs) {
            http_resp_error(resp, 503, "out of memory");
            goto done;
        }
        for (size_t i = 0; i < n; i++) {
            json_t *o = json_array_get(jin, i);
            if (!json_is_object(o)) {
                http_resp_error(resp, 400,
                                "'inputs'[%zu] must be a JSON object of circuit input signals, "
                                "e.g. {\"a\": \"3\"}",
                                i);
                goto done;
            }
            inputs[i] = json_dumps(o, JSON_COMPACT);
            if (!inputs[i]) {
                http_resp_error(resp, 503, "out of memory");
                goto done;
            }
        }
        spec.circuit = json_string_value(jc);
        spec.inputs = (const char *const *)inputs;
        goto common;
    }
    if (!jz) {
        http_resp_error(resp, 400, "missing 'zkey' (absolute path of the proving key)");
        goto done;
    }
    spec.zkey_path = json_string_value(jz);
    if (spec.zkey_path[0] != '/') {
        http_resp_error(resp, 400, "zkey path '%s' must be absolute (it is read by the daemon)",
                        spec.zkey_path);
        goto done;
    }
    if (!jw == !jd) {
        http_resp_error(resp, 400, "give exactly one of 'witnesses' (paths on the daemon's host) "
                                   "or 'witness_data' (base64 .wtns files)");
        goto done;
    }
    json_t *arr = jw ? jw : jd;
    n = json_array_size(arr);
    if (n == 0 || n > ENGINE_MAX_PARTITIONS) {
        http_resp_error(resp, 400, "'%s' has %zu entries; a job has 1..%d partitions",
                        jw ? "witnesses" : "witness_data", n, ENGINE_MAX_PARTITIONS);
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        if (!json_is_string(json_array_get(arr, i))) {
            http_resp_error(resp, 400, "'%s'[%zu] must be a string",
                            jw ? "witnesses" : "witness_data", i);
            goto done;
        }
    if (jw) {
        paths = calloc(n, sizeof *paths);
        if (!paths) {
            http_resp_error(resp, 503, "out of memory");
            goto done;
        }
        for (size_t i = 0; i < n; i++) {
            paths[i] = json_string_value(json_array_get(jw, i));
            if (paths[i][0] != '/') {
                http_resp_error(resp, 400,
                                "witness path '%s' must be absolute (it is read by the daemon)",
                                paths[i]);
                goto done;
            }
        }
        spec.witness_paths = paths;
    } else {
        data = calloc(n, sizeof *data);
        sizes = calloc(n, sizeof *sizes);
        if (!data || !sizes) {
            http_resp_error(resp, 503, "out of memory");
            goto done;
        }
        for (size_t i = 0; i < n; i++) {
            json_t *s = json_array_get(jd, i);
            long bad = 0;
            data[i] = b64_decode(json_string_value(s), json_string_length(s), &sizes[i], &bad);
            if (!data[i]) {
                if (bad < 0)
                    http_resp_error(resp, 503, "out of memory decoding witness_data[%zu]", i);
                else
                    http_resp_error(resp, 400,
                                    "witness_data[%zu] is not base64 (bad character at offset %ld)",
                                    i, bad);
                goto done;
            }
            if (sizes[i] == 0) {
                http_resp_error(resp, 400, "witness_data[%zu] is empty", i);
                goto done;
            }
        }
        spec.witness_data = data;
        spec.witness_sizes = sizes;
    }
common:;
    json_t *jk = json_object_get(root, "kind"), *jp = json_object_get(root, "priority");
    if (kind_prio_from(jk ? json_string_value(jk) : NULL, jp ? json_string_value(jp) : NULL, &spec,
                       resp))
        goto done;
    json_t *ji = json_object_get(root, "idempotency_key");
    spec.idempotency_key = ji ? json_string_value(ji) : NULL;
    spec.n_partitions = n;
    do_submit(a, &spec, resp);
done:
    if (data)
        for (size_t i = 0; i < n; i++)
            free((void *)data[i]);
    free(data);
    free(sizes);
    free(paths);
    if (inputs)
        for (size_t i = 0; i < n; i++)
            free(inputs[i]);
    free(inputs);
    json_decref(root);
}

/* ---------------------------------------------------------------- read, wait, cancel */

void api_jobs_list(api_ctx *a, const http_req *req, http_resp *resp, char **params)
{
    (void)params;
    const char *state = http_req_query(req, "state");
    const char *lim = http_req_query(req, "limit");
    static const char *const states[] = {"queued", "running", "done", "failed", "canceled"};
    if (state) {
        size_t i = 0;
        while (i < 5 && strcmp(states[i], state))
            i++;
        if (i == 5) {
            http_resp_error(resp, 400,
                            "unknown state '%s' (use queued, running, done, failed or canceled)",
                            state);
            return;
        }
    }
    int limit = 100;
    if (lim) {
        char *end;
        long v = strtol(lim, &end, 10);
        if (end == lim || *end || v < 1 || v > 100000) {
            http_resp_error(resp, 400, "limit '%s' must be a number in 1..100000", lim);
            return;
        }
        limit = (int)v;
    }
    json_t *list = engine_list(a->eng, state, limit);
    api_reply_json(resp, 200, json_pack("{s:o}", "jobs", list ? list : json_array()));
}

void api_jobs_get(api_ctx *a, const http_req *req, http_resp *resp, char **params)
{
    (void)req;
    char err[CUZK_ERRLEN] = "";
    json_t *j = engine_job_json(a->eng, params[0], err);
    if (!j) {
        http_resp_error(resp, 404, "%s", err[0] ? err : "no such job");
        return;
    }
    api_reply_json(resp, 200, j);
}

void api_jobs_await(api_ctx *a, const http_req *req, http_resp *resp, char **params)
{
    const char *t = http_req_query(req, "timeout");
    double secs = 30;
    if (t) {
        char *end;
        secs = strtod(t, &end);
        if (end == t || *end || secs < 0) {
            http_resp_error(resp, 400, "timeout '%s' must be a number of seconds >= 0", t);
            return;
        }
    }
    if (secs > API_AWAIT_MAX_S)
        secs = API_AWAIT_MAX_S;
    engine_job_info info;
    char err[CUZK_ERRLEN] = "";
    cuzk_err e = engine_wait(a->eng, params[0], (int64_t)(secs * 1000), &info, err);
    if (e && e != CUZK_ETIMEOUT) {
        reply_err(resp, e, err[0] ? err : cuzk_strerror(e));
        return;
    }
    if (e == CUZK_ETIMEOUT && engine_get_job(a->eng, params[0], &info, err) != CUZK_OK) {
        http_resp_error(resp, 404, "%s", err);
        return;
    }
    api_reply_json(resp, 200, job_info_json(&info));
}

void api_jobs_cancel(api_ctx *a, const http_req *req, http_resp *resp, char **params)
{
    (void)req;
    char err[CUZK_ERRLEN] = "";
    cuzk_err e = engine_cancel(a->eng, params[0], err);
    if (e) {
        /* canceling a finished job is a conflict with its state, not a malformed request */
        http_resp_error(resp, e == CUZK_EINVAL ? 409 : api_status_from_err(e), "%s",
                        err[0] ? err : cuzk_strerror(e));
        return;
    }
    engine_job_info info;
    if (engine_get_job(a->eng, params[0], &info, err) == CUZK_OK)
        api_reply_json(resp, 200, job_info_json(&info));
    else
        api_reply_json(resp, 200, json_pack("{s:s, s:s}", "id", params[0], "state", "canceled"));
}

/* ---------------------------------------------------------------- proofs */

static int fetch(api_ctx *a, char **params, http_resp *resp, char **proof, char **pub)
{
    uint32_t idx;
    if (parse_index(params[1], &idx)) {
        http_resp_error(resp, 400, "partition index '%s' is not a number in 0..%d", params[1],
                        ENGINE_MAX_PARTITIONS - 1);
        return -1;
    }
    char err[CUZK_ERRLEN] = "";
    cuzk_err e = engine_fetch_proof(a->eng, params[0], idx, proof, pub, err);
    if (e) {
        http_resp_error(resp, e == CUZK_EINVAL ? 409 : api_status_from_err(e), "%s",
                        err[0] ? err : cuzk_strerror(e));
        return -1;
    }
    return 0;
}

void api_jobs_proof(api_ctx *a, const http_req *req, http_resp *resp, char **params)
{
    (void)req;
    char *proof = NULL, *pub = NULL;
    if (fetch(a, params, resp, &proof, &pub))
        return;
    json_error_t je;
    json_t *jp = json_loads(proof, 0, &je), *ju = json_loads(pub, 0, &je);
    free(proof);
    free(pub);
    if (!jp || !ju) {
        json_decref(jp);
        json_decref(ju);
        http_resp_error(resp, 500, "stored proof is not valid JSON");
        return;
    }
    api_reply_json(resp, 200, json_pack("{s:o, s:o}", "proof", jp, "public", ju));
}

static void fetch_one(api_ctx *a, http_resp *resp, char **params, int want_public)
{
    char *proof = NULL, *pub = NULL;
    if (fetch(a, params, resp, &proof, &pub))
        return;
    char *keep = want_public ? pub : proof;
    free(want_public ? proof : pub);
    http_resp_take(resp, 200, "application/json", keep, strlen(keep));
}

void api_jobs_proof_file(api_ctx *a, const http_req *req, http_resp *resp, char **params)
{
    (void)req;
    fetch_one(a, resp, params, 0);
}

void api_jobs_public_file(api_ctx *a, const http_req *req, http_resp *resp, char **params)
{
    (void)req;
    fetch_one(a, resp, params, 1);
}

/* ---------------------------------------------------------------- circuits, keys */

void api_circuits_list(api_ctx *a, const http_req *req, http_resp *resp, char **params)
{
    (void)req;
    (void)params;
    json_t *c = engine_circuits_json(a->eng);
    api_reply_json(resp, 200, json_pack("{s:o}", "circuits", c ? c : json_array()));
}

void api_keys_list(api_ctx *a, const http_req *req, http_resp *resp, char **params)
{
    (void)req;
    (void)params;
    json_t *st = engine_status_json(a->eng);
    json_t *keys = st ? json_object_get(st, "keys") : NULL;
    api_reply_json(resp, 200, json_pack("{s:O}", "keys", keys ? keys : json_array()));
    json_decref(st);
}

/* body {"zkey": "/abs/path"} -> path, or NULL after replying 400 */
static json_t *key_body(const http_req *req, http_resp *resp, const char **path)
{
    json_error_t jerr;
    json_t *root = json_loadb(req->body, req->body_len, 0, &jerr);
    if (!root) {
        http_resp_error(resp, 400, "request body is not valid JSON: %s (line %d, column %d)",
                        jerr.text, jerr.line, jerr.column);
        return NULL;
    }
    const char *k;
    json_t *v;
    json_object_foreach(root, k, v)
    {
        if (strcmp(k, "zkey")) {
            http_resp_error(resp, 400, "unknown key '%s' (allowed: zkey)", k);
            json_decref(root);
            return NULL;
        }
    }
    json_t *z = json_object_get(root, "zkey");
    if (!json_is_string(z) || json_string_value(z)[0] != '/') {
        http_resp_error(resp, 400, "'zkey' must be the absolute path of a proving key");
        json_decref(root);
        return NULL;
    }
    *path = json_string_value(z);
    return root;
}

void api_keys_preload(api_ctx *a, const http_req *req, http_resp *resp, char **params)
{
    (void)params;
    const char *path;
    json_t *root = key_body(req, resp, &path);
    if (!root)
        return;
    char err[CUZK_ERRLEN] = "";
    cuzk_err e = engine_key_preload(a->eng, path, err);
    if (e)
        reply_err(resp, e, err[0] ? err : cuzk_strerror(e));
    else
        api_reply_json(resp, 200, json_pack("{s:s, s:b}", "zkey", path, "loaded", 1));
    json_decref(root);
}

void api_keys_evict(api_ctx *a, const http_req *req, http_resp *resp, char **params)
{
    (void)params;
    const char *path;
    json_t *root = key_body(req, resp, &path);
    if (!root)
        return;
    char err[CUZK_ERRLEN] = "";
    cuzk_err e = engine_key_evict(a->eng, path, err);
    if (e)
        http_resp_error(resp, e == CUZK_EINVAL ? 409 : api_status_from_err(e), "%s",
                        err[0] ? err : cuzk_strerror(e));
    else
        api_reply_json(resp, 200, json_pack("{s:s, s:b}", "zkey", path, "loaded", 0));
    json_decref(root);
}
