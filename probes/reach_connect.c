/* SPDX-License-Identifier: MIT */
/*
 * reach_connect.c - the connector half of the reachability matrix (see
 * reach.h): reach_connect runs in the request's thread, every target a
 * non-blocking socket in one poll() loop, each with its own deadline, and
 * classifies each result by what happened and its errno.
 */
#include "probes/reach.h"
#include "probes/reach_internal.h"
#include "probes/reach_rdma.h"
#include "proto.h"
#include "sockaddr.h"
#include "probes/netprobe.h"
#include "cd.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define REACH_TIMEOUT_MS  3000 /* connect's default deadline per attempt */
#define REACH_TIMEOUT_MAX 600000

enum phase {
	PHASE_WAITING,    /* not started: no free slot yet */
	PHASE_CONNECTING, /* non-blocking connect under way */
	PHASE_SENDING,    /* connected, our line not all sent */
	PHASE_READING,    /* waiting for the answer line */
	PHASE_PMTU,       /* answered: the path-MTU probe over UDP (reach_pmtu.c) */
	PHASE_RDMA,       /* answered: the RDMA proof's exchange (reach_rdma.h) */
	PHASE_BULK,       /* answered: the bulk proof in both directions */
	PHASE_DONE,
};

/* Why a connected attempt got no valid answer. */
enum no_answer {
	NO_ANSWER_IN_TIME,
	NO_ANSWER_CLOSED,    /* the peer closed without a line */
	NO_ANSWER_TOO_LONG,  /* no newline within REACH_LINE_MAX bytes */
	NO_ANSWER_GARBAGE,   /* a line, but not ours: other magic or token */
	NO_ANSWER_SOCKET_ERR /* reset or another error; err says which */
};

struct attempt {
	/* from the request */
	json_int_t id;
	long long node;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	int bad_address; /* EINVAL: the address or port cannot be used */
	int bulk_wanted; /* the target asks for the bulk proof */
	int pmtu_wanted; /* the target asks for the path-MTU probe */
	int rdma_wanted; /* the target asks for the RDMA proof */

	/* progress */
	enum phase phase;
	int fd;
	int64_t start, deadline; /* µs */
	size_t sent, got;
	char answer[REACH_LINE_MAX];

	/* outcome */
	const char *result;
	int err;                           /* errno for refused/timeout/no-route/...; 0 if none */
	int64_t rtt_us;                    /* -1 until connected */
	long long peer_node;               /* wrong-peer: who answered */
	enum no_answer reason;             /* bad-answer: why */
	const char *bulk;                  /* NULL: not tried; "ok", "stalled", "broken" */
	size_t bulk_to_send, bulk_to_recv; /* what is left of bulk_bytes each way */
	int64_t bulk_us;                   /* the bulk proof's duration */
	int bulk_err;                      /* broken: the errno, 0 when the peer closed */
	int pmtu_probed;                   /* the probe ran: pmtu.lo is its answer */
	struct reach_pmtu pmtu;
	struct rdma_try *rdma; /* the RDMA proof; NULL when not asked for */
};

/* What each attempt sends: "CDREACH1 <token> <our node>\n", with
 * REACH_RDMA_SUFFIX (bit 1 of the index) and REACH_BULK_SUFFIX (bit 0). */
struct hello {
	char lines[4][REACH_LINE_MAX];
	size_t lens[4];
	size_t bulk_bytes; /* each way; 0: no bulk proof */
	const char *token;
	int timeout_ms;
};

/* The connector's bulk buffer: what it sends and what it reads into. One
 * for the whole request, so memory does not grow with the targets. */
static char bulk_buf[REACH_BULK_CHUNK];

static int read_target(json_t *t, struct attempt *a)
{
	json_t *id = json_object_get(t, "id"), *node = json_object_get(t, "node");
	const char *address = json_string_value(json_object_get(t, "address"));
	json_t *port = json_object_get(t, "port");
	long long scope_id = 0;

	if (!json_is_integer(id) || !json_is_integer(node) || !address || !json_is_integer(port) ||
	    proto_field_int(t, "scope_id", 0, UINT32_MAX, &scope_id) < 0)
		return -1;
	memset(a, 0, sizeof(*a));
	a->id = json_integer_value(id);
	a->node = json_integer_value(node);
	a->fd = -1;
	a->rtt_us = -1;
	a->phase = PHASE_WAITING;
	a->bulk_wanted = json_is_true(json_object_get(t, "bulk"));
	a->pmtu_wanted = json_is_true(json_object_get(t, "pmtu"));
	a->rdma_wanted = json_is_true(json_object_get(t, "rdma"));
	a->bad_address = json_integer_value(port) < 1 || json_integer_value(port) > 65535 ||
	                 cd_sockaddr_from_text(address, scope_id, (int)json_integer_value(port),
	                                       &a->addr, &a->addrlen) != 0;
	return 0;
}

static struct attempt *read_targets(json_t *targets, size_t *n, char *msg, size_t msglen)
{
	struct attempt *attempts;
	size_t i;

	if (!json_is_array(targets)) {
		snprintf(msg, msglen, "\"targets\" must be an array");
		return NULL;
	}
	*n = json_array_size(targets);
	attempts = cd_calloc(*n, sizeof(*attempts));
	for (i = 0; i < *n; i++) {
		if (read_target(json_array_get(targets, i), &attempts[i]) < 0) {
			snprintf(
			    msg, msglen,
			    "targets[%zu] needs integer \"id\", \"node\" and \"port\", a string "
			    "\"address\" and an optional integer \"scope_id\"",
			    i);
			free(attempts);
			return NULL;
		}
	}
	return attempts;
}

static void finish(struct attempt *a, const char *result, int err)
{
	if (a->fd >= 0)
		close(a->fd);
	a->fd = -1;
	a->phase = PHASE_DONE;
	a->result = result;
	a->err = err;
}

/* A failed connect's result, from its errno (immediate or from SO_ERROR). */
static void finish_connect_error(struct attempt *a, int err)
{
	switch (err) {
	case ECONNREFUSED:
		finish(a, "refused", err);
		break;
	case ETIMEDOUT:
		finish(a, "timeout", err);
		break;
	case EHOSTUNREACH:
		finish(a, "no-route", err);
		break;
	case ENETUNREACH:
		finish(a, "net-unreachable", err);
		break;
	default:
		finish(a, "error", err);
		break;
	}
}

static void finish_no_answer(struct attempt *a, enum no_answer reason, int err)
{
	a->reason = reason;
	finish(a, "bad-answer", err);
}

static void start_rdma(struct attempt *a);

/* After the answer (and the path-MTU probe): the RDMA proof, then the bulk
 * proof, or done. */
static void after_pmtu(struct attempt *a)
{
	if (a->rdma && !rdma_try_done(a->rdma) && a->phase != PHASE_RDMA) {
		start_rdma(a);
		if (a->phase == PHASE_RDMA)
			return;
	}
	if (a->bulk_to_send || a->bulk_to_recv) {
		a->phase = PHASE_BULK;
		a->bulk_us = reach_now_us();
		return;
	}
	finish(a, "ok", 0);
}

/*
 * The path-MTU probe takes at most half of what is left of the attempt's
 * deadline, so the bulk proof that follows keeps the other half; a round
 * waits 4 connect round trips for its echoes, REACH_PMTU_WAIT_MIN_US at
 * least (an agent busy with hundreds of peers answers late). 0 when the
 * probe is under way, -1 when it could not start (no UDP socket: not
 * probed).
 */
#define REACH_PMTU_WAIT_MIN_US 30000
static int start_pmtu(struct attempt *a, const struct hello *h)
{
	int64_t now = reach_now_us(), wait = 4 * a->rtt_us;

	if (wait < REACH_PMTU_WAIT_MIN_US)
		wait = REACH_PMTU_WAIT_MIN_US;
	if (reach_pmtu_start(&a->pmtu, (struct sockaddr *)&a->addr, a->addrlen, wait,
	                     now + (a->deadline - now) / 2) < 0)
		return -1;
	a->pmtu_probed = 1;
	a->phase = PHASE_PMTU;
	if (reach_pmtu_step(&a->pmtu, h->token, bulk_buf, sizeof(bulk_buf), now))
		after_pmtu(a);
	return 0;
}

/* Judges a complete answer line (newline cut). */
static void judge_answer(struct attempt *a, const struct hello *h)
{
	const char *token;
	long long node;

	if (reach_parse_line(a->answer, &token, &node) != 0 || strcmp(token, h->token) != 0) {
		finish_no_answer(a, NO_ANSWER_GARBAGE, 0);
		return;
	}
	if (node != a->node) {
		a->peer_node = node;
		finish(a, "wrong-peer", 0);
		return;
	}
	if (a->bulk_wanted && h->bulk_bytes)
		a->bulk_to_send = a->bulk_to_recv = h->bulk_bytes;
	if (a->pmtu_wanted && start_pmtu(a, h) == 0)
		return;
	after_pmtu(a);
}

static const char *hello_line(const struct attempt *a, const struct hello *h, size_t *len)
{
	int k = (a->bulk_wanted && h->bulk_bytes) | (a->rdma && !rdma_try_done(a->rdma)) << 1;

	*len = h->lens[k];
	return h->lines[k];
}

static void start_rdma(struct attempt *a)
{
	if (reach_rdma_start(a->rdma, a->fd))
		a->phase = PHASE_RDMA;
	if (rdma_try_done(a->rdma))
		after_pmtu(a);
}

static void advance_rdma(struct attempt *a, short revents)
{
	if (reach_rdma_advance(a->rdma, a->fd, revents))
		after_pmtu(a);
}

/* The bulk proof ends: the connection stays "ok" (the handshake passed);
 * bulk says whether large transfers do. */
static void finish_bulk(struct attempt *a, const char *bulk, int err)
{
	a->bulk = bulk;
	a->bulk_err = err;
	a->bulk_us = reach_now_us() - a->bulk_us;
	finish(a, "ok", 0);
}

/* One turn of the bulk proof: send what the socket takes, read what came. */
static void advance_bulk(struct attempt *a, short revents)
{
	int err, rc = reach_bulk_turn(a->fd, revents, bulk_buf, sizeof(bulk_buf), &a->bulk_to_send,
	                              &a->bulk_to_recv, &err);

	if (rc != 0)
		finish_bulk(a, rc > 0 ? "ok" : "broken", err);
}

static void send_hello(struct attempt *a, const struct hello *h)
{
	size_t len;
	const char *line = hello_line(a, h, &len);
	ssize_t n = send(a->fd, line + a->sent, len - a->sent, MSG_NOSIGNAL);

	if (n < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			finish_no_answer(a, NO_ANSWER_SOCKET_ERR, errno);
		return;
	}
	a->sent += (size_t)n;
	if (a->sent == len)
		a->phase = PHASE_READING;
}

static void on_connected(struct attempt *a, const struct hello *h)
{
	a->rtt_us = reach_now_us() - a->start;
	a->phase = PHASE_SENDING;
	send_hello(a, h);
}

static void read_answer(struct attempt *a, const struct hello *h)
{
	ssize_t n = recv(a->fd, a->answer + a->got, sizeof(a->answer) - 1 - a->got, 0);
	char *newline;

	if (n < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			finish_no_answer(a, NO_ANSWER_SOCKET_ERR, errno);
		return;
	}
	if (n == 0) {
		finish_no_answer(a, NO_ANSWER_CLOSED, 0);
		return;
	}
	a->got += (size_t)n;
	a->answer[a->got] = '\0';
	newline = memchr(a->answer, '\n', a->got);
	if (newline) {
		*newline = '\0';
		judge_answer(a, h);
		/* the listener's bulk follows its line at once */
		if (a->bulk_to_recv) {
			size_t extra = a->got - (size_t)(newline + 1 - a->answer);

			a->bulk_to_recv -= extra < a->bulk_to_recv ? extra : a->bulk_to_recv;
		}
	} else if (a->got == sizeof(a->answer) - 1) {
		finish_no_answer(a, NO_ANSWER_TOO_LONG, 0);
	}
}

/* The connect finished one way or the other: SO_ERROR says which. */
static void complete_connect(struct attempt *a, const struct hello *h)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(a->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	if (err)
		finish_connect_error(a, err);
	else
		on_connected(a, h);
}

/* Opens the socket and starts the connect. Returns 0 when the attempt is
 * started or already finished, -1 when no fd is free right now (it stays
 * PHASE_WAITING: retry once another attempt closes its socket). */
static int start_attempt(struct attempt *a, const struct hello *h, int others_open)
{
	if (a->bad_address) {
		finish(a, "error", EINVAL);
		return 0;
	}
	a->fd = socket(a->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (a->fd < 0) {
		if ((errno == EMFILE || errno == ENFILE) && others_open)
			return -1;
		finish(a, "error", errno);
		return 0;
	}
	a->start = reach_now_us();
	a->deadline = a->start + (int64_t)h->timeout_ms * 1000;
	a->phase = PHASE_CONNECTING;
	if (connect(a->fd, (struct sockaddr *)&a->addr, a->addrlen) == 0)
		on_connected(a, h);
	else if (errno != EINPROGRESS)
		finish_connect_error(a, errno);
	return 0;
}

static void advance_attempt(struct attempt *a, short revents, const struct hello *h)
{
	if (!revents && a->phase == PHASE_RDMA && rdma_try_polling(a->rdma))
		advance_rdma(a, 0);
	if (!revents)
		return;
	switch (a->phase) {
	case PHASE_CONNECTING:
		complete_connect(a, h);
		break;
	case PHASE_SENDING:
		send_hello(a, h);
		break;
	case PHASE_READING:
		read_answer(a, h);
		break;
	case PHASE_PMTU:
		if (reach_pmtu_read(&a->pmtu, h->token, bulk_buf, sizeof(bulk_buf), reach_now_us()))
			after_pmtu(a);
		break;
	case PHASE_BULK:
		advance_bulk(a, revents);
		break;
	case PHASE_RDMA:
		advance_rdma(a, revents);
		break;
	default:
		break;
	}
}

static void expire_attempt(struct attempt *a, const struct hello *h, int64_t now)
{
	if (a->phase == PHASE_PMTU && now >= reach_pmtu_wake(&a->pmtu) &&
	    reach_pmtu_step(&a->pmtu, h->token, bulk_buf, sizeof(bulk_buf), now))
		after_pmtu(a);
	if (a->phase == PHASE_DONE || now < a->deadline)
		return;
	if (a->phase == PHASE_PMTU) {
		/* cannot happen unless the clock jumps: the probe's own deadline
		 * is earlier */
		reach_pmtu_abort(&a->pmtu);
		after_pmtu(a);
		if (a->phase == PHASE_DONE)
			return;
	}
	if (a->phase == PHASE_RDMA) {
		rdma_try_expire(a->rdma, h->timeout_ms);
		finish(a, "ok", 0);
		return;
	}
	if (a->phase == PHASE_CONNECTING)
		finish(a, "timeout", ETIMEDOUT);
	else if (a->phase == PHASE_BULK)
		finish_bulk(a, "stalled", 0);
	else
		finish_no_answer(a, NO_ANSWER_IN_TIME, 0);
}

static short events_for(const struct attempt *a)
{
	if (a->phase == PHASE_BULK)
		return POLLIN | (a->bulk_to_send ? POLLOUT : 0);
	if (a->phase == PHASE_PMTU || a->phase == PHASE_RDMA)
		return POLLIN;
	return a->phase == PHASE_READING ? POLLIN : POLLOUT;
}

/* The attempts in flight: indices into the attempts array, and their
 * pollfds at the same positions. */
struct flight {
	size_t *idx;
	struct pollfd *pfds;
	size_t n;
};

/* Starts waiting attempts while slots and fds are free. *next is the first
 * attempt not yet started. */
static void start_waiting(struct attempt *attempts, size_t count, size_t *next, struct flight *f,
                          const struct hello *h)
{
	while (*next < count && f->n < REACH_MAX_INFLIGHT) {
		struct attempt *a = &attempts[*next];

		if (start_attempt(a, h, f->n > 0) < 0)
			return;
		if (a->phase != PHASE_DONE)
			f->idx[f->n++] = *next;
		(*next)++;
	}
}

/* Handles poll's events and deadlines, then drops finished attempts. */
static void advance_flight(struct attempt *attempts, struct flight *f, const struct hello *h)
{
	int64_t now = reach_now_us();
	size_t kept = 0;

	for (size_t i = 0; i < f->n; i++) {
		struct attempt *a = &attempts[f->idx[i]];

		advance_attempt(a, f->pfds[i].revents, h);
		expire_attempt(a, h, now);
		if (a->phase != PHASE_DONE)
			f->idx[kept++] = f->idx[i];
	}
	f->n = kept;
}

static int64_t earliest_deadline(const struct attempt *attempts, const struct flight *f)
{
	int64_t when = INT64_MAX;

	for (size_t i = 0; i < f->n; i++) {
		const struct attempt *a = &attempts[f->idx[i]];
		int64_t at = a->phase == PHASE_PMTU ? reach_pmtu_wake(&a->pmtu) : a->deadline;

		/* a write's completion has no fd here: look every millisecond */
		if (a->phase == PHASE_RDMA && rdma_try_polling(a->rdma) &&
		    reach_now_us() + 1000 < at)
			at = reach_now_us() + 1000;

		if (at < when)
			when = at;
	}
	return when;
}

static void run_attempts(struct attempt *attempts, size_t count, const struct hello *h)
{
	struct flight f = {.idx = cd_calloc(REACH_MAX_INFLIGHT, sizeof(*f.idx)),
	                   .pfds = cd_calloc(REACH_MAX_INFLIGHT, sizeof(*f.pfds))};
	size_t next = 0;

	for (;;) {
		start_waiting(attempts, count, &next, &f, h);
		if (f.n == 0 && next == count)
			break;
		for (size_t i = 0; i < f.n; i++) {
			const struct attempt *a = &attempts[f.idx[i]];

			f.pfds[i] =
			    (struct pollfd){.fd = a->phase == PHASE_PMTU ? a->pmtu.fd : a->fd,
			                    .events = events_for(a)};
		}
		if (poll(f.pfds, f.n,
		         reach_poll_ms_until(earliest_deadline(attempts, &f), reach_now_us())) <
		        0 &&
		    errno != EINTR)
			memset(f.pfds, 0, f.n * sizeof(*f.pfds)); /* deadlines still apply */
		advance_flight(attempts, &f, h);
	}
	free(f.idx);
	free(f.pfds);
}

static const char *no_answer_text(const struct attempt *a, int timeout_ms, char *buf, size_t len)
{
	switch (a->reason) {
	case NO_ANSWER_IN_TIME:
		snprintf(buf, len, "connected, but no answer within %d ms", timeout_ms);
		break;
	case NO_ANSWER_CLOSED:
		snprintf(buf, len, "connected, but the peer closed without answering");
		break;
	case NO_ANSWER_TOO_LONG:
		snprintf(buf, len, "connected, but the peer sent %d bytes without a newline",
		         REACH_LINE_MAX - 1);
		break;
	case NO_ANSWER_GARBAGE:
		snprintf(buf, len,
		         "connected, but the answer is not a " REACH_MAGIC " line with our token");
		break;
	case NO_ANSWER_SOCKET_ERR:
		snprintf(buf, len, "connected, then: %s", strerror(a->err));
		break;
	}
	return buf;
}

static void bulk_json(json_t *row, const struct attempt *a, const struct hello *h)
{
	json_object_set_new(row, "bulk", json_string(a->bulk));
	json_object_set_new(row, "bulk_bytes", json_integer((json_int_t)h->bulk_bytes));
	json_object_set_new(row, "bulk_ms", json_integer(a->bulk_us / 1000));
	json_object_set_new(row, "bulk_sent",
	                    json_integer((json_int_t)(h->bulk_bytes - a->bulk_to_send)));
	json_object_set_new(row, "bulk_received",
	                    json_integer((json_int_t)(h->bulk_bytes - a->bulk_to_recv)));
	if (a->bulk_err)
		json_object_set_new(row, "bulk_errno_name",
		                    json_string(reach_errno_name(a->bulk_err)));
}

static json_t *attempt_json(const struct attempt *a, const struct hello *h)
{
	json_t *row = json_pack("{sIss}", "id", a->id, "result", a->result);
	char text[160];

	if (a->rtt_us >= 0)
		json_object_set_new(row, "rtt_us", json_integer(a->rtt_us));
	if (a->bulk)
		bulk_json(row, a, h);
	if (a->pmtu_probed) {
		json_object_set_new(row, "pmtu", json_integer(a->pmtu.lo));
		json_object_set_new(row, "pmtu_max", json_integer(a->pmtu.max));
	}
	if (a->rdma) {
		rdma_try_stop(a->rdma, "not tested", "the TCP connection did not get that far");
		rdma_try_json(a->rdma, row);
	}
	if (strcmp(a->result, "ok") == 0)
		return row;
	if (a->err)
		json_object_set_new(row, "errno_name", json_string(reach_errno_name(a->err)));
	if (strcmp(a->result, "wrong-peer") == 0) {
		json_object_set_new(row, "peer_node", json_integer(a->peer_node));
		snprintf(text, sizeof(text), "node %lld answered, not node %lld", a->peer_node,
		         a->node);
	} else if (strcmp(a->result, "bad-answer") == 0) {
		no_answer_text(a, h->timeout_ms, text, sizeof(text));
	} else {
		snprintf(text, sizeof(text), "%s", strerror(a->err));
	}
	json_object_set_new(row, "message", json_string(text));
	return row;
}

/* A try per target that asks for the RDMA proof, on one verbs side for
 * the request (reach_rdma_connect_side); the side is returned. */
static struct rdma_side *start_rdma_tries(json_t *req, struct attempt *attempts, size_t count,
                                          const char *token)
{
	struct rdma_side *side;
	size_t wanted = 0;
	char why[192];

	for (size_t i = 0; i < count; i++)
		wanted += attempts[i].rdma_wanted;
	if (!wanted)
		return NULL;
	side = reach_rdma_connect_side(req, wanted, token, why, sizeof(why));
	for (size_t i = 0; i < count; i++) {
		if (attempts[i].rdma_wanted)
			attempts[i].rdma = rdma_try_new(side, why);
	}
	return side;
}

json_t *reach_connect(json_t *req, const char **code, char *msg, size_t msglen)
{
	long long node, timeout_ms = REACH_TIMEOUT_MS, bulk_bytes = 0, fulls_before, fulls_after;
	long long rdma_bytes;
	struct rdma_spec spec;
	struct rdma_side *side;
	struct attempt *attempts;
	struct hello h;
	json_t *results;
	size_t count;

	if (reach_read_token_and_node(req, &h.token, &node, msg, msglen) < 0) {
		*code = "bad-request";
		return NULL;
	}
	if (proto_field_int(req, "timeout_ms", 1, REACH_TIMEOUT_MAX, &timeout_ms) < 0)
		return proto_handler_fail(code, "bad-request", msg, msglen,
		                          "\"timeout_ms\" must be 1 to %d", REACH_TIMEOUT_MAX);
	if (proto_field_int(req, "bulk_bytes", 0, REACH_BULK_MAX, &bulk_bytes) < 0)
		return proto_handler_fail(code, "bad-request", msg, msglen,
		                          "\"bulk_bytes\" must be 0 to %d", REACH_BULK_MAX);
	if (proto_field_int(req, "rdma_bytes", 1, RDMA_BYTES_MAX, &rdma_bytes) < 0)
		return proto_handler_fail(code, "bad-request", msg, msglen,
		                          "\"rdma_bytes\" must be 1 to %d", RDMA_BYTES_MAX);
	if (reach_rdma_spec_read(req, &spec, msg, msglen) < 0) {
		*code = "bad-request";
		return NULL;
	}
	attempts = read_targets(json_object_get(req, "targets"), &count, msg, msglen);
	if (!attempts) {
		*code = "bad-request";
		return NULL;
	}
	reach_raise_fd_limit_once();
	fulls_before = netprobe_neigh_table_fulls();
	h.timeout_ms = (int)timeout_ms;
	h.bulk_bytes = (size_t)bulk_bytes;
	for (int k = 0; k < 4; k++)
		h.lens[k] = (size_t)snprintf(
		    h.lines[k], sizeof(h.lines[k]), REACH_MAGIC " %s %lld%s%s%.0lld\n", h.token,
		    node, k & 2 ? REACH_RDMA_SUFFIX : "", k & 1 ? REACH_BULK_SUFFIX : "",
		    k & 1 ? bulk_bytes : 0);
	side = start_rdma_tries(req, attempts, count, h.token);
	run_attempts(attempts, count, &h);
	results = json_array();
	for (size_t i = 0; i < count; i++) {
		json_array_append_new(results, attempt_json(&attempts[i], &h));
		rdma_try_free(attempts[i].rdma);
	}
	rdma_side_free(side);
	free(attempts);
	fulls_after = netprobe_neigh_table_fulls();
	return json_pack("{soso}", "results", results, "neigh_table_fulls",
	                 fulls_before < 0 || fulls_after < 0
	                     ? json_null()
	                     : json_integer(fulls_after - fulls_before));
}
