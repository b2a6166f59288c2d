/* SPDX-License-Identifier: MIT */
/*
 * bench.c - `clusterdoc bench` on the head (see bench.h): the phases over
 * the SSH pool, one ring (or, with --pairs, one round of 2-rank rings) at a
 * time. The probe phase is jobphase.c's; the plan, each round's rings and
 * the results gathered into the report are in bench_round.c.
 */
#include "collectives/bench.h"
#include "collectives/bench_internal.h"
#include "collectives/bench_agent.h"
#include "collectives/jobphase.h"
#include "fanout.h"
#include "proto.h"
#include "cd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* After the first failure of a run, before the nodes still busy are closed.
 * Not stall_ms again: a rank that fails closes its connections, so its
 * neighbours fail at once and the failure goes round the ring in
 * milliseconds; a node still silent after this grace is stopped or cut off
 * (its ranks cannot tell the head), and waiting longer only delays the
 * report. The run thus ends within stall_ms + BENCH_GRACE_MS of a stall. */
#define BENCH_GRACE_MS    3000
#define BENCH_RUN_SLACK_S 3600 /* a run request's own deadline: the agents bound it */

static void start_phase(struct bench *b, enum bench_phase p);

/* No node owes an answer (fanout.h): the next phase, on the loop's turn. */
static void advance(void *arg)
{
	struct bench *b = arg;

	start_phase(b, b->phase + 1);
}

static struct bench_failure *add_failure(struct bench *b, int rank, size_t node, const char *kind)
{
	struct bench_failure *f;

	b->r.failures = cd_realloc(b->r.failures, (b->r.nfailures + 1) * sizeof(*f));
	f = &b->r.failures[b->r.nfailures++];
	memset(f, 0, sizeof(*f));
	f->rank = rank;
	f->node = node;
	f->peer_rank = -1;
	snprintf(f->kind, sizeof(f->kind), "%s", kind);
	return f;
}

static void close_busy(struct loop *loop, void *arg);

/* The first failure of a run starts the grace period: whoever is still busy
 * after it is closed. */
static void start_grace(struct bench *b)
{
	if (b->phase == BENCH_PHASE_RUN && !b->grace_timer)
		b->grace_timer = loop_timer_add(b->loop, BENCH_GRACE_MS, close_busy, b);
}

static void ring_of_node_failed(struct bench *b, size_t i)
{
	if (b->nodes[i].ring >= 0)
		b->rings[b->nodes[i].ring].failed = 1;
}

/* Node i, closed as unfinished after the grace, has been ended through a
 * fresh session: its failure says what that found, not only "closed". */
static void say_how_ended(struct bench *b, size_t i, const char *how)
{
	for (size_t k = b->r.nfailures; k-- > 0;) {
		struct bench_failure *f = &b->r.failures[k];

		if (f->node == i && strcmp(f->kind, "unfinished") == 0) {
			snprintf(f->message, sizeof(f->message), "%s", how);
			return;
		}
	}
}

/* Node i broke (its agent went away, a request failed): out of this and
 * every later round. */
static void node_broke(struct bench *b, size_t i, const char *code, const char *msg)
{
	struct bench_node *n = &b->r.nodes[i];

	if (!b->nodes[i].gone) {
		b->nodes[i].gone = 1;
		if (!n->error[0]) {
			snprintf(n->error, sizeof(n->error), "%s", msg ? msg : "failed");
			snprintf(n->error_code, sizeof(n->error_code), "%s", code ? code : "agent");
		}
		if (b->phase >= BENCH_PHASE_LISTEN && b->nodes[i].ring >= 0 &&
		    !b->nodes[i].ending) {
			struct bench_failure *f = add_failure(b, -1, i, "died");

			snprintf(f->message, sizeof(f->message), "%s", n->error);
			ring_of_node_failed(b, i);
			start_grace(b);
		}
		if (b->nodes[i].ending)
			say_how_ended(b, i, n->error);
	}
	fanout_settle_all(b->fan, i);
}

static void on_broke(void *arg, size_t i, const char *code, const char *msg)
{
	node_broke(arg, i, code, msg);
}

/* The probe phase asks for bench_caps too; a node whose request failed is
 * also closed: the bench goes on without it. */
static const struct jobphase_ops job_ops = {
    .info_cmd = "bench_caps", .broke = on_broke, .close_on_error = 1};

static int reply_failed(struct bench *b, struct sshpool_node *pn, json_t *result, const char *code,
                        const char *msg, const char *what)
{
	return jobphase_reply_failed(&b->job, pn, result, code, msg, what);
}

static void close_busy(struct loop *loop, void *arg)
{
	struct bench *b = arg;

	b->grace_timer = 0;
	for (size_t i = 0; i < b->n; i++) {
		struct bench_node_state *bn = &b->nodes[i];
		struct sshpool_node *pn = b->job.nodes[i].pn;
		struct bench_failure *f;
		char why[128];

		if (fanout_owed(b->fan, i) <= 0 || bn->gone || bn->ending)
			continue;
		f = add_failure(b, -1, i, "unfinished");
		snprintf(why, sizeof(why),
		         "no answer %d ms after another rank failed (stopped, hung or cut off)",
		         BENCH_GRACE_MS);
		snprintf(f->message, sizeof(f->message), "%s: %s; closed", sshpool_node_host(pn),
		         why);
		/* A stopped agent would outlive the run: the pool ends it through a
		 * fresh session, and the node fails (on_broke) saying what it found. */
		if (sshpool_node_end(pn, why) == 0) {
			bn->ending = 1;
			continue;
		}
		bn->gone = 1;
		sshpool_close_node(pn);
		fanout_settle_all(b->fan, i);
	}
}

/* ---------------------------------------------------------------- listen */

static void on_listen(struct sshpool_node *pn, json_t *result, const char *code, const char *msg,
                      void *arg)
{
	struct bench *b = arg;
	size_t i = jobphase_index(pn), k;
	json_t *l;

	if (reply_failed(b, pn, result, code, msg, "bench_listen"))
		return;
	free(b->nodes[i].listen_answer);
	b->nodes[i].listen_answer = json_dumps(result, JSON_COMPACT);
	json_array_foreach(json_object_get(result, "listeners"), k, l)
	{
		const char *err = json_string_value(json_object_get(l, "error"));

		if (k >= BENCH_MAX_LOCAL_RANKS)
			break;
		if (err) {
			node_broke(b, i, "listen", err);
			return;
		}
		b->nodes[i].ports[k] = (int)json_integer_value(json_object_get(l, "port"));
	}
	fanout_settle(b->fan, i);
}

static void on_nccl_id(struct sshpool_node *pn, json_t *result, const char *code, const char *msg,
                       void *arg)
{
	struct bench *b = arg;
	size_t i = jobphase_index(pn);
	const char *id;

	if (reply_failed(b, pn, result, code, msg, "bench_nccl_id"))
		return;
	id = json_string_value(json_object_get(result, "id"));
	if (b->nodes[i].ring >= 0 && id)
		snprintf(b->rings[b->nodes[i].ring].nccl_id, sizeof(b->rings[0].nccl_id), "%s", id);
	fanout_settle(b->fan, i);
}

/* The rank number of node j's local rank l in ring rp. */
static int rank_of(const struct bench *b, size_t j, int l)
{
	return (int)j * b->ranks_per_node + l;
}

static void send_listens(struct bench *b)
{
	for (size_t k = 0; k < b->nrings; k++) {
		struct bench_ring *rp = &b->rings[k];

		for (size_t j = 0; j < rp->nmembers; j++) {
			size_t i = rp->members[j];
			const struct bench_node *n = &b->r.nodes[i];
			json_t *req, *ranks;

			if (b->nodes[i].gone)
				continue;
			if (b->r.backend == BENCH_NCCL) {
				json_t *env;

				if (j != 0)
					continue;
				env = bench_env_request(b, i);
				req = proto_request(0, "bench_nccl_id");
				if (env)
					json_object_set_new(req, "env", env);
				fanout_expect(b->fan, i, 1);
				sshpool_request(b->job.nodes[i].pn, req, b->o.request_timeout_ms,
				                on_nccl_id, b);
				continue;
			}
			ranks = json_array();
			for (int l = 0; l < b->ranks_per_node; l++)
				json_array_append_new(ranks, json_pack("{sisssi}", "rank",
				                                       rank_of(b, j, l), "address",
				                                       n->addr, "scope_id",
				                                       (int)n->scope_id));
			req = proto_request(0, "bench_listen");
			json_object_set_new(req, "token", json_string(rp->token));
			json_object_set_new(req, "ranks", ranks);
			fanout_expect(b->fan, i, 1);
			sshpool_request(b->job.nodes[i].pn, req, b->o.request_timeout_ms, on_listen,
			                b);
		}
	}
}

/* ---------------------------------------------------------------- run */

/* Node i has completed done sizes on every local rank: a count only grows. */
static void sizes_moved(struct bench *b, size_t i, size_t done)
{
	if (done <= b->nodes[i].sizes_done || done > b->nsizes)
		return;
	b->nodes[i].sizes_done = done;
	if (b->moved)
		b->moved(b->moved_arg);
}

/* bench_run's interim progress (bench_agent.h): an answer that does not
 * parse is no progress. */
static void on_run_progress(struct sshpool_node *pn, json_t *progress, void *arg)
{
	json_t *done = json_object_get(progress, "sizes_done");

	if (json_is_integer(done) && json_integer_value(done) >= 0)
		sizes_moved(arg, jobphase_index(pn), (size_t)json_integer_value(done));
}

/* The sizes every local rank of an answer completed. */
static size_t answered_sizes(json_t *ranks)
{
	size_t least = 0, k;
	json_t *r;

	json_array_foreach(ranks, k, r)
	{
		size_t n = json_array_size(json_object_get(r, "results"));

		least = k == 0 || n < least ? n : least;
	}
	return least;
}

static void on_run(struct sshpool_node *pn, json_t *result, const char *code, const char *msg,
                   void *arg)
{
	struct bench *b = arg;
	size_t i = jobphase_index(pn), k;
	json_t *r;

	if (reply_failed(b, pn, result, code, msg, "bench_run"))
		return;
	b->nodes[i].ranks_out = json_incref(json_object_get(result, "ranks"));
	if (b->r.backend == BENCH_NCCL)
		bench_note_net(b, i, json_object_get(result, "nccl_net"));
	sizes_moved(b, i, answered_sizes(b->nodes[i].ranks_out));
	json_array_foreach(b->nodes[i].ranks_out, k, r)
	{
		json_t *e = json_object_get(r, "error");
		struct bench_failure *f;

		if (!e)
			continue;
		f = add_failure(b, (int)json_integer_value(json_object_get(r, "rank")), i,
		                json_string_value(json_object_get(e, "kind"))
		                    ? json_string_value(json_object_get(e, "kind"))
		                    : "error");
		f->peer_rank = (int)json_integer_value(json_object_get(e, "peer_rank"));
		f->bytes = (size_t)json_integer_value(json_object_get(e, "bytes"));
		snprintf(f->message, sizeof(f->message), "%s",
		         json_string_value(json_object_get(e, "message"))
		             ? json_string_value(json_object_get(e, "message"))
		             : "failed");
		ring_of_node_failed(b, i);
		start_grace(b);
	}
	fanout_settle(b->fan, i);
}

static json_t *run_request(const struct bench *b, const struct bench_ring *rp, size_t j)
{
	json_t *req = proto_request(0, "bench_run"), *sizes = json_array(), *ranks = json_array();
	size_t next = (j + 1) % rp->nmembers;

	for (size_t s = 0; s < b->nsizes; s++)
		json_array_append_new(sizes, json_integer((json_int_t)b->sizes[s]));
	for (int l = 0; l < b->ranks_per_node; l++) {
		json_t *one = json_pack("{si}", "rank", rank_of(b, j, l));
		/* the right neighbour: our next local rank, or the next node's first */
		size_t rnode = l + 1 < b->ranks_per_node ? j : next;
		int rlocal = l + 1 < b->ranks_per_node ? l + 1 : 0;
		const struct bench_node *rn = &b->r.nodes[rp->members[rnode]];

		if (b->r.backend == BENCH_NCCL)
			json_object_set_new(one, "gpu", json_integer(l));
		else if (rp->nranks > 1)
			json_object_set_new(one, "right",
			                    json_pack("{sssisi}", "address", rn->addr, "scope_id",
			                              (int)rn->scope_id, "port",
			                              b->nodes[rp->members[rnode]].ports[rlocal]));
		json_array_append_new(ranks, one);
	}
	json_object_set_new(req, "backend", json_string(bench_backend_name(b->r.backend)));
	json_object_set_new(req, "token", json_string(rp->token));
	if (b->r.backend == BENCH_NCCL) {
		json_t *env = bench_env_request(b, rp->members[j]);

		json_object_set_new(req, "nccl_id", json_string(rp->nccl_id));
		if (env)
			json_object_set_new(req, "env", env);
	}
	json_object_set_new(req, "nranks", json_integer(rp->nranks));
	if (b->o.conns > 0)
		json_object_set_new(req, "conns", json_integer(b->o.conns));
	json_object_set_new(req, "dtype", json_string(coll_dtype_name(b->o.dtype)));
	json_object_set_new(req, "sizes", sizes);
	json_object_set_new(req, "iters", json_integer(b->o.iters));
	json_object_set_new(req, "warmup", json_integer(b->o.warmup));
	json_object_set_new(req, "check", json_boolean(b->o.check));
	json_object_set_new(req, "stall_ms", json_integer(b->o.stall_ms));
	json_object_set_new(req, "connect_timeout_ms", json_integer(b->o.connect_timeout_ms));
	json_object_set_new(req, "ranks", ranks);
	return req;
}

/* Every member of a tcp ring has a listener port for each local rank; a
 * member without one is a failure of this ring, not a request to send. */
static int ports_known(struct bench *b, struct bench_ring *rp)
{
	for (size_t j = 0; j < rp->nmembers; j++) {
		size_t i = rp->members[j];

		for (int l = 0; l < b->ranks_per_node; l++) {
			struct bench_failure *f;

			if (b->nodes[i].ports[l] > 0)
				continue;
			f = add_failure(b, rank_of(b, j, l), i, "no-listener");
			snprintf(f->message, sizeof(f->message),
			         "%s: no listener port for rank %d (bench_listen answered: %s)",
			         b->r.nodes[i].host, rank_of(b, j, l),
			         b->nodes[i].listen_answer ? b->nodes[i].listen_answer : "nothing");
			rp->failed = 1;
			return 0;
		}
	}
	return 1;
}

static void send_runs(struct bench *b)
{
	for (size_t k = 0; k < b->nrings; k++) {
		struct bench_ring *rp = &b->rings[k];

		for (size_t j = 0; j < rp->nmembers; j++)
			rp->failed |= b->nodes[rp->members[j]].gone;
		if (rp->failed)
			continue; /* a member died before the run: its ring cannot form */
		if (b->r.backend == BENCH_NCCL && !rp->nccl_id[0])
			continue;
		if (b->r.backend == BENCH_TCP && rp->nranks > 1 && !ports_known(b, rp))
			continue;
		for (size_t j = 0; j < rp->nmembers; j++) {
			size_t i = rp->members[j];

			json_decref(b->nodes[i].ranks_out);
			b->nodes[i].ranks_out = NULL;
			b->nodes[i].running = 1;
			fanout_expect(b->fan, i, 1);
			sshpool_request_progress(b->job.nodes[i].pn, run_request(b, rp, j),
			                         BENCH_RUN_SLACK_S * 1000, on_run_progress, on_run,
			                         b);
		}
	}
}

/* ---------------------------------------------------------------- phases */

static void finish(struct bench *b)
{
	if (b->o.pairs)
		bench_mark_slow(b->r.links, b->r.nlinks, b->r.nodes, b->r.nnodes, b->r.slow_nodes,
		                sizeof(b->r.slow_nodes));
	b->r.elapsed_ms = cd_now_ms() - b->started;
	b->phase = BENCH_PHASE_DONE;
	b->done(b->arg);
}

static void start_phase(struct bench *b, enum bench_phase p)
{
	if (b->grace_timer) {
		loop_timer_cancel(b->loop, b->grace_timer);
		b->grace_timer = 0;
	}
	b->phase = p;
	switch (p) {
	case BENCH_PHASE_PROBE:
		return;
	case BENCH_PHASE_PLAN:
		bench_plan_nodes(b);
		/* fall through */
	case BENCH_PHASE_LISTEN:
		b->phase = BENCH_PHASE_LISTEN;
		if (!bench_next_round(b)) {
			finish(b);
			return;
		}
		send_listens(b);
		break;
	case BENCH_PHASE_RUN:
		send_runs(b);
		break;
	case BENCH_PHASE_DONE:
		/* a round ended: gather it, then the next round or the end */
		bench_gather_round(b);
		start_phase(b, BENCH_PHASE_LISTEN);
		return;
	}
	fanout_begin(b->fan);
}

struct bench *bench_start(struct loop *loop, struct sshpool *pool, const char *const *hosts,
                          size_t nhosts, const struct bench_opts *o, void (*done)(void *arg),
                          void *arg)
{
	struct bench *b = cd_calloc(1, sizeof(*b));

	b->loop = loop;
	b->pool = pool;
	b->o = *o;
	b->done = done;
	b->arg = arg;
	b->started = cd_now_ms();
	b->n = nhosts;
	b->nsizes = bench_sizes(o, b->sizes, BENCH_MAX_SIZES);
	b->m = netmodel_new(hosts, nhosts);
	b->nodes = cd_calloc(nhosts ? nhosts : 1, sizeof(*b->nodes));
	b->fan = fanout_new(loop, nhosts, advance, b);
	/* netprobe, bench_caps */
	jobphase_init(&b->job, pool, hosts, nhosts, b->fan, o->request_timeout_ms, 1, &job_ops, b);
	b->r.nodes = cd_calloc(nhosts ? nhosts : 1, sizeof(*b->r.nodes));
	b->r.nnodes = nhosts;
	b->phase = BENCH_PHASE_PROBE;
	for (size_t i = 0; i < nhosts; i++) {
		b->r.nodes[i].host = b->m->nodes[i].host;
		b->nodes[i].ring = -1;
	}
	fanout_begin(b->fan); /* no node: the next turn goes on */
	jobphase_start(&b->job, pool);
	return b;
}

const struct bench_report *bench_report(const struct bench *b)
{
	return &b->r;
}

void bench_on_progress(struct bench *b, void (*moved)(void *arg), void *arg)
{
	b->moved = moved;
	b->moved_arg = moved ? arg : NULL;
}

/* The sizes every rank of the running round has completed. */
static size_t round_sizes_done(const struct bench *b)
{
	size_t least = 0;
	int any = 0;

	for (size_t i = 0; i < b->n; i++) {
		if (!b->nodes[i].running)
			continue;
		if (!any || b->nodes[i].sizes_done < least)
			least = b->nodes[i].sizes_done;
		any = 1;
	}
	return least;
}

void bench_progress(const struct bench *b, struct bench_progress *p)
{
	static const char *const phases[] = {
	    [BENCH_PHASE_PROBE] = "probe",   [BENCH_PHASE_PLAN] = "plan",
	    [BENCH_PHASE_LISTEN] = "listen", [BENCH_PHASE_RUN] = "run",
	    [BENCH_PHASE_DONE] = "done",
	};
	int last_round = 0;

	memset(p, 0, sizeof(*p));
	p->phase = phases[b->phase];
	p->nodes = b->n;
	p->nsizes = b->nsizes;
	if (b->phase == BENCH_PHASE_RUN)
		p->sizes_done = round_sizes_done(b);
	for (size_t i = 0; i < b->n; i++) {
		p->probed += b->job.nodes[i].probe && b->job.nodes[i].info;
		p->answered += fanout_owed(b->fan, i) == 0 && !b->nodes[i].gone;
	}
	for (size_t k = 0; k < b->npairs; k++)
		last_round = b->round_of[k] > last_round ? b->round_of[k] : last_round;
	p->rounds = b->npairs ? last_round + 1 : 1;
	p->round = b->npairs ? b->round + 1 : 1;
}

void bench_free(struct bench *b)
{
	if (!b)
		return;
	fanout_free(b->fan);
	if (b->grace_timer)
		loop_timer_cancel(b->loop, b->grace_timer);
	jobphase_fini(&b->job);
	for (size_t i = 0; i < b->n; i++) {
		json_decref(b->nodes[i].ranks_out);
		free(b->nodes[i].listen_answer);
		if (b->r.nodes[i].net)
			bench_net_fini(b->r.nodes[i].net);
		free(b->r.nodes[i].net);
		json_decref(b->r.nodes[i].nccl_env);
	}
	if (b->ib_made)
		ib_suggestion_fini(&b->ib, b->n);
	free(b->nodes);
	free(b->live);
	free(b->pairs);
	free(b->round_of);
	free(b->rings);
	free(b->r.nodes);
	free(b->r.sizes);
	free(b->r.failures);
	free(b->r.links);
	netmodel_free(b->m);
	free(b);
}
