/* fuzz_config.c - libFuzzer harness for the daemon's configuration parsers (config.c):
 * serve_config_load_file (`cuzk serve --config FILE`) and serve_config_set (one option,
 * as the command line gives it).
 *
 * The input is a config file (seeds: fuzz/corpus/config/), loaded over the defaults. When
 * it holds NUL bytes, the text before the first one and the text between the first and
 * the second are also given to serve_config_set as a name and a value, as the command
 * line would (values a file line cannot carry: '#', leading blanks, past 1,024 bytes).
 * Beyond "no crash, no leak, no sanitizer report" it checks:
 *   - a refusal is CUZK_EINVAL with a message that starts with "config PATH:LINE" (file)
 *     or names the option (set);
 *   - accepted or not, the serve_config stays one the daemon can run with: every text
 *     field NUL-terminated inside its array, backend and log-level among their choices,
 *     every number within the range the option table gives it, 0..64 circuits, none empty.
 */
#include <string.h>

#include "common.h"
#include "server/config.h"

static int one_of(const char *s, const char *const *set, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(s, set[i]))
            return 1;
    return 0;
}

static void check_config(const serve_config *c)
{
    FUZZ_CHECK(fuzz_terminated(c->listen, sizeof c->listen) &&
                   fuzz_terminated(c->data, sizeof c->data) &&
                   fuzz_terminated(c->devices, sizeof c->devices) &&
                   fuzz_terminated(c->token, sizeof c->token) &&
                   fuzz_terminated(c->node, sizeof c->node) &&
                   fuzz_terminated(c->store, sizeof c->store) &&
                   fuzz_terminated(c->upload_dir, sizeof c->upload_dir),
               "a text field is not terminated");
    static const char *const backends[] = {"cpu", "gpu", "auto"};
    static const char *const levels[] = {"error", "warn", "info", "debug"};
    FUZZ_CHECK(fuzz_terminated(c->backend, sizeof c->backend) && one_of(c->backend, backends, 3),
               "backend");
    FUZZ_CHECK(fuzz_terminated(c->log_level, sizeof c->log_level) &&
                   one_of(c->log_level, levels, 4),
               "log-level");
    const struct {
        const char *name;
        int v, lo, hi;
    } ints[] = {
        {"gpu-workers", c->gpu_workers, 1, 64},      {"synth-workers", c->synth_workers, 0, 1024}, /* 0: auto */
        {"finalizers", c->finalizers, 0, 256},       {"queue-depth", c->queue_depth, 1, 1024},
        {"threads", c->threads, 0, 4096},            {"max-conns", c->max_conns, 1, 65536},
        {"proof-ttl", c->proof_ttl, 1, 31536000},    {"fetch-grace", c->fetch_grace, 0, 31536000},
        {"witgen-timeout", c->witgen_timeout, 1, 86400}, {"batch-max", c->batch_max, 1, 16},
        {"conn-timeout", c->conn_timeout, 1, 86400}, {"lease", c->lease, 1, 3600},
        {"retry-max", c->retry_max, 1, 3600},
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        FUZZ_CHECK(ints[i].v >= ints[i].lo && ints[i].v <= ints[i].hi, "%s = %d", ints[i].name,
                   ints[i].v);
    FUZZ_CHECK(c->n_circuits >= 0 && c->n_circuits <= SERVE_MAX_CIRCUITS, "%d circuits",
               c->n_circuits);
    for (int i = 0; i < c->n_circuits; i++)
        FUZZ_CHECK(fuzz_terminated(c->circuit[i], sizeof c->circuit[i]) && c->circuit[i][0],
                   "circuit %d", i);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static serve_config c; /* 140 KB: not on the stack */
    char err[CUZK_ERRLEN], want[300];
    const char *path = fuzz_file(data, size);

    serve_config_defaults(&c);
    check_config(&c);
    memset(err, 0, sizeof err);
    cuzk_err rc = serve_config_load_file(&c, path, err);
    if (rc) {
        snprintf(want, sizeof want, "config %s:", path);
        FUZZ_CHECK(rc == CUZK_EINVAL && fuzz_terminated(err, sizeof err) &&
                       !strncmp(err, want, strlen(want)),
                   "rc %d: %s", (int)rc, err);
    }
    check_config(&c);

    const char *nul = memchr(data, 0, size);
    if (nul) {
        size_t rest = size - (size_t)(nul + 1 - (const char *)data);
        char *name = strndup((const char *)data, (size_t)(nul - (const char *)data));
        char *value = strndup(nul + 1, rest);
        FUZZ_CHECK(name && value, "out of memory");
        serve_config_defaults(&c);
        memset(err, 0, sizeof err);
        rc = serve_config_set(&c, name, value, err);
        if (rc)
            FUZZ_CHECK(rc == CUZK_EINVAL && fuzz_terminated(err, sizeof err) && err[0],
                       "rc %d: %s", (int)rc, err);
        check_config(&c);
        free(name);
        free(value);
    }
    return 0;
}
