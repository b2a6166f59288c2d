/* SPDX-License-Identifier: MIT */
/*
 * fix_peerssh_flow.c - check, key, gather, plan and apply of `clusterdoc
 * mpi-check --fix`, one phase after the other from the loop's callbacks
 * (fix_peerssh_flow.h). The front end hears only of the end, from the
 * flow's own 0 ms timer.
 */
#include "fix_peerssh_flow.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "childrun.h"
#include "fix_journal.h"
#include "fix_peerssh.h"
#include "fix_sshkey.h"
#include "fsutil.h"
#include "scan.h"

struct fix_peerssh_flow {
	struct fix_peerssh_flow_report r;
	struct loop *loop;
	struct fix_peerssh_flow_opts o;
	void (*done)(void *arg);
	void *arg;
	uint64_t timer; /* the pending call of done */

	/* check */
	struct sshpool *check_pool;
	struct peerssh_run *check;
	/* key */
	char **hostkeys; /* [n] */
	struct head_key key;
	struct childrun *keygen;
	char *priv;
	size_t privlen;
	/* gather, plan, apply */
	struct sshpool *pool;
	struct fix_run *fs;
	struct fix_node_state *states;
	int *skip;
	struct fix_journal *j;
	char run[40];
};

static void on_done_timer(struct loop *loop, void *arg)
{
	struct fix_peerssh_flow *f = arg;

	f->timer = 0;
	f->done(f->arg);
}

/* The flow has ended with exit status rc: done on the loop's next turn. */
static void finish(struct fix_peerssh_flow *f, int rc)
{
	f->r.exit_status = rc;
	f->r.done = 1;
	if (!f->timer)
		f->timer = loop_timer_add(f->loop, 0, on_done_timer, f);
}

/* ---------------------------------------------------------------- apply */

static void on_applied(void *arg)
{
	struct fix_peerssh_flow *f = arg;
	size_t failed = 0;

	fix_journal_compact(f->j);
	if (!f->r.journal_err[0])
		fix_journal_save(f->j, f->r.journal_err, sizeof(f->r.journal_err));
	for (size_t i = 0; i < f->o.n; i++)
		for (size_t k = 0; k < f->r.plan->nodes[i].nactions; k++)
			failed += f->r.results[i][k].status == FIX_FAILED ||
			          f->r.results[i][k].status == FIX_SKIPPED;
	finish(f, failed || f->r.journal_err[0] ? 1 : 0);
}

/* The plan, journalled (fix_run_apply); on_applied then. */
static void apply(struct fix_peerssh_flow *f)
{
	size_t n = f->o.n;

	f->j = fix_journal_new(f->run, f->o.hosts, n);
	f->r.results = cd_calloc(n ? n : 1, sizeof(*f->r.results));
	for (size_t i = 0; i < n; i++)
		f->r.results[i] =
		    cd_calloc(f->r.plan->nodes[i].nactions + 1, sizeof(**f->r.results));
	fix_run_apply(f->fs, f->r.plan, f->j, f->r.results, f->r.journal_err,
	              sizeof(f->r.journal_err), on_applied, f);
}

/* ---------------------------------------------------------------- plan */

static void on_gathered(void *arg)
{
	struct fix_peerssh_flow *f = arg;
	struct fix_peerssh_input in = {.hosts = f->o.hosts,
	                               .n = f->o.n,
	                               .hostkeys = f->hostkeys,
	                               .publine = f->key.exists ? f->key.publine : NULL,
	                               .privkey = f->priv,
	                               .privlen = f->privlen,
	                               .states = f->states};

	f->r.plan = fix_peerssh_plan(&in, f->run);
	if (!f->o.apply || !f->r.plan->nactions) {
		finish(f, f->r.plan->nactions ? 1 : 0);
		return;
	}
	if (f->o.ask) {
		/* the front end asks, then fix_peerssh_flow_answer; the cluster key
		 * was made already, so the plan asked about is the one applied */
		f->r.asking = 1;
		if (!f->timer)
			f->timer = loop_timer_add(f->loop, 0, on_done_timer, f);
		return;
	}
	apply(f);
}

/* ---------------------------------------------------------------- gather */

static void gather(struct fix_peerssh_flow *f)
{
	size_t n = f->o.n;

	if (f->key.exists &&
	    scan_read_file(f->key.path, FIX_PEERSSH_KEY_MAX, SCAN_FILE_REGULAR, &f->priv,
	                   &f->privlen, f->r.error, sizeof(f->r.error)) < 0) {
		finish(f, 2);
		return;
	}
	f->pool = sshpool_new(f->loop, f->o.pool, f->r.error, sizeof(f->r.error));
	if (!f->pool) {
		finish(f, 2);
		return;
	}
	f->fs = fix_run_new(f->loop, f->pool, f->o.hosts, n);
	f->states = cd_calloc(n ? n : 1, sizeof(*f->states));
	f->skip = cd_calloc(n ? n : 1, sizeof(*f->skip));
	for (size_t i = 0; i < n; i++)
		fix_node_state_init(&f->states[i]);
	fix_run_id(f->run, sizeof(f->run));
	fix_run_gather_extra(f->fs, fix_peerssh_paths, fix_peerssh_npaths);
	fix_run_gather(f->fs, f->states, f->skip, NULL, on_gathered, f);
}

/* ---------------------------------------------------------------- key */

static void on_keygen(const struct childrun_result *res, void *arg)
{
	struct fix_peerssh_flow *f = arg;
	char err[CD_ERRLEN];

	f->keygen = NULL; /* freed once this returns */
	if (res->rc < 0) {
		cd_errf(f->r.error, sizeof(f->r.error), CD_ERR_IO, "%s", res->error);
	} else if (head_key_created(&f->key, res->status, res->err ? res->err->data : "", err,
	                            sizeof(err)) < 0) {
		snprintf(f->r.error, sizeof(f->r.error), "%s", err);
	}
	if (f->r.error[0])
		finish(f, 2);
	else
		gather(f);
}

/* The cluster key: found, or (apply) made once by ssh-keygen; then the gather. */
static void cluster_key(struct fix_peerssh_flow *f)
{
	char path[PATH_MAX], *argv[HEAD_KEY_ARGV], *files[1] = {path}, err[CD_ERRLEN];

	if (fix_peerssh_key_path(path, sizeof(path), f->r.error, sizeof(f->r.error)) < 0 ||
	    head_key_find(files, 1, NULL, &f->key, f->r.error, sizeof(f->r.error)) < 0) {
		finish(f, 2);
		return;
	}
	if (f->key.exists || !f->o.apply) {
		gather(f);
		return;
	}
	if (cd_mkdir_parent(f->key.path, f->r.error, sizeof(f->r.error)) < 0 ||
	    head_key_create_argv(&f->key, "clusterdoc-mpi", argv, f->r.error, sizeof(f->r.error)) <
	        0) {
		finish(f, 2);
		return;
	}
	f->keygen = childrun_start(f->loop, argv, HEAD_KEY_TIMEOUT_MS, 4096, 4096, on_keygen, f,
	                           err, sizeof(err));
	if (!f->keygen) {
		snprintf(f->r.error, sizeof(f->r.error), "%s", err);
		finish(f, 2);
	}
}

/* Node i's host key as the check's login verified it: the line of the
 * head's known_hosts with the fingerprint the node offered. */
static void find_hostkeys(struct fix_peerssh_flow *f)
{
	const char *home = getenv("HOME");
	char user_kh[PATH_MAX];
	const char *files[] = {user_kh, "/etc/ssh/ssh_known_hosts"};

	snprintf(user_kh, sizeof(user_kh), "%s/.ssh/known_hosts", home ? home : "");
	f->hostkeys = cd_calloc(f->o.n ? f->o.n : 1, sizeof(*f->hostkeys));
	for (size_t i = 0; i < f->o.n; i++) {
		struct sshpool_node *pn = peerssh_run_node(f->check, i);
		const char *type = NULL, *fp = pn ? sshpool_node_hostkey_fp(pn, &type) : NULL;

		if (fp && *fp)
			f->hostkeys[i] = fix_peerssh_hostkey(files, 2, f->o.hosts[i], fp);
	}
}

/* ---------------------------------------------------------------- check */

static void on_checked(void *arg)
{
	struct fix_peerssh_flow *f = arg;

	f->r.m = peerssh_run_matrix(f->check);
	if (!f->o.fix) {
		finish(f, 0); /* the matrix's own status is the front end's */
		return;
	}
	find_hostkeys(f);
	cluster_key(f);
}

struct fix_peerssh_flow *fix_peerssh_flow_start(struct loop *loop,
                                                const struct fix_peerssh_flow_opts *o,
                                                void (*done)(void *arg), void *arg, char *err,
                                                size_t errlen)
{
	struct fix_peerssh_flow *f;
	struct sshpool *pool = sshpool_new(loop, o->pool, err, errlen);

	if (!pool)
		return NULL;
	f = cd_calloc(1, sizeof(*f));
	f->loop = loop;
	f->o = *o;
	f->done = done;
	f->arg = arg;
	f->check_pool = pool;
	f->check = peerssh_run_start(loop, pool, o->hosts, o->n, o->pair_timeout_ms, on_checked, f);
	return f;
}

void fix_peerssh_flow_hold(struct fix_peerssh_flow *f, int hold_ms)
{
	if (f->pool)
		sshpool_keepalive_hold(f->pool, hold_ms);
}

void fix_peerssh_flow_answer(struct fix_peerssh_flow *f, int yes)
{
	if (!f->r.asking)
		return;
	f->r.asking = 0;
	if (yes)
		apply(f);
	else
		finish(f, 2);
}

const struct fix_peerssh_flow_report *fix_peerssh_flow_report(const struct fix_peerssh_flow *f)
{
	return &f->r;
}

void fix_peerssh_flow_free(struct fix_peerssh_flow *f)
{
	if (!f)
		return;
	if (f->timer)
		loop_timer_cancel(f->loop, f->timer);
	childrun_cancel(f->keygen);
	/* each pool first: it fails what is pending, into its run's callbacks */
	sshpool_free(f->check_pool);
	peerssh_run_free(f->check);
	fix_run_free(f->fs);
	sshpool_free(f->pool);
	for (size_t i = 0; i < f->o.n; i++) {
		if (f->hostkeys)
			free(f->hostkeys[i]);
		if (f->states)
			fix_node_state_fini(&f->states[i]);
		if (f->r.results)
			free(f->r.results[i]);
	}
	free(f->hostkeys);
	free(f->states);
	free(f->skip);
	free(f->r.results);
	fix_plan_free(f->r.plan);
	fix_journal_free(f->j);
	head_key_fini(&f->key);
	if (f->priv) {
		/* the private key leaves no copy in freed memory */
		explicit_bzero(f->priv, f->privlen);
		free(f->priv);
	}
	free(f);
}
