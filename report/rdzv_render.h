/* SPDX-License-Identifier: MIT */
/*
 * rdzv_render.h - the rendezvous watch's outcome (jobs/rdzvwatch.h)
 * as `clusterdoc run` and `clusterdoc mnist` print it: one summary line, and
 * the "rendezvous" object of their JSON reports.
 */
#ifndef CD_RDZV_RENDER_H
#define CD_RDZV_RENDER_H

#include <jansson.h>
#include <stdio.h>

#include "jobs/rdzvwatch.h"

/*
 * One line to f, or nothing (the watch off, or its verdict already the
 * run's failure): "rendezvous: every node joined 10.1.2.11:29500 in 2.3 s",
 * "rendezvous: not watched: the job never connected to ..." (unused), the
 * verdict for "reachable".
 */
void rdzv_print_text(FILE *f, const struct rdzvwatch *w);

/*
 * {"timeout_s", "state" (rdzvwatch_state_name), "addr", "port",
 *  "joined_ms" (null unless every node joined), "verdict" (null or the
 *  words), "nodes": [{"host", "joined", "joined_ms" (null), "listening",
 *  "connecting", "test": null | {"result", "errno_name" (null), "ms"}}]},
 * or null when w is NULL. New; the caller frees it.
 */
json_t *rdzv_report_json(const struct rdzvwatch *w);

#endif
