/* SPDX-License-Identifier: MIT */
/*
 * test_ring.c - the TCP ring on loopback: every rank a thread of this
 * process, each with its own listener on 127.0.0.1 (one test on ::1).
 * Exact sums for 1 to 5 ranks, every element type, one and four
 * connections per neighbour and awkward counts; the sweep; and each way a
 * ring fails: a stray client or a wrong token, a neighbour that closes,
 * stalls or never connects, an unreachable one, and abort_fd. Ranks keep
 * their rings open until every rank is done, so a failing rank's own close
 * cannot be mistaken for the failure under test. No fd is left open.
 */
#include "collectives/ring.h"
#include "collectives/ring_internal.h"
#include "cd.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tests/unit/open_fds.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define TOKEN     "t0kenT0KEN123"
#define MAX_RANKS 5
#define MAX_JOBS  12

/* --- helpers ------------------------------------------------------------- */

static int fds_setup(void **state)
{
	*state = (void *)(intptr_t)count_open_fds();
	return 0;
}

static int fds_teardown(void **state)
{
	return count_open_fds() == (int)(intptr_t)*state ? 0 : -1;
}

/* What a rank's thread does once its ring is formed. */
enum role {
	ROLE_RUN,    /* the jobs, one allreduce each */
	ROLE_CLOSE,  /* close the ring at once: a rank that stops */
	ROLE_SILENT, /* keep the ring open and do nothing: a rank that stalls */
};

struct job {
	size_t count;
	enum coll_dtype dtype;
	int inexact; /* float32 inputs whose sum depends on the order: digest only */
};

struct member {
	/* set by the test */
	struct ring_opts o;
	int listen_fd;
	struct sockaddr_storage right;
	socklen_t right_len;
	enum role role;
	struct job jobs[MAX_JOBS];
	size_t njobs;
	size_t exchange_max; /* (size_t)-1: the default */
	size_t gather_max;   /* (size_t)-1: the default */
	int no_thread;       /* its listener only: the rank never runs */
	int call_again;      /* after a failed job, one more call */

	/* results */
	int established;
	int rc; /* 0, or -1 when establish or a job failed */
	struct ring_error e;
	size_t failed_job;
	int64_t fail_ms;         /* how long the failing call took */
	size_t wrong;            /* over all jobs */
	uint64_t digest;         /* FNV-1a of the last inexact job's result */
	struct ring_error again; /* what the call after a failure said */

	pthread_barrier_t *all_done;
};

struct cluster {
	int n;
	struct member m[MAX_RANKS];
	pthread_t threads[MAX_RANKS];
	pthread_barrier_t all_done;
};

/* A listener on the loopback address of family; 0, or -1 (the family is not
 * available: the test skips). */
static int listen_loopback(int family, int *fd, struct sockaddr_storage *addr, socklen_t *len)
{
	char err[CD_ERRLEN];
	int port;

	memset(addr, 0, sizeof(*addr));
	if (family == AF_INET6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)addr;

		a->sin6_family = AF_INET6;
		a->sin6_addr = in6addr_loopback;
		*len = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)addr;

		a->sin_family = AF_INET;
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		*len = sizeof(*a);
	}
	if (ring_listen((struct sockaddr *)addr, *len, fd, &port, err, sizeof(err)) < 0)
		return -1;
	if (family == AF_INET6)
		((struct sockaddr_in6 *)addr)->sin6_port = htons((uint16_t)port);
	else
		((struct sockaddr_in *)addr)->sin_port = htons((uint16_t)port);
	return 0;
}

/* n ranks with conns connections per neighbour, each listening on the
 * loopback address of family and running no job yet. -1 when the family is
 * not available. */
static int cluster_init(struct cluster *c, int n, int conns, int family)
{
	struct sockaddr_storage addrs[MAX_RANKS];
	socklen_t lens[MAX_RANKS];

	memset(c, 0, sizeof(*c));
	c->n = n;
	for (int i = 0; i < n; i++) {
		struct member *m = &c->m[i];

		m->o = (struct ring_opts){.rank = i,
		                          .nranks = n,
		                          .conns = conns,
		                          .token = TOKEN,
		                          .connect_timeout_ms = 5000,
		                          .stall_ms = 5000,
		                          .abort_fd = -1};
		m->exchange_max = (size_t)-1;
		m->gather_max = (size_t)-1;
		m->listen_fd = -1;
		if (listen_loopback(family, &m->listen_fd, &addrs[i], &lens[i]) < 0) {
			for (int j = 0; j < i; j++)
				close(c->m[j].listen_fd);
			return -1;
		}
	}
	for (int i = 0; i < n; i++) {
		c->m[i].right = addrs[(i + 1) % n];
		c->m[i].right_len = lens[(i + 1) % n];
	}
	return 0;
}

static void add_job(struct member *m, size_t count, enum coll_dtype t)
{
	assert_true(m->njobs < MAX_JOBS);
	m->jobs[m->njobs++] = (struct job){.count = count, .dtype = t};
}

/* Every rank runs the same jobs. */
static void add_job_to_all(struct cluster *c, size_t count, enum coll_dtype t)
{
	for (int i = 0; i < c->n; i++)
		add_job(&c->m[i], count, t);
}

static int run_job(struct member *m, struct ring *r, const struct job *j)
{
	size_t bytes = j->count * coll_dtype_size(j->dtype);
	void *send = cd_malloc(bytes), *recv = cd_malloc(bytes);
	int64_t t0;
	int rc;

	coll_fill(send, j->count, j->dtype, m->o.rank, m->o.nranks);
	for (size_t i = 0; j->inexact && i < j->count; i++)
		((float *)send)[i] = 0.1f * (float)(m->o.rank + 1) + 1e-3f * (float)i / 7.0f;
	memset(recv, 0xff, bytes);
	t0 = cd_now_ms();
	rc = ring_allreduce(r, send, recv, j->count, j->dtype, &m->e);
	if (rc < 0) {
		m->fail_ms = cd_now_ms() - t0;
	} else if (j->inexact) {
		m->digest = 1469598103934665603ULL;
		for (size_t i = 0; i < bytes; i++)
			m->digest = (m->digest ^ ((unsigned char *)recv)[i]) * 1099511628211ULL;
	} else {
		m->wrong += coll_check(recv, j->count, j->dtype, m->o.nranks);
	}
	free(send);
	free(recv);
	return rc;
}

static void *member_main(void *arg)
{
	struct member *m = arg;
	int64_t t0 = cd_now_ms();
	struct ring *r =
	    ring_establish(&m->o, m->listen_fd, (struct sockaddr *)&m->right, m->right_len, &m->e);

	if (!r) {
		m->rc = -1;
		m->fail_ms = cd_now_ms() - t0;
	} else {
		m->established = 1;
		if (m->exchange_max != (size_t)-1)
			r->exchange_max = m->exchange_max;
		if (m->gather_max != (size_t)-1)
			r->gather_max = m->gather_max;
		if (m->role == ROLE_CLOSE) {
			ring_close(r);
			r = NULL;
		}
		for (size_t i = 0; m->role == ROLE_RUN && i < m->njobs && m->rc == 0; i++) {
			m->rc = run_job(m, r, &m->jobs[i]);
			m->failed_job = i;
		}
		if (m->rc < 0 && m->call_again) {
			float one = 1, sum;

			ring_allreduce(r, &one, &sum, 1, COLL_FLOAT32, &m->again);
		}
	}
	pthread_barrier_wait(m->all_done);
	ring_close(r);
	return NULL;
}

static void cluster_start(struct cluster *c)
{
	unsigned running = 0;

	for (int i = 0; i < c->n; i++)
		running += !c->m[i].no_thread;
	pthread_barrier_init(&c->all_done, NULL, running);
	for (int i = 0; i < c->n; i++) {
		c->m[i].all_done = &c->all_done;
		if (!c->m[i].no_thread)
			assert_int_equal(
			    pthread_create(&c->threads[i], NULL, member_main, &c->m[i]), 0);
	}
}

static void cluster_join(struct cluster *c)
{
	for (int i = 0; i < c->n; i++) {
		if (!c->m[i].no_thread)
			pthread_join(c->threads[i], NULL);
	}
	pthread_barrier_destroy(&c->all_done);
	for (int i = 0; i < c->n; i++) {
		if (c->m[i].listen_fd >= 0)
			close(c->m[i].listen_fd);
	}
}

static void cluster_run(struct cluster *c)
{
	cluster_start(c);
	cluster_join(c);
}

static void assert_all_exact(const struct cluster *c)
{
	for (int i = 0; i < c->n; i++) {
		if (c->m[i].rc != 0)
			fail_msg("rank %d: %s: %s", i, ring_fail_name(c->m[i].e.kind),
			         c->m[i].e.msg);
		assert_int_equal(c->m[i].wrong, 0);
	}
}

static void assert_failed(const struct member *m, enum ring_fail kind, int peer)
{
	if (m->rc == 0)
		fail_msg("rank %d succeeded", m->o.rank);
	if (m->e.kind != kind)
		fail_msg("rank %d: %s, not %s: %s", m->o.rank, ring_fail_name(m->e.kind),
		         ring_fail_name(kind), m->e.msg);
	assert_int_equal(m->e.peer_rank, peer);
	if (peer >= 0) {
		char name[32];

		snprintf(name, sizeof(name), "rank %d ", peer);
		assert_non_null(strstr(m->e.msg, name));
	}
}

/* A count of elements that makes three full chunks and five elements more
 * in a segment of float32. */
#define AWKWARD_COUNT (3 * (RING_CHUNK_MAX / 4) + 5)

static void add_float32_counts(struct cluster *c, int n)
{
	static const size_t counts[] = {1, 2, 7, 1001, 3 * 1024 * 1024 / 4 + 1};

	for (size_t i = 0; i < CD_ARRAY_LEN(counts); i++)
		add_job_to_all(c, counts[i], COLL_FLOAT32);
	add_job_to_all(c, (size_t)n * AWKWARD_COUNT, COLL_FLOAT32);
	add_job_to_all(c, AWKWARD_COUNT, COLL_FLOAT32);
}

static void float32_sums_are_exact(int n, int conns)
{
	struct cluster c;

	assert_int_equal(cluster_init(&c, n, conns, AF_INET), 0);
	add_float32_counts(&c, n);
	cluster_run(&c);
	assert_all_exact(&c);
}

/* --- exact results ---------------------------------------------------------- */

static void fail_names_are_stable(void **state)
{
	static const char *const names[] = {"ok",       "connect", "no-peer",
	                                    "rejected", "closed",  "stalled",
	                                    "aborted",  "io",      "bad-argument"};

	for (size_t i = 0; i < CD_ARRAY_LEN(names); i++)
		assert_string_equal(ring_fail_name((enum ring_fail)i), names[i]);
}

static void one_rank_copies_send_to_recv(void **state)
{
	struct ring_opts o = {.rank = 0,
	                      .nranks = 1,
	                      .conns = 1,
	                      .token = TOKEN,
	                      .connect_timeout_ms = 100,
	                      .stall_ms = 100,
	                      .abort_fd = -1};
	struct ring_error e;
	struct ring *r = ring_establish(&o, -1, NULL, 0, &e);
	float send[1001], recv[1001];

	assert_non_null(r);
	coll_fill(send, 1001, COLL_FLOAT32, 0, 1);
	for (size_t count = 1; count <= 1001; count += 1000) {
		memset(recv, 0xff, sizeof(recv));
		assert_int_equal(ring_allreduce(r, send, recv, count, COLL_FLOAT32, &e), 0);
		assert_memory_equal(send, recv, count * sizeof(float));
	}
	ring_close(r);
}

static void float32_sums_are_exact_with_2_ranks(void **state)
{
	float32_sums_are_exact(2, 1);
}

static void float32_sums_are_exact_with_3_ranks(void **state)
{
	float32_sums_are_exact(3, 1);
}

static void float32_sums_are_exact_with_4_ranks(void **state)
{
	float32_sums_are_exact(4, 1);
}

static void float32_sums_are_exact_with_5_ranks(void **state)
{
	float32_sums_are_exact(5, 1);
}

static void float32_sums_are_exact_with_4_connections(void **state)
{
	for (int n = 2; n <= 5; n += 3)
		float32_sums_are_exact(n, 4);
}

static void every_dtype_is_exact_with_3_ranks(void **state)
{
	static const enum coll_dtype dtypes[] = {COLL_FLOAT32, COLL_FLOAT64, COLL_INT32,
	                                         COLL_BFLOAT16};
	struct cluster c;

	assert_int_equal(cluster_init(&c, 3, 2, AF_INET), 0);
	for (size_t i = 0; i < CD_ARRAY_LEN(dtypes); i++) {
		add_job_to_all(&c, 10007, dtypes[i]);
		add_job_to_all(&c, 3 * AWKWARD_COUNT, dtypes[i]);
	}
	cluster_run(&c);
	assert_all_exact(&c);
}

/* Two ranks swap whole buffers up to exchange_max bytes and run the ring
 * above: both give the exact sum, on either side of the threshold. */
static void two_ranks_are_exact_with_and_without_the_exchange(void **state)
{
	static const size_t limits[] = {0, (size_t)-1, 1 << 30};
	size_t edge = RING_EXCHANGE_MAX / sizeof(float);

	for (size_t k = 0; k < CD_ARRAY_LEN(limits); k++) {
		struct cluster c;

		assert_int_equal(cluster_init(&c, 2, 2, AF_INET), 0);
		for (int i = 0; i < 2; i++)
			c.m[i].exchange_max = limits[k];
		add_job_to_all(&c, 1, COLL_FLOAT32);
		add_job_to_all(&c, 1001, COLL_BFLOAT16);
		add_job_to_all(&c, edge, COLL_FLOAT32);
		add_job_to_all(&c, edge + 1, COLL_FLOAT32);
		add_job_to_all(&c, 1 << 20, COLL_FLOAT32);
		cluster_run(&c);
		assert_all_exact(&c);
	}
}

/* More ranks pass whole buffers around up to gather_max bytes and run the
 * ring above: every rank gives the exact sum, on either side of the
 * threshold, with one and with three connections, and the scratch grown by
 * a larger call serves a smaller one. */
static void more_ranks_are_exact_with_and_without_the_gather(void **state)
{
	static const size_t limits[] = {0, (size_t)-1, 1 << 20};
	size_t edge = RING_GATHER_MAX / sizeof(float);

	for (int n = 3; n <= 5; n++) {
		for (size_t k = 0; k < CD_ARRAY_LEN(limits); k++) {
			struct cluster c;

			assert_int_equal(cluster_init(&c, n, n == 4 ? 3 : 1, AF_INET), 0);
			for (int i = 0; i < n; i++)
				c.m[i].gather_max = limits[k];
			add_job_to_all(&c, 1, COLL_FLOAT32);
			add_job_to_all(&c, 2, COLL_FLOAT32);
			add_job_to_all(&c, 1001, COLL_BFLOAT16);
			add_job_to_all(&c, edge, COLL_FLOAT32);
			add_job_to_all(&c, 7, COLL_FLOAT64);
			add_job_to_all(&c, edge + 1, COLL_FLOAT32);
			add_job_to_all(&c, 200003, COLL_FLOAT32);
			cluster_run(&c);
			assert_all_exact(&c);
		}
	}
}

/* With inputs whose float sum depends on the order of the additions, every
 * rank still holds the same bits: the gather adds in rank order everywhere,
 * the ring reduces each segment once and passes it on. */
static void every_rank_holds_the_same_bits_with_and_without_the_gather(void **state)
{
	static const size_t limits[] = {0, (size_t)-1};

	for (int n = 3; n <= 5; n++) {
		for (size_t k = 0; k < CD_ARRAY_LEN(limits); k++) {
			struct cluster c;

			assert_int_equal(cluster_init(&c, n, 1, AF_INET), 0);
			for (int i = 0; i < n; i++) {
				c.m[i].gather_max = limits[k];
				add_job(&c.m[i], 1000, COLL_FLOAT32);
				c.m[i].jobs[0].inexact = 1;
			}
			cluster_run(&c);
			assert_all_exact(&c);
			for (int i = 1; i < n; i++)
				assert_true(c.m[i].digest == c.m[0].digest);
		}
	}
}

static void ipv6_loopback_ring_is_exact(void **state)
{
	struct cluster c;

	if (cluster_init(&c, 3, 2, AF_INET6) < 0)
		skip();
	add_job_to_all(&c, 1001, COLL_FLOAT32);
	add_job_to_all(&c, 3 * AWKWARD_COUNT, COLL_FLOAT32);
	cluster_run(&c);
	assert_all_exact(&c);
}

/* --- the sweep ---------------------------------------------------------------- */

struct sweeper {
	struct member *m;
	const struct coll_sweep *p;
	struct coll_result out[8];
	size_t done; /* moved by ring_sweep as it runs */
	int rc;
	int ended; /* set (atomically) once ring_sweep has returned */
};

static void *sweeper_main(void *arg)
{
	struct sweeper *s = arg;
	struct member *m = s->m;
	struct ring *r =
	    ring_establish(&m->o, m->listen_fd, (struct sockaddr *)&m->right, m->right_len, &m->e);

	s->rc = r ? ring_sweep(r, s->p, s->out, &s->done, &m->e) : -1;
	ring_close(r);
	__atomic_store_n(&s->ended, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void run_sweep(const struct coll_sweep *p, struct sweeper *s, int n)
{
	struct cluster c;
	pthread_t t[MAX_RANKS];

	assert_int_equal(cluster_init(&c, n, 2, AF_INET), 0);
	for (int i = 0; i < n; i++) {
		s[i] = (struct sweeper){.m = &c.m[i], .p = p};
		assert_int_equal(pthread_create(&t[i], NULL, sweeper_main, &s[i]), 0);
	}
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < n; i++) {
		close(c.m[i].listen_fd);
		if (s[i].rc != 0)
			fail_msg("rank %d: %s", i, c.m[i].e.msg);
	}
}

static void sweep_reports_counts_bytes_times_and_exact_results(void **state)
{
	static const size_t sizes[] = {1, 4, 6, 4096, 1 << 20};
	static const size_t counts[] = {1, 1, 1, 1024, 1 << 18};
	struct coll_sweep p = {.dtype = COLL_FLOAT32,
	                       .sizes = sizes,
	                       .nsizes = 5,
	                       .warmup = 2,
	                       .iters = 3,
	                       .check = 1};
	struct sweeper s[3];

	run_sweep(&p, s, 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(s[i].done, 5);
		for (size_t k = 0; k < 5; k++) {
			assert_int_equal(s[i].out[k].count, counts[k]);
			assert_int_equal(s[i].out[k].bytes, 4 * counts[k]);
			assert_int_equal(s[i].out[k].wrong, 0);
			assert_true(s[i].out[k].time_us > 0);
		}
	}
}

static void unchecked_sweep_reports_wrong_as_minus_one(void **state)
{
	static const size_t sizes[] = {3, 1000};
	struct coll_sweep p = {.dtype = COLL_BFLOAT16,
	                       .sizes = sizes,
	                       .nsizes = 2,
	                       .warmup = 0,
	                       .iters = 1,
	                       .check = 0};
	struct sweeper s[2];

	run_sweep(&p, s, 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(s[i].done, 2);
		assert_int_equal(s[i].out[0].count, 1);
		assert_int_equal(s[i].out[0].bytes, 2);
		assert_int_equal(s[i].out[1].count, 500);
		assert_int_equal(s[i].out[1].wrong, -1);
	}
}

/* Another thread follows rank 0's *done while the sweep runs (ring.h): the
 * count only grows, is seen between 0 and the end, and ends at every size. */
static void sweep_publishes_each_size_done_while_it_runs(void **state)
{
	static const size_t sizes[] = {1 << 20, 1 << 20, 1 << 20, 1 << 20, 1 << 20, 1 << 20};
	struct coll_sweep p = {.dtype = COLL_FLOAT32,
	                       .sizes = sizes,
	                       .nsizes = 6,
	                       .warmup = 0,
	                       .iters = 50,
	                       .check = 0};
	struct cluster c;
	struct sweeper s[2];
	pthread_t t[2];
	size_t last = 0, between = 0;

	assert_int_equal(cluster_init(&c, 2, 2, AF_INET), 0);
	for (int i = 0; i < 2; i++) {
		s[i] = (struct sweeper){.m = &c.m[i], .p = &p};
		assert_int_equal(pthread_create(&t[i], NULL, sweeper_main, &s[i]), 0);
	}
	while (!__atomic_load_n(&s[0].ended, __ATOMIC_ACQUIRE)) {
		size_t d = __atomic_load_n(&s[0].done, __ATOMIC_ACQUIRE);

		assert_true(d >= last);
		between += d > last && d < 6;
		last = d;
		usleep(200);
	}
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		close(c.m[i].listen_fd);
		if (s[i].rc != 0)
			fail_msg("rank %d: %s", i, c.m[i].e.msg);
	}
	assert_int_equal(s[0].done, 6);
	assert_true(between >= 1);
}

/* --- who may join -------------------------------------------------------------- */

/* A client that connects to addr and sends line (len bytes); blocking, with
 * a receive timeout so that a test cannot hang on it. */
static int stray_client(const struct sockaddr_storage *addr, socklen_t len, const char *line,
                        size_t line_len)
{
	struct timeval tv = {.tv_sec = 5};
	int fd = socket(addr->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	assert_int_equal(connect(fd, (const struct sockaddr *)addr, len), 0);
	assert_int_equal(send(fd, line, line_len, MSG_NOSIGNAL), (ssize_t)line_len);
	return fd;
}

static void stray_clients_are_closed_unanswered_and_the_ring_forms(void **state)
{
	static const char *const strays[] = {
	    "CDRING1 wrongtoken 0 0\n",     /* another run's token */
	    "CDRING1 " TOKEN " 1 0\n",      /* not the left neighbour */
	    "CDRING1 " TOKEN " 0 1\n",      /* index >= conns */
	    "CDRING1 " TOKEN " 0 0\nextra", /* bytes after the hello */
	    "CDRING1 " TOKEN "x 0 0\n",     /* the token with one more character */
	    "CDRING1 " TOKEN " 0 0 0\n",    /* one field too many */
	    "GET / HTTP/1.0\r\n\r\n",       /* somebody else */
	    "CDRING1 "
	    "0123456789012345678901234567890123456789012345678901234567890123456789"
	    "0123456789012345678901234567890123456789012345678901234567890123456789", /* too long */
	};
	int fds[CD_ARRAY_LEN(strays)];
	struct cluster c;
	char buf[64];

	assert_int_equal(cluster_init(&c, 2, 1, AF_INET), 0);
	/* rank 1's left neighbour is rank 0; the strays queue on rank 1's
	 * listener before rank 0's real connection. */
	for (size_t i = 0; i < CD_ARRAY_LEN(strays); i++)
		fds[i] =
		    stray_client(&c.m[0].right, c.m[0].right_len, strays[i], strlen(strays[i]));
	add_job_to_all(&c, 1001, COLL_FLOAT32);
	cluster_run(&c);
	assert_all_exact(&c);
	for (size_t i = 0; i < CD_ARRAY_LEN(strays); i++) {
		ssize_t n = recv(fds[i], buf, sizeof(buf), 0);

		/* A close with bytes of ours unread is a reset. */
		if (n != 0 && !(n < 0 && errno == ECONNRESET))
			fail_msg("stray %zu got %zd bytes (errno %d), not a close", i, n, errno);
		close(fds[i]);
	}
}

static void rank_with_another_token_is_rejected_by_its_right_neighbour(void **state)
{
	struct cluster c;

	/* Rank 0 has another run's token. Rank 1 closes rank 0's connections
	 * and waits on for its real left neighbour; rank 2, whose right
	 * neighbour is rank 0, fails one way or another. */
	assert_int_equal(cluster_init(&c, 3, 2, AF_INET), 0);
	c.m[0].o.token = "anotherRun42";
	for (int i = 1; i < 3; i++)
		c.m[i].o.connect_timeout_ms = 300;
	cluster_run(&c);
	assert_failed(&c.m[0], RING_REJECTED, 1);
	assert_true(c.m[0].fail_ms < 2000); /* not its 5000 ms timeout */
	assert_failed(&c.m[1], RING_NO_PEER, 0);
	assert_int_equal(c.m[2].rc, -1);
}

/* --- failures during a run ------------------------------------------------------ */

static void rank_that_closes_fails_both_neighbours_at_once(void **state)
{
	struct cluster c;

	assert_int_equal(cluster_init(&c, 3, 2, AF_INET), 0);
	c.m[2].role = ROLE_CLOSE;
	for (int i = 0; i < 2; i++) {
		add_job(&c.m[i], 4 << 20, COLL_FLOAT32);
		c.m[i].o.stall_ms = 10000;
	}
	cluster_run(&c);
	for (int i = 0; i < 2; i++) {
		assert_failed(&c.m[i], RING_CLOSED, 2);
		assert_int_equal(c.m[i].e.bytes, 16 << 20);
		assert_true(c.m[i].fail_ms < 2000);
	}
}

static void silent_rank_stalls_both_neighbours_after_stall_ms(void **state)
{
	struct cluster c;

	assert_int_equal(cluster_init(&c, 3, 1, AF_INET), 0);
	c.m[2].role = ROLE_SILENT;
	for (int i = 0; i < 2; i++) {
		add_job(&c.m[i], 4 << 20, COLL_FLOAT32);
		c.m[i].o.stall_ms = 300;
	}
	cluster_run(&c);
	/* Rank 0 waits for data from rank 2; rank 1 cannot get its data into
	 * rank 2. */
	for (int i = 0; i < 2; i++) {
		assert_failed(&c.m[i], RING_STALLED, 2);
		assert_int_equal(c.m[i].e.bytes, 16 << 20);
		assert_true(c.m[i].fail_ms >= 300);
		assert_true(c.m[i].fail_ms < 1500);
	}
	assert_non_null(strstr(c.m[0].e.msg, "left, 127.0.0.1"));
	assert_non_null(strstr(c.m[1].e.msg, "right, 127.0.0.1"));
}

static void abort_fd_hangup_aborts_a_waiting_rank(void **state)
{
	struct cluster c;
	int pipefd[2];

	assert_int_equal(pipe(pipefd), 0);
	assert_int_equal(cluster_init(&c, 2, 1, AF_INET), 0);
	c.m[0].o.abort_fd = pipefd[0];
	c.m[1].role = ROLE_SILENT;
	add_job(&c.m[0], 1000, COLL_FLOAT32);
	add_job(&c.m[0], 1000, COLL_FLOAT32);
	cluster_start(&c);
	usleep(100 * 1000);
	close(pipefd[1]);
	cluster_join(&c);
	close(pipefd[0]);
	assert_failed(&c.m[0], RING_ABORTED, -1);
	assert_int_equal(c.m[0].failed_job, 0);
	assert_true(c.m[0].fail_ms < 2000);
}

static void abort_fd_hangup_aborts_establishing(void **state)
{
	struct cluster c;
	int pipefd[2];

	assert_int_equal(pipe(pipefd), 0);
	assert_int_equal(cluster_init(&c, 2, 1, AF_INET), 0);
	c.m[0].o.abort_fd = pipefd[0];
	c.m[1].no_thread = 1; /* nobody connects to rank 0 */
	cluster_start(&c);
	usleep(100 * 1000);
	close(pipefd[1]);
	cluster_join(&c);
	close(pipefd[0]);
	assert_failed(&c.m[0], RING_ABORTED, -1);
}

static void failed_ring_refuses_further_calls(void **state)
{
	struct cluster c;

	assert_int_equal(cluster_init(&c, 2, 1, AF_INET), 0);
	c.m[1].role = ROLE_CLOSE;
	add_job(&c.m[0], 1 << 20, COLL_FLOAT32);
	c.m[0].call_again = 1;
	cluster_run(&c);
	assert_failed(&c.m[0], RING_CLOSED, 1);
	assert_int_equal(c.m[0].again.kind, RING_BAD_ARG);
}

/* --- failures while forming ---------------------------------------------------- */

static void unreachable_right_neighbour_fails_with_connect(void **state)
{
	struct cluster c;
	char port[16];

	assert_int_equal(cluster_init(&c, 2, 2, AF_INET), 0);
	close(c.m[1].listen_fd); /* rank 1's port now refuses */
	c.m[1].listen_fd = -1;
	c.m[1].no_thread = 1;
	cluster_run(&c);
	assert_failed(&c.m[0], RING_CONNECT, 1);
	assert_true(c.m[0].fail_ms < 1000);
	assert_non_null(strstr(c.m[0].e.msg, "right, 127.0.0.1"));
	snprintf(port, sizeof(port), "port %d",
	         ntohs(((struct sockaddr_in *)&c.m[0].right)->sin_port));
	assert_non_null(strstr(c.m[0].e.msg, port));
	assert_non_null(strstr(c.m[0].e.msg, strerror(ECONNREFUSED)));
}

static void missing_left_neighbour_fails_with_no_peer_after_connect_timeout(void **state)
{
	struct cluster c;

	assert_int_equal(cluster_init(&c, 3, 2, AF_INET), 0);
	for (int i = 0; i < 2; i++)
		c.m[i].o.connect_timeout_ms = 300;
	c.m[2].no_thread = 1;
	cluster_run(&c);
	/* Rank 0's left neighbour is rank 2: it never connects. Rank 1's right
	 * one is rank 2 too: its listener takes the connections, nobody
	 * answers. */
	assert_failed(&c.m[0], RING_NO_PEER, 2);
	assert_failed(&c.m[1], RING_CONNECT, 2);
	for (int i = 0; i < 2; i++) {
		assert_true(c.m[i].fail_ms >= 300);
		assert_true(c.m[i].fail_ms < 1500);
	}
}

static void invalid_options_are_rejected(void **state)
{
	static const struct ring_opts bad[] = {
	    {.rank = 2, .nranks = 2, .conns = 1, .token = TOKEN},
	    {.rank = 0, .nranks = 0, .conns = 1, .token = TOKEN},
	    {.rank = 0, .nranks = COLL_MAX_RANKS + 1, .conns = 1, .token = TOKEN},
	    {.rank = 0, .nranks = 2, .conns = 0, .token = TOKEN},
	    {.rank = 0, .nranks = 2, .conns = RING_MAX_CONNS + 1, .token = TOKEN},
	    {.rank = 0, .nranks = 2, .conns = 1, .token = ""},
	    {.rank = 0, .nranks = 2, .conns = 1, .token = "with space"},
	    {.rank = 0, .nranks = 2, .conns = 1, .token = NULL},
	    {.rank = 0,
	     .nranks = 2,
	     .conns = 1,
	     .token = "0123456789012345678901234567890123456789012345678901234567890123x"},
	};
	struct sockaddr_storage addr;
	socklen_t len;
	int fd;
	struct ring_error e;

	assert_int_equal(listen_loopback(AF_INET, &fd, &addr, &len), 0);
	for (size_t i = 0; i < CD_ARRAY_LEN(bad); i++) {
		struct ring_opts o = bad[i];

		o.connect_timeout_ms = o.stall_ms = 100;
		o.abort_fd = -1;
		assert_null(ring_establish(&o, fd, (struct sockaddr *)&addr, len, &e));
		assert_int_equal(e.kind, RING_BAD_ARG);
	}
	/* two ranks need a listener and a right neighbour */
	struct ring_opts o = {.rank = 0,
	                      .nranks = 2,
	                      .conns = 1,
	                      .token = TOKEN,
	                      .connect_timeout_ms = 100,
	                      .stall_ms = 100,
	                      .abort_fd = -1};
	assert_null(ring_establish(&o, -1, (struct sockaddr *)&addr, len, &e));
	assert_int_equal(e.kind, RING_BAD_ARG);
	assert_null(ring_establish(&o, fd, NULL, 0, &e));
	assert_int_equal(e.kind, RING_BAD_ARG);
	close(fd);
}

static void listen_on_a_foreign_address_fails_naming_it(void **state)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	char err[CD_ERRLEN];
	int fd = -1, port = 0;

	inet_pton(AF_INET, "192.0.2.1", &a.sin_addr); /* TEST-NET-1: not ours */
	assert_int_equal(
	    ring_listen((struct sockaddr *)&a, sizeof(a), &fd, &port, err, sizeof(err)), CD_ERR_IO);
	assert_int_equal(fd, -1);
	assert_non_null(strstr(err, "192.0.2.1"));
}

#define T(f) cmocka_unit_test_setup_teardown(f, fds_setup, fds_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(fail_names_are_stable),
	    T(one_rank_copies_send_to_recv),
	    T(float32_sums_are_exact_with_2_ranks),
	    T(float32_sums_are_exact_with_3_ranks),
	    T(float32_sums_are_exact_with_4_ranks),
	    T(float32_sums_are_exact_with_5_ranks),
	    T(float32_sums_are_exact_with_4_connections),
	    T(every_dtype_is_exact_with_3_ranks),
	    T(two_ranks_are_exact_with_and_without_the_exchange),
	    T(more_ranks_are_exact_with_and_without_the_gather),
	    T(every_rank_holds_the_same_bits_with_and_without_the_gather),
	    T(ipv6_loopback_ring_is_exact),
	    T(sweep_reports_counts_bytes_times_and_exact_results),
	    T(unchecked_sweep_reports_wrong_as_minus_one),
	    T(sweep_publishes_each_size_done_while_it_runs),
	    T(stray_clients_are_closed_unanswered_and_the_ring_forms),
	    T(rank_with_another_token_is_rejected_by_its_right_neighbour),
	    T(rank_that_closes_fails_both_neighbours_at_once),
	    T(silent_rank_stalls_both_neighbours_after_stall_ms),
	    T(abort_fd_hangup_aborts_a_waiting_rank),
	    T(abort_fd_hangup_aborts_establishing),
	    T(failed_ring_refuses_further_calls),
	    T(unreachable_right_neighbour_fails_with_connect),
	    T(missing_left_neighbour_fails_with_no_peer_after_connect_timeout),
	    T(invalid_options_are_rejected),
	    T(listen_on_a_foreign_address_fails_naming_it),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
