/* SPDX-License-Identifier: MIT */
/* test_hang_analyze.c - the verdict of `clusterdoc hang` on synthetic
 * samples shaped as the agents' hang_sample answers (hang/hang_agent.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "cd.h"
#include "hang/hang_analyze.h"
#include "hang/hang_rankset.h"

/* A rank process: main thread in cls/sys, cpu_ms, sockets (borrowed, copied). */
static json_t *proc(long rank, long pid, const char *cls, const char *sys, long cpu_ms,
                    json_t *sockets)
{
	char r[16];

	snprintf(r, sizeof(r), "%ld", rank);
	return json_pack("{sIsssIs{ssss}sIs{ssss}sosnssss}", "pid", (json_int_t)pid, "role", "rank",
	                 "rank", (json_int_t)rank, "env", "RANK", r, "WORLD_SIZE", "3", "cpu_ms",
	                 (json_int_t)cpu_ms, "main", "class", cls, "syscall", sys, "sockets",
	                 sockets ? sockets : json_array(), "stacks", "stacks_how", "none", "state",
	                 "S");
}

static json_t *node(const char *host, json_t *procs)
{
	return json_pack("{sss{sosss[]}}", "host", host, "result", "processes", procs, "searched",
	                 "processes of u with RANK", "denied");
}

static json_t *sample(long t, json_t *n0, json_t *n1, json_t *n2)
{
	return json_pack("{sIs[ooo]}", "t_ms", (json_int_t)t, "nodes", n0, n1, n2);
}

static json_t *sock(const char *local, const char *remote, long tx)
{
	return json_pack("{sssssssIsI}", "local", local, "remote", remote, "state", "ESTABLISHED",
	                 "tx_queue", (json_int_t)tx, "rx_queue", (json_int_t)0);
}

/* A socket as the agent reports it with the kernel's timer ("tr"), its
 * retransmission timeouts and zero-window probes (/proc/net/tcp). */
static json_t *sock_tcp(const char *local, const char *remote, long tx, long timer, long rto,
                        long probes)
{
	json_t *s = sock(local, remote, tx);

	json_object_set_new(s, "timer", json_integer(timer));
	json_object_set_new(s, "retransmits", json_integer(rto));
	json_object_set_new(s, "zero_window_probes", json_integer(probes));
	return s;
}

/* p with its GPU as the agent reports it (NVML), returned. */
static json_t *on_gpu(json_t *p, long index, long util)
{
	json_object_set_new(p, "gpu",
	                    json_pack("{sIsssIsIsI}", "index", (json_int_t)index, "uuid", "GPU-x",
	                              "util_gpu", (json_int_t)util, "util_memory", (json_int_t)1,
	                              "used_memory_bytes", (json_int_t)1 << 30));
	return p;
}

/* Three ranks on n0..n2 over two samples 2 s apart, their main threads in
 * cls/sys, CPU time growing by cpu1 - cpu0, on GPUs at util0..util2 %. */
static json_t *gpu_job(const char *cls2, const char *sys2, long cpu1, long util0, long util1,
                       long util2)
{
	json_t *s = json_array();

	for (int k = 0; k < 2; k++) {
		long cpu = k ? cpu1 : 1000;

		json_array_append_new(
		    s,
		    sample(
		        k * 2000,
		        node("n0", json_pack("[o]", on_gpu(proc(0, 100, "wait", "futex", cpu, NULL),
		                                           0, util0))),
		        node("n1", json_pack("[o]", on_gpu(proc(1, 101, "wait", "futex", cpu, NULL),
		                                           0, util1))),
		        node("n2", json_pack("[o]", on_gpu(proc(2, 102, cls2, sys2, cpu, NULL), 1,
		                                           util2)))));
	}
	return s;
}

static const char *suspect_reason(const json_t *v, size_t i)
{
	return json_string_value(
	    json_object_get(json_array_get(json_object_get(v, "suspects"), i), "reason"));
}

static void ranks_that_all_use_cpu_are_progressing(void **state)
{
	json_t *s = json_pack(
	    "[oo]",
	    sample(0, node("n0", json_pack("[o]", proc(0, 100, "wait", "futex", 1000, NULL))),
	           node("n1", json_pack("[o]", proc(1, 101, "running", "running", 1000, NULL))),
	           node("n2", json_pack("[o]", proc(2, 102, "wait", "epoll_wait", 1000, NULL)))),
	    sample(2000,
	           node("n0", json_pack("[o]", proc(0, 100, "running", "running", 2500, NULL))),
	           node("n1", json_pack("[o]", proc(1, 101, "wait", "futex", 2600, NULL))),
	           node("n2", json_pack("[o]", proc(2, 102, "wait", "futex", 2400, NULL)))));
	json_t *v = hang_analyze(s);

	assert_string_equal(json_string_value(json_object_get(v, "status")), "progressing");
	assert_int_equal(json_integer_value(json_object_get(v, "exit")), 0);
	assert_int_equal(json_array_size(json_object_get(v, "suspects")), 0);
	assert_int_equal(json_array_size(json_object_get(v, "ranks")), 3);
	json_decref(v);
	json_decref(s);
}

static void a_rank_asleep_while_the_others_wait_is_the_suspect(void **state)
{
	json_t *s = json_pack(
	    "[oo]",
	    sample(
	        0, node("n0", json_pack("[o]", proc(0, 100, "wait", "futex", 1000, NULL))),
	        node("n1", json_pack("[o]", proc(1, 101, "wait", "futex", 1000, NULL))),
	        node("n2", json_pack("[o]", proc(2, 102, "sleep", "clock_nanosleep", 900, NULL)))),
	    sample(
	        2000, node("n0", json_pack("[o]", proc(0, 100, "wait", "futex", 1001, NULL))),
	        node("n1", json_pack("[o]", proc(1, 101, "wait", "futex", 1000, NULL))),
	        node("n2", json_pack("[o]", proc(2, 102, "sleep", "clock_nanosleep", 900, NULL)))));
	json_t *v = hang_analyze(s), *sus = json_array_get(json_object_get(v, "suspects"), 0);

	assert_string_equal(json_string_value(json_object_get(v, "status")), "hung");
	assert_int_equal(json_integer_value(json_object_get(v, "exit")), 1);
	assert_int_equal(json_array_size(json_object_get(v, "suspects")), 1);
	assert_int_equal(json_integer_value(json_object_get(sus, "rank")), 2);
	assert_string_equal(json_string_value(json_object_get(sus, "node")), "n2");
	assert_int_equal(json_integer_value(json_object_get(sus, "pid")), 102);
	assert_string_equal(
	    suspect_reason(v, 0),
	    "rank 2 (n2, pid 102) has not entered the collective the others wait in: "
	    "its main thread sleeps in clock_nanosleep; 2 ranks wait (futex)");
	/* the smallest group first */
	assert_string_equal(json_string_value(json_object_get(
	                        json_array_get(json_object_get(v, "groups"), 0), "ranks_text")),
	                    "2");
	json_decref(v);
	json_decref(s);
}

static void a_rank_that_exited_is_named_gone(void **state)
{
	json_t *s = json_pack(
	    "[oo]",
	    sample(0, node("n0", json_pack("[o]", proc(0, 100, "wait", "futex", 10, NULL))),
	           node("n1", json_pack("[o]", proc(1, 101, "wait", "futex", 10, NULL))),
	           node("n2", json_pack("[o]", proc(2, 102, "wait", "futex", 10, NULL)))),
	    sample(2000, node("n0", json_pack("[o]", proc(0, 100, "wait", "futex", 10, NULL))),
	           node("n1", json_pack("[o]", proc(1, 101, "wait", "futex", 10, NULL))),
	           node("n2", json_array())));
	json_t *v = hang_analyze(s);

	assert_string_equal(json_string_value(json_object_get(v, "status")), "hung");
	assert_string_equal(
	    suspect_reason(v, 0),
	    "rank 2 (n2, pid 102) is gone: its process exited during the inspection, "
	    "and 2 ranks still wait");
	json_decref(v);
	json_decref(s);
}

static void a_rank_never_seen_is_missing(void **state)
{
	json_t *s = json_pack(
	    "[oo]",
	    sample(0, node("n0", json_pack("[o]", proc(0, 100, "wait", "futex", 10, NULL))),
	           node("n1", json_pack("[o]", proc(1, 101, "wait", "futex", 10, NULL))),
	           node("n2", json_array())),
	    sample(2000, node("n0", json_pack("[o]", proc(0, 100, "wait", "futex", 10, NULL))),
	           node("n1", json_pack("[o]", proc(1, 101, "wait", "futex", 10, NULL))),
	           node("n2", json_array())));
	json_t *v = hang_analyze(s);

	assert_string_equal(
	    suspect_reason(v, 0),
	    "rank 2 is gone: no process holds it (world size 3; killed, or on a node "
	    "not inspected), and 2 ranks still wait");
	json_decref(v);
	json_decref(s);
}

/* Three ranks waiting in futex over two samples 2 s apart; rank 0's socket to
 * rank 1 has 4096 bytes queued in both, and in the last sample the kernel's
 * timer, retransmission timeouts and zero-window probes given. */
static json_t *link_job(long timer, long rto, long probes)
{
	json_t *s = json_array();

	for (int k = 0; k < 2; k++) {
		json_t *out =
		    k ? sock_tcp("10.0.0.1:4000", "10.0.0.2:5000", 4096, timer, rto, probes)
		      : sock_tcp("10.0.0.1:4000", "10.0.0.2:5000", 4096, 1, 0, 0);

		json_array_append_new(
		    s,
		    sample(k * 2000,
		           node("n0", json_pack("[o]", proc(0, 100, "wait", "futex", 10,
		                                            json_pack("[o]", out)))),
		           node("n1",
		                json_pack("[o]", proc(1, 101, "wait", "futex", 10,
		                                      json_pack("[o]", sock("10.0.0.2:5000",
		                                                            "10.0.0.1:4000", 0))))),
		           node("n2", json_pack("[o]", proc(2, 102, "wait", "futex", 10, NULL)))));
	}
	return s;
}

/* The link suspects of a verdict, their reasons joined by "|". */
static void link_reasons(const json_t *v, char *out, size_t len)
{
	size_t i;
	json_t *sus;

	out[0] = 0;
	json_array_foreach(json_object_get(v, "suspects"), i, sus)
	{
		const char *r = json_string_value(json_object_get(sus, "reason"));

		if (r && !strncmp(r, "link ", 5))
			snprintf(out + strlen(out), len - strlen(out), "%s%s", out[0] ? "|" : "",
			         r);
	}
}

static void a_send_queue_that_does_not_drain_names_the_link_and_both_ranks(void **state)
{
	json_t *s = link_job(1, 3, 0);
	json_t *v = hang_analyze(s), *c;

	assert_string_equal(suspect_reason(v, 0),
	                    "link n0 → n1 (10.0.0.2:5000): 4096 bytes queued, not drained for 2 s "
	                    "(rank 0 sends to rank 1), 3 retransmission timeout(s) unanswered");
	c = json_array_get(
	    json_object_get(json_array_get(json_object_get(v, "ranks"), 0), "connections"), 0);
	assert_int_equal(json_integer_value(json_object_get(c, "peer_rank")), 1);
	assert_string_equal(json_string_value(json_object_get(c, "peer_node")), "n1");
	json_decref(v);
	json_decref(s);
}

/* The link suspects of link_job(timer, rto, probes), joined, are want. */
static void expect_links(long timer, long rto, long probes, const char *want)
{
	json_t *s = link_job(timer, rto, probes);
	json_t *v = hang_analyze(s);
	char got[512];

	link_reasons(v, got, sizeof(got));
	assert_string_equal(got, want);
	json_decref(v);
	json_decref(s);
}

static void a_queue_the_peer_takes_nothing_of_names_its_zero_window(void **state)
{
	expect_links(4, 0, 2,
	             "link n0 → n1 (10.0.0.2:5000): 4096 bytes queued, not drained for 2 s (rank 0 "
	             "sends to rank 1), the peer's receive window is zero (2 probe(s))");
}

/* A queue as large in both samples on a busy link, whose peer acknowledges as
 * it goes (the retransmit timer armed, no timeout, no zero window): not a
 * stuck link. Seen under load in a healthy job streaming allreduces. */
static void a_busy_link_whose_peer_acknowledges_is_not_named(void **state)
{
	expect_links(1, 0, 0, "");
}

static void no_rank_anywhere_is_not_inspected_saying_what_was_searched(void **state)
{
	json_t *s = json_pack("[o]", sample(0, node("n0", json_array()), node("n1", json_array()),
	                                    node("n2", json_array())));
	json_t *v = hang_analyze(s);

	assert_string_equal(json_string_value(json_object_get(v, "status")), "not_inspected");
	assert_int_equal(json_integer_value(json_object_get(v, "exit")), 2);
	assert_string_equal(json_string_value(json_object_get(v, "summary")),
	                    "no job found: searched processes of u with RANK on 3 node(s)");
	json_decref(v);
	json_decref(s);
}

static void rank_lists_fold_into_ranges(void **state)
{
	json_t *r = json_pack("[iiiiii]", 0, 1, 2, 3, 5, 7);
	char text[64];

	hang_ranks_text(r, text, sizeof(text));
	assert_string_equal(text, "0-3,5,7");
	json_decref(r);
}

static void an_idle_gpu_while_the_others_are_busy_names_its_rank_though_cpus_advance(void **state)
{
	json_t *s = gpu_job("running", "running", 2000, 100, 97, 0);
	json_t *v = hang_analyze(s), *sus = json_array_get(json_object_get(v, "suspects"), 0);
	json_t *g = json_object_get(json_array_get(json_object_get(v, "ranks"), 2), "gpu");

	assert_string_equal(json_string_value(json_object_get(v, "status")), "hung");
	assert_int_equal(json_integer_value(json_object_get(v, "exit")), 1);
	assert_int_equal(json_array_size(json_object_get(v, "suspects")), 1);
	assert_int_equal(json_integer_value(json_object_get(sus, "rank")), 2);
	assert_int_equal(json_integer_value(json_object_get(sus, "pid")), 102);
	assert_string_equal(json_string_value(json_object_get(sus, "node")), "n2");
	assert_string_equal(suspect_reason(v, 0),
	                    "rank 2 (n2, pid 102) has its GPU 1 idle (0 %, 0 %) while 2 rank(s)' "
	                    "GPUs are busy as NCCL's kernels are while they wait for a peer: it is "
	                    "not in their collective; its main thread runs on a CPU");
	assert_int_equal(json_integer_value(json_object_get(g, "index")), 1);
	assert_int_equal(json_array_size(json_object_get(g, "util")), 2);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(g, "util"), 1)), 0);
	json_decref(v);
	json_decref(s);
}

static void the_only_busy_gpu_names_its_rank_not_no_one_stands_out(void **state)
{
	json_t *s = gpu_job("wait", "futex", 1000, 0, 0, 100);
	json_t *v = hang_analyze(s), *sus = json_array_get(json_object_get(v, "suspects"), 0);

	assert_int_equal(json_integer_value(json_object_get(v, "exit")), 1);
	assert_int_equal(json_array_size(json_object_get(v, "suspects")), 1);
	assert_int_equal(json_integer_value(json_object_get(sus, "rank")), 2);
	assert_string_equal(json_string_value(json_object_get(sus, "node")), "n2");
	assert_string_equal(suspect_reason(v, 0),
	                    "rank 2 (n2, pid 102) is the only rank whose GPU is busy (GPU 1 at "
	                    "100 %, 100 %) while the others' GPUs are idle: a kernel there does "
	                    "not end (a collective the others did not enter, or a loop in its own "
	                    "kernel)");
	json_decref(v);
	json_decref(s);
}

static void a_sleeping_rank_gets_its_idle_gpu_as_evidence(void **state)
{
	json_t *s = gpu_job("sleep", "clock_nanosleep", 1000, 100, 100, 0);
	json_t *v = hang_analyze(s), *sus = json_array_get(json_object_get(v, "suspects"), 0);
	json_t *ev = json_object_get(sus, "evidence");

	assert_int_equal(json_array_size(json_object_get(v, "suspects")), 1);
	assert_int_equal(json_integer_value(json_object_get(sus, "rank")), 2);
	assert_non_null(strstr(suspect_reason(v, 0), "sleeps in clock_nanosleep"));
	assert_string_equal(json_string_value(json_array_get(ev, json_array_size(ev) - 1)),
	                    "GPU 1 at 0 %, 0 % while the GPUs of ranks 0-1 are busy");
	json_decref(v);
	json_decref(s);
}

static void busy_gpus_on_every_rank_are_progressing(void **state)
{
	json_t *s = gpu_job("wait", "futex", 2000, 100, 95, 99);
	json_t *v = hang_analyze(s);
	json_t *g = json_object_get(json_array_get(json_object_get(v, "ranks"), 0), "gpu");

	assert_int_equal(json_integer_value(json_object_get(v, "exit")), 0);
	assert_int_equal(json_array_size(json_object_get(v, "suspects")), 0);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(g, "util"), 0)), 100);
	json_decref(v);
	json_decref(s);
}

static void ranks_without_nvml_have_a_null_gpu(void **state)
{
	json_t *s = json_pack(
	    "[oo]",
	    sample(0, node("n0", json_pack("[o]", proc(0, 100, "wait", "futex", 10, NULL))),
	           node("n1", json_pack("[o]", proc(1, 101, "wait", "futex", 10, NULL))),
	           node("n2", json_pack("[o]", proc(2, 102, "wait", "futex", 10, NULL)))),
	    sample(2000, node("n0", json_pack("[o]", proc(0, 100, "wait", "futex", 10, NULL))),
	           node("n1", json_pack("[o]", proc(1, 101, "wait", "futex", 10, NULL))),
	           node("n2", json_pack("[o]", proc(2, 102, "wait", "futex", 10, NULL)))));
	json_t *v = hang_analyze(s);

	assert_true(
	    json_is_null(json_object_get(json_array_get(json_object_get(v, "ranks"), 0), "gpu")));
	json_decref(v);
	json_decref(s);
}

/* A rank whose process's CPU time grows (torch's own threads) while its main
 * thread's stays put sleeps: it does not advance, and it is the suspect. */
static void only_the_main_threads_cpu_time_makes_a_rank_advance(void **state)
{
	json_t *s = json_array(), *v;

	for (int k = 0; k < 2; k++) {
		json_t *p2 = proc(2, 102, "sleep", "clock_nanosleep", k ? 3000 : 1000, NULL);

		json_object_set_new(json_object_get(p2, "main"), "cpu_ms", json_integer(500));
		json_array_append_new(
		    s,
		    sample(k * 2000,
		           node("n0", json_pack("[o]", proc(0, 100, "wait", "futex", 1000, NULL))),
		           node("n1", json_pack("[o]", proc(1, 101, "wait", "futex", 1000, NULL))),
		           node("n2", json_pack("[o]", p2))));
	}
	v = hang_analyze(s);
	assert_string_equal(json_string_value(json_object_get(v, "status")), "hung");
	assert_false(json_is_true(
	    json_object_get(json_array_get(json_object_get(v, "ranks"), 2), "advancing")));
	assert_int_equal(json_integer_value(json_object_get(
	                     json_array_get(json_object_get(v, "ranks"), 2), "cpu_ms_delta")),
	                 0);
	assert_int_equal(json_integer_value(json_object_get(
	                     json_array_get(json_object_get(v, "suspects"), 0), "rank")),
	                 2);
	json_decref(v);
	json_decref(s);
}

/* A rank whose main thread is idle (blocked in a CUDA synchronisation, say)
 * advances when NCCL RAS counts more collectives for it in the world's
 * communicator; one whose count stands still does not. */
static void a_collective_count_that_moves_makes_a_rank_advance(void **state)
{
	json_t *s = json_array(), *v;

	for (int k = 0; k < 2; k++) {
		json_t *n0 =
		    node("n0", json_pack("[o]", proc(0, 100, "wait", "futex", 1000, NULL)));

		json_object_set_new(json_object_get(n0, "result"), "ras",
		                    json_pack("{sbs[{sssIs{sIsIsI}}]}", "ok", 1, "communicators",
		                              "hash", "0x1", "ranks", (json_int_t)3, "collectives",
		                              "0", (json_int_t)(10 + k * 5), "1",
		                              (json_int_t)(10 + k * 5), "2", (json_int_t)10));
		json_array_append_new(
		    s,
		    sample(
		        k * 2000, n0,
		        node("n1", json_pack("[o]", proc(1, 101, "wait", "futex", 1000, NULL))),
		        node("n2", json_pack("[o]", proc(2, 102, "wait", "futex", 1000, NULL)))));
	}
	v = hang_analyze(s);
	assert_true(json_is_true(
	    json_object_get(json_array_get(json_object_get(v, "ranks"), 0), "advancing")));
	assert_true(json_is_true(
	    json_object_get(json_array_get(json_object_get(v, "ranks"), 1), "advancing")));
	assert_false(json_is_true(
	    json_object_get(json_array_get(json_object_get(v, "ranks"), 2), "advancing")));
	assert_string_equal(json_string_value(json_object_get(v, "status")), "hung");
	json_decref(v);
	json_decref(s);
}

/* A launcher process as the agent reports it (role launcher, rank -1). */
static json_t *launcher(long pid, const char *addr, const char *port, json_t *sockets)
{
	return json_pack("{sIsssssIs{ssss}sIs{ssss}sossss}", "pid", (json_int_t)pid, "role",
	                 "launcher", "launcher", "torchrun", "rank", (json_int_t)-1, "env",
	                 "MASTER_ADDR", addr, "MASTER_PORT", port, "cpu_ms", (json_int_t)10, "main",
	                 "class", "wait", "syscall", "connect", "sockets",
	                 sockets ? sockets : json_array(), "stacks_how", "none", "state", "S");
}

/* torchrun on every node and no rank yet: the rendezvous wait, exit 3,
 * naming the nodes and the master's address. */
static void launchers_without_ranks_wait_in_the_rendezvous(void **state)
{
	json_t *s = json_array(), *v, *syn;

	for (int k = 0; k < 2; k++) {
		syn = sock("10.0.0.12:40112", "10.0.0.11:29500", 0);
		json_object_set_new(syn, "state", json_string("SYN_SENT"));
		json_array_append_new(
		    s,
		    sample(
		        k * 2000,
		        node("node1", json_pack("[o]", launcher(10, "10.0.0.11", "29500", NULL))),
		        node("node2", json_pack("[o]", launcher(11, "10.0.0.11", "29500",
		                                                json_pack("[o]", syn)))),
		        node("node3", json_pack("[o]", launcher(12, "10.0.0.11", "29500", NULL)))));
	}
	v = hang_analyze(s);
	assert_string_equal(json_string_value(json_object_get(v, "status")), "rendezvous");
	assert_int_equal(json_integer_value(json_object_get(v, "exit")), HANG_EXIT_RENDEZVOUS);
	assert_int_equal(HANG_EXIT_RENDEZVOUS, 3);
	assert_string_equal(json_string_value(json_object_get(v, "summary")),
	                    "torchrun on node[1-3] waits in the rendezvous at 10.0.0.11:29500: no "
	                    "rank has started (a connection to the rendezvous is not answered: a "
	                    "firewall or a node that cannot reach it; `clusterdoc check` names "
	                    "which)");
	json_decref(v);
	json_decref(s);
}

/* ranks 0 and 2 wait, rank 1 is SIGSTOPped in its sleep (state T): it comes
 * first, said stopped, never "sleeps"; the group and the ranks say so too */
static void a_stopped_rank_is_named_stopped_first(void **state)
{
	json_t *s = json_array();

	for (long t = 0; t <= 2000; t += 2000) {
		json_t *p1 = proc(1, 101, "sleep", "clock_nanosleep", 900, NULL);

		json_object_set_new(p1, "state", json_string("T"));
		json_array_append_new(
		    s,
		    sample(
		        t, node("n0", json_pack("[o]", proc(0, 100, "wait", "futex", 1000, NULL))),
		        node("n1", json_pack("[o]", p1)),
		        node("n2", json_pack("[o]", proc(2, 102, "wait", "futex", 1000, NULL)))));
	}
	json_t *v = hang_analyze(s), *sus = json_array_get(json_object_get(v, "suspects"), 0);

	assert_string_equal(json_string_value(json_object_get(v, "status")), "hung");
	assert_int_equal(json_array_size(json_object_get(v, "suspects")), 1);
	assert_int_equal(json_integer_value(json_object_get(sus, "rank")), 1);
	assert_int_equal(json_integer_value(json_object_get(sus, "pid")), 101);
	assert_string_equal(suspect_reason(v, 0),
	                    "rank 1 (n1, pid 101) is stopped (SIGSTOP, state T): it runs no code "
	                    "until it is continued (kill -CONT 101; a debugger, job control or a "
	                    "freezer stopped it); 2 ranks wait");
	assert_string_equal(json_string_value(json_object_get(
	                        json_array_get(json_object_get(v, "groups"), 0), "what")),
	                    "is stopped (SIGSTOP, state T)");
	json_decref(v);
	json_decref(s);
}

/* a traced stop (state t) is the debugger's, and comes before a rank gone */
static void a_traced_rank_comes_before_a_gone_one(void **state)
{
	json_t *p1 = proc(1, 101, "other", "", 900, NULL);

	json_object_set_new(p1, "state", json_string("t"));
	json_t *s = json_pack(
	    "[o]",
	    sample(0, node("n0", json_pack("[o]", proc(0, 100, "wait", "futex", 1000, NULL))),
	           node("n1", json_pack("[o]", p1)), node("n2", json_array())));
	json_t *v = hang_analyze(s);

	assert_int_equal(json_array_size(json_object_get(v, "suspects")), 2);
	assert_int_equal(json_integer_value(json_object_get(
	                     json_array_get(json_object_get(v, "suspects"), 0), "rank")),
	                 1);
	assert_non_null(
	    strstr(suspect_reason(v, 0), "is stopped by a tracer (a debugger, state t)"));
	assert_non_null(strstr(suspect_reason(v, 1), "rank 2 is gone"));
	json_decref(v);
	json_decref(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(ranks_that_all_use_cpu_are_progressing),
	    cmocka_unit_test(a_rank_asleep_while_the_others_wait_is_the_suspect),
	    cmocka_unit_test(a_rank_that_exited_is_named_gone),
	    cmocka_unit_test(a_rank_never_seen_is_missing),
	    cmocka_unit_test(a_send_queue_that_does_not_drain_names_the_link_and_both_ranks),
	    cmocka_unit_test(a_queue_the_peer_takes_nothing_of_names_its_zero_window),
	    cmocka_unit_test(a_busy_link_whose_peer_acknowledges_is_not_named),
	    cmocka_unit_test(no_rank_anywhere_is_not_inspected_saying_what_was_searched),
	    cmocka_unit_test(rank_lists_fold_into_ranges),
	    cmocka_unit_test(
	        an_idle_gpu_while_the_others_are_busy_names_its_rank_though_cpus_advance),
	    cmocka_unit_test(the_only_busy_gpu_names_its_rank_not_no_one_stands_out),
	    cmocka_unit_test(a_sleeping_rank_gets_its_idle_gpu_as_evidence),
	    cmocka_unit_test(busy_gpus_on_every_rank_are_progressing),
	    cmocka_unit_test(ranks_without_nvml_have_a_null_gpu),
	    cmocka_unit_test(only_the_main_threads_cpu_time_makes_a_rank_advance),
	    cmocka_unit_test(launchers_without_ranks_wait_in_the_rendezvous),
	    cmocka_unit_test(a_collective_count_that_moves_makes_a_rank_advance),
	    cmocka_unit_test(a_stopped_rank_is_named_stopped_first),
	    cmocka_unit_test(a_traced_rank_comes_before_a_gone_one),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
