/* config.c - the daemon's option table and its parsers and printers (see config.h). */
#include "server/config.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* OPT_AUTO_INT: a whole number in choices' range, or "auto" (stored as 0) */
typedef enum { OPT_STR, OPT_INT, OPT_SIZE, OPT_ENUM, OPT_LIST, OPT_AUTO_INT } opt_type;

typedef struct opt_def {
    const char *name;    /* option name, used as --name and in config files */
    opt_type type;
    size_t off;          /* offset of the field in serve_config */
    size_t cap;          /* OPT_STR/OPT_ENUM: field size in bytes; OPT_LIST: the whole array */
    const char *def;     /* default, as text */
    const char *choices; /* OPT_ENUM: "a|b|c"; OPT_INT: "min..max" */
    const char *arg;     /* placeholder in --help */
    const char *help;
} opt_def;

#define F(field) offsetof(serve_config, field), sizeof(((serve_config *)0)->field)

static const opt_def opts[] = {
    {"listen", OPT_STR, F(listen), SERVE_DEFAULT_LISTEN, NULL, "ADDR",
     "where to serve: HOST:PORT (port 0 picks a free one) or unix:PATH; TCP on a non-loopback "
     "address requires --token"},
    {"data", OPT_STR, F(data), "cuzk-data", NULL, "DIR",
     "data directory: job journal, uploaded witnesses, caches, finished proofs"},
    {"store", OPT_STR, F(store), "", NULL, "URL",
     "job store: empty = the SQLite journal in the data dir; postgres://USER@HOST:PORT/DB (any libpq "
     "URL) = jobs, partitions and proofs in that PostgreSQL database (tables cuzk_*, created and "
     "migrated by cuzk). Every daemon on one database serves the same jobs and claims their "
     "partitions under leases (docs/DAEMON.md: Many hosts)"},
    {"upload-dir", OPT_STR, F(upload_dir), "", NULL, "DIR",
     "where uploaded witnesses and circuit inputs are written (its witness/ and input/); empty = the "
     "data dir. With a shared --store, a folder every host sees at the same path (NFS): a job "
     "submitted through one host may be proved by any"},
    {"lease", OPT_INT, F(lease), "30", "1..3600", "SECONDS",
     "with a shared --store: how long a host's claim on a partition lasts unless it renews it "
     "(every third of this); a host silent for longer loses its partitions to the others"},
    {"budget", OPT_SIZE, F(budget), "auto", NULL, "SIZE|auto",
     "host memory the pipeline may hold (e.g. 48G); auto = total memory minus a margin"},
    {"backend", OPT_ENUM, F(backend), "auto", "cpu|gpu|auto", "cpu|gpu|auto",
     "device stage backend; auto = GPU when one is usable, else CPU"},
    {"devices", OPT_STR, F(devices), "", NULL, "LIST",
     "GPUs that run the device stage: comma-separated CUDA ordinals, one logical device each "
     "(0,1; 0,0 = two logical devices on GPU 0); empty = every visible GPU. With the CPU backend "
     "the count sets the number of logical CPU devices"},
    {"gpu-workers", OPT_INT, F(gpu_workers), "2", "1..64", "N", "device workers per GPU"},
    {"synth-workers", OPT_AUTO_INT, F(synth_workers), "auto", "1..1024", "N|auto",
     "synthesis (witness load + a/b/c evaluation) workers; auto = max(2 x devices, cores / 2), "
     "at least 2 and at most queue-depth + 1"},
    {"finalizers", OPT_AUTO_INT, F(finalizers), "auto", "1..256", "N|auto",
     "finalizer (proof assembly + batch verification) threads, and one more kept for critical "
     "partitions; auto = cores / 8, at least 1 and at most 2 x devices"},
    {"queue-depth", OPT_INT, F(queue_depth), "4", "1..1024", "N",
     "synthesized partitions that may wait for a device worker"},
    {"threads", OPT_INT, F(threads), "0", "0..4096", "N",
     "CPU threads per compute pool; 0 = online CPUs / 2"},
    {"token", OPT_STR, F(token), "", NULL, "TOKEN",
     "bearer token clients must send (default: $CUZK_TOKEN); required off loopback"},
    {"max-body", OPT_SIZE, F(max_body), "256M", NULL, "SIZE",
     "largest request body accepted (uploaded witnesses count)"},
    {"max-conns", OPT_INT, F(max_conns), "256", "1..65536", "N",
     "HTTP connections open at once (TCP and Unix socket together, one thread each); past it a "
     "new connection is closed at once without a reply, counted and logged"},
    {"conn-timeout", OPT_INT, F(conn_timeout), "30", "1..86400", "SECONDS",
     "an HTTP connection that sends nothing for this long (idle, half a request, or between "
     "keep-alive requests) is closed; a long-poll await in progress is not idle"},
    {"proof-ttl", OPT_INT, F(proof_ttl), "86400", "1..31536000", "SECONDS",
     "how long finished proofs are kept when nobody fetches them"},
    {"fetch-grace", OPT_INT, F(fetch_grace), "600", "0..31536000", "SECONDS",
     "how long proofs are kept after they were first fetched"},
    {"log-level", OPT_ENUM, F(log_level), "info", "error|warn|info|debug", "LEVEL",
     "log verbosity on stderr"},
    {"circuit", OPT_LIST, F(circuit), "", NULL, "NAME=ZKEY,GENERATOR",
     "registers a circuit whose jobs may carry circuit inputs (JSON) instead of witnesses; "
     "GENERATOR is the circom C++ witness program or the circom .wasm (run with node and the "
     "generate_witness.js beside it). Repeatable"},
    {"node", OPT_STR, F(node), "node", NULL, "PATH",
     "node program that runs .wasm witness generators (a path, or a name looked up in $PATH)"},
    {"witgen-timeout", OPT_INT, F(witgen_timeout), "600", "1..86400", "SECONDS",
     "how long one witness generator may run before it is killed and its partition fails"},
    {"gpu-mem", OPT_SIZE, F(gpu_mem), "auto", NULL, "SIZE|auto",
     "device memory the keys of each GPU may use together (e.g. 16G); auto = the card's. A key "
     "that does not fit stays in page-locked host memory and streams to the GPU for each MSM"},
    {"batch-max", OPT_INT, F(batch_max), "10", "1..16", "N",
     "partitions of one streamed key proved in one pass over its bases, at most (what is ready, "
     "within --gpu-mem; never a critical partition)"},
    {"min-free", OPT_SIZE, F(min_free), "256M", NULL, "SIZE",
     "free space the data directory's file system must keep beyond a submission's own files "
     "(uploaded witnesses, inputs); a submission that would leave less is refused with HTTP 507. "
     "0 = no check"},
    {"retry-max", OPT_INT, F(retry_max), "30", "1..3600", "SECONDS",
     "longest wait between retries of a partition paused by a transient fault (disk full, device "
     "or host memory exhausted); the wait starts at 1 s and doubles"},
};
#define N_OPTS (sizeof opts / sizeof opts[0])

static const opt_def *opt_find(const char *name)
{
    for (size_t i = 0; i < N_OPTS; i++)
        if (!strcmp(opts[i].name, name))
            return &opts[i];
    return NULL;
}

cuzk_err size_parse(uint64_t *out, const char *s, char *err)
{
    if (!strcmp(s, "auto")) {
        *out = 0;
        return CUZK_OK;
    }
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (end == s || errno || !(v >= 0)) /* also refuses "nan", which strtod accepts */
        return cuzk_errf(err, CUZK_EINVAL, "'%s' is not a size (e.g. 512M, 16G, auto)", s);
    while (*end == ' ')
        end++;
    double mul = 1;
    switch (toupper((unsigned char)*end)) {
    case 0: break;
    case 'B': break;
    case 'K': mul = 1024.0; end++; break;
    case 'M': mul = 1024.0 * 1024; end++; break;
    case 'G': mul = 1024.0 * 1024 * 1024; end++; break;
    case 'T': mul = 1024.0 * 1024 * 1024 * 1024; end++; break;
    default: return cuzk_errf(err, CUZK_EINVAL, "'%s': unknown size unit (use K, M, G, T)", s);
    }
    if (mul > 1 && toupper((unsigned char)*end) == 'I')
        end++;
    if (toupper((unsigned char)*end) == 'B')
        end++;
    if (*end)
        return cuzk_errf(err, CUZK_EINVAL, "'%s' is not a size (e.g. 512M, 16G, auto)", s);
    double bytes = v * mul;
    if (bytes >= 18446744073709551615.0)
        return cuzk_errf(err, CUZK_EINVAL, "'%s' is too large", s);
    *out = (uint64_t)bytes;
    return CUZK_OK;
}

void size_format(char *out, size_t cap, uint64_t bytes)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(out, cap, "%llu B", (unsigned long long)bytes);
    else
        snprintf(out, cap, "%.1f %s", v, units[u]);
}

static cuzk_err opt_apply(serve_config *c, const opt_def *o, const char *value, char *err)
{
    char *field = (char *)c + o->off;
    switch (o->type) {
    case OPT_STR:
        if (strlen(value) >= o->cap)
            return cuzk_errf(err, CUZK_EINVAL, "--%s: value is longer than %zu bytes", o->name,
                             o->cap - 1);
        strcpy(field, value);
        return CUZK_OK;
    case OPT_ENUM: {
        size_t n = strlen(value);
        const char *p = o->choices;
        while (*p) {
            const char *bar = strchr(p, '|');
            size_t len = bar ? (size_t)(bar - p) : strlen(p);
            if (len == n && !strncmp(p, value, n) && n < o->cap) {
                strcpy(field, value);
                return CUZK_OK;
            }
            p += len + (bar ? 1 : 0);
        }
        return cuzk_errf(err, CUZK_EINVAL, "--%s: '%s' is not one of %s", o->name, value,
                         o->choices);
    }
    case OPT_AUTO_INT:
        if (!strcmp(value, "auto")) {
            *(int *)field = 0;
            return CUZK_OK;
        }
        /* fall through */
    case OPT_INT: {
        char *end;
        errno = 0;
        long v = strtol(value, &end, 10);
        long lo = 0, hi = 0;
        sscanf(o->choices, "%ld..%ld", &lo, &hi);
        if (end == value || *end || errno)
            return cuzk_errf(err, CUZK_EINVAL, "--%s: '%s' is not a whole number%s", o->name, value,
                             o->type == OPT_AUTO_INT ? " or auto" : "");
        if (v < lo || v > hi)
            return cuzk_errf(err, CUZK_EINVAL, "--%s: %ld is outside %ld..%ld", o->name, v, lo, hi);
        *(int *)field = (int)v;
        return CUZK_OK;
    }
    case OPT_LIST: {
        /* only --circuit is a list: c->circuit[c->n_circuits++] */
        if (!*value)
            return CUZK_OK;
        if (c->n_circuits >= SERVE_MAX_CIRCUITS)
            return cuzk_errf(err, CUZK_EINVAL, "--%s: at most %d entries", o->name, SERVE_MAX_CIRCUITS);
        if (strlen(value) >= sizeof c->circuit[0])
            return cuzk_errf(err, CUZK_EINVAL, "--%s: value is longer than %zu bytes", o->name,
                             sizeof c->circuit[0] - 1);
        strcpy(c->circuit[c->n_circuits++], value);
        return CUZK_OK;
    }
    case OPT_SIZE: {
        uint64_t v;
        cuzk_err e = size_parse(&v, value, err);
        if (e) {
            cuzk_err_prefix(err, "--%s", o->name);
            return e;
        }
        *(uint64_t *)field = v;
        return CUZK_OK;
    }
    }
    return cuzk_errf(err, CUZK_EINTERNAL, "--%s: bad option type", o->name);
}

void serve_config_defaults(serve_config *c)
{
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < N_OPTS; i++)
        opt_apply(c, &opts[i], opts[i].def, NULL);
    const char *tok = getenv("CUZK_TOKEN");
    if (tok && strlen(tok) < sizeof c->token)
        strcpy(c->token, tok);
}

cuzk_err serve_config_set(serve_config *c, const char *name, const char *value, char *err)
{
    const opt_def *o = opt_find(name);
    if (!o)
        return cuzk_errf(err, CUZK_EINVAL, "unknown option '%s' (cuzk serve --help lists them)",
                         name);
    return opt_apply(c, o, value, err);
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = 0;
    return s;
}

cuzk_err serve_config_load_file(serve_config *c, const char *path, char *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return cuzk_errf(err, CUZK_EIO, "config %s: %s", path, strerror(errno));
    char line[1024];
    int lineno = 0;
    cuzk_err e = CUZK_OK;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        char *s = trim(line);
        if (!*s)
            continue;
        char *sep = s + strcspn(s, "= \t");
        char *value = sep;
        if (*sep) {
            *sep = 0;
            value = trim(sep + 1);
            if (*value == '=')
                value = trim(value + 1);
        }
        if (!*value) {
            e = cuzk_errf(err, CUZK_EINVAL, "config %s:%d: '%s' has no value", path, lineno, s);
            break;
        }
        e = serve_config_set(c, s, value, err);
        if (e) {
            cuzk_err_prefix(err, "config %s:%d", path, lineno);
            break;
        }
    }
    fclose(f);
    return e;
}

cuzk_err serve_config_from_args(serve_config *c, int argc, char **argv, int *help, char *err)
{
    *help = 0;
    /* the config file first, so that command-line options override it */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--config")) {
            if (i + 1 >= argc)
                return cuzk_errf(err, CUZK_EINVAL, "--config needs a file");
            cuzk_err e = serve_config_load_file(c, argv[i + 1], err);
            if (e)
                return e;
        } else if (!strncmp(argv[i], "--config=", 9)) {
            cuzk_err e = serve_config_load_file(c, argv[i] + 9, err);
            if (e)
                return e;
        }
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            *help = 1;
            return CUZK_OK;
        }
        if (!strcmp(a, "--help-markdown")) {
            *help = 2;
            return CUZK_OK;
        }
        if (strncmp(a, "--", 2))
            return cuzk_errf(err, CUZK_EINVAL, "unexpected argument '%s'", a);
        char name[64];
        const char *value;
        const char *eq = strchr(a, '=');
        if (eq) {
            snprintf(name, sizeof name, "%.*s", (int)(eq - a - 2), a + 2);
            value = eq + 1;
        } else {
            snprintf(name, sizeof name, "%s", a + 2);
            if (i + 1 >= argc)
                return cuzk_errf(err, CUZK_EINVAL, "--%s needs a value", name);
            value = argv[++i];
        }
        if (!strcmp(name, "config"))
            continue;
        cuzk_err e = serve_config_set(c, name, value, err);
        if (e)
            return e;
    }
    return CUZK_OK;
}

void serve_config_print_help(FILE *f)
{
    fprintf(f, "usage: cuzk serve [--config FILE] [options]\n\n"
               "Runs the proving daemon. Every option can also be set in the config file as\n"
               "'name = value'; the command line wins over the file.\n\n");
    for (size_t i = 0; i < N_OPTS; i++) {
        char left[64];
        snprintf(left, sizeof left, "--%s %s", opts[i].name, opts[i].arg);
        fprintf(f, "  %-28s %s", left, opts[i].help);
        if (opts[i].def[0])
            fprintf(f, " [default: %s]", opts[i].def);
        fprintf(f, "\n");
    }
    fprintf(f, "  %-28s %s\n", "--config FILE", "read options from FILE first");
    fprintf(f, "  %-28s %s\n", "--help-markdown", "print this table in Markdown");
}

/* writes s with '|' escaped, so that it stays inside one Markdown table cell */
static void md_cell(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputc('\\', f);
        fputc(*s, f);
    }
}

void serve_config_print_markdown(FILE *f)
{
    fprintf(f, "| option | value | default | meaning |\n|---|---|---|---|\n");
    for (size_t i = 0; i < N_OPTS; i++) {
        fprintf(f, "| `--%s` | `", opts[i].name);
        md_cell(f, opts[i].arg);
        fprintf(f, "` | ");
        if (opts[i].def[0]) {
            fputc('`', f);
            md_cell(f, opts[i].def);
            fputc('`', f);
        } else {
            fputs("(none)", f);
        }
        fputs(" | ", f);
        md_cell(f, opts[i].help);
        fputs(" |\n", f);
    }
}
