/* SPDX-License-Identifier: MIT */
/*
 * run_watch.c - the watch phase of `clusterdoc run` (run.h's phase 5), as
 * jobwatch's and rdzvwatch's callbacks: each line kept in the node's tail
 * and read for the root cause, each node's end and what failed, the job and
 * stall deadlines; the first failure stops the job everywhere.
 */
#include "jobs/run_internal.h"
#include "jobs/torchrun.h"

#include <stdio.h>
#include <string.h>

static int w_running(void *arg, size_t i)
{
	struct run *r = arg;

	return r->phase == RP_WATCH && r->r.nodes[i].started && !r->r.nodes[i].ended &&
	       !r->nodes[i].gone;
}

static void w_line(void *arg, size_t i, int64_t wall, const char *stream, const char *text)
{
	struct run *r = arg;
	struct run_node *n = &r->r.nodes[i];
	struct run_line *l = &n->tail[n->tail_next];
	int local;

	l->wall = wall;
	snprintf(l->stream, sizeof(l->stream), "%s", stream);
	snprintf(l->text, sizeof(l->text), "%s", text);
	n->tail_next = (n->tail_next + 1) % RUN_TAIL_LINES;
	if (n->tail_n < RUN_TAIL_LINES)
		n->tail_n++;
	const char *rest = run_cause_strip(text, &local);
	int is_error = torchrun_is_error_line(rest), code, wl;

	if (run_cause_line(&r->nodes[i].cause, text, is_error)) {
		n->worker_failed = 1;
		n->worker_rank = n->first_rank + run_cause_worker(&r->nodes[i].cause, &code);
		n->worker_exit = code;
	}
	/* torchrun's own word that its worker failed is an error line too */
	if (!n->first_error[0] && (is_error || run_cause_torchrun_failed(rest, &wl, &code))) {
		snprintf(n->first_error, sizeof(n->first_error), "%s", rest);
		n->first_error_ms = wall;
	}
	if (r->ev && r->ev->line)
		r->ev->line(r->arg, i, stream, text);
}

/* The agent's own words when the command could not be run there (job_process.c). */
static int could_not_run(const struct run_node *n)
{
	return n->exit_code == 127 && strncmp(n->first_error, "clusterdoc-agent: cannot", 24) == 0;
}

static void w_ended(void *arg, size_t i, json_t *result)
{
	struct run *r = arg;
	struct run_node *n = &r->r.nodes[i];
	const char *error = json_string_value(json_object_get(result, "error"));

	int was_failed = r->r.failed;

	n->ended = 1;
	n->end_ms = cd_now_ms();
	sshpool_node_set_job(r->job.nodes[i].pn, 0, 0, 0); /* its pids are no longer the job's */
	n->exit_code = (int)json_integer_value(json_object_get(result, "exit_code"));
	n->signal = (int)json_integer_value(json_object_get(result, "signal"));
	n->stopped = r->watch.nodes[i].stop_sent;
	if (n->exit_code == 0 && n->signal == 0 && !error)
		return;
	if (error)
		run_node_error(r, i, "job", error);
	else if (could_not_run(n))
		run_node_error(r, i, "not-found", n->first_error);
	else if (n->stopped)
		run_node_error(r, i, "stopped", "stopped by clusterdoc");
	else if (n->signal)
		run_node_error(r, i, "signal", "killed by a signal");
	else
		run_node_error(r, i, "exit", "exited with an error");
	if (n->stopped)
		return;
	if (could_not_run(n)) {
		if (!r->r.failed)
			r->r.could_not_start = 1;
		run_fail(r, "%s: %s (nothing was left running)", n->host,
		         n->first_error + strlen("clusterdoc-agent: "));
	} else if (n->signal) {
		run_fail(r, "%s: the command was killed by signal %d%s%s", n->host, n->signal,
		         n->first_error[0] ? ": " : "", n->first_error);
	} else {
		run_fail(r, "%s: the command exited with %d%s%s", n->host, n->exit_code,
		         n->first_error[0] ? ": " : "", n->first_error);
	}
	if (!was_failed && r->r.failed)
		r->failure_node = (long)i; /* the headline names this node */
	/* the others would hang in a collective until their timeout: stop them now;
	 * torchrun's, after RUN_TORCHRUN_REPORT_MS in which each may report its own
	 * failed worker (only then does the root cause have its evidence) */
	jobwatch_stop(&r->watch, r->o.launcher != RUN_TORCHRUN);
}

static void w_settle(void *arg)
{
	run_finish(arg);
}

static void w_tick(void *arg, int64_t now)
{
	struct run *r = arg;

	if (r->watch.stopping)
		return;
	rdzvwatch_tick(&r->rdzv, now);
	if (r->o.timeout_ms > 0 && now - r->job_started > r->o.timeout_ms) {
		run_fail(r, "the job did not end within %d s (--job-timeout); stopped it",
		         r->o.timeout_ms / 1000);
		jobwatch_stop(&r->watch, 1);
	} else if (r->o.stall_ms > 0 && now - r->watch.last_output > r->o.stall_ms) {
		run_fail(r,
		         "no output from any node for %d s: the job hangs (--stall-timeout); "
		         "stopped it",
		         r->o.stall_ms / 1000);
		jobwatch_stop(&r->watch, 1);
	}
}

static void w_dropped(void *arg, size_t i, long long count)
{
	struct run *r = arg;

	r->r.nodes[i].lines_dropped += count;
	if (r->ev && r->ev->dropped)
		r->ev->dropped(r->arg, i, count);
}

const struct jobwatch_ops run_watch_ops = {
    .running = w_running,
    .line = w_line,
    .dropped = w_dropped,
    .ended = w_ended,
    .settle = w_settle,
    .tick = w_tick,
};

static void w_unreachable(void *arg, const char *why)
{
	struct run *r = arg;

	run_fail(r, "%s", why);
	jobwatch_stop(&r->watch, 1);
}

const struct rdzvwatch_ops run_rdzv_ops = {.running = w_running, .unreachable = w_unreachable};
