/* SPDX-License-Identifier: MIT */
/*
 * run_cause.h - which node of a failed job is the root cause (run.c, and
 * mnist's headline), as pure functions over what the job's lines said.
 *
 * When one torchrun worker fails, its peers fail right after it ("Connection
 * closed by peer", "Connection reset by peer"...), and every torchrun then
 * exits within its monitor interval of the others, in no useful order. The
 * root cause is the node with a worker that failed on its own: not one whose
 * failed workers' errors all say that a peer went away. torchrun's own "first
 * observed failure" is no better (it names whichever worker its monitor saw
 * first, a victim on the same node as often as not), so every failed worker
 * it reports counts: its log line ("failed (exitcode: 1) local_rank: 0 ...")
 * and each entry of its failure table ("rank : 3 (local_rank: 1)", "exitcode
 * : 3 (pid: ...)"). A node clusterdoc stopped after its torchrun reported a
 * failed worker counts as failed on its own too.
 */
#ifndef CD_COLLECTIVES_RUN_CAUSE_H
#define CD_COLLECTIVES_RUN_CAUSE_H

#include <stddef.h>
#include <stdint.h>

#define RUN_CAUSE_LOCALS 64 /* local ranks whose lines are told apart */

/*
 * The text after torchrun's --tee prefix "[ROLE<local rank>]:" (one space
 * after it dropped too), with *local the local rank; text itself and *local
 * -1 when the line has no such prefix. Pure.
 */
const char *run_cause_strip(const char *text, int *local);

/*
 * torchrun's words that a worker failed (text with any prefix stripped), 1
 * with *local_rank and *exit_code (-N: killed by signal N) when text is its
 * log line "failed (exitcode: N) local_rank: L (pid: P) of binary: ..."
 * (torch 1.x's "ERROR:torch.distributed.elastic...:" or 2.x's "E1204 ...
 * api.py:NNN]" before it); else 0. Pure.
 */
int run_cause_torchrun_failed(const char *text, int *local_rank, int *exit_code);

/*
 * The two lines of an entry of torchrun's failure table (ChildFailedError:
 * "Failures:" and "Root Cause (first observed failure):"): "  rank      : 3
 * (local_rank: 1)" gives 1 with *rank and *local_rank, "  exitcode  : 3
 * (pid: 27185)" 1 with *exit_code; else 0. Pure.
 */
int run_cause_table_rank(const char *text, int *rank, int *local_rank);
int run_cause_table_exit(const char *text, int *exit_code);

/* 1 when an error line says the rank lost a peer rather than failed itself
 * (a connection closed or reset by the peer, a broken pipe, NCCL's "remote
 * process exited"). Pure. */
int run_cause_peer_lost(const char *text);

/* What the job's lines and end said of one node. */
struct run_cause_node {
	int failed_alone;                /* ended with an error, not stopped by clusterdoc */
	uint64_t failed;                 /* bit L: torchrun reported local rank L failed */
	int exit_code[RUN_CAUSE_LOCALS]; /* their exit codes (-N: signal N) */
	int table_local;                 /* the table entry being read, -1 none */
	uint64_t peer_lost;              /* bit L: local rank L printed a peer-lost error
	                                    (bit 0 also for lines without a prefix) */
	int64_t first_error_ms;          /* the node's clock, 0: no error line */
	int64_t end_ms;                  /* head clock, 0: not ended */
};

void run_cause_init(struct run_cause_node *n);

/* Record one line of a node's output (as it came, prefix and all; is_error:
 * torchrun_is_error_line of it). 1 when it told of a failed worker. Pure. */
int run_cause_line(struct run_cause_node *n, const char *text, int is_error);

/* The node's own failed worker: of the local ranks torchrun reported failed,
 * the lowest that printed no peer-lost error, else the lowest; its exit code
 * in *exit_code. -1 when torchrun reported none. Pure. */
int run_cause_worker(const struct run_cause_node *n, int *exit_code);

/* 1 when node n failed because a peer did: every worker torchrun reported
 * failed printed a peer-lost error; without such a report, any line did. */
int run_cause_is_victim(const struct run_cause_node *n);

/*
 * The root cause among nodes[0..count): of the nodes that failed on their own
 * or whose torchrun reported a failed worker, those that are not victims,
 * else all of them; of those the one whose first error line came first (by
 * its own clock; a node without one after those with one), then the first to
 * end. -1 when no node failed. Pure.
 */
long run_cause_pick(const struct run_cause_node *nodes, size_t count);

#endif
