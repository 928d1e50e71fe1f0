/* view.h - text rendering of the daemon's /status snapshot, shared by `cuzk status`
 * (one snapshot) and `cuzk top` (redrawn live): budget gauge, GPU busy and idle-gap
 * totals, queues, buffer counters, worker table, active jobs with partition states.
 */
#ifndef CUZK_SERVER_VIEW_H
#define CUZK_SERVER_VIEW_H

#include <stdio.h>

#include <jansson.h>

/* Writes the whole snapshot; width is the terminal width in columns (>= 60). */
void view_status(FILE *f, json_t *status, int width);
/* Writes one job (the GET /v1/jobs/{id} object) with a line per partition. */
void view_job(FILE *f, json_t *job);

#endif
