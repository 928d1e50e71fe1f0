/* crc64_test.c - CRC-64/XZ against its published check value (the catalogue of parametrised
 * CRC algorithms: crc64("123456789") = 0x995DC9BBDF1939FA), against a bit-at-a-time
 * reference on random data, chaining, and that every single-bit flip of a 1 KB buffer
 * changes it. */
#include "util/crc64.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/check.h"

/* one bit per step, straight from the definition */
static uint64_t crc64_ref(const uint8_t *p, size_t n)
{
    uint64_t r = ~0ull;
    for (size_t i = 0; i < n; i++) {
        r ^= p[i];
        for (int k = 0; k < 8; k++)
            r = (r >> 1) ^ (r & 1 ? 0xC96C5795D7870F42ull : 0);
    }
    return ~r;
}

int main(void)
{
    CHECK(crc64_update(0, "123456789", 9) == 0x995DC9BBDF1939FAull, "check value: %016llx",
          (unsigned long long)crc64_update(0, "123456789", 9));
    CHECK(crc64_update(0, "", 0) == 0, "empty input");

    uint8_t buf[1024];
    srand(7);
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)rand();
    uint64_t whole = crc64_update(0, buf, sizeof buf);
    CHECK(whole == crc64_ref(buf, sizeof buf), "table and reference differ");
    for (size_t k = 0; k <= sizeof buf; k += 97)
        CHECK(crc64_update(crc64_update(0, buf, k), buf + k, sizeof buf - k) == whole, "chaining at %zu", k);
    int missed = 0;
    for (size_t bit = 0; bit < 8 * sizeof buf; bit++) {
        buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        missed += crc64_update(0, buf, sizeof buf) == whole;
        buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    CHECK(missed == 0, "%d single-bit flips went unnoticed", missed);

    if (failures) {
        fprintf(stderr, "crc64_test: %d of %d checks failed\n", failures, checks);
        return 1;
    }
    printf("crc64_test: ok (%d checks)\n", checks);
    return 0;
}
