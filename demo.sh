#!/usr/bin/env bash
# demo.sh - the main job on a fresh machine: installs what cuzk needs, builds it, starts the
# proving daemon on its embedded defaults (GPU when one is usable, else the CPU; SQLite journal),
# submits a Filecoin-shaped set of jobs, waits for the proofs, and checks every one with
# `snarkjs groth16 verify`. Open the dashboard URL it prints while it runs.
#
#   ./demo.sh                 everything (installs Debian and Node packages when missing)
#   DEMO_SKIP_DEPS=1 ./demo.sh    skip the package installation
#   DEMO_KEEP=1 ./demo.sh         leave the daemon running at the end (stop it with kill)
#   DEMO_CONSTRAINTS=65536        size of the synthetic "porep" circuit (default 16384)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$repo"

if [ "${DEMO_SKIP_DEPS:-0}" != 1 ]; then
    scripts/install-deps.sh
fi
make -j"$(nproc)"

work=$repo/demo-data
port=${DEMO_PORT:-9820}
server=127.0.0.1:$port
cuzk=$repo/bin/cuzk
snarkjs="node $repo/node_modules/snarkjs/build/cli.cjs"
n=${DEMO_CONSTRAINTS:-16384}
mkdir -p "$work"

echo "== synthetic circuits (cuzk dev-circuit: insecure development setup, for demos only)"
[ -f "$work/porep/circuit.zkey" ] || "$cuzk" dev-circuit -q --curve bn128 --constraints "$n" --out "$work/porep"
[ -f "$work/post/circuit.zkey" ] || "$cuzk" dev-circuit -q --curve bn128 --constraints 1024 --out "$work/post" --seed 2

echo "== cuzk serve on $server (data in $work/daemon)"
"$cuzk" serve --listen "$server" --data "$work/daemon" > "$work/serve.log" 2>&1 &
pid=$!
cleanup() { if [ "${DEMO_KEEP:-0}" != 1 ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi; }
trap cleanup EXIT
for _ in $(seq 100); do
    "$cuzk" status --server "$server" > /dev/null 2>&1 && break
    kill -0 "$pid" 2>/dev/null || { cat "$work/serve.log"; echo "demo: the daemon did not start" >&2; exit 1; }
    sleep 0.1
done
echo "   dashboard: http://$server/    metrics: http://$server/metrics    status: http://$server/status"

echo "== submitting: 2 porep-like jobs of 10 partitions, 1 window-post, 1 winning-post (critical)"
porep_w=()
for _ in $(seq 10); do porep_w+=(--witness "$work/porep/witness.wtns"); done
ids=()
ids+=("$("$cuzk" submit --server "$server" --kind porep --zkey "$work/porep/circuit.zkey" "${porep_w[@]}")")
ids+=("$("$cuzk" submit --server "$server" --kind porep --zkey "$work/porep/circuit.zkey" "${porep_w[@]}")")
ids+=("$("$cuzk" submit --server "$server" --kind window-post --zkey "$work/porep/circuit.zkey" --witness "$work/porep/witness.wtns")")
ids+=("$("$cuzk" submit --server "$server" --kind winning-post --zkey "$work/post/circuit.zkey" --witness "$work/post/witness.wtns")")
echo "   jobs: ${ids[*]}"

fail=0
for id in "${ids[@]}"; do
    out=$work/proofs/$id
    mkdir -p "$out"
    "$cuzk" await --server "$server" --timeout 3600 "$id" --out "$out"
    vk=$work/porep/vk.json
    [ "$id" = "${ids[3]}" ] && vk=$work/post/vk.json
    for p in "$out"/proof-*.json; do
        pub=${p/proof-/public-}
        if $snarkjs groth16 verify "$vk" "$pub" "$p" > /dev/null; then r=ok; else r=FAILED; fail=1; fi
        echo "   $id $(basename "$p"): snarkjs groth16 verify $r"
    done
done

echo "== daemon status"
"$cuzk" status --server "$server" | head -40
[ "$fail" = 0 ] && echo "demo: all proofs verified by snarkjs" || { echo "demo: a proof failed verification" >&2; exit 1; }
