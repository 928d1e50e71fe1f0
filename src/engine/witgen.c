/* witgen.c - registration checks and the child-process runner of circom witness
 * generators (see witgen.h for the design).
 */
#include "engine/witgen.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* ---------------------------------------------------------------- registration */

static int name_ok(const char *s, size_t n)
{
    if (n == 0 || n >= WITGEN_NAME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
              c == '-' || c == '.'))
            return 0;
    }
    return 1;
}

static int is_regular(const char *path)
{
    struct stat st;
    return !stat(path, &st) && S_ISREG(st.st_mode);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

cuzk_err witgen_circuit_parse(witgen_circuit *out, const char *spec, char *err)
{
    memset(out, 0, sizeof *out);
    const char *eq = strchr(spec, '=');
    const char *comma = eq ? strchr(eq + 1, ',') : NULL;
    if (!eq || !comma || comma == eq + 1 || !comma[1])
        return cuzk_errf(err, CUZK_EINVAL, "circuit '%s': expected NAME=ZKEY,GENERATOR", spec);
    if (!name_ok(spec, (size_t)(eq - spec)))
        return cuzk_errf(err, CUZK_EINVAL,
                         "circuit '%.*s': a name is 1 to %d characters of letters, digits, '_', '-', '.'",
                         (int)(eq - spec), spec, WITGEN_NAME_MAX - 1);
    memcpy(out->name, spec, (size_t)(eq - spec));
    char zkey[WITGEN_PATH_MAX], gen[WITGEN_PATH_MAX];
    size_t zn = (size_t)(comma - eq - 1);
    if (zn >= sizeof zkey || strlen(comma + 1) >= sizeof gen)
        return cuzk_errf(err, CUZK_EINVAL, "circuit %s: path too long", out->name);
    memcpy(zkey, eq + 1, zn);
    zkey[zn] = 0;
    snprintf(gen, sizeof gen, "%s", comma + 1);

    char abs[PATH_MAX];
    errno = 0;
    if (!realpath(zkey, abs) || !is_regular(abs) || access(abs, R_OK))
        return cuzk_errf(err, CUZK_EIO, "circuit %s: proving key %s: %s", out->name, zkey,
                         errno ? strerror(errno) : "not a readable file");
    snprintf(out->zkey, sizeof out->zkey, "%s", abs);
    errno = 0;
    if (!realpath(gen, abs) || !is_regular(abs))
        return cuzk_errf(err, CUZK_EIO, "circuit %s: witness generator %s: %s", out->name, gen,
                         errno ? strerror(errno) : "not a regular file");
    snprintf(out->generator, sizeof out->generator, "%s", abs);
    if (ends_with(abs, ".wasm")) {
        out->kind = WITGEN_WASM;
        if (access(abs, R_OK))
            return cuzk_errf(err, CUZK_EIO, "circuit %s: witness generator %s: %s", out->name, abs,
                             strerror(errno));
        char *slash = strrchr(abs, '/');
        *slash = 0;
        snprintf(out->script, sizeof out->script, "%s/generate_witness.js", abs);
        if (!is_regular(out->script) || access(out->script, R_OK))
            return cuzk_errf(err, CUZK_EIO,
                             "circuit %s: %s is missing (circom --wasm writes it next to the .wasm; keep "
                             "the <name>_js folder whole)",
                             out->name, out->script);
    } else {
        out->kind = WITGEN_NATIVE;
        if (access(abs, X_OK))
            return cuzk_errf(err, CUZK_EIO,
                             "circuit %s: witness generator %s is not executable (give the circom C++ "
                             "witness program or a .wasm)",
                             out->name, abs);
    }
    return CUZK_OK;
}

cuzk_err witgen_find_program(char *out, size_t cap, const char *prog, char *err)
{
    char cand[PATH_MAX];
    if (!prog || !*prog)
        return cuzk_errf(err, CUZK_EINVAL, "no program given");
    if (strchr(prog, '/')) {
        if (!realpath(prog, cand) || !is_regular(cand) || access(cand, X_OK))
            return cuzk_errf(err, CUZK_EIO, "%s: not an executable file", prog);
    } else {
        const char *path = getenv("PATH");
        int found = 0;
        while (path && *path && !found) {
            size_t n = strcspn(path, ":");
            char dir[PATH_MAX];
            snprintf(dir, sizeof dir, "%.*s", (int)n, n ? path : ".");
            char full[2 * PATH_MAX];
            snprintf(full, sizeof full, "%s/%s", dir, prog);
            if (is_regular(full) && !access(full, X_OK) && realpath(full, cand))
                found = 1;
            path += n + (path[n] == ':');
        }
        if (!found)
            return cuzk_errf(err, CUZK_EIO, "%s: not found in PATH", prog);
    }
    if (strlen(cand) >= cap)
        return cuzk_errf(err, CUZK_EINVAL, "%s: path too long", cand);
    snprintf(out, cap, "%s", cand);
    return CUZK_OK;
}

/* ---------------------------------------------------------------- output capture */

/* the last bytes a child printed (between WITGEN_OUTPUT_MAX / 2 and WITGEN_OUTPUT_MAX of them) */
typedef struct tailbuf {
    char b[WITGEN_OUTPUT_MAX];
    size_t n;
} tailbuf;

/* appends; when full, the older half is dropped (so at least the last half is kept) */
static void tail_add(tailbuf *t, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (t->n == sizeof t->b) {
            memmove(t->b, t->b + sizeof t->b / 2, sizeof t->b / 2);
            t->n = sizeof t->b / 2;
        }
        t->b[t->n++] = p[i];
    }
}

/* The output as one line for an error message: lines joined by " | ", leaving out blank
 * lines, stack frames ("    at ..."), caret markers and node's version banner; control
 * characters become spaces; at most WITGEN_REASON_MAX bytes, the last ones. */
static void tail_summary(const tailbuf *t, char *out, size_t cap)
{
    char s[WITGEN_OUTPUT_MAX + 1];
    size_t k = 0;
    size_t i = 0;
    while (i < t->n) {
        size_t j = i;
        while (j < t->n && t->b[j] != '\n')
            j++;
        /* trim the line [i, j) */
        size_t a = i, z = j;
        while (a < z && (t->b[a] == ' ' || t->b[a] == '\t' || t->b[a] == '\r'))
            a++;
        while (z > a && (t->b[z - 1] == ' ' || t->b[z - 1] == '\t' || t->b[z - 1] == '\r'))
            z--;
        int keep = z > a;
        if (keep && z - a >= 3 && !memcmp(t->b + a, "at ", 3))
            keep = 0;
        if (keep && z - a >= 8 && !memcmp(t->b + a, "Node.js ", 8))
            keep = 0;
        if (keep) {
            size_t c = a;
            while (c < z && (t->b[c] == '^' || t->b[c] == '~' || t->b[c] == ' '))
                c++;
            if (c == z)
                keep = 0;
        }
        if (keep) {
            if (k && k + 3 < sizeof s) {
                memcpy(s + k, " | ", 3);
                k += 3;
            }
            for (size_t c = a; c < z && k < sizeof s - 1; c++) {
                unsigned char ch = (unsigned char)t->b[c];
                s[k++] = ch < 0x20 || ch == 0x7f ? ' ' : (char)ch;
            }
        }
        i = j + 1;
    }
    s[k] = 0;
    if (k == 0) {
        snprintf(out, cap, "(no output)");
        return;
    }
    const char *from = s;
    if (k > WITGEN_REASON_MAX) {
        from = s + k - WITGEN_REASON_MAX;
        while ((*from & 0xC0) == 0x80) /* do not start inside a UTF-8 sequence */
            from++;
    }
    snprintf(out, cap, "%s%s", from == s ? "" : "...", from);
}

/* ---------------------------------------------------------------- running */

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void kill_group(pid_t pid)
{
    if (kill(-pid, SIGKILL) && errno == ESRCH)
        kill(pid, SIGKILL);
}

cuzk_err witgen_run(const witgen_circuit *c, const witgen_opts *o, const char *input_json,
                    const char *out_wtns, char *err)
{
    const char *argv[6];
    int na = 0;
    if (c->kind == WITGEN_WASM) {
        if (!o->node || !*o->node)
            return cuzk_errf(err, CUZK_EINVAL, "circuit %s: no node program to run %s", c->name, c->generator);
        argv[na++] = o->node;
        argv[na++] = c->script;
    }
    argv[na++] = c->generator;
    argv[na++] = input_json;
    argv[na++] = out_wtns;
    argv[na] = NULL;
    const char *prog = argv[0];

    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC))
        return cuzk_errf(err, CUZK_EIO, "circuit %s: pipe: %s", c->name, strerror(errno));
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 2);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    posix_spawn_file_actions_addclosefrom_np(&fa, 3); /* the daemon's sockets and journal stay its own */
#endif
    sigset_t none, dfl;
    sigemptyset(&none);
    sigemptyset(&dfl);
    sigaddset(&dfl, SIGINT);
    sigaddset(&dfl, SIGTERM);
    sigaddset(&dfl, SIGPIPE);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &dfl);
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
    pid_t pid;
    int sr = posix_spawn(&pid, prog, &fa, &at, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(pfd[1]);
    if (sr) {
        close(pfd[0]);
        return cuzk_errf(err, CUZK_EIO, "circuit %s: cannot start %s: %s", c->name, prog, strerror(sr));
    }

    tailbuf *out = malloc(sizeof *out);
    if (out)
        out->n = 0;
    int64_t t0 = mono_ms();
    int open_pipe = 1, status = 0, reaped = 0;
    cuzk_err why = CUZK_OK; /* CUZK_ETIMEOUT or CUZK_ECANCELED once killed */
    while (!reaped) {
        if (open_pipe) {
            struct pollfd pf = {.fd = pfd[0], .events = POLLIN};
            int pr = poll(&pf, 1, 50);
            if (pr > 0) {
                char buf[4096];
                ssize_t n = read(pfd[0], buf, sizeof buf);
                if (n > 0 && out)
                    tail_add(out, buf, (size_t)n);
                else if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
                    open_pipe = 0;
            }
        } else {
            struct timespec ts = {0, 20 * 1000000L};
            nanosleep(&ts, NULL);
        }
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) {
            reaped = 1;
            break;
        }
        if (w < 0 && errno != EINTR) {
            reaped = 1; /* cannot happen for our own child; do not spin */
            status = 0;
            break;
        }
        if (why)
            continue; /* killed: wait for it to be reaped */
        if (mono_ms() - t0 > o->timeout_ms)
            why = CUZK_ETIMEOUT;
        else if (o->stop && o->stop(o->stop_ctx))
            why = CUZK_ECANCELED;
        if (why)
            kill_group(pid);
    }
    /* what is left in the pipe (the generator exited; a grandchild may still hold it) */
    if (open_pipe) {
        fcntl(pfd[0], F_SETFL, O_NONBLOCK);
        char buf[4096];
        ssize_t n;
        while ((n = read(pfd[0], buf, sizeof buf)) > 0)
            if (out)
                tail_add(out, buf, (size_t)n);
    }
    close(pfd[0]);

    char msg[WITGEN_REASON_MAX + 16];
    if (out)
        tail_summary(out, msg, sizeof msg);
    else
        snprintf(msg, sizeof msg, "(output not kept: out of memory)");
    free(out);
    if (why == CUZK_ETIMEOUT)
        return cuzk_errf(err, CUZK_ETIMEOUT, "circuit %s: witness generator killed after %lld s (timeout): %s",
                         c->name, (long long)(o->timeout_ms / 1000), msg);
    if (why == CUZK_ECANCELED)
        return cuzk_errf(err, CUZK_ECANCELED, "circuit %s: witness generator stopped (job canceled or daemon stopping)", c->name);
    /* SIGKILL that we did not send: the kernel's OOM killer (or an operator), a condition of
       the host, not of the input; the engine retries it later (engine_err_transient) */
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        return cuzk_errf(err, CUZK_ENOMEM,
                         "circuit %s: witness generator killed by SIGKILL (out of memory? the kernel's OOM killer): %s",
                         c->name, msg);
    if (WIFSIGNALED(status))
        return cuzk_errf(err, CUZK_EINVAL, "circuit %s: witness generator killed by signal %d: %s", c->name,
                         WTERMSIG(status), msg);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return cuzk_errf(err, CUZK_EINVAL, "circuit %s: witness generator exited with status %d: %s", c->name,
                         WIFEXITED(status) ? WEXITSTATUS(status) : -1, msg);
    if (!is_regular(out_wtns))
        return cuzk_errf(err, CUZK_EINVAL, "circuit %s: witness generator exited 0 but wrote no %s: %s",
                         c->name, out_wtns, msg);
    return CUZK_OK;
}
