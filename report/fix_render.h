/* SPDX-License-Identifier: MIT */
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
#include "fixers/fix_login.h"
#include "fixers/fix_run.h"
#include "fixers/fix_verify.h"

/* The plan as text: per node its actions (file actions with a unified diff,
 * commands as they will run, sudo included), then its notes. results may be
 * NULL (a plan not applied) or results[i][k] for action k of node i. */
void fix_print_plan(FILE *f, const struct netmodel *m, const struct fix_plan *p,
                    struct fix_result *const *results);
/* Node i of the plan alone; with diffs, the diffs and notes are shown with
 * the results too (a plan made and applied in one go: ssh-key's). */
void fix_print_plan_node(FILE *f, const struct netmodel *m, const struct fix_plan *p, size_t i,
                         struct fix_result *const *results, int diffs);

/* The verification after applying (fix_verify.h's verdicts, m2 the new
 * check's model): a line per verdict, "verified" or "NOT FIXED: " and why. */
void fix_print_verify(FILE *f, const struct netmodel *m2, const struct fix_verification *v);
/* The same as JSON: {"node", "fixer", "verified", "still"} per fixer
 * verdict, {"node", "fixer", "verified"} per login one, appended to out. */
void fix_verify_json(json_t *out, const struct netmodel *m2, const struct fix_verification *v);

/* The login stage's plan (fix_login.h), as text (nothing when no node is
 * concerned). */
void fix_print_login(FILE *f, const struct fix_login *l, const struct netmodel *m);
/* The same as JSON: {"head_key": {...}, "nodes": [...]}; new reference. */
json_t *fix_login_json(const struct fix_login *l, const struct netmodel *m);

/* What the login stage did: the key created, then per node its actions and
 * results (fix_print_plan_node with diffs), or why it could not plan. */
void fix_print_login_run(FILE *f, const struct fix_login *l, const struct netmodel *m,
                         const struct fix_login_outcome *o);
/* The same as {"host", "actions": [...], "error"} objects appended to out
 * (nothing when it could not plan). */
void fix_login_run_json(json_t *out, const struct fix_login *l, const struct netmodel *m,
                        const struct fix_login_outcome *o);

/*
 * One line of `fix --list` for the journal j: "RUN  N changes on M nodes"
 * and what is known of the run: "  (undone)"; "  (interrupted; undone)";
 * "  (interrupted; nothing changed)"; "  (interrupted: A of N made, U of
 * unknown outcome; undo with clusterdoc fix --undo RUN)" for a run stopped
 * before its end, stamped so or killed with changes of unknown outcome;
 * "  ([interrupted; ]undo failed for F of N; again: clusterdoc fix --undo
 * RUN)" after an undo that could not restore every change.
 */
void fix_print_list_line(FILE *f, const struct fix_journal *j);

/* An undo's results, one line per change. */
void fix_print_undo(FILE *f, const struct fix_journal *j, const struct fix_result *results);

/* The plan (with results when applied) as JSON; new reference. */
json_t *fix_plan_json(const struct netmodel *m, const struct fix_plan *p,
                      struct fix_result *const *results);

/* The command line of an argv, shell-quoted where needed, "sudo -n " first
 * when sudo is set (new string). */
char *fix_command_line(char *const *argv, int sudo);

#endif
