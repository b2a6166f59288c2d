/* SPDX-License-Identifier: MIT */
/*
 * hang.c - the `clusterdoc hang` flow on the head (hang.h): connect,
 * sample N times, analyse.
 */
#include "hang/hang.h"
#include "cd.h"
#include "hang/hang_analyze.h"
#include "fanout.h"
#include "proto.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define STACK_WAIT_MS 1000

struct hang {
	struct loop *loop;
	struct sshpool *pool;
	const struct hang_opts *o;
	const struct hang_events *ev;
	void *arg;
	size_t n;
	struct sshpool_node **pn;
	char **error; /* per node: why it is out, or NULL */
	struct fanout *fan;
	int sample; /* the sample being taken, from 0 */
	json_t *samples;
	json_t *cur; /* the current sample's "nodes" */
	uint64_t timer;
	json_t *verdict;
};

void hang_opts_init(struct hang_opts *o)
{
	*o = (struct hang_opts){
	    .samples = 2, .interval_ms = 2000, .stacks = 1, .request_timeout_ms = 30000};
}

static size_t index_of(const struct sshpool_node *pn)
{
	return (size_t)(uintptr_t)sshpool_node_data(pn);
}

static void node_out(struct hang *h, size_t i, const char *msg)
{
	if (!h->error[i])
		h->error[i] = cd_strdup(msg);
	if (h->cur)
		json_object_set_new(json_array_get(h->cur, i), "error", json_string(h->error[i]));
	fanout_settle_all(h->fan, i);
}

static void on_ready(struct sshpool *pool, struct sshpool_node *pn, void *arg)
{
	struct hang *h = arg;

	fanout_settle(h->fan, index_of(pn));
}

static void on_failed(struct sshpool *pool, struct sshpool_node *pn, void *arg)
{
	struct hang *h = arg;
	char msg[CD_ERRLEN];

	snprintf(msg, sizeof(msg), "%s", sshpool_node_error_message(pn));
	node_out(h, index_of(pn), msg);
}

static const struct sshpool_handlers handlers = {.ready = on_ready, .failed = on_failed};

static void on_sample(struct sshpool_node *pn, json_t *result, const char *code, const char *msg,
                      void *arg)
{
	struct hang *h = arg;
	size_t i = index_of(pn);
	char text[CD_ERRLEN];

	if (!result) {
		snprintf(text, sizeof(text), "%s: hang_sample failed: %s", sshpool_node_host(pn),
		         msg    ? msg
		         : code ? code
		                : "no answer");
		node_out(h, i, text);
		return;
	}
	json_object_set(json_array_get(h->cur, i), "result", result);
	fanout_settle(h->fan, i);
}

static void take_sample(struct hang *h)
{
	int last = h->sample == h->o->samples - 1;
	char what[32];

	snprintf(what, sizeof(what), "sample %d", h->sample + 1);
	if (h->ev->phase)
		h->ev->phase(h->arg, what);
	h->cur = json_array();
	json_array_append_new(
	    h->samples, json_pack("{sIsO}", "t_ms", (json_int_t)cd_now_ms(), "nodes", h->cur));
	json_decref(h->cur); /* the sample holds it */
	for (size_t i = 0; i < h->n; i++) {
		json_t *req;

		json_array_append_new(h->cur,
		                      json_pack("{ss}", "host", sshpool_node_host(h->pn[i])));
		if (h->error[i]) {
			json_object_set_new(json_array_get(h->cur, i), "error",
			                    json_string(h->error[i]));
			continue;
		}
		req = proto_request(0, "hang_sample");
		if (h->o->run)
			json_object_set_new(req, "run", json_string(h->o->run));
		json_object_set_new(req, "stacks", json_boolean(last && h->o->stacks));
		/* dumps on demand, as the stacks: the last sample */
		json_object_set_new(req, "flight_recorder", json_boolean(last && h->o->stacks));
		json_object_set_new(req, "stack_wait_ms", json_integer(STACK_WAIT_MS));
		fanout_expect(h->fan, i, 1);
		sshpool_request(h->pn[i], req, h->o->request_timeout_ms + STACK_WAIT_MS, on_sample,
		                h);
	}
	fanout_begin(h->fan);
}

static void next_sample(struct loop *loop, void *arg)
{
	struct hang *h = arg;

	h->timer = 0;
	take_sample(h);
}

/* A phase is over: the connections, or one sample. */
static void on_phase_done(void *arg)
{
	struct hang *h = arg;

	if (h->cur && h->sample + 1 < h->o->samples) {
		int64_t next =
		    json_integer_value(json_object_get(
		        json_array_get(h->samples, json_array_size(h->samples) - 1), "t_ms")) +
		    h->o->interval_ms;
		int64_t wait = next - cd_now_ms();

		h->sample++;
		h->timer = loop_timer_add(h->loop, wait > 0 ? wait : 0, next_sample, h);
		return;
	}
	if (!h->cur) {
		take_sample(h);
		return;
	}
	if (h->ev->phase)
		h->ev->phase(h->arg, "analyse");
	h->verdict = hang_analyze(h->samples);
	if (h->ev->done)
		h->ev->done(h->arg);
}

struct hang *hang_start(struct loop *loop, struct sshpool *pool, const char *const *hosts,
                        size_t nhosts, const struct hang_opts *o, const struct hang_events *ev,
                        void *arg)
{
	struct hang *h = cd_calloc(1, sizeof(*h));

	h->loop = loop;
	h->pool = pool;
	h->o = o;
	h->ev = ev;
	h->arg = arg;
	h->n = nhosts;
	h->pn = cd_calloc(nhosts ? nhosts : 1, sizeof(*h->pn));
	h->error = cd_calloc(nhosts ? nhosts : 1, sizeof(*h->error));
	h->samples = json_array();
	h->fan = fanout_new(loop, nhosts, on_phase_done, h);
	if (ev->phase)
		ev->phase(arg, "connect");
	for (size_t i = 0; i < nhosts; i++) {
		h->pn[i] = sshpool_add(pool, hosts[i]);
		sshpool_node_set_data(h->pn[i], (void *)(uintptr_t)i);
		fanout_expect(h->fan, i, 1);
	}
	sshpool_start(pool, &handlers, h);
	fanout_begin(h->fan);
	return h;
}

const json_t *hang_verdict(const struct hang *h)
{
	return h->verdict;
}

void hang_free(struct hang *h)
{
	if (!h)
		return;
	if (h->timer)
		loop_timer_cancel(h->loop, h->timer);
	fanout_free(h->fan);
	for (size_t i = 0; i < h->n; i++)
		free(h->error[i]);
	free(h->error);
	free(h->pn);
	json_decref(h->samples);
	json_decref(h->verdict);
	free(h);
}
