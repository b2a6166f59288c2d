/*
 * fix_render.h - what `clusterdoc fix` prints: the plan (per node, the
 * commands and the diffs), the results of applying or undoing it, the
 * verification, and the same as one JSON document (docs/report-format.md).
 */
#ifndef CD_CLI_FIX_RENDER_H
#define CD_CLI_FIX_RENDER_H

#include <jansson.h>
#include <stdio.h>

#include "fixers/fix.h"
#include "fixers/fix_journal.h"
#include "fixers/fix_run.h"

/* The plan as text: per node its actions (file actions with a unified diff,
 * commands as they will run, sudo included), then its notes. results may be
 * NULL (a plan not applied) or results[i][k] for action k of node i. */
void fix_print_plan(FILE *f, const struct netmodel *m, const struct fix_plan *p,
                    struct fix_result *const *results);
/* Node i of the plan alone; with diffs, the diffs and notes are shown with
 * the results too (a plan made and applied in one go: ssh-key's). */
void fix_print_plan_node(FILE *f, const struct netmodel *m, const struct fix_plan *p, size_t i,
                         struct fix_result *const *results, int diffs);

/* The verification after applying: per node, each selected fixer whose
 * findings named the node before (applied, failed or not planned), and the
 * error findings it answers that the second check still found. Returns the
 * number of (node, fixer) pairs not verified. */
int fix_print_verify(FILE *f, const struct netmodel *m, const struct fix_plan *p,
                     const struct diagnosis *after, json_t *json_out);

/* An undo's results, one line per change. */
void fix_print_undo(FILE *f, const struct fix_journal *j, const struct fix_result *results);

/* The plan (with results when applied) as JSON; new reference. */
json_t *fix_plan_json(const struct netmodel *m, const struct fix_plan *p,
                      struct fix_result *const *results);

/* The command line of an argv, shell-quoted where needed, "sudo -n " first
 * when sudo is set (new string). */
char *fix_command_line(char *const *argv, int sudo);

#endif
