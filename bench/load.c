/* load.c - cuzk-load: a load generator for the daemon's HTTP API, with its own checks
 * (tests/t_load.sh asserts with it, bench/load.sh makes a table from its output).
 *
 * Modes:
 *   mix    --clients N threads, each on one keep-alive connection of its own: submit a small
 *          job (--zkey, --witness, --partitions), poll it (GET /status, GET /v1/jobs/ID) every
 *          --poll-ms up to --polls times, then await it (long-poll GET .../await) until it
 *          ends; --jobs per client and round (more until --round-seconds have passed),
 *          --rounds rounds. A probe thread times
 *          GET /status every --probe-ms on a keep-alive connection of its own. Before the
 *          clients start, --idle M connections are opened that send nothing (even ones) or half
 *          a request header (odd ones) and wait for the daemon to close them; with
 *          --idle-reconnect each reconnects at once when closed, so the idle pressure lasts.
 *   flood  --idle M connections at once and nothing else: how many the daemon keeps (until
 *          its idle timeout) and how many it closes at once (past its limit), a request while
 *          they are held, and a request once they are gone.
 * Every /status request's latency (connect excluded on a kept connection) goes into one
 * sample: p50, p99 and max are printed. The daemon's open descriptors (/proc/PID/fd) and
 * resident memory (VmRSS of /proc/PID/status) are read at the start, after each round, at
 * the flood's height, and at the end once the daemon reports no connection open but the one
 * asking (/status server.http.open == 1); a sampler thread keeps the peak descriptor count.
 *
 * DESIGN. The clients keep their connections (as an HTTP library would), so the number of
 * connections the daemon holds during a mix is exactly idle + clients + probe, and whether the
 * clients fit under --max-conns is decided by arithmetic, not by how fast the daemon reaps
 * closed sockets. Connections that the daemon closes are reaped by its accept thread a little
 * later than the client sees EOF, so a reconnecting idle connection may find the daemon full
 * for a moment: that is counted (idle_refused), never an error.
 *
 * Checks (each failure prints "FAIL: ..." and the exit status is 1; 2 is a usage error):
 *   mix:   no request failed and every job ended done; no idle connection was refused on its
 *          first connect when idle + clients + 1 <= --max-conns; with --conn-timeout T every
 *          idle connection the daemon closed had been open T-1 .. T+10 s; peak descriptors
 *          <= start + --max-conns + --fd-slack; end descriptors <= start + --fd-slack; with
 *          --rss-growth-mb X and two rounds or more, VmRSS after the last round <= after the
 *          first round + X MiB.
 *   flood: at most --max-conns kept and at least M - max-conns closed at once, descriptors
 *          at the height <= start + max-conns + fd-slack, a request while full is closed
 *          unanswered, every kept connection is closed by the daemon after T-1 .. T+10 s, the
 *          daemon's peak connection count <= max-conns, a request afterwards is served, end
 *          descriptors <= start + fd-slack.
 * Output: "load: key=value ..." on stdout, one line. The HTTP client and the /proc readers
 * are in load_http.c.
 */
#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "load_http.h"

/* ---------------------------------------------------------------- options */

typedef struct opts {
    const char *server;    /* "HOST:PORT" or "unix:PATH" */
    const char *token;     /* bearer token or NULL */
    int pid;               /* the daemon's pid, for /proc */
    int flood;             /* 0 = mix, 1 = flood */
    const char *zkey;      /* absolute path */
    const char *witness;   /* absolute path */
    int partitions;        /* witnesses per job */
    int clients;           /* client threads */
    int jobs;              /* jobs per client and round */
    int rounds;            /* rounds */
    int round_s;           /* a round lasts at least this long: clients submit more jobs */
    int polls;             /* polls of a job before awaiting it */
    int poll_ms;           /* ms between polls */
    int probe_ms;          /* ms between the probe's /status requests; 0 = no probe */
    int idle;              /* idle connections */
    int idle_reconnect;    /* 1: an idle connection reconnects when closed */
    int max_conns;         /* the daemon's --max-conns, 0 = unknown (no limit checks) */
    int conn_timeout;      /* the daemon's --conn-timeout in s, 0 = unknown */
    int fd_slack;          /* descriptors the daemon may hold beyond its connections */
    int rss_growth_mb;     /* MiB VmRSS may grow from round 1 to the last; 0 = no check */
    const char *save;      /* directory for sample proofs, or NULL */
    int save_count;        /* proofs to save */
    int deadline_s;        /* the whole run, at most */
} opts;

static opts O = {.partitions = 1, .clients = 8, .jobs = 2, .rounds = 1, .polls = 3,
                 .poll_ms = 50, .probe_ms = 20, .fd_slack = 16, .deadline_s = 300};

/* ---------------------------------------------------------------- counters */

static atomic_ullong n_requests;     /* HTTP requests answered */
static atomic_ullong n_errors;       /* requests that failed, jobs that did not end done */
static atomic_ullong n_submitted;    /* jobs accepted */
static atomic_ullong n_done;         /* jobs that ended done */
static atomic_ullong n_saved;        /* sample proofs written */
static atomic_ullong idle_opened;    /* idle connections opened */
static atomic_ullong idle_closed;    /* closed by the daemon after 1 s or more */
static atomic_ullong idle_refused;   /* closed by the daemon within 1 s */
static atomic_ullong idle_first_refused; /* of those, first connects */
static atomic_ullong idle_connect_failed; /* connect() itself failed */
static atomic_int stop_idle;         /* tells the idle threads to stop */
static atomic_int stop_probe;
static atomic_int stop_sampler;
static atomic_int fds_peak;          /* highest descriptor count the sampler saw */
static int n_fail;                   /* failed checks (main thread only) */

static pthread_mutex_t lat_mu = PTHREAD_MUTEX_INITIALIZER;
static double *lat_ms;               /* /status latencies, ms */
static size_t lat_n, lat_cap;
static double idle_hold_min = 1e9, idle_hold_max; /* s, of the idle connections closed after >= 1 s */

static void error_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void error_note(const char *fmt, ...)
{
    unsigned long long n = atomic_fetch_add(&n_errors, 1);
    if (n >= 10)
        return; /* the count says the rest */
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "load: error: %s\n", msg);
}

static void check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(int ok, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (ok) {
        fprintf(stderr, "load: ok:   %s\n", msg);
    } else {
        fprintf(stderr, "load: FAIL: %s\n", msg);
        n_fail++;
    }
}

static void lat_add(double ms)
{
    pthread_mutex_lock(&lat_mu);
    if (lat_n == lat_cap) {
        size_t cap = lat_cap ? lat_cap * 2 : 4096;
        double *v = realloc(lat_ms, cap * sizeof *v);
        if (v) {
            lat_ms = v;
            lat_cap = cap;
        }
    }
    if (lat_n < lat_cap)
        lat_ms[lat_n++] = ms;
    pthread_mutex_unlock(&lat_mu);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* nearest-rank percentile of the sorted sample */
static double pct(const double *v, size_t n, double p)
{
    if (!n)
        return 0;
    size_t k = (size_t)(p / 100.0 * (double)n + 0.999999);
    if (k < 1)
        k = 1;
    if (k > n)
        k = n;
    return v[k - 1];
}

static void *sampler_main(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop_sampler)) {
        int n = proc_fds(O.pid);
        if (n > atomic_load(&fds_peak))
            atomic_store(&fds_peak, n);
        sleep_ms(20);
    }
    return NULL;
}

/* a connection to the daemon: keep-alive (1) or one request each (0) */
#define HCONN(keep_alive) {.server = O.server, .token = O.token, .fd = -1, .keep = (keep_alive)}

/* hc_request, counted */
static int request(hconn *c, const char *method, const char *path, const char *body,
                   char **rbody, char *err, size_t errcap)
{
    int st = hc_request(c, method, path, body, rbody, err, errcap);
    if (st)
        atomic_fetch_add(&n_requests, 1);
    return st;
}

/* GET /status, timed */
static int get_status(hconn *c, char **body, char *err, size_t errcap)
{
    double t0 = now_s();
    int st = request(c, "GET", "/status", NULL, body, err, errcap);
    if (st == 200)
        lat_add((now_s() - t0) * 1000.0);
    return st;
}

/* /status server.http.open, -1 when not known */
static int daemon_open_conns(void)
{
    hconn c = HCONN(0);
    char *body, err[256];
    int open = -1;
    if (request(&c, "GET", "/status", NULL, &body, err, sizeof err) == 200) {
        json_t *j = json_loads(body, 0, NULL);
        json_t *o = json_object_get(json_object_get(json_object_get(j, "server"), "http"), "open");
        if (json_is_integer(o))
            open = (int)json_integer_value(o);
        json_decref(j);
    }
    hc_close(&c);
    free(c.buf);
    return open;
}

/* waits up to secs until the daemon holds no connection but the asking one */
static int wait_daemon_quiet(double secs)
{
    double end = now_s() + secs;
    int open;
    while ((open = daemon_open_conns()) != 1 && now_s() < end)
        sleep_ms(50);
    return open;
}

/* ---------------------------------------------------------------- clients */

typedef struct client {
    int idx;
    pthread_t th;
    pthread_barrier_t *round_end, *round_go;
    double *round_until;   /* monotonic s: keep submitting until then (shared, set by main) */
} client;

static json_t *parse(const char *body)
{
    return body ? json_loads(body, 0, NULL) : NULL;
}

static void save_proof(hconn *c, const char *id)
{
    unsigned long long k = atomic_fetch_add(&n_saved, 1);
    if ((int)k >= O.save_count)
        return;
    const char *what[2] = {"proof", "public"};
    for (int w = 0; w < 2; w++) {
        char path[256], file[1024], err[512], *body;
        snprintf(path, sizeof path, "/v1/jobs/%s/proofs/0/%s", id, what[w]);
        int st = request(c, "GET", path, NULL, &body, err, sizeof err);
        if (st != 200) {
            error_note("job %s: GET %s: %s", id, path, st ? body : err);
            return;
        }
        snprintf(file, sizeof file, "%s/%s-%llu.json", O.save, what[w], k);
        FILE *f = fopen(file, "w");
        if (!f || fputs(body, f) < 0) {
            error_note("cannot write %s: %s", file, strerror(errno));
            if (f)
                fclose(f);
            return;
        }
        fclose(f);
    }
}

/* GET of a job's record or its await at path into *last (the one before released) and
   *terminal: 1, or 0 with the error noted and *last NULL */
static int job_get(hconn *c, const char *path, json_t **last, int *terminal)
{
    char err[512], *body;
    int st = request(c, "GET", path, NULL, &body, err, sizeof err);
    json_decref(*last);
    *last = st == 200 ? parse(body) : NULL;
    if (!*last) {
        error_note("GET %s: %d %s", path, st, st ? body : err);
        return 0;
    }
    *terminal = json_is_true(json_object_get(*last, "terminal"));
    return 1;
}

/* one job: submit, poll, await; errors are noted */
static void run_job(hconn *c, const char *submit_body)
{
    char err[512], *body, id[64];
    int st = request(c, "POST", "/v1/jobs", submit_body, &body, err, sizeof err);
    json_t *j = st == 201 ? parse(body) : NULL;
    const char *sid = json_string_value(json_object_get(j, "id"));
    if (!sid) {
        error_note("submit: %d %s", st, st ? body : err);
        json_decref(j);
        return;
    }
    snprintf(id, sizeof id, "%s", sid);
    json_decref(j);
    atomic_fetch_add(&n_submitted, 1);

    char path[160];
    int terminal = 0;
    const char *state = NULL;
    json_t *last = NULL;
    for (int p = 0; p < O.polls && !terminal; p++) {
        if (p)
            sleep_ms(O.poll_ms);
        st = get_status(c, &body, err, sizeof err);
        if (st != 200) {
            error_note("GET /status: %d %s", st, st ? body : err);
            return;
        }
        snprintf(path, sizeof path, "/v1/jobs/%s", id);
        if (!job_get(c, path, &last, &terminal))
            return;
    }
    double give_up = now_s() + O.deadline_s;
    while (!terminal && now_s() < give_up) {
        snprintf(path, sizeof path, "/v1/jobs/%s/await?timeout=60", id);
        if (!job_get(c, path, &last, &terminal))
            return;
    }
    state = json_string_value(json_object_get(last, "state"));
    if (!terminal || !state || strcmp(state, "done")) {
        const char *why = json_string_value(json_object_get(last, "error"));
        error_note("job %s ended %s%s%s", id, state ? state : "?", why && *why ? ": " : "",
                   why ? why : "");
    } else {
        atomic_fetch_add(&n_done, 1);
        if (O.save)
            save_proof(c, id);
    }
    json_decref(last);
}

static void *client_main(void *arg)
{
    client *cl = arg;
    hconn c = HCONN(1);
    /* {"zkey": Z, "witnesses": [W, ...], "kind": "custom"} */
    json_t *wit = json_array();
    for (int i = 0; i < O.partitions; i++)
        json_array_append_new(wit, json_string(O.witness));
    json_t *req = json_pack("{s:s, s:o, s:s}", "zkey", O.zkey, "witnesses", wit, "kind", "custom");
    char *submit_body = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    for (int r = 0; r < O.rounds; r++) {
        for (int k = 0; submit_body && (k < O.jobs || now_s() < *cl->round_until); k++)
            run_job(&c, submit_body);
        pthread_barrier_wait(cl->round_end); /* main samples the daemon */
        pthread_barrier_wait(cl->round_go);
    }
    free(submit_body);
    hc_close(&c);
    free(c.buf);
    return NULL;
}

static void *probe_main(void *arg)
{
    (void)arg;
    hconn c = HCONN(1);
    while (!atomic_load(&stop_probe)) {
        char err[512], *body;
        int st = get_status(&c, &body, err, sizeof err);
        if (st != 200)
            error_note("probe GET /status: %d %s", st, st ? body : err);
        sleep_ms(O.probe_ms);
    }
    hc_close(&c);
    free(c.buf);
    return NULL;
}

/* ---------------------------------------------------------------- idle connections */

typedef struct idle_conn {
    int idx;
    pthread_t th;
} idle_conn;

static pthread_mutex_t hold_mu = PTHREAD_MUTEX_INITIALIZER;

/* waits until the daemon closes fd (1, *held = seconds open) or stop_idle is set (0) */
static int wait_close(int fd, double t0, double *held)
{
    char b[512];
    while (!atomic_load(&stop_idle)) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 100) <= 0)
            continue;
        ssize_t r = recv(fd, b, sizeof b, 0);
        if (r > 0)
            continue; /* e.g. a 408 to half a header: the close follows */
        if (r < 0 && errno == EINTR)
            continue;
        *held = now_s() - t0;
        return 1;
    }
    return 0;
}

/* an idle connection closed by the daemon after held s: refused (within 1 s) or timed out */
static void note_closed(double held, int first)
{
    if (held < 1.0) {
        atomic_fetch_add(&idle_refused, 1);
        if (first)
            atomic_fetch_add(&idle_first_refused, 1);
        return;
    }
    atomic_fetch_add(&idle_closed, 1);
    pthread_mutex_lock(&hold_mu);
    if (held < idle_hold_min)
        idle_hold_min = held;
    if (held > idle_hold_max)
        idle_hold_max = held;
    pthread_mutex_unlock(&hold_mu);
}

/* the same, when the caller knows which it was (flood) */
static void note_held(double held)
{
    atomic_fetch_add(&idle_closed, 1);
    if (held < idle_hold_min)
        idle_hold_min = held;
    if (held > idle_hold_max)
        idle_hold_max = held;
}

static const char half_header[] = "POST /v1/jobs HTTP/1.1\r\nHost: cuzk\r\nContent-Le";

static void *idle_main(void *arg)
{
    idle_conn *ic = arg;
    int first = 1;
    while (!atomic_load(&stop_idle)) {
        int fd = server_connect(O.server);
        if (fd < 0) {
            atomic_fetch_add(&idle_connect_failed, 1);
            sleep_ms(100);
            continue;
        }
        double t0 = now_s(), held = 0;
        atomic_fetch_add(&idle_opened, 1);
        if (ic->idx % 2)
            send_all(fd, half_header, sizeof half_header - 1);
        int closed = wait_close(fd, t0, &held);
        close(fd);
        if (!closed)
            break;
        note_closed(held, first);
        first = 0;
        if (!O.idle_reconnect)
            break;
    }
    return NULL;
}

/* ---------------------------------------------------------------- modes */

static void print_result(const char *mode, int fds_start, int fds_end, long rss_start,
                         long rss_mid, long rss_end, double secs, const char *extra)
{
    pthread_mutex_lock(&lat_mu);
    qsort(lat_ms, lat_n, sizeof *lat_ms, cmp_double);
    double p50 = pct(lat_ms, lat_n, 50), p99 = pct(lat_ms, lat_n, 99),
           mx = lat_n ? lat_ms[lat_n - 1] : 0;
    size_t ln = lat_n;
    pthread_mutex_unlock(&lat_mu);
    printf("load: mode=%s clients=%d idle=%d jobs=%llu done=%llu requests=%llu errors=%llu "
           "status_n=%zu status_p50_ms=%.2f status_p99_ms=%.2f status_max_ms=%.2f "
           "idle_opened=%llu idle_closed=%llu idle_refused=%llu idle_hold_min_s=%.2f "
           "idle_hold_max_s=%.2f fds_start=%d fds_peak=%d fds_end=%d rss_start_kb=%ld "
           "rss_round1_kb=%ld rss_end_kb=%ld seconds=%.1f%s\n",
           mode, O.flood ? 0 : O.clients, O.idle, (unsigned long long)atomic_load(&n_submitted),
           (unsigned long long)atomic_load(&n_done), (unsigned long long)atomic_load(&n_requests),
           (unsigned long long)atomic_load(&n_errors), ln, p50, p99, mx,
           (unsigned long long)atomic_load(&idle_opened),
           (unsigned long long)atomic_load(&idle_closed),
           (unsigned long long)atomic_load(&idle_refused),
           atomic_load(&idle_closed) ? idle_hold_min : 0.0, idle_hold_max, fds_start,
           atomic_load(&fds_peak), fds_end, rss_start, rss_mid, rss_end, secs, extra);
    fflush(stdout);
}

static int run_mix(void)
{
    int open0 = wait_daemon_quiet(10);
    check(open0 == 1, "daemon idle before the run (open connections %d)", open0);
    int fds_start = proc_fds(O.pid);
    long rss_start = proc_rss_kb(O.pid), rss_round1 = -1, rss_last = -1;
    check(fds_start > 0 && rss_start > 0, "daemon %d: %d descriptors, %ld KiB resident", O.pid,
          fds_start, rss_start);
    atomic_store(&fds_peak, fds_start);
    double t0 = now_s();
    pthread_t sampler;
    pthread_create(&sampler, NULL, sampler_main, NULL);

    idle_conn *ic = calloc((size_t)(O.idle ? O.idle : 1), sizeof *ic);
    for (int i = 0; i < O.idle; i++) {
        ic[i].idx = i;
        pthread_create(&ic[i].th, NULL, idle_main, &ic[i]);
    }
    /* the idle connections first: every one open before a client connects */
    for (int i = 0; i < 200 && (int)atomic_load(&idle_opened) + (int)atomic_load(&idle_refused) <
                                   O.idle; i++)
        sleep_ms(10);
    sleep_ms(100);

    pthread_barrier_t end_b, go_b;
    pthread_barrier_init(&end_b, NULL, (unsigned)O.clients + 1);
    pthread_barrier_init(&go_b, NULL, (unsigned)O.clients + 1);
    client *cl = calloc((size_t)O.clients, sizeof *cl);
    double round_until = now_s() + O.round_s;
    pthread_t probe;
    if (O.probe_ms)
        pthread_create(&probe, NULL, probe_main, NULL);
    for (int i = 0; i < O.clients; i++) {
        cl[i] = (client){
            .idx = i, .round_end = &end_b, .round_go = &go_b, .round_until = &round_until};
        pthread_create(&cl[i].th, NULL, client_main, &cl[i]);
    }
    for (int r = 0; r < O.rounds; r++) {
        pthread_barrier_wait(&end_b);
        rss_last = proc_rss_kb(O.pid);
        if (r == 0)
            rss_round1 = rss_last;
        fprintf(stderr, "load: round %d: %llu jobs done, %llu errors, daemon %d fds %ld KiB\n",
                r + 1, (unsigned long long)atomic_load(&n_done),
                (unsigned long long)atomic_load(&n_errors), proc_fds(O.pid), rss_last);
        round_until = now_s() + O.round_s; /* the clients read it after the barrier */
        pthread_barrier_wait(&go_b);
    }
    for (int i = 0; i < O.clients; i++)
        pthread_join(cl[i].th, NULL);
    atomic_store(&stop_probe, 1);
    if (O.probe_ms)
        pthread_join(probe, NULL);
    /* without reconnects, let the daemon close the idle connections itself */
    if (!O.idle_reconnect && O.conn_timeout) {
        double end = now_s() + O.conn_timeout + 10;
        while (now_s() < end && (int)(atomic_load(&idle_closed) + atomic_load(&idle_refused)) <
                                    O.idle)
            sleep_ms(50);
    }
    atomic_store(&stop_idle, 1);
    for (int i = 0; i < O.idle; i++)
        pthread_join(ic[i].th, NULL);
    free(ic);
    free(cl);
    double secs = now_s() - t0;
    int open1 = wait_daemon_quiet(O.conn_timeout ? O.conn_timeout + 10 : 20);
    atomic_store(&stop_sampler, 1);
    pthread_join(sampler, NULL);
    int fds_end = proc_fds(O.pid);
    long rss_end = proc_rss_kb(O.pid);
    pthread_barrier_destroy(&end_b);
    pthread_barrier_destroy(&go_b);

    unsigned long long least = (unsigned long long)O.clients * (unsigned long long)O.jobs *
                               (unsigned long long)O.rounds,
                       sub = atomic_load(&n_submitted);
    check(atomic_load(&n_errors) == 0, "no request failed (%llu errors in %llu requests)",
          (unsigned long long)atomic_load(&n_errors), (unsigned long long)atomic_load(&n_requests));
    check(sub >= least && atomic_load(&n_done) == sub,
          "every job ended done (%llu of %llu submitted, at least %llu)",
          (unsigned long long)atomic_load(&n_done), sub, least);
    if (O.max_conns && O.idle + O.clients + 1 <= O.max_conns)
        check(atomic_load(&idle_first_refused) == 0,
              "all %d idle connections were taken within the limit (%llu refused on first connect)",
              O.idle, (unsigned long long)atomic_load(&idle_first_refused));
    if (O.conn_timeout && O.idle && secs < O.conn_timeout + 2) {
        fprintf(stderr, "load: (idle timeouts not checked: the run was shorter than "
                        "conn-timeout + 2 s)\n");
    } else if (O.conn_timeout && O.idle) {
        check(atomic_load(&idle_closed) >= (unsigned long long)O.idle,
              "the daemon closed the idle connections (%llu of %d)",
              (unsigned long long)atomic_load(&idle_closed), O.idle);
        check(idle_hold_min >= O.conn_timeout - 1 && idle_hold_max <= O.conn_timeout + 10 &&
                  atomic_load(&idle_closed),
              "idle connections closed after %.1f .. %.1f s (conn-timeout %d s)", idle_hold_min,
              idle_hold_max, O.conn_timeout);
    }
    check(open1 == 1, "daemon holds no connection after the run (open %d)", open1);
    if (O.max_conns)
        check(atomic_load(&fds_peak) <= fds_start + O.max_conns + O.fd_slack,
              "descriptors at most start + max-conns + slack (peak %d, start %d, limit %d, slack %d)",
              atomic_load(&fds_peak), fds_start, O.max_conns, O.fd_slack);
    check(fds_end >= 0 && fds_end <= fds_start + O.fd_slack,
          "no descriptor growth (start %d, end %d, slack %d)", fds_start, fds_end, O.fd_slack);
    if (O.rss_growth_mb && O.rounds >= 2)
        check(rss_last - rss_round1 <= (long)O.rss_growth_mb * 1024,
              "resident memory bounded (after round 1 %ld KiB, after round %d %ld KiB, at most "
              "+%d MiB)",
              rss_round1, O.rounds, rss_last, O.rss_growth_mb);
    print_result("mix", fds_start, fds_end, rss_start, rss_round1, rss_end, secs, "");
    return n_fail ? 1 : 0;
}

/* whether the daemon has closed this idle connection (readable, and nothing left to read) */
static int peer_closed(int fd)
{
    char b[512];
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, 0) > 0 && recv(fd, b, sizeof b, MSG_DONTWAIT) <= 0;
}

static int run_flood(void)
{
    int open0 = wait_daemon_quiet(10);
    check(open0 == 1, "daemon idle before the flood (open connections %d)", open0);
    hconn q = HCONN(0);
    char err[512], *body;
    unsigned long long refused0 = 0;
    if (request(&q, "GET", "/status", NULL, &body, err, sizeof err) == 200) {
        json_t *j = parse(body);
        refused0 = (unsigned long long)json_integer_value(json_object_get(
            json_object_get(json_object_get(j, "server"), "http"), "refused"));
        json_decref(j);
    }
    sleep_ms(200); /* that request's connection reaped */
    int fds_start = proc_fds(O.pid);
    long rss_start = proc_rss_kb(O.pid);
    atomic_store(&fds_peak, fds_start);
    double t0 = now_s();

    int *fd = malloc((size_t)O.idle * sizeof *fd);
    double *opened = malloc((size_t)O.idle * sizeof *opened);
    int *closed = calloc((size_t)O.idle, sizeof *closed);
    int n_open = 0;
    for (int i = 0; i < O.idle; i++) {
        fd[i] = server_connect(O.server);
        opened[i] = now_s();
        if (fd[i] < 0) {
            atomic_fetch_add(&idle_connect_failed, 1);
            closed[i] = 1;
            continue;
        }
        atomic_fetch_add(&idle_opened, 1);
        n_open++;
        if (i % 2)
            send_all(fd[i], half_header, sizeof half_header - 1);
    }
    /* those past the limit are closed at once: wait until as many as expected are, or 2 s */
    int expect_refused = O.max_conns && O.idle > O.max_conns ? O.idle - O.max_conns : 0;
    int n_refused = 0;
    double until = now_s() + 2.0;
    while (now_s() < until) {
        for (int i = 0; i < O.idle; i++) {
            if (closed[i])
                continue;
            if (peer_closed(fd[i])) {
                closed[i] = 1;
                close(fd[i]);
                n_refused++;
                atomic_fetch_add(&idle_refused, 1);
            }
        }
        if (n_refused >= expect_refused && now_s() - t0 > 0.3)
            break;
        sleep_ms(20);
    }
    int held = (int)atomic_load(&idle_opened) - n_refused;
    int fds_height = proc_fds(O.pid);
    atomic_store(&fds_peak, fds_height);
    long rss_height = proc_rss_kb(O.pid);
    /* a request now: the daemon is full when it holds max-conns */
    hconn r = HCONN(0);
    int st_full = request(&r, "GET", "/status", NULL, &body, err, sizeof err);
    fprintf(stderr, "load: flood: %d opened, %d held, %d closed at once; request while held: %s\n",
            (int)atomic_load(&idle_opened), held, n_refused, st_full ? "answered" : err);
    if (O.max_conns) {
        check(held <= O.max_conns, "the daemon kept at most max-conns (%d of %d opened, limit %d)",
              held, O.idle, O.max_conns);
        check(n_refused >= expect_refused, "it closed the rest at once (%d, expected >= %d)",
              n_refused, expect_refused);
        check(fds_height <= fds_start + O.max_conns + O.fd_slack,
              "descriptors while flooded at most start + max-conns + slack (%d, start %d)",
              fds_height, fds_start);
        if (held >= O.max_conns)
            check(st_full == 0, "a request while full is closed unanswered (%s)",
                  st_full ? "it was answered" : err);
    }
    /* the daemon closes the ones it kept after its idle timeout */
    while (1) {
        int left = 0;
        for (int i = 0; i < O.idle; i++) {
            if (closed[i])
                continue;
            if (peer_closed(fd[i])) {
                closed[i] = 1;
                close(fd[i]);
                note_held(now_s() - opened[i]);
            } else {
                left++;
            }
        }
        if (!left || now_s() - t0 > (O.conn_timeout ? O.conn_timeout + 10 : 60))
            break;
        sleep_ms(20);
    }
    int still = 0;
    for (int i = 0; i < O.idle; i++)
        if (!closed[i]) {
            still++;
            close(fd[i]);
        }
    check(still == 0, "the daemon closed every connection it kept (%d left open)", still);
    if (O.conn_timeout && held)
        check(idle_hold_min >= O.conn_timeout - 1 && idle_hold_max <= O.conn_timeout + 10,
              "kept connections closed after %.1f .. %.1f s (conn-timeout %d s)", idle_hold_min,
              idle_hold_max, O.conn_timeout);
    /* served again; the daemon's own counters agree. A connection counts until the daemon
       has reaped it, a moment after the client saw it closed; its descriptor goes then too */
    for (int i = 0; i < 250 && proc_fds(O.pid) > fds_start + 1; i++)
        sleep_ms(20);
    int st = get_status(&q, &body, err, sizeof err);
    check(st == 200, "served after the idle connections were closed (%d %s)", st,
          st ? "" : err);
    char extra[160] = "";
    if (st == 200) {
        json_t *j = parse(body);
        json_t *h = json_object_get(json_object_get(j, "server"), "http");
        int peak = (int)json_integer_value(json_object_get(h, "peak"));
        unsigned long long refused =
            (unsigned long long)json_integer_value(json_object_get(h, "refused"));
        if (O.max_conns)
            check(peak <= O.max_conns && refused - refused0 >= (unsigned long long)expect_refused,
                  "daemon's own count: peak %d (limit %d), refused %llu during the flood", peak,
                  O.max_conns, refused - refused0);
        snprintf(extra, sizeof extra, " held=%d refused_at_once=%d daemon_peak=%d daemon_refused=%llu",
                 held, n_refused, peak, refused - refused0);
        json_decref(j);
    }
    hc_close(&q);
    free(q.buf);
    free(r.buf);
    int open1 = wait_daemon_quiet(10);
    check(open1 == 1, "daemon holds no connection after the flood (open %d)", open1);
    int fds_end = proc_fds(O.pid);
    long rss_end = proc_rss_kb(O.pid);
    check(fds_end >= 0 && fds_end <= fds_start + O.fd_slack,
          "no descriptor growth (start %d, flooded %d, end %d, slack %d)", fds_start, fds_height,
          fds_end, O.fd_slack);
    free(fd);
    free(opened);
    free(closed);
    print_result("flood", fds_start, fds_end, rss_start, rss_height, rss_end, now_s() - t0, extra);
    return n_fail ? 1 : 0;
}

/* ---------------------------------------------------------------- main */

static const char usage[] =
    "usage: cuzk-load --server ADDR --pid PID [--mode mix|flood] [options]\n"
    "  --token T            bearer token\n"
    "  --zkey F --witness F absolute paths of the job's key and witness (mix)\n"
    "  --partitions P       witnesses per job [1]\n"
    "  --clients N          client threads, one keep-alive connection each [8]\n"
    "  --jobs J             jobs per client and round [2]\n"
    "  --rounds R           rounds; the daemon is sampled after each [1]\n"
    "  --round-seconds S    clients keep submitting until a round has lasted S s [0]\n"
    "  --polls K --poll-ms MS  polls of a job (GET /status + GET /v1/jobs/ID) before awaiting [3, 50]\n"
    "  --probe-ms MS        a GET /status every MS on its own connection; 0 = none [20]\n"
    "  --idle M             idle connections (even: send nothing, odd: half a header) [0]\n"
    "  --idle-reconnect     an idle connection reconnects when the daemon closes it\n"
    "  --max-conns L        the daemon's limit, for the checks\n"
    "  --conn-timeout T     the daemon's idle timeout in s, for the checks\n"
    "  --fd-slack N         descriptors the daemon may hold beyond connections [16]\n"
    "  --rss-growth-mb X    VmRSS may grow at most X MiB from round 1 to the last [no check]\n"
    "  --save DIR --save-count K  write proof-<k>.json/public-<k>.json of K finished jobs\n"
    "  --deadline S         longest wait for one job [300]\n";

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int *iv = NULL;
        const char **sv = NULL;
        if (!strcmp(a, "--idle-reconnect")) {
            O.idle_reconnect = 1;
            continue;
        }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage, stdout);
            return 0;
        }
        if (!strcmp(a, "--server")) sv = &O.server;
        else if (!strcmp(a, "--token")) sv = &O.token;
        else if (!strcmp(a, "--zkey")) sv = &O.zkey;
        else if (!strcmp(a, "--witness")) sv = &O.witness;
        else if (!strcmp(a, "--save")) sv = &O.save;
        else if (!strcmp(a, "--pid")) iv = &O.pid;
        else if (!strcmp(a, "--partitions")) iv = &O.partitions;
        else if (!strcmp(a, "--clients")) iv = &O.clients;
        else if (!strcmp(a, "--jobs")) iv = &O.jobs;
        else if (!strcmp(a, "--rounds")) iv = &O.rounds;
        else if (!strcmp(a, "--round-seconds")) iv = &O.round_s;
        else if (!strcmp(a, "--polls")) iv = &O.polls;
        else if (!strcmp(a, "--poll-ms")) iv = &O.poll_ms;
        else if (!strcmp(a, "--probe-ms")) iv = &O.probe_ms;
        else if (!strcmp(a, "--idle")) iv = &O.idle;
        else if (!strcmp(a, "--max-conns")) iv = &O.max_conns;
        else if (!strcmp(a, "--conn-timeout")) iv = &O.conn_timeout;
        else if (!strcmp(a, "--fd-slack")) iv = &O.fd_slack;
        else if (!strcmp(a, "--rss-growth-mb")) iv = &O.rss_growth_mb;
        else if (!strcmp(a, "--save-count")) iv = &O.save_count;
        else if (!strcmp(a, "--deadline")) iv = &O.deadline_s;
        else if (!strcmp(a, "--mode")) {
            if (!v || (strcmp(v, "mix") && strcmp(v, "flood"))) {
                fprintf(stderr, "cuzk-load: --mode is mix or flood\n");
                return 2;
            }
            O.flood = !strcmp(v, "flood");
            i++;
            continue;
        }
        if (!v || (!iv && !sv)) {
            fprintf(stderr, "cuzk-load: unknown option or missing value: %s\n%s", a, usage);
            return 2;
        }
        if (iv) {
            char *end;
            long x = strtol(v, &end, 10);
            if (end == v || *end || x < 0 || x > 1000000) {
                fprintf(stderr, "cuzk-load: %s: '%s' is not a count\n", a, v);
                return 2;
            }
            *iv = (int)x;
        } else {
            *sv = v;
        }
        i++;
    }
    if (!O.server || O.pid <= 0 || (!O.flood && (!O.zkey || !O.witness || O.clients < 1)) ||
        O.partitions < 1 || O.rounds < 1) {
        fprintf(stderr, "cuzk-load: --server, --pid, and for mix --zkey, --witness and "
                        "--clients >= 1 are required\n%s",
                usage);
        return 2;
    }
    if (O.save) {
        struct stat sb;
        if (stat(O.save, &sb) || !S_ISDIR(sb.st_mode)) {
            fprintf(stderr, "cuzk-load: --save %s is not a directory\n", O.save);
            return 2;
        }
    }
    /* many idle sockets: raise the descriptor limit to the hard one */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    int rc = O.flood ? run_flood() : run_mix();
    free(lat_ms);
    return rc;
}
