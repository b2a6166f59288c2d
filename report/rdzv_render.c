/* SPDX-License-Identifier: MIT */
/*
 * rdzv_render.c - the rendezvous watch in words and JSON (rdzv_render.h).
 */
#include "report/rdzv_render.h"
#include "termtext.h"
#include "sshpool.h"

#include <string.h>

static void endpoint(const struct rdzvwatch *w, char *out, size_t len)
{
	if (strchr(w->addr, ':'))
		snprintf(out, len, "[%s]:%d", w->addr, w->port);
	else
		snprintf(out, len, "%s:%d", w->addr, w->port);
}

void rdzv_print_text(FILE *f, const struct rdzvwatch *w)
{
	char ep[80];

	if (!w)
		return;
	endpoint(w, ep, sizeof(ep));
	switch (w->state) {
	case RDZV_JOINED:
		termtext_printf(f, "rendezvous: every node joined %s in %.1f s\n", ep,
		                w->joined_ms / 1e3);
		break;
	case RDZV_UNUSED:
		termtext_printf(f,
		                "rendezvous: not judged: no process of the job connected to %s or "
		                "listened on port %d within %d s\n",
		                ep, w->port, w->timeout_ms / 1000);
		break;
	case RDZV_REACHABLE:
		termtext_printf(f, "rendezvous: %s\n", w->verdict);
		break;
	default: /* off, ended early, or the verdict is the failure itself */
		break;
	}
}

static json_t *test_json(const struct rdzvwatch_node *n)
{
	if (!n->tested)
		return json_null();
	return json_pack("{s:o s:o s:i}", "result",
	                 n->result[0] ? json_string(n->result) : json_null(), "errno_name",
	                 n->errno_name[0] ? json_string(n->errno_name) : json_null(), "ms",
	                 n->test_ms);
}

json_t *rdzv_report_json(const struct rdzvwatch *w)
{
	json_t *nodes, *top;

	if (!w)
		return json_null();
	nodes = json_array();
	for (size_t i = 0; w->nodes && i < w->job->n; i++) {
		const struct rdzvwatch_node *n = &w->nodes[i];

		json_array_append_new(
		    nodes,
		    json_pack("{s:s s:b s:o s:b s:i s:o}", "host",
		              sshpool_node_host(w->job->nodes[i].pn), "joined", n->joined,
		              "joined_ms", n->joined ? json_integer(n->joined_ms) : json_null(),
		              "listening", n->listening, "connecting", n->connecting, "test",
		              test_json(n)));
	}
	top =
	    json_pack("{s:i s:s s:s s:i s:o s:o s:o}", "timeout_s", w->timeout_ms / 1000, "state",
	              rdzvwatch_state_name(w->state), "addr", w->addr, "port", w->port, "joined_ms",
	              w->state == RDZV_JOINED ? json_integer(w->joined_ms) : json_null(), "verdict",
	              w->verdict[0] ? json_string(w->verdict) : json_null(), "nodes", nodes);
	return top;
}
