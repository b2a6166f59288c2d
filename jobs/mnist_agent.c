/* SPDX-License-Identifier: MIT */
/*
 * mnist_agent.c - the embedded trainer's ranks on one node (see
 * mnist_agent.h).
 */
#include "jobs/mnist_agent.h"
#include "collectives/bench_agent.h"
#include "jobs/mlp.h"
#include "collectives/ring.h"
#include "jobs/train.h"
#include "cd.h"
#include "filerecv.h"
#include "fsutil.h"
#include "idx.h"
#include "job.h"
#include "proto.h"
#include "sockaddr.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_FILE_BYTES (64 << 20)

static const struct {
	const char *name;
	enum idx_kind kind;
} files[4] = {
    {"train-images-idx3-ubyte", IDX_IMAGES},
    {"train-labels-idx1-ubyte", IDX_LABELS},
    {"t10k-images-idx3-ubyte", IDX_IMAGES},
    {"t10k-labels-idx1-ubyte", IDX_LABELS},
};

struct rank_work;

struct mnist_work {
	unsigned char *bytes[4];
	struct idx_info idx[4];
	struct train_set train, test;
	struct train_opts opts; /* rank set per thread */
	char token[65];
	int nranks, conns, stall_ms, connect_timeout_ms;
	int abort_rd, abort_wr; /* closing abort_wr aborts every ring wait */
	struct rank_work *ranks;
	int nlocal, running;
	pthread_mutex_t mu;
};

struct rank_work {
	struct mnist_work *w;
	int rank, listen_fd, started;
	struct sockaddr_storage right;
	socklen_t right_len;
	pthread_t thread;
	struct ring *ring;
	float *scratch;
	struct train_result res;
	int failed;
	char error[CD_ERRLEN];
};

/* ------------------------------------------------------------ data */

static int load_data(struct mnist_work *w, const char *dir, char *msg, size_t msglen)
{
	char path[PATH_MAX + 64], err[CD_ERRLEN];

	for (int f = 0; f < 4; f++) {
		size_t len = 0;

		snprintf(path, sizeof(path), "%s/%s", dir, files[f].name);
		if (cd_read_file(path, MAX_FILE_BYTES, &w->bytes[f], &len, msg, msglen) < 0)
			return -1;
		if (idx_parse_mnist(w->bytes[f], len, files[f].kind, &w->idx[f], err, sizeof(err)) <
		    0) {
			snprintf(msg, msglen, "%s: %s", path, err);
			return -1;
		}
	}
	if (w->idx[0].count != w->idx[1].count || w->idx[2].count != w->idx[3].count) {
		snprintf(msg, msglen,
		         "%s: %zu training images but %zu labels, %zu test images but %zu labels",
		         dir, w->idx[0].count, w->idx[1].count, w->idx[2].count, w->idx[3].count);
		return -1;
	}
	w->train = (struct train_set){w->idx[0].data, w->idx[1].data, w->idx[0].count};
	w->test = (struct train_set){w->idx[2].data, w->idx[3].data, w->idx[2].count};
	return 0;
}

/* ------------------------------------------------------------ ranks */

static int ring_sum(void *ctx, float *buf, size_t count, char *err, size_t errlen)
{
	struct rank_work *r = ctx;
	struct ring_error e;

	if (ring_allreduce(r->ring, buf, r->scratch, count, COLL_FLOAT32, &e) < 0) {
		snprintf(err, errlen, "%s (%s)", e.msg, ring_fail_name(e.kind));
		return -1;
	}
	memcpy(buf, r->scratch, count * sizeof(float));
	return 0;
}

static int on_epoch(void *ctx, int epoch, double loss, double seconds)
{
	struct rank_work *r = ctx;

	job_logf("log", "rank %d: epoch %d loss %.4f (%.1f s)", r->rank, epoch, loss, seconds);
	if (r->rank == 0)
		job_logf("out",
		         "CDMNIST {\"event\": \"epoch\", \"epoch\": %d, \"loss\": %.6f, "
		         "\"seconds\": %.3f}",
		         epoch, loss, seconds);
	return 0;
}

static json_t *rank_json(const struct rank_work *r)
{
	json_t *loss = json_array(), *secs = json_array(), *o;

	for (int e = 0; e < r->res.epochs_done; e++) {
		json_array_append_new(loss, json_real(r->res.loss[e]));
		json_array_append_new(secs, json_real(r->res.epoch_seconds[e]));
	}
	o = json_pack("{sisisoso}", "rank", r->rank, "epochs_done", r->res.epochs_done, "loss",
	              loss, "seconds", secs);
	if (r->failed) {
		json_object_set_new(o, "error", json_string(r->error));
		return o;
	}
	json_object_set_new(o, "test_correct", json_integer(r->res.test_correct));
	json_object_set_new(o, "test_total", json_integer(r->res.test_total));
	json_object_set_new(o, "test_accuracy", json_real(r->res.test_accuracy));
	json_object_set_new(o, "param_sha256", json_string(r->res.param_sha256));
	return o;
}

/* The last rank to end reports the node's result. */
static void rank_ended(struct mnist_work *w)
{
	json_t *ranks;
	const char *error = NULL;

	pthread_mutex_lock(&w->mu);
	if (--w->running > 0) {
		pthread_mutex_unlock(&w->mu);
		return;
	}
	pthread_mutex_unlock(&w->mu);
	ranks = json_array();
	for (int k = 0; k < w->nlocal; k++) {
		json_array_append_new(ranks, rank_json(&w->ranks[k]));
		if (w->ranks[k].failed && !error)
			error = w->ranks[k].error;
	}
	job_finish(error ? 1 : 0, 0, error, json_pack("{so}", "ranks", ranks));
}

static void *rank_main(void *arg)
{
	struct rank_work *r = arg;
	struct mnist_work *w = r->w;
	struct ring_opts ro = {.rank = r->rank,
	                       .nranks = w->nranks,
	                       .conns = w->conns,
	                       .token = w->token,
	                       .connect_timeout_ms = w->connect_timeout_ms,
	                       .stall_ms = w->stall_ms,
	                       .abort_fd = w->abort_rd};
	struct train_opts o = w->opts;
	struct ring_error e;
	char err[CD_ERRLEN];

	r->ring =
	    ring_establish(&ro, r->listen_fd, w->nranks > 1 ? (struct sockaddr *)&r->right : NULL,
	                   r->right_len, &e);
	if (!r->ring) {
		r->failed = 1;
		snprintf(r->error, sizeof(r->error), "rank %d: %.400s (%s)", r->rank, e.msg,
		         ring_fail_name(e.kind));
		job_logf("err", "%s", r->error);
		goto out;
	}
	r->scratch = cd_malloc(MLP_NPARAMS * sizeof(float));
	o.rank = r->rank;
	if (train_run(&o, &w->train, &w->test, ring_sum, on_epoch, r, &r->res, err, sizeof(err)) <
	    0) {
		r->failed = 1;
		snprintf(r->error, sizeof(r->error), "rank %d: %.400s", r->rank, err);
		job_logf("err", "%s", r->error);
		goto out;
	}
	job_logf("log", "rank %d: test accuracy %.4f, parameters %s", r->rank, r->res.test_accuracy,
	         r->res.param_sha256);
	if (r->rank == 0)
		job_logf("out",
		         "CDMNIST {\"event\": \"test\", \"correct\": %lld, \"total\": %lld, "
		         "\"accuracy\": %.6f}",
		         r->res.test_correct, r->res.test_total, r->res.test_accuracy);
out:
	ring_close(r->ring);
	r->ring = NULL;
	rank_ended(w);
	return NULL;
}

/* ------------------------------------------------------------ the job */

static void work_free(struct mnist_work *w)
{
	if (!w)
		return;
	for (int k = 0; k < w->nlocal; k++) {
		if (w->ranks[k].listen_fd >= 0)
			close(w->ranks[k].listen_fd);
		free(w->ranks[k].scratch);
	}
	for (int f = 0; f < 4; f++)
		free(w->bytes[f]);
	if (w->abort_rd >= 0)
		close(w->abort_rd);
	if (w->abort_wr >= 0)
		close(w->abort_wr);
	pthread_mutex_destroy(&w->mu);
	free(w->ranks);
	free(w);
}

static void mnist_stop(void *work, int grace_ms)
{
	struct mnist_work *w = work;

	pthread_mutex_lock(&w->mu);
	if (w->abort_wr >= 0) {
		close(w->abort_wr); /* every ring wait sees the hangup */
		w->abort_wr = -1;
	}
	pthread_mutex_unlock(&w->mu);
}

static void mnist_reap(void *work, int force)
{
	struct mnist_work *w = work;

	mnist_stop(w, 0);
	for (int k = 0; k < w->nlocal; k++) {
		if (w->ranks[k].started)
			pthread_join(w->ranks[k].thread, NULL);
	}
	work_free(w);
}

static const struct job_kind mnist_kind = {
    .name = "embedded mnist", .stop = mnist_stop, .reap = mnist_reap};

static int read_double(json_t *req, const char *key, double lo, double hi, double *out)
{
	json_t *v = json_object_get(req, key);

	if (!v)
		return 0;
	if (!json_is_number(v) || json_number_value(v) < lo || json_number_value(v) > hi)
		return -1;
	*out = json_number_value(v);
	return 0;
}

static int read_options(json_t *req, struct mnist_work *w, char *msg, size_t msglen)
{
	const char *token = json_string_value(json_object_get(req, "token"));
	long long nranks = -1, conns = RING_DEFAULT_CONNS, stall = 60000, connect = 10000;
	long long epochs = 2, batch = 64, seed = 1;
	double lr = 0.05, momentum = 0.9;

	if (!ring_token_valid(token)) {
		snprintf(msg, msglen, "\"token\" must be 1 to 64 letters and digits");
		return -1;
	}
	if (proto_field_int(req, "nranks", 1, COLL_MAX_RANKS, &nranks) < 0 || nranks < 1 ||
	    proto_field_int(req, "conns", 1, RING_MAX_CONNS, &conns) < 0 ||
	    proto_field_int(req, "stall_ms", 100, 3600000, &stall) < 0 ||
	    proto_field_int(req, "connect_timeout_ms", 100, 600000, &connect) < 0 ||
	    proto_field_int(req, "epochs", 1, TRAIN_MAX_EPOCHS, &epochs) < 0 ||
	    proto_field_int(req, "batch", 1, MLP_MAX_BATCH, &batch) < 0 ||
	    proto_field_int(req, "seed", 0, LLONG_MAX, &seed) < 0 ||
	    read_double(req, "lr", 1e-9, 100, &lr) < 0 ||
	    read_double(req, "momentum", 0, 0.999999, &momentum) < 0) {
		snprintf(msg, msglen,
		         "\"nranks\", \"conns\", \"stall_ms\", \"connect_timeout_ms\", \"epochs\", "
		         "\"batch\", \"seed\", \"lr\" or \"momentum\" is missing or out of range");
		return -1;
	}
	snprintf(w->token, sizeof(w->token), "%s", token);
	w->nranks = (int)nranks;
	w->conns = (int)conns;
	w->stall_ms = (int)stall;
	w->connect_timeout_ms = (int)connect;
	train_opts_default(&w->opts);
	w->opts.world = (int)nranks;
	w->opts.epochs = (int)epochs;
	w->opts.batch = (int)batch;
	w->opts.seed = (uint64_t)seed;
	w->opts.lr = (float)lr;
	w->opts.momentum = (float)momentum;
	return 0;
}

static int read_ranks(json_t *req, struct mnist_work *w, char *msg, size_t msglen)
{
	json_t *ranks = json_object_get(req, "ranks"), *r;
	size_t i;

	if (!json_is_array(ranks) || json_array_size(ranks) == 0 ||
	    json_array_size(ranks) > BENCH_MAX_LOCAL_RANKS) {
		snprintf(msg, msglen, "\"ranks\" must be an array of 1 to %d entries",
		         BENCH_MAX_LOCAL_RANKS);
		return -1;
	}
	w->ranks = cd_calloc(json_array_size(ranks), sizeof(*w->ranks));
	json_array_foreach(ranks, i, r)
	{
		struct rank_work *rw = &w->ranks[w->nlocal++];
		json_t *right = json_object_get(r, "right");
		const char *addr = json_string_value(json_object_get(right, "address"));
		long long rank = -1, port = -1, scope = 0;

		rw->w = w;
		rw->listen_fd = -1;
		if (proto_field_int(r, "rank", 0, w->nranks - 1, &rank) < 0 || rank < 0) {
			snprintf(msg, msglen, "ranks[%zu] needs a \"rank\" below nranks", i);
			return -1;
		}
		rw->rank = (int)rank;
		if (w->nranks == 1)
			continue;
		if (proto_field_int(right, "port", 1, 65535, &port) < 0 || port < 1 ||
		    proto_field_int(right, "scope_id", 0, 0xffffffffLL, &scope) < 0 || !addr ||
		    cd_sockaddr_from_text(addr, (unsigned)scope, (int)port, &rw->right,
		                          &rw->right_len) != 0) {
			snprintf(msg, msglen, "ranks[%zu] needs \"right\": {\"address\", \"port\"}",
			         i);
			return -1;
		}
		rw->listen_fd = bench_listener_take(rw->rank);
		if (rw->listen_fd < 0) {
			snprintf(msg, msglen, "rank %d has no listener: send bench_listen first",
			         rw->rank);
			return -1;
		}
	}
	return 0;
}

json_t *mnist_agent_start(json_t *req, const char **code, char *msg, size_t msglen)
{
	struct mnist_work *w = cd_calloc(1, sizeof(*w));
	char dir[PATH_MAX];
	int pipefd[2];

	pthread_mutex_init(&w->mu, NULL);
	w->abort_rd = w->abort_wr = -1;
	*code = "bad-request";
	if (read_options(req, w, msg, msglen) < 0 || read_ranks(req, w, msg, msglen) < 0 ||
	    filerecv_expand(json_string_value(json_object_get(req, "data_dir")), dir, sizeof(dir),
	                    msg, msglen) < 0)
		goto fail;
	*code = "data";
	if (load_data(w, dir, msg, msglen) < 0)
		goto fail;
	*code = "io";
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		snprintf(msg, msglen, "pipe: %s", strerror(errno));
		goto fail;
	}
	w->abort_rd = pipefd[0];
	w->abort_wr = pipefd[1];
	*code = "busy";
	if (job_begin(&mnist_kind, w, msg, msglen) < 0)
		goto fail;
	w->running = w->nlocal;
	for (int k = 0; k < w->nlocal; k++) {
		if (pthread_create(&w->ranks[k].thread, NULL, rank_main, &w->ranks[k]) == 0) {
			w->ranks[k].started = 1;
			continue;
		}
		w->ranks[k].failed = 1;
		snprintf(w->ranks[k].error, sizeof(w->ranks[k].error),
		         "could not start a thread for rank %d", w->ranks[k].rank);
		rank_ended(w);
	}
	return json_pack("{si}", "ranks", w->nlocal);
fail:
	bench_shutdown();
	work_free(w);
	return NULL;
}
