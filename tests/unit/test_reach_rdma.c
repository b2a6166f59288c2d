/* SPDX-License-Identifier: MIT */
/*
 * test_reach_rdma.c - the matrix's RDMA proof (reach.h, reach_rdma.h) on
 * loopback, in one process: the listener thread and reach_connect, each
 * with its own verbs side on the stand-in HCA (tests/fakes/fake_ibverbs.c),
 * which reads a RoCE v2 port from a fixture tree written here, its GID at
 * index 3 holding ::ffff:127.0.0.1. The stand-in's wire port is a free
 * one, so concurrent tests do not meet.
 */
#include "probes/reach.h"
#include "probes/reach_rdma.h"
#include "cd.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef FAKE_IBVERBS /* set by the Makefile */
#define FAKE_IBVERBS "build/fakes/ibverbs/libibverbs.so.1"
#endif

#define TOKEN "00112233445566778899aabbccddeeff"

static char tree[256];

static void put(const char *rel, const char *text)
{
	char path[512], cmd[700];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tree, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	assert_int_equal(system(cmd), 0);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%s\n", text);
	fclose(f);
}

static void make_tree(const char *state)
{
	const char *port = "sys/class/infiniband/mlx5_0/ports/1/";
	char rel[256], lib[600], real[4096];

	snprintf(rel, sizeof(rel), "%sstate", port);
	put(rel, state);
	snprintf(rel, sizeof(rel), "%sphys_state", port);
	put(rel, "5: LinkUp");
	snprintf(rel, sizeof(rel), "%slink_layer", port);
	put(rel, "Ethernet");
	snprintf(rel, sizeof(rel), "%sgids/0", port);
	put(rel, "fe80:0000:0000:0000:0ac0:ebff:fe12:3456");
	snprintf(rel, sizeof(rel), "%sgids/3", port);
	put(rel, "0000:0000:0000:0000:0000:ffff:7f00:0001");
	snprintf(rel, sizeof(rel), "%sgid_attrs/ndevs/0", port);
	put(rel, "lo");
	put("sys/class/net/lo/mtu", "1500");
	put("usr/lib64/.keep", "");
	snprintf(lib, sizeof(lib), "%s/usr/lib64/libibverbs.so.1", tree);
	unlink(lib);
	assert_non_null(realpath(FAKE_IBVERBS, real));
	assert_int_equal(symlink(real, lib), 0);
}

static int free_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bind(fd, (struct sockaddr *)&a, sizeof(a));
	getsockname(fd, (struct sockaddr *)&a, &len);
	port = ntohs(a.sin_port);
	close(fd);
	return port;
}

static int setup(void **state)
{
	char port[16];

	snprintf(tree, sizeof(tree), "/tmp/test_reach_rdma.XXXXXX");
	if (!mkdtemp(tree))
		return -1;
	snprintf(port, sizeof(port), "%d", free_port());
	setenv("FAKE_IBVERBS_PORT", port, 1);
	setenv("CLUSTERDOC_SYSFS_ROOT", tree, 1);
	return 0;
}

static int teardown(void **state)
{
	char cmd[300];

	json_decref(reach_unlisten(NULL, NULL, NULL, 0));
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tree);
	return system(cmd);
}

static json_t *rdma_spec(void)
{
	return json_pack("{sssisi}", "device", "mlx5_0", "port", 1, "gid_index", 3);
}

/* Listen on 127.0.0.1 with the proof's side, connect to it asking for
 * the proof; the one result row. */
static json_t *prove_within(int listener_rdma, int timeout_ms)
{
	const char *code = NULL;
	char msg[256];
	json_t *req = json_pack("{sssis[{ss}]}", "token", TOKEN, "node", 2, "addresses", "address",
	                        "127.0.0.1");
	json_t *ans, *row;
	int port;

	if (listener_rdma)
		json_object_set_new(req, "rdma", rdma_spec());
	ans = reach_listen(req, &code, msg, sizeof(msg));
	assert_non_null(ans);
	port = (int)json_integer_value(
	    json_object_get(json_array_get(json_object_get(ans, "listeners"), 0), "port"));
	json_decref(ans);
	json_decref(req);
	req = json_pack("{sssisisIs[{sisisssisb}]}", "token", TOKEN, "node", 1, "timeout_ms",
	                timeout_ms, "rdma_bytes", (json_int_t)65536, "targets", "id", 0, "node", 2,
	                "address", "127.0.0.1", "port", port, "rdma", 1);
	json_object_set_new(req, "rdma", rdma_spec());
	ans = reach_connect(req, &code, msg, sizeof(msg));
	assert_non_null(ans);
	json_decref(req);
	row = json_incref(json_array_get(json_object_get(ans, "results"), 0));
	json_decref(ans);
	return row;
}

static json_t *prove(int listener_rdma)
{
	return prove_within(listener_rdma, 5000);
}

static const char *field(json_t *row, const char *key)
{
	const char *s = json_string_value(json_object_get(row, key));

	return s ? s : "(none)";
}

static void write_between_two_active_ports_is_ok(void **state)
{
	json_t *row;

	make_tree("4: ACTIVE");
	row = prove(1);
	assert_string_equal(field(row, "result"), "ok");
	assert_string_equal(field(row, "rdma"), "ok");
	assert_int_equal(json_integer_value(json_object_get(row, "rdma_bytes")), 65536);
	assert_true(json_is_real(json_object_get(row, "rdma_ms")));
	assert_int_equal(json_integer_value(json_object_get(row, "active_mtu")), 1024);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(row, "rdma_peer"), "gid_index")), 3);
	json_decref(row);
}

static void listener_without_its_side_makes_the_pair_not_tested(void **state)
{
	json_t *row;

	make_tree("4: ACTIVE");
	row = prove(0);
	assert_string_equal(field(row, "result"), "ok");
	assert_string_equal(field(row, "rdma"), "not tested");
	assert_string_equal(field(row, "rdma_why"), "peer has no RDMA port in the listen request");
	json_decref(row);
}

static void port_not_active_is_not_tested(void **state)
{
	json_t *row;

	make_tree("2: INIT");
	row = prove(1);
	assert_string_equal(field(row, "result"), "ok");
	assert_string_equal(field(row, "rdma"), "not tested");
	assert_non_null(strstr(field(row, "rdma_why"), "no ACTIVE port"));
	json_decref(row);
}

static void no_libibverbs_is_not_tested(void **state)
{
	char lib[600];
	json_t *row;

	make_tree("4: ACTIVE");
	snprintf(lib, sizeof(lib), "%s/usr/lib64/libibverbs.so.1", tree);
	unlink(lib);
	row = prove(1);
	assert_string_equal(field(row, "rdma"), "not tested");
	assert_string_equal(field(row, "rdma_why"), "no libibverbs");
	json_decref(row);
}

static void provider_that_crashes_on_open_is_named(void **state)
{
	json_t *row;

	make_tree("4: ACTIVE");
	setenv("FAKE_IBVERBS_CRASH_ON_OPEN", "1", 1);
	row = prove(1);
	unsetenv("FAKE_IBVERBS_CRASH_ON_OPEN");
	assert_string_equal(field(row, "result"), "ok");
	assert_string_equal(field(row, "rdma"), "not tested");
	assert_string_equal(field(row, "rdma_why"),
	                    "the verbs provider crashed opening mlx5_0 (signal 6)");
	json_decref(row);
}

static void listener_that_cannot_register_its_buffer_fails_the_pair(void **state)
{
	json_t *row;

	make_tree("4: ACTIVE");
	setenv("FAKE_IBVERBS_MEMLOCK", "1", 1);
	row = prove(1);
	unsetenv("FAKE_IBVERBS_MEMLOCK");
	assert_string_equal(field(row, "result"), "ok");
	assert_string_equal(field(row, "rdma"), "failed");
	assert_string_equal(field(row, "rdma_why"), "peer: ibv_reg_mr: Cannot allocate memory");
	json_decref(row);
}

static void write_that_never_completes_fails_at_the_deadline(void **state)
{
	json_t *row;

	make_tree("4: ACTIVE");
	setenv("FAKE_IBVERBS_NO_COMPLETION", "1", 1);
	row = prove_within(1, 1500);
	unsetenv("FAKE_IBVERBS_NO_COMPLETION");
	assert_string_equal(field(row, "result"), "ok");
	assert_string_equal(field(row, "rdma"), "failed");
	assert_string_equal(field(row, "rdma_why"),
	                    "the RDMA write did not complete within 1500 ms");
	json_decref(row);
}

static void a_line_read_in_pieces_leaves_what_follows_in_the_socket(void **state)
{
	struct rdma_linebuf lb = {.len = 0};
	char rest[8] = "";
	size_t len = 0;
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	assert_int_equal(reach_rdma_read_line(sv[0], &lb, &len), 0); /* nothing yet */
	assert_int_equal(write(sv[1], "CDRDMA1 ver", 11), 11);
	assert_int_equal(reach_rdma_read_line(sv[0], &lb, &len), 0); /* taken, not complete */
	assert_int_equal(write(sv[1], "ified\nBULK", 10), 10);
	assert_int_equal(reach_rdma_read_line(sv[0], &lb, &len), 1);
	assert_string_equal(lb.buf, "CDRDMA1 verified");
	assert_int_equal(len, 16);
	assert_int_equal(read(sv[0], rest, sizeof(rest)), 4); /* the bulk bytes stay */
	assert_memory_equal(rest, "BULK", 4);
	assert_int_equal(write(sv[1], "CDRDMA1 failed\n", 15), 15);
	assert_int_equal(reach_rdma_read_line(sv[0], &lb, &len), 1); /* a new line */
	assert_string_equal(lb.buf, "CDRDMA1 failed");
	close(sv[1]);
	assert_int_equal(reach_rdma_read_line(sv[0], &lb, &len), -1);
	close(sv[0]);
}

static void malformed_rdma_fields_are_a_bad_request(void **state)
{
	static const char *const bad[] = {
	    "{\"token\": \"" TOKEN "\", \"node\": 1, \"targets\": [], \"rdma_bytes\": 0}",
	    "{\"token\": \"" TOKEN "\", \"node\": 1, \"targets\": [], \"rdma_bytes\": 4194305}",
	    "{\"token\": \"" TOKEN "\", \"node\": 1, \"targets\": [], \"rdma\": {\"device\": 5}}",
	    "{\"token\": \"" TOKEN "\", \"node\": 1, \"targets\": [], \"rdma\": {\"device\": "
	    "\"mlx5_0\", \"port\": 0, \"gid_index\": 3}}",
	};
	char msg[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *req = json_loads(bad[i], 0, NULL);
		const char *code = NULL;
		json_t *ans;

		assert_non_null(req);
		msg[0] = '\0';
		ans = reach_connect(req, &code, msg, sizeof(msg));
		assert_null(ans);
		assert_string_equal(code, "bad-request");
		assert_true(msg[0] != '\0');
		json_decref(req);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(malformed_rdma_fields_are_a_bad_request),
	    cmocka_unit_test(a_line_read_in_pieces_leaves_what_follows_in_the_socket),
	    cmocka_unit_test_setup_teardown(write_between_two_active_ports_is_ok, setup, teardown),
	    cmocka_unit_test_setup_teardown(listener_without_its_side_makes_the_pair_not_tested,
	                                    setup, teardown),
	    cmocka_unit_test_setup_teardown(port_not_active_is_not_tested, setup, teardown),
	    cmocka_unit_test_setup_teardown(no_libibverbs_is_not_tested, setup, teardown),
	    cmocka_unit_test_setup_teardown(provider_that_crashes_on_open_is_named, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(write_that_never_completes_fails_at_the_deadline, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(listener_that_cannot_register_its_buffer_fails_the_pair,
	                                    setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
