/* config.h - the daemon's options: one table (name, type, default, help) that fills
 * serve_config from defaults, a config file and the command line, prints `--help`, and
 * prints the Markdown table in docs/DAEMON.md (`cuzk serve --help-markdown`).
 *
 * Precedence: built-in default < config file (--config) < command line. A config file
 * holds one `name = value` per line (`name value` also works); `#` starts a comment.
 */
#ifndef CUZK_SERVER_CONFIG_H
#define CUZK_SERVER_CONFIG_H

#include <stdint.h>
#include <stdio.h>

#include "util/err.h"

#define SERVE_DEFAULT_LISTEN "127.0.0.1:9820"
#define SERVE_MAX_CIRCUITS 64     /* --circuit registrations */
#define SERVE_CIRCUIT_MAX 2200    /* bytes of one "NAME=ZKEY,GENERATOR" incl. NUL */

typedef struct serve_config {
    char listen[256];      /* "HOST:PORT" or "unix:PATH" */
    char data[512];        /* data directory (journal, caches, proofs) */
    char store[1024];      /* "" = the SQLite journal in data; or a postgres:// URL */
    char upload_dir[512];  /* "" = data; where uploaded witnesses and circuit inputs are written */
    int lease;             /* seconds a claim on a partition lasts unless renewed (shared store) */
    uint64_t budget;       /* host memory budget in bytes; 0 = auto (total memory - margin) */
    char backend[8];       /* "cpu", "gpu" or "auto" */
    char devices[256];     /* "" = every visible GPU; else CUDA ordinals "0,1" (repeats = logical devices) */
    int gpu_workers;       /* workers per GPU device (>= 1) */
    int synth_workers;     /* synthesis worker threads (>= 1); 0 = auto (engine_sizing_auto) */
    int finalizers;        /* finalizer (assemble + verify) threads (>= 1); 0 = auto */
    int queue_depth;       /* partitions allowed to wait in the device queue (>= 1) */
    int threads;           /* CPU threads per backend pool; 0 = online CPUs / 2 */
    char token[256];       /* bearer token; empty = none (allowed only on loopback/unix) */
    uint64_t max_body;     /* largest accepted request body, bytes */
    int max_conns;         /* HTTP connections open at once (TCP or Unix), at most */
    int conn_timeout;      /* seconds an HTTP connection may send nothing before it is closed */
    int proof_ttl;         /* seconds a finished job's proofs are kept unfetched */
    int fetch_grace;       /* seconds proofs are kept after their first fetch */
    char log_level[8];     /* error, warn, info, debug */
    char circuit[SERVE_MAX_CIRCUITS][SERVE_CIRCUIT_MAX]; /* "NAME=ZKEY,GENERATOR" registrations */
    int n_circuits;        /* entries of circuit[] (repeatable option: file and command line add up) */
    char node[512];        /* node program for .wasm witness generators (path or name in $PATH) */
    int witgen_timeout;    /* seconds one witness generator may run */
    uint64_t gpu_mem;      /* device memory the keys of each GPU may use; 0 = the card's */
    int batch_max;         /* partitions of a streamed key proved in one pass over its bases, at most */
    uint64_t min_free;     /* bytes the data dir must keep free beyond a submission's files; 0 = no check */
    int retry_max;         /* seconds, longest wait between retries of a paused partition */
} serve_config;

void serve_config_defaults(serve_config *c);
/* sets one option by its name (without leading dashes) from a string */
cuzk_err serve_config_set(serve_config *c, const char *name, const char *value, char *err);
cuzk_err serve_config_load_file(serve_config *c, const char *path, char *err);
/* Parses argv (argv[0] is "serve"): --config FILE first, then every --name VALUE or
 * --name=VALUE. *help is set to 1 for --help and 2 for --help-markdown. */
cuzk_err serve_config_from_args(serve_config *c, int argc, char **argv, int *help, char *err);

void serve_config_print_help(FILE *f);
void serve_config_print_markdown(FILE *f);

/* "auto" -> 0; "1024", "512K", "8M", "16G", "1T" (binary units, optional "iB"/"B") -> bytes */
cuzk_err size_parse(uint64_t *out, const char *s, char *err);
/* "12.5 GiB"-style text */
void size_format(char *out, size_t cap, uint64_t bytes);

#endif
