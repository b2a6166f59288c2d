/* SPDX-License-Identifier: MIT */
/*
 * ring_internal.h - what the ring's modules share: struct ring, filled by
 * ring_establish (ring_establish.c), driven by ring_allreduce (ring.c) and
 * ring_sweep (ring_sweep.c). Not a public interface: include it only from
 * collectives/ring*.c, and from tests and benchmarks that tune the ring.
 */
#ifndef CD_COLLECTIVES_RING_INTERNAL_H
#define CD_COLLECTIVES_RING_INTERNAL_H

#include "collectives/ring.h"

#include <stdarg.h>
#include <stddef.h>
#include <sys/socket.h>

#define RING_MAGIC     "CDRING1"
#define RING_LINE_MAX  128 /* a hello or answer line, newline included */
#define RING_TOKEN_MAX 64
#define RING_HOST_MAX  64 /* "fe80::1%4294967295" and a NUL fit */

/* The schedule's defaults, measured with ranks as processes on a 2-core VM
 * over loopback and over veth through a bridge (see ring.c): chunks of
 * 128 KiB to 2 MiB made no difference, and 2 ranks swapping whole buffers
 * beat two ring steps up to about 1 MiB per rank. */
#define RING_CHUNK_MAX    (512 * 1024)  /* bytes: the largest chunk */
#define RING_CHUNK_MIN    (64 * 1024)   /* bytes: no smaller chunk once a step has this much */
#define RING_EXCHANGE_MAX (1024 * 1024) /* bytes per rank: 2 ranks exchange up to this */

/* More than 2 ranks pass whole buffers both ways round the ring (n/2 steps,
 * ring_gather.c) up to this many bytes per rank. A step costs a hop's
 * latency h plus its bytes at the path's rate B, so (n/2)(h + S/B) beats the
 * ring's 2(n-1)(h + S/(n B)) while S < 8 h B at 4 ranks, 4.4 h B at 8 and
 * 3 h B for many. With h = 25-50 us and B = 1-2 GB/s (veth on the 2-core
 * VM) h B is 25-100 KB; the limit stays below that, as the gather sends n/4
 * times the ring's bytes on each link and so loses first on a busy one. */
#define RING_GATHER_MAX (32 * 1024)
/* ... and while the other ranks' inputs fit in this much scratch memory. */
#define RING_GATHER_SCRATCH_MAX (8 * 1024 * 1024)

struct ring {
	int rank, nranks, conns;
	int left, right; /* the neighbours' ranks */
	int stall_ms, abort_fd;
	int to_right[RING_MAX_CONNS];  /* we connected: data goes out */
	int from_left[RING_MAX_CONNS]; /* we accepted: data comes in */
	char left_host[RING_HOST_MAX]; /* "10.0.0.3", "fe80::1%2"; "?" until known */
	char right_host[RING_HOST_MAX];
	int right_port;

	/* The schedule (defaults from the macros above; benchmarks may change
	 * them between calls, every rank alike). */
	size_t chunk_max, chunk_min;
	size_t exchange_max; /* 0: always the ring */
	size_t gather_max;   /* 0: always the ring (more than 2 ranks) */

	/* The gather's buffers: nranks - 1 received whole inputs, kept between
	 * calls (grown to the largest gathered size, freed by ring_close). */
	char *scratch;
	size_t scratch_len;

	int failed; /* an error ended a call: only ring_close is valid */
};

/* A ring with no connections yet (every fd -1) for the options o. */
struct ring *ring_new(const struct ring_opts *o);

/* The host part of addr, as in error messages: "10.0.0.3", "fe80::1%2". */
void ring_host_text(const struct sockaddr *addr, char *buf, size_t len);

/* The port of an IPv4 or IPv6 addr, 0 for another family. */
int ring_port_of(const struct sockaddr *addr);

/* Whether a call of `bytes` per rank runs as the gather (ring_gather.c):
 * more than 2 ranks, at most gather_max bytes, scratch within its cap. */
int ring_gather_fits(const struct ring *r, size_t bytes);

/* The gather: recv = the sum of every rank's send (count elements of t),
 * added in rank order, so every rank holds the same bits. Grows r->scratch
 * to (nranks - 1) x bytes. 0, or -1 with e filled in. */
int ring_gather(struct ring *r, const void *send, void *recv, size_t count, enum coll_dtype t,
                struct ring_error *e);

/* Fill e (kind, peer, bytes and the formatted message); returns -1, for
 * `return ring_fail(...)`. */
int ring_fail(struct ring_error *e, enum ring_fail kind, int peer_rank, size_t bytes,
              const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* An empty error: RING_OK, no peer, no message. */
void ring_error_clear(struct ring_error *e);

/* Whether abort_fd's revents mean the caller has gone away. */
int ring_abort_revents(short revents);

/* poll()'s timeout for a deadline in ms, never negative. */
int ring_poll_ms_until(int64_t deadline, int64_t now);

#endif
