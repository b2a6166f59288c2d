/* SPDX-License-Identifier: MIT */
/*
 * netcheck_internal.h - what the network check's phases (netcheck.c) and
 * its connect matrix (netcheck_matrix.c) share. Not a public interface:
 * include it only from probes/netcheck*.c.
 */
#ifndef CD_PROBES_NETCHECK_INTERNAL_H
#define CD_PROBES_NETCHECK_INTERNAL_H

#include "fanout.h"
#include "netcheck.h"
#include "netmodel.h"
#include "probes/rdma_matrix.h"

#include <jansson.h>
#include <stdint.h>

enum netcheck_phase {
	PHASE_PROBE,
	PHASE_ASCEND,
	PHASE_LISTEN,
	PHASE_CONNECT,
	PHASE_CONFIRM,
	PHASE_DONE
};

/* One attempt of a node's connect request; its id in the request is its
 * index. Kept compact (not as the request's JSON) because every node's
 * targets live from the connect request to its answer: at 512 nodes with a
 * sampled matrix, thousands of them. */
struct netcheck_target {
	size_t node;    /* the peer */
	size_t attempt; /* a confirm retry: the attempt it replaces */
	char addr[NM_ADDR];
	unsigned scope_id;
	int port;
	unsigned char fixed, bulk, pmtu, retry;
	/* the RDMA proof (rdma_matrix.h): asked for, or why the pair is not
	 * tested ("" when the target carries no proof) */
	unsigned char rdma;
	char rdma_skip[96];
};

/* What the check holds of one node between its phases. */
struct netcheck_node_state {
	struct sshpool_node *pn;
	json_t *facts; /* the facts answer until the netprobe answer comes */
	/* the connect request's targets, kept to read the results */
	struct netcheck_target *targets;
	size_t ntargets;
	int kept; /* netcheck_again: connected by the check before */
	/* the peers this node tests in the connect matrix (ascending indexes),
	 * chosen when the listen phase begins: its route request asks only
	 * toward them, so a sampled matrix keeps the route data O(N x sample) */
	size_t *peers;
	size_t npeers;
	/* the node's end of the RDMA proof, set with its listen request */
	struct rdma_end rdma;
};

struct netcheck {
	struct loop *loop;
	struct sshpool *pool;
	struct netmodel *m;
	struct netcheck_opts o;
	struct netcheck_node_state *nodes;
	size_t n;
	struct fanout *fan; /* the answers each node owes in the current phase */
	enum netcheck_phase phase;
	char token[33];
	void (*done)(void *arg);
	void *arg;
	void (*moved)(void *arg); /* netcheck_on_phase */
	void *moved_arg;
	/* the listen phase while its requests go out: the predictions the route
	 * requests are built from, the next node, the next turn's timer */
	struct diagnosis *listen_pred;
	size_t listen_next;
	uint64_t listen_timer;
	int64_t phase_start;
	struct netcheck_stats stats;
	/* the check's own deadline (netcheck_set_deadline) */
	int deadline_s, deadline_hit;
	uint64_t deadline_timer;
	int64_t deadline_at; /* when deadline_timer fires (cd_now_ms) */
	void (*expired)(void *arg);
	void *expired_arg;
	unsigned rng;
	uint64_t resume_timer; /* netcheck_again: the kept nodes' first requests */
};

/* The index of one of the check's pool nodes. */
size_t netcheck_index_of(const struct sshpool_node *pn);
/* Node i was probed and has neither failed nor been closed since. */
int netcheck_node_live(const struct netcheck *c, size_t i);
/* 1 when a reply is a failure: the node is then out of the check (its
 * error recorded, its answers settled, the node closed). */
int netcheck_reply_failed(struct netcheck *c, struct sshpool_node *pn, json_t *result,
                          const char *code, const char *msg, const char *what);

/* A per-attempt deadline of want_ms fitted to the check's deadline: at most
 * 1/parts of the time left less a margin, at least NETCHECK_MIN_ATTEMPT_MS.
 * want_ms without a deadline. *room: the time it fits in (INT_MAX: no
 * deadline), to tell when a phase is not worth starting. */
#define NETCHECK_MIN_ATTEMPT_MS 100

int netcheck_fit_timeout(const struct netcheck *c, int want_ms, int parts, int *room);

/* netcheck_matrix.c: each live node's peers (netcheck_node_state.peers),
 * drawn once when the listen phase begins; phase 3, every live node connects to its peers'
 * listeners; phase 4, the timeouts others did not see are retried. */
void netcheck_choose_peers(struct netcheck *c);
void netcheck_phase_connect(struct netcheck *c);
void netcheck_phase_confirm(struct netcheck *c);

/* netcheck_ascend.c: on an Ascend node (its facts list NPUs), ascend_probe
 * in the probe phase (one more answer owed); the ascend phase, netdetect
 * toward the same-numbered device of every other server. */
void netcheck_ascend_facts(struct netcheck *c, size_t i, json_t *facts);
void netcheck_phase_ascend(struct netcheck *c);

/* netcheck_dcgm.c: with --dcgm-level, on a node whose facts list NVIDIA GPUs,
 * dcgm_diag in the probe phase (one more answer owed), its answer kept in
 * the model's "nvidia" object under "dcgm". */
void netcheck_dcgm_facts(struct netcheck *c, size_t i, json_t *facts);

#endif
