/* SPDX-License-Identifier: MIT */
/*
 * run_internal.h - what the phases of `clusterdoc run` (run.h) share: the
 * run itself, and the helpers its phases record failures with. run.c holds
 * the run's lifecycle (the phases in order, the put, the start, the orphan
 * check, the end); run_plan_phase.c the plan phase; run_watch.c the watch
 * phase's callbacks. Not a public interface: include it only from those.
 */
#ifndef CD_JOBS_RUN_INTERNAL_H
#define CD_JOBS_RUN_INTERNAL_H

#include "collectives/jobphase.h"
#include "fanout.h"
#include "jobs/hangready.h"
#include "jobs/jobwatch.h"
#include "jobs/rdzvwatch.h"
#include "jobs/run.h"
#include "jobs/run_cause.h"
#include "jobs/run_put.h"

#include <stdint.h>

enum run_phase { RP_PROBE, RP_PUT, RP_START, RP_WATCH, RP_ORPHANS, RP_DONE };

struct run_node_state {
	int gone;
	const char *python; /* facts' interpreter (borrowed from its answer) */
	struct run_cause_node cause;
};

struct run {
	struct loop *loop;
	struct sshpool *pool;
	struct run_opts o;
	const struct run_events *ev;
	void *arg;
	struct netmodel *m;
	struct job_plan *plan; /* the job's: a copy of o.plan, or the probes' picks */
	struct run_node_state *nodes;
	size_t n;
	struct fanout *fan;
	struct jobphase job;
	struct jobwatch watch;
	struct rdzvwatch rdzv;
	enum run_phase phase;
	int64_t started, put_started, job_started;
	struct hangready hang; /* the first node's: its site file is every node's */
	int have_hang;
	struct run_put *put;
	struct sshpool_node **pns; /* the put's nodes (NULL: gone) */
	long failure_node;         /* the node whose end wrote r.failure, -1: none */
	struct run_report r;
};

/* The phase's name to the front end (run_events.phase). */
void run_say_phase(struct run *r, const char *what);
/* The run fails with this headline; the first failure's stays. */
void run_fail(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Node i's error (code, msg: NULL says "failed"); its first stays. */
void run_node_error(struct run *r, size_t i, const char *code, const char *msg);
/* Every job has ended (or its node is gone): on to the orphan check. Does
 * nothing outside the watch phase, or while a started job still runs. */
void run_finish(struct run *r);

/* The plan phase (run.h's phase 2), once the probes are in: each node's
 * address, interface, ranks, command and environment, the master, the run
 * directory and hang-ready's file. A failure sets r.failed (and
 * r.could_not_start); r.planned says it went through. */
void run_plan_phase(struct run *r);

/* The watch phase's callbacks (run.h's phase 5): every line, each node's
 * end, the deadlines, and a node that cannot reach the rendezvous. */
extern const struct jobwatch_ops run_watch_ops;
extern const struct rdzvwatch_ops run_rdzv_ops;

#endif
