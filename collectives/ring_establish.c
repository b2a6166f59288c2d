/* SPDX-License-Identifier: MIT */
/*
 * ring_establish.c - forming the ring (see ring.h): the listener, then one
 * poll() loop that connects o->conns sockets to the right neighbour and
 * sends each its hello, while it accepts connections on the listener and
 * keeps those whose hello is the left neighbour's. A stray client (wrong
 * token, rank or index, garbage, silence) is closed without an answer and
 * the wait goes on.
 */
#include "collectives/ring.h"
#include "collectives/ring_internal.h"
#include "cd.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define RING_BACKLOG       128
#define RING_PENDING_MAX   32   /* accepted clients whose hello is still awaited */
#define RING_HELLO_WAIT_MS 2000 /* a client has this long to send its hello */

enum out_phase {
	OUT_CONNECTING, /* non-blocking connect under way */
	OUT_SENDING,    /* connected, the hello not all sent */
	OUT_READING,    /* waiting for the answer */
	OUT_DONE,       /* answered: the connection is the ring's */
};

/* One of our connections to the right neighbour. */
struct outgoing {
	enum out_phase phase;
	size_t sent, got;
	char hello[RING_LINE_MAX];
	size_t hello_len;
	char answer[RING_LINE_MAX];
};

/* An accepted client whose hello is not complete yet. */
struct pending {
	int fd;
	int64_t deadline; /* ms: closed unanswered after this */
	size_t got;
	char line[RING_LINE_MAX];
};

struct establish {
	struct ring *r;
	const struct ring_opts *o;
	int listen_fd;
	const struct sockaddr *right;
	socklen_t right_len;
	int64_t deadline; /* ms: connect_timeout_ms from the start */
	struct outgoing out[RING_MAX_CONNS];
	int answered; /* outgoing connections in OUT_DONE */
	int accepted; /* from_left slots taken */
	struct pending pending[RING_PENDING_MAX];
	size_t npending;
	struct ring_error *e;
};

/* --- the listener ------------------------------------------------------- */

int ring_listen(const struct sockaddr *addr, socklen_t len, int *fd, int *port, char *err,
                size_t errlen)
{
	char host[RING_HOST_MAX];
	struct sockaddr_storage bound;
	socklen_t bound_len = sizeof(bound);
	int s, saved, one = 1;

	ring_host_text(addr, host, sizeof(host));
	s = socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s < 0)
		return cd_errf(err, errlen, CD_ERR_IO, "socket for %s: %s", host, strerror(errno));
	/* A fixed port is free again at once after an earlier run. */
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(s, addr, len) < 0 || listen(s, RING_BACKLOG) < 0 ||
	    getsockname(s, (struct sockaddr *)&bound, &bound_len) < 0) {
		saved = errno;
		close(s);
		return cd_errf(err, errlen, CD_ERR_IO, "cannot listen on %s port %d: %s", host,
		               ring_port_of(addr), strerror(saved));
	}
	*fd = s;
	*port = ring_port_of((struct sockaddr *)&bound);
	return 0;
}

/* --- options ------------------------------------------------------------- */

int ring_token_valid(const char *token)
{
	size_t len = token ? strlen(token) : 0;

	if (len < 1 || len > RING_TOKEN_MAX)
		return 0;
	for (size_t i = 0; i < len; i++) {
		char c = token[i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
			return 0;
	}
	return 1;
}

static int right_is_valid(const struct sockaddr *right, socklen_t len)
{
	if (!right)
		return 0;
	if (right->sa_family == AF_INET)
		return len >= (socklen_t)sizeof(struct sockaddr_in);
	if (right->sa_family == AF_INET6)
		return len >= (socklen_t)sizeof(struct sockaddr_in6);
	return 0;
}

/* 0 when o (and, with more than one rank, listen_fd and right) can form a
 * ring; -1 with e filled in otherwise. */
static int check_opts(const struct ring_opts *o, int listen_fd, const struct sockaddr *right,
                      socklen_t right_len, struct ring_error *e)
{
	if (o->nranks < 1 || o->nranks > COLL_MAX_RANKS || o->rank < 0 || o->rank >= o->nranks)
		return ring_fail(e, RING_BAD_ARG, -1, 0,
		                 "rank %d of %d: need 0 <= rank < nranks <= %d", o->rank, o->nranks,
		                 COLL_MAX_RANKS);
	if (o->conns < 1 || o->conns > RING_MAX_CONNS)
		return ring_fail(e, RING_BAD_ARG, -1, 0, "conns %d: need 1 to %d", o->conns,
		                 RING_MAX_CONNS);
	if (!ring_token_valid(o->token))
		return ring_fail(e, RING_BAD_ARG, -1, 0,
		                 "the token must be 1 to %d characters [0-9A-Za-z]",
		                 RING_TOKEN_MAX);
	if (o->connect_timeout_ms < 1 || o->stall_ms < 1 || o->abort_fd < -1)
		return ring_fail(
		    e, RING_BAD_ARG, -1, 0,
		    "connect_timeout_ms %d, stall_ms %d, abort_fd %d: need >= 1, >= 1, "
		    ">= -1",
		    o->connect_timeout_ms, o->stall_ms, o->abort_fd);
	if (o->nranks > 1 && (listen_fd < 0 || !right_is_valid(right, right_len)))
		return ring_fail(e, RING_BAD_ARG, -1, 0,
		                 "%d ranks need a listener and the right neighbour's IPv4 or IPv6 "
		                 "address",
		                 o->nranks);
	return 0;
}

/* --- sockets ------------------------------------------------------------- */

/* TCP_NODELAY: a small message's one chunk leaves at once instead of
 * waiting for the previous one's ACK. The buffers are left to the kernel's
 * autotuning: fixing them turns it off, and 256 KiB to 4 MiB measured as
 * fast at best, slower at worst (more wakeups with small ones). */
static void tune_socket(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* --- the connecting side ------------------------------------------------ */

static const char *right_host(const struct establish *s)
{
	return s->r->right_host;
}

static int fail_connect(struct establish *s, int err)
{
	return ring_fail(s->e, RING_CONNECT, s->r->right, 0,
	                 "cannot connect to rank %d (right, %s port %d): %s", s->r->right,
	                 right_host(s), s->r->right_port, strerror(err));
}

static int start_connect(struct establish *s, int i)
{
	struct outgoing *c = &s->out[i];
	int fd = socket(s->right->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return ring_fail(s->e, RING_IO, -1, 0, "socket: %s", strerror(errno));
	s->r->to_right[i] = fd;
	tune_socket(fd);
	c->hello_len = (size_t)snprintf(c->hello, sizeof(c->hello), RING_MAGIC " %s %d %d\n",
	                                s->o->token, s->r->rank, i);
	c->phase = OUT_CONNECTING;
	if (connect(fd, s->right, s->right_len) == 0)
		c->phase = OUT_SENDING;
	else if (errno != EINPROGRESS)
		return fail_connect(s, errno);
	return 0;
}

static int send_hello(struct establish *s, int i)
{
	struct outgoing *c = &s->out[i];
	ssize_t n =
	    send(s->r->to_right[i], c->hello + c->sent, c->hello_len - c->sent, MSG_NOSIGNAL);

	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return 0;
		return fail_connect(s, errno);
	}
	c->sent += (size_t)n;
	if (c->sent == c->hello_len)
		c->phase = OUT_READING;
	return 0;
}

static int fail_rejected(struct establish *s, int i, const char *what)
{
	return ring_fail(s->e, RING_REJECTED, s->r->right, 0,
	                 "rank %d (right, %s) %s on connection %d: it expects another token, or "
	                 "another left neighbour than rank %d",
	                 s->r->right, right_host(s), what, i, s->r->rank);
}

/* Judges the answer once it holds a newline: exactly
 * "CDRING1 OK <right's rank>\n". */
static int judge_answer(struct establish *s, int i)
{
	struct outgoing *c = &s->out[i];
	char expected[RING_LINE_MAX];
	int len = snprintf(expected, sizeof(expected), RING_MAGIC " OK %d\n", s->r->right);

	if (c->got != (size_t)len || memcmp(c->answer, expected, (size_t)len) != 0)
		return fail_rejected(s, i, "answered something other than " RING_MAGIC " OK");
	c->phase = OUT_DONE;
	s->answered++;
	return 0;
}

/* Reads the answer up to its newline and not a byte further: the right
 * neighbour may already be sending the gather's leftward data behind it
 * (ring_gather.c), which is the ring's, not the handshake's. */
static int read_answer(struct establish *s, int i)
{
	struct outgoing *c = &s->out[i];
	size_t room = sizeof(c->answer) - 1 - c->got;
	ssize_t n = recv(s->r->to_right[i], c->answer + c->got, room, MSG_PEEK);
	const char *nl;

	if (n > 0) {
		nl = memchr(c->answer + c->got, '\n', (size_t)n);
		if (nl)
			n = nl - (c->answer + c->got) + 1;
		n = recv(s->r->to_right[i], c->answer + c->got, (size_t)n, 0);
	}

	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return 0;
		if (errno == ECONNRESET)
			return fail_rejected(s, i, "reset the connection without answering");
		return fail_connect(s, errno);
	}
	if (n == 0)
		return fail_rejected(s, i, "closed the connection without answering");
	c->got += (size_t)n;
	if (memchr(c->answer, '\n', c->got))
		return judge_answer(s, i);
	if (c->got == sizeof(c->answer) - 1)
		return fail_rejected(s, i, "answered a line too long to be " RING_MAGIC " OK");
	return 0;
}

/* The connect finished one way or the other: SO_ERROR says which. */
static int complete_connect(struct establish *s, int i)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(s->r->to_right[i], SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	if (err)
		return fail_connect(s, err);
	s->out[i].phase = OUT_SENDING;
	return send_hello(s, i);
}

static int advance_outgoing(struct establish *s, int i, short revents)
{
	if (!revents)
		return 0;
	switch (s->out[i].phase) {
	case OUT_CONNECTING:
		return complete_connect(s, i);
	case OUT_SENDING:
		return send_hello(s, i);
	case OUT_READING:
		return read_answer(s, i);
	case OUT_DONE:
		break;
	}
	return 0;
}

static short outgoing_events(const struct outgoing *c)
{
	switch (c->phase) {
	case OUT_CONNECTING:
	case OUT_SENDING:
		return POLLOUT;
	case OUT_READING:
		return POLLIN;
	case OUT_DONE:
		break;
	}
	return 0;
}

/* --- the accepting side ------------------------------------------------- */

/* Whether a and b hold the same token, in a time that depends on neither. */
static int token_equal(const char *a, size_t alen, const char *b, size_t blen)
{
	unsigned char diff = alen != blen;

	for (size_t i = 0; i < RING_TOKEN_MAX; i++) {
		unsigned char x = i < alen ? (unsigned char)a[i] : 0;
		unsigned char y = i < blen ? (unsigned char)b[i] : 0;

		diff |= x ^ y;
	}
	return diff == 0;
}

/* A decimal number of 1 to 5 digits at *p, which moves past it; -1 if none. */
static long parse_small_number(const char **p)
{
	const char *q = *p;
	long v = 0;

	while (*q >= '0' && *q <= '9' && q - *p < 5)
		v = 10 * v + (*q++ - '0');
	if (q == *p || (*q >= '0' && *q <= '9'))
		return -1;
	*p = q;
	return v;
}

/* Split a hello line (newline already cut) "CDRING1 <token> <rank> <index>";
 * 0 with *token (borrowed from line), its length, *rank and *index, or -1. */
static int parse_hello(const char *line, const char **token, size_t *token_len, long *rank,
                       long *index)
{
	const char *p = line;

	if (strncmp(p, RING_MAGIC " ", sizeof(RING_MAGIC)) != 0)
		return -1;
	p += sizeof(RING_MAGIC);
	*token = p;
	*token_len = strcspn(p, " ");
	if (*token_len == 0 || *token_len > RING_TOKEN_MAX || p[*token_len] != ' ')
		return -1;
	p += *token_len + 1;
	*rank = parse_small_number(&p);
	if (*rank < 0 || *p++ != ' ')
		return -1;
	*index = parse_small_number(&p);
	return *index < 0 || *p != '\0' ? -1 : 0;
}

/* The connection index a complete hello claims, or -1 when it is not the
 * left neighbour's (token, rank) or the index is out of range or taken. */
static int hello_index(const struct establish *s, const char *line)
{
	const char *token;
	size_t token_len;
	long rank, index;

	if (parse_hello(line, &token, &token_len, &rank, &index) < 0)
		return -1;
	if (!token_equal(token, token_len, s->o->token, strlen(s->o->token)))
		return -1;
	if (rank != s->r->left || index >= s->r->conns || s->r->from_left[index] >= 0)
		return -1;
	return (int)index;
}

/* The client is our left neighbour's connection `index`: answer it and keep
 * it. The send cannot block in practice (a fresh socket, a short line); if
 * it fails the client is gone and is dropped like a stray one. */
static void take_connection(struct establish *s, struct pending *p, int index)
{
	char answer[RING_LINE_MAX];
	int len = snprintf(answer, sizeof(answer), RING_MAGIC " OK %d\n", s->r->rank);
	struct sockaddr_storage peer;
	socklen_t peer_len = sizeof(peer);

	if (send(p->fd, answer, (size_t)len, MSG_NOSIGNAL | MSG_DONTWAIT) != len) {
		close_fd(&p->fd);
		return;
	}
	if (s->accepted == 0 && getpeername(p->fd, (struct sockaddr *)&peer, &peer_len) == 0)
		ring_host_text((struct sockaddr *)&peer, s->r->left_host, sizeof(s->r->left_host));
	tune_socket(p->fd);
	s->r->from_left[index] = p->fd;
	s->accepted++;
	p->fd = -1;
}

/* Reads what a client sent; afterwards p->fd is -1 when it is done with
 * (taken, or closed as a stray), and still open while its hello is
 * incomplete. Bytes after the hello's newline make it a stray too: our left
 * neighbour sends nothing more before our answer. */
static void read_pending(struct establish *s, struct pending *p)
{
	ssize_t n = recv(p->fd, p->line + p->got, sizeof(p->line) - 1 - p->got, 0);
	char *newline;
	int index;

	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (n <= 0) {
		close_fd(&p->fd);
		return;
	}
	p->got += (size_t)n;
	p->line[p->got] = '\0';
	newline = memchr(p->line, '\n', p->got);
	if (!newline) {
		if (p->got == sizeof(p->line) - 1)
			close_fd(&p->fd); /* too long to be a hello */
		return;
	}
	*newline = '\0';
	index = newline + 1 == p->line + p->got ? hello_index(s, p->line) : -1;
	if (index < 0)
		close_fd(&p->fd);
	else
		take_connection(s, p, index);
}

/* Serves the clients poll() reported (their pollfds start at pfds) and
 * drops those that are done or past their deadline. */
static void serve_pending(struct establish *s, const struct pollfd *pfds, int64_t now)
{
	size_t kept = 0;

	for (size_t i = 0; i < s->npending; i++) {
		struct pending *p = &s->pending[i];

		if (pfds[i].revents)
			read_pending(s, p);
		if (p->fd >= 0 && now >= p->deadline)
			close_fd(&p->fd);
		if (p->fd >= 0)
			s->pending[kept++] = *p;
	}
	s->npending = kept;
}

static void accept_clients(struct establish *s, int64_t now)
{
	while (s->npending < RING_PENDING_MAX) {
		int fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct pending *p;

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return; /* EAGAIN, or out of fds: the listener stays readable */
		}
		p = &s->pending[s->npending++];
		p->fd = fd;
		p->got = 0;
		p->deadline = now + RING_HELLO_WAIT_MS;
		if (p->deadline > s->deadline)
			p->deadline = s->deadline;
	}
}

/* --- the loop ------------------------------------------------------------- */

/* Which deadline passed, and whose fault it is: a connect still under way
 * blames the right neighbour's address, a missing left connection the left
 * neighbour, and an unanswered hello the right neighbour again. */
static int fail_deadline(struct establish *s)
{
	struct ring *r = s->r;
	int ms = s->o->connect_timeout_ms;

	for (int i = 0; i < r->conns; i++) {
		if (s->out[i].phase == OUT_CONNECTING)
			return ring_fail(
			    s->e, RING_CONNECT, r->right, 0,
			    "cannot connect to rank %d (right, %s port %d): no answer to "
			    "the connection request within %d ms",
			    r->right, right_host(s), r->right_port, ms);
	}
	if (s->accepted < r->conns)
		return ring_fail(s->e, RING_NO_PEER, r->left, 0,
		                 "rank %d (left%s%s) did not connect within %d ms (%d of %d "
		                 "connections)",
		                 r->left, s->accepted ? ", " : "", s->accepted ? r->left_host : "",
		                 ms, s->accepted, r->conns);
	return ring_fail(s->e, RING_CONNECT, r->right, 0,
	                 "rank %d (right, %s port %d) accepted the connections but did not answer "
	                 "within %d ms (%d of %d answered)",
	                 r->right, right_host(s), r->right_port, ms, s->answered, r->conns);
}

/* Layout of the pollfds: [0] abort_fd, [1] the listener, then the
 * outgoing connections, then the pending clients; fd -1 (skipped by poll)
 * where there is nothing to wait for. */
enum { PFD_ABORT, PFD_LISTEN, PFD_OUT };

static nfds_t fill_pollfds(const struct establish *s, struct pollfd *pfds)
{
	const struct ring *r = s->r;
	int accepting = s->accepted < r->conns && s->npending < RING_PENDING_MAX;
	nfds_t n = PFD_OUT;

	pfds[PFD_ABORT] = (struct pollfd){.fd = r->abort_fd, .events = POLLRDHUP};
	pfds[PFD_LISTEN] = (struct pollfd){.fd = accepting ? s->listen_fd : -1, .events = POLLIN};
	for (int i = 0; i < r->conns; i++) {
		short events = outgoing_events(&s->out[i]);

		pfds[n++] = (struct pollfd){.fd = events ? r->to_right[i] : -1, .events = events};
	}
	for (size_t i = 0; i < s->npending; i++)
		pfds[n++] = (struct pollfd){.fd = s->pending[i].fd, .events = POLLIN};
	return n;
}

static int64_t next_wakeup(const struct establish *s)
{
	int64_t when = s->deadline;

	for (size_t i = 0; i < s->npending; i++) {
		if (s->pending[i].deadline < when)
			when = s->pending[i].deadline;
	}
	return when;
}

static int wait_and_advance(struct establish *s, struct pollfd *pfds)
{
	nfds_t n = fill_pollfds(s, pfds);
	int64_t now = cd_now_ms();

	if (poll(pfds, n, ring_poll_ms_until(next_wakeup(s), now)) < 0) {
		if (errno == EINTR)
			return 0;
		return ring_fail(s->e, RING_IO, -1, 0, "poll: %s", strerror(errno));
	}
	if (pfds[PFD_LISTEN].revents & POLLNVAL)
		return ring_fail(s->e, RING_BAD_ARG, -1, 0, "listen_fd %d is not open",
		                 s->listen_fd);
	if (ring_abort_revents(pfds[PFD_ABORT].revents))
		return ring_fail(s->e, RING_ABORTED, -1, 0,
		                 "aborted while forming the ring: abort_fd %d hung up",
		                 s->r->abort_fd);
	for (int i = 0; i < s->r->conns; i++) {
		if (advance_outgoing(s, i, pfds[PFD_OUT + i].revents) < 0)
			return -1;
	}
	now = cd_now_ms();
	serve_pending(s, pfds + PFD_OUT + s->r->conns, now);
	if (pfds[PFD_LISTEN].revents)
		accept_clients(s, now);
	return 0;
}

static int run_establish(struct establish *s)
{
	struct pollfd pfds[PFD_OUT + RING_MAX_CONNS + RING_PENDING_MAX];
	int rc = 0;

	for (int i = 0; i < s->r->conns && rc == 0; i++)
		rc = start_connect(s, i);
	while (rc == 0 && (s->answered < s->r->conns || s->accepted < s->r->conns)) {
		if (cd_now_ms() >= s->deadline)
			rc = fail_deadline(s);
		else
			rc = wait_and_advance(s, pfds);
	}
	for (size_t i = 0; i < s->npending; i++)
		close_fd(&s->pending[i].fd);
	return rc;
}

struct ring *ring_establish(const struct ring_opts *o, int listen_fd, const struct sockaddr *right,
                            socklen_t right_len, struct ring_error *e)
{
	struct establish s = {
	    .o = o, .listen_fd = listen_fd, .right = right, .right_len = right_len, .e = e};

	ring_error_clear(e);
	if (check_opts(o, listen_fd, right, right_len, e) < 0)
		return NULL;
	s.r = ring_new(o);
	if (o->nranks == 1)
		return s.r;
	ring_host_text(right, s.r->right_host, sizeof(s.r->right_host));
	s.r->right_port = ring_port_of(right);
	s.deadline = cd_now_ms() + o->connect_timeout_ms;
	if (run_establish(&s) < 0) {
		ring_close(s.r);
		return NULL;
	}
	return s.r;
}
