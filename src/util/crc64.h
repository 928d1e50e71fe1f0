/* crc64.h - CRC-64/XZ: the ECMA-182 polynomial, bit-reflected (0xC96C5795D7870F42), initial
 * value and final xor all ones; check value crc64("123456789") = 0x995DC9BBDF1939FA.
 * The job journal stores one with each row it hands back to users (store_sqlite.c).
 *
 * A CRC of degree 64 detects every error burst of up to 64 bits and misses a random
 * corruption with probability 2^-64; it is not a defence against someone who rewrites a
 * row on purpose (the daemon's pairing check is, where it runs).
 */
#ifndef CUZK_UTIL_CRC64_H
#define CUZK_UTIL_CRC64_H

#include <stddef.h>
#include <stdint.h>

/* The CRC of the bytes before and these: crc64_update(0, ab, n) equals
 * crc64_update(crc64_update(0, ab, k), ab + k, n - k). Start with crc = 0. */
uint64_t crc64_update(uint64_t crc, const void *data, size_t n);

#endif
