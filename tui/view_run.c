/* SPDX-License-Identifier: MIT */
/*
 * view_run.c - the Job view of a `clusterdoc run` job (view_run.h): the
 * command as typed, the run id (hang-ready or not), the phase (probe,
 * put, start, watch, orphans) with the run directory on the nodes, each
 * node's state with its ranks (running, its exit code, the signal that
 * ended it, stopped by clusterdoc, lost), and the nodes' lines as they
 * come, each with its host and rank as `clusterdoc run` prints them. When
 * the job fails, the root cause comes first: the node that failed on its
 * own, its exit and its first error line; the nodes stopped because of it
 * follow.
 *
 * R asks for a command line: torchrun's script and arguments, or
 * "none: COMMAND ARGS" for the command alone (--launcher none). S stops the
 * run on every node after a y.
 */
#include "view_run.h"
#include "jobs/runopt.h"
#include "jobs/jobgate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK_H       4 /* command, run id, phase, result */
#define NODE_ROWS_DIV 4 /* the nodes take at most 1/4 of the height */
#define HOST_W        12

static const char *const phase_names[] = {"probe", "put", "start", "watch", "orphans", "done"};

struct layout {
	int block_y;
	int note_y, note_h; /* the root cause, the failure */
	int nodes_y, nodes_h;
	int log_y, log_h;
};

/* ---------------------------------------------------------------- helpers */

static double elapsed_s(const struct tui_session *s)
{
	int64_t end = s->job_state == TASK_RUNNING ? cd_now_ms() : s->job_ended_ms;

	return end > s->job_started_ms ? (double)(end - s->job_started_ms) / 1000 : 0;
}

static int node_failed(const struct run_node *n)
{
	return n->error_code[0] || (n->ended && (n->exit_code || n->signal));
}

/* A node's state, as words and a colour: the words `clusterdoc run`'s
 * summary uses for the same facts. */
static void node_state(const struct tui_session *s, const struct run_node *n, char *buf, size_t len,
                       enum ui_color *c)
{
	if (n->ended && n->stopped) {
		*c = UI_WARN;
		if (n->signal)
			snprintf(buf, len, "stopped (signal %d)", n->signal);
		else
			snprintf(buf, len, "stopped (exit %d)", n->exit_code);
	} else if (n->ended && n->exit_code == -1) {
		*c = UI_FAIL;
		snprintf(buf, len, "FAIL lost");
	} else if (n->ended && n->signal) {
		*c = UI_FAIL;
		snprintf(buf, len, "FAIL signal %d", n->signal);
	} else if (n->ended && n->exit_code) {
		*c = UI_FAIL;
		snprintf(buf, len, "FAIL exit %d", n->exit_code);
	} else if (n->ended) {
		*c = UI_OK;
		snprintf(buf, len, "ok exit 0");
	} else if (n->error_code[0]) {
		*c = UI_FAIL;
		snprintf(buf, len, "FAIL %s", n->error_code);
	} else if (n->started) {
		*c = s->job_state == TASK_RUNNING ? UI_RUN : UI_WARN;
		snprintf(buf, len, s->job_state == TASK_RUNNING ? "running" : "ended unseen");
	} else if (s->job_state == TASK_RUNNING) {
		*c = UI_RUN;
		snprintf(buf, len, "%s",
		         strcmp(s->job_phase, "probe") == 0 ? "connecting"
		         : strcmp(s->job_phase, "put") == 0 ? "putting files"
		                                            : "starting");
	} else {
		*c = UI_DIM;
		snprintf(buf, len, "not started");
	}
}

static void ranks_words(const struct run_node *n, char *buf, size_t len)
{
	if (n->nranks <= 0)
		snprintf(buf, len, "-");
	else if (n->nranks == 1)
		snprintf(buf, len, "rank %d", n->first_rank);
	else
		snprintf(buf, len, "ranks %d-%d", n->first_rank, n->first_rank + n->nranks - 1);
}

static size_t nodes_matching(struct tui *t, const struct run_report *r)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nnodes; i++)
		n += ui_filter_match(t, r->nodes[i].host);
	return n;
}

static int has_root_cause(const struct tui_session *s, const struct run_report *r)
{
	return s->job_state != TASK_RUNNING && r->root_cause >= 0 &&
	       (size_t)r->root_cause < r->nnodes;
}

static void layout(struct tui *t, const struct run_report *r, int y, int h, struct layout *L)
{
	int max_nodes = h / NODE_ROWS_DIV > 1 ? h / NODE_ROWS_DIV : 1;
	size_t nn = nodes_matching(t, r);

	memset(L, 0, sizeof(*L));
	L->block_y = y + 1;
	L->note_y = L->block_y + BLOCK_H;
	L->note_h = has_root_cause(&t->s, r) + (r->failed && r->failure[0]);
	L->nodes_y = L->note_y + L->note_h;
	L->nodes_h = nn > (size_t)max_nodes ? max_nodes : (int)nn;
	L->log_y = L->nodes_y + L->nodes_h;
	L->log_h = y + h - L->log_y;
}

int view_run_log_rows(struct tui *t, int h)
{
	const struct run_report *r = session_run_report(&t->s);
	struct layout L;

	if (!r)
		return h;
	layout(t, r, 1, h, &L);
	return L.log_h;
}

/* ---------------------------------------------------------------- summary */

static int phase_at(const char *name)
{
	for (size_t k = 0; k < CD_ARRAY_LEN(phase_names); k++)
		if (strcmp(name, phase_names[k]) == 0)
			return (int)k;
	return 0;
}

static int phase_index(const struct tui_session *s)
{
	if (s->job_state != TASK_RUNNING)
		return (int)CD_ARRAY_LEN(phase_names) - 1;
	if (strcmp(s->job_phase, "stop") == 0)
		return phase_at("watch");
	return phase_at(s->job_phase);
}

static void draw_phases(struct tui *t, const struct run_report *r, int y, int x, int w)
{
	int cur = phase_index(&t->s), x0 = x, run = t->s.job_state == TASK_RUNNING;

	for (int k = 0; k < (int)CD_ARRAY_LEN(phase_names) && x < x0 + w; k++) {
		int a = k == cur  ? ui_attr(t, run ? UI_RUN : UI_OK) | A_BOLD
		        : k < cur ? (int)A_NORMAL
		                  : (int)A_DIM;

		if (k)
			x += ui_print(y, x, x0 + w - x, A_DIM, " > ");
		x += ui_print(y, x, x0 + w - x, a, k == cur ? "[%s]" : "%s", phase_names[k]);
	}
	if (run && strcmp(t->s.job_phase, "stop") == 0)
		ui_print(y, x, x0 + w - x, ui_attr(t, UI_WARN), "  stopping every node");
	else if (r->planned && r->run_dir[0])
		ui_print(y, x, x0 + w - x, A_DIM, "   in %s", r->run_dir);
}

static void draw_title(struct tui *t, int y, int w)
{
	const struct tui_session *s = &t->s;
	const char *word;
	enum ui_color c = ui_task_color(s->job_state, &word);
	int x;

	x = 1 + ui_print(y, 1, w - 1, ui_attr(t, UI_TITLE), "Run job  ");
	x += ui_print(y, x, w - x, ui_attr(t, c), "%s  %.1f s", word, elapsed_s(s));
	if (s->job_state == TASK_RUNNING)
		ui_print(y, x, w - x, A_DIM, "   S stops it on every node");
	else
		ui_print(y, x, w - x, A_DIM, "   R runs a command");
}

static void draw_result(struct tui *t, const struct run_report *r, int y, int w)
{
	size_t started = 0, ended = 0, failed = 0;

	for (size_t i = 0; i < r->nnodes; i++) {
		started += r->nodes[i].started != 0;
		ended += r->nodes[i].ended != 0;
		failed += node_failed(&r->nodes[i]) && !r->nodes[i].stopped;
	}
	ui_print(y, 2, 9, A_BOLD, "result");
	if (t->s.job_state == TASK_RUNNING)
		ui_print(y, 11, w - 12, ui_attr(t, UI_RUN),
		         "running: %zu of %zu node(s) started, %zu ended, %zu failed", started,
		         r->nnodes, ended, failed);
	else if (r->failed)
		ui_print(y, 11, w - 12, ui_attr(t, UI_FAIL), "FAILED, exit status %d%s%s",
		         r->exit_status, r->interrupted ? " (stopped)" : "",
		         r->could_not_start ? " (could not start)" : "");
	else
		ui_print(y, 11, w - 12, ui_attr(t, UI_OK), "ok: exit 0 on every node, %d rank(s)",
		         r->nranks);
}

static void draw_block(struct tui *t, const struct run_report *r, const struct layout *L, int w)
{
	const struct tui_session *s = &t->s;
	int y = L->block_y;

	ui_print(y, 2, 9, A_BOLD, "command");
	ui_print(y, 11, w - 12, A_NORMAL, "%s", s->run_cmdline ? s->run_cmdline : "");
	ui_print(y + 1, 2, 9, A_BOLD, "run id");
	if (r->planned)
		ui_print(y + 1, 11, w - 12, A_NORMAL,
		         "%s  %s, %zu node(s), %d rank(s), master %s:%d%s", r->run_id,
		         r->launcher == RUN_NONE ? "launcher none" : "torchrun", r->nnodes,
		         r->nranks, r->master_addr, r->master_port,
		         r->dump_signal ? ", hang-ready" : "");
	else
		ui_print(y + 1, 11, w - 12, A_NORMAL, "%s  %s, %zu node(s)", r->run_id,
		         r->launcher == RUN_NONE ? "launcher none" : "torchrun", r->nnodes);
	ui_print(y + 2, 2, 9, A_BOLD, "phase");
	draw_phases(t, r, y + 2, 11, w - 12);
	draw_result(t, r, y + 3, w);
}

/* The root cause first, then what the run says went wrong. */
static void draw_notes(struct tui *t, const struct run_report *r, const struct layout *L, int w)
{
	int y = L->note_y;

	if (has_root_cause(&t->s, r)) {
		const struct run_node *n = &r->nodes[r->root_cause];
		char state[64], ranks[32];
		enum ui_color c;

		node_state(&t->s, n, state, sizeof(state), &c);
		ranks_words(n, ranks, sizeof(ranks));
		ui_print(y++, 2, w - 3, ui_attr(t, UI_FAIL) | A_BOLD, "ROOT CAUSE %s (%s): %s%s%s",
		         n->host, ranks, state, n->first_error[0] ? ": " : "", n->first_error);
	}
	if (r->failed && r->failure[0])
		ui_print(y, 2, w - 3, ui_attr(t, UI_FAIL), "FAILED: %s", r->failure);
}

/* One row per node, the root cause first, then the failed, then the rest;
 * '>' marks the node whose log shows alone. */
static void draw_nodes(struct tui *t, const struct view_state *vs, const struct run_report *r,
                       const struct layout *L, int w)
{
	size_t total = nodes_matching(t, r), shown = 0, room;

	if (L->nodes_h < 1)
		return;
	room = total > (size_t)L->nodes_h ? (size_t)L->nodes_h - 1 : total;
	for (int pass = 0; pass < 3; pass++) {
		for (size_t i = 0; i < r->nnodes && shown < room; i++) {
			const struct run_node *n = &r->nodes[i];
			int row = L->nodes_y + (int)shown, x = 2, root = (long)i == r->root_cause;
			int want = root ? 0 : node_failed(n) && !n->stopped ? 1 : 2;
			char word[64], ranks[32];
			enum ui_color c;

			if (want != pass || !ui_filter_match(t, n->host))
				continue;
			node_state(&t->s, n, word, sizeof(word), &c);
			if (vs->mode == (int)i + 1)
				ui_print(row, 1, 1, A_BOLD, ">");
			x += ui_print(row, x, HOST_W + 1, A_NORMAL, "%-*s ", HOST_W, n->host);
			x += ui_print(row, x, 20, ui_attr(t, c), "%-19s ", word);
			ranks_words(n, ranks, sizeof(ranks));
			x += ui_print(row, x, 13, A_NORMAL, "%-12s ", ranks);
			if (node_failed(n) && (n->first_error[0] || n->error[0]) && !n->stopped)
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

void view_run_draw(struct tui *t, struct view_state *vs, int y, int h, int w)
{
	const struct run_report *r = session_run_report(&t->s);
	struct layout L;

	draw_title(t, y, w);
	if (!r)
		return;
	layout(t, r, y, h, &L);
	draw_block(t, r, &L, w);
	draw_notes(t, r, &L, w);
	draw_nodes(t, vs, r, &L, w);
	view_job_draw_log(t, vs, L.log_y, L.log_h, w);
}

/* ---------------------------------------------------------------- report */

static void add_json_words(struct ui_text *x, int indent, const char *what, json_t *a)
{
	size_t k, off = 0;
	json_t *v;
	char buf[2048] = "";

	if (!json_is_array(a))
		return;
	json_array_foreach(a, k, v)
	{
		int n = snprintf(buf + off, sizeof(buf) - off, "%s%s", k ? " " : "",
		                 json_string_value(v) ? json_string_value(v) : "?");

		if (n < 0 || (size_t)n >= sizeof(buf) - off)
			break;
		off += (size_t)n;
	}
	ui_text_add(x, A_NORMAL, indent, "%s %s", what, buf);
}

static void report_node(struct tui *t, const struct run_report *r, size_t i, struct ui_text *x)
{
	const struct run_node *n = &r->nodes[i];
	char word[64], ranks[32];
	enum ui_color c;

	node_state(&t->s, n, word, sizeof(word), &c);
	ranks_words(n, ranks, sizeof(ranks));
	ui_text_add(x, c == UI_FAIL ? ui_attr(t, UI_FAIL) : (int)A_NORMAL, 2, "%-12s %s, %s%s",
	            n->host, word, ranks, (long)i == r->root_cause ? "  <- ROOT CAUSE" : "");
	if (n->addr[0])
		ui_text_add(x, A_NORMAL, 15, "%s %s%s%s", n->ifname, n->addr,
		            n->torch_version[0] ? ", torch " : "", n->torch_version);
	if (n->error[0])
		ui_text_add(x, ui_attr(t, UI_FAIL), 15, "%s: %s", n->error_code, n->error);
	if (n->first_error[0])
		ui_text_add(x, ui_attr(t, UI_FAIL), 15, "first error: %s", n->first_error);
	add_json_words(x, 15, "argv", n->argv);
	add_json_words(x, 15, "env ", n->env);
	if (n->orphans)
		ui_text_add(x, json_array_size(n->orphans) ? ui_attr(t, UI_FAIL) : (int)A_DIM, 15,
		            "%zu process(es) of the run left on the node",
		            json_array_size(n->orphans));
}

void view_run_report(struct tui *t, struct ui_text *x)
{
	const struct run_report *r = session_run_report(&t->s);

	if (!r)
		return;
	ui_text_add(x, A_BOLD, 0, "Run %s: %s, %.1f s", r->run_id, task_state_name(t->s.job_state),
	            elapsed_s(&t->s));
	ui_text_add(x, A_NORMAL, 2, "command %s", t->s.run_cmdline ? t->s.run_cmdline : "");
	ui_text_add(x, A_NORMAL, 2, "%s, %zu node(s), %d rank(s), master %s:%d",
	            r->launcher == RUN_NONE ? "launcher none" : "torchrun", r->nnodes, r->nranks,
	            r->master_addr[0] ? r->master_addr : "-", r->master_port);
	if (t->s.job_state != TASK_RUNNING)
		ui_text_add(x, r->failed ? ui_attr(t, UI_FAIL) : ui_attr(t, UI_OK), 2,
		            "exit status %d%s%s", r->exit_status, r->failed ? ": " : "",
		            r->failed ? r->failure : "");
	ui_text_add(x, A_NORMAL, 0, " ");
	ui_text_add(x, A_BOLD, 0, "Nodes");
	if (r->root_cause >= 0 && (size_t)r->root_cause < r->nnodes)
		report_node(t, r, (size_t)r->root_cause, x);
	for (size_t i = 0; i < r->nnodes; i++)
		if ((long)i != r->root_cause)
			report_node(t, r, i, x);
}

/* ---------------------------------------------------------------- keys */

/* The line waiting for a y while the check's errors are shown (one TUI per process). */
static char pending_line[4096];

/* The check's error findings its job plan does not avoid, as `clusterdoc
 * run` refuses on them (jobs/jobgate.h): their count, and the first few ids
 * in ids. */
static size_t check_errors(const struct tui *t, unsigned uses, char *ids, size_t len)
{
	struct job_plan *plan = session_plan(&t->s, 0, NULL);
	size_t n = 0, used = 0;

	ids[0] = '\0';
	for (size_t k = 0; plan && k < plan->nfindings; k++) {
		const struct job_plan_finding *f = &plan->findings[k];
		char why[1024];

		if (f->severity != SEV_ERROR || !job_gate_concerns(f->id, uses) ||
		    job_gate_avoided(plan, f, t->s.nhosts == 1, why, sizeof(why)))
			continue;
		if (++n <= 3 && used < len)
			used += (size_t)snprintf(ids + used, len - used, "%s%s", n > 1 ? ", " : "",
			                         f->id);
		else if (n == 4 && used < len)
			used += (size_t)snprintf(ids + used, len - used, ", ...");
	}
	job_plan_free(plan);
	return n;
}

static void start_line(struct tui *t, const char *text);

static void anyway_entered(struct tui *t, const char *text)
{
	if (strcmp(text, "y") != 0 && strcmp(text, "yes") != 0) {
		ui_message(t, 0, "the run is not started");
		return;
	}
	start_line(t, pending_line);
}

static void command_entered(struct tui *t, const char *text)
{
	char ids[256], label[400];
	size_t n = check_errors(t, session_run_line_uses(text), ids, sizeof(ids));

	if (n == 0 || !*text) {
		start_line(t, text);
		return;
	}
	snprintf(pending_line, sizeof(pending_line), "%s", text);
	snprintf(label, sizeof(label),
	         "The check found %zu error(s) that may break the job: %s (Findings view). "
	         "Start anyway? y and Enter starts it: ",
	         n, ids);
	ui_prompt(t, PROMPT_CONFIRM, label, NULL, anyway_entered);
}

static void start_line(struct tui *t, const char *text)
{
	char err[CD_ERRLEN];

	if (session_run_start(&t->s, text, err, sizeof(err)) < 0) {
		ui_message(t, 1, "%s", err);
		if (t->s.job_state != TASK_RUNNING && *text)
			ui_prompt(t, PROMPT_COMMAND, "Run: ", text, command_entered);
		return;
	}
	for (size_t i = 0; i < t->nviews; i++)
		if (t->views[i] == &view_job)
			memset(&t->vs[i], 0, sizeof(t->vs[i]));
	ui_message(t, 0, "run %s started on %zu node(s)", run_report(t->s.run)->run_id,
	           t->s.nhosts);
}

void view_run_prompt(struct tui *t)
{
	if (t->o->read_only) {
		ui_message(t, 1, "--read-only: the run is not started");
		return;
	}
	if (t->s.job_state == TASK_RUNNING) {
		ui_message(t, 1, "the %s is running already", SESSION_JOB_KIND(&t->s)->name);
		return;
	}
	ui_prompt(t, PROMPT_COMMAND, "Run: ", t->s.run_cmdline, command_entered);
}

static void stop_entered(struct tui *t, const char *text)
{
	char err[CD_ERRLEN];

	if (strcmp(text, "y") != 0 && strcmp(text, "yes") != 0) {
		ui_message(t, 0, "the %s goes on", SESSION_JOB_KIND(&t->s)->name);
		return;
	}
	if (session_run_stop(&t->s, err, sizeof(err)) < 0)
		ui_message(t, 1, "%s", err);
	else
		ui_message(t, 0, "stopping the %s on every node", SESSION_JOB_KIND(&t->s)->name);
}

void view_run_ask_stop(struct tui *t)
{
	if (t->s.job_state != TASK_RUNNING) {
		ui_message(t, 1, "no run and no MNIST job is going");
		return;
	}
	char label[96];

	snprintf(label, sizeof(label), "Stop the %s on every node? y and Enter stops it: ",
	         SESSION_JOB_KIND(&t->s)->name);
	ui_prompt(t, PROMPT_CONFIRM, label, NULL, stop_entered);
}

void view_run_intro(struct tui *t, struct ui_text *x)
{
	char names[512];

	runopt_names(names, sizeof(names));
	ui_text_add(x, A_NORMAL, 1,
	            "R runs your own command instead, as `clusterdoc run` does: torchrun's "
	            "script and its arguments (\"/data/train.py --epochs 3\"), or \"none: "
	            "COMMAND ARGS\" for the command alone on every node; {node_rank} {nnodes} "
	            "{master_addr} {master_port} {world_size} {host} {iface} are each node's. "
	            "The job options of clusterdoc run may come first: %s. S stops the run "
	            "(after a y).",
	            names);
}
