/* SPDX-License-Identifier: MIT */
/*
 * view_network_grid.c - the Network view's matrix (`m`): the reachability
 * attempts as a grid of from -> to cells, the selected pair summed up under
 * it, and a legend. Rows are the view state's selection (j/k); the column
 * is this file's (h/l).
 */
#include "view_network.h"
#include "probes/rdma_matrix.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The grid's selected column and the first column on screen: the view
 * state holds one selection, the row, which j/k move. */
static size_t grid_col, grid_left;

size_t netview_grid_col(void)
{
	return grid_col;
}

void netview_grid_move(int delta, size_t n)
{
	if (delta < 0 && grid_col > 0)
		grid_col--;
	else if (delta > 0 && grid_col + 1 < n)
		grid_col++;
}

/* ---------------------------------------------------------------- results */

static const struct result_code {
	const char *result; /* reach.h's words */
	char letter;
	const char *word;
} result_codes[] = {
    {"ok", 'o', "ok"},
    {"refused", 'R', "refused"},
    {"timeout", 'F', "filtered (timeout)"},
    {"no-route", 'N', "no route"},
    {"net-unreachable", 'N', "network unreachable"},
    {"wrong-peer", 'W', "wrong peer"},
    {"bad-answer", '?', "bad answer"},
    {"not-tested", '.', "not tested"},
};

static char result_letter(const char *result)
{
	for (size_t k = 0; k < CD_ARRAY_LEN(result_codes); k++)
		if (strcmp(result_codes[k].result, result) == 0)
			return result_codes[k].letter;
	return '?';
}

static const char *result_word(const char *result)
{
	for (size_t k = 0; k < CD_ARRAY_LEN(result_codes); k++)
		if (strcmp(result_codes[k].result, result) == 0)
			return result_codes[k].word;
	return result;
}

int netview_tested(const struct nm_attempt *a)
{
	return strcmp(a->result, "not-tested") != 0;
}

/* What the matrix found from one node to another. "Used" attempts go to
 * an address NCCL or Gloo would use on the target (every attempt before
 * the diagnosis): the others (docker0, an idle link-local) fail on many
 * clusters without harming a job. */
struct pair {
	size_t tried, failed, used, used_failed;
	const struct nm_attempt *used_bad, *other_bad; /* the first failures */
	const struct nm_attempt *rdma;                 /* the one carrying the RDMA proof */
};

static void pair_add(const struct tui *t, struct pair *p, const struct nm_attempt *a)
{
	const struct node_prediction *pr = netview_prediction(t, a->to);
	int used = !pr || netview_pick_used(pr, a->addr), ok = strcmp(a->result, "ok") == 0;

	p->tried++;
	p->failed += !ok;
	if (a->rdma[0])
		p->rdma = a;
	if (used) {
		p->used++;
		p->used_failed += !ok;
		if (!ok && !p->used_bad)
			p->used_bad = a;
	} else if (!ok && !p->other_bad) {
		p->other_bad = a;
	}
}

/* The pairs of the grid on screen: rows [top, top + nr) and columns
 * [grid_left, grid_left + nc) of the visible nodes, filled in one pass
 * over the attempts (a whole n x n table would not scale). */
struct window {
	size_t top, nr, nc;
	struct pair *p; /* [nr * nc] */
};

static void window_fill(const struct tui *t, const size_t *vis, struct window *wd)
{
	const struct netmodel *m = t->s.m;
	/* 1 + a node's row (column) on screen, 0 when it has none */
	size_t *row_of = cd_calloc(m->nnodes + 1, sizeof(*row_of));
	size_t *col_of = cd_calloc(m->nnodes + 1, sizeof(*col_of));

	for (size_t r = 0; r < wd->nr; r++)
		row_of[vis[wd->top + r]] = r + 1;
	for (size_t c = 0; c < wd->nc; c++)
		col_of[vis[grid_left + c]] = c + 1;
	wd->p = cd_calloc(wd->nr * wd->nc + 1, sizeof(*wd->p));
	for (size_t k = 0; k < m->nattempts; k++) {
		const struct nm_attempt *a = &m->attempts[k];

		if (a->from < m->nnodes && a->to < m->nnodes && a->from != a->to &&
		    netview_tested(a) && row_of[a->from] && col_of[a->to])
			pair_add(t, &wd->p[(row_of[a->from] - 1) * wd->nc + col_of[a->to] - 1], a);
	}
	free(row_of);
	free(col_of);
}

/* The pair of row r and column c (indexes into the visible nodes). */
static const struct pair *window_pair(const struct window *wd, size_t r, size_t c)
{
	return &wd->p[(r - wd->top) * wd->nc + (c - grid_left)];
}

/* The two characters of a cell and their colour (see the legend). */
static void cell_of(const struct pair *p, int self, char out[3], enum ui_color *c)
{
	const struct nm_attempt *bad = p->used ? p->used_bad : p->other_bad;

	*c = UI_DIM;
	if (self) {
		snprintf(out, 3, "--");
	} else if (!p->tried) {
		snprintf(out, 3, "..");
	} else if (bad) {
		out[0] = out[1] = result_letter(bad->result);
		out[2] = 0;
		*c = UI_FAIL;
	} else if (p->failed) {
		snprintf(out, 3, "o*");
		*c = UI_WARN;
	} else {
		snprintf(out, 3, "ok");
		*c = UI_OK;
	}
}

/* ---------------------------------------------------------------- the grid */

/* Layout of the grid: a label column (index and host), then cells. */
struct grid {
	int pitch;     /* columns per cell: 3 (a space between cells) or 2 */
	int label, hw; /* the label's width, the host name's part of it */
	int ncols;     /* cells on screen */
	int hdr;       /* header rows: 2 when indexes take two digits at pitch 2 */
};

static void grid_layout(struct tui *t, size_t n, int w, struct grid *g)
{
	size_t top = t->s.nhosts;
	int hw = netview_host_width(t);

	g->pitch = (int)(5 + (size_t)hw + 3 * n) <= w - 1 || top > 99 ? 3 : 2;
	g->hdr = g->pitch == 2 && top > 9 ? 2 : 1;
	g->hw = w - 1 - 5 - g->pitch * (int)n;
	g->hw = g->hw > hw ? hw : g->hw < 6 ? 6 : g->hw;
	g->label = 5 + g->hw;
	g->ncols = (w - 2 - g->label) / g->pitch; /* a column left for '>' */
	if (g->ncols < 1)
		g->ncols = 1;
}

static void grid_header(struct tui *t, const struct grid *g, const size_t *vis, size_t n, int y)
{
	int x0 = 1 + g->label, a = ui_attr(t, UI_TITLE);

	for (int c = 0; c < g->ncols && grid_left + (size_t)c < n; c++) {
		size_t idx = vis[grid_left + (size_t)c] + 1;
		int x = x0 + c * g->pitch, sel = grid_left + (size_t)c == grid_col;
		int at = sel ? a | (int)A_REVERSE : a;

		if (g->pitch == 3)
			ui_print(y, x, 3, at, "%3zu", idx);
		else if (g->hdr == 2) {
			if (idx >= 10)
				ui_print(y, x + 1, 1, at, "%zu", idx / 10);
			ui_print(y + 1, x + 1, 1, at, "%zu", idx % 10);
		} else {
			ui_print(y, x, 2, at, "%2zu", idx);
		}
	}
	ui_print(y + g->hdr - 1, 1, g->label, ui_attr(t, UI_DIM), "%-*s", g->label - 1,
	         "from \\ to");
	if (grid_left > 0)
		ui_print(y + g->hdr - 1, x0 - 1, 1, ui_attr(t, UI_DIM), "<");
}

static void grid_row(struct tui *t, const struct grid *g, const struct window *wd,
                     const size_t *vis, size_t n, size_t r, int sel, int y)
{
	size_t from = vis[r];
	int x0 = 1 + g->label;

	ui_print(y, 1, g->label, sel ? ui_attr(t, UI_SEL) : (int)A_NORMAL, "%3zu %-*.*s", from + 1,
	         g->hw, g->hw, t->s.hosts[from]);
	for (size_t c = grid_left; c < grid_left + wd->nc; c++) {
		int x = x0 + (int)(c - grid_left) * g->pitch + (g->pitch == 3);
		char cell[3];
		enum ui_color col;

		cell_of(window_pair(wd, r, c), from == vis[c], cell, &col);
		ui_print(y, x, 2, ui_attr(t, col) | (sel && c == grid_col ? A_REVERSE : 0), "%s",
		         cell);
	}
	if (grid_left + wd->nc < n)
		ui_print(y, x0 + g->ncols * g->pitch, 1, ui_attr(t, UI_DIM), ">");
}

/* "filtered (timeout) on 10.0.0.14", with "port 29500 (fixed)" when kind */
static void attempt_words(const struct nm_attempt *a, int kind, char *buf, size_t len)
{
	char addr[NM_ADDR + 16];

	nm_addr_format(addr, sizeof(addr), a->addr, a->scope_id);
	if (kind)
		snprintf(buf, len, "%s on %s port %d (%s)", result_word(a->result), addr, a->port,
		         a->fixed_port ? "fixed" : "ephemeral");
	else
		snprintf(buf, len, "%s on %s", result_word(a->result), addr);
}

/* text on up to two rows from column x, wrapped at a space; returns the
 * rows used. */
static int print_two_rows(int y, int x, int w, int attr, const char *text)
{
	int room = w - x, len = (int)strlen(text), cut = len;

	if (len > room) {
		for (cut = room; cut > 0 && text[cut] != ' '; cut--)
			;
		if (cut == 0)
			cut = room;
	}
	ui_print(y, x, room, attr, "%.*s", cut, text);
	if (cut == len)
		return 1;
	ui_print(y + 1, x + 2, room - 2, attr, "%s", text + cut + (text[cut] == ' '));
	return 2;
}

/* The pair's RDMA proof (rdma_matrix.h) on row y, when it is not past
 * last (the summary's three rows). */
static void rdma_row(struct tui *t, const struct nm_attempt *a, int y, int last, int w)
{
	char text[512];
	enum ui_color c = strcmp(a->rdma, "ok") == 0       ? UI_OK
	                  : strcmp(a->rdma, "failed") == 0 ? UI_FAIL
	                                                   : UI_DIM;

	if (y <= last)
		ui_print(y, 3, w - 4, ui_attr(t, c), "RDMA %s",
		         rdma_matrix_text(a, text, sizeof(text)));
}

/* Up to three rows under the grid about the selected pair: the addresses
 * NCCL/Gloo would use (one or two rows), the others, then the RDMA proof
 * where a row is left. */
static void grid_summary(struct tui *t, const struct pair *p, size_t from, size_t to, int y, int w)
{
	const char *a = t->s.hosts[from], *b = t->s.hosts[to];
	char words[NM_ADDR + 96], line[512];
	int used_rows = 1;
	size_t other = p->tried - p->used, other_failed = p->failed - p->used_failed;

	if (from == to) {
		ui_print(y, 1, w - 1, A_NORMAL, "%s: itself (Enter: its probe)", a);
		return;
	}
	if (!p->tried) {
		ui_print(y, 1, w - 1, ui_attr(t, UI_DIM), "%s -> %s: not tested%s", a, b,
		         t->s.m->matrix_done ? "" : " (the matrix has not run yet)");
		return;
	}
	if (p->used_bad) {
		attempt_words(p->used_bad, 1, words, sizeof(words));
		snprintf(line, sizeof(line), "%s -> %s: %zu of %zu attempts failed: %s", a, b,
		         p->used_failed, p->used, words);
		used_rows = print_two_rows(y, 1, w, ui_attr(t, UI_FAIL), line);
	} else if (p->used) {
		ui_print(y, 1, w - 1, ui_attr(t, UI_OK), "%s -> %s: ok, all %zu attempts reached",
		         a, b, p->used);
	} else {
		ui_print(y, 1, w - 1, ui_attr(t, UI_DIM),
		         "%s -> %s: no attempt to an address NCCL/Gloo would use", a, b);
	}
	if (p->rdma)
		rdma_row(t, p->rdma, y + used_rows + (other ? 1 : 0), y + 2, w);
	if (!other)
		return;
	if (!other_failed) {
		ui_print(y + used_rows, 3, w - 4, ui_attr(t, UI_DIM),
		         "also %zu to other addresses: all reached", other);
		return;
	}
	attempt_words(p->other_bad, 0, words, sizeof(words));
	ui_print(y + used_rows, 3, w - 4, ui_attr(t, UI_WARN),
	         "also %zu of %zu to other addresses failed, e.g. %s", other_failed, other, words);
}

/* Two rows: what reached, then the failures (a cell names the first
 * failure toward an address NCCL or Gloo would use). */
static void legend(struct tui *t, int y, int w)
{
	static const struct {
		const char *code, *word;
		enum ui_color c;
	} items[] = {
	    {"ok", "reached", UI_OK},
	    {"o*", "reached; only addresses NCCL/Gloo skip failed", UI_WARN},
	    {"..", "not tested", UI_DIM},
	    {"FF", "filtered/timeout", UI_FAIL},
	    {"RR", "refused", UI_FAIL},
	    {"NN", "no route", UI_FAIL},
	    {"WW", "wrong peer", UI_FAIL},
	    {"??", "other", UI_FAIL},
	};
	int x = 1;

	for (size_t k = 0; k < CD_ARRAY_LEN(items); k++) {
		if (k == 3) {
			y++;
			x = 1;
		}
		x += ui_print(y, x, w - x, ui_attr(t, items[k].c), "%s", items[k].code);
		x += ui_print(y, x, w - x, A_NORMAL, " %s  ", items[k].word);
	}
}

/* The hosts of the columns on screen whose row is not: the labels name the rest. */
static void column_hosts(struct tui *t, const struct grid *g, const size_t *vis, size_t n,
                         size_t top, int rows, int y, int w)
{
	int x = 1;

	x += ui_print(y, x, w - x, ui_attr(t, UI_DIM), "columns:");
	for (int c = 0; c < g->ncols && grid_left + (size_t)c < n && x < w; c++) {
		size_t r = grid_left + (size_t)c;

		if (r >= top && r < top + (size_t)rows)
			continue;
		x += ui_print(y, x, w - x, ui_attr(t, UI_DIM), " %zu=%s", vis[r] + 1,
		              t->s.hosts[vis[r]]);
	}
}

void netview_grid_draw(struct tui *t, struct view_state *vs, int y, int h, int w)
{
	size_t n, *vis = netview_visible_new(t, &n);
	struct window wd;
	struct grid g;
	int rows, tail = 6, sy;

	ui_print(y, 1, w - 1, ui_attr(t, UI_TITLE), "%s",
	         "REACHABILITY from row to column   h/l j/k move  Enter attempts  m list");
	if (!n) {
		ui_print(y + 2, 2, w - 3, ui_attr(t, UI_DIM),
		         "no node matches the filter (Esc clears it)");
		free(vis);
		return;
	}
	grid_layout(t, n, w, &g);
	if (h - 1 - g.hdr - tail < (int)n)
		tail++; /* the hosts of the columns whose row is off screen */
	rows = h - 1 - g.hdr - tail > 1 ? h - 1 - g.hdr - tail : 1;
	if (grid_col >= n)
		grid_col = n - 1;
	if (grid_col < grid_left)
		grid_left = grid_col;
	if (grid_col >= grid_left + (size_t)g.ncols)
		grid_left = grid_col - (size_t)g.ncols + 1;
	if (grid_left + (size_t)g.ncols > n) /* no empty columns after a filter */
		grid_left = n > (size_t)g.ncols ? n - (size_t)g.ncols : 0;
	ui_scroll(&vs->sel, &vs->top, n, rows);
	wd.top = vs->top;
	wd.nr = n - vs->top < (size_t)rows ? n - vs->top : (size_t)rows;
	wd.nc = n - grid_left < (size_t)g.ncols ? n - grid_left : (size_t)g.ncols;
	window_fill(t, vis, &wd);
	grid_header(t, &g, vis, n, y + 1);
	for (size_t r = wd.top; r < wd.top + wd.nr; r++)
		grid_row(t, &g, &wd, vis, n, r, r == vs->sel, y + 1 + g.hdr + (int)(r - wd.top));
	/* the rows under the grid: a blank one, then tail - 1 */
	sy = y + 1 + g.hdr + (int)wd.nr + 1;
	if (sy - 1 + tail > y + h)
		sy = y + h - tail + 1;
	if (!t->s.d && t->s.m->nattempts)
		ui_print(sy - 1, 1, w - 1, ui_attr(t, UI_DIM),
		         "(until the check ends, every attempt counts)");
	grid_summary(t, window_pair(&wd, vs->sel, grid_col), vis[vs->sel], vis[grid_col], sy, w);
	legend(t, sy + 3, w);
	if (wd.nr < n)
		column_hosts(t, &g, vis, n, vs->top, rows, sy + 5, w);
	free(wd.p);
	free(vis);
}
