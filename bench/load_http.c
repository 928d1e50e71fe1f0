/* load_http.c - the plumbing of cuzk-load (see load_http.h): a minimal HTTP/1.1 client on
 * kept connections over TCP or a Unix socket, and a process's descriptors and VmRSS from /proc.
 */
#include "load_http.h"

#include <dirent.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void sleep_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) && errno == EINTR)
        ;
}

/* open descriptors of pid, -1 when unreadable */
int proc_fds(int pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd", pid);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

/* VmRSS of pid in KiB, -1 when unreadable */
long proc_rss_kb(int pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    long kb = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

int server_connect(const char *s)
{
    if (!strncmp(s, "unix:", 5)) {
        struct sockaddr_un su;
        memset(&su, 0, sizeof su);
        su.sun_family = AF_UNIX;
        snprintf(su.sun_path, sizeof su.sun_path, "%s", s + 5);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&su, sizeof su) == 0)
            return fd;
        int e = errno;
        if (fd >= 0)
            close(fd);
        errno = e;
        return -1;
    }
    char host[256], port[16];
    const char *colon = strrchr(s, ':');
    if (!colon || (size_t)(colon - s) >= sizeof host) {
        errno = EINVAL;
        return -1;
    }
    if (s[0] == '[')
        snprintf(host, sizeof host, "%.*s", (int)(colon - s - 2), s + 1);
    else
        snprintf(host, sizeof host, "%.*s", (int)(colon - s), s);
    snprintf(port, sizeof port, "%s", colon + 1);
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    if (getaddrinfo(host, port, &hints, &res)) {
        errno = EINVAL;
        return -1;
    }
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int ok = fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) == 0;
    int e = errno;
    freeaddrinfo(res);
    if (ok)
        return fd;
    if (fd >= 0)
        close(fd);
    errno = e;
    return -1;
}

int send_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

void hc_close(hconn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}

int hc_request(hconn *c, const char *method, const char *path, const char *body,
                      char **rbody, char *err, size_t errcap)
{
    *rbody = NULL;
    if (c->fd < 0) {
        c->fd = server_connect(c->server);
        if (c->fd < 0) {
            snprintf(err, errcap, "connect %s: %s", c->server, strerror(errno));
            return 0;
        }
        struct timeval tv = {.tv_sec = 200, .tv_usec = 0}; /* longer than one await */
        setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    }
    size_t blen = body ? strlen(body) : 0;
    char head[1024], auth[320] = "";
    if (c->token)
        snprintf(auth, sizeof auth, "Authorization: Bearer %s\r\n", c->token);
    int hn = snprintf(head, sizeof head,
                      "%s %s HTTP/1.1\r\nHost: cuzk\r\nUser-Agent: cuzk-load\r\n%s%s"
                      "Content-Length: %zu\r\n%s\r\n",
                      method, path, c->keep ? "" : "Connection: close\r\n",
                      body ? "Content-Type: application/json\r\n" : "", blen, auth);
    if (send_all(c->fd, head, (size_t)hn) || (blen && send_all(c->fd, body, blen))) {
        snprintf(err, errcap, "%s %s: send: %s", method, path, strerror(errno));
        hc_close(c);
        return 0;
    }
    size_t n = 0, hdr = 0;
    long clen = -1;
    int status = 0, close_after = !c->keep;
    for (;;) {
        if (n + 4097 > c->cap) {
            size_t cap = c->cap ? c->cap * 2 : 65536;
            char *b = realloc(c->buf, cap);
            if (!b) {
                snprintf(err, errcap, "out of memory");
                hc_close(c);
                return 0;
            }
            c->buf = b;
            c->cap = cap;
        }
        if (hdr && clen >= 0 && n >= hdr + (size_t)clen)
            break;
        ssize_t r = recv(c->fd, c->buf + n, c->cap - n - 1, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (hdr && clen < 0 && r == 0)
                break; /* body delimited by the close */
            snprintf(err, errcap, "%s %s: the daemon closed the connection after %zu reply bytes%s%s",
                     method, path, n, r < 0 ? ": " : "", r < 0 ? strerror(errno) : "");
            hc_close(c);
            return 0;
        }
        n += (size_t)r;
        c->buf[n] = 0;
        if (!hdr) {
            char *e = strstr(c->buf, "\r\n\r\n");
            if (!e)
                continue;
            hdr = (size_t)(e - c->buf) + 4;
            if (sscanf(c->buf, "HTTP/%*d.%*d %d", &status) != 1) {
                snprintf(err, errcap, "%s %s: malformed reply", method, path);
                hc_close(c);
                return 0;
            }
            for (char *l = strstr(c->buf, "\r\n"); l && l < e; l = strstr(l + 2, "\r\n")) {
                char line[128];
                size_t ll = strcspn(l + 2, "\r");
                snprintf(line, sizeof line, "%.*s", (int)(ll < sizeof line ? ll : sizeof line - 1),
                         l + 2);
                if (!strncasecmp(line, "Content-Length:", 15))
                    clen = atol(line + 15);
                if (!strncasecmp(line, "Connection:", 11) && strcasestr(line, "close"))
                    close_after = 1;
            }
        }
    }
    size_t len = clen >= 0 ? (size_t)clen : n - hdr;
    memmove(c->buf, c->buf + hdr, len);
    c->buf[len] = 0;
    *rbody = c->buf;
    if (close_after)
        hc_close(c);
    return status;
}
