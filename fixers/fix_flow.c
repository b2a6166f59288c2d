/* SPDX-License-Identifier: MIT */
/*
 * fix_flow.c - plan, login stage, apply, journal and verify, once
 * (fix_flow.h). The fix run's phases (fix_run.h) and the login stage
 * end on loop turns of their own (fanout.h), the head's commands are loop
 * children (childrun.h); the front end hears of a state only from the
 * flow's own 0 ms timer.
 */
#include "fix_flow.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "secret.h"

struct fix_flow {
	struct fix_flow_report r;
	struct loop *loop;
	struct fix_flow_opts o;
	fix_flow_cb changed;
	void *arg;
	uint64_t timer; /* the pending call of changed */

	struct sshpool *pool;
	struct fix_run *fs;
	struct fix_node_state *states;
	int *skip;
	const char **fw;
	int key_pending, gather_pending; /* planning waits for both */
	struct fix_login_run *login_run;
	char *pw; /* FIX_PASSWORD_MAX bytes, wiped once the login stage has it */
	int have_pw;
};

/* ---------------------------------------------------------------- state */

static void on_changed(struct loop *loop, void *arg)
{
	struct fix_flow *f = arg;

	f->timer = 0;
	f->changed(f, f->arg);
}

/* Enter a state the front end hears of, on the loop's next turn. */
static void enter(struct fix_flow *f, enum fix_flow_state st)
{
	f->r.state = st;
	if (f->timer)
		loop_timer_cancel(f->loop, f->timer);
	f->timer = loop_timer_add(f->loop, 0, on_changed, f);
}

static void fail(struct fix_flow *f, enum fix_flow_state st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail(struct fix_flow *f, enum fix_flow_state st, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(f->r.error, sizeof(f->r.error), fmt, ap);
	va_end(ap);
	enter(f, st);
}

/* The nodes' agents (the verifying check starts new ones). */
static void disconnect(struct fix_flow *f)
{
	fix_login_run_disconnect(f->login_run);
	fix_run_free(f->fs);
	f->fs = NULL;
	sshpool_free(f->pool);
	f->pool = NULL;
}

static void wipe_password(struct fix_flow *f)
{
	secret_wipe(f->pw, FIX_PASSWORD_MAX);
	f->have_pw = 0;
}

static int refuse(const struct fix_flow *f, enum fix_flow_state want, char *err, size_t errlen)
{
	static const char *const what[] = {
	    [FIX_FLOW_PLANNED] = "no plan to apply",
	    [FIX_FLOW_PASSWORD] = "no password was asked",
	    [FIX_FLOW_APPLIED] = "nothing was applied to verify",
	};

	if (f->r.state == want)
		return 0;
	return cd_errf(err, errlen, CD_ERR_REFUSED, "%s",
	               want < CD_ARRAY_LEN(what) && what[want] ? what[want] : "refused");
}

/* ---------------------------------------------------------------- plan */

static void plan(struct fix_flow *f)
{
	const struct netmodel *m = f->o.m;
	struct fix_flow_report *r = &f->r;
	char err[CD_ERRLEN];

	if (r->state != FIX_FLOW_PLANNING || f->key_pending || f->gather_pending)
		return;
	for (size_t i = 0; i < f->o.nhosts; i++) {
		r->checked += !f->skip[i];
		r->gathered += f->states[i].gathered;
	}
	fix_run_id(r->run, sizeof(r->run));
	r->p = fix_plan_build(m, f->o.d, f->states, &f->o.fo, r->run, err, sizeof(err));
	if (!r->p) {
		disconnect(f);
		fail(f, FIX_FLOW_FAILED, "%s", err);
		return;
	}
	r->changes = r->p->nactions + fix_login_changes(&r->login, m);
	for (size_t i = 0; i < f->o.nhosts; i++)
		r->nodes += r->p->nodes[i].nactions > 0 || r->login.login[i];
	enter(f, FIX_FLOW_PLANNED);
}

static void on_key_found(void *arg, int rc, const char *err)
{
	struct fix_flow *f = arg;

	f->key_pending = 0;
	if (rc < 0 && f->r.state == FIX_FLOW_PLANNING) {
		disconnect(f);
		fail(f, FIX_FLOW_FAILED, "ssh-key: %s", err);
		return;
	}
	plan(f);
}

static void on_gathered(void *arg)
{
	struct fix_flow *f = arg;

	f->gather_pending = 0;
	plan(f);
}

struct fix_flow *fix_flow_start(struct loop *loop, const struct fix_flow_opts *o,
                                fix_flow_cb changed, void *arg, char *err, size_t errlen)
{
	struct fix_flow *f = cd_calloc(1, sizeof(*f));
	size_t n = o->nhosts;
	char kerr[CD_ERRLEN];
	int rc;

	f->loop = loop;
	f->o = *o;
	f->changed = changed;
	f->arg = arg;
	f->pw = cd_calloc(1, FIX_PASSWORD_MAX);
	f->r.state = FIX_FLOW_PLANNING;
	fix_login_init(&f->r.login, o->m, &o->fo);
	f->pool = sshpool_new(loop, o->pool, err, errlen);
	if (!f->pool) {
		fix_flow_free(f);
		return NULL;
	}
	f->states = cd_calloc(n ? n : 1, sizeof(*f->states));
	f->skip = cd_calloc(n ? n : 1, sizeof(*f->skip));
	f->fw = cd_calloc(n ? n : 1, sizeof(*f->fw));
	fix_gather_inputs(o->m, o->d, &f->o.fo, f->states, f->skip, f->fw);
	f->fs = fix_run_new(loop, f->pool, o->hosts, n);
	rc = fix_login_find_key(&f->r.login, loop, o->m, o->pool, on_key_found, f, kerr,
	                        sizeof(kerr));
	if (rc < 0) {
		disconnect(f);
		fail(f, FIX_FLOW_FAILED, "ssh-key: %s", kerr);
		return f;
	}
	f->key_pending = rc == 0;
	f->gather_pending = 1;
	fix_run_gather(f->fs, f->states, f->skip, f->fw, on_gathered, f);
	return f;
}

const struct fix_flow_report *fix_flow_report(const struct fix_flow *f)
{
	return &f->r;
}

void fix_flow_password_prompt(const struct fix_flow *f, char *out, size_t len)
{
	fix_login_password_prompt(&f->r.login, f->o.m, out, len);
}

/* ---------------------------------------------------------------- apply */

static void on_plan_applied(void *arg)
{
	struct fix_flow *f = arg;
	struct fix_flow_report *r = &f->r;

	for (size_t i = 0; i < f->o.nhosts; i++)
		for (size_t k = 0; k < r->p->nodes[i].nactions; k++)
			r->failed += r->results[i][k].status == FIX_FAILED ||
			             r->results[i][k].status == FIX_SKIPPED;
	fix_journal_compact(r->j); /* every answer is in: drop what was not made */
	disconnect(f);
	enter(f, FIX_FLOW_APPLIED);
}

/* After the login stage (or without one): the plan's actions. */
static void apply_plan(struct fix_flow *f)
{
	struct fix_flow_report *r = &f->r;

	r->state = FIX_FLOW_APPLYING;
	r->failed = r->login_failed;
	if (!r->p->nactions) {
		on_plan_applied(f);
		return;
	}
	fix_run_apply(f->fs, r->p, r->j, r->results, r->journal_error, sizeof(r->journal_error),
	              on_plan_applied, f);
}

static void on_logged_in(void *arg)
{
	struct fix_flow *f = arg;

	f->r.login_ran = 1;
	fix_login_run_outcome(f->login_run, &f->r.login_outcome);
	f->r.login_failed = fix_login_run_failed(f->login_run);
	fix_login_run_disconnect(f->login_run);
	apply_plan(f);
}

static void start_login(struct fix_flow *f)
{
	struct fix_flow_report *r = &f->r;
	char err[CD_ERRLEN];

	f->login_run = fix_login_start(f->loop, &r->login, f->o.m, f->o.d, &f->o.fo, f->o.pool,
	                               r->login.need_password ? f->pw : NULL, f->o.hosts, r->j,
	                               on_logged_in, f, err, sizeof(err));
	wipe_password(f); /* the run keeps its own copy */
	if (!f->login_run)
		fail(f, FIX_FLOW_LOGIN_FAILED, "ssh-key: %s", err);
}

/* The head's key exists: the password, then the stage. */
static void after_key(struct fix_flow *f)
{
	if (f->r.login.need_password && !f->have_pw)
		enter(f, FIX_FLOW_PASSWORD);
	else
		start_login(f);
}

static void on_key_created(void *arg, int rc, const char *err)
{
	struct fix_flow *f = arg;

	if (rc < 0)
		fail(f, FIX_FLOW_LOGIN_FAILED, "ssh-key: %s", err);
	else
		after_key(f);
}

int fix_flow_apply(struct fix_flow *f, const char *password, char *err, size_t errlen)
{
	struct fix_flow_report *r = &f->r;
	char kerr[CD_ERRLEN];
	int rc;

	if (refuse(f, FIX_FLOW_PLANNED, err, errlen) < 0)
		return CD_ERR_REFUSED;
	if (password) {
		snprintf(f->pw, FIX_PASSWORD_MAX, "%s", password);
		f->have_pw = 1;
	}
	r->j = fix_journal_new(r->run, f->o.hosts, f->o.nhosts);
	r->results = cd_calloc(f->o.nhosts ? f->o.nhosts : 1, sizeof(*r->results));
	for (size_t i = 0; i < f->o.nhosts; i++)
		r->results[i] = cd_calloc(r->p->nodes[i].nactions + 1, sizeof(**r->results));
	r->state = FIX_FLOW_APPLYING;
	if (!r->login.nlogin) {
		apply_plan(f);
		return 0;
	}
	rc = fix_login_create_key(&r->login, f->loop, on_key_created, f, kerr, sizeof(kerr));
	if (rc < 0)
		fail(f, FIX_FLOW_LOGIN_FAILED, "ssh-key: %s", kerr);
	else if (rc > 0)
		after_key(f);
	return 0;
}

int fix_flow_password(struct fix_flow *f, const char *password, char *err, size_t errlen)
{
	if (refuse(f, FIX_FLOW_PASSWORD, err, errlen) < 0)
		return CD_ERR_REFUSED;
	snprintf(f->pw, FIX_PASSWORD_MAX, "%s", password ? password : "");
	f->have_pw = 1;
	f->r.state = FIX_FLOW_APPLYING;
	start_login(f);
	return 0;
}

int fix_flow_skip_login(struct fix_flow *f, char *err, size_t errlen)
{
	if (f->r.state != FIX_FLOW_PASSWORD && f->r.state != FIX_FLOW_LOGIN_FAILED)
		return cd_errf(err, errlen, CD_ERR_REFUSED, "the login stage is not waiting");
	wipe_password(f);
	f->r.login_failed = (int)f->r.login.nlogin;
	apply_plan(f);
	return 0;
}

/* ---------------------------------------------------------------- verify */

int fix_flow_verify(struct fix_flow *f, const struct netmodel *m2, const struct diagnosis *after,
                    char *err, size_t errlen)
{
	struct fix_flow_report *r = &f->r;

	if (refuse(f, FIX_FLOW_APPLIED, err, errlen) < 0)
		return CD_ERR_REFUSED;
	if (f->timer)
		loop_timer_cancel(f->loop, f->timer); /* APPLIED was heard of, or is moot */
	f->timer = 0;
	fix_verify_plan(&r->verdicts, m2, r->p, r->results, after);
	fix_verify_login(&r->verdicts, &r->login, m2);
	r->state = FIX_FLOW_DONE;
	return 0;
}

int fix_flow_interrupt(struct fix_flow *f, char *err, size_t errlen)
{
	struct fix_flow_report *r = &f->r;

	if (r->state != FIX_FLOW_APPLYING && r->state != FIX_FLOW_PASSWORD &&
	    r->state != FIX_FLOW_LOGIN_FAILED)
		return 0;
	r->interrupted = 1;
	if (f->fs)
		fix_run_stop(f->fs);
	r->j->interrupted = (long long)time(NULL);
	return fix_journal_save(r->j, err, errlen);
}

void fix_flow_free(struct fix_flow *f)
{
	struct fix_flow_report *r;

	if (!f)
		return;
	r = &f->r;
	if (f->timer)
		loop_timer_cancel(f->loop, f->timer);
	disconnect(f);
	fix_login_run_free(f->login_run);
	fix_login_fini(&r->login);
	for (size_t i = 0; f->states && i < f->o.nhosts; i++)
		fix_node_state_fini(&f->states[i]);
	for (size_t i = 0; r->results && i < f->o.nhosts; i++)
		free(r->results[i]);
	free(r->results);
	free(f->states);
	free(f->skip);
	free(f->fw);
	fix_plan_free(r->p);
	fix_journal_free(r->j);
	fix_verification_fini(&r->verdicts);
	secret_wipe(f->pw, FIX_PASSWORD_MAX);
	free(f->pw);
	free(f);
}

void fix_flow_hold(struct fix_flow *f, int hold_ms)
{
	if (f && f->pool)
		sshpool_keepalive_hold(f->pool, hold_ms);
}
