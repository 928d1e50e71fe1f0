/* common.h - what the libFuzzer harnesses in fuzz/ share: the input as a file the real
 * readers open by path, views checked against the input's bounds, and a check macro.
 *
 * DESIGN. The readers under test take paths (zkey_open, r1cs_open, wtns_open map the
 * file; the JSON readers and the config loader open it), so each input is written to one
 * memfd per process and handed over as "/proc/self/fd/N": no disk I/O, no files left
 * behind. common.c also replaces src/util/mmap.c (see there): a reader's view of a file
 * is an exactly sized heap block, so AddressSanitizer bounds every read of it.
 * A failed FUZZ_CHECK aborts: libFuzzer keeps the input as a crash like any sanitizer
 * report. Build and run: `make fuzz` (Makefile), fuzz/run.sh.
 */
#ifndef CUZK_FUZZ_COMMON_H
#define CUZK_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Replaces the harness's file with data[0..size) and returns its path (static storage).
 * Aborts if the file cannot be written: that is the harness's fault, not the input's. */
const char *fuzz_file(const uint8_t *data, size_t size);

/* Reads the harness's file back into a malloc'd NUL-terminated buffer (*len bytes before
 * the NUL); what a writer under test wrote to fuzz_file's path. */
char *fuzz_file_read(size_t *len);

/* 1 when [p, p + len) lies inside [base, base + size) (len may be 0). */
int fuzz_inside(const void *p, uint64_t len, const void *base, size_t size);

/* 1 when s is NUL-terminated within cap bytes. */
int fuzz_terminated(const char *s, size_t cap);

#define FUZZ_CHECK(cond, ...)                                                                     \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);              \
            fprintf(stderr, __VA_ARGS__);                                                         \
            fputc('\n', stderr);                                                                  \
            abort();                                                                              \
        }                                                                                         \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
