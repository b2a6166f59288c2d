/* SPDX-License-Identifier: MIT */
/*
 * bench.h - `clusterdoc bench` from the head's event loop: the allreduce
 * bandwidth test between the agents (ranks), over the SSH pool. The head
 * only bootstraps (addresses, ports, a per-run token or NCCL's unique id)
 * and collects results; the data goes directly between the nodes over the
 * chosen network.
 *
 * Phases (each waits for every live node before the next starts):
 *   1. probe   `netprobe` (no firewall tools) and `bench_caps` on each node
 *   2. plan    the backend (auto: nccl when every node has NCCL and a GPU,
 *              else tcp, saying why), each node's address (--iface NAME, or
 *              the first address NCCL's socket transport would pick there,
 *              predict.h), the ranks (node order, ranks_per_node each) and,
 *              with --pairs, the rounds of disjoint pairs
 *   3. listen  `bench_listen` on every node of the round (tcp), or
 *              `bench_nccl_id` on rank 0's node (nccl)
 *   4. run     `bench_run` on every node of the round, all at once
 * A node that fails before the run is left out of the ring (the others are
 * measured without it) and reported; a rank that fails during the run ends
 * the run: its neighbours stall or see the connection close within
 * stall_ms, and any node still busy stall_ms + 5 s after the first failure
 * is closed (its agent exits with its session), so no rank is left behind.
 *
 * Pairs (--pairs): every pair of nodes up to pairs_all_max nodes, else each
 * node with its ring neighbour; run in rounds of disjoint pairs (a round-
 * robin schedule), each pair a 2-rank allreduce of the largest size. The
 * report lists every link's bandwidth and names the slow ones.
 */
#ifndef CD_COLLECTIVES_BENCH_H
#define CD_COLLECTIVES_BENCH_H

#include "collectives/bench_net.h"
#include "collectives/coll.h"
#include "loop.h"
#include "probes/netmodel.h"
#include "sshpool.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

enum bench_backend { BENCH_AUTO, BENCH_TCP, BENCH_NCCL };

struct bench_opts {
	enum bench_backend backend;
	size_t min_bytes, max_bytes; /* -b, -e: default 8 and 256 MiB */
	int factor;                  /* -f: default 2 */
	enum coll_dtype dtype;       /* default float */
	int iters, warmup;           /* default 20 and 5 (nccl-tests) */
	int check;                   /* default 1 */
	int ranks_per_node;          /* tcp; default 1 */
	int gpus_per_node;           /* nccl; 0 = the smallest GPU count of the nodes */
	int conns;                   /* TCP connections per neighbour; 0 = the agent's default */
	const char *iface;           /* NULL = the plan's, else NCCL's pick, on each node */
	const char *const *proved_ifname; /* per node, in order: the interface a check
	                                     proved there (job_plan_proved_ifnames), used
	                                     as is; NULL (all, or a node's): none */
	json_t *const *nccl_env;          /* per node, in order: the NCCL variables a
	                                     check's plan sets there (job_plan_nccl_env),
	                                     borrowed; set around the node's NCCL calls
	                                     (nccl backend, collectives/nccl_env.h) and
	                                     predicted with; NULL (all, or a node's): the
	                                     node's login environment, untouched */
	int stall_ms;                     /* default 10000 */
	int connect_timeout_ms;           /* ring establishment, default 10000 */
	int pairs;                        /* pairwise mode */
	int pairs_all_max;                /* all pairs up to this many nodes (16) */
	int request_timeout_ms;           /* for the probe requests; from the pool */
};

void bench_opts_init(struct bench_opts *o);

/* The sizes of -b/-e/-f: min, min*f, ... up to max (max included when the
 * progression lands on it). Returns the count written (at most cap). */
size_t bench_sizes(const struct bench_opts *o, size_t *sizes, size_t cap);

struct bench_node {
	const char *host;
	int probed;            /* netprobe and caps answered */
	char error[CD_ERRLEN]; /* why it is not in the ring, or "" */
	char error_code[32];
	char ifname[NM_NAME]; /* the ring's interface and address */
	char addr[NM_ADDR];
	unsigned scope_id;
	char addr_rule[200];    /* why that address ("--iface eth1", NCCL's rule) */
	int first_rank, nranks; /* its ranks; nranks 0 = not in the ring */
	int nccl_available, gpus;
	char nccl_reason[256], nccl_version[32];
	/* nccl: NCCL's own word on the network it used, against the prediction
	 * (bench_net.h); NULL until the node's bench_run answered */
	struct bench_net *net;
	/* nccl: the NCCL variables its NCCL ran under (bench_env.c):
	 * {"from": "plan" or "login", "vars": [{"name", "value", "source"}]},
	 * the plan's ("source": "plan") and the login's others (netmodel's,
	 * "environment" or the conf file); NULL on tcp or before the plan */
	json_t *nccl_env;
};

/* A node's address for a job or the ring: on iface (IPv4 first, then a global IPv6,
 * then a link-local one), else NCCL's first socket pick (predict.h). 0 with
 * the node's ifname/addr/scope_id/addr_rule set, or -1 with its error set
 * ("no address on interface eth1", NCCL's own failure message). */
int bench_pick_address(const struct nm_node *n, const char *iface, struct bench_node *out);

/* One size, over all ranks: time is the slowest rank's (the collective ends
 * when the last rank has its result). */
struct bench_size {
	size_t bytes, count;
	double time_us, algbw, busbw; /* GB/s, 1e9 bytes; busbw = algbw * 2(n-1)/n */
	long long wrong;              /* sum over ranks; -1 when not checked */
};

/* A rank or node that failed, and what it says. */
struct bench_failure {
	int rank; /* -1 when the node failed as a whole */
	size_t node;
	char kind[16]; /* ring.h's names, "died" (the agent went away),
	                  "unfinished" (closed after another rank failed) */
	int peer_rank; /* the neighbour it blames, or -1 */
	size_t bytes;  /* the size it was running, 0 while connecting */
	char message[CD_ERRLEN];
};

struct bench_link {
	size_t a, b;  /* node indexes */
	double busbw; /* GB/s of the 2-rank allreduce at the largest size */
	double time_us;
	int failed;
	char error[CD_ERRLEN];
	int slow; /* below 0.7 x the median of the links */
};

/* Where a full-ring run that failed stopped: the first size not every rank
 * completed, what happened to it, and the node it names. */
struct bench_stop {
	size_t bytes, count; /* 0 bytes: the run did not stop early */
	char state[16];      /* "stalled" (a node went silent: stopped, hung or cut
	                        off), "died" (its agent went away), else the failing
	                        rank's kind (ring.h) */
	size_t node;         /* the node it names */
	char message[CD_ERRLEN];
};

struct bench_report {
	enum bench_backend backend;   /* what ran: tcp or nccl */
	char backend_note[CD_ERRLEN]; /* why auto chose tcp, or "" */
	int nranks;
	struct bench_node *nodes;
	size_t nnodes;
	struct bench_size *sizes; /* the sizes every rank completed (a node that
	                             never answered: as far as its progress says;
	                             the time is then that of the ranks that did) */
	size_t nsizes;
	size_t nsizes_planned;  /* the sweep's sizes: more than nsizes when it stopped */
	struct bench_stop stop; /* a full ring that stopped early */
	double avg_busbw;
	struct bench_failure *failures;
	size_t nfailures;
	struct bench_link *links; /* --pairs */
	size_t nlinks;
	char slow_nodes[CD_ERRLEN]; /* "node3 (3 of 3 links slow)", or "" */
	int64_t elapsed_ms;
};

struct bench;

/* Add the hosts to the pool, start it, and run the phases; done(arg) is
 * called once from the loop when the run has ended. */
struct bench *bench_start(struct loop *loop, struct sshpool *pool, const char *const *hosts,
                          size_t nhosts, const struct bench_opts *o, void (*done)(void *arg),
                          void *arg);
const struct bench_report *bench_report(const struct bench *b);
void bench_free(struct bench *b);

const char *bench_backend_name(enum bench_backend b);

/* Where a running bench is, for a live display (the TUI, --progress). The
 * sizes are timed on the nodes, which report each size as all their local
 * ranks have completed it (bench_run's progress, bench_agent.h); the
 * results themselves arrive together at the end of each round. */
struct bench_progress {
	const char *phase;              /* "probe", "plan", "listen", "run", "done" */
	size_t nodes, probed, answered; /* answered: this phase's answers so far */
	int round, rounds;              /* 1 of 1 for a full ring; --pairs: rounds of pairs */
	size_t nsizes;                  /* sizes in the sweep */
	size_t sizes_done;              /* in the run phase: the sizes every rank of this
	                                   round has completed (the fewest over its nodes;
	                                   --pairs: of this round's pairs, each running the
	                                   whole sweep); 0 in the other phases */
};
void bench_progress(const struct bench *b, struct bench_progress *p);

/* Call moved(arg) from the loop each time a node of the running round
 * reports more sizes done (so bench_progress's sizes_done may have moved);
 * NULL stops it. For a display that is not redrawn on its own. */
void bench_on_progress(struct bench *b, void (*moved)(void *arg), void *arg);

#endif
