/* err.h - the one error enum of cuzk and the message-buffer convention.
 *
 * A function that can fail returns a cuzk_err and, on failure, writes the specific
 * cause into a caller-supplied buffer of CUZK_ERRLEN bytes ("zkey: section 4 is 96
 * bytes, expected 128"). Arithmetic never fails and returns void/bool. Only main()
 * exits the process.
 */
#ifndef CUZK_UTIL_ERR_H
#define CUZK_UTIL_ERR_H

#include <stdarg.h>
#include <stddef.h>

#define CUZK_ERRLEN 512

typedef enum cuzk_err {
    CUZK_OK = 0,
    CUZK_EINVAL = 1,     /* bad argument or request */
    CUZK_EIO = 2,        /* file or socket I/O failed (open, read, mmap, write) */
    CUZK_EFORMAT = 3,    /* malformed input file (r1cs, wtns, zkey, json) */
    CUZK_ECURVE = 4,     /* curve mismatch between inputs, or unsupported curve */
    CUZK_ENOMEM = 5,     /* host or device allocation failed */
    CUZK_EVERIFY = 6,    /* a proof failed verification */
    CUZK_ENODEV = 7,     /* no usable GPU */
    CUZK_EDEVICE = 8,    /* a GPU call failed */
    CUZK_EBUDGET = 9,    /* request larger than the memory budget */
    CUZK_ECANCELED = 10, /* job was canceled */
    CUZK_ETIMEOUT = 11,  /* wait timed out */
    CUZK_ENOTFOUND = 12, /* no such job / key / route */
    CUZK_ESTORE = 13,    /* journal (database) failure */
    CUZK_EINTERNAL = 14, /* broken internal invariant */
    CUZK_ENOSPC = 15     /* no space left: the file system is full or over quota (ENOSPC,
                            EDQUOT), or the journal is (SQLITE_FULL) */
} cuzk_err;

const char *cuzk_strerror(cuzk_err e);

/* Writes a printf-style message into err (CUZK_ERRLEN bytes; err may be NULL) and
 * returns code, so a failure site reads `return cuzk_errf(err, CUZK_EIO, "...")`. */
cuzk_err cuzk_errf(char *err, cuzk_err code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prepends "prefix: " to the message already in err (used to add context on the way up). */
void cuzk_err_prefix(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
