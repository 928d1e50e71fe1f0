#!/usr/bin/env bash
# t_devcircuit.sh - `cuzk dev-circuit` checked against snarkjs 0.7.6 (the oracle), both curves,
# 100 and 1000 constraints, sparse and dense:
#   - `snarkjs wtns check` accepts the witness against the written circuit.r1cs;
#   - a proof made by `snarkjs groth16 prove` from our zkey and witness passes
#     `snarkjs groth16 verify` with our vk.json, and a tampered public signal fails it;
#   - `snarkjs zkey export verificationkey` of our zkey equals our vk.json (deep equality);
#   - `cuzk prove` on our files gives a proof that snarkjs verifies;
#   - the output says loudly that the setup is insecure, and the zkey's contribution record
#     carries that in its name; the same seed gives byte-identical files, another seed not;
#   - --backend: cpu and auto give the same bytes as the default, the report names the
#     backend; without a GPU, auto falls back to the CPU and gpu exits 4 with a clear message
#     and writes nothing (tests/gpu.sh compares gpu against cpu where there is a GPU);
#   - bad arguments exit 2, an output folder that cannot be created exits 3.
# Usage: CUZK=bin/cuzk tests/t_devcircuit.sh   (normally through tests/run.sh)
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
cd "$repo"
CUZK=${CUZK:-$repo/bin/cuzk}
SNARKJS=$repo/node_modules/.bin/snarkjs
if ! command -v node >/dev/null; then
    echo "SKIP: node is not installed (snarkjs is the oracle)"
    exit 77
fi
if [ ! -x "$SNARKJS" ]; then
    echo "SKIP: $SNARKJS missing (run 'npm ci' at the repository root)"
    exit 77
fi
if [ ! -x "$CUZK" ]; then
    echo "FAIL: no cuzk binary at $CUZK"
    exit 1
fi
tmp=${CUZK_TEST_TMP:-$(mktemp -d)}
mkdir -p "$tmp"
export ASAN_OPTIONS=${ASAN_OPTIONS:-exitcode=86}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-exitcode=86:print_stacktrace=1}

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok:   $*"; }

# run DESC WANT_RC cmd... : runs cmd (output in $tmp/last.out) and checks its exit code
run() {
    local desc=$1 want=$2; shift 2
    "$@" > "$tmp/last.out" 2>&1
    local rc=$?
    if [ $rc -ge 128 ] || [ $rc -eq 86 ] || grep -Eq 'Sanitizer|runtime error:' "$tmp/last.out"; then
        fail "$desc: crashed (exit $rc): $*"; sed 's/^/      /' "$tmp/last.out" | tail -20; return 1
    fi
    if [ "$rc" = "$want" ]; then pass "$desc"; return 0; fi
    fail "$desc: exit $rc, expected $want: $*"; sed 's/^/      /' "$tmp/last.out" | tail -20
    return 1
}

# expect DESC PATTERN: the last command's output matches PATTERN
expect() {
    if grep -Eq "$2" "$tmp/last.out"; then pass "$1"; else
        fail "$1: no match for '$2'"; sed 's/^/      /' "$tmp/last.out" | tail -20; fi
}

# same_json DESC A B [KEY]: deep equality of two JSON files (only their member KEY if given;
# "-KEY": all members but KEY)
same_json() {
    if node -e 'const fs=require("fs");let a=JSON.parse(fs.readFileSync(process.argv[1])),
        b=JSON.parse(fs.readFileSync(process.argv[2]));const k=process.argv[3]||"";
        if(k.startsWith("-")){delete a[k.slice(1)];delete b[k.slice(1)];}
        else if(k){a=a[k];b=b[k];if(a===undefined||b===undefined)process.exit(1);}
        process.exit(JSON.stringify(a)===JSON.stringify(b)?0:1)' "$2" "$3" "${4:-}"; then
        pass "$1"; else fail "$1: $2 and $3 differ${4:+ (in ${4})}"; fi
}

have_prove=0
if "$CUZK" prove --help >/dev/null 2>&1; then have_prove=1; fi

# check CURVE N [extra dev-circuit args...]
check() {
    local curve=$1 n=$2; shift 2
    local tag="$curve n=$n${*:+ $*}" d="$tmp/$curve-$n${1:-}"
    run "$tag: dev-circuit" 0 "$CUZK" dev-circuit --curve "$curve" --constraints "$n" --out "$d" --r1cs "$@" || return
    expect "$tag: insecure warning" 'INSECURE DEVELOPMENT SETUP'
    if grep -aq 'INSECURE' "$d/circuit.zkey"; then pass "$tag: contribution name says insecure"; else
        fail "$tag: no INSECURE in the zkey's contribution record"; fi
    run "$tag: snarkjs wtns check" 0 "$SNARKJS" wtns check "$d/circuit.r1cs" "$d/witness.wtns"
    expect "$tag: witness satisfies the r1cs" 'WITNESS IS CORRECT'
    run "$tag: snarkjs prove" 0 "$SNARKJS" groth16 prove "$d/circuit.zkey" "$d/witness.wtns" \
        "$d/sj_proof.json" "$d/public.json" || return
    run "$tag: snarkjs verify with our vk.json" 0 "$SNARKJS" groth16 verify "$d/vk.json" "$d/public.json" \
        "$d/sj_proof.json"
    expect "$tag: snarkjs says OK" 'OK!'
    run "$tag: snarkjs export vk" 0 "$SNARKJS" zkey export verificationkey "$d/circuit.zkey" "$d/sj_vk.json"
    same_json "$tag: vk.json equals snarkjs's export" "$d/vk.json" "$d/sj_vk.json" -vk_alphabeta_12
    same_json "$tag: vk_alphabeta_12 equals snarkjs's" "$d/vk.json" "$d/sj_vk.json" vk_alphabeta_12
    if node -e 'const fs=require("fs");const p=JSON.parse(fs.readFileSync(process.argv[1]));
            if(!p.length)process.exit(3);
            p[0]=(BigInt(p[0])+1n).toString();fs.writeFileSync(process.argv[2],JSON.stringify(p))' \
            "$d/public.json" "$d/bad_public.json"; then
        run "$tag: snarkjs rejects a tampered public signal" 1 "$SNARKJS" groth16 verify "$d/vk.json" \
            "$d/bad_public.json" "$d/sj_proof.json"
    fi
    if [ $have_prove = 1 ]; then
        run "$tag: cuzk prove" 0 "$CUZK" prove --backend cpu "$d/circuit.zkey" "$d/witness.wtns" \
            "$d/proof.json" "$d/cuzk_public.json" || return
        same_json "$tag: cuzk public.json equals snarkjs's" "$d/cuzk_public.json" "$d/public.json"
        run "$tag: snarkjs verifies cuzk's proof" 0 "$SNARKJS" groth16 verify "$d/vk.json" \
            "$d/cuzk_public.json" "$d/proof.json"
        expect "$tag: snarkjs says OK for cuzk's proof" 'OK!'
    fi
}

check bn128 100
check bn128 1000
check bls12381 100
check bls12381 1000
check bn128 1000 --dense --public 3
check bls12381 100 --dense --public 0
check bn128 1 --public 2

# determinism: same seed -> same bytes; another seed -> another key
run "seed 7 once" 0 "$CUZK" dev-circuit -q --curve bn128 --constraints 300 --out "$tmp/s7a" --seed 7
run "seed 7 again" 0 "$CUZK" dev-circuit -q --curve bn128 --constraints 300 --out "$tmp/s7b" --seed 7 --threads 1
run "seed 8" 0 "$CUZK" dev-circuit -q --curve bn128 --constraints 300 --out "$tmp/s8" --seed 8
for f in circuit.zkey witness.wtns vk.json; do
    if cmp -s "$tmp/s7a/$f" "$tmp/s7b/$f"; then pass "same seed, same $f"; else fail "same seed gave a different $f"; fi
done
if cmp -s "$tmp/s7a/circuit.zkey" "$tmp/s8/circuit.zkey"; then fail "seeds 7 and 8 gave the same zkey"; else
    pass "another seed, another zkey"; fi

# --backend: who computes the points changes no byte
have_gpu=0
if command -v nvidia-smi >/dev/null 2>&1 && grep -q '^GPU' <<< "$(nvidia-smi -L 2>/dev/null)"; then have_gpu=1; fi
run "backend cpu" 0 "$CUZK" dev-circuit -q --curve bn128 --constraints 300 --out "$tmp/bcpu" --seed 7 --backend cpu
expect "backend cpu: the report names the CPU" 'key points computed on: cpu \('
run "backend auto" 0 "$CUZK" dev-circuit -q --curve bn128 --constraints 300 --out "$tmp/bauto" --seed 7 --backend auto
if [ $have_gpu = 0 ]; then
    expect "backend auto without a GPU: the CPU made the points" 'key points computed on: cpu \('
fi
for d in bcpu bauto; do
    if cmp -s "$tmp/s7a/circuit.zkey" "$tmp/$d/circuit.zkey"; then pass "$d: same zkey as the default"; else
        fail "$d: another zkey than the default for the same seed"; fi
done
run "backend auto, bls12381" 0 "$CUZK" dev-circuit -q --curve bls12381 --constraints 200 --dense --out "$tmp/bauto2" \
    --seed 3 --backend auto
run "backend cpu, bls12381" 0 "$CUZK" dev-circuit -q --curve bls12381 --constraints 200 --dense --out "$tmp/bcpu2" \
    --seed 3 --backend cpu
if cmp -s "$tmp/bauto2/circuit.zkey" "$tmp/bcpu2/circuit.zkey"; then pass "bls12381: auto and cpu give the same zkey"; else
    fail "bls12381: auto and cpu give different zkeys"; fi
if [ $have_gpu = 0 ]; then
    run "backend gpu without a GPU: exit 4" 4 "$CUZK" dev-circuit -q --curve bn128 --constraints 300 \
        --out "$tmp/bgpu/sub" --backend gpu
    expect "backend gpu without a GPU: says why" \
        'backend gpu, but (no CUDA device was found|this cuzk was built without CUDA)'
    if [ -e "$tmp/bgpu" ]; then fail "backend gpu without a GPU: created $tmp/bgpu"; else
        pass "backend gpu without a GPU: wrote nothing"; fi
fi
run "bad backend" 2 "$CUZK" dev-circuit --curve bn128 --constraints 10 --out "$tmp/e6" --backend tpu
expect "bad backend: says what it wants" 'cpu, gpu or auto'
run "help names --backend" 0 "$CUZK" dev-circuit --help
expect "help documents --backend" ' --backend B +where'

# argument and file errors
run "no arguments" 2 "$CUZK" dev-circuit
run "zero constraints" 2 "$CUZK" dev-circuit --curve bn128 --constraints 0 --out "$tmp/e1"
run "too many constraints" 2 "$CUZK" dev-circuit --curve bn128 --constraints 2^27 --out "$tmp/e2"
run "unknown curve" 2 "$CUZK" dev-circuit --curve secp256k1 --constraints 10 --out "$tmp/e3"
run "bad number" 2 "$CUZK" dev-circuit --curve bn128 --constraints 12x --out "$tmp/e4"
run "unknown option" 2 "$CUZK" dev-circuit --curve bn128 --constraints 10 --out "$tmp/e5" --bogus
touch "$tmp/afile"
run "output under a regular file" 3 "$CUZK" dev-circuit --curve bn128 --constraints 10 --out "$tmp/afile/sub"
run "help" 0 "$CUZK" dev-circuit --help
expect "help warns about the insecure setup" 'INSECURE'

if [ $failures -ne 0 ]; then
    echo "$failures check(s) failed"
    exit 1
fi
echo "all dev-circuit checks passed"
exit 0
