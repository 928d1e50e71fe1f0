/* check.h - the assertion macro every unit test uses.
 *
 * CHECK(cond, fmt, ...) counts one check; when cond is false it counts a failure and prints
 * "FAIL file:line: message" to stderr, then carries on, so one run reports every broken
 * check. The test's main reports the counters and returns non-zero when failures > 0.
 * Include it once per test program (the counters are per translation unit).
 */
#ifndef CUZK_UTIL_CHECK_H
#define CUZK_UTIL_CHECK_H

#include <stdio.h>

static int failures; /* checks that failed so far */
static int checks;   /* checks made so far, passed or failed */

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        checks++;                                                                                  \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

#endif
