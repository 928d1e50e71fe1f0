#!/usr/bin/env bash
# t_pg.sh - `cuzk serve --store postgres://...`: three daemons (A, B, C) on the CPU backend
# sharing one real PostgreSQL server that tests/pg_server.sh starts in a temporary folder as an
# unprivileged user (SKIP when PostgreSQL is not installed), with --lease 3 (C: store, lease and
# upload-dir from its config file). Black box; every proof is checked by `snarkjs groth16
# verify`:
#   - submit through A, await through B, status through C; uploaded witnesses through B (into
#     the shared --upload-dir), await through C; the rows in the database (proofs, who proved
#     them, schema version 2, three hosts heartbeating); the fleet in /status (every host,
#     heartbeat age, which host proved each partition), /metrics, `cuzk status` and the
#     dashboard (headless Chromium, when installed);
#   - a stored proof damaged in the database: found by the host that hands it out, proved
#     again by the fleet, await gets sound proofs;
#   - two hosts submit with the same idempotency key at once: one job;
#   - cancel through C of a job submitted through A: canceled everywhere, nothing committed
#     afterwards;
#   - kill -9 of the only host while it holds leases: the others (started afterwards) take the
#     partitions over once the leases expire; each partition has exactly one committed proof;
#   - SIGSTOP of the only host past its lease, another host finishes the job, SIGCONT: the
#     stalled host's late results are refused and nothing it proved is stored;
#   - PostgreSQL restarted during a run: the daemons reconnect, every acknowledged job
#     completes; SIGTERM stops each daemon cleanly;
#   - a store URL of another kind, and an unreachable server (its password never shown), are
#     refused at start.
# Usage: CUZK=bin/cuzk tests/t_pg.sh   (normally through tests/run.sh)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/dashboard/daemon_helpers.sh"

BN=$repo/tests/data/bn128/merkle
BLS=$repo/tests/data/bls12381/merkle
# partitions of the failover drills: fewer under a sanitizer build (proving is 10x slower there)
P=8
grep -qa '__asan_init\|__tsan_init' "$CUZK" && P=4

pgstate=$tmp/pg
URL=$(tests/pg_server.sh start "$pgstate")
rc=$?
if [ $rc = 77 ]; then echo "$URL"; exit 77; fi
if [ $rc != 0 ]; then echo "FAIL: could not start PostgreSQL"; exit 1; fi
PSQL=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)/psql
sql() { "$PSQL" -X -q -A -t -d "$URL" -c "$1" 2>&1; }

declare -A PID ADDR
# start_host NAME: a daemon on the shared store, data dir $tmp/NAME; sets PID[NAME], ADDR[NAME]
start_host() {
    local h=$1 i
    mkdir -p "$tmp/$h"
    rm -f "$tmp/$h/serve.addr"
    if [ "$h" = c ]; then # C reads the store from its config file
        printf 'store = %s\nlease = 3\nupload-dir = %s\n' "$URL" "$tmp/shared" > "$tmp/c.conf"
        "$CUZK" serve --config "$tmp/c.conf" --listen 127.0.0.1:0 --data "$tmp/$h" --backend cpu --threads 1 \
            >> "$tmp/$h.log" 2>&1 &
    else
        "$CUZK" serve --listen 127.0.0.1:0 --data "$tmp/$h" --backend cpu --threads 1 --store "$URL" --lease 3 \
            --upload-dir "$tmp/shared" >> "$tmp/$h.log" 2>&1 &
    fi
    PID[$h]=$!
    for i in $(seq 1 300); do
        [ -s "$tmp/$h/serve.addr" ] && { ADDR[$h]=$(cat "$tmp/$h/serve.addr"); return 0; }
        kill -0 "${PID[$h]}" 2> /dev/null || { fail "host $h exited during start-up"; tail -5 "$tmp/$h.log"; return 1; }
        sleep 0.1
    done
    fail "host $h did not start"; return 1
}
stop_host() {
    kill -TERM "${PID[$1]}" 2> /dev/null
    wait "${PID[$1]}" 2> /dev/null
    HOST_RC=$?
    PID[$1]=
}
cleanup_all() {
    local h
    for h in "${!PID[@]}"; do
        [ -n "${PID[$h]}" ] && { kill -CONT "${PID[$h]}"; kill -KILL "${PID[$h]}"; } 2> /dev/null
    done
    tests/pg_server.sh stop "$pgstate"
}
trap cleanup_all EXIT

# submit HOST N FIXTURE [options]: prints the job id
submit() {
    local h=$1 n=$2 fx=$3 w=() i; shift 3
    for i in $(seq 1 "$n"); do w+=(--witness "$fx/witness.wtns"); done
    "$CUZK" submit --server "${ADDR[$h]}" --zkey "$fx/circuit.zkey" "${w[@]}" "$@" 2>> "$tmp/submit.err"
}
# await_verify HOST ID N FIXTURE: 0 when the job is done through HOST and snarkjs accepts every proof
await_verify() {
    local h=$1 id=$2 n=$3 fx=$4 i
    rm -rf "$tmp/out-$id"
    "$CUZK" await --server "${ADDR[$h]}" --timeout 120 "$id" --out "$tmp/out-$id" > "$tmp/await.err" 2>&1 ||
        { cat "$tmp/await.err"; return 1; }
    for i in $(seq 0 $((n - 1))); do
        sj_verify "$fx/vk.json" "$tmp/out-$id/public-$i.json" "$tmp/out-$id/proof-$i.json" || { cat "$tmp/.sj"; return 1; }
    done
}
# wait_leases PID: until that daemon holds a lease on an unproved partition (10 s at most)
wait_leases() {
    local i
    for i in $(seq 1 200); do
        [ "$(sql "SELECT count(*) FROM cuzk_parts WHERE lease_host LIKE '%:$1' AND state = 0")" -gt 0 ] 2> /dev/null &&
            return 0
        sleep 0.05
    done
    return 1
}

start_host a && start_host b && start_host c || finish
grep -q "store postgres" "$tmp/a.log"
check "the daemons run on the postgres store" [ $? = 0 ]
check "C took store and lease from its config file" grep -q "shares the store (lease 3 s)" "$tmp/c.log"

# ------------------------------------------------------------ any host serves any job
id=$(submit a 3 "$BN" --idempotency-key pg-1)
first=$id
check "submit through A ($id)" [ -n "$id" ]
check "await through B: 3 partitions${SNARKJS:+, snarkjs verifies all}" await_verify b "$id" 3 "$BN"
D_ADDR=${ADDR[c]}
api GET "/v1/jobs/$id"
check "status through C: done, 3/3 ($(jget j.state) $(jget j.n_done))" [ "$(jget 'j.state + "/" + j.n_done')" = done/3 ]
n=${id#j-}
check "its 3 proofs are rows of cuzk_parts, each with the host that proved it" \
    [ "$(sql "SELECT count(*) FROM cuzk_parts WHERE job = $n AND state = 6 AND proof LIKE '%pi_a%' AND proved_by LIKE '%:%'")" = 3 ]
check "schema version 2 is recorded" [ "$(sql "SELECT max(version) FROM cuzk_schema_versions")" = 2 ]
check "three hosts heartbeat ($(sql "SELECT count(*) FROM cuzk_hosts WHERE heartbeat_ms > (extract(epoch from clock_timestamp()) * 1000)::bigint - 5000")) " \
    [ "$(sql "SELECT count(*) FROM cuzk_hosts WHERE heartbeat_ms > (extract(epoch from clock_timestamp()) * 1000)::bigint - 5000")" = 3 ]
api GET "/status"
check "/status through C shows the fleet: 3 hosts, each with its heartbeat age, C itself among them" \
    [ "$(jget 'j.store + " " + j.fleet.hosts.length + " " + j.fleet.hosts.every(h => h.heartbeat_age_s < 5 && h.devices === 1) + " " + j.fleet.hosts.filter(h => h.self).length')" = "postgres 3 true 1" ]
api GET "/v1/jobs/$first"
check "each partition says which host proved it ($(jget 'j.partitions.map(p => p.host).join(" ")'))" \
    [ "$(jget 'j.partitions.every(p => /:[0-9]+$/.test(p.host))')" = true ]
api GET "/metrics"
check "/metrics: cuzk_fleet_hosts 3, and each host's leases, busy share and heartbeat age" \
    bash -c "grep -q '^cuzk_fleet_hosts 3$' <<< \"\$1\" && [ \$(grep -c '^cuzk_fleet_host_heartbeat_age_seconds{host=' <<< \"\$1\") = 3 ]" _ "$BODY"
# a stored proof damaged behind the daemons' back: the host that hands it out finds it, the
# partition is proved again (by whichever host claims it), and await through that host gets
# sound proofs
sql "UPDATE cuzk_parts SET proof = replace(proof, '1', '2') WHERE job = ${first#j-} AND idx = 1" > /dev/null
check "await through C re-proves a damaged stored proof${SNARKJS:+, snarkjs verifies all}" await_verify c "$first" 3 "$BN"
check "C found the damage and had the partition proved again" grep -q "partition 1: journal: the proof of job .* fails its checksum.*proving it again" "$tmp/c.log"
"$CUZK" status --server "${ADDR[b]}" > "$tmp/status.txt" 2>&1
check "cuzk status through B lists the 3 hosts, B as this host" \
    [ "$(grep -c ' ago' "$tmp/status.txt")" = 3 ] && grep -q "(this host)" "$tmp/status.txt"
"$CUZK" status --server "${ADDR[b]}" "$first" > "$tmp/status.txt" 2>&1
check "cuzk status ID says which host proved each partition" [ "$(grep -c 'proved by ' "$tmp/status.txt")" = 3 ]
CHROME=
for x in chromium chromium-browser google-chrome; do command -v $x > /dev/null && { CHROME=$(command -v $x); break; }; done
if [ -n "$CHROME" ]; then
    timeout 90 "$CHROME" --headless --no-sandbox --disable-gpu --disable-background-networking --disable-dev-shm-usage \
        --no-first-run --user-data-dir="$tmp/chrome" --virtual-time-budget=3000 --dump-dom "http://${ADDR[c]}/" \
        > "$tmp/dom.html" 2> "$tmp/chrome.err"
    rows=$(node -e 'const h = require("fs").readFileSync(0, "utf8");
        const m = h.match(/<tbody id="fleet">([\s\S]*?)<\/tbody>/); const box = /<section[^>]*id="fleet-box"[^>]*>/.exec(h);
        console.log(m && box && !/hidden/.test(box[0]) ? (m[1].match(/<tr/g) || []).length + " " + (m[1].match(/this host/g) || []).length : "none")' < "$tmp/dom.html")
    check "the dashboard of C (headless Chromium) shows the fleet: 3 hosts, one of them itself ($rows)" [ "$rows" = "3 1" ]
else
    echo "note: Chromium is not installed: the dashboard's fleet view is not checked"
fi
id=$(submit b 2 "$BLS" --upload)
check "uploaded witnesses through B, await through C${SNARKJS:+, snarkjs verifies all}" await_verify c "$id" 2 "$BLS"
check "the uploads are in the shared --upload-dir, named by the host" \
    [ "$(sql "SELECT count(*) FROM cuzk_parts WHERE job = ${id#j-} AND witness LIKE '$tmp/shared/witness/w-%_${PID[b]}-%'")" = 2 ] &&
    [ "$(ls "$tmp/shared/witness" | grep -c "_${PID[b]}-")" = 2 ]

# ------------------------------------------------------------ one job per idempotency key
submit a 2 "$BN" --idempotency-key race > "$tmp/race-a" &
ra=$!
submit c 2 "$BN" --idempotency-key race > "$tmp/race-c" &
wait $ra; wait $!
check "the same idempotency key through A and C at once: one job ($(cat "$tmp/race-a") $(cat "$tmp/race-c"))" \
    [ -n "$(cat "$tmp/race-a")" ] && [ "$(cat "$tmp/race-a")" = "$(cat "$tmp/race-c")" ] &&
    [ "$(sql "SELECT count(*) FROM cuzk_jobs WHERE idem = 'race'")" = 1 ]
check "the raced job completes, awaited through B" await_verify b "$(cat "$tmp/race-a")" 2 "$BN"

# ------------------------------------------------------------ cancel through another host
big=$(submit a 16 "$BN")
for i in $(seq 1 100); do
    [ "$(sql "SELECT count(*) FROM cuzk_parts WHERE job = ${big#j-} AND state = 6")" -gt 0 ] 2> /dev/null && break
    sleep 0.05
done
"$CUZK" cancel --server "${ADDR[c]}" "$big" > /dev/null 2>&1
check "cancel through C" [ $? = 0 ]
"$CUZK" await --server "${ADDR[a]}" --timeout 30 "$big" > /dev/null 2>&1
check "await through A says canceled (exit 5)" [ $? = 5 ]
done1=$(sql "SELECT count(*) FROM cuzk_parts WHERE job = ${big#j-} AND state = 6")
sleep 1
done2=$(sql "SELECT count(*) FROM cuzk_parts WHERE job = ${big#j-} AND state = 6")
check "nothing is committed after the cancel ($done1 then $done2 of 16)" [ "$done1" = "$done2" ] && [ "$done1" -lt 16 ] &&
    [ "$done1" -gt 0 ]

# ------------------------------------------------------------ kill -9 with leases held
stop_host b
stop_host c
id=$(submit a $P "$BN")
wait_leases "${PID[a]}"
check "A holds leases on $id" [ $? = 0 ]
apid=${PID[a]}
kill -KILL "$apid"; wait "$apid" 2> /dev/null; PID[a]=
held=$(sql "SELECT count(*) FROM cuzk_parts WHERE job = ${id#j-} AND lease_host LIKE '%:$apid' AND state = 0")
start_host b && start_host c || finish
check "after kill -9 of A (holding $held leases), B finishes $id${SNARKJS:+, snarkjs verifies all}" \
    await_verify b "$id" $P "$BN"
check "each partition has exactly one committed proof" \
    [ "$(sql "SELECT count(*) FROM cuzk_parts WHERE job = ${id#j-} AND state = 6 AND proof IS NOT NULL")" = $P ]
check "A's lapsed leases were taken over with the next attempt ($held held)" \
    [ "$(sql "SELECT count(*) FROM cuzk_parts WHERE job = ${id#j-} AND lease_attempt >= 2 AND proved_by NOT LIKE '%:$apid'")" -ge "$held" ] && [ "$held" -gt 0 ]

# ------------------------------------------------------------ SIGSTOP past the lease
stop_host c
id=$(submit b $P "$BN")
wait_leases "${PID[b]}"
bpid=${PID[b]}
kill -STOP "$bpid"
check "B stopped (SIGSTOP) while it holds leases on $id" [ "$(sql "SELECT count(*) FROM cuzk_parts WHERE lease_host LIKE '%:$bpid' AND state = 0")" -gt 0 ]
start_host c || finish
check "C finishes $id once B's leases lapse${SNARKJS:+, snarkjs verifies all}" await_verify c "$id" $P "$BN"
kill -CONT "$bpid"
for i in $(seq 1 60); do grep -q "late result refused" "$tmp/b.log" && break; sleep 0.1; done
check "B, resumed, has its late results refused" grep -q "late result refused" "$tmp/b.log"
check "nothing B proved after its leases lapsed was stored: $P proofs, none by B" \
    [ "$(sql "SELECT count(*) FROM cuzk_parts WHERE job = ${id#j-} AND state = 6")" = $P ] &&
    [ "$(sql "SELECT count(*) FROM cuzk_parts WHERE job = ${id#j-} AND proved_by LIKE '%:$bpid'")" = 0 ]
D_ADDR=${ADDR[b]}
for i in $(seq 1 30); do api GET "/v1/jobs/$id"; [ "$(jget j.state)" = done ] && break; sleep 0.1; done
check "B, resumed, sees the job done ($(jget j.state))" [ "$(jget j.state)" = done ]

# ------------------------------------------------------------ PostgreSQL restarted mid-run
start_host a || finish
id=$(submit c $((P - 2)) "$BN")
sleep 0.2
tests/pg_server.sh restart "$pgstate"
check "PostgreSQL restarted during the run" [ $? = 0 ]
id2=$(submit b 1 "$BN")
check "a submission right after the restart is acknowledged ($id2)" [ -n "$id2" ]
check "$id completes across the restart, awaited through A" await_verify a "$id" $((P - 2)) "$BN"
check "$id2 completes across the restart, awaited through C" await_verify c "$id2" 1 "$BN"
check "the daemons reconnected" grep -q "reconnected" "$tmp/c.log"
for h in a b c; do
    stop_host $h
    check "host $h stops cleanly on SIGTERM (exit $HOST_RC)" [ "$HOST_RC" = 0 ]
done

# ------------------------------------------------------------ refused at start
"$CUZK" serve --listen 127.0.0.1:0 --data "$tmp/x" --backend cpu --store "mysql://x" > "$tmp/x.out" 2>&1
check "a store URL of another kind is refused" grep -q "postgres://" "$tmp/x.out"
"$CUZK" serve --listen 127.0.0.1:0 --data "$tmp/x" --backend cpu \
    --store "postgresql://cuzk:pw-s3cret@127.0.0.1:1/x?connect_timeout=2" > "$tmp/x.out" 2>&1
xrc=$?
check "an unreachable server is refused without showing the password (exit $xrc)" \
    [ $xrc != 0 ] && ! grep -q s3cret "$tmp/x.out" && grep -q "cannot connect" "$tmp/x.out"

finish
