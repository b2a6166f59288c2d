/* SPDX-License-Identifier: MIT */
/*
 * mnist_watch.c - the last phase of `clusterdoc mnist` on the head, on the
 * shared watch (jobwatch.h): pass every node's lines on, read the progress
 * events, and end the run when every job has ended (see mnist.h for the
 * rules).
 */
#include "jobs/mnist_internal.h"
#include "proto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- watch */

static void read_event(struct mnist *m, json_t *ev)
{
	const char *what = json_string_value(json_object_get(ev, "event"));
	long long epoch = json_integer_value(json_object_get(ev, "epoch"));

	if (strcmp(what, "epoch") == 0 && epoch >= 1 && epoch <= TRAIN_MAX_EPOCHS) {
		m->r.loss[epoch - 1] = json_number_value(json_object_get(ev, "loss"));
		m->r.epoch_seconds[epoch - 1] = json_number_value(json_object_get(ev, "seconds"));
		if (epoch > m->r.epochs_done)
			m->r.epochs_done = (int)epoch;
	} else if (strcmp(what, "test") == 0) {
		m->r.have_accuracy = 1;
		m->r.test_accuracy = json_number_value(json_object_get(ev, "accuracy"));
		m->r.test_correct = json_integer_value(json_object_get(ev, "correct"));
		m->r.test_total = json_integer_value(json_object_get(ev, "total"));
	}
}

static void on_line(void *arg, size_t i, int64_t wall, const char *stream, const char *text)
{
	struct mnist *m = arg;
	struct mnist_node *n = &m->r.nodes[i];
	json_t *ev;
	int local;
	const char *rest = run_cause_strip(text, &local);

	if (mnist_parse_event(rest, &ev) == 1) {
		read_event(m, ev);
		json_decref(ev);
	} else {
		int is_error = mnist_is_error_line(rest);

		run_cause_line(&m->nodes[i].cause, text, is_error);
		if (!n->first_error[0] && is_error) {
			snprintf(n->first_error, sizeof(n->first_error), "%s", rest);
			n->first_error_ms = wall;
		}
	}
	if (m->ev && m->ev->line)
		m->ev->line(m->arg, i, stream, text);
}

/* Embedded: every rank's parameter hash, from the nodes' results. */
static void read_result(struct mnist *m, size_t i, json_t *result)
{
	json_t *ranks = json_object_get(result, "ranks"), *r;
	size_t k;

	json_array_foreach(ranks, k, r)
	{
		const char *h = json_string_value(json_object_get(r, "param_sha256"));

		if (!h)
			continue;
		if (k == 0)
			snprintf(m->r.nodes[i].param_sha256, sizeof(m->r.nodes[i].param_sha256),
			         "%s", h);
		if (!m->r.param_sha256[0])
			snprintf(m->r.param_sha256, sizeof(m->r.param_sha256), "%s", h);
		else if (strcmp(m->r.param_sha256, h) != 0)
			m->r.hashes_identical = 0;
	}
}

static void on_ended(void *arg, size_t i, json_t *result)
{
	struct mnist *m = arg;
	struct mnist_node *n = &m->r.nodes[i];
	const char *error = json_string_value(json_object_get(result, "error"));
	int was_failed = m->r.failed;

	n->ended = 1;
	n->exit_code = (int)json_integer_value(json_object_get(result, "exit_code"));
	n->signal = (int)json_integer_value(json_object_get(result, "signal"));
	if (json_is_object(json_object_get(result, "result")))
		read_result(m, i, json_object_get(result, "result"));
	if (n->exit_code == 0 && n->signal == 0 && !error)
		return;
	if (error)
		mnist_node_error(m, i, "job", error);
	else if (n->signal)
		mnist_node_error(m, i, "job", m->watch.stopping ? "stopped" : "killed by a signal");
	else
		mnist_node_error(m, i, "job", "exited with an error");
	if (!m->watch.stopping) {
		mnist_fail_run(m, "%s: the job %s%s%s", n->host,
		               n->signal ? "was killed by a signal" : "failed",
		               n->first_error[0] ? ": " : "", n->first_error);
		if (!was_failed && m->r.failed)
			m->failure_node = (long)i;
		mnist_begin_stop(m, 0);
	}
}

static int on_running(void *arg, size_t i)
{
	struct mnist *m = arg;

	return m->phase == PH_WATCH && !m->r.nodes[i].ended && !m->nodes[i].gone;
}

static void on_settle(void *arg)
{
	mnist_finish(arg);
}

/* The job's deadlines: the whole run, and output from any node. */
static void on_tick(void *arg, int64_t now)
{
	struct mnist *m = arg;

	if (m->watch.stopping)
		return;
	rdzvwatch_tick(&m->rdzv, now);
	if (now - m->train_started > m->o.timeout_ms) {
		mnist_fail_run(m, "the job did not end within %d s (--job-timeout); stopped it",
		               m->o.timeout_ms / 1000);
		mnist_begin_stop(m, 1);
	} else if (now - m->watch.last_output > m->o.stall_ms) {
		mnist_fail_run(m,
		               "no output from any node for %d s: the job hangs (--stall-timeout); "
		               "stopped it",
		               m->o.stall_ms / 1000);
		mnist_begin_stop(m, 1);
	}
}

static const struct jobwatch_ops watch_ops = {
    .running = on_running,
    .line = on_line,
    .ended = on_ended,
    .settle = on_settle,
    .tick = on_tick,
};

/* Stop the nodes still running: now, or after STOP_GRACE_MS in which they
 * may end on their own (a rank's peers usually fail right after it, and
 * their own error is the better evidence). */
void mnist_begin_stop(struct mnist *m, int now)
{
	jobwatch_stop(&m->watch, now);
}

static void on_unreachable(void *arg, const char *why)
{
	struct mnist *m = arg;

	mnist_fail_run(m, "%s", why);
	mnist_begin_stop(m, 1);
}

static const struct rdzvwatch_ops rdzv_ops = {.running = on_running, .unreachable = on_unreachable};

void mnist_watch_start(struct mnist *m)
{
	/* torch's rendezvous is at node 0's address; the embedded ring has none */
	if (m->r.mode == MNIST_TORCH && m->r.nnodes)
		rdzvwatch_start(&m->rdzv, m->r.nodes[0].addr, m->o.master_port, NULL, 1,
		                cd_now_ms());
	jobwatch_start(&m->watch);
}

/* The headline is the first node whose job ended with an error; name the
 * root cause instead (run_cause.h: not a node that only lost a peer). */
void mnist_watch_end(struct mnist *m)
{
	struct run_cause_node *all = cd_calloc(m->n ? m->n : 1, sizeof(*all));
	const struct mnist_node *n;
	long best;
	int code = 0, local;

	rdzvwatch_end(&m->rdzv);
	for (size_t i = 0; i < m->n; i++) {
		all[i] = m->nodes[i].cause;
		all[i].failed_alone =
		    m->r.nodes[i].error[0] && m->r.nodes[i].ended && !m->watch.nodes[i].stop_sent;
		all[i].first_error_ms = m->r.nodes[i].first_error_ms;
	}
	best = run_cause_pick(all, m->n);
	if (best >= 0 && m->failure_node >= 0 && best != m->failure_node) {
		n = &m->r.nodes[best];
		local = run_cause_worker(&all[best], &code);
		if (local >= 0)
			snprintf(m->r.failure, sizeof(m->r.failure),
			         "%s: rank %d failed with exit code %d (torchrun's report)",
			         n->host, n->first_rank + local, code);
		else
			snprintf(m->r.failure, sizeof(m->r.failure), "%s: the job failed%s%.300s",
			         n->host, n->first_error[0] ? ": " : "", n->first_error);
	}
	free(all);
}

void mnist_watch_init(struct mnist *m)
{
	jobwatch_init(&m->watch, m->loop, &m->job, &watch_ops, m, m->o.request_timeout_ms,
	              JOB_STOP_WAIT, STOP_GRACE_MS);
	rdzvwatch_init(&m->rdzv, &m->job, &rdzv_ops, m, m->o.rendezvous_timeout_ms,
	               m->o.request_timeout_ms);
	m->r.rendezvous = &m->rdzv;
	m->failure_node = -1;
	for (size_t i = 0; i < m->n; i++)
		run_cause_init(&m->nodes[i].cause);
}
