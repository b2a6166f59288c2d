/* SPDX-License-Identifier: MIT */
/*
 * run.h - `clusterdoc run` from the head's event loop: the user's own
 * command started on every node at once, with the environment clusterdoc
 * proved, watched to the end, and stopped everywhere when one node fails.
 *
 * Before run_start the front end checks the nodes (cli/run_check.h: a
 * fresh `check`, or the saved one) and passes the job's plan in
 * run_opts.plan; the check runs a loop of its own, so it is not a phase
 * here. Nor is the walk of --sync's directory: the front end builds its
 * manifest (runsync_manifest_build) before anything starts, so that a
 * directory over the cap is refused first.
 *
 * Phases (each waits for every live node before the next starts):
 *   1. probe  the nodes connect and answer `netprobe` and `facts` (the
 *             --python interpreter's torch, the GPU count)
 *   2. plan   each node's address, interface and variables from the job's
 *             plan (jobs/jobplan.h: what the check proved); a node the plan
 *             lacks, or any with --iface, from its probe (NCCL's pick, as
 *             mnist and bench choose), unproved; ranks; the master (the
 *             plan's address and MASTER_PORT, else node 0's address and
 *             o.master_port); the command and environment per node
 *             (run_plan_*).
 *             Hang-ready (unless no_hang_ready): hangready_build with the
             node's torch version; its variables go into the node's
             environment (PYTHONPATH first <run_dir>/hang, then a --env
             PYTHONPATH). --dry-run ends here: the report holds every
             node's plan.
 *   3. put    the files on the nodes, once per shared home (run_put.h):
 *             --sync's tree (hang-ready's sitecustomize added to it) at
 *             run_dir, or hang-ready's sitecustomize alone at
 *             run_dir/hang/. Nothing to put: no phase. A failure here
 *             fails the run before anything starts.
 *   4. start  `proc_start` on every node (its own process group under a
 *             reaper, job_process.h); the environment is exactly the one
 *             planned, added to the node's own login environment: nothing of
 *             the head's environment reaches the nodes
 *   5. watch  every line as it comes (jobwatch.h), and the rendezvous
 *             (rdzvwatch.h): a node that has not joined MASTER_ADDR:PORT
 *             within rendezvous_timeout_ms and cannot reach it then stops
 *             the job as a failure; the first node whose job
 *             fails (non-zero exit, a signal, its agent gone) ends the job on
 *             every node: `job_stop`, SIGTERM to its process group, SIGKILL
 *             kill_grace_ms later (torchrun: RUN_TORCHRUN_REPORT_MS after the
 *             failure, so that each torchrun can name its failed workers).
 *             A job silent for stall_ms, or running past timeout_ms, or
 *             run_stop (Ctrl-C), is stopped the same way.
 *   6. orphans `run_orphans` on every node still reachable: any process of
 *             the user still holding CLUSTERDOC_RUN=<run id> (run_agent.h)
 * A node lost before the start fails the run (nothing starts). A node whose
 * command cannot be run (missing in its PATH) makes the run "could not
 * start" (exit status 2), with the other nodes stopped at once.
 */
#ifndef CD_COLLECTIVES_RUN_H
#define CD_COLLECTIVES_RUN_H

#include "cd.h"
#include "loop.h"
#include "jobs/runsync.h"
#include "jobs/jobplan.h"
#include "hostfile.h"
#include "probes/netmodel.h"
#include "sshpool.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

enum run_launcher { RUN_TORCHRUN, RUN_NONE, RUN_MPIRUN };

#define RUN_ID_LEN      (sizeof("YYYYMMDD-HHMMSS-abcd"))
#define RUN_REMOTE_ROOT "~/.cache/clusterdoc/runs"
#define RUN_TAIL_LINES  8 /* last lines kept per node for the summary */
/* torchrun: from the first node's failure to the stop of the others, in which
 * their torchruns report their own failed workers (run_cause.h) */
#define RUN_TORCHRUN_REPORT_MS 2000

struct run_opts {
	enum run_launcher launcher;
	int nproc_per_node; /* ranks per node; 0: the node's GPU count (at least 1) */
	int nproc_given;    /* --nproc-per-node on the command line (a configured one is a default:
	                       slots win) */
	const struct hostslots *slots; /* a host file's slots per host (core/hostfile.h), or
	                                  NULL: a node with slots runs that many ranks unless
	                                  --nproc-per-node was given */
	int master_port;               /* when the plan has none; default 29500 */
	const char *python;            /* torchrun: the interpreter (NULL: facts' python3) */
	const char *iface;             /* NULL: the plan's interface, else NCCL's pick, per node */
	const struct job_plan *plan;   /* the job's plan (jobs/jobplan.h: its hosts are the run's,
	                                  in order), or NULL: each node's own pick, unproved;
	                                  --iface wins */
	const char *const *argv;       /* COMMAND ARGS..., placeholders unexpanded */
	size_t argc;
	const char *const *env; /* "NAME=value" added last (--env, --env-file) */
	size_t nenv;
	const char *chdir; /* the command's directory without --sync; NULL: "~/" */
	const char
	    *remote_dir; /* the parent of the run directories on the nodes; NULL: RUN_REMOTE_ROOT */
	struct runsync_manifest *sync; /* --sync's tree, or NULL; the run adds hang-ready's
	                                  file to it; the command then runs in the run directory */
	int no_hang_ready;             /* --no-hang-ready */
	const char *run_id;            /* NULL: made at run_start (run_id_make) */
	int kill_grace_ms;             /* SIGTERM to SIGKILL; default 3000 */
	int stall_ms;                  /* no output from any node; default 0 = none */
	int timeout_ms;                /* the job once started; default 0 = none */
	int rendezvous_timeout_ms;     /* every rank joined MASTER_ADDR:PORT by then, else
	                                  the paths are tested and the job stopped
	                                  (rdzvwatch.h); default 60000, 0 = off */
	int request_timeout_ms;        /* from the pool */
	int dry_run;                   /* plan only: nothing is started */
	int hccl;                      /* --backend hccl: torch_npu on every node, or refused;
	                                  the HCCL variables in every node's environment */
	int gloo;                      /* --backend gloo: the job's collectives use Gloo
	                                  (sockets) alone, so the check's findings that concern
	                                  only NCCL's IB transport do not refuse it
	                                  (jobs/jobgate.h); the variables are the same */
};

void run_opts_init(struct run_opts *o);

struct run_line {
	int64_t wall; /* the node's clock, ms */
	char stream[4];
	char text[240];
};

struct run_node {
	const char *host;
	char ifname[NM_NAME];
	char addr[NM_ADDR];
	int proved; /* the check proved its interface variables (jobs/jobplan.h) */
	char torch_version[32];
	int gpus;
	int first_rank, nranks;
	json_t *argv;                /* the exact argv started there (plan) */
	json_t *env;                 /* the exact variables added there (plan) */
	int started, ended, stopped; /* stopped: ended after our job_stop */
	int exit_code, signal;       /* once ended; exit_code -1 when the node was lost */
	char error_code[32];         /* why it failed, or "" */
	char error[CD_ERRLEN];
	char first_error[512];                /* the earliest error line of its output */
	int64_t first_error_ms;               /* its wall clock (the node's), 0 when none */
	int worker_failed;                    /* torchrun reported a failed worker: */
	int worker_rank, worker_exit;         /* its global rank and exit code (-N: signal N) */
	int64_t start_ms, end_ms;             /* head clock */
	struct run_line tail[RUN_TAIL_LINES]; /* the last lines, oldest first from tail_next */
	size_t tail_next, tail_n;
	long long lines_dropped; /* output lines its agent dropped (a burst past the
	                          * JOB_LOG_KEEP lines it keeps before the head read) */
	json_t *orphans; /* [{"pid", "comm", "cmdline", "gpu"}] after the job; NULL: not checked */
	json_t *gpu_holders; /* [{"pid", "comm"}]: the user's processes holding a GPU then */
	long put_by;         /* the node that put the run's files for this one, -1: none */
	int files_sent;      /* the objects sent to this node (as put_by of its group) */
	long long bytes_sent;
	/* its agent stopped answering, so the head ended its job and agent
	 * through a fresh SSH session, or says why it could not
	 * (sshpool_node_ended); "" when the node needed none of that */
	char ended_by_head[CD_ERRLEN + 256];
};

struct rdzvwatch;

struct run_report {
	char run_id[RUN_ID_LEN];
	enum run_launcher launcher;
	int master_port;
	char master_addr[NM_ADDR];
	int nranks;
	struct run_node *nodes;
	size_t nnodes;
	int planned;             /* the plan is complete (dry run: all there is) */
	int failed;              /* the job did not succeed */
	int could_not_start;     /* it never ran on every node (exit status 2) */
	char failure[CD_ERRLEN]; /* what went wrong, for the summary */
	char run_dir[512];       /* on the nodes */
	char cwd[512];           /* where the command runs on the nodes */
	int synced;              /* --sync: the tree is (to be) at run_dir */
	int sync_failed;         /* --sync: a node did not get the whole tree */
	size_t sync_files;       /* the tree's files (hang-ready's included) */
	int dump_signal;         /* hang-ready's stack-dump signal, 0: off */
	char warning[CD_ERRLEN]; /* what did not stop the run ("" none): hang-ready's
	                            file not put without --sync */
	long root_cause;         /* the node that failed on its own first, or -1 (run_cause.h) */
	int interrupted;         /* run_stop */
	int exit_status;         /* 0, the root cause's code (128+signal), 2 (could not
	                            start), 130 (run_stop, no node failed first), else 1 */
	int64_t plan_ms, put_ms, start_ms, job_ms, elapsed_ms;
	/* the rendezvous watch (rdzvwatch.h), valid until run_free */
	const struct rdzvwatch *rendezvous;
};

struct run_events {
	/* a line of node i's output ("out", "err" or "log") */
	void (*line)(void *arg, size_t node, const char *stream, const char *text);
	/* count lines of node i's output were lost before the next line (its agent
	 * keeps the newest JOB_LOG_KEEP; a burst outran the polls); NULL: none */
	void (*dropped)(void *arg, size_t node, long long count);
	/* a phase began ("probe", "put", "start", "watch", "stop", "orphans") */
	void (*phase)(void *arg, const char *what);
	/* the run has ended: read run_report */
	void (*done)(void *arg);
};

struct run;

/* Start the run on hosts[0..n) of pool. ev and arg must outlive it. */
struct run *run_start(struct loop *loop, struct sshpool *pool, const char *const *hosts, size_t n,
                      const struct run_opts *o, const struct run_events *ev, void *arg);
/* Stop the job on every node now (Ctrl-C); before the start, nothing starts. */
void run_stop(struct run *r, const char *why);
const struct run_report *run_report(const struct run *r);
void run_free(struct run *r);

/* ------------------------------------------------------------ the plan (pure) */

/* A run id "YYYYMMDD-HHMMSS-xxxx" (UTC, 4 random hex digits), as fix runs are named. */
void run_id_make(char out[RUN_ID_LEN]);

/* The values a node's placeholders and variables take. */
struct run_vars {
	int node_rank, nnodes, nproc_per_node, world_size, master_port;
	const char *master_addr, *host, *iface;
	const struct job_plan *plan; /* the node's variables: job_plan_env(plan, node_rank);
	                                NULL: none set (tests of the placeholders) */
	/* every node, for --launcher mpirun's hostfile ([nnodes]; NULL: unknown):
	 * its name, its ranks and its interface */
	const char *const *hosts;
	const int *nranks;
	const char *const *ifaces;
	const char *run_dir; /* where node 0 writes the hostfile (NULL: "~/") */
};

/*
 * Replace {node_rank} {nnodes} {nproc_per_node} {world_size} {master_addr}
 * {master_port} {host} {iface} in s. "{{" and "}}" stand for a brace; a shell's
 * "${NAME...}" is passed on as it is. A new
 * string, or NULL with err naming an unknown placeholder ("unknown
 * placeholder {rank} in \"...\": known are ...") or an unclosed brace.
 */
char *run_expand(const char *s, const struct run_vars *v, char *err, size_t errlen);

/* 0 when every argument's placeholders are known; else -1 with err. */
int run_check_placeholders(const char *const *argv, size_t argc, char *err, size_t errlen);

/*
 * A --env value "NAME=value": 0, or -1 with err when NAME is not a shell
 * name or the value holds a newline or a NUL byte (len: the bytes given,
 * to see a NUL inside).
 */
int run_check_env(const char *kv, size_t len, char *err, size_t errlen);

/*
 * Node n's argv (launcher torchrun: the shared torchrun line, then the
 * command; none: the command itself; mpirun: see below) and environment
 * (interface variables, MASTER_ADDR, MASTER_PORT, NODE_RANK, NNODES,
 * NPROC_PER_NODE, WORLD_SIZE, CLUSTERDOC_RUN, PYTHONUNBUFFERED, then
 * o->env). 0, or -1 with err (a placeholder; for mpirun, nodes whose
 * interfaces differ without --iface: one environment reaches every rank).
 *
 * mpirun starts every rank itself, over node-to-node SSH (`clusterdoc
 * mpi-check`), so only node 0 runs it: `sh -c` writes the hostfile
 * (v->hosts with slots=v->nranks) to v->run_dir/hostfile and execs
 * `mpirun --hostfile FILE -np WORLD [--mca btl_tcp_if_include IFACE --mca
 * oob_tcp_if_include IFACE] -x NAME... COMMAND`, -x naming each variable
 * of the environment above except NODE_RANK (mpirun's ranks have their own,
 * OMPI_COMM_WORLD_RANK). Every other node runs `true`.
 */
int run_plan_node(const struct run_opts *o, const char *run_id, const struct run_vars *v,
                  const char *python, const char *torch_version, const char *addr, json_t **argv,
                  json_t **env, char *err, size_t errlen);

/* A node's ranks from its host file's slots= (when --nproc-per-node was not
 * given), else run_plan_nproc. */
int run_plan_host_nproc(const struct run_opts *o, const char *host, json_t *facts);

/* A node's ranks: o->nproc_per_node, or for 0 (--nproc-per-node gpu) the
 * GPUs in the node's facts ("gpus"), at least 1. */
int run_plan_nproc(const struct run_opts *o, json_t *facts);

/* The run directory on the nodes: <o->remote_dir or RUN_REMOTE_ROOT>/run_id,
 * a directory of its own for every run. */
void run_plan_dir(const struct run_opts *o, const char *run_id, char *out, size_t len);

struct hangready;
/*
 * Hang-ready's variables (hangready_build for run_dir and the node's torch
 * version) set in env, a --env PYTHONPATH of o chained after <run_dir>/hang.
 * keep: receives the hangready (its site file), else NULL (freed here). 0,
 * or -1 with err.
 */
int run_plan_hang_ready(const struct run_opts *o, const char *run_dir, const char *torch_version,
                        json_t *env, struct hangready *keep, char *err, size_t errlen);

/* ------------------------------------------------- --backend hccl (pure) */

/*
 * Why a node's facts rule out HCCL: "no NPU" (no Ascend install, or npu-smi
 * lists no device) or "no torch_npu" (facts' ascend.torch_npu is null), or
 * NULL when the node can run it. An NPU probe that failed (npus null) does
 * not refuse: torch_npu decides, and the check reports the probe.
 */
const char *run_hccl_missing(json_t *facts);

/*
 * The refusal of --backend hccl: missing[i] is run_hccl_missing of
 * hosts[i]. 0 when every entry is NULL; else 1 with out "unavailable:
 * --backend hccl needs an NPU and torch_npu on every node: no torch_npu on
 * node2; no NPU on node1, node3" (each reason once, in the order of its
 * first node).
 */
int run_hccl_refusal(const char *const *hosts, const char *const *missing, size_t n, char *out,
                     size_t len);

/* HCCL_CONNECT_TIMEOUT in seconds for nservers servers (as the check
 * suggests it: 120, plus 2 per server past 32). */
int run_hccl_connect_timeout(size_t nservers);

/* HCCL_SOCKET_IFNAME for the nodes' interfaces: their longest common
 * prefix (HCCL matches names that start with it), "" when a node has no
 * interface or nothing is common. */
void run_hccl_ifname(const char *const *ifnames, size_t n, char *out, size_t len);

/*
 * The HCCL variables of a node: HCCL_IF_IP=addr (skipped when addr is NULL
 * or ""), HCCL_SOCKET_IFNAME=ifname (skipped when ""), HCCL_CONNECT_TIMEOUT
 * for nservers. Set into env.
 */
void run_hccl_env(json_t *env, const char *addr, const char *ifname, size_t nservers);

/* The exit status of a finished run (also in run_report): see run.h's top. */
int run_exit_status(const struct run_report *rep);

#endif
