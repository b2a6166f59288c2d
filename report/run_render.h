/* SPDX-License-Identifier: MIT */
/*
 * run_render.h - what `clusterdoc run` prints from a finished run
 * (jobs/run.h): the summary (root cause first), the JSON report
 * (also the run's summary.json), and --dry-run's plan. The ranks' live
 * output is not here: the front end shows it as it comes. The exit status
 * is the caller's.
 */
#ifndef CD_RUN_RENDER_H
#define CD_RUN_RENDER_H

#include <jansson.h>
#include <stdio.h>

#include "jobs/run.h"

/* The summary to f: "# clusterdoc run RUN: ok|FAILED (exit N)", the root
 * cause first ("root cause: HOST rR: WHY" and its last lines), then each
 * other node that failed or was stopped, the orphan check, the times. */
void run_print_text(FILE *f, const struct run_report *rep);

/* The JSON report: {"version": 1, "run_id", "launcher", "master_addr",
 * "master_port", "nnodes", "nranks", "exit_status", "failed",
 * "could_not_start", "interrupted", "failure", "root_cause" (host or null),
 * "root_cause_rank" (its failed worker's rank, else its first rank, or null),
 * "nodes": [{"host", "node_rank", "ranks": [..], "ifname", "addr",
 * "started", "exit_code", "signal", "stopped", "error_code", "error",
 * "first_error", "wall_ms", "last_lines", "orphans", "gpu_holders",
 * "command"}],
 * "timing_ms", "ranks", "rendezvous" (rdzv_render.h), ...}. The caller frees
 * it with json_decref. */
json_t *run_report_json(const struct run_report *rep);

/* --dry-run: per node, the exact command line and environment as one
 * shell-quoted block ("cd DIR && env K=V ... ARGV"), then the lines a user
 * would type by hand on that node (export lines and the launcher's usual
 * spelling). chdir: the directory given (NULL: the home directory). */
void run_print_plan(FILE *f, const struct run_report *rep, const char *chdir);

/* s quoted for a POSIX shell into out (single quotes where needed). */
void run_shell_quote(const char *s, char *out, size_t outlen);

#endif
