/*
 * check_watch.h - the network check in rounds over agents that stay
 * connected (`clusterdoc check --watch`): the first round connects every
 * node as `check` does; each later round re-runs the probes and the reach
 * matrix over the same pool (netcheck_again: no new connection or SSH
 * handshake for a node still connected; a node lost since connects anew),
 * diagnoses it, and says which findings were raised and which cleared
 * since the round before. Rounds start every interval_ms (from the start
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
	/* findings of d not in the round before (every one in round 1) */
	const struct finding **raised;
	size_t nraised;
	/* findings of the round before (prev_d, its model prev_m) not in d */
	const struct finding **cleared;
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
 * Whether two findings (of two diagnoses of the same hosts) are the same
 * one: the same id, severity and nodes. A finding whose message changed
 * (a count, a time) is not raised again.
 */
int check_watch_same(const struct finding *a, const struct finding *b);
/*
 * The findings of b that a does not have (a NULL: all of b's), in b's
 * order, into out (room for b->nfindings). Returns how many.
 */
size_t check_watch_new_findings(const struct diagnosis *a, const struct diagnosis *b,
                                const struct finding **out);

#endif
