/* SPDX-License-Identifier: MIT */
/*
 * view_bench.c - the Bench view: what `r` runs (the allreduce bench over
 * the sizes of --bench-min .. --bench-max), its live progress (the phase,
 * the nodes that answered, the sizes every rank has completed, the time),
 * then the result: the backend and why, each node's ring address and
 * interface or why it was left out, the failures, and the sweep both as
 * nccl-tests prints it (size, count, time, algbw, busbw, #wrong) and as a
 * chart of busbw by size.
 *
 * j/k select a size, in the table and on the chart alike. Where the table
 * and the chart do not both fit (80x24), the chart shows and `c` switches
 * to the table; where they do, both show and `c` leaves the table alone.
 * Enter opens the whole report as one text that scrolls.
 *
 * b stresses the nodes' GPUs instead (`clusterdoc gpu-burn`,
 * view_gpuburn.c); the view shows whichever of the two was started last.
 */
#include "ui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chart.h"
#include "collectives/bench_agent.h"

#define CHART_MIN_H     8  /* rows the chart needs to be worth drawing */
#define BOTH_MIN_H      40 /* from this height the table and the chart show together */
#define FAILURE_LINES   2  /* failures shown above the sweep; the rest in the report */
#define NODE_LINES_PART 4  /* the nodes take at most 1/4 of the height */

enum sweep_mode { SWEEP_AUTO, SWEEP_TABLE };

static const char *const phase_names[] = {"probe", "plan", "listen", "run"};

/* ---------------------------------------------------------------- text */

static const char *backend_words(enum bench_backend b)
{
	switch (b) {
	case BENCH_TCP:
		return "a TCP ring between the agents";
	case BENCH_NCCL:
		return "NCCL on the nodes' GPUs";
	default:
		return "a TCP ring (NCCL on GPU nodes)";
	}
}

/* The elapsed time of the bench, running or ended, in seconds. */
static double elapsed_s(const struct tui_session *s)
{
	int64_t end = s->bench_state == TASK_RUNNING ? cd_now_ms() : s->bench_ended_ms;

	return end > s->bench_started_ms ? (double)(end - s->bench_started_ms) / 1000 : 0;
}

/* "8 B .. 256 MiB, x2 per step (26 sizes)" */
static void sweep_words(const struct bench_opts *o, char *buf, size_t len)
{
	size_t sizes[BENCH_MAX_SIZES], n = bench_sizes(o, sizes, BENCH_MAX_SIZES);
	char lo[32], hi[32];

	chart_bytes(lo, sizeof(lo), (long long)o->min_bytes);
	chart_bytes(hi, sizeof(hi), (long long)o->max_bytes);
	snprintf(buf, len, "%s .. %s, x%d per step (%zu size%s)", lo, hi, o->factor, n,
	         n == 1 ? "" : "s");
}

/* The title row: the view's name and the bench's state, as a word. */
static void draw_title(struct tui *t, int y, int w)
{
	const struct tui_session *s = &t->s;
	const char *word;
	enum ui_color c = ui_task_color(s->bench_state, &word);
	char right[96];

	ui_print(y, 1, w - 1, ui_attr(t, UI_TITLE), "Allreduce bench");
	if (s->bench_state == TASK_IDLE || !s->bench)
		snprintf(right, sizeof(right), "%s", word);
	else
		snprintf(right, sizeof(right), "%s  %.1f s", word, elapsed_s(s));
	if (w > 20 + (int)strlen(right))
		ui_print(y, w - 1 - (int)strlen(right), (int)strlen(right), ui_attr(t, c), "%s",
		         right);
}

/* ---------------------------------------------------------------- intro */

static void intro_text(struct tui *t, struct ui_text *x, int w)
{
	const struct bench_opts *o = &t->o->session.bench;
	char sweep[128];
	char *fold = session_hosts_folded(&t->s);

	sweep_words(o, sweep, sizeof(sweep));
	ui_text_add(x, A_NORMAL, 1,
	            "r runs the allreduce bench: %s over the sizes %s; %d timed iteration%s "
	            "after %d warm-up, %s sum%s.",
	            backend_words(o->backend), sweep, o->iters, o->iters == 1 ? "" : "s", o->warmup,
	            coll_dtype_name(o->dtype), o->check ? ", every result checked (#wrong)" : "");
	ui_text_add(x, A_NORMAL, 0, " ");
	ui_text_add(x, A_NORMAL, 1,
	            "The nodes talk to their ring neighbours directly, over %s%s; the head only "
	            "hands out the addresses and collects the timings. A node that cannot join "
	            "the ring is left out, and says why.",
	            o->iface ? "the interface " : "the interface NCCL would pick on each",
	            o->iface ? o->iface : "");
	ui_text_add(x, A_NORMAL, 0, " ");
	ui_text_add(x, A_NORMAL, 1,
	            "Then: the sweep as nccl-tests prints it (size, count, time, algbw, busbw, "
	            "#wrong) and a chart of busbw by size. j/k select a size, c switches table "
	            "and chart, Enter opens the whole report.");
	ui_text_add(x, A_NORMAL, 0, " ");
	ui_text_add(x, A_NORMAL, 1, "Nodes: %s (%zu)",
	            t->s.nhosts ? fold : "none yet (H gives them)", t->s.nhosts);
	ui_text_add(x, A_DIM, 1,
	            "The sizes and iterations: --bench-min, --bench-max, --bench-iters.");
	ui_text_add(x, A_NORMAL, 0, " ");
	ui_text_add(x, A_NORMAL, 1,
	            "b stresses every GPU of the nodes at once instead (clusterdoc gpu-burn, "
	            "%g s): TFLOP/s and GB/s per GPU against its model's median, the slow "
	            "GPUs, and the nodes without torch or CUDA with why.",
	            t->o->session.burn.seconds);
	if (t->o->read_only) {
		ui_text_add(x, A_NORMAL, 0, " ");
		ui_text_add(x, ui_attr(t, UI_WARN), 1,
		            "disabled: --read-only runs nothing on the nodes but the check.");
	}
	if (t->s.bench_state == TASK_FAILED && t->s.bench_error[0]) {
		ui_text_add(x, A_NORMAL, 0, " ");
		ui_text_add(x, ui_attr(t, UI_FAIL), 1, "FAILED to start: %s", t->s.bench_error);
	}
	free(fold);
}

/* ---------------------------------------------------------------- nodes */

/* "rank 2" or "ranks 4-7" */
static void ranks_words(const struct bench_node *n, char *buf, size_t len)
{
	if (n->nranks == 1)
		snprintf(buf, len, "rank %d", n->first_rank);
	else
		snprintf(buf, len, "ranks %d-%d", n->first_rank, n->first_rank + n->nranks - 1);
}

/* Where node i stands: its ranks and ring address, or why it is out. */
static void node_line(struct tui *t, const struct bench_report *r, size_t i, int running, char *buf,
                      size_t len, enum ui_color *c)
{
	const struct bench_node *n = &r->nodes[i];

	*c = UI_NORMAL;
	if (n->error[0]) {
		*c = UI_FAIL;
		snprintf(buf, len, "FAIL %s: %s", n->error_code[0] ? n->error_code : "left out",
		         n->error);
	} else if (n->nranks > 0 && n->addr[0]) {
		char ranks[32];

		ranks_words(n, ranks, sizeof(ranks));
		*c = running ? UI_RUN : UI_OK;
		snprintf(buf, len, "%-10s %s %s  (%s)", ranks, n->ifname, n->addr, n->addr_rule);
	} else if (n->probed) {
		*c = running ? UI_RUN : UI_DIM;
		snprintf(buf, len, running ? "probed, waiting for the plan" : "not in the ring");
	} else {
		*c = running ? UI_RUN : UI_DIM;
		snprintf(buf, len, running ? "connecting and probing..." : "no answer");
	}
}

static int node_failed(const struct bench_report *r, size_t i)
{
	return r->nodes[i].error[0] != 0;
}

/* Up to max rows of nodes, in order; when they do not all fit, the failed
 * ones first and a last row saying how many more the report has. Returns
 * the rows drawn. */
static int draw_nodes(struct tui *t, const struct bench_report *r, int running, int y, int max,
                      int w)
{
	size_t shown = 0, total = 0, room;
	int failed_first;

	for (size_t i = 0; i < r->nnodes; i++)
		total += ui_filter_match(t, r->nodes[i].host);
	if (max < 1 || total == 0)
		return 0;
	failed_first = total > (size_t)max;
	room = failed_first ? (size_t)max - 1 : total;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < r->nnodes && shown < room; i++) {
			char buf[CD_ERRLEN + 400];
			enum ui_color c;
			int row = y + (int)shown, x = 2;

			if (!ui_filter_match(t, r->nodes[i].host))
				continue;
			if (failed_first ? node_failed(r, i) != (pass == 0) : pass == 1)
				continue;
			node_line(t, r, i, running, buf, sizeof(buf), &c);
			x += ui_print(row, x, 13, A_NORMAL, "%-12s ", r->nodes[i].host);
			ui_print(row, x, w - x - 1,
			         c == UI_DIM      ? (int)A_DIM
			         : c == UI_NORMAL ? (int)A_NORMAL
			                          : ui_attr(t, c),
			         "%s", buf);
			shown++;
		}
	}
	if (shown < total)
		ui_print(y + (int)shown, 2, w - 3, A_DIM,
		         "+ %zu more node(s): Enter shows the whole report", total - shown);
	return (int)shown + (shown < total);
}

/* ---------------------------------------------------------------- running */

static int phase_index(const char *phase)
{
	for (size_t k = 0; k < CD_ARRAY_LEN(phase_names); k++)
		if (strcmp(phase, phase_names[k]) == 0)
			return (int)k;
	return (int)CD_ARRAY_LEN(phase_names);
}

/* "probe > plan > [listen] > run", the current one in the running colour. */
static int draw_phases(struct tui *t, int y, int x, int w, int cur)
{
	int x0 = x;

	for (int k = 0; k < (int)CD_ARRAY_LEN(phase_names) && x < x0 + w; k++) {
		int a = k == cur  ? ui_attr(t, UI_RUN) | A_BOLD
		        : k < cur ? (int)A_NORMAL
		                  : (int)A_DIM;

		if (k)
			x += ui_print(y, x, x0 + w - x, A_DIM, " > ");
		x += ui_print(y, x, x0 + w - x, a, k == cur ? "[%s]" : "%s", phase_names[k]);
	}
	return x - x0;
}

/* The sizes row: in the run phase a meter and "7 of 26 done, now 512 KiB"
 * (the sizes every rank of the round has completed, and the next one). */
static void draw_sizes(struct tui *t, const struct bench_progress *p, int row, int w, int mw)
{
	size_t sizes[BENCH_MAX_SIZES];
	size_t n = bench_sizes(&t->o->session.bench, sizes, BENCH_MAX_SIZES);
	char meter[128], now[48] = "", bytes[32];
	int x;

	ui_print(row, 2, 8, A_BOLD, "sizes");
	if (strcmp(p->phase, "run") != 0) {
		ui_print(row, 10, w - 11, A_DIM, "%zu to time once the ring runs", p->nsizes);
		return;
	}
	if (p->sizes_done < n && p->sizes_done < p->nsizes) {
		chart_bytes(bytes, sizeof(bytes), (long long)sizes[p->sizes_done]);
		snprintf(now, sizeof(now), ", now %s", bytes);
	}
	chart_meter(meter, sizeof(meter), mw,
	            p->nsizes ? (double)p->sizes_done / (double)p->nsizes : 0);
	x = 10 + ui_print(row, 10, w - 11, ui_attr(t, UI_RUN), "%s", meter);
	ui_print(row, x + 1, w - x - 2, A_NORMAL, "%zu of %zu done%s", p->sizes_done, p->nsizes,
	         now);
}

static void draw_running(struct tui *t, int y, int h, int w)
{
	const struct tui_session *s = &t->s;
	const struct bench_report *r = session_bench_report(s);
	struct bench_progress p;
	char meter[128], sweep[128];
	int cur, row = y, mw = w - 40 > 60 ? 60 : w - 40;
	double frac;

	bench_progress(s->bench, &p);
	cur = phase_index(p.phase);
	/* each phase a quarter of the bar, moved on by its answers */
	frac = (cur + (p.nodes ? (double)p.answered / (double)p.nodes : 0)) /
	       (double)CD_ARRAY_LEN(phase_names);
	if (strcmp(p.phase, "plan") == 0)
		frac = (double)(cur + 1) / (double)CD_ARRAY_LEN(phase_names);
	mw = mw < 12 ? 12 : mw;
	chart_meter(meter, sizeof(meter), mw, frac);

	ui_print(row, 2, 8, A_BOLD, "phase");
	draw_phases(t, row, 10, w - 11, cur);
	if (p.rounds > 1)
		ui_print(row, w - 20, 19, A_NORMAL, "round %d of %d", p.round, p.rounds);
	row++;
	ui_print(row, 10, w - 11, ui_attr(t, UI_RUN), "%s", meter);
	ui_print(row, 11 + (int)strlen(meter), w - 12 - (int)strlen(meter), A_NORMAL,
	         "%s: %zu of %zu answered", p.phase, p.answered, p.nodes);
	row++;
	ui_print(row, 2, 8, A_BOLD, "nodes");
	ui_print(row, 10, w - 11, A_NORMAL, "%zu of %zu probed, %zu answered this phase", p.probed,
	         p.nodes, p.answered);
	row++;
	ui_print(row, 2, 8, A_BOLD, "elapsed");
	ui_print(row, 10, w - 11, A_NORMAL, "%.1f s", elapsed_s(s));
	row++;
	sweep_words(&t->o->session.bench, sweep, sizeof(sweep));
	ui_print(row, 2, 8, A_BOLD, "sweep");
	ui_print(row, 10, w - 11, A_NORMAL, "%s, %d iteration%s each", sweep,
	         t->o->session.bench.iters, t->o->session.bench.iters == 1 ? "" : "s");
	row++;
	draw_sizes(t, &p, row, w, mw);
	row += 2;
	ui_print(row++, 2, w - 3, A_DIM,
	         "The agents time every size on the nodes and say when each is done:");
	ui_print(row++, 2, w - 3, A_DIM,
	         "the per-size results arrive together when the ring's sweep ends.");
	row++;
	if (row < y + h && r) {
		ui_print(row++, 2, w - 3, ui_attr(t, UI_TITLE), "%-12s %s", "NODE", "RING");
		draw_nodes(t, r, 1, row, y + h - row, w);
	}
}

/* ---------------------------------------------------------------- result */

static long long wrong_total(const struct bench_report *r)
{
	long long n = 0;

	for (size_t k = 0; k < r->nsizes; k++)
		n += r->sizes[k].wrong > 0 ? r->sizes[k].wrong : 0;
	return n;
}

/* One failure as a sentence. */
static void failure_words(const struct bench_report *r, const struct bench_failure *f, char *buf,
                          size_t len)
{
	const char *host = f->node < r->nnodes ? r->nodes[f->node].host : "?";

	if (f->rank >= 0 && f->bytes)
		snprintf(buf, len, "rank %d (%s) %s at %zu bytes: %s", f->rank, host, f->kind,
		         f->bytes, f->message);
	else if (f->rank >= 0)
		snprintf(buf, len, "rank %d (%s) %s: %s", f->rank, host, f->kind, f->message);
	else
		snprintf(buf, len, "%s %s: %s", host, f->kind, f->message);
}

/* The summary above the sweep: what ran, the nodes, the failures.
 * Returns the rows used. */
static int draw_summary(struct tui *t, const struct bench_report *r, int y, int h, int w)
{
	int row = y, node_rows = h / NODE_LINES_PART;
	char avg[64] = "";

	if (r->nsizes)
		snprintf(avg, sizeof(avg), "; avg busbw %.3g GB/s", r->avg_busbw);
	ui_print(row++, 2, w - 3, A_NORMAL, "%s, %d rank%s on %zu node(s)%s",
	         bench_backend_name(r->backend), r->nranks, r->nranks == 1 ? "" : "s", r->nnodes,
	         avg);
	if (r->backend_note[0])
		ui_print(row++, 2, w - 3, A_DIM, "%s", r->backend_note);
	row += draw_nodes(t, r, 0, row, node_rows < 1 ? 1 : node_rows, w);
	for (size_t k = 0; k < r->nfailures && k < FAILURE_LINES; k++) {
		char buf[CD_ERRLEN + 200];

		failure_words(r, &r->failures[k], buf, sizeof(buf));
		ui_print(row++, 2, w - 3, ui_attr(t, UI_FAIL), "FAIL %s", buf);
	}
	if (r->nfailures > FAILURE_LINES)
		ui_print(row++, 2, w - 3, ui_attr(t, UI_FAIL), "+ %zu more failure(s): Enter",
		         r->nfailures - FAILURE_LINES);
	return row - y;
}

static void draw_table(struct tui *t, struct view_state *vs, const struct bench_report *r, int y,
                       int h, int w)
{
	long long wrong = wrong_total(r);
	int body = h - 3;

	ui_print(y, 1, w - 1, ui_attr(t, UI_TITLE), "%12s %5s %11s %10s %8s %8s %7s", "size", "",
	         "count", "time", "algbw", "busbw", "#wrong");
	ui_print(y + 1, 1, w - 1, ui_attr(t, UI_TITLE), "%12s %5s %11s %10s %8s %8s %7s", "(B)", "",
	         "(elements)", "(us)", "(GB/s)", "(GB/s)", "");
	if (body < 1)
		return;
	ui_scroll(&vs->sel, &vs->top, r->nsizes, body);
	for (int k = 0; k < body && vs->top + (size_t)k < r->nsizes; k++) {
		size_t i = vs->top + (size_t)k;
		const struct bench_size *z = &r->sizes[i];
		int sel = i == vs->sel, row = y + 2 + k;
		int base = sel ? ui_attr(t, UI_SEL) : (int)A_NORMAL, x;
		char label[16], wr[24];

		chart_size_label(label, sizeof(label), z->bytes);
		if (z->wrong < 0)
			snprintf(wr, sizeof(wr), "N/A");
		else
			snprintf(wr, sizeof(wr), "%lld", z->wrong);
		if (sel) {
			attron(base);
			mvhline(row, 0, ' ', w);
			attroff(base);
		}
		x = 1 + ui_print(row, 1, w - 1, base, "%12zu %5s %11zu %10.2f %8.2f %8.2f ",
		                 z->bytes, label, z->count, z->time_us, z->algbw, z->busbw);
		ui_print(row, x, w - x, z->wrong > 0 && !sel ? ui_attr(t, UI_FAIL) : base, "%7s",
		         wr);
	}
	ui_print(y + h - 1, 1, w - 1, wrong ? ui_attr(t, UI_FAIL) : (int)A_NORMAL,
	         "Out of bounds values: %lld %s   Avg bus bandwidth: %.3f GB/s   size %zu of %zu",
	         wrong, wrong ? "FAILED" : "OK", r->avg_busbw, vs->sel + 1, r->nsizes);
}

/* busbw by size: one group of columns per size (a log scale, the sizes
 * growing by a factor), the selected size a reversed column. */
static void draw_chart(struct tui *t, struct view_state *vs, const struct bench_report *r, int y,
                       int h, int w)
{
	double *v = cd_calloc(r->nsizes, sizeof(*v));
	char(*labels)[16] = cd_calloc(r->nsizes, sizeof(*labels));
	const char **lp = cd_calloc(r->nsizes, sizeof(*lp));
	struct chart c;
	const struct bench_size *z;

	if (vs->sel >= r->nsizes)
		vs->sel = r->nsizes - 1;
	z = &r->sizes[vs->sel];
	for (size_t k = 0; k < r->nsizes; k++) {
		v[k] = r->sizes[k].busbw;
		chart_size_label(labels[k], sizeof(labels[k]), r->sizes[k].bytes);
		lp[k] = labels[k];
	}
	ui_print(y, 1, w - 1, ui_attr(t, UI_TITLE), "busbw (GB/s) by size (B, log scale)");
	ui_print(y, 38, w - 39, A_NORMAL, "j/k: %s B  busbw %.3g GB/s, %.1f us", lp[vs->sel],
	         z->busbw, z->time_us);
	if (chart_bars(&c, v, r->nsizes, lp, w - 2, h - 1, 0) < 0) {
		ui_print(y + 1, 2, w - 3, A_DIM,
		         "(too narrow for a chart of %zu sizes: c: the table)", r->nsizes);
	} else {
		int bx = chart_bar_x(&c, vs->sel);

		for (int k = 0; k < c.height; k++)
			ui_print(y + 1 + k, 1, w - 2, A_NORMAL, "%s", chart_row(&c, k));
		for (int k = c.plot_y; k < c.plot_y + c.plot_h; k++)
			ui_print(y + 1 + k, 1 + bx, c.bar_w, ui_attr(t, UI_SEL), "%.*s", c.bar_w,
			         chart_row(&c, k) + bx);
		chart_fini(&c);
	}
	free(lp);
	free(labels);
	free(v);
}

static void draw_sweep(struct tui *t, struct view_state *vs, const struct bench_report *r, int y,
                       int h, int w)
{
	int chart_h = h * 2 / 5 > CHART_MIN_H ? h * 2 / 5 : CHART_MIN_H;
	int table_h = (int)r->nsizes + 3;

	if (!r->nsizes) {
		ui_print(y, 2, w - 3, ui_attr(t, UI_FAIL),
		         "FAILED: no size completed on every rank (the failures say why).");
		return;
	}
	if (LINES >= BOTH_MIN_H && h >= 2 * CHART_MIN_H && vs->mode == SWEEP_AUTO) {
		if (table_h > h - chart_h - 1)
			table_h = h - chart_h - 1;
		draw_table(t, vs, r, y, table_h, w);
		draw_chart(t, vs, r, y + table_h + 1, h - table_h - 1, w);
	} else if (vs->mode == SWEEP_TABLE || h < CHART_MIN_H) {
		draw_table(t, vs, r, y, h, w);
	} else {
		draw_chart(t, vs, r, y, h, w);
	}
}

static void draw_result(struct tui *t, struct view_state *vs, int y, int h, int w)
{
	const struct bench_report *r = session_bench_report(&t->s);
	int used = draw_summary(t, r, y, h, w);

	draw_sweep(t, vs, r, y + used + 1, h - used - 1, w);
}

/* ---------------------------------------------------------------- report */

/* A node of the report: its ranks and address and why that one, its GPUs
 * and NCCL and the network NCCL used, or why it was left out. */
static void report_node(struct tui *t, const struct bench_node *n, struct ui_text *x, int w)
{
	if (n->error[0]) {
		ui_text_add(x, ui_attr(t, UI_FAIL), 2, "%-12s FAIL %s", n->host,
		            n->error_code[0] ? n->error_code : "left out");
		ui_text_add(x, ui_attr(t, UI_FAIL), 15, "%s", n->error);
	} else if (n->nranks > 0) {
		char ranks[32];

		ranks_words(n, ranks, sizeof(ranks));
		ui_text_add(x, A_NORMAL, 2, "%-12s %s  %s %s", n->host, ranks, n->ifname, n->addr);
		ui_text_add(x, A_DIM, 15, "%s", n->addr_rule);
	} else {
		ui_text_add(x, A_DIM, 2, "%-12s %s", n->host,
		            n->probed ? "not in the ring" : "no answer");
	}
	if (n->probed)
		ui_text_add(x, A_DIM, 15, "gpus %d, nccl %s%s%s%s", n->gpus,
		            n->nccl_available ? "available " : "unavailable", n->nccl_version,
		            n->nccl_reason[0] ? ": " : "", n->nccl_reason);
	if (n->net) { /* NCCL's own word on its network (nccl backend) */
		char line[2048];

		bench_net_line(n->net, NULL, line, sizeof(line));
		ui_text_add(x, n->net->agrees == 0 ? ui_attr(t, UI_WARN) : (int)A_DIM, 15, "%s",
		            line);
	}
}

static void report_text(struct tui *t, const struct bench_report *r, struct ui_text *x, int w)
{
	char sweep[128];

	sweep_words(&t->o->session.bench, sweep, sizeof(sweep));
	ui_text_add(x, A_BOLD, 0, "Allreduce bench: %s, %d rank(s), %s, %.1f s",
	            bench_backend_name(r->backend), r->nranks, task_state_name(t->s.bench_state),
	            (double)r->elapsed_ms / 1000);
	ui_text_add(x, A_NORMAL, 2, "sweep %s", sweep);
	if (r->backend_note[0])
		ui_text_add(x, A_NORMAL, 2, "%s", r->backend_note);
	ui_text_add(x, A_NORMAL, 0, " ");
	ui_text_add(x, A_BOLD, 0, "Nodes");
	for (size_t i = 0; i < r->nnodes; i++)
		report_node(t, &r->nodes[i], x, w);
	if (r->nfailures) {
		ui_text_add(x, A_NORMAL, 0, " ");
		ui_text_add(x, A_BOLD, 0, "Failures (%zu)", r->nfailures);
	}
	for (size_t k = 0; k < r->nfailures; k++) {
		char buf[CD_ERRLEN + 200];

		failure_words(r, &r->failures[k], buf, sizeof(buf));
		ui_text_add(x, ui_attr(t, UI_FAIL), 2, "FAIL %s", buf);
	}
	ui_text_add(x, A_NORMAL, 0, " ");
	ui_text_add(x, A_BOLD, 0, "%12s %11s %10s %8s %8s %7s", "size (B)", "count", "time (us)",
	            "algbw", "busbw", "#wrong");
	for (size_t k = 0; k < r->nsizes; k++) {
		const struct bench_size *z = &r->sizes[k];

		ui_text_add(x, z->wrong > 0 ? ui_attr(t, UI_FAIL) : (int)A_NORMAL, 0,
		            "%12zu %11zu %10.2f %8.3f %8.3f %7lld", z->bytes, z->count, z->time_us,
		            z->algbw, z->busbw, z->wrong);
	}
	if (r->nsizes)
		ui_text_add(x, A_NORMAL, 0,
		            "Out of bounds values: %lld %s; avg bus bandwidth %.3f GB/s",
		            wrong_total(r), wrong_total(r) ? "FAILED" : "OK", r->avg_busbw);
	for (size_t k = 0; k < r->nlinks; k++) {
		const struct bench_link *l = &r->links[k];

		if (k == 0) {
			ui_text_add(x, A_NORMAL, 0, " ");
			ui_text_add(x, A_BOLD, 0, "Links (pairs)");
		}
		if (l->failed)
			ui_text_add(x, ui_attr(t, UI_FAIL), 2, "%s <-> %s  FAIL %s",
			            r->nodes[l->a].host, r->nodes[l->b].host, l->error);
		else
			ui_text_add(x, l->slow ? ui_attr(t, UI_WARN) : (int)A_NORMAL, 2,
			            "%s <-> %s  %.3f GB/s%s", r->nodes[l->a].host,
			            r->nodes[l->b].host, l->busbw, l->slow ? "  SLOW" : "");
	}
	if (r->slow_nodes[0])
		ui_text_add(x, ui_attr(t, UI_WARN), 2, "slow nodes: %s", r->slow_nodes);
}

/* ---------------------------------------------------------------- view */

/* The finished report, or NULL while nothing is there to show. */
static const struct bench_report *result(struct tui *t)
{
	if (t->s.bench_state != TASK_DONE && t->s.bench_state != TASK_FAILED)
		return NULL;
	return session_bench_report(&t->s);
}

static void draw(struct tui *t, struct view_state *vs, int y, int h, int w)
{
	const struct bench_report *r = result(t);
	struct ui_text x = {0};

	if (vs->drill && r) {
		report_text(t, r, &x, w);
		ui_text_draw(&x, y, h, w, &vs->scroll);
		ui_text_free(&x);
		return;
	}
	if (session_burn_shown(&t->s)) {
		view_gpuburn_draw(t, vs, y, h, w);
		return;
	}
	draw_title(t, y, w);
	if (t->s.bench_state == TASK_RUNNING && t->s.bench) {
		draw_running(t, y + 2, h - 2, w);
	} else if (r) {
		draw_result(t, vs, y + 1, h - 1, w);
	} else {
		intro_text(t, &x, w);
		ui_text_draw(&x, y + 2, h - 2, w, &vs->scroll);
		ui_text_free(&x);
	}
}

static size_t rows(struct tui *t, struct view_state *vs)
{
	const struct bench_report *r = result(t);

	if (vs->drill || !r || session_burn_shown(&t->s))
		return 0;
	return r->nsizes;
}

static int key(struct tui *t, struct view_state *vs, int ch)
{
	if (ch == 'b' && !vs->drill) {
		view_gpuburn_start(t, vs);
		return 1;
	}
	if (session_burn_shown(&t->s))
		return view_gpuburn_key(t, vs, ch);
	if (ch == 'c' && !vs->drill && result(t)) {
		vs->mode = vs->mode == SWEEP_AUTO ? SWEEP_TABLE : SWEEP_AUTO;
		return 1;
	}
	return 0;
}

static int enter(struct tui *t, struct view_state *vs)
{
	return result(t) != NULL && !session_burn_shown(&t->s);
}

const struct view view_bench = {
    .name = "Bench",
    .hint = "r run the bench; b gpu-burn; j/k select a size; c table/chart; Enter the report",
    .rerun = RERUN_BENCH,
    .draw = draw,
    .rows = rows,
    .key = key,
    .enter = enter,
};
