/* common.c - the shared half of the fuzz harnesses (see common.h).
 *
 * mmap_ro_open / mmap_ro_close are defined here with util/mmap.h's contract, so the
 * linker takes them and never pulls mmap.o out of the library archive. In a page-granular
 * mapping a reader that runs past the end of the file reads zeros up to the page boundary
 * unnoticed; here the file is read into a heap block of exactly its size, so
 * AddressSanitizer reports the first byte read past it, and LeakSanitizer reports a view
 * that an error path forgot to close. Everything above the mapping (open, fstat, the
 * readers' checks) is the library's own code.
 */
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/mmap.h"

static int memfd = -1;
static char memfd_path[64];

const char *fuzz_file(const uint8_t *data, size_t size)
{
    if (memfd < 0) {
        memfd = memfd_create("cuzk-fuzz-input", MFD_CLOEXEC);
        FUZZ_CHECK(memfd >= 0, "memfd_create: %s", strerror(errno));
        snprintf(memfd_path, sizeof memfd_path, "/proc/self/fd/%d", memfd);
    }
    FUZZ_CHECK(ftruncate(memfd, 0) == 0, "ftruncate: %s", strerror(errno));
    size_t done = 0;
    while (done < size) {
        ssize_t n = pwrite(memfd, data + done, size - done, (off_t)done);
        FUZZ_CHECK(n > 0, "pwrite: %s", strerror(errno));
        done += (size_t)n;
    }
    return memfd_path;
}

char *fuzz_file_read(size_t *len)
{
    struct stat st;
    FUZZ_CHECK(memfd >= 0 && fstat(memfd, &st) == 0, "fstat: %s", strerror(errno));
    size_t size = (size_t)st.st_size;
    char *buf = malloc(size + 1);
    FUZZ_CHECK(buf, "out of memory for %zu bytes", size);
    size_t done = 0;
    while (done < size) {
        ssize_t n = pread(memfd, buf + done, size - done, (off_t)done);
        FUZZ_CHECK(n > 0, "pread: %s", strerror(errno));
        done += (size_t)n;
    }
    buf[size] = 0;
    *len = size;
    return buf;
}

int fuzz_inside(const void *p, uint64_t len, const void *base, size_t size)
{
    uintptr_t a = (uintptr_t)p, b = (uintptr_t)base;
    return p && base && a >= b && a - b <= size && len <= size - (a - b);
}

int fuzz_terminated(const char *s, size_t cap)
{
    return memchr(s, 0, cap) != NULL;
}

/* ---- util/mmap.h, heap-backed ---- */

cuzk_err mmap_ro_open(const char *path, const void **base, size_t *size, char *err)
{
    *base = NULL;
    *size = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return cuzk_errf(err, CUZK_EIO, "%s: cannot open: %s", path, strerror(errno));
    cuzk_err rc = CUZK_OK;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        rc = cuzk_errf(err, CUZK_EIO, "%s: cannot stat: %s", path, strerror(errno));
        goto fail;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = cuzk_errf(err, CUZK_EIO, "%s: is not a regular file", path);
        goto fail;
    }
    if (st.st_size > 0) {
        size_t n = (size_t)st.st_size, done = 0;
        uint8_t *p = malloc(n);
        if (!p) {
            rc = cuzk_errf(err, CUZK_EIO, "%s: cannot map %zu bytes", path, n);
            goto fail;
        }
        while (done < n) {
            ssize_t r = pread(fd, p + done, n - done, (off_t)done);
            if (r <= 0) {
                free(p);
                rc = cuzk_errf(err, CUZK_EIO, "%s: cannot read: %s", path,
                               r ? strerror(errno) : "file shrank");
                goto fail;
            }
            done += (size_t)r;
        }
        *base = p;
        *size = n;
    }
fail:
    close(fd);
    return rc;
}

void mmap_ro_close(const void *base, size_t size)
{
    (void)size;
    free((void *)base);
}
