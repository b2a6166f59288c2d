/* SPDX-License-Identifier: MIT */
/*
 * jobwatch.h - the watch phase of a job that runs on every node as the
 * agent's background job (job.h: proc_start, mnist_start), shared by
 * `clusterdoc mnist` and `clusterdoc run`: poll each node's job every
 * JOBWATCH_POLL_MS and pass its lines on; when asked, stop the jobs still
 * running (`job_stop`: SIGTERM to the job's own process group, SIGKILL
 * after the grace; exact groups, never a pattern) now or after a delay in
 * which they may fail on their own.
 *
 * The job owns the nodes' states (which are gone, which have ended); the
 * watch asks through ops. Every callback runs from the loop.
 */
#ifndef CD_COLLECTIVES_JOBWATCH_H
#define CD_COLLECTIVES_JOBWATCH_H

#include "collectives/jobphase.h"
#include "loop.h"

#include <jansson.h>
#include <stdint.h>

#define JOBWATCH_POLL_MS 250
/* job_stop's deadline on the head beyond its grace: the answer of a node
 * still alive comes at once; one that is stopped or cut off never does, and
 * the job must not wait a whole request timeout for it. */
#define JOBWATCH_STOP_SLACK 2000

struct jobwatch_ops {
	/* 1 while node i's job is to be polled (started, not ended, not gone) */
	int (*running)(void *arg, size_t i);
	/* a line of node i's output: the node's wall clock (ms), "out", "err"
	 * or "log", the text */
	void (*line)(void *arg, size_t i, int64_t wall, const char *stream, const char *text);
	/* node i's job has ended: result is job_poll's or job_stop's answer
	 * (exit_code, signal, error) */
	void (*ended)(void *arg, size_t i, json_t *result);
	/* a request to node i failed (jobphase_reply_failed has taken the node
	 * out), or a node ended: the job decides whether it is over */
	void (*settle)(void *arg);
	/* count lines of node i's output were dropped by its agent (a burst past
	 * the lines it keeps, job.h) before the lines passed on next; NULL: none */
	void (*dropped)(void *arg, size_t i, long long count);
	/* each poll turn, before the polls (deadlines); NULL: none */
	void (*tick)(void *arg, int64_t now);
};

struct jobwatch_node {
	long long next_line;
	int polling, stop_sent;
};

struct jobwatch {
	struct loop *loop;
	struct jobphase *job; /* borrowed: the pool nodes */
	const struct jobwatch_ops *ops;
	void *arg;
	struct jobwatch_node *nodes; /* [job->n], owned */
	int request_timeout_ms;      /* of each job_poll */
	int stop_grace_ms;           /* job_stop's grace: SIGTERM to SIGKILL */
	int stop_delay_ms;           /* jobwatch_stop(w, 0): before the others are stopped */
	uint64_t poll_timer, stop_timer;
	int watching;        /* between jobwatch_start and jobwatch_end */
	int stopping;        /* jobwatch_stop was called */
	int64_t last_output; /* cd_now_ms() of the last line from any node */
};

void jobwatch_init(struct jobwatch *w, struct loop *loop, struct jobphase *job,
                   const struct jobwatch_ops *ops, void *arg, int request_timeout_ms,
                   int stop_grace_ms, int stop_delay_ms);
/* Begin polling (on the loop's next turn). */
void jobwatch_start(struct jobwatch *w);
/* Stop the jobs still running: now, or after stop_delay_ms. */
void jobwatch_stop(struct jobwatch *w, int now);
/* Stop stopping: the job is over (timers cancelled; later answers are dropped). */
void jobwatch_end(struct jobwatch *w);
void jobwatch_fini(struct jobwatch *w);

#endif
