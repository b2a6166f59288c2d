/* SPDX-License-Identifier: MIT */
/*
 * ring.c - the allreduce engine (see ring.h) and what the ring's modules
 * share.
 *
 * The schedule. The buffer is cut into nseg segments by element index, a
 * step moves one segment to the right neighbour, and a step's segment is cut
 * into `chunks` chunks. Chunk c of step k is chunk number g = k * chunks + c
 * of the call, and travels on connection g % conns; both ends of a
 * connection compute the same numbering, and each connection is an in-order
 * byte stream, so no header is needed. At step k a rank sends segment
 * (rank - k) mod nseg and receives segment (rank - k - 1) mod nseg:
 *
 *   ring (nseg = n, 2(n-1) steps): steps 0 .. n-2 reduce-scatter (a
 *     received chunk is summed with our own input), steps n-1 .. 2n-3
 *     allgather (a received chunk is final);
 *   exchange (n = 2 and small, nseg = 1, 1 step): each rank sends its whole
 *     input and sums what it receives: one step of latency instead of two,
 *     and a + b == b + a exactly, so both ranks hold the same bits;
 *   gather (n > 2 and small: ring_gather.c): whole inputs pass both ways
 *     round the ring, n/2 steps, and every rank sums them in rank order.
 *
 * Step 0 sends straight from send; step k > 0 sends what step k-1 received
 * into recv, chunk by chunk: chunk c of step k may leave as soon as chunk c
 * of step k-1 is complete (and reduced). Received data lands in recv at its
 * final place, even during reduce-scatter: that part of recv holds nothing
 * yet, so the sum recv = send + recv runs in place on the chunk just
 * received, still in cache, and no scratch buffer or copy is needed. No
 * part of recv is overwritten while a send from it may still be under way:
 * a segment's final value cannot arrive before our partial sum of it has
 * left (the kernel has copied it).
 *
 * One poll() loop drives it all: receive on every readable connection
 * (reducing each chunk as it completes), then send on every connection
 * whose next chunk is ready, then wait. A 64 MiB call makes about one send
 * and one recv per chunk and a dozen polls per rank.
 *
 * Measured (ranks as processes on a 2-core VM, float32, busbw in GB/s):
 * at 64 MiB the ring runs at 80-95% of what the same TCP ring moves with no
 * reduction and no dependency between steps, so the kernel's copies and TCP
 * path, not the schedule, set the pace; the chunk size (128 KiB - 2 MiB),
 * the number of connections and fixed socket buffers moved it by less than
 * the noise, except that small fixed buffers were slower. The exchange
 * beats two ring steps for 2 ranks up to about 1 MiB.
 */
#include "collectives/ring.h"
#include "collectives/ring_internal.h"
#include "cd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* --- what the modules share ---------------------------------------------- */

static const char *const fail_names[] = {
    [RING_OK] = "ok",
    [RING_CONNECT] = "connect",
    [RING_NO_PEER] = "no-peer",
    [RING_REJECTED] = "rejected",
    [RING_CLOSED] = "closed",
    [RING_STALLED] = "stalled",
    [RING_ABORTED] = "aborted",
    [RING_IO] = "io",
    [RING_BAD_ARG] = "bad-argument",
};

const char *ring_fail_name(enum ring_fail k)
{
	if ((size_t)k >= CD_ARRAY_LEN(fail_names) || !fail_names[k])
		return "unknown";
	return fail_names[k];
}

struct ring *ring_new(const struct ring_opts *o)
{
	struct ring *r = cd_calloc(1, sizeof(*r));

	r->rank = o->rank;
	r->nranks = o->nranks;
	r->conns = o->conns;
	r->left = (o->rank - 1 + o->nranks) % o->nranks;
	r->right = (o->rank + 1) % o->nranks;
	r->stall_ms = o->stall_ms;
	r->abort_fd = o->abort_fd;
	for (int i = 0; i < RING_MAX_CONNS; i++)
		r->to_right[i] = r->from_left[i] = -1;
	snprintf(r->left_host, sizeof(r->left_host), "?");
	snprintf(r->right_host, sizeof(r->right_host), "?");
	r->chunk_max = RING_CHUNK_MAX;
	r->chunk_min = RING_CHUNK_MIN;
	r->exchange_max = RING_EXCHANGE_MAX;
	r->gather_max = RING_GATHER_MAX;
	return r;
}

void ring_close(struct ring *r)
{
	if (!r)
		return;
	for (int i = 0; i < RING_MAX_CONNS; i++) {
		if (r->to_right[i] >= 0)
			close(r->to_right[i]);
		if (r->from_left[i] >= 0)
			close(r->from_left[i]);
	}
	free(r->scratch);
	free(r);
}

void ring_host_text(const struct sockaddr *addr, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (addr->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)(const void *)addr;

		inet_ntop(AF_INET, &sin->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s", host);
	} else if (addr->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)(const void *)addr;

		inet_ntop(AF_INET6, &sin6->sin6_addr, host, sizeof(host));
		if (sin6->sin6_scope_id)
			snprintf(buf, len, "%s%%%u", host, (unsigned)sin6->sin6_scope_id);
		else
			snprintf(buf, len, "%s", host);
	} else {
		snprintf(buf, len, "?");
	}
}

int ring_port_of(const struct sockaddr *addr)
{
	if (addr->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)(const void *)addr)->sin_port);
	if (addr->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)(const void *)addr)->sin6_port);
	return 0;
}

void ring_error_clear(struct ring_error *e)
{
	e->kind = RING_OK;
	e->peer_rank = -1;
	e->bytes = 0;
	e->msg[0] = '\0';
}

int ring_fail(struct ring_error *e, enum ring_fail kind, int peer_rank, size_t bytes,
              const char *fmt, ...)
{
	va_list ap;

	e->kind = kind;
	e->peer_rank = peer_rank;
	e->bytes = bytes;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -1;
}

/* POLLRDHUP is what a socket reports when its peer closes, POLLHUP what a
 * pipe reports when its writer does; data waiting on abort_fd is not ours
 * to read and does not abort. */
int ring_abort_revents(short revents)
{
	return (revents & (POLLHUP | POLLRDHUP | POLLERR | POLLNVAL)) != 0;
}

int ring_poll_ms_until(int64_t deadline, int64_t now)
{
	int64_t ms = deadline - now;

	if (ms <= 0)
		return 0;
	return ms > 60000 ? 60000 : (int)ms;
}

/* --- the schedule --------------------------------------------------------- */

struct plan {
	const char *send;
	char *recv;
	size_t count, elsize;
	enum coll_dtype dtype;
	int rank, nseg, steps, reduce_steps;
	size_t chunks; /* per step */
	size_t total;  /* chunks in the call: steps * chunks */
};

/* Where part `i` of `parts` equal parts of [0, len) starts: the first
 * len % parts parts are one longer. Never overflows. */
static size_t part_start(size_t len, size_t parts, size_t i)
{
	size_t base = len / parts, extra = len % parts;

	return base * i + (i < extra ? i : extra);
}

static int mod(int a, int n)
{
	return ((a % n) + n) % n;
}

/* The elements [*first, *first + *len) of chunk c of segment seg. */
static void chunk_bounds(const struct plan *p, int seg, size_t c, size_t *first, size_t *len)
{
	size_t lo = part_start(p->count, (size_t)p->nseg, (size_t)seg);
	size_t seglen = part_start(p->count, (size_t)p->nseg, (size_t)seg + 1) - lo;
	size_t a = part_start(seglen, p->chunks, c), b = part_start(seglen, p->chunks, c + 1);

	*first = lo + a;
	*len = b - a;
}

/* Chunks per step: one for a small segment (latency), else pieces of at
 * most chunk_max bytes, and at least one per connection while each keeps
 * chunk_min bytes, so that every connection carries data. */
static size_t chunks_per_step(const struct ring *r, size_t seg_bytes)
{
	size_t by_max = (seg_bytes + r->chunk_max - 1) / r->chunk_max;
	size_t by_conns = seg_bytes / r->chunk_min;

	if (by_conns > (size_t)r->conns)
		by_conns = (size_t)r->conns;
	if (by_max < by_conns)
		by_max = by_conns;
	return by_max ? by_max : 1;
}

static void make_plan(const struct ring *r, const void *send, void *recv, size_t count,
                      enum coll_dtype t, struct plan *p)
{
	size_t bytes;

	*p = (struct plan){.send = send,
	                   .recv = recv,
	                   .count = count,
	                   .elsize = coll_dtype_size(t),
	                   .dtype = t,
	                   .rank = r->rank};
	bytes = count * p->elsize;
	if (r->nranks == 2 && bytes <= r->exchange_max) {
		p->nseg = 1;
		p->steps = p->reduce_steps = 1;
	} else {
		p->nseg = r->nranks;
		p->steps = 2 * (r->nranks - 1);
		p->reduce_steps = r->nranks - 1;
	}
	p->chunks = chunks_per_step(r, (count + (size_t)p->nseg - 1) / (size_t)p->nseg * p->elsize);
	p->total = (size_t)p->steps * p->chunks;
}

/* --- one call: progress per connection ------------------------------------ */

/* Where one connection is in the schedule: at chunk number `next` (the
 * connection's chunks are next, next + conns, ...), `done` bytes into it. */
struct stream {
	size_t next, done;
	int waiting; /* out: the socket took less than offered; in: it ran dry */
};

struct call {
	struct ring *r;
	struct plan p;
	struct stream out[RING_MAX_CONNS], in[RING_MAX_CONNS];
	struct ring_error *e;
	int progress; /* whether this pass moved any byte */
};

static size_t call_bytes(const struct call *c)
{
	return c->p.count * c->p.elsize;
}

/* Whether received chunk g is complete (and reduced). */
static int received(const struct call *c, size_t g)
{
	return c->in[g % (size_t)c->r->conns].next > g;
}

/* Chunk g as this rank sends it: from send at step 0, else from recv. */
static size_t out_chunk(const struct call *c, size_t g, const char **data)
{
	size_t k = g / c->p.chunks, first, len;

	chunk_bounds(&c->p, mod(c->p.rank - (int)k, c->p.nseg), g % c->p.chunks, &first, &len);
	*data = (k == 0 ? c->p.send : c->p.recv) + first * c->p.elsize;
	return len * c->p.elsize;
}

/* Chunk g as this rank receives it: always into recv. */
static size_t in_chunk(const struct call *c, size_t g, char **data)
{
	size_t k = g / c->p.chunks, first, len;

	chunk_bounds(&c->p, mod(c->p.rank - (int)k - 1, c->p.nseg), g % c->p.chunks, &first, &len);
	*data = c->p.recv + first * c->p.elsize;
	return len * c->p.elsize;
}

/* Received chunk g is complete: during reduce-scatter, add our own input. */
static void finish_in_chunk(struct call *c, size_t g)
{
	size_t k = g / c->p.chunks;
	size_t off;
	char *data;
	size_t len = in_chunk(c, g, &data);

	if ((int)k >= c->p.reduce_steps || len == 0)
		return;
	off = (size_t)(data - c->p.recv);
	coll_sum_into(data, c->p.send + off, data, len / c->p.elsize, c->p.dtype);
}

static int fail_closed(struct call *c, int right, int err)
{
	struct ring *r = c->r;
	int peer = right ? r->right : r->left;
	const char *side = right ? "right" : "left", *host = right ? r->right_host : r->left_host;

	if (err)
		return ring_fail(c->e, RING_CLOSED, peer, call_bytes(c),
		                 "rank %d (%s, %s) closed the connection (%s) at %zu bytes", peer,
		                 side, host, strerror(err), call_bytes(c));
	return ring_fail(c->e, RING_CLOSED, peer, call_bytes(c),
	                 "rank %d (%s, %s) closed the connection at %zu bytes", peer, side, host,
	                 call_bytes(c));
}

static int fail_io(struct call *c, const char *what, int err)
{
	return ring_fail(c->e, RING_IO, -1, call_bytes(c), "%s: %s at %zu bytes", what,
	                 strerror(err), call_bytes(c));
}

static int is_closed_errno(int err)
{
	return err == ECONNRESET || err == EPIPE || err == ECONNABORTED || err == ETIMEDOUT ||
	       err == EHOSTUNREACH || err == ENETUNREACH;
}

/* Receives on connection j until it runs dry or its chunks are all in,
 * reducing each chunk as it completes. */
static int pump_in(struct call *c, int j)
{
	struct stream *s = &c->in[j];
	int fd = c->r->from_left[j];

	while (s->next < c->p.total) {
		char *data;
		size_t len = in_chunk(c, s->next, &data);

		while (s->done < len) {
			ssize_t n;

			if (s->waiting)
				return 0;
			n = recv(fd, data + s->done, len - s->done, 0);
			if (n < 0) {
				if (errno == EINTR)
					continue;
				if (errno == EAGAIN || errno == EWOULDBLOCK) {
					s->waiting = 1;
					return 0;
				}
				return is_closed_errno(errno) ? fail_closed(c, 0, errno)
				                              : fail_io(c, "recv", errno);
			}
			if (n == 0)
				return fail_closed(c, 0, 0);
			c->progress = 1;
			/* A short read means the socket ran dry: poll before the next. */
			s->waiting = (size_t)n < len - s->done;
			s->done += (size_t)n;
		}
		finish_in_chunk(c, s->next);
		s->next += (size_t)c->r->conns;
		s->done = 0;
	}
	return 0;
}

/* Sends on connection j while its next chunk is ready and the socket takes
 * data. */
static int pump_out(struct call *c, int j)
{
	struct stream *s = &c->out[j];
	int fd = c->r->to_right[j];

	while (s->next < c->p.total) {
		const char *data;
		size_t len;

		if (s->next >= c->p.chunks && !received(c, s->next - c->p.chunks))
			return 0;
		len = out_chunk(c, s->next, &data);
		while (s->done < len) {
			ssize_t n;

			if (s->waiting)
				return 0;
			n = send(fd, data + s->done, len - s->done, MSG_NOSIGNAL);
			if (n < 0) {
				if (errno == EINTR)
					continue;
				if (errno == EAGAIN || errno == EWOULDBLOCK) {
					s->waiting = 1;
					return 0;
				}
				return is_closed_errno(errno) ? fail_closed(c, 1, errno)
				                              : fail_io(c, "send", errno);
			}
			c->progress = 1;
			s->waiting = (size_t)n < len - s->done;
			s->done += (size_t)n;
		}
		s->next += (size_t)c->r->conns;
		s->done = 0;
	}
	return 0;
}

static int call_finished(const struct call *c)
{
	for (int j = 0; j < c->r->conns; j++) {
		if (c->in[j].next < c->p.total || c->out[j].next < c->p.total)
			return 0;
	}
	return 1;
}

/* --- one call: waiting ---------------------------------------------------- */

/* pollfds: [0] abort_fd, then the outgoing connections, then the incoming
 * ones. An outgoing connection with chunks still to send is watched for
 * POLLRDHUP even while it has nothing ready: the right neighbour closing it
 * ends the call at once instead of after stall_ms. One that has sent all
 * its chunks is not watched: a neighbour that has finished may close. */
static nfds_t fill_pollfds(const struct call *c, struct pollfd *pfds)
{
	const struct ring *r = c->r;
	nfds_t n = 1;

	pfds[0] = (struct pollfd){.fd = r->abort_fd, .events = POLLRDHUP};
	for (int j = 0; j < r->conns; j++) {
		const struct stream *s = &c->out[j];

		pfds[n++] = (struct pollfd){.fd = s->next < c->p.total ? r->to_right[j] : -1,
		                            .events = POLLRDHUP | (s->waiting ? POLLOUT : 0)};
	}
	for (int j = 0; j < r->conns; j++)
		pfds[n++] = (struct pollfd){.fd = c->in[j].next < c->p.total ? r->from_left[j] : -1,
		                            .events = POLLIN};
	return n;
}

/* Nothing moved for stall_ms. Blame the right neighbour when it takes none
 * of our data, else the left one for sending none. */
static int fail_stalled(struct call *c)
{
	struct ring *r = c->r;

	for (int j = 0; j < r->conns; j++) {
		if (c->out[j].next < c->p.total && c->out[j].waiting)
			return ring_fail(c->e, RING_STALLED, r->right, call_bytes(c),
			                 "rank %d (right, %s) took no data for %d ms at %zu bytes",
			                 r->right, r->right_host, r->stall_ms, call_bytes(c));
	}
	return ring_fail(c->e, RING_STALLED, r->left, call_bytes(c),
	                 "no data from rank %d (left, %s) for %d ms at %zu bytes", r->left,
	                 r->left_host, r->stall_ms, call_bytes(c));
}

static int socket_error(int fd)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		return errno;
	return err;
}

/* Takes poll's verdict: sockets that may move again, or the end. */
static int apply_revents(struct call *c, const struct pollfd *pfds)
{
	int conns = c->r->conns;

	if (ring_abort_revents(pfds[0].revents))
		return ring_fail(c->e, RING_ABORTED, -1, call_bytes(c),
		                 "aborted: abort_fd %d hung up at %zu bytes", c->r->abort_fd,
		                 call_bytes(c));
	for (int j = 0; j < conns; j++) {
		short rev = pfds[1 + j].revents;

		if (rev & (POLLERR | POLLHUP | POLLRDHUP))
			return fail_closed(c, 1, rev & POLLERR ? socket_error(pfds[1 + j].fd) : 0);
		if (rev & POLLOUT)
			c->out[j].waiting = 0;
	}
	for (int j = 0; j < conns; j++) {
		if (pfds[1 + conns + j].revents)
			c->in[j].waiting = 0; /* data, EOF or an error: recv will tell */
	}
	return 0;
}

static int run_call(struct call *c)
{
	struct pollfd pfds[1 + 2 * RING_MAX_CONNS];
	int64_t last_progress = cd_now_ms();

	for (;;) {
		int64_t now;
		int rc;

		c->progress = 0;
		for (int j = 0; j < c->r->conns; j++) {
			if (pump_in(c, j) < 0)
				return -1;
		}
		for (int j = 0; j < c->r->conns; j++) {
			if (pump_out(c, j) < 0)
				return -1;
		}
		if (call_finished(c))
			return 0;
		now = cd_now_ms();
		if (c->progress)
			last_progress = now;
		if (now - last_progress >= c->r->stall_ms)
			return fail_stalled(c);
		rc = poll(pfds, fill_pollfds(c, pfds),
		          ring_poll_ms_until(last_progress + c->r->stall_ms, now));
		if (rc < 0 && errno != EINTR)
			return fail_io(c, "poll", errno);
		if (rc > 0 && apply_revents(c, pfds) < 0)
			return -1;
	}
}

/* --- the entry point ------------------------------------------------------ */

static int overlap(const void *a, const void *b, size_t bytes)
{
	uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;

	return x < y + bytes && y < x + bytes;
}

int ring_allreduce(struct ring *r, const void *send, void *recv, size_t count, enum coll_dtype t,
                   struct ring_error *e)
{
	size_t bytes;
	struct call c = {.r = r, .e = e};

	ring_error_clear(e);
	if (t < COLL_FLOAT32 || t > COLL_BFLOAT16)
		return ring_fail(e, RING_BAD_ARG, -1, 0, "unknown element type %d", (int)t);
	if (count > SIZE_MAX / coll_dtype_size(t))
		return ring_fail(e, RING_BAD_ARG, -1, 0, "%zu elements do not fit in memory",
		                 count);
	bytes = count * coll_dtype_size(t);
	if (r->failed)
		return ring_fail(e, RING_BAD_ARG, -1, bytes,
		                 "the ring failed earlier: only ring_close is valid");
	if (count == 0)
		return 0;
	if (overlap(send, recv, bytes))
		return ring_fail(e, RING_BAD_ARG, -1, bytes, "send and recv overlap");
	if (r->nranks == 1) {
		memcpy(recv, send, bytes);
		return 0;
	}
	if (ring_gather_fits(r, bytes)) {
		if (ring_gather(r, send, recv, count, t, e) < 0) {
			r->failed = 1;
			return -1;
		}
		return 0;
	}
	make_plan(r, send, recv, count, t, &c.p);
	for (int j = 0; j < r->conns; j++)
		c.out[j].next = c.in[j].next = (size_t)j;
	if (run_call(&c) < 0) {
		r->failed = 1;
		return -1;
	}
	return 0;
}
