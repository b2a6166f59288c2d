/* SPDX-License-Identifier: MIT */
/*
 * mnist.h - `clusterdoc mnist` from the head's event loop: the last step of
 * onboarding, a short data-parallel MNIST training job across the nodes,
 * run either by PyTorch (torchrun on every node, the environment clusterdoc
 * suggests) or by the agents themselves (an MLP in C whose gradients are
 * summed with the TCP ring allreduce).
 *
 * Phases (each waits for every live node before the next starts):
 *   1. data+probe  the dataset is fetched or read and validated on the head
 *                  (mnist_data.h) while the nodes connect and answer
 *                  `netprobe` and (torch) `facts`
 *   2. plan        the mode (auto: torch when every node imports torch, else
 *                  embedded, saying why), each node's address and interface
 *                  (--iface, else NCCL's pick, as bench does), the ranks
 *   3. push        the four IDX files (and the training script) to every node
 *                  under <root>/MNIST/raw/, skipped where already present;
 *                  <root> is the node's own (mnist_opts.remote_root)
 *   4. start       torch: `proc_start` of torchrun on every node;
 *                  embedded: `bench_listen` then `mnist_start` on every node
 *   5. watch       `job_poll` every node until every job has ended; lines are
 *                  passed on as they come
 * A job needs every node: a node lost before the start fails the run with
 * its reason and nothing starts. Once started, the first node whose job
 * fails (or whose agent goes away) ends the run: the others are told to
 * stop (`job_stop`) after a short grace in which they may fail on their own,
 * and no process is left on any node (job_process.h). A run that passes
 * timeout_ms, or shows no output from any node for stall_ms, is stopped the
 * same way and reported as hung.
 */
#ifndef CD_COLLECTIVES_MNIST_H
#define CD_COLLECTIVES_MNIST_H

#include "cd.h"
#include "jobs/mnist_data.h"
#include "jobs/train.h"
#include "loop.h"
#include "jobs/jobplan.h"
#include "probes/netmodel.h"
#include "sshpool.h"

#include <stddef.h>
#include <stdint.h>

enum mnist_mode { MNIST_AUTO, MNIST_TORCH, MNIST_EMBEDDED };

#define MNIST_REMOTE_ROOT "~/.cache/clusterdoc/data"

struct mnist_opts {
	enum mnist_mode mode;
	const char *backend; /* torch: "gloo", "nccl" or "auto" (nccl when every node
	                        has CUDA and NCCL in torch); default "auto" */
	int epochs;          /* default 2 */
	int nproc_per_node;  /* ranks per node; default 1 */
	int nproc_given;     /* --nproc-per-node on the command line (a configured one is a default:
	                        slots win) */
	int batch;           /* per rank, default 64 */
	double lr, momentum; /* default 0.05 and 0.9 */
	unsigned seed;       /* default 1 */
	const char *iface;   /* NULL = the plan's, else NCCL's pick, on each node */
	const char *python;  /* torch: the interpreter on every node (--python);
	                        NULL = the login python3 */
	int master_port;     /* torch, when the plan has none; default 29500 */
	const struct job_plan *plan; /* the job's plan (jobs/jobplan.h: its hosts are the
	                                job's, in order), or NULL: each node's own pick */
	const char *remote_root;     /* where the files go on every node (--remote-dir);
	                                NULL (default): per node, MNIST_REMOTE_ROOT, or
	                                <agent dir>/data where the agent runs from a
	                                fallback directory (a full or read-only
	                                ~/.cache: sshpool_node_agent_note) */
	struct mnist_data_opts data;
	int timeout_ms;         /* the whole job once started; default 30 min */
	int stall_ms;           /* no output from any node; default 5 min */
	int ring_stall_ms;      /* embedded: a ring wait without progress; default 60 s */
	int request_timeout_ms; /* from the pool */
	/* torch: every node joined MASTER_ADDR:PORT by then, else the paths are
	 * tested and the job stopped (rdzvwatch.h); default 60 s, 0 off */
	int rendezvous_timeout_ms;
};

void mnist_opts_init(struct mnist_opts *o);
const char *mnist_mode_name(enum mnist_mode m);

struct mnist_node {
	const char *host;
	char ifname[NM_NAME];
	char addr[NM_ADDR];
	int first_rank, nranks;
	char torch_version[32];
	int pushed_files;       /* files sent (0 when all were present) */
	long long pushed_bytes; /* compressed bytes sent */
	int started, ended;
	int exit_code, signal; /* once ended */
	char error_code[32];   /* why it failed, or "" */
	char error[CD_ERRLEN];
	char first_error[512];  /* the earliest error line of its output */
	int64_t first_error_ms; /* its wall clock (the node's), 0 when none */
	char param_sha256[65];  /* embedded: rank first_rank's final parameters */
};

struct rdzvwatch;

struct mnist_report {
	enum mnist_mode mode;      /* what ran */
	char mode_note[CD_ERRLEN]; /* why auto chose embedded, or "" */
	char backend[8];           /* torch: gloo or nccl; embedded: tcp */
	int nranks;
	struct mnist_node *nodes;
	size_t nnodes;
	int epochs_done;
	double loss[TRAIN_MAX_EPOCHS], epoch_seconds[TRAIN_MAX_EPOCHS];
	int have_accuracy;
	double test_accuracy;
	long long test_correct, test_total;
	int hashes_identical; /* embedded: every rank's parameter hash equal */
	char param_sha256[65];
	int failed;              /* the job did not complete */
	char failure[CD_ERRLEN]; /* what went wrong, for the summary */
	int64_t data_ms, push_ms, train_ms, elapsed_ms;
	/* torch: the rendezvous watch (rdzvwatch.h), valid until mnist_free */
	const struct rdzvwatch *rendezvous;
};

/* What the front end hears while the run goes on (any may be NULL). */
struct mnist_events {
	/* a line of a node's job output ("out", "err" or "log") */
	void (*line)(void *arg, size_t node, const char *stream, const char *text);
	/* the dataset's download progress */
	void (*data_progress)(void *arg, enum mnist_file f, long long got, long long total);
	/* a phase began ("data", "push", "train", ...) */
	void (*phase)(void *arg, const char *what);
	/* the run has ended: read mnist_report */
	void (*done)(void *arg);
};

struct mnist;

struct mnist *mnist_start(struct loop *loop, struct sshpool *pool, const char *const *hosts,
                          size_t nhosts, const struct mnist_opts *o, const struct mnist_events *ev,
                          void *arg);
const struct mnist_report *mnist_report(const struct mnist *m);
/* Stop the job on every node now (the TUI's S); before the start, nothing
 * starts. why is the failure the report gives. */
void mnist_stop(struct mnist *m, const char *why);
void mnist_free(struct mnist *m);

#endif
