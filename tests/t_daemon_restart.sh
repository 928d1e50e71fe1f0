#!/usr/bin/env bash
# t_daemon_restart.sh - durability of `cuzk serve` (CPU backend, loopback, black box):
#   - jobs acknowledged by submit survive kill -9: the daemon is killed right after the last
#     acknowledgement, restarted on the same data dir, killed again mid-run, restarted again;
#     every acknowledged job then completes exactly once (state done, n_done = n_partitions,
#     listed once, no extra jobs), and every proof passes `snarkjs groth16 verify`;
#   - a `cuzk await` started before the crash rides through both restarts (it reconnects to
#     the same address) and writes proofs that verify;
#   - an idempotency key used before the crash returns the same job after it;
#   - a job that finished before a crash keeps its proofs across the restart;
#   - retention: with --proof-ttl 1 an unfetched job is purged (404) after its TTL;
#   - await retries its proof downloads when the daemon goes away during one.
# Usage: CUZK=bin/cuzk tests/t_daemon_restart.sh   (normally through tests/run.sh)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/dashboard/daemon_helpers.sh"

BN=$repo/tests/data/bn128/merkle
BLS=$repo/tests/data/bls12381/merkle

start_daemon dur || finish
# one job that completes before any crash
pre=$("$CUZK" submit --server "$D_ADDR" --zkey "$BN/circuit.zkey" --witness "$BN/witness.wtns" --idempotency-key before-crash)
"$CUZK" await --server "$D_ADDR" --timeout 120 "$pre" > /dev/null 2>&1
check "pre-crash job done" [ $? = 0 ]

ids=()
fxs=()
for j in $(seq 1 8); do
    fx=$BN; [ $((j % 3)) = 0 ] && fx=$BLS
    w=()
    for p in $(seq 1 4); do w+=(--witness "$fx/witness.wtns"); done
    id=$("$CUZK" submit --server "$D_ADDR" --zkey "$fx/circuit.zkey" "${w[@]}" --idempotency-key "dur-$j")
    if [ -z "$id" ]; then fail "submit $j was not acknowledged"; continue; fi
    ids+=("$id"); fxs+=("$fx")
done
"$CUZK" await --server "$D_ADDR" --timeout 600 "${ids[0]}" --out "$tmp/early" > "$tmp/early.log" 2>&1 &
early=$!
sleep 0.2
kill_daemon
check "daemon killed with -9 after ${#ids[@]} acknowledged jobs" [ ${#ids[@]} = 8 ]

D_LISTEN=$D_ADDR   # restart on the same address so that the running await finds it again
start_daemon dur || finish
sleep 0.7
kill_daemon
pass "restarted and killed with -9 again mid-run"
start_daemon dur || finish

for k in "${!ids[@]}"; do
    id=${ids[$k]} fx=${fxs[$k]}
    if ! "$CUZK" await --server "$D_ADDR" --timeout 300 "$id" --out "$tmp/out-$id" > "$tmp/await.out" 2>&1; then
        fail "job $id did not complete after the restarts: $(cat "$tmp/await.out")"; continue
    fi
    ok=1
    for p in 0 3; do   # snarkjs on the first and last partition (the daemon verified all four)
        sj_verify "$fx/vk.json" "$tmp/out-$id/public-$p.json" "$tmp/out-$id/proof-$p.json" || { ok=0; cat "$tmp/.sj"; }
    done
    api GET "/v1/jobs/$id"
    [ "$(jget 'j.state === "done" && j.n_done === 4 && j.n_partitions === 4')" = true ] || ok=0
    check "job $id completed after kill -9 (4/4 partitions${SNARKJS:+, verified})" [ $ok = 1 ]
done

wait $early
rc=$?
ok=$([ $rc = 0 ] && echo 1 || echo 0)
for p in 0 1 2 3; do
    sj_verify "${fxs[0]}/vk.json" "$tmp/early/public-$p.json" "$tmp/early/proof-$p.json" || ok=0
done
check "await started before the crash reconnected and got verified proofs (exit $rc)" [ $ok = 1 ]
grep -q "retrying" "$tmp/early.log" || echo "note: the await did not need to reconnect"

api GET "/v1/jobs?limit=1000"
listed=$(jget 'j.jobs.length')
check "exactly the 9 acknowledged jobs exist ($listed listed)" [ "$listed" = 9 ]
check "no job id is listed twice" [ "$(jget 'new Set(j.jobs.map(x => x.id)).size')" = 9 ]
api GET "/v1/jobs?state=done&limit=1000"
check "all 9 are done" [ "$(jget 'j.jobs.length')" = 9 ]

again=$("$CUZK" submit --server "$D_ADDR" --zkey "$BN/circuit.zkey" --witness "$BN/witness.wtns" --witness "$BN/witness.wtns" --witness "$BN/witness.wtns" --witness "$BN/witness.wtns" --idempotency-key dur-1 2>/dev/null)
check "idempotency key from before the crash returns the same job ($again)" [ "$again" = "${ids[0]}" ]
"$CUZK" await --server "$D_ADDR" --timeout 30 "$pre" --out "$tmp/out-pre" > /dev/null 2>&1
check "proofs of a job finished before the crash are still there" sj_verify "$BN/vk.json" "$tmp/out-pre/public-0.json" "$tmp/out-pre/proof-0.json"
stop_daemon

# retention: proofs of an unfetched job go after the TTL
D_LISTEN=
start_daemon ttl --proof-ttl 1 || finish
id=$("$CUZK" submit --server "$D_ADDR" --zkey "$BN/circuit.zkey" --witness "$BN/witness.wtns")
"$CUZK" await --server "$D_ADDR" --timeout 120 "$id" > /dev/null 2>&1
gone=0
for i in $(seq 1 300); do
    api GET "/v1/jobs/$id"
    [ "$CODE" = 404 ] && { gone=1; break; }
    sleep 0.2
done
check "with --proof-ttl 1 the finished job is purged (404) after its TTL" [ $gone = 1 ]
stop_daemon

# a daemon that goes away while await downloads the proofs of a done job (a stand-in that
# answers the await, drops the first proof request without a reply, is gone for a second,
# then serves): await retries and writes the files
cat > "$tmp/flaky.js" << 'JS'
const http = require('http');
const [proofFile, publicFile] = process.argv.slice(2);
const fs = require('fs');
let dropped = false, server, port;
const handler = (req, res) => {
    if (req.url.startsWith('/v1/jobs/j-1/await')) {
        res.end(JSON.stringify({id: 'j-1', state: 'done', terminal: true, n_partitions: 1, error: ''}));
    } else if (req.url === '/v1/jobs/j-1/proofs/0/proof' && !dropped) {
        dropped = true;
        req.socket.destroy();
        server.close();
        setTimeout(() => { server = http.createServer(handler).listen(port, '127.0.0.1'); }, 1000);
    } else if (req.url === '/v1/jobs/j-1/proofs/0/proof') {
        res.end(fs.readFileSync(proofFile));
    } else if (req.url === '/v1/jobs/j-1/proofs/0/public') {
        res.end(fs.readFileSync(publicFile));
    } else {
        res.statusCode = 404;
        res.end('{"error": "no such path"}');
    }
};
server = http.createServer(handler).listen(0, '127.0.0.1', () => {
    port = server.address().port;
    console.log('port ' + port);
});
JS
node "$tmp/flaky.js" "$tmp/out-pre/proof-0.json" "$tmp/out-pre/public-0.json" > "$tmp/flaky.out" 2>&1 &
flaky=$!
fport=
for i in $(seq 1 50); do
    fport=$(awk '/^port / {print $2}' "$tmp/flaky.out" 2> /dev/null)
    [ -n "$fport" ] && break
    sleep 0.1
done
"$CUZK" await --server "127.0.0.1:$fport" --timeout 30 j-1 --out "$tmp/out-flaky" > "$tmp/flaky.log" 2>&1
frc=$?
kill "$flaky" 2> /dev/null
fok=0
[ $frc = 0 ] && grep -q "lost the daemon" "$tmp/flaky.log" \
    && cmp -s "$tmp/out-pre/proof-0.json" "$tmp/out-flaky/proof-0.json" \
    && cmp -s "$tmp/out-pre/public-0.json" "$tmp/out-flaky/public-0.json" && fok=1
[ $fok = 1 ] || sed 's/^/    /' "$tmp/flaky.log"
check "await retries a proof download when the daemon goes away mid-request (rc $frc)" [ $fok = 1 ]

finish
