/*
 * runopt.h - the options of a job that `clusterdoc run` (cli/cmd_run.c) and
 * the TUI's run line (tui/session_run.c) both take: one table with their
 * names, values and help, and one parser with one set of bounds, so both
 * front ends accept the same values and refuse the same ones with the same
 * words. The options only the command line has (--sync, --master,
 * --dry-run...) stay in cmd_run.c.
 */
#ifndef CD_JOBS_RUNOPT_H
#define CD_JOBS_RUNOPT_H

#include "jobs/run.h"

#include <stddef.h>
#include <stdio.h>

enum runopt_id {
	RUNOPT_LAUNCHER = 1,
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

struct runopt {
	const char *name; /* without "--" */
	int takes_value;
	enum runopt_id id;
	const char *value; /* the value's name in the help ("N", "PORT"), or NULL */
	const char *help;  /* its help, lines joined by "\n" */
};

extern const struct runopt runopts[];
extern const size_t runopts_len;

/* The option named name[0..len) (without "--"), or NULL. */
const struct runopt *runopt_find(const char *name, size_t len);

/*
 * Option op's value arg into o. --env is checked (run_check_env) but not
 * stored: where its words go is the front end's. --master-port is stored in
 * o->master_port. arg lives as long as o is used (pointers are kept). 0, or
 * CD_ERR_PARSE with err saying "--NAME ..." what it wants.
 */
int runopt_apply(const struct runopt *op, const char *arg, struct run_opts *o, char *err,
                 size_t errlen);

/* The table's help, one option a line and its text aligned, as --help
 * prints options. */
void runopt_help(FILE *f);

/* "--launcher, --nproc-per-node, ...": every name, for an error. */
void runopt_names(char *out, size_t outlen);

#endif
