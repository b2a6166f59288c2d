/*
 * reach.c - the reachability matrix, agent side (see reach.h).
 *
 * Two halves share only the wire format:
 * - the listener: reach_listen opens the sockets in the request's thread,
 *   then hands them to one server thread that polls them, accepts peers and
 *   answers their CDREACH1 line. The thread sees no jansson object: it works
 *   on a plain struct server copied from the request. The only state it
 *   shares with the request thread afterwards is `finished`, under
 *   server_lock;
 * - the connector: reach_connect runs in the request's thread, every target
 *   a non-blocking socket in one poll() loop, each with its own deadline.
 */
#include "probes/reach.h"
#include "cd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define REACH_LINE_MAX       256 /* a CDREACH1 line, newline included */
#define REACH_TOKEN_MIN      16  /* hex characters */
#define REACH_TOKEN_MAX      64
#define REACH_BACKLOG        1024
#define REACH_DURATION_MS    120000  /* listen's default lifetime */
#define REACH_DURATION_MAX   3600000 /* an hour: longer is surely a mistake */
#define REACH_TIMEOUT_MS     3000    /* connect's default deadline per attempt */
#define REACH_TIMEOUT_MAX    600000
#define REACH_PEER_WAIT_US   2000000 /* a listener waits this long for a peer's line */
#define REACH_MAX_PEERS      4096    /* accepted connections served at once */
#define REACH_ACCEPTS_PER_FD 256     /* accepts per listener per turn, so none starves */
#define REACH_ACCEPT_PAUSE   50000   /* µs without accepting after running out of fds */

/* --- small shared helpers ------------------------------------------------- */

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* poll()'s timeout for a deadline, rounded up: rounding down would wake
 * before the deadline and spin with a timeout of 0 until it passes. */
static int poll_ms_until(int64_t deadline, int64_t now)
{
	int64_t ms;

	if (deadline <= now)
		return 0;
	ms = (deadline - now + 999) / 1000;
	return ms > INT_MAX ? INT_MAX : (int)ms;
}

#define ERRNO_NAME(e) \
	{             \
		e, #e \
	}
static const struct {
	int err;
	const char *name;
} errno_names[] = {
    ERRNO_NAME(ECONNREFUSED), ERRNO_NAME(ETIMEDOUT),   ERRNO_NAME(EHOSTUNREACH),
    ERRNO_NAME(ENETUNREACH),  ERRNO_NAME(EINVAL),      ERRNO_NAME(EACCES),
    ERRNO_NAME(EPERM),        ERRNO_NAME(EADDRINUSE),  ERRNO_NAME(EADDRNOTAVAIL),
    ERRNO_NAME(EAFNOSUPPORT), ERRNO_NAME(ECONNRESET),  ERRNO_NAME(ENOBUFS),
    ERRNO_NAME(EMFILE),       ERRNO_NAME(ENFILE),      ERRNO_NAME(EPIPE),
    ERRNO_NAME(EINTR),        ERRNO_NAME(EAGAIN),      ERRNO_NAME(ENODEV),
    ERRNO_NAME(ENOMEM),       ERRNO_NAME(ENETDOWN),    ERRNO_NAME(EHOSTDOWN),
    ERRNO_NAME(ECONNABORTED), ERRNO_NAME(ENOTCONN),    ERRNO_NAME(EPROTO),
    ERRNO_NAME(ENOPROTOOPT),  ERRNO_NAME(EOPNOTSUPP),  ERRNO_NAME(EPROTONOSUPPORT),
    ERRNO_NAME(ENETRESET),    ERRNO_NAME(EINPROGRESS), ERRNO_NAME(EALREADY),
};

const char *reach_errno_name(int err)
{
	static _Thread_local char other[24];

	for (size_t i = 0; i < CD_ARRAY_LEN(errno_names); i++) {
		if (errno_names[i].err == err)
			return errno_names[i].name;
	}
	snprintf(other, sizeof(other), "E%d", err);
	return other;
}

/* Many sockets at once: lift the soft limit on open files to the hard one.
 * Best effort; runs once per process. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static void raise_fd_limit_once(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, raise_fd_limit);
}

static json_t *fail_with(const char **code, const char *what, char *msg, size_t msglen,
                         const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static json_t *fail_with(const char **code, const char *what, char *msg, size_t msglen,
                         const char *fmt, ...)
{
	va_list ap;

	*code = what;
	va_start(ap, fmt);
	vsnprintf(msg, msglen, fmt, ap);
	va_end(ap);
	return NULL;
}

static int token_is_valid(const char *token)
{
	size_t len = strlen(token);

	if (len < REACH_TOKEN_MIN || len > REACH_TOKEN_MAX)
		return 0;
	for (size_t i = 0; i < len; i++) {
		char c = token[i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
			return 0;
	}
	return 1;
}

/* The token and node every request carries; a message in msg when either is
 * missing or malformed. */
static int read_token_and_node(json_t *req, const char **token, long long *node, char *msg,
                               size_t msglen)
{
	json_t *t = json_object_get(req, "token"), *n = json_object_get(req, "node");

	if (!json_is_string(t) || !token_is_valid(json_string_value(t))) {
		snprintf(msg, msglen, "\"token\" must be a string of %d to %d hex characters",
		         REACH_TOKEN_MIN, REACH_TOKEN_MAX);
		return -1;
	}
	if (!json_is_integer(n) || json_integer_value(n) < 0) {
		snprintf(msg, msglen, "\"node\" must be a non-negative integer");
		return -1;
	}
	*token = json_string_value(t);
	*node = json_integer_value(n);
	return 0;
}

/* An optional integer field in [lo, hi]; *out keeps its default when the
 * field is absent. */
static int read_optional_int(json_t *obj, const char *key, long long lo, long long hi,
                             long long *out)
{
	json_t *v = json_object_get(obj, key);

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
		return -1;
	*out = json_integer_value(v);
	return 0;
}

/* addr from an address text, an interface index (IPv6 link-local needs it)
 * and a port; 0, or EINVAL when the text is neither IPv4 nor IPv6. */
static int sockaddr_from_text(const char *text, long long scope_id, int port,
                              struct sockaddr_storage *addr, socklen_t *len)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)addr;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)addr;

	memset(addr, 0, sizeof(*addr));
	if (inet_pton(AF_INET, text, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
		*len = sizeof(*sin);
		return 0;
	}
	if (inet_pton(AF_INET6, text, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		sin6->sin6_scope_id = (uint32_t)scope_id;
		*len = sizeof(*sin6);
		return 0;
	}
	return EINVAL;
}

/* Splits a CDREACH1 line (its newline already cut) into token and node:
 * exactly "CDREACH1 <token> <decimal node>", nothing else. 0 when it is one. */
static int parse_reach_line(char *line, const char **token, long long *node)
{
	static const char magic[] = REACH_MAGIC " ";
	char *tok, *num, *end;

	if (strncmp(line, magic, sizeof(magic) - 1) != 0)
		return -1;
	tok = line + sizeof(magic) - 1;
	num = strchr(tok, ' ');
	if (!num || num == tok)
		return -1;
	*num++ = '\0';
	if (*num < '0' || *num > '9' || strlen(num) > 18)
		return -1;
	*node = strtoll(num, &end, 10);
	if (*end != '\0')
		return -1;
	*token = tok;
	return 0;
}

/* --- the listener: sockets -------------------------------------------------- */

struct peer {
	int fd;
	int64_t deadline; /* µs: dropped unanswered after this */
	size_t len;
	char line[REACH_LINE_MAX];
};

struct server {
	pthread_t thread;
	int wake[2]; /* a byte on wake[1] stops the thread */
	int *listen_fds;
	size_t nlisten;
	char token[REACH_TOKEN_MAX + 1];
	long long node;
	int64_t end;  /* µs: the thread stops here (duration_ms) */
	int finished; /* set by the thread as it ends; under server_lock */

	/* the thread's own */
	struct peer *peers;
	size_t npeers, peers_cap;
	struct pollfd *pfds;
	int64_t accept_resume; /* µs: no accepts before this (out of fds) */
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

	read_optional_int(entry, "scope_id", 0, UINT32_MAX, &scope_id);
	row = json_pack("{sssI}", "address", text, "scope_id", (json_int_t)scope_id);
	if (sockaddr_from_text(text, scope_id, 0, &addr, &len) != 0)
		return errno_fields(row, EINVAL);
	fd = open_listener((struct sockaddr *)&addr, len, 1);
	if (fd < 0)
		return errno_fields(row, -fd);
	server_keep_fd(s, fd);
	json_object_set_new(row, "port", json_integer(bound_port(fd)));
	return row;
}

static json_t *listen_on_fixed_port(struct server *s, int port)
{
	json_t *row = json_pack("{si}", "port", port);
	const char *bound;
	int fd = open_fixed_listener(port, &bound);

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

static json_t *listen_on_fixed_ports(struct server *s, json_t *ports)
{
	json_t *rows = json_array();

	for (size_t i = 0; i < json_array_size(ports); i++) {
		int port = (int)json_integer_value(json_array_get(ports, i));

		json_array_append_new(rows, listen_on_fixed_port(s, port));
	}
	return rows;
}

static int address_entry_is_valid(json_t *entry)
{
	long long scope_id;

	return json_is_string(json_object_get(entry, "address")) &&
	       read_optional_int(entry, "scope_id", 0, UINT32_MAX, &scope_id) == 0;
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
	if (read_optional_int(req, "duration_ms", 1, REACH_DURATION_MAX, &duration_ms) < 0) {
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

/* Answers a connector whose line carries our token. The send cannot block
 * and a short one cannot happen in practice: the socket is fresh and the
 * line is far smaller than any send buffer. */
static void answer_peer(struct server *s, struct peer *p)
{
	const char *token;
	long long from;
	char reply[REACH_LINE_MAX];
	int n;

	if (parse_reach_line(p->line, &token, &from) != 0 || strcmp(token, s->token) != 0)
		return;
	n = snprintf(reply, sizeof(reply), REACH_MAGIC " %s %lld\n", s->token, s->node);
	/* A failure means the connector went away: nobody to tell. */
	send(p->fd, reply, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* Reads what a peer sent. 1 when the peer is done with (answered or to be
 * dropped), 0 while its line is incomplete. */
static int read_peer(struct server *s, struct peer *p)
{
	ssize_t n = recv(p->fd, p->line + p->len, sizeof(p->line) - 1 - p->len, 0);
	char *newline;

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
	return 1;
}

/* Fills s->pfds: [0] the wake pipe, then the listeners (fd -1, which poll
 * skips, while accepting is paused or every peer slot is taken), then the
 * peers. Returns the count. */
static nfds_t fill_pollfds(struct server *s, int64_t now)
{
	int accepting = s->npeers < REACH_MAX_PEERS && now >= s->accept_resume;
	nfds_t n = 0;

	s->pfds[n++] = (struct pollfd){.fd = s->wake[0], .events = POLLIN};
	for (size_t i = 0; i < s->nlisten; i++)
		s->pfds[n++] =
		    (struct pollfd){.fd = accepting ? s->listen_fds[i] : -1, .events = POLLIN};
	for (size_t i = 0; i < s->npeers; i++)
		s->pfds[n++] = (struct pollfd){.fd = s->peers[i].fd, .events = POLLIN};
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
		int done = s->pfds[first + i].revents ? read_peer(s, p) : 0;

		if (done || now >= p->deadline) {
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
	for (size_t i = 0; i < s->npeers; i++)
		close(s->peers[i].fd);
	for (size_t i = 0; i < s->nlisten; i++)
		close(s->listen_fds[i]);
	s->npeers = 0;
	s->nlisten = 0;
}

static void *serve_listeners(void *arg)
{
	struct server *s = arg;

	s->pfds = cd_calloc(1 + s->nlisten + REACH_MAX_PEERS, sizeof(*s->pfds));
	for (;;) {
		int64_t now = now_us();
		nfds_t n;

		if (now >= s->end)
			break;
		n = fill_pollfds(s, now);
		if (poll(s->pfds, n, poll_ms_until(next_wakeup(s, now), now)) < 0 && errno != EINTR)
			break;
		if (s->pfds[0].revents)
			break; /* reach_unlisten or reach_shutdown */
		now = now_us();
		serve_peers(s, 1 + s->nlisten, now);
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
	s->end = now_us() + duration_ms * 1000;
	return s;
}

json_t *reach_listen(json_t *req, const char **code, char *msg, size_t msglen)
{
	long long node, duration_ms = REACH_DURATION_MS;
	json_t *listeners, *fixed;
	const char *token;
	struct server *s;
	int rc;

	if (read_token_and_node(req, &token, &node, msg, msglen) < 0 ||
	    !listen_request_is_valid(req, msg, msglen)) {
		*code = "bad-request";
		return NULL;
	}
	reap_finished_server();
	if (server)
		return fail_with(code, "busy", msg, msglen,
		                 "already listening: send unlisten first");
	raise_fd_limit_once();
	read_optional_int(req, "duration_ms", 1, REACH_DURATION_MAX, &duration_ms);
	s = new_server(token, node, duration_ms);
	if (pipe2(s->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		free_server(s);
		return fail_with(code, "failed", msg, msglen, "pipe: %s", strerror(errno));
	}
	listeners = listen_on_addresses(s, json_object_get(req, "addresses"));
	fixed = listen_on_fixed_ports(s, json_object_get(req, "ports"));
	rc = start_server_thread(s);
	if (rc != 0) {
		free_server(s);
		json_decref(listeners);
		json_decref(fixed);
		return fail_with(code, "failed", msg, msglen,
		                 "cannot start the listener thread: %s", strerror(rc));
	}
	server = s;
	return json_pack("{soso}", "listeners", listeners, "fixed", fixed);
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

/* --- the connector ----------------------------------------------------------- */

enum phase {
	PHASE_WAITING,    /* not started: no free slot yet */
	PHASE_CONNECTING, /* non-blocking connect under way */
	PHASE_SENDING,    /* connected, our line not all sent */
	PHASE_READING,    /* waiting for the answer line */
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

	/* progress */
	enum phase phase;
	int fd;
	int64_t start, deadline; /* µs */
	size_t sent, got;
	char answer[REACH_LINE_MAX];

	/* outcome */
	const char *result;
	int err;               /* errno for refused/timeout/no-route/...; 0 if none */
	int64_t rtt_us;        /* -1 until connected */
	long long peer_node;   /* wrong-peer: who answered */
	enum no_answer reason; /* bad-answer: why */
};

/* What each attempt sends: "CDREACH1 <token> <our node>\n". */
struct hello {
	char line[REACH_LINE_MAX];
	size_t len;
	const char *token;
	int timeout_ms;
};

static int read_target(json_t *t, struct attempt *a)
{
	json_t *id = json_object_get(t, "id"), *node = json_object_get(t, "node");
	const char *address = json_string_value(json_object_get(t, "address"));
	json_t *port = json_object_get(t, "port");
	long long scope_id = 0;

	if (!json_is_integer(id) || !json_is_integer(node) || !address || !json_is_integer(port) ||
	    read_optional_int(t, "scope_id", 0, UINT32_MAX, &scope_id) < 0)
		return -1;
	memset(a, 0, sizeof(*a));
	a->id = json_integer_value(id);
	a->node = json_integer_value(node);
	a->fd = -1;
	a->rtt_us = -1;
	a->phase = PHASE_WAITING;
	a->bad_address = json_integer_value(port) < 1 || json_integer_value(port) > 65535 ||
	                 sockaddr_from_text(address, scope_id, (int)json_integer_value(port),
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

/* Judges a complete answer line (newline cut). */
static void judge_answer(struct attempt *a, const struct hello *h)
{
	const char *token;
	long long node;

	if (parse_reach_line(a->answer, &token, &node) != 0 || strcmp(token, h->token) != 0) {
		finish_no_answer(a, NO_ANSWER_GARBAGE, 0);
		return;
	}
	if (node != a->node) {
		a->peer_node = node;
		finish(a, "wrong-peer", 0);
		return;
	}
	finish(a, "ok", 0);
}

static void send_hello(struct attempt *a, const struct hello *h)
{
	ssize_t n = send(a->fd, h->line + a->sent, h->len - a->sent, MSG_NOSIGNAL);

	if (n < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			finish_no_answer(a, NO_ANSWER_SOCKET_ERR, errno);
		return;
	}
	a->sent += (size_t)n;
	if (a->sent == h->len)
		a->phase = PHASE_READING;
}

static void on_connected(struct attempt *a, const struct hello *h)
{
	a->rtt_us = now_us() - a->start;
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
	a->start = now_us();
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
	default:
		break;
	}
}

static void expire_attempt(struct attempt *a, int64_t now)
{
	if (a->phase == PHASE_DONE || now < a->deadline)
		return;
	if (a->phase == PHASE_CONNECTING)
		finish(a, "timeout", ETIMEDOUT);
	else
		finish_no_answer(a, NO_ANSWER_IN_TIME, 0);
}

static short events_for(const struct attempt *a)
{
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
	int64_t now = now_us();
	size_t kept = 0;

	for (size_t i = 0; i < f->n; i++) {
		struct attempt *a = &attempts[f->idx[i]];

		advance_attempt(a, f->pfds[i].revents, h);
		expire_attempt(a, now);
		if (a->phase != PHASE_DONE)
			f->idx[kept++] = f->idx[i];
	}
	f->n = kept;
}

static int64_t earliest_deadline(const struct attempt *attempts, const struct flight *f)
{
	int64_t when = INT64_MAX;

	for (size_t i = 0; i < f->n; i++) {
		if (attempts[f->idx[i]].deadline < when)
			when = attempts[f->idx[i]].deadline;
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

			f.pfds[i] = (struct pollfd){.fd = a->fd, .events = events_for(a)};
		}
		if (poll(f.pfds, f.n, poll_ms_until(earliest_deadline(attempts, &f), now_us())) <
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

static json_t *attempt_json(const struct attempt *a, int timeout_ms)
{
	json_t *row = json_pack("{sIss}", "id", a->id, "result", a->result);
	char text[160];

	if (a->rtt_us >= 0)
		json_object_set_new(row, "rtt_us", json_integer(a->rtt_us));
	if (strcmp(a->result, "ok") == 0)
		return row;
	if (a->err)
		json_object_set_new(row, "errno_name", json_string(reach_errno_name(a->err)));
	if (strcmp(a->result, "wrong-peer") == 0) {
		json_object_set_new(row, "peer_node", json_integer(a->peer_node));
		snprintf(text, sizeof(text), "node %lld answered, not node %lld", a->peer_node,
		         a->node);
	} else if (strcmp(a->result, "bad-answer") == 0) {
		no_answer_text(a, timeout_ms, text, sizeof(text));
	} else {
		snprintf(text, sizeof(text), "%s", strerror(a->err));
	}
	json_object_set_new(row, "message", json_string(text));
	return row;
}

json_t *reach_connect(json_t *req, const char **code, char *msg, size_t msglen)
{
	long long node, timeout_ms = REACH_TIMEOUT_MS;
	struct attempt *attempts;
	struct hello h;
	json_t *results;
	size_t count;

	if (read_token_and_node(req, &h.token, &node, msg, msglen) < 0) {
		*code = "bad-request";
		return NULL;
	}
	if (read_optional_int(req, "timeout_ms", 1, REACH_TIMEOUT_MAX, &timeout_ms) < 0)
		return fail_with(code, "bad-request", msg, msglen, "\"timeout_ms\" must be 1 to %d",
		                 REACH_TIMEOUT_MAX);
	attempts = read_targets(json_object_get(req, "targets"), &count, msg, msglen);
	if (!attempts) {
		*code = "bad-request";
		return NULL;
	}
	raise_fd_limit_once();
	h.timeout_ms = (int)timeout_ms;
	h.len = (size_t)snprintf(h.line, sizeof(h.line), REACH_MAGIC " %s %lld\n", h.token, node);
	run_attempts(attempts, count, &h);
	results = json_array();
	for (size_t i = 0; i < count; i++)
		json_array_append_new(results, attempt_json(&attempts[i], h.timeout_ms));
	free(attempts);
	return json_pack("{so}", "results", results);
}
