/* mmap.c - read-only whole-file mappings (see mmap.h). */
#include "util/mmap.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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
    if (S_ISDIR(st.st_mode)) {
        rc = cuzk_errf(err, CUZK_EIO, "%s: is a directory, not a file", path);
        goto fail;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = cuzk_errf(err, CUZK_EIO, "%s: is not a regular file", path);
        goto fail;
    }
    if (st.st_size > 0) {
        if ((unsigned long long)st.st_size > (size_t)-1) {
            rc = cuzk_errf(err, CUZK_EIO, "%s: too large to map (%lld bytes)", path,
                           (long long)st.st_size);
            goto fail;
        }
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            rc = cuzk_errf(err, CUZK_EIO, "%s: cannot map %lld bytes: %s", path,
                           (long long)st.st_size, strerror(errno));
            goto fail;
        }
        *base = p;
        *size = (size_t)st.st_size;
    }
fail:
    close(fd);
    return rc;
}

void mmap_ro_close(const void *base, size_t size)
{
    if (base && size)
        munmap((void *)base, size);
}
