/* http.h - the daemon's HTTP listener: libmicrohttpd on loopback TCP, any TCP address
 * (with a bearer token), or a Unix socket; whole request bodies up to a size limit;
 * one handler callback per request.
 *
 * DESIGN. The listener knows nothing about jobs. It accepts a connection, collects
 * the request body (refusing with 413 past max_body bytes, before any handler runs),
 * checks the token when one is configured, and calls the handler with the method,
 * path and body. The handler fills an http_resp; the listener sends it. MHD runs one
 * thread per connection, so a handler may block (long-poll await) without stalling
 * other clients; the connection limit bounds those threads and their sockets: past
 * max_conns open connections a new one is closed at once (the client reads EOF with no
 * reply), counted and logged, and a connection that sends nothing for conn_timeout_s
 * seconds is closed, so idle clients cannot hold the slots for ever.
 */
#ifndef CUZK_SERVER_HTTP_H
#define CUZK_SERVER_HTTP_H

#include <stddef.h>

#include "util/err.h"

typedef struct http_server http_server;

#define HTTP_DEFAULT_MAX_CONNS 256u      /* http_config.max_conns when 0 */
#define HTTP_DEFAULT_CONN_TIMEOUT_S 30u  /* http_config.conn_timeout_s when 0 */

/* One request as the handler sees it. Valid only during the handler call. */
typedef struct http_req {
    const char *method;  /* "GET", "POST", "DELETE", ... */
    const char *path;    /* URL path without the query string, e.g. "/v1/jobs/j-12" */
    const char *body;    /* request body (NUL-terminated copy), "" when none */
    size_t body_len;     /* bytes in body (excluding the NUL) */
    void *conn;          /* libmicrohttpd connection (for http_req_query/http_req_header) */
    const http_server *server; /* the listener that took it (for http_server_stats) */
} http_req;

/* The handler's answer. body is malloc'd (the listener frees it) or NULL. */
typedef struct http_resp {
    int status;              /* HTTP status code, 200 unless set */
    const char *type;        /* Content-Type, static string; "application/json" unless set */
    char *body;              /* malloc'd, may be NULL */
    size_t len;              /* bytes in body */
} http_resp;

typedef void (*http_handler_fn)(void *ctx, const http_req *req, http_resp *resp);

typedef struct http_config {
    const char *listen;      /* "HOST:PORT", "[V6]:PORT" or "unix:PATH"; port 0 picks a free one */
    const char *token;       /* required as "Authorization: Bearer T" when non-NULL/non-empty */
    size_t max_body;         /* bytes; larger bodies get 413 */
    unsigned max_conns;      /* simultaneous connections (each one thread); 0 = 256 */
    unsigned conn_timeout_s; /* seconds a connection may send nothing before it is closed; 0 = 30 */
    http_handler_fn handler;
    void *ctx;
} http_config;

/* Parses a listen address. Sets *is_unix, and for TCP *is_loopback (127.0.0.0/8, ::1,
 * "localhost"). Returns CUZK_EINVAL with a message for a malformed address. */
cuzk_err http_addr_parse(const char *addr, int *is_unix, int *is_loopback, char *err);

/* Binds, listens and starts serving. A non-loopback TCP address without a token is
 * refused (CUZK_EINVAL). The bound address (with the real port) is http_server_addr(). */
cuzk_err http_server_start(http_server **out, const http_config *cfg, char *err);
const char *http_server_addr(const http_server *s);

/* The listener's connection counters (for /status and /metrics). */
typedef struct http_stats {
    unsigned max_conns;          /* the limit: connections open at once */
    unsigned conn_timeout_s;     /* idle seconds before a connection is closed */
    unsigned open;               /* connections open now */
    unsigned peak;               /* most connections open at once since start */
    unsigned long long accepted; /* connections taken since start */
    unsigned long long refused;  /* connections closed at once because max_conns were open */
} http_stats;
void http_server_stats(http_stats *out, const http_server *s);
/* Stops accepting, waits for handlers to return, closes the socket (unlinks a Unix path). */
void http_server_stop(http_server *s);

/* Query-string argument or request header, NULL when absent. */
const char *http_req_query(const http_req *req, const char *name);
const char *http_req_header(const http_req *req, const char *name);

/* Response helpers: each replaces resp->body. */
void http_resp_text(http_resp *resp, int status, const char *type, const char *text);
void http_resp_take(http_resp *resp, int status, const char *type, char *body, size_t len);
/* {"error": "<msg>"} with the given status */
void http_resp_error(http_resp *resp, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
