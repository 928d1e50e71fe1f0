#!/usr/bin/env bash
# t_daemon_matrix.sh - the constraint-matrix cache of `cuzk serve` (CPU backend, two logical
# devices sharing one matrix, loopback, black box):
#   - the first load of a key builds its matrix and writes DATA/matrix/<fingerprint>.csr
#     (one file per circuit), /status says "built", and its proofs pass snarkjs;
#   - after a restart the key's matrix comes from the file (/status says "cache"), with no
#     warning, and proofs still pass snarkjs;
#   - a bit-flipped cache and a truncated one are each rejected with exactly one warning,
#     rebuilt ("built") and overwritten with a good file (the next restart says "cache"),
#     and the proofs made meanwhile pass snarkjs;
#   - a data dir where the cache cannot be written only costs a warning: proofs still come.
# Usage: CUZK=bin/cuzk tests/t_daemon_matrix.sh   (normally through tests/run.sh)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/dashboard/daemon_helpers.sh"

BN=$repo/tests/data/bn128/merkle
BLS=$repo/tests/data/bls12381/merkle

# prove FX: a 2-partition job on fixture FX (one per logical device when both are free),
# awaited; 0 when it is done and its last proof passes snarkjs (the daemon itself verifies
# every proof before it hands it out, so a bad matrix on either device fails the job)
prove() {
    local fx=$1 id
    id=$("$CUZK" submit --server "$D_ADDR" --zkey "$fx/circuit.zkey" --witness "$fx/witness.wtns" --witness "$fx/witness.wtns") || return 1
    rm -rf "$tmp/out"
    "$CUZK" await --server "$D_ADDR" --timeout 120 "$id" --out "$tmp/out" > "$tmp/await.log" 2>&1 || { cat "$tmp/await.log"; return 1; }
    [ -s "$tmp/out/proof-0.json" ] || return 1
    sj_verify "$fx/vk.json" "$tmp/out/public-1.json" "$tmp/out/proof-1.json" || { cat "$tmp/.sj"; return 1; }
}
# matrix_of FX: where /status says the matrix of FX's key came from
matrix_of() {
    api GET /status
    jget "(j.keys.find(k => k.path.endsWith('$1/circuit.zkey')) || {}).matrix"
}
# log lines written since mark_log
mark_log() { LOG_MARK=$(wc -l < "$D_LOG"); }
new_log() { tail -n +$((LOG_MARK + 1)) "$D_LOG"; }
csr_count() { ls "$D_DATA/matrix/"*.csr 2>/dev/null | wc -l; }

# 1. first start: both keys built, two cache files written
start_daemon mx --devices 0,0 || finish
mark_log
check "bn128 proofs from a fresh daemon verify${SNARKJS:+ with snarkjs}" prove "$BN"
check "bn128 matrix was built on first load ($(matrix_of "${BN#$repo/}"))" [ "$(matrix_of "${BN#$repo/}")" = built ]
check "bls12-381 proofs from a fresh daemon verify" prove "$BLS"
check "bls12-381 matrix was built on first load" [ "$(matrix_of "${BLS#$repo/}")" = built ]
check "one cache file per circuit in DATA/matrix ($(csr_count))" [ "$(csr_count)" = 2 ]
check "no temp file left in DATA/matrix" [ -z "$(ls "$D_DATA/matrix" | grep -v '\.csr$')" ]
check "no warning on the first load" [ -z "$(new_log | grep -i 'matrix cache not used')" ]
api GET /status
check "/status: no load progress once the key is ready" [ "$(jget "j.keys.every(k => k.load === null)")" = true ]
stop_daemon

# 2. restart: both from the cache
start_daemon mx --devices 0,0 || finish
mark_log
api POST /v1/keys/preload -d "{\"zkey\":\"$BN/circuit.zkey\"}"
check "preload after restart ($CODE)" [ "$CODE" = 200 ]
check "after a restart the bn128 matrix comes from the cache ($(matrix_of "${BN#$repo/}"))" [ "$(matrix_of "${BN#$repo/}")" = cache ]
check "proofs with the cached matrix verify" prove "$BN"
api POST /v1/keys/preload -d "{\"zkey\":\"$BLS/circuit.zkey\"}"
check "bls12-381 matrix from the cache" [ "$(matrix_of "${BLS#$repo/}")" = cache ]
check "no warning when the cache is good" [ -z "$(new_log | grep -i 'matrix cache not used')" ]
stop_daemon

# 3. a corrupted and a truncated cache: one warning each, rebuilt, overwritten
bn_csr= bls_csr=
for f in "$D_DATA"/matrix/*.csr; do
    # tell them apart by the curve id at byte 12 (0 = BN254)
    if [ "$(od -An -tu4 -j12 -N4 "$f" | tr -d ' ')" = 0 ]; then bn_csr=$f; else bls_csr=$f; fi
done
check "found both cache files" [ -n "$bn_csr" -a -n "$bls_csr" ]
size=$(stat -c %s "$bn_csr")
byte=$(od -An -tu1 -j $((size / 2)) -N1 "$bn_csr" | tr -d ' ')
printf "$(printf '\\%03o' $((byte ^ 4)))" | dd of="$bn_csr" bs=1 seek=$((size / 2)) conv=notrunc status=none
truncate -s $(( $(stat -c %s "$bls_csr") - 100 )) "$bls_csr"
start_daemon mx --devices 0,0 || finish
mark_log
check "proofs after a corrupted cache verify" prove "$BN"
check "the corrupted bn128 matrix was rebuilt" [ "$(matrix_of "${BN#$repo/}")" = built ]
check "proofs after a truncated cache verify" prove "$BLS"
check "the truncated bls12-381 matrix was rebuilt" [ "$(matrix_of "${BLS#$repo/}")" = built ]
warns=$(new_log | grep -ci 'matrix cache not used')
check "exactly one warning per bad cache ($warns)" [ "$warns" = 2 ]
check "the warnings say why (checksum, truncated)" \
    bash -c "grep -i 'matrix cache not used' <<< \"\$1\" | grep -q checksum && grep -i 'matrix cache not used' <<< \"\$1\" | grep -q truncated" _ "$(new_log)"
check "still one file per circuit" [ "$(csr_count)" = 2 ]
stop_daemon
start_daemon mx --devices 0,0 || finish
api POST /v1/keys/preload -d "{\"zkey\":\"$BN/circuit.zkey\"}"
api POST /v1/keys/preload -d "{\"zkey\":\"$BLS/circuit.zkey\"}"
check "the rewritten bn128 cache is used after the next restart" [ "$(matrix_of "${BN#$repo/}")" = cache ]
check "the rewritten bls12-381 cache is used after the next restart" [ "$(matrix_of "${BLS#$repo/}")" = cache ]
stop_daemon

# 4. the cache cannot be written (DATA/matrix is a file): a warning, and proofs as usual
start_daemon ro || finish
stop_daemon
rm -rf "$D_DATA/matrix" && echo "not a folder" > "$D_DATA/matrix"
start_daemon ro || finish
mark_log
check "proofs when the cache cannot be written verify" prove "$BN"
check "the matrix was built" [ "$(matrix_of "${BN#$repo/}")" = built ]
check "a warning says the matrix is not cached" bash -c "grep -qi 'not cached' <<< \"\$1\"" _ "$(new_log)"
stop_daemon

finish
