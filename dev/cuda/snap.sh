#!/usr/bin/env bash
# snap.sh - prepares .snap/ (gitignored) for dev/cuda/snap_run.sh: a tarball of HEAD, and
# the CUDA objects and kernel labs compiled from exactly that tree (in /tmp/cuzk-snap), so
# the GPU machine compiles only C.   dev/cuda/snap.sh [--no-build | --no-labs]
# (--no-labs: the CUDA objects only, for a session that skips bench/gpu.sh)
# EXTRA_NVFLAGS (e.g. -DFF_MUL_AP=0) go into every CUDA build and are recorded in .snap/flags;
# each set of flags builds in its own directory (make does not rebuild on changed flags).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
flags=${EXTRA_NVFLAGS:-}
snap=${SNAP_DIR:-/tmp/cuzk-snap$(printf %s "$flags" | tr -c 'A-Za-z0-9_=' '_')}
mkdir -p .snap/obj
commit=$(git rev-parse --short HEAD) # the tree archived now, whatever HEAD is at the end
git archive "$commit" >.snap/tree.tar
if [ "${1:-}" != --no-build ]; then
    mkdir -p "$snap" && tar -xf .snap/tree.tar -C "$snap" # make rebuilds what changed
    export TMPDIR=$snap/tmp && mkdir -p "$TMPDIR"             # nvcc's temporaries, private
    [ "${1:-}" = --no-labs ] || make -s -C "$snap/dev/cuda" -j2 lab_bn254 lab_bls12_381
    make -s -C "$snap" BUILD=build-cuda -j2 build-cuda/obj/src/gpu/gpu_bn254.cu.o \
        build-cuda/obj/src/gpu/gpu_bls12_381.cu.o build-cuda/obj/src/gpu/gpu_backend.cu.o
    cp "$snap"/build-cuda/obj/src/gpu/*.o .snap/obj/
    rm -f .snap/lab_bn254 .snap/lab_bls12_381
    [ "${1:-}" = --no-labs ] || cp "$snap"/dev/cuda/lab_bn254 "$snap"/dev/cuda/lab_bls12_381 .snap/
fi
echo "$commit" >.snap/commit
printf '%s\n' "$flags" >.snap/flags
du -sh .snap
