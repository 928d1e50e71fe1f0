#!/usr/bin/env bash
# t_cli.sh - bad input through the cuzk command: every case must end with the exit code of
# src/cli/cli.h's table (2 usage, 3 input, 4 resource), a message that names the problem, and no
# crash (exit < 128; sanitizer reports count as crashes).
# Cases: unknown subcommand, missing arguments and bad options; missing, empty, truncated (at
# every zkey section boundary, header and payload) and wrong-magic files; a zkey and a witness of
# different curves; a witness of the wrong length; malformed JSON; an unwritable output path;
# `--backend gpu` without a GPU (exit 4).
# Usage: CUZK=bin/cuzk tests/t_cli.sh   (normally through tests/run.sh)
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
cd "$repo"
CUZK=${CUZK:-$repo/bin/cuzk}
if [ ! -x "$CUZK" ]; then
    echo "FAIL: no cuzk binary at $CUZK"
    exit 1
fi
if ! command -v python3 >/dev/null; then
    echo "SKIP: python3 is not installed (needed to cut files at section boundaries)"
    exit 77
fi
tmp=${CUZK_TEST_TMP:-$(mktemp -d)}
mkdir -p "$tmp"
# sanitizer builds: make a report distinguishable from an ordinary exit 1
export ASAN_OPTIONS=${ASAN_OPTIONS:-exitcode=86}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-exitcode=86:print_stacktrace=1}

failures=0
checks=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect DESC WANT_RC REGEX cmd... : exit code in WANT_RC (space-separated list), output (stdout
# and stderr) matching the extended REGEX case-insensitively, no crash
expect() {
    local desc=$1 want=$2 re=$3; shift 3
    checks=$((checks + 1))
    "$@" > "$tmp/out" 2>&1
    local rc=$?
    local msg
    msg=$(head -c 2000 "$tmp/out")
    if [ $rc -ge 128 ] || grep -Eq 'Sanitizer|runtime error:' "$tmp/out"; then
        fail "$desc: crashed (exit $rc): $*"; echo "$msg" | sed 's/^/      /' | tail -20; return
    fi
    case " $want " in
        *" $rc "*) ;;
        *) fail "$desc: exit $rc, expected $want: $*"; echo "$msg" | sed 's/^/      /' | tail -8; return ;;
    esac
    if [ -n "$re" ] && ! grep -Eiq -- "$re" "$tmp/out"; then
        fail "$desc: message does not match /$re/: $*"; echo "$msg" | sed 's/^/      /' | tail -8; return
    fi
    echo "ok:   $desc (exit $rc): $(head -n1 "$tmp/out" | cut -c1-150)"
}

bn=tests/data/bn128
bls=tests/data/bls12381
p=$tmp/p.json
q=$tmp/q.json

echo "== command line"
expect "no arguments" 2 'usage' "$CUZK"
expect "--help" 0 'prove' "$CUZK" --help
expect "unknown subcommand" 2 'unknown|frobnicate' "$CUZK" frobnicate
expect "prove without arguments" 2 'usage|argument|expected' "$CUZK" prove
expect "prove with 2 of 4 files" 2 'usage|argument|expected' "$CUZK" prove "$bn/multiplier/circuit.zkey" "$bn/multiplier/witness.wtns"
expect "prove with 5 files" 2 'usage|argument|many' "$CUZK" prove "$bn/multiplier/circuit.zkey" "$bn/multiplier/witness.wtns" "$p" "$q" extra
expect "prove unknown option" 2 'unknown|option|--frob' "$CUZK" prove --frob "$bn/multiplier/circuit.zkey" "$bn/multiplier/witness.wtns" "$p" "$q"
expect "prove --threads 0" 2 'threads' "$CUZK" prove --threads 0 "$bn/multiplier/circuit.zkey" "$bn/multiplier/witness.wtns" "$p" "$q"
expect "prove --threads abc" 2 'threads' "$CUZK" prove --threads abc "$bn/multiplier/circuit.zkey" "$bn/multiplier/witness.wtns" "$p" "$q"
expect "prove --threads without value" 2 'threads|usage|argument|option' "$CUZK" prove "$bn/multiplier/circuit.zkey" "$bn/multiplier/witness.wtns" "$p" "$q" --threads
expect "prove --backend tpu" 2 'backend|tpu' "$CUZK" prove --backend tpu "$bn/multiplier/circuit.zkey" "$bn/multiplier/witness.wtns" "$p" "$q"
expect "verify without arguments" 2 'usage|argument|expected' "$CUZK" verify
expect "verify with 2 files" 2 'usage|argument|expected' "$CUZK" verify "$bn/multiplier/vk.json" "$bn/multiplier/public.json"
expect "zkey without subcommand" 2 'usage|export-vk' "$CUZK" zkey
expect "zkey unknown subcommand" 2 'usage|export-vk' "$CUZK" zkey export-pk "$bn/multiplier/circuit.zkey" "$tmp/vk.json"
expect "zkey export-vk missing output" 2 'usage|export-vk' "$CUZK" zkey export-vk "$bn/multiplier/circuit.zkey"

echo "== missing and empty files"
expect "prove: missing zkey" 3 'nosuch\.zkey' "$CUZK" prove "$tmp/nosuch.zkey" "$bn/multiplier/witness.wtns" "$p" "$q"
expect "prove: missing witness" 3 'nosuch\.wtns' "$CUZK" prove "$bn/multiplier/circuit.zkey" "$tmp/nosuch.wtns" "$p" "$q"
expect "verify: missing vk" 3 'nosuch_vk\.json' "$CUZK" verify "$tmp/nosuch_vk.json" "$bn/multiplier/public.json" "$bn/multiplier/proof.json"
expect "verify: missing public" 3 'nosuch_pub\.json' "$CUZK" verify "$bn/multiplier/vk.json" "$tmp/nosuch_pub.json" "$bn/multiplier/proof.json"
expect "verify: missing proof" 3 'nosuch_proof\.json' "$CUZK" verify "$bn/multiplier/vk.json" "$bn/multiplier/public.json" "$tmp/nosuch_proof.json"
expect "export-vk: missing zkey" 3 'nosuch\.zkey' "$CUZK" zkey export-vk "$tmp/nosuch.zkey" "$tmp/vk.json"
expect "prove: zkey is a directory" 3 "$(basename "$tmp")|directory" "$CUZK" prove "$tmp" "$bn/multiplier/witness.wtns" "$p" "$q"
: > "$tmp/empty.zkey"; : > "$tmp/empty.wtns"; : > "$tmp/empty.json"
expect "prove: empty zkey" 3 'empty\.zkey.*(empty|short|0 bytes)|(empty|short).*empty\.zkey' "$CUZK" prove "$tmp/empty.zkey" "$bn/multiplier/witness.wtns" "$p" "$q"
expect "prove: empty witness" 3 'empty\.wtns.*(empty|short|0 bytes)|(empty|short).*empty\.wtns' "$CUZK" prove "$bn/multiplier/circuit.zkey" "$tmp/empty.wtns" "$p" "$q"
expect "export-vk: empty zkey" 3 'empty\.zkey' "$CUZK" zkey export-vk "$tmp/empty.zkey" "$tmp/vk.json"
expect "verify: empty vk" 3 'empty\.json' "$CUZK" verify "$tmp/empty.json" "$bn/multiplier/public.json" "$bn/multiplier/proof.json"
expect "verify: empty public" 3 'empty\.json' "$CUZK" verify "$bn/multiplier/vk.json" "$tmp/empty.json" "$bn/multiplier/proof.json"
expect "verify: empty proof" 3 'empty\.json' "$CUZK" verify "$bn/multiplier/vk.json" "$bn/multiplier/public.json" "$tmp/empty.json"

echo "== malformed JSON"
printf '{"protocol": "groth16", "curve": "bn128", ' > "$tmp/cut_vk.json"
expect "verify: vk cut mid-object" 3 'cut_vk\.json' "$CUZK" verify "$tmp/cut_vk.json" "$bn/multiplier/public.json" "$bn/multiplier/proof.json"
printf '["33", "not a number"]\n' > "$tmp/bad_pub.json"
expect "verify: public signal not a number" 3 'bad_pub\.json' "$CUZK" verify "$bn/multiplier/vk.json" "$tmp/bad_pub.json" "$bn/multiplier/proof.json"
printf '[]\n' > "$tmp/few_pub.json"
expect "verify: too few public signals" 3 'few_pub\.json|public' "$CUZK" verify "$bn/multiplier/vk.json" "$tmp/few_pub.json" "$bn/multiplier/proof.json"
python3 - "$bn/multiplier/proof.json" "$tmp/nopia_proof.json" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1])); del j["pi_a"]; json.dump(j, open(sys.argv[2], "w"))
EOF
expect "verify: proof without pi_a" 3 'pi_a' "$CUZK" verify "$bn/multiplier/vk.json" "$bn/multiplier/public.json" "$tmp/nopia_proof.json"
python3 - "$bn/multiplier/public.json" "$tmp/big_pub.json" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
j[0] = str(21888242871839275222246405745257275088548364400416034343698204186575808495617 + 5)
json.dump(j, open(sys.argv[2], "w"))
EOF
expect "verify: public signal >= r" 3 'big_pub\.json|range|field|modulus|below|>= ?r|too large' "$CUZK" verify "$bn/multiplier/vk.json" "$tmp/big_pub.json" "$bn/multiplier/proof.json"
expect "verify: bls12381 vk with a bn128 proof" "1 3" '' "$CUZK" verify "$bls/multiplier/vk.json" "$bn/multiplier/public.json" "$bn/multiplier/proof.json"

echo "== truncated zkeys (section boundaries)"
# cut_points ZKEY: "offset label" lines: inside the file header, and for every section its
# header start, header middle, payload start, payload middle and one byte short of its end
cut_points() {
    python3 - "$1" <<'EOF'
import struct, sys
data = open(sys.argv[1], "rb").read()
n = struct.unpack_from("<I", data, 8)[0]
pts = [(4, "in file header"), (11, "in file header")]
pos = 12
for _ in range(n):
    typ, size = struct.unpack_from("<IQ", data, pos)
    pts += [(pos, "before section %d header" % typ), (pos + 6, "in section %d header" % typ),
            (pos + 12, "at section %d payload" % typ)]
    if size > 1:
        pts += [(pos + 12 + size // 2, "middle of section %d" % typ),
                (pos + 12 + size - 1, "1 byte short of section %d end" % typ)]
    pos += 12 + size
assert pos == len(data), "section table does not cover the file"
for off, label in pts:
    if 0 < off < len(data):
        print(off, label)
EOF
}
for fx in bn128/multiplier bn128/merkle bls12381/merkle; do
    z=tests/data/$fx/circuit.zkey
    w=tests/data/$fx/witness.wtns
    tz=$tmp/trunc_$(echo "$fx" | tr / _).zkey
    while read -r off label; do
        head -c "$off" "$z" > "$tz"
        expect "prove: $fx zkey cut at $off ($label)" 3 "trunc|short|ends|remain|missing|expected" \
            "$CUZK" prove "$tz" "$w" "$p" "$q"
    done < <(cut_points "$z")
    # export-vk reads the same file: one cut per section is enough there
    while read -r off label; do
        head -c "$off" "$z" > "$tz"
        expect "export-vk: $fx zkey cut at $off ($label)" 3 "trunc|short|ends|remain|missing|expected" \
            "$CUZK" zkey export-vk "$tz" "$tmp/vk.json"
    done < <(cut_points "$z" | grep 'middle of')
done
for fx in bn128/merkle bls12381/merkle; do
    w=tests/data/$fx/witness.wtns
    size=$(stat -c %s "$w")
    for off in 11 40 $((size / 2)) $((size - 1)); do
        head -c "$off" "$w" > "$tmp/trunc.wtns"
        expect "prove: $fx witness cut at $off of $size" 3 "trunc|short|ends|remain|missing|expected" \
            "$CUZK" prove "tests/data/$fx/circuit.zkey" "$tmp/trunc.wtns" "$p" "$q"
    done
done

echo "== corrupted headers"
python3 - "$bn/multiplier/circuit.zkey" "$tmp" <<'EOF'
import struct, sys
src, out = sys.argv[1], sys.argv[2]
data = bytearray(open(src, "rb").read())
def save(name, b):
    open(out + "/" + name, "wb").write(bytes(b))
b = bytearray(data); b[0:4] = b"XKEY"; save("magic.zkey", b)
b = bytearray(data); struct.pack_into("<I", b, 4, 7); save("version.zkey", b)
b = bytearray(data); struct.pack_into("<Q", b, 16, 1 << 40); save("hugesection.zkey", b)
b = bytearray(data); struct.pack_into("<I", b, 8, 200); save("nsections.zkey", b)
EOF
expect "prove: wrong magic" 3 'magic|not a' "$CUZK" prove "$tmp/magic.zkey" "$bn/multiplier/witness.wtns" "$p" "$q"
expect "prove: unknown zkey version" 3 'version' "$CUZK" prove "$tmp/version.zkey" "$bn/multiplier/witness.wtns" "$p" "$q"
expect "prove: section size past end of file" 3 'trunc|remain|size|bytes' "$CUZK" prove "$tmp/hugesection.zkey" "$bn/multiplier/witness.wtns" "$p" "$q"
expect "prove: more sections announced than present" 3 'trunc|section|ends' "$CUZK" prove "$tmp/nsections.zkey" "$bn/multiplier/witness.wtns" "$p" "$q"
expect "prove: witness given as zkey" 3 'wtns|magic|not a|expected' "$CUZK" prove "$bn/multiplier/witness.wtns" "$bn/multiplier/witness.wtns" "$p" "$q"
expect "prove: zkey given as witness" 3 'zkey|magic|not a|expected' "$CUZK" prove "$bn/multiplier/circuit.zkey" "$bn/multiplier/circuit.zkey" "$p" "$q"
expect "prove: r1cs given as zkey" 3 'r1cs|magic|not a|expected' "$CUZK" prove "$bn/multiplier/circuit.r1cs" "$bn/multiplier/witness.wtns" "$p" "$q"
expect "export-vk: wrong magic" 3 'magic|not a' "$CUZK" zkey export-vk "$tmp/magic.zkey" "$tmp/vk.json"

echo "== mismatched inputs"
expect "prove: bn128 zkey with bls12381 witness" 3 'curve|bls|bn' "$CUZK" prove "$bn/multiplier/circuit.zkey" "$bls/multiplier/witness.wtns" "$p" "$q"
expect "prove: bls12381 zkey with bn128 witness" 3 'curve|bls|bn' "$CUZK" prove "$bls/merkle/circuit.zkey" "$bn/merkle/witness.wtns" "$p" "$q"
expect "prove: witness of the wrong length" 3 'witness.*(values|length|expect|size)' "$CUZK" prove "$bn/merkle/circuit.zkey" "$bn/multiplier/witness.wtns" "$p" "$q"
expect "prove: unwritable proof path" 3 'no-such-dir' "$CUZK" prove "$bn/multiplier/circuit.zkey" "$bn/multiplier/witness.wtns" "$tmp/no-such-dir/proof.json" "$q"
expect "export-vk: unwritable output" 3 'no-such-dir' "$CUZK" zkey export-vk "$bn/multiplier/circuit.zkey" "$tmp/no-such-dir/vk.json"

echo "== --batch with its stages overlapped (CUZK_BATCH_OVERLAP=1; a GPU's default) and in turn"
# each pass's MSMs run while a feeder thread does the next partitions' a/b/c and h: the proofs
# must equal one proof with the same r, s and verify; a failing step must end the batch with its
# error, not hang it
checks=$((checks + 1))
CUZK_TEST_RS=1,2 "$CUZK" prove "$bls/merkle/circuit.zkey" "$bls/merkle/witness.wtns" "$tmp/b1.json" "$tmp/b1p.json" \
    >"$tmp/out" 2>&1 || fail "batch: the single proof failed: $(tail -1 "$tmp/out")"
if CUZK_TEST_FEED_DELAY_MS=150 CUZK_BATCH_OVERLAP=1 CUZK_TEST_RS=1,2 timeout 120 "$CUZK" prove --batch 5 "$bls/merkle/circuit.zkey" \
    "$bls/merkle/witness.wtns" "$tmp/b5.json" "$tmp/b5p.json" >"$tmp/out" 2>&1; then
    cmp -s "$tmp/b1.json" "$tmp/b5.json" || fail "batch overlapped: the proof differs from the single proof"
    "$CUZK" verify "$bls/merkle/vk.json" "$tmp/b5p.json" "$tmp/b5.json" >/dev/null 2>&1 ||
        fail "batch overlapped: the proof does not verify"
else
    fail "batch overlapped: rc $? $(tail -1 "$tmp/out")"
fi
checks=$((checks + 1))
if CUZK_TEST_RS=1,2 timeout 120 "$CUZK" prove -v --batch 3 "$bls/merkle/circuit.zkey" \
    "$bls/merkle/witness.wtns" "$tmp/b3.json" "$tmp/b3p.json" >"$tmp/out" 2>&1; then
    cmp -s "$tmp/b1.json" "$tmp/b3.json" || fail "batch in turn: the proof differs from the single proof"
    grep -q "stages in turn)" "$tmp/out" || fail "batch on the CPU: not in turn by default: $(grep 'batch 1' "$tmp/out")"
else
    fail "batch in turn (the CPU's default): rc $? $(tail -1 "$tmp/out")"
fi
# passes of at most 2 (the CPU backend's CUZK_TEST_CPU_BATCH hook stands for a streamed key):
# overlapped, the short pass goes first (it waits for one partition, not two)
# (in turn, one msm_batch call for all five, which the backend splits into its passes)
for mode in "1 3 MSM calls, the first for 1 partition, stages overlapped" \
    "0 1 MSM call, the first for 5 partitions, stages in turn"; do
    checks=$((checks + 1))
    if CUZK_TEST_CPU_BATCH=1 CUZK_BATCH_OVERLAP=${mode%% *} CUZK_TEST_FEED_DELAY_MS=50 CUZK_TEST_RS=1,2 timeout 120 \
        "$CUZK" prove -v --batch 5 --batch-max 2 "$bls/merkle/circuit.zkey" "$bls/merkle/witness.wtns" "$tmp/bm.json" \
        "$tmp/bmp.json" >"$tmp/out" 2>&1; then
        cmp -s "$tmp/b1.json" "$tmp/bm.json" || fail "batch in passes of 2 (${mode#* }): the proof differs"
        grep -q "${mode#* })" "$tmp/out" || fail "batch in passes of 2: not '${mode#* }': $(grep 'batch 1' "$tmp/out")"
    else
        fail "batch in passes of 2 (${mode#* }): rc $? $(tail -1 "$tmp/out")"
    fi
done
expect "prove --batch, overlapped, a device step failing" 4 'memory' env CUZK_FAULT_OOM=1 CUZK_BATCH_OVERLAP=1 \
    timeout 120 "$CUZK" prove --batch 5 "$bls/merkle/circuit.zkey" "$bls/merkle/witness.wtns" "$p" "$q"

echo "== GPU"
if command -v nvidia-smi >/dev/null && grep -q '^GPU' <<< "$(nvidia-smi -L 2>/dev/null)"; then
    echo "note: a GPU is present, the no-GPU case is not checked here"
else
    expect "prove --backend gpu without a GPU" 4 'gpu|cuda|device' \
        "$CUZK" prove --backend gpu "$bn/multiplier/circuit.zkey" "$bn/multiplier/witness.wtns" "$p" "$q"
fi

echo "== $checks checks, $failures failed"
[ $failures -eq 0 ]
