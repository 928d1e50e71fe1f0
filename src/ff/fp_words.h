/* fp_words.h - 64-bit word primitives for the field code: add-with-carry, subtract-with-
 * borrow and the full 64x64 -> 128 product. On x86-64 the carry chains use the
 * _addcarry_u64 / _subborrow_u64 intrinsics, which compile to clean adc/sbb sequences
 * (unsigned __int128 carry arithmetic does not); elsewhere they fall back to __int128.
 */
#ifndef CUZK_FF_FP_WORDS_H
#define CUZK_FF_FP_WORDS_H

#include <stdint.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

__extension__ typedef unsigned __int128 ff_u128;

/* *o = a + b + c, returns the carry out (0 or 1) */
static inline unsigned char ff_adc(unsigned char c, uint64_t a, uint64_t b, uint64_t *o)
{
#if defined(__x86_64__)
    unsigned long long t;
    c = _addcarry_u64(c, a, b, &t);
    *o = t;
    return c;
#else
    ff_u128 s = (ff_u128)a + b + c;
    *o = (uint64_t)s;
    return (unsigned char)(s >> 64);
#endif
}

/* *o = a - b - c, returns the borrow out (0 or 1) */
static inline unsigned char ff_sbb(unsigned char c, uint64_t a, uint64_t b, uint64_t *o)
{
#if defined(__x86_64__)
    unsigned long long t;
    c = _subborrow_u64(c, a, b, &t);
    *o = t;
    return c;
#else
    ff_u128 d = (ff_u128)a - b - c;
    *o = (uint64_t)d;
    return (unsigned char)((d >> 64) & 1);
#endif
}

/* returns the low word of a*b, *hi the high word */
static inline uint64_t ff_mul_wide(uint64_t a, uint64_t b, uint64_t *hi)
{
    ff_u128 p = (ff_u128)a * b;
    *hi = (uint64_t)(p >> 64);
    return (uint64_t)p;
}

#endif
