/* SPDX-License-Identifier: MIT */
/*
 * transport_back_accept.c - the connect-back listener
 * (transport_back_internal.h): the listening socket, a bounded queue of
 * connections that have not proven themselves yet, each with a deadline
 * per handshake line, and the handshake's two lines each way (backauth.h)
 * that match an agent to its node.
 */
#include "transport_back_internal.h"
#include "cd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

/* Take q out of the queue of unproven connections. */
static void pend_unqueue(struct pend *q)
{
	struct backlisten *b = q->b;

	if (!q->queued)
		return;
	if (q->prev)
		q->prev->next = q->next;
	else
		b->pends = q->next;
	if (q->next)
		q->next->prev = q->prev;
	else
		b->pends_last = q->prev;
	q->prev = q->next = NULL;
	q->queued = 0;
	b->npend--;
}

void back_pend_free(struct pend *q, int close_fd)
{
	struct backlisten *b = q->b;

	loop_timer_cancel(b->loop, q->timer);
	loop_unwatch(b->loop, q->fd);
	if (close_fd)
		close(q->fd);
	pend_unqueue(q);
	free(q);
}

/* Close a connection that did not prove itself, without a word. */
static void pend_drop(struct pend *q)
{
	q->b->dropped++;
	back_pend_free(q, 1);
}

/* The agent of host i has proven itself, and its node waits: take it. */
void back_adopt(struct backlisten *b, size_t i, struct pend *q)
{
	struct conn *c = b->waiting[i];
	struct backconn *p = c->priv;

	p->fd = q->fd;
	b->parked[i] = NULL;
	b->taken[i] = 1;
	if (q->len)
		buf_append(&c->in, q->line, q->len);
	back_pend_free(q, 0);
	back_watch(c);
	if (!p->started) {
		p->started = 1;
		c->ev->connected(c);
	}
	/* Each event may fail the node, which closes the conn (c->priv
	 * becomes NULL): nothing more is said then. */
	if (c->priv != p || p->failed)
		return;
	c->ev->authenticated(c);
	if (c->priv == p && !p->failed && c->in.len)
		c->ev->data(c);
}

static void on_pend_timeout(struct loop *loop, void *arg);

/* Read what q's peer sent and take the handshake a step on. Returns 1 when
 * a line was answered (or the agent proved itself), 0 when no whole line
 * came, -1 when q is gone (closed, or handed to its node). */
static int pend_read(struct pend *q)
{
	struct backlisten *b = q->b;
	char nonce[BACKAUTH_NONCE_HEX], out[BACKAUTH_LINE_MAX], *nl;
	ssize_t n = read(q->fd, q->line + q->len, sizeof(q->line) - 1 - q->len);
	long i;
	int m;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0) {
		pend_drop(q);
		return -1;
	}
	q->len += (size_t)n;
	q->line[q->len] = '\0';
	nl = memchr(q->line, '\n', q->len);
	if (!nl) {
		if (q->len >= sizeof(q->line) - 1) {
			pend_drop(q); /* too long for a handshake line */
			return -1;
		}
		return 0;
	}
	*nl = '\0';
	if (!q->a.name[0]) {
		/* The hello: answer with our nonce and proof. Nothing else may
		 * follow it before our answer. The proof gets the whole
		 * handshake deadline. */
		cd_random_token(nonce, sizeof(nonce));
		m = backauth_head_challenge(&q->a, b->secret, q->line, nonce, out, sizeof(out));
		if (m < 0 || nl + 1 != q->line + q->len || back_find_host(b, q->a.name) < 0 ||
		    write(q->fd, out, (size_t)m) != m) {
			pend_drop(q);
			return -1;
		}
		q->len = 0;
		loop_timer_cancel(b->loop, q->timer);
		q->timer = loop_timer_add(b->loop, b->handshake_ms, on_pend_timeout, q);
		return 1;
	}
	if (backauth_head_verify(&q->a, b->secret, q->line) < 0) {
		pend_drop(q);
		return -1;
	}
	/* Proven. Keep what followed the proof for the conn (nothing should). */
	q->len -= (size_t)(nl + 1 - q->line);
	memmove(q->line, nl + 1, q->len);
	i = back_find_host(b, q->a.name);
	if (b->taken[i] || b->parked[i]) {
		/* That node has its agent already. Two proofs of one node mean
		 * that a task holding the run's secret (srun gives every task the
		 * same) used another node's name: the node left without its
		 * agent is told so. */
		if (b->twice < 0) {
			b->twice = i;
			snprintf(b->note, sizeof(b->note),
			         "; two agents proved themselves as %s (the first one was kept): "
			         "this node's agent may have connected under that name",
			         b->hosts[i]);
		}
		back_pend_free(q, 1);
		return -1;
	}
	q->proven = 1;
	pend_unqueue(q);
	loop_timer_cancel(b->loop, q->timer);
	q->timer = 0;
	loop_unwatch(b->loop, q->fd);
	b->parked[i] = q;
	if (b->waiting[i])
		back_adopt(b, (size_t)i, q);
	return -1;
}

/* A handshake line did not come in time. A head whose loop was busy may
 * see the deadline before the line that came meanwhile: read first. */
static void on_pend_timeout(struct loop *loop, void *arg)
{
	struct pend *q = arg;

	q->timer = 0;
	if (pend_read(q) == 0)
		pend_drop(q); /* no answer to a connection that does not finish */
}

static void on_pend(struct loop *loop, int fd, short revents, void *arg)
{
	pend_read(arg);
}

static void on_accept(struct loop *loop, int fd, short revents, void *arg);

static void on_accept_rested(struct loop *loop, void *arg)
{
	struct backlisten *b = arg;

	b->pause_timer = 0;
	loop_watch(loop, b->fd, POLLIN, on_accept, b);
}

/* No descriptor (or memory) for another connection, and none unproven to
 * give up: stop watching the listener for a moment, so a readable listener
 * that cannot be accepted from never spins the loop. */
static void accept_rest(struct backlisten *b)
{
	if (b->pause_timer)
		return;
	loop_unwatch(b->loop, b->fd);
	b->pause_timer = loop_timer_add(b->loop, ACCEPT_PAUSE_MS, on_accept_rested, b);
}

/* Queue a new connection, the newest, with the hello's deadline. */
static void pend_queue(struct backlisten *b, int s)
{
	struct pend *q = cd_calloc(1, sizeof(*q));
	int hello_ms = b->handshake_ms < PEND_HELLO_MS ? b->handshake_ms : PEND_HELLO_MS;

	q->b = b;
	q->fd = s;
	q->queued = 1;
	q->prev = b->pends_last;
	if (b->pends_last)
		b->pends_last->next = q;
	else
		b->pends = q;
	b->pends_last = q;
	b->npend++;
	q->timer = loop_timer_add(b->loop, hello_ms, on_pend_timeout, q);
	loop_watch(b->loop, s, POLLIN, on_pend, q);
}

/* Accept what waits, a batch per loop turn. The queue of unproven
 * connections is bounded: a full one drops its oldest, so an agent that
 * connects during a flood still gets in (it proves itself at once), and a
 * head out of descriptors gives up its oldest unproven connection for the
 * new one rather than leave the listener readable. */
static void on_accept(struct loop *loop, int fd, short revents, void *arg)
{
	struct backlisten *b = arg;

	for (int k = 0; k < 64; k++) {
		int s;

		if (b->npend >= b->pend_max && b->pends)
			pend_drop(b->pends);
		s = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (s >= 0) {
			pend_queue(b, s);
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO || errno == EPERM)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return;
		if ((errno == EMFILE || errno == ENFILE) && b->pends) {
			pend_drop(b->pends);
			continue;
		}
		accept_rest(b); /* out of descriptors or memory, nothing to give up */
		return;
	}
}

/* The local address this machine would use to reach host (numeric), or -1. */
static int route_to(const char *host, char *out, size_t len)
{
	struct addrinfo hints = {.ai_socktype = SOCK_DGRAM}, *res;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int fd, rc = -1;

	if (getaddrinfo(host, "9", &hints, &res) != 0)
		return -1;
	fd = socket(res->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) == 0 &&
	    getsockname(fd, (struct sockaddr *)&ss, &sl) == 0 &&
	    getnameinfo((struct sockaddr *)&ss, sl, out, (socklen_t)len, NULL, 0, NI_NUMERICHOST) ==
	        0)
		rc = 0;
	if (fd >= 0)
		close(fd);
	freeaddrinfo(res);
	return rc;
}

static int listen_on(struct backlisten *b, const char *listen_arg, char *err, size_t errlen)
{
	char host[256] = "", port[16] = "0", num[INET6_ADDRSTRLEN];
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE}, *res;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	const char *colon;
	int rc, one = 1;

	if (listen_arg && *listen_arg) {
		colon = strrchr(listen_arg, ':');
		if (listen_arg[0] == '[') {
			const char *close_br = strchr(listen_arg, ']');

			if (!close_br || (close_br[1] && close_br[1] != ':'))
				return cd_errf(err, errlen, CD_ERR_PARSE,
				               "--listen \"%s\": want ADDR, ADDR:PORT or [V6]:PORT",
				               listen_arg);
			snprintf(host, sizeof(host), "%.*s", (int)(close_br - listen_arg - 1),
			         listen_arg + 1);
			colon = close_br[1] ? close_br + 1 : NULL;
		} else if (colon && strchr(listen_arg, ':') == colon) {
			snprintf(host, sizeof(host), "%.*s", (int)(colon - listen_arg), listen_arg);
		} else {
			snprintf(host, sizeof(host), "%s", listen_arg);
			colon = NULL;
		}
		if (colon)
			snprintf(port, sizeof(port), "%s", colon + 1);
	}
	if (!host[0]) {
		if (b->kind == LAUNCHER_LOCAL_CONNECT || !b->n ||
		    route_to(b->hosts[0], host, sizeof(host)) < 0)
			snprintf(host, sizeof(host), "%s",
			         b->kind == LAUNCHER_LOCAL_CONNECT ? "127.0.0.1" : "0.0.0.0");
	}
	rc = getaddrinfo(host, port, &hints, &res);
	if (rc)
		return cd_errf(err, errlen, CD_ERR_PARSE, "cannot listen on %s port %s: %s", host,
		               port, gai_strerror(rc));
	b->fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (b->fd < 0 || setsockopt(b->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(b->fd, res->ai_addr, res->ai_addrlen) < 0 || listen(b->fd, SOMAXCONN) < 0 ||
	    getsockname(b->fd, (struct sockaddr *)&ss, &sl) < 0) {
		rc = errno;
		freeaddrinfo(res);
		return cd_errf(err, errlen, CD_ERR_IO, "cannot listen on %s port %s: %s", host,
		               port, strerror(rc));
	}
	freeaddrinfo(res);
	if (getnameinfo((struct sockaddr *)&ss, sl, num, sizeof(num), port, sizeof(port),
	                NI_NUMERICHOST | NI_NUMERICSERV) != 0)
		return cd_errf(err, errlen, CD_ERR_IO, "cannot name the listening address");
	if (strcmp(num, "0.0.0.0") == 0 || strcmp(num, "::") == 0) {
		/* Bound to every address: tell the agents this machine's name. */
		if (gethostname(num, sizeof(num)) < 0)
			snprintf(num, sizeof(num), "localhost");
		num[sizeof(num) - 1] = '\0';
	}
	snprintf(b->addr, sizeof(b->addr), strchr(num, ':') ? "[%s]:%s" : "%s:%s", num, port);
	return 0;
}

int back_listen(struct backlisten *b, const char *listen_arg, char *err, size_t errlen)
{
	if (listen_on(b, listen_arg, err, errlen) < 0)
		return -1;
	loop_watch(b->loop, b->fd, POLLIN, on_accept, b);
	return 0;
}

/* Room for n sockets besides what the head holds already. */
void back_raise_nofile(size_t n)
{
	struct rlimit r;

	if (getrlimit(RLIMIT_NOFILE, &r) < 0)
		return;
	if (r.rlim_cur != RLIM_INFINITY && r.rlim_cur < (rlim_t)n + 256) {
		r.rlim_cur = r.rlim_max == RLIM_INFINITY || r.rlim_max > (rlim_t)n + 256
		                 ? (rlim_t)n + 256
		                 : r.rlim_max;
		setrlimit(RLIMIT_NOFILE, &r);
	}
}
