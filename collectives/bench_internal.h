/* SPDX-License-Identifier: MIT */
/*
 * bench_internal.h - what the head's bench phases (bench.c), its plan and
 * results of each round (bench_round.c) and its pure planning and
 * arithmetic (bench_plan.c) share. Not a public interface: include it only
 * from collectives/bench*.c, mnist*.c and the unit tests.
 */
#ifndef CD_COLLECTIVES_BENCH_INTERNAL_H
#define CD_COLLECTIVES_BENCH_INTERNAL_H

#include "collectives/bench.h"
#include "collectives/bench_agent.h"
#include "collectives/jobphase.h"
#include "fanout.h"
#include "probes/ib_suggest.h"
#include "probes/netmodel.h"

/* A pair of node indexes in a round. */
struct bench_pair {
	size_t a, b;
};

/*
 * The pairs of --pairs over the nodes live[0..nlive-1]: all pairs when
 * nlive <= all_max, else each node with the next (ring neighbours). Ordered
 * in rounds of disjoint pairs: round_of[k] is pair k's round, rounds are
 * numbered from 0 and pairs come sorted by round. All pairs take nlive - 1
 * rounds (nlive even) or nlive (odd): the circle method. Returns the number
 * of pairs (new array in *pairs and *round_of) and the rounds in *nrounds.
 */
size_t bench_plan_pairs(const size_t *live, size_t nlive, int all_max, struct bench_pair **pairs,
                        int **round_of, int *nrounds);

/* busbw from algbw for n ranks: algbw * 2(n-1)/n (0 for n == 1). */
double bench_busbw(double algbw, int nranks);

/* Mark links below 0.7 x the median busbw of the links that ran as slow, and
 * name the nodes that are in more than half of their links' slow ones in
 * out ("node3 (3 of 3 links slow)"; "" when none). */
void bench_mark_slow(struct bench_link *links, size_t nlinks, const struct bench_node *nodes,
                     size_t nnodes, char *out, size_t outlen);

/* ------------------------------------------------------------ the run */

enum bench_phase {
	BENCH_PHASE_PROBE,
	BENCH_PHASE_PLAN,
	BENCH_PHASE_LISTEN,
	BENCH_PHASE_RUN,
	BENCH_PHASE_DONE
};

/* What the bench holds of one node between its phases and rounds. */
struct bench_node_state {
	int ring;                         /* the ring it is in this round, -1 = none */
	int ports[BENCH_MAX_LOCAL_RANKS]; /* per local rank, from bench_listen */
	json_t *ranks_out;                /* bench_run's answer */
	int running;                      /* bench_run was sent this round */
	size_t sizes_done;                /* of this round: every local rank's (progress) */
	int gone;                         /* failed or closed: out of every later round */
	int ending; /* unfinished after the grace: the head ends its agent (sshpool_node_end) */
	char *listen_answer; /* the last bench_listen result, for a failure message */
};

/* One ring of the current round: its nodes in order. */
struct bench_ring {
	size_t nodes[2];
	size_t *members; /* all nodes of a full run; points at nodes for a pair */
	size_t nmembers;
	int nranks;
	char token[33];
	char nccl_id[257];
	int failed;
};

struct bench {
	struct loop *loop;
	struct sshpool *pool;
	struct bench_opts o;
	struct netmodel *m;
	struct bench_node_state *nodes;
	size_t n;
	struct fanout *fan;  /* the answers each node owes in the current phase */
	struct jobphase job; /* the pool nodes, their probe answers (caps: info) */
	enum bench_phase phase;
	void (*done)(void *arg);
	void *arg;
	void (*moved)(void *arg); /* bench_on_progress */
	void *moved_arg;
	uint64_t grace_timer;
	int64_t started;
	size_t sizes[BENCH_MAX_SIZES], nsizes;
	int ranks_per_node;

	/* the rounds: one for a full ring; with --pairs, one per round of pairs */
	size_t *live;
	size_t nlive;
	struct bench_pair *pairs;
	int *round_of;
	size_t npairs, next_pair;
	int round;
	struct bench_ring *rings;
	size_t nrings;

	/* what a check's plan would set on these nodes, for a bench without one
	 * (bench_env_avoid); made at the first need */
	struct ib_suggestion ib;
	int ib_made;

	struct bench_report r;
};

/* bench_round.c: the plan once the probe phase ended: the live nodes with
 * their capabilities and addresses, the backend, the ranks per node and,
 * with --pairs, the rounds. Nodes that cannot take part get their error. */
void bench_plan_nodes(struct bench *b);
/* The rings of the next round: the whole live set once, or the next round
 * of pairs. 0 when nothing is left to run. */
size_t bench_next_round(struct bench *b);
/* The answers of the round that ended, into the report (the sizes of a
 * full ring, or a link per pair). */
void bench_gather_round(struct bench *b);
/* Node i's bench_run answered nccl_net (nccl backend): its net, NCCL's
 * lines against the prediction from its probe (diagnose_rdma_predict) for
 * the NCCL version its bench_caps named. A later round's answer replaces
 * an earlier one. */
void bench_note_net(struct bench *b, size_t i, const json_t *nccl_net);

/* bench_env.c: the NCCL variables of each node (nccl backend). */

/* Once the plan is made: each live node's nccl_env (bench.h): the plan's
 * variables (bench_opts.nccl_env) and the login's others, or the login's. */
void bench_env_plan(struct bench *b);
/* The "env" of node i's bench_nccl_id and bench_run (nccl_env.h): a new
 * copy of the plan's variables, or NULL when the node has none. */
json_t *bench_env_request(const struct bench *b, size_t i);
/* What NCCL will pick on node i under the variables it runs with: its
 * login's with the plan's set over them (diagnose_rdma_predict_env). */
void bench_env_predict(const struct bench *b, size_t i, const char *version,
                       struct nccl_ib_pick *pk);
/* Node i's net, judged: when the login's variables (no plan was set there)
 * made NCCL fall back to sockets as predicted, and the variables a check
 * suggests (diagnose_suggest_ib) would make it use IB, say so in its
 * avoid. */
void bench_env_avoid(struct bench *b, size_t i);

#endif
