/*
 * fix_apply.c - apply a plan and undo a journal in a fix run
 * (fix_run.h): each node's changes in order, after the sudo pre-check,
 * each journalled as it succeeds; an undo takes a node's changes back,
 * newest first.
 */
#include "fix_run_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "sha256.h"

/* The node's copy of a file before the change, in the login user's home so
 * that user can read it (root files too), and per host, as nodes may share
 * the home: "~/.bashrc" -> ".bashrc", "/etc/hosts" -> "etc_hosts". */
static void backup_path(const char *run, const char *host, const char *path, char *out, size_t len)
{
	char name[256];
	size_t n = 0;

	path += strncmp(path, "~/", 2) == 0 ? 2 : path[0] == '/' ? 1 : 0;
	for (; *path && n + 1 < sizeof(name); path++)
		name[n++] = *path == '/' ? '_' : *path;
	name[n] = 0;
	snprintf(out, len, "~/.local/state/clusterdoc/backup/%s/%s/%s", run, host, name);
}

/* The message of a failed run: sudo's trouble said plainly. */
static void run_failure(json_t *res, const char *argv0, char *out, size_t len)
{
	const char *se = fix_run_str(res, "sudo_error");
	char line[400];

	fix_run_first_line(res, line, sizeof(line));
	if (strcmp(se, "password") == 0)
		snprintf(out, len,
		         "sudo wants a password (sudo -n refused): give the user passwordless sudo "
		         "for %s, or run clusterdoc fix as root",
		         argv0);
	else if (strcmp(se, "denied") == 0)
		snprintf(out, len, "sudo refused %s for this user: %s", argv0, line);
	else if (strcmp(se, "missing") == 0)
		snprintf(out, len, "%s needs root and sudo is not installed", argv0);
	else if (json_is_true(json_object_get(res, "timed_out")))
		snprintf(out, len, "%s did not finish within %d s", argv0, RUN_TIMEOUT_MS / 1000);
	else
		snprintf(out, len, "%s exited with status %lld: %s", argv0,
		         json_integer_value(json_object_get(res, "status")), line);
}

static char **resolve_undo(char **undo, const char *out)
{
	const char *h = strstr(out, "# handle ");
	char handle[24] = "", **v = fix_argv_copy(undo);

	if (h)
		snprintf(handle, sizeof(handle), "%.*s", (int)strspn(h + 9, "0123456789"), h + 9);
	for (size_t k = 0; v[k] && handle[0]; k++)
		if (strcmp(v[k], "{handle}") == 0) {
			free(v[k]);
			v[k] = cd_strdup(handle);
		}
	return v;
}

static void on_apply(struct sshpool_node *pn, json_t *res, const char *code, const char *msg,
                     void *arg)
{
	struct fix_run_node *x = arg;
	struct fix_run *s = x->s;
	const struct fix_action *a = &s->plan->nodes[x->i].actions[x->step];
	struct fix_result *r = &s->results[x->i][x->step];
	char err[CD_ERRLEN];

	if (x->finished)
		return;
	if (!res) {
		r->status = FIX_FAILED;
		snprintf(r->message, sizeof(r->message), "%s", msg);
	} else if (a->kind == FIX_FILE) {
		r->status =
		    json_is_true(json_object_get(res, "changed")) ? FIX_APPLIED : FIX_UNCHANGED;
		if (r->status == FIX_APPLIED) {
			struct fix_change *c = fix_journal_add(s->j, sshpool_node_host(pn), a);
			const char *bk = json_string_value(json_object_get(res, "backup"));

			c->backup = bk ? cd_strdup(bk) : NULL;
		}
	} else if (json_integer_value(json_object_get(res, "status")) == 0 &&
	           !json_is_true(json_object_get(res, "timed_out"))) {
		struct fix_change *c = fix_journal_add(s->j, sshpool_node_host(pn), a);

		r->status = FIX_APPLIED;
		fix_argv_free(c->undo);
		c->undo = resolve_undo(a->undo, fix_run_str(res, "stdout"));
	} else {
		r->status = FIX_FAILED;
		run_failure(res, a->argv[0], r->message, sizeof(r->message));
	}
	if (r->status == FIX_FAILED)
		x->failed_fixer = a->fixer;
	if (r->status == FIX_APPLIED && fix_journal_save(s->j, err, sizeof(err)) < 0 &&
	    !s->journal_err[0])
		snprintf(s->journal_err, s->journal_errlen, "%s", err);
	x->step++;
	fix_run_step(x);
}

void fix_run_apply_step(struct fix_run_node *x)
{
	struct fix_run *s = x->s;
	const struct fix_node_plan *np = &s->plan->nodes[x->i];

	if (!x->prepared) {
		fix_run_prepare_step(x);
		return;
	}
	while ((size_t)x->step < np->nactions) {
		const struct fix_action *a = &np->actions[x->step];
		struct fix_result *r = &s->results[x->i][x->step];
		char expect[SHA256_HEX_LEN], backup[512];

		if (x->failed_fixer && strcmp(x->failed_fixer, a->fixer) == 0) {
			r->status = FIX_SKIPPED;
			snprintf(r->message, sizeof(r->message),
			         "not tried: an earlier step of the %s fix failed", a->fixer);
			x->step++;
			continue;
		}
		if (a->kind == FIX_FILE) {
			if (a->before_exists)
				sha256_data_hex(a->before, a->before_len, expect);
			else
				snprintf(expect, sizeof(expect), "absent");
			backup_path(s->plan->run, sshpool_node_host(x->pn), a->path, backup,
			            sizeof(backup));
			fix_run_send(x,
			             fix_run_req_file_write(
			                 a->path, a->after, a->after_len, 0, expect, a->mode,
			                 a->before_exists ? backup : NULL, a->sudo),
			             on_apply);
		} else {
			fix_run_send(x, fix_run_req_run((const char *const *)a->argv, a->sudo),
			             on_apply);
		}
		return;
	}
	fix_run_node_done(x);
}

void fix_run_apply(struct fix_run *s, const struct fix_plan *plan, struct fix_journal *j,
                   struct fix_result **results, char *journal_err, size_t errlen,
                   void (*done)(void *), void *arg)
{
	s->mode = FX_APPLY;
	s->plan = plan;
	s->j = j;
	s->results = results;
	s->journal_err = journal_err;
	s->journal_errlen = errlen;
	journal_err[0] = 0;
	s->done = done;
	s->arg = arg;
	for (size_t i = 0; i < s->n; i++)
		s->nodes[i].failed_fixer = NULL;
	fix_run_begin(s);
}

/* ---------------------------------------------------------------- undo */

/* The index of the change this node undoes at its step-th turn (newest
 * first), or -1 when none is left. */
static long undo_index(const struct fix_run_node *x)
{
	const struct fix_journal *j = x->s->uj;
	int seen = 0;

	for (size_t k = j->nchanges; k-- > 0;) {
		if (strcmp(j->changes[k].host, sshpool_node_host(x->pn)) != 0)
			continue;
		if (seen++ == x->step)
			return (long)k;
	}
	return -1;
}

static void on_undo(struct sshpool_node *pn, json_t *res, const char *code, const char *msg,
                    void *arg)
{
	struct fix_run_node *x = arg;
	long k = undo_index(x);
	const struct fix_change *c = &x->s->uj->changes[k];
	struct fix_result *r = &x->s->uresults[k];

	if (x->finished)
		return;
	if (!res) {
		r->status = FIX_FAILED;
		if (strcmp(code, "conflict") == 0)
			snprintf(r->message, sizeof(r->message),
			         "%s; left as is (the run's backup on the node: %s)", msg,
			         c->backup ? c->backup : "none");
		else
			snprintf(r->message, sizeof(r->message), "%s", msg);
	} else if (c->kind == FIX_FILE) {
		r->status =
		    json_is_true(json_object_get(res, "changed")) ? FIX_APPLIED : FIX_UNCHANGED;
	} else if (json_integer_value(json_object_get(res, "status")) == 0) {
		r->status = FIX_APPLIED;
	} else {
		r->status = FIX_FAILED;
		run_failure(res, c->undo[0] ? c->undo[0] : "?", r->message, sizeof(r->message));
	}
	x->step++;
	fix_run_step(x);
}

void fix_run_undo_step(struct fix_run_node *x)
{
	long k;
	const struct fix_change *c;

	if (!x->prepared) {
		fix_run_prepare_step(x);
		return;
	}
	k = undo_index(x);
	if (k < 0) {
		fix_run_node_done(x);
		return;
	}
	c = &x->s->uj->changes[k];
	if (c->kind == FIX_FILE)
		fix_run_send(x,
		             fix_run_req_file_write(
		                 c->path, c->before, c->before_len, !c->before_exists,
		                 c->after_exists ? c->after_sha256 : "absent", 0644, NULL, c->sudo),
		             on_undo);
	else
		fix_run_send(x, fix_run_req_run((const char *const *)c->undo, c->sudo), on_undo);
}

void fix_run_undo(struct fix_run *s, const struct fix_journal *j, struct fix_result *results,
                  void (*done)(void *), void *arg)
{
	s->mode = FX_UNDO;
	s->uj = j;
	s->uresults = results;
	s->done = done;
	s->arg = arg;
	fix_run_begin(s);
}
