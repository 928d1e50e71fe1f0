/* cmd_serve.c - `cuzk serve`: runs the proving engine behind the HTTP API until
 * SIGINT or SIGTERM.
 *
 * Start-up order: options (config.c table) -> listen address check -> engine_create
 * (journal, budget) -> engine_start (threads, crash recovery) -> HTTP listener. Once
 * listening, the bound address (with the real port when --listen asked for port 0) is
 * written to DATA/serve.addr and logged, so scripts can find the daemon.
 * Signals are blocked in every thread and taken synchronously by sigwait here.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "engine/engine.h"
#include "server/api.h"
#include "server/config.h"
#include "server/http.h"
#include "util/log.h"

static int log_level_from(const char *s)
{
    if (!strcmp(s, "error"))
        return LOG_ERROR;
    if (!strcmp(s, "warn"))
        return LOG_WARN;
    if (!strcmp(s, "debug"))
        return LOG_DEBUG;
    return LOG_INFO;
}

/* writes text to path atomically (tmp + rename) */
static void write_file_atomic(const char *path, const char *text)
{
    char tmp[640];
    snprintf(tmp, sizeof tmp, "%.600s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        LOG(LOG_WARN, "cannot write %s: %s", tmp, strerror(errno));
        return;
    }
    fprintf(f, "%s\n", text);
    if (fclose(f) != 0 || rename(tmp, path) != 0)
        LOG(LOG_WARN, "cannot write %s: %s", path, strerror(errno));
}

int cmd_serve(int argc, char **argv)
{
    serve_config cfg;
    char err[CUZK_ERRLEN] = "";
    int help = 0;
    serve_config_defaults(&cfg);
    if (serve_config_from_args(&cfg, argc, argv, &help, err)) {
        fprintf(stderr, "cuzk serve: %s\n", err);
        return EXIT_USAGE;
    }
    if (help == 1) {
        serve_config_print_help(stdout);
        return 0;
    }
    if (help == 2) {
        serve_config_print_markdown(stdout);
        return 0;
    }
    log_threshold = log_level_from(cfg.log_level);

    int is_unix, is_loopback;
    if (http_addr_parse(cfg.listen, &is_unix, &is_loopback, err)) {
        fprintf(stderr, "cuzk serve: %s\n", err);
        return EXIT_USAGE;
    }
    if (!is_unix && !is_loopback && !cfg.token[0]) {
        fprintf(stderr, "cuzk serve: --listen %s is not loopback: set --token (or CUZK_TOKEN) so "
                        "that only clients holding it are served\n",
                cfg.listen);
        return EXIT_USAGE;
    }

    /* every thread created from here on inherits this mask; sigwait below takes them */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);

    engine_config ec;
    engine_config_defaults(&ec);
    ec.data_dir = cfg.data;
    ec.store = cfg.store;
    ec.lease_s = cfg.lease;
    ec.upload_dir = cfg.upload_dir;
    ec.budget_bytes = cfg.budget;
    ec.gpu_mem = cfg.gpu_mem;
    ec.batch_max = cfg.batch_max;
    engine_backend_from_name(cfg.backend, &ec.backend);
    ec.gpu_workers = cfg.gpu_workers;
    ec.devices = cfg.devices;
    ec.synth_workers = cfg.synth_workers;
    ec.finalizers = cfg.finalizers;
    ec.queue_depth = cfg.queue_depth;
    ec.cpu_threads = cfg.threads;
    ec.proof_ttl_s = cfg.proof_ttl;
    ec.fetch_grace_s = cfg.fetch_grace;
    const char *circuits[SERVE_MAX_CIRCUITS];
    for (int i = 0; i < cfg.n_circuits; i++)
        circuits[i] = cfg.circuit[i];
    ec.circuits = circuits;
    ec.n_circuits = (size_t)cfg.n_circuits;
    ec.node = cfg.node;
    ec.witgen_timeout_s = cfg.witgen_timeout;
    ec.min_free = cfg.min_free;
    ec.retry_max_ms = (int64_t)cfg.retry_max * 1000;

    engine *eng = NULL;
    http_server *srv = NULL;
    api_ctx actx;
    memset(&actx, 0, sizeof actx);
    int rc = 0;
    cuzk_err e = engine_create(&eng, &ec, err);
    if (!e)
        e = engine_start(eng, err);
    if (e) {
        fprintf(stderr, "cuzk serve: %s\n", err);
        rc = cli_exit_code(e);
        goto out;
    }
    actx.eng = eng;
    actx.backend = cfg.backend;
    actx.started_ms = api_now_ms();
    actx.max_body = cfg.max_body;
    http_config hc = {.listen = cfg.listen,
                      .token = cfg.token,
                      .max_body = cfg.max_body,
                      .max_conns = (unsigned)cfg.max_conns,
                      .conn_timeout_s = (unsigned)cfg.conn_timeout,
                      .handler = api_handle,
                      .ctx = &actx};
    e = http_server_start(&srv, &hc, err);
    if (e) {
        fprintf(stderr, "cuzk serve: %s\n", err);
        rc = e == CUZK_EINVAL ? EXIT_USAGE : EXIT_SERVER;
        goto out;
    }
    actx.listen = http_server_addr(srv);
    engine_set_address(eng, actx.listen);

    char addr_path[600];
    snprintf(addr_path, sizeof addr_path, "%s/serve.addr", cfg.data);
    write_file_atomic(addr_path, actx.listen);
    LOG(LOG_INFO, "cuzk serve: listening on %s (data %s, store %s, backend %s)", actx.listen, cfg.data,
        cfg.store[0] ? "postgres" : "sqlite", cfg.backend);

    int sig = 0;
    while (sigwait(&sigs, &sig) != 0)
        ;
    LOG(LOG_INFO, "cuzk serve: %s, shutting down", sig == SIGINT ? "SIGINT" : "SIGTERM");
    unlink(addr_path);
out:
    /* the engine first: that wakes long-polls blocked in engine_wait, so the listener's
       connection threads can finish and http_server_stop does not wait for them */
    if (eng)
        engine_stop(eng);
    http_server_stop(srv);
    engine_destroy(eng);
    return rc;
}
