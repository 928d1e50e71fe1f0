#!/usr/bin/env bash
# device_pipeline.sh - one session on a GPU machine that lacks the daemon's development
# libraries: unpacks .debs/ (libmicrohttpd, jansson, sqlite and the GnuTLS chain, a gitignored
# folder of Debian packages) into /tmp/pfx, builds bin/cuzk against them with the CUDA objects
# carried in build-cuda/obj/src/gpu (so the machine compiles only C), runs bench/pipeline.sh
# with the GPU backend, and leaves status.json, jobs.json, run.env, metrics.txt, serve.log and the
# trace in $OUT for `bench/pipeline.sh --report DIR` on a machine with node.
set -uo pipefail
OUT=${OUT:-/tmp/cuzk-out}
mkdir -p "$OUT"
pfx=/tmp/pfx
mkdir -p $pfx
for f in .debs/*.deb; do dpkg -x "$f" $pfx; done
lib=$pfx/usr/lib/x86_64-linux-gnu
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > "$OUT/env.txt" 2>&1
echo "cores $(nproc)" >> "$OUT/env.txt"
find build-cuda/obj/src/gpu -name '*.o' -exec touch {} +
t0=$(date +%s)
make BUILD=build-cuda -j"$(nproc)" build-cuda/bin/cuzk \
    EXTRA_CFLAGS="-I$pfx/usr/include -I$pfx/usr/include/x86_64-linux-gnu" \
    LDLIBS="-L$lib -l:libmicrohttpd.so.12 -l:libjansson.so.4 -l:libsqlite3.so.0 -lm -pthread -L/usr/local/cuda/lib64 -lcudart_static -ldl -lrt -lstdc++" \
    > "$OUT/build.txt" 2>&1 || { echo "BUILD FAILED"; grep -E 'error' "$OUT/build.txt" | head -20; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"
grep -q 'not found' <<< "$(ldd build-cuda/bin/cuzk)" && export LD_LIBRARY_PATH=$lib
export CUZK=$PWD/build-cuda/bin/cuzk WORK=/tmp/pipeline
t0=$(date +%s)
bench/pipeline.sh > "$OUT/pipeline.txt" 2>&1
echo "pipeline rc=$? $(( $(date +%s) - t0 )) s"
tail -5 "$OUT/pipeline.txt"
for f in status.json jobs.json run.env metrics.txt serve.log; do cp "$WORK/$f" "$OUT/" 2>/dev/null; done
gzip -c "$WORK/trace.json" > "$OUT/trace.json.gz" 2>/dev/null
