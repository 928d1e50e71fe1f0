/* client.h - a tiny blocking HTTP/1.1 client over plain sockets, used by the cuzk
 * client commands (submit, await, status, cancel, top) to talk to our own daemon.
 *
 * One request per connection ("Connection: close"); the reply is read to the end.
 * Addresses are the daemon's: "HOST:PORT", "[V6]:PORT", "unix:PATH" (an "http://"
 * prefix is accepted and ignored).
 */
#ifndef CUZK_SERVER_CLIENT_H
#define CUZK_SERVER_CLIENT_H

#include <stddef.h>

#include "util/err.h"

typedef struct httpc_reply {
    int status;      /* HTTP status code */
    char *body;      /* malloc'd, NUL-terminated */
    size_t len;      /* bytes in body */
    int connected;   /* 1 once the connection was made (also set when the request then fails) */
} httpc_reply;

/* Sends one request and reads the reply. token may be NULL. timeout_s bounds each
 * read and write (0 = no limit). Fails with CUZK_EIO (message naming the address)
 * when the daemon cannot be reached or the reply is cut short. */
cuzk_err httpc_request(httpc_reply *out, const char *server, const char *token,
                       const char *method, const char *path, const char *content_type,
                       const void *body, size_t body_len, int timeout_s, char *err);
void httpc_reply_free(httpc_reply *r);

#endif
