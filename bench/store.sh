#!/usr/bin/env bash
# store.sh - the job store's own cost per partition: claim, renew and commit (p50, p99, max, in
# milliseconds) on a shared PostgreSQL store with 1 and 3 hosts claiming at once, and the commit
# of a proof on the SQLite journal (no claims there: one daemon owns its queue), measured by
# bench/store_bench.c against a throwaway PostgreSQL server (tests/pg_server.sh: Unix socket,
# fsync off, as the tests run it) and a SQLite journal in a temporary folder. Prints a table and
# saves it under bench/results/store-<date>.md with the machine and the commit.
#
#   bench/store.sh                     (after make: links build/libcuzk.a)
# Environment: BENCH_PARTS partitions per run [2000], BENCH_NOTE a line saved with the results.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
parts=${BENCH_PARTS:-2000}
lib=${BENCH_LIB:-build/libcuzk.a}
[ -f "$lib" ] || { echo "store.sh: $lib is missing (run make first)" >&2; exit 2; }
bin=build/store_bench
cc -std=c11 -D_GNU_SOURCE -O2 -Isrc $(pkg-config --cflags-only-I libpq 2>/dev/null) -pthread bench/store_bench.c \
    "$lib" -lmicrohttpd -ljansson -lsqlite3 -lpq -lm -o "$bin"

work=$(mktemp -d)
URL=$(tests/pg_server.sh start "$work/pg")
trap 'tests/pg_server.sh stop "$work/pg"; rm -rf "$work"' EXIT
PSQL=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)/psql

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD -- src bench 2>/dev/null || commit="$commit (with uncommitted changes)"
out=bench/results/store-$(date -u +%Y-%m-%d).md
{
    echo "# Job store cost per partition"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "- machine: $(hostname), $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), $(nproc) CPUs online"
    echo "- commit: $commit"
    echo "- PostgreSQL $("$PSQL" -X -A -t -d "$URL" -c 'SHOW server_version'), local Unix socket, fsync off (tests/pg_server.sh);"
    echo "  SQLite $(sqlite3 --version 2>/dev/null | cut -d' ' -f1 || echo '3'), WAL, synchronous FULL, on $(df -T "$work" | awk 'NR == 2 {print $2}')"
    echo "- $parts partitions (jobs of 10); a host = one thread with its own connection, claiming, renewing and"
    echo "  committing one partition at a time (bench/store_bench.c); milliseconds per operation"
    [ -z "${BENCH_NOTE:-}" ] || echo "- note: $BENCH_NOTE"
    echo
    echo "| store | hosts | operation | count | p50 ms | p99 ms | max ms |"
    echo "|---|---:|---|---:|---:|---:|---:|"
} > "$out.tmp"
for h in 1 3; do
    "$PSQL" -X -q -d "$URL" -c 'DROP TABLE IF EXISTS cuzk_parts, cuzk_jobs, cuzk_hosts, cuzk_schema_versions' > /dev/null 2>&1
    "$bin" postgres "$URL" "$h" "$parts" >> "$out.tmp"
done
"$bin" sqlite "$work/journal.db" 1 "$parts" >> "$out.tmp"
mv "$out.tmp" "$out"
cat "$out"
echo "saved $out"
