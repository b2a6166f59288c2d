/* SPDX-License-Identifier: MIT */
/*
 * jobphase.c - the probe phase and the failed-request rule that the bench
 * and the MNIST job share (jobphase.h).
 */
#include "collectives/jobphase.h"
#include "cd.h"
#include "proto.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

size_t jobphase_index(const struct sshpool_node *pn)
{
	return (size_t)(uintptr_t)sshpool_node_data(pn);
}

int jobphase_reply_failed(struct jobphase *jp, struct sshpool_node *pn, json_t *result,
                          const char *code, const char *msg, const char *what)
{
	char text[CD_ERRLEN];

	if (result)
		return 0;
	if (sshpool_node_state(pn) == SSHPOOL_NODE_FAILED) {
		fanout_settle_all(jp->fan, jobphase_index(pn));
		return 1;
	}
	snprintf(text, sizeof(text), "%s: %s failed: %s", sshpool_node_host(pn), what,
	         msg ? msg : "no answer");
	jp->ops->broke(jp->arg, jobphase_index(pn), code ? code : "agent", text);
	if (jp->ops->close_on_error)
		sshpool_close_node(pn);
	return 1;
}

static void on_probe(struct sshpool_node *pn, json_t *result, const char *code, const char *msg,
                     void *arg)
{
	struct jobphase *jp = arg;
	size_t i = jobphase_index(pn);

	if (jobphase_reply_failed(jp, pn, result, code, msg, "netprobe"))
		return;
	jp->nodes[i].probe = json_incref(result);
	fanout_settle(jp->fan, i);
}

/* The second request's answer. */
static void on_info(struct sshpool_node *pn, json_t *result, const char *code, const char *msg,
                    void *arg)
{
	struct jobphase *jp = arg;
	size_t i = jobphase_index(pn);

	if (jobphase_reply_failed(jp, pn, result, code, msg, jp->ops->info_cmd))
		return;
	jp->nodes[i].info = json_incref(result);
	fanout_settle(jp->fan, i);
}

static void on_ready(struct sshpool *pool, struct sshpool_node *pn, void *arg)
{
	struct jobphase *jp = arg;
	json_t *req = proto_request(0, "netprobe");

	json_object_set_new(req, "no_firewall", json_true());
	sshpool_request(pn, req, jp->timeout_ms, on_probe, jp);
	if (!jp->with_info)
		return;
	req = proto_request(0, jp->ops->info_cmd);
	if (jp->ops->info_args)
		jp->ops->info_args(jp->arg, req);
	sshpool_request(pn, req, jp->timeout_ms, on_info, jp);
}

static void on_failed(struct sshpool *pool, struct sshpool_node *pn, void *arg)
{
	struct jobphase *jp = arg;
	size_t i = jobphase_index(pn);

	jp->ops->broke(jp->arg, i, sshpool_node_error_code(pn), sshpool_node_error_message(pn));
	if (jp->ops->lost)
		jp->ops->lost(jp->arg, i);
}

static const struct sshpool_handlers pool_handlers = {.ready = on_ready, .failed = on_failed};

void jobphase_init(struct jobphase *jp, struct sshpool *pool, const char *const *hosts, size_t n,
                   struct fanout *fan, int timeout_ms, int with_info,
                   const struct jobphase_ops *ops, void *arg)
{
	jp->nodes = cd_calloc(n ? n : 1, sizeof(*jp->nodes));
	jp->n = n;
	jp->fan = fan;
	jp->timeout_ms = timeout_ms;
	jp->with_info = with_info;
	jp->ops = ops;
	jp->arg = arg;
	for (size_t i = 0; i < n; i++) {
		jp->nodes[i].pn = sshpool_add(pool, hosts[i]);
		sshpool_node_set_data(jp->nodes[i].pn, (void *)(uintptr_t)i);
		fanout_expect(fan, i, with_info ? 2 : 1);
	}
}

void jobphase_start(struct jobphase *jp, struct sshpool *pool)
{
	sshpool_start(pool, &pool_handlers, jp);
}

void jobphase_fini(struct jobphase *jp)
{
	for (size_t i = 0; i < jp->n; i++) {
		json_decref(jp->nodes[i].probe);
		json_decref(jp->nodes[i].info);
	}
	free(jp->nodes);
	jp->nodes = NULL;
	jp->n = 0;
}
