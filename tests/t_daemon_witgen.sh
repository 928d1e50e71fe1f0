#!/usr/bin/env bash
# t_daemon_witgen.sh - jobs that carry circuit inputs instead of witnesses (CPU backend,
# loopback, black box). A circuit is compiled here with the pinned circom2 (the multiplier
# fixture plus an assert(a != 0), which adds no constraint, so the fixture's zkey proves it)
# and registered with `cuzk serve --circuit NAME=ZKEY,GENERATOR`:
#   - start-up refuses a missing generator, a malformed registration and a missing node;
#   - GET /v1/circuits lists the registrations;
#   - two inputs submitted with `cuzk submit --circuit --input` become two partitions whose
#     proofs pass `snarkjs groth16 verify` and whose public.json holds a*b of each input
#     (computed here, not by cuzk); the same through curl;
#   - an input that violates the assert fails the job with circom's "Assert Failed";
#   - unknown circuit, inputs that are not objects, inputs with witnesses, inputs without a
#     circuit: 400 with a message naming the problem;
#   - a native generator (a script standing in for circom's C++ program) that is held back:
#     cancel kills it; SIGTERM kills it and the job completes after the restart; kill -9 of
#     the daemon while it runs, then a restart, completes the job; --witgen-timeout kills it
#     and fails the job with "timeout";
#   - no generated .wtns is left behind, and the inputs are deleted with the job (--proof-ttl).
# Skips (exit 77) when node or node_modules/circom2 is missing.
# Usage: CUZK=bin/cuzk tests/t_daemon_witgen.sh   (normally through tests/run.sh)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/dashboard/daemon_helpers.sh"

if [ ! -f "$repo/node_modules/circom2/cli.js" ]; then
    echo "SKIP: node_modules/circom2 is missing (npm ci installs it)"
    exit 77
fi
[ -n "$SNARKJS" ] || { echo "FAIL: node_modules/.bin/snarkjs is missing (npm ci)"; exit 1; }
MUL=$repo/tests/data/bn128/multiplier
ZKEY=$MUL/circuit.zkey

# ---------------------------------------------------------------- the circuit
c=$tmp/circuit
mkdir -p "$c"
cat > "$c/mulw.circom" <<'EOF'
pragma circom 2.0.0;
// the multiplier fixture with a witness-time check: a = 0 is refused by the generator
template Multiplier() {
    signal input a;
    signal input b;
    signal output c;
    assert(a != 0);
    c <== a * b;
}
component main = Multiplier();
EOF
if ! node "$repo/node_modules/circom2/cli.js" "$c/mulw.circom" --r1cs --wasm --prime bn128 -o "$c" > "$tmp/circom.log" 2>&1; then
    cat "$tmp/circom.log"; fail "circom2 could not compile the test circuit"; finish
fi
WASM=$c/mulw_js/mulw.wasm
check "compiled circuit has the fixture's constraints (its zkey proves it)" cmp -s "$c/mulw.r1cs" "$MUL/circuit.r1cs"

# a native generator: circom's C++ program is called as GEN input.json out.wtns; this script
# has the same interface, records its pid and waits while $tmp/hold exists
cat > "$c/held_gen.sh" <<EOF
#!/bin/sh
echo \$\$ >> "$tmp/gen.pids"
while [ -e "$tmp/hold" ]; do sleep 0.05; done
exec node "$c/mulw_js/generate_witness.js" "$WASM" "\$1" "\$2"
EOF
chmod +x "$c/held_gen.sh"

printf '{"a": "3", "b": "11"}\n' > "$tmp/in0.json"
printf '{"a": "7", "b": "5"}\n' > "$tmp/in1.json"
printf '{"a": "0", "b": "5"}\n' > "$tmp/bad.json"

# ---------------------------------------------------------------- start-up checks
refused() {  # refused DESC PATTERN serve-args...: the daemon must not start and must say PATTERN
    local desc=$1 pat=$2; shift 2
    timeout 20 "$CUZK" serve --listen 127.0.0.1:0 --data "$tmp/refused" --backend cpu "$@" > "$tmp/refused.out" 2>&1
    local rc=$?
    if [ $rc -ne 0 ] && grep -q -- "$pat" "$tmp/refused.out"; then pass "$desc"; else
        fail "$desc (exit $rc): $(cat "$tmp/refused.out")"; fi
}
refused "start-up refuses a generator that does not exist" "witness generator $c/nope.wasm" \
    --circuit "mul=$ZKEY,$c/nope.wasm"
refused "start-up refuses a registration without a generator" "NAME=ZKEY,GENERATOR" --circuit "mul=$ZKEY"
refused "start-up refuses a missing node for a .wasm generator" "node" --circuit "mul=$ZKEY,$WASM" --node "$tmp/no-node"
refused "start-up refuses a circuit registered twice" "registered twice" \
    --circuit "mul=$ZKEY,$WASM" --circuit "mul=$ZKEY,$c/held_gen.sh"

# ---------------------------------------------------------------- proofs from inputs
start_daemon wg --circuit "mul=$ZKEY,$WASM" --circuit "held=$ZKEY,$c/held_gen.sh" || finish
api GET /v1/circuits
check "GET /v1/circuits lists both circuits" [ "$(jget 'j.circuits.map(c => c.name + ":" + c.kind).join(",")')" = "mul:wasm,held:native" ]

# verify_parts DESC OUTDIR A:B... : each partition verifies and its public output is a*b
verify_parts() {
    local desc=$1 out=$2; shift 2
    local i=0 ok=1 ab
    for ab in "$@"; do
        local want=$(( ${ab%%:*} * ${ab##*:} ))
        sj_verify "$MUL/vk.json" "$out/public-$i.json" "$out/proof-$i.json" || { ok=0; cat "$tmp/.sj"; }
        local got
        got=$(jget 'JSON.stringify(j)' "$(cat "$out/public-$i.json" 2>/dev/null)")
        [ "$got" = "[\"$want\"]" ] || { ok=0; echo "partition $i: public $got, expected [\"$want\"]"; }
        i=$((i + 1))
    done
    check "$desc" [ $ok = 1 ]
}

id=$("$CUZK" submit --server "$D_ADDR" --circuit mul --input "$tmp/in0.json" --input "$tmp/in1.json" 2> "$tmp/submit.err")
check "cuzk submit --circuit --input answers a job id ($id)" [ -n "$id" ]
if "$CUZK" await --server "$D_ADDR" --timeout 120 "$id" --out "$tmp/out1" > /dev/null 2> "$tmp/await.err"; then
    verify_parts "two inputs, two partitions: proofs verify with snarkjs, public = a*b" "$tmp/out1" 3:11 7:5
else
    fail "job $id did not complete: $(cat "$tmp/await.err")"
fi
api GET "/v1/jobs/$id"
check "the job has 2 partitions, both done" [ "$(jget 'j.n_partitions + "/" + j.n_done')" = "2/2" ]

api POST /v1/jobs -H 'Content-Type: application/json' \
    -d '{"circuit": "mul", "inputs": [{"a": "12", "b": "4"}], "kind": "winning-post"}'
id2=$(jget j.id)
check "POST /v1/jobs with circuit + inputs is 201 ($CODE)" [ "$CODE" = 201 ]
if "$CUZK" await --server "$D_ADDR" --timeout 120 "$id2" --out "$tmp/out2" > /dev/null 2> "$tmp/await.err"; then
    verify_parts "curl submit: proof verifies, public = 48" "$tmp/out2" 12:4
else
    fail "job $id2 did not complete: $(cat "$tmp/await.err")"
fi

# ---------------------------------------------------------------- a failing generator
bad=$("$CUZK" submit --server "$D_ADDR" --circuit mul --input "$tmp/in0.json" --input "$tmp/bad.json")
"$CUZK" await --server "$D_ADDR" --timeout 120 "$bad" > /dev/null 2> "$tmp/bad.err"
rc=$?
check "an input violating the circuit's assert fails the job (exit $rc)" [ $rc = 1 ]
api GET "/v1/jobs/$bad"
reason=$(jget j.error)
echo "reason: $reason"
check "the reason quotes the generator (Assert Failed, partition 1)" \
    bash -c '[[ "$1" == *"partition 1"*"Assert Failed"* ]]' _ "$reason"

# ---------------------------------------------------------------- refusals
# refuse DESC STATUS PATTERN JSON
refuse() {
    api POST /v1/jobs -H 'Content-Type: application/json' -d "$4"
    if [ "$CODE" = "$2" ] && [[ "$(jget j.error)" == *"$3"* ]]; then pass "$1 -> $CODE"; else
        fail "$1: $CODE $BODY"; fi
}
refuse "unknown circuit" 400 "unknown circuit 'nope' (registered: mul, held)" '{"circuit": "nope", "inputs": [{"a": "1"}]}'
refuse "an input that is not an object" 400 "'inputs'[1] must be a JSON object" \
    '{"circuit": "mul", "inputs": [{"a": "1", "b": "2"}, "x"]}'
refuse "inputs is not an array" 400 "'inputs' must be an array of objects" '{"circuit": "mul", "inputs": {"a": "1"}}'
refuse "inputs and witnesses together" 400 "takes no 'witnesses'" \
    "{\"circuit\": \"mul\", \"inputs\": [{}], \"witnesses\": [\"$MUL/witness.wtns\"]}"
refuse "inputs and zkey together" 400 "takes no 'zkey'" "{\"circuit\": \"mul\", \"inputs\": [{}], \"zkey\": \"$ZKEY\"}"
refuse "inputs without a circuit" 400 "'inputs' needs 'circuit'" '{"inputs": [{"a": "1"}]}'
refuse "a circuit without inputs" 400 "missing 'inputs'" '{"circuit": "mul"}'
refuse "no inputs" 400 "'inputs' has 0 entries" '{"circuit": "mul", "inputs": []}'
"$CUZK" submit --server "$D_ADDR" --circuit nope --input "$tmp/in0.json" > /dev/null 2> "$tmp/cli.err"
rc=$?
check "cuzk submit to an unknown circuit exits 3 with the daemon's message (exit $rc)" \
    bash -c '[ "$1" = 3 ] && grep -q "unknown circuit" "$2"' _ "$rc" "$tmp/cli.err"
printf '[1, 2]\n' > "$tmp/arr.json"
"$CUZK" submit --server "$D_ADDR" --circuit mul --input "$tmp/arr.json" > /dev/null 2> "$tmp/cli.err"
check "cuzk submit refuses an input file that is not an object" grep -q "must be a JSON object" "$tmp/cli.err"

# ---------------------------------------------------------------- cancel kills the generator
rm -f "$tmp/gen.pids"
touch "$tmp/hold"
cid=$("$CUZK" submit --server "$D_ADDR" --circuit held --input "$tmp/in0.json")
for i in $(seq 1 100); do [ -s "$tmp/gen.pids" ] && break; sleep 0.05; done
gpid=$(head -1 "$tmp/gen.pids" 2>/dev/null)
check "the native generator runs (pid $gpid)" [ -n "$gpid" ]
"$CUZK" cancel --server "$D_ADDR" "$cid" > /dev/null
gone=0
for i in $(seq 1 40); do kill -0 "$gpid" 2>/dev/null || { gone=1; break; }; sleep 0.05; done
check "cancel kills the running generator" [ $gone = 1 ]

# ---------------------------------------------------------------- SIGTERM, kill -9 and restart
rm -f "$tmp/gen.pids"
sid=$("$CUZK" submit --server "$D_ADDR" --circuit held --input "$tmp/in1.json")
for i in $(seq 1 100); do [ -s "$tmp/gen.pids" ] && break; sleep 0.05; done
t0=$(date +%s%N)
stop_daemon
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
alive=0
while read -r p; do kill -0 "$p" 2>/dev/null && alive=1; done < "$tmp/gen.pids"
check "SIGTERM while a generator runs: the daemon stops (exit $D_RC, $ms ms) and kills it" [ "$D_RC/$alive" = 0/0 ]
rm -f "$tmp/gen.pids"
start_daemon wg --circuit "mul=$ZKEY,$WASM" --circuit "held=$ZKEY,$c/held_gen.sh" || finish
rid=$("$CUZK" submit --server "$D_ADDR" --circuit held --input "$tmp/in1.json" --input "$tmp/in0.json")
for i in $(seq 1 100); do [ -s "$tmp/gen.pids" ] && break; sleep 0.05; done
kill_daemon
# the daemon's generators are orphans now: end them (their own process groups)
while read -r p; do kill -KILL -- "-$p" 2>/dev/null; done < "$tmp/gen.pids"
pass "daemon killed with -9 while generating for $rid"
rm -f "$tmp/hold"
start_daemon wg --circuit "mul=$ZKEY,$WASM" --circuit "held=$ZKEY,$c/held_gen.sh" || finish
if "$CUZK" await --server "$D_ADDR" --timeout 120 "$rid" --out "$tmp/out3" > /dev/null 2> "$tmp/await.err"; then
    verify_parts "the input job acknowledged before kill -9 completes after the restart" "$tmp/out3" 7:5 3:11
else
    fail "job $rid did not complete after the restart: $(cat "$tmp/await.err")"
fi
if "$CUZK" await --server "$D_ADDR" --timeout 120 "$sid" --out "$tmp/out4" > /dev/null 2> "$tmp/await.err"; then
    verify_parts "the input job interrupted by SIGTERM completes after the restarts" "$tmp/out4" 7:5
else
    fail "job $sid did not complete after the restart: $(cat "$tmp/await.err")"
fi
left=$(ls "$D_DATA/witness" | grep -c '^gen-')
check "no generated witness is left in the data dir ($left)" [ "$left" = 0 ]
stop_daemon

# ---------------------------------------------------------------- timeout, and clean-up with the job
touch "$tmp/hold"
rm -f "$tmp/gen.pids"
start_daemon wt --circuit "held=$ZKEY,$c/held_gen.sh" --witgen-timeout 1 --proof-ttl 1 || finish
tid=$("$CUZK" submit --server "$D_ADDR" --circuit held --input "$tmp/in0.json")
n_in=$(ls "$D_DATA/input" | wc -l)
check "the input is kept in the data dir while the job lives ($n_in file)" [ "$n_in" = 1 ]
"$CUZK" await --server "$D_ADDR" --timeout 60 "$tid" > /dev/null 2> "$tmp/await.err"
api GET "/v1/jobs/$tid"
check "--witgen-timeout kills a generator that runs too long and fails the job" \
    bash -c '[ "$1" = failed ] && [[ "$2" == *timeout* ]]' _ "$(jget j.state)" "$(jget j.error)"
alive=0
while read -r p; do kill -0 "$p" 2>/dev/null && alive=1; done < "$tmp/gen.pids"
check "no generator is left running" [ $alive = 0 ]
rm -f "$tmp/hold"
# (the job leaves the list before the janitor unlinks its files: wait for both)
for i in $(seq 1 60); do
    api GET "/v1/jobs/$tid"
    n_in=$(ls "$D_DATA/input" | wc -l)
    [ "$CODE/$n_in" = 404/0 ] && break
    sleep 0.1
done
check "the job expired (--proof-ttl) and its input file was deleted ($CODE, $n_in files)" [ "$CODE/$n_in" = 404/0 ]
stop_daemon
finish
