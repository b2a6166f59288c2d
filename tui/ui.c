/* SPDX-License-Identifier: MIT */
/*
 * ui.c - the services every view uses (ui.h): a message on the status bar,
 * a prompt, the filter, the colour of a stage or a task, the "no check yet"
 * line, and what `r` starts. The screen manager that draws them is
 * screen.c; the curses primitives are crt.c.
 */
#include "tui.h"
#include "ui.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"

/* ---------------------------------------------------------------- helpers */

void ui_message(struct tui *t, int error, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->msg, sizeof(t->msg), fmt, ap);
	va_end(ap);
	t->msg_error = error;
	t->msg_at = cd_now_ms();
	t->dirty = 1;
	if (t->trace)
		fprintf(t->trace, "message %s\n", t->msg);
}

static int contains_nocase(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	for (; *hay; hay++)
		if (strncasecmp(hay, needle, n) == 0)
			return 1;
	return n == 0;
}

int ui_filter_match(const struct tui *t, const char *text)
{
	if (!t->filter[0])
		return 1;
	if (strchr(t->filter, '[')) {
		struct hostlist *hl = hostlist_new();
		char err[CD_ERRLEN];
		int in = 0;

		if (hostlist_parse(hl, t->filter, err, sizeof(err)) == 0) {
			for (size_t i = 0; i < hl->count && !in; i++)
				in = strcmp(hl->names[i], text) == 0 ||
				     (strncmp(text, hl->names[i], strlen(hl->names[i])) == 0 &&
				      text[strlen(hl->names[i])] == ' ');
			hostlist_free(hl);
			return in;
		}
		hostlist_free(hl);
	}
	return contains_nocase(text, t->filter);
}

void ui_prompt(struct tui *t, enum prompt_kind kind, const char *label, const char *initial,
               void (*done)(struct tui *t, const char *text))
{
	t->prompt = kind;
	snprintf(t->prompt_label, sizeof(t->prompt_label), "%s", label);
	snprintf(t->input, sizeof(t->input), "%s", initial ? initial : "");
	t->input_len = strlen(t->input);
	t->prompt_done = done;
	t->dirty = 1;
}

enum ui_color ui_stage_color(enum netcheck_stage st)
{
	switch (st) {
	case NCS_DONE:
		return UI_OK;
	case NCS_FAILED:
		return UI_FAIL;
	case NCS_QUEUED:
		return UI_DIM;
	default:
		return UI_RUN;
	}
}

enum ui_color ui_task_color(enum task_state st, const char **word)
{
	switch (st) {
	case TASK_RUNNING:
		*word = "running";
		return UI_RUN;
	case TASK_DONE:
		*word = "done";
		return UI_OK;
	case TASK_FAILED:
		*word = "FAILED";
		return UI_FAIL;
	default:
		*word = "not run";
		return UI_DIM;
	}
}

void ui_draw_check_waiting(struct tui *t, int y, int w, const char *what)
{
	const struct tui_session *s = &t->s;

	if (s->check_state == TASK_RUNNING) {
		struct check_progress p;

		session_check_progress(s, &p);
		ui_print(y + 1, 2, w - 3, ui_attr(t, UI_RUN),
		         "the check is running: %s when it ends", what);
		ui_print(y + 2, 2, w - 3, ui_attr(t, UI_DIM),
		         "%s: %zu/%zu connected, %zu/%zu probed, %zu failed", p.phase, p.connected,
		         p.nodes, p.probed, p.nodes, p.failed);
	} else if (s->check_state == TASK_FAILED) {
		ui_print(y + 1, 2, w - 3, ui_attr(t, UI_FAIL), "FAIL the check could not start: %s",
		         s->check_error);
		ui_print(y + 2, 2, w - 3, ui_attr(t, UI_DIM), "press r to try again");
	} else if (!s->nhosts) {
		ui_print(y + 1, 2, w - 3, ui_attr(t, UI_DIM),
		         "no nodes yet: press H and give a hostlist");
	} else {
		ui_print(y + 1, 2, w - 3, ui_attr(t, UI_DIM), "no check yet: press r");
	}
}

/* What `r` starts, one row per enum ui_rerun. */
static const struct {
	const char *what; /* in messages */
	int (*start)(struct tui_session *s, char *err, size_t errlen);
} reruns[] = {
    [RERUN_CHECK] = {"check", session_check_start},
    [RERUN_BENCH] = {"bench", session_bench_start},
    [RERUN_JOB] = {"MNIST job", session_job_start},
};

void ui_run(struct tui *t, enum ui_rerun what)
{
	char err[CD_ERRLEN];

	if (t->o->read_only && what != RERUN_CHECK) {
		ui_message(t, 1, "--read-only: the %s is not started", reruns[what].what);
		return;
	}
	if (reruns[what].start(&t->s, err, sizeof(err)) < 0)
		ui_message(t, 1, "%s", err);
	else
		ui_message(t, 0, "%s%s started on %zu node(s)", what == RERUN_JOB ? "the " : "",
		           reruns[what].what, t->s.nhosts);
}
