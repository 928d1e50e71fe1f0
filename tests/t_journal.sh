#!/usr/bin/env bash
# t_journal.sh - a damaged job journal (CPU backend, loopback, black box):
#   1. bytes flipped inside stored proofs: ten jobs are proved, the daemon is stopped, a digit
#      is changed in three of the proofs where they lie in journal.db (found by searching the
#      file for each proof's own numbers, so the JSON stays valid and only a checksum or a
#      pairing check can tell). `cuzk journal check` exits 1 and names them; the daemon starts,
#      proves those partitions again, and nothing that comes out of `cuzk await` or the HTTP
#      API fails `snarkjs groth16 verify`; every job ends done.
#   2. a journal SQLite calls malformed (the header of an index page and of a page of
#      partition records overwritten, and a digit of one more proof changed): the daemon
#      refuses to start and names `cuzk journal check` and `cuzk journal recover`; check exits
#      1; recover sets the file aside and writes a fresh journal, the damaged proof's partition
#      re-queued; the daemon then starts, and every job is done with proofs that verify, or
#      failed / gone and named in recover's report; nothing invalid is handed out.
# Usage: CUZK=bin/cuzk tests/t_journal.sh   (normally through tests/run.sh)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/dashboard/daemon_helpers.sh"

BN=$repo/tests/data/bn128/merkle
BLS=$repo/tests/data/bls12381/merkle

# flip FILE STRING...: in every place FILE holds one of the strings, changes the digit in its
# middle to another digit; prints how many places it changed
flip() {
    node -e 'const fs = require("fs"); const [file, ...strs] = process.argv.slice(1);
             const b = fs.readFileSync(file); let n = 0;
             for (const s of strs.filter(x => x.length > 8)) for (let at = b.indexOf(s); at >= 0; at = b.indexOf(s, at + 1)) {
                 const k = at + (s.length >> 1); b[k] = 0x30 + ((b[k] - 0x30 + 5) % 10); n++; }
             fs.writeFileSync(file, b); console.log(n);' "$@"
}
# wreck_page FILE STRING TYPE: finds a b-tree page of type TYPE (10: index leaf, 13: table
# leaf) that holds STRING and overwrites its cell count with 0xffff; prints the page number
wreck_page() {
    node -e 'const fs = require("fs"); const [file, s, type] = process.argv.slice(1);
             const b = fs.readFileSync(file); let ps = b.readUInt16BE(16); if (ps === 1) ps = 65536;
             for (let at = s.length > 4 ? b.indexOf(s) : -1; at >= 0; at = b.indexOf(s, at + 1)) {
                 const pg = Math.floor(at / ps), h = pg * ps + (pg === 0 ? 100 : 0);
                 if (b[h] !== Number(type)) continue;
                 b.writeUInt16BE(0xffff, h + 3); fs.writeFileSync(file, b); console.log(pg + 1); process.exit(0); }
             console.log(0);' "$@"
}
# pi_a0 FILE: the proof's first coordinate (unique to that proof: random r, s)
pi_a0() { node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).pi_a[0])' "$1"; }
# api_proof_ok ID P VK: fetches {proof, public} of partition P over HTTP; 0 when it is either
# refused (not done: proved again) or verifies; counts the proofs verified in API_VERIFIED
API_VERIFIED=0
api_proof_ok() {
    api GET "/v1/jobs/$1/proofs/$2"
    [ "$CODE" = 409 ] && return 0
    [ "$CODE" = 200 ] || { echo "    GET /v1/jobs/$1/proofs/$2: $CODE $BODY"; return 1; }
    jget 'j.proof' > "$tmp/api-proof.json"
    jget 'j.public' > "$tmp/api-public.json"
    sj_verify "$3" "$tmp/api-public.json" "$tmp/api-proof.json" || { cat "$tmp/.sj"; return 1; }
    API_VERIFIED=$((API_VERIFIED + 1))
}
# await_ok ID FX NP DIR: cuzk await exits 0 and every proof it wrote verifies
await_ok() {
    "$CUZK" await --server "$D_ADDR" --timeout 300 "$1" --out "$4" > "$tmp/await.out" 2>&1 \
        || { sed 's/^/    /' "$tmp/await.out"; return 1; }
    local p
    for p in $(seq 0 $(($3 - 1))); do
        sj_verify "$2/vk.json" "$4/public-$p.json" "$4/proof-$p.json" || { cat "$tmp/.sj"; return 1; }
    done
}

# ---- 1. flipped bytes inside proofs
start_daemon jr --fetch-grace 3600 || finish
ids=() fxs=() nps=()
for j in $(seq 1 10); do
    fx=$BN; [ $((j % 4)) = 0 ] && fx=$BLS
    np=$((j % 2 == 0 ? 2 : 1))
    w=()
    for p in $(seq 1 $np); do w+=(--witness "$fx/witness.wtns"); done
    id=$("$CUZK" submit --server "$D_ADDR" --zkey "$fx/circuit.zkey" "${w[@]}" --idempotency-key "jr-idem-$j")
    [ -n "$id" ] || { fail "submit $j"; continue; }
    ids+=("$id") fxs+=("$fx") nps+=("$np")
done
ok=1
for k in "${!ids[@]}"; do
    "$CUZK" await --server "$D_ADDR" --timeout 300 "${ids[$k]}" --out "$tmp/a-${ids[$k]}" > /dev/null 2>&1 || ok=0
done
check "10 jobs proved (${#ids[@]} acknowledged)" [ $ok = 1 -a ${#ids[@]} = 10 ]
stop_daemon
J=$D_DATA/journal.db
check "the daemon stopped cleanly and left no -wal behind" [ ! -s "$J-wal" ]

# victims: jobs 2 (BN, partition 0 of 2), 4 (BLS, partition 1 of 2), 7 (BN, its one partition)
victims=("${ids[1]}:0" "${ids[3]}:1" "${ids[6]}:0")
strs=()
for v in "${victims[@]}"; do strs+=("$(pi_a0 "$tmp/a-${v%:*}/proof-${v#*:}.json")"); done
n=$(flip "$J" "${strs[@]}")
check "a digit changed inside 3 stored proofs ($n places)" [ "$n" -ge 3 ]

"$CUZK" journal check --data "$D_DATA" > "$tmp/check1.out" 2>&1
rc=$?
sed 's/^/    /' "$tmp/check1.out"
ok=1
for v in "${victims[@]}"; do grep -q "${v%:*} partition ${v#*:}: its proof fails its checksum" "$tmp/check1.out" || ok=0; done
check "journal check exits 1 (rc $rc) and names the 3 damaged proofs" [ $rc = 1 -a $ok = 1 ]

start_daemon jr --fetch-grace 3600 || finish
# at once, while the damaged partitions are proved again: what the API hands out verifies
ok=1
for k in "${!ids[@]}"; do
    for p in $(seq 0 $((nps[k] - 1))); do api_proof_ok "${ids[$k]}" "$p" "${fxs[$k]}/vk.json" || ok=0; done
done
check "HTTP API right after the start: every proof handed out verifies ($API_VERIFIED verified, the rest 409)" [ $ok = 1 ]
ok=1
for k in "${!ids[@]}"; do
    await_ok "${ids[$k]}" "${fxs[$k]}" "${nps[$k]}" "$tmp/b-${ids[$k]}" || { ok=0; echo "    ${ids[$k]}"; }
done
check "cuzk await: all 10 jobs done, every proof verifies" [ $ok = 1 ]
ok=1
for v in "${victims[@]}"; do
    grep -q "${v%:*} partition ${v#*:}: its proof in the journal fails its checksum; proving it again" "$D_LOG" || ok=0
    cmp -s "$tmp/a-${v%:*}/proof-${v#*:}.json" "$tmp/b-${v%:*}/proof-${v#*:}.json" && ok=0 # new r, s
done
check "the daemon logged the 3 damaged proofs and proved them again" [ $ok = 1 ]
API_VERIFIED=0 ok=1
for k in "${!ids[@]}"; do
    api GET "/v1/jobs/${ids[$k]}"
    [ "$(jget j.state)" = done ] || ok=0
    for p in $(seq 0 $((nps[k] - 1))); do api_proof_ok "${ids[$k]}" "$p" "${fxs[$k]}/vk.json" || ok=0; done
done
check "HTTP API: every job done, all $API_VERIFIED proofs verify" [ $ok = 1 -a $API_VERIFIED -ge 15 ]
# a job left unproved in the journal: submitted, then the daemon stops before proving it all
big=()
for p in $(seq 1 12); do big+=(--witness "$BLS/witness.wtns"); done
qid=$("$CUZK" submit --server "$D_ADDR" --zkey "$BLS/circuit.zkey" "${big[@]}" --idempotency-key jr-idem-queued)
stop_daemon
"$CUZK" journal check --data "$D_DATA" > "$tmp/check2.out" 2>&1
check "journal check is clean again once the proofs were replaced (rc $?)" [ $? = 0 ]

# ---- 2. a journal SQLite calls malformed
n=$(flip "$J" "$(pi_a0 "$tmp/b-${ids[4]}/proof-0.json")")
check "and a digit changed in the proof of ${ids[4]} ($n places)" [ "$n" -ge 1 ]
pg1=$(wreck_page "$J" "jr-idem-5" 10)
pg2=$(wreck_page "$J" "$(pi_a0 "$tmp/b-${ids[8]}/proof-0.json")" 13)
check "the idempotency-key index page ($pg1) and a page of partition records ($pg2) overwritten" \
    [ "$pg1" != 0 -a "$pg2" != 0 ]
timeout 60 "$CUZK" serve --listen 127.0.0.1:0 --data "$D_DATA" --backend cpu --threads 1 > "$tmp/refused.log" 2>&1
rc=$?
sed 's/^/    /' "$tmp/refused.log"
check "the daemon refuses to start (rc $rc) and names journal check and recover" \
    [ $rc = 3 ] && grep -q "cuzk journal check --data" "$tmp/refused.log" && grep -q "cuzk journal recover --data" "$tmp/refused.log"
"$CUZK" journal check --data "$D_DATA" > "$tmp/check3.out" 2>&1
rc=$?
sed 's/^/    /' "$tmp/check3.out"
check "journal check exits 1 on the malformed journal (rc $rc)" [ $rc = 1 ]
"$CUZK" journal recover --data "$D_DATA" > "$tmp/recover.out" 2>&1
rc=$?
sed 's/^/    /' "$tmp/recover.out"
check "journal recover succeeds (rc $rc) and sets the damaged file aside" \
    [ $rc = 0 ] && ls "$D_DATA"/journal.db.damaged-* > /dev/null 2>&1
check "recover re-queues the partition whose proof failed its checksum (or names ${ids[4]} failed)" \
    grep -Eq "${ids[4]} partition 0: its proof fails its checksum: proved again|${ids[4]}: .*the job is failed" "$tmp/recover.out"
"$CUZK" journal check --data "$D_DATA" > /dev/null 2>&1
check "the fresh journal is sound (rc $?)" [ $? = 0 ]

start_daemon jr --fetch-grace 3600 || finish
kept=0 failed=0 lost=0 ok=1
for k in "${!ids[@]}"; do
    id=${ids[$k]}
    api GET "/v1/jobs/$id"
    if [ "$CODE" = 404 ]; then
        lost=$((lost + 1))
        grep -q "$id[: ]" "$tmp/recover.out" || { ok=0; echo "    $id is gone but recover did not name it"; }
        continue
    fi
    if "$CUZK" await --server "$D_ADDR" --timeout 300 "$id" --out "$tmp/c-$id" > "$tmp/await.out" 2>&1; then
        kept=$((kept + 1))
        for p in $(seq 0 $((nps[k] - 1))); do
            sj_verify "${fxs[$k]}/vk.json" "$tmp/c-$id/public-$p.json" "$tmp/c-$id/proof-$p.json" || { ok=0; cat "$tmp/.sj"; }
            api_proof_ok "$id" "$p" "${fxs[$k]}/vk.json" || ok=0
        done
    else
        failed=$((failed + 1))
        api GET "/v1/jobs/$id"
        if [ "$(jget j.state)" != failed ] || ! grep -q "$id:" "$tmp/recover.out"; then
            ok=0; echo "    $id: $(jget 'j.state + ": " + j.error')"
        fi
    fi
done
echo "    after recover: $kept done with verified proofs, $failed failed (named), $lost gone (named)"
check "after recover every job is done with proofs that verify, or failed / gone and named" [ $ok = 1 -a $kept -ge 5 ]
api GET "/v1/jobs/$qid"
if [ "$CODE" = 200 ] && "$CUZK" await --server "$D_ADDR" --timeout 300 "$qid" --out "$tmp/c-q" > /dev/null 2>&1; then
    ok=1
    for p in 0 11; do sj_verify "$BLS/vk.json" "$tmp/c-q/public-$p.json" "$tmp/c-q/proof-$p.json" || ok=0; done
    check "the job still queued at the damage was kept and completes with proofs that verify" [ $ok = 1 ]
else
    check "the job still queued at the damage is named in recover's report" grep -q "$qid[: ]" "$tmp/recover.out"
fi
again=$("$CUZK" submit --server "$D_ADDR" --zkey "$BN/circuit.zkey" --witness "$BN/witness.wtns")
check "a new job after recover gets a new id ($again), never a lost one's" [ "${again#j-}" -gt "${qid#j-}" ]
stop_daemon
finish
