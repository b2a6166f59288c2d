/* SPDX-License-Identifier: MIT */
/*
 * ring.h - the TCP backend: ranks in a ring, each connected to its right
 * neighbour ((rank + 1) % nranks) and accepting from its left one, running
 * allreduce as reduce-scatter then allgather. Each step's segment is cut in
 * chunks that are striped over several TCP connections per neighbour and
 * pipelined, so sending, receiving and reducing overlap. Agent side; libc
 * only; no global state, so several ranks may run in one process (one thread
 * each).
 *
 * Wire (docs/protocol.md): on every connection the connecting side sends
 *     CDRING1 <token> <its rank> <connection index>\n
 * and the accepting side answers
 *     CDRING1 OK <its rank>\n
 * only when the token matches, the rank is its left neighbour and the index
 * is new; any other client is closed without an answer and the wait goes on,
 * so a stray connection can neither join nor end the run. Then only element
 * data flows: chunk after chunk in a schedule both sides compute (for a
 * small call of more than 2 ranks both ways on connection 0, perhaps right
 * behind the answer: ring_gather.c).
 *
 * Every wait is bounded: establishing by connect_timeout_ms, every later
 * wait by stall_ms without progress on any connection. A hangup of abort_fd
 * (the agent's stdin: the head went away) ends it too.
 */
#ifndef CD_COLLECTIVES_RING_H
#define CD_COLLECTIVES_RING_H

#include "cd.h"
#include "collectives/coll.h"

#include <sys/socket.h>

#define RING_MAX_CONNS 16

/* What to ask for without a reason to do otherwise: on the 2-core VM this
 * was measured on (loopback, and veth through a bridge) one connection per
 * neighbour was as fast as 2 or 4, and faster over veth with 2 ranks. More
 * can help where one TCP flow is capped (cloud NICs, ECMP, RSS). */
#define RING_DEFAULT_CONNS 1

struct ring_opts {
	int rank;               /* 0 .. nranks-1 */
	int nranks;             /* 1 .. COLL_MAX_RANKS */
	int conns;              /* connections per neighbour, 1 .. RING_MAX_CONNS */
	const char *token;      /* per-run secret: 1..64 characters [0-9A-Za-z] */
	int connect_timeout_ms; /* for ring_establish */
	int stall_ms;           /* longest wait without progress afterwards */
	int abort_fd;           /* -1, or an fd whose POLLHUP/POLLERR aborts */
};

enum ring_fail {
	RING_OK = 0,
	RING_CONNECT,  /* could not connect to the right neighbour */
	RING_NO_PEER,  /* the left neighbour did not connect in time */
	RING_REJECTED, /* the right neighbour closed the connection without the
	                  answer (wrong token, or not its left neighbour) */
	RING_CLOSED,   /* a neighbour closed or reset a connection mid-run */
	RING_STALLED,  /* no progress for stall_ms */
	RING_ABORTED,  /* abort_fd hung up */
	RING_IO,       /* another system call failed */
	RING_BAD_ARG,  /* invalid options */
};

/* What went wrong, for the report: the kind, the neighbour blamed (its rank,
 * or -1), the size being run (bytes per rank, 0 while establishing) and a
 * message naming the neighbour and its address, for example
 * "no data from rank 2 (left, 10.0.0.3) for 10000 ms at 4194304 bytes". */
struct ring_error {
	enum ring_fail kind;
	int peer_rank;
	size_t bytes;
	char msg[CD_ERRLEN];
};

/* 1 when token is a valid ring_opts.token: 1 to 64 characters
 * [0-9A-Za-z]. */
int ring_token_valid(const char *token);

/* "connect", "no-peer", "rejected", "closed", "stalled", "aborted", "io",
 * "bad-argument" ("ok" for RING_OK). */
const char *ring_fail_name(enum ring_fail k);

/*
 * Listen for the left neighbour on addr (port 0 = the kernel picks one from
 * ip_local_port_range). 0 with *fd (non-blocking, close-on-exec) and *port,
 * or CD_ERR_IO with the message (naming the address) in err.
 */
int ring_listen(const struct sockaddr *addr, socklen_t len, int *fd, int *port, char *err,
                size_t errlen);

/*
 * Connect o->conns connections to the right neighbour at `right` and accept
 * o->conns from the left one on listen_fd (which stays the caller's), both at
 * once, within o->connect_timeout_ms. With nranks == 1 nothing is connected
 * and right may be NULL. Returns the ring, or NULL with e filled in.
 */
struct ring *ring_establish(const struct ring_opts *o, int listen_fd, const struct sockaddr *right,
                            socklen_t right_len, struct ring_error *e);

/*
 * Sum count elements of type t over all ranks: recv = the sum of every
 * rank's send. Out-of-place (send and recv must not overlap); every rank
 * calls it with the same count and t. 0, or -1 with e filled in; after an
 * error the ring is unusable (only ring_close).
 */
int ring_allreduce(struct ring *r, const void *send, void *recv, size_t count, enum coll_dtype t,
                   struct ring_error *e);

/*
 * Run the sweep p (coll.h) on this rank: out[k] for p->sizes[k]. *done is
 * the number of sizes completed. 0, or -1 with e filled in (e->bytes = the
 * size that failed; out[0 .. *done-1] stand).
 *
 * Progress: *done is set to 0 at the start and moves to k + 1 as soon as
 * size k has completed, each time with an atomic store (release), so another
 * thread may follow the sweep with __atomic_load_n(done, __ATOMIC_ACQUIRE)
 * while it runs; out[] is the caller's once ring_sweep has returned.
 */
int ring_sweep(struct ring *r, const struct coll_sweep *p, struct coll_result *out, size_t *done,
               struct ring_error *e);

/* Close the connections and free r (NULL is fine). */
void ring_close(struct ring *r);

#endif
