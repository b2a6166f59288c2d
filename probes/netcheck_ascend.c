/* SPDX-License-Identifier: MIT */
/* netcheck_ascend.c - the check's Ascend steps (docs/ascend.md): on a node
 * whose facts list NPUs, `ascend_probe` (hccn_tool's answers per device)
 * during the probe phase; then, once every node's device addresses are
 * known, `ascend_netdetect` from each device toward the same-numbered device
 * of every other server, all nodes at once, each call with its deadline. A
 * failed or late answer never takes the node out of the check: it is kept
 * as {"error": ...} for the diagnosis to report as an incomplete probe. */
#include "probes/ascend_agent.h"
#include "probes/netcheck_internal.h"
#include "proto.h"
#include "sshpool.h"

#include <stdio.h>
#include <string.h>

/* The agent runs a request's calls at once, a device's netdetect targets one
 * after the other (two calls each). The answer gets the pool's request
 * deadline beyond that: ascend_probe is sent behind netprobe, whose time
 * the agent spends first. */

static void on_answer(struct sshpool_node *pn, json_t *result, const char *code, const char *msg,
                      void *arg, const char *key)
{
	struct netcheck *c = arg;
	size_t i = netcheck_index_of(pn);

	if (result) {
		netmodel_set_ascend(c->m, i, key, result);
	} else {
		json_t *e = json_pack("{s:s}", "error", msg && *msg ? msg : code ? code : "failed");

		netmodel_set_ascend(c->m, i, key, e);
		json_decref(e);
	}
	fanout_settle(c->fan, i);
}

static void on_probe(struct sshpool_node *pn, json_t *result, const char *code, const char *msg,
                     void *arg)
{
	on_answer(pn, result, code, msg, arg, "probe");
}

static void on_netdetect(struct sshpool_node *pn, json_t *result, const char *code, const char *msg,
                         void *arg)
{
	on_answer(pn, result, code, msg, arg, "netdetect");
}

void netcheck_ascend_facts(struct netcheck *c, size_t i, json_t *facts)
{
	json_t *npus = json_object_get(facts, "npus"), *ids, *v, *req;
	size_t k;

	if (json_array_size(npus) == 0)
		return;
	ids = json_array();
	json_array_foreach(npus, k, v)
	{
		json_array_append(ids, json_object_get(v, "id"));
	}
	req = proto_request(0, "ascend_probe");
	json_object_set_new(req, "devices", ids);
	json_object_set_new(req, "timeout_ms", json_integer(ASCEND_CALL_MS));
	fanout_expect(c->fan, i, 1);
	sshpool_request(c->nodes[i].pn, req, ASCEND_CALL_MS + 2 * c->o.request_timeout_ms, on_probe,
	                c);
}

/* Node j's address of device dev, or NULL. */
static const char *device_address(const struct nm_node *n, json_int_t dev)
{
	json_t *devs = json_object_get(json_object_get(n->ascend, "probe"), "devices"), *d;
	size_t k;

	json_array_foreach(devs, k, d)
	{
		if (json_integer_value(json_object_get(d, "id")) == dev)
			return json_string_value(
			    json_object_get(json_object_get(d, "ip"), "address"));
	}
	return NULL;
}

void netcheck_phase_ascend(struct netcheck *c)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct nm_node *n = &c->m->nodes[i];
		json_t *devs = json_object_get(json_object_get(n->ascend, "probe"), "devices"), *d;
		json_t *targets, *req;
		size_t k, per_dev = 0;

		if (!netcheck_node_live(c, i) || !json_array_size(devs))
			continue;
		targets = json_array();
		json_array_foreach(devs, k, d)
		{
			json_int_t dev = json_integer_value(json_object_get(d, "id"));
			size_t mine = 0;

			if (!device_address(n, dev))
				continue;
			for (size_t j = 0; j < c->n; j++) {
				const char *a =
				    j == i ? NULL : device_address(&c->m->nodes[j], dev);

				if (!a || !netcheck_node_live(c, j))
					continue;
				json_array_append_new(
				    targets, json_pack("{s:I, s:s}", "device", dev, "address", a));
				mine++;
			}
			per_dev = mine > per_dev ? mine : per_dev;
		}
		if (!json_array_size(targets)) {
			json_decref(targets);
			continue;
		}
		req = proto_request(0, "ascend_netdetect");
		json_object_set_new(req, "targets", targets);
		json_object_set_new(req, "timeout_ms", json_integer(ASCEND_CALL_MS));
		fanout_expect(c->fan, i, 1);
		sshpool_request(c->nodes[i].pn, req,
		                (int)(2 * per_dev * ASCEND_CALL_MS) + c->o.request_timeout_ms,
		                on_netdetect, c);
	}
}
