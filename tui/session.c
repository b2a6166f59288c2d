/* SPDX-License-Identifier: MIT */
/*
 * session.c - the TUI's tasks on the head's event loop (session.h).
 */
#include "session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"

const char *task_state_name(enum task_state s)
{
	static const char *const names[] = {
	    [TASK_IDLE] = "not run",
	    [TASK_RUNNING] = "running",
	    [TASK_DONE] = "done",
	    [TASK_FAILED] = "failed",
	};
	return names[s];
}

void session_changed(struct tui_session *s)
{
	if (s->changed)
		s->changed(s->changed_arg);
}

void session_init(struct tui_session *s, struct loop *loop, const struct tui_session_opts *o)
{
	memset(s, 0, sizeof(*s));
	s->loop = loop;
	s->o = *o;
}

/* ---------------------------------------------------------------- check */

static void check_stop(struct tui_session *s)
{
	netcheck_free(s->nc);
	s->nc = NULL;
	sshpool_free(s->check_pool);
	s->check_pool = NULL;
}

static void check_clear(struct tui_session *s)
{
	check_stop(s);
	diagnosis_free(s->d);
	s->d = NULL;
	netmodel_free(s->m);
	s->m = NULL;
	s->check_state = TASK_IDLE;
}

static void on_check_done(void *arg)
{
	struct tui_session *s = arg;

	s->d = diagnose(s->m);
	s->check_state = TASK_DONE;
	s->check_ended_ms = cd_now_ms();
	session_fix_check_done(s);
	session_changed(s);
}

/* The check's deadline closed the nodes that still owed an answer. */
static void on_check_expired(void *arg)
{
	struct tui_session *s = arg;

	s->check_deadline_hit = 1;
	session_changed(s);
}

/*
 * The re-check (r) over the agents the last check left connected
 * (keep_connected): no new SSH handshake, only nodes lost since connect
 * anew. None to reuse: no finished check, or the check that verifies a fix,
 * which must see the login files as the fix left them through new logins.
 * Takes m on success (the old check's model and diagnosis are freed).
 */
static int check_again(struct tui_session *s, struct netmodel *m)
{
	struct netcheck *nc;

	if (!s->nc || !s->check_pool || s->check_state != TASK_DONE ||
	    s->fix.state == FIXFLOW_VERIFYING)
		return 0;
	nc = netcheck_again(s->nc, m, &s->o.check, on_check_done, s);
	if (!nc)
		return 0;
	netcheck_free(s->nc);
	s->nc = nc;
	diagnosis_free(s->d);
	s->d = NULL;
	netmodel_free(s->m);
	s->m = m;
	s->check_reused++;
	return 1;
}

int session_check_start(struct tui_session *s, char *err, size_t errlen)
{
	struct netmodel *m;

	if (s->check_state == TASK_RUNNING)
		return cd_errf(err, errlen, CD_ERR_REFUSED, "the check is running already");
	if (!s->nhosts)
		return cd_errf(err, errlen, CD_ERR_NOTFOUND, "no nodes: give a hostlist first");
	if (s->fix.state == FIXFLOW_PLANNING || s->fix.state == FIXFLOW_APPLYING)
		return cd_errf(err, errlen, CD_ERR_REFUSED,
		               "a fix is being %s: the check follows it",
		               s->fix.state == FIXFLOW_PLANNING ? "planned" : "applied");
	if (s->fix.state == FIXFLOW_PLANNED)
		session_fix_close(s); /* the plan was made from the check it replaces */
	s->o.check.request_timeout_ms = s->o.pool->request_timeout_ms;
	s->o.check.keep_connected = 1; /* for the next re-check */
	m = netmodel_new((const char *const *)s->hosts, s->nhosts);
	if (!check_again(s, m)) {
		check_clear(s);
		s->m = m;
		s->check_pool =
		    sshpool_new(s->loop, s->o.pool, s->check_error, sizeof(s->check_error));
		if (!s->check_pool) {
			s->check_state = TASK_FAILED;
			return cd_errf(err, errlen, CD_ERR_IO, "%s", s->check_error);
		}
		s->nc = netcheck_start(s->loop, s->check_pool, s->m, &s->o.check, on_check_done, s);
	}
	s->check_error[0] = 0;
	s->check_state = TASK_RUNNING;
	s->check_runs++;
	s->check_deadline_hit = 0;
	s->check_started_ms = cd_now_ms();
	s->check_ended_ms = 0;
	netcheck_set_deadline(s->nc, s->o.deadline_s, on_check_expired, s);
	session_changed(s);
	return 0;
}

enum netcheck_stage session_node_stage(const struct tui_session *s, size_t i)
{
	if (!s->nc || i >= s->nhosts)
		return NCS_QUEUED;
	return netcheck_node_stage(s->nc, i);
}

void session_check_progress(const struct tui_session *s, struct check_progress *p)
{
	memset(p, 0, sizeof(*p));
	p->nodes = s->nhosts;
	p->phase = s->nc ? netcheck_phase_name(s->nc) : "not run";
	for (size_t i = 0; s->nc && i < s->nhosts; i++) {
		enum netcheck_stage st = netcheck_node_stage(s->nc, i);

		p->connected += st >= NCS_STARTING && st != NCS_FAILED;
		p->probed += s->m->nodes[i].probed;
		p->failed += st == NCS_FAILED;
	}
}

size_t session_node_findings(const struct tui_session *s, size_t i)
{
	size_t n = 0;

	for (size_t k = 0; s->d && k < s->d->nfindings; k++)
		n += finding_names(&s->d->findings[k], i) != 0;
	return n;
}

size_t session_node_gpu_findings(const struct tui_session *s, size_t i,
                                 const struct finding **worst)
{
	size_t n = 0;

	*worst = NULL;
	for (size_t k = 0; s->d && k < s->d->nfindings; k++) {
		const struct finding *f = &s->d->findings[k];

		if (strncmp(f->id, "gpu-", 4) != 0 || !finding_names(f, i))
			continue;
		if (!*worst) /* diagnose sorts the findings worst first */
			*worst = f;
		n++;
	}
	return n;
}

/* ---------------------------------------------------------------- bench */

static void bench_clear(struct tui_session *s)
{
	bench_free(s->bench);
	s->bench = NULL;
	sshpool_free(s->bench_pool);
	s->bench_pool = NULL;
	s->bench_state = TASK_IDLE;
}

static void on_bench_done(void *arg)
{
	struct tui_session *s = arg;
	const struct bench_report *r = bench_report(s->bench);

	s->bench_state = r->nsizes && !r->stop.bytes ? TASK_DONE : TASK_FAILED;
	s->bench_ended_ms = cd_now_ms();
	session_changed(s);
}

int session_bench_start(struct tui_session *s, char *err, size_t errlen)
{
	if (s->bench_state == TASK_RUNNING)
		return cd_errf(err, errlen, CD_ERR_REFUSED, "the bench is running already");
	if (!s->nhosts)
		return cd_errf(err, errlen, CD_ERR_NOTFOUND, "no nodes: give a hostlist first");
	bench_clear(s);
	s->bench_pool = sshpool_new(s->loop, s->o.pool, s->bench_error, sizeof(s->bench_error));
	if (!s->bench_pool) {
		s->bench_state = TASK_FAILED;
		return cd_errf(err, errlen, CD_ERR_IO, "%s", s->bench_error);
	}
	s->bench_error[0] = 0;
	s->bench_state = TASK_RUNNING;
	s->bench_started_ms = cd_now_ms();
	s->bench_ended_ms = 0;
	s->o.bench.request_timeout_ms = s->o.pool->request_timeout_ms;
	s->bench = bench_start(s->loop, s->bench_pool, (const char *const *)s->hosts, s->nhosts,
	                       &s->o.bench, on_bench_done, s);
	session_changed(s);
	return 0;
}

const struct bench_report *session_bench_report(const struct tui_session *s)
{
	return s->bench ? bench_report(s->bench) : NULL;
}

/* ---------------------------------------------------------------- job */

static void lines_clear(struct tui_session *s)
{
	for (size_t i = 0; i < s->nlines; i++)
		free(s->lines[i].text);
	free(s->lines);
	s->lines = NULL;
	s->nlines = 0;
	s->lines_dropped = 0;
}

void session_job_clear(struct tui_session *s)
{
	/* The pool first, as the commands do: it fails what is still pending (a
	 * poll of a job just stopped) into the flow's callbacks while the flow
	 * lives; freed after it, the flow would be called back freed. */
	sshpool_free(s->job_pool);
	s->job_pool = NULL;
	mnist_free(s->job);
	s->job = NULL;
	session_run_clear(s);
	lines_clear(s);
	s->job_phase[0] = 0;
	s->data_got = s->data_total = 0;
	s->job_state = TASK_IDLE;
}

void session_job_add_line(struct tui_session *s, size_t node, int rank, const char *stream,
                          const char *text)
{
	struct job_line *l;

	if (s->nlines == SESSION_JOB_LINES) {
		free(s->lines[0].text);
		memmove(s->lines, s->lines + 1, (s->nlines - 1) * sizeof(*s->lines));
		s->nlines--;
		s->lines_dropped++;
	}
	if (!s->lines)
		s->lines = cd_calloc(SESSION_JOB_LINES, sizeof(*s->lines));
	l = &s->lines[s->nlines++];
	l->node = node;
	l->rank = rank;
	snprintf(l->stream, sizeof(l->stream), "%s", stream);
	l->text = cd_strdup(text);
	l->at_ms = cd_now_ms() - s->job_started_ms;
	session_changed(s);
}

static void on_job_line(void *arg, size_t node, const char *stream, const char *text)
{
	session_job_add_line(arg, node, -1, stream, text);
}

static void on_job_data(void *arg, enum mnist_file f, long long got, long long total)
{
	struct tui_session *s = arg;

	(void)f;
	s->data_got = got;
	s->data_total = total;
	session_changed(s);
}

static void on_job_phase(void *arg, const char *what)
{
	struct tui_session *s = arg;

	snprintf(s->job_phase, sizeof(s->job_phase), "%s", what);
	session_changed(s);
}

static void on_job_done(void *arg)
{
	struct tui_session *s = arg;
	const struct mnist_report *r = mnist_report(s->job);

	s->job_state = r->failed ? TASK_FAILED : TASK_DONE;
	s->job_ended_ms = cd_now_ms();
	session_changed(s);
}

static const struct mnist_events job_events = {
    .line = on_job_line,
    .data_progress = on_job_data,
    .phase = on_job_phase,
    .done = on_job_done,
};

int session_job_start(struct tui_session *s, char *err, size_t errlen)
{
	struct mnist_opts o;
	struct job_plan *plan;

	if (s->job_state == TASK_RUNNING)
		return cd_errf(err, errlen, CD_ERR_REFUSED, "the %s is running already",
		               SESSION_JOB_KIND(s)->name);
	if (!s->nhosts)
		return cd_errf(err, errlen, CD_ERR_NOTFOUND, "no nodes: give a hostlist first");
	session_job_clear(s);
	s->job_kind = JOB_MNIST;
	s->job_pool = sshpool_new(s->loop, s->o.pool, s->job_error, sizeof(s->job_error));
	if (!s->job_pool) {
		s->job_state = TASK_FAILED;
		return cd_errf(err, errlen, CD_ERR_IO, "%s", s->job_error);
	}
	s->job_error[0] = 0;
	s->job_state = TASK_RUNNING;
	s->job_started_ms = cd_now_ms();
	s->job_ended_ms = 0;
	s->o.mnist.request_timeout_ms = s->o.pool->request_timeout_ms;
	o = s->o.mnist;
	o.plan = plan = session_plan(s, s->o.mnist.master_port, s->o.mnist.iface);
	s->job = mnist_start(s->loop, s->job_pool, (const char *const *)s->hosts, s->nhosts, &o,
	                     &job_events, s);
	job_plan_free(plan);
	session_changed(s);
	return 0;
}

struct job_plan *session_plan(const struct tui_session *s, int port, const char *iface)
{
	struct job_plan *plan;

	if (s->check_state != TASK_DONE || !s->d || !s->m || s->d->nnodes != s->nhosts)
		return NULL;
	plan = job_plan_from_check(s->m, s->d, port, iface);
	job_plan_use_port(plan, port);
	return plan;
}

const struct mnist_report *session_job_report(const struct tui_session *s)
{
	return s->job && s->job_kind == JOB_MNIST ? mnist_report(s->job) : NULL;
}

/* ---------------------------------------------------------------- hosts */

int session_busy(const struct tui_session *s)
{
	return (s->check_state == TASK_RUNNING) + (s->bench_state == TASK_RUNNING) +
	       (s->job_state == TASK_RUNNING) + (s->burn_state == TASK_RUNNING) +
	       (s->fix.state == FIXFLOW_PLANNING) + (s->fix.state == FIXFLOW_APPLYING);
}

void session_keepalive_hold(struct tui_session *s, int hold_ms)
{
	struct sshpool *pools[] = {s->check_pool, s->bench_pool, s->job_pool, s->hang_pool,
	                           s->burn_pool};

	for (size_t i = 0; i < CD_ARRAY_LEN(pools); i++)
		sshpool_keepalive_hold(pools[i], hold_ms); /* NULL: none */
}

char *session_hosts_folded(const struct tui_session *s)
{
	struct hostlist hl = {.names = s->hosts, .count = s->nhosts, .capacity = s->nhosts};

	return hostlist_fold(&hl); /* it reads the names, never changes them */
}

static void hosts_free(struct tui_session *s)
{
	for (size_t i = 0; i < s->nhosts; i++)
		free(s->hosts[i]);
	free(s->hosts);
	s->hosts = NULL;
	s->nhosts = 0;
}

int session_set_hosts(struct tui_session *s, const char *expr, char *err, size_t errlen)
{
	struct hostlist *hl;
	int rc;

	if (session_busy(s))
		return cd_errf(err, errlen, CD_ERR_REFUSED,
		               "a task is running: wait for it before changing the nodes");
	hl = hostlist_new();
	hl->groups = s->o.groups;
	rc = hostlist_add_arg(hl, expr, err, errlen);
	if (rc == 0 && !hostlist_count(hl))
		rc = cd_errf(err, errlen, CD_ERR_NOTFOUND, "no nodes in \"%s\"", expr);
	if (rc < 0) {
		hostlist_free(hl);
		return rc;
	}
	session_fix_close(s);
	check_clear(s);
	bench_clear(s);
	session_burn_clear(s);
	session_job_clear(s);
	hosts_free(s);
	s->nhosts = hostlist_count(hl);
	s->hosts = cd_calloc(s->nhosts, sizeof(*s->hosts));
	for (size_t i = 0; i < s->nhosts; i++)
		s->hosts[i] = cd_strdup(hl->names[i]);
	hostlist_free(hl);
	session_changed(s);
	return 0;
}

void session_fini(struct tui_session *s)
{
	s->changed = NULL;
	session_fix_close(s);
	check_clear(s);
	bench_clear(s);
	session_burn_clear(s);
	session_job_clear(s);
	hosts_free(s);
}
