/* api_observe.c - the observability routes: dashboard page, /status, /metrics,
 * /v1/timeline (GPU utilisation samples for the dashboard graph) and /v1/trace
 * (Chrome trace-event JSON). The engine produces the numbers; this file adds the
 * server's own (request counters, HTTP connections, process RSS) and the HTTP framing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/api.h"

/* VmRSS / VmHWM / Threads from /proc/self/status (bytes, bytes, count); 0 when unknown */
static void proc_mem(uint64_t *rss, uint64_t *hwm, int *threads)
{
    *rss = *hwm = 0;
    *threads = 0;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return;
    char line[256];
    unsigned long long kb;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "VmRSS: %llu kB", &kb) == 1)
            *rss = kb * 1024;
        else if (sscanf(line, "VmHWM: %llu kB", &kb) == 1)
            *hwm = kb * 1024;
        else
            sscanf(line, "Threads: %d", threads);
    }
    fclose(f);
}

void api_dashboard(api_ctx *a, const http_req *req, http_resp *resp, char **params)
{
    (void)a;
    (void)req;
    (void)params;
    char *b = malloc(dashboard_html_len + 1);
    if (!b) {
        http_resp_error(resp, 503, "out of memory");
        return;
    }
    memcpy(b, dashboard_html, dashboard_html_len + 1);
    http_resp_take(resp, 200, "text/html; charset=utf-8", b, dashboard_html_len);
}

void api_status(api_ctx *a, const http_req *req, http_resp *resp, char **params)
{
    (void)params;
    json_t *st = engine_status_json(a->eng);
    if (!st) {
        http_resp_error(resp, 503, "engine status unavailable");
        return;
    }
    uint64_t rss, hwm;
    int threads;
    proc_mem(&rss, &hwm, &threads);
    int64_t now = api_now_ms();
    json_t *server = json_pack(
        "{s:s, s:s, s:I, s:I, s:i, s:I, s:{s:I, s:I, s:I, s:I}}", "listen", a->listen, "backend",
        a->backend, "started_ms", (json_int_t)a->started_ms, "uptime_s",
        (json_int_t)((now - a->started_ms) / 1000), "pid", (int)getpid(), "max_body",
        (json_int_t)a->max_body, "requests", "2xx", (json_int_t)atomic_load(&a->requests[2]), "3xx",
        (json_int_t)atomic_load(&a->requests[3]), "4xx", (json_int_t)atomic_load(&a->requests[4]),
        "5xx", (json_int_t)atomic_load(&a->requests[5]));
    if (server && req->server) {
        http_stats hs;
        http_server_stats(&hs, req->server);
        json_object_set_new(server, "http",
                            json_pack("{s:i, s:i, s:i, s:i, s:I, s:I}", "max_conns",
                                      (int)hs.max_conns, "conn_timeout_s", (int)hs.conn_timeout_s,
                                      "open", (int)hs.open, "peak", (int)hs.peak, "accepted",
                                      (json_int_t)hs.accepted, "refused", (json_int_t)hs.refused));
    }
    json_object_set_new(st, "server", server);
    json_object_set_new(st, "process",
                        json_pack("{s:I, s:I, s:i}", "rss_bytes", (json_int_t)rss, "peak_rss_bytes",
                                  (json_int_t)hwm, "threads", threads));
    api_reply_json(resp, 200, st);
}

void api_metrics(api_ctx *a, const http_req *req, http_resp *resp, char **params)
{
    (void)req;
    (void)params;
    char *eng = engine_metrics_text(a->eng);
    uint64_t rss, hwm;
    int threads;
    proc_mem(&rss, &hwm, &threads);
    size_t el = eng ? strlen(eng) : 0, cap = el + 4096;
    char *b = malloc(cap);
    if (!b) {
        free(eng);
        http_resp_error(resp, 503, "out of memory");
        return;
    }
    if (el)
        memcpy(b, eng, el);
    free(eng);
    size_t n = el;
    n += (size_t)snprintf(b + n, cap - n,
                          "# HELP cuzk_http_requests_total HTTP replies sent, by status class.\n"
                          "# TYPE cuzk_http_requests_total counter\n");
    static const char *cls[] = {"other", "1xx", "2xx", "3xx", "4xx", "5xx"};
    for (int i = 0; i < 6; i++)
        n += (size_t)snprintf(b + n, cap - n, "cuzk_http_requests_total{class=\"%s\"} %llu\n",
                              cls[i], (unsigned long long)atomic_load(&a->requests[i]));
    n += (size_t)snprintf(
        b + n, cap - n,
        "# HELP cuzk_process_resident_bytes Resident set size of the daemon.\n"
        "# TYPE cuzk_process_resident_bytes gauge\ncuzk_process_resident_bytes %llu\n"
        "# HELP cuzk_process_peak_resident_bytes Peak resident set size (VmHWM).\n"
        "# TYPE cuzk_process_peak_resident_bytes gauge\ncuzk_process_peak_resident_bytes %llu\n"
        "# HELP cuzk_uptime_seconds Seconds since the daemon started.\n"
        "# TYPE cuzk_uptime_seconds gauge\ncuzk_uptime_seconds %lld\n",
        (unsigned long long)rss, (unsigned long long)hwm,
        (long long)((api_now_ms() - a->started_ms) / 1000));
    if (req->server) {
        http_stats hs;
        http_server_stats(&hs, req->server);
        n += (size_t)snprintf(
            b + n, cap - n,
            "# HELP cuzk_http_connections HTTP connections open now (TCP and Unix socket).\n"
            "# TYPE cuzk_http_connections gauge\ncuzk_http_connections %u\n"
            "# HELP cuzk_http_connections_max The connection limit (--max-conns).\n"
            "# TYPE cuzk_http_connections_max gauge\ncuzk_http_connections_max %u\n"
            "# HELP cuzk_http_connections_accepted_total HTTP connections taken.\n"
            "# TYPE cuzk_http_connections_accepted_total counter\n"
            "cuzk_http_connections_accepted_total %llu\n"
            "# HELP cuzk_http_connections_refused_total HTTP connections closed at once because "
            "the limit was reached.\n"
            "# TYPE cuzk_http_connections_refused_total counter\n"
            "cuzk_http_connections_refused_total %llu\n",
            hs.open, hs.max_conns, hs.accepted, hs.refused);
    }
    http_resp_take(resp, 200, "text/plain; version=0.0.4; charset=utf-8", b, n);
}

/* integer query argument in [lo, hi], default def; -1 after replying 400 */
static int query_i64(const http_req *req, http_resp *resp, const char *name, int64_t def,
                     int64_t lo, int64_t hi, int64_t *out)
{
    const char *s = http_req_query(req, name);
    *out = def;
    if (!s)
        return 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || v < lo || v > hi) {
        http_resp_error(resp, 400, "%s '%s' must be a whole number in %lld..%lld", name, s,
                        (long long)lo, (long long)hi);
        return -1;
    }
    *out = v;
    return 0;
}

void api_timeline(api_ctx *a, const http_req *req, http_resp *resp, char **params)
{
    (void)params;
    int64_t window, step;
    if (query_i64(req, resp, "window_ms", 60000, 1000, 3600000, &window) ||
        query_i64(req, resp, "step_ms", 200, 50, 60000, &step))
        return;
    json_t *t = engine_gpu_timeline(a->eng, window, step);
    api_reply_json(resp, 200,
                   json_pack("{s:I, s:I, s:o}", "now_ms", (json_int_t)api_now_ms(), "step_ms",
                             (json_int_t)step, "devices", t ? t : json_array()));
}

void api_trace(api_ctx *a, const http_req *req, http_resp *resp, char **params)
{
    (void)params;
    int64_t since;
    if (query_i64(req, resp, "since_ms", 0, 0, INT64_MAX / 2, &since))
        return;
    char *t = engine_trace_json(a->eng, since);
    if (!t) {
        http_resp_error(resp, 503, "trace unavailable");
        return;
    }
    http_resp_take(resp, 200, "application/json", t, strlen(t));
}
