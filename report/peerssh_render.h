/* SPDX-License-Identifier: MIT */
/*
 * peerssh_render.h - the node-to-node SSH check's report
 * (probes/peerssh_matrix.h): the matrix as text, the failing pairs with
 * ssh's words, the findings; or all of it as one JSON object.
 */
#ifndef CD_REPORT_PEERSSH_RENDER_H
#define CD_REPORT_PEERSSH_RENDER_H

#include <stdio.h>

#include "fixers/fix.h"
#include "fixers/fix_run.h"
#include "probes/peerssh_matrix.h"

/* 0: every pair logs in; 1: a pair fails; 2: a node could not be asked
 * (or fewer than two nodes). */
int peerssh_exit_status(const struct peerssh_matrix *m);

/* The text report: a "node-to-node SSH" section. */
void peerssh_print_text(const struct peerssh_matrix *m, FILE *f);

/* {"version": 1, "peer_ssh": peerssh_matrix_json, "findings": [...],
 *  "exit": exit_status, "fix": fix (when not NULL; taken)}, one line. */
void peerssh_print_json(const struct peerssh_matrix *m, int exit_status, json_t *fix_take, FILE *f);

/*
 * The peer-ssh fixer's plan and, when results is not NULL, what applying it
 * did (results[i][k] for plan->nodes[i].actions[k]). Only summaries and
 * paths: never a file's content (one is the cluster's private key).
 * JSON: {"run", "changes": planned actions, "applied": bool, "failed": n,
 * "journal_error", "nodes": [{"host", "actions": [{"path", "summary",
 * "status"?, "message"?}], "notes": [...]}]}. New reference.
 */
json_t *peerssh_fix_json(const struct fix_plan *plan, const char *const *hosts,
                         struct fix_result *const *results, const char *journal_error);
/* The same as text. asking: the plan shown before --apply's question
 * ("planned", not "planned (dry run)" and how to apply it). */
void peerssh_print_fix_text(const struct fix_plan *plan, const char *const *hosts,
                            struct fix_result *const *results, const char *journal_error,
                            int asking, FILE *f);

#endif
