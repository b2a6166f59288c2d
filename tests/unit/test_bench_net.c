/* SPDX-License-Identifier: MIT */
/*
 * test_bench_net.c - NCCL's own word on its network in `bench --backend
 * nccl`, on the head (collectives/bench_net.h): a node's "nccl_net" lines
 * against the prediction from its probe's RDMA facts (bench_note_net), in
 * words, in the JSON report and after the text table; and the whole path
 * from the built agent running the fake NCCL (tests/fakes/fake_nccl.c,
 * FAKE_NCCL_NET) to that line.
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
#include "collectives/bench_internal.h"
#include "collectives/bench_net.h"
#include "probes/netmodel.h"
#include "proto.h"
#include "report/bench_render.h"

#ifndef FAKES_DIR /* set by the Makefile */
#define FAKES_DIR "build/fakes"
#endif

/* A RoCE v2 port as netprobe writes it (docs/nccl.md): the IPv4 v2 GID at
 * index 3, which NCCL 2.21+ picks by default. */
#define GID(i, text, type, fam, addr)                                                       \
	"{\"index\":" #i ",\"gid\":\"" text "\",\"type\":\"" type "\",\"ndev\":\"ens1f0\"," \
	"\"family\":\"" fam "\",\"address\":" addr "}"
#define ROCE_PORT(dev)                                                                            \
	"{\"device\":\"" dev "\",\"port\":1,\"state\":\"ACTIVE\",\"phys_state\":\"LinkUp\","      \
	"\"link_layer\":\"Ethernet\",\"rate\":\"100 Gb/sec (4X EDR)\",\"netdev\":\"ens1f0\","     \
	"\"mtu\":9000,\"gids\":[" GID(                                                            \
	    0, "fe80:0000:0000:0000:a288:c2ff:fe3b:506a", "IB/RoCE v1", "link-local",             \
	    "\"fe80::a288:c2ff:fe3b:506a\"") "," GID(1,                                           \
	                                             "fe80:0000:0000:0000:a288:"                  \
	                                             "c2ff:fe3b:506a",                            \
	                                             "RoCE v2", "link-local",                     \
	                                             "\"fe80::a288:c2ff:fe3b:"                    \
	                                             "506a\"") "," GID(2,                         \
	                                                               "0000:0000:"               \
	                                                               "0000:0000:"               \
	                                                               "0000:ffff:"               \
	                                                               "0a00:0b0c",               \
	                                                               "IB/RoCE v1", "ipv4",      \
	                                                               "\"10.0.11."               \
	                                                               "12\"") "," GID(3,         \
	                                                                               "0000:"    \
	                                                                               "0000:"    \
	                                                                               "0000:"    \
	                                                                               "0000:"    \
	                                                                               "0000:"    \
	                                                                               "ffff:"    \
	                                                                               "0a00:"    \
	                                                                               "0b0c",    \
	                                                                               "RoCE v2", \
	                                                                               "ipv4",    \
	                                                                               "\"10.0."  \
	                                                                               "11.12\"") "]}"
#define VERBS "{\"verbs_lib\":\"/usr/lib/x86_64-linux-gnu/libibverbs.so.1\",\"nccl_vars\":{}}"

#define NCCL_ID_HEX 256 /* an ncclUniqueId in hex (collectives/nccl.h) */

#define IB_LINE     "NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB eth0:10.0.0.1<0>"
#define SOCKET_LINE "NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>"

/* One node, node1, probed with rdma_text ports (NULL: a probe without RDMA
 * facts), NCCL 2.28.9 from its bench_caps: what bench_note_net reads. */
struct one_node {
	struct bench b;
	struct bench_node rn;
};

/* As one_node_init, with the login's NCCL variables vars_text (rdma_node's
 * "nccl_vars", a JSON object), also the probe's "env". */
static void one_node_init_vars(struct one_node *t, const char *rdma_text, const char *vars_text)
{
	const char *hosts[] = {"node1"};
	json_error_t je;
	json_t *probe = json_object(), *rnode;

	memset(t, 0, sizeof(*t));
	if (rdma_text) {
		rnode = json_loads(VERBS, 0, &je);
		json_object_set_new(rnode, "nccl_vars", json_loads(vars_text, 0, &je));
		assert_non_null(json_object_get(rnode, "nccl_vars"));
		json_object_set_new(probe, "rdma", json_loads(rdma_text, 0, &je));
		json_object_set_new(probe, "rdma_node", rnode);
		json_object_set_new(probe, "env", json_loads(vars_text, 0, &je));
		assert_non_null(json_object_get(probe, "rdma"));
	}
	t->b.m = netmodel_new(hosts, 1);
	netmodel_set_node(t->b.m, 0, probe, NULL);
	json_decref(probe);
	t->b.n = 1;
	t->b.r.nodes = &t->rn;
	t->b.r.nnodes = 1;
	t->rn.host = "node1";
	t->rn.nccl_available = 1;
	snprintf(t->rn.nccl_version, sizeof(t->rn.nccl_version), "2.28.9");
}

static void one_node_init(struct one_node *t, const char *rdma_text)
{
	one_node_init_vars(t, rdma_text, "{}");
}

static void one_node_fini(struct one_node *t)
{
	if (t->rn.net)
		bench_net_fini(t->rn.net);
	free(t->rn.net);
	json_decref(t->rn.nccl_env);
	if (t->b.ib_made)
		ib_suggestion_fini(&t->b.ib, t->b.n);
	free(t->b.live);
	netmodel_free(t->b.m);
}

/* bench_note_net of an answer with these lines (NULL-terminated). */
static void note_lines(struct one_node *t, const char *const *lines)
{
	json_t *arr = json_array(), *net;

	for (; *lines; lines++)
		json_array_append_new(arr, json_string(*lines));
	net = json_pack("{soss}", "lines", arr, "file", "private");
	bench_note_net(&t->b, 0, net);
	json_decref(net);
}

static void assert_line(const struct one_node *t, const char *want)
{
	char line[2048];

	assert_non_null(t->rn.net);
	bench_net_line(t->rn.net, t->rn.host, line, sizeof(line));
	assert_string_equal(line, want);
}

static void nccl_using_the_predicted_roce_port_says_the_same(void **state)
{
	const char *lines[] = {IB_LINE, "NCCL INFO Using network IB", NULL};
	struct one_node t;
	char line[512];
	json_t *j, *pred;

	one_node_init(&t, "[" ROCE_PORT("mlx5_0") "]");
	note_lines(&t, lines);
	assert_int_equal(t.rn.net->agrees, 1);
	assert_line(&t, "node1: NCCL used NET/IB [0]mlx5_0:1/RoCE (predicted: the same)");
	/* under the node's own row (the TUI's Bench report): no host */
	bench_net_line(t.rn.net, NULL, line, sizeof(line));
	assert_string_equal(line, "NCCL used NET/IB [0]mlx5_0:1/RoCE (predicted: the same)");
	j = bench_net_json(t.rn.net);
	pred = json_object_get(j, "predicted");
	assert_true(json_is_true(json_object_get(j, "agrees")));
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(j, "nccl"), "transport")), "ib");
	assert_int_equal(json_array_size(json_object_get(json_object_get(j, "nccl"), "lines")), 2);
	/* the prediction names the GID index NCCL will use (it does not print it) */
	assert_int_equal(json_integer_value(json_object_get(
	                     json_array_get(json_object_get(pred, "devices"), 0), "gid_index")),
	                 3);
	assert_null(json_object_get(j, "why"));
	json_decref(j);
	one_node_fini(&t);
}

static void nccl_falling_back_to_sockets_where_ib_was_predicted_names_both(void **state)
{
	const char *lines[] = {"NCCL INFO NET/IB : No device found.", SOCKET_LINE,
	                       "NCCL INFO Using network Socket", NULL};
	struct one_node t;
	json_t *j;

	one_node_init(&t, "[" ROCE_PORT("mlx5_0") "]");
	note_lines(&t, lines);
	assert_int_equal(t.rn.net->agrees, 0);
	assert_line(&t, "node1: NCCL used NET/Socket [0]eth0:10.0.0.1<0> (NET/IB : No device "
	                "found.); predicted NET/IB mlx5_0:1/RoCE");
	j = bench_net_json(t.rn.net);
	assert_true(json_is_false(json_object_get(j, "agrees")));
	assert_string_equal(
	    json_string_value(json_object_get(j, "why")),
	    "predicted ib (mlx5_0:1), NCCL used socket (NET/IB : No device found.)");
	json_decref(j);
	one_node_fini(&t);
}

/* The fault run's node4: a stale NCCL_IB_HCA in the login, no check saved: NCCL
 * falls back to sockets as predicted; the line gives the prediction's reason
 * (it was only in the JSON) and what a check's plan would set instead. */
static void a_socket_fallback_as_predicted_says_why_and_what_a_checks_plan_would_avoid(void **state)
{
	const char *lines[] = {"NCCL INFO NET/IB : No device found.", SOCKET_LINE,
	                       "NCCL INFO Using network Socket", NULL};
	struct one_node t;
	json_t *j;

	one_node_init_vars(&t, "[" ROCE_PORT("mlx5_0") "]", "{\"NCCL_IB_HCA\": \"mlx5_9\"}");
	note_lines(&t, lines);
	assert_int_equal(t.rn.net->agrees, 1);
	assert_line(&t, "node1: NCCL used NET/Socket [0]eth0:10.0.0.1<0> (NET/IB : No device "
	                "found.) (predicted: the same, as NCCL_IB_HCA=mlx5_9 (from environment) "
	                "matches no HCA of the node (mlx5_0)); a check's plan would avoid it: "
	                "with NCCL_IB_HCA==mlx5_0 NCCL_IB_GID_INDEX=3 NCCL would use NET/IB "
	                "mlx5_0:1/RoCE (`clusterdoc check` of these nodes saves the plan; bench "
	                "then sets it)");
	j = bench_net_json(t.rn.net);
	assert_string_equal(json_string_value(json_object_get(j, "avoidable")), t.rn.net->avoid);
	json_decref(j);
	one_node_fini(&t);
}

/* Sockets as predicted where no RDMA port is ACTIVE: the reason, and no
 * plan would change it. */
static void a_socket_fallback_no_plan_avoids_says_only_why(void **state)
{
	const char *lines[] = {"NCCL INFO NET/IB : No device found.", SOCKET_LINE, NULL};
	struct one_node t;
	char port[] = "[" ROCE_PORT("mlx5_0") "]", *at = strstr(port, "ACTIVE");

	memcpy(at, "DOWN\",", 6); /* "state":"DOWN", and the rest as it was */
	memmove(at + 6, at + 8, strlen(at + 8) + 1);
	one_node_init(&t, port);
	note_lines(&t, lines);
	assert_int_equal(t.rn.net->agrees, 1);
	assert_line(&t, "node1: NCCL used NET/Socket [0]eth0:10.0.0.1<0> (NET/IB : No device "
	                "found.) (predicted: the same, as no ACTIVE port)");
	one_node_fini(&t);
}

/* A check's plan given (bench_opts.nccl_env): the node's variables are the
 * plan's over the login's, sent with its requests, and the prediction is
 * made under them: the plan's GID index 3, not the login's 0. */
static void the_plans_variables_are_sent_reported_and_predicted_with(void **state)
{
	const char *lines[] = {IB_LINE, "NCCL INFO Using network IB", NULL};
	json_t *plan = json_pack("{ssss}", "NCCL_IB_HCA", "=mlx5_0", "NCCL_IB_GID_INDEX", "3");
	json_t *const envs[] = {plan};
	struct one_node t;
	json_t *req, *j, *pred;
	char *vars;

	one_node_init_vars(&t, "[" ROCE_PORT("mlx5_0") "]",
	                   "{\"NCCL_IB_HCA\": \"mlx5_9\", \"NCCL_IB_GID_INDEX\": \"0\", "
	                   "\"NCCL_IB_DISABLE\": \"0\"}");
	t.b.o.nccl_env = envs;
	t.b.r.backend = BENCH_NCCL;
	t.b.live = calloc(1, sizeof(*t.b.live));
	t.b.nlive = 1;
	bench_env_plan(&t.b);
	vars = json_dumps(t.rn.nccl_env, JSON_COMPACT);
	assert_string_equal(vars,
	                    "{\"from\":\"plan\",\"vars\":["
	                    "{\"name\":\"NCCL_IB_HCA\",\"value\":\"=mlx5_0\",\"source\":\"plan\"},"
	                    "{\"name\":\"NCCL_IB_GID_INDEX\",\"value\":\"3\",\"source\":\"plan\"},"
	                    "{\"name\":\"NCCL_IB_DISABLE\",\"value\":\"0\",\"source\":"
	                    "\"environment\"}]}");
	free(vars);
	req = bench_env_request(&t.b, 0);
	assert_true(json_equal(req, plan));
	json_decref(req);
	note_lines(&t, lines);
	assert_int_equal(t.rn.net->agrees, 1);
	assert_string_equal(t.rn.net->avoid, "");
	j = bench_net_json(t.rn.net);
	pred = json_object_get(j, "predicted");
	assert_int_equal(json_integer_value(json_object_get(
	                     json_array_get(json_object_get(pred, "devices"), 0), "gid_index")),
	                 3);
	json_decref(j);
	one_node_fini(&t);
	json_decref(plan);
}

static void other_devices_than_predicted_are_named_both_ways(void **state)
{
	const char *lines[] = {"NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_2:1/RoCE [RO]; "
	                       "OOB eth0:10.0.0.1<0>",
	                       NULL};
	struct one_node t;

	one_node_init(&t, "[" ROCE_PORT("mlx5_0") "," ROCE_PORT("mlx5_1") "]");
	note_lines(&t, lines);
	assert_int_equal(t.rn.net->agrees, 0);
	assert_line(&t, "node1: NCCL used NET/IB [0]mlx5_0:1/RoCE [1]mlx5_2:1/RoCE; predicted "
	                "NET/IB mlx5_0:1/RoCE mlx5_1:1/RoCE: NCCL also used mlx5_2:1; NCCL did "
	                "not use mlx5_1:1");
	one_node_fini(&t);
}

static void a_node_without_rdma_facts_has_no_prediction(void **state)
{
	const char *lines[] = {SOCKET_LINE, "NCCL INFO Using network Socket", NULL};
	struct one_node t;
	json_t *j;

	one_node_init(&t, NULL);
	note_lines(&t, lines);
	assert_int_equal(t.rn.net->agrees, -1);
	assert_line(&t, "node1: NCCL used NET/Socket [0]eth0:10.0.0.1<0> (no prediction: no RDMA "
	                "facts)");
	j = bench_net_json(t.rn.net);
	assert_true(json_is_null(json_object_get(j, "agrees")));
	json_decref(j);
	one_node_fini(&t);
}

static void lines_the_node_could_not_read_are_named_with_the_prediction(void **state)
{
	struct one_node t;
	json_t *net = json_pack("{ss}", "error", "NCCL_DEBUG_FILE /x/nccl.log: Permission denied");

	one_node_init(&t, "[" ROCE_PORT("mlx5_0") "]");
	bench_note_net(&t.b, 0, net);
	assert_line(&t, "node1: NCCL's lines could not be read (NCCL_DEBUG_FILE /x/nccl.log: "
	                "Permission denied); predicted NET/IB mlx5_0:1/RoCE");
	/* an agent too old to send them */
	bench_note_net(&t.b, 0, NULL);
	assert_line(&t, "node1: NCCL's lines could not be read (no nccl_net in bench_run's "
	                "answer); predicted NET/IB mlx5_0:1/RoCE");
	json_decref(net);
	one_node_fini(&t);
}

static void json_report_has_the_network_of_each_node_that_ran(void **state)
{
	const char *lines[] = {IB_LINE, NULL};
	struct bench_opts o;
	struct one_node t;
	json_t *j, *node;

	bench_opts_init(&o);
	one_node_init(&t, "[" ROCE_PORT("mlx5_0") "]");
	t.b.r.backend = BENCH_NCCL;
	j = bench_report_json(&t.b.r, &o);
	assert_null(json_object_get(json_array_get(json_object_get(j, "nodes"), 0), "network"));
	json_decref(j);
	note_lines(&t, lines);
	j = bench_report_json(&t.b.r, &o);
	node = json_array_get(json_object_get(j, "nodes"), 0);
	assert_true(json_is_true(json_object_get(json_object_get(node, "network"), "agrees")));
	json_decref(j);
	one_node_fini(&t);
}

/* bench_print_text's stdout, into out. */
static void text_of(const struct bench_report *rep, const struct bench_opts *o, char *out,
                    size_t len)
{
	char path[] = "/tmp/test_bench_net_XXXXXX";
	int fd = mkstemp(path), saved = dup(STDOUT_FILENO);
	ssize_t n;

	assert_true(fd >= 0 && saved >= 0);
	fflush(stdout);
	dup2(fd, STDOUT_FILENO);
	bench_print_text(rep, o);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	n = pread(fd, out, len - 1, 0);
	out[n > 0 ? n : 0] = '\0';
	close(fd);
	unlink(path);
}

static void text_report_says_it_after_the_table(void **state)
{
	const char *lines[] = {IB_LINE, NULL};
	struct bench_opts o;
	struct one_node t;
	char out[8192], *avg, *net;

	bench_opts_init(&o);
	one_node_init(&t, "[" ROCE_PORT("mlx5_0") "]");
	t.b.r.backend = BENCH_NCCL;
	note_lines(&t, lines);
	text_of(&t.b.r, &o, out, sizeof(out));
	avg = strstr(out, "# Avg bus bandwidth");
	net = strstr(out, "#\n# NCCL's network (its NCCL_DEBUG=INFO lines):\n"
	                  "#  node1: NCCL used NET/IB [0]mlx5_0:1/RoCE (predicted: the same)\n");
	assert_non_null(avg);
	assert_non_null(net);
	assert_true(net > avg);
	one_node_fini(&t);
}

/* ---------------------------------------------------------------- the whole path */

static void append_line(struct buf *b, json_t *msg_take)
{
	char err[CD_ERRLEN];

	assert_int_equal(proto_write(b, msg_take, err, sizeof(err)), 0);
	json_decref(msg_take);
}

/* The agent on the fakes with env (NULL-terminated, after the fakes'
 * library names): hello, bench_caps, bench_nccl_id, a one-rank NCCL
 * bench_run, as the bench sends them; the run's result (new reference). */
static json_t *agent_nccl_run(const char *const *env)
{
	char agent[PATH_MAX + 32], err[CD_ERRLEN], id[NCCL_ID_HEX + 1];
	char *argv[] = {agent, "--stdio", NULL};
	char *envp[16] = {"CLUSTERDOC_NCCL_LIB=" FAKES_DIR "/libfake_nccl.so",
	                  "CLUSTERDOC_CUDART_LIB=" FAKES_DIR "/libfake_cudart.so",
	                  "PATH=/usr/bin:/bin", "TMPDIR=/tmp"};
	json_t *hello = proto_request(1, "hello"), *msg, *result = NULL;
	struct buf in, out, errout;
	size_t n = 4;
	int status;

	built_agent_path(agent, sizeof(agent));
	if (!agent[0])
		skip(); /* no built clusterdoc-agent: make all first */
	for (; *env && n < 15; env++)
		envp[n++] = (char *)*env;
	envp[n] = NULL;
	buf_init(&in, PROTO_MAX_LINE);
	buf_init(&out, 4 * PROTO_MAX_LINE);
	buf_init(&errout, 65536);
	json_object_set_new(hello, "protocol", json_integer(PROTO_VERSION));
	append_line(&in, hello);
	append_line(&in, proto_request(5, "bench_caps")); /* the probe phase's, first */
	append_line(&in, proto_request(2, "bench_nccl_id"));
	memset(id, 'a', NCCL_ID_HEX);
	id[NCCL_ID_HEX] = '\0'; /* the fake takes any id */
	msg = json_pack("{sisssssisss[i]sisisbss}", "id", 3, "type", "bench_run", "backend", "nccl",
	                "nranks", 1, "dtype", "float", "sizes", 4096, "iters", 1, "warmup", 0,
	                "check", 1, "nccl_id", id);
	json_object_set_new(msg, "ranks", json_pack("[{sisi}]", "rank", 0, "gpu", 0));
	append_line(&in, msg);
	append_line(&in, proto_request(4, "exit"));
	assert_int_equal(child_run_input(argv, envp, in.data, in.len, &out, &errout, 60000, &status,
	                                 err, sizeof(err)),
	                 0);
	if (status != 0)
		fail_msg("the agent ended with status %d: %.*s", status, (int)errout.len,
		         errout.data ? errout.data : "");
	/* every line of stdout is the protocol's: NCCL wrote none there */
	while (proto_next(&out, &msg, err, sizeof(err)) == 1) {
		assert_true(json_is_true(json_object_get(msg, "ok")));
		if (json_integer_value(json_object_get(msg, "id")) == 3)
			result = json_incref(json_object_get(msg, "result"));
		json_decref(msg);
	}
	assert_int_equal(out.len, 0);
	assert_non_null(result);
	buf_fini(&in);
	buf_fini(&out);
	buf_fini(&errout);
	return result;
}

static void agents_nccl_lines_reach_the_heads_line_for_ib(void **state)
{
	const char *env[] = {"FAKE_NCCL_NET=IB mlx5_0:1/RoCE", NULL};
	json_t *res = agent_nccl_run(env);
	struct one_node t;

	one_node_init(&t, "[" ROCE_PORT("mlx5_0") "]");
	bench_note_net(&t.b, 0, json_object_get(res, "nccl_net"));
	assert_line(&t, "node1: NCCL used NET/IB [0]mlx5_0:1/RoCE (predicted: the same)");
	json_decref(res);
	one_node_fini(&t);
}

static void agents_nccl_lines_reach_the_heads_line_for_a_socket_fallback(void **state)
{
	/* a login with NCCL_DEBUG=INFO and no file: NCCL would write to stdout */
	const char *env[] = {"FAKE_NCCL_NET=Socket eth0 noverbs", "NCCL_DEBUG=INFO", NULL};
	json_t *res = agent_nccl_run(env);
	struct one_node t;

	one_node_init(&t, "[" ROCE_PORT("mlx5_0") "]");
	bench_note_net(&t.b, 0, json_object_get(res, "nccl_net"));
	assert_line(&t, "node1: NCCL used NET/Socket [0]eth0:10.0.0.1<0> (no libibverbs); "
	                "predicted NET/IB mlx5_0:1/RoCE");
	json_decref(res);
	one_node_fini(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(nccl_using_the_predicted_roce_port_says_the_same),
	    cmocka_unit_test(nccl_falling_back_to_sockets_where_ib_was_predicted_names_both),
	    cmocka_unit_test(
	        a_socket_fallback_as_predicted_says_why_and_what_a_checks_plan_would_avoid),
	    cmocka_unit_test(a_socket_fallback_no_plan_avoids_says_only_why),
	    cmocka_unit_test(the_plans_variables_are_sent_reported_and_predicted_with),
	    cmocka_unit_test(other_devices_than_predicted_are_named_both_ways),
	    cmocka_unit_test(a_node_without_rdma_facts_has_no_prediction),
	    cmocka_unit_test(lines_the_node_could_not_read_are_named_with_the_prediction),
	    cmocka_unit_test(json_report_has_the_network_of_each_node_that_ran),
	    cmocka_unit_test(text_report_says_it_after_the_table),
	    cmocka_unit_test(agents_nccl_lines_reach_the_heads_line_for_ib),
	    cmocka_unit_test(agents_nccl_lines_reach_the_heads_line_for_a_socket_fallback),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
