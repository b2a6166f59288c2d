/* SPDX-License-Identifier: MIT */
/*
 * ring_gather.c - the small allreduce of more than 2 ranks (ring_internal.h):
 * every rank's whole input travels both ways round the ring, so after
 * n/2 steps each rank holds all n inputs and sums them in rank order.
 *
 * Why: a small call costs hops, not bytes. The ring's reduce-scatter and
 * allgather take 2(n-1) hops one after the other; sending whole inputs one
 * way would take n-1; both ways, ceil((n-1)/2) = n/2: 2 hops at 4 ranks
 * (where the ring took 6), as many as recursive doubling, without
 * connections beyond the neighbours'. Summing in rank order on every rank
 * gives every rank the same bits, as the ring does.
 *
 * The schedule, on connection 0 only (small data gains nothing from
 * striping). The connection to the right carries the rightward stream out
 * and the leftward stream in; the one from the left the other way round:
 *   rightward step k (0 .. f-1, f = n/2): send the input of rank
 *     (rank - k) mod n, receive that of rank (rank - k - 1) mod n into
 *     slot k;
 *   leftward step k (0 .. b-1, b = (n-1)/2): send the input of rank
 *     (rank + k) mod n, receive that of rank (rank + k + 1) mod n into
 *     slot f + k.
 * Step 0 sends our own input; step k > 0 forwards what step k-1 of the same
 * direction received, once it is complete. Each direction is an in-order
 * byte stream of whole inputs, so, as in ring.c, no header is needed. The
 * f + b = n-1 received inputs are the n-1 other ranks', each once.
 *
 * Waiting, stalls, abort_fd and a neighbour's close are handled as in ring.c.
 */
#include "collectives/ring.h"
#include "collectives/ring_internal.h"
#include "cd.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

/* One direction's progress on one socket: at step `step`, `done` bytes
 * into it, `steps` in all. */
struct flow {
	int fd;
	int steps, step;
	size_t done;
	int waiting; /* the socket took less than offered / ran dry */
};

/* out[0]/in[0]: the rightward stream (to the right neighbour, from the
 * left one); out[1]/in[1]: the leftward one. */
struct gather {
	struct ring *r;
	const char *send;
	char *slots;
	size_t bytes;
	int f; /* rightward steps; leftward slots start at f */
	struct flow out[2], in[2];
	struct ring_error *e;
	int progress;
};

static int mod(int a, int n)
{
	return ((a % n) + n) % n;
}

int ring_gather_fits(const struct ring *r, size_t bytes)
{
	return r->nranks > 2 && bytes <= r->gather_max &&
	       bytes * (size_t)(r->nranks - 1) <= RING_GATHER_SCRATCH_MAX;
}

static char *slot(const struct gather *g, int dir, int step)
{
	return g->slots + (size_t)(dir ? g->f + step : step) * g->bytes;
}

/* Direction dir's neighbour: the one it sends to. */
static int dir_peer(const struct gather *g, int dir, int sending)
{
	return (dir == 0) == sending ? g->r->right : g->r->left;
}

static int fail_closed(struct gather *g, int peer, int err)
{
	struct ring *r = g->r;
	int right = peer == r->right;
	const char *side = right ? "right" : "left", *host = right ? r->right_host : r->left_host;

	if (err)
		return ring_fail(g->e, RING_CLOSED, peer, g->bytes,
		                 "rank %d (%s, %s) closed the connection (%s) at %zu bytes", peer,
		                 side, host, strerror(err), g->bytes);
	return ring_fail(g->e, RING_CLOSED, peer, g->bytes,
	                 "rank %d (%s, %s) closed the connection at %zu bytes", peer, side, host,
	                 g->bytes);
}

static int fail_errno(struct gather *g, const char *what, int peer, int err)
{
	if (err == ECONNRESET || err == EPIPE || err == ECONNABORTED || err == ETIMEDOUT ||
	    err == EHOSTUNREACH || err == ENETUNREACH)
		return fail_closed(g, peer, err);
	return ring_fail(g->e, RING_IO, -1, g->bytes, "%s: %s at %zu bytes", what, strerror(err),
	                 g->bytes);
}

/* n bytes of a flow's current step moved: a short move means the socket
 * is full (or empty) for now; a whole step moves on to the next. */
static void flow_moved(struct gather *g, struct flow *s, size_t n)
{
	g->progress = 1;
	s->waiting = n < g->bytes - s->done;
	s->done += n;
	if (s->done == g->bytes) {
		s->step++;
		s->done = 0;
	}
}

static int pump_in(struct gather *g, int dir)
{
	struct flow *s = &g->in[dir];

	while (s->step < s->steps && !s->waiting) {
		char *data = slot(g, dir, s->step);
		ssize_t n = recv(s->fd, data + s->done, g->bytes - s->done, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				s->waiting = 1;
				return 0;
			}
			return fail_errno(g, "recv", dir_peer(g, dir, 0), errno);
		}
		if (n == 0)
			return fail_closed(g, dir_peer(g, dir, 0), 0);
		flow_moved(g, s, (size_t)n);
	}
	return 0;
}

static int pump_out(struct gather *g, int dir)
{
	struct flow *s = &g->out[dir];

	/* Step k forwards what step k-1 of this direction received. */
	while (s->step < s->steps && !s->waiting && g->in[dir].step >= s->step) {
		const char *data = s->step == 0 ? g->send : slot(g, dir, s->step - 1);
		ssize_t n = send(s->fd, data + s->done, g->bytes - s->done, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				s->waiting = 1;
				return 0;
			}
			return fail_errno(g, "send", dir_peer(g, dir, 1), errno);
		}
		flow_moved(g, s, (size_t)n);
	}
	return 0;
}

static int finished(const struct gather *g)
{
	for (int d = 0; d < 2; d++) {
		if (g->out[d].step < g->out[d].steps || g->in[d].step < g->in[d].steps)
			return 0;
	}
	return 1;
}

/* The socket to the right (pfds[1]) carries rightward out and leftward in,
 * the one from the left (pfds[2]) the other two. A socket with nothing left
 * to move is not watched: a neighbour that has finished may close it. */
static void fill_pollfds(const struct gather *g, struct pollfd *p)
{
	const struct ring *r = g->r;
	const struct flow *o0 = &g->out[0], *i1 = &g->in[1], *i0 = &g->in[0], *o1 = &g->out[1];
	int right_busy = o0->step < o0->steps || i1->step < i1->steps;
	int left_busy = i0->step < i0->steps || o1->step < o1->steps;

	p[0] = (struct pollfd){.fd = r->abort_fd, .events = POLLRDHUP};
	p[1] = (struct pollfd){.fd = right_busy ? r->to_right[0] : -1,
	                       .events = (short)(POLLRDHUP | (o0->waiting ? POLLOUT : 0) |
	                                         (i1->step < i1->steps ? POLLIN : 0))};
	p[2] = (struct pollfd){
	    .fd = left_busy ? r->from_left[0] : -1,
	    .events = (short)((o1->waiting ? POLLOUT : 0) | (i0->step < i0->steps ? POLLIN : 0))};
}

/* Takes poll's verdict. Readable, or an error or hangup (recv or send will
 * tell which), lets every flow on that socket try again. */
static int apply_revents(struct gather *g, const struct pollfd *p)
{
	if (ring_abort_revents(p[0].revents))
		return ring_fail(g->e, RING_ABORTED, -1, g->bytes,
		                 "aborted: abort_fd %d hung up at %zu bytes", g->r->abort_fd,
		                 g->bytes);
	if ((p[1].revents & (POLLRDHUP | POLLHUP)) && g->in[1].step >= g->in[1].steps)
		return fail_closed(g, g->r->right, 0);
	if (p[1].revents)
		g->out[0].waiting = g->in[1].waiting = 0;
	if (p[2].revents)
		g->out[1].waiting = g->in[0].waiting = 0;
	return 0;
}

static int fail_stalled(struct gather *g)
{
	struct ring *r = g->r;

	for (int d = 0; d < 2; d++) {
		if (g->out[d].step < g->out[d].steps && g->out[d].waiting) {
			int peer = dir_peer(g, d, 1);

			return ring_fail(g->e, RING_STALLED, peer, g->bytes,
			                 "rank %d (%s, %s) took no data for %d ms at %zu bytes",
			                 peer, d ? "left" : "right",
			                 d ? r->left_host : r->right_host, r->stall_ms, g->bytes);
		}
	}
	for (int d = 0; d < 2; d++) {
		if (g->in[d].step < g->in[d].steps) {
			int peer = dir_peer(g, d, 0);

			return ring_fail(g->e, RING_STALLED, peer, g->bytes,
			                 "no data from rank %d (%s, %s) for %d ms at %zu bytes",
			                 peer, d ? "right" : "left",
			                 d ? r->right_host : r->left_host, r->stall_ms, g->bytes);
		}
	}
	return ring_fail(g->e, RING_STALLED, r->left, g->bytes, "stalled at %zu bytes", g->bytes);
}

static int gather_run(struct gather *g)
{
	struct pollfd p[3];
	int64_t last_progress = cd_now_ms();

	for (;;) {
		int64_t now;
		int rc;

		g->progress = 0;
		for (int d = 0; d < 2; d++) {
			if (pump_in(g, d) < 0 || pump_out(g, d) < 0)
				return -1;
		}
		if (finished(g))
			return 0;
		now = cd_now_ms();
		if (g->progress)
			last_progress = now;
		if (now - last_progress >= g->r->stall_ms)
			return fail_stalled(g);
		fill_pollfds(g, p);
		rc = poll(p, 3, ring_poll_ms_until(last_progress + g->r->stall_ms, now));
		if (rc < 0 && errno != EINTR)
			return ring_fail(g->e, RING_IO, -1, g->bytes, "poll: %s at %zu bytes",
			                 strerror(errno), g->bytes);
		if (rc > 0 && apply_revents(g, p) < 0)
			return -1;
	}
}

/* Rank o's input: send for ourselves, else the slot that brought it. */
static const char *input_of(const struct gather *g, int o)
{
	int n = g->r->nranks, back = mod(g->r->rank - o, n);

	if (o == g->r->rank)
		return g->send;
	if (back <= g->f) /* came rightward at step back - 1 */
		return slot(g, 0, back - 1);
	return slot(g, 1, n - back - 1); /* came leftward at step (o - rank) - 1 */
}

int ring_gather(struct ring *r, const void *send, void *recv, size_t count, enum coll_dtype t,
                struct ring_error *e)
{
	size_t bytes = count * coll_dtype_size(t), need = bytes * (size_t)(r->nranks - 1);
	struct gather g = {.r = r, .send = send, .bytes = bytes, .f = r->nranks / 2, .e = e};

	if (r->scratch_len < need) {
		r->scratch = cd_realloc(r->scratch, need);
		r->scratch_len = need;
	}
	g.slots = r->scratch;
	g.out[0] = g.in[0] = (struct flow){.steps = g.f};
	g.out[1] = g.in[1] = (struct flow){.steps = (r->nranks - 1) / 2};
	g.out[0].fd = g.in[1].fd = r->to_right[0];
	g.in[0].fd = g.out[1].fd = r->from_left[0];
	if (gather_run(&g) < 0)
		return -1;
	coll_sum_into(recv, input_of(&g, 0), input_of(&g, 1), count, t);
	for (int o = 2; o < r->nranks; o++)
		coll_sum_into(recv, recv, input_of(&g, o), count, t);
	return 0;
}
