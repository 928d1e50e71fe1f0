#!/usr/bin/env bash
# install-deps.sh - installs what building and testing cuzk needs on a Debian 12 machine (root, or a
# user with sudo): the compiler, the C libraries cuzk links, the commands the suites call, and the
# pinned Node tools (npm ci: snarkjs, circom2, circomlib from package-lock.json). Idempotent: it
# installs only what is missing. Used by .ci/run and demo.sh.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

SUDO=
if [ "$(id -u)" -ne 0 ]; then
    SUDO=sudo
fi

# Debian packages checked with dpkg (libraries), and commands checked by name, so that a Node
# from another source that already provides node and npm is kept: python3 (generator scripts,
# test helpers), node + npm (snarkjs, circom2), chromium (dashboard test), curl (daemon suites),
# taskset (benchmarks), clang with its sanitizer and libFuzzer runtimes (libclang-rt-dev, only
# recommended by clang) for make fuzz and tests/t_fuzz.sh; postgresql (its server programs, for
# the tests of the PostgreSQL store: tests/pg_server.sh starts a throwaway server).
libs="build-essential pkg-config libmicrohttpd-dev libjansson-dev libsqlite3-dev libpq-dev ca-certificates
      libclang-rt-dev postgresql"
cmds="python3:python3 node:nodejs npm:npm chromium:chromium curl:curl git:git taskset:util-linux
      pgrep:procps /usr/bin/time:time clang:clang"

missing=
for p in $libs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"
done
for cp in $cmds; do
    command -v "${cp%%:*}" >/dev/null 2>&1 || missing="$missing ${cp#*:}"
done
if [ -n "$missing" ]; then
    echo "installing:$missing"
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q
    # shellcheck disable=SC2086
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
else
    echo "system packages: all present"
fi

want=$(node -p "require('./package.json').dependencies.snarkjs")
have=$(node -p "try { require('./node_modules/snarkjs/package.json').version } catch (e) { '' }")
if [ "$have" != "$want" ] || [ ! -d node_modules/circomlib ] || [ ! -d node_modules/circom2 ]; then
    echo "node packages (npm ci: snarkjs, circom2, circomlib pinned in package-lock.json)"
    npm ci --no-audit --no-fund
fi
