/* log.h - one logging macro that checks the level before formatting anything. */
#ifndef CUZK_UTIL_LOG_H
#define CUZK_UTIL_LOG_H

typedef enum { LOG_ERROR = 0, LOG_WARN = 1, LOG_INFO = 2, LOG_DEBUG = 3 } log_level;

extern int log_threshold; /* messages with level > log_threshold are dropped; default LOG_INFO */

void log_write(log_level lvl, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#define LOG(lvl, ...)                                                                              \
    do {                                                                                           \
        if ((int)(lvl) <= log_threshold)                                                           \
            log_write((lvl), __FILE__, __LINE__, __VA_ARGS__);                                     \
    } while (0)

#endif
