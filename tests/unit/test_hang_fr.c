/* SPDX-License-Identifier: MIT */
/*
 * test_hang_fr.c - the Flight Recorder reader (hang/hang_fr.h): the
 * pickle reader on dumps of the structure torch writes (made by
 * tests/fixtures/hang/make_fr_dumps.py, README.md there cites the torch
 * sources) and on hand-made opcodes, the analysis across ranks, and the
 * pipe trigger against a stand-in rank (tests/fixtures/hang/fr_standin.py).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cd.h"
#include "hang/hang_analyze.h"
#include "hang/hang_fr.h"
#include "report/hang_render.h"
#include "scan.h"

#define FIX "tests/fixtures/hang/"

static json_t *parse_file(const char *name, int rank, char *err)
{
	char *buf = NULL, path[256];
	size_t len = 0;
	json_t *j;

	snprintf(path, sizeof(path), FIX "%s", name);
	assert_int_equal(
	    scan_read_file(path, 1 << 20, SCAN_FILE_REGULAR, &buf, &len, err, CD_ERRLEN), 0);
	j = hang_fr_parse((const unsigned char *)buf, len, err, CD_ERRLEN);
	free(buf);
	if (j)
		json_object_set_new(j, "rank", json_integer(rank));
	return j;
}

static const char *str(const json_t *o, const char *k)
{
	const char *v = json_string_value(json_object_get(o, k));

	return v ? v : "(none)";
}

static json_int_t num(const json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

/* ================================================================ one dump */

static void a_dump_gives_each_collective_with_its_sequence_op_and_state(void **state)
{
	char err[CD_ERRLEN] = "";
	json_t *d = parse_file("fr_rank_0.pkl", 0, err);
	const json_t *e;

	if (!d)
		fail_msg("%s", err);
	assert_string_equal(str(d, "version"), "2.10");
	assert_int_equal(json_array_size(json_object_get(d, "entries")), 6);
	e = json_array_get(json_object_get(d, "entries"), 5);
	assert_int_equal(num(e, "seq"), 6650);
	assert_string_equal(str(e, "op"), "allreduce");
	assert_string_equal(str(e, "state"), "started");
	assert_string_equal(str(e, "pg"), "0");
	assert_string_equal(str(e, "pg_desc"), "default_pg");
	assert_int_equal(
	    json_integer_value(json_array_get(json_array_get(json_object_get(e, "sizes"), 0), 0)),
	    1048576);
	assert_int_equal(
	    num(json_object_get(json_object_get(d, "pg_status"), "0"), "last_completed_collective"),
	    6649);
	json_decref(d);
}

static void a_truncated_dump_is_refused_as_truncated(void **state)
{
	char err[CD_ERRLEN] = "";

	assert_null(parse_file("fr_truncated.pkl", 0, err));
	assert_non_null(strstr(err, "truncated"));
	assert_non_null(strstr(err, "pickle byte "));
}

static void a_json_dump_reads_like_the_pickle(void **state)
{
	static const char dump[] =
	    "{\"version\":\"2.10\",\"entries\":[{\"record_id\":3,\"pg_id\":0,"
	    "\"process_group\":[\"0\",\"default_pg\"],\"collective_seq_id\":12,"
	    "\"profiling_name\":\"nccl:reduce_scatter\",\"state\":\"scheduled\","
	    "\"input_sizes\":[[8]],\"is_p2p\":false}]}";
	char err[CD_ERRLEN] = "";
	json_t *d = hang_fr_parse((const unsigned char *)dump, sizeof(dump) - 1, err, sizeof(err));
	const json_t *e;

	if (!d)
		fail_msg("%s", err);
	e = json_array_get(json_object_get(d, "entries"), 0);
	assert_string_equal(str(e, "op"), "reducescatter");
	assert_int_equal(num(e, "seq"), 12);
	json_decref(d);
	assert_null(hang_fr_parse((const unsigned char *)dump, 40, err, sizeof(err)));
	assert_non_null(strstr(err, "truncated"));
}

/* Frames of odd shapes: a frames value that is no list is left out, a frame
 * that is no dict or lacks its fields reads as "?", and a stack is cut at
 * HANG_FR_MAX_FRAMES. */
static void odd_frames_are_read_as_far_as_they_go_and_capped(void **state)
{
	char dump[4096], err[CD_ERRLEN] = "";
	size_t n;
	json_t *d;
	const json_t *e, *f;

	n = (size_t)snprintf(dump, sizeof(dump),
	                     "{\"version\":\"2.10\",\"entries\":["
	                     "{\"collective_seq_id\":1,\"profiling_name\":\"nccl:all_reduce\","
	                     "\"state\":\"completed\",\"frames\":\"x\"},"
	                     "{\"collective_seq_id\":2,\"profiling_name\":\"nccl:all_reduce\","
	                     "\"state\":\"completed\",\"frames\":[1,{\"name\":5}]},"
	                     "{\"collective_seq_id\":3,\"profiling_name\":\"nccl:all_reduce\","
	                     "\"state\":\"started\",\"frames\":[");
	for (int i = 0; i < 40; i++)
		n += (size_t)snprintf(dump + n, sizeof(dump) - n,
		                      "%s{\"name\":\"f%d\",\"filename\":\"a.py\",\"line\":%d}",
		                      i ? "," : "", i, i);
	n += (size_t)snprintf(dump + n, sizeof(dump) - n, "]}]}");
	assert_true(n < sizeof(dump));
	d = hang_fr_parse((const unsigned char *)dump, n, err, sizeof(err));
	if (!d)
		fail_msg("%s", err);
	e = json_array_get(json_object_get(d, "entries"), 0);
	assert_null(json_object_get(e, "frames"));
	e = json_array_get(json_object_get(d, "entries"), 1);
	f = json_array_get(json_object_get(e, "frames"), 1);
	assert_int_equal(json_array_size(json_object_get(e, "frames")), 2);
	assert_string_equal(str(f, "name"), "?");
	assert_string_equal(str(f, "filename"), "?");
	e = json_array_get(json_object_get(d, "entries"), 2);
	assert_int_equal(json_array_size(json_object_get(e, "frames")), HANG_FR_MAX_FRAMES);
	assert_string_equal(str(json_array_get(json_object_get(e, "frames"), 15), "name"), "f15");
	json_decref(d);
}

/* ================================================================ opcodes */

static json_t *load(const char *bytes, size_t n, char *err)
{
	return hang_fr_pickle_load((const unsigned char *)bytes, n, err, CD_ERRLEN);
}

static void torch_specialised_lists_ints_and_floats_are_read(void **state)
{
	/* {"a": build_intlist([1, -2]), "f": 1.5} as torch's Pickler writes it */
	static const char p[] = "\x80\x02}(X\x01\x00\x00\x00"
	                        "a"
	                        "ctorch.jit._pickle\nbuild_intlist\n"
	                        "](K\x01\x8a\x01\xfe"
	                        "e\x85R"
	                        "X\x01\x00\x00\x00"
	                        "fG?\xf8\x00\x00\x00\x00\x00\x00"
	                        "u.";
	char err[CD_ERRLEN] = "";
	json_t *v = load(p, sizeof(p) - 1, err);

	if (!v)
		fail_msg("%s", err);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(v, "a"), 0)), 1);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(v, "a"), 1)), -2);
	assert_true(json_real_value(json_object_get(v, "f")) == 1.5);
	json_decref(v);
}

static void a_global_other_than_torchs_list_builders_is_refused(void **state)
{
	static const char p[] = "\x80\x02"
	                        "cos\nsystem\n"
	                        "X\x02\x00\x00\x00id\x85R.";
	char err[CD_ERRLEN] = "";

	assert_null(load(p, sizeof(p) - 1, err));
	assert_non_null(strstr(err, "GLOBAL other than torch's list builders"));
}

static void a_list_put_inside_itself_is_refused(void **state)
{
	/* L = [] (memo 0); M = [] ; M.append(L from the memo); L.append(M) */
	static const char p[] = "\x80\x02]q\x00]h\x00"
	                        "aa.";
	char err[CD_ERRLEN] = "";

	assert_null(load(p, sizeof(p) - 1, err));
	assert_non_null(strstr(err, "before it was complete"));
}

static void opcodes_outside_plain_data_are_refused(void **state)
{
	static const char bytes_op[] = "\x80\x02"
	                               "C\x01x.";
	static const char no_stop[] = "\x80\x02K\x01";
	char err[CD_ERRLEN] = "";

	assert_null(load(bytes_op, sizeof(bytes_op) - 1, err));
	assert_non_null(strstr(err, "opcode 0x43"));
	assert_null(load(no_stop, sizeof(no_stop) - 1, err));
	assert_non_null(strstr(err, "ends before its STOP"));
	assert_null(hang_fr_parse((const unsigned char *)"\x80\x02K\x01.", 5, err, CD_ERRLEN));
	assert_non_null(strstr(err, "not a Flight Recorder dump"));
}

/* A full ring (2000 collectives: memo indexes past 255, LONG_BINPUT and
 * LONG_BINGET) in protocol 2, as torch writes it, and in protocol 4
 * (FRAME, MEMOIZE, SHORT_BINUNICODE), as a Python-side re-pickle would. */
static void a_full_ring_reads_in_protocol_2_and_4(void **state);

/* ================================================================ analysis */

static void the_rank_that_never_entered_the_last_collective_is_named(void **state)
{
	char err[CD_ERRLEN] = "";
	json_t *d[4], *a;
	const json_t *pg;

	for (int r = 0; r < 4; r++) {
		char name[32];
		snprintf(name, sizeof(name), "fr_rank_%d.pkl", r);
		d[r] = parse_file(name, r, err);
		assert_non_null(d[r]);
	}
	a = hang_fr_analyze(d, 4);
	assert_int_equal(json_array_size(json_object_get(a, "process_groups")), 1);
	pg = json_array_get(json_object_get(a, "process_groups"), 0);
	assert_int_equal(num(pg, "max_seq"), 6650);
	assert_int_equal(json_array_size(json_object_get(pg, "missing")), 1);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(pg, "missing"), 0)), 2);
	/* rank 1's send is point-to-point, not a collective */
	assert_int_equal(num(json_object_get(json_object_get(pg, "last"), "1"), "seq"), 6650);
	assert_string_equal(json_string_value(json_array_get(json_object_get(a, "messages"), 0)),
	                    "pg 0: not all ranks joined collective 6650 (allreduce): missing ranks "
	                    "{2}");
	json_decref(a);
	for (int r = 0; r < 4; r++)
		json_decref(d[r]);
}

static void ranks_all_in_an_unfinished_collective_are_named_not_completed(void **state)
{
	char err[CD_ERRLEN] = "";
	json_t *d[3] = {parse_file("fr_rank_0.pkl", 0, err), NULL,
	                parse_file("fr_rank_3.pkl", 3, err)};
	json_t *a = hang_fr_analyze(d, 3);

	assert_string_equal(
	    json_string_value(json_array_get(json_object_get(a, "messages"), 0)),
	    "pg 0: every rank entered collective 6650 (allreduce); not completed on "
	    "ranks {0, 3}");
	json_decref(a);
	json_decref(d[0]);
	json_decref(d[2]);
}

/* ================================================================ the trigger */

static char dir[64];

static int dir_make(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/cd-test-fr.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int dir_remove(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void the_pipe_makes_the_rank_dump_and_the_dump_reads(void **state)
{
	char pp[128], tp[128], dump[160], msg[CD_ERRLEN] = "", line[16] = "";
	int p[2];
	pid_t pid;
	char *buf = NULL;
	size_t len = 0;
	json_t *d;

	snprintf(pp, sizeof(pp), "%s/nccl_trace_pipe_", dir);
	snprintf(tp, sizeof(tp), "%s/nccl_trace_rank_", dir);
	assert_int_equal(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		execlp("python3", "python3", FIX "fr_standin.py", pp, tp, "2", FIX "fr_rank_2.pkl",
		       (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	for (size_t k = 0; k < sizeof(line) - 1 && read(p[0], line + k, 1) == 1; k++)
		if (line[k] == '\n')
			break;
	close(p[0]);
	assert_int_equal(hang_fr_trigger(pp, tp, 2, 3000, msg, sizeof(msg)), 0);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	snprintf(dump, sizeof(dump), "%s2", tp);
	assert_int_equal(
	    scan_read_file(dump, 1 << 20, SCAN_FILE_REGULAR, &buf, &len, msg, sizeof(msg)), 0);
	d = hang_fr_parse((const unsigned char *)buf, len, msg, sizeof(msg));
	free(buf);
	assert_non_null(d);
	assert_int_equal(json_array_size(json_object_get(d, "entries")), 5);
	json_decref(d);
}

static void no_pipe_says_the_recorder_is_not_enabled(void **state)
{
	char pp[128], msg[CD_ERRLEN] = "";

	snprintf(pp, sizeof(pp), "%s/none_", dir);
	assert_int_equal(hang_fr_trigger(pp, pp, 0, 500, msg, sizeof(msg)), CD_ERR_NOTFOUND);
	assert_non_null(strstr(msg, "TORCH_NCCL_DEBUG_INFO_PIPE_FILE"));
}

static void a_pipe_nobody_reads_or_a_plain_file_is_not_written(void **state)
{
	char pp[128], path[160], msg[CD_ERRLEN] = "";
	int fd;

	snprintf(pp, sizeof(pp), "%s/orphan_", dir);
	snprintf(path, sizeof(path), "%s0.pipe", pp);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(hang_fr_trigger(pp, pp, 0, 500, msg, sizeof(msg)), CD_ERR_UNSUPPORTED);
	assert_non_null(strstr(msg, "no process reads it"));

	snprintf(path, sizeof(path), "%s1.pipe", pp);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	close(fd);
	assert_int_equal(hang_fr_trigger(pp, pp, 1, 500, msg, sizeof(msg)), CD_ERR_UNSUPPORTED);
	assert_non_null(strstr(msg, "not a FIFO"));
}

static void a_rank_that_reads_but_never_dumps_times_out_at_the_deadline(void **state)
{
	char pp[128], path[160], msg[CD_ERRLEN] = "";
	int fd;
	int64_t t0;

	snprintf(pp, sizeof(pp), "%s/mute_", dir);
	snprintf(path, sizeof(path), "%s0.pipe", pp);
	assert_int_equal(mkfifo(path, 0600), 0);
	fd = open(path, O_RDONLY | O_NONBLOCK);
	t0 = cd_now_ms();
	assert_int_equal(hang_fr_trigger(pp, pp, 0, 300, msg, sizeof(msg)), CD_ERR_TIMEOUT);
	assert_true(cd_now_ms() - t0 < 800);
	assert_non_null(strstr(msg, "did not appear within 300 ms"));
	close(fd);
}

static void a_full_ring_reads_in_protocol_2_and_4(void **state)
{
	static const char *const proto[] = {"2", "4"};

	for (size_t i = 0; i < 2; i++) {
		char cmd[512], path[128], err[CD_ERRLEN] = "";
		char *buf = NULL;
		size_t len = 0;
		json_t *d;
		const json_t *last;

		snprintf(cmd, sizeof(cmd), "python3 " FIX "make_fr_dumps.py '%s' 1999 %s", dir,
		         proto[i]);
		assert_int_equal(system(cmd), 0);
		snprintf(path, sizeof(path), "%s/fr_big.pkl", dir);
		assert_int_equal(
		    scan_read_file(path, 8 << 20, SCAN_FILE_REGULAR, &buf, &len, err, sizeof(err)),
		    0);
		d = hang_fr_parse((const unsigned char *)buf, len, err, sizeof(err));
		free(buf);
		if (!d)
			fail_msg("protocol %s: %s", proto[i], err);
		assert_int_equal(json_array_size(json_object_get(d, "entries")), 2000);
		last = json_array_get(json_object_get(d, "entries"), 1999);
		assert_int_equal(num(last, "seq"), 6650);
		assert_string_equal(str(last, "state"), "started");
		assert_string_equal(str(last, "pg_desc"), "default_pg");
		json_decref(d);
	}
}

static void the_last_collective_of_each_rank_keeps_its_stack_frames(void **state)
{
	char err[CD_ERRLEN] = "";
	json_t *d = parse_file("fr_rank_2.pkl", 2, err), *a;
	const json_t *frames;

	assert_non_null(d);
	a = hang_fr_analyze(&d, 1);
	frames = json_object_get(
	    json_object_get(
	        json_object_get(json_array_get(json_object_get(a, "process_groups"), 0), "last"),
	        "2"),
	    "frames");
	assert_int_equal(json_array_size(frames), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(frames, 1), "name")),
	                    "train_step");
	assert_string_equal(
	    json_string_value(json_object_get(json_array_get(frames, 1), "filename")),
	    "/srv/train.py");
	assert_int_equal(num(json_array_get(frames, 1), "line"), 42);
	json_decref(a);
	json_decref(d);
}

/* A rank of the job as the agent reports it, waiting in futex. */
static json_t *rank_proc(long rank, long pid, long cpu_ms)
{
	char r[16];

	snprintf(r, sizeof(r), "%ld", rank);
	return json_pack("{sIsssIs{ssss}sIs{ssss}s[]snssss}", "pid", (json_int_t)pid, "role",
	                 "rank", "rank", (json_int_t)rank, "env", "RANK", r, "WORLD_SIZE", "4",
	                 "cpu_ms", (json_int_t)cpu_ms, "main", "class", "wait", "syscall", "futex",
	                 "sockets", "stacks", "stacks_how", "none", "state", "S");
}

/* Two samples of n1 (ranks 0, 1) and n2 (ranks 2, 3), pids 300 + rank, the
 * last with the four fixture dumps as the agents send them. */
static json_t *fr_samples(void)
{
	char err[CD_ERRLEN] = "";
	json_t *dumps[2] = {json_array(), json_array()}, *s = json_array();

	for (int r = 0; r < 4; r++) {
		char name[32];
		json_t *d;

		snprintf(name, sizeof(name), "fr_rank_%d.pkl", r);
		d = parse_file(name, r, err);
		assert_non_null(d);
		json_object_set_new(d, "pid", json_integer(300 + r));
		json_object_set_new(d, "ok", json_true());
		json_array_append_new(dumps[r / 2], d);
	}
	for (int k = 0; k < 2; k++) {
		json_t *n1 = json_pack("{sss{s[oo]s[]}}", "host", "n1", "result", "processes",
		                       rank_proc(0, 300, 10), rank_proc(1, 301, 10), "denied");
		json_t *n2 = json_pack("{sss{s[oo]s[]}}", "host", "n2", "result", "processes",
		                       rank_proc(2, 302, 10), rank_proc(3, 303, 10), "denied");

		if (k) {
			json_object_set_new(json_object_get(n1, "result"), "flight_recorder",
			                    json_pack("{so}", "dumps", dumps[0]));
			json_object_set_new(json_object_get(n2, "result"), "flight_recorder",
			                    json_pack("{so}", "dumps", dumps[1]));
		}
		json_array_append_new(
		    s, json_pack("{sIs[oo]}", "t_ms", (json_int_t)k * 2000, "nodes", n1, n2));
	}
	return s;
}

static void the_flight_recorder_suspect_has_the_node_and_pid_of_its_rank(void **state)
{
	json_t *s = fr_samples(), *v = hang_analyze(s), *sus = NULL, *x;
	size_t i;

	json_array_foreach(json_object_get(v, "suspects"), i, x)
	{
		if (strncmp(json_string_value(json_object_get(x, "reason")), "Flight Recorder",
		            15) == 0)
			sus = x;
	}
	assert_non_null(sus);
	assert_string_equal(json_string_value(json_object_get(sus, "node")), "n2");
	assert_int_equal(num(sus, "rank"), 2);
	assert_int_equal(num(sus, "pid"), 302);
	assert_string_equal(json_string_value(json_object_get(sus, "reason")),
	                    "Flight Recorder: pg 0: not all ranks joined collective 6650 "
	                    "(allreduce): missing ranks {2}; rank 2 (n2, pid 302) is at "
	                    "collective 6649 (allreduce, completed)");
	assert_string_equal(
	    json_string_value(json_array_get(json_object_get(sus, "evidence"), 0)),
	    "rank 2 (n2, pid 302): its last collective is 6649 (allreduce), completed, at "
	    "train_step (/srv/train.py:42)");
	json_decref(v);
	json_decref(s);
}

static void the_text_report_shows_each_ranks_last_collective_and_the_ras_communicators(void **state)
{
	json_t *s = fr_samples(), *v = hang_analyze(s);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	json_object_set_new(v, "ras",
	                    json_pack("[{sss[{sssss[i]s[]sI}{sssss[]s[]sI}]}]", "host", "n1",
	                              "communicators", "hash", "0x5d1c", "state", "stuck", "behind",
	                              1, "missing", "max_count", (json_int_t)12, "hash", "0x77aa",
	                              "state", "progressing", "behind", "missing", "max_count",
	                              (json_int_t)40));
	hang_print_text(v, f);
	fclose(f);
	assert_non_null(strstr(text, "\nFlight Recorder, pg 0: the last collective each rank "
	                             "entered (the furthest: 6650, allreduce):\n"));
	assert_non_null(strstr(text, "  rank 2 (n2, pid 302): 6649 allreduce, completed\n"
	                             "      all_reduce (torch/distributed/distributed_c10d.py:"
	                             "2696)\n      train_step (/srv/train.py:42)\n"));
	assert_non_null(strstr(text, "  rank 0 (n1, pid 300): 6650 allreduce, started\n"));
	assert_non_null(strstr(text, "\nNCCL RAS (asked on n1):\n"
	                             "  communicator 0x5d1c: stuck, highest collective count 12; "
	                             "ranks behind: 1\n"
	                             "  communicator 0x77aa: progressing, highest collective "
	                             "count 40\n"));
	free(text);
	json_decref(v);
	json_decref(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_dump_gives_each_collective_with_its_sequence_op_and_state),
	    cmocka_unit_test(a_truncated_dump_is_refused_as_truncated),
	    cmocka_unit_test(a_json_dump_reads_like_the_pickle),
	    cmocka_unit_test(odd_frames_are_read_as_far_as_they_go_and_capped),
	    cmocka_unit_test(torch_specialised_lists_ints_and_floats_are_read),
	    cmocka_unit_test(a_global_other_than_torchs_list_builders_is_refused),
	    cmocka_unit_test(a_list_put_inside_itself_is_refused),
	    cmocka_unit_test(opcodes_outside_plain_data_are_refused),
	    cmocka_unit_test(the_rank_that_never_entered_the_last_collective_is_named),
	    cmocka_unit_test(ranks_all_in_an_unfinished_collective_are_named_not_completed),
	    cmocka_unit_test(the_last_collective_of_each_rank_keeps_its_stack_frames),
	    cmocka_unit_test(the_flight_recorder_suspect_has_the_node_and_pid_of_its_rank),
	    cmocka_unit_test(
	        the_text_report_shows_each_ranks_last_collective_and_the_ras_communicators),
	    cmocka_unit_test(a_full_ring_reads_in_protocol_2_and_4),
	    cmocka_unit_test(the_pipe_makes_the_rank_dump_and_the_dump_reads),
	    cmocka_unit_test(no_pipe_says_the_recorder_is_not_enabled),
	    cmocka_unit_test(a_pipe_nobody_reads_or_a_plain_file_is_not_written),
	    cmocka_unit_test(a_rank_that_reads_but_never_dumps_times_out_at_the_deadline),
	};
	return cmocka_run_group_tests(tests, dir_make, dir_remove);
}
