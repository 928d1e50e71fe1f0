#!/bin/sh
# t_fuzz.sh - the file and request readers under libFuzzer: builds every harness in fuzz/
# (make fuzz: the library with clang, coverage instrumentation and ASan+UBSan, in build-fuzz/)
# and runs each for 8 seconds from its seed corpus fuzz/corpus/<name>/. Fails on any crash,
# leak, sanitizer report or failed harness check; the input is kept in build-fuzz/crashes/.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
command -v clang >/dev/null 2>&1 || { echo "SKIP: clang not found"; exit 77; }
# the harnesses are their own sanitizer build: under `make asan` this would repeat `make
# test`'s run exactly, so that run is the one
if [ -n "${CUZK:-}" ] && grep -qa '__asan_init\|__ubsan_handle' "$CUZK" 2>/dev/null; then
    echo "SKIP: sanitizer build (the fuzz harnesses build their own; make test runs them)"
    exit 77
fi
TMP=${CUZK_TEST_TMP:-$(mktemp -d)}
mkdir -p "$TMP"
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' \
    > "$TMP/probe.c"
if ! clang -fsanitize=fuzzer,address,undefined -o "$TMP/probe" "$TMP/probe.c" > "$TMP/probe.log" 2>&1; then
    cat "$TMP/probe.log"
    echo "SKIP: clang cannot link -fsanitize=fuzzer (the compiler-rt runtimes, libclang-rt-dev, are missing)"
    exit 77
fi
make -s fuzz FUZZ_SECONDS=8 > "$TMP/fuzz.txt" 2>&1 || { cat "$TMP/fuzz.txt"; echo "FAIL: make fuzz"; exit 1; }
cat "$TMP/fuzz.txt"
for f in fuzz/fuzz_*.c; do
    name=$(basename "$f" .c)
    grep -q "^$name .* execs" "$TMP/fuzz.txt" || { echo "FAIL: no summary line for $name"; exit 1; }
done
grep -q '^== fuzz: no crashes' "$TMP/fuzz.txt" || { echo "FAIL: make fuzz did not report 'no crashes'"; exit 1; }
echo "all checks passed"
