/* SPDX-License-Identifier: MIT */
/* test_procscan.c - the /proc parsers of `clusterdoc hang` on text captured
 * from a Linux 6.x x86_64 machine (little-endian: /proc/net/tcp prints the
 * address words as they lie in memory). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "cd.h"
#include "probes/procscan.h"

#define S(lit) lit, sizeof(lit) - 1

static void a_stat_line_gives_state_ppid_and_cpu_ticks(void **state)
{
	struct procscan_stat st;
	char err[CD_ERRLEN];

	assert_int_equal(
	    procscan_stat_parse(S("15246 (cat) R 15244 15244 30252 0 -1 4194304 100 0 0 0 7 3 0 0 "
	                          "20 0 1 0 2230363 3133440 380 18446744073709551615 0 0\n"),
	                        &st, err, sizeof(err)),
	    0);
	assert_int_equal(st.pid, 15246);
	assert_string_equal(st.comm, "cat");
	assert_int_equal(st.state, 'R');
	assert_int_equal(st.ppid, 15244);
	assert_int_equal(st.utime, 7);
	assert_int_equal(st.stime, 3);
	assert_int_equal(st.num_threads, 1);
	assert_int_equal(st.starttime, 2230363);
}

static void a_comm_with_parentheses_and_spaces_ends_at_the_last_paren(void **state)
{
	struct procscan_stat st;
	char err[CD_ERRLEN];

	assert_int_equal(procscan_stat_parse(S("42 (pt_main (x) y) S 1 42 42 0 -1 0 0 0 0 0 120 30 "
	                                       "0 0 20 0 17 0 99 0 0"),
	                                     &st, err, sizeof(err)),
	                 0);
	assert_string_equal(st.comm, "pt_main (x) y");
	assert_int_equal(st.state, 'S');
	assert_int_equal(st.utime, 120);
	assert_int_equal(st.num_threads, 17);
}

static void a_stat_line_cut_short_is_refused(void **state)
{
	struct procscan_stat st;
	char err[CD_ERRLEN];

	assert_int_equal(procscan_stat_parse(S("42 (python3) S 1 42 42"), &st, err, sizeof(err)),
	                 CD_ERR_PARSE);
	assert_string_equal(err, "stat: 6 fields, 22 expected");
	assert_int_equal(procscan_stat_parse(S("42 python3 S 1"), &st, err, sizeof(err)),
	                 CD_ERR_PARSE);
}

static void a_thread_in_clock_nanosleep_sleeps(void **state)
{
	struct procscan_syscall sc;
	char err[CD_ERRLEN];
	int fd_arg;

	assert_int_equal(
	    procscan_syscall_parse(S("230 0x0 0x0 0x7ffda0450f80 0x7ffda0450fc0 0x0 0x0 "
	                             "0x7ffda0450f68 0x7fa0d5bd6503\n"),
	                           &sc, err, sizeof(err)),
	    0);
	assert_int_equal(sc.kind, PROCSCAN_SYS_CALL);
	assert_int_equal(sc.nr, 230);
#if defined(__x86_64__)
	assert_string_equal(procscan_syscall_name(sc.nr, &fd_arg), "clock_nanosleep");
	assert_int_equal(fd_arg, -1);
	assert_string_equal(procscan_syscall_class(&sc), "sleep");
#endif
}

static void a_thread_in_recvfrom_waits_on_its_fd(void **state)
{
	struct procscan_syscall sc;
	char err[CD_ERRLEN];
	int fd_arg;

	assert_int_equal(procscan_syscall_parse(S("45 0x1c 0x7f00 0x8 0x0 0x0 0x0 0x7ffd 0x7fa0\n"),
	                                        &sc, err, sizeof(err)),
	                 0);
	assert_int_equal(sc.arg[0], 0x1c);
#if defined(__x86_64__)
	assert_string_equal(procscan_syscall_name(sc.nr, &fd_arg), "recvfrom");
	assert_int_equal(fd_arg, 0);
	assert_string_equal(procscan_syscall_class(&sc), "wait");
#endif
}

static void select_with_no_fds_is_a_sleep(void **state)
{
	struct procscan_syscall sc;
	char err[CD_ERRLEN];

	assert_int_equal(procscan_syscall_parse(S("23 0x0 0x0 0x0 0x0 0x7ffd 0x0 0x7ffd 0x7fa0"),
	                                        &sc, err, sizeof(err)),
	                 0);
#if defined(__x86_64__)
	assert_string_equal(procscan_syscall_class(&sc), "sleep");
#endif
}

static void running_and_not_in_a_call_are_told_apart(void **state)
{
	struct procscan_syscall sc;
	char err[CD_ERRLEN];

	assert_int_equal(procscan_syscall_parse(S("running\n"), &sc, err, sizeof(err)), 0);
	assert_int_equal(sc.kind, PROCSCAN_SYS_RUNNING);
	assert_string_equal(procscan_syscall_class(&sc), "running");
	assert_int_equal(procscan_syscall_parse(S("-1 0x7ffd 0x7fa0\n"), &sc, err, sizeof(err)), 0);
	assert_int_equal(sc.kind, PROCSCAN_SYS_NONE);
	assert_string_equal(procscan_syscall_class(&sc), "other");
}

static void a_syscall_line_with_too_few_words_is_refused(void **state)
{
	struct procscan_syscall sc;
	char err[CD_ERRLEN];

	assert_int_equal(procscan_syscall_parse(S("202 0x1 0x2"), &sc, err, sizeof(err)),
	                 CD_ERR_PARSE);
	assert_string_equal(err, "syscall: 2 words after the number, 8 expected");
	assert_int_equal(procscan_syscall_parse(S("futex 0x1"), &sc, err, sizeof(err)),
	                 CD_ERR_PARSE);
}

static const char tcp4[] =
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout "
    "inode                                                     \n"
    "   0: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 "
    "566 1 00000000d868666e 100 0 0 10 0                       \n"
    "   1: 0E00000A:B043 0B00000A:7531 01 00400000:00000010 01:00000014 00000003  1000        0 "
    "81234 2 0000000000000000 20 4 30 10 -1                     \n";

static void tcp4_sockets_give_endpoints_state_queues_timers_and_inode(void **state)
{
	struct procscan_tcp t[4];
	size_t n;
	char err[CD_ERRLEN];

	assert_int_equal(procscan_tcp_parse(tcp4, sizeof(tcp4) - 1, 0, t, 4, &n, err, sizeof(err)),
	                 0);
	assert_int_equal(n, 2);
	assert_string_equal(t[0].local, "0.0.0.0:2024");
	assert_string_equal(procscan_tcp_state_name(t[0].state), "LISTEN");
	assert_int_equal(t[0].inode, 566);
	assert_string_equal(t[1].local, "10.0.0.14:45123");
	assert_string_equal(t[1].remote, "10.0.0.11:30001");
	assert_string_equal(procscan_tcp_state_name(t[1].state), "ESTABLISHED");
	assert_int_equal(t[1].tx_queue, 4194304);
	assert_int_equal(t[1].rx_queue, 16);
	assert_int_equal(t[1].timer, 1);
	assert_int_equal(t[1].retransmits, 3);
	assert_int_equal(t[1].probes, 0);
	assert_int_equal(t[1].inode, 81234);
	assert_int_equal(t[0].timer, 0);
	assert_int_equal(t[0].retransmits, 0);
}

/* A sender whose peer's window is zero: the persist timer ("tr" 4) and the
 * probes it sent unanswered (the "timeout" column, decimal). */
static void tcp4_zero_window_gives_the_persist_timer_and_its_probes(void **state)
{
	static const char zw[] =
	    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
	    "timeout inode\n"
	    "   0: 0E00000A:B043 0B00000A:7531 01 00010000:00000000 04:000000C8 00000000     0 "
	    "       12 4242 2 0000000000000000 20 4 30 10 -1\n";
	struct procscan_tcp t[1];
	size_t n;
	char err[CD_ERRLEN];

	assert_int_equal(procscan_tcp_parse(zw, sizeof(zw) - 1, 0, t, 1, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_int_equal(t[0].tx_queue, 65536);
	assert_int_equal(t[0].timer, 4);
	assert_int_equal(t[0].retransmits, 0);
	assert_int_equal(t[0].probes, 12);
	assert_int_equal(t[0].inode, 4242);
}

static void tcp6_v4_mapped_addresses_read_as_v4(void **state)
{
	static const char tcp6[] =
	    "  sl  local_address                         remote_address                        st "
	    "tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	    "   0: 0000000000000000FFFF00000100007F:1F90 0000000000000000FFFF00000100007F:C350 01 "
	    "00000000:00000000 00:00000000 00000000  1000        0 777 1 0000000000000000 20 4 0 "
	    "10 -1\n"
	    "   1: 00000000000000000000000001000000:0016 00000000000000000000000000000000:0000 0A "
	    "00000000:00000000 00:00000000 00000000     0        0 12 1 0000000000000000 100 0 0 "
	    "10 0\n";
	struct procscan_tcp t[2];
	size_t n;
	char err[CD_ERRLEN];

	assert_int_equal(procscan_tcp_parse(tcp6, sizeof(tcp6) - 1, 1, t, 2, &n, err, sizeof(err)),
	                 0);
	assert_int_equal(n, 2);
	assert_string_equal(t[0].local, "127.0.0.1:8080");
	assert_string_equal(t[0].remote, "127.0.0.1:50000");
	assert_string_equal(t[1].local, "[::1]:22");
}

static void more_sockets_than_the_cap_is_an_error(void **state)
{
	struct procscan_tcp t[1];
	size_t n;
	char err[CD_ERRLEN];

	assert_int_equal(procscan_tcp_parse(tcp4, sizeof(tcp4) - 1, 0, t, 1, &n, err, sizeof(err)),
	                 CD_ERR_TOOBIG);
	assert_string_equal(err, "tcp: more than 1 sockets");
}

static void a_malformed_tcp_line_is_named(void **state)
{
	static const char bad[] = "header\n   0: 0100007F:zz 00000000:0000 0A\n";
	struct procscan_tcp t[1];
	size_t n;
	char err[CD_ERRLEN];

	assert_int_equal(procscan_tcp_parse(bad, sizeof(bad) - 1, 0, t, 1, &n, err, sizeof(err)),
	                 CD_ERR_PARSE);
	assert_string_equal(err, "tcp line 2: malformed");
}

static void socket_links_give_their_inode(void **state)
{
	assert_int_equal(procscan_socket_inode(S("socket:[81234]")), 81234);
	assert_int_equal(procscan_socket_inode(S("pipe:[81234]")), 0);
	assert_int_equal(procscan_socket_inode(S("socket:[]")), 0);
	assert_int_equal(procscan_socket_inode(S("/dev/null")), 0);
}

static void a_torchrun_worker_is_a_rank(void **state)
{
	static const char env[] = "HOME=/home/u\0LOCAL_RANK=1\0RANK=3\0GROUP_RANK=1\0"
	                          "LOCAL_WORLD_SIZE=2\0WORLD_SIZE=6\0TORCHELASTIC_RUN_ID=none\0"
	                          "CLUSTERDOC_RUN=r-1\0";
	struct procscan_rank r;

	assert_int_equal(procscan_environ_rank(env, sizeof(env) - 1, &r), 1);
	assert_string_equal(r.rank, "3");
	assert_string_equal(r.world_size, "6");
	assert_string_equal(r.clusterdoc_run, "r-1");
	assert_int_equal(procscan_global_rank(&r), 3);
}

static void without_rank_the_group_rank_gives_it(void **state)
{
	static const char env[] = "LOCAL_RANK=1\0GROUP_RANK=2\0LOCAL_WORLD_SIZE=2\0";
	struct procscan_rank r;

	assert_int_equal(procscan_environ_rank(env, sizeof(env) - 1, &r), 1);
	assert_int_equal(procscan_global_rank(&r), 5);
}

static void a_launcher_has_only_torchelastic_variables(void **state)
{
	static const char env[] = "PATH=/usr/bin\0TORCHELASTIC_RUN_ID=job\0";
	static const char plain[] = "PATH=/usr/bin\0HOME=/\0RANKING=1";
	struct procscan_rank r;

	assert_int_equal(procscan_environ_rank(env, sizeof(env) - 1, &r), 2);
	assert_int_equal(procscan_global_rank(&r), -1);
	assert_int_equal(procscan_environ_rank(plain, sizeof(plain) - 1, &r), 0);
}

/* The rank rules, one environment each (NUL-separated as /proc/PID/environ):
 * what procscan_environ_rank calls it, the global rank, the world size. */
static void each_environment_gives_its_kind_rank_and_world_size(void **state)
{
	static const struct {
		const char *what;
		const char *env;
		size_t len;
		int kind;
		long rank, world;
	} cases[] = {
#define E(lit) lit, sizeof(lit) - 1
	    {"a torchrun worker", E("RANK=3\0LOCAL_RANK=1\0WORLD_SIZE=4\0"), 1, 3, 4},
	    {"torchrun's group rank",
	     E("GROUP_RANK=2\0LOCAL_WORLD_SIZE=2\0LOCAL_RANK=1\0WORLD_SIZE=6"), 1, 5, 6},
	    {"run --launcher none, node 3 of 4",
	     E("CLUSTERDOC_RUN=R\0NODE_RANK=3\0NNODES=4\0NPROC_PER_NODE=1\0WORLD_SIZE=4\0"), 1, 3,
	     4},
	    {"run --launcher none, 2 per node, LOCAL_RANK 1",
	     E("NODE_RANK=2\0NNODES=3\0NPROC_PER_NODE=2\0WORLD_SIZE=6\0LOCAL_RANK=1\0"), 1, 5, 6},
	    {"run --launcher none, 2 per node, no LOCAL_RANK",
	     E("NODE_RANK=2\0NNODES=3\0NPROC_PER_NODE=2\0WORLD_SIZE=6\0"), 1, 4, 6},
	    {"a script given NODE_RANK and NNODES only", E("NODE_RANK=1\0NNODES=2\0"), 1, 1, 2},
	    {"NODE_RANK without NNODES is no rank", E("NODE_RANK=1\0HOME=/root\0"), 0, -1, -1},
	    {"an Open MPI rank", E("OMPI_COMM_WORLD_RANK=7\0OMPI_COMM_WORLD_SIZE=8\0NODE_RANK=0\0"),
	     1, 7, 8},
	    {"RANK before everything", E("RANK=1\0OMPI_COMM_WORLD_RANK=7\0NODE_RANK=3\0NNODES=4\0"),
	     1, 1, 4},
	    {"a torchrun launcher by its variables", E("TORCHELASTIC_RUN_ID=none\0"), 2, -1, -1},
	    {"a rank number that is not one", E("NODE_RANK=x\0NNODES=2\0"), 1, -1, 2},
	    {"nothing of a job", E("HOME=/root\0PATH=/usr/bin\0"), 0, -1, -1},
#undef E
	};

	for (size_t i = 0; i < CD_ARRAY_LEN(cases); i++) {
		struct procscan_rank r;

		print_message("%s\n", cases[i].what);
		assert_int_equal(procscan_environ_rank(cases[i].env, cases[i].len, &r),
		                 cases[i].kind);
		assert_int_equal(procscan_global_rank(&r), cases[i].rank);
		assert_int_equal(procscan_world_size(&r), cases[i].world);
	}
}

/* Launchers by their command line (NUL-separated as /proc/PID/cmdline). */
static void launchers_are_told_from_ranks_by_their_command_line(void **state)
{
	static const struct {
		const char *what;
		const char *cmdline;
		size_t len;
		enum procscan_launcher want;
	} cases[] = {
#define C(lit) lit, sizeof(lit) - 1
	    {"clusterdoc run's torchrun (jobs/torchrun.c)",
	     C("/usr/bin/python3\0-c\0import re, sys\nfrom "
	       "torch.distributed.elastic.multiprocessing "
	       "import api\nfrom torch.distributed.run import main\nsys.argv[0] = 'torchrun'\n"
	       "main()\n\0--nnodes\0"
	       "4\0--node_rank\0"
	       "0\0train.py\0"),
	     PROCSCAN_TORCHRUN},
	    {"torchrun itself",
	     C("/usr/local/bin/torchrun\0--nproc_per_node\0"
	       "2\0train.py\0"),
	     PROCSCAN_TORCHRUN},
	    {"torchrun's script through python",
	     C("/usr/bin/python3\0/usr/local/bin/torchrun\0train.py\0"), PROCSCAN_TORCHRUN},
	    {"python -m torch.distributed.run",
	     C("python3\0-u\0-m\0torch.distributed.run\0--nnodes\0"
	       "2\0x.py\0"),
	     PROCSCAN_TORCHRUN},
	    {"torch.distributed.launch",
	     C("python\0-m\0torch.distributed.launch\0--use_env\0x.py\0"), PROCSCAN_TORCHRUN},
	    {"mpirun",
	     C("mpirun\0--hostfile\0/h\0-np\0"
	       "4\0python3\0x.py\0"),
	     PROCSCAN_MPIRUN},
	    {"prterun by its path",
	     C("/opt/openmpi/bin/prterun\0-np\0"
	       "2\0a.out\0"),
	     PROCSCAN_MPIRUN},
	    {"a rank from argv",
	     C("python3\0allreduce.py\0"
	       "3\0"
	       "4\0--hang\0"),
	     PROCSCAN_NOT_LAUNCHER},
	    {"a rank whose argument names torchrun", C("python3\0train.py\0--note\0torchrun\0"),
	     PROCSCAN_NOT_LAUNCHER},
	    {"python -c of the rank's own", C("python3\0-c\0import torch; print(1)\0"),
	     PROCSCAN_NOT_LAUNCHER},
	    {"another module", C("python3\0-m\0my.train\0--torchrun\0"), PROCSCAN_NOT_LAUNCHER},
	    {"a shell", C("sh\0-c\0sleep 600\0"), PROCSCAN_NOT_LAUNCHER},
	    {"nothing (a kernel thread)", C(""), PROCSCAN_NOT_LAUNCHER},
#undef C
	};

	for (size_t i = 0; i < CD_ARRAY_LEN(cases); i++) {
		print_message("%s\n", cases[i].what);
		assert_int_equal(procscan_cmdline_launcher(cases[i].cmdline, cases[i].len),
		                 cases[i].want);
	}
	assert_string_equal(procscan_launcher_name(PROCSCAN_TORCHRUN), "torchrun");
	assert_string_equal(procscan_launcher_name(PROCSCAN_MPIRUN), "mpirun");
}

/* /proc/PID/status of python3 3.11 after faulthandler.register(SIGUSR2)
 * (SIGINT's handler is Python's own), captured on Linux 6.1 x86_64. */
static const char status_python[] = "Name:\tpython3\nUmask:\t0022\nState:\tR (running)\n"
                                    "Tgid:\t20896\nPid:\t20896\nPPid:\t20892\n"
                                    "Threads:\t1\nSigQ:\t0/96368\n"
                                    "SigPnd:\t0000000000000000\nShdPnd:\t0000000000000000\n"
                                    "SigBlk:\t0000000000000000\nSigIgn:\t0000000001001000\n"
                                    "SigCgt:\t0000000000000802\nCapInh:\t0000000000000000\n";
/* the same of `sh -c 'sleep 600'` (dash): no handler at all */
static const char status_sleep[] = "Name:\tsleep\nState:\tS (sleeping)\n"
                                   "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n"
                                   "SigCgt:\t0000000000000000\n";

static void sigcgt_says_which_signals_have_a_handler(void **state)
{
	uint64_t mask = 1;
	char err[CD_ERRLEN];

	assert_int_equal(procscan_status_sigcgt(S(status_python), &mask, err, sizeof(err)), 0);
	assert_true(mask == 0x802);
	assert_true(procscan_sig_caught(mask, 12));  /* SIGUSR2 */
	assert_true(procscan_sig_caught(mask, 2));   /* SIGINT */
	assert_false(procscan_sig_caught(mask, 10)); /* SIGUSR1 */
	assert_false(procscan_sig_caught(mask, 0));
	assert_false(procscan_sig_caught(mask, 65));
	assert_int_equal(procscan_status_sigcgt(S(status_sleep), &mask, err, sizeof(err)), 0);
	assert_false(procscan_sig_caught(mask, 12));
}

static void a_status_without_a_readable_sigcgt_is_refused(void **state)
{
	uint64_t mask;
	char err[CD_ERRLEN];

	assert_int_equal(
	    procscan_status_sigcgt(S("Name:\tx\nSigIgn:\t0\n"), &mask, err, sizeof(err)),
	    CD_ERR_PARSE);
	assert_string_equal(err, "status: no SigCgt line");
	assert_int_equal(procscan_status_sigcgt(S("SigCgt:\tzz\n"), &mask, err, sizeof(err)),
	                 CD_ERR_PARSE);
	assert_int_equal(
	    procscan_status_sigcgt(S("SigCgt:\t00000000000000000802\n"), &mask, err, sizeof(err)),
	    CD_ERR_PARSE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_stat_line_gives_state_ppid_and_cpu_ticks),
	    cmocka_unit_test(a_comm_with_parentheses_and_spaces_ends_at_the_last_paren),
	    cmocka_unit_test(a_stat_line_cut_short_is_refused),
	    cmocka_unit_test(a_thread_in_clock_nanosleep_sleeps),
	    cmocka_unit_test(a_thread_in_recvfrom_waits_on_its_fd),
	    cmocka_unit_test(select_with_no_fds_is_a_sleep),
	    cmocka_unit_test(running_and_not_in_a_call_are_told_apart),
	    cmocka_unit_test(a_syscall_line_with_too_few_words_is_refused),
	    cmocka_unit_test(tcp4_sockets_give_endpoints_state_queues_timers_and_inode),
	    cmocka_unit_test(tcp4_zero_window_gives_the_persist_timer_and_its_probes),
	    cmocka_unit_test(tcp6_v4_mapped_addresses_read_as_v4),
	    cmocka_unit_test(more_sockets_than_the_cap_is_an_error),
	    cmocka_unit_test(a_malformed_tcp_line_is_named),
	    cmocka_unit_test(socket_links_give_their_inode),
	    cmocka_unit_test(a_torchrun_worker_is_a_rank),
	    cmocka_unit_test(without_rank_the_group_rank_gives_it),
	    cmocka_unit_test(a_launcher_has_only_torchelastic_variables),
	    cmocka_unit_test(each_environment_gives_its_kind_rank_and_world_size),
	    cmocka_unit_test(launchers_are_told_from_ranks_by_their_command_line),
	    cmocka_unit_test(sigcgt_says_which_signals_have_a_handler),
	    cmocka_unit_test(a_status_without_a_readable_sigcgt_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
