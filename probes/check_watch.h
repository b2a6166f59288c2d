/* SPDX-License-Identifier: MIT */
/*
 * check_watch.h - the network check in rounds over agents that stay
 * connected (`clusterdoc check --watch`): the first round connects every
 * node as `check` does; each later round re-runs the probes and the reach
 * matrix over the same pool (netcheck_again: no new connection or SSH
 * handshake for a node still connected; a node lost since connects anew),
 * diagnoses it, and says, per node, which findings were raised and which
 * cleared since the round before. Rounds start every interval_ms (from the start
 * of one to the start of the next; right after the last one ended when it
 * took longer).
 *
 * An asynchronous module as every flow: check_watch_start returns at once,
 * the events run from the loop. The watch owns its pool.
 */
#ifndef CD_COLLECTIVES_CHECK_WATCH_H
#define CD_COLLECTIVES_CHECK_WATCH_H

#include "loop.h"
#include "probes/diagnose.h"
#include "probes/netcheck.h"
#include "probes/netmodel.h"
#include "sshpool.h"

#include <stddef.h>
#include <stdint.h>

struct check_watch_opts {
	struct netcheck_opts check; /* netcheck_opts_init'ed; keep_connected is set here */
	int interval_ms;            /* from one round's start to the next's, > 0 */
	int count;                  /* rounds in all; 0 = until check_watch_free */
	int deadline_s; /* each round's own deadline (netcheck_set_deadline); 0 = none */
};

/* One change of a round: the nodes of finding f that joined it (raised: f
 * is the round's) or left it (cleared: f is the round before's), as
 * indexes into f's model in f's order. A node joins a finding when no
 * finding of the round before with the same id and severity named it. A
 * finding that names no node (nnodes 0) changes as a whole. */
struct check_watch_change {
	const struct finding *f;
	size_t *nodes;
	size_t nnodes;
};

/* One finished round. Everything is borrowed from the watch: valid until
 * the next round ends (check_watch_last keeps the last one until
 * check_watch_free). */
struct check_watch_round {
	unsigned round;     /* 1, 2, ... */
	long long time;     /* Unix time the round ended */
	int64_t started_ms; /* cd_now_ms() at its start */
	int64_t elapsed_ms; /* how long it took */
	const struct netmodel *m;
	const struct diagnosis *d;
	struct netcheck_stats stats;
	int deadline_hit;
	int checked; /* nodes probed */
	int partial; /* of them, nodes that failed after their probe */
	size_t kept; /* nodes still connected from the round before (0 in round 1) */
	/* the nodes that joined a finding of d (every finding's in round 1) */
	const struct check_watch_change *raised;
	size_t nraised;
	/* the nodes that left a finding of the round before (prev_d, its
	 * model prev_m) */
	const struct check_watch_change *cleared;
	size_t ncleared;
	const struct netmodel *prev_m;
	const struct diagnosis *prev_d;
};

struct check_watch_events {
	/* a round ended (r is borrowed as said above) */
	void (*round)(void *arg, const struct check_watch_round *r);
	/* the last of opts.count rounds ended (after its round event) */
	void (*done)(void *arg);
};

struct check_watch;

/*
 * Start the first round on hosts (n of them, borrowed only during the call)
 * over a pool made from pool_o (borrowed for the watch's life). ev and arg
 * are kept. NULL with a message in err when the pool cannot be made (the
 * agent binary unreadable).
 */
struct check_watch *check_watch_start(struct loop *loop, const struct sshpool_opts *pool_o,
                                      const char *const *hosts, size_t n,
                                      const struct check_watch_opts *o,
                                      const struct check_watch_events *ev, void *arg, char *err,
                                      size_t errlen);
/* The last round that ended, or NULL before the first one has. */
const struct check_watch_round *check_watch_last(const struct check_watch *w);
/* Ends the watch: a round under way is dropped, the agents are closed.
 * check_watch_free(NULL) is a no-op. */
void check_watch_free(struct check_watch *w);

/*
 * The changes from diagnosis a to diagnosis b (of the same hosts in the
 * same order; a NULL: every finding of b with all its nodes): for each
 * finding of b, in b's order, the nodes that no finding of a with the same
 * id and severity names, into out (room for b->nfindings) when there are
 * any. A finding whose message changed (a count, a time) on the same nodes
 * is no change. Returns how many; free their node lists with
 * check_watch_changes_fini.
 */
size_t check_watch_changes(const struct diagnosis *a, const struct diagnosis *b,
                           struct check_watch_change *out);
/* Frees the node lists of the n changes of c (c itself is the caller's). */
void check_watch_changes_fini(struct check_watch_change *c, size_t n);

#endif
