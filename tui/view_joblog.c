/* SPDX-License-Identifier: MIT */
/*
 * view_joblog.c - the Job view's log, shared by both job kinds (the MNIST
 * job, view_job.c; a run, view_run.c): the nodes' lines as they come,
 * each with its host, its rank for a run's, and its stream; one node's
 * lines at a time (`n`), the filter; it follows the tail until j/k
 * (PgUp/PgDn, g) scroll it back, and G follows again.
 */
#include "view_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOST_W 12 /* the host column's widest */

/* Whether log line k is shown: the node `n` picked, and the filter. */
static int line_shown(struct tui *t, const struct view_state *vs, const struct job_line *l)
{
	char buf[600];

	if (vs->mode > 0 && l->node != (size_t)(vs->mode - 1))
		return 0;
	if (!t->filter[0])
		return 1;
	snprintf(buf, sizeof(buf), "%s %s", l->node < t->s.nhosts ? t->s.hosts[l->node] : "?",
	         l->text);
	return ui_filter_match(t, buf);
}

/* The lines shown, as indexes into s->lines; returns how many. */
static size_t visible_lines(struct tui *t, const struct view_state *vs, size_t *out)
{
	size_t n = 0;

	for (size_t k = 0; k < t->s.nlines; k++)
		if (line_shown(t, vs, &t->s.lines[k]))
			out[n++] = k;
	return n;
}

/*
 * The log's first shown line, as an index into the visible lines. It
 * follows the tail while vs->sel is 0; scrolled back (vs->sel 1), vs->top
 * holds the line's number counted from the job's first line, so the view
 * stays put while lines arrive and the oldest are dropped.
 */
static size_t log_first(struct tui *t, const struct view_state *vs, const size_t *vis, size_t nv,
                        int rows)
{
	size_t tail = nv > (size_t)rows ? nv - (size_t)rows : 0;

	if (vs->sel == 0)
		return tail;
	for (size_t k = 0; k < nv; k++)
		if (t->s.lines_dropped + vis[k] >= vs->top)
			return k < tail ? k : tail;
	return tail;
}

static void draw_log_heading(struct tui *t, const struct view_state *vs, int y, int w, size_t first,
                             size_t shown, size_t nv)
{
	int x = 1;

	if (vs->mode > 0)
		x += ui_print(y, x, w - x, ui_attr(t, UI_TITLE), "Log of %s (%d of %zu; n: next)",
		              t->s.hosts[vs->mode - 1], vs->mode, t->s.nhosts);
	else
		x += ui_print(y, x, w - x, ui_attr(t, UI_TITLE), "Log of all nodes (n: one node)");
	if (nv == 0)
		return;
	ui_print(y, x, w - x, A_DIM, "  lines %zu-%zu of %zu%s%s", first + 1, first + shown, nv,
	         vs->sel ? ", scrolled back (G: follow)" : ", following",
	         t->s.lines_dropped ? ", oldest dropped" : "");
}

void view_job_draw_log(struct tui *t, struct view_state *vs, int y, int h, int w)
{
	size_t *vis, nv, first, shown = 0;
	int rows = h - 1, hw = 4;

	if (h < 1)
		return;
	if (vs->mode > (int)t->s.nhosts)
		vs->mode = 0;
	vis = cd_calloc(t->s.nlines + 1, sizeof(*vis));
	nv = visible_lines(t, vs, vis);
	first = log_first(t, vs, vis, nv, rows);
	for (size_t i = 0; i < t->s.nhosts; i++)
		if ((int)strlen(t->s.hosts[i]) > hw)
			hw = (int)strlen(t->s.hosts[i]);
	if (hw > HOST_W)
		hw = HOST_W;
	for (int k = 0; k < rows && first + (size_t)k < nv; k++, shown++) {
		const struct job_line *l = &t->s.lines[vis[first + (size_t)k]];
		int err = strcmp(l->stream, "err") == 0, row = y + 1 + k, x = 1;
		int a = err                             ? ui_attr(t, UI_FAIL)
		        : strcmp(l->stream, "log") == 0 ? (int)A_DIM
		                                        : (int)A_NORMAL;

		x += ui_print(row, x, hw + 1, A_NORMAL, "%-*.*s ", hw, hw,
		              l->node < t->s.nhosts ? t->s.hosts[l->node] : "?");
		if (l->rank >= 0) /* a run's line: its rank, as `clusterdoc run` prints it */
			x += ui_print(row, x, 6, A_NORMAL, "r%-4d ", l->rank);
		x += ui_print(row, x, 4, a, "%-3s ", l->stream);
		ui_print(row, x, w - x, err ? a : (int)A_NORMAL, "%s", l->text);
	}
	if (nv == 0)
		ui_print(y + 1, 2, w - 3, A_DIM, "%s",
		         t->s.nlines ? "no line matches (n: next node; Esc clears the filter)"
		                     : "no output yet");
	draw_log_heading(t, vs, y, w, first, shown, nv);
	free(vis);
}

int view_job_log_key(struct tui *t, struct view_state *vs, int ch, int rows)
{
	size_t *vis, nv, first, tail, page;

	rows = rows > 1 ? rows : 1;
	page = (size_t)rows;
	vis = cd_calloc(t->s.nlines + 1, sizeof(*vis));
	nv = visible_lines(t, vs, vis);
	first = log_first(t, vs, vis, nv, rows);
	tail = nv > page ? nv - page : 0;
	switch (ch) {
	case 'j':
	case KEY_DOWN:
		first++;
		break;
	case 'k':
	case KEY_UP:
		first = first ? first - 1 : 0;
		break;
	case KEY_NPAGE:
	case ' ':
		first += page;
		break;
	case KEY_PPAGE:
		first = first > page ? first - page : 0;
		break;
	case 'g':
	case KEY_HOME:
		first = 0;
		break;
	case 'G':
	case KEY_END:
		first = tail;
		break;
	default:
		free(vis);
		return 0;
	}
	if (first >= tail) {
		vs->sel = 0;
	} else {
		vs->sel = 1;
		vs->top = t->s.lines_dropped + vis[first];
	}
	free(vis);
	return 1;
}
