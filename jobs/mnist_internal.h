/* SPDX-License-Identifier: MIT */
/*
 * mnist_internal.h - what the head's mnist phases (mnist.c) share with the
 * file push (mnist_push.c) and the pure reading of job output
 * (mnist_log.c). Not a public interface: include it only from
 * jobs/mnist*.c, jobs/run*.c (the file push) and the unit
 * tests.
 */
#ifndef CD_COLLECTIVES_MNIST_INTERNAL_H
#define CD_COLLECTIVES_MNIST_INTERNAL_H

#include "collectives/bench_agent.h"
#include "collectives/jobphase.h"
#include "jobs/jobwatch.h"
#include "jobs/mnist.h"
#include "jobs/rdzvwatch.h"
#include "jobs/run_cause.h"
#include "fanout.h"

#include <jansson.h>

/* ------------------------------------------------------------ push */

/* A file to put on nodes: its bytes (borrowed), cut into compressed chunks
 * on first use and shared by every node's push. */
struct push_file {
	char *remote_path; /* "~/.cache/clusterdoc/data/MNIST/raw/..." */
	const unsigned char *data;
	size_t len;
	char sha256[65];
	char **chunks; /* base64 of each chunk's zlib stream, made on demand */
	size_t nchunks;
};

void push_file_init(struct push_file *f, const char *remote_path, const unsigned char *data,
                    size_t len, const char *sha256);
void push_file_fini(struct push_file *f);

struct push;

/* err: 0, or a negative cd_err with msg naming the file and what failed.
 * done may run before push_start has returned (a node whose answers are
 * already waiting is pumped within the first request's flush): read the
 * counts from p, not from what push_start returned. */
typedef void (*push_done_cb)(void *arg, const struct push *p, size_t node, int err,
                             const char *msg);

/*
 * Put files[0..n) on one node: `file_stat` each, then `file_put` chunks (a
 * few in flight) and `file_commit` for those not already there. done runs
 * once. The push must outlive the pool's callbacks (free it after the pool).
 */
struct push *push_start(struct sshpool_node *pn, struct push_file *files, size_t n, int timeout_ms,
                        push_done_cb done, void *arg, size_t node);
int push_files_sent(const struct push *p);
long long push_bytes_sent(const struct push *p);
void push_free(struct push *p);

/* ------------------------------------------------------------ the run */

#define STOP_GRACE_MS 10000 /* after a node fails, the others may fail on their own */
#define JOB_STOP_WAIT 3000  /* job_stop's grace on the node */
/* The run so ends within --stall-timeout + JOB_STOP_WAIT + JOBWATCH_STOP_SLACK
 * of its last output. */
#define SCRIPT_NAME "mnist_ddp.py"

enum phase { PH_PROBE, PH_PUSH, PH_LISTEN, PH_START, PH_WATCH, PH_DONE };

/* What the run holds of one node between its phases. */
struct mnist_node_state {
	int gone;
	struct push *push;
	char root[512];          /* the data root there: mnist_opts.remote_root */
	struct push_file *files; /* its own files when root is not the shared one */
	size_t nfiles;           /* (owned, freed by mnist_free), else NULL */
	const char *python;
	int ports[BENCH_MAX_LOCAL_RANKS]; /* embedded: each local rank's listener */
	struct run_cause_node cause;      /* what its lines say of a failure */
};

struct mnist {
	struct loop *loop;
	struct sshpool *pool;
	struct mnist_opts o;
	const struct mnist_events *ev;
	void *arg;
	struct netmodel *m;
	struct job_plan *plan; /* the job's: a copy of o.plan, or the probes' picks */
	struct mnist_node_state *nodes;
	size_t n;
	/* the answers each node owes in the current phase; its member n (after
	 * the nodes) is the dataset's preparation, which the probe phase also
	 * waits for */
	struct fanout *fan;
	struct jobphase job; /* the pool nodes, their probe answers (facts: info) */
	enum phase phase;
	struct jobwatch watch; /* the watch phase (mnist_watch.c) */
	struct rdzvwatch rdzv; /* torch: the rendezvous, in the watch phase */
	long failure_node;     /* the node whose end wrote r.failure, -1: none */

	struct mnist_prep *prep;
	struct mnist_data *data;
	struct push_file files[MNIST_NFILES + 1]; /* under the shared root */
	size_t nfiles;
	char token[33];

	int64_t started, data_started, push_started, train_started;
	struct mnist_report r;
};

/* The run failed: the first cause is kept for the summary. */
void mnist_fail_run(struct mnist *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Node i's error (the first one is kept). */
void mnist_node_error(struct mnist *m, size_t i, const char *code, const char *msg);
/* 1 when a reply is a failure; the node is then out (and the run failed
 * when the job was running). */
int mnist_reply_failed(struct mnist *m, struct sshpool_node *pn, json_t *result, const char *code,
                       const char *msg, const char *what);
/* End the run when nothing runs any more: the report is final, done is
 * called once. */
void mnist_finish(struct mnist *m);
/* mnist_watch.c: the watch is over (the rendezvous watch ends; the headline
 * names the root cause, run_cause.h). */
void mnist_watch_end(struct mnist *m);

/* mnist_plan.c: choose the mode and the backend, and each node's address
 * and ranks (m->r), from the probe phase's answers. On a failure the run
 * is failed (mnist_fail_run) and the nodes at fault have their error. */
void mnist_plan(struct mnist *m);

/* mnist_watch.c: set up the watch (at the start), then poll the started
 * jobs until each has ended. */
void mnist_watch_init(struct mnist *m);
void mnist_watch_start(struct mnist *m);
/* Stop the jobs still running: now, or after STOP_GRACE_MS in which they
 * may fail on their own (their own error is the better evidence). */
void mnist_begin_stop(struct mnist *m, int now);

/* ------------------------------------------------------------ job output */

/* A "CDMNIST {json}" progress line: 1 with *event (new reference) set, 0
 * when the line is something else, -1 when it starts so but is malformed. */
int mnist_parse_event(const char *line, json_t **event);

/* 1 when a line of a job's output states an error worth showing first: a
 * Python exception line ("RuntimeError: ..."), an NCCL warning, a socket
 * error, the agent's own failure to run the command. */
int mnist_is_error_line(const char *line);

/* The torchrun (or torch.distributed.launch) command for node i of n. */
json_t *mnist_torch_argv(const char *python, const char *torch_version, int nnodes, int node_rank,
                         int nproc, const char *master_addr, int master_port, const char *script,
                         const char *data_root, const char *checkpoint, const char *backend,
                         const struct mnist_opts *o);

/* The environment of node i's ranks: the plan's variables for the node
 * (job_plan_env: interface variables, MASTER_ADDR, MASTER_PORT), and
 * settings for a quiet short job. */
json_t *mnist_torch_env(const struct job_plan *plan, size_t i, const char *backend);

#endif
