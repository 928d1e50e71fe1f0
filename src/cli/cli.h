/* cli.h - the cuzk command's subcommands and its exit codes.
 *
 * Exit codes (documented in README):
 *   0  success
 *   1  a proof did not verify (verify), or a job failed (await)
 *   2  usage error (unknown command, bad or missing arguments)
 *   3  input error: missing, unreadable or malformed file; curve or size mismatch
 *   4  resource error: no usable GPU, out of memory, key too large for the card or budget
 *   5  server error: daemon unreachable, request refused, job canceled
 *   6  timed out
 *   7  no space: the daemon refused a submission because its data directory is low on free
 *      space (HTTP 507, cuzk serve --min-free), or a file could not be written (disk full)
 *   70 internal error
 */
#ifndef CUZK_CLI_CLI_H
#define CUZK_CLI_CLI_H

#include "util/err.h"

enum {
    EXIT_OK_ = 0,
    EXIT_INVALID = 1,
    EXIT_USAGE = 2,
    EXIT_INPUT = 3,
    EXIT_RESOURCE = 4,
    EXIT_SERVER = 5,
    EXIT_TIMEOUT = 6,
    EXIT_NOSPACE = 7,
    EXIT_INTERNAL = 70
};

int cli_exit_code(cuzk_err e);

/* each returns the process exit code; argv[0] is the subcommand name */
int cmd_prove(int argc, char **argv);      /* cmd_prove.c */
int cmd_verify(int argc, char **argv);     /* cmd_prove.c */
int cmd_zkey(int argc, char **argv);       /* cmd_prove.c: zkey export-vk */
int cmd_dev_circuit(int argc, char **argv);/* cmd_dev_circuit.c */
int cmd_serve(int argc, char **argv);      /* cmd_serve.c */
int cmd_submit(int argc, char **argv);     /* cmd_client.c */
int cmd_await(int argc, char **argv);      /* cmd_client.c */
int cmd_status(int argc, char **argv);     /* cmd_client.c */
int cmd_cancel(int argc, char **argv);     /* cmd_client.c */
int cmd_top(int argc, char **argv);        /* cmd_client.c */
int cmd_journal(int argc, char **argv);    /* cmd_journal.c: journal check, journal recover */

#endif
