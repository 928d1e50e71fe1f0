/* store_sqlite.h - what the SQLite journal (store_sqlite.c) shares with its repair tools
 * (journal_repair.c): the schema, the column lists its row checksums cover, and the
 * checksum itself. Not part of the store interface (store.h).
 *
 * Row checksums. Each row keeps the CRC-64/XZ (util/crc64.h) of its columns in a fixed
 * order, each column serialized as one type byte and its value: 'i' + 8 bytes little-
 * endian (integer), 't' + 8-byte little-endian length + the bytes (text), 'b' likewise
 * (blob), 'r' + the 8 bytes of the double (real), 'n' (NULL). The type byte makes a value
 * whose storage class changed (a flipped serial type) fail too. Covered:
 *   jobs.crc          SQ_JOB_COLS    the whole job record
 *   parts.crc         SQ_PART_COLS   the partition record without its proof
 *   parts.proof_crc   SQ_PROOF_COLS  the proof and its public signals, bound to (job, idx);
 *                                    NULL while the partition has no proof
 * The SQL function cuzk_crc64(...) (sq_crc_register) computes the same value over its
 * arguments, so that writes compute the checksum in the statement that writes the row.
 */
#ifndef CUZK_ENGINE_STORE_SQLITE_H
#define CUZK_ENGINE_STORE_SQLITE_H

#include <sqlite3.h>
#include <stdint.h>

#define SQ_VERSION 3 /* PRAGMA user_version of the current schema */

#define SQ_JOB_COLS                                                                                \
    "id, kind, priority, state, zkey, idem, n_parts, submitted_ms, finished_ms, fetched_ms, error, circuit"
#define SQ_JOB_NCOLS 12
#define SQ_PART_COLS "job, idx, state, attempts, owned, witness"
#define SQ_PART_NCOLS 6
#define SQ_PROOF_COLS "job, idx, proof, public"
#define SQ_PROOF_NCOLS 4

extern const char sq_schema[]; /* CREATE TABLE IF NOT EXISTS ... (version SQ_VERSION) */

/* defines the SQL function cuzk_crc64(...) on db; SQLITE_OK or SQLite's error */
int sq_crc_register(sqlite3 *db);
/* the checksum of n result columns of st's current row, from column first on */
int64_t sq_row_crc(sqlite3_stmt *st, int first, int n);
/* 1 when an SQLite result code means a damaged file (SQLITE_CORRUPT, SQLITE_NOTADB) */
int sq_rc_damaged(int rc);

#endif
