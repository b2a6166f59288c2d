/* SPDX-License-Identifier: MIT */
/*
 * netcheck.h - run the network check on many nodes from the head's event
 * loop: facts and netprobe on every node, then listeners on every candidate
 * address, then the connect matrix, all through the SSH pool. Fills a
 * netmodel (netmodel.h) that diagnose() reads. Non-blocking: the TUI and
 * the CLI drive it from their own loop.
 *
 * Phases (each waits for every live node before the next starts):
 *   1. probe    `facts` then `netprobe` on each node as soon as it is ready
 *   2. listen   `listen` on every address that is not loopback (link-local
 *               included, with its scope) on an ephemeral port, and on the
 *               MASTER_PORT candidate on every node (the master also on two
 *               fallbacks: port+1 and port+10); `route` toward the peers'
 *               predicted addresses
 *   3. connect  every node connects to its peers' listeners, all at once
 *               with one deadline per attempt; the master also to its own
 *               MASTER_PORT candidates on each of its addresses (torchrun's
 *               rank-0 agent connects to its own MASTER_ADDR, over `lo`)
 *   4. confirm  a timeout that other nodes did not see toward the same
 *               listener is retried once (the retry's result replaces it);
 *               failures every peer saw are not, so they cost no second deadline
 * A node that fails in any phase is recorded in the model and skipped by
 * the next phases; the others go on.
 *
 * Which pairs are tested: all of them up to full_matrix_max nodes (default
 * 64). Beyond, each node tests the master, its two ring neighbours (in the
 * order given) and `random_peers` (default 4) peers drawn from a seeded
 * generator; see docs/performance.md.
 */
#ifndef CD_PROBES_NETCHECK_H
#define CD_PROBES_NETCHECK_H

#include "loop.h"
#include "netmodel.h"
#include "sshpool.h"

struct netcheck_opts {
	size_t master;          /* index of the master node, default 0 */
	int master_port;        /* 0 = the master's MASTER_PORT, else 29500 */
	int probe_timeout_ms;   /* connect deadline per attempt, default 3000 */
	int request_timeout_ms; /* for facts/netprobe; from the pool's options */
	int full_matrix_max;    /* default 64 */
	int random_peers;       /* default 4 */
	unsigned seed;          /* for the random peers; default 1 */
	int no_firewall;        /* do not run the firewall tools on the nodes */
	const char *python;     /* the interpreter whose torch facts count (--python);
	                           NULL = the login python3 */
	int keep_connected;     /* leave the agents connected when the check ends, for
	                           netcheck_again (their listeners are closed) */
	int expect_gpus;        /* --expect-gpus: the GPUs each node should have (the
	                           model's expect_gpus, gpu-missing); 0 = not said */
	struct expect expect;   /* the configuration's [expect]: the model's expect,
	                           probes/diagnose_expect.c's findings */
	int dcgm_level;         /* --dcgm-level: run `dcgmi diag -r N` on every GPU
	                           node (dcgm_agent.h); 0 = not */
};

void netcheck_opts_init(struct netcheck_opts *o);

struct netcheck;

/*
 * Add the hosts to the pool, start it, and run the phases; when every node
 * is done (or failed), done(arg) is called once from the loop, with the
 * model complete. m must have been created with the same hosts in the same
 * order; it stays owned by the caller.
 */
struct netcheck *netcheck_start(struct loop *loop, struct sshpool *pool, struct netmodel *m,
                                const struct netcheck_opts *o, void (*done)(void *arg), void *arg);
void netcheck_free(struct netcheck *c);

/*
 * Run the check again, into a new model m (netmodel_new with the same hosts
 * in the same order), over the pool and the nodes of prev: a check started
 * with o.keep_connected whose done callback has run. The nodes still
 * connected are asked at once, from the loop's next turn, with no new
 * connection or SSH handshake; a node that failed or was closed is added to
 * the pool again and connects anew. From this call on, the pool's events go
 * to the new check: the caller frees prev right after (it may still read
 * prev's model, which stays the caller's). o is copied as netcheck_start
 * does (keep it set to go on like this). NULL when prev has not ended.
 */
struct netcheck *netcheck_again(struct netcheck *prev, struct netmodel *m,
                                const struct netcheck_opts *o, void (*done)(void *arg), void *arg);
/* How many of the check's nodes are connected (their agent ready) now. */
size_t netcheck_connected(const struct netcheck *c);

/*
 * The check's own deadline has passed: every node that still owes an answer
 * in the current phase is closed. One not probed yet is recorded as failed,
 * error code "deadline", with `why`; one probed is partial, with
 * `why_probed` (it answered: the message must not blame it). The phases go
 * on with the others. Call it again later for the nodes of the phases that
 * follow.
 */
void netcheck_expire(struct netcheck *c, const char *why, const char *why_probed);

/*
 * The check's own deadline (--deadline): the phases are fitted to it. The
 * facts' python probe gets at most half of the time left when a node is
 * ready; the connect phase's per-attempt deadline (probe_timeout_ms) is cut
 * to half of what is left, less a margin for the answers to come back
 * (500 ms + 1/10), the confirm phase's to what is left then, and the
 * confirm phase is skipped when under 100 ms would be left; the stats say
 * what was cut. deadline_s seconds from now, the nodes that still owe an
 * answer are expired as above, with a message naming the deadline; the
 * phases that follow get 2 s each. expired(arg), when not NULL, is called
 * from the loop after each expiry (a display redraws). The deadline ends
 * with the check (before its done callback) or with netcheck_free.
 * deadline_s <= 0: none.
 */
void netcheck_set_deadline(struct netcheck *c, int deadline_s, void (*expired)(void *arg),
                           void *arg);
/* 1 once the deadline has passed during the check. */
int netcheck_deadline_hit(const struct netcheck *c);

/* Where one node is in the check, for a live display (the TUI). */
enum netcheck_stage {
	NCS_QUEUED,     /* waiting for a slot in the fan-out window */
	NCS_CONNECTING, /* ssh -G, name resolution, TCP */
	NCS_AUTH,       /* SSH handshake, host key, authentication */
	NCS_STARTING,   /* bootstrap, upload, hello */
	NCS_PROBING,    /* facts and netprobe asked, not all answered */
	NCS_MATRIX,     /* probed; listeners, routes and the connect matrix */
	NCS_DONE,       /* every phase answered (its results may still be partial) */
	NCS_FAILED,     /* not checked: nm_node.error_code says why */
};
enum netcheck_stage netcheck_node_stage(const struct netcheck *c, size_t i);
/* "queued", "connecting", "auth", "starting", "probing", "matrix", "done", "failed" */
const char *netcheck_stage_name(enum netcheck_stage s);
/* The phase the check is in: "probe", "listen", "connect", "confirm", "done". */
const char *netcheck_phase_name(const struct netcheck *c);

/* Call moved(arg) from the loop each time the check enters a phase (before
 * the phase's first request), "done" included; NULL stops it. For a display
 * that is not redrawn on its own (the CLI's progress line). */
void netcheck_on_phase(struct netcheck *c, void (*moved)(void *arg), void *arg);

/* How many attempts phase 3 made, how long each phase took (ms), and what
 * the deadline cut short. */
struct netcheck_stats {
	size_t attempts;
	size_t retried; /* attempts retried by the confirm phase */
	int64_t probe_ms, listen_ms, connect_ms, confirm_ms;
	int deadline_s;          /* the check's deadline, 0 = none */
	int deadline_hit;        /* it passed with answers owed (nodes expired) */
	char deadline_phase[12]; /* the phase it first passed in, "" = it did not */
	int probe_timeout_ms;    /* the per-attempt deadline asked for */
	int connect_timeout_ms;  /* the one phase 3 used (shorter: cut to fit), 0 = not run */
	int confirm_timeout_ms;  /* the one phase 4 used, 0 = not run */
	size_t confirm_skipped;  /* retries owed but not made: the deadline left no time */
	int python_timeout_ms;   /* the shortest python probe bound the deadline gave, 0 = none */
	struct loop_stats loop;  /* the head's loop since loop_new: its lag */
};
void netcheck_stats(const struct netcheck *c, struct netcheck_stats *s);

#endif
