/*
 * cmd_mpicheck.c - `clusterdoc mpi-check`: can every node log in to every
 * other by SSH without a password and with a known host key, as `mpirun`'s
 * rsh launcher needs (probes/peerssh_matrix.h)? The matrix, the reason per
 * failing pair and the findings. Exit status: 0 every pair logs in; 1 a
 * pair fails; 2 it could not be checked (a node not reached, bad options).
 */
#include "cd.h"
#include "commands.h"
#include "loop.h"
#include "probes/peerssh_matrix.h"
#include "report/peerssh_render.h"
#include "targets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	OPT_PAIR_TIMEOUT = OPT_TARGETS_END,
};

struct mpicheck_cli {
	struct targets t;
	int pair_timeout_ms;
	struct loop *loop;
};

static void usage(FILE *f, void *arg)
{
	fprintf(f,
	        "usage: clusterdoc mpi-check -w HOSTLIST [--pair-timeout S] [--json]\n\n"
	        "Node-to-node SSH, as mpirun's launcher uses it: the agent on every node runs\n"
	        "`ssh -o BatchMode=yes -o StrictHostKeyChecking=yes PEER true` as the login user\n"
	        "toward every other node, all at once, and the matrix shows which pairs log in\n"
	        "and, for those that do not, why in ssh's own words (host key unknown or\n"
	        "changed, permission denied, connection refused, timeout, no ssh client).\n"
	        "Exit status 0: every pair logs in; 1: a pair fails; 2: not checked.\n\n"
	        "      --pair-timeout S    seconds for one login (default 10, 1 to 120)\n%s",
	        targets_help);
}

static int parse_option(void *ctx, int opt, const char *arg)
{
	struct mpicheck_cli *c = ctx;
	int s;

	if (opt != OPT_PAIR_TIMEOUT)
		return -2;
	if (cli_parse_int("mpi-check", "--pair-timeout", arg, 1, 120, &s) < 0)
		return -1;
	c->pair_timeout_ms = s * 1000;
	return 0;
}

static int parse_options(struct mpicheck_cli *c, int argc, char **argv)
{
	static const struct option longopts[] = {
	    TARGETS_LONGOPTS,
	    {"pair-timeout", required_argument, NULL, OPT_PAIR_TIMEOUT},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	static const struct targets_cmd cmd = {
	    .name = "mpi-check",
	    .shortopts = TARGETS_SHORTOPTS "h",
	    .usage = usage,
	    .own = parse_option,
	};
	struct optset set;
	int p;

	optset_init(&set);
	optset_add(&set, longopts);
	p = targets_getopt(&cmd, &set, &c->t, c, argc, argv);
	if (p != 0)
		return p;
	return targets_finish(&c->t, "mpi-check") < 0 ? -1 : 0;
}

static void on_done(void *arg)
{
	loop_stop(((struct mpicheck_cli *)arg)->loop);
}

int cmd_mpicheck(int argc, char **argv)
{
	struct mpicheck_cli c = {.pair_timeout_ms = PEERSSH_TIMEOUT_MS};
	struct sshpool *pool = NULL;
	struct peerssh_run *r = NULL;
	const struct peerssh_matrix *m;
	char err[CD_ERRLEN];
	int rc = 2, p;

	targets_init(&c.t);
	p = parse_options(&c, argc, argv);
	if (p != 0) {
		rc = p > 0 ? 0 : 2;
		goto out;
	}
	c.loop = loop_new();
	pool = sshpool_new(c.loop, &c.t.pool, err, sizeof(err));
	if (!pool) {
		fprintf(stderr, "clusterdoc mpi-check: %s\n", err);
		goto out;
	}
	r = peerssh_run_start(c.loop, pool, (const char *const *)c.t.hosts->names,
	                      hostlist_count(c.t.hosts), c.pair_timeout_ms, on_done, &c);
	loop_run(c.loop);
	m = peerssh_run_matrix(r);
	rc = peerssh_exit_status(m);
	if (c.t.json)
		peerssh_print_json(m, rc, stdout);
	else
		peerssh_print_text(m, stdout);
out:
	sshpool_free(pool); /* first: it fails what is pending, into the run's callbacks */
	peerssh_run_free(r);
	loop_free(c.loop);
	targets_fini(&c.t);
	return rc;
}
