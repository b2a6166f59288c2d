/* SPDX-License-Identifier: MIT */
/*
 * bench_agent.c - the agent's side of `clusterdoc bench` (see bench_agent.h):
 * request parsing, the listeners kept between bench_listen and bench_run,
 * one thread per local rank running its backend's sweep, and the handler's
 * thread following their sizes for the progress lines.
 */
#include "collectives/bench_agent.h"
#include "collectives/coll.h"
#include "collectives/nccl.h"
#include "collectives/nccl_env.h"
#include "collectives/nccl_netlog.h"
#include "collectives/ring.h"
#include "cd.h"
#include "proto.h"
#include "sockaddr.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BENCH_STDIN       0   /* its hangup means the head went away */
#define BENCH_PROGRESS_MS 100 /* at most ten progress lines a second */

/* The listeners of the last bench_listen, by local rank. */
static struct {
	int rank;
	int fd;
} listeners[BENCH_MAX_LOCAL_RANKS];
static size_t nlisteners;

void bench_shutdown(void)
{
	for (size_t i = 0; i < nlisteners; i++)
		close(listeners[i].fd);
	nlisteners = 0;
}

int bench_listener_take(int rank)
{
	for (size_t i = 0; i < nlisteners; i++) {
		if (listeners[i].rank == rank) {
			int fd = listeners[i].fd;

			listeners[i] = listeners[--nlisteners];
			return fd;
		}
	}
	return -1;
}

static int listener_of(int rank)
{
	for (size_t i = 0; i < nlisteners; i++) {
		if (listeners[i].rank == rank)
			return listeners[i].fd;
	}
	return -1;
}

/* An integer field in [lo, hi], or dflt when absent; -1 when malformed. */
static int read_int(json_t *obj, const char *key, long long lo, long long hi, long long dflt,
                    long long *out)
{
	*out = dflt;
	return proto_field_int(obj, key, lo, hi, out);
}

/* ---------------------------------------------------------------- caps */

json_t *bench_caps(json_t *req, const char **code, char *msg, size_t msglen)
{
	char why[CD_ERRLEN] = "", version[32] = "", err[CD_ERRLEN];
	struct nccl_netlog_scope scope;
	int gpus = 0;
	json_t *nccl;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	/* the first NCCL calls of the process (loading it): NCCL logs nothing
	 * here, but should a version read its debug variables this early, they
	 * are the bench's already */
	nccl_netlog_begin(&scope);
	if (nccl_backend_available(&gpus, why, sizeof(why)) == 0) {
		nccl_backend_version(version, sizeof(version), err, sizeof(err));
		nccl = json_pack("{sbsiss}", "available", 1, "gpus", gpus, "version", version);
	} else {
		nccl = json_pack("{sbsssi}", "available", 0, "reason", why, "gpus", 0);
	}
	nccl_netlog_end(&scope);
	return json_pack("{sosi}", "nccl", nccl, "cpus", (int)(cpus > 0 ? cpus : 1));
}

/* ---------------------------------------------------------------- listen */

json_t *bench_listen(json_t *req, const char **code, char *msg, size_t msglen)
{
	json_t *ranks = json_object_get(req, "ranks"), *r, *out;
	size_t i;

	if (!json_is_array(ranks) || json_array_size(ranks) == 0 ||
	    json_array_size(ranks) > BENCH_MAX_LOCAL_RANKS)
		return proto_handler_fail(code, "bad-request", msg, msglen,
		                          "\"ranks\" must be an array of 1 to %d entries",
		                          BENCH_MAX_LOCAL_RANKS);
	bench_shutdown();
	out = json_array();
	json_array_foreach(ranks, i, r)
	{
		const char *text = json_string_value(json_object_get(r, "address"));
		long long rank, scope;
		struct sockaddr_storage addr;
		socklen_t len;
		char err[CD_ERRLEN];
		int fd, port;

		if (read_int(r, "rank", 0, COLL_MAX_RANKS - 1, -1, &rank) < 0 || rank < 0 ||
		    read_int(r, "scope_id", 0, 0xffffffffLL, 0, &scope) < 0 || !text ||
		    cd_sockaddr_from_text(text, scope, 0, &addr, &len) != 0) {
			json_decref(out);
			bench_shutdown();
			return proto_handler_fail(code, "bad-request", msg, msglen,
			                          "ranks[%zu] needs \"rank\" and an IP \"address\"",
			                          i);
		}
		if (ring_listen((struct sockaddr *)&addr, len, &fd, &port, err, sizeof(err)) < 0) {
			json_array_append_new(out, json_pack("{sIss}", "rank", rank, "error", err));
			continue;
		}
		listeners[nlisteners].rank = (int)rank;
		listeners[nlisteners++].fd = fd;
		json_array_append_new(out, json_pack("{sIsi}", "rank", rank, "port", port));
	}
	return json_pack("{so}", "listeners", out);
}

/* ---------------------------------------------------------------- nccl id */

json_t *bench_nccl_id(json_t *req, const char **code, char *msg, size_t msglen)
{
	char hex[257], err[CD_ERRLEN];
	struct nccl_netlog_scope scope;
	struct nccl_env_scope vars;
	json_t *env = json_object_get(req, "env");
	int rc;

	if (nccl_env_check(env, msg, msglen) < 0) {
		*code = "bad-request";
		return NULL;
	}
	/* the plan's variables: NCCL's bootstrap reads NCCL_SOCKET_* here */
	nccl_env_begin(&vars, env);
	/* NCCL's first log line may be this one's: its debug file is set by then */
	nccl_netlog_begin(&scope);
	rc = nccl_backend_unique_id(hex, sizeof(hex), err, sizeof(err));
	nccl_netlog_end(&scope);
	nccl_env_end(&vars);
	if (rc < 0)
		return proto_handler_fail(code, "unavailable", msg, msglen, "%s", err);
	return json_pack("{ss}", "id", hex);
}

/* ---------------------------------------------------------------- run */

/* What every local rank shares, read from the request. */
struct run_params {
	int nccl; /* 0 = tcp */
	const char *token;
	const char *nccl_id;
	int nranks, conns, stall_ms, connect_timeout_ms;
	size_t sizes[BENCH_MAX_SIZES];
	struct coll_sweep sweep;
};

/* The handler's thread waits here for the ranks' threads to end. */
struct run_wait {
	pthread_mutex_t mu;
	pthread_cond_t ended; /* on CLOCK_MONOTONIC */
	size_t running;       /* threads started and not yet ended */
};

/* One local rank: its inputs, then its outcome. */
struct rank_job {
	const struct run_params *p;
	struct run_wait *wait;
	int rank, gpu, listen_fd;
	int started; /* its thread runs */
	struct sockaddr_storage right;
	socklen_t right_len;

	struct coll_result results[BENCH_MAX_SIZES];
	size_t done; /* moved by the sweep while it runs (ring.h, nccl.h) */
	int failed;
	struct ring_error error;
};

static void *run_tcp_rank(struct rank_job *j)
{
	const struct run_params *p = j->p;
	struct ring_opts o = {.rank = j->rank,
	                      .nranks = p->nranks,
	                      .conns = p->conns,
	                      .token = p->token,
	                      .connect_timeout_ms = p->connect_timeout_ms,
	                      .stall_ms = p->stall_ms,
	                      .abort_fd = BENCH_STDIN};
	struct ring *r =
	    ring_establish(&o, j->listen_fd, p->nranks > 1 ? (struct sockaddr *)&j->right : NULL,
	                   j->right_len, &j->error);

	if (!r || ring_sweep(r, &p->sweep, j->results, &j->done, &j->error) < 0)
		j->failed = 1;
	ring_close(r);
	return NULL;
}

static void *run_nccl_rank(struct rank_job *j)
{
	const struct run_params *p = j->p;
	int rc = nccl_backend_sweep(p->nccl_id, j->rank, p->nranks, j->gpu, p->stall_ms, &p->sweep,
	                            j->results, &j->done, j->error.msg, sizeof(j->error.msg));

	if (rc < 0) {
		j->failed = 1;
		j->error.kind = rc == CD_ERR_TIMEOUT ? RING_STALLED : RING_IO;
		j->error.peer_rank = -1;
		j->error.bytes = j->done < p->sweep.nsizes ? p->sweep.sizes[j->done] : 0;
	}
	return NULL;
}

static void *run_rank(void *arg)
{
	struct rank_job *j = arg;

	if (j->p->nccl)
		run_nccl_rank(j);
	else
		run_tcp_rank(j);
	pthread_mutex_lock(&j->wait->mu);
	j->wait->running--;
	pthread_cond_signal(&j->wait->ended);
	pthread_mutex_unlock(&j->wait->mu);
	return NULL;
}

static int read_sizes(json_t *req, struct run_params *p, char *msg, size_t msglen)
{
	json_t *sizes = json_object_get(req, "sizes"), *v;
	size_t i;

	if (!json_is_array(sizes) || json_array_size(sizes) == 0 ||
	    json_array_size(sizes) > BENCH_MAX_SIZES) {
		snprintf(msg, msglen, "\"sizes\" must be an array of 1 to %d byte counts",
		         BENCH_MAX_SIZES);
		return -1;
	}
	json_array_foreach(sizes, i, v)
	{
		if (!json_is_integer(v) || json_integer_value(v) < 1 ||
		    (unsigned long long)json_integer_value(v) > BENCH_MAX_BYTES) {
			snprintf(msg, msglen, "sizes[%zu] must be 1 to %llu bytes", i,
			         (unsigned long long)BENCH_MAX_BYTES);
			return -1;
		}
		p->sizes[i] = (size_t)json_integer_value(v);
	}
	p->sweep.sizes = p->sizes;
	p->sweep.nsizes = json_array_size(sizes);
	return 0;
}

static int read_params(json_t *req, struct run_params *p, char *msg, size_t msglen)
{
	const char *backend = json_string_value(json_object_get(req, "backend"));
	const char *dtype = json_string_value(json_object_get(req, "dtype"));
	long long nranks, conns, iters, warmup, stall, connect;

	memset(p, 0, sizeof(*p));
	if (!backend || (strcmp(backend, "tcp") != 0 && strcmp(backend, "nccl") != 0)) {
		snprintf(msg, msglen, "\"backend\" must be \"tcp\" or \"nccl\"");
		return -1;
	}
	p->nccl = strcmp(backend, "nccl") == 0;
	p->token = json_string_value(json_object_get(req, "token"));
	p->nccl_id = json_string_value(json_object_get(req, "nccl_id"));
	if (!p->nccl && !ring_token_valid(p->token)) {
		snprintf(msg, msglen, "\"token\" must be 1 to 64 letters and digits");
		return -1;
	}
	if (p->nccl && !p->nccl_id) {
		snprintf(msg, msglen, "the nccl backend needs \"nccl_id\"");
		return -1;
	}
	if (read_int(req, "nranks", 1, COLL_MAX_RANKS, -1, &nranks) < 0 || nranks < 1 ||
	    read_int(req, "conns", 1, RING_MAX_CONNS, RING_DEFAULT_CONNS, &conns) < 0 ||
	    read_int(req, "iters", 1, 1000000, 20, &iters) < 0 ||
	    read_int(req, "warmup", 0, 1000000, 5, &warmup) < 0 ||
	    read_int(req, "stall_ms", 100, 3600000, 10000, &stall) < 0 ||
	    read_int(req, "connect_timeout_ms", 100, 600000, 10000, &connect) < 0) {
		snprintf(msg, msglen,
		         "\"nranks\", \"conns\", \"iters\", \"warmup\", \"stall_ms\" or "
		         "\"connect_timeout_ms\" is missing or out of range");
		return -1;
	}
	if (!dtype || coll_dtype_parse(dtype, &p->sweep.dtype) < 0) {
		snprintf(msg, msglen, "\"dtype\" must be float, double, int32 or bfloat16");
		return -1;
	}
	p->nranks = (int)nranks;
	p->conns = (int)conns;
	p->stall_ms = (int)stall;
	p->connect_timeout_ms = (int)connect;
	p->sweep.iters = (int)iters;
	p->sweep.warmup = (int)warmup;
	p->sweep.check = !json_is_false(json_object_get(req, "check"));
	return read_sizes(req, p, msg, msglen);
}

/* jobs[i] from ranks[i]; -1 with msg when an entry is malformed. */
static int read_rank(json_t *r, const struct run_params *p, struct rank_job *j, size_t i, char *msg,
                     size_t msglen)
{
	json_t *right = json_object_get(r, "right");
	const char *text = json_string_value(json_object_get(right, "address"));
	long long rank, gpu, scope, port;

	j->p = p;
	if (read_int(r, "rank", 0, p->nranks - 1, -1, &rank) < 0 || rank < 0 ||
	    read_int(r, "gpu", 0, 1023, 0, &gpu) < 0) {
		snprintf(msg, msglen, "ranks[%zu] needs a \"rank\" below nranks", i);
		return -1;
	}
	j->rank = (int)rank;
	j->gpu = (int)gpu;
	j->listen_fd = -1;
	if (p->nccl || p->nranks == 1)
		return 0;
	if (read_int(right, "scope_id", 0, 0xffffffffLL, 0, &scope) < 0 ||
	    read_int(right, "port", 1, 65535, -1, &port) < 0 || port < 1 || !text ||
	    cd_sockaddr_from_text(text, scope, (int)port, &j->right, &j->right_len) != 0) {
		snprintf(msg, msglen, "ranks[%zu] needs \"right\": {\"address\", \"port\"}", i);
		return -1;
	}
	j->listen_fd = listener_of(j->rank);
	if (j->listen_fd < 0) {
		snprintf(msg, msglen, "rank %d has no listener: send bench_listen first", j->rank);
		return -1;
	}
	return 0;
}

static json_t *rank_json(const struct rank_job *j)
{
	json_t *results = json_array(), *o;

	for (size_t k = 0; k < j->done; k++) {
		const struct coll_result *c = &j->results[k];

		json_array_append_new(results,
		                      json_pack("{sIsIsfsI}", "bytes", (json_int_t)c->bytes,
		                                "count", (json_int_t)c->count, "time_us",
		                                c->time_us, "wrong", (json_int_t)c->wrong));
	}
	o = json_pack("{siso}", "rank", j->rank, "results", results);
	if (j->failed)
		json_object_set_new(o, "error",
		                    json_pack("{sssisIss}", "kind", ring_fail_name(j->error.kind),
		                              "peer_rank", j->error.peer_rank, "bytes",
		                              (json_int_t)j->error.bytes, "message", j->error.msg));
	return o;
}

/* Start a thread per local rank; one that cannot start fails its rank. */
static void start_ranks(struct run_wait *w, struct rank_job *jobs, pthread_t *threads, size_t n)
{
	pthread_mutex_lock(&w->mu);
	for (size_t i = 0; i < n; i++) {
		jobs[i].wait = w;
		if (pthread_create(&threads[i], NULL, run_rank, &jobs[i]) == 0) {
			jobs[i].started = 1;
			w->running++;
			continue;
		}
		jobs[i].failed = 1; /* its neighbours will report it too */
		jobs[i].error = (struct ring_error){.kind = RING_IO, .peer_rank = -1};
		snprintf(jobs[i].error.msg, sizeof(jobs[i].error.msg),
		         "could not start a thread for rank %d", jobs[i].rank);
	}
	pthread_mutex_unlock(&w->mu);
}

/* ---------------------------------------------------------------- waiting, progress */

static void run_wait_init(struct run_wait *w)
{
	pthread_condattr_t ca;

	pthread_mutex_init(&w->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->ended, &ca);
	pthread_condattr_destroy(&ca);
	w->running = 0;
}

static void run_wait_fini(struct run_wait *w)
{
	pthread_cond_destroy(&w->ended);
	pthread_mutex_destroy(&w->mu);
}

/* The sizes every local rank has completed: the slowest rank's count. */
static size_t node_sizes_done(const struct rank_job *jobs, size_t n)
{
	size_t least = SIZE_MAX;

	for (size_t i = 0; i < n; i++) {
		size_t d = __atomic_load_n(&jobs[i].done, __ATOMIC_ACQUIRE);

		least = d < least ? d : least;
	}
	return n ? least : 0;
}

static void send_progress(const struct run_params *p, size_t done)
{
	proto_progress_emit(json_pack("{sIsIsI}", "sizes_done", (json_int_t)done, "sizes",
	                              (json_int_t)p->sweep.nsizes, "bytes",
	                              (json_int_t)p->sizes[done - 1]));
}

/* Wait until at most ms from now, or a rank's thread ends (w->mu held). */
static void wait_a_while(struct run_wait *w, int ms)
{
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_nsec += (long)ms * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&w->ended, &w->mu, &until);
}

/* Until every rank's thread has ended: a progress line each time the
 * node's sizes done move, at most one per size and per BENCH_PROGRESS_MS. */
static void follow_ranks(struct run_wait *w, const struct run_params *p,
                         const struct rank_job *jobs, size_t n)
{
	size_t sent = 0;
	int64_t sent_at = 0;

	pthread_mutex_lock(&w->mu);
	while (w->running > 0) {
		size_t done;

		wait_a_while(w, BENCH_PROGRESS_MS);
		done = node_sizes_done(jobs, n);
		if (w->running == 0 || done <= sent || cd_now_ms() - sent_at < BENCH_PROGRESS_MS)
			continue;
		pthread_mutex_unlock(&w->mu);
		send_progress(p, done);
		sent = done;
		sent_at = cd_now_ms();
		pthread_mutex_lock(&w->mu);
	}
	pthread_mutex_unlock(&w->mu);
}

json_t *bench_run(json_t *req, const char **code, char *msg, size_t msglen)
{
	static struct run_params p; /* requests are served one at a time */
	json_t *ranks = json_object_get(req, "ranks"), *r, *out;
	struct run_wait w;
	struct nccl_netlog_scope scope = {0};
	struct nccl_env_scope vars = {0};
	json_t *env = json_object_get(req, "env");
	struct rank_job *jobs;
	pthread_t *threads;
	size_t i, n = json_array_size(ranks);
	char why[CD_ERRLEN];
	int gpus;

	if (read_params(req, &p, msg, msglen) < 0) {
		bench_shutdown();
		*code = "bad-request";
		return NULL;
	}
	if (n == 0 || n > BENCH_MAX_LOCAL_RANKS) {
		bench_shutdown();
		return proto_handler_fail(code, "bad-request", msg, msglen,
		                          "\"ranks\" must be an array of 1 to %d entries",
		                          BENCH_MAX_LOCAL_RANKS);
	}
	if (nccl_env_check(env, msg, msglen) < 0) {
		bench_shutdown();
		*code = "bad-request";
		return NULL;
	}
	if (p.nccl && nccl_backend_available(&gpus, why, sizeof(why)) < 0) {
		bench_shutdown();
		return proto_handler_fail(code, "unavailable", msg, msglen, "%s", why);
	}
	jobs = cd_calloc(n, sizeof(*jobs));
	threads = cd_calloc(n, sizeof(*threads));
	json_array_foreach(ranks, i, r)
	{
		if (read_rank(r, &p, &jobs[i], i, msg, msglen) < 0) {
			free(jobs);
			free(threads);
			bench_shutdown();
			*code = "bad-request";
			return NULL;
		}
	}
	run_wait_init(&w);
	if (p.nccl) {
		/* the plan's variables and the debug ones, until every rank's
		 * thread has ended */
		nccl_env_begin(&vars, env);
		nccl_netlog_begin(&scope);
	}
	start_ranks(&w, jobs, threads, n);
	if (proto_progress_wanted())
		follow_ranks(&w, &p, jobs, n);
	for (i = 0; i < n; i++) {
		if (jobs[i].started)
			pthread_join(threads[i], NULL);
	}
	nccl_netlog_end(&scope);
	nccl_env_end(&vars);
	run_wait_fini(&w);
	bench_shutdown();
	out = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(out, rank_json(&jobs[i]));
	free(jobs);
	free(threads);
	out = json_pack("{so}", "ranks", out);
	if (p.nccl)
		json_object_set_new(out, "nccl_net", nccl_netlog_read());
	return out;
}
