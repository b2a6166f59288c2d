/* SPDX-License-Identifier: MIT */
/*
 * test_reach.c - the reachability probe on loopback only: the listener
 * thread against reach_connect in the same process (as a node connecting to
 * its own addresses does), plain sockets playing silent, wrong or stray
 * peers, fixed ports, request errors, many targets under one deadline, and
 * no fd left open afterwards. The IPv6 cases are skipped without ::1.
 */
#include "probes/reach.h"
#include "probes/reach_internal.h"
#include "cd.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tests/unit/open_fds.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define TOKEN       "00112233445566778899aabbccddeeff"
#define OTHER_TOKEN "ffeeddccbbaa99887766554433221100"
#define MY_NODE     1

/* --- helpers ------------------------------------------------------------- */

/* Every test starts and ends with the same open fds and no listener. */
static int fds_setup(void **state)
{
	*state = (void *)(intptr_t)count_open_fds();
	return 0;
}

static int fds_teardown(void **state)
{
	json_t *r = reach_unlisten(NULL, NULL, NULL, 0);

	json_decref(r);
	return count_open_fds() == (int)(intptr_t)*state ? 0 : -1;
}

static void assert_no_fd_leaked(void **state)
{
	json_t *r = reach_unlisten(NULL, NULL, NULL, 0);

	assert_true(json_is_object(r));
	json_decref(r);
	assert_int_equal(count_open_fds(), (int)(intptr_t)*state);
}

static int64_t ms_now(void)
{
	return cd_now_ms();
}

typedef json_t *(*reach_fn)(json_t *req, const char **code, char *msg, size_t msglen);

/* One request; the reply's code and message land in code/msg. Takes req. */
static json_t *ask(reach_fn fn, json_t *req, const char **code, char *msg)
{
	json_t *result;

	*code = NULL;
	msg[0] = '\0';
	result = fn(req, code, msg, CD_ERRLEN);
	json_decref(req);
	return result;
}

static json_t *listen_req(const char *token, json_t *addresses, json_t *ports)
{
	return json_pack("{sssisoso}", "token", token, "node", MY_NODE, "addresses", addresses,
	                 "ports", ports);
}

/* Listens on one address on port 0 and returns the port chosen. */
static int listen_on(const char *address, const char *token)
{
	const char *code;
	char msg[CD_ERRLEN];
	json_t *r = ask(reach_listen,
	                listen_req(token, json_pack("[{ss}]", "address", address), json_array()),
	                &code, msg);
	json_t *row;
	int port;

	assert_non_null(r);
	row = json_array_get(json_object_get(r, "listeners"), 0);
	assert_string_equal(json_string_value(json_object_get(row, "address")), address);
	assert_null(json_object_get(row, "error"));
	port = (int)json_integer_value(json_object_get(row, "port"));
	assert_true(port > 0);
	json_decref(r);
	return port;
}

static json_t *target(int id, int node, const char *address, int port)
{
	return json_pack("{sisisssi}", "id", id, "node", node, "address", address, "port", port);
}

/* reach_connect over targets (taken) with our node MY_NODE. */
static json_t *connect_all(const char *token, int timeout_ms, json_t *targets)
{
	size_t count = json_array_size(targets);
	const char *code;
	char msg[CD_ERRLEN];
	json_t *r = ask(reach_connect,
	                json_pack("{sssisiso}", "token", token, "node", MY_NODE, "timeout_ms",
	                          timeout_ms, "targets", targets),
	                &code, msg);

	assert_non_null(r);
	assert_int_equal(json_array_size(json_object_get(r, "results")), count);
	return r;
}

static json_t *connect_one(const char *token, int timeout_ms, int node, const char *address,
                           int port)
{
	return connect_all(token, timeout_ms, json_pack("[o]", target(7, node, address, port)));
}

static json_t *row_at(json_t *r, size_t i)
{
	return json_array_get(json_object_get(r, "results"), i);
}

static const char *str_at(json_t *obj, const char *key)
{
	const char *s = json_string_value(json_object_get(obj, key));

	return s ? s : "(missing)";
}

static void assert_result(json_t *row, const char *result, const char *errno_name)
{
	assert_string_equal(str_at(row, "result"), result);
	if (errno_name)
		assert_string_equal(str_at(row, "errno_name"), errno_name);
	else
		assert_null(json_object_get(row, "errno_name"));
	if (strcmp(result, "ok") == 0)
		assert_null(json_object_get(row, "message"));
	else
		assert_true(strlen(str_at(row, "message")) > 0);
}

/* A port on which nothing listens right now: bound to port 0, then closed. */
static int free_port(int family)
{
	struct sockaddr_storage ss = {.ss_family = (sa_family_t)family};
	socklen_t len =
	    family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	int fd = socket(family, SOCK_STREAM, 0), port;

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&ss, len), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&ss, &len), 0);
	port = ntohs(family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
	                                : ((struct sockaddr_in *)&ss)->sin_port);
	close(fd);
	return port;
}

/* A plain listening socket on 127.0.0.1 that never accepts nor answers. */
static int plain_listener(int backlog, int *port)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, len), 0);
	assert_int_equal(listen(fd, backlog), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	*port = ntohs(sin.sin_port);
	return fd;
}

/* A blocking client connected to 127.0.0.1:port. */
static int plain_client(int port)
{
	struct sockaddr_in sin = {.sin_family = AF_INET,
	                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	                          .sin_port = htons((uint16_t)port)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	return fd;
}

/* Reads until EOF or timeout_ms; returns the byte count, -2 on timeout. */
static int read_until_eof(int fd, char *buf, size_t len, int timeout_ms)
{
	int64_t end = ms_now() + timeout_ms;
	size_t got = 0;

	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int64_t left = end - ms_now();
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)left) == 0)
			return -2;
		n = read(fd, buf + got, len - 1 - got);
		if (n <= 0) {
			buf[got] = '\0';
			return (int)got;
		}
		got += (size_t)n;
		if (got == len - 1)
			return (int)got;
	}
}

static int ipv6_sockets_available(void)
{
	int fd = socket(AF_INET6, SOCK_STREAM, 0);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

static int ipv6_loopback_available(void)
{
	struct sockaddr_in6 sin6 = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
	int fd = socket(AF_INET6, SOCK_STREAM, 0), ok;

	if (fd < 0)
		return 0;
	ok = bind(fd, (struct sockaddr *)&sin6, sizeof(sin6)) == 0;
	close(fd);
	return ok;
}

/* --- connect against our own listener ------------------------------------ */

static void test_own_listener_with_our_token_is_ok(void **state)
{
	int port = listen_on("127.0.0.1", TOKEN);
	json_t *r = connect_one(TOKEN, 1000, MY_NODE, "127.0.0.1", port);
	json_t *row = row_at(r, 0);

	assert_int_equal(json_integer_value(json_object_get(row, "id")), 7);
	assert_result(row, "ok", NULL);
	assert_true(json_is_integer(json_object_get(row, "rtt_us")));
	assert_true(json_integer_value(json_object_get(row, "rtt_us")) >= 0);
	json_decref(r);
	assert_no_fd_leaked(state);
}

static void test_other_expected_node_is_wrong_peer(void **state)
{
	int port = listen_on("127.0.0.1", TOKEN);
	json_t *r = connect_one(TOKEN, 1000, 5, "127.0.0.1", port);
	json_t *row = row_at(r, 0);

	assert_result(row, "wrong-peer", NULL);
	assert_int_equal(json_integer_value(json_object_get(row, "peer_node")), MY_NODE);
	assert_string_equal(str_at(row, "message"), "node 1 answered, not node 5");
	assert_true(json_integer_value(json_object_get(row, "rtt_us")) >= 0);
	json_decref(r);
	assert_no_fd_leaked(state);
}

static void test_listener_with_another_token_does_not_answer(void **state)
{
	int port = listen_on("127.0.0.1", OTHER_TOKEN);
	int64_t t0 = ms_now();
	json_t *r = connect_one(TOKEN, 2000, MY_NODE, "127.0.0.1", port);
	json_t *row = row_at(r, 0);

	assert_result(row, "bad-answer", NULL);
	assert_string_equal(str_at(row, "message"),
	                    "connected, but the peer closed without answering");
	assert_true(ms_now() - t0 < 1000); /* closed at once, not at the deadline */
	json_decref(r);
	assert_no_fd_leaked(state);
}

static void test_listener_answers_the_exact_line(void **state)
{
	static const char want[] = "CDREACH1 " TOKEN " 1\n";
	int port = listen_on("127.0.0.1", TOKEN);
	int fd = plain_client(port);
	char got[512];

	/* the line in two pieces: the listener must wait for the newline */
	assert_int_equal(write(fd, "CDREACH1 " TOKEN, 41), 41);
	usleep(20000);
	assert_int_equal(write(fd, " 3\n", 3), 3);
	assert_int_equal(read_until_eof(fd, got, sizeof(got), 2000), (int)strlen(want));
	assert_string_equal(got, want);
	close(fd);
	assert_no_fd_leaked(state);
}

static void test_listener_drops_a_line_that_is_not_ours(void **state)
{
	static const char *const lines[] = {
	    "CDREACH1 " OTHER_TOKEN " 3\n", "CDREACH2 " TOKEN " 3\n", "CDREACH1 " TOKEN "\n",
	    "CDREACH1 " TOKEN " x3\n",      "GET / HTTP/1.0\n",
	};
	int port = listen_on("127.0.0.1", TOKEN);
	char got[512];

	for (size_t i = 0; i < CD_ARRAY_LEN(lines); i++) {
		int fd = plain_client(port);

		assert_int_equal(write(fd, lines[i], strlen(lines[i])), (ssize_t)strlen(lines[i]));
		assert_int_equal(read_until_eof(fd, got, sizeof(got), 2000), 0);
		close(fd);
	}
	assert_no_fd_leaked(state);
}

static void test_listener_drops_a_line_over_256_bytes(void **state)
{
	int port = listen_on("127.0.0.1", TOKEN);
	int fd = plain_client(port);
	char junk[300], got[512];

	memset(junk, 'A', sizeof(junk));
	assert_int_equal(write(fd, junk, sizeof(junk)), (ssize_t)sizeof(junk));
	assert_int_equal(read_until_eof(fd, got, sizeof(got), 2000), 0);
	close(fd);
	assert_no_fd_leaked(state);
}

static void test_silent_peer_blocks_nobody_and_is_dropped_after_2s(void **state)
{
	int port = listen_on("127.0.0.1", TOKEN);
	int silent = plain_client(port);
	int64_t t0 = ms_now();
	json_t *r = connect_one(TOKEN, 1000, MY_NODE, "127.0.0.1", port);
	char got[16];

	assert_result(row_at(r, 0), "ok", NULL);
	assert_true(ms_now() - t0 < 500);
	json_decref(r);
	/* the listener gives a peer 2 s for its line, then closes */
	assert_int_equal(read_until_eof(silent, got, sizeof(got), 3500), 0);
	assert_true(ms_now() - t0 >= 1900);
	close(silent);
	assert_no_fd_leaked(state);
}

/* --- connect failures ---------------------------------------------------- */

static void test_port_without_listener_is_refused(void **state)
{
	json_t *r = connect_one(TOKEN, 1000, 2, "127.0.0.1", free_port(AF_INET));
	json_t *row = row_at(r, 0);

	assert_result(row, "refused", "ECONNREFUSED");
	assert_string_equal(str_at(row, "message"), strerror(ECONNREFUSED));
	assert_null(json_object_get(row, "rtt_us"));
	json_decref(r);
	assert_no_fd_leaked(state);
}

static void test_listener_that_never_answers_is_bad_answer_at_the_deadline(void **state)
{
	int port, fd = plain_listener(16, &port);
	int64_t t0 = ms_now(), took;
	json_t *r = connect_one(TOKEN, 300, 2, "127.0.0.1", port);
	json_t *row = row_at(r, 0);

	took = ms_now() - t0;
	assert_result(row, "bad-answer", NULL);
	assert_string_equal(str_at(row, "message"), "connected, but no answer within 300 ms");
	assert_true(json_integer_value(json_object_get(row, "rtt_us")) >= 0);
	assert_true(took >= 300);
	assert_true(took < 400);
	json_decref(r);
	close(fd);
	assert_no_fd_leaked(state);
}

/* A full accept queue makes Linux drop new SYNs: the connect never
 * completes, as behind a firewall that drops. */
static void test_dropped_syn_is_timeout(void **state)
{
	int port, fd = plain_listener(0, &port);
	int queued = plain_client(port);
	int64_t t0 = ms_now(), took;
	json_t *r = connect_one(TOKEN, 300, 2, "127.0.0.1", port);
	json_t *row = row_at(r, 0);

	took = ms_now() - t0;
	assert_result(row, "timeout", "ETIMEDOUT");
	assert_string_equal(str_at(row, "message"), strerror(ETIMEDOUT));
	assert_null(json_object_get(row, "rtt_us"));
	assert_true(took >= 300);
	assert_true(took < 400);
	json_decref(r);
	close(queued);
	close(fd);
	assert_no_fd_leaked(state);
}

static void test_unusable_address_or_port_is_einval(void **state)
{
	json_t *r = connect_all(
	    TOKEN, 300,
	    json_pack("[oooo]", target(0, 2, "not-an-address", 80), target(1, 2, "300.1.2.3", 80),
	              target(2, 2, "fe80::1%eth0", 80), target(3, 2, "127.0.0.1", 70000)));

	for (size_t i = 0; i < 4; i++) {
		json_t *row = row_at(r, i);

		assert_int_equal(json_integer_value(json_object_get(row, "id")), (json_int_t)i);
		assert_result(row, "error", "EINVAL");
		assert_string_equal(str_at(row, "message"), strerror(EINVAL));
	}
	json_decref(r);
	assert_no_fd_leaked(state);
}

static void test_link_local_without_scope_is_einval_from_connect(void **state)
{
	json_t *r;

	if (!ipv6_sockets_available())
		skip();
	r = connect_one(TOKEN, 300, 2, "fe80::1", 80);
	assert_result(row_at(r, 0), "error", "EINVAL");
	json_decref(r);
	assert_no_fd_leaked(state);
}

/* --- fixed ports ----------------------------------------------------------- */

static void test_fixed_port_is_dual_stack(void **state)
{
	int port = free_port(AF_INET);
	const char *code;
	char msg[CD_ERRLEN];
	json_t *res =
	    ask(reach_listen, listen_req(TOKEN, json_array(), json_pack("[i]", port)), &code, msg);
	json_t *row = json_array_get(json_object_get(res, "fixed"), 0), *r;

	assert_non_null(res);
	assert_int_equal(json_array_size(json_object_get(res, "listeners")), 0);
	assert_int_equal(json_integer_value(json_object_get(row, "port")), port);
	assert_null(json_object_get(row, "error"));
	assert_string_equal(str_at(row, "bound"), ipv6_sockets_available() ? "::" : "0.0.0.0");
	json_decref(res);

	r = connect_one(TOKEN, 1000, MY_NODE, "127.0.0.1", port);
	assert_result(row_at(r, 0), "ok", NULL);
	json_decref(r);
	if (ipv6_loopback_available()) {
		r = connect_one(TOKEN, 1000, MY_NODE, "::1", port);
		assert_result(row_at(r, 0), "ok", NULL);
		json_decref(r);
	}
	assert_no_fd_leaked(state);
}

static void test_fixed_port_taken_is_eaddrinuse(void **state)
{
	int port, taken = plain_listener(4, &port);
	const char *code;
	char msg[CD_ERRLEN];
	json_t *res =
	    ask(reach_listen, listen_req(TOKEN, json_array(), json_pack("[i]", port)), &code, msg);
	json_t *row = json_array_get(json_object_get(res, "fixed"), 0);

	assert_non_null(res);
	assert_int_equal(json_integer_value(json_object_get(row, "port")), port);
	assert_string_equal(str_at(row, "errno_name"), "EADDRINUSE");
	assert_string_equal(str_at(row, "error"), strerror(EADDRINUSE));
	assert_null(json_object_get(row, "bound"));
	json_decref(res);
	close(taken);
	assert_no_fd_leaked(state);
}

/* The holder question: a listener says whether it is this run's or another
 * run's, and nothing else (no token). */
static void test_listener_answers_who_with_this_or_other_run(void **state)
{
	static const struct {
		const char *ask, *want;
	} cases[] = {
	    {"CDREACH1 who " TOKEN "\n", "CDREACH1 this-run\n"},
	    {"CDREACH1 who " OTHER_TOKEN "\n", "CDREACH1 other-run\n"},
	};
	int port = listen_on("127.0.0.1", TOKEN);

	for (size_t i = 0; i < CD_ARRAY_LEN(cases); i++) {
		int fd = plain_client(port);
		char got[512];

		assert_int_equal(write(fd, cases[i].ask, strlen(cases[i].ask)),
		                 (ssize_t)strlen(cases[i].ask));
		assert_int_equal(read_until_eof(fd, got, sizeof(got), 2000),
		                 (int)strlen(cases[i].want));
		assert_string_equal(got, cases[i].want);
		close(fd);
	}
	assert_no_fd_leaked(state);
}

static int64_t wait_end(void)
{
	return reach_now_us() + (int64_t)REACH_HOLDER_WAIT_MS * 1000;
}

/* What a fixed port in use is held by: a clusterdoc listener (this run's or
 * another's), something that does not answer (a stale job), or nobody any
 * more. */
static void test_port_holder_tells_clusterdoc_from_a_stale_job(void **state)
{
	int port = listen_on("127.0.0.1", TOKEN), silent_port,
	    silent = plain_listener(4, &silent_port);
	int64_t t0;

	assert_int_equal(reach_port_holder(OTHER_TOKEN, port, wait_end()), REACH_HOLDER_OTHER_RUN);
	assert_int_equal(reach_port_holder(TOKEN, port, wait_end()), REACH_HOLDER_THIS_RUN);
	t0 = ms_now();
	assert_int_equal(reach_port_holder(TOKEN, silent_port, wait_end()), REACH_HOLDER_UNKNOWN);
	assert_true(ms_now() - t0 < REACH_HOLDER_WAIT_MS + 500); /* bounded */
	close(silent);
	assert_int_equal(reach_port_holder(TOKEN, free_port(AF_INET), wait_end()),
	                 REACH_HOLDER_GONE);
	assert_no_fd_leaked(state);
}

/* --- listen results and request errors ------------------------------------- */

static void test_listen_reports_each_address_on_its_own(void **state)
{
	FILE *f = fopen("/proc/sys/net/ipv4/ip_nonlocal_bind", "r");
	int nonlocal = f && fgetc(f) == '1';
	const char *code;
	char msg[CD_ERRLEN];
	json_t *res, *rows, *row;

	if (f)
		fclose(f);
	if (nonlocal)
		skip(); /* binding 192.0.2.1 would succeed */
	res = ask(reach_listen,
	          listen_req(TOKEN,
	                     json_pack("[{ss}{ss}{sssi}]", "address", "192.0.2.1", "address",
	                               "no-such-address", "address", "127.0.0.1", "scope_id", 3),
	                     json_array()),
	          &code, msg);
	assert_non_null(res);
	rows = json_object_get(res, "listeners");
	assert_int_equal(json_array_size(rows), 3);

	row = json_array_get(rows, 0);
	assert_string_equal(str_at(row, "address"), "192.0.2.1");
	assert_int_equal(json_integer_value(json_object_get(row, "scope_id")), 0);
	assert_string_equal(str_at(row, "errno_name"), "EADDRNOTAVAIL");
	assert_string_equal(str_at(row, "error"), strerror(EADDRNOTAVAIL));
	assert_null(json_object_get(row, "port"));

	row = json_array_get(rows, 1);
	assert_string_equal(str_at(row, "errno_name"), "EINVAL");

	row = json_array_get(rows, 2);
	assert_string_equal(str_at(row, "address"), "127.0.0.1");
	assert_int_equal(json_integer_value(json_object_get(row, "scope_id")), 3);
	assert_true(json_integer_value(json_object_get(row, "port")) > 0);
	assert_null(json_object_get(row, "error"));
	json_decref(res);
	assert_no_fd_leaked(state);
}

static void test_second_listen_is_busy(void **state)
{
	const char *code;
	char msg[CD_ERRLEN];

	listen_on("127.0.0.1", TOKEN);
	assert_null(
	    ask(reach_listen,
	        listen_req(TOKEN, json_pack("[{ss}]", "address", "127.0.0.1"), json_array()), &code,
	        msg));
	assert_string_equal(code, "busy");
	assert_no_fd_leaked(state);
	/* after unlisten, listening again works */
	listen_on("127.0.0.1", TOKEN);
	assert_no_fd_leaked(state);
}

static void test_malformed_listen_is_bad_request(void **state)
{
	json_t *reqs[] = {
	    json_pack("{si}", "node", 1),
	    json_pack("{sssi}", "token", "0123456789abcde", "node", 1), /* 15 chars */
	    json_pack("{sssi}", "token", TOKEN TOKEN "0", "node", 1),   /* 65 chars */
	    json_pack("{sssi}", "token", "0123456789abcdeg", "node", 1),
	    json_pack("{ss}", "token", TOKEN),
	    json_pack("{sssi}", "token", TOKEN, "node", -1),
	    json_pack("{sssiss}", "token", TOKEN, "node", 1, "addresses", "127.0.0.1"),
	    json_pack("{sssis[{si}]}", "token", TOKEN, "node", 1, "addresses", "address", 1),
	    json_pack("{sssis[i]}", "token", TOKEN, "node", 1, "ports", 0),
	    json_pack("{sssis[s]}", "token", TOKEN, "node", 1, "ports", "29500"),
	    json_pack("{sssisi}", "token", TOKEN, "node", 1, "duration_ms", 0),
	};
	const char *code;
	char msg[CD_ERRLEN];

	for (size_t i = 0; i < CD_ARRAY_LEN(reqs); i++) {
		assert_null(ask(reach_listen, reqs[i], &code, msg));
		assert_string_equal(code, "bad-request");
		assert_true(strlen(msg) > 0);
	}
	assert_no_fd_leaked(state);
}

static void test_malformed_connect_is_bad_request(void **state)
{
	json_t *reqs[] = {
	    json_pack("{sis[]}", "node", 1, "targets"),
	    json_pack("{sssis[]}", "token", "xyz", "node", 1, "targets"),
	    json_pack("{sss[]}", "token", TOKEN, "targets"),
	    json_pack("{sssi}", "token", TOKEN, "node", 1),
	    json_pack("{sssisis[]}", "token", TOKEN, "node", 1, "timeout_ms", 0, "targets"),
	    json_pack("{sssis[{sisssi}]}", "token", TOKEN, "node", 1, "targets", "node", 2,
	              "address", "127.0.0.1", "port", 80),
	};
	const char *code;
	char msg[CD_ERRLEN];

	for (size_t i = 0; i < CD_ARRAY_LEN(reqs); i++) {
		assert_null(ask(reach_connect, reqs[i], &code, msg));
		assert_string_equal(code, "bad-request");
		assert_true(strlen(msg) > 0);
	}
	assert_no_fd_leaked(state);
}

/* --- the listener's lifetime ------------------------------------------------ */

static void test_unlisten_then_connect_is_refused(void **state)
{
	int port = listen_on("127.0.0.1", TOKEN);
	const char *code;
	char msg[CD_ERRLEN];
	json_t *r;

	r = ask(reach_unlisten, json_object(), &code, msg);
	assert_true(json_is_object(r) && json_object_size(r) == 0);
	json_decref(r);
	r = ask(reach_unlisten, json_object(), &code, msg); /* idempotent */
	assert_true(json_is_object(r));
	json_decref(r);
	r = connect_one(TOKEN, 1000, MY_NODE, "127.0.0.1", port);
	assert_result(row_at(r, 0), "refused", "ECONNREFUSED");
	json_decref(r);
	assert_no_fd_leaked(state);
}

static void test_listener_ends_after_duration_ms(void **state)
{
	const char *code;
	char msg[CD_ERRLEN];
	json_t *res = ask(reach_listen,
	                  json_pack("{sssis[{ss}]si}", "token", TOKEN, "node", MY_NODE, "addresses",
	                            "address", "127.0.0.1", "duration_ms", 150),
	                  &code, msg);
	int port = (int)json_integer_value(
	    json_object_get(json_array_get(json_object_get(res, "listeners"), 0), "port"));
	json_t *r;

	json_decref(res);
	r = connect_one(TOKEN, 1000, MY_NODE, "127.0.0.1", port);
	assert_result(row_at(r, 0), "ok", NULL);
	json_decref(r);
	usleep(400000);
	r = connect_one(TOKEN, 1000, MY_NODE, "127.0.0.1", port);
	assert_result(row_at(r, 0), "refused", "ECONNREFUSED");
	json_decref(r);
	/* the ended listener is no longer busy */
	listen_on("127.0.0.1", TOKEN);
	assert_no_fd_leaked(state);
}

/* --- many targets ------------------------------------------------------------ */

static void test_200_targets_finish_within_one_deadline(void **state)
{
	int ok_port = listen_on("127.0.0.1", TOKEN), closed_port = free_port(AF_INET);
	int silent_port, silent = plain_listener(64, &silent_port);
	json_t *targets = json_array(), *r;
	int64_t t0, took;

	for (int i = 0; i < 200; i++) {
		int port = i % 10 == 9 ? silent_port : i % 2 ? closed_port : ok_port;

		json_array_append_new(targets, target(i, MY_NODE, "127.0.0.1", port));
	}
	t0 = ms_now();
	r = connect_all(TOKEN, 300, targets);
	took = ms_now() - t0;
	for (int i = 0; i < 200; i++) {
		json_t *row = row_at(r, (size_t)i);

		assert_int_equal(json_integer_value(json_object_get(row, "id")), i);
		if (i % 10 == 9)
			assert_result(row, "bad-answer", NULL);
		else if (i % 2)
			assert_result(row, "refused", "ECONNREFUSED");
		else
			assert_result(row, "ok", NULL);
	}
	assert_true(took >= 300); /* the silent ones waited for the deadline */
	assert_true(took < 2 * 300);
	json_decref(r);
	close(silent);
	assert_no_fd_leaked(state);
}

static void test_more_targets_than_inflight_slots_all_finish(void **state)
{
	enum { N = 3 * REACH_MAX_INFLIGHT };
	int ok_port = listen_on("127.0.0.1", TOKEN), closed_port = free_port(AF_INET);
	json_t *targets = json_array(), *r;
	int64_t t0 = ms_now();

	for (int i = 0; i < N; i++)
		json_array_append_new(
		    targets, target(i, MY_NODE, "127.0.0.1", i % 3 ? closed_port : ok_port));
	r = connect_all(TOKEN, 2000, targets);
	for (int i = 0; i < N; i++) {
		json_t *row = row_at(r, (size_t)i);

		assert_int_equal(json_integer_value(json_object_get(row, "id")), i);
		if (i % 3)
			assert_result(row, "refused", "ECONNREFUSED");
		else
			assert_result(row, "ok", NULL);
	}
	assert_true(ms_now() - t0 < 2000);
	json_decref(r);
	assert_no_fd_leaked(state);
}

/* --- IPv6 ------------------------------------------------------------------- */

static void test_ipv6_loopback_listener_is_ok(void **state)
{
	int port;
	json_t *r;

	if (!ipv6_loopback_available())
		skip();
	port = listen_on("::1", TOKEN);
	r = connect_one(TOKEN, 1000, MY_NODE, "::1", port);
	assert_result(row_at(r, 0), "ok", NULL);
	json_decref(r);
	/* IPV6_V6ONLY: nothing of ours listens on 127.0.0.1 at that port */
	r = connect_one(TOKEN, 1000, MY_NODE, "127.0.0.1", port);
	assert_result(row_at(r, 0), "refused", "ECONNREFUSED");
	json_decref(r);
	assert_no_fd_leaked(state);
}

/* --- errno names ------------------------------------------------------------ */

/* --- the bulk proof ---------------------------------------------------------- */

#define BULK_BYTES (256 * 1024)

static json_t *connect_bulk(int timeout_ms, int node, int port)
{
	const char *code;
	char msg[CD_ERRLEN];
	json_t *t = target(7, node, "127.0.0.1", port);
	json_t *r;

	json_object_set_new(t, "bulk", json_true());
	r = ask(reach_connect,
	        json_pack("{sssisisiso}", "token", TOKEN, "node", MY_NODE, "timeout_ms", timeout_ms,
	                  "bulk_bytes", BULK_BYTES, "targets", json_pack("[o]", t)),
	        &code, msg);
	assert_non_null(r);
	return r;
}

static void test_bulk_to_own_listener_passes_both_ways(void **state)
{
	int port = listen_on("127.0.0.1", TOKEN);
	json_t *r = connect_bulk(2000, MY_NODE, port);
	json_t *row = row_at(r, 0);

	assert_result(row, "ok", NULL);
	assert_string_equal(str_at(row, "bulk"), "ok");
	assert_int_equal(json_integer_value(json_object_get(row, "bulk_sent")), BULK_BYTES);
	assert_int_equal(json_integer_value(json_object_get(row, "bulk_received")), BULK_BYTES);
	json_decref(r);
	assert_no_fd_leaked(state);
}

static void test_no_bulk_unless_the_target_asks(void **state)
{
	int port = listen_on("127.0.0.1", TOKEN);
	json_t *r = connect_one(TOKEN, 1000, MY_NODE, "127.0.0.1", port);

	assert_result(row_at(r, 0), "ok", NULL);
	assert_null(json_object_get(row_at(r, 0), "bulk"));
	json_decref(r);
	assert_no_fd_leaked(state);
}

/* A peer that answers the token, then neither reads nor sends until told. */
struct mute_peer {
	int listen_fd, stop[2];
};

static void *mute_peer_run(void *arg)
{
	struct mute_peer *mp = arg;
	int fd = accept4(mp->listen_fd, NULL, NULL, SOCK_CLOEXEC);
	char line[REACH_LINE_MAX], answer[REACH_LINE_MAX];
	struct pollfd pfd = {.fd = mp->stop[0], .events = POLLIN};
	ssize_t n;
	int len;

	if (fd < 0)
		return NULL;
	n = recv(fd, line, sizeof(line) - 1, 0); /* the whole line comes in one segment */
	len = snprintf(answer, sizeof(answer), REACH_MAGIC " %s 2\n", TOKEN);
	if (n > 0)
		send(fd, answer, (size_t)len, MSG_NOSIGNAL);
	poll(&pfd, 1, 10000);
	close(fd);
	return NULL;
}

static void test_peer_that_answers_and_never_reads_is_stalled_at_the_deadline(void **state)
{
	struct mute_peer mp;
	pthread_t thread;
	int port;
	int64_t t0, took;
	json_t *r, *row;

	mp.listen_fd = plain_listener(16, &port);
	assert_int_equal(pipe2(mp.stop, O_CLOEXEC), 0);
	assert_int_equal(pthread_create(&thread, NULL, mute_peer_run, &mp), 0);
	t0 = ms_now();
	r = connect_bulk(400, 2, port);
	took = ms_now() - t0;
	row = row_at(r, 0);
	assert_result(row, "ok", NULL);
	assert_string_equal(str_at(row, "bulk"), "stalled");
	assert_true(json_integer_value(json_object_get(row, "bulk_sent")) < BULK_BYTES ||
	            json_integer_value(json_object_get(row, "bulk_received")) < BULK_BYTES);
	assert_true(took >= 400);
	assert_true(took < 600);
	assert_int_equal(write(mp.stop[1], "x", 1), 1);
	pthread_join(thread, NULL);
	close(mp.stop[0]);
	close(mp.stop[1]);
	close(mp.listen_fd);
	json_decref(r);
	assert_no_fd_leaked(state);
}

/* --- the path-MTU probe -------------------------------------------------------- */

static json_t *connect_pmtu(int timeout_ms, int node, int port)
{
	const char *code;
	char msg[CD_ERRLEN];
	json_t *t = target(7, node, "127.0.0.1", port);
	json_t *r;

	json_object_set_new(t, "bulk", json_true());
	json_object_set_new(t, "pmtu", json_true());
	r = ask(reach_connect,
	        json_pack("{sssisisiso}", "token", TOKEN, "node", MY_NODE, "timeout_ms", timeout_ms,
	                  "bulk_bytes", BULK_BYTES, "targets", json_pack("[o]", t)),
	        &code, msg);
	assert_non_null(r);
	return r;
}

static void test_pmtu_to_own_listener_is_the_whole_loopback_mtu(void **state)
{
	int port = listen_on("127.0.0.1", TOKEN);
	json_t *r = connect_pmtu(2000, MY_NODE, port);
	json_t *row = row_at(r, 0);

	assert_result(row, "ok", NULL);
	/* loopback's MTU is 65536; an IP packet holds 65535 */
	assert_int_equal(json_integer_value(json_object_get(row, "pmtu")), 65535);
	assert_int_equal(json_integer_value(json_object_get(row, "pmtu_max")), 65535);
	assert_string_equal(str_at(row, "bulk"), "ok");
	json_decref(r);
	assert_no_fd_leaked(state);
}

static void test_no_pmtu_unless_the_target_asks(void **state)
{
	int port = listen_on("127.0.0.1", TOKEN);
	json_t *r = connect_bulk(2000, MY_NODE, port);

	assert_null(json_object_get(row_at(r, 0), "pmtu"));
	json_decref(r);
	assert_no_fd_leaked(state);
}

/* A listener without a UDP echo (as one that drops all UDP): no size is
 * echoed, so pmtu is 0, the probe gives up in half the deadline and the
 * bulk proof still runs in the other half. */
static void test_pmtu_without_echo_is_0_and_bulk_still_judged(void **state)
{
	struct mute_peer mp;
	pthread_t thread;
	int port;
	int64_t t0, took;
	json_t *r, *row;

	mp.listen_fd = plain_listener(16, &port);
	assert_int_equal(pipe2(mp.stop, O_CLOEXEC), 0);
	assert_int_equal(pthread_create(&thread, NULL, mute_peer_run, &mp), 0);
	t0 = ms_now();
	r = connect_pmtu(600, 2, port);
	took = ms_now() - t0;
	row = row_at(r, 0);
	assert_result(row, "ok", NULL);
	assert_int_equal(json_integer_value(json_object_get(row, "pmtu")), 0);
	assert_string_equal(str_at(row, "bulk"), "stalled");
	assert_true(took >= 600);
	assert_true(took < 800);
	assert_int_equal(write(mp.stop[1], "x", 1), 1);
	pthread_join(thread, NULL);
	close(mp.stop[0]);
	close(mp.stop[1]);
	close(mp.listen_fd);
	json_decref(r);
	assert_no_fd_leaked(state);
}

/* The echo reflects only datagrams with the run's token. */
static void test_pmtu_echo_ignores_another_token(void **state)
{
	int port = listen_on("127.0.0.1", TOKEN);
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	char ours[128], theirs[128], back[256];
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), n1, n2;
	struct pollfd pfd = {.fd = fd, .events = POLLIN};

	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&to, sizeof(to)), 0);
	n1 = snprintf(theirs, sizeof(theirs), REACH_PMTU_PREFIX "%s 64\n", OTHER_TOKEN);
	n2 = snprintf(ours, sizeof(ours), REACH_PMTU_PREFIX "%s 64\n", TOKEN);
	assert_int_equal(send(fd, theirs, (size_t)n1, 0), n1);
	assert_int_equal(poll(&pfd, 1, 200), 0);
	assert_int_equal(send(fd, ours, (size_t)n2, 0), n2);
	assert_int_equal(poll(&pfd, 1, 2000), 1);
	assert_int_equal(recv(fd, back, sizeof(back), 0), n2);
	assert_memory_equal(back, ours, (size_t)n2);
	close(fd);
	assert_no_fd_leaked(state);
}

static void test_bulk_suffix_is_cut_or_refused(void **state)
{
	char ok[] = REACH_MAGIC " " TOKEN " 3 bulk 262144", none[] = REACH_MAGIC " " TOKEN " 3",
	     big[] = REACH_MAGIC " " TOKEN " 3 bulk 99999999",
	     bad[] = REACH_MAGIC " " TOKEN " 3 bulk x";

	assert_int_equal(reach_cut_bulk_suffix(ok), 262144);
	assert_string_equal(ok, REACH_MAGIC " " TOKEN " 3");
	assert_int_equal(reach_cut_bulk_suffix(none), 0);
	assert_int_equal(reach_cut_bulk_suffix(big), -1);
	assert_int_equal(reach_cut_bulk_suffix(bad), -1);
}

static void test_errno_names(void **state)
{
	assert_string_equal(reach_errno_name(ECONNREFUSED), "ECONNREFUSED");
	assert_string_equal(reach_errno_name(EHOSTUNREACH), "EHOSTUNREACH");
	assert_string_equal(reach_errno_name(ENETUNREACH), "ENETUNREACH");
	assert_string_equal(reach_errno_name(EADDRNOTAVAIL), "EADDRNOTAVAIL");
	assert_string_equal(reach_errno_name(EAGAIN), "EAGAIN");
	assert_string_equal(reach_errno_name(EPERM), "EPERM");
	assert_string_equal(reach_errno_name(9999), "E9999");
}

#define REACH_TEST(f) cmocka_unit_test_setup_teardown(f, fds_setup, fds_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    REACH_TEST(test_own_listener_with_our_token_is_ok),
	    REACH_TEST(test_other_expected_node_is_wrong_peer),
	    REACH_TEST(test_listener_with_another_token_does_not_answer),
	    REACH_TEST(test_listener_answers_the_exact_line),
	    REACH_TEST(test_listener_drops_a_line_that_is_not_ours),
	    REACH_TEST(test_listener_drops_a_line_over_256_bytes),
	    REACH_TEST(test_silent_peer_blocks_nobody_and_is_dropped_after_2s),
	    REACH_TEST(test_port_without_listener_is_refused),
	    REACH_TEST(test_listener_that_never_answers_is_bad_answer_at_the_deadline),
	    REACH_TEST(test_dropped_syn_is_timeout),
	    REACH_TEST(test_unusable_address_or_port_is_einval),
	    REACH_TEST(test_link_local_without_scope_is_einval_from_connect),
	    REACH_TEST(test_fixed_port_is_dual_stack),
	    REACH_TEST(test_fixed_port_taken_is_eaddrinuse),
	    REACH_TEST(test_listener_answers_who_with_this_or_other_run),
	    REACH_TEST(test_port_holder_tells_clusterdoc_from_a_stale_job),
	    REACH_TEST(test_listen_reports_each_address_on_its_own),
	    REACH_TEST(test_second_listen_is_busy),
	    REACH_TEST(test_malformed_listen_is_bad_request),
	    REACH_TEST(test_malformed_connect_is_bad_request),
	    REACH_TEST(test_unlisten_then_connect_is_refused),
	    REACH_TEST(test_listener_ends_after_duration_ms),
	    REACH_TEST(test_200_targets_finish_within_one_deadline),
	    REACH_TEST(test_more_targets_than_inflight_slots_all_finish),
	    REACH_TEST(test_ipv6_loopback_listener_is_ok),
	    REACH_TEST(test_bulk_to_own_listener_passes_both_ways),
	    REACH_TEST(test_no_bulk_unless_the_target_asks),
	    REACH_TEST(test_peer_that_answers_and_never_reads_is_stalled_at_the_deadline),
	    REACH_TEST(test_pmtu_to_own_listener_is_the_whole_loopback_mtu),
	    REACH_TEST(test_no_pmtu_unless_the_target_asks),
	    REACH_TEST(test_pmtu_without_echo_is_0_and_bulk_still_judged),
	    REACH_TEST(test_pmtu_echo_ignores_another_token),
	    REACH_TEST(test_bulk_suffix_is_cut_or_refused),
	    REACH_TEST(test_errno_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
