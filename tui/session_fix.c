/*
 * session_fix.c - applying a fix from the TUI (session_fix.h): plan, apply,
 * verify, with the same modules and the same text as `clusterdoc fix`.
 */
#include "session.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixers/fix_login.h"
#include "report/fix_render.h"
#include "fixers/fix.h"
#include "fixers/fix_journal.h"
#include "fixers/fix_run.h"

struct fixflow_work {
	struct fix_opts fo;
	struct sshpool *pool;
	struct fix_session *fs;
	struct fix_node_state *states;
	int *skip;
	const char **fw;
	struct fix_plan *p;
	struct fix_login login;
	struct fix_login_run *login_run;
	struct fix_journal *j;
	struct fix_result **results;
	char jerr[CD_ERRLEN];
	/* the check the plan was made from: the session's until the verifying
	 * check starts, then the flow's own (m_owned) */
	struct netmodel *m;
	struct diagnosis *d;
	int m_owned;
	uint64_t timer;
};

const char *fixflow_state_name(enum fixflow_state st)
{
	static const char *const names[] = {
	    [FIXFLOW_IDLE] = "idle",           [FIXFLOW_PLANNING] = "planning",
	    [FIXFLOW_PLANNED] = "planned",     [FIXFLOW_APPLYING] = "applying",
	    [FIXFLOW_VERIFYING] = "verifying", [FIXFLOW_DONE] = "done",
	    [FIXFLOW_FAILED] = "failed",
	};
	return names[st];
}

static void changed(struct session *s)
{
	if (s->changed)
		s->changed(s->changed_arg);
}

/* ---------------------------------------------------------------- state */

/* The agents and the pool (never from inside their own callbacks). */
static void work_disconnect(struct fixflow_work *w)
{
	fix_login_run_free(w->login_run);
	w->login_run = NULL;
	fix_session_free(w->fs);
	w->fs = NULL;
	sshpool_free(w->pool);
	w->pool = NULL;
}

static void work_free(struct session *s, struct fixflow_work *w)
{
	size_t n = s->nhosts;

	if (!w)
		return;
	if (w->timer)
		loop_timer_cancel(s->loop, w->timer);
	work_disconnect(w);
	for (size_t i = 0; w->states && i < n; i++)
		fix_node_state_fini(&w->states[i]);
	for (size_t i = 0; w->results && i < n; i++)
		free(w->results[i]);
	free(w->results);
	free(w->states);
	free(w->skip);
	free(w->fw);
	fix_plan_free(w->p);
	fix_login_fini(&w->login);
	fix_journal_free(w->j);
	if (w->m_owned) {
		diagnosis_free(w->d);
		netmodel_free(w->m);
	}
	free(w);
}

void session_fix_close(struct session *s)
{
	struct fixflow *f = &s->fix;

	work_free(s, f->w);
	free(f->text);
	memset(f, 0, sizeof(*f));
	changed(s);
}

static void fail(struct session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct session *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->fix.error, sizeof(s->fix.error), fmt, ap);
	va_end(ap);
	s->fix.state = FIXFLOW_FAILED;
	changed(s);
}

/* Run cb on the loop's next turn: the fix session and the login stage call
 * back from inside their own callbacks. */
static void next_turn(struct session *s, loop_timer_cb cb)
{
	s->fix.w->timer = loop_timer_add(s->loop, 0, cb, s);
}

/* Text written by fix_render.h's functions, appended to the flow's. */
struct text_out {
	FILE *f;
	char *buf;
	size_t len;
};

static FILE *text_open(struct text_out *o)
{
	o->buf = NULL;
	o->len = 0;
	o->f = open_memstream(&o->buf, &o->len);
	if (!o->f)
		cd_fatal("out of memory opening a memory stream");
	return o->f;
}

static void text_append(struct session *s, struct text_out *o)
{
	char *old = s->fix.text;

	fclose(o->f);
	s->fix.text = cd_asprintf("%s%s", old ? old : "", o->buf);
	free(old);
	free(o->buf);
}

/* ---------------------------------------------------------------- plan */

static void on_planned(struct loop *loop, void *arg)
{
	struct session *s = arg;
	struct fixflow *f = &s->fix;
	struct fixflow_work *w = f->w;
	struct text_out o;
	char err[CD_ERRLEN];
	size_t gathered = 0, checked = 0;

	w->timer = 0;
	for (size_t i = 0; i < s->nhosts; i++) {
		gathered += w->states[i].gathered;
		checked += !w->skip[i];
	}
	fix_run_id(f->run, sizeof(f->run));
	w->p = fix_plan_build(w->m, w->d, w->states, &w->fo, f->run, err, sizeof(err));
	if (!w->p) {
		fail(s, "%s", err);
		return;
	}
	text_open(&o);
	fprintf(o.f, "plan (run %s); nothing has changed yet:\n", f->run);
	fix_login_print(o.f, &w->login, w->m); /* applied first */
	fix_print_plan(o.f, w->m, w->p, NULL);
	if (gathered < checked)
		fprintf(o.f,
		        "\n%zu of %zu checked node(s) could not be read: their changes are "
		        "not planned\n",
		        checked - gathered, checked);
	text_append(s, &o);
	f->changes = w->p->nactions + fix_login_changes(&w->login, w->m);
	for (size_t i = 0; i < s->nhosts; i++)
		f->nodes += w->p->nodes[i].nactions > 0 || w->login.login[i];
	f->hostkeys = fix_login_hostkeys(&w->login, w->m);
	f->need_password = w->login.need_password;
	if (f->need_password)
		fix_login_password_prompt(&w->login, w->m, f->password_prompt,
		                          sizeof(f->password_prompt));
	f->state = FIXFLOW_PLANNED;
	changed(s);
}

static void on_gathered(void *arg)
{
	next_turn(arg, on_planned);
}

int session_fix_plan(struct session *s, size_t finding, char *err, size_t errlen)
{
	struct fixflow *f = &s->fix;
	struct fixflow_work *w;
	const struct finding *fd;
	char only[sizeof(f->only)];

	if (session_busy(s))
		return cd_errf(err, errlen, CD_ERR_REFUSED,
		               "a task is running: fix when it has ended");
	if (s->check_state != TASK_DONE || !s->d || finding >= s->d->nfindings)
		return cd_errf(err, errlen, CD_ERR_NOTFOUND, "no finding to fix: run the check");
	fd = &s->d->findings[finding];
	if (!fix_fixers_for(fd->id, only, sizeof(only)))
		return cd_errf(err, errlen, CD_ERR_NOTFOUND,
		               "no fixer answers %s: the detail says what to do by hand", fd->id);
	session_fix_close(s);
	snprintf(f->finding, sizeof(f->finding), "%s", fd->id);
	snprintf(f->only, sizeof(f->only), "%s", only);
	f->w = w = cd_calloc(1, sizeof(*w));
	w->fo.only = f->only;
	w->m = s->m;
	w->d = s->d;
	w->states = cd_calloc(s->nhosts, sizeof(*w->states));
	w->skip = cd_calloc(s->nhosts, sizeof(*w->skip));
	w->fw = cd_calloc(s->nhosts, sizeof(*w->fw));
	fix_gather_inputs(s->m, s->d, &w->fo, w->states, w->skip, w->fw);
	/* ssh -G once, for the login user and the head's key (ssh-key only) */
	if (fix_login_prepare(&w->login, s->m, &w->fo, s->o.pool, err, errlen) < 0) {
		session_fix_close(s);
		return -1;
	}
	w->pool = sshpool_new(s->loop, s->o.pool, err, errlen);
	if (!w->pool) {
		session_fix_close(s);
		return -1;
	}
	w->fs = fix_session_new(s->loop, w->pool, (const char *const *)s->hosts, s->nhosts);
	f->state = FIXFLOW_PLANNING;
	fix_session_gather(w->fs, w->states, w->skip, w->fw, on_gathered, s);
	changed(s);
	return 0;
}

/* ---------------------------------------------------------------- verify */

/* Whether the finding the fix started from is still in the new diagnosis. */
static void finding_after(struct session *s, FILE *out)
{
	const struct fixflow *f = &s->fix;
	size_t left = 0;

	for (size_t k = 0; s->d && k < s->d->nfindings; k++) {
		const struct finding *fd = &s->d->findings[k];

		if (strcmp(fd->id, f->finding) != 0)
			continue;
		if (!left++)
			fprintf(out, "\n%s is STILL REPORTED on", f->finding);
		for (size_t q = 0; q < fd->nnodes; q++)
			if (fd->nodes[q] < s->nhosts)
				fprintf(out, " %s", s->hosts[fd->nodes[q]]);
	}
	if (left)
		fputc('\n', out);
	else
		fprintf(out, "\n%s is gone from the new check\n", f->finding);
	s->fix.failed += left > 0;
}

void session_fix_check_done(struct session *s)
{
	struct fixflow *f = &s->fix;
	struct fixflow_work *w = f->w;
	struct text_out o;

	if (f->state != FIXFLOW_VERIFYING)
		return;
	text_open(&o);
	fprintf(o.f, "\nverified by a new check:\n");
	f->failed += fix_print_verify(o.f, w->m, w->p, s->d, NULL);
	f->failed += fix_login_verify(o.f, &w->login, s->m, NULL);
	finding_after(s, o.f);
	if (w->login.nlogin && strcmp(f->only, "ssh-key") != 0)
		fprintf(o.f, "\nnodes reached by key only now were not checked before: fix again "
		             "for their other findings\n");
	text_append(s, &o);
	f->state = FIXFLOW_DONE;
	changed(s);
}

/* ---------------------------------------------------------------- apply */

static void verify(struct session *s)
{
	struct fixflow *f = &s->fix;
	struct fixflow_work *w = f->w;
	char err[CD_ERRLEN];
	struct text_out o;

	/* the plan's check becomes the flow's: the new one replaces the session's */
	w->m_owned = 1;
	s->m = NULL;
	s->d = NULL;
	f->state = FIXFLOW_VERIFYING;
	if (session_check_start(s, err, sizeof(err)) < 0) {
		text_open(&o);
		fprintf(o.f, "\nnot verified: the check could not start: %s\n", err);
		text_append(s, &o);
		f->unverified = 1;
		f->state = FIXFLOW_DONE;
	}
	changed(s);
}

static void on_applied(struct loop *loop, void *arg)
{
	struct session *s = arg;
	struct fixflow *f = &s->fix;
	struct fixflow_work *w = f->w;
	struct text_out o;
	const char *lerr = w->login_run ? fix_login_run_journal_error(w->login_run) : "";

	w->timer = 0;
	free(f->text);
	f->text = NULL;
	text_open(&o);
	fprintf(o.f, "applied (run %s):\n", f->run);
	if (w->login_run)
		f->failed += fix_login_run_report(w->login_run, o.f, NULL);
	if (w->p->nactions)
		fix_print_plan(o.f, w->m, w->p, w->results);
	for (size_t i = 0; i < s->nhosts; i++)
		for (size_t k = 0; k < w->p->nodes[i].nactions; k++)
			f->failed += w->results[i][k].status == FIX_FAILED ||
			             w->results[i][k].status == FIX_SKIPPED;
	if (w->jerr[0] || lerr[0])
		fprintf(o.f, "\nthe undo journal could not be saved: %s\n",
		        w->jerr[0] ? w->jerr : lerr);
	f->journalled = w->j->nchanges > 0 && !w->jerr[0] && !lerr[0];
	if (f->journalled)
		fprintf(o.f, "\nundo with: clusterdoc fix --undo %s\n", f->run);
	text_append(s, &o);
	work_disconnect(w);
	verify(s);
}

static void on_plan_applied(void *arg)
{
	next_turn(arg, on_applied);
}

/* After the ssh-key stage (or at once without one): the plan's actions. */
static void apply_plan(struct loop *loop, void *arg)
{
	struct session *s = arg;
	struct fixflow_work *w = s->fix.w;

	w->timer = 0;
	if (!w->p->nactions) {
		on_applied(loop, s);
		return;
	}
	w->results = cd_calloc(s->nhosts, sizeof(*w->results));
	for (size_t i = 0; i < s->nhosts; i++)
		w->results[i] = cd_calloc(w->p->nodes[i].nactions + 1, sizeof(**w->results));
	fix_session_apply(w->fs, w->p, w->j, w->results, w->jerr, sizeof(w->jerr), on_plan_applied,
	                  s);
}

static void on_logged_in(void *arg)
{
	next_turn(arg, apply_plan);
}

int session_fix_apply(struct session *s, const char *password, char *err, size_t errlen)
{
	struct fixflow *f = &s->fix;
	struct fixflow_work *w = f->w;

	if (f->state != FIXFLOW_PLANNED)
		return cd_errf(err, errlen, CD_ERR_REFUSED, "no plan to apply");
	if (!f->changes)
		return cd_errf(err, errlen, CD_ERR_REFUSED, "the plan changes nothing");
	if (session_busy(s))
		return cd_errf(err, errlen, CD_ERR_REFUSED,
		               "a task is running: apply when it has ended");
	if (f->need_password && (!password || !*password))
		return cd_errf(err, errlen, CD_ERR_REFUSED,
		               "no password given: nothing was changed");
	w->j = fix_journal_new(f->run, (const char *const *)s->hosts, s->nhosts);
	f->state = FIXFLOW_APPLYING;
	if (w->login.nlogin) {
		w->login_run = fix_login_start(s->loop, &w->login, w->m, w->d, &w->fo, s->o.pool,
		                               f->need_password ? password : NULL,
		                               (const char *const *)s->hosts, w->j, on_logged_in, s,
		                               err, errlen);
		if (!w->login_run) {
			fail(s, "ssh-key: %s", err);
			return -1;
		}
	} else {
		next_turn(s, apply_plan);
	}
	changed(s);
	return 0;
}
