/* err.c - error names and message formatting (see err.h). */
#include "util/err.h"

#include <stdio.h>
#include <string.h>

const char *cuzk_strerror(cuzk_err e)
{
    switch (e) {
    case CUZK_OK: return "ok";
    case CUZK_EINVAL: return "invalid argument";
    case CUZK_EIO: return "I/O error";
    case CUZK_EFORMAT: return "malformed file";
    case CUZK_ECURVE: return "curve mismatch";
    case CUZK_ENOMEM: return "out of memory";
    case CUZK_EVERIFY: return "proof does not verify";
    case CUZK_ENODEV: return "no usable GPU";
    case CUZK_EDEVICE: return "GPU error";
    case CUZK_EBUDGET: return "over memory budget";
    case CUZK_ECANCELED: return "canceled";
    case CUZK_ETIMEOUT: return "timed out";
    case CUZK_ENOTFOUND: return "not found";
    case CUZK_ESTORE: return "journal error";
    case CUZK_EINTERNAL: return "internal error";
    case CUZK_ENOSPC: return "no space left";
    }
    return "unknown error";
}

cuzk_err cuzk_errf(char *err, cuzk_err code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, CUZK_ERRLEN, fmt, ap);
        va_end(ap);
    }
    return code;
}

void cuzk_err_prefix(char *err, const char *fmt, ...)
{
    if (!err)
        return;
    char old[CUZK_ERRLEN];
    memcpy(old, err, CUZK_ERRLEN);
    old[CUZK_ERRLEN - 1] = 0;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(err, CUZK_ERRLEN, fmt, ap);
    va_end(ap);
    if (n < 0 || n >= CUZK_ERRLEN - 2)
        return;
    size_t at = (size_t)n;
    err[at++] = ':';
    err[at++] = ' ';
    size_t room = CUZK_ERRLEN - at - 1, len = strlen(old);
    if (len > room)
        len = room;
    memcpy(err + at, old, len);
    err[at + len] = 0;
}
