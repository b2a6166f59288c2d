/*
 * transport_back.c - the connect-back transport and its listener
 * (transport_back.h): accept, the handshake's two lines each way
 * (backauth.h), matching an agent to its node, then pumping the socket
 * like transport_proc.c pumps pipes; and the launchers that start the
 * agents: one `srun` for every node, or one local process per node.
 */
#include "transport_back.h"
#include "backauth.h"
#include "cd.h"
#include "child.h"
#include "hostlist.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define BACK_SECRET_HEX   64
#define LAUNCHER_ERR_MAX  8192   /* the launcher's stderr kept (its newest bytes) */
#define REAP_BUSY_MS      200    /* local agents are looked at this often while some are awaited */
#define REAP_IDLE_MS      2000   /* ...and this often once all have connected */
#define LAUNCHER_EXIT_MS  3000   /* how long backlisten_free waits for the launched processes */
#define SPAWN_BATCH       32     /* local agents started per loop turn (accepts go on between) */
#define SBCAST_TIMEOUT_MS 120000 /* sbcast of the agent to every node of the allocation */
#define EXITED_GRACE_MS   500  /* how long srun's "task exited" line waits for the agent's words */
#define PEND_SPARE        256  /* unproven connections beyond one per node */
#define PEND_HELLO_MS     3000 /* a real agent says hello as soon as it connects */
#define ACCEPT_PAUSE_MS   100  /* the listener rests this long when no descriptor is left */
#define FLOOD_MIN         16   /* dropped unproven connections that make a flood */

/* An accepted connection: handshake under way (in b's queue of unproven
 * connections, oldest first), or proven and parked until its node waits
 * for it (out of the queue). */
struct pend {
	struct backlisten *b;
	int fd;
	int proven;
	int queued; /* in b->pends */
	char line[BACKAUTH_LINE_MAX];
	size_t len;
	struct backauth a;
	uint64_t timer;
	struct pend *prev, *next;
};

/* c->priv of a node's conn */
struct backconn {
	size_t host; /* index into b->hosts */
	int fd;      /* the agent's socket, -1 until it connected */
	int failed;
	int started; /* told the owner the launcher started the agent (ev->connected) */
};

struct backlisten {
	struct loop *loop;
	enum launcher kind;
	int fd;
	char secret[BACK_SECRET_HEX + 1];
	char addr[INET6_ADDRSTRLEN + 16];
	int handshake_ms;
	char **hosts; /* the run's nodes, as the pool names them */
	size_t n;
	size_t *order; /* indexes of hosts sorted by name, for lookups */
	struct conn **waiting;
	struct pend **parked;
	unsigned char *taken;      /* the node's agent connected (once per run) */
	unsigned char *spawned_at; /* local-connect: the node's agent process runs */
	char **dead;               /* why the launcher could not start the node's agent */
	/* Unproven connections, oldest first: at most pend_max, each with a
	 * deadline per handshake line; the oldest goes when a new one needs room. */
	struct pend *pends, *pends_last;
	size_t npend, pend_max;
	size_t dropped; /* connections closed unproven: silent, malformed, crowded out */
	long twice;     /* a node two agents proved themselves as (srun), or -1 */
	char note[BACKAUTH_NAME_MAX + 160]; /* said with each node's failure: twice */
	uint64_t pause_timer;               /* the listener rests (no descriptor left) */
	/* srun */
	struct child srun;
	int srun_started;
	struct buf err; /* the launcher's stderr (srun's, or the local agents') */
	char errline[512];
	size_t errline_len;
	char **exited; /* srun's "task N: Exited" line of the node, until the grace ends */
	int sbcast;    /* copy the agent to the nodes' /tmp with sbcast first */
	uint64_t exited_timer;
	/* local-connect */
	pid_t *pids;
	int err_pipe, err_pipe_w;
	uint64_t reap_timer;
	size_t live;
	size_t spawned; /* agents started so far (a batch per loop turn) */
	uint64_t spawn_timer;
	char *agent;
	char **envp; /* the head's environment, the secret, the name */
	char key_env[sizeof(BACKAUTH_KEY_ENV) + BACKAUTH_PROOF_HEX + 1]; /* the node's own key */
	char name_env[BACKAUTH_NAME_MAX + sizeof(BACKAUTH_NAME_ENV) + 1];
};

const char *launcher_name(enum launcher l)
{
	return l == LAUNCHER_SRUN ? "srun" : l == LAUNCHER_LOCAL_CONNECT ? "local-connect" : "ssh";
}

int launcher_parse(const char *s)
{
	if (strcmp(s, "ssh") == 0)
		return LAUNCHER_SSH;
	if (strcmp(s, "srun") == 0)
		return LAUNCHER_SRUN;
	if (strcmp(s, "local-connect") == 0)
		return LAUNCHER_LOCAL_CONNECT;
	return -1;
}

const char *backlisten_address(const struct backlisten *b)
{
	return b->addr;
}

static const struct backlisten *sort_ctx;
static int by_name(const void *x, const void *y)
{
	return strcmp(sort_ctx->hosts[*(const size_t *)x], sort_ctx->hosts[*(const size_t *)y]);
}

/* The index of the node named name, or -1. */
static long find_host(const struct backlisten *b, const char *name)
{
	size_t lo = 0, hi = b->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, b->hosts[b->order[mid]]);

		if (c == 0)
			return (long)b->order[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

/* ---- a node's conn ---- */

static void back_fail(struct conn *c, const char *code, const char *msg)
{
	struct backconn *p = c->priv;

	if (p->failed)
		return;
	p->failed = 1;
	c->ev->failed(c, code, msg);
}

static void back_watch(struct conn *c);

static void on_sock(struct loop *loop, int fd, short revents, void *arg)
{
	struct conn *c = arg;
	struct backconn *p = c->priv;
	char msg[CD_ERRLEN];

	if (revents & POLLOUT) {
		if (buf_write_fd(&c->out, fd) == CD_ERR_IO) {
			snprintf(msg, sizeof(msg), "the agent's connection broke: %s",
			         strerror(errno));
			back_fail(c, "agent", msg);
			return;
		}
		back_watch(c);
	}
	if (revents & (POLLIN | POLLHUP | POLLERR)) {
		ssize_t n = buf_read_fd(&c->in, fd);

		if (n > 0) {
			c->ev->data(c);
		} else if (n == CD_ERR_TOOBIG) {
			back_fail(c, "agent",
			          "the agent sent more than the buffer cap without a newline");
		} else if (n == 0) {
			loop_unwatch(loop, fd);
			if (!p->failed) {
				p->failed = 1; /* nothing more will be reported */
				c->ev->closed(c);
			}
		} else if (n == CD_ERR_IO) {
			snprintf(msg, sizeof(msg), "the agent's connection broke: %s",
			         strerror(errno));
			back_fail(c, "agent", msg);
		}
	}
}

static void back_watch(struct conn *c)
{
	struct backconn *p = c->priv;

	if (p->fd >= 0 && !p->failed)
		loop_watch(c->loop, p->fd, (short)(POLLIN | (c->out.len ? POLLOUT : 0)), on_sock,
		           c);
}

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

static void pend_free(struct pend *q, int close_fd)
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
	pend_free(q, 1);
}

/* The agent of host i has proven itself, and its node waits: take it. */
static void adopt(struct backlisten *b, size_t i, struct pend *q)
{
	struct conn *c = b->waiting[i];
	struct backconn *p = c->priv;

	p->fd = q->fd;
	b->parked[i] = NULL;
	b->taken[i] = 1;
	if (q->len)
		buf_append(&c->in, q->line, q->len);
	pend_free(q, 0);
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

/* The launcher started the node's agent (local-connect knows when): the
 * owner's handshake deadline runs from now, not from the whole launch. */
static void back_started(struct conn *c)
{
	struct backconn *p = c->priv;

	if (p->started || p->failed)
		return;
	p->started = 1;
	c->ev->connected(c);
}

static int back_start(struct conn *c)
{
	struct backlisten *b = c->cfg->back;
	struct backconn *p = cd_calloc(1, sizeof(*p));
	long i = b ? find_host(b, c->label) : -1;

	p->fd = -1;
	c->priv = p;
	if (i < 0) {
		back_fail(c, "launcher", "the node is not one the launcher started");
		return CD_ERR_IO;
	}
	p->host = (size_t)i;
	b->waiting[i] = c;
	if (b->dead[i]) {
		back_fail(c, "launcher", b->dead[i]);
		return CD_ERR_IO;
	}
	if (b->spawned_at[i])
		back_started(c);
	if (!p->failed && b->parked[i])
		adopt(b, (size_t)i, b->parked[i]);
	return 0;
}

static void back_flush(struct conn *c)
{
	struct backconn *p = c->priv;

	if (!p || p->fd < 0 || p->failed)
		return;
	if (buf_write_fd(&c->out, p->fd) == CD_ERR_IO) {
		char msg[CD_ERRLEN];

		snprintf(msg, sizeof(msg), "the agent's connection broke: %s", strerror(errno));
		back_fail(c, "agent", msg);
		return;
	}
	back_watch(c);
}

static void back_close(struct conn *c)
{
	struct backconn *p = c->priv;
	struct backlisten *b = c->cfg->back;

	if (!p)
		return;
	if (p->fd >= 0) {
		loop_unwatch(c->loop, p->fd);
		close(p->fd);
	}
	if (b && p->host < b->n && b->waiting[p->host] == c)
		b->waiting[p->host] = NULL;
	free(p);
	c->priv = NULL;
}

const struct transport_ops transport_back = {
    .name = "connect-back",
    .upload_mode = UPLOAD_NONE,
    .start = back_start,
    .flush = back_flush,
    .close = back_close,
};

/* ---- the listener and the handshake ---- */

/* The launcher could not start host i's agent (msg says why, in its words). */
static void fail_host(struct backlisten *b, size_t i, const char *msg)
{
	char flood[160] = "";

	if (b->taken[i] || b->dead[i])
		return;
	if (b->dropped >= FLOOD_MIN)
		snprintf(flood, sizeof(flood),
		         "; meanwhile %zu connections to %s did not prove themselves (a flood or a "
		         "scanner)",
		         b->dropped, b->addr);
	b->dead[i] = cd_asprintf("%s%s%s", msg, flood,
	                         b->twice >= 0 && (size_t)b->twice != i ? b->note : "");
	if (b->waiting[i])
		back_fail(b->waiting[i], "launcher", b->dead[i]);
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
		if (m < 0 || nl + 1 != q->line + q->len || find_host(b, q->a.name) < 0 ||
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
	i = find_host(b, q->a.name);
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
		pend_free(q, 1);
		return -1;
	}
	q->proven = 1;
	pend_unqueue(q);
	loop_timer_cancel(b->loop, q->timer);
	q->timer = 0;
	loop_unwatch(b->loop, q->fd);
	b->parked[i] = q;
	if (b->waiting[i])
		adopt(b, (size_t)i, q);
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

size_t backlisten_dropped(const struct backlisten *b)
{
	return b->dropped;
}

int backlisten_flooded(const struct backlisten *b)
{
	return b->dropped >= FLOOD_MIN;
}

const char *backlisten_note(const struct backlisten *b, const char *host)
{
	long i = find_host(b, host);

	return b->twice >= 0 && i != b->twice ? b->note : "";
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

/* Room for n sockets besides what the head holds already. */
static void raise_nofile(size_t n)
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

struct backlisten *backlisten_new(struct loop *loop, enum launcher l, const char *listen_arg,
                                  char *const hosts[], size_t n, int handshake_timeout_ms,
                                  char *err, size_t errlen)
{
	struct backlisten *b = cd_calloc(1, sizeof(*b));

	b->loop = loop;
	b->kind = l;
	b->fd = -1;
	b->err_pipe = -1;
	b->err_pipe_w = -1;
	b->handshake_ms = handshake_timeout_ms;
	b->twice = -1;
	b->n = n;
	b->hosts = cd_calloc(n ? n : 1, sizeof(*b->hosts));
	b->order = cd_calloc(n ? n : 1, sizeof(*b->order));
	for (size_t i = 0; i < n; i++) {
		b->hosts[i] = cd_strdup(hosts[i]);
		b->order[i] = i;
	}
	sort_ctx = b;
	qsort(b->order, n, sizeof(*b->order), by_name);
	b->waiting = cd_calloc(n ? n : 1, sizeof(*b->waiting));
	b->parked = cd_calloc(n ? n : 1, sizeof(*b->parked));
	b->taken = cd_calloc(n ? n : 1, 1);
	b->spawned_at = cd_calloc(n ? n : 1, 1);
	b->dead = cd_calloc(n ? n : 1, sizeof(*b->dead));
	b->exited = cd_calloc(n ? n : 1, sizeof(*b->exited));
	buf_init(&b->err, LAUNCHER_ERR_MAX);
	cd_random_token(b->secret, 33);
	cd_random_token(b->secret + 32, 33);
	b->pend_max = n + PEND_SPARE;
	raise_nofile(n + b->pend_max);
	if (listen_on(b, listen_arg, err, errlen) < 0) {
		backlisten_free(b);
		return NULL;
	}
	loop_watch(loop, b->fd, POLLIN, on_accept, b);
	return b;
}

/* ---- the launchers ---- */

/* The grace is over: each node srun said had exited fails with srun's line
 * (unless the agent's own words came meanwhile). */
static void exited_flush(struct backlisten *b)
{
	for (size_t i = 0; i < b->n; i++) {
		if (b->exited[i])
			fail_host(b, i, b->exited[i]);
		free(b->exited[i]);
		b->exited[i] = NULL;
	}
}

static void on_exited_grace(struct loop *loop, void *arg)
{
	struct backlisten *b = arg;

	b->exited_timer = 0;
	exited_flush(b);
}

/* srun's error line names host i. Its "task N: Exited with exit code"
 * races the agent's own stderr (another connection of slurmstepd's): that
 * line waits EXITED_GRACE_MS for the agent's words, which say why. */
static void launcher_names(struct backlisten *b, size_t i, const char *line)
{
	if (!strstr(line, ": Exited with exit code")) {
		fail_host(b, i, line);
		return;
	}
	if (b->taken[i] || b->dead[i] || b->exited[i])
		return;
	b->exited[i] = cd_strdup(line);
	if (!b->exited_timer)
		b->exited_timer = loop_timer_add(b->loop, EXITED_GRACE_MS, on_exited_grace, b);
}

/* A line of the launcher's stderr: kept, and an srun error naming a node
 * that has not connected fails that node with srun's own words. */
static void launcher_line(struct backlisten *b, const char *line)
{
	buf_append_str(&b->err, line);
	buf_append_str(&b->err, "\n");
	if (b->err.len > LAUNCHER_ERR_MAX / 2)
		buf_consume(&b->err, b->err.len - LAUNCHER_ERR_MAX / 2);
	if (b->kind != LAUNCHER_SRUN)
		return;
	/* The agent's own words first ("clusterdoc-agent: NODE: cannot connect
	 * back ..."): srun's "task exited" line follows them. */
	if (strncmp(line, "clusterdoc-agent: ", 18) == 0) {
		char name[BACKAUTH_NAME_MAX];
		size_t len = strcspn(line + 18, ":");
		long i;

		if (len < sizeof(name) && line[18 + len] == ':') {
			snprintf(name, sizeof(name), "%.*s", (int)len, line + 18);
			if ((i = find_host(b, name)) >= 0)
				fail_host(b, (size_t)i, line);
		}
		return;
	}
	if (!strstr(line, "error"))
		return;
	for (size_t i = 0; i < b->n; i++) {
		const char *h = b->hosts[i], *at = line;
		size_t hl = strlen(h);

		while ((at = strstr(at, h))) {
			int left = at == line || strchr(" :,[(", at[-1]);
			int right = !at[hl] || strchr(" :,])", at[hl]);

			if (left && right) {
				launcher_names(b, i, line);
				break;
			}
			at += hl;
		}
	}
}

static void launcher_read(struct backlisten *b, int fd)
{
	char tmp[4096];
	ssize_t n;

	while ((n = read(fd, tmp, sizeof(tmp))) > 0) {
		for (ssize_t k = 0; k < n; k++) {
			if (tmp[k] == '\n') {
				b->errline[b->errline_len] = '\0';
				launcher_line(b, b->errline);
				b->errline_len = 0;
			} else if (b->errline_len < sizeof(b->errline) - 1) {
				b->errline[b->errline_len++] = tmp[k];
			}
		}
	}
	if (n == 0)
		loop_unwatch(b->loop, fd);
}

/* The last line the launcher printed, or "". */
static const char *launcher_last(struct backlisten *b)
{
	static char last[512];
	const char *s = b->err.data, *end, *start;

	last[0] = '\0';
	if (!s || !b->err.len)
		return last;
	end = s + b->err.len;
	while (end > s && end[-1] == '\n')
		end--;
	start = end;
	while (start > s && start[-1] != '\n')
		start--;
	snprintf(last, sizeof(last), "%.*s", (int)(end - start), start);
	return last;
}

/* The last line of the launcher's output that names host ("NAME:"), or "". */
static const char *launcher_said(struct backlisten *b, const char *host)
{
	static char said[512];
	const char *s = b->err.data, *end, *at = NULL, *p;
	size_t hl = strlen(host);

	said[0] = '\0';
	if (!s)
		return said;
	end = s + b->err.len;
	for (p = s; p < end && (p = strstr(p, host)); p += hl)
		if (p[hl] == ':' && (p == s || p[-1] == ' ' || p[-1] == '\n'))
			at = p;
	if (!at)
		return said;
	while (at > s && at[-1] != '\n')
		at--;
	snprintf(said, sizeof(said), "%.*s", (int)strcspn(at, "\n"), at);
	return said;
}

static void on_srun(struct loop *loop, int fd, short revents, void *arg)
{
	struct backlisten *b = arg;
	char how[64], msg[CD_ERRLEN];
	const char *last;

	if (fd == b->srun.err_fd || fd == b->srun.out_fd) {
		launcher_read(b, fd);
		return;
	}
	loop_unwatch(loop, fd);
	if (!child_reap(&b->srun))
		return;
	launcher_read(b, b->srun.err_fd);
	loop_timer_cancel(loop, b->exited_timer);
	b->exited_timer = 0;
	exited_flush(b);
	child_describe_status(b->srun.status, how, sizeof(how));
	last = launcher_last(b);
	snprintf(msg, sizeof(msg), "srun %s before the node's agent connected back%s%s", how,
	         last[0] ? ": " : "", last);
	for (size_t i = 0; i < b->n; i++)
		fail_host(b, i, msg);
}

/* Inside an allocation (SLURM_JOB_NODELIST, as salloc and sbatch set it)
 * srun starts tasks only on the allocation's nodes: a node of the run
 * outside it fails here, named, instead of srun refusing every node.
 * Returns 1 when host i is in the allocation (or there is none). */
static int in_allocation(struct backlisten *b, const struct hostlist *alloc, size_t i)
{
	char msg[CD_ERRLEN];
	char *fold;

	if (!alloc)
		return 1;
	for (size_t k = 0; k < alloc->count; k++)
		if (strcmp(alloc->names[k], b->hosts[i]) == 0)
			return 1;
	fold = hostlist_fold(alloc);
	snprintf(msg, sizeof(msg),
	         "not in the allocation of Slurm job %s (%s): srun cannot start its agent there",
	         getenv("SLURM_JOB_ID") ? getenv("SLURM_JOB_ID") : "?", fold);
	free(fold);
	fail_host(b, i, msg);
	return 0;
}

static struct hostlist *allocation(void)
{
	const char *nl = getenv("SLURM_JOB_NODELIST");
	struct hostlist *hl;
	char err[CD_ERRLEN];

	if (!nl || !*nl || !getenv("SLURM_JOB_ID"))
		return NULL;
	hl = hostlist_new();
	if (hostlist_parse(hl, nl, err, sizeof(err)) < 0) { /* not ours to judge: srun will */
		hostlist_free(hl);
		return NULL;
	}
	return hl;
}

void backlisten_set_sbcast(struct backlisten *b)
{
	b->sbcast = 1;
}

/* `sbcast --force AGENT /tmp/clusterdoc-agent.JOBID` (man sbcast, 22.05: to
 * every node of the job's allocation), before the step. Returns the copy's
 * path (malloc'd), or NULL with sbcast's own words in err. */
static char *sbcast_agent(const char *agent, char *err, size_t errlen)
{
	const char *job = getenv("SLURM_JOB_ID");
	char *dest, *argv[] = {"sbcast", "--force", (char *)agent, NULL, NULL};
	struct buf out, errout;
	int status = 0, rc;

	if (!job || !*job) {
		snprintf(err, errlen, "--sbcast needs a Slurm allocation (no $SLURM_JOB_ID)");
		return NULL;
	}
	dest = cd_asprintf("/tmp/clusterdoc-agent.%s", job);
	argv[3] = dest;
	buf_init(&out, 65536);
	buf_init(&errout, 65536);
	rc = child_run(argv, &out, &errout, SBCAST_TIMEOUT_MS, &status, err, errlen);
	if (rc == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
		char how[64];

		child_describe_status(status, how, sizeof(how));
		while (errout.len && errout.data[errout.len - 1] == '\n')
			errout.len--;
		snprintf(err, errlen, "sbcast %s: %.*s", how,
		         (int)(errout.len < 300 ? errout.len : 300),
		         errout.data ? errout.data : "");
		rc = CD_ERR_IO;
	}
	buf_fini(&out);
	buf_fini(&errout);
	if (rc < 0) {
		free(dest);
		return NULL;
	}
	return dest;
}

static int launch_srun(struct backlisten *b, const char *agent, char *err, size_t errlen)
{
	struct hostlist *hl = hostlist_new(), *alloc = allocation();
	char nodes[32], env_secret[sizeof(BACKAUTH_SECRET_ENV) + BACK_SECRET_HEX + 2];
	char *nodelist, *nodelist_arg, *argv[16], *env[2], *copy = NULL;
	size_t count;
	int k = 0, rc;

	for (size_t i = 0; i < b->n; i++)
		if (in_allocation(b, alloc, i))
			hostlist_parse(hl, b->hosts[i], err, errlen);
	hostlist_free(alloc);
	count = hostlist_count(hl);
	if (!count) { /* every node failed above: nothing for srun to start */
		hostlist_free(hl);
		return 0;
	}
	if (b->sbcast && !(copy = sbcast_agent(agent, err, errlen))) {
		hostlist_free(hl);
		return CD_ERR_IO;
	}
	if (copy)
		agent = copy;
	nodelist = hostlist_fold(hl);
	hostlist_free(hl);
	nodelist_arg = cd_asprintf("--nodelist=%s", nodelist);
	snprintf(nodes, sizeof(nodes), "--nodes=%zu", count);
	/* man srun (22.05): --overlap shares the allocation's CPUs with the
	 * job's own steps; one task per node, on exactly these nodes. The
	 * secret travels in the environment (--export=ALL), never here. */
	argv[k++] = "srun";
	argv[k++] = "--overlap";
	argv[k++] = nodes;
	argv[k++] = "--ntasks-per-node=1";
	argv[k++] = nodelist_arg;
	argv[k++] = "--export=ALL";
	argv[k++] = "--kill-on-bad-exit=0";
	argv[k++] = "--job-name=clusterdoc-agent";
	argv[k++] = (char *)agent;
	argv[k++] = "--connect";
	argv[k++] = b->addr;
	argv[k] = NULL;
	snprintf(env_secret, sizeof(env_secret), "%s=%s", BACKAUTH_SECRET_ENV, b->secret);
	env[0] = env_secret;
	env[1] = NULL;
	rc = child_start(&b->srun, argv, env, err, errlen);
	memset(env_secret, 0, sizeof(env_secret));
	free(nodelist);
	free(nodelist_arg);
	free(copy);
	if (rc < 0)
		return rc;
	b->srun_started = 1;
	child_close_stdin(&b->srun);
	loop_watch(b->loop, b->srun.out_fd, POLLIN, on_srun, b);
	loop_watch(b->loop, b->srun.err_fd, POLLIN, on_srun, b);
	if (b->srun.pid_fd >= 0)
		loop_watch(b->loop, b->srun.pid_fd, POLLIN, on_srun, b);
	return 0;
}

static void on_local_err(struct loop *loop, int fd, short revents, void *arg)
{
	launcher_read(arg, fd);
}

static void on_reap(struct loop *loop, void *arg)
{
	struct backlisten *b = arg;
	int waiting = 0;

	b->reap_timer = 0;
	for (size_t i = 0; i < b->n; i++) {
		char how[64], msg[CD_ERRLEN];
		const char *last;
		int status;

		waiting |= !b->taken[i] && !b->dead[i];
		if (b->pids[i] <= 0 || waitpid(b->pids[i], &status, WNOHANG) != b->pids[i])
			continue;
		b->pids[i] = 0;
		b->live--;
		if (b->taken[i])
			continue;
		if (b->err_pipe >= 0)
			launcher_read(b, b->err_pipe);
		child_describe_status(status, how, sizeof(how));
		last = launcher_said(b, b->hosts[i]);
		snprintf(msg, sizeof(msg), "the local agent %s before it connected back%s%s", how,
		         last[0] ? ": " : "", last);
		fail_host(b, i, msg);
	}
	if (b->live || b->spawned < b->n)
		b->reap_timer =
		    loop_timer_add(loop, waiting ? REAP_BUSY_MS : REAP_IDLE_MS, on_reap, b);
}

/* Start the next batch of local agents; the loop accepts the first ones'
 * connections meanwhile, so none waits for the whole launch. */
static void spawn_batch(struct loop *loop, void *arg)
{
	struct backlisten *b = arg;
	char *argv[] = {b->agent, "--connect", b->addr, NULL};
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t def;
	size_t end = b->spawned + SPAWN_BATCH < b->n ? b->spawned + SPAWN_BATCH : b->n;

	b->spawn_timer = 0;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, b->err_pipe_w, STDERR_FILENO);
	posix_spawnattr_init(&attr);
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	posix_spawnattr_setsigdefault(&attr, &def);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
	for (; b->spawned < end; b->spawned++) {
		size_t i = b->spawned;
		char key[BACKAUTH_PROOF_HEX];
		int rc;

		/* Each agent gets its own node's key, never the run's secret:
		 * it can prove its own node and no other. */
		if (backauth_node_key(b->secret, b->hosts[i], key) < 0) {
			fail_host(b, i,
			          "not a node name the connect-back handshake can carry "
			          "([A-Za-z0-9._-], 1-127 characters)");
			continue;
		}
		snprintf(b->name_env, sizeof(b->name_env), "%s=%s", BACKAUTH_NAME_ENV, b->hosts[i]);
		snprintf(b->key_env, sizeof(b->key_env), "%s=%s", BACKAUTH_KEY_ENV, key);
		memset(key, 0, sizeof(key));
		rc = posix_spawn(&b->pids[i], b->agent, &fa, &attr, argv, b->envp);
		if (rc) {
			char msg[CD_ERRLEN];

			b->pids[i] = 0;
			snprintf(msg, sizeof(msg), "cannot start %s: %s", b->agent, strerror(rc));
			fail_host(b, i, msg);
		} else {
			b->live++;
			b->spawned_at[i] = 1;
			if (b->waiting[i])
				back_started(b->waiting[i]);
		}
	}
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (b->spawned < b->n) {
		b->spawn_timer = loop_timer_add(loop, 0, spawn_batch, b);
		return;
	}
	/* all started: no key is needed here any more */
	memset(b->key_env, 0, sizeof(b->key_env));
	close(b->err_pipe_w);
	b->err_pipe_w = -1;
}

static int launch_local(struct backlisten *b, const char *agent, char *err, size_t errlen)
{
	size_t ne = 0;
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		return cd_errf(err, errlen, CD_ERR_IO, "pipe: %s", strerror(errno));
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	b->err_pipe = p[0];
	b->err_pipe_w = p[1];
	loop_watch(b->loop, p[0], POLLIN, on_local_err, b);
	while (environ && environ[ne])
		ne++;
	b->envp = cd_calloc(ne + 3, sizeof(*b->envp));
	ne = 0;
	for (size_t i = 0; environ && environ[i]; i++)
		if (strncmp(environ[i], "CLUSTERDOC_BACK_", 16) != 0)
			b->envp[ne++] = environ[i];
	b->envp[ne] = b->key_env;
	b->envp[ne + 1] = b->name_env;
	b->agent = cd_strdup(agent);
	b->pids = cd_calloc(b->n ? b->n : 1, sizeof(*b->pids));
	b->reap_timer = loop_timer_add(b->loop, REAP_BUSY_MS, on_reap, b);
	spawn_batch(b->loop, b);
	return 0;
}

int backlisten_launch(struct backlisten *b, const char *agent_path, char *err, size_t errlen)
{
	if (b->kind == LAUNCHER_SRUN)
		return launch_srun(b, agent_path, err, errlen);
	return launch_local(b, agent_path, err, errlen);
}

void backlisten_free(struct backlisten *b)
{
	int64_t until = cd_now_ms() + LAUNCHER_EXIT_MS;

	if (!b)
		return;
	if (b->fd >= 0) {
		loop_unwatch(b->loop, b->fd);
		close(b->fd);
	}
	loop_timer_cancel(b->loop, b->pause_timer);
	while (b->pends)
		pend_free(b->pends, 1);
	for (size_t i = 0; b->parked && i < b->n; i++)
		if (b->parked[i])
			pend_free(b->parked[i], 1);
	loop_timer_cancel(b->loop, b->reap_timer);
	loop_timer_cancel(b->loop, b->spawn_timer);
	loop_timer_cancel(b->loop, b->exited_timer);
	/* The agents' sockets are closed: they end on their own. */
	if (b->srun_started) {
		loop_unwatch(b->loop, b->srun.out_fd);
		loop_unwatch(b->loop, b->srun.err_fd);
		if (b->srun.pid_fd >= 0)
			loop_unwatch(b->loop, b->srun.pid_fd);
		while (b->srun.pid && !child_reap(&b->srun) && cd_now_ms() < until)
			poll(NULL, 0, 20);
		child_fini(&b->srun);
	}
	for (size_t i = 0; b->pids && i < b->n; i++) {
		int status;

		while (b->pids[i] > 0 && waitpid(b->pids[i], &status, WNOHANG) == 0 &&
		       cd_now_ms() < until)
			poll(NULL, 0, 5);
		if (b->pids[i] > 0 && waitpid(b->pids[i], &status, WNOHANG) == 0) {
			kill(b->pids[i], SIGKILL);
			waitpid(b->pids[i], &status, 0);
		}
	}
	if (b->err_pipe >= 0) {
		loop_unwatch(b->loop, b->err_pipe);
		close(b->err_pipe);
	}
	if (b->err_pipe_w >= 0)
		close(b->err_pipe_w);
	memset(b->key_env, 0, sizeof(b->key_env));
	free(b->agent);
	free(b->envp);
	for (size_t i = 0; i < b->n; i++) {
		free(b->hosts[i]);
		free(b->dead[i]);
		free(b->exited[i]);
	}
	memset(b->secret, 0, sizeof(b->secret));
	buf_fini(&b->err);
	free(b->hosts);
	free(b->order);
	free(b->waiting);
	free(b->parked);
	free(b->taken);
	free(b->spawned_at);
	free(b->dead);
	free(b->exited);
	free(b->pids);
	free(b);
}
