/*
 * mnist.c - `clusterdoc mnist` on the head: the phases of mnist.h over the
 * SSH pool. The pure parts (job output, the torchrun command) are in
 * mnist_log.c, the file push in mnist_push.c.
 */
#include "collectives/mnist.h"
#include "collectives/bench_agent.h"
#include "collectives/bench_internal.h"
#include "collectives/mnist_internal.h"
#include "proto.h"
#include "sha256.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POLL_EVERY_MS 250
#define STOP_GRACE_MS 10000 /* after a node fails, the others may fail on their own */
#define JOB_STOP_WAIT 3000  /* job_stop's grace on the node */
#define SCRIPT_NAME   "mnist_ddp.py"

extern const unsigned char mnist_ddp_py[];
extern const size_t mnist_ddp_py_len;

enum phase { PH_PROBE, PH_PUSH, PH_LISTEN, PH_START, PH_WATCH, PH_DONE };

struct mnode {
	struct pool_node *pn;
	int waiting; /* answers awaited in this phase */
	int gone;
	json_t *probe, *facts;
	struct push *push;
	const char *python;
	int ports[BENCH_MAX_LOCAL_RANKS]; /* embedded: each local rank's listener */
	long long next_line;
	int polling, stop_sent;
};

struct mnist {
	struct loop *loop;
	struct sshpool *pool;
	struct mnist_opts o;
	const struct mnist_events *ev;
	void *arg;
	struct netmodel *m;
	struct mnode *nodes;
	size_t n;
	enum phase phase;
	uint64_t next_timer, poll_timer, stop_timer;

	struct mnist_prep *prep;
	struct mnist_data *data;
	int data_pending;
	struct push_file files[MNIST_NFILES + 1];
	size_t nfiles;
	char token[33];

	int64_t started, data_started, push_started, train_started, last_output;
	int stopping;
	struct mnist_report r;
};

static size_t index_of(const struct pool_node *pn)
{
	return (size_t)(uintptr_t)node_data(pn);
}

static void say_phase(struct mnist *m, const char *what)
{
	if (m->ev && m->ev->phase)
		m->ev->phase(m->arg, what);
}

/* ---------------------------------------------------------------- phases */

static int nothing_awaited(const struct mnist *m)
{
	if (m->data_pending)
		return 0;
	for (size_t i = 0; i < m->n; i++) {
		if (m->nodes[i].waiting > 0)
			return 0;
	}
	return 1;
}

static void start_phase(struct mnist *m, enum phase p);

static void advance(struct loop *loop, void *arg)
{
	struct mnist *m = arg;

	m->next_timer = 0;
	if (nothing_awaited(m))
		start_phase(m, m->phase + 1);
}

static void schedule_advance(struct mnist *m)
{
	if (!m->next_timer && nothing_awaited(m) && m->phase < PH_WATCH)
		m->next_timer = loop_timer_add(m->loop, 0, advance, m);
}

static void settle(struct mnist *m, size_t i, int all)
{
	struct mnode *mn = &m->nodes[i];

	if (mn->waiting <= 0)
		return;
	mn->waiting = all ? 0 : mn->waiting - 1;
	if (mn->waiting == 0)
		schedule_advance(m);
}

/* The run failed before or while training: the first cause is kept. */
static void fail_run(struct mnist *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail_run(struct mnist *m, const char *fmt, ...)
{
	va_list ap;

	if (m->r.failed)
		return;
	m->r.failed = 1;
	va_start(ap, fmt);
	vsnprintf(m->r.failure, sizeof(m->r.failure), fmt, ap);
	va_end(ap);
}

static void node_error(struct mnist *m, size_t i, const char *code, const char *msg)
{
	struct mnist_node *n = &m->r.nodes[i];

	if (n->error[0])
		return;
	snprintf(n->error_code, sizeof(n->error_code), "%s", code ? code : "failed");
	snprintf(n->error, sizeof(n->error), "%s", msg ? msg : "failed");
}

static void finish(struct mnist *m);
static void begin_stop(struct mnist *m, int now);

/* Node i is lost (its agent went away, a request failed). */
static void node_broke(struct mnist *m, size_t i, const char *code, const char *msg)
{
	struct mnode *mn = &m->nodes[i];

	if (mn->gone)
		return;
	mn->gone = 1;
	node_error(m, i, code, msg);
	if (m->phase == PH_WATCH) {
		if (!m->r.nodes[i].ended) {
			m->r.nodes[i].ended = 1;
			m->r.nodes[i].exit_code = -1;
		}
		fail_run(m, "%s", m->r.nodes[i].error);
		begin_stop(m, 0);
		return;
	}
	settle(m, i, 1);
}

static void on_failed(struct sshpool *pool, struct pool_node *pn, void *arg)
{
	struct mnist *m = arg;

	node_broke(m, index_of(pn), node_error_code(pn), node_error_message(pn));
	if (m->phase == PH_WATCH)
		finish(m); /* when it was the last one running */
}

/* 1 when the answer is a failure (and the node is then out). */
static int reply_failed(struct mnist *m, struct pool_node *pn, json_t *result, const char *code,
                        const char *msg, const char *what)
{
	char text[CD_ERRLEN];

	if (result)
		return 0;
	if (node_state(pn) == NODE_FAILED) {
		settle(m, index_of(pn), 1);
		return 1;
	}
	snprintf(text, sizeof(text), "%s: %s failed: %s", node_host(pn), what,
	         msg ? msg : "no answer");
	node_broke(m, index_of(pn), code ? code : "agent", text);
	return 1;
}

/* ---------------------------------------------------------------- probe */

static void on_probe(struct pool_node *pn, json_t *result, const char *code, const char *msg,
                     void *arg)
{
	struct mnist *m = arg;

	if (reply_failed(m, pn, result, code, msg, "netprobe"))
		return;
	m->nodes[index_of(pn)].probe = json_incref(result);
	settle(m, index_of(pn), 0);
}

static void on_facts(struct pool_node *pn, json_t *result, const char *code, const char *msg,
                     void *arg)
{
	struct mnist *m = arg;

	if (reply_failed(m, pn, result, code, msg, "facts"))
		return;
	m->nodes[index_of(pn)].facts = json_incref(result);
	settle(m, index_of(pn), 0);
}

static void on_ready(struct sshpool *pool, struct pool_node *pn, void *arg)
{
	struct mnist *m = arg;
	json_t *req = proto_request(0, "netprobe");

	json_object_set_new(req, "no_firewall", json_true());
	sshpool_request(pn, req, m->o.request_timeout_ms, on_probe, m);
	if (m->o.mode != MNIST_EMBEDDED)
		sshpool_request(pn, proto_request(0, "facts"), m->o.request_timeout_ms, on_facts,
		                m);
}

static const struct sshpool_handlers pool_handlers = {.ready = on_ready, .failed = on_failed};

static void on_data_progress(void *arg, enum mnist_file f, long long got, long long total)
{
	struct mnist *m = arg;

	if (m->ev && m->ev->data_progress)
		m->ev->data_progress(m->arg, f, got, total);
}

static void on_data(void *arg, struct mnist_data *data, const char *err)
{
	struct mnist *m = arg;

	m->data_pending = 0;
	m->data = data;
	m->r.data_ms = cd_now_ms() - m->data_started;
	if (!data) {
		fail_run(m, "the dataset: %s", err ? err : "could not be prepared");
		finish(m); /* nothing can run: no need to wait for the nodes */
		return;
	}
	schedule_advance(m);
}

/* ---------------------------------------------------------------- plan */

/* Why node i cannot run torch (its facts), or NULL when it can. */
static const char *torch_missing(struct mnist *m, size_t i, char *why, size_t len)
{
	json_t *f = m->nodes[i].facts, *torch = json_object_get(f, "torch");
	const char *err = json_string_value(json_object_get(json_object_get(f, "errors"), "torch"));

	if (!json_is_object(json_object_get(f, "python"))) {
		snprintf(why, len, "%s: no python3 in PATH", m->r.nodes[i].host);
		return why;
	}
	if (!json_is_object(torch)) {
		snprintf(why, len, "%s: import torch failed%s%s", m->r.nodes[i].host,
		         err ? ": " : "", err ? err : "");
		return why;
	}
	return NULL;
}

static int cuda_ready(json_t *facts)
{
	json_t *torch = json_object_get(facts, "torch");

	return json_is_true(json_object_get(torch, "cuda_available")) &&
	       !json_is_null(json_object_get(torch, "nccl_version")) &&
	       json_object_get(torch, "nccl_version");
}

static void choose_mode(struct mnist *m)
{
	char why[CD_ERRLEN];
	const char *first = NULL;

	if (m->o.mode == MNIST_EMBEDDED) {
		m->r.mode = MNIST_EMBEDDED;
		return;
	}
	for (size_t i = 0; i < m->n && !first; i++)
		first = torch_missing(m, i, why, sizeof(why));
	if (!first) {
		m->r.mode = MNIST_TORCH;
		return;
	}
	if (m->o.mode == MNIST_AUTO) {
		m->r.mode = MNIST_EMBEDDED;
		snprintf(m->r.mode_note, sizeof(m->r.mode_note),
		         "embedded, because %s (torch mode needs PyTorch on every node)", first);
		return;
	}
	m->r.mode = MNIST_TORCH;
	for (size_t i = 0; i < m->n; i++) {
		if (torch_missing(m, i, why, sizeof(why)))
			node_error(m, i, "no-torch", why);
	}
	fail_run(m,
	         "%s: install PyTorch there (Debian: python3-torch; or pip/conda in the PATH "
	         "the agent sees), or run --mode embedded, which needs nothing on the nodes",
	         first);
}

static void choose_backend(struct mnist *m)
{
	const char *b = m->o.backend ? m->o.backend : "auto";
	int all_cuda = 1;

	if (m->r.mode == MNIST_EMBEDDED) {
		snprintf(m->r.backend, sizeof(m->r.backend), "tcp");
		return;
	}
	for (size_t i = 0; i < m->n; i++)
		all_cuda &= cuda_ready(m->nodes[i].facts);
	if (strcmp(b, "auto") == 0)
		b = all_cuda ? "nccl" : "gloo";
	if (strcmp(b, "nccl") == 0 && !all_cuda) {
		for (size_t i = 0; i < m->n; i++) {
			if (!cuda_ready(m->nodes[i].facts)) {
				node_error(m, i, "no-cuda", "torch there has no CUDA or no NCCL");
				fail_run(
				    m,
				    "%s: torch there has no CUDA or no NCCL, so --backend nccl "
				    "cannot run; use --backend gloo",
				    m->r.nodes[i].host);
				break;
			}
		}
	}
	snprintf(m->r.backend, sizeof(m->r.backend), "%s", b);
}

static void plan(struct mnist *m)
{
	struct bench_node bn;
	int rank = 0;

	for (size_t i = 0; i < m->n; i++) {
		if (m->nodes[i].gone) {
			fail_run(m, "%s (a training job needs every node)", m->r.nodes[i].error);
			return;
		}
	}
	if (m->r.failed)
		return;
	choose_mode(m);
	if (m->r.failed)
		return;
	choose_backend(m);
	if (m->r.failed)
		return;
	for (size_t i = 0; i < m->n; i++) {
		struct mnist_node *n = &m->r.nodes[i];
		json_t *torch = json_object_get(m->nodes[i].facts, "torch");

		netmodel_set_node(m->m, i, m->nodes[i].probe, NULL);
		memset(&bn, 0, sizeof(bn));
		bn.host = n->host;
		if (bench_pick_address(&m->m->nodes[i], m->o.iface, &bn) < 0) {
			node_error(m, i, "address", bn.error);
			fail_run(m, "%s", bn.error);
			return;
		}
		snprintf(n->ifname, sizeof(n->ifname), "%s", bn.ifname);
		snprintf(n->addr, sizeof(n->addr), "%s", bn.addr);
		snprintf(n->torch_version, sizeof(n->torch_version), "%s",
		         json_string_value(json_object_get(torch, "version"))
		             ? json_string_value(json_object_get(torch, "version"))
		             : "");
		m->nodes[i].python = json_string_value(
		    json_object_get(json_object_get(m->nodes[i].facts, "python"), "path"));
		n->first_rank = rank;
		n->nranks = m->o.nproc_per_node;
		rank += n->nranks;
	}
	m->r.nranks = rank;
}

/* ---------------------------------------------------------------- push */

static void remote_path(const struct mnist *m, const char *name, char *out, size_t len)
{
	snprintf(out, len, "%s/MNIST/raw/%s", m->o.remote_root, name);
}

static void on_pushed(void *arg, size_t i, int err, const char *msg)
{
	struct mnist *m = arg;

	m->r.nodes[i].pushed_files = push_files_sent(m->nodes[i].push);
	m->r.nodes[i].pushed_bytes = push_bytes_sent(m->nodes[i].push);
	if (err < 0) {
		char text[CD_ERRLEN];

		snprintf(text, sizeof(text), "%s: %s", m->r.nodes[i].host, msg);
		node_broke(m, i, "push", text);
		return;
	}
	settle(m, i, 0);
}

static void send_pushes(struct mnist *m)
{
	char path[512], hex[SHA256_HEX_LEN];
	struct sha256 s;
	unsigned char digest[32];

	m->push_started = cd_now_ms();
	for (int f = 0; f < MNIST_NFILES; f++) {
		remote_path(m, mnist_file_name((enum mnist_file)f), path, sizeof(path));
		push_file_init(&m->files[f], path, m->data->f[f].raw, m->data->f[f].len,
		               m->data->f[f].sha256);
	}
	m->nfiles = MNIST_NFILES;
	if (m->r.mode == MNIST_TORCH) {
		sha256_init(&s);
		sha256_update(&s, mnist_ddp_py, mnist_ddp_py_len);
		sha256_final(&s, digest);
		sha256_hex(digest, hex);
		snprintf(path, sizeof(path), "%s/%s", m->o.remote_root, SCRIPT_NAME);
		push_file_init(&m->files[m->nfiles++], path, mnist_ddp_py, mnist_ddp_py_len, hex);
	}
	say_phase(m, "push");
	for (size_t i = 0; i < m->n; i++) {
		m->nodes[i].waiting = 1;
		m->nodes[i].push = push_start(m->nodes[i].pn, m->files, m->nfiles,
		                              m->o.request_timeout_ms, on_pushed, m, i);
	}
}

/* ---------------------------------------------------------------- listen */

static void on_listen(struct pool_node *pn, json_t *result, const char *code, const char *msg,
                      void *arg)
{
	struct mnist *m = arg;
	size_t i = index_of(pn), k;
	json_t *l;

	if (reply_failed(m, pn, result, code, msg, "bench_listen"))
		return;
	json_array_foreach(json_object_get(result, "listeners"), k, l)
	{
		int rank = (int)json_integer_value(json_object_get(l, "rank"));
		int local = rank - m->r.nodes[i].first_rank;

		if (json_object_get(l, "error") || local < 0 || local >= m->r.nodes[i].nranks) {
			char text[CD_ERRLEN];

			snprintf(text, sizeof(text), "%s: cannot listen for rank %d: %s",
			         node_host(pn), rank,
			         json_string_value(json_object_get(l, "error")));
			node_broke(m, i, "listen", text);
			return;
		}
		m->nodes[i].ports[local] = (int)json_integer_value(json_object_get(l, "port"));
	}
	settle(m, i, 0);
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
		m->nodes[i].waiting = 1;
		sshpool_request(m->nodes[i].pn, req, m->o.request_timeout_ms, on_listen, m);
	}
}

/* ---------------------------------------------------------------- start */

static void on_started(struct pool_node *pn, json_t *result, const char *code, const char *msg,
                       void *arg)
{
	struct mnist *m = arg;
	size_t i = index_of(pn);

	if (reply_failed(m, pn, result, code, msg, "starting the job"))
		return;
	m->r.nodes[i].started = 1;
	settle(m, i, 0);
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
	char root[512];

	for (int l = 0; l < n->nranks; l++) {
		int rank = n->first_rank + l, port;
		size_t rn;

		rank_address(m, (rank + 1) % m->r.nranks, &rn, &port);
		json_array_append_new(ranks,
		                      json_pack("{sis{sssi}}", "rank", rank, "right", "address",
		                                m->r.nodes[rn].addr, "port", port));
	}
	snprintf(root, sizeof(root), "%s/MNIST/raw", m->o.remote_root);
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
	const struct mnist_node *n = &m->r.nodes[i], *master = &m->r.nodes[0];
	json_t *req = proto_request(0, "proc_start");
	char script[512], root[512], ckpt[512];

	snprintf(script, sizeof(script), "%s/%s", m->o.remote_root, SCRIPT_NAME);
	snprintf(root, sizeof(root), "%s", m->o.remote_root);
	snprintf(ckpt, sizeof(ckpt), "%s/mnist_mlp.pt", m->o.remote_root);
	/* The agent runs argv without a shell, so "~/" is expanded here by the
	 * job's cwd: the paths are given relative to the run directory. */
	json_object_set_new(req, "cwd", json_string(m->o.remote_root));
	json_object_set_new(req, "argv",
	                    mnist_torch_argv(m->nodes[i].python, n->torch_version, (int)m->n,
	                                     (int)i, n->nranks, master->addr, m->o.master_port,
	                                     SCRIPT_NAME, ".", "mnist_mlp.pt", m->r.backend,
	                                     &m->o));
	json_object_set_new(req, "env", mnist_torch_env(n->ifname, n->addr, m->r.backend));
	return req;
}

static void send_starts(struct mnist *m)
{
	say_phase(m, "train");
	m->train_started = m->last_output = cd_now_ms();
	m->r.push_ms = m->train_started - m->push_started;
	for (size_t i = 0; i < m->n; i++) {
		json_t *req =
		    m->r.mode == MNIST_TORCH ? torch_request(m, i) : embedded_request(m, i);

		m->nodes[i].waiting = 1;
		sshpool_request(m->nodes[i].pn, req, m->o.request_timeout_ms, on_started, m);
	}
}

/* ---------------------------------------------------------------- watch */

static void read_event(struct mnist *m, json_t *ev)
{
	const char *what = json_string_value(json_object_get(ev, "event"));
	long long epoch = json_integer_value(json_object_get(ev, "epoch"));

	if (strcmp(what, "epoch") == 0 && epoch >= 1 && epoch <= TRAIN_MAX_EPOCHS) {
		m->r.loss[epoch - 1] = json_number_value(json_object_get(ev, "loss"));
		m->r.epoch_seconds[epoch - 1] = json_number_value(json_object_get(ev, "seconds"));
		if (epoch > m->r.epochs_done)
			m->r.epochs_done = (int)epoch;
	} else if (strcmp(what, "test") == 0) {
		m->r.have_accuracy = 1;
		m->r.test_accuracy = json_number_value(json_object_get(ev, "accuracy"));
		m->r.test_correct = json_integer_value(json_object_get(ev, "correct"));
		m->r.test_total = json_integer_value(json_object_get(ev, "total"));
	}
}

static void read_lines(struct mnist *m, size_t i, json_t *lines)
{
	struct mnist_node *n = &m->r.nodes[i];
	size_t k;
	json_t *l;

	json_array_foreach(lines, k, l)
	{
		int64_t wall = json_integer_value(json_array_get(l, 0));
		const char *stream = json_string_value(json_array_get(l, 1));
		const char *text = json_string_value(json_array_get(l, 2));
		json_t *ev;

		if (!stream || !text)
			continue;
		m->last_output = cd_now_ms();
		if (mnist_parse_event(text, &ev) == 1) {
			read_event(m, ev);
			json_decref(ev);
		} else if (!n->first_error[0] && mnist_is_error_line(text)) {
			snprintf(n->first_error, sizeof(n->first_error), "%s", text);
			n->first_error_ms = wall;
		}
		if (m->ev && m->ev->line)
			m->ev->line(m->arg, i, stream, text);
	}
}

/* Embedded: every rank's parameter hash, from the nodes' results. */
static void read_result(struct mnist *m, size_t i, json_t *result)
{
	json_t *ranks = json_object_get(result, "ranks"), *r;
	size_t k;

	json_array_foreach(ranks, k, r)
	{
		const char *h = json_string_value(json_object_get(r, "param_sha256"));

		if (!h)
			continue;
		if (k == 0)
			snprintf(m->r.nodes[i].param_sha256, sizeof(m->r.nodes[i].param_sha256),
			         "%s", h);
		if (!m->r.param_sha256[0])
			snprintf(m->r.param_sha256, sizeof(m->r.param_sha256), "%s", h);
		else if (strcmp(m->r.param_sha256, h) != 0)
			m->r.hashes_identical = 0;
	}
}

static void node_ended(struct mnist *m, size_t i, json_t *result)
{
	struct mnist_node *n = &m->r.nodes[i];
	const char *error = json_string_value(json_object_get(result, "error"));

	n->ended = 1;
	n->exit_code = (int)json_integer_value(json_object_get(result, "exit_code"));
	n->signal = (int)json_integer_value(json_object_get(result, "signal"));
	if (json_is_object(json_object_get(result, "result")))
		read_result(m, i, json_object_get(result, "result"));
	if (n->exit_code == 0 && n->signal == 0 && !error)
		return;
	if (error)
		node_error(m, i, "job", error);
	else if (n->signal)
		node_error(m, i, "job", m->stopping ? "stopped" : "killed by a signal");
	else
		node_error(m, i, "job", "exited with an error");
	if (!m->stopping) {
		fail_run(m, "%s: the job %s%s%s", n->host,
		         n->signal ? "was killed by a signal" : "failed",
		         n->first_error[0] ? ": " : "", n->first_error);
		begin_stop(m, 0);
	}
}

static void on_poll(struct pool_node *pn, json_t *result, const char *code, const char *msg,
                    void *arg)
{
	struct mnist *m = arg;
	size_t i = index_of(pn);
	struct mnode *mn = &m->nodes[i];

	mn->polling = 0;
	if (m->phase != PH_WATCH || m->r.nodes[i].ended)
		return;
	if (reply_failed(m, pn, result, code, msg, "job_poll")) {
		finish(m);
		return;
	}
	read_lines(m, i, json_object_get(result, "lines"));
	mn->next_line = json_integer_value(json_object_get(result, "next"));
	if (strcmp(json_string_value(json_object_get(result, "state")) ?: "", "done") == 0) {
		node_ended(m, i, result);
		finish(m);
	}
}

static void send_stop(struct mnist *m, size_t i);

static void stop_others(struct loop *loop, void *arg)
{
	struct mnist *m = arg;

	m->stop_timer = 0;
	for (size_t i = 0; i < m->n; i++) {
		if (!m->r.nodes[i].ended && !m->nodes[i].gone)
			send_stop(m, i);
	}
}

/* Stop the nodes still running: now, or after STOP_GRACE_MS in which they
 * may end on their own (a rank's peers usually fail right after it, and
 * their own error is the better evidence). */
static void begin_stop(struct mnist *m, int now)
{
	m->stopping = 1;
	if (now) {
		if (m->stop_timer)
			loop_timer_cancel(m->loop, m->stop_timer);
		stop_others(m->loop, m);
	} else if (!m->stop_timer) {
		m->stop_timer = loop_timer_add(m->loop, STOP_GRACE_MS, stop_others, m);
	}
}

static void on_stopped(struct pool_node *pn, json_t *result, const char *code, const char *msg,
                       void *arg)
{
	struct mnist *m = arg;
	size_t i = index_of(pn);

	if (m->r.nodes[i].ended)
		return;
	if (reply_failed(m, pn, result, code, msg, "job_stop")) {
		finish(m);
		return;
	}
	read_lines(m, i, json_object_get(result, "lines"));
	node_ended(m, i, result);
	finish(m);
}

static void send_stop(struct mnist *m, size_t i)
{
	json_t *req;

	if (m->nodes[i].stop_sent)
		return;
	m->nodes[i].stop_sent = 1;
	req = proto_request(0, "job_stop");
	json_object_set_new(req, "grace_ms", json_integer(JOB_STOP_WAIT));
	json_object_set_new(req, "since", json_integer(m->nodes[i].next_line));
	sshpool_request(m->nodes[i].pn, req, m->o.request_timeout_ms + JOB_STOP_WAIT, on_stopped,
	                m);
}

static void poll_nodes(struct loop *loop, void *arg)
{
	struct mnist *m = arg;
	int64_t now = cd_now_ms();

	m->poll_timer = 0;
	if (m->phase != PH_WATCH)
		return;
	if (!m->stopping && now - m->train_started > m->o.timeout_ms) {
		fail_run(m, "the job did not end within %d s (--timeout); stopped it",
		         m->o.timeout_ms / 1000);
		begin_stop(m, 1);
	} else if (!m->stopping && now - m->last_output > m->o.stall_ms) {
		fail_run(m,
		         "no output from any node for %d s: the job hangs (--stall-timeout); "
		         "stopped it",
		         m->o.stall_ms / 1000);
		begin_stop(m, 1);
	}
	for (size_t i = 0; i < m->n; i++) {
		struct mnode *mn = &m->nodes[i];
		json_t *req;

		if (mn->gone || mn->polling || mn->stop_sent || m->r.nodes[i].ended)
			continue;
		req = proto_request(0, "job_poll");
		json_object_set_new(req, "since", json_integer(mn->next_line));
		mn->polling = 1;
		sshpool_request(mn->pn, req, m->o.request_timeout_ms, on_poll, m);
	}
	if (m->phase == PH_WATCH)
		m->poll_timer = loop_timer_add(m->loop, POLL_EVERY_MS, poll_nodes, m);
}

/* ---------------------------------------------------------------- end */

static void finish(struct mnist *m)
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
	if (m->poll_timer)
		loop_timer_cancel(m->loop, m->poll_timer);
	if (m->stop_timer)
		loop_timer_cancel(m->loop, m->stop_timer);
	m->poll_timer = m->stop_timer = 0;
	if (!m->r.failed && m->r.mode == MNIST_EMBEDDED && !m->r.hashes_identical)
		fail_run(m, "the ranks ended with different parameters");
	if (!m->r.failed && !m->r.have_accuracy)
		fail_run(m, "the job ended without reporting a test accuracy");
	m->r.elapsed_ms = cd_now_ms() - m->started;
	if (m->ev && m->ev->done)
		m->ev->done(m->arg);
}

static void start_phase(struct mnist *m, enum phase p)
{
	m->phase = p;
	if (m->r.failed && p <= PH_START) {
		finish(m);
		return;
	}
	switch (p) {
	case PH_PROBE:
		return;
	case PH_PUSH:
		plan(m);
		if (m->r.failed) {
			finish(m);
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
				fail_run(m, "%s (a training job needs every node)",
				         m->r.nodes[i].error);
				finish(m);
				return;
			}
		}
		send_starts(m);
		break;
	case PH_WATCH:
		for (size_t i = 0; i < m->n; i++) {
			if (m->nodes[i].gone && !m->r.failed) {
				fail_run(m, "%s", m->r.nodes[i].error);
				begin_stop(m, 1);
			}
		}
		m->poll_timer = loop_timer_add(m->loop, 0, poll_nodes, m);
		return;
	case PH_DONE:
		finish(m);
		return;
	}
	schedule_advance(m);
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
	o->remote_root = "~/.cache/clusterdoc/data";
	o->timeout_ms = 30 * 60 * 1000;
	o->stall_ms = 5 * 60 * 1000;
	o->ring_stall_ms = 60000;
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
	m->nodes = cd_calloc(nhosts ? nhosts : 1, sizeof(*m->nodes));
	m->r.nodes = cd_calloc(nhosts ? nhosts : 1, sizeof(*m->r.nodes));
	m->r.nnodes = nhosts;
	m->r.mode = o->mode;
	m->r.hashes_identical = 1;
	m->phase = PH_PROBE;
	for (size_t i = 0; i < nhosts; i++) {
		m->r.nodes[i].host = m->m->nodes[i].host;
		m->nodes[i].pn = sshpool_add(pool, hosts[i]);
		node_set_data(m->nodes[i].pn, (void *)(uintptr_t)i);
		m->nodes[i].waiting = o->mode == MNIST_EMBEDDED ? 1 : 2; /* netprobe (, facts) */
	}
	say_phase(m, "data");
	m->data_pending = 1;
	m->prep =
	    mnist_data_prepare(loop, &o->data, on_data_progress, on_data, m, err, sizeof(err));
	if (!m->prep) {
		m->data_pending = 0;
		fail_run(m, "the dataset: %s", err);
	}
	if (nhosts == 0)
		fail_run(m, "no nodes");
	if (!m->r.failed)
		sshpool_start(pool, &pool_handlers, m);
	else
		m->next_timer = loop_timer_add(loop, 0, advance, m);
	return m;
}

const struct mnist_report *mnist_report(const struct mnist *m)
{
	return &m->r;
}

void mnist_free(struct mnist *m)
{
	if (!m)
		return;
	if (m->next_timer)
		loop_timer_cancel(m->loop, m->next_timer);
	if (m->poll_timer)
		loop_timer_cancel(m->loop, m->poll_timer);
	if (m->stop_timer)
		loop_timer_cancel(m->loop, m->stop_timer);
	mnist_prep_free(m->prep);
	for (size_t i = 0; i < m->n; i++) {
		json_decref(m->nodes[i].probe);
		json_decref(m->nodes[i].facts);
		push_free(m->nodes[i].push);
	}
	for (size_t f = 0; f < m->nfiles; f++)
		push_file_fini(&m->files[f]);
	mnist_data_free(m->data);
	free(m->nodes);
	free(m->r.nodes);
	netmodel_free(m->m);
	free(m);
}
