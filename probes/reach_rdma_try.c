/* SPDX-License-Identifier: MIT */
/*
 * reach_rdma_try.c - the two halves of the RDMA proof's exchange
 * (rdma_pair.h gives the lines, reach_rdma.h the contract): the
 * connector's try (its endpoint, the write, its completion, the listener's
 * verdict) and the listener's serve (a buffer and a QP for one connector,
 * then the bytes checked against the run's pattern).
 */
#include "probes/reach_rdma.h"
#include "probes/reach_rdma_internal.h"
#include "cd.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Listener buffers alive at once (each up to RDMA_BYTES_MAX): more
 * connectors at once are answered "no" and go on without the proof. */
#define REACH_RDMA_SERVES_MAX 16

enum try_state {
	TRY_WAIT_EP,      /* the write line sent, waiting for the listener's endpoint */
	TRY_WAIT_CQE,     /* the write posted, waiting for its completion */
	TRY_WAIT_VERDICT, /* "done" sent, waiting for "verified" */
	TRY_DONE,
};

struct rdma_try {
	struct rdma_side *s;
	struct cd_ibv_qp *qp;
	enum try_state state;
	const char *result; /* "ok", "failed", "not tested" */
	char why[192];
	struct rdma_endpoint self, peer;
	int have_peer;
	size_t bytes;
	int64_t posted_us, done_us;
	int completed, status; /* set by the side's poll */
	struct rdma_linebuf in;
};

static void try_end(struct rdma_try *t, const char *result)
{
	t->result = result;
	t->state = TRY_DONE;
}

struct rdma_try *rdma_try_new(struct rdma_side *s, const char *why_not)
{
	struct rdma_try *t = cd_calloc(1, sizeof(*t));

	t->s = s;
	t->state = TRY_WAIT_EP;
	if (!s) {
		snprintf(t->why, sizeof(t->why), "%s", why_not ? why_not : "no RDMA side");
		try_end(t, "not tested");
		return t;
	}
	t->bytes = s->src_bytes;
	t->qp = rdma_qp_new(s, t->why, sizeof(t->why));
	if (!t->qp) {
		try_end(t, "failed");
		return t;
	}
	rdma_local_endpoint(s, t->qp, (uintptr_t)s->src, s->src_mr->rkey, &t->self);
	return t;
}

void rdma_try_free(struct rdma_try *t)
{
	if (!t)
		return;
	if (t->qp)
		t->s->v.destroy_qp(t->qp);
	free(t);
}

size_t rdma_try_hello(struct rdma_try *t, char *buf, size_t cap, int64_t now_us)
{
	char ep[RDMA_LINE_MAX];
	int n;

	if (t->state != TRY_WAIT_EP)
		return 0;
	if (rdma_endpoint_format(&t->self, ep, sizeof(ep)) < 0 ||
	    (n = snprintf(buf, cap, RDMA_MAGIC " write %zu %s\n", t->bytes, ep)) < 0 ||
	    (size_t)n >= cap) {
		snprintf(t->why, sizeof(t->why), "this end's endpoint does not fit a line");
		try_end(t, "failed");
		return 0;
	}
	return (size_t)n;
}

static void reply_line(char *reply, size_t cap, size_t *rlen, const char *what)
{
	int n = snprintf(reply, cap, RDMA_MAGIC " %s\n", what);

	*rlen = n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

/* The listener said it cannot take part: its words, as the peer's. */
static void peer_not_tested(struct rdma_try *t, const char *why)
{
	if (strcmp(why, "link layers differ") == 0)
		snprintf(t->why, sizeof(t->why), "%s", why);
	else if (strncmp(why, "no ", 3) == 0)
		snprintf(t->why, sizeof(t->why), "peer has %s", why);
	else
		snprintf(t->why, sizeof(t->why), "peer: %s", why);
	try_end(t, "not tested");
}

static void post_write(struct rdma_try *t, char *reply, size_t cap, size_t *rlen)
{
	struct cd_ibv_sge sge = {
	    .addr = (uintptr_t)t->s->src, .length = (uint32_t)t->bytes, .lkey = t->s->src_mr->lkey};
	struct cd_ibv_send_wr wr = {.wr_id = (uintptr_t)t,
	                            .sg_list = &sge,
	                            .num_sge = 1,
	                            .opcode = CD_IBV_WR_RDMA_WRITE,
	                            .send_flags = CD_IBV_SEND_SIGNALED};
	struct cd_ibv_send_wr *bad = NULL;
	int rc;

	wr.wr.rdma.remote_addr = t->peer.addr;
	wr.wr.rdma.rkey = t->peer.rkey;
	if (rdma_qp_connect(t->s, t->qp, &t->self, &t->peer, t->why, sizeof(t->why)) < 0) {
		try_end(t, strcmp(t->why, "link layers differ") == 0 ? "not tested" : "failed");
		reply_line(reply, cap, rlen, "failed");
		return;
	}
	t->posted_us = reach_now_us();
	/* ibv_post_send is verbs.h's inline call through the context's ops */
	rc = t->qp->context->ops.post_send(t->qp, &wr, &bad);
	if (rc != 0) {
		snprintf(t->why, sizeof(t->why), "ibv_post_send: %s", strerror(rc));
		try_end(t, "failed");
		reply_line(reply, cap, rlen, "failed");
		return;
	}
	t->state = TRY_WAIT_CQE;
}

void rdma_try_on_line(struct rdma_try *t, const char *line, size_t n, char *reply, size_t cap,
                      size_t *rlen)
{
	struct rdma_line l;

	*rlen = 0;
	if (t->state == TRY_DONE)
		return;
	if (rdma_line_parse(line, n, &l) != 0) {
		snprintf(t->why, sizeof(t->why),
		         "the listener's answer is not a " RDMA_MAGIC " line");
		try_end(t, "failed");
		return;
	}
	if (t->state == TRY_WAIT_EP && l.kind == RDMA_LINE_EP) {
		t->peer = l.ep;
		t->have_peer = 1;
		post_write(t, reply, cap, rlen);
	} else if (t->state == TRY_WAIT_EP && l.kind == RDMA_LINE_NO) {
		peer_not_tested(t, l.why);
	} else if (t->state == TRY_WAIT_EP && l.kind == RDMA_LINE_ERROR) {
		snprintf(t->why, sizeof(t->why), "peer: %s", l.why);
		try_end(t, "failed");
	} else if (t->state == TRY_WAIT_VERDICT && l.kind == RDMA_LINE_VERIFIED) {
		try_end(t, "ok");
	} else if (t->state == TRY_WAIT_VERDICT && l.kind == RDMA_LINE_BAD) {
		snprintf(t->why, sizeof(t->why),
		         "the write completed, but the listener found byte %ld wrong", l.offset);
		try_end(t, "failed");
	} else {
		snprintf(t->why, sizeof(t->why), "the listener's answer is out of order");
		try_end(t, "failed");
	}
}

/* Every completion the side's queue holds goes to its try (wr_id). */
static void side_poll(struct rdma_side *s, int64_t now_us)
{
	struct cd_ibv_wc wc[16];
	int n;

	/* ibv_poll_cq is verbs.h's inline call through the context's ops */
	while ((n = s->cq->context->ops.poll_cq(s->cq, 16, wc)) > 0) {
		for (int i = 0; i < n; i++) {
			struct rdma_try *x = (struct rdma_try *)(uintptr_t)wc[i].wr_id;

			x->completed = 1;
			x->status = wc[i].status;
			x->done_us = now_us;
		}
	}
}

void rdma_try_poll(struct rdma_try *t, char *reply, size_t cap, size_t *rlen, int64_t now_us)
{
	char text[32];

	*rlen = 0;
	if (t->state != TRY_WAIT_CQE)
		return;
	side_poll(t->s, now_us);
	if (!t->completed)
		return;
	if (t->status != CD_IBV_WC_SUCCESS) {
		snprintf(t->why, sizeof(t->why), "%s", rdma_side_status(t->s, t->status));
		try_end(t, "failed");
		reply_line(reply, cap, rlen, "failed");
		return;
	}
	snprintf(text, sizeof(text), "done %zu", t->bytes);
	reply_line(reply, cap, rlen, text);
	t->state = TRY_WAIT_VERDICT;
}

int rdma_try_polling(const struct rdma_try *t)
{
	return t->state == TRY_WAIT_CQE;
}

int rdma_try_done(const struct rdma_try *t)
{
	return t->state == TRY_DONE;
}

void rdma_try_expire(struct rdma_try *t, int timeout_ms)
{
	static const char *const waited[] = {
	    [TRY_WAIT_EP] = "no RDMA endpoint from the listener",
	    [TRY_WAIT_CQE] = "the RDMA write did not complete",
	    [TRY_WAIT_VERDICT] = "the listener did not confirm the bytes",
	};

	if (t->state == TRY_DONE)
		return;
	snprintf(t->why, sizeof(t->why), "%s within %d ms", waited[t->state], timeout_ms);
	try_end(t, "failed");
}

void rdma_try_stop(struct rdma_try *t, const char *result, const char *why)
{
	if (t->state == TRY_DONE)
		return;
	snprintf(t->why, sizeof(t->why), "%s", why);
	try_end(t, result);
}

static json_t *end_json(const struct rdma_endpoint *e)
{
	return json_pack("{sssisi}", "device", e->device, "port", e->port, "gid_index",
	                 e->gid_index);
}

void rdma_try_json(const struct rdma_try *t, json_t *row)
{
	const char *result = t->result ? t->result : "failed";

	json_object_set_new(row, "rdma", json_string(result));
	if (strcmp(result, "ok") != 0)
		json_object_set_new(row, "rdma_why", json_string(t->why));
	if (t->s && t->qp)
		json_object_set_new(row, "rdma_local", end_json(&t->self));
	if (t->have_peer) {
		json_object_set_new(row, "rdma_peer", end_json(&t->peer));
		json_object_set_new(
		    row, "active_mtu",
		    json_integer(t->self.mtu < t->peer.mtu ? t->self.mtu : t->peer.mtu));
	}
	if (strcmp(result, "ok") == 0) {
		json_object_set_new(row, "rdma_bytes", json_integer((json_int_t)t->bytes));
		json_object_set_new(row, "rdma_ms",
		                    json_real((double)(t->done_us - t->posted_us) / 1000.0));
	}
}

static void send_or_stop(struct rdma_try *t, int fd, const char *line, size_t len)
{
	if (len && reach_rdma_send_line(fd, line, len) < 0)
		rdma_try_stop(t, "failed", "the listener closed the connection");
}

int reach_rdma_start(struct rdma_try *t, int fd)
{
	char line[RDMA_LINE_MAX];
	size_t len = rdma_try_hello(t, line, sizeof(line), reach_now_us());

	send_or_stop(t, fd, line, len);
	return len > 0;
}

int reach_rdma_advance(struct rdma_try *t, int fd, short revents)
{
	char reply[RDMA_LINE_MAX];
	size_t len, rlen = 0;
	int rc = 1;

	if (revents & (POLLIN | POLLHUP | POLLERR)) {
		while (!rdma_try_done(t) && (rc = reach_rdma_read_line(fd, &t->in, &len)) > 0) {
			rdma_try_on_line(t, t->in.buf, len, reply, sizeof(reply), &rlen);
			send_or_stop(t, fd, reply, rlen);
		}
		if (rc < 0)
			rdma_try_stop(t, "failed", "the listener closed the connection");
	}
	rdma_try_poll(t, reply, sizeof(reply), &rlen, reach_now_us());
	send_or_stop(t, fd, reply, rlen);
	return rdma_try_done(t);
}

/* ---------------------------------------------------------- the listener */

struct rdma_serve {
	struct rdma_side *s;
	char why_not[160];
	struct cd_ibv_qp *qp;
	struct cd_ibv_mr *mr;
	unsigned char *buf;
	size_t bytes;
	int answered; /* our endpoint went out: now "done" or "failed" */
	struct rdma_linebuf in;
};

static int serves; /* alive with a buffer; the listener thread's only */

struct rdma_serve *rdma_serve_new(struct rdma_side *s, const char *why_not)
{
	struct rdma_serve *p = cd_calloc(1, sizeof(*p));

	p->s = s;
	snprintf(p->why_not, sizeof(p->why_not), "%s", why_not ? why_not : "no RDMA side");
	return p;
}

void rdma_serve_free(struct rdma_serve *p)
{
	if (!p)
		return;
	if (p->qp)
		p->s->v.destroy_qp(p->qp);
	if (p->mr)
		p->s->v.dereg_mr(p->mr);
	if (p->buf) {
		free(p->buf);
		serves--;
	}
	free(p);
}

/* A buffer of the bytes asked for, registered for the peer's write, and a
 * QP at RTR/RTS toward its endpoint, its endpoint's words in why: 0. Or
 * why it cannot take part (-1: "no room...", "link layers differ") or what
 * failed (-2: "ibv_reg_mr: ..."). */
static int serve_setup(struct rdma_serve *p, const struct rdma_line *l, char *why, size_t len)
{
	struct rdma_endpoint self;

	if (serves >= REACH_RDMA_SERVES_MAX) {
		snprintf(why, len, "no room: %d RDMA proofs already under way there",
		         REACH_RDMA_SERVES_MAX);
		return -1;
	}
	p->bytes = (size_t)l->bytes;
	p->buf = calloc(1, p->bytes);
	if (!p->buf) {
		snprintf(why, len, "no memory for %zu bytes", p->bytes);
		return -1;
	}
	serves++;
	p->mr = p->s->v.reg_mr(p->s->pd, p->buf, p->bytes,
	                       CD_IBV_ACCESS_LOCAL_WRITE | CD_IBV_ACCESS_REMOTE_WRITE);
	if (!p->mr) {
		snprintf(why, len, "ibv_reg_mr: %s", strerror(errno));
		return -2;
	}
	p->qp = rdma_qp_new(p->s, why, len);
	if (!p->qp)
		return -2;
	rdma_local_endpoint(p->s, p->qp, (uintptr_t)p->buf, p->mr->rkey, &self);
	if (rdma_qp_connect(p->s, p->qp, &self, &l->ep, why, len) < 0)
		return strcmp(why, "link layers differ") == 0 ? -1 : -2;
	return rdma_endpoint_format(&self, why, len) < 0 ? -2 : 0;
}

/* The listener's answer to a write line: "ep ...", "no ..." or "error ...". */
static void answer_write(struct rdma_serve *p, const struct rdma_line *l, char *text, size_t len)
{
	static const char *const kinds[] = {"ep ", "no ", "error "};
	int rc;
	size_t k;

	if (!p->s) {
		snprintf(text, len, "no %s", p->why_not);
		return;
	}
	rc = serve_setup(p, l, text + 6, len - 6);
	k = (size_t)-rc;
	memmove(text + strlen(kinds[k]), text + 6, strlen(text + 6) + 1);
	memcpy(text, kinds[k], strlen(kinds[k]));
	p->answered = rc == 0;
}

int rdma_serve_on_line(struct rdma_serve *p, const char *line, size_t n, const char *token,
                       char *reply, size_t cap, size_t *rlen)
{
	struct rdma_line l;
	char text[RDMA_LINE_MAX];
	long bad;

	*rlen = 0;
	if (rdma_line_parse(line, n, &l) != 0)
		return -1;
	if (!p->answered && l.kind == RDMA_LINE_WRITE) {
		answer_write(p, &l, text, sizeof(text));
		reply_line(reply, cap, rlen, text);
		return p->answered ? 0 : 1;
	}
	if (p->answered && l.kind == RDMA_LINE_DONE) {
		bad = (size_t)l.bytes != p->bytes ? 0 : rdma_pattern_check(p->buf, p->bytes, token);
		if (bad < 0)
			snprintf(text, sizeof(text), "verified");
		else
			snprintf(text, sizeof(text), "bad %ld", bad);
		reply_line(reply, cap, rlen, text);
		return 1;
	}
	if (p->answered && l.kind == RDMA_LINE_FAILED)
		return 1;
	return -1;
}

int reach_rdma_serve_turn(struct rdma_serve *p, int fd, const char *token)
{
	char reply[RDMA_LINE_MAX];
	size_t len, rlen;
	int rc = 0, over = 0;

	while (!over && (rc = reach_rdma_read_line(fd, &p->in, &len)) > 0) {
		over = rdma_serve_on_line(p, p->in.buf, len, token, reply, sizeof(reply), &rlen);
		if (over < 0 || (rlen && reach_rdma_send_line(fd, reply, rlen) < 0))
			return -1;
	}
	return over ? 1 : rc < 0 ? -1 : 0;
}
