/* api.c - the route table of the daemon's HTTP API and its dispatcher (see api.h).
 *
 * A route is a method and a path pattern of '/'-separated segments where '*' captures
 * one segment ({id}, {i}). An unknown path is 404; a known path with another method is
 * 405 naming the allowed ones. Every reply is counted by status class for /metrics.
 */
#include "server/api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/log.h"

typedef void (*api_fn)(api_ctx *, const http_req *, http_resp *, char **);

typedef struct route {
    const char *method;
    const char *pattern;
    api_fn fn;
} route;

static const route routes[] = {
    {"GET", "/", api_dashboard},
    {"GET", "/index.html", api_dashboard},
    {"GET", "/status", api_status},
    {"GET", "/metrics", api_metrics},
    {"GET", "/v1/status", api_status},
    {"GET", "/v1/timeline", api_timeline},
    {"GET", "/v1/trace", api_trace},
    {"POST", "/v1/jobs", api_jobs_submit},
    {"GET", "/v1/jobs", api_jobs_list},
    {"GET", "/v1/jobs/*", api_jobs_get},
    {"DELETE", "/v1/jobs/*", api_jobs_cancel},
    {"GET", "/v1/jobs/*/await", api_jobs_await},
    {"POST", "/v1/jobs/*/cancel", api_jobs_cancel},
    {"GET", "/v1/jobs/*/proofs/*", api_jobs_proof},
    {"GET", "/v1/jobs/*/proofs/*/proof", api_jobs_proof_file},
    {"GET", "/v1/jobs/*/proofs/*/public", api_jobs_public_file},
    {"GET", "/v1/circuits", api_circuits_list},
    {"GET", "/v1/keys", api_keys_list},
    {"POST", "/v1/keys/preload", api_keys_preload},
    {"POST", "/v1/keys/evict", api_keys_evict},
};
#define N_ROUTES (sizeof routes / sizeof routes[0])
#define MAX_PARAMS 4

/* Matches path against pattern; on success the captured segments are copied into
 * buf and pointed to by params. */
static int route_match(const char *pattern, const char *path, char *buf, size_t cap, char **params)
{
    size_t used = 0;
    int np = 0;
    const char *p = pattern, *s = path;
    while (*p && *s) {
        if (*p == '*') {
            size_t n = strcspn(s, "/");
            if (n == 0 || np >= MAX_PARAMS || used + n + 1 > cap)
                return 0;
            memcpy(buf + used, s, n);
            buf[used + n] = 0;
            params[np++] = buf + used;
            used += n + 1;
            p++;
            s += n;
        } else if (*p == *s) {
            p++;
            s++;
        } else {
            return 0;
        }
    }
    /* tolerate one trailing slash on the request ("/v1/jobs/") */
    if (!*p && *s == '/' && s[1] == 0)
        return 1;
    return !*p && !*s;
}

int64_t api_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int api_status_from_err(cuzk_err e)
{
    switch (e) {
    case CUZK_OK: return 200;
    case CUZK_EINVAL:
    case CUZK_EIO:
    case CUZK_EFORMAT:
    case CUZK_ECURVE: return 400;
    case CUZK_ENOTFOUND: return 404;
    case CUZK_ECANCELED: return 409;
    case CUZK_EBUDGET: return 422;
    case CUZK_ETIMEOUT: return 504;
    case CUZK_ENOMEM:
    case CUZK_ESTORE:
    case CUZK_ENODEV:
    case CUZK_EDEVICE: return 503;
    case CUZK_EVERIFY:
    case CUZK_EINTERNAL: return 500;
    case CUZK_ENOSPC: return 507; /* Insufficient Storage: the data dir lacks headroom */
    }
    return 500;
}

void api_reply_json(http_resp *resp, int status, json_t *j)
{
    if (!j) {
        http_resp_error(resp, 500, "out of memory building the reply");
        return;
    }
    char *s = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    if (!s) {
        http_resp_error(resp, 500, "out of memory serializing the reply");
        return;
    }
    size_t n = strlen(s);
    /* a trailing newline makes curl output readable; jansson's buffer has room for it only
       after a realloc */
    char *b = realloc(s, n + 2);
    if (b) {
        b[n] = '\n';
        b[n + 1] = 0;
        n++;
    } else {
        b = s;
    }
    http_resp_take(resp, status, "application/json", b, n);
}

void api_handle(void *ctx, const http_req *req, http_resp *resp)
{
    api_ctx *a = ctx;
    char buf[512], *params[MAX_PARAMS] = {0};
    char allowed[64] = "";
    int path_known = 0;
    const route *hit = NULL;
    for (size_t i = 0; i < N_ROUTES; i++) {
        if (!route_match(routes[i].pattern, req->path, buf, sizeof buf, params))
            continue;
        path_known = 1;
        int same = !strcmp(routes[i].method, req->method) ||
                   (!strcmp(req->method, "HEAD") && !strcmp(routes[i].method, "GET"));
        if (same) {
            hit = &routes[i];
            break;
        }
        if (!strstr(allowed, routes[i].method)) {
            size_t n = strlen(allowed);
            snprintf(allowed + n, sizeof allowed - n, "%s%s", n ? ", " : "", routes[i].method);
        }
    }
    if (hit) {
        hit->fn(a, req, resp, params); /* buf holds hit's captures: the loop stopped there */
    } else if (path_known) {
        http_resp_error(resp, 405, "%s is not allowed on %s (allowed: %s)", req->method, req->path,
                        allowed);
    } else {
        http_resp_error(resp, 404, "no route %s %s (see docs/DAEMON.md for the API)", req->method,
                        req->path);
    }
    int cls = resp->status / 100;
    atomic_fetch_add(&a->requests[cls >= 1 && cls <= 5 ? cls : 0], 1);
    if (resp->status >= 400)
        LOG(LOG_DEBUG, "http %s %s -> %d", req->method, req->path, resp->status);
}
