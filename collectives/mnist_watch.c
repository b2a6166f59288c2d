/*
 * mnist_watch.c - the last phase of `clusterdoc mnist` on the head: poll
 * every node's job, pass its lines on, read the progress events, and end
 * the run when every job has ended (see mnist.h for the rules).
 */
#include "collectives/mnist_internal.h"
#include "proto.h"

#include <stdio.h>
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

static void read_lines(struct mnist *m, size_t i, json_t *lines)
{
	struct mnist_node *n = &m->r.nodes[i];
	size_t k;
	json_t *l;

	json_array_foreach(lines, k, l)
	{
		int64_t wall = json_integer_value(json_array_get(l, 0));
		const char *stream = json_string_value(json_array_get(l, 1));
		const char *text = json_string_value(json_array_get(l, 2));
		json_t *ev;

		if (!stream || !text)
			continue;
		m->last_output = cd_now_ms();
		if (mnist_parse_event(text, &ev) == 1) {
			read_event(m, ev);
			json_decref(ev);
		} else if (!n->first_error[0] && mnist_is_error_line(text)) {
			snprintf(n->first_error, sizeof(n->first_error), "%s", text);
			n->first_error_ms = wall;
		}
		if (m->ev && m->ev->line)
			m->ev->line(m->arg, i, stream, text);
	}
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

static void node_ended(struct mnist *m, size_t i, json_t *result)
{
	struct mnist_node *n = &m->r.nodes[i];
	const char *error = json_string_value(json_object_get(result, "error"));

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
		mnist_node_error(m, i, "job", m->stopping ? "stopped" : "killed by a signal");
	else
		mnist_node_error(m, i, "job", "exited with an error");
	if (!m->stopping) {
		mnist_fail_run(m, "%s: the job %s%s%s", n->host,
		               n->signal ? "was killed by a signal" : "failed",
		               n->first_error[0] ? ": " : "", n->first_error);
		mnist_begin_stop(m, 0);
	}
}

static void on_poll(struct sshpool_node *pn, json_t *result, const char *code, const char *msg,
                    void *arg)
{
	struct mnist *m = arg;
	size_t i = jobphase_index(pn);
	struct mnist_node_state *mn = &m->nodes[i];

	mn->polling = 0;
	if (m->phase != PH_WATCH || m->r.nodes[i].ended)
		return;
	if (mnist_reply_failed(m, pn, result, code, msg, "job_poll")) {
		mnist_finish(m);
		return;
	}
	read_lines(m, i, json_object_get(result, "lines"));
	mn->next_line = json_integer_value(json_object_get(result, "next"));
	if (strcmp(json_string_value(json_object_get(result, "state")) ?: "", "done") == 0) {
		node_ended(m, i, result);
		mnist_finish(m);
	}
}

static void send_stop(struct mnist *m, size_t i);

static void stop_others(struct loop *loop, void *arg)
{
	struct mnist *m = arg;

	m->stop_timer = 0;
	for (size_t i = 0; i < m->n; i++) {
		if (!m->r.nodes[i].ended && !m->nodes[i].gone)
			send_stop(m, i);
	}
}

/* Stop the nodes still running: now, or after STOP_GRACE_MS in which they
 * may end on their own (a rank's peers usually fail right after it, and
 * their own error is the better evidence). */
void mnist_begin_stop(struct mnist *m, int now)
{
	m->stopping = 1;
	if (now) {
		if (m->stop_timer)
			loop_timer_cancel(m->loop, m->stop_timer);
		stop_others(m->loop, m);
	} else if (!m->stop_timer) {
		m->stop_timer = loop_timer_add(m->loop, STOP_GRACE_MS, stop_others, m);
	}
}

static void on_stopped(struct sshpool_node *pn, json_t *result, const char *code, const char *msg,
                       void *arg)
{
	struct mnist *m = arg;
	size_t i = jobphase_index(pn);

	if (m->r.nodes[i].ended)
		return;
	if (mnist_reply_failed(m, pn, result, code, msg, "job_stop")) {
		mnist_finish(m);
		return;
	}
	read_lines(m, i, json_object_get(result, "lines"));
	node_ended(m, i, result);
	mnist_finish(m);
}

static void send_stop(struct mnist *m, size_t i)
{
	json_t *req;

	if (m->nodes[i].stop_sent)
		return;
	m->nodes[i].stop_sent = 1;
	req = proto_request(0, "job_stop");
	json_object_set_new(req, "grace_ms", json_integer(JOB_STOP_WAIT));
	json_object_set_new(req, "since", json_integer(m->nodes[i].next_line));
	sshpool_request(m->job.nodes[i].pn, req, JOB_STOP_WAIT + JOB_STOP_SLACK, on_stopped, m);
}

static void poll_nodes(struct loop *loop, void *arg)
{
	struct mnist *m = arg;
	int64_t now = cd_now_ms();

	m->poll_timer = 0;
	if (m->phase != PH_WATCH)
		return;
	if (!m->stopping && now - m->train_started > m->o.timeout_ms) {
		mnist_fail_run(m, "the job did not end within %d s (--timeout); stopped it",
		               m->o.timeout_ms / 1000);
		mnist_begin_stop(m, 1);
	} else if (!m->stopping && now - m->last_output > m->o.stall_ms) {
		mnist_fail_run(m,
		               "no output from any node for %d s: the job hangs (--stall-timeout); "
		               "stopped it",
		               m->o.stall_ms / 1000);
		mnist_begin_stop(m, 1);
	}
	for (size_t i = 0; i < m->n; i++) {
		struct mnist_node_state *mn = &m->nodes[i];
		json_t *req;

		if (mn->gone || mn->polling || mn->stop_sent || m->r.nodes[i].ended)
			continue;
		req = proto_request(0, "job_poll");
		json_object_set_new(req, "since", json_integer(mn->next_line));
		mn->polling = 1;
		sshpool_request(m->job.nodes[i].pn, req, m->o.request_timeout_ms, on_poll, m);
	}
	if (m->phase == PH_WATCH)
		m->poll_timer = loop_timer_add(m->loop, POLL_EVERY_MS, poll_nodes, m);
}

void mnist_watch_start(struct mnist *m)
{
	m->poll_timer = loop_timer_add(m->loop, 0, poll_nodes, m);
}
