/* SPDX-License-Identifier: MIT */
/*
 * netcheck_matrix.c - the network check's connect matrix (phases 3 and 4 of
 * netcheck.h): which peers each node tests, the `connect` requests and
 * their results in the model, and the confirm phase's retries.
 */
#include "netcheck_internal.h"
#include "proto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- phase 3 */

static unsigned next_rand(struct netcheck *c)
{
	c->rng = c->rng * 1103515245u + 12345u;
	return c->rng >> 8;
}

/* Does node i test node j? All pairs up to full_matrix_max nodes; beyond,
 * the master, ring neighbours and random peers (marked in `pick`). */
static void choose_peers(struct netcheck *c, size_t i, unsigned char *pick)
{
	size_t n = c->n;

	memset(pick, 0, n);
	if (n <= (size_t)c->o.full_matrix_max) {
		memset(pick, 1, n);
	} else {
		pick[c->o.master] = 1;
		pick[(i + 1) % n] = 1;
		pick[(i + n - 1) % n] = 1;
		for (int k = 0; k < c->o.random_peers; k++)
			pick[next_rand(c) % n] = 1;
		/* Everyone tests the master, so the master tests everyone. */
		if (i == c->o.master)
			memset(pick, 1, n);
	}
	pick[i] = 0;
}

/*
 * The peers are drawn before the listen phase's route requests go out, in
 * node order for the nodes live then, so the route request and the connect
 * request of a node name the same peers (the draws are the ones the connect
 * phase made before, when no node fails in between).
 */
void netcheck_choose_peers(struct netcheck *c)
{
	unsigned char *pick = cd_calloc(c->n ? c->n : 1, 1);

	for (size_t i = 0; i < c->n; i++) {
		struct netcheck_node_state *ns = &c->nodes[i];

		free(ns->peers);
		ns->peers = NULL;
		ns->npeers = 0;
		if (!netcheck_node_live(c, i))
			continue;
		choose_peers(c, i, pick);
		for (size_t j = 0; j < c->n; j++)
			ns->npeers += pick[j];
		ns->peers = cd_calloc(ns->npeers ? ns->npeers : 1, sizeof(*ns->peers));
		ns->npeers = 0;
		for (size_t j = 0; j < c->n; j++) {
			if (pick[j])
				ns->peers[ns->npeers++] = j;
		}
	}
	free(pick);
}

/* Room for one more target of node state ns; *cap is its capacity. */
static struct netcheck_target *add_target(struct netcheck_node_state *ns, size_t *cap)
{
	struct netcheck_target *t;

	if (ns->ntargets == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		ns->targets = cd_realloc(ns->targets, *cap * sizeof(*ns->targets));
	}
	t = &ns->targets[ns->ntargets++];
	memset(t, 0, sizeof(*t));
	return t;
}

static void set_target(struct netcheck_target *t, size_t node, const char *addr, unsigned scope_id,
                       int port)
{
	t->node = node;
	snprintf(t->addr, sizeof(t->addr), "%s", addr);
	t->scope_id = scope_id;
	t->port = port;
}

/* The request's JSON of a node's targets: "id", "node", "address",
 * "scope_id", "port", then "fixed", "bulk", "pmtu" (connect) or "attempt"
 * (a confirm retry). */
static json_t *targets_json(const struct netcheck_node_state *ns)
{
	json_t *out = json_array();

	for (size_t k = 0; k < ns->ntargets; k++) {
		const struct netcheck_target *t = &ns->targets[k];
		json_t *o = json_pack("{sIsIsssIsI}", "id", (json_int_t)k, "node",
		                      (json_int_t)t->node, "address", t->addr, "scope_id",
		                      (json_int_t)t->scope_id, "port", (json_int_t)t->port);

		if (t->retry) {
			json_object_set_new(o, "attempt", json_integer((json_int_t)t->attempt));
		} else {
			json_object_set_new(o, "fixed", json_boolean(t->fixed));
			json_object_set_new(o, "bulk", json_boolean(t->bulk));
			json_object_set_new(o, "pmtu", json_boolean(t->pmtu));
			if (t->rdma)
				json_object_set_new(o, "rdma", json_true());
		}
		json_array_append_new(out, o);
	}
	return out;
}

/* Does the node of state ns test node i (its drawn peers, ascending)? */
static int tests_peer(const struct netcheck_node_state *ns, size_t i)
{
	size_t lo = 0, hi = ns->npeers;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ns->peers[mid] < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ns->npeers && ns->peers[lo] == i;
}

/*
 * Does node i's attempt to listener l carry the bulk proof? Only toward the
 * addresses a suggestion may use (each node's own listeners), not the
 * MASTER_PORT candidates nor link-local addresses (a scope id; never
 * suggested, the routable address on the NIC proves its path). One proof
 * covers both directions of a pair, so in a full matrix, where both nodes
 * test each other, only the lower-numbered node sends it; a sampled pair may
 * be tested from one side only, so both do (the lower-numbered alone where
 * both drew the other), except toward the master: it
 * tests every node and sends each its own proof, so the others send none
 * to it (hundreds of transfers into one node at once measure that node's
 * CPU, not the paths: at 512 nodes they stalled and their UDP echoes were
 * lost).
 */
static int wants_bulk(const struct netcheck *c, size_t i, const struct nm_listener *l)
{
	if (l->fixed_port || l->scope_id)
		return 0;
	if (c->n <= (size_t)c->o.full_matrix_max)
		return i < l->node;
	if (l->node == c->o.master)
		return 0;
	/* a pair both nodes drew (ring neighbours, say): the lower-numbered
	 * node sends it, as in a full matrix */
	if (i != c->o.master && tests_peer(&c->nodes[l->node], i))
		return i < l->node;
	return 1;
}

/*
 * The master's own MASTER_PORT candidates on each of its routable
 * addresses. torchrun's rank-0 agent connects to its own MASTER_ADDR: that
 * connection arrives on `lo`, so a firewall that drops the port on every
 * interface but accepts it from the data interface blocks the master while
 * every peer gets through (docs/findings.md, master-port-blocked).
 */
static void self_targets(struct netcheck *c, size_t i, size_t *cap)
{
	const struct netmodel *m = c->m;
	const struct nm_node *self = &m->nodes[i];
	struct netcheck_node_state *ns = &c->nodes[i];

	for (size_t k = 0; k < m->nlisteners; k++) {
		const struct nm_listener *l = &m->listeners[k];

		if (l->node != i || !l->fixed_port || !l->port || l->error[0])
			continue;
		for (size_t a = 0; a < self->naddrs; a++) {
			const struct nm_addr *sa = &self->addrs[a];

			if (nm_addr_is_loopback(sa) || nm_addr_is_link_local(sa))
				continue;
			set_target(add_target(ns, cap), i, sa->addr, 0, l->port);
			ns->targets[ns->ntargets - 1].fixed = 1;
		}
	}
}

/* The RDMA proof goes with the bulk proof, once per pair: on node i's
 * first bulk target toward each peer, where both ends can take part; the
 * others are marked with why not (rdma_matrix.h), unless neither node has
 * an RDMA port. seen is scratch of n. */
static void rdma_targets(struct netcheck *c, size_t i, unsigned char *seen)
{
	struct netcheck_node_state *ns = &c->nodes[i];

	memset(seen, 0, c->n);
	for (size_t k = 0; k < ns->ntargets; k++) {
		struct netcheck_target *t = &ns->targets[k];

		if (!t->bulk || seen[t->node] ||
		    !rdma_matrix_relevant(&ns->rdma, &c->nodes[t->node].rdma))
			continue;
		seen[t->node] = 1;
		if (!rdma_matrix_why_not(&ns->rdma, &c->nodes[t->node].rdma, t->rdma_skip,
		                         sizeof(t->rdma_skip)))
			t->rdma = 1;
	}
}

/* Node i's targets: every listener of the peers it tests; the master's
 * also its own MASTER_PORT candidates. */
static void connect_targets(struct netcheck *c, size_t i, unsigned char *pick)
{
	const struct netmodel *m = c->m;
	struct netcheck_node_state *ns = &c->nodes[i];
	size_t cap = 0;

	free(ns->targets);
	ns->targets = NULL;
	ns->ntargets = 0;
	memset(pick, 0, c->n);
	for (size_t k = 0; k < ns->npeers; k++)
		pick[ns->peers[k]] = 1;
	for (size_t k = 0; k < m->nlisteners; k++) {
		const struct nm_listener *l = &m->listeners[k];
		const struct nm_node *peer = &m->nodes[l->node];

		if (!pick[l->node] || !l->port || l->error[0] || !netcheck_node_live(c, l->node))
			continue;
		if (!l->fixed_port) {
			struct netcheck_target *t = add_target(ns, &cap);

			set_target(t, l->node, l->addr, l->scope_id, l->port);
			/* the path-MTU probe goes with the bulk proof, where the
			 * listener opened its UDP echo */
			t->bulk = (unsigned char)wants_bulk(c, i, l);
			t->pmtu = t->bulk && l->pmtu_echo;
			continue;
		}
		/* A wildcard listener: reach it on every routable address. */
		for (size_t a = 0; a < peer->naddrs; a++) {
			const struct nm_addr *pa = &peer->addrs[a];

			if (nm_addr_is_loopback(pa) || nm_addr_is_link_local(pa))
				continue;
			set_target(add_target(ns, &cap), l->node, pa->addr, 0, l->port);
			ns->targets[ns->ntargets - 1].fixed = 1;
		}
	}
	if (i == c->o.master)
		self_targets(c, i, &cap);
	rdma_targets(c, i, pick);
}

/* Copy one connect result (reach.h) into an attempt. */
static void attempt_set_result(struct nm_attempt *a, json_t *r)
{
	const char *s = json_string_value(json_object_get(r, "result"));
	json_t *rtt = json_object_get(r, "rtt_us");

	snprintf(a->result, sizeof(a->result), "%s", s ? s : "error");
	s = json_string_value(json_object_get(r, "errno_name"));
	snprintf(a->errno_name, sizeof(a->errno_name), "%s", s ? s : "");
	a->rtt_us = json_is_integer(rtt) ? json_integer_value(rtt) : -1;
	netmodel_attempt_set_bulk(a, r);
}

static void on_connect(struct sshpool_node *pn, json_t *result, const char *code, const char *msg,
                       void *arg)
{
	struct netcheck *c = arg;
	size_t i = netcheck_index_of(pn), k;
	const struct netcheck_node_state *ns = &c->nodes[i];
	json_t *r;

	if (netcheck_reply_failed(c, pn, result, code, msg, "connect"))
		return;
	netmodel_add_neigh_fulls(c->m, i, json_object_get(result, "neigh_table_fulls"));
	json_array_foreach(json_object_get(result, "results"), k, r)
	{
		json_int_t id = json_integer_value(json_object_get(r, "id"));
		const struct netcheck_target *t;
		struct nm_attempt *a;

		if (!json_is_integer(json_object_get(r, "id")) || id < 0 ||
		    (size_t)id >= ns->ntargets)
			continue;
		t = &ns->targets[id];
		if (c->phase == PHASE_CONFIRM) {
			/* A retry replaces the attempt it confirms. */
			if (!t->retry || t->attempt >= c->m->nattempts)
				continue;
			attempt_set_result(&c->m->attempts[t->attempt], r);
			c->stats.retried++;
			continue;
		}
		a = netmodel_add_attempt(c->m);
		a->from = i;
		a->to = t->node;
		snprintf(a->addr, sizeof(a->addr), "%s", t->addr);
		a->scope_id = t->scope_id;
		a->port = t->port;
		a->fixed_port = t->fixed;
		attempt_set_result(a, r);
		if (t->rdma) {
			rdma_matrix_set(a, r);
			rdma_matrix_sources(a, &c->nodes[i].rdma, &c->nodes[t->node].rdma);
			if (!a->rdma[0]) /* an agent that does not know the proof */
				rdma_matrix_not_tested(a,
				                       "the agent did not answer the RDMA proof");
		} else if (t->rdma_skip[0])
			rdma_matrix_not_tested(a, t->rdma_skip);
		c->stats.attempts++;
	}
	fanout_settle(c->fan, i);
}

/* Each bulk proof's size for one node's targets (NM_BULK_NODE_BUDGET). */
static long bulk_bytes(const struct netcheck_node_state *ns)
{
	size_t n = 0;
	long each;

	for (size_t k = 0; k < ns->ntargets; k++)
		n += ns->targets[k].bulk;
	each = n ? NM_BULK_NODE_BUDGET / (long)n : NM_BULK_BYTES;
	return each > NM_BULK_BYTES ? NM_BULK_BYTES : each < NM_BULK_MIN ? NM_BULK_MIN : each;
}

/* Send node i its `connect` request with c->nodes[i].targets, each attempt
 * given timeout_ms. */
static void send_connect(struct netcheck *c, size_t i, int timeout_ms)
{
	json_t *req = proto_request(0, "connect");
	size_t rdmas = 0;

	json_object_set_new(req, "token", json_string(c->token));
	json_object_set_new(req, "node", json_integer((json_int_t)i));
	json_object_set_new(req, "timeout_ms", json_integer(timeout_ms));
	json_object_set_new(req, "bulk_bytes", json_integer(bulk_bytes(&c->nodes[i])));
	json_object_set_new(req, "targets", targets_json(&c->nodes[i]));
	for (size_t k = 0; k < c->nodes[i].ntargets; k++)
		rdmas += c->nodes[i].targets[k].rdma;
	if (rdmas) {
		json_object_set_new(req, "rdma", rdma_matrix_spec(&c->nodes[i].rdma));
		json_object_set_new(req, "rdma_bytes", json_integer(rdma_matrix_bytes(rdmas)));
	}
	sshpool_request(c->nodes[i].pn, req, timeout_ms * 2 + 10000, on_connect, c);
}

void netcheck_phase_connect(struct netcheck *c)
{
	unsigned char *pick = cd_calloc(c->n ? c->n : 1, 1);
	int room;

	/* half of what is left of the deadline: the confirm phase may need
	 * the other half. An attempt that times out then means no answer
	 * within this shorter time, which the report says. */
	c->stats.connect_timeout_ms = netcheck_fit_timeout(c, c->o.probe_timeout_ms, 2, &room);
	c->m->matrix_done = 1;
	for (size_t i = 0; i < c->n; i++) {
		if (netcheck_node_live(c, i))
			fanout_expect(c->fan, i, 1);
	}
	for (size_t i = 0; i < c->n; i++) {
		if (fanout_owed(c->fan, i) != 1)
			continue;
		connect_targets(c, i, pick);
		send_connect(c, i, c->stats.connect_timeout_ms);
	}
	free(pick);
}

/* ---------------------------------------------------------------- confirm */

/* Did another node reach what attempt k failed to reach? */
static int others_reached(const struct netmodel *m, size_t k)
{
	const struct nm_attempt *a = &m->attempts[k];

	for (size_t q = 0; q < m->nattempts; q++) {
		const struct nm_attempt *b = &m->attempts[q];

		if (q != k && b->to == a->to && b->port == a->port && b->from != a->from &&
		    strcmp(b->addr, a->addr) == 0 && strcmp(b->result, "ok") == 0)
			return 1;
	}
	return 0;
}

/*
 * A failure that other nodes did not see (one lost SYN among thousands sent
 * at once) is retried once before it is believed. Failures every peer saw
 * (a firewall, a dead route) are not: they cost no second deadline.
 */
void netcheck_phase_confirm(struct netcheck *c)
{
	struct netcheck_node_state *retry = cd_calloc(c->n ? c->n : 1, sizeof(*retry));
	size_t *cap = cd_calloc(c->n ? c->n : 1, sizeof(*cap));
	int room, timeout_ms = netcheck_fit_timeout(c, c->o.probe_timeout_ms, 1, &room);

	for (size_t k = 0; k < c->m->nattempts; k++) {
		const struct nm_attempt *a = &c->m->attempts[k];
		size_t from = a->from;
		struct netcheck_target *t;

		if (strcmp(a->result, "timeout") != 0 && strcmp(a->result, "bad-answer") != 0)
			continue;
		if (!netcheck_node_live(c, from) || !netcheck_node_live(c, a->to) ||
		    !others_reached(c->m, k))
			continue;
		t = add_target(&retry[from], &cap[from]);
		set_target(t, a->to, a->addr, a->scope_id, a->port);
		t->retry = 1;
		t->attempt = k;
	}
	for (size_t i = 0; i < c->n; i++) {
		if (!retry[i].ntargets)
			continue;
		if (room < NETCHECK_MIN_ATTEMPT_MS) {
			/* no time left before the deadline: the first result
			 * stands, and the report says it was not confirmed */
			c->stats.confirm_skipped += retry[i].ntargets;
			free(retry[i].targets);
			continue;
		}
		c->stats.confirm_timeout_ms = timeout_ms;
		fanout_expect(c->fan, i, 1);
		free(c->nodes[i].targets);
		c->nodes[i].targets = retry[i].targets;
		c->nodes[i].ntargets = retry[i].ntargets;
		send_connect(c, i, timeout_ms);
	}
	free(cap);
	free(retry);
}
