/* SPDX-License-Identifier: MIT */
/*
 * gpuburn.c - the `clusterdoc gpu-burn` flow on the head (gpuburn.h):
 * connect, one gpu_burn per node at once, the verdict.
 */
#include "collectives/gpuburn.h"
#include "cd.h"
#include "collectives/gpuburn_agent.h"
#include "fanout.h"
#include "proto.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct gpuburn {
	struct loop *loop;
	const struct gpuburn_opts *o;
	const struct gpuburn_events *ev;
	void *arg;
	size_t n;
	struct sshpool_node **pn;
	json_t *answers; /* per node: {"host", "result"} or {"host", "error"} */
	struct fanout *fan;
	int burning; /* the stress phase was sent */
	json_t *report;
};

void gpuburn_opts_init(struct gpuburn_opts *o)
{
	*o = (struct gpuburn_opts){.seconds = 10,
	                           .slow_pct = 10,
	                           .request_timeout_ms = 30000,
	                           .slack_ms = GPUBURN_SLACK_MS};
}

static size_t index_of(const struct sshpool_node *pn)
{
	return (size_t)(uintptr_t)sshpool_node_data(pn);
}

static void node_out(struct gpuburn *g, size_t i, const char *msg)
{
	json_t *a = json_array_get(g->answers, i);

	if (!json_object_get(a, "error") && !json_object_get(a, "result"))
		json_object_set_new(a, "error", json_string(msg));
	fanout_settle_all(g->fan, i);
}

static void on_ready(struct sshpool *pool, struct sshpool_node *pn, void *arg)
{
	struct gpuburn *g = arg;

	fanout_settle(g->fan, index_of(pn));
}

static void on_failed(struct sshpool *pool, struct sshpool_node *pn, void *arg)
{
	struct gpuburn *g = arg;
	char msg[CD_ERRLEN];

	snprintf(msg, sizeof(msg), "%s: %s", sshpool_node_host(pn),
	         sshpool_node_error_message(pn) ? sshpool_node_error_message(pn)
	                                        : "the node failed");
	node_out(g, index_of(pn), msg);
}

static const struct sshpool_handlers handlers = {.ready = on_ready, .failed = on_failed};

static void on_burn(struct sshpool_node *pn, json_t *result, const char *code, const char *msg,
                    void *arg)
{
	struct gpuburn *g = arg;
	size_t i = index_of(pn);
	char text[CD_ERRLEN];

	if (!result) {
		snprintf(text, sizeof(text), "%s: gpu_burn failed: %s", sshpool_node_host(pn),
		         msg    ? msg
		         : code ? code
		                : "no answer");
		node_out(g, i, text);
		return;
	}
	json_object_set(json_array_get(g->answers, i), "result", result);
	fanout_settle(g->fan, i);
}

static void send_burns(struct gpuburn *g)
{
	char what[64];
	int timeout = (int)(g->o->seconds * 1000) + g->o->slack_ms + g->o->request_timeout_ms;

	g->burning = 1;
	snprintf(what, sizeof(what), "stress %g s on every GPU", g->o->seconds);
	if (g->ev->phase)
		g->ev->phase(g->arg, what);
	for (size_t i = 0; i < g->n; i++) {
		json_t *req;

		if (json_object_get(json_array_get(g->answers, i), "error"))
			continue;
		req = proto_request(0, "gpu_burn");
		json_object_set_new(req, "seconds", json_real(g->o->seconds));
		json_object_set_new(req, "slack_ms", json_integer(g->o->slack_ms));
		if (g->o->python)
			json_object_set_new(req, "python", json_string(g->o->python));
		fanout_expect(g->fan, i, 1);
		sshpool_request(g->pn[i], req, timeout, on_burn, g);
	}
	fanout_begin(g->fan);
}

/* A phase is over: the connections, or the stress. */
static void on_phase_done(void *arg)
{
	struct gpuburn *g = arg;

	if (!g->burning) {
		send_burns(g);
		return;
	}
	g->report = gpuburn_verdict(g->answers, g->o->seconds, g->o->slow_pct);
	if (g->ev->done)
		g->ev->done(g->arg);
}

struct gpuburn *gpuburn_start(struct loop *loop, struct sshpool *pool, const char *const *hosts,
                              size_t nhosts, const struct gpuburn_opts *o,
                              const struct gpuburn_events *ev, void *arg)
{
	struct gpuburn *g = cd_calloc(1, sizeof(*g));

	g->loop = loop;
	g->o = o;
	g->ev = ev;
	g->arg = arg;
	g->n = nhosts;
	g->pn = cd_calloc(nhosts ? nhosts : 1, sizeof(*g->pn));
	g->answers = json_array();
	g->fan = fanout_new(loop, nhosts, on_phase_done, g);
	if (ev->phase)
		ev->phase(arg, "connect");
	for (size_t i = 0; i < nhosts; i++) {
		json_array_append_new(g->answers, json_pack("{ss}", "host", hosts[i]));
		g->pn[i] = sshpool_add(pool, hosts[i]);
		sshpool_node_set_data(g->pn[i], (void *)(uintptr_t)i);
		fanout_expect(g->fan, i, 1);
	}
	sshpool_start(pool, &handlers, g);
	fanout_begin(g->fan);
	return g;
}

const json_t *gpuburn_report(const struct gpuburn *g)
{
	return g->report;
}

void gpuburn_free(struct gpuburn *g)
{
	if (!g)
		return;
	fanout_free(g->fan);
	free(g->pn);
	json_decref(g->answers);
	json_decref(g->report);
	free(g);
}
