/* http.c - libmicrohttpd listener for the daemon (see http.h).
 *
 * We create the listening socket ourselves (TCP or Unix) and hand it to MHD with
 * MHD_OPTION_LISTEN_SOCKET, so both kinds share one code path and port 0 works.
 * Request bodies are collected per connection in a growing buffer; past max_body the
 * rest is read and dropped and the request is answered 413 without calling the handler.
 *
 * Connection limit. MHD accepts on one thread, and for each connection calls our accept
 * policy (on_accept) and then, still on that thread, the STARTED notification (on_conn),
 * so the count of open connections that on_accept reads is exact: a connection past
 * max_conns is refused there (MHD closes the accepted socket at once, the client reads
 * EOF without a reply) and counted. MHD's own limit is set one higher as a backstop only.
 * The limit covers TCP and Unix sockets alike (one listener). A connection idle for
 * conn_timeout_s (nothing received, half a header, or between keep-alive requests) is
 * closed by MHD's per-connection thread; a handler that blocks (long-poll await) is not
 * idle time: its reply is sent when it returns (http_test.c checks this).
 */
#include "server/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "util/log.h"

struct http_server {
    struct MHD_Daemon *mhd;
    int fd;                 /* listening socket, owned (MHD does not close it) */
    int is_unix;
    char unix_path[108];    /* unlinked at stop */
    char addr[160];         /* bound address as clients should name it */
    char *token;            /* NULL: no token required */
    size_t max_body;
    unsigned max_conns;     /* connections open at once, at most (>= 1) */
    unsigned conn_timeout;  /* seconds a connection may stay idle (>= 1) */
    http_handler_fn handler;
    void *ctx;
    /* connection counters: open/peak/accepted change only on MHD's accept thread except
       open's decrements (connection threads); refused and the warning clock are the
       accept thread's alone; all are read by http_server_stats from any thread */
    atomic_uint open;               /* connections open now */
    atomic_uint peak;               /* most open at once since start */
    atomic_ullong accepted;         /* connections taken since start */
    atomic_ullong refused;          /* connections closed at once: max_conns were open */
    unsigned long long refused_warned; /* refused count at the last warning */
    int64_t warned_ms;              /* monotonic ms of the last warning, 0 = never */
};

/* per-connection request state (MHD's con_cls) */
typedef struct conn_state {
    char *body;         /* collected body, NUL-terminated */
    size_t len, cap;    /* bytes collected / allocated */
    size_t seen;        /* bytes received in total (also past the limit) */
    int too_big;        /* set once seen > max_body */
    int oom;            /* allocation failed while collecting */
} conn_state;

/* ---------------------------------------------------------------- addresses */

/* Splits "HOST:PORT" / "[V6]:PORT" into host and port strings. */
static cuzk_err split_host_port(const char *addr, char *host, size_t hcap, char *port, size_t pcap,
                                char *err)
{
    const char *colon;
    if (addr[0] == '[') {
        const char *end = strchr(addr, ']');
        if (!end || end[1] != ':')
            return cuzk_errf(err, CUZK_EINVAL, "listen address '%s': expected [IPV6]:PORT", addr);
        if ((size_t)(end - addr - 1) >= hcap)
            return cuzk_errf(err, CUZK_EINVAL, "listen address '%s': host too long", addr);
        memcpy(host, addr + 1, (size_t)(end - addr - 1));
        host[end - addr - 1] = 0;
        colon = end + 1;
    } else {
        colon = strrchr(addr, ':');
        if (!colon || colon == addr)
            return cuzk_errf(err, CUZK_EINVAL,
                             "listen address '%s': expected HOST:PORT or unix:PATH", addr);
        if ((size_t)(colon - addr) >= hcap)
            return cuzk_errf(err, CUZK_EINVAL, "listen address '%s': host too long", addr);
        memcpy(host, addr, (size_t)(colon - addr));
        host[colon - addr] = 0;
        if (strchr(host, ':'))
            return cuzk_errf(err, CUZK_EINVAL,
                             "listen address '%s': write IPv6 hosts in brackets, [::1]:PORT", addr);
    }
    const char *p = colon + 1;
    if (!*p || strlen(p) >= pcap)
        return cuzk_errf(err, CUZK_EINVAL, "listen address '%s': missing port", addr);
    for (const char *q = p; *q; q++)
        if (*q < '0' || *q > '9')
            return cuzk_errf(err, CUZK_EINVAL, "listen address '%s': port '%s' is not a number",
                             addr, p);
    if (atol(p) > 65535)
        return cuzk_errf(err, CUZK_EINVAL, "listen address '%s': port %s is out of range", addr, p);
    strcpy(port, p);
    return CUZK_OK;
}

static int host_is_loopback(const char *host)
{
    if (!strcmp(host, "localhost") || !strcmp(host, "::1"))
        return 1;
    struct in_addr a;
    if (inet_pton(AF_INET, host, &a) == 1)
        return (ntohl(a.s_addr) >> 24) == 127;
    return 0;
}

cuzk_err http_addr_parse(const char *addr, int *is_unix, int *is_loopback, char *err)
{
    *is_unix = 0;
    *is_loopback = 0;
    if (!addr || !*addr)
        return cuzk_errf(err, CUZK_EINVAL, "listen address is empty");
    if (!strncmp(addr, "unix:", 5)) {
        size_t n = strlen(addr + 5);
        if (n == 0)
            return cuzk_errf(err, CUZK_EINVAL, "listen address '%s': missing socket path", addr);
        if (n >= sizeof(((struct sockaddr_un *)0)->sun_path))
            return cuzk_errf(err, CUZK_EINVAL,
                             "listen address '%s': socket path is %zu bytes, the limit is %zu", addr,
                             n, sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
        *is_unix = 1;
        *is_loopback = 1;
        return CUZK_OK;
    }
    char host[128], port[16];
    cuzk_err e = split_host_port(addr, host, sizeof host, port, sizeof port, err);
    if (e)
        return e;
    *is_loopback = host_is_loopback(host);
    return CUZK_OK;
}

static cuzk_err listen_unix(http_server *s, const char *path, char *err)
{
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    strcpy(sa.sun_path, path);
    struct stat st;
    /* a stale socket from a killed daemon would make bind fail; remove only sockets */
    if (lstat(path, &st) == 0) {
        if (!S_ISSOCK(st.st_mode))
            return cuzk_errf(err, CUZK_EINVAL, "listen: %s exists and is not a socket", path);
        unlink(path);
    }
    s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s->fd < 0)
        return cuzk_errf(err, CUZK_EIO, "listen: socket: %s", strerror(errno));
    if (bind(s->fd, (struct sockaddr *)&sa, sizeof sa) < 0)
        return cuzk_errf(err, CUZK_EIO, "listen: bind %s: %s", path, strerror(errno));
    chmod(path, 0600);
    if (listen(s->fd, 128) < 0)
        return cuzk_errf(err, CUZK_EIO, "listen: %s: %s", path, strerror(errno));
    s->is_unix = 1;
    snprintf(s->unix_path, sizeof s->unix_path, "%s", path);
    snprintf(s->addr, sizeof s->addr, "unix:%s", path);
    return CUZK_OK;
}

static cuzk_err listen_tcp(http_server *s, const char *addr, char *err)
{
    char host[128], port[16];
    cuzk_err e = split_host_port(addr, host, sizeof host, port, sizeof port, err);
    if (e)
        return e;
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0)
        return cuzk_errf(err, CUZK_EINVAL, "listen: cannot resolve '%s': %s", host, gai_strerror(rc));
    int last_errno = 0;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            last_errno = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 128) == 0) {
            s->fd = fd;
            break;
        }
        last_errno = errno;
        close(fd);
    }
    freeaddrinfo(res);
    if (s->fd < 0)
        return cuzk_errf(err, CUZK_EIO, "listen: bind %s: %s", addr, strerror(last_errno));
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char ip[INET6_ADDRSTRLEN] = "?";
    unsigned bound_port = 0;
    if (getsockname(s->fd, (struct sockaddr *)&ss, &sl) == 0) {
        if (ss.ss_family == AF_INET) {
            struct sockaddr_in *in = (struct sockaddr_in *)&ss;
            inet_ntop(AF_INET, &in->sin_addr, ip, sizeof ip);
            bound_port = ntohs(in->sin_port);
            snprintf(s->addr, sizeof s->addr, "%s:%u", ip, bound_port);
        } else if (ss.ss_family == AF_INET6) {
            struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
            inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof ip);
            bound_port = ntohs(in6->sin6_port);
            snprintf(s->addr, sizeof s->addr, "[%s]:%u", ip, bound_port);
        }
    }
    return CUZK_OK;
}

/* ---------------------------------------------------------------- requests */

static int token_ok(const http_server *s, struct MHD_Connection *c)
{
    if (!s->token)
        return 1;
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    if (!h || strncmp(h, "Bearer ", 7))
        return 0;
    h += 7;
    size_t n = strlen(s->token), m = strlen(h);
    /* compare every byte regardless of where the first difference is */
    unsigned diff = (unsigned)(n ^ m);
    for (size_t i = 0; i < n; i++)
        diff |= (unsigned char)s->token[i] ^ (unsigned char)(i < m ? h[i] : 0);
    return diff == 0;
}

static enum MHD_Result send_resp(struct MHD_Connection *c, http_resp *r)
{
    struct MHD_Response *mr;
    if (r->body)
        mr = MHD_create_response_from_buffer(r->len, r->body, MHD_RESPMEM_MUST_FREE);
    else
        mr = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    r->body = NULL;
    if (!mr)
        return MHD_NO;
    MHD_add_response_header(mr, "Content-Type", r->type ? r->type : "application/json");
    MHD_add_response_header(mr, "Cache-Control", "no-store");
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)r->status, mr);
    MHD_destroy_response(mr);
    return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    (void)version;
    http_server *s = cls;
    conn_state *st = *con_cls;
    if (!st) {
        st = calloc(1, sizeof *st);
        if (!st)
            return MHD_NO;
        *con_cls = st;
        return MHD_YES; /* MHD calls again with the body (and sends 100-continue itself) */
    }
    if (*upload_size) {
        size_t n = *upload_size;
        st->seen += n;
        if (st->seen > s->max_body)
            st->too_big = 1;
        if (!st->too_big && !st->oom) {
            if (st->len + n + 1 > st->cap) {
                size_t cap = st->cap ? st->cap : 4096;
                while (cap < st->len + n + 1)
                    cap *= 2;
                char *b = realloc(st->body, cap);
                if (!b) {
                    st->oom = 1;
                } else {
                    st->body = b;
                    st->cap = cap;
                }
            }
            if (!st->oom) {
                memcpy(st->body + st->len, upload, n);
                st->len += n;
                st->body[st->len] = 0;
            }
        }
        *upload_size = 0;
        return MHD_YES;
    }

    http_resp resp = {.status = 200, .type = "application/json", .body = NULL, .len = 0};
    if (st->too_big) {
        http_resp_error(&resp, 413, "request body is %zu bytes, the limit is %zu (max-body)",
                        st->seen, s->max_body);
    } else if (st->oom) {
        http_resp_error(&resp, 503, "out of memory while reading a %zu-byte request body", st->seen);
    } else if (!token_ok(s, c)) {
        http_resp_error(&resp, 401, "missing or wrong token: send 'Authorization: Bearer TOKEN'");
    } else {
        http_req req = {.method = method,
                        .path = url,
                        .body = st->body ? st->body : "",
                        .body_len = st->len,
                        .conn = c,
                        .server = s};
        s->handler(s->ctx, &req, &resp);
    }
    enum MHD_Result ret = send_resp(c, &resp);
    free(resp.body);
    return ret;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)c;
    (void)toe;
    conn_state *st = *con_cls;
    if (st) {
        free(st->body);
        free(st);
        *con_cls = NULL;
    }
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* MHD's accept policy: refuses a connection while max_conns are open (see the top) */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
    (void)addr;
    (void)addrlen;
    http_server *s = cls;
    if (atomic_load(&s->open) < s->max_conns)
        return MHD_YES;
    unsigned long long n = atomic_fetch_add(&s->refused, 1) + 1;
    /* one warning per 10 s at most, saying how many were refused since the last one */
    int64_t now = mono_ms();
    if (!s->warned_ms || now - s->warned_ms >= 10000) {
        LOG(LOG_WARN,
            "http: at the connection limit (max-conns %u): refused %llu new connection(s) "
            "since the last warning; idle connections are closed after conn-timeout %u s",
            s->max_conns, n - s->refused_warned, s->conn_timeout);
        s->warned_ms = now;
        s->refused_warned = n;
    }
    return MHD_NO;
}

/* MHD's connection notifications: STARTED on the accept thread, CLOSED on any */
static void on_conn(void *cls, struct MHD_Connection *c, void **socket_context,
                    enum MHD_ConnectionNotificationCode code)
{
    (void)c;
    (void)socket_context;
    http_server *s = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        unsigned n = atomic_fetch_add(&s->open, 1) + 1;
        atomic_fetch_add(&s->accepted, 1);
        if (n > atomic_load(&s->peak))
            atomic_store(&s->peak, n); /* only this thread raises it */
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        atomic_fetch_sub(&s->open, 1);
    }
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
        msg[--n] = 0;
    LOG(LOG_DEBUG, "http: %s", msg);
}

/* ---------------------------------------------------------------- lifecycle */

cuzk_err http_server_start(http_server **out, const http_config *cfg, char *err)
{
    *out = NULL;
    int is_unix, is_loopback;
    cuzk_err e = http_addr_parse(cfg->listen, &is_unix, &is_loopback, err);
    if (e)
        return e;
    int have_token = cfg->token && cfg->token[0];
    if (!is_unix && !is_loopback && !have_token)
        return cuzk_errf(err, CUZK_EINVAL,
                         "listen %s is not loopback: set a token (--token or CUZK_TOKEN) so that "
                         "only clients holding it are served",
                         cfg->listen);
    http_server *s = calloc(1, sizeof *s);
    if (!s)
        return cuzk_errf(err, CUZK_ENOMEM, "http: out of memory");
    s->fd = -1;
    s->max_body = cfg->max_body;
    s->max_conns = cfg->max_conns ? cfg->max_conns : HTTP_DEFAULT_MAX_CONNS;
    s->conn_timeout = cfg->conn_timeout_s ? cfg->conn_timeout_s : HTTP_DEFAULT_CONN_TIMEOUT_S;
    s->handler = cfg->handler;
    s->ctx = cfg->ctx;
    if (have_token && !(s->token = strdup(cfg->token))) {
        e = cuzk_errf(err, CUZK_ENOMEM, "http: out of memory");
        goto fail;
    }
    e = is_unix ? listen_unix(s, cfg->listen + 5, err) : listen_tcp(s, cfg->listen, err);
    if (e)
        goto fail;
    s->mhd = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
            MHD_USE_ERROR_LOG,
        0, on_accept, s, on_request, s, MHD_OPTION_LISTEN_SOCKET, s->fd,
        MHD_OPTION_CONNECTION_LIMIT, s->max_conns + 1u, MHD_OPTION_CONNECTION_TIMEOUT,
        s->conn_timeout, MHD_OPTION_NOTIFY_CONNECTION, on_conn, s, MHD_OPTION_NOTIFY_COMPLETED,
        on_completed, s, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, s, MHD_OPTION_END);
    if (!s->mhd) {
        e = cuzk_errf(err, CUZK_EIO, "http: libmicrohttpd failed to start on %s", s->addr);
        goto fail;
    }
    *out = s;
    return CUZK_OK;
fail:
    if (s->fd >= 0)
        close(s->fd);
    if (s->is_unix)
        unlink(s->unix_path);
    free(s->token);
    free(s);
    return e;
}

const char *http_server_addr(const http_server *s)
{
    return s->addr;
}

void http_server_stats(http_stats *out, const http_server *s)
{
    /* the counters are atomics; http_server_stats only reads them */
    http_server *m = (http_server *)s;
    out->max_conns = s->max_conns;
    out->conn_timeout_s = s->conn_timeout;
    out->open = atomic_load(&m->open);
    out->peak = atomic_load(&m->peak);
    out->accepted = atomic_load(&m->accepted);
    out->refused = atomic_load(&m->refused);
}

void http_server_stop(http_server *s)
{
    if (!s)
        return;
    if (s->mhd)
        MHD_stop_daemon(s->mhd);
    if (s->fd >= 0)
        close(s->fd);
    if (s->is_unix)
        unlink(s->unix_path);
    free(s->token);
    free(s);
}

/* ---------------------------------------------------------------- helpers */

const char *http_req_query(const http_req *req, const char *name)
{
    return MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, name);
}

const char *http_req_header(const http_req *req, const char *name)
{
    return MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, name);
}

void http_resp_take(http_resp *resp, int status, const char *type, char *body, size_t len)
{
    free(resp->body);
    resp->status = status;
    resp->type = type;
    resp->body = body;
    resp->len = len;
}

void http_resp_text(http_resp *resp, int status, const char *type, const char *text)
{
    size_t n = strlen(text);
    char *b = malloc(n + 1);
    if (b)
        memcpy(b, text, n + 1);
    http_resp_take(resp, b ? status : 500, type, b, b ? n : 0);
}

/* length of the valid UTF-8 sequence at s (1..4), or 0 when it is not valid UTF-8 */
static int utf8_len(const unsigned char *s)
{
    int n = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
    if (s[0] >= 0xf5)
        n = 0;
    for (int i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return n;
}

/* writes s as a JSON string literal body (quotes, escapes) into out; bytes that are not
 * UTF-8 (e.g. from a file name or a corrupt file quoted in a message) become U+FFFD */
static void json_escape(char *out, size_t cap, const char *s)
{
    size_t o = 0;
    for (; *s && o + 8 < cap; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch >= 0x80) {
            int n = utf8_len((const unsigned char *)s);
            if (n == 0) {
                o += (size_t)snprintf(out + o, cap - o, "\\ufffd");
            } else {
                memcpy(out + o, s, (size_t)n);
                o += (size_t)n;
                s += n - 1;
            }
        } else if (ch == '"' || ch == '\\') {
            out[o++] = '\\';
            out[o++] = (char)ch;
        } else if (ch == '\n') {
            out[o++] = '\\';
            out[o++] = 'n';
        } else if (ch < 0x20) {
            o += (size_t)snprintf(out + o, cap - o, "\\u%04x", ch);
        } else {
            out[o++] = (char)ch;
        }
    }
    out[o] = 0;
}

void http_resp_error(http_resp *resp, int status, const char *fmt, ...)
{
    char msg[CUZK_ERRLEN], esc[2 * CUZK_ERRLEN + 16];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_escape(esc, sizeof esc, msg);
    size_t cap = strlen(esc) + 32;
    char *b = malloc(cap);
    if (!b) {
        http_resp_take(resp, status, "application/json", NULL, 0);
        return;
    }
    int n = snprintf(b, cap, "{\"error\": \"%s\"}\n", esc);
    http_resp_take(resp, status, "application/json", b, (size_t)n);
}
