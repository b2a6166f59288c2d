/* SPDX-License-Identifier: MIT */
/*
 * cmd_mpicheck.c - `clusterdoc mpi-check`: can every node log in to every
 * other by SSH without a password and with a known host key, as `mpirun`'s
 * rsh launcher needs (probes/peerssh_matrix.h)? The matrix, the reason per
 * failing pair and the findings. Exit status: 0 every pair logs in; 1 a
 * pair fails; 2 it could not be checked (a node not reached, bad options).
 *
 * --fix: the peer-ssh fixer's plan (fixers/fix_peerssh.h) after the check,
 * a dry run; --fix --apply makes the cluster key (once) and applies it,
 * journalled (`clusterdoc fix --undo RUN`), after asking on the terminal as
 * `fix --apply` does (--yes: without asking; no terminal and no --yes is a
 * refusal before anything starts). Exit status then: 0 nothing to do /
 * everything applied, 1 changes planned / a change failed, 2 not done.
 * The phases (check, key, gather, plan, apply) are fixers/fix_peerssh_flow.h's,
 * one after the other from the loop; this file parses, starts it and renders.
 */
#include "cd.h"
#include "termtext.h"
#include "command.h"
#include "commands.h"
#include "fixers/fix_peerssh_flow.h"
#include "loop.h"
#include "probes/peerssh_matrix.h"
#include "report/peerssh_render.h"
#include "targets.h"

#include <stddef.h>
#include <stdio.h>
#include <unistd.h>

/* How long the agents hold on while the question waits (as `fix`'s). */
#define QUESTION_HOLD_MS (15 * 60 * 1000)

enum {
	OPT_PAIR_TIMEOUT = OPT_TARGETS_END,
	OPT_FIX,
	OPT_APPLY,
};

struct mpicheck_cli {
	struct targets t;
	int pair_timeout_ms;
	int fix, apply, yes;
	struct loop *loop;
};

static const struct optdef own_defs[] = {
    {"pair-timeout", required_argument, OPT_PAIR_TIMEOUT, "--pair-timeout",
     "      --pair-timeout S    seconds for one login (default 10, 1 to 120)\n"},
    {"fix", no_argument, OPT_FIX, "--fix",
     "      --fix               after the check, what the peer-ssh fixer would change\n"
     "                          (a dry run): one cluster key, authorized_keys,\n"
     "                          ~/.ssh/config and known_hosts blocks on every node\n"},
    {"apply", no_argument, OPT_APPLY, "--apply",
     "      --apply             with --fix: make the changes, after asking (undo:\n"
     "                          clusterdoc fix --undo RUN)\n"},
    {"yes", no_argument, 'y', "--yes", "  -y, --yes               with --apply: do not ask\n"},
};

static int parse_own(void *ctx, int opt, const char *arg, const char *shown, char *err,
                     size_t errlen)
{
	struct mpicheck_cli *c = ctx;
	int s;

	switch (opt) {
	case OPT_FIX:
	case OPT_APPLY:
		*(opt == OPT_FIX ? &c->fix : &c->apply) = 1;
		return 0;
	case 'y':
		c->yes = 1;
		return 0;
	case OPT_PAIR_TIMEOUT:
		if (opt_int(shown, arg, 1, 120, &s, err, errlen) < 0)
			return CD_ERR_PARSE;
		c->pair_timeout_ms = s * 1000;
		return 0;
	}
	return cd_errf(err, errlen, CD_ERR_PARSE, "%s is not an option of mpi-check", shown);
}

static int finish_own(void *ctx, const struct optset *s, char *err, size_t errlen)
{
	const struct mpicheck_cli *c = ctx;

	(void)s;
	if (c->apply && !c->fix)
		return cd_errf(err, errlen, CD_ERR_PARSE, "--apply goes with --fix");
	if (c->yes && !c->apply)
		return cd_errf(err, errlen, CD_ERR_PARSE, "--yes goes with --fix --apply");
	/* refused before anything is checked, as `fix --apply` refuses */
	if (c->apply && !c->yes && !isatty(STDIN_FILENO))
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "--apply asks before changing anything and there is no terminal to "
		               "ask on: add --yes");
	return 0;
}

static const struct optgroup own_group = {.defs = own_defs,
                                          .ndefs = CD_ARRAY_LEN(own_defs),
                                          .parse = parse_own,
                                          .finish = finish_own,
                                          .cmdline_only =
                                              (const int[]){OPT_FIX, OPT_APPLY, 'y', 0}};

static const struct command_opts opts[] = {
    {.g = &own_group},
    {0},
};

const struct command command_mpicheck = {
    .name = "mpi-check",
    .summary = "node-to-node SSH as mpirun needs it: who logs in to whom, and why not",
    .usage = "usage: clusterdoc mpi-check -w HOSTLIST [--pair-timeout S] [--fix [--apply "
             "[--yes]]] [--json]\n\n"
             "Node-to-node SSH, as mpirun's launcher uses it: the agent on every node runs\n"
             "`ssh -o BatchMode=yes -o StrictHostKeyChecking=yes PEER true` as the login user\n"
             "toward every other node, all at once, and the matrix shows which pairs log in\n"
             "and, for those that do not, why in ssh's own words (host key unknown or\n"
             "changed, permission denied, connection refused, timeout, no ssh client).\n"
             "Exit status 0: every pair logs in; 1: a pair fails; 2: not checked.\n\n",
    .shortopts = "y",
    .nodes = COMMAND_NODES,
    .targets = offsetof(struct mpicheck_cli, t),
    .opts = opts,
    .run = cmd_mpicheck,
};

/* Pairs need two distinct nodes; the matrix is bounded. 0, or -1 said. */
static int check_size(const struct hostlist *hl)
{
	size_t n = hostlist_count(hl);

	if (n < 2) {
		termtext_printf(
		    stderr,
		    "clusterdoc mpi-check: node-to-node SSH needs at least two distinct "
		    "nodes, not %zu%s%s\n",
		    n, n ? ": " : "", n ? hl->names[0] : "");
		return -1;
	}
	if (n > PEERSSH_MATRIX_MAX_NODES) {
		termtext_printf(
		    stderr,
		    "clusterdoc mpi-check: %zu nodes: at most %d at once (every node logs "
		    "in to every other); check a part of them with -w\n",
		    n, PEERSSH_MATRIX_MAX_NODES);
		return -1;
	}
	return 0;
}

/* The plan waits: show it (text), hold the agents, ask on the terminal.
 * 1 for yes. */
static int ask(struct mpicheck_cli *c, struct fix_peerssh_flow *flow)
{
	const struct fix_peerssh_flow_report *r = fix_peerssh_flow_report(flow);
	const char *const *hosts = (const char *const *)c->t.hosts->names;
	size_t nodes = 0;
	char line[16];

	if (!c->t.json) {
		peerssh_print_text(r->m, stdout);
		peerssh_print_fix_text(r->plan, hosts, NULL, "", 1, stdout);
	}
	fflush(stdout);
	for (size_t i = 0; i < r->plan->nnodes; i++)
		nodes += r->plan->nodes[i].nactions > 0;
	fix_peerssh_flow_hold(flow, QUESTION_HOLD_MS);
	for (int k = 0; k < 3; k++)
		loop_run_once(c->loop, 0);
	termtext_printf(stderr, "\nApply %zu change%s on %zu node%s? [y/N] ", r->plan->nactions,
	                r->plan->nactions == 1 ? "" : "s", nodes, nodes == 1 ? "" : "s");
	if (!fgets(line, sizeof(line), stdin))
		return 0;
	return line[0] == 'y' || line[0] == 'Y';
}

static void on_done(void *arg)
{
	loop_stop(((struct mpicheck_cli *)arg)->loop);
}

int cmd_mpicheck(int argc, char **argv)
{
	struct mpicheck_cli c = {.pair_timeout_ms = PEERSSH_TIMEOUT_MS};
	struct fix_peerssh_flow *flow = NULL;
	const struct fix_peerssh_flow_report *r;
	const char *const *hosts;
	json_t *fixj = NULL;
	char err[CD_ERRLEN];
	int rc = 2, p, asked = 0;

	targets_init(&c.t);
	p = command_parse(&command_mpicheck, &c, argc, argv, NULL);
	if (p == 0 && check_size(c.t.hosts) < 0)
		p = -1;
	if (p != 0) {
		rc = p > 0 ? 0 : 2;
		goto out;
	}
	hosts = (const char *const *)c.t.hosts->names;
	c.loop = loop_new();
	flow = fix_peerssh_flow_start(c.loop,
	                              &(struct fix_peerssh_flow_opts){
	                                  .pool = &c.t.pool,
	                                  .hosts = hosts,
	                                  .n = hostlist_count(c.t.hosts),
	                                  .pair_timeout_ms = c.pair_timeout_ms,
	                                  .fix = c.fix,
	                                  .apply = c.apply,
	                                  .ask = c.apply && !c.yes,
	                              },
	                              on_done, &c, err, sizeof(err));
	if (!flow) {
		termtext_printf(stderr, "clusterdoc mpi-check: %s\n", err);
		goto out;
	}
	loop_run(c.loop);
	r = fix_peerssh_flow_report(flow);
	if (r->asking) {
		asked = 1;
		if (!ask(&c, flow)) {
			fprintf(stderr, "clusterdoc mpi-check: nothing was changed\n");
			goto out;
		}
		fix_peerssh_flow_answer(flow, 1);
		loop_run(c.loop);
	}
	/* with --fix the exit status is the fixer's */
	rc = c.fix ? r->exit_status : peerssh_exit_status(r->m);
	if (r->plan)
		fixj =
		    peerssh_fix_json(r->plan, hosts, c.apply ? r->results : NULL, r->journal_err);
	if (c.t.json) {
		peerssh_print_json(r->m, rc, fixj, stdout);
	} else {
		if (!asked) /* else shown before the question */
			peerssh_print_text(r->m, stdout);
		json_decref(fixj);
		if (r->plan)
			peerssh_print_fix_text(r->plan, hosts, c.apply ? r->results : NULL,
			                       r->journal_err, 0, stdout);
	}
	if (c.fix && r->error[0])
		termtext_printf(stderr, "clusterdoc mpi-check: peer-ssh: %s\n", r->error);
out:
	fix_peerssh_flow_free(flow);
	loop_free(c.loop);
	targets_fini(&c.t);
	return rc;
}
