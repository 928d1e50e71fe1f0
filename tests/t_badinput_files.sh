#!/usr/bin/env bash
# t_badinput_files.sh - `cuzk prove`, `cuzk verify` and `cuzk zkey export-vk` refuse broken or
# mismatched input files with exit code 3 (cli.h: input error) and a message that names the
# problem, before any proving work starts. Broken files are made from the committed fixtures
# (tests/data/<curve>/<circuit>/): missing, empty, a directory, truncated at several places,
# the wrong kind of file, a PLONK key, a witness of the other curve or of another circuit, and
# JSON that is malformed, out of range or on the wrong curve. The layouts are in
# docs/FORMATS.md; the readers' unit tests (src/groth16/formats_test.c, json_test.c) cover
# each malformation in detail, this suite checks that the command reports them.
# Usage: CUZK=bin/cuzk tests/t_badinput_files.sh   (normally through tests/run.sh)
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
cd "$repo"
CUZK=${CUZK:-$repo/bin/cuzk}
if [ ! -x "$CUZK" ]; then
    echo "FAIL: no cuzk binary at $CUZK"
    exit 1
fi
BN=tests/data/bn128/multiplier
BLS=tests/data/bls12381/multiplier
BIG=tests/data/bn128/merkle
for d in "$BN" "$BLS"; do
    for f in circuit.zkey witness.wtns vk.json proof.json public.json; do
        if [ ! -f "$d/$f" ]; then
            echo "FAIL: fixture $d/$f is missing"
            exit 1
        fi
    done
done
tmp=${CUZK_TEST_TMP:-$(mktemp -d)}
mkdir -p "$tmp"

failures=0
checks=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect CODE SUBSTRING LABEL -- command...: runs the command, checks its exit code and that
# its stderr+stdout contain SUBSTRING.
expect() {
    local code=$1 substr=$2 label=$3
    shift 4
    checks=$((checks + 1))
    local out rc
    out=$("$@" 2>&1)
    rc=$?
    if [ "$rc" != "$code" ]; then
        fail "$label: exit $rc, expected $code; output: $out"
    elif ! grep -qF -- "$substr" <<<"$out"; then
        fail "$label: output lacks '$substr': $out"
    else
        echo "ok:   $label"
    fi
}

prove() { "$CUZK" prove --backend cpu "$1" "$2" "$tmp/out_proof.json" "$tmp/out_public.json"; }

# ---- missing, empty, not a file ----
expect 3 "cannot open" "missing zkey" -- prove "$tmp/nope.zkey" "$BN/witness.wtns"
expect 3 "cannot open" "missing witness" -- prove "$BN/circuit.zkey" "$tmp/nope.wtns"
: >"$tmp/empty.zkey"
expect 3 "file is empty" "empty zkey" -- prove "$tmp/empty.zkey" "$BN/witness.wtns"
: >"$tmp/empty.wtns"
expect 3 "file is empty" "empty witness" -- prove "$BN/circuit.zkey" "$tmp/empty.wtns"
mkdir -p "$tmp/dir.zkey"
expect 3 "is a directory" "directory as zkey" -- prove "$tmp/dir.zkey" "$BN/witness.wtns"

# ---- truncated ----
for d in "$BN" "$BLS"; do
    size=$(stat -c %s "$d/circuit.zkey")
    for cut in 7 30 700 $((size / 2)) $((size - 1)); do
        head -c "$cut" "$d/circuit.zkey" >"$tmp/cut.zkey"
        want=truncated
        [ "$cut" -lt 12 ] && want="too short"
        expect 3 "$want" "$d zkey cut at $cut of $size" -- prove "$tmp/cut.zkey" "$d/witness.wtns"
    done
    wsize=$(stat -c %s "$d/witness.wtns")
    head -c $((wsize - 5)) "$d/witness.wtns" >"$tmp/cut.wtns"
    expect 3 "truncated" "$d witness cut by 5 bytes" -- prove "$d/circuit.zkey" "$tmp/cut.wtns"
done

# ---- wrong kind of file ----
expect 3 "this is a .wtns file, expected a .zkey file" "witness as key" \
    -- prove "$BN/witness.wtns" "$BN/witness.wtns"
expect 3 "this is a .zkey file, expected a .wtns file" "key as witness" \
    -- prove "$BN/circuit.zkey" "$BN/circuit.zkey"
expect 3 "not a .zkey file" "JSON as key" -- prove "$BN/vk.json" "$BN/witness.wtns"
# protocol 2 (PLONK) in section 1; snarkjs writes section 1 first, its payload at byte 24
cp "$BN/circuit.zkey" "$tmp/plonk.zkey"
chmod u+w "$tmp/plonk.zkey"
if [ "$(od -An -tu4 -j12 -N4 "$tmp/plonk.zkey" | tr -d ' ')" = 1 ]; then
    printf '\002' | dd of="$tmp/plonk.zkey" bs=1 seek=24 conv=notrunc status=none
    expect 3 "PLONK key (protocol 2)" "PLONK key" -- prove "$tmp/plonk.zkey" "$BN/witness.wtns"
else
    fail "fixture $BN/circuit.zkey does not start with section 1"
fi

# ---- witness that does not fit the key ----
expect 3 "witness is for BLS12-381 but the key is BN254" "BLS witness, BN key" \
    -- prove "$BN/circuit.zkey" "$BLS/witness.wtns"
expect 3 "witness is for BN254 but the key is BLS12-381" "BN witness, BLS key" \
    -- prove "$BLS/circuit.zkey" "$BN/witness.wtns"
if [ -f "$BIG/witness.wtns" ]; then
    n=$(od -An -tu4 -j$((12 + 12 + 4 + 32)) -N4 "$BIG/witness.wtns" | tr -d ' ')
    expect 3 "witness has $n values, the key expects 4" "witness of another circuit" \
        -- prove "$BN/circuit.zkey" "$BIG/witness.wtns"
fi

# ---- zkey export-vk ----
expect 3 "truncated" "export-vk of a truncated key" \
    -- "$CUZK" zkey export-vk "$tmp/cut.zkey" "$tmp/vk_out.json"

# ---- JSON for verify ----
BN_Q=21888242871839275222246405745257275088696311157297823662689037894645226208583
BN_R=21888242871839275222246405745257275088548364400416034343698204186575808495617
verify() { "$CUZK" verify "$1" "$2" "$3"; }
head -c 100 "$BN/vk.json" >"$tmp/vk_cut.json"
expect 3 "not valid JSON" "truncated vk.json" -- verify "$tmp/vk_cut.json" "$BN/public.json" "$BN/proof.json"
expect 3 "cannot open" "missing proof.json" -- verify "$BN/vk.json" "$BN/public.json" "$tmp/nope.json"
sed '3s/"[0-9]*"/"'$BN_Q'"/' "$BN/proof.json" >"$tmp/proof_q.json"
expect 3 "pi_a[0] is not below q of BN254" "proof coordinate = q" \
    -- verify "$BN/vk.json" "$BN/public.json" "$tmp/proof_q.json"
sed 's/"bn128"/"bls12381"/' "$BN/proof.json" >"$tmp/proof_curve.json"
expect 3 "proof is for BLS12-381 but the key is BN254" "proof on the other curve" \
    -- verify "$BN/vk.json" "$BN/public.json" "$tmp/proof_curve.json"
printf '{"pi_a": ["1", "2"], "pi_b": [["1", "2"], ["3", "4"]]}' >"$tmp/proof_noc.json"
expect 3 'missing "pi_c"' "proof without pi_c" -- verify "$BN/vk.json" "$BN/public.json" "$tmp/proof_noc.json"
printf '["%s"]' "$BN_R" >"$tmp/public_r.json"
expect 3 "public signal 0 is not below r of BN254" "public signal = r" \
    -- verify "$BN/vk.json" "$tmp/public_r.json" "$BN/proof.json"
sed '/"curve"/d' "$BN/vk.json" >"$tmp/vk_nocurve.json"
expect 3 'missing "curve"' "vk without curve" -- verify "$tmp/vk_nocurve.json" "$BN/public.json" "$BN/proof.json"

echo "t_badinput_files: $checks checks, $failures failures"
[ "$failures" = 0 ]
