/* SPDX-License-Identifier: MIT */
/*
 * rdzvwatch.h - the rendezvous watch of `clusterdoc run` and `clusterdoc
 * mnist --mode torch`, on the head: has every node's job joined the
 * rendezvous at MASTER_ADDR:MASTER_PORT within the rendezvous timeout, and if
 * not, which node cannot reach that address and port now.
 *
 * Driven by the job's watch (jobwatch.h: its tick, every JOBWATCH_POLL_MS):
 * every RDZVWATCH_QUERY_MS each node whose job runs and has not joined yet
 * is asked `rdzv_state` (jobs/rdzv_agent.h). A node has joined once
 * its job holds an ESTABLISHED TCP connection to MASTER_ADDR:MASTER_PORT
 * (torch's TCPStore client; the master's own job too). When every running
 * node has joined, the watch is done and asks nothing more. When the
 * timeout passes first, every running node that has not joined is asked
 * once more with a connect test (RDZVWATCH_TEST_MS): a node that cannot
 * connect is named with the reason, and the job is stopped through
 * ops->unreachable. Where every test connects, the path is not what holds
 * the job (a slow start, a rank missing): the job goes on and the verdict
 * says so.
 *
 * A job that never touched the port (no socket of it to MASTER_ADDR:PORT,
 * no listener on PORT, on any node, by the timeout) does not use that
 * rendezvous (`--launcher none` with a program of its own, mpirun's ranks):
 * it is left alone ("unused"), unless always_used (torchrun rendezvous
 * there by construction).
 */
#ifndef CD_COLLECTIVES_RDZVWATCH_H
#define CD_COLLECTIVES_RDZVWATCH_H

#include "cd.h"
#include "collectives/jobphase.h"
#include "probes/netmodel.h"

#include <stddef.h>
#include <stdint.h>

#define RDZVWATCH_QUERY_MS    1000 /* between two rdzv_state of one node */
#define RDZVWATCH_TEST_MS     2000 /* the connect test's deadline */
#define RDZVWATCH_DEFAULT_MS  60000
#define RDZVWATCH_MAX_SECONDS 86400

enum rdzvwatch_state {
	RDZV_OFF,         /* timeout 0, or the job never started */
	RDZV_WAITING,     /* not every node has joined yet */
	RDZV_JOINED,      /* every node's job joined */
	RDZV_UNUSED,      /* the job never touched the port: not judged */
	RDZV_TESTING,     /* the timeout passed: the connect tests are out */
	RDZV_UNREACHABLE, /* a node cannot reach the master: the job was stopped */
	RDZV_REACHABLE,   /* not joined in time, but every path connects: left running */
	RDZV_ENDED,       /* the job ended before every node joined */
};

struct rdzvwatch_node {
	int querying;      /* an rdzv_state in flight */
	int joined;        /* seen ESTABLISHED to the master */
	int64_t joined_ms; /* since the watch began */
	int connecting, listening, processes;
	int tested;          /* the timeout's connect test answered (or failed) */
	char result[24];     /* "connected", "refused", "timeout"... ("" no answer) */
	char errno_name[24]; /* when the connect failed */
	int test_ms;
};

struct rdzvwatch_ops {
	/* 1 while node i's job runs */
	int (*running)(void *arg, size_t i);
	/* why: "the ranks did not all join ...: node3 cannot reach ...": stop the job */
	void (*unreachable)(void *arg, const char *why);
};

struct rdzvwatch {
	struct jobphase *job; /* borrowed: the pool nodes and their names */
	const struct rdzvwatch_ops *ops;
	void *arg;
	int timeout_ms; /* 0: off */
	int request_timeout_ms;
	int always_used;
	char addr[NM_ADDR];
	int port;
	char run[72]; /* CLUSTERDOC_RUN of the job's processes, "" none */
	int active;
	enum rdzvwatch_state state;
	int used; /* some node's job touched the port */
	int64_t started, last_query, joined_ms;
	size_t pending;               /* connect tests not answered yet */
	struct rdzvwatch_node *nodes; /* [job->n], owned */
	char verdict[CD_ERRLEN];      /* the outcome in words, "" none yet */
};

/* job, ops and arg must outlive w; timeout_ms 0: the watch is off. */
void rdzvwatch_init(struct rdzvwatch *w, struct jobphase *job, const struct rdzvwatch_ops *ops,
                    void *arg, int timeout_ms, int request_timeout_ms);
/* The job has started: watch addr:port (run: CLUSTERDOC_RUN, or NULL). */
void rdzvwatch_start(struct rdzvwatch *w, const char *addr, int port, const char *run,
                     int always_used, int64_t now);
/* The job watch's tick. */
void rdzvwatch_tick(struct rdzvwatch *w, int64_t now);
/* The job is over: later answers are dropped. */
void rdzvwatch_end(struct rdzvwatch *w);
void rdzvwatch_fini(struct rdzvwatch *w);

/* "off", "waiting", "joined", "unused", "testing", "unreachable", "reachable", "ended". */
const char *rdzvwatch_state_name(enum rdzvwatch_state s);

/*
 * One node's connect test in words, into out: "node3 cannot reach
 * 10.1.2.11:29500: timed out (a firewall drops it?)", "... refused (...)",
 * "node3 reaches 10.1.2.11:29500 now (connected in 1 ms)" for result
 * "connected", "node3 did not answer the test" for "". master: the node is
 * the master itself (its own address, often through lo). Pure.
 */
void rdzvwatch_explain(const char *host, const char *addr, int port, int master, const char *result,
                       const char *errno_name, int ms, char *out, size_t len);

#endif
