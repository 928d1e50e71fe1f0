/* log.c - timestamped log lines on stderr, one write per line so threads do not interleave. */
#include "util/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

int log_threshold = LOG_INFO;

void log_write(log_level lvl, const char *file, int line, const char *fmt, ...)
{
    static const char *names[] = {"error", "warn", "info", "debug"};
    char msg[1024];
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    int n = snprintf(msg, sizeof msg, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s ", tm.tm_year + 1900,
                     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                     ts.tv_nsec / 1000000L, names[lvl]);
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof msg)
        n += vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
    va_end(ap);
    if (lvl == LOG_DEBUG)
        fprintf(stderr, "%s (%s:%d)\n", msg, file, line);
    else
        fprintf(stderr, "%s\n", msg);
}
