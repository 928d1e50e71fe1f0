/* client.c - blocking HTTP/1.1 client over TCP or Unix sockets (see client.h). */
#include "server/client.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

static int connect_addr(const char *server, char *err)
{
    if (!strncmp(server, "http://", 7))
        server += 7;
    if (!strncmp(server, "unix:", 5)) {
        struct sockaddr_un sa;
        memset(&sa, 0, sizeof sa);
        sa.sun_family = AF_UNIX;
        if (strlen(server + 5) >= sizeof sa.sun_path) {
            cuzk_errf(err, CUZK_EINVAL, "server %s: socket path too long", server);
            return -1;
        }
        strcpy(sa.sun_path, server + 5);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
            cuzk_errf(err, CUZK_EIO, "cannot reach the daemon at %s: %s (is `cuzk serve` running?)",
                      server, strerror(errno));
            if (fd >= 0)
                close(fd);
            return -1;
        }
        return fd;
    }
    char host[256], port[16];
    const char *colon;
    if (server[0] == '[') {
        const char *end = strchr(server, ']');
        if (!end || end[1] != ':' || (size_t)(end - server) >= sizeof host) {
            cuzk_errf(err, CUZK_EINVAL, "server address '%s': expected [IPV6]:PORT", server);
            return -1;
        }
        snprintf(host, sizeof host, "%.*s", (int)(end - server - 1), server + 1);
        colon = end + 1;
    } else {
        colon = strrchr(server, ':');
        if (!colon || (size_t)(colon - server) >= sizeof host) {
            cuzk_errf(err, CUZK_EINVAL, "server address '%s': expected HOST:PORT or unix:PATH",
                      server);
            return -1;
        }
        snprintf(host, sizeof host, "%.*s", (int)(colon - server), server);
    }
    snprintf(port, sizeof port, "%s", colon + 1);
    size_t pl = strlen(port);
    if (pl && port[pl - 1] == '/')
        port[pl - 1] = 0;
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc) {
        cuzk_errf(err, CUZK_EINVAL, "server address '%s': %s", server, gai_strerror(rc));
        return -1;
    }
    int fd = -1, last = 0;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            last = errno;
            continue;
        }
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
        last = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0)
        cuzk_errf(err, CUZK_EIO, "cannot reach the daemon at %s: %s (is `cuzk serve` running?)",
                  server, strerror(last));
    return fd;
}

static int send_all(int fd, const void *p, size_t n)
{
    const char *b = p;
    while (n) {
        ssize_t w = send(fd, b, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

/* decodes a chunked body in place; returns the decoded length or -1 */
static long dechunk(char *b, size_t n)
{
    size_t in = 0, out = 0;
    for (;;) {
        char *end;
        if (in >= n)
            return -1;
        unsigned long sz = strtoul(b + in, &end, 16);
        char *crlf = strstr(b + in, "\r\n");
        if (!crlf || end == b + in)
            return -1;
        in = (size_t)(crlf - b) + 2;
        if (sz == 0)
            return (long)out;
        if (in + sz > n)
            return -1;
        memmove(b + out, b + in, sz);
        out += sz;
        in += sz + 2;
    }
}

cuzk_err httpc_request(httpc_reply *out, const char *server, const char *token,
                       const char *method, const char *path, const char *content_type,
                       const void *body, size_t body_len, int timeout_s, char *err)
{
    memset(out, 0, sizeof *out);
    int fd = connect_addr(server, err);
    if (fd < 0)
        return strstr(err ? err : "", "address") ? CUZK_EINVAL : CUZK_EIO;
    out->connected = 1;
    if (timeout_s > 0) {
        struct timeval tv = {.tv_sec = timeout_s, .tv_usec = 0};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    }
    char head[1024], ctype[160] = "", auth[320] = "";
    if (content_type)
        snprintf(ctype, sizeof ctype, "Content-Type: %s\r\n", content_type);
    if (token && *token)
        snprintf(auth, sizeof auth, "Authorization: Bearer %s\r\n", token);
    int hn = snprintf(head, sizeof head,
                      "%s %s HTTP/1.1\r\nHost: cuzk\r\nConnection: close\r\nUser-Agent: cuzk\r\n"
                      "Content-Length: %zu\r\n%s%s\r\n",
                      method, path, body_len, ctype, auth);
    if (hn < 0 || (size_t)hn >= sizeof head) {
        close(fd);
        return cuzk_errf(err, CUZK_EINVAL, "request header too long");
    }
    if (send_all(fd, head, (size_t)hn) || (body_len && send_all(fd, body, body_len))) {
        /* the server may have answered early (e.g. 413) and closed: still read the reply */
        if (errno != EPIPE && errno != ECONNRESET) {
            int e = errno;
            close(fd);
            return cuzk_errf(err, CUZK_EIO, "sending to %s: %s", server, strerror(e));
        }
    }
    shutdown(fd, SHUT_WR);
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap);
    if (!buf) {
        close(fd);
        return cuzk_errf(err, CUZK_ENOMEM, "out of memory");
    }
    for (;;) {
        if (n + 4096 + 1 > cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                close(fd);
                return cuzk_errf(err, CUZK_ENOMEM, "out of memory reading the reply");
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t r = recv(fd, buf + n, cap - n - 1, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            if (e == ECONNRESET && n == 0)
                break; /* closed unread: reported below as a connection closed unanswered */
            free(buf);
            close(fd);
            if (e == EAGAIN || e == EWOULDBLOCK)
                return cuzk_errf(err, CUZK_ETIMEOUT, "no reply from %s within %d s", server,
                                 timeout_s);
            return cuzk_errf(err, CUZK_EIO, "reading from %s: %s", server, strerror(e));
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = 0;
    if (n == 0) {
        free(buf);
        return cuzk_errf(err, CUZK_EIO,
                         "%s closed the connection without a reply (a daemon at its connection "
                         "limit, --max-conns, does that)",
                         server);
    }
    char *sep = strstr(buf, "\r\n\r\n");
    int status = 0;
    if (!sep || sscanf(buf, "HTTP/%*d.%*d %d", &status) != 1) {
        free(buf);
        return cuzk_errf(err, CUZK_EIO, "%s: malformed or empty HTTP reply", server);
    }
    *sep = 0;
    int chunked = 0;
    long clen = -1;
    for (char *line = strstr(buf, "\r\n"); line && line < sep; line = strstr(line + 2, "\r\n")) {
        char *h = line + 2;
        if (!strncasecmp(h, "Transfer-Encoding:", 18) && strstr(h, "chunked"))
            chunked = 1;
        if (!strncasecmp(h, "Content-Length:", 15))
            clen = atol(h + 15);
    }
    char *b = sep + 4;
    size_t blen = n - (size_t)(b - buf);
    if (chunked) {
        long d = dechunk(b, blen);
        if (d < 0) {
            free(buf);
            return cuzk_errf(err, CUZK_EIO, "%s: malformed chunked reply", server);
        }
        blen = (size_t)d;
    } else if (clen >= 0) {
        if ((size_t)clen > blen) {
            free(buf);
            return cuzk_errf(err, CUZK_EIO, "%s: reply cut short (%zu of %ld bytes)", server, blen,
                             clen);
        }
        blen = (size_t)clen;
    }
    memmove(buf, b, blen);
    buf[blen] = 0;
    out->status = status;
    out->body = buf;
    out->len = blen;
    return CUZK_OK;
}

void httpc_reply_free(httpc_reply *r)
{
    free(r->body);
    r->body = NULL;
    r->len = 0;
}
