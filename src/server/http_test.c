/* http_test.c - tests of the daemon's HTTP listener, the socket client and the option
 * table: a real listener on loopback port 0 and on a Unix socket, driven by the client
 * and by raw sockets (the raw requests are the oracle for the client's framing).
 * Checks: echo of method/path/query/body, 413 past the body limit (server keeps serving),
 * 401 without the token, refusal of a non-loopback address without a token, many
 * concurrent clients, the connection limit and the idle timeout on TCP and on a Unix
 * socket (idle sockets hold the slots, the next one is closed at once and counted, the
 * idle ones are closed after the timeout, a handler slower than the timeout still
 * answers), size parsing and the config file.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "server/client.h"
#include "server/config.h"
#include "server/http.h"
#include "util/check.h"
#include "util/log.h"

/* echoes "METHOD PATH q=<query q> len=<body length> body=<body>" */
static void echo_handler(void *ctx, const http_req *req, http_resp *resp)
{
    (void)ctx;
    if (!strcmp(req->path, "/error")) {
        http_resp_error(resp, 418, "teapot \"quoted\" %d", 7);
        return;
    }
    if (!strcmp(req->path, "/utf8")) {
        http_resp_error(resp, 400, "caf\xc3\xa9 \xff\xfe tab\t");
        return;
    }
    if (!strcmp(req->path, "/sleep")) { /* a handler slower than the idle timeout */
        sleep(2);
        http_resp_text(resp, 200, "text/plain", "slept");
        return;
    }
    const char *q = http_req_query(req, "q");
    size_t cap = req->body_len + 256;
    char *b = malloc(cap);
    int n = snprintf(b, cap, "%s %s q=%s len=%zu body=%s", req->method, req->path, q ? q : "-",
                     req->body_len, req->body);
    http_resp_take(resp, 200, "text/plain", b, (size_t)n);
}

/* sends raw bytes to 127.0.0.1:port and returns the whole reply (malloc'd) */
static char *raw_request(int port, const char *data, size_t len)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa)) {
        close(fd);
        return NULL;
    }
    size_t off = 0;
    while (off < len) {
        ssize_t w = send(fd, data + off, len - off, MSG_NOSIGNAL);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    size_t cap = 1 << 16, n = 0;
    char *out = calloc(1, cap);
    ssize_t r;
    while ((r = recv(fd, out + n, cap - n - 1, 0)) > 0)
        n += (size_t)r;
    close(fd);
    return out;
}

typedef struct conc_arg {
    const char *addr;
    int idx;
    int ok;
} conc_arg;

static void *conc_client(void *p)
{
    conc_arg *a = p;
    char body[64], want[160], err[CUZK_ERRLEN];
    snprintf(body, sizeof body, "client-%d", a->idx);
    snprintf(want, sizeof want, "POST /c q=- len=%zu body=%s", strlen(body), body);
    a->ok = 1;
    for (int k = 0; k < 20; k++) {
        httpc_reply r;
        if (httpc_request(&r, a->addr, NULL, "POST", "/c", "text/plain", body, strlen(body), 10,
                          err) ||
            r.status != 200 || strcmp(r.body, want))
            a->ok = 0;
        httpc_reply_free(&r);
    }
    return NULL;
}

static void test_tcp(void)
{
    char err[CUZK_ERRLEN] = "";
    http_server *s = NULL;
    http_config cfg = {.listen = "127.0.0.1:0", .max_body = 1000, .max_conns = 64,
                       .handler = echo_handler};
    CHECK(http_server_start(&s, &cfg, err) == CUZK_OK, "start: %s", err);
    if (!s)
        return;
    char addr[160];
    snprintf(addr, sizeof addr, "%s", http_server_addr(s));
    int port = atoi(strrchr(addr, ':') + 1);
    CHECK(!strncmp(addr, "127.0.0.1:", 10) && port > 0, "bound address %s", addr);

    httpc_reply r;
    CHECK(httpc_request(&r, addr, NULL, "POST", "/x/y?q=hello%20w", "text/plain", "abc", 3, 5,
                        err) == CUZK_OK,
          "request: %s", err);
    CHECK(r.status == 200 && !strcmp(r.body, "POST /x/y q=hello w len=3 body=abc"), "echo: %d %s",
          r.status, r.body);
    httpc_reply_free(&r);

    /* error helper: JSON with escaped quotes */
    CHECK(httpc_request(&r, addr, NULL, "GET", "/error", NULL, NULL, 0, 5, err) == CUZK_OK, "%s",
          err);
    CHECK(r.status == 418 && !strcmp(r.body, "{\"error\": \"teapot \\\"quoted\\\" 7\"}\n"),
          "error body: %s", r.body);
    httpc_reply_free(&r);

    /* valid UTF-8 kept, invalid bytes replaced, control characters escaped */
    CHECK(httpc_request(&r, addr, NULL, "GET", "/utf8", NULL, NULL, 0, 5, err) == CUZK_OK, "%s",
          err);
    CHECK(!strcmp(r.body, "{\"error\": \"caf\xc3\xa9 \\ufffd\\ufffd tab\\u0009\"}\n"),
          "utf8 body: %s", r.body);
    httpc_reply_free(&r);

    /* body over the limit: 413 naming both numbers, handler not called */
    char *big = malloc(5000);
    memset(big, 'x', 5000);
    CHECK(httpc_request(&r, addr, NULL, "POST", "/big", "text/plain", big, 5000, 5, err) ==
              CUZK_OK,
          "%s", err);
    CHECK(r.status == 413 && strstr(r.body, "5000") && strstr(r.body, "1000"), "413: %d %s",
          r.status, r.body);
    httpc_reply_free(&r);
    free(big);

    /* raw request as the oracle of the framing; then garbage; server keeps serving */
    const char *req = "GET /raw?q=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    char *rep = raw_request(port, req, strlen(req));
    CHECK(rep && !strncmp(rep, "HTTP/1.1 200", 12) && strstr(rep, "GET /raw q=1 len=0 body="),
          "raw: %s", rep ? rep : "(null)");
    free(rep);
    rep = raw_request(port, "\x01\x02garbage\r\n\r\n", 13);
    /* libmicrohttpd answers 400 or just closes; either way the server must keep serving */
    CHECK(rep && (!rep[0] || !strncmp(rep, "HTTP/1.1 400", 12)), "garbage -> %s",
          rep ? rep : "(null)");
    free(rep);
    rep = raw_request(port, req, strlen(req));
    CHECK(rep && !strncmp(rep, "HTTP/1.1 200", 12), "after garbage: %s", rep ? rep : "(null)");
    free(rep);

    /* many concurrent clients */
    enum { NC = 16 };
    pthread_t th[NC];
    conc_arg ca[NC];
    for (int i = 0; i < NC; i++) {
        ca[i] = (conc_arg){.addr = addr, .idx = i};
        pthread_create(&th[i], NULL, conc_client, &ca[i]);
    }
    for (int i = 0; i < NC; i++) {
        pthread_join(th[i], NULL);
        CHECK(ca[i].ok, "concurrent client %d got a wrong reply", i);
    }
    http_server_stop(s);
    CHECK(httpc_request(&r, addr, NULL, "GET", "/", NULL, NULL, 0, 5, err) == CUZK_EIO,
          "request to a stopped server should fail");
    CHECK(strstr(err, "cannot reach"), "unreachable message: %s", err);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* a connected socket to a listen address ("127.0.0.1:PORT" or "unix:PATH"), -1 on failure */
static int raw_connect(const char *addr)
{
    int fd;
    if (!strncmp(addr, "unix:", 5)) {
        struct sockaddr_un su = {.sun_family = AF_UNIX};
        snprintf(su.sun_path, sizeof su.sun_path, "%s", addr + 5);
        fd = socket(AF_UNIX, SOCK_STREAM, 0);
        if (connect(fd, (struct sockaddr *)&su, sizeof su)) {
            close(fd);
            return -1;
        }
        return fd;
    }
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)atoi(strrchr(addr, ':') + 1))};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa)) {
        close(fd);
        return -1;
    }
    return fd;
}

/* seconds until the peer closes fd (EOF or reset), at most limit_s; -1 when it did not */
static double wait_closed(int fd, double limit_s)
{
    double t0 = now_s();
    struct timeval tv = {.tv_sec = (time_t)limit_s, .tv_usec = 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char b[256];
    for (;;) {
        ssize_t r = recv(fd, b, sizeof b, 0);
        if (r == 0 || (r < 0 && errno == ECONNRESET))
            return now_s() - t0;
        if (r < 0)
            return -1;
    }
}

/* the connection limit and the idle timeout, on one listen address */
static void test_limit_on(const char *listen)
{
    char err[CUZK_ERRLEN] = "";
    http_server *s = NULL;
    http_config cfg = {.listen = listen, .max_body = 1000, .max_conns = 3, .conn_timeout_s = 1,
                       .handler = echo_handler};
    CHECK(http_server_start(&s, &cfg, err) == CUZK_OK, "%s: start: %s", listen, err);
    if (!s)
        return;
    char addr[160];
    snprintf(addr, sizeof addr, "%s", http_server_addr(s));

    /* a handler slower than the idle timeout is not idle: its reply arrives */
    httpc_reply r;
    CHECK(httpc_request(&r, addr, NULL, "GET", "/sleep", NULL, NULL, 0, 10, err) == CUZK_OK &&
              r.status == 200 && !strcmp(r.body, "slept"),
          "%s: reply of a 2 s handler under a 1 s idle timeout: %s", addr, err);
    httpc_reply_free(&r);
    http_stats st;
    for (int i = 0; i < 100; i++) { /* the server closes its side after the reply */
        http_server_stats(&st, s);
        if (st.open == 0)
            break;
        usleep(10000);
    }
    CHECK(st.open == 0 && st.max_conns == 3 && st.conn_timeout_s == 1, "%s: open %u after the reply",
          addr, st.open);

    /* three idle connections (one with half a request header) take every slot */
    int idle[3];
    double t_idle = now_s();
    for (int i = 0; i < 3; i++)
        idle[i] = raw_connect(addr);
    const char *half = "GET /never HTTP/1.1\r\nHost: x\r\n";
    CHECK(idle[0] >= 0 && idle[1] >= 0 && idle[2] >= 0 &&
              send(idle[2], half, strlen(half), MSG_NOSIGNAL) == (ssize_t)strlen(half),
          "%s: idle connections", addr);
    for (int i = 0; i < 100; i++) {
        http_server_stats(&st, s);
        if (st.open == 3)
            break;
        usleep(10000);
    }
    CHECK(st.open == 3 && st.peak == 3, "%s: 3 idle connections open (%u, peak %u)", addr, st.open,
          st.peak);

    /* the fourth is closed at once, without a reply, and counted; so is a request */
    int extra = raw_connect(addr);
    double t = extra >= 0 ? wait_closed(extra, 5) : 0;
    CHECK(t >= 0 && t < 1.0, "%s: a connection past the limit is closed at once (after %.2f s)",
          addr, t);
    if (extra >= 0)
        close(extra);
    cuzk_err e = httpc_request(&r, addr, NULL, "GET", "/x", NULL, NULL, 0, 5, err);
    CHECK(e == CUZK_EIO && strstr(err, "connection limit"),
          "%s: a request past the limit fails naming the limit: %s", addr, err);
    if (!e)
        httpc_reply_free(&r);
    http_server_stats(&st, s);
    CHECK(st.open == 3 && st.peak == 3 && st.refused >= 2, "%s: open %u peak %u refused %llu",
          addr, st.open, st.peak, st.refused);

    /* the idle ones are closed after the timeout, and the server serves again */
    for (int i = 0; i < 3; i++) {
        double w = wait_closed(idle[i], 10);
        double since = now_s() - t_idle;
        CHECK(w >= 0 && since >= 0.9 && since < 8, "%s: idle connection %d closed %.2f s after "
              "it opened (timeout 1 s)", addr, i, w >= 0 ? since : -1.0);
        close(idle[i]);
    }
    /* the client sees EOF a moment before the server has reaped the connection (its thread
       ends, then MHD's accept thread cleans up and notifies): wait for that, not longer */
    for (int i = 0; i < 200; i++) {
        http_server_stats(&st, s);
        if (st.open == 0)
            break;
        usleep(10000);
    }
    CHECK(st.open == 0, "%s: timed-out connections reaped (open %u)", addr, st.open);
    CHECK(httpc_request(&r, addr, NULL, "GET", "/y", NULL, NULL, 0, 5, err) == CUZK_OK &&
              r.status == 200,
          "%s: served again after the idle connections timed out: %s", addr, err);
    httpc_reply_free(&r);
    http_server_stats(&st, s);
    CHECK(st.peak == 3 && st.accepted >= 5, "%s: peak %u accepted %llu", addr, st.peak,
          st.accepted);
    http_server_stop(s);
}

static void test_limit(void)
{
    log_threshold = LOG_ERROR; /* the limit's warnings are expected here */
    test_limit_on("127.0.0.1:0");
    char listen[80];
    snprintf(listen, sizeof listen, "unix:/tmp/cuzk-http-limit-%d.sock", (int)getpid());
    test_limit_on(listen);
}

static void test_token_and_unix(void)
{
    char err[CUZK_ERRLEN] = "";
    http_server *s = NULL;
    http_config cfg = {.listen = "0.0.0.0:0", .max_body = 1000, .handler = echo_handler};
    CHECK(http_server_start(&s, &cfg, err) == CUZK_EINVAL && strstr(err, "token"),
          "non-loopback without a token must be refused: %s", err);

    char path[64];
    snprintf(path, sizeof path, "/tmp/cuzk-http-test-%d.sock", (int)getpid());
    char listen[80];
    snprintf(listen, sizeof listen, "unix:%s", path);
    cfg.listen = listen;
    cfg.token = "s3cret";
    CHECK(http_server_start(&s, &cfg, err) == CUZK_OK, "unix start: %s", err);
    if (!s)
        return;
    httpc_reply r;
    CHECK(httpc_request(&r, listen, NULL, "GET", "/a", NULL, NULL, 0, 5, err) == CUZK_OK, "%s",
          err);
    CHECK(r.status == 401 && strstr(r.body, "token"), "no token: %d %s", r.status, r.body);
    httpc_reply_free(&r);
    CHECK(httpc_request(&r, listen, "wrong!", "GET", "/a", NULL, NULL, 0, 5, err) == CUZK_OK, "%s",
          err);
    CHECK(r.status == 401, "wrong token: %d", r.status);
    httpc_reply_free(&r);
    CHECK(httpc_request(&r, listen, "s3cret", "GET", "/a", NULL, NULL, 0, 5, err) == CUZK_OK, "%s",
          err);
    CHECK(r.status == 200 && !strcmp(r.body, "GET /a q=- len=0 body="), "token ok: %d %s",
          r.status, r.body);
    httpc_reply_free(&r);
    http_server_stop(s);
    CHECK(access(path, F_OK) != 0, "socket file removed at stop");
}

static void test_addr_and_config(void)
{
    char err[CUZK_ERRLEN];
    int u, lo;
    CHECK(http_addr_parse("127.0.0.1:80", &u, &lo, err) == CUZK_OK && !u && lo, "v4 loopback");
    CHECK(http_addr_parse("[::1]:80", &u, &lo, err) == CUZK_OK && lo, "v6 loopback");
    CHECK(http_addr_parse("10.1.2.3:80", &u, &lo, err) == CUZK_OK && !lo, "not loopback");
    CHECK(http_addr_parse("unix:/tmp/x", &u, &lo, err) == CUZK_OK && u, "unix");
    CHECK(http_addr_parse("localhost", &u, &lo, err) == CUZK_EINVAL, "missing port");
    CHECK(http_addr_parse("1.2.3.4:99999", &u, &lo, err) == CUZK_EINVAL, "port range");
    CHECK(http_addr_parse("::1:80", &u, &lo, err) == CUZK_EINVAL, "unbracketed v6");

    uint64_t v;
    CHECK(size_parse(&v, "auto", err) == CUZK_OK && v == 0, "auto");
    CHECK(size_parse(&v, "1536", err) == CUZK_OK && v == 1536, "bytes");
    CHECK(size_parse(&v, "16G", err) == CUZK_OK && v == 16ull << 30, "16G");
    CHECK(size_parse(&v, "1.5GiB", err) == CUZK_OK && v == 3ull << 29, "1.5GiB");
    CHECK(size_parse(&v, "512m", err) == CUZK_OK && v == 512ull << 20, "512m");
    CHECK(size_parse(&v, "12Q", err) == CUZK_EINVAL, "bad unit");
    CHECK(size_parse(&v, "-1G", err) == CUZK_EINVAL, "negative");

    serve_config c;
    serve_config_defaults(&c);
    CHECK(!strcmp(c.listen, SERVE_DEFAULT_LISTEN) && c.budget == 0 && !strcmp(c.backend, "auto"),
          "defaults");
    char path[64];
    snprintf(path, sizeof path, "/tmp/cuzk-config-test-%d.conf", (int)getpid());
    FILE *f = fopen(path, "w");
    fprintf(f, "# comment\nbudget = 8G\nbackend cpu   # trailing comment\n\ngpu-workers=3\n");
    fclose(f);
    char a1[] = "serve", a2[] = "--config", a4[] = "--gpu-workers", a5[] = "5", a6[] = "--data=/d";
    char *argv[] = {a1, a2, path, a4, a5, a6};
    int help;
    CHECK(serve_config_from_args(&c, 6, argv, &help, err) == CUZK_OK, "args: %s", err);
    CHECK(c.budget == 8ull << 30 && !strcmp(c.backend, "cpu") && c.gpu_workers == 5 &&
              !strcmp(c.data, "/d"),
          "file + command line precedence: budget %llu backend %s workers %d data %s",
          (unsigned long long)c.budget, c.backend, c.gpu_workers, c.data);
    f = fopen(path, "w");
    fprintf(f, "backend = tpu\n");
    fclose(f);
    CHECK(serve_config_load_file(&c, path, err) == CUZK_EINVAL && strstr(err, ":1") &&
              strstr(err, "tpu"),
          "bad enum in file: %s", err);
    CHECK(serve_config_set(&c, "gpu-workers", "0", err) == CUZK_EINVAL, "range");
    CHECK(serve_config_set(&c, "nope", "1", err) == CUZK_EINVAL && strstr(err, "unknown"),
          "unknown option");
    unlink(path);
}

int main(void)
{
    test_addr_and_config();
    test_tcp();
    test_token_and_unix();
    test_limit();
    if (failures) {
        fprintf(stderr, "http_test: %d failure(s)\n", failures);
        return 1;
    }
    printf("http_test: ok\n");
    return 0;
}
