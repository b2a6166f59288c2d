/* SPDX-License-Identifier: MIT */
/*
 * view_job.c - the Job view: what `r` runs (a short data-parallel MNIST
 * job across the nodes), its live progress (the phase, the dataset's
 * download, the epochs and the loss by epoch as a chart), each node's
 * state, and the nodes' output as it comes, every line with its host and
 * stream; when the job ends, the test accuracy, each node's exit and first
 * error, and why it failed.
 *
 * The log follows its tail until j/k (PgUp/PgDn, g) scroll it back; G
 * follows again. `n` shows one node's log at a time, then the next, then
 * all of them again. Enter opens the whole report as one text that scrolls.
 * R runs a command of the user's instead (view_run.c draws that job); the
 * log is both jobs' (view_joblog.c).
 */
#include "view_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chart.h"

#define BLOCK_H       6  /* the summary rows under the title, the loss chart beside them */
#define LEFT_W        50 /* the summary's columns when the chart is beside it */
#define CHART_MIN_W   24 /* a narrower chart is left out */
#define NODE_ROWS_DIV 5  /* the nodes take at most 1/5 of the height */
#define HOST_W        12

static const char *const phase_names[] = {"data", "push", "train", "done"};

/* Where the parts of the view go, for drawing and for the keys alike. */
struct layout {
	int block_y;          /* the summary block, BLOCK_H rows */
	int left_w;           /* its text's columns; the chart takes the rest */
	int note_y, note_h;   /* the failure and the mode's note */
	int nodes_y, nodes_h; /* one row per node, the last maybe "+ N more" */
	int log_y, log_h;     /* the log's heading row, then its lines */
};

/* ---------------------------------------------------------------- helpers */

static double elapsed_s(const struct tui_session *s)
{
	int64_t end = s->job_state == TASK_RUNNING ? cd_now_ms() : s->job_ended_ms;

	return end > s->job_started_ms ? (double)(end - s->job_started_ms) / 1000 : 0;
}

static int epochs_total(const struct tui *t)
{
	int e = t->s.o.mnist.epochs;

	return e < 1 ? 1 : e > TRAIN_MAX_EPOCHS ? TRAIN_MAX_EPOCHS : e;
}

/* Whether the node failed: an error from clusterdoc, or its job's exit. */
static int node_failed(const struct mnist_node *n)
{
	return n->error_code[0] || n->error[0] || (n->ended && (n->exit_code || n->signal));
}

/* A node's state, as a word and its colour. */
static void job_node_state(const struct tui_session *s, const struct mnist_node *n, char *buf,
                           size_t len, enum ui_color *c)
{
	if (node_failed(n)) {
		*c = UI_FAIL;
		if (n->signal)
			snprintf(buf, len, "FAIL signal %d", n->signal);
		else if (n->ended && n->exit_code > 0)
			snprintf(buf, len, "FAIL exit %d", n->exit_code);
		else
			snprintf(buf, len, "FAIL %s", n->error_code[0] ? n->error_code : "error");
	} else if (n->ended) {
		*c = UI_OK;
		snprintf(buf, len, "ok exit 0");
	} else if (n->started) {
		*c = s->job_state == TASK_RUNNING ? UI_RUN : UI_WARN;
		snprintf(buf, len, s->job_state == TASK_RUNNING ? "training" : "stopped");
	} else if (s->job_state == TASK_RUNNING) {
		*c = UI_RUN;
		snprintf(buf, len, "%s",
		         strcmp(s->job_phase, "push") == 0    ? "sending data"
		         : strcmp(s->job_phase, "train") == 0 ? "starting"
		                                              : "connecting");
	} else {
		*c = UI_DIM;
		snprintf(buf, len, "not started");
	}
}

/* "rank 2" or "ranks 4-7" */
static void ranks_words(const struct mnist_node *n, char *buf, size_t len)
{
	if (n->nranks == 1)
		snprintf(buf, len, "rank %d", n->first_rank);
	else
		snprintf(buf, len, "ranks %d-%d", n->first_rank, n->first_rank + n->nranks - 1);
}

/* ---------------------------------------------------------------- layout */

static size_t nodes_matching(struct tui *t, const struct mnist_report *r)
{
	size_t n = 0;

	for (size_t i = 0; r && i < r->nnodes; i++)
		n += ui_filter_match(t, r->nodes[i].host);
	return n;
}

static void layout(struct tui *t, int y, int h, int w, struct layout *L)
{
	const struct mnist_report *r = session_job_report(&t->s);
	int max_nodes = h / NODE_ROWS_DIV > 1 ? h / NODE_ROWS_DIV : 1;
	size_t nn = nodes_matching(t, r);

	memset(L, 0, sizeof(*L));
	L->block_y = y + 1;
	L->left_w = w - LEFT_W - 2 >= CHART_MIN_W ? LEFT_W : w - 2;
	L->note_y = L->block_y + BLOCK_H;
	L->note_h = r ? (r->failed && r->failure[0]) + (r->mode_note[0] != 0) : 0;
	L->nodes_y = L->note_y + L->note_h;
	L->nodes_h = nn > (size_t)max_nodes ? max_nodes : (int)nn;
	L->log_y = L->nodes_y + L->nodes_h;
	L->log_h = y + h - L->log_y;
}

/* ---------------------------------------------------------------- intro */

static void intro_text(struct tui *t, struct ui_text *x, int w)
{
	const struct mnist_opts *o = &t->o->session.mnist;
	char *fold = session_hosts_folded(&t->s);

	ui_text_add(x, A_NORMAL, 1,
	            "r runs a short data-parallel (DDP) MNIST training job across the nodes: "
	            "torchrun on every node when torch imports on all of them (gloo, or nccl "
	            "where every node has CUDA), else the C trainer built into the agents, its "
	            "gradients summed over the TCP ring. Every rank must end with the same "
	            "parameters.");
	ui_text_add(x, A_NORMAL, 0, " ");
	view_run_intro(t, x);
	ui_text_add(x, A_NORMAL, 0, " ");
	ui_text_add(x, A_NORMAL, 1, "mode    %-9s (--mode torch, embedded or auto)",
	            mnist_mode_name(o->mode));
	ui_text_add(x, A_NORMAL, 1, "epochs  %-9d (--epochs N)", o->epochs);
	ui_text_add(x, A_NORMAL, 1, "ranks   %d per node, batch %d per rank, lr %g",
	            o->nproc_per_node, o->batch, o->lr);
	if (o->data.data_dir)
		ui_text_add(x, A_NORMAL, 1, "data    from %s (--data-dir)", o->data.data_dir);
	else
		ui_text_add(x, A_NORMAL, 1, "data    downloaded once from %s (or --data-dir)",
		            o->data.url ? o->data.url : MNIST_DEFAULT_URL);
	ui_text_add(x, A_NORMAL, 1, "nodes   %s (%zu)", t->s.nhosts ? fold : "none yet (H)",
	            t->s.nhosts);
	ui_text_add(x, A_NORMAL, 0, " ");
	ui_text_add(x, A_NORMAL, 1,
	            "While it runs: the phase (data, push, train), the epochs and their loss, "
	            "and every node's output; n shows one node's log at a time, j/k scroll it "
	            "back, G follows it again.");
	if (t->o->read_only) {
		ui_text_add(x, A_NORMAL, 0, " ");
		ui_text_add(x, ui_attr(t, UI_WARN), 1,
		            "disabled: --read-only runs nothing on the nodes but the check.");
	}
	if (t->s.job_state == TASK_FAILED && t->s.job_error[0]) { /* no job of either kind */
		ui_text_add(x, A_NORMAL, 0, " ");
		ui_text_add(x, ui_attr(t, UI_FAIL), 1, "FAILED to start the %s: %s",
		            SESSION_JOB_KIND(&t->s)->name, t->s.job_error);
	}
	free(fold);
}

/* ---------------------------------------------------------------- summary */

static void draw_title(struct tui *t, int y, int w)
{
	const struct tui_session *s = &t->s;
	const char *word;
	enum ui_color c = ui_task_color(s->job_state, &word);
	int x;

	x = 1 + ui_print(y, 1, w - 1, ui_attr(t, UI_TITLE), "MNIST job  ");
	if (s->job_state == TASK_IDLE || !s->job)
		ui_print(y, x, w - x, ui_attr(t, c), "%s", word);
	else
		ui_print(y, x, w - x, ui_attr(t, c), "%s  %.1f s", word, elapsed_s(s));
}

static int phase_index(const struct tui_session *s)
{
	if (s->job_state != TASK_RUNNING)
		return (int)CD_ARRAY_LEN(phase_names) - 1;
	for (size_t k = 0; k < CD_ARRAY_LEN(phase_names); k++)
		if (strcmp(s->job_phase, phase_names[k]) == 0)
			return (int)k;
	return 0;
}

/* "data > push > [train] > done", the current one in the running colour. */
static void draw_phases(struct tui *t, int y, int x, int w)
{
	int cur = phase_index(&t->s), x0 = x;

	for (int k = 0; k < (int)CD_ARRAY_LEN(phase_names) && x < x0 + w; k++) {
		int a = k == cur
		            ? ui_attr(t, t->s.job_state == TASK_RUNNING ? UI_RUN : UI_OK) | A_BOLD
		        : k < cur ? (int)A_NORMAL
		                  : (int)A_DIM;

		if (k)
			x += ui_print(y, x, x0 + w - x, A_DIM, " > ");
		x += ui_print(y, x, x0 + w - x, a, k == cur ? "[%s]" : "%s", phase_names[k]);
	}
}

static void draw_data_line(struct tui *t, const struct mnist_report *r, int y, int w)
{
	const struct tui_session *s = &t->s;
	char got[32], total[32], meter[32];

	ui_print(y, 2, 8, A_BOLD, "data");
	chart_bytes(got, sizeof(got), s->data_got);
	chart_bytes(total, sizeof(total), s->data_total);
	if (s->job_state == TASK_RUNNING && strcmp(s->job_phase, "data") == 0) {
		if (s->data_total > 0) {
			chart_meter(meter, sizeof(meter), 14,
			            (double)s->data_got / (double)s->data_total);
			ui_print(y, 10, w - 10, ui_attr(t, UI_RUN), "%s %s of %s", meter, got,
			         total);
		} else if (s->data_got > 0) {
			ui_print(y, 10, w - 10, ui_attr(t, UI_RUN), "downloading, %s so far", got);
		} else {
			ui_print(y, 10, w - 10, ui_attr(t, UI_RUN),
			         "reading and checking the files");
		}
	} else if (r->data_ms > 0) {
		ui_print(y, 10, w - 10, A_NORMAL, "ready in %.1f s%s", (double)r->data_ms / 1000,
		         t->o->session.mnist.data.data_dir ? " (--data-dir)" : "");
	} else {
		ui_print(y, 10, w - 10, A_DIM, "not ready");
	}
}

static void draw_epochs_line(struct tui *t, const struct mnist_report *r, int y, int w)
{
	char meter[32];
	int total = epochs_total(t);

	ui_print(y, 2, 8, A_BOLD, "epochs");
	chart_meter(meter, sizeof(meter), 14, (double)r->epochs_done / total);
	ui_print(y, 10, w - 10, t->s.job_state == TASK_RUNNING ? ui_attr(t, UI_RUN) : (int)A_NORMAL,
	         "%s %d of %d", meter, r->epochs_done, total);
}

/* "loss    2.301 1.205 0.532": the last epochs that fit. */
static void draw_loss_line(struct tui *t, const struct mnist_report *r, int y, int w)
{
	char buf[256] = "";
	size_t off = 0;
	int first = r->epochs_done, room = (w - 13) / 7;

	ui_print(y, 2, 8, A_BOLD, "loss");
	if (r->epochs_done == 0) {
		ui_print(y, 10, w - 10, A_DIM, "no epoch yet");
		return;
	}
	while (first > 0 && r->epochs_done - first < room)
		first--;
	if (r->epochs_done - first > room)
		first++;
	for (int e = first; e < r->epochs_done && off + 16 < sizeof(buf); e++)
		off +=
		    (size_t)snprintf(buf + off, sizeof(buf) - off,
		                     r->loss[e] >= 0.001 || r->loss[e] == 0 ? "%s%.4f" : "%s%.0e",
		                     e > first ? " " : "", r->loss[e]);
	ui_print(y, 10, w - 10, A_NORMAL, "%s%s", first > 0 ? ".. " : "", buf);
}

static void draw_mode_line(struct tui *t, const struct mnist_report *r, int y, int w)
{
	const struct mnist_opts *o = &t->o->session.mnist;

	ui_print(y, 2, 8, A_BOLD, "mode");
	if (r->backend[0])
		ui_print(y, 10, w - 10, A_NORMAL, "%s, %s, %d rank%s", mnist_mode_name(r->mode),
		         r->backend, r->nranks, r->nranks == 1 ? "" : "s");
	else
		ui_print(y, 10, w - 10, A_DIM, "%s (%s)", mnist_mode_name(o->mode),
		         t->s.job_state == TASK_RUNNING ? "planned after the probe"
		                                        : "the run ended before its plan");
}

static void draw_result_line(struct tui *t, const struct mnist_report *r, int y, int w)
{
	size_t started = 0, ended = 0, failed = 0;

	for (size_t i = 0; i < r->nnodes; i++) {
		started += r->nodes[i].started != 0;
		ended += r->nodes[i].ended != 0;
		failed += node_failed(&r->nodes[i]) != 0;
	}
	ui_print(y, 2, 8, A_BOLD, "result");
	if (t->s.job_state == TASK_RUNNING)
		ui_print(y, 10, w - 10, ui_attr(t, UI_RUN),
		         "running: %zu started, %zu ended, %zu failed", started, ended, failed);
	else if (r->failed)
		ui_print(y, 10, w - 10, ui_attr(t, UI_FAIL), "FAILED (%zu node(s) failed)", failed);
	else if (r->have_accuracy)
		ui_print(y, 10, w - 10, ui_attr(t, UI_OK), "ok: test accuracy %.2f%% (%lld/%lld)",
		         r->test_accuracy * 100, r->test_correct, r->test_total);
	else
		ui_print(y, 10, w - 10, A_DIM, "no test accuracy");
}

/* The loss by epoch, every epoch of the run a group (the ones to come
 * empty), in [x, x + w) of rows [y, y + h). */
static void draw_loss_chart(struct tui *t, const struct mnist_report *r, int x, int y, int w, int h)
{
	int total = epochs_total(t);
	double v[TRAIN_MAX_EPOCHS];
	char labels[TRAIN_MAX_EPOCHS][8];
	const char *lp[TRAIN_MAX_EPOCHS];
	struct chart c;

	for (int e = 0; e < total; e++) {
		v[e] = e < r->epochs_done ? r->loss[e] : NAN;
		snprintf(labels[e], sizeof(labels[e]), "%d", e + 1);
		lp[e] = labels[e];
	}
	if (chart_bars(&c, v, (size_t)total, lp, w, h, 0) < 0)
		return;
	for (int k = 0; k < c.height; k++)
		ui_print(y + k, x, w, A_NORMAL, "%s", chart_row(&c, k));
	chart_fini(&c);
}

static void draw_block(struct tui *t, const struct mnist_report *r, const struct layout *L, int w)
{
	int y = L->block_y, lw = L->left_w;

	ui_print(y, 2, 8, A_BOLD, "phase");
	draw_phases(t, y, 10, lw - 10);
	draw_data_line(t, r, y + 1, lw);
	draw_epochs_line(t, r, y + 2, lw);
	draw_loss_line(t, r, y + 3, lw);
	draw_mode_line(t, r, y + 4, lw);
	draw_result_line(t, r, y + 5, lw);
	if (lw < w - 2) {
		ui_print(y - 1, lw + 2, w - lw - 3, ui_attr(t, UI_TITLE), "loss by epoch");
		draw_loss_chart(t, r, lw + 2, y, w - lw - 3, BLOCK_H);
	}
}

static void draw_notes(struct tui *t, const struct mnist_report *r, const struct layout *L, int w)
{
	int y = L->note_y;

	if (r->failed && r->failure[0])
		ui_print(y++, 2, w - 3, ui_attr(t, UI_FAIL), "FAILED: %s", r->failure);
	if (r->mode_note[0])
		ui_print(y, 2, w - 3, A_DIM, "%s", r->mode_note);
}

/* One row per node (the failed first when not all fit, the last row then
 * saying how many more the report has); '>' marks the node whose log shows
 * alone. */
static void draw_nodes(struct tui *t, const struct view_state *vs, const struct mnist_report *r,
                       const struct layout *L, int w)
{
	size_t total = nodes_matching(t, r), shown = 0, room;
	int failed_first = total > (size_t)L->nodes_h;

	if (L->nodes_h < 1)
		return;
	room = failed_first ? (size_t)L->nodes_h - 1 : total;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < r->nnodes && shown < room; i++) {
			const struct mnist_node *n = &r->nodes[i];
			int row = L->nodes_y + (int)shown, x = 2;
			char word[64], ranks[32];
			enum ui_color c;

			if (!ui_filter_match(t, n->host))
				continue;
			if (failed_first ? node_failed(n) != (pass == 0) : pass == 1)
				continue;
			job_node_state(&t->s, n, word, sizeof(word), &c);
			if (vs->mode == (int)i + 1)
				ui_print(row, 1, 1, A_BOLD, ">");
			x += ui_print(row, x, HOST_W + 1, A_NORMAL, "%-*s ", HOST_W, n->host);
			x += ui_print(row, x, 14, ui_attr(t, c), "%-13s ", word);
			if (n->nranks) {
				ranks_words(n, ranks, sizeof(ranks));
				x += ui_print(row, x, 13, A_NORMAL, "%-12s ", ranks);
			}
			if (node_failed(n))
				ui_print(row, x, w - x - 1, ui_attr(t, UI_FAIL), "%s",
				         n->first_error[0] ? n->first_error : n->error);
			else if (n->addr[0])
				ui_print(row, x, w - x - 1, A_DIM, "%s %s", n->ifname, n->addr);
			shown++;
		}
	}
	if (shown < total)
		ui_print(L->nodes_y + (int)shown, 2, w - 3, A_DIM,
		         "+ %zu more node(s): Enter shows the whole report", total - shown);
}

/* ---------------------------------------------------------------- report */

static void report_nodes(struct tui *t, const struct mnist_report *r, struct ui_text *x)
{
	ui_text_add(x, A_BOLD, 0, "Nodes");
	for (size_t i = 0; i < r->nnodes; i++) {
		const struct mnist_node *n = &r->nodes[i];
		char word[64], pushed[32], ranks[32];
		enum ui_color c;

		job_node_state(&t->s, n, word, sizeof(word), &c);
		ui_text_add(x, c == UI_FAIL ? ui_attr(t, UI_FAIL) : (int)A_NORMAL, 2, "%-12s %s",
		            n->host, word);
		ranks_words(n, ranks, sizeof(ranks));
		if (n->nranks)
			ui_text_add(x, A_NORMAL, 15, "%s, %s %s%s%s", ranks, n->ifname, n->addr,
			            n->torch_version[0] ? ", torch " : "", n->torch_version);
		chart_bytes(pushed, sizeof(pushed), n->pushed_bytes);
		if (n->pushed_files)
			ui_text_add(x, A_NORMAL, 15, "sent %d file(s), %s", n->pushed_files,
			            pushed);
		if (n->error[0])
			ui_text_add(x, ui_attr(t, UI_FAIL), 15, "%s%s%s", n->error_code,
			            n->error_code[0] ? ": " : "", n->error);
		if (n->first_error[0])
			ui_text_add(x, ui_attr(t, UI_FAIL), 15, "first error: %s", n->first_error);
		if (n->param_sha256[0])
			ui_text_add(x, A_DIM, 15, "parameters %.16s...", n->param_sha256);
	}
}

static void report_text(struct tui *t, const struct mnist_report *r, struct ui_text *x)
{
	ui_text_add(x, A_BOLD, 0, "MNIST job: %s, %.1f s", task_state_name(t->s.job_state),
	            elapsed_s(&t->s));
	ui_text_add(x, A_NORMAL, 2, "mode %s, %s, %d rank(s), %d of %d epoch(s)",
	            mnist_mode_name(r->mode), r->backend[0] ? r->backend : "-", r->nranks,
	            r->epochs_done, epochs_total(t));
	if (r->mode_note[0])
		ui_text_add(x, A_NORMAL, 2, "%s", r->mode_note);
	if (r->have_accuracy)
		ui_text_add(x, ui_attr(t, UI_OK), 2, "ok: test accuracy %.2f%% (%lld of %lld)",
		            r->test_accuracy * 100, r->test_correct, r->test_total);
	if (r->mode == MNIST_EMBEDDED && r->param_sha256[0])
		ui_text_add(x, A_NORMAL, 2, "parameters %s on every rank: %.16s...",
		            r->hashes_identical ? "identical" : "DIFFERENT", r->param_sha256);
	ui_text_add(x, A_NORMAL, 2, "data %.1f s, push %.1f s, train %.1f s",
	            (double)r->data_ms / 1000, (double)r->push_ms / 1000,
	            (double)r->train_ms / 1000);
	if (r->failed)
		ui_text_add(x, ui_attr(t, UI_FAIL), 2, "FAILED: %s", r->failure);
	ui_text_add(x, A_NORMAL, 0, " ");
	ui_text_add(x, A_BOLD, 0, "%-7s %10s %10s", "epoch", "loss", "seconds");
	for (int e = 0; e < r->epochs_done; e++)
		ui_text_add(x, A_NORMAL, 0, "%-7d %10.6g %10.1f", e + 1, r->loss[e],
		            r->epoch_seconds[e]);
	ui_text_add(x, A_NORMAL, 0, " ");
	report_nodes(t, r, x);
}

/* ---------------------------------------------------------------- view */

/* The MNIST job's view of a report: its block, notes, nodes and log. */
static void mnist_draw(struct tui *t, struct view_state *vs, int y, int h, int w)
{
	const struct mnist_report *r = session_job_report(&t->s);
	struct layout L;

	draw_title(t, y, w);
	layout(t, y, h, w, &L);
	draw_block(t, r, &L, w);
	draw_notes(t, r, &L, w);
	draw_nodes(t, vs, r, &L, w);
	view_job_draw_log(t, vs, L.log_y, L.log_h, w);
}

static int mnist_has_report(const struct tui *t)
{
	return session_job_report(&t->s) != NULL;
}

static void mnist_report_text(struct tui *t, struct ui_text *x)
{
	report_text(t, session_job_report(&t->s), x);
}

static int mnist_log_rows(struct tui *t)
{
	struct layout L;

	layout(t, 1, LINES - 2, COLS, &L);
	return L.log_h - 1;
}

static int run_has_report(const struct tui *t)
{
	return session_run_report(&t->s) != NULL;
}

static int run_log_rows(struct tui *t)
{
	return view_run_log_rows(t, LINES - 2) - 1;
}

/* What differs between the job kinds in this view: one row per enum
 * job_kind (session.h). Before a job of the kind has a report, the view
 * shows the intro, the same for both. */
static const struct job_view_ops {
	int (*has_report)(const struct tui *t);
	void (*draw)(struct tui *t, struct view_state *vs, int y, int h, int w);
	void (*report)(struct tui *t, struct ui_text *x); /* Enter's full report */
	int (*log_rows)(struct tui *t);                   /* the rows its log shows */
} job_views[] = {
    [JOB_MNIST] = {mnist_has_report, mnist_draw, mnist_report_text, mnist_log_rows},
    [JOB_RUN] = {run_has_report, view_run_draw, view_run_report, run_log_rows},
};

static void draw(struct tui *t, struct view_state *vs, int y, int h, int w)
{
	const struct job_view_ops *k = &job_views[t->s.job_kind];
	struct ui_text x = {0};

	if (k->has_report(t) && vs->drill) {
		k->report(t, &x);
		ui_text_draw(&x, y, h, w, &vs->scroll);
	} else if (k->has_report(t)) {
		k->draw(t, vs, y, h, w);
	} else {
		draw_title(t, y, w);
		intro_text(t, &x, w);
		ui_text_draw(&x, y + 2, h - 2, w, &vs->scroll);
	}
	ui_text_free(&x);
}

static size_t rows(struct tui *t, struct view_state *vs)
{
	return 0; /* the log scrolls by its own keys, the report as a text */
}

static int key(struct tui *t, struct view_state *vs, int ch)
{
	if (ch == 'R' && !vs->drill) {
		view_run_prompt(t);
		return 1;
	}
	if (ch == 'S') {
		view_run_ask_stop(t);
		return 1;
	}
	if (vs->drill || !job_views[t->s.job_kind].has_report(t))
		return 0;
	if (ch == 'n') {
		vs->mode = t->s.nhosts ? (vs->mode + 1) % ((int)t->s.nhosts + 1) : 0;
		vs->sel = 0;
		return 1;
	}
	return view_job_log_key(t, vs, ch, job_views[t->s.job_kind].log_rows(t));
}

static int enter(struct tui *t, struct view_state *vs)
{
	return job_views[t->s.job_kind].has_report(t);
}

const struct view view_job = {
    .name = "Job",
    /* its first 62 columns are what the help shows at 80 (tests/integration/tui/help.txt) */
    .hint = "r run the job; n one node's log / all; j/k scroll the log, G follow; Enter report; "
            "R run a command (\"none: CMD\" without torchrun), S stop it; "
            "h (from any view) Hang: inspect the running job live, Esc closes it",
    .rerun = RERUN_JOB,
    .draw = draw,
    .rows = rows,
    .key = key,
    .enter = enter,
};
