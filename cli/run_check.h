/*
 * run_check.h - the first phase of `clusterdoc run` (cli/cmd_run.c): a
 * fresh `check` of the nodes (check_once.h), refusing the run on its error
 * findings unless forced, saved on the head per node list
 * ($XDG_STATE_HOME or ~/.local/state: clusterdoc/runs/check-<hash>.json);
 * or, with no_check, that saved check, saying its age. The CLI does it
 * before run_start: check_once runs a loop of its own.
 */
#ifndef CD_CLI_RUN_CHECK_H
#define CD_CLI_RUN_CHECK_H

#include "sshpool.h"

#include <jansson.h>
#include <stddef.h>

struct run_check {
	/* in */
	const struct sshpool_opts *pool;
	const char *const *hosts;
	size_t n;
	int master_port;
	int no_check, force;
	/* out (run_check_fini frees them) */
	char **ifaces;  /* [n]: each node's proved interface, "" when none */
	json_t *record; /* {"version", "time", "errors": [{"id", "message"}], "ifaces"} */
};

/* 0 to go on, or -1 after printing why not (the check's errors, no saved
 * check, the pool could not start). */
int run_check_gate(struct run_check *c);
void run_check_fini(struct run_check *c);

#endif
