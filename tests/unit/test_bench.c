/* SPDX-License-Identifier: MIT */
/*
 * test_bench.c - the head's pure part of `clusterdoc bench`: the sizes of
 * -b/-e/-f, the rounds of --pairs, busbw, the slow links, and the ring's
 * address on each node; and the progress bench_run sends while it runs, in
 * this process and from the built agent.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "built_agent.h"
#include "child.h"
#include "collectives/bench_agent.h"
#include "collectives/bench_internal.h"
#include "probes/netmodel.h"
#include "proto.h"
#include "report/bench_render.h"

static void sizes_follow_b_e_f_and_include_the_end(void **state)
{
	struct bench_opts o;
	size_t s[64], n;

	bench_opts_init(&o);
	n = bench_sizes(&o, s, 64);
	assert_int_equal(n, 26); /* 8 B .. 256 MiB by 2 */
	assert_int_equal(s[0], 8);
	assert_int_equal(s[25], 256u << 20);
	o.min_bytes = 4;
	o.max_bytes = 4u << 20;
	o.factor = 7;
	n = bench_sizes(&o, s, 64);
	assert_int_equal(n, 8); /* 4 * 7^7 = 3294172 <= 4 MiB < 4 * 7^8 */
	assert_int_equal(s[7], 3294172);
	o.min_bytes = o.max_bytes = 1024;
	assert_int_equal(bench_sizes(&o, s, 64), 1);
	o.min_bytes = 1;
	o.max_bytes = (size_t)-1; /* no overflow past the largest size_t */
	o.factor = 2;
	assert_int_equal(bench_sizes(&o, s, 3), 3);
}

/* Every pair of the n nodes exactly once, and no node twice in a round. */
static void check_all_pairs(size_t n, int want_rounds)
{
	size_t live[32], np;
	struct bench_pair *p;
	int *r, nrounds;
	int seen[32][32] = {{0}};

	for (size_t i = 0; i < n; i++)
		live[i] = i + 100; /* node indexes are passed through */
	np = bench_plan_pairs(live, n, 16, &p, &r, &nrounds);
	assert_int_equal(np, n * (n - 1) / 2);
	assert_int_equal(nrounds, want_rounds);
	for (size_t k = 0; k < np; k++) {
		size_t a = p[k].a - 100, b = p[k].b - 100;

		assert_true(a < n && b < n && a != b);
		assert_int_equal(seen[a][b] + seen[b][a], 0);
		seen[a][b] = 1;
		if (k > 0)
			assert_true(r[k] >= r[k - 1]); /* sorted by round */
		for (size_t j = 0; j < k; j++) {
			if (r[j] != r[k])
				continue;
			assert_true(p[j].a != p[k].a && p[j].a != p[k].b);
			assert_true(p[j].b != p[k].a && p[j].b != p[k].b);
		}
	}
	free(p);
	free(r);
}

static void all_pairs_take_n_minus_1_rounds_or_n_when_odd(void **state)
{
	check_all_pairs(2, 1);
	check_all_pairs(4, 3);
	check_all_pairs(5, 5);
	check_all_pairs(16, 15);
}

static void beyond_the_limit_pairs_are_ring_neighbours(void **state)
{
	size_t live[20], np;
	struct bench_pair *p;
	int *r, nrounds;

	for (size_t i = 0; i < 20; i++)
		live[i] = i;
	np = bench_plan_pairs(live, 17, 16, &p, &r, &nrounds);
	assert_int_equal(np, 17); /* (i, i+1) and the wrap (16, 0) */
	assert_int_equal(nrounds, 3);
	for (size_t k = 0; k < np; k++) {
		assert_true(p[k].b == (p[k].a + 1) % 17);
		for (size_t j = 0; j < k; j++) {
			if (r[j] == r[k])
				assert_true(p[j].a != p[k].a && p[j].a != p[k].b &&
				            p[j].b != p[k].a && p[j].b != p[k].b);
		}
	}
	free(p);
	free(r);
	np = bench_plan_pairs(live, 18, 16, &p, &r, &nrounds);
	assert_int_equal(np, 18);
	assert_int_equal(nrounds, 2); /* an even ring needs two */
	free(p);
	free(r);
	np = bench_plan_pairs(live, 1, 16, &p, &r, &nrounds);
	assert_int_equal(np, 0);
	free(p);
	free(r);
}

static void busbw_is_algbw_times_2_n_minus_1_over_n(void **state)
{
	assert_true(bench_busbw(1.0, 1) == 0);
	assert_true(bench_busbw(1.0, 2) == 1.0);
	assert_true(bench_busbw(2.0, 4) == 3.0);
}

static void slow_links_are_below_0_7_of_the_median_and_name_their_node(void **state)
{
	struct bench_node nodes[4] = {
	    {.host = "n1"}, {.host = "n2"}, {.host = "n3"}, {.host = "n4"}};
	struct bench_link l[6] = {
	    {.a = 0, .b = 1, .busbw = 1.0}, {.a = 2, .b = 3, .busbw = 0.2},
	    {.a = 0, .b = 2, .busbw = 0.3}, {.a = 1, .b = 3, .busbw = 1.1},
	    {.a = 0, .b = 3, .busbw = 0.9}, {.a = 1, .b = 2, .busbw = 0.1, .failed = 0},
	};
	char out[256];

	bench_mark_slow(l, 6, nodes, 4, out, sizeof(out));
	/* median of 1.0 0.2 0.3 1.1 0.9 0.1 = (0.3 + 0.9) / 2 = 0.6: below 0.42 is slow */
	assert_int_equal(l[0].slow, 0);
	assert_int_equal(l[1].slow, 1);
	assert_int_equal(l[2].slow, 1);
	assert_int_equal(l[5].slow, 1);
	assert_int_equal(l[4].slow, 0);
	assert_string_equal(out, "n3 (3 of 3 links slow)");
	/* a failed link is neither slow nor counted */
	l[1].failed = 1;
	bench_mark_slow(l, 6, nodes, 4, out, sizeof(out));
	assert_int_equal(l[1].slow, 0);
	assert_string_equal(out, "n3 (2 of 2 links slow)");
}

static struct netmodel *model_with_addresses(void)
{
	const char *hosts[] = {"n1"};
	struct netmodel *m = netmodel_new(hosts, 1);
	json_t *probe = json_pack(
	    "{s[{sssisbsbsbss}{sssisbsbsbss}{sssisbsbsbss}]"
	    "s[{sssssssiss}{sssssssiss}{sssssssiss}{sssssssiss}{sssssssiss}]}",
	    "interfaces", "name", "lo", "index", 1, "up", 1, "running", 1, "loopback", 1, "kind",
	    "loopback", "name", "eth0", "index", 2, "up", 1, "running", 1, "loopback", 0, "kind",
	    "physical", "name", "ib0", "index", 3, "up", 1, "running", 1, "loopback", 0, "kind",
	    "ipoib", "addresses", "ifname", "lo", "family", "inet", "address", "127.0.0.1",
	    "prefix", 8, "scope", "host", "ifname", "eth0", "family", "inet6", "address", "fe80::1",
	    "prefix", 64, "scope", "link", "ifname", "eth0", "family", "inet6", "address",
	    "2001:db8::1", "prefix", 64, "scope", "global", "ifname", "eth0", "family", "inet",
	    "address", "10.0.0.1", "prefix", 24, "scope", "global", "ifname", "ib0", "family",
	    "inet6", "address", "fe80::2", "prefix", 64, "scope", "link");

	netmodel_set_node(m, 0, probe, NULL);
	json_decref(probe);
	return m;
}

static void iface_prefers_ipv4_then_global_ipv6_then_link_local(void **state)
{
	struct netmodel *m = model_with_addresses();
	struct bench_node n;

	memset(&n, 0, sizeof(n));
	assert_int_equal(bench_pick_address(&m->nodes[0], "eth0", &n), 0);
	assert_string_equal(n.addr, "10.0.0.1");
	assert_string_equal(n.addr_rule, "--iface eth0");
	memset(&n, 0, sizeof(n));
	assert_int_equal(bench_pick_address(&m->nodes[0], "ib0", &n), 0);
	assert_string_equal(n.addr, "fe80::2");
	memset(&n, 0, sizeof(n));
	assert_int_equal(bench_pick_address(&m->nodes[0], "lo", &n), -1); /* loopback only */
	assert_non_null(strstr(n.error, "n1: no usable address on interface lo"));
	memset(&n, 0, sizeof(n));
	assert_int_equal(bench_pick_address(&m->nodes[0], "eth9", &n), -1);
	assert_string_equal(n.error_code, "no-address");
	netmodel_free(m);
}

static void without_iface_the_address_is_nccls_pick(void **state)
{
	struct netmodel *m = model_with_addresses();
	struct bench_node n;

	memset(&n, 0, sizeof(n));
	/* ib first (NCCL's default), first address of the interface: the link-local one */
	assert_int_equal(bench_pick_address(&m->nodes[0], NULL, &n), 0);
	assert_string_equal(n.ifname, "ib0");
	assert_string_equal(n.addr, "fe80::2");
	assert_non_null(strstr(n.addr_rule, "NCCL's pick"));
	netmodel_free(m);
}

/* ---------------------------------------------------------------- progress */

#define MIB           (1 << 20)
#define RUN_SIZES     4
#define SIZE_MS       150               /* each size of a run this long: progress is 100 ms apart */
#define SIZE_BYTES(k) ((8 + (k)) * MIB) /* size k (from 1): 9, 10, 11, 12 MiB */

/* A bench_run of one rank (no network: the sum of one is a copy) over the
 * sizes SIZE_BYTES(1 .. nsizes), each timed iters times. */
static json_t *one_rank_run(int id, int nsizes, int iters, int progress)
{
	json_t *sizes = json_array();
	json_t *req;

	for (int k = 1; k <= nsizes; k++)
		json_array_append_new(sizes, json_integer(SIZE_BYTES(k)));
	req = json_pack("{sisssssssisssosisisbs[{si}]}", "id", id, "type", "bench_run", "backend",
	                "tcp", "token", "t0ken", "nranks", 1, "dtype", "float", "sizes", sizes,
	                "iters", iters, "warmup", 0, "check", 0, "ranks", "rank", 0);
	if (progress)
		json_object_set_new(req, "progress", json_true());
	return req;
}

/* Iterations for a size of SIZE_MS on this machine, measured once. */
static int iters_per_size(void)
{
	static int iters;
	json_t *req, *res;
	const char *code;
	char msg[CD_ERRLEN];
	int64_t t0;
	double per_iter;

	if (iters)
		return iters;
	req = one_rank_run(1, 1, 100, 0);
	t0 = cd_now_ms();
	res = bench_run(req, &code, msg, sizeof(msg));
	per_iter = (double)(cd_now_ms() - t0 + 1) / 100;
	assert_non_null(res);
	json_decref(res);
	json_decref(req);
	iters = (int)(SIZE_MS / per_iter) + 1;
	return iters;
}

static void record_with_time(json_t *progress_take, void *arg)
{
	json_object_set_new(progress_take, "at_ms", json_integer(cd_now_ms()));
	json_array_append_new(arg, progress_take);
}

/* Each progress object: sizes_done moving up by at least one within
 * [1, nsizes], the sweep's size count, the last size done in bytes. */
static void assert_progress_sequence(json_t *seen, int nsizes)
{
	long long last = 0;
	size_t k;
	json_t *p;

	json_array_foreach(seen, k, p)
	{
		long long done = json_integer_value(json_object_get(p, "sizes_done"));

		assert_true(done > last);
		assert_true(done <= nsizes);
		assert_int_equal(json_integer_value(json_object_get(p, "sizes")), nsizes);
		assert_int_equal(json_integer_value(json_object_get(p, "bytes")), SIZE_BYTES(done));
		last = done;
	}
}

static void bench_run_sends_each_size_done_once_and_at_most_every_100_ms(void **state)
{
	json_t *req = one_rank_run(1, RUN_SIZES, iters_per_size(), 1);
	json_t *seen = json_array(), *res, *rank, *p;
	const char *code = NULL;
	char msg[CD_ERRLEN] = "";
	size_t k;

	proto_progress_install(record_with_time, seen);
	res = bench_run(req, &code, msg, sizeof(msg));
	proto_progress_install(NULL, NULL);
	if (!res)
		fail_msg("bench_run: %s: %s", code, msg);
	rank = json_array_get(json_object_get(res, "ranks"), 0);
	assert_int_equal(json_array_size(json_object_get(rank, "results")), RUN_SIZES);
	assert_true(json_array_size(seen) >= 1);
	assert_progress_sequence(seen, RUN_SIZES);
	json_array_foreach(seen, k, p)
	{
		if (k > 0)
			assert_true(json_integer_value(json_object_get(p, "at_ms")) -
			                json_integer_value(json_object_get(
			                    json_array_get(seen, k - 1), "at_ms")) >=
			            100);
	}
	json_decref(res);
	json_decref(req);
	json_decref(seen);
}

/* The built agent next to this test's build directory (BUILD/clusterdoc-agent
 * for BUILD/tests/test_bench), $CLUSTERDOC_AGENT, or the top's; "" when none. */
static void append_line(struct buf *b, json_t *msg_take)
{
	char err[CD_ERRLEN];

	assert_int_equal(proto_write(b, msg_take, err, sizeof(err)), 0);
	json_decref(msg_take);
}

static void agent_sends_bench_run_progress_only_to_a_request_that_asks(void **state)
{
	char agent[PATH_MAX + 32], err[CD_ERRLEN];
	char *argv[] = {agent, "--stdio", NULL};
	struct buf in, out, errout;
	json_t *hello = proto_request(1, "hello"), *seen = json_array(), *msg, *progress;
	int status, answered[5] = {0};

	built_agent_path(agent, sizeof(agent));
	if (!agent[0])
		skip(); /* no built clusterdoc-agent: make all first */
	buf_init(&in, PROTO_MAX_LINE);
	buf_init(&out, 4 * PROTO_MAX_LINE);
	buf_init(&errout, 65536);
	json_object_set_new(hello, "protocol", json_integer(PROTO_VERSION));
	append_line(&in, hello);
	append_line(&in, one_rank_run(2, RUN_SIZES, iters_per_size(), 1));
	append_line(&in, one_rank_run(3, RUN_SIZES, iters_per_size(), 0));
	append_line(&in, proto_request(4, "exit"));
	assert_int_equal(child_run_input(argv, NULL, in.data, in.len, &out, &errout, 60000, &status,
	                                 err, sizeof(err)),
	                 0);
	if (status != 0)
		fail_msg("the agent ended with status %d: %.*s", status, (int)errout.len,
		         errout.data ? errout.data : "");
	while (proto_next(&out, &msg, err, sizeof(err)) == 1) {
		long long id = json_integer_value(json_object_get(msg, "id"));

		assert_true(id >= 1 && id <= 4);
		if (proto_progress_get(msg, &progress, err, sizeof(err)) == 1) {
			assert_int_equal(id, 2);
			assert_false(answered[2]); /* all of it before the response */
			json_array_append(seen, progress);
		} else {
			assert_true(json_is_true(json_object_get(msg, "ok")));
			answered[id] = 1;
		}
		json_decref(msg);
	}
	assert_int_equal(answered[1] + answered[2] + answered[3] + answered[4], 4);
	assert_true(json_array_size(seen) >= 1);
	assert_progress_sequence(seen, RUN_SIZES);
	json_decref(seen);
	buf_fini(&in);
	buf_fini(&out);
	buf_fini(&errout);
}

/* A rank's answer with the first `done` sizes of 1K, 2K, ... */
static json_t *answer_with(int rank, size_t done)
{
	json_t *res = json_array();

	for (size_t s = 0; s < done; s++)
		json_array_append_new(res, json_pack("{sIsIsfsI}", "bytes", (json_int_t)(1024 << s),
		                                     "count", (json_int_t)(256 << s), "time_us",
		                                     100.0 * (double)(rank + 1), "wrong", 0));
	return json_pack("[{siso}]", "rank", rank, "results", res);
}

/* Three nodes in one ring, five sizes: node1 answered three, node2 two
 * (it stalled), node3 never answered (stopped) and its progress said
 * silent_done. */
static void stopped_ring(struct bench *b, struct bench_ring *rp, struct bench_node_state *ns,
                         struct bench_node *rn, struct bench_failure *f, size_t silent_done)
{
	static size_t members[3] = {0, 1, 2};

	memset(b, 0, sizeof(*b));
	memset(rp, 0, sizeof(*rp));
	bench_opts_init(&b->o);
	b->n = 3;
	b->nsizes = 5;
	for (size_t s = 0; s < 5; s++)
		b->sizes[s] = 1024u << s;
	b->ranks_per_node = 1;
	rp->members = members;
	rp->nmembers = 3;
	rp->nranks = 3;
	rp->failed = 1;
	b->rings = rp;
	b->nrings = 1;
	b->nodes = ns;
	ns[0].ranks_out = answer_with(0, 3);
	ns[1].ranks_out = answer_with(1, 2);
	ns[2].ranks_out = NULL;
	ns[2].sizes_done = silent_done;
	rn[0].host = "node1";
	rn[1].host = "node2";
	rn[2].host = "node3";
	b->r.nodes = rn;
	b->r.nnodes = 3;
	memset(&f[0], 0, sizeof(f[0]));
	f[0].rank = 1;
	f[0].node = 1;
	snprintf(f[0].kind, sizeof(f[0].kind), "stalled");
	memset(&f[1], 0, sizeof(f[1]));
	f[1].rank = -1;
	f[1].node = 2;
	snprintf(f[1].kind, sizeof(f[1].kind), "unfinished");
	snprintf(f[1].message, sizeof(f[1].message), "node3: no answer");
	b->r.failures = f;
	b->r.nfailures = 2;
}

static void
a_ring_that_stopped_keeps_the_sizes_every_rank_did_and_names_the_silent_node(void **state)
{
	struct bench b;
	struct bench_ring rp;
	struct bench_node_state ns[3] = {{0}};
	struct bench_node rn[3] = {{0}};
	struct bench_failure f[2];
	json_t *j, *stopped;

	stopped_ring(&b, &rp, ns, rn, f, 4);
	bench_gather_round(&b);
	/* node2 answered two sizes: the third is where the ring stopped */
	assert_int_equal(b.r.nsizes, 2);
	assert_int_equal(b.r.nsizes_planned, 5);
	assert_true(b.r.sizes[1].time_us == 200.0); /* the slowest that answered */
	assert_int_equal(b.r.stop.bytes, 4096);
	assert_int_equal(b.r.stop.count, 1024);
	assert_string_equal(b.r.stop.state, "stalled");
	assert_int_equal(b.r.stop.node, 2);
	j = bench_report_json(&b.r, &b.o);
	stopped = json_object_get(j, "stopped");
	assert_true(json_is_false(json_object_get(j, "complete")));
	assert_int_equal(json_integer_value(json_object_get(j, "sizes_planned")), 5);
	assert_string_equal(json_string_value(json_object_get(stopped, "node")), "node3");
	assert_int_equal(json_integer_value(json_object_get(stopped, "sizes_done")), 2);
	assert_int_equal(json_array_size(json_object_get(j, "results")), 2);
	json_decref(j);
	free(b.r.sizes);
	json_decref(ns[0].ranks_out);
	json_decref(ns[1].ranks_out);

	/* the silent node's progress said one: only one size is known done */
	stopped_ring(&b, &rp, ns, rn, f, 1);
	bench_gather_round(&b);
	assert_int_equal(b.r.nsizes, 1);
	assert_int_equal(b.r.stop.bytes, 2048);
	free(b.r.sizes);
	json_decref(ns[0].ranks_out);
	json_decref(ns[1].ranks_out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(sizes_follow_b_e_f_and_include_the_end),
	    cmocka_unit_test(all_pairs_take_n_minus_1_rounds_or_n_when_odd),
	    cmocka_unit_test(beyond_the_limit_pairs_are_ring_neighbours),
	    cmocka_unit_test(busbw_is_algbw_times_2_n_minus_1_over_n),
	    cmocka_unit_test(slow_links_are_below_0_7_of_the_median_and_name_their_node),
	    cmocka_unit_test(iface_prefers_ipv4_then_global_ipv6_then_link_local),
	    cmocka_unit_test(without_iface_the_address_is_nccls_pick),
	    cmocka_unit_test(bench_run_sends_each_size_done_once_and_at_most_every_100_ms),
	    cmocka_unit_test(agent_sends_bench_run_progress_only_to_a_request_that_asks),
	    cmocka_unit_test(
	        a_ring_that_stopped_keeps_the_sizes_every_rank_did_and_names_the_silent_node),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
