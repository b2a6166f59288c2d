/* SPDX-License-Identifier: MIT */
/*
 * view_gpuburn.c - the Bench view's GPU stress (b, session_gpuburn.c):
 * while it runs, its phase, the nodes and the time; then the table
 * `clusterdoc gpu-burn` prints (gpuburn_render_lines: one row per GPU,
 * TFLOP/s and GB/s against its model's median, one row per node that ran
 * nothing with why), a slow GPU and its gpu-slow line in the warning
 * colour, a failed GPU or node in the failure colour. j/k and the page
 * keys scroll it.
 */
#include "ui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/gpuburn_render.h"

static double burn_elapsed_s(const struct tui_session *s)
{
	int64_t end = s->burn_state == TASK_RUNNING ? cd_now_ms() : s->burn_ended_ms;

	return end > s->burn_started_ms ? (double)(end - s->burn_started_ms) / 1000 : 0;
}

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), k = strlen(tail);

	return n >= k && strcmp(s + n - k, tail) == 0;
}

/* A table line's colour: a slow GPU (its row, its gpu-slow line) warns; a
 * row that is neither ok nor slow (a failed GPU, a node that ran nothing)
 * fails; the rest is plain. */
static int line_attr(struct tui *t, const char *line)
{
	if (strncmp(line, "# gpu-slow ", 11) == 0 || ends_with(line, "  SLOW"))
		return ui_attr(t, UI_WARN);
	if (line[0] == '#')
		return line[1] ? (int)A_NORMAL : (int)A_DIM;
	return ends_with(line, "  ok") ? (int)A_NORMAL : ui_attr(t, UI_FAIL);
}

static void running_text(struct tui *t, struct ui_text *x)
{
	const struct tui_session *s = &t->s;
	char *fold = session_hosts_folded(s);

	ui_text_add(x, ui_attr(t, UI_RUN), 1, "phase    %s",
	            s->burn_phase[0] ? s->burn_phase : "starting");
	ui_text_add(x, A_NORMAL, 1, "nodes    %s (%zu)", fold, s->nhosts);
	ui_text_add(x, A_NORMAL, 1, "elapsed  %.1f s of %g s of stress per GPU", burn_elapsed_s(s),
	            s->o.burn.seconds);
	ui_text_add(x, A_NORMAL, 0, " ");
	ui_text_add(x, A_DIM, 1,
	            "Every GPU of every node at once, through the node's torch: a bf16 matrix "
	            "product (fp16 without bf16), then a device-memory copy. The results come "
	            "together when every node has answered.");
	free(fold);
}

static void result_text(struct tui *t, const json_t *rep, struct ui_text *x)
{
	char **lines = NULL;

	gpuburn_render_lines(rep, &lines);
	for (size_t i = 0; lines && lines[i]; i++)
		ui_text_add(x, line_attr(t, lines[i]), 0, "%s", lines[i]);
	gpuburn_render_free(lines);
}

void view_gpuburn_draw(struct tui *t, struct view_state *vs, int y, int h, int w)
{
	const struct tui_session *s = &t->s;
	const json_t *rep = s->burn_state == TASK_RUNNING ? NULL : session_burn_report(s);
	const char *word;
	enum ui_color c = ui_task_color(s->burn_state, &word);
	struct ui_text x = {0};
	char right[64];

	ui_print(y, 1, w - 1, ui_attr(t, UI_TITLE), "GPU stress (gpu-burn)");
	snprintf(right, sizeof(right), "%s  %.1f s", word, burn_elapsed_s(s));
	if (w > 30 + (int)strlen(right))
		ui_print(y, w - 1 - (int)strlen(right), (int)strlen(right), ui_attr(t, c), "%s",
		         right);
	if (s->burn_state == TASK_RUNNING)
		running_text(t, &x);
	else if (rep)
		result_text(t, rep, &x);
	else
		ui_text_add(&x, ui_attr(t, UI_FAIL), 1, "FAILED to start: %s",
		            s->burn_error[0] ? s->burn_error : "no report");
	ui_text_add(&x, A_DIM, 1, " ");
	ui_text_add(&x, A_DIM, 1, "b runs it again, r runs the allreduce bench.");
	ui_text_draw(&x, y + 2, h - 2, w, &vs->scroll);
	ui_text_free(&x);
}

int view_gpuburn_key(struct tui *t, struct view_state *vs, int ch)
{
	return ui_text_scroll_key(vs, ch);
}

void view_gpuburn_start(struct tui *t, struct view_state *vs)
{
	char err[CD_ERRLEN];

	if (t->o->read_only) {
		ui_message(t, 1, "--read-only: gpu-burn is not started");
		return;
	}
	if (session_burn_start(&t->s, err, sizeof(err)) < 0) {
		ui_message(t, 1, "%s", err);
		return;
	}
	vs->scroll = 0;
	ui_message(t, 0, "gpu-burn started on %zu node(s)", t->s.nhosts);
}
