/* SPDX-License-Identifier: MIT */
/*
 * jobwatch.c - poll and stop the jobs on every node (jobwatch.h).
 */
#include "jobs/jobwatch.h"
#include "cd.h"
#include "proto.h"

#include <stdlib.h>
#include <string.h>

void jobwatch_init(struct jobwatch *w, struct loop *loop, struct jobphase *job,
                   const struct jobwatch_ops *ops, void *arg, int request_timeout_ms,
                   int stop_grace_ms, int stop_delay_ms)
{
	memset(w, 0, sizeof(*w));
	w->loop = loop;
	w->job = job;
	w->ops = ops;
	w->arg = arg;
	w->nodes = cd_calloc(job->n ? job->n : 1, sizeof(*w->nodes));
	w->request_timeout_ms = request_timeout_ms;
	w->stop_grace_ms = stop_grace_ms;
	w->stop_delay_ms = stop_delay_ms;
}

/* An answer's lines, after the count of those the agent no longer had. */
static void read_lines(struct jobwatch *w, size_t i, json_t *result)
{
	json_t *lines = json_object_get(result, "lines"), *l;
	json_int_t dropped = json_integer_value(json_object_get(result, "dropped"));
	size_t k;

	if (dropped > 0 && w->ops->dropped)
		w->ops->dropped(w->arg, i, (long long)dropped);

	json_array_foreach(lines, k, l)
	{
		int64_t wall = json_integer_value(json_array_get(l, 0));
		const char *stream = json_string_value(json_array_get(l, 1));
		const char *text = json_string_value(json_array_get(l, 2));

		if (!stream || !text)
			continue;
		w->last_output = cd_now_ms();
		w->ops->line(w->arg, i, wall, stream, text);
	}
}

static void on_poll(struct sshpool_node *pn, json_t *result, const char *code, const char *msg,
                    void *arg)
{
	struct jobwatch *w = arg;
	size_t i = jobphase_index(pn);

	w->nodes[i].polling = 0;
	if (!w->watching || !w->ops->running(w->arg, i))
		return;
	if (jobphase_reply_failed(w->job, pn, result, code, msg, "job_poll")) {
		w->ops->settle(w->arg);
		return;
	}
	read_lines(w, i, result);
	w->nodes[i].next_line = json_integer_value(json_object_get(result, "next"));
	if (strcmp(json_string_value(json_object_get(result, "state")) ?: "", "done") == 0) {
		w->ops->ended(w->arg, i, result);
		w->ops->settle(w->arg);
	}
}

static void on_stopped(struct sshpool_node *pn, json_t *result, const char *code, const char *msg,
                       void *arg)
{
	struct jobwatch *w = arg;
	size_t i = jobphase_index(pn);

	if (!w->watching || !w->ops->running(w->arg, i))
		return;
	if (jobphase_reply_failed(w->job, pn, result, code, msg, "job_stop")) {
		w->ops->settle(w->arg);
		return;
	}
	read_lines(w, i, result);
	w->ops->ended(w->arg, i, result);
	w->ops->settle(w->arg);
}

static void send_stop(struct jobwatch *w, size_t i)
{
	json_t *req;

	if (w->nodes[i].stop_sent)
		return;
	w->nodes[i].stop_sent = 1;
	req = proto_request(0, "job_stop");
	json_object_set_new(req, "grace_ms", json_integer(w->stop_grace_ms));
	json_object_set_new(req, "since", json_integer(w->nodes[i].next_line));
	sshpool_request(w->job->nodes[i].pn, req, w->stop_grace_ms + JOBWATCH_STOP_SLACK,
	                on_stopped, w);
}

static void stop_running(struct loop *loop, void *arg)
{
	struct jobwatch *w = arg;

	w->stop_timer = 0;
	for (size_t i = 0; i < w->job->n; i++) {
		if (w->ops->running(w->arg, i))
			send_stop(w, i);
	}
}

void jobwatch_stop(struct jobwatch *w, int now)
{
	w->stopping = 1;
	if (!w->watching)
		return;
	if (now) {
		if (w->stop_timer)
			loop_timer_cancel(w->loop, w->stop_timer);
		stop_running(w->loop, w);
	} else if (!w->stop_timer) {
		w->stop_timer = loop_timer_add(w->loop, w->stop_delay_ms, stop_running, w);
	}
}

static void poll_nodes(struct loop *loop, void *arg)
{
	struct jobwatch *w = arg;

	w->poll_timer = 0;
	if (!w->watching)
		return;
	if (w->ops->tick)
		w->ops->tick(w->arg, cd_now_ms());
	if (!w->watching) /* the tick ended the job */
		return;
	for (size_t i = 0; i < w->job->n; i++) {
		struct jobwatch_node *wn = &w->nodes[i];
		json_t *req;

		if (wn->polling || wn->stop_sent || !w->ops->running(w->arg, i))
			continue;
		req = proto_request(0, "job_poll");
		json_object_set_new(req, "since", json_integer(wn->next_line));
		wn->polling = 1;
		sshpool_request(w->job->nodes[i].pn, req, w->request_timeout_ms, on_poll, w);
	}
	if (w->watching)
		w->poll_timer = loop_timer_add(w->loop, JOBWATCH_POLL_MS, poll_nodes, w);
}

void jobwatch_start(struct jobwatch *w)
{
	w->watching = 1;
	w->last_output = cd_now_ms();
	w->poll_timer = loop_timer_add(w->loop, 0, poll_nodes, w);
	if (w->stopping) /* asked before the watch began */
		jobwatch_stop(w, 1);
}

void jobwatch_end(struct jobwatch *w)
{
	w->watching = 0;
	if (w->poll_timer)
		loop_timer_cancel(w->loop, w->poll_timer);
	if (w->stop_timer)
		loop_timer_cancel(w->loop, w->stop_timer);
	w->poll_timer = w->stop_timer = 0;
}

void jobwatch_fini(struct jobwatch *w)
{
	if (!w->loop)
		return;
	jobwatch_end(w);
	free(w->nodes);
	w->nodes = NULL;
}
