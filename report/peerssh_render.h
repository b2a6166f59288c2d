/*
 * peerssh_render.h - the node-to-node SSH check's report
 * (probes/peerssh_matrix.h): the matrix as text, the failing pairs with
 * ssh's words, the findings; or all of it as one JSON object.
 */
#ifndef CD_REPORT_PEERSSH_RENDER_H
#define CD_REPORT_PEERSSH_RENDER_H

#include <stdio.h>

#include "probes/peerssh_matrix.h"

/* 0: every pair logs in; 1: a pair fails; 2: a node could not be asked
 * (or fewer than two nodes). */
int peerssh_exit_status(const struct peerssh_matrix *m);

/* The text report: a "node-to-node SSH" section. */
void peerssh_print_text(const struct peerssh_matrix *m, FILE *f);

/* {"version": 1, "peer_ssh": peerssh_matrix_json, "findings": [...],
 *  "exit": exit_status}, one line. */
void peerssh_print_json(const struct peerssh_matrix *m, int exit_status, FILE *f);

#endif
