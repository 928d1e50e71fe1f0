#!/bin/sh
# t_arith.sh - field, curve and pairing arithmetic of both curves against an independent
# oracle: the ff/ec test programs write random operands and their results (--dump), and
# tests/oracle/arith.js recomputes them with BigInt (and the pairing with ffjavascript, the
# library snarkjs uses, when node_modules has it). Uses the unit-test binaries of the build
# that produced $CUZK when present, else compiles them (they are header-only).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
command -v node >/dev/null 2>&1 || { echo "SKIP: node not found"; exit 77; }

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM

testdir=""
if [ -n "${CUZK:-}" ]; then
    up=$(dirname "$(dirname "$CUZK")")
    for d in "$up/test" "$up/build/test"; do
        [ -x "$d/ff/ff_bn254_test" ] && { testdir=$d; break; }
    done
fi

fail=0
for curve in bn254 bls12_381; do
    for t in ff/ff_${curve}_test ec/ec_${curve}_test; do
        exe="$testdir/$t"
        if [ -z "$testdir" ] || [ ! -x "$exe" ]; then
            exe="$TMP/$(basename "$t")"
            ${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -Wno-unused-function -Isrc \
                -o "$exe" "src/$t.c"
        fi
        out="$TMP/$(basename "$t").txt"
        if ! "$exe" --dump "$out" >"$TMP/log" 2>&1; then
            cat "$TMP/log"
            echo "FAIL: $t"
            fail=1
        fi
    done
    if ! node tests/oracle/arith.js "$curve" "$TMP/ff_${curve}_test.txt" "$TMP/ec_${curve}_test.txt"; then
        echo "FAIL: $curve results differ from the oracle"
        fail=1
    fi
done
[ "$fail" = 0 ] && echo "t_arith: ok"
exit "$fail"
