/* cmd_client.c - the client commands that talk to a running `cuzk serve`:
 * submit, await, status, cancel, top.
 *
 * Every command takes --server ADDR (default $CUZK_SERVER, else the daemon's default
 * listen address) and --token T (default $CUZK_TOKEN). Witness and key paths are made
 * absolute before they are sent, because the daemon reads them from its own working
 * directory; --upload sends the witness bytes instead (for a daemon on another host).
 * Exit codes follow cli.h: a 4xx about the inputs is 3, a budget refusal 4, anything
 * else from the daemon (or no daemon) 5, a failed job 1, a wait that ran out 6.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/cli.h"
#include "server/client.h"
#include "server/config.h"
#include "server/view.h"

typedef struct client_opts {
    const char *server;  /* daemon address */
    const char *token;   /* bearer token or NULL */
} client_opts;

static void client_defaults(client_opts *o)
{
    o->server = getenv("CUZK_SERVER");
    if (!o->server || !*o->server)
        o->server = SERVE_DEFAULT_LISTEN;
    o->token = getenv("CUZK_TOKEN");
}

/* consumes --server/--token at argv[*i]; returns 1 if it did, -1 on a missing value */
static int client_common_arg(client_opts *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    const char **dst = NULL;
    if (!strcmp(a, "--server"))
        dst = &o->server;
    else if (!strcmp(a, "--token"))
        dst = &o->token;
    else
        return 0;
    if (*i + 1 >= argc) {
        fprintf(stderr, "cuzk %s: %s needs a value\n", argv[0], a);
        return -1;
    }
    *dst = argv[++*i];
    return 1;
}

#define AWAIT_RECONNECT_MS 60000 /* how long await waits for a daemon that went away */
#define AWAIT_REWAITS_MAX 8       /* waits again after the daemon took a done job back */

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* await lost the daemon it had reached (err: why): it may be restarting, and its journal keeps
 * the job, so note when it went away and wait a moment. Returns 0 to try again, or the exit code
 * once it has been gone AWAIT_RECONNECT_MS or the deadline (0: none) has passed. */
static int await_lost(const char *server, const char *err, int64_t *lost_since, int64_t deadline)
{
    if (!*lost_since) {
        *lost_since = now_ms();
        fprintf(stderr, "cuzk await: lost the daemon at %s (%s), retrying\n", server, err);
    }
    if (now_ms() - *lost_since > AWAIT_RECONNECT_MS || (deadline && now_ms() >= deadline)) {
        fprintf(stderr, "cuzk await: daemon at %s unreachable for %lld s (%s)\n", server,
                (long long)((now_ms() - *lost_since) / 1000), err);
        return deadline && now_ms() >= deadline ? EXIT_TIMEOUT : EXIT_SERVER;
    }
    struct timespec ts = {0, 250 * 1000000L};
    nanosleep(&ts, NULL);
    return 0;
}

/* exit code for a refused request */
static int exit_from_http(int status)
{
    if (status == 400 || status == 404 || status == 413)
        return status == 404 ? EXIT_SERVER : EXIT_INPUT;
    if (status == 422)
        return EXIT_RESOURCE;
    if (status == 504)
        return EXIT_TIMEOUT;
    if (status == 507)
        return EXIT_NOSPACE; /* the data dir lacks headroom (--min-free): nothing was accepted */
    return EXIT_SERVER;
}

/* prints the daemon's {"error": ...} (or the raw body) for a failed request */
static void print_http_error(const char *cmd, const httpc_reply *r)
{
    json_t *j = json_loads(r->body, 0, NULL);
    json_t *e = j ? json_object_get(j, "error") : NULL;
    fprintf(stderr, "cuzk %s: daemon answered %d: %s\n", cmd, r->status,
            json_is_string(e) ? json_string_value(e) : r->body);
    json_decref(j);
}

/* One request; returns the parsed JSON body of a 2xx reply, or NULL after printing why
 * (and setting *rc to the exit code). */
static json_t *request_json_ex(const client_opts *o, const char *cmd, const char *method,
                               const char *path, const char *body, int timeout_s, int *rc,
                               cuzk_err *transport, int *connected, char *terr)
{
    httpc_reply r;
    char err[CUZK_ERRLEN] = "";
    cuzk_err e = httpc_request(&r, o->server, o->token, method, path,
                               body ? "application/json" : NULL, body, body ? strlen(body) : 0,
                               timeout_s, err);
    if (transport)
        *transport = e;
    if (connected && r.connected)
        *connected = 1;
    if (e) {
        if (!transport || e != CUZK_EIO)
            fprintf(stderr, "cuzk %s: %s\n", cmd, err);
        else if (terr)
            memcpy(terr, err, CUZK_ERRLEN);
        *rc = e == CUZK_ETIMEOUT ? EXIT_TIMEOUT : e == CUZK_EINVAL ? EXIT_USAGE : EXIT_SERVER;
        return NULL;
    }
    if (r.status < 200 || r.status >= 300) {
        print_http_error(cmd, &r);
        *rc = exit_from_http(r.status);
        httpc_reply_free(&r);
        return NULL;
    }
    json_error_t je;
    json_t *j = json_loadb(r.body, r.len, 0, &je);
    if (!j) {
        fprintf(stderr, "cuzk %s: daemon sent invalid JSON: %s\n", cmd, je.text);
        *rc = EXIT_SERVER;
    }
    httpc_reply_free(&r);
    return j;
}

static json_t *request_json(const client_opts *o, const char *cmd, const char *method,
                            const char *path, const char *body, int timeout_s, int *rc)
{
    return request_json_ex(o, cmd, method, path, body, timeout_s, rc, NULL, NULL, NULL);
}

/* ---------------------------------------------------------------- submit */

static char *b64_encode(const unsigned char *p, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *o = malloc((n + 2) / 3 * 4 + 1), *w = o;
    if (!o)
        return NULL;
    size_t i = 0;
    for (; i + 2 < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        *w++ = tab[v >> 18];
        *w++ = tab[(v >> 12) & 63];
        *w++ = tab[(v >> 6) & 63];
        *w++ = tab[v & 63];
    }
    if (i < n) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);
        *w++ = tab[v >> 18];
        *w++ = tab[(v >> 12) & 63];
        *w++ = i + 1 < n ? tab[(v >> 6) & 63] : '=';
        *w++ = '=';
    }
    *w = 0;
    return o;
}

static char *read_file_b64(const char *path, char *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        cuzk_errf(err, CUZK_EIO, "%s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    unsigned char *buf = NULL;
    char *out = NULL;
    if (fstat(fileno(f), &st) || !(buf = malloc((size_t)st.st_size + 1)) ||
        fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
        cuzk_errf(err, CUZK_EIO, "%s: cannot read", path);
    } else if (!(out = b64_encode(buf, (size_t)st.st_size))) {
        cuzk_errf(err, CUZK_ENOMEM, "%s: out of memory", path);
    }
    free(buf);
    fclose(f);
    return out;
}

static void submit_usage(void)
{
    fprintf(stderr,
            "usage: cuzk submit [--server ADDR] [--token T] --zkey FILE --witness FILE "
            "[--witness FILE ...]\n"
            "       cuzk submit [--server ADDR] [--token T] --circuit NAME --input FILE.json "
            "[--input FILE.json ...]\n"
            "                   [--kind porep|snap|window-post|winning-post|custom]\n"
            "                   [--priority low|normal|high|critical] [--idempotency-key K] "
            "[--upload]\n"
            "Each --witness, or each --input (circuit input JSON, for a circuit registered with\n"
            "cuzk serve --circuit; the daemon runs its witness generator), is one partition.\n"
            "Prints the job id.\n");
}

/* {"circuit": NAME, "inputs": [the JSON object of each file]}, or NULL after saying why */
static json_t *circuit_job(const char *circuit, json_t *files, int *rc)
{
    json_t *job = json_pack("{s:s, s:[]}", "circuit", circuit, "inputs");
    json_t *list = job ? json_object_get(job, "inputs") : NULL;
    size_t i;
    json_t *f;
    json_array_foreach(files, i, f)
    {
        /* read here and sent: the daemon keeps its own copy */
        const char *path = json_string_value(f);
        json_error_t je;
        json_t *in = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
        if (!in || !json_is_object(in)) {
            if (in)
                fprintf(stderr, "cuzk submit: %s: a circuit input must be a JSON object\n", path);
            else
                fprintf(stderr, "cuzk submit: %s: %s (line %d)\n", path, je.text, je.line);
            json_decref(in);
            json_decref(job);
            *rc = EXIT_INPUT;
            return NULL;
        }
        json_array_append_new(list, in);
    }
    return job;
}

/* adds the common fields to job (stolen), posts it and prints the id */
static int submit_send(const client_opts *o, json_t *job, const char *kind, const char *prio,
                       const char *idem)
{
    int rc = EXIT_OK_;
    if (kind)
        json_object_set_new(job, "kind", json_string(kind));
    if (prio)
        json_object_set_new(job, "priority", json_string(prio));
    if (idem)
        json_object_set_new(job, "idempotency_key", json_string(idem));
    char *body = json_dumps(job, JSON_COMPACT);
    json_decref(job);
    if (!body) {
        fprintf(stderr, "cuzk submit: out of memory\n");
        return EXIT_SERVER;
    }
    json_t *r = request_json(o, "submit", "POST", "/v1/jobs", body, 600, &rc);
    free(body);
    if (!r)
        return rc;
    json_t *id = json_object_get(r, "id");
    printf("%s\n", json_is_string(id) ? json_string_value(id) : "?");
    if (json_is_true(json_object_get(r, "existed")))
        fprintf(stderr, "cuzk submit: idempotency key matched the existing job %s\n",
                json_string_value(id));
    json_decref(r);
    return EXIT_OK_;
}

int cmd_submit(int argc, char **argv)
{
    client_opts o;
    client_defaults(&o);
    const char *zkey = NULL, *kind = NULL, *prio = NULL, *idem = NULL, *circuit = NULL;
    int upload = 0, rc = EXIT_OK_;
    json_t *wits = json_array(), *inputs = json_array();
    char err[CUZK_ERRLEN] = "";
    for (int i = 1; i < argc; i++) {
        int c = client_common_arg(&o, argc, argv, &i);
        if (c < 0)
            goto usage;
        if (c)
            continue;
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            submit_usage();
            json_decref(wits);
            json_decref(inputs);
            return 0;
        }
        if (!strcmp(a, "--upload")) {
            upload = 1;
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "cuzk submit: %s needs a value\n", a);
            goto usage;
        }
        const char *v = argv[++i];
        if (!strcmp(a, "--zkey"))
            zkey = v;
        else if (!strcmp(a, "--witness"))
            json_array_append_new(wits, json_string(v));
        else if (!strcmp(a, "--circuit"))
            circuit = v;
        else if (!strcmp(a, "--input"))
            json_array_append_new(inputs, json_string(v));
        else if (!strcmp(a, "--kind"))
            kind = v;
        else if (!strcmp(a, "--priority"))
            prio = v;
        else if (!strcmp(a, "--idempotency-key"))
            idem = v;
        else {
            fprintf(stderr, "cuzk submit: unknown option %s\n", a);
            goto usage;
        }
    }
    json_t *job = NULL;
    if (circuit || json_array_size(inputs)) {
        if (!circuit || !json_array_size(inputs) || zkey || json_array_size(wits) || upload) {
            fprintf(stderr, "cuzk submit: --circuit takes at least one --input, and no --zkey, "
                            "--witness or --upload\n");
            goto usage;
        }
        job = circuit_job(circuit, inputs, &rc);
        json_decref(inputs);
        json_decref(wits);
        if (!job)
            return rc;
        return submit_send(&o, job, kind, prio, idem);
    }
    if (!zkey || !json_array_size(wits)) {
        fprintf(stderr, "cuzk submit: --zkey and at least one --witness are required\n");
        goto usage;
    }
    char abs[PATH_MAX];
    if (!realpath(zkey, abs)) {
        fprintf(stderr, "cuzk submit: %s: %s\n", zkey, strerror(errno));
        json_decref(wits);
        json_decref(inputs);
        return EXIT_INPUT;
    }
    job = json_pack("{s:s}", "zkey", abs);
    json_t *list = json_array();
    size_t i;
    json_t *w;
    json_array_foreach(wits, i, w)
    {
        const char *p = json_string_value(w);
        if (upload) {
            char *b64 = read_file_b64(p, err);
            if (!b64) {
                fprintf(stderr, "cuzk submit: %s\n", err);
                rc = EXIT_INPUT;
                break;
            }
            json_array_append_new(list, json_string(b64));
            free(b64);
        } else {
            if (!realpath(p, abs)) {
                fprintf(stderr, "cuzk submit: %s: %s\n", p, strerror(errno));
                rc = EXIT_INPUT;
                break;
            }
            json_array_append_new(list, json_string(abs));
        }
    }
    json_object_set_new(job, upload ? "witness_data" : "witnesses", list);
    json_decref(wits);
    json_decref(inputs);
    if (rc) {
        json_decref(job);
        return rc;
    }
    return submit_send(&o, job, kind, prio, idem);
usage:
    json_decref(wits);
    json_decref(inputs);
    submit_usage();
    return EXIT_USAGE;
}

/* ---------------------------------------------------------------- await */

static int valid_id(const char *id)
{
    if (!*id || strlen(id) >= 64)
        return 0;
    for (const char *p = id; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '-' || *p == '_' || *p == '.'))
            return 0;
    return 1;
}

/* 0: written; -1: failed (*rc set); 1: the daemon no longer calls the job done (409: a stored
   proof was found damaged and its partition is being proved again) */
static int fetch_to_file(const client_opts *o, const char *path, const char *file, int *rc)
{
    httpc_reply r;
    char err[CUZK_ERRLEN] = "";
    cuzk_err e;
    int64_t lost_since = 0;
    /* the job is done, so the daemon has the proof in its journal: when it goes away now (a
       restart), retry as the await itself does */
    while ((e = httpc_request(&r, o->server, o->token, "GET", path, NULL, NULL, 0, 120, err)) == CUZK_EIO) {
        if ((*rc = await_lost(o->server, err, &lost_since, 0)))
            return -1;
    }
    if (e) {
        fprintf(stderr, "cuzk await: %s\n", err);
        *rc = EXIT_SERVER;
        return -1;
    }
    if (r.status != 200) {
        print_http_error("await", &r);
        *rc = exit_from_http(r.status);
        httpc_reply_free(&r);
        return r.status == 409 ? 1 : -1;
    }
    FILE *f = fopen(file, "w");
    int ok = f && fwrite(r.body, 1, r.len, f) == r.len;
    if (f && fclose(f))
        ok = 0;
    httpc_reply_free(&r);
    if (!ok) {
        fprintf(stderr, "cuzk await: cannot write %s: %s\n", file, strerror(errno));
        *rc = EXIT_INPUT;
        return -1;
    }
    return 0;
}

int cmd_await(int argc, char **argv)
{
    client_opts o;
    client_defaults(&o);
    const char *id = NULL, *out = NULL;
    double timeout = 0;
    for (int i = 1; i < argc; i++) {
        int c = client_common_arg(&o, argc, argv, &i);
        if (c < 0)
            return EXIT_USAGE;
        if (c)
            continue;
        const char *a = argv[i];
        if (!strcmp(a, "--out") && i + 1 < argc) {
            out = argv[++i];
        } else if (!strcmp(a, "--timeout") && i + 1 < argc) {
            char *end;
            timeout = strtod(argv[++i], &end);
            if (*end || timeout < 0) {
                fprintf(stderr, "cuzk await: --timeout '%s' is not a number of seconds\n", argv[i]);
                return EXIT_USAGE;
            }
        } else if (a[0] != '-' && !id) {
            id = a;
        } else {
            fprintf(stderr, "usage: cuzk await [--server ADDR] [--timeout SECONDS] ID [--out DIR]\n"
                            "Waits for job ID; with --out writes proof-<i>.json and public-<i>.json "
                            "per partition.\n");
            return strcmp(a, "--help") ? EXIT_USAGE : 0;
        }
    }
    if (!id || !valid_id(id)) {
        fprintf(stderr, "cuzk await: %s\n", id ? "job id has unexpected characters" : "missing job ID");
        return EXIT_USAGE;
    }
    int64_t deadline = timeout > 0 ? now_ms() + (int64_t)(timeout * 1000) : 0;
    int rc = EXIT_OK_;
    json_t *info = NULL;
    int contacted = 0;       /* a connection to the daemon was made at least once */
    int64_t lost_since = 0;  /* monotonic ms when it stopped answering, 0 while it answers */
    int rewaits = 0;         /* waits again after a proof the daemon found damaged */
wait:
    for (;;) {
        double slice = 60;
        if (deadline) {
            double left = (double)(deadline - now_ms()) / 1000;
            if (left < slice)
                slice = left > 0 ? left : 0;
        }
        char path[160];
        snprintf(path, sizeof path, "/v1/jobs/%s/await?timeout=%.3f", id, slice);
        cuzk_err te = CUZK_OK;
        char terr[CUZK_ERRLEN] = "";
        info = request_json_ex(&o, "await", "GET", path, NULL, (int)slice + 60, &rc, &te,
                               &contacted, terr);
        if (!info && te == CUZK_EIO && !contacted) {
            fprintf(stderr, "cuzk await: %s\n", terr);
            return EXIT_SERVER;
        }
        if (!info && te == CUZK_EIO) {
            /* the daemon went away after accepting the job */
            if ((rc = await_lost(o.server, terr, &lost_since, deadline)))
                return rc;
            continue;
        }
        if (!info)
            return rc;
        contacted = 1;
        lost_since = 0;
        if (json_is_true(json_object_get(info, "terminal")))
            break;
        if (deadline && now_ms() >= deadline) {
            fprintf(stderr, "cuzk await: job %s still %s after %.1f s\n", id,
                    json_string_value(json_object_get(info, "state")), timeout);
            json_decref(info);
            return EXIT_TIMEOUT;
        }
        json_decref(info);
    }
    const char *state = json_string_value(json_object_get(info, "state"));
    const char *error = json_string_value(json_object_get(info, "error"));
    if (!state || strcmp(state, "done")) {
        fprintf(stderr, "cuzk await: job %s %s%s%s\n", id, state ? state : "?",
                error && *error ? ": " : "", error && *error ? error : "");
        rc = state && !strcmp(state, "failed") ? EXIT_INVALID : EXIT_SERVER;
        json_decref(info);
        return rc;
    }
    int n = (int)json_integer_value(json_object_get(info, "n_partitions"));
    json_decref(info);
    if (out) {
        if (mkdir(out, 0755) && errno != EEXIST) {
            fprintf(stderr, "cuzk await: cannot create %s: %s\n", out, strerror(errno));
            return EXIT_INPUT;
        }
        for (int i = 0; i < n; i++) {
            char path[160], file[PATH_MAX];
            int f;
            snprintf(path, sizeof path, "/v1/jobs/%s/proofs/%d/proof", id, i);
            snprintf(file, sizeof file, "%s/proof-%d.json", out, i);
            if (!(f = fetch_to_file(&o, path, file, &rc))) {
                snprintf(path, sizeof path, "/v1/jobs/%s/proofs/%d/public", id, i);
                snprintf(file, sizeof file, "%s/public-%d.json", out, i);
                f = fetch_to_file(&o, path, file, &rc);
            }
            if (f > 0 && ++rewaits <= AWAIT_REWAITS_MAX) {
                fprintf(stderr, "cuzk await: waiting for job %s again\n", id);
                goto wait;
            }
            if (f)
                return rc;
        }
        fprintf(stderr, "cuzk await: job %s done, %d proof%s in %s\n", id, n, n == 1 ? "" : "s",
                out);
    } else {
        fprintf(stderr, "cuzk await: job %s done (%d partition%s)\n", id, n, n == 1 ? "" : "s");
    }
    return EXIT_OK_;
}

/* ---------------------------------------------------------------- status, cancel */

int cmd_status(int argc, char **argv)
{
    client_opts o;
    client_defaults(&o);
    const char *id = NULL;
    int as_json = 0;
    for (int i = 1; i < argc; i++) {
        int c = client_common_arg(&o, argc, argv, &i);
        if (c < 0)
            return EXIT_USAGE;
        if (c)
            continue;
        if (!strcmp(argv[i], "--json"))
            as_json = 1;
        else if (argv[i][0] != '-' && !id)
            id = argv[i];
        else {
            fprintf(stderr, "usage: cuzk status [--server ADDR] [--json] [ID]\n");
            return strcmp(argv[i], "--help") ? EXIT_USAGE : 0;
        }
    }
    if (id && !valid_id(id)) {
        fprintf(stderr, "cuzk status: job id has unexpected characters\n");
        return EXIT_USAGE;
    }
    char path[160];
    if (id)
        snprintf(path, sizeof path, "/v1/jobs/%s", id);
    else
        snprintf(path, sizeof path, "/status");
    int rc = EXIT_OK_;
    json_t *j = request_json(&o, "status", "GET", path, NULL, 60, &rc);
    if (!j)
        return rc;
    if (as_json) {
        json_dumpf(j, stdout, JSON_INDENT(2));
        fputc('\n', stdout);
    } else if (id) {
        view_job(stdout, j);
    } else {
        view_status(stdout, j, 100);
    }
    json_decref(j);
    return EXIT_OK_;
}

int cmd_cancel(int argc, char **argv)
{
    client_opts o;
    client_defaults(&o);
    const char *id = NULL;
    for (int i = 1; i < argc; i++) {
        int c = client_common_arg(&o, argc, argv, &i);
        if (c < 0)
            return EXIT_USAGE;
        if (c)
            continue;
        if (argv[i][0] != '-' && !id)
            id = argv[i];
        else {
            fprintf(stderr, "usage: cuzk cancel [--server ADDR] ID\n");
            return strcmp(argv[i], "--help") ? EXIT_USAGE : 0;
        }
    }
    if (!id || !valid_id(id)) {
        fprintf(stderr, "cuzk cancel: %s\n", id ? "job id has unexpected characters" : "missing job ID");
        return EXIT_USAGE;
    }
    char path[160];
    snprintf(path, sizeof path, "/v1/jobs/%s/cancel", id);
    int rc = EXIT_OK_;
    json_t *j = request_json(&o, "cancel", "POST", path, NULL, 60, &rc);
    if (!j)
        return rc;
    printf("%s %s\n", id, json_is_string(json_object_get(j, "state"))
                              ? json_string_value(json_object_get(j, "state"))
                              : "canceled");
    json_decref(j);
    return EXIT_OK_;
}

/* ---------------------------------------------------------------- top */

static volatile sig_atomic_t top_stop;
static void on_top_signal(int sig)
{
    (void)sig;
    top_stop = 1;
}

int cmd_top(int argc, char **argv)
{
    client_opts o;
    client_defaults(&o);
    double interval = 0.5;
    long count = 0; /* frames to draw; 0 = until interrupted */
    for (int i = 1; i < argc; i++) {
        int c = client_common_arg(&o, argc, argv, &i);
        if (c < 0)
            return EXIT_USAGE;
        if (c)
            continue;
        if (!strcmp(argv[i], "--interval") && i + 1 < argc)
            interval = atof(argv[++i]);
        else if (!strcmp(argv[i], "--count") && i + 1 < argc)
            count = atol(argv[++i]);
        else if (!strcmp(argv[i], "--once"))
            count = 1;
        else {
            fprintf(stderr, "usage: cuzk top [--server ADDR] [--interval SECONDS] [--count N | "
                            "--once]\n");
            return strcmp(argv[i], "--help") ? EXIT_USAGE : 0;
        }
    }
    if (interval < 0.1)
        interval = 0.1;
    signal(SIGINT, on_top_signal);
    signal(SIGTERM, on_top_signal);
    int tty = isatty(STDOUT_FILENO);
    int rc = EXIT_OK_;
    for (long frame = 0; !top_stop && (count == 0 || frame < count); frame++) {
        json_t *j = request_json(&o, "top", "GET", "/status", NULL, 30, &rc);
        if (!j)
            return rc;
        int width = 100;
        struct winsize ws;
        if (tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col)
            width = ws.ws_col;
        if (tty)
            fputs("\033[H\033[2J", stdout); /* home + clear */
        view_status(stdout, j, width);
        if (tty)
            fputs("\n(ctrl-c to quit)\n", stdout);
        fflush(stdout);
        json_decref(j);
        if (count && frame + 1 >= count)
            break;
        struct timespec ts = {(time_t)interval, (long)((interval - (double)(time_t)interval) * 1e9)};
        nanosleep(&ts, NULL);
    }
    return EXIT_OK_;
}
