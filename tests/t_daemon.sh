#!/usr/bin/env bash
# t_daemon.sh - black-box tests of `cuzk serve` and its client commands, on the CPU backend,
# against the real binary on loopback (tests/data fixtures, snarkjs 0.7.6 as the proof oracle):
#   - submit/await with the CLI (paths, and --upload of the witness bytes), both curves,
#     several partitions: every proof-<i>.json passes `snarkjs groth16 verify` and every
#     public-<i>.json equals the fixture's public.json; raw .wtns upload with curl;
#   - status (all, one job, --json), list, proof routes, idempotency key (same id, no new job);
#   - cancel: a large job canceled while running ends "canceled" with partitions left undone
#     and does not progress afterwards; await says so (exit 5); canceling a done job is 409;
#   - malformed requests: bad JSON, unknown key, wrong types, relative path, witness of the
#     wrong size and of the wrong curve, unknown kind/priority, oversized body (413),
#     unknown route (404), wrong method (405), unknown job (404), bad partition index;
#     each gets a 4xx with an {"error"} that names the problem, and the daemon keeps serving;
#   - concurrent clients: 8 submit+await pairs at once, all verified, all ids distinct;
#   - unix:PATH listening with a token (401 without it), refusal of a non-loopback address
#     without a token, clean shutdown on SIGTERM.
# Usage: CUZK=bin/cuzk tests/t_daemon.sh   (normally through tests/run.sh)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/dashboard/daemon_helpers.sh"

BN=$repo/tests/data/bn128/merkle
BNP=$repo/tests/data/bn128/poseidon_chain
BLS=$repo/tests/data/bls12381/merkle
MUL=$repo/tests/data/bn128/multiplier

start_daemon main --max-body 1M || finish
echo "daemon at $D_ADDR"

# ---------------------------------------------------------------- submit / await
# prove_and_check DESC FIXTURE_DIR N_PARTITIONS [submit options]
prove_and_check() {
    local desc=$1 fx=$2 n=$3; shift 3
    local wit=() i
    for i in $(seq 1 "$n"); do wit+=(--witness "$fx/witness.wtns"); done
    local id
    id=$("$CUZK" submit --server "$D_ADDR" --zkey "$fx/circuit.zkey" "${wit[@]}" "$@" 2> "$tmp/submit.err")
    if [ $? -ne 0 ] || [ -z "$id" ]; then fail "$desc: submit failed: $(cat "$tmp/submit.err")"; return 1; fi
    rm -rf "$tmp/out-$id"
    if ! "$CUZK" await --server "$D_ADDR" --timeout 300 "$id" --out "$tmp/out-$id" 2> "$tmp/await.err"; then
        fail "$desc: await $id failed: $(cat "$tmp/await.err")"; return 1
    fi
    local ok=1
    for i in $(seq 0 $((n - 1))); do
        if ! sj_verify "$fx/vk.json" "$tmp/out-$id/public-$i.json" "$tmp/out-$id/proof-$i.json"; then
            ok=0; fail "$desc: snarkjs rejects partition $i of $id"; cat "$tmp/.sj"
        fi
        if ! cmp -s <(node -e 'console.log(JSON.stringify(JSON.parse(require("fs").readFileSync(process.argv[1]))))' "$tmp/out-$id/public-$i.json") \
                    <(node -e 'console.log(JSON.stringify(JSON.parse(require("fs").readFileSync(process.argv[1]))))' "$fx/public.json"); then
            ok=0; fail "$desc: public-$i.json differs from the fixture's public.json"
        fi
    done
    [ $ok = 1 ] && pass "$desc: $n partition(s) proved${SNARKJS:+, snarkjs verifies all}"
    LAST_ID=$id
}

prove_and_check "bn128 merkle, 3 partitions, porep" "$BN" 3 --kind porep
first_id=$LAST_ID
prove_and_check "bls12381 merkle, 2 partitions, uploaded witnesses" "$BLS" 2 --upload --kind snap
prove_and_check "bn128 multiplier, 1 partition, winning-post" "$MUL" 1 --kind winning-post

api GET "/v1/jobs/$LAST_ID"
check "winning-post defaults to critical priority" [ "$(jget j.priority)" = critical ]
check "job JSON has per-partition stage timings" [ "$(jget 'typeof j.partitions[0].stages.device_ms')" = number ]

# raw .wtns body with curl
api POST "/v1/jobs?zkey=$MUL/circuit.zkey&kind=custom&priority=high" \
    -H 'Content-Type: application/octet-stream' --data-binary "@$MUL/witness.wtns"
check "raw witness upload answers 201 ($CODE)" [ "$CODE" = 201 ]
raw_id=$(jget j.id)
api GET "/v1/jobs/$raw_id/await?timeout=120"
check "raw upload job done ($(jget j.state))" [ "$(jget j.state)" = done ]
api GET "/v1/jobs/$raw_id/proofs/0"
echo "$BODY" | node -e 'const j=JSON.parse(require("fs").readFileSync(0)); require("fs").writeFileSync(process.argv[1], JSON.stringify(j.proof)); require("fs").writeFileSync(process.argv[2], JSON.stringify(j.public))' "$tmp/raw-proof.json" "$tmp/raw-public.json"
check "GET /v1/jobs/{id}/proofs/0 gives a proof snarkjs accepts" sj_verify "$MUL/vk.json" "$tmp/raw-public.json" "$tmp/raw-proof.json"
api GET "/v1/jobs/$raw_id/proofs/0/proof"
check "proof route serves snarkjs proof.json" [ "$(jget j.protocol)" = groth16 ]
api GET "/v1/jobs/$raw_id/proofs/5/proof"
check "missing partition is 404 ($CODE)" [ "$CODE" = 404 ]
api GET "/v1/jobs/$raw_id/proofs/x/proof"
check "non-numeric partition is 400 ($CODE)" [ "$CODE" = 400 ]

# ---------------------------------------------------------------- status, list
"$CUZK" status --server "$D_ADDR" > "$tmp/status.txt" 2>&1
check "cuzk status prints the budget line" grep -q '^budget' "$tmp/status.txt"
"$CUZK" status --server "$D_ADDR" "$first_id" > "$tmp/status1.txt" 2>&1
check "cuzk status ID prints one line per partition" [ "$(grep -c '^[0-9] ' "$tmp/status1.txt")" = 3 ]
"$CUZK" status --server "$D_ADDR" --json > "$tmp/status.json"
check "cuzk status --json is JSON with budget.total" [ "$(jget 'j.budget.total > 0' "$(cat "$tmp/status.json")")" = true ]
api GET "/v1/jobs?state=done"
check "list ?state=done has the finished jobs" [ "$(jget 'j.jobs.length >= 4')" = true ]
api GET "/v1/jobs?state=bogus"
check "list with an unknown state is 400" [ "$CODE" = 400 ]

# ---------------------------------------------------------------- idempotency
id1=$("$CUZK" submit --server "$D_ADDR" --zkey "$MUL/circuit.zkey" --witness "$MUL/witness.wtns" --idempotency-key idem-1 2>/dev/null)
id2=$("$CUZK" submit --server "$D_ADDR" --zkey "$MUL/circuit.zkey" --witness "$MUL/witness.wtns" --idempotency-key idem-1 2> "$tmp/idem.err")
check "idempotency key returns the same job ($id1 / $id2)" [ -n "$id1" -a "$id1" = "$id2" ]
check "second submit says it matched" grep -q "existing job" "$tmp/idem.err"
api POST /v1/jobs -d "{\"zkey\":\"$MUL/circuit.zkey\",\"witnesses\":[\"$MUL/witness.wtns\"],\"idempotency_key\":\"idem-1\"}"
check "idempotent resubmit over HTTP is 200 with existed=true" [ "$CODE" = 200 -a "$(jget j.existed)" = true ]

# ---------------------------------------------------------------- cancel
wits=()
for i in $(seq 1 400); do wits+=(--witness "$BN/witness.wtns"); done
big=$("$CUZK" submit --server "$D_ADDR" --zkey "$BN/circuit.zkey" "${wits[@]}" --kind porep)
check "large job accepted" [ -n "$big" ]
for i in $(seq 1 100); do
    api GET "/v1/jobs/$big"
    [ "$(jget 'j.n_done > 0 || j.state != "queued"')" = true ] && break
    sleep 0.05
done
"$CUZK" cancel --server "$D_ADDR" "$big" > "$tmp/cancel.out" 2>&1
check "cuzk cancel exits 0" [ $? -eq 0 ]
api GET "/v1/jobs/$big/await?timeout=60"
check "canceled job is canceled ($(jget j.state))" [ "$(jget j.state)" = canceled ]
done1=$(jget j.n_done)
check "cancel stopped work: $done1 of 400 partitions done" [ "$done1" -lt 400 ]
# running partitions stop at their next stage boundary: wait for that, then check that none
# of them completed after the cancel
for i in $(seq 1 300); do
    api GET "/v1/jobs/$big"
    [ "$(jget 'j.partitions.every(p => p.state === "done" || p.state === "canceled")')" = true ] && break
    sleep 0.1
done
check "every partition of the canceled job ends done or canceled ($(jget 'j.partitions.filter(p => p.state !== "canceled" && p.state !== "done").map(p => p.state).join()'))" \
    [ "$(jget 'j.partitions.every(p => p.state === "done" || p.state === "canceled")')" = true ]
check "no partition of a canceled job finished after the cancel ($(jget j.n_done) done)" [ "$(jget j.n_done)" = "$done1" ]
"$CUZK" await --server "$D_ADDR" "$big" --out "$tmp/out-big" > "$tmp/await-c.out" 2>&1
rc=$?
g=0; grep -q canceled "$tmp/await-c.out" && g=1
check "cuzk await on a canceled job exits 5 ($rc) naming it" [ $rc = 5 -a $g = 1 ]
"$CUZK" cancel --server "$D_ADDR" "$first_id" > "$tmp/cancel2.out" 2>&1
rc=$?
api POST "/v1/jobs/$first_id/cancel"
check "cancel of a done job is 409 ($CODE), CLI exit $rc" [ "$CODE" = 409 -a $rc = 5 ]
api POST "/v1/jobs/j-999999/cancel"
check "cancel of an unknown job is 404" [ "$CODE" = 404 ]
for i in $(seq 1 50); do
    api GET /status
    [ "$(jget 'j.queues.scheduler === 0 && j.jobs.running === 0')" = true ] && break
    sleep 0.1
done
check "after cancel nothing is queued or running" [ "$(jget 'j.queues.scheduler === 0 && j.jobs.running === 0')" = true ]

# ---------------------------------------------------------------- malformed requests
# bad REQUEST_DESC WANT_CODE WANT_SUBSTRING method path [curl args]
bad() {
    local desc=$1 want=$2 sub=$3; shift 3
    api "$@"
    local msg; msg=$(jget j.error)
    if [ "$CODE" = "$want" ] && grep -qi -- "$sub" <<< "$msg"; then
        pass "$desc -> $CODE: $msg"
    else
        fail "$desc: got $CODE '$BODY', expected $want mentioning '$sub'"
    fi
    api GET /status
    [ "$CODE" = 200 ] || fail "daemon stopped serving after: $desc"
}
J='-H Content-Type:application/json'
bad "bad JSON" 400 "not valid JSON" POST /v1/jobs $J -d '{"zkey": '
bad "empty body" 400 "empty body" POST /v1/jobs $J
bad "JSON array" 400 "object" POST /v1/jobs $J -d '[1,2]'
bad "unknown key" 400 "unknown key 'witness'" POST /v1/jobs $J -d "{\"zkey\":\"$BN/circuit.zkey\",\"witness\":[\"$BN/witness.wtns\"]}"
bad "missing zkey" 400 "missing 'zkey'" POST /v1/jobs $J -d "{\"witnesses\":[\"$BN/witness.wtns\"]}"
bad "wrong type" 400 "must be an array" POST /v1/jobs $J -d "{\"zkey\":\"$BN/circuit.zkey\",\"witnesses\":\"$BN/witness.wtns\"}"
bad "relative path" 400 "absolute" POST /v1/jobs $J -d '{"zkey":"circuit.zkey","witnesses":["w.wtns"]}'
bad "no partitions" 400 "1..1024" POST /v1/jobs $J -d "{\"zkey\":\"$BN/circuit.zkey\",\"witnesses\":[]}"
bad "missing witness file" 400 "nope.wtns" POST /v1/jobs $J -d "{\"zkey\":\"$BN/circuit.zkey\",\"witnesses\":[\"$tmp/nope.wtns\"]}"
bad "witness of the wrong size" 400 "2070" POST /v1/jobs $J -d "{\"zkey\":\"$BN/circuit.zkey\",\"witnesses\":[\"$BNP/witness.wtns\"]}"
bad "witness of the wrong curve" 400 "curve\|BLS\|bls" POST /v1/jobs $J -d "{\"zkey\":\"$BN/circuit.zkey\",\"witnesses\":[\"$BLS/witness.wtns\"]}"
bad "uploaded witness of the wrong curve" 400 "curve\|BLS\|bls" POST "/v1/jobs?zkey=$BN/circuit.zkey" -H 'Content-Type: application/octet-stream' --data-binary "@$BLS/witness.wtns"
bad "not a witness file" 400 "wtns\|magic\|format" POST /v1/jobs $J -d "{\"zkey\":\"$BN/circuit.zkey\",\"witnesses\":[\"$BN/vk.json\"]}"
bad "bad base64" 400 "base64" POST /v1/jobs $J -d "{\"zkey\":\"$BN/circuit.zkey\",\"witness_data\":[\"@@@\"]}"
bad "unknown kind" 400 "unknown kind" POST /v1/jobs $J -d "{\"zkey\":\"$BN/circuit.zkey\",\"witnesses\":[\"$BN/witness.wtns\"],\"kind\":\"porepp\"}"
bad "unknown priority" 400 "unknown priority" POST /v1/jobs $J -d "{\"zkey\":\"$BN/circuit.zkey\",\"witnesses\":[\"$BN/witness.wtns\"],\"priority\":\"urgent\"}"
head -c 2000000 /dev/zero > "$tmp/big.bin"
bad "oversized body" 413 "limit is 1048576" POST /v1/jobs -H 'Content-Type: application/octet-stream' --data-binary "@$tmp/big.bin"
bad "unknown route" 404 "no route" GET /v2/nothing
bad "wrong method" 405 "allowed: POST, GET" PUT /v1/jobs
bad "unknown job" 404 "" GET /v1/jobs/j-424242
bad "bad await timeout" 400 "timeout" GET "/v1/jobs/$first_id/await?timeout=soon"
bad "bad timeline step" 400 "step_ms" GET "/v1/timeline?step_ms=1"
bad "preload with unknown key" 400 "unknown key" POST /v1/keys/preload $J -d '{"zkey":"/x","force":1}'
"$CUZK" submit --server "$D_ADDR" --zkey "$BN/circuit.zkey" --witness "$BLS/witness.wtns" > /dev/null 2> "$tmp/cli-bad.err"
rc=$?
g=0; grep -q "400" "$tmp/cli-bad.err" && g=1
check "cuzk submit of a wrong-curve witness exits 3 ($rc) with the daemon's reason" [ $rc = 3 -a $g = 1 ]

# ---------------------------------------------------------------- keys
api POST /v1/keys/preload $J -d "{\"zkey\":\"$BLS/circuit.zkey\"}"
check "preload a key ($CODE)" [ "$CODE" = 200 ]
api GET /v1/keys
check "key listed after preload" [ "$(jget "j.keys.some(k => k.path === '$BLS/circuit.zkey')")" = true ]
api POST /v1/keys/evict $J -d "{\"zkey\":\"$BLS/circuit.zkey\"}"
check "evict the key ($CODE)" [ "$CODE" = 200 ]
api GET /v1/keys
check "key gone after evict" [ "$(jget "j.keys.some(k => k.path === '$BLS/circuit.zkey')")" = false ]

# ---------------------------------------------------------------- concurrent clients
cpids=()
for c in $(seq 1 8); do
    (
        fx=$BN; [ $((c % 2)) = 0 ] && fx=$BLS
        id=$("$CUZK" submit --server "$D_ADDR" --zkey "$fx/circuit.zkey" --witness "$fx/witness.wtns" --witness "$fx/witness.wtns") || exit 1
        "$CUZK" await --server "$D_ADDR" --timeout 300 "$id" --out "$tmp/conc-$c" || exit 1
        for i in 0 1; do sj_verify "$fx/vk.json" "$tmp/conc-$c/public-$i.json" "$tmp/conc-$c/proof-$i.json" || exit 1; done
        echo "$id" > "$tmp/conc-$c.id"
    ) > "$tmp/conc-$c.log" 2>&1 &
    cpids+=($!)
done
conc_ok=0
for p in "${cpids[@]}"; do wait "$p"; done
for c in $(seq 1 8); do [ -s "$tmp/conc-$c.id" ] && conc_ok=$((conc_ok + 1)); done
check "8 concurrent clients all got verified proofs ($conc_ok/8)" [ $conc_ok = 8 ]
check "their job ids are distinct" [ "$(cat "$tmp"/conc-*.id | sort -u | wc -l)" = 8 ]

# ---------------------------------------------------------------- metrics, trace
api GET /metrics
check "metrics have cuzk_http_requests_total" grep -q '^cuzk_http_requests_total{class="4xx"} [1-9]' <<< "$BODY"
api GET /v1/trace
check "trace export is Chrome trace JSON with events" [ "$(jget '(Array.isArray(j) ? j : j.traceEvents).length > 0')" = true ]

stop_daemon
check "SIGTERM shuts the daemon down cleanly (exit $D_RC)" [ "$D_RC" = 0 ]

# ---------------------------------------------------------------- unix socket, token, refusal
sock=$tmp/cuzk.sock
D_DATA=$tmp/unix; mkdir -p "$D_DATA"
CUZK_TOKEN=tok123 "$CUZK" serve --listen "unix:$sock" --data "$D_DATA" --backend cpu --threads 1 > "$tmp/unix.log" 2>&1 &
D_PID=$!
for i in $(seq 1 300); do [ -S "$sock" ] && [ -s "$D_DATA/serve.addr" ] && break; sleep 0.1; done
code=$(curl -s -o /dev/null -w '%{http_code}' --unix-socket "$sock" http://x/status)
check "unix socket without the token is 401 ($code)" [ "$code" = 401 ]
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer tok123' --unix-socket "$sock" http://x/status)
check "unix socket with the token is 200 ($code)" [ "$code" = 200 ]
id=$(CUZK_TOKEN=tok123 "$CUZK" submit --server "unix:$sock" --zkey "$MUL/circuit.zkey" --witness "$MUL/witness.wtns")
CUZK_TOKEN=tok123 "$CUZK" await --server "unix:$sock" --timeout 120 "$id" --out "$tmp/unix-out" 2>/dev/null
check "submit/await over the unix socket with the token" sj_verify "$MUL/vk.json" "$tmp/unix-out/public-0.json" "$tmp/unix-out/proof-0.json"
"$CUZK" status --server "unix:$sock" > /dev/null 2>&1
check "client without the token exits 5" [ $? = 5 ]
stop_daemon
check "unix socket removed at shutdown" [ ! -e "$sock" ]

env -u CUZK_TOKEN "$CUZK" serve --listen 0.0.0.0:0 --data "$tmp/open" > "$tmp/open.out" 2>&1
rc=$?
g=0; grep -q token "$tmp/open.out" && g=1
check "non-loopback TCP without a token is refused (exit $rc)" [ $rc = 2 -a $g = 1 ]
"$CUZK" status --server 127.0.0.1:1 > "$tmp/down.out" 2>&1
rc=$?
g=0; grep -q "cannot reach" "$tmp/down.out" && g=1
check "client against no daemon exits 5 ($rc) saying so" [ $rc = 5 -a $g = 1 ]

finish
