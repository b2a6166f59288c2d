/* SPDX-License-Identifier: MIT */
/*
 * reach_listen.c - the listener half of the reachability matrix (see
 * reach.h): reach_listen opens the sockets in the request's thread, then
 * hands them to one server thread that polls them, accepts peers and
 * answers their CDREACH1 line. The thread sees no jansson object: it works
 * on a plain struct server copied from the request. The only state it
 * shares with the request thread afterwards is `finished`, under
 * server_lock. reach_unlisten and reach_shutdown stop it.
 */
#include "probes/reach.h"
#include "probes/reach_internal.h"
#include "probes/reach_rdma.h"
#include "proto.h"
#include "sockaddr.h"
#include "cd.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define REACH_BACKLOG        1024
#define REACH_DURATION_MS    120000  /* listen's default lifetime */
#define REACH_DURATION_MAX   3600000 /* an hour: longer is surely a mistake */
#define REACH_PEER_WAIT_US   2000000 /* a listener waits this long for a peer's line */
#define REACH_MAX_PEERS      4096    /* accepted connections served at once */
#define REACH_ACCEPTS_PER_FD 256     /* accepts per listener per turn, so none starves */
#define REACH_ACCEPT_PAUSE   50000   /* µs without accepting after running out of fds */
/* A bulk transfer (reach_internal.h) is ended by the connector, at its
 * own deadline or when done; this only frees a peer whose connector died. */
#define REACH_BULK_WAIT_US 60000000

/* --- the listener: sockets -------------------------------------------------- */

struct peer {
	int fd;
	int64_t deadline; /* µs: dropped unanswered after this */
	size_t len;
	char line[REACH_LINE_MAX];
	/* the bulk proof, once answered: bytes still to send and to read */
	int bulk;
	size_t bulk_send, bulk_recv;
	/* the RDMA proof (reach_rdma.h), before any bulk: bulk_after bytes */
	struct rdma_serve *rdma;
	long bulk_after;
};

struct server {
	pthread_t thread;
	int wake[2]; /* a byte on wake[1] stops the thread */
	int *listen_fds;
	size_t nlisten;
	int *echo_fds; /* the path-MTU probe's UDP echoes (reach_pmtu.c) */
	size_t necho;
	char token[REACH_TOKEN_MAX + 1];
	long long node;
	int64_t end;  /* µs: the thread stops here (duration_ms) */
	int finished; /* set by the thread as it ends; under server_lock */
	/* the RDMA proof's verbs side (request "rdma"), or why there is none */
	struct rdma_side *rdma;
	char rdma_why[192];

	/* the thread's own */
	struct peer *peers;
	size_t npeers, peers_cap;
	struct pollfd *pfds;
	int64_t accept_resume;           /* µs: no accepts before this (out of fds) */
	char bulk_buf[REACH_BULK_CHUNK]; /* what bulk peers send and what they read into */
};

static pthread_mutex_t server_lock = PTHREAD_MUTEX_INITIALIZER;
static struct server *server; /* the request thread's only */

/* A listening socket bound to addr, or -errno. v6only matters for AF_INET6
 * only. */
static int open_listener(const struct sockaddr *addr, socklen_t len, int v6only)
{
	int fd = socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1, err;

	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    (addr->sa_family == AF_INET6 &&
	     setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof(v6only)) < 0) ||
	    bind(fd, addr, len) < 0 || listen(fd, REACH_BACKLOG) < 0) {
		err = errno;
		close(fd);
		return -err;
	}
	return fd;
}

/* A fixed port on the wildcard address: dual-stack "::" as PyTorch's
 * TCPStore binds it, or "0.0.0.0" on a kernel without IPv6. */
static int open_fixed_listener(int port, const char **bound)
{
	struct sockaddr_in6 any6 = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port)};
	struct sockaddr_in any4 = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int fd;

	any6.sin6_addr = in6addr_any;
	any4.sin_addr.s_addr = htonl(INADDR_ANY);
	*bound = "::";
	fd = open_listener((struct sockaddr *)&any6, sizeof(any6), 0);
	if (fd != -EAFNOSUPPORT)
		return fd;
	*bound = "0.0.0.0";
	return open_listener((struct sockaddr *)&any4, sizeof(any4), 0);
}

static int bound_port(int fd)
{
	struct sockaddr_storage addr;
	socklen_t len = sizeof(addr);

	if (getsockname(fd, (struct sockaddr *)&addr, &len) < 0)
		return 0;
	if (addr.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&addr)->sin6_port);
	return ntohs(((struct sockaddr_in *)&addr)->sin_port);
}

static void server_keep_fd(struct server *s, int fd)
{
	s->listen_fds = cd_realloc(s->listen_fds, (s->nlisten + 1) * sizeof(*s->listen_fds));
	s->listen_fds[s->nlisten++] = fd;
}

/* The path-MTU probe's echo on the TCP listener's address and port; a
 * failure only costs the probe (the row says why). */
static void open_echo(struct server *s, json_t *row, struct sockaddr_storage *addr, socklen_t len,
                      int port)
{
	int fd;

	if (addr->ss_family == AF_INET6)
		((struct sockaddr_in6 *)addr)->sin6_port = htons((uint16_t)port);
	else
		((struct sockaddr_in *)addr)->sin_port = htons((uint16_t)port);
	fd = reach_pmtu_open_echo((struct sockaddr *)addr, len);
	if (fd < 0) {
		json_object_set_new(row, "pmtu_echo_errno_name",
		                    json_string(reach_errno_name(-fd)));
		return;
	}
	s->echo_fds = cd_realloc(s->echo_fds, (s->necho + 1) * sizeof(*s->echo_fds));
	s->echo_fds[s->necho++] = fd;
	json_object_set_new(row, "pmtu_echo", json_true());
}

static json_t *errno_fields(json_t *obj, int err)
{
	json_object_set_new(obj, "error", json_string(strerror(err)));
	json_object_set_new(obj, "errno_name", json_string(reach_errno_name(err)));
	return obj;
}

/* One listener on port 0 of an "addresses" entry; its result row. */
static json_t *listen_on_address(struct server *s, json_t *entry)
{
	const char *text = json_string_value(json_object_get(entry, "address"));
	long long scope_id = 0;
	struct sockaddr_storage addr;
	socklen_t len;
	json_t *row;
	int fd;

	proto_field_int(entry, "scope_id", 0, UINT32_MAX, &scope_id);
	row = json_pack("{sssI}", "address", text, "scope_id", (json_int_t)scope_id);
	if (cd_sockaddr_from_text(text, scope_id, 0, &addr, &len) != 0)
		return errno_fields(row, EINVAL);
	fd = open_listener((struct sockaddr *)&addr, len, 1);
	if (fd < 0)
		return errno_fields(row, -fd);
	server_keep_fd(s, fd);
	json_object_set_new(row, "port", json_integer(bound_port(fd)));
	open_echo(s, row, &addr, len, bound_port(fd));
	return row;
}

/* A fixed port in use: another clusterdoc run's listener (or this run's,
 * for another name of this machine) is not a stale job, and says so when
 * asked (reach_port_holder). Its holder may also just have let it go. */
static int open_fixed_or_ask(struct server *s, int port, int64_t ask_deadline, const char **bound,
                             const char **held_by)
{
	int fd = open_fixed_listener(port, bound);

	*held_by = NULL;
	if (fd != -EADDRINUSE)
		return fd;
	switch (reach_port_holder(s->token, port, ask_deadline)) {
	case REACH_HOLDER_GONE:
		return open_fixed_listener(port, bound);
	case REACH_HOLDER_OTHER_RUN:
		*held_by = "other-run";
		break;
	case REACH_HOLDER_THIS_RUN:
		*held_by = "this-run";
		break;
	case REACH_HOLDER_UNKNOWN:
		break;
	}
	return fd;
}

static json_t *listen_on_fixed_port(struct server *s, int port, int64_t ask_deadline)
{
	json_t *row = json_pack("{si}", "port", port);
	const char *bound, *held_by;
	int fd = open_fixed_or_ask(s, port, ask_deadline, &bound, &held_by);

	if (held_by)
		json_object_set_new(row, "held_by", json_string(held_by));
	if (fd < 0)
		return errno_fields(row, -fd);
	server_keep_fd(s, fd);
	json_object_set_new(row, "bound", json_string(bound));
	return row;
}

static json_t *listen_on_addresses(struct server *s, json_t *addresses)
{
	json_t *rows = json_array();

	for (size_t i = 0; i < json_array_size(addresses); i++)
		json_array_append_new(rows, listen_on_address(s, json_array_get(addresses, i)));
	return rows;
}

/* Asking the holders of ports in use takes REACH_HOLDER_WAIT_MS at most
 * for all of them, so stale jobs on every port cannot stretch the request. */
static json_t *listen_on_fixed_ports(struct server *s, json_t *ports)
{
	json_t *rows = json_array();
	int64_t ask_deadline = reach_now_us() + (int64_t)REACH_HOLDER_WAIT_MS * 1000;

	for (size_t i = 0; i < json_array_size(ports); i++) {
		int port = (int)json_integer_value(json_array_get(ports, i));

		json_array_append_new(rows, listen_on_fixed_port(s, port, ask_deadline));
	}
	return rows;
}

static int address_entry_is_valid(json_t *entry)
{
	long long scope_id;

	return json_is_string(json_object_get(entry, "address")) &&
	       proto_field_int(entry, "scope_id", 0, UINT32_MAX, &scope_id) == 0;
}

static int port_is_valid(json_t *port)
{
	return json_is_integer(port) && json_integer_value(port) >= 1 &&
	       json_integer_value(port) <= 65535;
}

/* The request's shape, checked before any socket is opened. */
static int listen_request_is_valid(json_t *req, char *msg, size_t msglen)
{
	json_t *addresses = json_object_get(req, "addresses"),
	       *ports = json_object_get(req, "ports");
	long long duration_ms;
	size_t i;

	if (addresses && !json_is_array(addresses)) {
		snprintf(msg, msglen, "\"addresses\" must be an array");
		return 0;
	}
	for (i = 0; i < json_array_size(addresses); i++) {
		if (!address_entry_is_valid(json_array_get(addresses, i))) {
			snprintf(msg, msglen,
			         "addresses[%zu] needs a string \"address\" and an optional "
			         "integer \"scope_id\"",
			         i);
			return 0;
		}
	}
	if (ports && !json_is_array(ports)) {
		snprintf(msg, msglen, "\"ports\" must be an array");
		return 0;
	}
	for (i = 0; i < json_array_size(ports); i++) {
		if (!port_is_valid(json_array_get(ports, i))) {
			snprintf(msg, msglen, "ports[%zu] is not a port number", i);
			return 0;
		}
	}
	if (proto_field_int(req, "duration_ms", 1, REACH_DURATION_MAX, &duration_ms) < 0) {
		snprintf(msg, msglen, "\"duration_ms\" must be 1 to %d", REACH_DURATION_MAX);
		return 0;
	}
	return 1;
}

/* --- the listener: the server thread ----------------------------------------- */

static void add_peer(struct server *s, int fd, int64_t now)
{
	struct peer *p;

	if (s->npeers == s->peers_cap) {
		s->peers_cap = s->peers_cap ? 2 * s->peers_cap : 16;
		s->peers = cd_realloc(s->peers, s->peers_cap * sizeof(*s->peers));
	}
	p = &s->peers[s->npeers++];
	p->fd = fd;
	p->deadline = now + REACH_PEER_WAIT_US;
	p->len = 0;
	p->bulk = 0;
	p->bulk_send = p->bulk_recv = 0;
	p->rdma = NULL;
	p->bulk_after = 0;
}

static void accept_peers(struct server *s, int listen_fd, int64_t now)
{
	for (int i = 0; i < REACH_ACCEPTS_PER_FD && s->npeers < REACH_MAX_PEERS; i++) {
		int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd >= 0) {
			add_peer(s, fd, now);
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		/* Out of fds or memory: the listener stays readable, so stop
		 * polling it for a moment instead of spinning on it. */
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
			s->accept_resume = now + REACH_ACCEPT_PAUSE;
		return;
	}
}

/* Answers a connector whose line carries our token, and the holder
 * question ("CDREACH1 who <token>") of an agent that could not bind our
 * port: this run's or another's, nothing more (so a concurrent run does not
 * take us for a stale job). The send cannot block and a short one cannot
 * happen in practice: the socket is fresh and the line is far smaller than
 * any send buffer. */
static void answer_peer(struct server *s, struct peer *p)
{
	static const char who[] = REACH_WHO_PREFIX;
	const char *token;
	long long from;
	char reply[REACH_LINE_MAX];
	long bulk = 0;
	int n;

	int rdma = 0;

	if (strncmp(p->line, who, sizeof(who) - 1) != 0) {
		bulk = reach_cut_bulk_suffix(p->line);
		rdma = reach_cut_rdma_suffix(p->line);
	}
	if (bulk < 0)
		return;
	if (strncmp(p->line, who, sizeof(who) - 1) == 0)
		n = snprintf(reply, sizeof(reply), "%s\n",
		             strcmp(p->line + sizeof(who) - 1, s->token) == 0
		                 ? REACH_THIS_RUN_LINE
		                 : REACH_OTHER_RUN_LINE);
	else if (reach_parse_line(p->line, &token, &from) == 0 && strcmp(token, s->token) == 0)
		n = snprintf(reply, sizeof(reply), REACH_MAGIC " %s %lld\n", s->token, s->node);
	else
		return;
	/* A failure means the connector went away: nobody to tell. */
	if (send(p->fd, reply, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) != n)
		return;
	if (rdma) {
		p->rdma = rdma_serve_new(s->rdma, s->rdma_why);
		p->bulk_after = bulk;
	} else if (bulk > 0) {
		p->bulk = 1;
		p->bulk_send = p->bulk_recv = (size_t)bulk;
	}
}

/* The RDMA proof's turn; then the bulk proof, if asked for. 1 when the
 * peer is done with. */
static int serve_rdma(struct server *s, struct peer *p)
{
	int rc = reach_rdma_serve_turn(p->rdma, p->fd, s->token);

	if (rc == 0)
		return 0;
	rdma_serve_free(p->rdma);
	p->rdma = NULL;
	if (rc < 0 || p->bulk_after <= 0)
		return 1;
	p->bulk = 1;
	p->bulk_send = p->bulk_recv = (size_t)p->bulk_after;
	return 0;
}

/* One turn of a bulk peer: send what the socket takes, read what came. 1
 * when it is done (both ways complete, or the connector closed or failed). */
static int serve_bulk(struct server *s, struct peer *p, short revents)
{
	int err;

	return reach_bulk_turn(p->fd, revents, s->bulk_buf, sizeof(s->bulk_buf), &p->bulk_send,
	                       &p->bulk_recv, &err) != 0;
}

/* Reads what a peer sent. 1 when the peer is done with (answered or to be
 * dropped), 0 while its line is incomplete. */
static int read_peer(struct server *s, struct peer *p)
{
	ssize_t n;
	char *newline;

	if (p->rdma)
		return serve_rdma(s, p);
	n = recv(p->fd, p->line + p->len, sizeof(p->line) - 1 - p->len, 0);
	if (n < 0)
		return !(errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
	if (n == 0)
		return 1;
	p->len += (size_t)n;
	p->line[p->len] = '\0';
	newline = memchr(p->line, '\n', p->len);
	if (!newline)
		return p->len == sizeof(p->line) - 1; /* too long: not a CDREACH1 line */
	*newline = '\0';
	answer_peer(s, p);
	if (p->rdma) {
		p->deadline = reach_now_us() + REACH_BULK_WAIT_US;
		return 0;
	}
	if (!p->bulk)
		return 1;
	/* The connector sends its bulk only after our answer: nothing of it
	 * can have come with the line. */
	p->deadline = reach_now_us() + REACH_BULK_WAIT_US;
	return 0;
}

/* Fills s->pfds: [0] the wake pipe, then the listeners (fd -1, which poll
 * skips, while accepting is paused or every peer slot is taken), then the
 * UDP echoes, then the peers. Returns the count. */
static nfds_t fill_pollfds(struct server *s, int64_t now)
{
	int accepting = s->npeers < REACH_MAX_PEERS && now >= s->accept_resume;
	nfds_t n = 0;

	s->pfds[n++] = (struct pollfd){.fd = s->wake[0], .events = POLLIN};
	for (size_t i = 0; i < s->nlisten; i++)
		s->pfds[n++] =
		    (struct pollfd){.fd = accepting ? s->listen_fds[i] : -1, .events = POLLIN};
	for (size_t i = 0; i < s->necho; i++)
		s->pfds[n++] = (struct pollfd){.fd = s->echo_fds[i], .events = POLLIN};
	for (size_t i = 0; i < s->npeers; i++)
		s->pfds[n++] = (struct pollfd){
		    .fd = s->peers[i].fd, .events = POLLIN | (s->peers[i].bulk_send ? POLLOUT : 0)};
	return n;
}

/* The earliest moment the thread must look again without any fd event. */
static int64_t next_wakeup(const struct server *s, int64_t now)
{
	int64_t when = s->end;

	for (size_t i = 0; i < s->npeers; i++) {
		if (s->peers[i].deadline < when)
			when = s->peers[i].deadline;
	}
	if (s->accept_resume > now && s->accept_resume < when)
		when = s->accept_resume;
	return when;
}

/* Serves the peers poll() reported and closes those that are done or past
 * their deadline, packing the survivors to the front. Runs before any new
 * peer is accepted, so peers[i] still matches pfds[first + i]. */
static void serve_peers(struct server *s, size_t first, int64_t now)
{
	size_t kept = 0;

	for (size_t i = 0; i < s->npeers; i++) {
		struct peer *p = &s->peers[i];
		short revents = s->pfds[first + i].revents;
		int done = !revents ? 0 : p->bulk ? serve_bulk(s, p, revents) : read_peer(s, p);

		if (done || now >= p->deadline) {
			rdma_serve_free(p->rdma);
			close(p->fd);
			continue;
		}
		if (kept != i)
			s->peers[kept] = *p;
		kept++;
	}
	s->npeers = kept;
}

static void close_server_sockets(struct server *s)
{
	for (size_t i = 0; i < s->npeers; i++) {
		rdma_serve_free(s->peers[i].rdma);
		close(s->peers[i].fd);
	}
	for (size_t i = 0; i < s->nlisten; i++)
		close(s->listen_fds[i]);
	for (size_t i = 0; i < s->necho; i++)
		close(s->echo_fds[i]);
	s->npeers = 0;
	s->nlisten = 0;
	s->necho = 0;
}

static void *serve_listeners(void *arg)
{
	struct server *s = arg;

	s->pfds = cd_calloc(1 + s->nlisten + s->necho + REACH_MAX_PEERS, sizeof(*s->pfds));
	for (;;) {
		int64_t now = reach_now_us();
		nfds_t n;

		if (now >= s->end)
			break;
		n = fill_pollfds(s, now);
		if (poll(s->pfds, n, reach_poll_ms_until(next_wakeup(s, now), now)) < 0 &&
		    errno != EINTR)
			break;
		if (s->pfds[0].revents)
			break; /* reach_unlisten or reach_shutdown */
		now = reach_now_us();
		serve_peers(s, 1 + s->nlisten + s->necho, now);
		for (size_t i = 0; i < s->necho; i++) {
			if (s->pfds[1 + s->nlisten + i].revents)
				reach_pmtu_echo(s->echo_fds[i], s->token, s->bulk_buf,
				                sizeof(s->bulk_buf));
		}
		for (size_t i = 0; i < s->nlisten; i++) {
			if (s->pfds[1 + i].revents)
				accept_peers(s, s->listen_fds[i], now);
		}
	}
	/* Closing the listeners here, not at unlisten, makes a listener whose
	 * duration ran out refuse connections instead of leaving them in the
	 * backlog unanswered. */
	close_server_sockets(s);
	free(s->peers);
	free(s->pfds);
	s->peers = NULL;
	s->pfds = NULL;
	pthread_mutex_lock(&server_lock);
	s->finished = 1;
	pthread_mutex_unlock(&server_lock);
	return NULL;
}

/* The thread gets no signal: the agent's main thread keeps all of them. */
static int start_server_thread(struct server *s)
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&s->thread, NULL, serve_listeners, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

/* Frees a server whose thread never started or has been joined. */
static void free_server(struct server *s)
{
	close_server_sockets(s);
	if (s->wake[0] >= 0)
		close(s->wake[0]);
	if (s->wake[1] >= 0)
		close(s->wake[1]);
	free(s->listen_fds);
	free(s->echo_fds);
	rdma_side_free(s->rdma);
	free(s);
}

/* Stops the server thread (at once: the wake pipe ends its poll) and frees
 * it. No-op without a server. */
static void stop_server(void)
{
	ssize_t n;

	if (!server)
		return;
	do
		n = write(server->wake[1], "x", 1);
	while (n < 0 && errno == EINTR);
	pthread_join(server->thread, NULL);
	free_server(server);
	server = NULL;
}

/* A server whose duration ran out has ended on its own: join and free it,
 * so that a new `listen` may start. */
static void reap_finished_server(void)
{
	int finished;

	if (!server)
		return;
	pthread_mutex_lock(&server_lock);
	finished = server->finished;
	pthread_mutex_unlock(&server_lock);
	if (finished)
		stop_server();
}

static struct server *new_server(const char *token, long long node, long long duration_ms)
{
	struct server *s = cd_calloc(1, sizeof(*s));

	s->wake[0] = s->wake[1] = -1;
	snprintf(s->token, sizeof(s->token), "%s", token);
	s->node = node;
	s->end = reach_now_us() + duration_ms * 1000;
	return s;
}

json_t *reach_listen(json_t *req, const char **code, char *msg, size_t msglen)
{
	long long node, duration_ms = REACH_DURATION_MS;
	json_t *listeners, *fixed, *rdma;
	const char *token;
	struct server *s;
	int rc;

	if (reach_read_token_and_node(req, &token, &node, msg, msglen) < 0 ||
	    !listen_request_is_valid(req, msg, msglen)) {
		*code = "bad-request";
		return NULL;
	}
	reap_finished_server();
	if (server)
		return proto_handler_fail(code, "busy", msg, msglen,
		                          "already listening: send unlisten first");
	reach_raise_fd_limit_once();
	proto_field_int(req, "duration_ms", 1, REACH_DURATION_MAX, &duration_ms);
	s = new_server(token, node, duration_ms);
	if (pipe2(s->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		free_server(s);
		return proto_handler_fail(code, "failed", msg, msglen, "pipe: %s", strerror(errno));
	}
	rdma = reach_rdma_listen_side(req, s->token, &s->rdma, s->rdma_why, sizeof(s->rdma_why));
	listeners = listen_on_addresses(s, json_object_get(req, "addresses"));
	fixed = listen_on_fixed_ports(s, json_object_get(req, "ports"));
	rc = start_server_thread(s);
	if (rc != 0) {
		free_server(s);
		json_decref(listeners);
		json_decref(fixed);
		return proto_handler_fail(code, "failed", msg, msglen,
		                          "cannot start the listener thread: %s", strerror(rc));
	}
	server = s;
	return json_pack("{sososo}", "listeners", listeners, "fixed", fixed, "rdma", rdma);
}

json_t *reach_unlisten(json_t *req, const char **code, char *msg, size_t msglen)
{
	stop_server();
	return json_object();
}

void reach_shutdown(void)
{
	stop_server();
}
