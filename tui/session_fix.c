/* SPDX-License-Identifier: MIT */
/*
 * session_fix.c - applying a fix from the TUI (session_fix.h): the fix flow
 * (fixers/fix_flow.h) on the session's loop, answered from the screen; here
 * only its text (report/fix_render.h) and the session's check, which the
 * flow's verification waits for.
 */
#include "session.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixers/fix.h"
#include "fixers/fix_flow.h"
#include "fixers/fix_verify.h"
#include "report/fix_render.h"

struct fixflow_work {
	struct fix_opts fo;
	struct fix_flow *flow;
	/* the check the plan was made from: the session's until the verifying
	 * check starts, then the flow's own (m_owned) */
	struct netmodel *m;
	struct diagnosis *d;
	int m_owned;
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

static void changed(struct tui_session *s)
{
	if (s->changed)
		s->changed(s->changed_arg);
}

/* ---------------------------------------------------------------- state */

static void work_free(struct fixflow_work *w)
{
	if (!w)
		return;
	fix_flow_free(w->flow);
	if (w->m_owned) {
		diagnosis_free(w->d);
		netmodel_free(w->m);
	}
	free(w);
}

void session_fix_close(struct tui_session *s)
{
	struct fixflow *f = &s->fix;

	work_free(f->w);
	free(f->text);
	memset(f, 0, sizeof(*f));
	changed(s);
}

static void fail(struct tui_session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct tui_session *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->fix.error, sizeof(s->fix.error), fmt, ap);
	va_end(ap);
	s->fix.state = FIXFLOW_FAILED;
	changed(s);
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

static void text_append(struct tui_session *s, struct text_out *o)
{
	char *old = s->fix.text;

	fclose(o->f);
	s->fix.text = cd_asprintf("%s%s", old ? old : "", o->buf);
	free(old);
	free(o->buf);
}

/* ---------------------------------------------------------------- plan */

static void on_planned(struct tui_session *s)
{
	struct fixflow *f = &s->fix;
	struct fixflow_work *w = f->w;
	const struct fix_flow_report *r = fix_flow_report(w->flow);
	struct text_out o;

	snprintf(f->run, sizeof(f->run), "%s", r->run);
	text_open(&o);
	fprintf(o.f, "plan (run %s); nothing has changed yet:\n", f->run);
	fix_print_login(o.f, &r->login, w->m); /* applied first */
	fix_print_plan(o.f, w->m, r->p, NULL);
	if (r->gathered < r->checked)
		fprintf(o.f,
		        "\n%zu of %zu checked node(s) could not be read: their changes are "
		        "not planned\n",
		        r->checked - r->gathered, r->checked);
	text_append(s, &o);
	f->changes = r->changes;
	f->nodes = r->nodes;
	f->hostkeys = fix_login_hostkeys(&r->login, w->m);
	f->need_password = r->login.need_password;
	if (f->need_password)
		fix_flow_password_prompt(w->flow, f->password_prompt, sizeof(f->password_prompt));
	f->state = FIXFLOW_PLANNED;
	changed(s);
}

static void on_applied(struct tui_session *s);

/* The flow waits for the screen (fix_flow.h): on a loop turn of its own. */
static void on_flow(struct fix_flow *flow, void *arg)
{
	struct tui_session *s = arg;
	const struct fix_flow_report *r = fix_flow_report(flow);

	switch (r->state) {
	case FIX_FLOW_PLANNED:
		on_planned(s);
		break;
	case FIX_FLOW_APPLIED:
		on_applied(s);
		break;
	case FIX_FLOW_PASSWORD: /* the screen gives it with the apply */
		fail(s, "ssh-key: no password given");
		break;
	default: /* FAILED, LOGIN_FAILED: the flow says why */
		fail(s, "%s", r->error);
		break;
	}
}

int session_fix_plan(struct tui_session *s, size_t finding, char *err, size_t errlen)
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
	if (!fix_fixers_for(fd, only, sizeof(only)))
		return cd_errf(err, errlen, CD_ERR_NOTFOUND,
		               "no fixer answers %s: the detail says what to do by hand", fd->id);
	session_fix_close(s);
	snprintf(f->finding, sizeof(f->finding), "%s", fd->id);
	snprintf(f->only, sizeof(f->only), "%s", only);
	f->w = w = cd_calloc(1, sizeof(*w));
	w->fo.only = f->only;
	w->m = s->m;
	w->d = s->d;
	w->flow = fix_flow_start(s->loop,
	                         &(struct fix_flow_opts){.fo = w->fo,
	                                                 .pool = s->o.pool,
	                                                 .hosts = (const char *const *)s->hosts,
	                                                 .nhosts = s->nhosts,
	                                                 .m = s->m,
	                                                 .d = s->d},
	                         on_flow, s, err, errlen);
	if (!w->flow) {
		session_fix_close(s);
		return -1;
	}
	f->state = FIXFLOW_PLANNING;
	changed(s);
	return 0;
}

/* ---------------------------------------------------------------- verify */

/* Whether the finding the fix started from is still in the new diagnosis. */
static void finding_after(struct tui_session *s, FILE *out)
{
	const struct fixflow *f = &s->fix;
	size_t *nodes, n, left = fix_verify_finding(s->d, f->finding, &nodes, &n);

	if (!left) {
		fprintf(out, "\n%s is gone from the new check\n", f->finding);
		return;
	}
	fprintf(out, "\n%s is STILL REPORTED on", f->finding);
	for (size_t q = 0; q < n; q++)
		if (nodes[q] < s->nhosts)
			fprintf(out, " %s", s->hosts[nodes[q]]);
	fputc('\n', out);
	free(nodes);
	s->fix.failed++;
}

void session_fix_check_done(struct tui_session *s)
{
	struct fixflow *f = &s->fix;
	struct fixflow_work *w = f->w;
	const struct fix_flow_report *r;
	char err[CD_ERRLEN];
	struct text_out o;

	if (f->state != FIXFLOW_VERIFYING)
		return;
	r = fix_flow_report(w->flow);
	if (!s->m || fix_flow_verify(w->flow, s->m, s->d, err, sizeof(err)) < 0) {
		fail(s, "%s", s->m ? err : "the verifying check left no model");
		return;
	}
	text_open(&o);
	fprintf(o.f, "\nverified by a new check:\n");
	fix_print_verify(o.f, s->m, &r->verdicts);
	f->failed += r->verdicts.bad;
	finding_after(s, o.f);
	if (r->login.nlogin && fix_checked_selected(&w->fo))
		fprintf(o.f, "\nnodes reached by key only now were not checked before: fix again "
		             "for their other findings\n");
	text_append(s, &o);
	f->state = FIXFLOW_DONE;
	changed(s);
}

/* ---------------------------------------------------------------- apply */

static void verify(struct tui_session *s)
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

static void on_applied(struct tui_session *s)
{
	struct fixflow *f = &s->fix;
	struct fixflow_work *w = f->w;
	const struct fix_flow_report *r = fix_flow_report(w->flow);
	const char *lerr = r->login_ran ? r->login_outcome.journal_error : "";
	struct text_out o;

	free(f->text);
	f->text = NULL;
	text_open(&o);
	fprintf(o.f, "applied (run %s):\n", f->run);
	if (r->login_ran)
		fix_print_login_run(o.f, &r->login, w->m, &r->login_outcome);
	if (r->p->nactions)
		fix_print_plan(o.f, w->m, r->p, r->results);
	f->failed += r->failed;
	if (r->journal_error[0] || lerr[0])
		fprintf(o.f, "\nthe undo journal could not be saved: %s\n",
		        r->journal_error[0] ? r->journal_error : lerr);
	f->journalled = r->j->nchanges > 0 && !r->journal_error[0] && !lerr[0];
	if (f->journalled)
		fprintf(o.f, "\nundo with: clusterdoc fix --undo %s\n", f->run);
	text_append(s, &o);
	verify(s);
}

int session_fix_apply(struct tui_session *s, const char *password, char *err, size_t errlen)
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
	if (fix_flow_apply(w->flow, f->need_password ? password : NULL, err, errlen) < 0)
		return -1;
	f->state = FIXFLOW_APPLYING;
	changed(s);
	return 0;
}
