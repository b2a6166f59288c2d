/* SPDX-License-Identifier: MIT */
/*
 * run.c - `clusterdoc run` on the head: the phases of run.h over the SSH
 * pool, on the phases mnist and bench share (jobphase.h: connect and probe;
 * jobwatch.h: poll and stop): the run's lifecycle, its phases in order,
 * the put, the start, the orphan check and the end. The plan phase is
 * run_plan_phase.c's (its pure parts run_plan.c's), the watch phase's
 * callbacks run_watch.c's (run_internal.h).
 */
#include "jobs/run_internal.h"
#include "homegroups.h"
#include "proto.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void run_say_phase(struct run *r, const char *what)
{
	if (r->ev && r->ev->phase)
		r->ev->phase(r->arg, what);
}

void run_fail(struct run *r, const char *fmt, ...)
{
	va_list ap;

	if (r->r.failed)
		return;
	r->r.failed = 1;
	va_start(ap, fmt);
	vsnprintf(r->r.failure, sizeof(r->r.failure), fmt, ap);
	va_end(ap);
}

void run_node_error(struct run *r, size_t i, const char *code, const char *msg)
{
	struct run_node *n = &r->r.nodes[i];

	if (n->error[0])
		return;
	snprintf(n->error_code, sizeof(n->error_code), "%s", code ? code : "failed");
	snprintf(n->error, sizeof(n->error), "%s", msg ? msg : "failed");
}

static void start_phase(struct run *r, enum run_phase p);
static void done(struct run *r);

static void advance(void *arg)
{
	struct run *r = arg;

	start_phase(r, r->phase + 1);
}

/* ---------------------------------------------------------------- nodes */

static void on_broke(void *arg, size_t i, const char *code, const char *msg)
{
	struct run *r = arg;
	struct run_node *n = &r->r.nodes[i];

	const char *ended = sshpool_node_ended(r->job.nodes[i].pn);

	if (r->nodes[i].gone)
		return;
	r->nodes[i].gone = 1;
	run_node_error(r, i, code, msg);
	if (ended)
		snprintf(n->ended_by_head, sizeof(n->ended_by_head), "%s", ended);
	if (r->phase == RP_WATCH) {
		if (!n->ended) {
			n->ended = 1;
			n->exit_code = -1;
			n->end_ms = cd_now_ms();
		}
		run_fail(r, "%s", n->error);
		jobwatch_stop(&r->watch, 1);
		return;
	}
	if (r->phase == RP_ORPHANS || r->phase == RP_PUT)
		return; /* its answer is settled below, or the put's request fails */
	fanout_settle_all(r->fan, i);
}

static void on_lost(void *arg, size_t i)
{
	struct run *r = arg;

	if (r->phase == RP_WATCH)
		run_finish(r);
	else if (r->phase == RP_ORPHANS)
		fanout_settle_all(r->fan, i);
}

static void facts_args(void *arg, json_t *req)
{
	struct run *r = arg;

	if (r->o.python)
		json_object_set_new(req, "python", json_string(r->o.python));
}

static const struct jobphase_ops job_ops = {
    .info_cmd = "facts", .info_args = facts_args, .broke = on_broke, .lost = on_lost};

/* ---------------------------------------------------------------- put */

static void put_done(void *arg)
{
	struct run *r = arg;

	r->r.put_ms = cd_now_ms() - r->put_started;
	for (size_t i = 0; i < r->n; i++) {
		const struct run_put_node *x = run_put_node(r->put, i);
		struct run_node *n = &r->r.nodes[i];

		n->put_by = x->leader;
		n->files_sent = x->files_sent;
		n->bytes_sent = x->bytes_sent;
		if (x->unsafe) {
			/* another user could change the code: refused, with or without --sync */
			run_node_error(r, i, "unsafe", x->msg);
			if (!r->r.failed)
				run_fail(r, "%s (nothing was started)", x->msg);
			continue;
		}
		if (x->token_of >= 0 && !r->r.warning[0])
			snprintf(r->r.warning, sizeof(r->r.warning),
			         "%s holds %s's home-id token (%s) but not its home: the run's "
			         "files were put on %s too",
			         n->host, r->r.nodes[x->token_of].host, CD_HOME_ID, n->host);
		if (x->err && !r->o.sync && !r->r.warning[0]) {
			/* only hang-ready's file: the job runs, without stack dumps there */
			snprintf(
			    r->r.warning, sizeof(r->r.warning),
			    "hang-ready's file was not put on %s (%.200s): no stack dumps there",
			    n->host, x->msg);
		} else if (x->err && r->o.sync) {
			r->r.sync_failed = 1;
			if (r->r.failed)
				continue;
			run_node_error(r, i, "sync", x->msg);
			run_fail(r, "--sync: %s (nothing was started)", x->msg);
		}
	}
	if (r->r.failed) {
		r->r.could_not_start = 1;
		done(r);
		return;
	}
	start_phase(r, RP_START);
}

/* The files of the run on the nodes, when there are any. */
static void send_put(struct run *r)
{
	if (!r->o.sync && !r->have_hang) {
		start_phase(r, RP_START);
		return;
	}
	run_say_phase(r, "put");
	r->put_started = cd_now_ms();
	r->pns = cd_calloc(r->n, sizeof(*r->pns));
	for (size_t i = 0; i < r->n; i++)
		r->pns[i] = r->nodes[i].gone ? NULL : r->job.nodes[i].pn;
	r->put =
	    run_put_start(r->loop, r->pns, r->n, r->o.sync, r->have_hang ? &r->hang.site : NULL,
	                  r->r.run_dir, r->o.request_timeout_ms, put_done, r);
}

/* ---------------------------------------------------------------- start */

static void on_started(struct sshpool_node *pn, json_t *result, const char *code, const char *msg,
                       void *arg)
{
	struct run *r = arg;
	size_t i = jobphase_index(pn);

	if (jobphase_reply_failed(&r->job, pn, result, code, msg, "starting the command"))
		return;
	r->r.nodes[i].started = 1;
	r->r.nodes[i].start_ms = cd_now_ms();
	/* what the head ends itself should this agent stop answering */
	sshpool_node_set_job(pn, json_integer_value(json_object_get(result, "pid")),
	                     json_integer_value(json_object_get(result, "pgid")),
	                     r->o.kill_grace_ms);
	fanout_settle(r->fan, i);
}

static void send_starts(struct run *r)
{
	run_say_phase(r, "start");
	r->job_started = cd_now_ms();
	r->r.plan_ms = r->job_started - r->started;
	for (size_t i = 0; i < r->n; i++) {
		struct run_node *n = &r->r.nodes[i];
		json_t *req = proto_request(0, "proc_start");
		char cwd[1024];

		snprintf(cwd, sizeof(cwd), "%s", r->r.cwd);
		json_object_set_new(req, "cwd", json_string(cwd));
		json_object_set(req, "argv", n->argv);
		json_object_set(req, "env", n->env);
		json_object_set_new(req, "grace_ms", json_integer(r->o.kill_grace_ms));
		fanout_expect(r->fan, i, 1);
		sshpool_request(r->job.nodes[i].pn, req, r->o.request_timeout_ms, on_started, r);
	}
}

/* ---------------------------------------------------------------- orphans */

static void on_orphans(struct sshpool_node *pn, json_t *result, const char *code, const char *msg,
                       void *arg)
{
	struct run *r = arg;
	size_t i = jobphase_index(pn);

	if (r->phase != RP_ORPHANS)
		return;
	if (!result) {
		/* the check is best effort: a node gone says so in its error */
		fanout_settle(r->fan, i);
		return;
	}
	r->r.nodes[i].orphans = json_incref(json_object_get(result, "processes"));
	r->r.nodes[i].gpu_holders = json_incref(json_object_get(result, "gpu_holders"));
	fanout_settle(r->fan, i);
}

static void send_orphan_checks(struct run *r)
{
	run_say_phase(r, "orphans");
	for (size_t i = 0; i < r->n; i++) {
		json_t *req;

		if (r->nodes[i].gone || !r->r.nodes[i].started)
			continue;
		req = proto_request(0, "run_orphans");
		json_object_set_new(req, "run", json_string(r->r.run_id));
		json_object_set(req, "node_rank", json_object_get(r->r.nodes[i].env, "NODE_RANK"));
		fanout_expect(r->fan, i, 1);
		sshpool_request(r->job.nodes[i].pn, req, r->o.request_timeout_ms, on_orphans, r);
	}
}

/* ---------------------------------------------------------------- end */

/* The root cause (run_cause.h): a node that failed on its own, or whose
 * torchrun named a failed worker, and not because a peer went away; the
 * earliest such by its first error line, else by its end. */
static long root_cause(struct run *r)
{
	long best;

	for (size_t i = 0; i < r->n; i++) {
		const struct run_node *n = &r->r.nodes[i];
		struct run_cause_node *c = &r->nodes[i].cause;

		c->failed_alone = n->error[0] && !n->stopped;
		c->first_error_ms = n->first_error_ms;
		c->end_ms = n->end_ms;
	}
	struct run_cause_node *all = cd_calloc(r->n ? r->n : 1, sizeof(*all));

	for (size_t i = 0; i < r->n; i++)
		all[i] = r->nodes[i].cause;
	best = run_cause_pick(all, r->n);
	free(all);
	/* the headline is the first node that ended: name the root cause instead,
	 * and its failed worker where torchrun reported one (the node's first error
	 * line may be another worker's, a victim's) */
	if (best >= 0 && r->failure_node >= 0 &&
	    (best != r->failure_node || r->r.nodes[best].worker_failed)) {
		const struct run_node *n = &r->r.nodes[best];

		if (n->worker_failed && n->worker_exit < 0)
			snprintf(r->r.failure, sizeof(r->r.failure),
			         "%s r%d: the worker was killed by signal %d (torchrun's report)",
			         n->host, n->worker_rank, -n->worker_exit);
		else if (n->worker_failed)
			snprintf(r->r.failure, sizeof(r->r.failure),
			         "%s r%d: the worker exited with %d (torchrun's report)", n->host,
			         n->worker_rank, n->worker_exit);
		else
			snprintf(r->r.failure, sizeof(r->r.failure),
			         "%s r%d: the command exited with %d%s%.300s", n->host,
			         n->first_rank, n->exit_code, n->first_error[0] ? ": " : "",
			         n->first_error);
	}
	return best;
}

static void done(struct run *r)
{
	r->phase = RP_DONE;
	fanout_close(r->fan);
	jobwatch_end(&r->watch);
	rdzvwatch_end(&r->rdzv);
	r->r.root_cause = root_cause(r);
	r->r.exit_status = run_exit_status(&r->r);
	r->r.elapsed_ms = cd_now_ms() - r->started;
	if (r->ev && r->ev->done)
		r->ev->done(r->arg);
}

/* Every job has ended (or its node is gone): the orphan check, then done. */
void run_finish(struct run *r)
{
	if (r->phase != RP_WATCH)
		return;
	for (size_t i = 0; i < r->n; i++) {
		if (r->r.nodes[i].started && !r->r.nodes[i].ended && !r->nodes[i].gone)
			return;
	}
	r->r.job_ms = cd_now_ms() - r->job_started;
	jobwatch_end(&r->watch);
	rdzvwatch_end(&r->rdzv);
	r->phase = RP_ORPHANS;
	send_orphan_checks(r);
	fanout_begin(r->fan);
}

static void start_phase(struct run *r, enum run_phase p)
{
	r->phase = p;
	switch (p) {
	case RP_PROBE:
		return;
	case RP_PUT:
		if (!r->r.failed)
			run_plan_phase(r);
		if (r->r.failed || r->o.dry_run) {
			if (r->r.failed && !r->r.planned)
				r->r.could_not_start = 1;
			done(r);
			return;
		}
		send_put(r);
		return;
	case RP_START:
		if (r->r.failed) {
			r->r.could_not_start = 1;
			done(r);
			return;
		}
		send_starts(r);
		fanout_begin(r->fan);
		return;
	case RP_WATCH:
		run_say_phase(r, "watch");
		r->r.start_ms = cd_now_ms() - r->job_started;
		for (size_t i = 0; i < r->n; i++) {
			if (!r->r.nodes[i].started && !r->r.failed) {
				run_fail(r, "%s (the job needs every node; stopped the others)",
				         r->r.nodes[i].error[0] ? r->r.nodes[i].error
				                                : r->r.nodes[i].host);
				r->r.could_not_start = 1;
			}
		}
		if (r->r.failed)
			jobwatch_stop(&r->watch, 1);
		rdzvwatch_start(&r->rdzv, r->r.master_addr, r->o.master_port, r->r.run_id,
		                r->o.launcher == RUN_TORCHRUN, cd_now_ms());
		jobwatch_start(&r->watch);
		run_finish(r); /* when nothing started at all */
		return;
	case RP_ORPHANS:
		return; /* run_finish() enters it */
	case RP_DONE:
		done(r);
		return;
	}
}

/* ---------------------------------------------------------------- api */

void run_opts_init(struct run_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->launcher = RUN_TORCHRUN;
	o->nproc_per_node = 1;
	o->master_port = 29500;
	o->kill_grace_ms = 3000;
	o->request_timeout_ms = 30000;
	o->rendezvous_timeout_ms = RDZVWATCH_DEFAULT_MS;
}

struct run *run_start(struct loop *loop, struct sshpool *pool, const char *const *hosts, size_t n,
                      const struct run_opts *o, const struct run_events *ev, void *arg)
{
	struct run *r = cd_calloc(1, sizeof(*r));

	r->loop = loop;
	r->pool = pool;
	r->o = *o;
	r->ev = ev;
	r->arg = arg;
	r->started = cd_now_ms();
	r->n = n;
	r->m = netmodel_new(hosts, n);
	r->plan = o->plan && o->plan->n == n ? job_plan_copy(o->plan) : job_plan_new(hosts, n, 0);
	r->nodes = cd_calloc(n ? n : 1, sizeof(*r->nodes));
	r->fan = fanout_new(loop, n, advance, r);
	jobphase_init(&r->job, pool, hosts, n, r->fan, o->request_timeout_ms, 1, &job_ops, r);
	jobwatch_init(&r->watch, loop, &r->job, &run_watch_ops, r, o->request_timeout_ms,
	              o->kill_grace_ms, o->launcher == RUN_TORCHRUN ? RUN_TORCHRUN_REPORT_MS : 0);
	rdzvwatch_init(&r->rdzv, &r->job, &run_rdzv_ops, r, o->rendezvous_timeout_ms,
	               o->request_timeout_ms);
	r->r.rendezvous = &r->rdzv;
	r->r.nodes = cd_calloc(n ? n : 1, sizeof(*r->r.nodes));
	r->r.nnodes = n;
	r->r.launcher = o->launcher;
	r->r.master_port = o->master_port;
	r->r.root_cause = -1;
	if (o->run_id)
		snprintf(r->r.run_id, sizeof(r->r.run_id), "%s", o->run_id);
	else
		run_id_make(r->r.run_id);
	for (size_t i = 0; i < n; i++) {
		r->r.nodes[i].host = r->m->nodes[i].host;
		r->r.nodes[i].put_by = -1;
		run_cause_init(&r->nodes[i].cause);
	}
	r->failure_node = -1;
	r->phase = RP_PROBE;
	run_say_phase(r, "probe");
	if (n == 0) {
		run_fail(r, "no nodes");
		r->r.could_not_start = 1;
	}
	fanout_begin(r->fan);
	if (!r->r.failed)
		jobphase_start(&r->job, pool);
	return r;
}

void run_stop(struct run *r, const char *why)
{
	if (!r || r->phase == RP_DONE || r->phase == RP_ORPHANS)
		return;
	r->r.interrupted = 1;
	if (r->phase != RP_WATCH && !r->r.failed)
		r->r.could_not_start = 1;
	run_fail(r, "%s", why ? why : "stopped");
	if (r->phase == RP_WATCH || r->phase == RP_START)
		jobwatch_stop(&r->watch, 1);
}

const struct run_report *run_report(const struct run *r)
{
	return &r->r;
}

void run_free(struct run *r)
{
	if (!r)
		return;
	fanout_free(r->fan);
	run_put_free(r->put);
	free(r->pns);
	if (r->have_hang)
		hangready_free(&r->hang);
	jobwatch_fini(&r->watch);
	rdzvwatch_fini(&r->rdzv);
	jobphase_fini(&r->job);
	for (size_t i = 0; i < r->n; i++) {
		json_decref(r->r.nodes[i].argv);
		json_decref(r->r.nodes[i].env);
		json_decref(r->r.nodes[i].orphans);
		json_decref(r->r.nodes[i].gpu_holders);
	}
	free(r->nodes);
	free(r->r.nodes);
	netmodel_free(r->m);
	job_plan_free(r->plan);
	free(r);
}
