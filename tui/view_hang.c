/* SPDX-License-Identifier: MIT */
/*
 * view_hang.c - the Hang view (view_hang.h): the live verdict of the
 * session's hang inspection (session_hang.c), drawn from the verdict
 * object of hang/hang_analyze.h.
 */
#include "view_hang.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/hang_render.h"

static const char *str(const json_t *o, const char *k)
{
	const char *v = json_string_value(json_object_get(o, k));

	return v ? v : "";
}

void view_hang_open(struct tui *t)
{
	char err[CD_ERRLEN];

	if (session_hang_open(&t->s, err, sizeof(err)) < 0) {
		ui_message(t, 1, "hang: %s", err);
		return;
	}
	t->hang = 1;
	memset(&t->hang_vs, 0, sizeof(t->hang_vs));
}

void view_hang_close(struct tui *t)
{
	session_hang_close(&t->s);
	t->hang = 0;
}

/* The verdict's status in a word and its colour. */
static enum ui_color status_color(const char *status, const char **word)
{
	if (!strcmp(status, "progressing")) {
		*word = "PROGRESSING";
		return UI_OK;
	}
	if (!strcmp(status, "hung")) {
		*word = "HUNG";
		return UI_FAIL;
	}
	if (!strcmp(status, "rendezvous")) {
		*word = "RENDEZVOUS";
		return UI_FAIL;
	}
	*word = "NOT INSPECTED";
	return UI_WARN;
}

/* The summary: the verdict, the suspects with their evidence, the groups. */
static void summary_text(struct tui *t, struct ui_text *x)
{
	const struct tui_session *s = &t->s;
	const json_t *v = s->hang_verdict, *e, *ev;
	const char *word;
	enum ui_color c;
	size_t i, j;

	if (!v) {
		if (s->hang_error[0])
			ui_text_add(x, ui_attr(t, UI_FAIL), 0,
			            "FAIL the inspection could not start: %s", s->hang_error);
		else
			ui_text_add(
			    x, ui_attr(t, UI_RUN), 0,
			    "inspecting: the first verdict comes after %d samples, %.1f s apart",
			    HANG_ROUND_SAMPLES, HANG_ROUND_INTERVAL / 1000.0);
		return;
	}
	c = status_color(str(v, "status"), &word);
	ui_text_add(x, ui_attr(t, c), 0, "%s  %s", word, str(v, "summary"));
	if (json_array_size(json_object_get(v, "suspects"))) {
		ui_text_add(x, A_NORMAL, 0, "%s", "");
		ui_text_add(x, ui_attr(t, UI_TITLE), 0, "suspects");
		json_array_foreach(json_object_get(v, "suspects"), i, e)
		{
			ui_text_add(x, ui_attr(t, UI_FAIL), 2, "%zu. %s", i + 1, str(e, "reason"));
			json_array_foreach(json_object_get(e, "evidence"), j, ev)
			    ui_text_add(x, A_NORMAL, 5, "- %s", json_string_value(ev));
		}
	}
	if (json_array_size(json_object_get(v, "groups"))) {
		ui_text_add(x, A_NORMAL, 0, "%s", "");
		ui_text_add(x, ui_attr(t, UI_TITLE), 0, "ranks, grouped by what they do");
		json_array_foreach(json_object_get(v, "groups"), i, e)
		{
			size_t n = json_array_size(json_object_get(e, "ranks"));

			ui_text_add(x, A_NORMAL, 2, "%zu rank%s [%s]: %s", n, n == 1 ? "" : "s",
			            str(e, "ranks_text"), str(e, "what"));
		}
	}
	if (!strcmp(str(v, "status"), "not_inspected") && str(v, "searched")[0]) {
		ui_text_add(x, A_NORMAL, 0, "%s", "");
		ui_text_add(x, ui_attr(t, UI_DIM), 0, "searched: %s", str(v, "searched"));
	}
}

/* Enter: report/hang_render's text, line by line. */
static void report_text(struct tui *t, struct ui_text *x)
{
	char *buf = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *f;

	if (!t->s.hang_verdict) {
		ui_text_add(x, ui_attr(t, UI_DIM), 0, "no verdict yet");
		return;
	}
	f = open_memstream(&buf, &len);
	if (!f) {
		ui_text_add(x, ui_attr(t, UI_FAIL), 0, "no memory for the report");
		return;
	}
	hang_print_text(t->s.hang_verdict, f);
	fclose(f);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		ui_text_add(x, A_NORMAL, 0, "%s", line);
	free(buf);
}

void view_hang_draw(struct tui *t, int y, int h, int w)
{
	const struct tui_session *s = &t->s;
	struct ui_text x = {0};
	char *hosts = session_hosts_folded(s);
	int64_t age = s->hang_verdict_ms ? (cd_now_ms() - s->hang_verdict_ms) / 1000 : 0;

	ui_print(y, 1, w - 2, ui_attr(t, UI_TITLE), "Hang: %s%s on %s",
	         s->hang_run[0] ? "the run " : "any torch job", s->hang_run, hosts ? hosts : "");
	free(hosts);
	if (s->hang_rounds)
		ui_print(
		    y + 1, 1, w - 2, ui_attr(t, UI_DIM),
		    "round %d, verdict %llds old; now: %s   Enter: the full report  Esc: close",
		    s->hang_rounds, (long long)age, s->hang_phase);
	else
		ui_print(y + 1, 1, w - 2, ui_attr(t, UI_DIM), "now: %s   Esc: close",
		         s->hang_phase[0] ? s->hang_phase : "starting");
	if (s->hang_verdict && s->hang_error[0])
		ui_print(y + 2, 1, w - 2, ui_attr(t, UI_FAIL),
		         "FAIL the next round could not start: %s (h h tries again)",
		         s->hang_error);
	if (t->hang_vs.drill)
		report_text(t, &x);
	else
		summary_text(t, &x);
	ui_text_draw(&x, y + 3, h - 3, w, &t->hang_vs.scroll);
	ui_text_free(&x);
}

int view_hang_key(struct tui *t, int ch)
{
	struct view_state *vs = &t->hang_vs;

	switch (ch) {
	case 'q':
	case KEY_F(10):
	case '?':
	case KEY_F(1):
		return 0;
	case 27: /* Esc */
	case KEY_LEFT:
	case 'h':
		if (vs->drill && ch != 'h') {
			vs->drill = 0;
			vs->scroll = 0;
		} else {
			view_hang_close(t);
		}
		return 1;
	case '\r':
	case '\n':
	case KEY_ENTER:
		if (t->s.hang_verdict && !vs->drill) {
			vs->drill = 1;
			vs->scroll = 0;
		}
		return 1;
	case 'j':
	case KEY_DOWN:
		vs->scroll++;
		return 1;
	case 'k':
	case KEY_UP:
		if (vs->scroll > 0)
			vs->scroll--;
		return 1;
	case KEY_NPAGE:
		vs->scroll += LINES / 2;
		return 1;
	case KEY_PPAGE:
		vs->scroll = vs->scroll > LINES / 2 ? vs->scroll - LINES / 2 : 0;
		return 1;
	case 'g':
	case KEY_HOME:
		vs->scroll = 0;
		return 1;
	case 'G':
	case KEY_END:
		vs->scroll = 1 << 20; /* clamped by ui_text_draw */
		return 1;
	default:
		return 1; /* the views' keys stay with the views below */
	}
}

static int hang_open_now(const struct tui *t)
{
	return t->hang;
}

static void hang_progress(const struct tui *t, char *buf, size_t len)
{
	snprintf(buf, len, "hang: round %d, %s", t->s.hang_rounds + 1,
	         t->s.hang_phase[0] ? t->s.hang_phase : "starting");
}

const struct overlay overlay_hang = {
    .open_key = 'h',
    .open = view_hang_open,
    .close = view_hang_close,
    .open_now = hang_open_now,
    .draw = view_hang_draw,
    .key = view_hang_key,
    .progress = hang_progress,
};
