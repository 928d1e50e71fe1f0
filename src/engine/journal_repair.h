/* journal_repair.h - `cuzk journal check` and `cuzk journal recover`: what to do with a
 * damaged SQLite journal (DATA/journal.db) that the daemon refuses to start on.
 *
 * Both read the journal row by row, tolerating damage: a table is walked in rowid order,
 * and where SQLite cannot read on (a damaged page) the walk skips ahead one rowid at a
 * time until it can, up to the table's largest rowid; so every row on an undamaged page is
 * read, whatever else is broken. Each row read is checked against its checksum
 * (store_sqlite.h). What cannot be read through the schema at all (a damaged sqlite_master
 * page) is lost to both.
 *
 * journal_check reads and writes nothing else: SQLite's integrity_check, then every row.
 *
 * journal_recover copies every job whose record can still be read into a fresh journal,
 * keeping its id (and the id sequence, so a lost job's id is never given out again):
 *   - a partition whose proof is missing or fails its checksum goes back to QUEUED (its
 *     proof dropped), and its job, unless FAILED or CANCELED, back to QUEUED: the daemon
 *     proves it again at its next start;
 *   - a job with a partition record that is lost (unreadable, or failing its checksum:
 *     its witness path is unknown) is kept as FAILED saying which, so clients learn it;
 *   - a job whose own record is lost is reported (its id, where its partition records
 *     name it) and left out.
 * The damaged file (with its -wal) is set aside as journal.db.damaged-<YYYYmmdd-HHMMSS>,
 * never changed; the fresh journal takes its name. The daemon must not be running.
 */
#ifndef CUZK_ENGINE_JOURNAL_REPAIR_H
#define CUZK_ENGINE_JOURNAL_REPAIR_H

#include <stdint.h>

#include "util/err.h"

typedef struct journal_report {
    int version;                /* schema version (PRAGMA user_version); -1 when unreadable */
    int checksums;              /* 1: the rows carry checksums (version 3 and later) */
    int64_t structure_problems; /* problems integrity_check named (0: "ok") */
    int64_t read_errors;        /* places in a table where SQLite could not read on (skipped) */
    int tables_unreadable;      /* of jobs and parts, tables that could not be read at all */
    int jobs_unreadable;        /* 1: part of the jobs table could not be read (jobs there that no
                                   partition record names cannot be listed) */
    int64_t jobs, parts, proofs; /* records read whose checksum holds (proofs of DONE partitions) */
    int64_t jobs_bad, parts_bad, proofs_bad; /* records read that fail it (proofs: or are missing) */
    int64_t parts_missing;      /* partitions of sound job records without a sound record */
    int64_t jobs_orphaned;      /* jobs known only from partition records (their own record unreadable) */
    /* journal_recover: jobs in the fresh journal, and those left out */
    int64_t kept, requeued, failed, lost;
    int64_t parts_requeued;     /* partitions back to QUEUED (their proofs were damaged) */
    char set_aside[1100];       /* where the damaged file went */
} journal_report;

/* 1 when the report names any damage */
int journal_report_damaged(const journal_report *r);

/* receives one line per damaged thing found (no newline) */
typedef void (*journal_note_fn)(void *ctx, const char *line);

/* CUZK_ENOTFOUND when there is no journal at path; other errors when it cannot be read at all */
cuzk_err journal_check(const char *path, journal_report *r, journal_note_fn note, void *ctx, char *err);
cuzk_err journal_recover(const char *path, journal_report *r, journal_note_fn note, void *ctx, char *err);

#endif
