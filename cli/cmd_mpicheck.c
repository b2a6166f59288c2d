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
#include "commands.h"
#include "fixers/fix_peerssh_flow.h"
#include "loop.h"
#include "probes/peerssh_matrix.h"
#include "report/peerssh_render.h"
#include "targets.h"

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

static void usage(FILE *f, void *arg)
{
	fprintf(f,
	        "usage: clusterdoc mpi-check -w HOSTLIST [--pair-timeout S] [--fix [--apply "
	        "[--yes]]] [--json]\n\n"
	        "Node-to-node SSH, as mpirun's launcher uses it: the agent on every node runs\n"
	        "`ssh -o BatchMode=yes -o StrictHostKeyChecking=yes PEER true` as the login user\n"
	        "toward every other node, all at once, and the matrix shows which pairs log in\n"
	        "and, for those that do not, why in ssh's own words (host key unknown or\n"
	        "changed, permission denied, connection refused, timeout, no ssh client).\n"
	        "Exit status 0: every pair logs in; 1: a pair fails; 2: not checked.\n\n"
	        "      --pair-timeout S    seconds for one login (default 10, 1 to 120)\n"
	        "      --fix               after the check, what the peer-ssh fixer would change\n"
	        "                          (a dry run): one cluster key, authorized_keys,\n"
	        "                          ~/.ssh/config and known_hosts blocks on every node\n"
	        "      --apply             with --fix: make the changes, after asking (undo:\n"
	        "                          clusterdoc fix --undo RUN)\n"
	        "  -y, --yes               with --apply: do not ask\n%s",
	        targets_help);
}

static int parse_option(void *ctx, int opt, const char *arg)
{
	struct mpicheck_cli *c = ctx;
	int s;

	if (opt == OPT_FIX || opt == OPT_APPLY) {
		*(opt == OPT_FIX ? &c->fix : &c->apply) = 1;
		return 0;
	}
	if (opt == 'y') {
		c->yes = 1;
		return 0;
	}
	if (opt != OPT_PAIR_TIMEOUT)
		return -2;
	if (cli_parse_int("mpi-check", "--pair-timeout", arg, 1, 120, &s) < 0)
		return -1;
	c->pair_timeout_ms = s * 1000;
	return 0;
}

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

static int parse_options(struct mpicheck_cli *c, int argc, char **argv)
{
	static const struct option longopts[] = {
	    TARGETS_LONGOPTS,
	    {"pair-timeout", required_argument, NULL, OPT_PAIR_TIMEOUT},
	    {"fix", no_argument, NULL, OPT_FIX},
	    {"apply", no_argument, NULL, OPT_APPLY},
	    {"yes", no_argument, NULL, 'y'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	static const struct targets_cmd cmd = {
	    .name = "mpi-check",
	    .shortopts = TARGETS_SHORTOPTS "hy",
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
	if (c->apply && !c->fix) {
		fprintf(stderr, "clusterdoc mpi-check: --apply goes with --fix\n");
		return -1;
	}
	if (c->yes && !c->apply) {
		fprintf(stderr, "clusterdoc mpi-check: --yes goes with --fix --apply\n");
		return -1;
	}
	/* refused before anything is checked, as `fix --apply` refuses */
	if (c->apply && !c->yes && !isatty(STDIN_FILENO)) {
		fprintf(stderr, "clusterdoc mpi-check: --apply asks before changing anything and "
		                "there is no terminal to ask on: add --yes\n");
		return -1;
	}
	if (targets_finish(&c->t, "mpi-check") < 0)
		return -1;
	return check_size(c->t.hosts);
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
	p = parse_options(&c, argc, argv);
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
