/* SPDX-License-Identifier: MIT */
/*
 * mnist.c - `clusterdoc mnist` on the head: the phases of mnist.h over the
 * SSH pool. The pure parts (job output, the torchrun command) are in
 * mnist_log.c, the plan in mnist_plan.c, the file push in mnist_push.c.
 */
#include "jobs/mnist.h"
#include "collectives/bench_agent.h"
#include "jobs/mnist_internal.h"
#include "jobs/run.h"
#include "probes/netmodel.h"
#include "proto.h"
#include "sha256.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const unsigned char mnist_ddp_py[];
extern const size_t mnist_ddp_py_len;

static void say_phase(struct mnist *m, const char *what)
{
	if (m->ev && m->ev->phase)
		m->ev->phase(m->arg, what);
}

/* ---------------------------------------------------------------- phases */

/* The dataset's member of the barrier: the one after the nodes. */
#define DATA_MEMBER(m) ((m)->n)

static void start_phase(struct mnist *m, enum phase p);

/* Nothing is owed (fanout.h): the next phase, on the loop's turn. The watch
 * phase is not one the barrier ends: the jobs' ends do (mnist_finish). */
static void advance(void *arg)
{
	struct mnist *m = arg;

	start_phase(m, m->phase + 1);
}

/* The run failed before or while training: the first cause is kept. */
void mnist_fail_run(struct mnist *m, const char *fmt, ...)
{
	va_list ap;

	if (m->r.failed)
		return;
	m->r.failed = 1;
	va_start(ap, fmt);
	vsnprintf(m->r.failure, sizeof(m->r.failure), fmt, ap);
	va_end(ap);
}

void mnist_node_error(struct mnist *m, size_t i, const char *code, const char *msg)
{
	struct mnist_node *n = &m->r.nodes[i];

	if (n->error[0])
		return;
	snprintf(n->error_code, sizeof(n->error_code), "%s", code ? code : "failed");
	snprintf(n->error, sizeof(n->error), "%s", msg ? msg : "failed");
}

/* Node i is lost (its agent went away, a request failed). */
static void node_broke(struct mnist *m, size_t i, const char *code, const char *msg)
{
	struct mnist_node_state *mn = &m->nodes[i];

	if (mn->gone)
		return;
	mn->gone = 1;
	mnist_node_error(m, i, code, msg);
	if (m->phase == PH_WATCH) {
		if (!m->r.nodes[i].ended) {
			m->r.nodes[i].ended = 1;
			m->r.nodes[i].exit_code = -1;
		}
		mnist_fail_run(m, "%s", m->r.nodes[i].error);
		mnist_begin_stop(m, 0);
		return;
	}
	fanout_settle_all(m->fan, i);
}

static void on_broke(void *arg, size_t i, const char *code, const char *msg)
{
	node_broke(arg, i, code, msg);
}

static void on_lost(void *arg, size_t i)
{
	struct mnist *m = arg;

	if (m->phase == PH_WATCH)
		mnist_finish(m); /* when it was the last one running */
}

/* facts asks for the --python interpreter's torch. */
static void facts_args(void *arg, json_t *req)
{
	struct mnist *m = arg;

	if (m->o.python)
		json_object_set_new(req, "python", json_string(m->o.python));
}

static const struct jobphase_ops job_ops = {
    .info_cmd = "facts", .info_args = facts_args, .broke = on_broke, .lost = on_lost};

/* 1 when the answer is a failure (and the node is then out). */
int mnist_reply_failed(struct mnist *m, struct sshpool_node *pn, json_t *result, const char *code,
                       const char *msg, const char *what)
{
	return jobphase_reply_failed(&m->job, pn, result, code, msg, what);
}

static void on_data_progress(void *arg, enum mnist_file f, long long got, long long total)
{
	struct mnist *m = arg;

	if (m->ev && m->ev->data_progress)
		m->ev->data_progress(m->arg, f, got, total);
}

static void on_data(void *arg, struct mnist_data *data, const char *err)
{
	struct mnist *m = arg;

	fanout_settle(m->fan, DATA_MEMBER(m));
	m->data = data;
	m->r.data_ms = cd_now_ms() - m->data_started;
	if (!data) {
		mnist_fail_run(m, "the dataset: %s", err ? err : "could not be prepared");
		mnist_finish(m); /* nothing can run: no need to wait for the nodes */
	}
}

/* ---------------------------------------------------------------- push */

/* The data root of every node whose agent runs where it should. */
static const char *shared_root(const struct mnist *m)
{
	return m->o.remote_root ? m->o.remote_root : MNIST_REMOTE_ROOT;
}

/* Node i's data root: the user's when given; beside the agent when the
 * bootstrap had to leave ~/.cache (full or read-only: the dataset would not
 * go there either); else the shared one. */
static void choose_root(struct mnist *m, size_t i)
{
	struct mnist_node_state *mn = &m->nodes[i];
	const char *dir = sshpool_node_agent_dir(m->job.nodes[i].pn);

	if (!m->o.remote_root && sshpool_node_agent_note(m->job.nodes[i].pn) && dir)
		snprintf(mn->root, sizeof(mn->root), "%s/data", dir);
	else
		snprintf(mn->root, sizeof(mn->root), "%s", shared_root(m));
}

/* The files to push under root into files[0..MNIST_NFILES]: their count. */
static size_t files_init(const struct mnist *m, const char *root, struct push_file *files)
{
	char path[512], hex[SHA256_HEX_LEN];
	size_t n = 0;

	for (int f = 0; f < MNIST_NFILES; f++) {
		snprintf(path, sizeof(path), "%s/MNIST/raw/%s", root,
		         mnist_file_name((enum mnist_file)f));
		push_file_init(&files[n++], path, m->data->f[f].raw, m->data->f[f].len,
		               m->data->f[f].sha256);
	}
	if (m->r.mode == MNIST_TORCH) {
		sha256_data_hex(mnist_ddp_py, mnist_ddp_py_len, hex);
		snprintf(path, sizeof(path), "%s/%s", root, SCRIPT_NAME);
		push_file_init(&files[n++], path, mnist_ddp_py, mnist_ddp_py_len, hex);
	}
	return n;
}

static void files_free(struct push_file *files, size_t n)
{
	for (size_t f = 0; f < n; f++)
		push_file_fini(&files[f]);
}

static void on_pushed(void *arg, const struct push *p, size_t i, int err, const char *msg)
{
	struct mnist *m = arg;

	m->r.nodes[i].pushed_files = push_files_sent(p);
	m->r.nodes[i].pushed_bytes = push_bytes_sent(p);
	if (err < 0) {
		char text[CD_ERRLEN];

		snprintf(text, sizeof(text), "%s: %s", m->r.nodes[i].host, msg);
		node_broke(m, i, "push", text);
		return;
	}
	fanout_settle(m->fan, i);
}

/* The nodes under the shared root share its files (and their compressed
 * chunks); a node with a root of its own gets files of its own. */
static void send_pushes(struct mnist *m)
{
	m->push_started = cd_now_ms();
	m->nfiles = files_init(m, shared_root(m), m->files);
	say_phase(m, "push");
	for (size_t i = 0; i < m->n; i++) {
		struct mnist_node_state *mn = &m->nodes[i];
		struct push_file *files = m->files;
		size_t nfiles = m->nfiles;

		choose_root(m, i);
		if (strcmp(mn->root, shared_root(m)) != 0) {
			mn->files = cd_calloc(MNIST_NFILES + 1, sizeof(*mn->files));
			mn->nfiles = files_init(m, mn->root, mn->files);
			files = mn->files;
			nfiles = mn->nfiles;
		}
		fanout_expect(m->fan, i, 1);
		mn->push = push_start(m->job.nodes[i].pn, files, nfiles, m->o.request_timeout_ms,
		                      on_pushed, m, i);
	}
}

/* ---------------------------------------------------------------- listen */

static void on_listen(struct sshpool_node *pn, json_t *result, const char *code, const char *msg,
                      void *arg)
{
	struct mnist *m = arg;
	size_t i = jobphase_index(pn), k;
	json_t *l;

	if (mnist_reply_failed(m, pn, result, code, msg, "bench_listen"))
		return;
	json_array_foreach(json_object_get(result, "listeners"), k, l)
	{
		int rank = (int)json_integer_value(json_object_get(l, "rank"));
		int local = rank - m->r.nodes[i].first_rank;

		if (json_object_get(l, "error") || local < 0 || local >= m->r.nodes[i].nranks) {
			char text[CD_ERRLEN];

			snprintf(text, sizeof(text), "%s: cannot listen for rank %d: %s",
			         sshpool_node_host(pn), rank,
			         json_string_value(json_object_get(l, "error")));
			node_broke(m, i, "listen", text);
			return;
		}
		m->nodes[i].ports[local] = (int)json_integer_value(json_object_get(l, "port"));
	}
	fanout_settle(m->fan, i);
}

static void send_listens(struct mnist *m)
{
	cd_random_token(m->token, sizeof(m->token));
	for (size_t i = 0; i < m->n; i++) {
		const struct mnist_node *n = &m->r.nodes[i];
		json_t *req = proto_request(0, "bench_listen"), *ranks = json_array();

		for (int l = 0; l < n->nranks; l++)
			json_array_append_new(ranks, json_pack("{siss}", "rank", n->first_rank + l,
			                                       "address", n->addr));
		json_object_set_new(req, "token", json_string(m->token));
		json_object_set_new(req, "ranks", ranks);
		fanout_expect(m->fan, i, 1);
		sshpool_request(m->job.nodes[i].pn, req, m->o.request_timeout_ms, on_listen, m);
	}
}

/* ---------------------------------------------------------------- start */

static void on_started(struct sshpool_node *pn, json_t *result, const char *code, const char *msg,
                       void *arg)
{
	struct mnist *m = arg;
	size_t i = jobphase_index(pn);

	if (mnist_reply_failed(m, pn, result, code, msg, "starting the job"))
		return;
	m->r.nodes[i].started = 1;
	/* torch mode's process tree (proc_start says it; the embedded trainer
	 * runs in the agent, which is ended anyway) */
	sshpool_node_set_job(pn, json_integer_value(json_object_get(result, "pid")),
	                     json_integer_value(json_object_get(result, "pgid")), JOB_STOP_WAIT);
	fanout_settle(m->fan, i);
}

/* The node and port of global rank r (embedded). */
static void rank_address(const struct mnist *m, int r, size_t *node, int *port)
{
	for (size_t i = 0; i < m->n; i++) {
		const struct mnist_node *n = &m->r.nodes[i];

		if (r >= n->first_rank && r < n->first_rank + n->nranks) {
			*node = i;
			*port = m->nodes[i].ports[r - n->first_rank];
			return;
		}
	}
	*node = 0;
	*port = 0;
}

static json_t *embedded_request(const struct mnist *m, size_t i)
{
	const struct mnist_node *n = &m->r.nodes[i];
	json_t *req = proto_request(0, "mnist_start"), *ranks = json_array();
	char root[sizeof(m->nodes[i].root) + sizeof("/MNIST/raw")];

	for (int l = 0; l < n->nranks; l++) {
		int rank = n->first_rank + l, port;
		size_t rn;

		rank_address(m, (rank + 1) % m->r.nranks, &rn, &port);
		json_array_append_new(ranks,
		                      json_pack("{sis{sssi}}", "rank", rank, "right", "address",
		                                m->r.nodes[rn].addr, "port", port));
	}
	snprintf(root, sizeof(root), "%s/MNIST/raw", m->nodes[i].root);
	json_object_set_new(req, "token", json_string(m->token));
	json_object_set_new(req, "nranks", json_integer(m->r.nranks));
	json_object_set_new(req, "stall_ms", json_integer(m->o.ring_stall_ms));
	json_object_set_new(req, "connect_timeout_ms", json_integer(m->o.request_timeout_ms));
	json_object_set_new(req, "data_dir", json_string(root));
	json_object_set_new(req, "epochs", json_integer(m->o.epochs));
	json_object_set_new(req, "batch", json_integer(m->o.batch));
	json_object_set_new(req, "lr", json_real(m->o.lr));
	json_object_set_new(req, "momentum", json_real(m->o.momentum));
	json_object_set_new(req, "seed", json_integer(m->o.seed));
	json_object_set_new(req, "ranks", ranks);
	return req;
}

static json_t *torch_request(const struct mnist *m, size_t i)
{
	const struct mnist_node *n = &m->r.nodes[i];
	json_t *req = proto_request(0, "proc_start"), *env;

	/* The agent runs argv without a shell, so "~/" is expanded here by the
	 * job's cwd: the paths are given relative to the run directory. */
	json_object_set_new(req, "cwd", json_string(m->nodes[i].root));
	json_object_set_new(req, "argv",
	                    mnist_torch_argv(m->nodes[i].python, n->torch_version, (int)m->n,
	                                     (int)i, n->nranks, m->plan->master_addr,
	                                     m->plan->master_port, SCRIPT_NAME, ".", "mnist_mlp.pt",
	                                     m->r.backend, &m->o));
	env = mnist_torch_env(m->plan, i, m->r.backend);
	if (strcmp(m->r.backend, "hccl") == 0) {
		const char **ifnames = cd_calloc(m->n ? m->n : 1, sizeof(*ifnames));
		char ifname[NM_NAME];

		for (size_t k = 0; k < m->n; k++)
			ifnames[k] = m->r.nodes[k].ifname;
		run_hccl_ifname(ifnames, m->n, ifname, sizeof(ifname));
		run_hccl_env(env, n->addr, ifname, m->n);
		free(ifnames);
	}
	json_object_set_new(req, "env", env);
	return req;
}

static void send_starts(struct mnist *m)
{
	say_phase(m, "train");
	m->train_started = cd_now_ms();
	m->r.push_ms = m->train_started - m->push_started;
	for (size_t i = 0; i < m->n; i++) {
		json_t *req =
		    m->r.mode == MNIST_TORCH ? torch_request(m, i) : embedded_request(m, i);

		fanout_expect(m->fan, i, 1);
		sshpool_request(m->job.nodes[i].pn, req, m->o.request_timeout_ms, on_started, m);
	}
}

/* ---------------------------------------------------------------- end */

void mnist_finish(struct mnist *m)
{
	if (m->phase == PH_DONE)
		return;
	if (m->phase == PH_WATCH) {
		for (size_t i = 0; i < m->n; i++) {
			if (!m->r.nodes[i].ended && !m->nodes[i].gone)
				return; /* still running */
		}
		m->r.train_ms = cd_now_ms() - m->train_started;
	}
	m->phase = PH_DONE;
	fanout_close(m->fan);
	jobwatch_end(&m->watch);
	mnist_watch_end(m);
	if (!m->r.failed && m->r.mode == MNIST_EMBEDDED && !m->r.hashes_identical)
		mnist_fail_run(m, "the ranks ended with different parameters");
	if (!m->r.failed && !m->r.have_accuracy)
		mnist_fail_run(m, "the job ended without reporting a test accuracy");
	m->r.elapsed_ms = cd_now_ms() - m->started;
	if (m->ev && m->ev->done)
		m->ev->done(m->arg);
}

static void start_phase(struct mnist *m, enum phase p)
{
	m->phase = p;
	if (m->r.failed && p <= PH_START) {
		mnist_finish(m);
		return;
	}
	switch (p) {
	case PH_PROBE:
		return;
	case PH_PUSH:
		mnist_plan(m);
		if (m->r.failed) {
			mnist_finish(m);
			return;
		}
		send_pushes(m);
		break;
	case PH_LISTEN:
		if (m->r.mode == MNIST_EMBEDDED) {
			send_listens(m);
			break;
		}
		m->phase = PH_START;
		/* fall through */
	case PH_START:
		for (size_t i = 0; i < m->n; i++) {
			if (m->nodes[i].gone) {
				mnist_fail_run(m, "%s (a training job needs every node)",
				               m->r.nodes[i].error);
				mnist_finish(m);
				return;
			}
		}
		send_starts(m);
		break;
	case PH_WATCH:
		for (size_t i = 0; i < m->n; i++) {
			if (m->nodes[i].gone && !m->r.failed) {
				mnist_fail_run(m, "%s", m->r.nodes[i].error);
				mnist_begin_stop(m, 1);
			}
		}
		mnist_watch_start(m);
		/* stopped (mnist_stop) while the starts were on their way */
		if (m->r.failed && !m->watch.stopping)
			mnist_begin_stop(m, 1);
		return;
	case PH_DONE:
		mnist_finish(m);
		return;
	}
	fanout_begin(m->fan);
}

/* ---------------------------------------------------------------- api */

void mnist_opts_init(struct mnist_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->mode = MNIST_AUTO;
	o->backend = "auto";
	o->epochs = 2;
	o->nproc_per_node = 1;
	o->batch = 64;
	o->lr = 0.05;
	o->momentum = 0.9;
	o->seed = 1;
	o->master_port = 29500;
	o->timeout_ms = 30 * 60 * 1000;
	o->stall_ms = 5 * 60 * 1000;
	o->ring_stall_ms = 60000;
	o->rendezvous_timeout_ms = RDZVWATCH_DEFAULT_MS;
	o->request_timeout_ms = 30000;
}

const char *mnist_mode_name(enum mnist_mode m)
{
	switch (m) {
	case MNIST_TORCH:
		return "torch";
	case MNIST_EMBEDDED:
		return "embedded";
	default:
		return "auto";
	}
}

struct mnist *mnist_start(struct loop *loop, struct sshpool *pool, const char *const *hosts,
                          size_t nhosts, const struct mnist_opts *o, const struct mnist_events *ev,
                          void *arg)
{
	struct mnist *m = cd_calloc(1, sizeof(*m));
	char err[CD_ERRLEN];

	m->loop = loop;
	m->pool = pool;
	m->o = *o;
	m->ev = ev;
	m->arg = arg;
	m->started = m->data_started = cd_now_ms();
	m->n = nhosts;
	m->m = netmodel_new(hosts, nhosts);
	m->plan = o->plan && o->plan->n == nhosts ? job_plan_copy(o->plan)
	                                          : job_plan_new(hosts, nhosts, 0);
	m->nodes = cd_calloc(nhosts ? nhosts : 1, sizeof(*m->nodes));
	m->fan = fanout_new(loop, nhosts + 1, advance, m);
	/* netprobe (, facts) */
	jobphase_init(&m->job, pool, hosts, nhosts, m->fan, o->request_timeout_ms,
	              o->mode != MNIST_EMBEDDED, &job_ops, m);
	mnist_watch_init(m);
	m->r.nodes = cd_calloc(nhosts ? nhosts : 1, sizeof(*m->r.nodes));
	m->r.nnodes = nhosts;
	m->r.mode = o->mode;
	m->r.hashes_identical = 1;
	m->phase = PH_PROBE;
	for (size_t i = 0; i < nhosts; i++)
		m->r.nodes[i].host = m->m->nodes[i].host;
	say_phase(m, "data");
	fanout_expect(m->fan, DATA_MEMBER(m), 1);
	m->prep =
	    mnist_data_prepare(loop, &o->data, on_data_progress, on_data, m, err, sizeof(err));
	if (!m->prep) {
		fanout_settle(m->fan, DATA_MEMBER(m));
		mnist_fail_run(m, "the dataset: %s", err);
	}
	if (nhosts == 0)
		mnist_fail_run(m, "no nodes");
	fanout_begin(m->fan);
	if (!m->r.failed)
		jobphase_start(&m->job, pool);
	return m;
}

void mnist_stop(struct mnist *m, const char *why)
{
	if (!m || m->phase == PH_DONE || m->r.failed)
		return;
	mnist_fail_run(m, "%s", why ? why : "stopped");
	if (m->phase == PH_WATCH && !m->watch.stopping)
		mnist_begin_stop(m, 1);
}

const struct mnist_report *mnist_report(const struct mnist *m)
{
	return &m->r;
}

void mnist_free(struct mnist *m)
{
	if (!m)
		return;
	fanout_free(m->fan);
	jobwatch_fini(&m->watch);
	rdzvwatch_fini(&m->rdzv);
	mnist_prep_free(m->prep);
	jobphase_fini(&m->job);
	for (size_t i = 0; i < m->n; i++) {
		push_free(m->nodes[i].push);
		files_free(m->nodes[i].files, m->nodes[i].nfiles);
		free(m->nodes[i].files);
	}
	files_free(m->files, m->nfiles);
	mnist_data_free(m->data);
	free(m->nodes);
	free(m->r.nodes);
	netmodel_free(m->m);
	job_plan_free(m->plan);
	free(m);
}
