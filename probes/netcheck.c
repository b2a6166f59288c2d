/* SPDX-License-Identifier: MIT */
/*
 * netcheck.c - the network check's phases over the SSH pool (netcheck.h):
 * the probe and listen phases, the driver and the deadline; the connect
 * matrix and its confirm phase are in netcheck_matrix.c.
 *
 * A fanout (fanout.h) counts the answers each node still owes in the
 * current phase; a phase ends when no live node owes anything. A node that
 * fails settles its count at once, so one dead or hung node costs the
 * others at most its request deadline.
 */
#include "netcheck_internal.h"
#include "diagnose.h"
#include "optgroup.h"
#include "predict.h"
#include "proto.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* The listen phase's requests go out this many nodes per loop turn: a
 * route request names the picks of every peer the node tests (all of them
 * in a full matrix, and the master's in a sampled one), so building them
 * all in one turn held the loop (and the TUI's keys) for tens of ms at 100
 * nodes. */
#define LISTEN_BATCH 8

void netcheck_opts_init(struct netcheck_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->master_port = 0;
	o->probe_timeout_ms = 3000;
	o->request_timeout_ms = 30000;
	o->full_matrix_max = 64;
	o->random_peers = 4;
	o->seed = 1;
}

size_t netcheck_index_of(const struct sshpool_node *pn)
{
	return (size_t)(uintptr_t)sshpool_node_data(pn);
}

static void start_phase(struct netcheck *c, enum netcheck_phase p);
static void deadline_stop(struct netcheck *c);

/* Nothing is owed any more: the next phase, from the loop's next turn. */
static void advance(void *arg)
{
	struct netcheck *c = arg;

	start_phase(c, c->phase + 1);
}

/* A node's failure: before its probe answered it is "not checked"; after,
 * its results are partial. */
static void node_broke(struct netcheck *c, size_t i, const char *code, const char *msg)
{
	struct nm_node *n = &c->m->nodes[i];

	if (!n->probed)
		netmodel_node_failed(c->m, i, code, msg);
	else if (!n->error[0]) {
		snprintf(n->error, sizeof(n->error), "%s", msg ? msg : "failed");
		snprintf(n->lost_code, sizeof(n->lost_code), "%s", code ? code : "");
	}
	fanout_settle_all(c->fan, i);
}

static void on_failed(struct sshpool *pool, struct sshpool_node *pn, void *arg)
{
	struct netcheck *c = arg;
	struct nm_node *n = &c->m->nodes[netcheck_index_of(pn)];
	const char *type, *fp = sshpool_node_hostkey_fp(pn, &type);

	/* a kept node lost between two checks: the next one connects it anew */
	if (c->phase == PHASE_DONE)
		return;
	snprintf(n->hostkey_type, sizeof(n->hostkey_type), "%s", type);
	snprintf(n->hostkey_fp, sizeof(n->hostkey_fp), "%s", fp);
	node_broke(c, netcheck_index_of(pn), sshpool_node_error_code(pn),
	           sshpool_node_error_message(pn));
}

/* A request's error: the node's own failure is reported by on_failed. */
int netcheck_reply_failed(struct netcheck *c, struct sshpool_node *pn, json_t *result,
                          const char *code, const char *msg, const char *what)
{
	char text[CD_ERRLEN];

	if (result)
		return 0;
	if (sshpool_node_state(pn) == SSHPOOL_NODE_FAILED)
		return 1;
	snprintf(text, sizeof(text), "%s: %s failed: %s", sshpool_node_host(pn), what,
	         msg ? msg : "no answer");
	node_broke(c, netcheck_index_of(pn), code ? code : "agent", text);
	sshpool_close_node(pn);
	return 1;
}

/* ---------------------------------------------------------------- phase 1 */

static void on_netprobe(struct sshpool_node *pn, json_t *result, const char *code, const char *msg,
                        void *arg)
{
	struct netcheck *c = arg;
	size_t i = netcheck_index_of(pn);

	if (netcheck_reply_failed(c, pn, result, code, msg, "netprobe"))
		return;
	/* The model copies what it needs: the two answers (tens of KB each in
	 * jansson's trees) are not kept for the rest of the check, which made
	 * the head's memory grow by that much per node. */
	netmodel_set_node(c->m, i, result, c->nodes[i].facts);
	json_decref(c->nodes[i].facts);
	c->nodes[i].facts = NULL;
	fanout_settle(c->fan, i);
}

static void on_facts(struct sshpool_node *pn, json_t *result, const char *code, const char *msg,
                     void *arg)
{
	struct netcheck *c = arg;
	size_t i = netcheck_index_of(pn);

	if (netcheck_reply_failed(c, pn, result, code, msg, "facts"))
		return;
	c->nodes[i].facts = json_incref(result);
	netcheck_ascend_facts(c, i, result);
	netcheck_dcgm_facts(c, i, result);
	fanout_settle(c->fan, i);
}

static void on_ready(struct sshpool *pool, struct sshpool_node *pn, void *arg)
{
	struct netcheck *c = arg;
	json_t *req = proto_request(0, "facts");
	int room, python_ms = c->o.request_timeout_ms * 2 / 3;

	/* a slow python (a cold cache, a loaded node) must not eat the
	 * deadline of the phases that follow: its probe then says it timed out */
	if (c->deadline_timer) {
		netcheck_fit_timeout(c, python_ms, 1, &room);
		if (python_ms > room / 2) {
			python_ms =
			    room / 2 > NETCHECK_MIN_ATTEMPT_MS ? room / 2 : NETCHECK_MIN_ATTEMPT_MS;
			if (!c->stats.python_timeout_ms || python_ms < c->stats.python_timeout_ms)
				c->stats.python_timeout_ms = python_ms;
		}
	}
	json_object_set_new(req, "python_timeout_ms", json_integer(python_ms));
	if (c->o.python)
		json_object_set_new(req, "python", json_string(c->o.python));
	sshpool_request(pn, req, c->o.request_timeout_ms, on_facts, c);
	req = proto_request(0, "netprobe");
	if (c->o.no_firewall)
		json_object_set_new(req, "no_firewall", json_true());
	sshpool_request(pn, req, c->o.request_timeout_ms * 2, on_netprobe, c);
}

static const struct sshpool_handlers pool_handlers = {.ready = on_ready, .failed = on_failed};

/* ---------------------------------------------------------------- phase 2 */

int netcheck_node_live(const struct netcheck *c, size_t i)
{
	return c->m->nodes[i].probed && !c->m->nodes[i].error[0] &&
	       sshpool_node_state(c->nodes[i].pn) == SSHPOOL_NODE_READY;
}

static void on_listen(struct sshpool_node *pn, json_t *result, const char *code, const char *msg,
                      void *arg)
{
	struct netcheck *c = arg;
	size_t i = netcheck_index_of(pn);

	if (netcheck_reply_failed(c, pn, result, code, msg, "listen"))
		return;
	netmodel_add_listeners(c->m, i, result);
	fanout_settle(c->fan, i);
}

static void on_route(struct sshpool_node *pn, json_t *result, const char *code, const char *msg,
                     void *arg)
{
	struct netcheck *c = arg;
	size_t i = netcheck_index_of(pn);

	if (netcheck_reply_failed(c, pn, result, code, msg, "route"))
		return;
	netmodel_add_routes(c->m, i, json_object_get(result, "routes"));
	fanout_settle(c->fan, i);
}

static json_t *listen_request(struct netcheck *c, size_t i)
{
	const struct nm_node *n = &c->m->nodes[i];
	json_t *req = proto_request(0, "listen"), *addrs = json_array(), *ports = json_array();

	for (size_t k = 0; k < n->naddrs; k++) {
		const struct nm_addr *a = &n->addrs[k];

		if (nm_addr_is_loopback(a))
			continue;
		json_array_append_new(addrs, json_pack("{sssI}", "address", a->addr, "scope_id",
		                                       (json_int_t)a->scope_id));
	}
	json_array_append_new(ports, json_integer(c->o.master_port));
	if (i == c->o.master) {
		json_array_append_new(ports, json_integer(c->o.master_port + 1));
		json_array_append_new(ports, json_integer(c->o.master_port + 10));
	}
	json_object_set_new(req, "token", json_string(c->token));
	json_object_set_new(req, "node", json_integer((json_int_t)i));
	json_object_set_new(req, "addresses", addrs);
	json_object_set_new(req, "ports", ports);
	json_object_set_new(req, "duration_ms",
	                    json_integer(c->o.probe_timeout_ms * 4 + c->o.request_timeout_ms));
	if (c->nodes[i].rdma.ok)
		json_object_set_new(req, "rdma", rdma_matrix_spec(&c->nodes[i].rdma));
	return req;
}

/* Route pairs: toward every address NCCL or Gloo would use on the peers
 * this node tests in the matrix (every peer up to full_matrix_max nodes,
 * its sample beyond), from this node's own pick of the same family. Asking
 * toward every peer in a sampled matrix made the requests, the answers and
 * the routes the head keeps grow with N^2 (316 MiB of head RSS at 512
 * nodes); the diagnosis reads the routes of the pairs tested. */
static json_t *route_request(struct netcheck *c, size_t i, const struct diagnosis *d)
{
	json_t *req = proto_request(0, "route"), *pairs = json_array();
	const struct node_prediction *mine = &d->pred[i];

	for (size_t t = 0; t < c->nodes[i].npeers; t++) {
		size_t j = c->nodes[i].peers[t];
		const struct node_prediction *p = &d->pred[j];

		if (j == i || !c->m->nodes[j].probed)
			continue;
		for (int k = 0; k < p->nccl.npicks + p->gloo.npicks; k++) {
			const struct net_pick *pk = k < p->nccl.npicks
			                                ? &p->nccl.picks[k]
			                                : &p->gloo.picks[k - p->nccl.npicks];
			const char *from = NULL;
			json_t *pair;

			if (pk->scope_id)
				continue; /* link-local: the finding says enough */
			for (int q = 0; q < mine->nccl.npicks && !from; q++) {
				if (mine->nccl.picks[q].family == pk->family &&
				    !mine->nccl.picks[q].scope_id)
					from = mine->nccl.picks[q].addr;
			}
			pair = json_pack("{ss}", "to", pk->addr);
			if (from)
				json_object_set_new(pair, "from", json_string(from));
			json_array_append_new(pairs, pair);
		}
	}
	json_object_set_new(req, "pairs", pairs);
	return req;
}

/* No --port: the master's own MASTER_PORT, as a job started there would
 * use it, else PyTorch's default. */
static void settle_master_port(struct netcheck *c)
{
	const struct nm_var *v = nm_var_get(&c->m->nodes[c->o.master], "MASTER_PORT");
	long port = v ? strtol(v->value, NULL, 10) : 0;

	if (!c->o.master_port)
		c->o.master_port = port > 0 && port <= OPT_PORT_MAX ? (int)port : 29500;
	c->m->master_port = c->o.master_port;
}

static void listen_stop(struct netcheck *c)
{
	if (c->listen_timer)
		loop_timer_cancel(c->loop, c->listen_timer);
	c->listen_timer = 0;
	diagnosis_free(c->listen_pred);
	c->listen_pred = NULL;
}

/* The next LISTEN_BATCH nodes' listen and route requests; a node that
 * failed since the phase began (it owes nothing) is passed over. */
static void send_listens(struct loop *loop, void *arg)
{
	struct netcheck *c = arg;
	size_t sent = 0;

	c->listen_timer = 0;
	for (; c->listen_next < c->n && sent < LISTEN_BATCH; c->listen_next++) {
		size_t i = c->listen_next;
		struct sshpool_node *pn = c->nodes[i].pn;

		if (fanout_owed(c->fan, i) != 2)
			continue;
		sshpool_request(pn, listen_request(c, i), c->o.request_timeout_ms, on_listen, c);
		sshpool_request(pn, route_request(c, i, c->listen_pred),
		                c->o.request_timeout_ms * 2, on_route, c);
		sent++;
	}
	if (c->listen_next < c->n)
		c->listen_timer = loop_timer_add(loop, 0, send_listens, c);
	else
		listen_stop(c);
}

/* Each node's end of the RDMA proof, with the NCCL_IB_HCA and
 * NCCL_IB_GID_INDEX the check will suggest for it: they depend on the probes
 * alone, so the pairs are proven as run and mnist will set them, not as the
 * login would (its variables may be what the suggestion replaces). */
static void rdma_ends(struct netcheck *c)
{
	struct ib_suggestion s;

	diagnose_suggest_ib(c->m, &s);
	for (size_t i = 0; i < c->n; i++)
		rdma_matrix_end(&c->m->nodes[i], s.hca_per_node[i], s.gid_per_node[i],
		                &c->nodes[i].rdma);
	ib_suggestion_fini(&s, c->m->nnodes);
}

static void phase_listen(struct netcheck *c)
{
	settle_master_port(c);
	c->listen_pred = diagnose_predictions(c->m);
	rdma_ends(c);
	c->listen_next = 0;
	netcheck_choose_peers(c);
	for (size_t i = 0; i < c->n; i++) {
		if (netcheck_node_live(c, i))
			fanout_expect(c->fan, i, 2);
	}
	send_listens(c->loop, c);
}

/* ---------------------------------------------------------------- driver */

/* Nothing waits for an unlisten: a node that misses its deadline fails in
 * the pool and the next check connects it anew. */
static void on_unlisten(struct sshpool_node *pn, json_t *result, const char *code, const char *msg,
                        void *arg)
{
	(void)pn, (void)result, (void)code, (void)msg, (void)arg;
}

void netcheck_on_phase(struct netcheck *c, void (*moved)(void *arg), void *arg)
{
	c->moved = moved;
	c->moved_arg = arg;
}

static void start_phase(struct netcheck *c, enum netcheck_phase p)
{
	int64_t now = cd_now_ms();

	if (c->phase == PHASE_PROBE)
		c->stats.probe_ms = now - c->phase_start;
	else if (c->phase == PHASE_LISTEN)
		c->stats.listen_ms = now - c->phase_start;
	else if (c->phase == PHASE_CONNECT)
		c->stats.connect_ms = now - c->phase_start;
	else if (c->phase == PHASE_CONFIRM)
		c->stats.confirm_ms = now - c->phase_start;
	listen_stop(c); /* every live node failed before its requests went out */
	c->phase = p;
	c->phase_start = now;
	if (c->moved)
		c->moved(c->moved_arg);
	if (p == PHASE_ASCEND)
		netcheck_phase_ascend(c);
	else if (p == PHASE_LISTEN)
		phase_listen(c);
	else if (p == PHASE_CONNECT)
		netcheck_phase_connect(c);
	else if (p == PHASE_CONFIRM)
		netcheck_phase_confirm(c);
	if (p == PHASE_DONE) {
		deadline_stop(c);
		for (size_t i = 0; i < c->n; i++) {
			if (sshpool_node_state(c->nodes[i].pn) != SSHPOOL_NODE_READY)
				continue;
			/* a kept agent's listeners would hold the MASTER_PORT
			 * candidates (their duration) and refuse the next listen */
			if (c->o.keep_connected)
				sshpool_request(c->nodes[i].pn, proto_request(0, "unlisten"),
				                c->o.request_timeout_ms, on_unlisten, NULL);
			else
				sshpool_close_node(c->nodes[i].pn);
		}
		c->done(c->arg);
		return;
	}
	fanout_begin(c->fan); /* no live node: the next turn skips ahead */
}

static struct netcheck *netcheck_new(struct loop *loop, struct sshpool *pool, struct netmodel *m,
                                     const struct netcheck_opts *o, void (*done)(void *arg),
                                     void *arg)
{
	struct netcheck *c = cd_calloc(1, sizeof(*c));

	c->loop = loop;
	c->pool = pool;
	c->m = m;
	c->o = *o;
	if (c->o.master >= m->nnodes)
		c->o.master = 0;
	m->master = c->o.master;
	m->master_port = c->o.master_port ? c->o.master_port : 29500;
	m->expect_gpus = c->o.expect_gpus;
	m->expect = c->o.expect;
	c->done = done;
	c->arg = arg;
	c->rng = o->seed ? o->seed : 1;
	c->n = m->nnodes;
	c->nodes = cd_calloc(c->n ? c->n : 1, sizeof(*c->nodes));
	c->fan = fanout_new(loop, c->n, advance, c);
	cd_random_token(c->token, sizeof(c->token));
	c->phase = PHASE_PROBE;
	c->phase_start = cd_now_ms();
	return c;
}

/* Node i owes its facts and netprobe; pn is its pool node. */
static void expect_probe(struct netcheck *c, size_t i, struct sshpool_node *pn)
{
	c->nodes[i].pn = pn;
	sshpool_node_set_data(pn, (void *)(uintptr_t)i);
	fanout_expect(c->fan, i, 2);
}

struct netcheck *netcheck_start(struct loop *loop, struct sshpool *pool, struct netmodel *m,
                                const struct netcheck_opts *o, void (*done)(void *arg), void *arg)
{
	struct netcheck *c = netcheck_new(loop, pool, m, o, done, arg);

	for (size_t i = 0; i < c->n; i++)
		expect_probe(c, i, sshpool_add(pool, m->nodes[i].host));
	fanout_begin(c->fan);
	sshpool_start(pool, &pool_handlers, c);
	return c;
}

/* netcheck_again's first requests, from the loop as every pool event: the
 * kept nodes still ready are probed as if they had just connected. */
static void resume_kept(struct loop *loop, void *arg)
{
	struct netcheck *c = arg;

	(void)loop;
	c->resume_timer = 0;
	for (size_t i = 0; i < c->n; i++) {
		if (c->nodes[i].kept && fanout_owed(c->fan, i) == 2 &&
		    sshpool_node_state(c->nodes[i].pn) == SSHPOOL_NODE_READY)
			on_ready(c->pool, c->nodes[i].pn, c);
	}
}

struct netcheck *netcheck_again(struct netcheck *prev, struct netmodel *m,
                                const struct netcheck_opts *o, void (*done)(void *arg), void *arg)
{
	struct netcheck *c;

	if (prev->phase != PHASE_DONE || m->nnodes != prev->n)
		return NULL;
	c = netcheck_new(prev->loop, prev->pool, m, o, done, arg);
	for (size_t i = 0; i < c->n; i++) {
		struct sshpool_node *pn = prev->nodes[i].pn;

		c->nodes[i].kept = sshpool_node_state(pn) == SSHPOOL_NODE_READY;
		expect_probe(c, i, c->nodes[i].kept ? pn : sshpool_add(c->pool, m->nodes[i].host));
	}
	fanout_begin(c->fan);
	sshpool_start(c->pool, &pool_handlers, c);
	c->resume_timer = loop_timer_add(c->loop, 0, resume_kept, c);
	return c;
}

size_t netcheck_connected(const struct netcheck *c)
{
	size_t n = 0;

	for (size_t i = 0; i < c->n; i++)
		n += sshpool_node_state(c->nodes[i].pn) == SSHPOOL_NODE_READY;
	return n;
}

enum netcheck_stage netcheck_node_stage(const struct netcheck *c, size_t i)
{
	const struct nm_node *n = &c->m->nodes[i];

	if (!n->probed && n->error_code[0])
		return NCS_FAILED;
	if (c->phase == PHASE_DONE)
		return n->probed ? NCS_DONE : NCS_FAILED;
	if (n->probed)
		return c->phase == PHASE_PROBE ? NCS_PROBING : NCS_MATRIX;
	switch (sshpool_node_state(c->nodes[i].pn)) {
	case SSHPOOL_NODE_QUEUED:
		return NCS_QUEUED;
	case SSHPOOL_NODE_CONFIG:
	case SSHPOOL_NODE_CONNECTING:
		return NCS_CONNECTING;
	case SSHPOOL_NODE_AUTHENTICATING:
		return NCS_AUTH;
	case SSHPOOL_NODE_STARTING:
		return NCS_STARTING;
	case SSHPOOL_NODE_READY:
		return NCS_PROBING;
	case SSHPOOL_NODE_CLOSED:
	case SSHPOOL_NODE_FAILED:
		break;
	}
	return NCS_FAILED;
}

const char *netcheck_stage_name(enum netcheck_stage s)
{
	static const char *const names[] = {
	    [NCS_QUEUED] = "queued",     [NCS_CONNECTING] = "connecting", [NCS_AUTH] = "auth",
	    [NCS_STARTING] = "starting", [NCS_PROBING] = "probing",       [NCS_MATRIX] = "matrix",
	    [NCS_DONE] = "done",         [NCS_FAILED] = "failed",
	};
	return (unsigned)s < CD_ARRAY_LEN(names) ? names[s] : "?";
}

const char *netcheck_phase_name(const struct netcheck *c)
{
	static const char *const names[] = {
	    [PHASE_PROBE] = "probe",     [PHASE_ASCEND] = "ascend",   [PHASE_LISTEN] = "listen",
	    [PHASE_CONNECT] = "connect", [PHASE_CONFIRM] = "confirm", [PHASE_DONE] = "done",
	};
	return names[c->phase];
}

void netcheck_free(struct netcheck *c)
{
	if (!c)
		return;
	fanout_free(c->fan);
	deadline_stop(c);
	listen_stop(c);
	if (c->resume_timer)
		loop_timer_cancel(c->loop, c->resume_timer);
	for (size_t i = 0; i < c->n; i++) {
		json_decref(c->nodes[i].facts);
		free(c->nodes[i].targets);
		free(c->nodes[i].peers);
	}
	free(c->nodes);
	free(c);
}

void netcheck_expire(struct netcheck *c, const char *why, const char *why_probed)
{
	for (size_t i = 0; i < c->n; i++) {
		struct nm_node *n = &c->m->nodes[i];
		char msg[CD_ERRLEN];

		if (c->phase == PHASE_DONE || fanout_owed(c->fan, i) <= 0)
			continue;
		/* closing fails its pending requests into our callbacks first;
		 * the deadline is then recorded over what they said */
		sshpool_close_node(c->nodes[i].pn);
		snprintf(msg, sizeof(msg), "%s: %s", n->host, n->probed ? why_probed : why);
		if (!n->probed)
			netmodel_node_failed(c->m, i, "deadline", msg);
		else
			snprintf(n->error, sizeof(n->error), "%s", msg);
		fanout_settle_all(c->fan, i);
	}
}

void netcheck_stats(const struct netcheck *c, struct netcheck_stats *s)
{
	*s = c->stats;
	s->deadline_s = c->deadline_s;
	s->deadline_hit = c->deadline_hit;
	s->probe_timeout_ms = c->o.probe_timeout_ms;
	loop_stats(c->loop, &s->loop);
}

int netcheck_fit_timeout(const struct netcheck *c, int want_ms, int parts, int *room)
{
	int64_t left, fit;

	if (!c->deadline_timer) {
		*room = INT_MAX;
		return want_ms;
	}
	left = c->deadline_at - cd_now_ms();
	/* the answers come back after the attempts' deadline: keep a margin
	 * for the agents' and the head's work, more on a longer run */
	fit = left > 0 ? (left - 500 - left / 10) / (parts > 0 ? parts : 1) : 0;
	*room = fit > 0 ? (int)(fit < INT_MAX ? fit : INT_MAX) : 0;
	if (fit >= want_ms)
		return want_ms;
	return fit > NETCHECK_MIN_ATTEMPT_MS ? (int)fit : NETCHECK_MIN_ATTEMPT_MS;
}

/* ---------------------------------------------------------------- deadline */

static void deadline_stop(struct netcheck *c)
{
	if (c->deadline_timer)
		loop_timer_cancel(c->loop, c->deadline_timer);
	c->deadline_timer = 0;
}

/* Did any node still owe an answer? (Then the deadline cut the check.) */
static int answers_owed(const struct netcheck *c)
{
	for (size_t i = 0; i < c->n; i++) {
		if (fanout_owed(c->fan, i) > 0)
			return 1;
	}
	return 0;
}

/* The nodes that still owe an answer are closed; the check then ends with
 * the others. Set again for the phases that follow, which get 2 s each. A
 * node that answered its probe is not blamed: the deadline cut its phase. */
static void on_deadline(struct loop *loop, void *arg)
{
	struct netcheck *c = arg;
	char why[160], why_probed[200];

	snprintf(why, sizeof(why),
	         "no answer within the check's deadline (--deadline %d s) to its probe; the node "
	         "or its agent may be slow or hung",
	         c->deadline_s);
	snprintf(why_probed, sizeof(why_probed),
	         "the check's deadline (--deadline %d s) passed during the %s phase, before its "
	         "answers were in: the check was cut short there, its results are partial",
	         c->deadline_s, netcheck_phase_name(c));
	if (answers_owed(c)) {
		c->deadline_hit = 1;
		if (!c->stats.deadline_phase[0])
			snprintf(c->stats.deadline_phase, sizeof(c->stats.deadline_phase), "%s",
			         netcheck_phase_name(c));
	}
	c->deadline_at = cd_now_ms() + 2000;
	c->deadline_timer = loop_timer_add(loop, 2000, on_deadline, c);
	netcheck_expire(c, why, why_probed);
	if (c->expired)
		c->expired(c->expired_arg);
}

void netcheck_set_deadline(struct netcheck *c, int deadline_s, void (*expired)(void *arg),
                           void *arg)
{
	deadline_stop(c);
	c->deadline_s = deadline_s;
	c->expired = expired;
	c->expired_arg = arg;
	if (deadline_s > 0 && c->phase != PHASE_DONE) {
		c->deadline_at = cd_now_ms() + (int64_t)deadline_s * 1000;
		c->deadline_timer =
		    loop_timer_add(c->loop, (int64_t)deadline_s * 1000, on_deadline, c);
	}
}

int netcheck_deadline_hit(const struct netcheck *c)
{
	return c->deadline_hit;
}
