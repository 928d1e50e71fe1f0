/* mmap.h - read-only memory mapping of whole input files (keys, witnesses, circuits).
 *
 * A mapping is the zero-copy way to read multi-gigabyte .zkey files: pages come in on
 * first touch and are shared with the page cache. An empty file maps to base = NULL,
 * size = 0 without error; the caller decides whether that is acceptable.
 */
#ifndef CUZK_UTIL_MMAP_H
#define CUZK_UTIL_MMAP_H

#include <stddef.h>

#include "util/err.h"

/* Maps path read-only. On success *base and *size describe the whole file (NULL/0 when it is
 * empty). Fails with CUZK_EIO ("<path>: cannot open: No such file or directory", "<path>:
 * is a directory", ...). */
cuzk_err mmap_ro_open(const char *path, const void **base, size_t *size, char *err);
/* Unmaps what mmap_ro_open returned (no-op for NULL). */
void mmap_ro_close(const void *base, size_t size);

#endif
