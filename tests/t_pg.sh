#!/usr/bin/env bash
# t_pg.sh - `cuzk serve --store postgres://...` against a real PostgreSQL server that
# tests/pg_server.sh starts in a temporary folder as an unprivileged user (SKIP when PostgreSQL
# is not installed), on the CPU backend, black box:
#   - submit/await (paths, and --upload of the witness bytes), both curves, several partitions:
#     every proof passes `snarkjs groth16 verify`; the jobs, partitions and proofs are rows in
#     the database (cuzk_jobs, cuzk_parts), the schema version is recorded;
#   - an idempotency key returns the same job;
#   - kill -9 mid-run, restart: every acknowledged job completes once, proofs verify;
#   - PostgreSQL restarted during a run: the daemon reconnects, the job completes, nothing
#     acknowledged is lost;
#   - a second daemon on the same store is refused (one daemon per store), and so is a store
#     URL of another kind; the URL's password never shows in the refusal.
# Usage: CUZK=bin/cuzk tests/t_pg.sh   (normally through tests/run.sh)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/dashboard/daemon_helpers.sh"

BN=$repo/tests/data/bn128/merkle
BLS=$repo/tests/data/bls12381/merkle

pgstate=$tmp/pg
URL=$(tests/pg_server.sh start "$pgstate")
rc=$?
if [ $rc = 77 ]; then echo "$URL"; exit 77; fi
if [ $rc != 0 ]; then echo "FAIL: could not start PostgreSQL"; exit 1; fi
stop_pg() { tests/pg_server.sh stop "$pgstate"; }
trap 'cleanup_daemon; stop_pg' EXIT
PSQL=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)/psql
sql() { "$PSQL" -X -q -A -t -d "$URL" -c "$1" 2>&1; }

start_daemon a --store "$URL" || finish
grep -q "store postgres" "$D_LOG"
check "the daemon says it runs on the postgres store" [ $? = 0 ]

# submit_await DESC FIXTURE N [submit options]: sets LAST_ID; checks every proof with snarkjs
submit_await() {
    local desc=$1 fx=$2 n=$3; shift 3
    local w=() i id ok=1
    for i in $(seq 1 "$n"); do w+=(--witness "$fx/witness.wtns"); done
    id=$("$CUZK" submit --server "$D_ADDR" --zkey "$fx/circuit.zkey" "${w[@]}" "$@" 2> "$tmp/submit.err")
    if [ -z "$id" ]; then fail "$desc: submit: $(cat "$tmp/submit.err")"; return 1; fi
    if ! "$CUZK" await --server "$D_ADDR" --timeout 120 "$id" --out "$tmp/out-$id" > "$tmp/await.err" 2>&1; then
        fail "$desc: await $id: $(cat "$tmp/await.err")"; return 1
    fi
    for i in $(seq 0 $((n - 1))); do
        sj_verify "$fx/vk.json" "$tmp/out-$id/public-$i.json" "$tmp/out-$id/proof-$i.json" || { ok=0; cat "$tmp/.sj"; }
    done
    check "$desc: $id, $n partition(s)${SNARKJS:+, snarkjs verifies all}" [ $ok = 1 ]
    LAST_ID=$id
}

submit_await "bn128 merkle on the postgres store" "$BN" 3 --idempotency-key pg-1
first=$LAST_ID
submit_await "bls12381 merkle, uploaded witnesses" "$BLS" 2 --upload

n=${first#j-}
check "the job is a row of cuzk_jobs, done ($(sql "SELECT state FROM cuzk_jobs WHERE id = $n"))" \
    [ "$(sql "SELECT state FROM cuzk_jobs WHERE id = $n")" = 2 ]
check "its 3 proofs are in cuzk_parts" \
    [ "$(sql "SELECT count(*) FROM cuzk_parts WHERE job = $n AND state = 6 AND proof LIKE '%pi_a%'")" = 3 ]
check "the schema version is recorded" [ "$(sql "SELECT max(version) FROM cuzk_schema_versions")" = 1 ]
again=$("$CUZK" submit --server "$D_ADDR" --zkey "$BN/circuit.zkey" --witness "$BN/witness.wtns" --idempotency-key pg-1)
check "the idempotency key returns the same job ($again)" [ "$again" = "$first" ]

# a second daemon on the same store is refused, and so is a store URL of another kind
"$CUZK" serve --listen 127.0.0.1:0 --data "$tmp/b" --backend cpu --store "$URL" > "$tmp/b.out" 2>&1 &
bpid=$!
for i in $(seq 1 100); do kill -0 $bpid 2> /dev/null || break; sleep 0.1; done
if kill -0 $bpid 2> /dev/null; then kill -KILL $bpid; fail "a second daemon on the store kept running"; else
    wait $bpid; brc=$?
    grep -q "another cuzk daemon" "$tmp/b.out"
    check "a second daemon on the same store is refused (exit $brc): $(head -c 160 "$tmp/b.out")" [ $? = 0 ] && [ $brc != 0 ]
fi
"$CUZK" serve --listen 127.0.0.1:0 --data "$tmp/c" --backend cpu --store "mysql://x" > "$tmp/c.out" 2>&1
check "a store URL of another kind is refused ($(head -c 120 "$tmp/c.out"))" grep -q "postgres://" "$tmp/c.out"
"$CUZK" serve --listen 127.0.0.1:0 --data "$tmp/c" --backend cpu \
    --store "postgresql://cuzk:pw-s3cret@127.0.0.1:1/x?connect_timeout=2" > "$tmp/c.out" 2>&1
crc=$?
check "an unreachable server is refused without showing the password (exit $crc)" \
    [ $crc != 0 ] && ! grep -q s3cret "$tmp/c.out" && grep -q "cannot connect" "$tmp/c.out"

# kill -9 mid-run, restart on the same store: every acknowledged job completes once
ids=()
for j in 1 2 3; do
    id=$("$CUZK" submit --server "$D_ADDR" --zkey "$BN/circuit.zkey" --witness "$BN/witness.wtns" \
        --witness "$BN/witness.wtns" --witness "$BN/witness.wtns" --idempotency-key "crash-$j")
    [ -n "$id" ] && ids+=("$id")
done
sleep 0.3
kill_daemon
check "3 jobs acknowledged before kill -9" [ ${#ids[@]} = 3 ]
start_daemon a --store "$URL" || finish
for id in "${ids[@]}"; do
    ok=0
    if "$CUZK" await --server "$D_ADDR" --timeout 120 "$id" --out "$tmp/out-$id" > /dev/null 2>&1; then
        sj_verify "$BN/vk.json" "$tmp/out-$id/public-2.json" "$tmp/out-$id/proof-2.json" && ok=1
    fi
    check "$id completed after kill -9 and restart" [ $ok = 1 ]
done
check "no job was duplicated ($(sql "SELECT count(*) FROM cuzk_jobs WHERE idem LIKE 'crash-%'"))" \
    [ "$(sql "SELECT count(*) FROM cuzk_jobs WHERE idem LIKE 'crash-%'")" = 3 ]

# PostgreSQL restarted during a run: the daemon reconnects, nothing acknowledged is lost
w=()
for i in 1 2 3 4 5 6; do w+=(--witness "$BN/witness.wtns"); done
id=$("$CUZK" submit --server "$D_ADDR" --zkey "$BN/circuit.zkey" "${w[@]}")
sleep 0.2
tests/pg_server.sh restart "$pgstate"
check "PostgreSQL restarted during the run" [ $? = 0 ]
id2=$("$CUZK" submit --server "$D_ADDR" --zkey "$BN/circuit.zkey" --witness "$BN/witness.wtns")
check "a submission right after the restart is acknowledged ($id2)" [ -n "$id2" ]
for x in "$id" "$id2"; do
    ok=0
    "$CUZK" await --server "$D_ADDR" --timeout 120 "$x" --out "$tmp/out-$x" > "$tmp/await.err" 2>&1 &&
        sj_verify "$BN/vk.json" "$tmp/out-$x/public-0.json" "$tmp/out-$x/proof-0.json" && ok=1
    check "$x completed across the PostgreSQL restart" [ $ok = 1 ]
done
check "the daemon saw the connection go and reconnected" grep -q "reconnected" "$D_LOG"
check "its proofs are in the database" \
    [ "$(sql "SELECT count(*) FROM cuzk_parts WHERE job = ${id#j-} AND state = 6")" = 6 ]
stop_daemon
check "the daemon stops cleanly on SIGTERM (exit $D_RC)" [ "$D_RC" = 0 ]

finish
