#!/usr/bin/env bash
# t_e2e.sh - end-to-end check of `cuzk prove`, `cuzk verify` and `cuzk zkey export-vk` on every
# committed fixture (tests/data/<curve>/<circuit>/), both curves, with snarkjs 0.7.6 as the oracle:
#   - cuzk's proof passes `snarkjs groth16 verify`; cuzk's public.json is byte-equal to snarkjs's;
#   - `cuzk verify` accepts snarkjs's proof and cuzk's, and rejects (exit 1) a proof with a negated
#     coordinate (still a valid point, but wrong), a proof with an off-curve coordinate (exit 1 or
#     3), and a tampered public input; snarkjs rejects the same tampered files (so they are real);
#   - `cuzk zkey export-vk` writes a vk that snarkjs verifies with and that equals snarkjs's
#     vk.json in content (parsed JSON, deep equality);
#   - CUZK_TEST_RS="r,s" fixes the blinding: two proves give byte-identical proof.json, the CPU
#     backend and the default backend (the GPU where there is one) agree byte for byte, and the
#     fixed-blinding proof verifies;
#   - `--threads 1` and `--threads 2` proofs both verify.
# Usage: CUZK=bin/cuzk tests/t_e2e.sh   (normally through tests/run.sh)
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
cd "$repo"
CUZK=${CUZK:-$repo/bin/cuzk}
if ! command -v node >/dev/null; then
    echo "SKIP: node is not installed (snarkjs is the oracle)"
    exit 77
fi
SNARKJS=$repo/node_modules/.bin/snarkjs
if [ ! -x "$SNARKJS" ]; then
    echo "FAIL: $SNARKJS missing: run 'npm ci' at the repository root"
    exit 1
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
checks=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok:   $*"; }

# run DESC WANT_RC cmd... : runs cmd (output to $tmp/last.out), checks its exit code
run() {
    local desc=$1 want=$2; shift 2
    checks=$((checks + 1))
    "$@" > "$tmp/last.out" 2>&1
    local rc=$?
    if [ $rc -ge 128 ] || grep -Eq 'Sanitizer|runtime error:' "$tmp/last.out"; then
        fail "$desc: crashed (exit $rc): $*"; sed 's/^/      /' "$tmp/last.out" | tail -20; return 1
    fi
    if [ "$want" = any-nonzero ] && [ $rc -ne 0 ]; then pass "$desc (exit $rc)"; return 0; fi
    case " $want " in
        *" $rc "*) pass "$desc"; return 0 ;;
    esac
    fail "$desc: exit $rc, expected $want: $*"; sed 's/^/      /' "$tmp/last.out" | tail -20
    return 1
}

# snarkjs verify: 0 when valid
sj_verify() { "$SNARKJS" groth16 verify "$1" "$2" "$3"; }

# json_same A B : same parsed content
json_same() {
    node -e '
        const fs = require("fs"), assert = require("assert");
        const a = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
        const b = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
        try { assert.deepStrictEqual(a, b); } catch (e) { console.log(e.message); process.exit(1); }
    ' "$1" "$2"
}

# tamper KIND CURVE IN OUT : writes a modified proof/public file
#   neg_a / neg_c: pi_a / pi_c with y replaced by q - y (on the curve, in the subgroup, wrong)
#   offcurve_a:    pi_a with x + 1 (a valid field element, the point is off the curve)
#   pub:           public[0] + 1 mod r
tamper() {
    node -e '
        const fs = require("fs");
        const [kind, curve, inp, outp] = process.argv.slice(1);
        const Q = { bn128: 21888242871839275222246405745257275088696311757859679093190405211993587208583n,
                    bls12381: 0x1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaabn };
        const R = { bn128: 21888242871839275222246405745257275088548364400416034343698204186575808495617n,
                    bls12381: 0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001n };
        const j = JSON.parse(fs.readFileSync(inp, "utf8"));
        const q = Q[curve], r = R[curve];
        if (kind === "neg_a") j.pi_a[1] = ((q - BigInt(j.pi_a[1])) % q).toString();
        else if (kind === "neg_c") j.pi_c[1] = ((q - BigInt(j.pi_c[1])) % q).toString();
        else if (kind === "offcurve_a") j.pi_a[0] = ((BigInt(j.pi_a[0]) + 1n) % q).toString();
        else if (kind === "pub") j[0] = ((BigInt(j[0]) + 1n) % r).toString();
        else { console.error("unknown tamper " + kind); process.exit(2); }
        fs.writeFileSync(outp, JSON.stringify(j, null, 1));
    ' "$@"
}

fixtures="bn128/multiplier bn128/poseidon_chain bn128/merkle bls12381/multiplier bls12381/merkle"
# fixed blinding (decimal, < r on both curves)
RS1="1234567890123456789012345678901234567890,987654321098765432109876543210987654321"
RS2="42,4242"

for fx in $fixtures; do
    curve=${fx%%/*}
    d=tests/data/$fx
    o=$tmp/$fx
    mkdir -p "$o"
    echo "== $fx"

    # prove, then check with snarkjs
    if run "$fx: cuzk prove" 0 "$CUZK" prove "$d/circuit.zkey" "$d/witness.wtns" "$o/proof.json" "$o/public.json"; then
        run "$fx: snarkjs verifies cuzk's proof" 0 sj_verify "$d/vk.json" "$o/public.json" "$o/proof.json"
        checks=$((checks + 1))
        if cmp -s "$o/public.json" "$d/public.json"; then pass "$fx: public.json byte-equal to snarkjs's"
        else fail "$fx: public.json differs from snarkjs's"; diff "$d/public.json" "$o/public.json" | head; fi
        run "$fx: cuzk verify accepts cuzk's proof" 0 "$CUZK" verify "$d/vk.json" "$o/public.json" "$o/proof.json"
    fi

    # verify snarkjs's own proof, and reject tampered ones (snarkjs must reject them too)
    run "$fx: cuzk verify accepts snarkjs's proof" 0 "$CUZK" verify "$d/vk.json" "$d/public.json" "$d/proof.json"
    for kind in neg_a neg_c offcurve_a; do
        tamper "$kind" "$curve" "$d/proof.json" "$o/proof_$kind.json"
        run "$fx: snarkjs rejects proof $kind (control)" any-nonzero sj_verify "$d/vk.json" "$d/public.json" "$o/proof_$kind.json"
        want=1; [ $kind = offcurve_a ] && want="1 3"
        run "$fx: cuzk verify rejects proof $kind" "$want" "$CUZK" verify "$d/vk.json" "$d/public.json" "$o/proof_$kind.json"
    done
    tamper pub "$curve" "$d/public.json" "$o/public_tampered.json"
    run "$fx: snarkjs rejects tampered public input (control)" any-nonzero sj_verify "$d/vk.json" "$o/public_tampered.json" "$d/proof.json"
    run "$fx: cuzk verify rejects tampered public input" 1 "$CUZK" verify "$d/vk.json" "$o/public_tampered.json" "$d/proof.json"

    # export-vk
    if run "$fx: cuzk zkey export-vk" 0 "$CUZK" zkey export-vk "$d/circuit.zkey" "$o/vk.json"; then
        run "$fx: exported vk equals snarkjs's vk.json" 0 json_same "$d/vk.json" "$o/vk.json"
        run "$fx: snarkjs verifies with the exported vk" 0 sj_verify "$o/vk.json" "$d/public.json" "$d/proof.json"
    fi

    # reproducible blinding
    if CUZK_TEST_RS=$RS1 run "$fx: prove with fixed r,s (1)" 0 \
            "$CUZK" prove "$d/circuit.zkey" "$d/witness.wtns" "$o/proof_rs_a.json" "$o/public_rs.json" &&
       CUZK_TEST_RS=$RS1 run "$fx: prove with fixed r,s (2)" 0 \
            "$CUZK" prove "$d/circuit.zkey" "$d/witness.wtns" "$o/proof_rs_b.json" "$o/public_rs.json"; then
        checks=$((checks + 1))
        if cmp -s "$o/proof_rs_a.json" "$o/proof_rs_b.json"; then pass "$fx: fixed r,s gives byte-identical proofs"
        else fail "$fx: fixed r,s proofs differ"; fi
        run "$fx: snarkjs verifies the fixed-r,s proof" 0 sj_verify "$d/vk.json" "$o/public_rs.json" "$o/proof_rs_a.json"
        if CUZK_TEST_RS=$RS1 run "$fx: prove with fixed r,s on --backend cpu" 0 \
                "$CUZK" prove --backend cpu "$d/circuit.zkey" "$d/witness.wtns" "$o/proof_rs_cpu.json" "$o/public_rs.json"; then
            checks=$((checks + 1))
            if cmp -s "$o/proof_rs_a.json" "$o/proof_rs_cpu.json"; then pass "$fx: --backend cpu equals default backend"
            else fail "$fx: --backend cpu proof differs from default backend with the same r,s"; fi
        fi
        if CUZK_TEST_RS=$RS2 run "$fx: prove with other fixed r,s" 0 \
                "$CUZK" prove "$d/circuit.zkey" "$d/witness.wtns" "$o/proof_rs_c.json" "$o/public_rs.json"; then
            checks=$((checks + 1))
            if ! cmp -s "$o/proof_rs_a.json" "$o/proof_rs_c.json"; then pass "$fx: other r,s gives another proof"
            else fail "$fx: CUZK_TEST_RS seems ignored (different r,s, same proof)"; fi
        fi
    fi

    # thread counts
    for n in 1 2; do
        if run "$fx: prove --threads $n" 0 \
                "$CUZK" prove --threads "$n" "$d/circuit.zkey" "$d/witness.wtns" "$o/proof_t$n.json" "$o/public_t$n.json"; then
            run "$fx: snarkjs verifies the --threads $n proof" 0 sj_verify "$d/vk.json" "$o/public_t$n.json" "$o/proof_t$n.json"
        fi
    done
done

echo "== $checks checks, $failures failed"
[ $failures -eq 0 ]
