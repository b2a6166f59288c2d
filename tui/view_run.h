/* SPDX-License-Identifier: MIT */
/*
 * view_run.h - the Job view's two halves (view_job.c): the MNIST job, and
 * a `clusterdoc run` job of the user's own command (view_run.c). The view
 * shows whichever the session's job is (session.h, job_kind); the log of
 * the nodes' lines and its keys are view_joblog.c's, shared by both.
 */
#ifndef CD_TUI_VIEW_RUN_H
#define CD_TUI_VIEW_RUN_H

#include "ui.h"

/* ---- view_run.c */

/* Draw the run (session_run_report not NULL) in rows [y, y + h). */
void view_run_draw(struct tui *t, struct view_state *vs, int y, int h, int w);
/* The rows the run's log takes below its summary in a view h rows high,
 * its heading included. */
int view_run_log_rows(struct tui *t, int h);
/* The whole run as one text (Enter): each node's state, exact command and
 * environment, the processes left, and the root cause's node first. */
void view_run_report(struct tui *t, struct ui_text *x);
/* R: prompt for a command line and start it (session_run_start). */
void view_run_prompt(struct tui *t);
/* S: ask, then stop the run on every node (session_run_stop). */
void view_run_ask_stop(struct tui *t);
/* The intro's paragraph on R and S, for the view before any job. */
void view_run_intro(struct tui *t, struct ui_text *x);

/* ---- view_joblog.c: the log, in rows [y, y + h): its heading, then the lines */
void view_job_draw_log(struct tui *t, struct view_state *vs, int y, int h, int w);
/* j/k, PgUp/PgDn, g, G over a log of rows lines: 1 when the key was one of them. */
int view_job_log_key(struct tui *t, struct view_state *vs, int ch, int rows);

#endif
