/* load_http.h - the plumbing of cuzk-load (bench/load.c): a minimal HTTP/1.1 client that
 * keeps its connection (Content-Length framing, as the daemon answers), connecting over TCP
 * ("HOST:PORT", "[V6]:PORT") or a Unix socket ("unix:PATH"); and a process's open descriptors
 * and resident memory read from /proc. No retries anywhere: a closed connection is an error the
 * caller counts.
 */
#ifndef CUZK_BENCH_LOAD_HTTP_H
#define CUZK_BENCH_LOAD_HTTP_H

#include <stddef.h>

/* monotonic seconds */
double now_s(void);
void sleep_ms(int ms);

/* open descriptors of pid (/proc/PID/fd), -1 when unreadable */
int proc_fds(int pid);
/* VmRSS of pid in KiB (/proc/PID/status), -1 when unreadable */
long proc_rss_kb(int pid);

/* a connected socket to server ("HOST:PORT", "[V6]:PORT" or "unix:PATH"), -1 with errno set */
int server_connect(const char *server);
/* sends all n bytes (no SIGPIPE); 0 or -1 with errno set */
int send_all(int fd, const char *p, size_t n);

/* one client connection, kept alive across requests */
typedef struct hconn {
    const char *server;  /* where to connect, as for server_connect */
    const char *token;   /* bearer token, or NULL */
    int fd;              /* -1 = not connected (the next request connects) */
    int keep;            /* 1: keep-alive; 0: "Connection: close" on every request */
    char *buf;           /* reply buffer, malloc'd; the caller frees it */
    size_t cap;          /* bytes allocated in buf */
} hconn;

/* One request (body: JSON text or NULL). Returns the HTTP status and points *rbody at the
 * reply body (NUL-terminated, in c->buf, valid until the next request), or 0 with err filled:
 * the daemon closed the connection without a whole reply, or could not be reached. Either
 * way a connection the daemon closed is closed here too. */
int hc_request(hconn *c, const char *method, const char *path, const char *body, char **rbody,
               char *err, size_t errcap);
void hc_close(hconn *c);

#endif
