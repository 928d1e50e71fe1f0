/* le.h - comparisons of little-endian byte strings (field elements as files and JSON hold
 * them, before they become limbs). */
#ifndef CUZK_UTIL_LE_H
#define CUZK_UTIL_LE_H

#include <stddef.h>
#include <stdint.h>

/* a < b, both n bytes little-endian */
static inline int le_less(const uint8_t *a, const uint8_t *b, size_t n)
{
    for (size_t i = n; i-- > 0;)
        if (a[i] != b[i])
            return a[i] < b[i];
    return 0;
}

static inline int le_is_zero(const uint8_t *a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i])
            return 0;
    return 1;
}

#endif
