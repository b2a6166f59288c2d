/* SPDX-License-Identifier: MIT */
/*
 * runopt.h - the options of a job that `clusterdoc run` (cli/cmd_run.c) and
 * the TUI's run line (tui/session_run.c) both take, as one option group
 * (core/optgroup.h): their names, values, help and bounds are defined once
 * and both front ends read them through optset_getopt, so they accept the
 * same values and refuse the same ones with the same words. The options
 * only the command line has (--sync, --master, --dry-run...) are its own.
 */
#ifndef CD_JOBS_RUNOPT_H
#define CD_JOBS_RUNOPT_H

#include "jobs/run.h"
#include "optgroup.h"

#include <stddef.h>

enum runopt_id {
	RUNOPT_LAUNCHER = 1500,
	RUNOPT_NPROC,
	RUNOPT_MASTER_PORT,
	RUNOPT_PYTHON,
	RUNOPT_IFACE,
	RUNOPT_BACKEND,
	RUNOPT_ENV,
	RUNOPT_CHDIR,
	RUNOPT_REMOTE_DIR,
	RUNOPT_NO_HANG_READY,
	RUNOPT_KILL_GRACE,
	RUNOPT_STALL,
	RUNOPT_JOB_TIMEOUT,
	RUNOPT_RDZV_TIMEOUT,
};

/* Where the group's values go. Values are kept by pointer: the words
 * parsed must outlive o. */
struct runopt_dst {
	struct run_opts *o;
	/* --launcher ssh, srun or local-connect: how the agents start (the
	 * command line's, enum launcher), or NULL: only the job's launchers are
	 * taken (the TUI's agents are already running). */
	int *agent_launcher;
	int master_port_given; /* set to 1 by --master-port */
	/* Each --env NAME=VALUE, checked (run_check_env), in order: 0, or < 0
	 * with err ("more than N --env variables"). */
	int (*env)(void *arg, const char *kv, char *err, size_t errlen);
	void *env_arg;
};

/* dst: struct runopt_dst. */
extern const struct optgroup runopt_group;

/* "--launcher, --nproc-per-node, ...": every name, for a hint. */
void runopt_names(char *out, size_t outlen);

#endif
