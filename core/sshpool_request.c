/* SPDX-License-Identifier: MIT */
/*
 * sshpool_request.c - the agent protocol on a pool's node
 * (sshpool_internal.h): requests and their deadlines, the replies and
 * interim progress that come back, and the hello that makes a node ready.
 */
#include "sshpool_internal.h"
#include "cd.h"
#include "proto.h"
#include "trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The head's keepalive interval (docs/protocol.md, "keepalive"): an agent
 * that heard nothing for 6 of them (30 s) exits by itself. CLUSTERDOC_KEEPALIVE_MS
 * shortens it for tests. */
#define KEEPALIVE_MS 5000

static int keepalive_ms(void)
{
	const char *e = getenv("CLUSTERDOC_KEEPALIVE_MS");
	long v = e ? strtol(e, NULL, 10) : 0;

	return v >= 100 && v <= 600000 ? (int)v : KEEPALIVE_MS;
}

static const char *str_or(const char *s, const char *otherwise)
{
	return s ? s : otherwise;
}

/* Fail every pending request, without touching the node's state. */
void pool_node_fail_pending(struct sshpool_node *node, const char *code, const char *msg)
{
	struct pending *p;

	while ((p = node->pending)) {
		node->pending = p->next;
		loop_timer_cancel(node->pool->loop, p->timer);
		p->cb(node, NULL, code, msg, p->arg);
		free(p);
	}
	node->pending_tail = NULL;
}

/* Queue msg for the agent; a message over the cap fails the node. The -v
 * trace's line for every request (keepalives only with -vv): its id and
 * type, never its body. */
static void node_write(struct sshpool_node *node, json_t *msg)
{
	char err[CD_ERRLEN];
	const char *type = json_string_value(json_object_get(msg, "type"));
	size_t before = node->conn.out.len;
	int rc = proto_write(&node->conn.out, msg, err, sizeof(err));

	if (rc == 0)
		trace_node(type && strcmp(type, "keepalive") == 0 ? TRACE_ALL : TRACE_STEPS,
		           node->host, "request %lld %s sent (%zu bytes)",
		           (long long)json_integer_value(json_object_get(msg, "id")),
		           type ? type : "?", node->conn.out.len - before);
	if (rc < 0)
		pool_node_fail(node, "protocol", "%s: %s", node->host, err);
	else
		node->conn.ops->flush(&node->conn);
}

static void node_on_reply(struct sshpool_node *node, json_t *msg)
{
	struct pending *p = node->pending;
	long long id = json_integer_value(json_object_get(msg, "id"));
	json_t *err;

	if (!p || p->id != id) {
		pool_node_fail(node, "protocol",
		               "%s: the agent answered request %lld, which was not asked",
		               node->host, id);
		return;
	}
	node->pending = p->next;
	if (!node->pending)
		node->pending_tail = NULL;
	loop_timer_cancel(node->pool->loop, p->timer);
	trace_node(
	    TRACE_STEPS, node->host, "request %lld %s answered in %lld ms: %s", p->id, p->type,
	    (long long)(cd_now_ms() - p->sent_ms),
	    json_is_true(json_object_get(msg, "ok"))
	        ? "ok"
	        : str_or(json_string_value(json_object_get(json_object_get(msg, "error"), "code")),
	                 "error"));
	if (json_is_true(json_object_get(msg, "ok"))) {
		p->cb(node, json_object_get(msg, "result"), NULL, NULL, p->arg);
	} else {
		err = json_object_get(msg, "error");
		p->cb(node, NULL, json_string_value(json_object_get(err, "code")),
		      json_string_value(json_object_get(err, "message")), p->arg);
	}
	free(p);
}

/* Interim progress: for the request it names when that one is awaited and
 * asked for it; anything else is dropped. */
static void node_on_progress(struct sshpool_node *node, json_t *msg, json_t *progress)
{
	long long id = json_integer_value(json_object_get(msg, "id"));

	for (struct pending *p = node->pending; p; p = p->next) {
		if (p->id != id)
			continue;
		trace_node(TRACE_ALL, node->host, "request %lld %s: progress after %lld ms", p->id,
		           p->type, (long long)(cd_now_ms() - p->sent_ms));
		if (p->progress_cb)
			p->progress_cb(node, progress, p->arg);
		return;
	}
}

/* Every message from the agent, whatever the transport: progress or a
 * response. */
static void node_on_message(struct sshpool_node *node, json_t *msg)
{
	char err[CD_ERRLEN];
	json_t *progress;
	int rc = proto_progress_get(msg, &progress, err, sizeof(err));

	if (rc < 0)
		pool_node_fail(node, "protocol", "%s: agent: %s", node->host, err);
	else if (rc == 1)
		node_on_progress(node, msg, progress);
	else
		node_on_reply(node, msg);
}

void pool_node_proto_input(struct sshpool_node *node)
{
	struct conn *c = &node->conn;
	char err[CD_ERRLEN];
	json_t *msg;

	while (node->booted &&
	       (node->state == SSHPOOL_NODE_STARTING || node->state == SSHPOOL_NODE_READY)) {
		int got = proto_next(&c->in, &msg, err, sizeof(err));

		if (got == 0)
			break;
		if (got < 0) {
			pool_node_fail(node, "protocol", "%s: agent: %s%s", node->host, err,
			               got == CD_ERR_TOOBIG ? " from the agent" : "");
			break;
		}
		node_on_message(node, msg);
		json_decref(msg);
	}
}
/* ------------------------------------------------------------ keepalive */

/* Whether the node's agent watches for keepalives (its hello said so; an
 * older agent would answer one as an unknown request). */
static int wants_keepalive(const struct sshpool_node *node)
{
	return node->state == SSHPOOL_NODE_READY && !node->ending &&
	       json_is_integer(json_object_get(node->hello, "keepalive_ms"));
}

static void send_keepalives(struct loop *loop, void *arg)
{
	struct sshpool *pool = arg;
	int any = 0;

	pool->keepalive_timer = 0;
	for (size_t i = 0; i < pool->n; i++) {
		struct sshpool_node *node = pool->nodes[i];
		json_t *msg;

		if (!wants_keepalive(node))
			continue;
		/* never answered, so no pending entry; sent whatever is in flight */
		msg = proto_request(0, "keepalive");
		node_write(node, msg);
		json_decref(msg);
		any = 1;
	}
	if (any)
		pool->keepalive_timer = loop_timer_add(loop, keepalive_ms(), send_keepalives, pool);
}

void sshpool_keepalive_hold(struct sshpool *pool, int hold_ms)
{
	/* the next periodic keepalive, which would end the hold, comes a
	 * whole interval after this line: the caller has that long to block */
	if (pool && pool->keepalive_timer) {
		loop_timer_cancel(pool->loop, pool->keepalive_timer);
		pool->keepalive_timer =
		    loop_timer_add(pool->loop, keepalive_ms(), send_keepalives, pool);
	}
	for (size_t i = 0; pool && i < pool->n; i++) {
		struct sshpool_node *node = pool->nodes[i];
		json_t *msg;

		if (!wants_keepalive(node))
			continue;
		msg = proto_request(0, "keepalive");
		if (hold_ms > 0)
			json_object_set_new(msg, "hold_ms", json_integer(hold_ms));
		node_write(node, msg);
		json_decref(msg);
	}
}

/* From the first agent that takes keepalives until none is ready. */
static void pool_keepalive_start(struct sshpool *pool)
{
	if (!pool->keepalive_timer)
		pool->keepalive_timer =
		    loop_timer_add(pool->loop, keepalive_ms(), send_keepalives, pool);
}

void pool_keepalive_stop(struct sshpool *pool)
{
	if (pool->keepalive_timer)
		loop_timer_cancel(pool->loop, pool->keepalive_timer);
	pool->keepalive_timer = 0;
}

static void on_hello(struct sshpool_node *node, json_t *result, const char *code, const char *msg,
                     void *arg)
{
	struct sshpool *pool = node->pool;
	const struct agent_bin *bin;
	const char *got, *want;
	json_t *proto, *sha;

	if (!result) {
		if (node->state != SSHPOOL_NODE_FAILED)
			pool_node_fail(node, "agent", "%s: hello refused: %s", node->host,
			               msg ? msg : "no reason");
		return;
	}
	proto = json_object_get(result, "protocol");
	sha = json_object_get(result, "sha256");
	if (!json_is_integer(proto) || json_integer_value(proto) != PROTO_VERSION) {
		pool_node_fail(node, "protocol", "%s: the agent speaks protocol %lld, this head %d",
		               node->host, (long long)json_integer_value(proto), PROTO_VERSION);
		return;
	}
	bin = node->bin ? node->bin : &pool->agents.bins[0];
	got = json_string_value(bin->build_id[0] ? json_object_get(result, "build_id") : sha);
	want = bin->build_id[0] ? bin->build_id : bin->sha256;
	if (!got || strcmp(got, want) != 0) {
		/* Another build under this agent's name: replace it, once. */
		if (pool_node_agent_suspect(node))
			return;
		pool_node_fail(
		    node, "agent",
		    "%s: the agent in %s is build %.16s, expected %.16s, even after a fresh "
		    "upload",
		    node->host, node->dir ? node->dir : "its cache", got ? got : "unknown", want);
		return;
	}
	node->hello = json_incref(result);
	pool_keepalive_start(pool);
	pool_node_cancel_deadline(node);
	pool_node_set_state(node, SSHPOOL_NODE_READY);
	pool->active--;
	if (pool->h && pool->h->ready)
		pool->h->ready(pool, node, pool->harg);
	pool_fill_window(pool);
}

void pool_node_send_hello(struct sshpool_node *node)
{
	json_t *req = proto_request(0, "hello");

	json_object_set_new(req, "protocol", json_integer(PROTO_VERSION));
	json_object_set_new(req, "keepalive_ms", json_integer(keepalive_ms()));
	json_object_set_new(req, "head_grace_ms", json_integer(node->pool->opts.head_grace_ms));
	/* Without a build id, the agent proves its content by hashing itself. */
	if (!(node->bin ? node->bin : &node->pool->agents.bins[0])->build_id[0])
		json_object_set_new(req, "verify", json_true());
	/* The bootstrap deadline still runs; hello's own is a backstop. */
	sshpool_request(node, req, node->pool->opts.request_timeout_ms, on_hello, NULL);
}

static void on_request_timeout(struct loop *loop, void *arg)
{
	struct pending *p = arg;
	struct sshpool_node *node = p->node;
	char why[96];

	p->timer = 0;
	snprintf(why, sizeof(why), "the agent did not answer request %lld in time", p->id);
	trace_node(TRACE_STEPS, node->host, "request %lld %s: no answer after %lld ms", p->id,
	           p->type, (long long)(cd_now_ms() - p->sent_ms));
	/* Its agent may be stopped, wedged or cut off: find out which, and end
	 * it and its job, through a fresh session where the transport has one. */
	if (node->state == SSHPOOL_NODE_READY && sshpool_node_end(node, why) == 0)
		return;
	pool_node_fail(node, "request-timeout", "%s: %s", node->host, why);
}

int sshpool_request(struct sshpool_node *node, json_t *req_take, int timeout_ms,
                    sshpool_reply_cb cb, void *arg)
{
	return sshpool_request_progress(node, req_take, timeout_ms, NULL, cb, arg);
}

int sshpool_request_progress(struct sshpool_node *node, json_t *req_take, int timeout_ms,
                             sshpool_progress_cb progress_cb, sshpool_reply_cb cb, void *arg)
{
	struct pending *p;

	if (node->state != SSHPOOL_NODE_READY &&
	    !(node->state == SSHPOOL_NODE_STARTING && node->booted)) {
		json_decref(req_take);
		cb(node, NULL, "not-ready", "the node is not connected", arg);
		return CD_ERR_AGAIN;
	}
	p = cd_calloc(1, sizeof(*p));
	p->node = node;
	p->id = node->next_id++;
	p->cb = cb;
	p->progress_cb = progress_cb;
	p->arg = arg;
	snprintf(p->type, sizeof(p->type), "%s",
	         str_or(json_string_value(json_object_get(req_take, "type")), "?"));
	p->sent_ms = cd_now_ms();
	if (node->pending_tail)
		node->pending_tail->next = p;
	else
		node->pending = p;
	node->pending_tail = p;
	if (node->ending) {
		/* never sent: it fails with the node, as those in flight do */
		json_decref(req_take);
		return 0;
	}
	p->timer = loop_timer_add(node->pool->loop, timeout_ms > 0 ? timeout_ms : 30000,
	                          on_request_timeout, p);
	json_object_set_new(req_take, "id", json_integer(p->id));
	if (progress_cb)
		json_object_set_new(req_take, "progress", json_true());
	node_write(node, req_take);
	json_decref(req_take);
	return 0;
}
