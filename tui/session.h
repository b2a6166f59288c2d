/* SPDX-License-Identifier: MIT */
/*
 * session.h - the work the TUI runs on the head's event loop and what it
 * has produced so far: the network check (probes/netcheck.h, then
 * diagnose), the allreduce bench (collectives/bench.h) and the job: the
 * MNIST job (jobs/mnist.h) or a `clusterdoc run` job of the user's
 * own command (jobs/run.h, session_run.c), one at a time. Each
 * task has its own SSH pool, made when it starts and freed when it is
 * re-run or the session ends, never inside one of its own callbacks.
 *
 * No curses here: the views read this state when they draw, and
 * session.changed tells the screen that something new is there. The TUI is
 * one more client of the loop: every callback returns at once.
 */
#ifndef CD_TUI_SESSION_H
#define CD_TUI_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "cd.h"
#include "collectives/bench.h"
#include "collectives/gpuburn.h"
#include "hang/hang.h"
#include "jobs/mnist.h"
#include "jobs/run.h"
#include "loop.h"
#include "probes/diagnose.h"
#include "probes/netcheck.h"
#include "probes/netmodel.h"
#include "session_fix.h"
#include "sshpool.h"

enum task_state { TASK_IDLE, TASK_RUNNING, TASK_DONE, TASK_FAILED };

/* What the Job view shows: the MNIST job (r) or a `clusterdoc run` job (R). */
enum job_kind { JOB_MNIST, JOB_RUN };

struct tui_session;

/* What differs between the job kinds on the session's side: one row per
 * enum job_kind (job_kinds[], session_run.c). */
struct job_kind_ops {
	const char *name;                                     /* "MNIST job", "run": in messages */
	int (*live)(const struct tui_session *s);             /* its job's handle exists */
	void (*stop)(struct tui_session *s, const char *why); /* stop it on every node */
	/* while it runs: the status bar's words ("run RUN: phase", "job: phase,
	 * epoch 2/3") into buf */
	void (*progress)(const struct tui_session *s, char *buf, size_t len);
};
extern const struct job_kind_ops job_kinds[];

/* The row of the session's current job kind. */
#define SESSION_JOB_KIND(s) (&job_kinds[(s)->job_kind])

/* "not run", "running", "done", "failed" */
const char *task_state_name(enum task_state s);

struct tui_session_opts {
	const struct sshpool_opts *pool; /* borrowed: how to reach the nodes */
	struct netcheck_opts check;      /* netcheck_opts_init'ed */
	int deadline_s;                  /* the check's own deadline; 0 = none */
	struct bench_opts bench;         /* bench_opts_init'ed */
	struct gpuburn_opts burn;        /* gpuburn_opts_init'ed (python: the check's) */
	struct mnist_opts mnist;         /* mnist_opts_init'ed */
	/* borrowed: how "@group" resolves in a hostlist typed in the TUI (the
	 * command line's group sources, none that runs a program: this is the
	 * loop); NULL: a group is an error */
	struct hostlist_groups *groups;
};

/* One line of a node's job output, as mnist's and run's events give it. */
struct job_line {
	size_t node;
	int rank;       /* a run's line: the rank that printed it (torchrun's "[default1]:"
	                   prefix, else the node's first rank); -1 for MNIST */
	char stream[4]; /* "out", "err", "log" */
	char *text;     /* without torchrun's prefix */
	int64_t at_ms;  /* head clock, from the job's start */
};

#define SESSION_JOB_LINES 4000 /* the oldest lines are dropped beyond */

struct tui_session {
	struct loop *loop;
	struct tui_session_opts o;
	char **hosts; /* the nodes, in hostlist order */
	size_t nhosts;
	/* Called (from the loop) whenever a task's state or results moved. */
	void (*changed)(void *arg);
	void *changed_arg;

	/* the check */
	enum task_state check_state;
	char check_error[CD_ERRLEN]; /* why it could not start */
	struct sshpool *check_pool;
	struct netcheck *nc;
	struct netmodel *m;     /* filled live while the check runs; NULL before */
	struct diagnosis *d;    /* NULL until the check is done */
	int check_deadline_hit; /* the check's deadline expired nodes */
	int check_runs;         /* how many checks were started */
	int check_reused;       /* of them, re-checks over the agents kept connected */
	int64_t check_started_ms, check_ended_ms;

	/* the bench */
	enum task_state bench_state;
	char bench_error[CD_ERRLEN];
	struct sshpool *bench_pool;
	struct bench *bench;
	int64_t bench_started_ms, bench_ended_ms;

	/* the GPU stress of the Bench view (g, session_gpuburn.c) */
	enum task_state burn_state;
	char burn_error[CD_ERRLEN];
	struct sshpool *burn_pool;
	struct gpuburn *burn;
	char burn_phase[64]; /* the flow's last phase ("connect", "stress 10 s") */
	int64_t burn_started_ms, burn_ended_ms;

	/* the job: the MNIST job, or a `clusterdoc run` job (job_kind) */
	enum job_kind job_kind;
	enum task_state job_state;
	char job_error[CD_ERRLEN];
	struct sshpool *job_pool;
	struct mnist *job;
	struct run *run;   /* JOB_RUN: the run, NULL before */
	char *run_cmdline; /* JOB_RUN: the command line as typed */
	char **run_argv;   /* its words, the run's argv (kept while the run lives) */
	size_t run_argc;
	const char **run_env; /* its --env words (in run_argv), NULL-ended */
	char job_phase[32];   /* the phase the job (mnist or run) last announced */
	long long data_got, data_total;
	struct job_line *lines; /* oldest first, at most SESSION_JOB_LINES */
	size_t nlines;
	size_t lines_dropped;
	int64_t job_started_ms, job_ended_ms;

	/* a fix from the Findings view (session_fix.h) */
	struct fixflow fix;

	/* the Hang view's live inspection (session_hang.c): rounds of the hang
	 * flow (hang/hang.h), one after the other while it is open */
	int hang_open;
	int hang_freeing;    /* its pool is being freed: a done then is ignored */
	int hang_done_early; /* the round ended inside hang_start */
	struct sshpool *hang_pool;
	struct hang *hang;
	struct hang_opts hang_o;
	char hang_run[RUN_ID_LEN];  /* the run inspected; "": any torch job */
	char hang_phase[32];        /* the round's phase ("sample 1"...) */
	char hang_error[CD_ERRLEN]; /* why a round could not start */
	json_t *hang_verdict;       /* the last round's verdict; NULL before */
	int hang_rounds;            /* rounds done since the view opened */
	int64_t hang_verdict_ms;    /* when that verdict came */
	uint64_t hang_timer;        /* the next round */
};

/* opts is copied (its pointers borrowed). No hosts yet: session_set_hosts. */
void session_init(struct tui_session *s, struct loop *loop, const struct tui_session_opts *o);
/* Stops every task (agents closed, children reaped) and frees everything. */
void session_fini(struct tui_session *s);

/*
 * Replace the node list with a hostlist expression ("node[1-4],gpu7") or
 * "^FILE". Refused (CD_ERR_REFUSED) while a task runs, or with the
 * parser's message (CD_ERR_PARSE, CD_ERR_IO), or "no nodes"
 * (CD_ERR_NOTFOUND). The previous results go.
 */
int session_set_hosts(struct tui_session *s, const char *expr, char *err, size_t errlen);

/*
 * Start (or re-run) a task. 0, CD_ERR_REFUSED when that task runs already,
 * CD_ERR_NOTFOUND when there are no nodes, CD_ERR_IO when its pool could not
 * start (the message in err and in the task's *_error).
 */
int session_check_start(struct tui_session *s, char *err, size_t errlen);
int session_bench_start(struct tui_session *s, char *err, size_t errlen);
int session_job_start(struct tui_session *s, char *err, size_t errlen);

/*
 * Start a `clusterdoc run` job on the nodes (session_run.c) from a command
 * line as typed: words split as a shell does (shellwords.h), no
 * expansion but the run's placeholders ({node_rank},
 * {master_addr}, ...). Launcher torchrun (the words are torchrun's script
 * and its arguments), or none when "none:" comes before the command, at
 * the start or after the options (the words are the command itself). Before the command, some of
 * `clusterdoc run`'s options, by the same names: --launcher torchrun|none, --nproc-per-node N|gpu,
 * --chdir DIR, --env NAME=VALUE (again for more), --kill-grace S,
 * --stall-timeout S, --job-timeout S; "--" ends them. Each node's interface is the one the check
 * proved (its diagnosis' data_iface, as `clusterdoc run` takes from its
 * check), else NCCL's pick; torchrun's interpreter is the check's
 * --python. It replaces the job shown (MNIST or an earlier
 * run). 0; CD_ERR_REFUSED while a job runs; CD_ERR_PARSE for an empty
 * line, an unclosed quote, a bad option or an unknown placeholder
 * (nothing started);
 * CD_ERR_NOTFOUND without nodes; CD_ERR_IO when its pool could not start.
 */
int session_run_start(struct tui_session *s, const char *cmdline, char *err, size_t errlen);

/* What the run line's collectives use (jobs/jobgate.h JOB_USES_*): sockets
 * alone with --backend gloo, else every transport (also for a line that
 * does not parse: session_run_start says why). */
unsigned session_run_line_uses(const char *cmdline);

/*
 * The job plan of the session's finished check of these nodes
 * (jobs/jobplan.h), for a job asked to use MASTER_PORT port (0: the one
 * the check proved) and --iface iface; NULL when no check of these nodes
 * is done. A port the check did not prove is kept, marked unproved. The
 * caller frees it; a job copies it at its start.
 */
struct job_plan *session_plan(const struct tui_session *s, int port, const char *iface);
/* Stop the running job on every node, a run (run_stop) or the MNIST job
 * (mnist_stop): CD_ERR_REFUSED when none runs. */
int session_run_stop(struct tui_session *s, char *err, size_t errlen);
/* The run's report; NULL unless the job shown is a run. */
const struct run_report *session_run_report(const struct tui_session *s);
/* For session.c: forget the run (its agents closed, so its jobs end), before
 * its pool is freed. */
void session_run_clear(struct tui_session *s);
/* For session_run.c: the job's line buffer and its reset (session.c). */
void session_job_add_line(struct tui_session *s, size_t node, int rank, const char *stream,
                          const char *text);
void session_job_clear(struct tui_session *s);
void session_changed(struct tui_session *s);

/* The nodes as one hostlist ("node[1-4]"); the caller frees it. */
char *session_hosts_folded(const struct tui_session *s);

/* Tasks running now. */
int session_busy(const struct tui_session *s);

/* Ctrl-Z (core/suspend.h): every live agent of the check, bench, job and
 * hang pools holds for hold_ms; 0: an ordinary keepalive, the TUI is back. */
void session_keepalive_hold(struct tui_session *s, int hold_ms);

/* Live stage of node i in the current check (NCS_QUEUED before any). */
enum netcheck_stage session_node_stage(const struct tui_session *s, size_t i);

/* Progress of the check: nodes past authentication, nodes probed, failed. */
struct check_progress {
	size_t nodes, connected, probed, failed;
	const char *phase; /* netcheck_phase_name, or "not run" */
};
void session_check_progress(const struct tui_session *s, struct check_progress *p);

/* Findings naming node i (0 before the diagnosis). */
size_t session_node_findings(const struct tui_session *s, size_t i);

/*
 * The GPU findings (ids "gpu-...") naming node i, worst first as diagnose
 * orders them: the first into *worst (NULL when none) and how many into the
 * return value. No diagnosis yet: 0.
 */
size_t session_node_gpu_findings(const struct tui_session *s, size_t i,
                                 const struct finding **worst);

/*
 * A fix for finding k of the diagnosis (session_fix.h). session_fix_plan
 * gathers and plans with the fixers answering it: CD_ERR_REFUSED while a
 * task runs, CD_ERR_NOTFOUND without a check or a fixer for it. Then
 * session_fix_apply applies the plan (password: for the nodes that refused
 * the head's keys, else NULL) and re-runs the check, which verifies it.
 * session_fix_close forgets the flow (refused by nothing: call it when no
 * step runs). A new check started by hand drops a plan not applied.
 */
int session_fix_plan(struct tui_session *s, size_t finding, char *err, size_t errlen);
int session_fix_apply(struct tui_session *s, const char *password, char *err, size_t errlen);
void session_fix_close(struct tui_session *s);
/* For session.c: the check ended (the fix's verification when it waits). */
void session_fix_check_done(struct tui_session *s);

/*
 * The Hang view (session_hang.c): session_hang_open starts inspecting the
 * job on the nodes, the session's `clusterdoc run` job by its id when the
 * Job view shows one, else any torch job, in rounds of HANG_ROUND_SAMPLES
 * samples, each round HANG_ROUND_PAUSE_MS after the last one's verdict,
 * until session_hang_close, which stops the round (its agents closed) and
 * forgets the verdict; closing what is closed does nothing. 0;
 * CD_ERR_NOTFOUND without nodes; CD_ERR_IO when its pool could not start
 * (also in hang_error).
 */
#define HANG_ROUND_SAMPLES  2
#define HANG_ROUND_INTERVAL 1500 /* ms between a round's samples */
#define HANG_ROUND_PAUSE_MS 2000
int session_hang_open(struct tui_session *s, char *err, size_t errlen);
void session_hang_close(struct tui_session *s);

/*
 * The Bench view's GPU stress (session_gpuburn.c): session_burn_start runs
 * `clusterdoc gpu-burn` on the nodes with o.burn, on its own pool; errors
 * as session_bench_start's. It is DONE when a GPU was measured (the
 * report's exit 0 or 1), FAILED when none was. session_burn_report: the
 * report (collectives/gpuburn.h) once done, else NULL. session_burn_shown:
 * the Bench view shows the stress rather than the bench (the one started
 * last). session_burn_clear: for session.c, stop it and forget it.
 */
int session_burn_start(struct tui_session *s, char *err, size_t errlen);
const json_t *session_burn_report(const struct tui_session *s);
int session_burn_shown(const struct tui_session *s);
void session_burn_clear(struct tui_session *s);

/* The bench's and the MNIST job's reports, NULL before they started (the
 * job's also while the job shown is a run). */
const struct bench_report *session_bench_report(const struct tui_session *s);
const struct mnist_report *session_job_report(const struct tui_session *s);

#endif
