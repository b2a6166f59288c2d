/*
 * run.c - `clusterdoc run` on the head: the phases of run.h over the SSH
 * pool, on the phases mnist and bench share (jobphase.h: connect and probe;
 * jobwatch.h: poll and stop). The pure plan is in run_plan.c.
 */
#include "jobs/run.h"
#include "collectives/bench.h"
#include "collectives/jobphase.h"
#include "jobs/hangready.h"
#include "jobs/jobwatch.h"
#include "jobs/rdzvwatch.h"
#include "jobs/run_cause.h"
#include "jobs/run_put.h"
#include "jobs/torchrun.h"
#include "homegroups.h"
#include "fanout.h"
#include "proto.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum run_phase { RP_PROBE, RP_PUT, RP_START, RP_WATCH, RP_ORPHANS, RP_DONE };

struct run_node_state {
	int gone;
	const char *python; /* facts' interpreter (borrowed from its answer) */
	struct run_cause_node cause;
};

struct run {
	struct loop *loop;
	struct sshpool *pool;
	struct run_opts o;
	const struct run_events *ev;
	void *arg;
	struct netmodel *m;
	struct job_plan *plan; /* the job's: a copy of o.plan, or the probes' picks */
	struct run_node_state *nodes;
	size_t n;
	struct fanout *fan;
	struct jobphase job;
	struct jobwatch watch;
	struct rdzvwatch rdzv;
	enum run_phase phase;
	int64_t started, put_started, job_started;
	struct hangready hang; /* the first node's: its site file is every node's */
	int have_hang;
	struct run_put *put;
	struct sshpool_node **pns; /* the put's nodes (NULL: gone) */
	long failure_node;         /* the node whose end wrote r.failure, -1: none */
	struct run_report r;
};

static void say_phase(struct run *r, const char *what)
{
	if (r->ev && r->ev->phase)
		r->ev->phase(r->arg, what);
}

static void fail_run(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail_run(struct run *r, const char *fmt, ...)
{
	va_list ap;

	if (r->r.failed)
		return;
	r->r.failed = 1;
	va_start(ap, fmt);
	vsnprintf(r->r.failure, sizeof(r->r.failure), fmt, ap);
	va_end(ap);
}

static void node_error(struct run *r, size_t i, const char *code, const char *msg)
{
	struct run_node *n = &r->r.nodes[i];

	if (n->error[0])
		return;
	snprintf(n->error_code, sizeof(n->error_code), "%s", code ? code : "failed");
	snprintf(n->error, sizeof(n->error), "%s", msg ? msg : "failed");
}

static void start_phase(struct run *r, enum run_phase p);
static void finish(struct run *r);
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
	node_error(r, i, code, msg);
	if (ended)
		snprintf(n->ended_by_head, sizeof(n->ended_by_head), "%s", ended);
	if (r->phase == RP_WATCH) {
		if (!n->ended) {
			n->ended = 1;
			n->exit_code = -1;
			n->end_ms = cd_now_ms();
		}
		fail_run(r, "%s", n->error);
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
		finish(r);
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

/* ---------------------------------------------------------------- plan */

static int gpu_count(json_t *facts)
{
	json_t *gpus = json_object_get(facts, "gpus");

	return json_is_array(gpus) ? (int)json_array_size(gpus) : 0;
}

/* --backend hccl on nodes without an NPU or torch_npu: refused, naming them. */
static int hccl_refused(struct run *r)
{
	const char **hosts = cd_calloc(r->n ? r->n : 1, sizeof(*hosts));
	const char **missing = cd_calloc(r->n ? r->n : 1, sizeof(*missing));
	char why[CD_ERRLEN];
	int refused;

	for (size_t i = 0; i < r->n; i++) {
		hosts[i] = r->r.nodes[i].host;
		missing[i] = run_hccl_missing(r->job.nodes[i].info);
		if (missing[i])
			node_error(r, i, "no-hccl", missing[i]);
	}
	refused = run_hccl_refusal(hosts, missing, r->n, why, sizeof(why));
	if (refused) {
		fail_run(r, "%s (nothing was started)", why);
		r->r.could_not_start = 1;
	}
	free(hosts);
	free(missing);
	return refused;
}

static void plan(struct run *r)
{
	char err[CD_ERRLEN];
	const char **hosts = NULL, **ifaces = NULL;
	int rank = 0, *nranks = NULL;

	for (size_t i = 0; i < r->n; i++) {
		if (r->nodes[i].gone) {
			fail_run(r, "%s (the job needs every node; nothing was started)",
			         r->r.nodes[i].error);
			r->r.could_not_start = 1;
			return;
		}
	}
	for (size_t i = 0; i < r->n && r->o.launcher == RUN_TORCHRUN; i++) {
		const char *why = torchrun_missing(r->job.nodes[i].info, r->r.nodes[i].host,
		                                   r->o.python, err, sizeof(err));

		if (why) {
			node_error(r, i, "no-torch", why);
			fail_run(
			    r,
			    "%s: torchrun needs PyTorch on every node: install it, pass --python "
			    "with an interpreter that has it, or --launcher none",
			    why);
			r->r.could_not_start = 1;
			return;
		}
	}
	if (r->o.hccl && hccl_refused(r))
		return;
	for (size_t i = 0; i < r->n; i++) {
		struct run_node *n = &r->r.nodes[i];
		json_t *facts = r->job.nodes[i].info, *torch = json_object_get(facts, "torch");

		netmodel_set_node(r->m, i, r->job.nodes[i].probe, NULL);
		if (job_plan_pick_node(r->plan, i, &r->m->nodes[i], r->o.iface, err, sizeof(err)) <
		    0) {
			node_error(r, i, "address", err);
			fail_run(r, "%s", err);
			r->r.could_not_start = 1;
			return;
		}
		snprintf(n->ifname, sizeof(n->ifname), "%s", r->plan->nodes[i].ifname);
		snprintf(n->addr, sizeof(n->addr), "%s", r->plan->nodes[i].addr);
		n->proved = r->plan->nodes[i].proved;
		snprintf(n->torch_version, sizeof(n->torch_version), "%s",
		         json_string_value(json_object_get(torch, "version")) ?: "");
		r->nodes[i].python =
		    json_string_value(json_object_get(json_object_get(facts, "python"), "path"));
		n->gpus = gpu_count(facts);
		n->first_rank = rank;
		n->nranks = run_plan_nproc(&r->o, facts);
		rank += n->nranks;
	}
	r->r.nranks = rank;
	job_plan_default_master(r->plan, r->o.master_port);
	snprintf(r->r.master_addr, sizeof(r->r.master_addr), "%s", r->plan->master_addr);
	r->r.master_port = r->plan->master_port;
	run_plan_dir(&r->o, r->r.run_id, r->r.run_dir, sizeof(r->r.run_dir));
	snprintf(r->r.cwd, sizeof(r->r.cwd), "%s",
	         r->o.sync    ? r->r.run_dir
	         : r->o.chdir ? r->o.chdir
	                      : "~/");
	r->r.synced = r->o.sync != NULL;
	/* every node, for mpirun's hostfile */
	hosts = cd_calloc(r->n, sizeof(*hosts));
	ifaces = cd_calloc(r->n, sizeof(*ifaces));
	nranks = cd_calloc(r->n, sizeof(*nranks));
	for (size_t i = 0; i < r->n; i++) {
		hosts[i] = r->r.nodes[i].host;
		ifaces[i] = r->r.nodes[i].ifname;
		nranks[i] = r->r.nodes[i].nranks;
	}
	for (size_t i = 0; i < r->n; i++) {
		struct run_node *n = &r->r.nodes[i];
		struct run_vars v = {
		    .hosts = hosts,
		    .nranks = nranks,
		    .ifaces = ifaces,
		    .run_dir = r->r.run_dir,
		    .node_rank = (int)i,
		    .nnodes = (int)r->n,
		    .nproc_per_node = n->nranks,
		    .world_size = rank,
		    .master_port = r->r.master_port,
		    .master_addr = r->r.master_addr,
		    .host = n->host,
		    .iface = n->ifname,
		    .plan = r->plan,
		};
		const char *python = r->o.python ? r->o.python : r->nodes[i].python;

		if (run_plan_node(&r->o, r->r.run_id, &v, python, n->torch_version, n->addr,
		                  &n->argv, &n->env, err, sizeof(err)) < 0 ||
		    (!r->o.no_hang_ready &&
		     run_plan_hang_ready(&r->o, r->r.run_dir, n->torch_version, n->env,
		                         r->have_hang ? NULL : &r->hang, err, sizeof(err)) < 0)) {
			fail_run(r, "%s", err);
			r->r.could_not_start = 1;
			goto out;
		}
		if (!r->o.no_hang_ready) {
			r->have_hang = 1;
			r->r.dump_signal = r->hang.dump_signal;
		}
	}
	if (r->o.sync && r->have_hang &&
	    runsync_manifest_add(r->o.sync, &r->hang.site, err, sizeof(err)) < 0) {
		fail_run(r,
		         "--sync: %s (clusterdoc's hang-ready file; --no-hang-ready leaves it out)",
		         err);
		r->r.could_not_start = 1;
		goto out;
	}
	r->r.sync_files = r->o.sync ? r->o.sync->n : 0;
	r->r.planned = 1;
out:
	free(hosts);
	free(ifaces);
	free(nranks);
}

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
			node_error(r, i, "unsafe", x->msg);
			if (!r->r.failed)
				fail_run(r, "%s (nothing was started)", x->msg);
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
			node_error(r, i, "sync", x->msg);
			fail_run(r, "--sync: %s (nothing was started)", x->msg);
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
	say_phase(r, "put");
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
	say_phase(r, "start");
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

/* ---------------------------------------------------------------- watch */

static int w_running(void *arg, size_t i)
{
	struct run *r = arg;

	return r->phase == RP_WATCH && r->r.nodes[i].started && !r->r.nodes[i].ended &&
	       !r->nodes[i].gone;
}

static void w_line(void *arg, size_t i, int64_t wall, const char *stream, const char *text)
{
	struct run *r = arg;
	struct run_node *n = &r->r.nodes[i];
	struct run_line *l = &n->tail[n->tail_next];
	int local;

	l->wall = wall;
	snprintf(l->stream, sizeof(l->stream), "%s", stream);
	snprintf(l->text, sizeof(l->text), "%s", text);
	n->tail_next = (n->tail_next + 1) % RUN_TAIL_LINES;
	if (n->tail_n < RUN_TAIL_LINES)
		n->tail_n++;
	const char *rest = run_cause_strip(text, &local);
	int is_error = torchrun_is_error_line(rest), code, wl;

	if (run_cause_line(&r->nodes[i].cause, text, is_error)) {
		n->worker_failed = 1;
		n->worker_rank = n->first_rank + run_cause_worker(&r->nodes[i].cause, &code);
		n->worker_exit = code;
	}
	/* torchrun's own word that its worker failed is an error line too */
	if (!n->first_error[0] && (is_error || run_cause_torchrun_failed(rest, &wl, &code))) {
		snprintf(n->first_error, sizeof(n->first_error), "%s", rest);
		n->first_error_ms = wall;
	}
	if (r->ev && r->ev->line)
		r->ev->line(r->arg, i, stream, text);
}

/* The agent's own words when the command could not be run there (job_process.c). */
static int could_not_run(const struct run_node *n)
{
	return n->exit_code == 127 && strncmp(n->first_error, "clusterdoc-agent: cannot", 24) == 0;
}

static void w_ended(void *arg, size_t i, json_t *result)
{
	struct run *r = arg;
	struct run_node *n = &r->r.nodes[i];
	const char *error = json_string_value(json_object_get(result, "error"));

	int was_failed = r->r.failed;

	n->ended = 1;
	n->end_ms = cd_now_ms();
	sshpool_node_set_job(r->job.nodes[i].pn, 0, 0, 0); /* its pids are no longer the job's */
	n->exit_code = (int)json_integer_value(json_object_get(result, "exit_code"));
	n->signal = (int)json_integer_value(json_object_get(result, "signal"));
	n->stopped = r->watch.nodes[i].stop_sent;
	if (n->exit_code == 0 && n->signal == 0 && !error)
		return;
	if (error)
		node_error(r, i, "job", error);
	else if (could_not_run(n))
		node_error(r, i, "not-found", n->first_error);
	else if (n->stopped)
		node_error(r, i, "stopped", "stopped by clusterdoc");
	else if (n->signal)
		node_error(r, i, "signal", "killed by a signal");
	else
		node_error(r, i, "exit", "exited with an error");
	if (n->stopped)
		return;
	if (could_not_run(n)) {
		if (!r->r.failed)
			r->r.could_not_start = 1;
		fail_run(r, "%s: %s (nothing was left running)", n->host,
		         n->first_error + strlen("clusterdoc-agent: "));
	} else if (n->signal) {
		fail_run(r, "%s: the command was killed by signal %d%s%s", n->host, n->signal,
		         n->first_error[0] ? ": " : "", n->first_error);
	} else {
		fail_run(r, "%s: the command exited with %d%s%s", n->host, n->exit_code,
		         n->first_error[0] ? ": " : "", n->first_error);
	}
	if (!was_failed && r->r.failed)
		r->failure_node = (long)i; /* the headline names this node */
	/* the others would hang in a collective until their timeout: stop them now;
	 * torchrun's, after RUN_TORCHRUN_REPORT_MS in which each may report its own
	 * failed worker (only then does the root cause have its evidence) */
	jobwatch_stop(&r->watch, r->o.launcher != RUN_TORCHRUN);
}

static void w_settle(void *arg)
{
	finish(arg);
}

static void w_tick(void *arg, int64_t now)
{
	struct run *r = arg;

	if (r->watch.stopping)
		return;
	rdzvwatch_tick(&r->rdzv, now);
	if (r->o.timeout_ms > 0 && now - r->job_started > r->o.timeout_ms) {
		fail_run(r, "the job did not end within %d s (--job-timeout); stopped it",
		         r->o.timeout_ms / 1000);
		jobwatch_stop(&r->watch, 1);
	} else if (r->o.stall_ms > 0 && now - r->watch.last_output > r->o.stall_ms) {
		fail_run(r,
		         "no output from any node for %d s: the job hangs (--stall-timeout); "
		         "stopped it",
		         r->o.stall_ms / 1000);
		jobwatch_stop(&r->watch, 1);
	}
}

static void w_dropped(void *arg, size_t i, long long count)
{
	struct run *r = arg;

	r->r.nodes[i].lines_dropped += count;
	if (r->ev && r->ev->dropped)
		r->ev->dropped(r->arg, i, count);
}

static const struct jobwatch_ops watch_ops = {
    .running = w_running,
    .line = w_line,
    .dropped = w_dropped,
    .ended = w_ended,
    .settle = w_settle,
    .tick = w_tick,
};

static void w_unreachable(void *arg, const char *why)
{
	struct run *r = arg;

	fail_run(r, "%s", why);
	jobwatch_stop(&r->watch, 1);
}

static const struct rdzvwatch_ops rdzv_ops = {.running = w_running, .unreachable = w_unreachable};

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
	say_phase(r, "orphans");
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
static void finish(struct run *r)
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
			plan(r);
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
		say_phase(r, "watch");
		r->r.start_ms = cd_now_ms() - r->job_started;
		for (size_t i = 0; i < r->n; i++) {
			if (!r->r.nodes[i].started && !r->r.failed) {
				fail_run(r, "%s (the job needs every node; stopped the others)",
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
		finish(r); /* when nothing started at all */
		return;
	case RP_ORPHANS:
		return; /* finish() enters it */
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
	jobwatch_init(&r->watch, loop, &r->job, &watch_ops, r, o->request_timeout_ms,
	              o->kill_grace_ms, o->launcher == RUN_TORCHRUN ? RUN_TORCHRUN_REPORT_MS : 0);
	rdzvwatch_init(&r->rdzv, &r->job, &rdzv_ops, r, o->rendezvous_timeout_ms,
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
	say_phase(r, "probe");
	if (n == 0) {
		fail_run(r, "no nodes");
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
	fail_run(r, "%s", why ? why : "stopped");
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
