/* cmd_journal.c - `cuzk journal check` and `cuzk journal recover`: the way out when the
 * daemon's job journal (DATA/journal.db) is damaged and `cuzk serve` refuses to start.
 *
 *   check    SQLite's integrity_check and every row's checksum; prints what is damaged and
 *            a summary. Exit 0 when the journal is sound, 1 when it is damaged.
 *   recover  copies every job that can still be read into a fresh journal, re-queues the
 *            partitions whose proofs were lost or damaged, sets the damaged file aside
 *            (journal.db.damaged-<time>) and says what was lost. The daemon must be stopped.
 * The work is in engine/journal_repair.c; docs/DAEMON.md, "Journal integrity".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "engine/engine.h"
#include "engine/journal_repair.h"
#include "server/client.h"

#define NOTES_MAX 200 /* damaged things listed one per line; the rest are counted */

typedef struct notes {
    int n;
} notes;

static void note_print(void *ctx, const char *line)
{
    notes *nb = ctx;
    if (nb->n++ < NOTES_MAX)
        printf("  %s\n", line);
}

static void notes_end(const notes *nb)
{
    if (nb->n > NOTES_MAX)
        printf("  ... and %d more\n", nb->n - NOTES_MAX);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: cuzk journal check [--data DIR]\n"
               "       cuzk journal recover [--data DIR]\n"
               "  check    runs SQLite's integrity_check and checks every row's checksum in DIR/journal.db;\n"
               "           exit 0 when it is sound, 1 when it is damaged\n"
               "  recover  copies every job that can still be read into a fresh journal (the daemon must be\n"
               "           stopped); partitions whose proofs were lost are proved again at the next start; the\n"
               "           damaged file is kept as DIR/journal.db.damaged-<time>\n"
               "  --data DIR   the daemon's data directory (default cuzk-data)\n");
}

static void summary(const char *path, const journal_report *r)
{
    printf("journal %s: schema version %d%s\n", path, r->version,
           r->checksums ? "" : " (its rows carry no checksums yet: the daemon adds them at its next start)");
    printf("  structure (integrity_check): %s", r->structure_problems ? "" : "ok\n");
    if (r->structure_problems)
        printf("%lld problem%s\n", (long long)r->structure_problems, r->structure_problems == 1 ? "" : "s");
    printf("  jobs: %lld sound, %lld damaged%s", (long long)r->jobs, (long long)r->jobs_bad,
           r->jobs_orphaned ? ", " : "\n");
    if (r->jobs_orphaned)
        printf("%lld known only from their partitions\n", (long long)r->jobs_orphaned);
    printf("  partitions: %lld sound, %lld damaged, %lld missing\n", (long long)r->parts, (long long)r->parts_bad,
           (long long)r->parts_missing);
    printf("  proofs: %lld sound, %lld damaged or missing\n", (long long)r->proofs, (long long)r->proofs_bad);
    if (r->read_errors || r->tables_unreadable)
        printf("  unreadable: %lld place%s in the tables%s\n", (long long)r->read_errors,
               r->read_errors == 1 ? "" : "s", r->tables_unreadable ? ", and whole tables" : "");
}

/* 1 when a daemon answers at the address it wrote to DIR/serve.addr */
static int daemon_running(const char *dir, char *addr, size_t cap)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/serve.addr", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int got = fgets(addr, (int)cap, f) != NULL;
    fclose(f);
    if (!got)
        return 0;
    addr[strcspn(addr, "\r\n")] = 0;
    httpc_reply r;
    char err[CUZK_ERRLEN];
    memset(&r, 0, sizeof r);
    cuzk_err e = httpc_request(&r, addr, getenv("CUZK_TOKEN"), "GET", "/status", NULL, NULL, 0, 5, err);
    int up = !e || r.connected;
    if (!e)
        httpc_reply_free(&r);
    return up;
}

int cmd_journal(int argc, char **argv)
{
    engine_config def;
    engine_config_defaults(&def);
    const char *dir = def.data_dir, *verb = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--data") && i + 1 < argc) {
            dir = argv[++i];
        } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (!verb && (!strcmp(argv[i], "check") || !strcmp(argv[i], "recover"))) {
            verb = argv[i];
        } else {
            fprintf(stderr, "cuzk journal: unexpected argument '%s'\n", argv[i]);
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (!verb) {
        usage(stderr);
        return EXIT_USAGE;
    }
    char path[1100], err[CUZK_ERRLEN] = "";
    snprintf(path, sizeof path, "%s/journal.db", dir);
    journal_report r;
    notes nb = {0};
    if (!strcmp(verb, "check")) {
        cuzk_err e = journal_check(path, &r, note_print, &nb, err);
        if (e) {
            fprintf(stderr, "cuzk journal check: %s\n", err);
            return e == CUZK_ENOTFOUND ? EXIT_INPUT : cli_exit_code(e);
        }
        notes_end(&nb);
        summary(path, &r);
        if (!journal_report_damaged(&r)) {
            printf("journal: sound\n");
            return 0;
        }
        printf("journal: DAMAGED. `cuzk journal recover --data %s` (with the daemon stopped) keeps every job that "
               "can still be read\n", dir);
        return EXIT_INVALID;
    }

    char addr[512];
    if (daemon_running(dir, addr, sizeof addr)) {
        fprintf(stderr, "cuzk journal recover: a daemon is serving %s at %s; stop it first\n", dir, addr);
        return EXIT_SERVER;
    }
    cuzk_err e = journal_check(path, &r, NULL, NULL, err);
    if (e) {
        fprintf(stderr, "cuzk journal recover: %s\n", err);
        return e == CUZK_ENOTFOUND ? EXIT_INPUT : cli_exit_code(e);
    }
    if (!journal_report_damaged(&r)) {
        summary(path, &r);
        printf("journal: sound, nothing to recover\n");
        return 0;
    }
    printf("journal %s is damaged; copying what can still be read into a fresh journal\n", path);
    int64_t structure = r.structure_problems; /* recover does not run integrity_check again */
    if ((e = journal_recover(path, &r, note_print, &nb, err))) {
        fprintf(stderr, "cuzk journal recover: %s\n", err);
        return cli_exit_code(e);
    }
    notes_end(&nb);
    r.structure_problems = structure;
    summary(r.set_aside, &r);
    printf("recovered into %s; the damaged journal is %s\n", path, r.set_aside);
    printf("  jobs kept as they were: %lld\n", (long long)r.kept);
    printf("  jobs re-queued: %lld (%lld partition%s whose proofs were lost %s proved again when the daemon "
           "starts)\n", (long long)r.requeued, (long long)r.parts_requeued, r.parts_requeued == 1 ? "" : "s",
           r.parts_requeued == 1 ? "is" : "are");
    printf("  jobs failed (partition records lost; submit them again): %lld\n", (long long)r.failed);
    printf("  jobs lost (their own record could not be read): %lld%s\n", (long long)r.lost,
           r.lost ? " (listed above)" : "");
    if (r.jobs_unreadable)
        printf("  (part of the jobs table could not be read: jobs there that no partition record names are lost "
               "and cannot be listed)\n");
    return 0;
}
