/* SPDX-License-Identifier: MIT */
/*
 * test_hang_ras.c - the NCCL RAS client (hang/hang_ras.h): its two
 * parsers on statuses in the documented formats (tests/fixtures/hang/,
 * README.md there says where each is from), the comparison of two
 * queries, and the client against a stand-in server
 * (tests/fixtures/hang/ras_standin.py) for a job that progresses, one
 * stuck, a dead rank, an old text-only server, garbage, silence and a
 * refused connection.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cd.h"
#include "hang/hang_analyze.h"
#include "hang/hang_ras.h"
#include "scan.h"

#define FIX "tests/fixtures/hang/"

static json_t *parse_fixture(const char *name, int json)
{
	char *buf = NULL, err[CD_ERRLEN] = "";
	size_t len = 0;
	json_t *j;
	char path[256];

	snprintf(path, sizeof(path), FIX "%s", name);
	assert_int_equal(
	    scan_read_file(path, 1 << 20, SCAN_FILE_REGULAR, &buf, &len, err, sizeof(err)), 0);
	j = json ? hang_ras_parse_json(buf, len, err, sizeof(err))
	         : hang_ras_parse_text(buf, len, err, sizeof(err));
	free(buf);
	if (!j)
		fail_msg("%s: %s", name, err);
	return j;
}

static const json_t *comm0(const json_t *q)
{
	const json_t *c = json_array_get(json_object_get(q, "communicators"), 0);

	assert_non_null(c);
	return c;
}

static json_int_t count_of(const json_t *comm, const char *rank)
{
	const json_t *v = json_object_get(json_object_get(comm, "collectives"), rank);

	assert_non_null(v);
	return json_integer_value(v);
}

static void assert_ranks(const json_t *arr, const int *want, size_t n)
{
	assert_int_equal(json_array_size(arr), n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(json_integer_value(json_array_get(arr, i)), want[i]);
}

/* ================================================================ parsers */

static void json_status_names_the_missing_unresponsive_rank(void **state)
{
	json_t *q = parse_fixture("ras_json_missing.json", 1);
	const json_t *c = comm0(q), *o;
	static const int one[] = {1};

	assert_string_equal(json_string_value(json_object_get(q, "nccl_version")), "2.29.1");
	assert_string_equal(json_string_value(json_object_get(c, "hash")), "0xae94423cfbb2ef4a");
	assert_int_equal(json_integer_value(json_object_get(c, "ranks")), 2);
	assert_int_equal(count_of(c, "0"), 0);
	assert_ranks(json_object_get(c, "missing"), one, 1);
	assert_ranks(json_object_get(c, "unresponsive"), one, 1);
	assert_int_equal(json_array_size(json_object_get(c, "dead")), 0);
	o = json_array_get(json_object_get(c, "outliers"), 0);
	assert_int_equal(json_integer_value(json_object_get(o, "rank")), 1);
	assert_int_equal(json_integer_value(json_object_get(o, "pid")), 1524345);
	assert_string_equal(json_string_value(json_object_get(o, "node")), "172.16.64.245");
	assert_string_equal(json_string_value(json_object_get(o, "gpu")), "1");
	assert_string_equal(json_string_value(json_object_get(o, "what")), "missing: unresponsive");
	json_decref(q);
}

static void text_mismatch_gives_the_behind_ranks_their_count(void **state)
{
	json_t *q = parse_fixture("ras_text_mismatch.txt", 0);
	const json_t *c = comm0(q), *cg, *o;

	assert_string_equal(json_string_value(json_object_get(q, "nccl_version")),
	                    "2.26.2+cuda12.8");
	assert_string_equal(json_string_value(json_object_get(c, "hash")), "0x27a079b828ff1a75");
	assert_string_equal(json_string_value(json_object_get(c, "group")), "#0-0");
	assert_int_equal(json_integer_value(json_object_get(c, "ranks")), 32);
	cg = json_object_get(c, "count_groups");
	assert_int_equal(json_array_size(cg), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(cg, 0), "count")), 6650);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(cg, 0), "ranks")), 26);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(cg, 1), "count")), 6649);
	assert_int_equal(json_object_size(json_object_get(c, "collectives")), 6);
	assert_int_equal(count_of(c, "5"), 6649);
	o = json_array_get(json_object_get(c, "outliers"), 4);
	assert_int_equal(json_integer_value(json_object_get(o, "rank")), 5);
	assert_int_equal(json_integer_value(json_object_get(o, "pid")), 483077);
	assert_string_equal(json_string_value(json_object_get(o, "node")), "172.16.64.210");
	assert_string_equal(json_string_value(json_object_get(o, "what")),
	                    "launched up to operation 6649");
	json_decref(q);
}

static void text_dead_process_makes_its_missing_rank_dead(void **state)
{
	/* 2.24's "The missing rank: 21" names no process: the rank is missing,
	 * and not known to be the dead process's; 2.28's rank line is. */
	json_t *old = parse_fixture("ras_text_dead.txt", 0);
	json_t *q = parse_fixture("ras_text_incomplete.txt", 0);
	const json_t *d = json_array_get(json_object_get(old, "dead_processes"), 0);
	static const int r21[] = {21};

	assert_int_equal(json_integer_value(json_object_get(d, "pid")), 3487984);
	assert_string_equal(json_string_value(json_object_get(d, "node")), "172.16.64.213");
	assert_string_equal(json_string_value(json_object_get(d, "gpu")), "5");
	assert_ranks(json_object_get(comm0(old), "missing"), r21, 1);
	assert_ranks(json_object_get(comm0(old), "unresponsive"), r21, 1);

	assert_ranks(json_object_get(comm0(q), "missing"), r21, 1);
	assert_int_equal(json_array_size(json_object_get(q, "missing_processes")), 1);
	assert_string_equal(json_string_value(json_object_get(
	                        json_array_get(json_object_get(comm0(q), "outliers"), 0), "node")),
	                    "172.16.64.213");
	json_decref(old);
	json_decref(q);
}

static void text_status_groups_are_not_taken_for_counts(void **state)
{
	json_t *q = parse_fixture("ras_text_status.txt", 0);
	const json_t *c = comm0(q), *o;

	assert_int_equal(json_array_size(json_object_get(q, "groups")), 3);
	assert_string_equal(json_string_value(json_object_get(
	                        json_array_get(json_object_get(q, "groups"), 0), "status")),
	                    "FINALIZE");
	assert_null(json_object_get(c, "count_groups"));
	assert_int_equal(json_object_size(json_object_get(c, "collectives")), 0);
	assert_int_equal(json_array_size(json_object_get(c, "outliers")), 6);
	o = json_array_get(json_object_get(c, "outliers"), 0);
	assert_string_equal(json_string_value(json_object_get(o, "what")), "status RUNNING");
	o = json_array_get(json_object_get(c, "outliers"), 5);
	assert_int_equal(json_integer_value(json_object_get(o, "rank")), 20);
	assert_string_equal(json_string_value(json_object_get(o, "what")), "status FINALIZE");
	json_decref(q);
}

static void text_without_version_or_table_is_refused(void **state)
{
	char err[CD_ERRLEN] = "";
	static const char junk[] = "HTTP/1.0 400 Bad Request\r\n\r\n";

	assert_null(hang_ras_parse_text(junk, sizeof(junk) - 1, err, sizeof(err)));
	assert_non_null(strstr(err, "not a RAS status"));
	assert_null(hang_ras_parse_json("{\"a\":1}", 7, err, sizeof(err)));
	assert_non_null(strstr(err, "not a RAS status"));
	assert_null(hang_ras_parse_json("{", 1, err, sizeof(err)));
	assert_non_null(strstr(err, "not JSON"));
}

/* ================================================================ compare */

static json_t *ok(json_t *parsed)
{
	json_object_set_new(parsed, "ok", json_true());
	return parsed;
}

static void same_disagreeing_counts_twice_is_stuck(void **state)
{
	json_t *a = ok(parse_fixture("ras_text_mismatch.txt", 0));
	json_t *b = ok(parse_fixture("ras_text_mismatch.txt", 0));
	json_t *cmp = hang_ras_compare(a, b);
	const json_t *c = json_array_get(cmp, 0);
	static const int behind[] = {0, 2, 3, 4, 5, 7};

	assert_int_equal(json_array_size(cmp), 1);
	assert_string_equal(json_string_value(json_object_get(c, "state")), "stuck");
	assert_int_equal(json_integer_value(json_object_get(c, "max_count")), 6650);
	assert_ranks(json_object_get(c, "behind"), behind, 6);
	json_decref(cmp);
	json_decref(a);
	json_decref(b);
}

static void moved_counts_are_progressing(void **state)
{
	json_t *a = ok(parse_fixture("ras_text_mismatch.txt", 0));
	json_t *b = ok(parse_fixture("ras_text_mismatch.txt", 0));
	json_t *c0 = (json_t *)comm0(b), *cmp;

	json_object_set_new(json_object_get(c0, "collectives"), "5", json_integer(6651));
	cmp = hang_ras_compare(a, b);
	assert_string_equal(json_string_value(json_object_get(json_array_get(cmp, 0), "state")),
	                    "progressing");
	json_decref(cmp);
	json_decref(a);
	json_decref(b);
}

static void agreeing_unmoved_counts_are_idle_and_missing_ones_stuck(void **state)
{
	json_t *a = ok(parse_fixture("ras_json_missing.json", 1));
	json_t *cmp = hang_ras_compare(a, a);
	static const int one[] = {1};

	/* rank 1 is missing: stuck, whatever rank 0 says */
	assert_string_equal(json_string_value(json_object_get(json_array_get(cmp, 0), "state")),
	                    "stuck");
	assert_ranks(json_object_get(json_array_get(cmp, 0), "missing"), one, 1);
	json_decref(cmp);
	json_array_clear(json_object_get((json_t *)comm0(a), "missing"));
	cmp = hang_ras_compare(a, a);
	assert_string_equal(json_string_value(json_object_get(json_array_get(cmp, 0), "state")),
	                    "idle");
	json_decref(cmp);
	json_decref(a);
}

static void a_failed_query_compares_to_nothing(void **state)
{
	json_t *bad = json_pack("{s:b, s:s}", "ok", 0, "error_code", "timeout");
	json_t *cmp = hang_ras_compare(bad, bad);

	assert_int_equal(json_array_size(cmp), 0);
	json_decref(cmp);
	json_decref(bad);
}

/* ================================================================ the client */

struct standin {
	pid_t pid;
	int port;
};

static void standin_start(struct standin *s, const char *mode)
{
	int p[2];
	char line[32] = "";
	ssize_t n;

	assert_int_equal(pipe(p), 0);
	s->pid = fork();
	assert_true(s->pid >= 0);
	if (s->pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		execlp("python3", "python3", FIX "ras_standin.py", mode, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	/* up to the line end: the port may come in more than one write */
	for (size_t k = 0; k < sizeof(line) - 1; k++) {
		n = read(p[0], line + k, 1);
		if (n <= 0 || line[k] == '\n')
			break;
	}
	close(p[0]);
	s->port = atoi(line);
	assert_true(s->port > 0);
}

static void standin_stop(struct standin *s)
{
	kill(s->pid, SIGTERM);
	waitpid(s->pid, NULL, 0);
}

static json_t *query(struct standin *s, int deadline_ms)
{
	return hang_ras_query("127.0.0.1", s->port, deadline_ms);
}

static const char *str(const json_t *o, const char *k)
{
	const char *v = json_string_value(json_object_get(o, k));

	return v ? v : "(none)";
}

static void a_progressing_job_is_read_as_json_and_compares_progressing(void **state)
{
	struct standin s;
	json_t *a, *b, *cmp;

	standin_start(&s, "progress");
	a = query(&s, 3000);
	b = query(&s, 3000);
	standin_stop(&s);
	assert_true(json_is_true(json_object_get(a, "ok")));
	assert_string_equal(str(a, "format"), "json");
	assert_string_equal(str(a, "nccl_version"), "2.29.1");
	assert_int_equal(json_integer_value(json_object_get(a, "server_protocol")), 2);
	assert_non_null(strstr(str(a, "raw"), "\"communicators\""));
	assert_int_equal(count_of(comm0(a), "0"), 101); /* 100 AllReduce + 1 Broadcast */
	cmp = hang_ras_compare(a, b);
	assert_string_equal(str(json_array_get(cmp, 0), "state"), "progressing");
	json_decref(cmp);
	json_decref(a);
	json_decref(b);
}

static void a_stuck_job_compares_stuck_naming_the_rank_behind(void **state)
{
	struct standin s;
	json_t *a, *b, *cmp;
	static const int one[] = {1};

	standin_start(&s, "stuck");
	a = query(&s, 3000);
	b = query(&s, 3000);
	standin_stop(&s);
	cmp = hang_ras_compare(a, b);
	assert_string_equal(str(json_array_get(cmp, 0), "state"), "stuck");
	assert_ranks(json_object_get(json_array_get(cmp, 0), "behind"), one, 1);
	json_decref(cmp);
	json_decref(a);
	json_decref(b);
}

static void a_dead_rank_is_named_dead(void **state)
{
	struct standin s;
	json_t *a;
	static const int one[] = {1};

	standin_start(&s, "dead");
	a = query(&s, 3000);
	standin_stop(&s);
	assert_true(json_is_true(json_object_get(a, "ok")));
	assert_ranks(json_object_get(comm0(a), "dead"), one, 1);
	assert_string_equal(str(json_array_get(json_object_get(comm0(a), "outliers"), 0), "what"),
	                    "missing: considered dead");
	json_decref(a);
}

static void a_server_without_json_is_read_as_text(void **state)
{
	struct standin s;
	json_t *a;

	standin_start(&s, "old");
	a = query(&s, 3000);
	standin_stop(&s);
	assert_true(json_is_true(json_object_get(a, "ok")));
	assert_string_equal(str(a, "format"), "text");
	assert_string_equal(str(comm0(a), "hash"), "0x27a079b828ff1a75");
	json_decref(a);
}

static void a_port_answering_garbage_is_garbage(void **state)
{
	struct standin s;
	json_t *a;

	standin_start(&s, "garbage");
	a = query(&s, 3000);
	standin_stop(&s);
	assert_true(json_is_false(json_object_get(a, "ok")));
	assert_string_equal(str(a, "error_code"), "garbage");
	assert_non_null(strstr(str(a, "error"), "not an NCCL RAS server"));
	assert_non_null(strstr(str(a, "error"), "127.0.0.1:"));
	json_decref(a);
}

static void a_port_that_never_answers_times_out_at_the_deadline(void **state)
{
	struct standin s;
	json_t *a;
	int64_t t0;

	standin_start(&s, "silent");
	t0 = cd_now_ms();
	a = query(&s, 400);
	standin_stop(&s);
	assert_string_equal(str(a, "error_code"), "timeout");
	assert_non_null(strstr(str(a, "error"), "the handshake"));
	assert_true(cd_now_ms() - t0 < 1000);
	assert_true(cd_now_ms() - t0 >= 390);
	json_decref(a);
}

static void a_closed_port_is_refused(void **state)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	json_t *a;

	/* a port the kernel just gave and nobody listens on */
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
	close(fd);
	a = hang_ras_query("127.0.0.1", ntohs(sa.sin_port), 1000);
	assert_string_equal(str(a, "error_code"), "refused");
	assert_non_null(strstr(str(a, "error"), "NCCL_RAS_ADDR"));
	json_decref(a);
}

static void nccl_ras_addr_is_read_when_no_address_is_given(void **state)
{
	struct standin s;
	char env[64];
	json_t *a;

	standin_start(&s, "stuck");
	snprintf(env, sizeof(env), "127.0.0.1:%d", s.port);
	setenv("NCCL_RAS_ADDR", env, 1);
	a = hang_ras_query(NULL, 0, 3000);
	unsetenv("NCCL_RAS_ADDR");
	standin_stop(&s);
	assert_true(json_is_true(json_object_get(a, "ok")));
	json_decref(a);
}

/* The verdict on two identical answers: the communicator is stuck, and its
 * suspect is the first rank behind (0), found by the pid NCCL names for it
 * (483072) among the job's ranks, here global rank 9 on node n3. */
static void a_stuck_communicators_suspect_is_the_rank_nccl_names_by_pid(void **state)
{
	json_t *samples = json_array(), *v, *s = NULL, *x;
	size_t i;

	for (int k = 0; k < 2; k++) {
		json_t *p = json_pack("{sIsssIs{ssss}sIs{ssss}s[]snssss}", "pid",
		                      (json_int_t)483072, "role", "rank", "rank", (json_int_t)9,
		                      "env", "RANK", "9", "WORLD_SIZE", "10", "cpu_ms",
		                      (json_int_t)10, "main", "class", "wait", "syscall", "futex",
		                      "sockets", "stacks", "stacks_how", "none", "state", "S");

		json_array_append_new(
		    samples, json_pack("{sIs[{sss{s[o]s[]so}}]}", "t_ms", (json_int_t)k * 2000,
		                       "nodes", "host", "n3", "result", "processes", p, "denied",
		                       "ras", ok(parse_fixture("ras_text_mismatch.txt", 0))));
	}
	v = hang_analyze(samples);
	json_array_foreach(json_object_get(v, "suspects"), i, x)
	{
		if (strstr(json_string_value(json_object_get(x, "reason")), "is stuck (RAS"))
			s = x;
	}
	assert_non_null(s);
	assert_string_equal(json_string_value(json_object_get(s, "node")), "n3");
	assert_int_equal(json_integer_value(json_object_get(s, "rank")), 9);
	assert_int_equal(json_integer_value(json_object_get(s, "pid")), 483072);
	json_decref(v);
	json_decref(samples);
}

static void a_stuck_communicators_suspect_without_a_matching_pid_keeps_nccls_node(void **state)
{
	json_t *samples = json_array(), *v, *s = NULL, *x;
	size_t i;

	for (int k = 0; k < 2; k++) {
		json_t *p =
		    json_pack("{sIsssIs{ssss}sIs{ssss}s[]snssss}", "pid", (json_int_t)77, "role",
		              "rank", "rank", (json_int_t)0, "env", "RANK", "0", "WORLD_SIZE", "1",
		              "cpu_ms", (json_int_t)10, "main", "class", "wait", "syscall", "futex",
		              "sockets", "stacks", "stacks_how", "none", "state", "S");

		json_array_append_new(
		    samples, json_pack("{sIs[{sss{s[o]s[]so}}]}", "t_ms", (json_int_t)k * 2000,
		                       "nodes", "host", "n3", "result", "processes", p, "denied",
		                       "ras", ok(parse_fixture("ras_text_mismatch.txt", 0))));
	}
	v = hang_analyze(samples);
	json_array_foreach(json_object_get(v, "suspects"), i, x)
	{
		if (strstr(json_string_value(json_object_get(x, "reason")), "is stuck (RAS"))
			s = x;
	}
	assert_non_null(s);
	assert_string_equal(json_string_value(json_object_get(s, "node")), "172.16.64.210");
	assert_int_equal(json_integer_value(json_object_get(s, "rank")), 0);
	assert_int_equal(json_integer_value(json_object_get(s, "pid")), 483072);
	json_decref(v);
	json_decref(samples);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(json_status_names_the_missing_unresponsive_rank),
	    cmocka_unit_test(text_mismatch_gives_the_behind_ranks_their_count),
	    cmocka_unit_test(text_dead_process_makes_its_missing_rank_dead),
	    cmocka_unit_test(text_status_groups_are_not_taken_for_counts),
	    cmocka_unit_test(text_without_version_or_table_is_refused),
	    cmocka_unit_test(same_disagreeing_counts_twice_is_stuck),
	    cmocka_unit_test(moved_counts_are_progressing),
	    cmocka_unit_test(agreeing_unmoved_counts_are_idle_and_missing_ones_stuck),
	    cmocka_unit_test(a_failed_query_compares_to_nothing),
	    cmocka_unit_test(a_stuck_communicators_suspect_is_the_rank_nccl_names_by_pid),
	    cmocka_unit_test(a_stuck_communicators_suspect_without_a_matching_pid_keeps_nccls_node),
	    cmocka_unit_test(a_progressing_job_is_read_as_json_and_compares_progressing),
	    cmocka_unit_test(a_stuck_job_compares_stuck_naming_the_rank_behind),
	    cmocka_unit_test(a_dead_rank_is_named_dead),
	    cmocka_unit_test(a_server_without_json_is_read_as_text),
	    cmocka_unit_test(a_port_answering_garbage_is_garbage),
	    cmocka_unit_test(a_port_that_never_answers_times_out_at_the_deadline),
	    cmocka_unit_test(a_closed_port_is_refused),
	    cmocka_unit_test(nccl_ras_addr_is_read_when_no_address_is_given),
	};
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
