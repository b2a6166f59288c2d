/* SPDX-License-Identifier: MIT */
/* test_run_cause.c - the root cause of a failed job (jobs/run_cause.h)
 * on lines as torch 1.13's torchrun printed them on a two-node namespace
 * cluster (rank 3, node2's second worker, exits 3; its peers then fail with
 * "Connection closed by peer"), and the exit status that follows from it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "cd.h"
#include "jobs/run.h"
#include "jobs/run_cause.h"

static void strip_takes_off_torchruns_worker_prefix(void **state)
{
	static const struct {
		const char *in, *rest;
		int local;
	} cases[] = {
	    {"[default0]:RuntimeError: x", "RuntimeError: x", 0},
	    {"[default12]: rank 3", "rank 3", 12},
	    {"[trainer-1]:x", "x", 1},
	    {"rank 3: failing on purpose", "rank 3: failing on purpose", -1},
	    {"[default]:x", "[default]:x", -1},
	    {"[a b0]:x", "[a b0]:x", -1},
	    {"[default0] x", "[default0] x", -1},
	};
	int local;

	for (size_t i = 0; i < CD_ARRAY_LEN(cases); i++) {
		assert_string_equal(run_cause_strip(cases[i].in, &local), cases[i].rest);
		assert_int_equal(local, cases[i].local);
	}
}

static void torchruns_failed_worker_line_gives_its_local_rank_and_code(void **state)
{
	static const struct {
		const char *line;
		int ok, local, code;
	} cases[] = {
	    {"ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 3) local_rank: "
	     "1 (pid: 27185) of binary: /usr/bin/python3",
	     1, 1, 3},
	    {"E1204 20:30:12.123000 140 torch/distributed/elastic/multiprocessing/api.py:881] "
	     "failed (exitcode: -9) local_rank: 0 (pid: 12) of binary: /usr/bin/python3",
	     1, 0, -9},
	    {"the job failed (exitcode: 3)", 0, 0, 0},
	    {"failed (exitcode: x) local_rank: 0", 0, 0, 0},
	};
	int local, code;

	for (size_t i = 0; i < CD_ARRAY_LEN(cases); i++) {
		local = code = 0;
		assert_int_equal(run_cause_torchrun_failed(cases[i].line, &local, &code),
		                 cases[i].ok);
		assert_int_equal(local, cases[i].local);
		assert_int_equal(code, cases[i].code);
	}
}

static void the_failure_tables_entries_give_rank_and_code(void **state)
{
	int rank, local, code;

	assert_int_equal(run_cause_table_rank("  rank      : 3 (local_rank: 1)", &rank, &local), 1);
	assert_int_equal(rank, 3);
	assert_int_equal(local, 1);
	assert_int_equal(run_cause_table_exit("  exitcode  : 3 (pid: 27185)", &code), 1);
	assert_int_equal(code, 3);
	assert_int_equal(run_cause_table_exit("  exitcode  : -15 (pid: 9)", &code), 1);
	assert_int_equal(code, -15);
	assert_int_equal(run_cause_table_rank("rank 3: failing on purpose", &rank, &local), 0);
	assert_int_equal(run_cause_table_rank("  ranks     : 3 (local_rank: 1)", &rank, &local), 0);
	assert_int_equal(run_cause_table_exit("  error_file: <N/A>", &code), 0);
}

/* One node's lines and end, as a scenario row gives them. */
struct node_script {
	const char *const *lines; /* NULL-ended; "!" first: an error line */
	int failed_alone;
	int64_t first_error_ms, end_ms;
};

static void play(struct run_cause_node *n, const struct node_script *s)
{
	run_cause_init(n);
	for (const char *const *l = s->lines; *l; l++)
		run_cause_line(n, (*l)[0] == '!' ? *l + 1 : *l, (*l)[0] == '!');
	n->failed_alone = s->failed_alone;
	n->first_error_ms = s->first_error_ms;
	n->end_ms = s->end_ms;
}

/* node1: both workers lost their peer (torch 1.13, captured) */
static const char *const victim_node[] = {
    "![default1]:RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer "
    "[10.97.44.12]:25241",
    "![default0]:RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer "
    "[10.97.44.11]:6529",
    "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 "
    "(pid: 27182) of binary: /usr/bin/python3",
    "Failures:",
    "  rank      : 1 (local_rank: 1)",
    "  exitcode  : 1 (pid: 27184)",
    "Root Cause (first observed failure):",
    "  rank      : 0 (local_rank: 0)",
    "  exitcode  : 1 (pid: 27182)",
    NULL};
/* node2: worker 1 (rank 3) exits 3, worker 0 loses it; torchrun's "first
 * observed failure" is worker 0, the victim (torch 1.13, captured) */
static const char *const culprit_node[] = {
    "[default1]:rank 3: failing on purpose",
    "![default0]:RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer "
    "[10.97.44.12]:29323",
    "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 "
    "(pid: 27183) of binary: /usr/bin/python3",
    "Failures:",
    "  rank      : 3 (local_rank: 1)",
    "  exitcode  : 3 (pid: 27185)",
    "Root Cause (first observed failure):",
    "  rank      : 2 (local_rank: 0)",
    "  exitcode  : 1 (pid: 27183)",
    NULL};
/* one worker per node, the culprit's torchrun reports before it is stopped */
static const char *const single_culprit[] = {
    "[default0]:rank 3: failing on purpose",
    "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 3) local_rank: 0 "
    "(pid: 9) of binary: /usr/bin/python3",
    NULL};
static const char *const single_victim[] = {
    "![default0]:RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer "
    "[10.187.200.14]:38612",
    "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 "
    "(pid: 7) of binary: /usr/bin/python3",
    NULL};
static const char *const own_error[] = {
    "!Traceback (most recent call last):", "!ValueError: bad shape", NULL};
static const char *const reset_by_peer[] = {"!RuntimeError: Connection reset by peer", NULL};
static const char *const nothing[] = {NULL};

static void the_root_cause_is_the_node_whose_worker_failed_on_its_own(void **state)
{
	static const struct {
		const char *what;
		struct node_script nodes[4];
		size_t n;
		long want;
		int want_local, want_code;
	} cases[] = {
	    {"two nodes x2: the victim node ended first, its error came first",
	     {{victim_node, 1, 1000, 50}, {culprit_node, 1, 1100, 60}},
	     2,
	     1,
	     1,
	     3},
	    {"four nodes x1: the culprit was stopped, its torchrun had reported",
	     {{single_victim, 1, 900, 10},
	      {single_victim, 1, 901, 11},
	      {single_victim, 1, 902, 12},
	      {single_culprit, 0, 1500, 20}},
	     4,
	     3,
	     0,
	     3},
	    {"--launcher none: the own error beats the earlier lost peer",
	     {{reset_by_peer, 1, 100, 5}, {own_error, 1, 200, 6}},
	     2,
	     1,
	     -1,
	     0},
	    {"every node lost a peer: the earliest error of them",
	     {{reset_by_peer, 1, 300, 5}, {reset_by_peer, 1, 200, 6}},
	     2,
	     1,
	     -1,
	     0},
	    {"no error lines: the first to end",
	     {{nothing, 1, 0, 80}, {nothing, 1, 0, 70}, {nothing, 0, 0, 10}},
	     3,
	     1,
	     -1,
	     0},
	    {"nobody failed", {{nothing, 0, 0, 5}, {nothing, 0, 0, 6}}, 2, -1, -1, 0},
	};
	struct run_cause_node nodes[4];
	int code;

	for (size_t i = 0; i < CD_ARRAY_LEN(cases); i++) {
		for (size_t k = 0; k < cases[i].n; k++)
			play(&nodes[k], &cases[i].nodes[k]);
		print_message("%s\n", cases[i].what);
		assert_int_equal(run_cause_pick(nodes, cases[i].n), cases[i].want);
		if (cases[i].want < 0)
			continue;
		code = 0;
		assert_int_equal(run_cause_worker(&nodes[cases[i].want], &code),
		                 cases[i].want_local);
		assert_int_equal(code, cases[i].want_code);
	}
}

static void a_victim_is_a_node_whose_failed_workers_all_lost_a_peer(void **state)
{
	struct run_cause_node n;
	const struct node_script victim = {victim_node, 1, 1, 1}, culprit = {culprit_node, 1, 1, 1};

	play(&n, &victim);
	assert_true(run_cause_is_victim(&n));
	play(&n, &culprit);
	assert_false(run_cause_is_victim(&n));
}

static void exit_status_is_the_failed_workers_own_code(void **state)
{
	struct run_node nodes[2] = {{.host = "node1", .exit_code = 1, .ended = 1},
	                            {.host = "node2",
	                             .exit_code = 0,
	                             .signal = 15,
	                             .ended = 1,
	                             .worker_failed = 1,
	                             .worker_rank = 3,
	                             .worker_exit = 3}};
	struct run_report rep = {.nodes = nodes, .nnodes = 2, .failed = 1, .root_cause = 1};

	assert_int_equal(run_exit_status(&rep), 3);
	nodes[1].worker_exit = -9;
	assert_int_equal(run_exit_status(&rep), 137);
	nodes[1].worker_failed = 0;
	assert_int_equal(run_exit_status(&rep), 143);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(strip_takes_off_torchruns_worker_prefix),
	    cmocka_unit_test(torchruns_failed_worker_line_gives_its_local_rank_and_code),
	    cmocka_unit_test(the_failure_tables_entries_give_rank_and_code),
	    cmocka_unit_test(the_root_cause_is_the_node_whose_worker_failed_on_its_own),
	    cmocka_unit_test(a_victim_is_a_node_whose_failed_workers_all_lost_a_peer),
	    cmocka_unit_test(exit_status_is_the_failed_workers_own_code),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
