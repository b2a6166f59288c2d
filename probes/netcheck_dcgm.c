/* SPDX-License-Identifier: MIT */
/* netcheck_dcgm.c - the check's DCGM step (--dcgm-level, issue 35): on a
 * node whose facts list NVIDIA GPUs, `dcgm_diag` during the probe phase,
 * sent behind facts and netprobe. The agent bounds dcgmi by the level's
 * deadline; the pool's request deadline goes beyond that. A failed or late
 * answer never takes the node out of the check: it is kept as
 * {"error": ...} for the findings (probe-incomplete). */
#include "probes/dcgm_agent.h"
#include "probes/netcheck_internal.h"
#include "proto.h"
#include "sshpool.h"

static void on_diag(struct sshpool_node *pn, json_t *result, const char *code, const char *msg,
                    void *arg)
{
	struct netcheck *c = arg;
	size_t i = netcheck_index_of(pn);

	if (result) {
		netmodel_set_nvidia(c->m, i, "dcgm", result);
	} else {
		json_t *e = json_pack("{s:b, s:s}", "present", 1, "error",
		                      msg && *msg ? msg
		                      : code      ? code
		                                  : "failed");

		netmodel_set_nvidia(c->m, i, "dcgm", e);
		json_decref(e);
	}
	fanout_settle(c->fan, i);
}

void netcheck_dcgm_facts(struct netcheck *c, size_t i, json_t *facts)
{
	json_t *req;
	int room, ms = dcgm_level_ms(c->o.dcgm_level);

	if (!c->o.dcgm_level || json_array_size(json_object_get(facts, "gpus")) == 0)
		return;
	req = proto_request(0, "dcgm_diag");
	json_object_set_new(req, "level", json_integer(c->o.dcgm_level));
	/* under --deadline, dcgmi is cut on the node in time for its answer
	 * (gpu-dcgm's probe-incomplete) rather than the node by the check */
	if (netcheck_fit_timeout(c, ms, 1, &room) < ms) {
		ms = room > 1000 ? room : 1000;
		json_object_set_new(req, "timeout_ms", json_integer(ms));
	}
	fanout_expect(c->fan, i, 1);
	sshpool_request(c->nodes[i].pn, req, ms + 3 * c->o.request_timeout_ms, on_diag, c);
}
