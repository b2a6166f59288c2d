/* SPDX-License-Identifier: MIT */
/*
 * fix_apply.c - apply a plan and undo a journal in a fix run
 * (fix_run.h): each node's changes in order, after the sudo pre-check,
 * each journalled ahead (its intent saved before it is sent, its outcome
 * when the node answers); an undo takes a node's changes back, newest
 * first, looking up on the node those whose outcome was never heard.
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

/* The node did not answer (it failed, was closed, or timed out): the change
 * may or may not have been made. An error reply means it was not. */
static int answer_lost(struct sshpool_node *pn)
{
	enum sshpool_node_state st = sshpool_node_state(pn);

	return st == SSHPOOL_NODE_FAILED || st == SSHPOOL_NODE_CLOSED;
}

static void save_journal(struct fix_run *s)
{
	char err[CD_ERRLEN];

	if (fix_journal_save(s->j, err, sizeof(err)) < 0 && !s->journal_err[0])
		snprintf(s->journal_err, s->journal_errlen, "%s", err);
}

static void on_apply(struct sshpool_node *pn, json_t *res, const char *code, const char *msg,
                     void *arg)
{
	struct fix_run_node *x = arg;
	struct fix_run *s = x->s;
	const struct fix_action *a = &s->plan->nodes[x->i].actions[x->step];
	struct fix_result *r = &s->results[x->i][x->step];
	struct fix_change *c = &s->j->changes[x->intent];

	if (x->finished)
		return;
	if (!res) {
		r->status = FIX_FAILED;
		snprintf(r->message, sizeof(r->message), "%s", msg);
		c->outcome = answer_lost(pn) ? FIX_OUTCOME_UNKNOWN : FIX_OUTCOME_DROPPED;
	} else if (a->kind == FIX_FILE) {
		r->status =
		    json_is_true(json_object_get(res, "changed")) ? FIX_APPLIED : FIX_UNCHANGED;
		if (r->status == FIX_APPLIED) {
			const char *bk = json_string_value(json_object_get(res, "backup"));

			free(c->backup);
			c->backup = bk ? cd_strdup(bk) : NULL;
		}
	} else if (json_integer_value(json_object_get(res, "status")) == 0 &&
	           !json_is_true(json_object_get(res, "timed_out"))) {
		r->status = FIX_APPLIED;
		fix_argv_free(c->undo);
		c->undo = resolve_undo(a->undo, fix_run_str(res, "stdout"));
	} else {
		r->status = FIX_FAILED;
		run_failure(res, a->argv[0], r->message, sizeof(r->message));
	}
	if (res)
		c->outcome = r->status == FIX_APPLIED ? FIX_OUTCOME_APPLIED : FIX_OUTCOME_DROPPED;
	if (r->status == FIX_FAILED)
		x->failed_fixer = a->fixer;
	save_journal(s);
	x->step++;
	fix_run_step(x);
}

/* Node x sends nothing more: its changes not sent are skipped. */
static void stop_node(struct fix_run_node *x, const char *why)
{
	struct fix_run *s = x->s;
	const struct fix_node_plan *np = &s->plan->nodes[x->i];

	for (size_t k = (size_t)x->step; k < np->nactions; k++) {
		struct fix_result *r = &s->results[x->i][k];

		if (r->status == FIX_PENDING) {
			r->status = FIX_SKIPPED;
			snprintf(r->message, sizeof(r->message), "%s", why);
		}
	}
	fix_run_node_done(x);
}

/* Send the change at x's step (its intent is saved). */
static void send_change(struct fix_run_node *x)
{
	struct fix_run *s = x->s;
	const struct fix_action *a = &s->plan->nodes[x->i].actions[x->step];
	char expect[SHA256_HEX_LEN], backup[512];

	if (a->kind == FIX_FILE) {
		if (a->before_exists)
			sha256_data_hex(a->before, a->before_len, expect);
		else
			snprintf(expect, sizeof(expect), "absent");
		backup_path(s->plan->run, sshpool_node_host(x->pn), a->path, backup,
		            sizeof(backup));
		fix_run_send(x,
		             fix_run_req_file_write(a->path, a->after, a->after_len, 0, expect,
		                                    a->mode, a->before_exists ? backup : NULL,
		                                    a->sudo),
		             on_apply);
	} else {
		fix_run_send(x, fix_run_req_run((const char *const *)a->argv, a->sudo), on_apply);
	}
}

/*
 * CLUSTERDOC_TEST_JOURNAL_PAUSE_MS (tests only, docs/clusterdoc.1): wait
 * that long between saving an intent and sending its change, so a test can
 * interrupt the run at each record of the journal. Unset (0) in use.
 */
static int pause_ms(void)
{
	const char *v = getenv("CLUSTERDOC_TEST_JOURNAL_PAUSE_MS");
	int ms = v ? atoi(v) : 0;

	return ms > 0 && ms <= 60000 ? ms : 0;
}

static void on_pause(struct loop *loop, void *arg)
{
	struct fix_run_node *x = arg;
	struct fix_run *s = x->s;

	x->pause_timer = 0;
	if (s->stopping) {
		/* never sent: nothing to look up */
		s->j->changes[x->intent].outcome = FIX_OUTCOME_DROPPED;
		save_journal(s);
		stop_node(x, "not sent: the run was interrupted");
		return;
	}
	send_change(x);
}

void fix_run_apply_step(struct fix_run_node *x)
{
	struct fix_run *s = x->s;
	const struct fix_node_plan *np = &s->plan->nodes[x->i];

	if (s->stopping) {
		stop_node(x, "not sent: the run was interrupted");
		return;
	}
	if (!x->prepared) {
		fix_run_prepare_step(x);
		return;
	}
	while ((size_t)x->step < np->nactions) {
		const struct fix_action *a = &np->actions[x->step];
		struct fix_result *r = &s->results[x->i][x->step];
		char err[CD_ERRLEN];

		if (x->failed_fixer && strcmp(x->failed_fixer, a->fixer) == 0) {
			r->status = FIX_SKIPPED;
			snprintf(r->message, sizeof(r->message),
			         "not tried: an earlier step of the %s fix failed", a->fixer);
			x->step++;
			continue;
		}
		/* write-ahead: the intent is on disk before the change leaves */
		x->intent = s->j->nchanges;
		fix_journal_intend(s->j, sshpool_node_host(x->pn), a);
		if (fix_journal_save(s->j, err, sizeof(err)) < 0) {
			s->j->changes[x->intent].outcome = FIX_OUTCOME_DROPPED;
			if (!s->journal_err[0])
				snprintf(s->journal_err, s->journal_errlen, "%s", err);
			r->status = FIX_FAILED;
			snprintf(r->message, sizeof(r->message),
			         "not sent: the undo journal could not be saved");
			stop_node(x, "not sent: the undo journal could not be saved");
			return;
		}
		if (pause_ms() > 0) {
			x->pause_timer = loop_timer_add(s->loop, pause_ms(), on_pause, x);
			return;
		}
		send_change(x);
		return;
	}
	fix_run_node_done(x);
}

void fix_run_stop(struct fix_run *s)
{
	s->stopping = 1;
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

/* Node x goes on to its next change. */
static void undo_next(struct fix_run_node *x)
{
	x->step++;
	x->looked_up = 0;
	fix_argv_free(x->found_undo);
	x->found_undo = NULL;
	fix_run_step(x);
}

static void on_undo(struct sshpool_node *pn, json_t *res, const char *code, const char *msg,
                    void *arg)
{
	struct fix_run_node *x = arg;
	long k = undo_index(x);
	const struct fix_change *c = &x->s->uj->changes[k];
	struct fix_result *r = &x->s->uresults[k];
	int unknown = c->outcome == FIX_OUTCOME_UNKNOWN;

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
		/* the file holds its old bytes: the write never happened */
		if (unknown && r->status == FIX_UNCHANGED)
			snprintf(r->message, sizeof(r->message),
			         "the interrupted run had not made this change");
	} else if (json_integer_value(json_object_get(res, "status")) == 0) {
		r->status = FIX_APPLIED;
	} else {
		r->status = FIX_FAILED;
		run_failure(res, c->undo[0] ? c->undo[0] : "?", r->message, sizeof(r->message));
	}
	undo_next(x);
}

static size_t argv_len(char *const *v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

/* The word after key in v, or NULL. */
static const char *word_after(char *const *v, const char *key)
{
	for (size_t k = 0; v && v[k]; k++)
		if (strcmp(v[k], key) == 0)
			return v[k + 1];
	return NULL;
}

char **fix_run_lookup_argv(const struct fix_change *c)
{
	char *const *v = c->argv;
	size_t n = argv_len(v);

	if (c->kind != FIX_CMD || c->outcome != FIX_OUTCOME_UNKNOWN || n < 2)
		return NULL;
	/* nft --echo --handle insert rule FAM TAB CHAIN ...: list the chain */
	if (strcmp(v[0], "nft") == 0) {
		for (size_t k = 1; k + 3 < n; k++)
			if (strcmp(v[k], "rule") == 0)
				return fix_argv("nft", "--handle", "list", "chain", v[k + 1],
				                v[k + 2], v[k + 3], NULL);
		return NULL;
	}
	/* iptables -I INPUT SPEC: -C says whether the rule is there */
	if ((strcmp(v[0], "iptables") == 0 || strcmp(v[0], "ip6tables") == 0) &&
	    strcmp(v[1], "-I") == 0) {
		char **w = fix_argv_copy((char **)v);

		free(w[1]);
		w[1] = cd_strdup("-C");
		return w;
	}
	return NULL;
}

/* The line of an nft chain listing that is c's rule: the run's comment
 * and c's source network; copied into out. 0 when found. */
static int nft_rule_line(const struct fix_change *c, const char *listing, char *out, size_t len)
{
	const char *comment = word_after(c->argv, "comment");
	const char *net = word_after(c->argv, "saddr");
	char saddr[128];

	if (!comment || !net)
		return -1;
	snprintf(saddr, sizeof(saddr), "saddr %s ", net);
	for (const char *s = listing; *s;) {
		size_t n = strcspn(s, "\n");

		snprintf(out, len, "%.*s", (int)n, s);
		if (strstr(out, comment) && strstr(out, saddr) && strstr(out, "# handle "))
			return 0;
		s += n + (s[n] == '\n');
	}
	return -1;
}

/* The look-up of a change of unknown outcome (fix_run_lookup_argv) came
 * back: undo what is there, or say it was never made. */
static void on_lookup(struct sshpool_node *pn, json_t *res, const char *code, const char *msg,
                      void *arg)
{
	struct fix_run_node *x = arg;
	long k = undo_index(x);
	const struct fix_change *c = &x->s->uj->changes[k];
	struct fix_result *r = &x->s->uresults[k];
	char line[1024];
	int found;

	if (x->finished)
		return;
	x->looked_up = 1;
	if (!res) {
		r->status = FIX_FAILED;
		snprintf(r->message, sizeof(r->message), "could not look up the rule: %s", msg);
		undo_next(x);
		return;
	}
	if (strcmp(c->argv[0], "nft") == 0) {
		if (json_integer_value(json_object_get(res, "status")) != 0) {
			r->status = FIX_FAILED;
			run_failure(res, "nft", r->message, sizeof(r->message));
			undo_next(x);
			return;
		}
		found = nft_rule_line(c, fix_run_str(res, "stdout"), line, sizeof(line)) == 0;
		if (found)
			x->found_undo = resolve_undo(c->undo, line);
	} else {
		found = json_integer_value(json_object_get(res, "status")) == 0;
		if (found)
			x->found_undo = fix_argv_copy(c->undo);
	}
	if (!found) {
		r->status = FIX_UNCHANGED;
		snprintf(r->message, sizeof(r->message),
		         "the interrupted run had not made this change (no rule of the run)");
		undo_next(x);
		return;
	}
	fix_run_step(x);
}

void fix_run_undo_step(struct fix_run_node *x)
{
	long k;
	const struct fix_change *c;
	char **lookup;

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
	if (!x->looked_up && (lookup = fix_run_lookup_argv(c))) {
		fix_run_send(x, fix_run_req_run((const char *const *)lookup, c->sudo), on_lookup);
		fix_argv_free(lookup);
		return;
	}
	if (c->kind == FIX_FILE)
		fix_run_send(x,
		             fix_run_req_file_write(
		                 c->path, c->before, c->before_len, !c->before_exists,
		                 c->after_exists ? c->after_sha256 : "absent", 0644, NULL, c->sudo),
		             on_undo);
	else
		fix_run_send(
		    x, fix_run_req_run((const char *const *)(x->found_undo ?: c->undo), c->sudo),
		    on_undo);
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
