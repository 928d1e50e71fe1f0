#!/usr/bin/env bash
# snap_run.sh - on a GPU machine: unpack .snap/tree.tar (`git archive` of the commit under
# test, made by dev/cuda/snap.sh) into /tmp/w with the prebuilt CUDA objects and kernel labs
# carried in .snap/, and run the given command there. The working tree the machine receives
# may hold unfinished edits; the snapshot is exactly one commit.
set -uo pipefail
rm -rf /tmp/w
mkdir -p /tmp/w/build-cuda/obj/src/gpu
tar -xf .snap/tree.tar -C /tmp/w
cp -r .debs /tmp/w/ 2>/dev/null
cp .snap/obj/*.o /tmp/w/build-cuda/obj/src/gpu/ 2>/dev/null
cp .snap/lab_* /tmp/w/dev/cuda/ 2>/dev/null
cp .snap/commit /tmp/w/.commit 2>/dev/null
cp .snap/flags /tmp/w/.flags 2>/dev/null
cd /tmp/w && exec "$@"
