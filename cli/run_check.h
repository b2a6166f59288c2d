/* SPDX-License-Identifier: MIT */
/*
 * run_check.h - the first phase of `clusterdoc run` and `clusterdoc mnist`
 * (cli/cmd_run.c, cli/cmd_mnist.c): a fresh `check` of the nodes
 * (check_once.h) made into the job's plan (jobs/jobplan.h), saved on the
 * head per node list ($XDG_STATE_HOME or ~/.local/state:
 * clusterdoc/runs/check-<hash>.json); or, with no_check, that saved plan,
 * saying its age, refused when it was made by another version or for
 * other nodes, master, --master-port or --iface. Then the gate
 * (jobs/jobgate.h): the job is refused on the error findings its plan does
 * not avoid and that concern its transports (uses), unless forced; an explicit --master-port the
 * check found blocked is named with the port it proved; an --env that overrides a planned variable
 * is refused unless forced. The CLI does it before run_start / mnist_start: check_once runs a loop
 * of its own.
 */
#ifndef CD_CLI_RUN_CHECK_H
#define CD_CLI_RUN_CHECK_H

#include "jobs/jobplan.h"
#include "optgroup.h"
#include "sshpool.h"

#include <jansson.h>
#include <stddef.h>

struct run_check {
	/* in */
	const char *cmd; /* "run" or "mnist", for messages */
	const struct sshpool_opts *pool;
	const char *const *hosts; /* the master first */
	size_t n;
	int master_port;        /* --master-port, 0: none given */
	const char *iface;      /* --iface, or NULL */
	const char *const *env; /* --env "NAME=value" */
	size_t nenv;
	int no_check, force;
	int dry_run; /* run --dry-run: a refused plan is still shown (refused set) */
	/* what the job's collectives use (jobs/jobgate.h JOB_USES_*): a finding
	 * of a transport it does not use is shown, not refused; 0: every one */
	unsigned uses;
	int expect_gpus; /* --expect-gpus N for the check (gpu-missing); 0: not said */
	/* out (run_check_fini frees it) */
	struct job_plan *plan;
	int refused; /* dry_run: a run would have been refused (the exit status is 2) */
};

/* The options of the check group (cli/optgroups.h, checkopt_group) that
 * run and mnist take for their check, in their words: --expect-gpus. */
extern const struct optuse run_check_uses[];

/* 0 to go on, or -1 after printing why not (the check's errors, no saved
 * check, the pool could not start, a bad [expect] line). The fresh check
 * reads the configuration's [expect] as `clusterdoc check` does. */
int run_check_gate(struct run_check *c);
void run_check_fini(struct run_check *c);

/* Save p as the plan of hosts[0..n) (the master first) for `--no-check`,
 * silently: `check` and `env` save theirs, and a home that takes no state
 * must not make them fail or talk. */
void run_check_save(const struct job_plan *p, const char *const *hosts, size_t n);

/*
 * The saved plan of exactly hosts[0..n) when there is one that this
 * version reads and that was made without --master-port and --iface, else
 * NULL, silently: what `bench` measures on when a check was made. *age_s
 * gets its age. The caller frees it.
 */
struct job_plan *run_check_saved(const char *const *hosts, size_t n, long long *age_s);

/*
 * The nodes with the master first (--master NODE; NULL: names as given):
 * *out a new array of the borrowed names (the caller frees it). 0, or -1
 * with err when master is not one of the nodes.
 */
int run_check_order(const char *const *names, size_t n, const char *master, const char ***out,
                    char *err, size_t errlen);

#endif
