/*
 * cmd_mpicheck.c - `clusterdoc mpi-check`: can every node log in to every
 * other by SSH without a password and with a known host key, as `mpirun`'s
 * rsh launcher needs (probes/peerssh_matrix.h)? The matrix, the reason per
 * failing pair and the findings. Exit status: 0 every pair logs in; 1 a
 * pair fails; 2 it could not be checked (a node not reached, bad options).
 *
 * --fix: the peer-ssh fixer's plan (fixers/fix_peerssh.h) after the check,
 * a dry run; --fix --apply makes the cluster key (once) and applies it,
 * journalled (`clusterdoc fix --undo RUN`). Exit status then: 0 nothing to
 * do / everything applied, 1 changes planned / a change failed, 2 not done.
 * The phases run one after the other from the loop: check, key, gather,
 * plan, apply.
 */
#include "cd.h"
#include "childrun.h"
#include "commands.h"
#include "fixers/fix_journal.h"
#include "fixers/fix_peerssh.h"
#include "fixers/fix_run.h"
#include "fixers/fix_sshkey.h"
#include "fsutil.h"
#include "loop.h"
#include "probes/peerssh_matrix.h"
#include "report/peerssh_render.h"
#include "scan.h"
#include "targets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum {
	OPT_PAIR_TIMEOUT = OPT_TARGETS_END,
	OPT_FIX,
	OPT_APPLY,
};

struct mpicheck_cli {
	struct targets t;
	int pair_timeout_ms;
	int fix, apply;
	struct loop *loop;
	int stage_rc; /* a phase of --fix that failed: 2 */
	char stage_err[CD_ERRLEN];
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
	        "      --pair-timeout S    seconds for one login (default 10, 1 to 120)\n"
	        "      --fix               after the check, what the peer-ssh fixer would change\n"
	        "                          (a dry run): one cluster key, authorized_keys,\n"
	        "                          ~/.ssh/config and known_hosts blocks on every node\n"
	        "      --apply             with --fix: make the changes (undo: clusterdoc fix\n"
	        "                          --undo RUN)\n%s",
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
	    {"fix", no_argument, NULL, OPT_FIX},
	    {"apply", no_argument, NULL, OPT_APPLY},
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
	if (c->apply && !c->fix) {
		fprintf(stderr, "clusterdoc mpi-check: --apply goes with --fix\n");
		return -1;
	}
	return targets_finish(&c->t, "mpi-check") < 0 ? -1 : 0;
}

static void on_done(void *arg)
{
	loop_stop(((struct mpicheck_cli *)arg)->loop);
}

/* ---------------------------------------------------------------- --fix */

struct fixer_run {
	struct mpicheck_cli *c;
	const char *const *hosts;
	size_t n;
	char **hostkeys; /* [n] */
	struct head_key key;
	char *priv;
	size_t privlen;
	struct sshpool *pool;
	struct fix_run *fs;
	struct fix_node_state *states;
	int *skip;
	struct fix_plan *plan;
	struct fix_journal *j;
	struct fix_result **results;
	char journal_err[CD_ERRLEN];
};

/* Node i's host key as the check's login verified it: the line of the
 * head's known_hosts with the fingerprint the node offered. */
static void find_hostkeys(struct fixer_run *x, const struct peerssh_run *r)
{
	const char *home = getenv("HOME");
	char user_kh[PATH_MAX];
	const char *files[] = {user_kh, "/etc/ssh/ssh_known_hosts"};

	snprintf(user_kh, sizeof(user_kh), "%s/.ssh/known_hosts", home ? home : "");
	x->hostkeys = cd_calloc(x->n ? x->n : 1, sizeof(*x->hostkeys));
	for (size_t i = 0; i < x->n; i++) {
		struct sshpool_node *pn = peerssh_run_node(r, i);
		const char *type = NULL, *fp = pn ? sshpool_node_hostkey_fp(pn, &type) : NULL;

		if (fp && *fp)
			x->hostkeys[i] = fix_peerssh_hostkey(files, 2, x->hosts[i], fp);
	}
}

static void on_keygen(const struct childrun_result *res, void *arg)
{
	struct fixer_run *x = arg;
	char err[CD_ERRLEN];

	if (res->rc < 0)
		cd_errf(x->c->stage_err, sizeof(x->c->stage_err), CD_ERR_IO, "%s", res->error);
	else if (head_key_created(&x->key, res->status, res->err ? res->err->data : "", err,
	                          sizeof(err)) < 0)
		snprintf(x->c->stage_err, sizeof(x->c->stage_err), "%s", err);
	loop_stop(x->c->loop);
}

/* The cluster key: found, or (with --apply) made once by ssh-keygen as a
 * child of the loop. 0, or -1 with stage_err. */
static int cluster_key(struct fixer_run *x)
{
	struct mpicheck_cli *c = x->c;
	char path[PATH_MAX], *argv[HEAD_KEY_ARGV], *files[1] = {path}, err[CD_ERRLEN];
	struct childrun *child;

	if (fix_peerssh_key_path(path, sizeof(path), c->stage_err, sizeof(c->stage_err)) < 0 ||
	    head_key_find(files, 1, NULL, &x->key, c->stage_err, sizeof(c->stage_err)) < 0)
		return -1;
	if (!x->key.exists && c->apply) {
		if (cd_mkdir_parent(x->key.path, c->stage_err, sizeof(c->stage_err)) < 0 ||
		    head_key_create_argv(&x->key, "clusterdoc-mpi", argv, c->stage_err,
		                         sizeof(c->stage_err)) < 0)
			return -1;
		child = childrun_start(c->loop, argv, HEAD_KEY_TIMEOUT_MS, 4096, 4096, on_keygen, x,
		                       err, sizeof(err));
		if (!child) {
			snprintf(c->stage_err, sizeof(c->stage_err), "%s", err);
			return -1;
		}
		loop_run(c->loop);
		if (c->stage_err[0])
			return -1;
	}
	if (x->key.exists &&
	    scan_read_file(x->key.path, FIX_PEERSSH_KEY_MAX, SCAN_FILE_REGULAR, &x->priv,
	                   &x->privlen, c->stage_err, sizeof(c->stage_err)) < 0)
		return -1;
	return 0;
}

static void on_phase_done(void *arg)
{
	loop_stop(((struct fixer_run *)arg)->c->loop);
}

/* Gather, plan and (with --apply) apply. Returns the exit status. */
static int run_fixer(struct fixer_run *x)
{
	struct mpicheck_cli *c = x->c;
	struct fix_peerssh_input in = {.hosts = x->hosts, .n = x->n, .hostkeys = x->hostkeys};
	char run[40];
	size_t failed = 0;

	if (cluster_key(x) < 0)
		return 2;
	x->pool = sshpool_new(c->loop, &c->t.pool, c->stage_err, sizeof(c->stage_err));
	if (!x->pool)
		return 2;
	x->fs = fix_run_new(c->loop, x->pool, x->hosts, x->n);
	x->states = cd_calloc(x->n ? x->n : 1, sizeof(*x->states));
	x->skip = cd_calloc(x->n ? x->n : 1, sizeof(*x->skip));
	for (size_t i = 0; i < x->n; i++)
		fix_node_state_init(&x->states[i]);
	fix_run_gather_extra(x->fs, fix_peerssh_paths, fix_peerssh_npaths);
	fix_run_gather(x->fs, x->states, x->skip, NULL, on_phase_done, x);
	loop_run(c->loop);

	fix_run_id(run, sizeof(run));
	in.publine = x->key.exists ? x->key.publine : NULL;
	in.privkey = x->priv;
	in.privlen = x->privlen;
	in.states = x->states;
	x->plan = fix_peerssh_plan(&in, run);
	if (!c->apply || !x->plan->nactions)
		return x->plan->nactions ? 1 : 0;

	x->j = fix_journal_new(run, x->hosts, x->n);
	x->results = cd_calloc(x->n ? x->n : 1, sizeof(*x->results));
	for (size_t i = 0; i < x->n; i++)
		x->results[i] = cd_calloc(x->plan->nodes[i].nactions + 1, sizeof(**x->results));
	fix_run_apply(x->fs, x->plan, x->j, x->results, x->journal_err, sizeof(x->journal_err),
	              on_phase_done, x);
	loop_run(c->loop);
	fix_journal_compact(x->j);
	if (!x->journal_err[0])
		fix_journal_save(x->j, x->journal_err, sizeof(x->journal_err));
	for (size_t i = 0; i < x->n; i++)
		for (size_t k = 0; k < x->plan->nodes[i].nactions; k++)
			failed += x->results[i][k].status == FIX_FAILED ||
			          x->results[i][k].status == FIX_SKIPPED;
	return failed || x->journal_err[0] ? 1 : 0;
}

static void fixer_run_fini(struct fixer_run *x)
{
	fix_run_free(x->fs);
	sshpool_free(x->pool);
	for (size_t i = 0; i < x->n; i++) {
		if (x->hostkeys)
			free(x->hostkeys[i]);
		if (x->states)
			fix_node_state_fini(&x->states[i]);
		if (x->results)
			free(x->results[i]);
	}
	free(x->hostkeys);
	free(x->states);
	free(x->skip);
	free(x->results);
	fix_plan_free(x->plan);
	fix_journal_free(x->j);
	head_key_fini(&x->key);
	if (x->priv) {
		/* the private key leaves no copy in freed memory */
		explicit_bzero(x->priv, x->privlen);
		free(x->priv);
	}
}

int cmd_mpicheck(int argc, char **argv)
{
	struct mpicheck_cli c = {.pair_timeout_ms = PEERSSH_TIMEOUT_MS};
	struct sshpool *pool = NULL;
	struct peerssh_run *r = NULL;
	struct fixer_run x = {.c = &c};
	const struct peerssh_matrix *m;
	json_t *fixj = NULL;
	char err[CD_ERRLEN];
	int rc = 2, p, frc = 0;

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
	if (c.fix) {
		x.hosts = (const char *const *)c.t.hosts->names;
		x.n = hostlist_count(c.t.hosts);
		find_hostkeys(&x, r);
		frc = run_fixer(&x);
		/* with --fix the exit status is the fixer's */
		rc = frc;
		if (x.plan)
			fixj = peerssh_fix_json(x.plan, x.hosts, c.apply ? x.results : NULL,
			                        x.journal_err);
	}
	if (c.t.json) {
		peerssh_print_json(m, rc, fixj, stdout);
	} else {
		peerssh_print_text(m, stdout);
		json_decref(fixj);
		if (x.plan)
			peerssh_print_fix_text(x.plan, x.hosts, c.apply ? x.results : NULL,
			                       x.journal_err, stdout);
	}
	if (c.fix && c.stage_err[0])
		fprintf(stderr, "clusterdoc mpi-check: peer-ssh: %s\n", c.stage_err);
out:
	sshpool_free(pool); /* first: it fails what is pending, into the run's callbacks */
	peerssh_run_free(r);
	fixer_run_fini(&x);
	loop_free(c.loop);
	targets_fini(&c.t);
	return rc;
}
