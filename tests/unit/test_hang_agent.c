/* SPDX-License-Identifier: MIT */
/* test_hang_agent.c - the agent's hang_sample on this machine's own
 * processes: a rank found by its environment, what its main thread blocks
 * in, the TCP connection it waits on, the run filter, and stacks through
 * the hang-ready dump signal (this machine's python3), and the NCCL parts:
 * the RAS query of a rank that maps a libnccl, against the RAS stand-in,
 * and the Flight Recorder dump of a rank through the pipe stand-in
 * (tests/fixtures/hang/); the GPU a rank runs on, through the NVML stand-in
 * (tests/fakes/fake_nvml.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cd.h"
#include "hang/hang_analyze.h"
#include "jobs/hangready.h"
#include "fsutil.h"
#include "hang/hang_agent.h"

static char top[PATH_MAX];

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static int setup(void **state)
{
	snprintf(top, sizeof(top), "/tmp/test_hang_agent.XXXXXX");
	return mkdtemp(top) ? 0 : -1;
}

static int teardown(void **state)
{
	nftw(top, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}

/* Start argv with env (NULL-terminated "NAME=value"s added to PATH). The child
 * dies with the test binary (a failed assertion skips stop()), so that it never
 * outlives it holding the runner's pipe open. */
static pid_t start(char *const argv[], const char *const *env)
{
	pid_t parent = getpid();
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		char *envp[16];
		int n = 0;

		if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
			_exit(127);

		envp[n++] = "PATH=/usr/bin:/bin";
		while (*env && n < 15)
			envp[n++] = (char *)*env++;
		envp[n] = NULL;
		for (int fd = 3; fd < 64; fd++)
			close(fd);
		execve(argv[0], argv, envp);
		_exit(127);
	}
	return pid;
}

static void stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* hang_sample's answer's process pid, or NULL; *out keeps the answer. */
static json_t *sample_find(json_t *req, pid_t pid, json_t **out)
{
	const char *code = NULL;
	char msg[CD_ERRLEN];
	size_t i;
	json_t *p;

	*out = hang_agent_sample(req, &code, msg, sizeof(msg));
	json_decref(req);
	assert_non_null(*out);
	json_array_foreach(json_object_get(*out, "processes"), i, p)
	{
		if (json_integer_value(json_object_get(p, "pid")) == pid)
			return p;
	}
	return NULL;
}

/* Sample until the main thread is in want's class (the child starting up:
 * "wait" is also its reads of its own files; "socket" is a wait on a TCP socket). */
static json_t *sample_until(json_t *req, pid_t pid, const char *cls, json_t **out)
{
	json_t *p = NULL;

	for (int i = 0; i < 400; i++) { /* 20 s: Python starts slowly on a loaded machine */
		struct timespec ts = {0, 50 * 1000000L};

		p = sample_find(json_deep_copy(req), pid, out);
		if (p && !strcmp(cls, "socket") &&
		    json_is_object(json_object_get(p, "blocked_socket")))
			break;
		if (p &&
		    !strcmp(json_string_value(json_object_get(json_object_get(p, "main"), "class")),
		            cls))
			break;
		json_decref(*out);
		*out = NULL;
		p = NULL;
		nanosleep(&ts, NULL);
	}
	json_decref(req);
	return p;
}

static void a_sleeping_rank_is_found_with_its_sleep(void **state)
{
	char *argv[] = {"/bin/sleep", "30", NULL};
	const char *env[] = {"RANK=5", "LOCAL_RANK=1", "WORLD_SIZE=6", NULL};
	pid_t pid = start(argv, env);
	json_t *out, *p = sample_until(json_object(), pid, "sleep", &out);

	assert_non_null(p);
	assert_string_equal(json_string_value(json_object_get(p, "role")), "rank");
	assert_int_equal(json_integer_value(json_object_get(p, "rank")), 5);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(p, "env"), "WORLD_SIZE")), "6");
#if defined(__x86_64__) || defined(__aarch64__)
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(p, "main"), "syscall")),
	    "clock_nanosleep");
#endif
	assert_string_equal(json_string_value(json_object_get(p, "stacks_how")), "none");
	json_decref(out);
	stop(pid);
}

static void a_launcher_is_kept_apart_and_a_plain_process_is_not_found(void **state)
{
	char *argv[] = {"/bin/sleep", "30", NULL};
	const char *env1[] = {"TORCHELASTIC_RUN_ID=j", NULL}, *env2[] = {"RANKS=3", NULL};
	pid_t launcher = start(argv, env1), plain = start(argv, env2);
	json_t *out, *p = sample_until(json_object(), launcher, "sleep", &out);

	assert_non_null(p);
	assert_string_equal(json_string_value(json_object_get(p, "role")), "launcher");
	json_decref(out);
	assert_null(sample_find(json_object(), plain, &out));
	json_decref(out);
	stop(launcher);
	stop(plain);
}

static void with_a_run_only_that_runs_processes_are_sampled(void **state)
{
	char *argv[] = {"/bin/sleep", "30", NULL};
	const char *env[] = {"RANK=0", "CLUSTERDOC_RUN=r-one", NULL};
	pid_t pid = start(argv, env);
	json_t *out, *p = sample_until(json_pack("{ss}", "run", "r-one"), pid, "sleep", &out);

	assert_non_null(p);
	assert_string_equal(json_string_value(json_object_get(out, "searched")),
	                    "processes with CLUSTERDOC_RUN=r-one in their environment");
	json_decref(out);
	assert_null(sample_find(json_pack("{ss}", "run", "r-two"), pid, &out));
	json_decref(out);
	stop(pid);
}

static void a_rank_blocked_in_recv_names_its_tcp_connection(void **state)
{
	char *argv[] = {"/usr/bin/python3", "-c",
	                "import socket\n"
	                "s = socket.create_server(('127.0.0.1', 0))\n"
	                "c = socket.create_connection(s.getsockname())\n"
	                "a, _ = s.accept()\n"
	                "c.sendall(b'x' * 7)\n"
	                "c.recv(1)\n",
	                NULL};
	const char *env[] = {"RANK=2", "WORLD_SIZE=4", NULL};
	pid_t pid;
	json_t *out, *p, *b;

	if (access(argv[0], X_OK) != 0)
		skip();
	pid = start(argv, env);
	p = sample_until(json_object(), pid, "socket", &out);
	assert_non_null(p);
	b = json_object_get(p, "blocked_socket");
	assert_true(json_is_object(b));
	assert_string_equal(json_string_value(json_object_get(b, "state")), "ESTABLISHED");
	assert_int_equal(json_integer_value(json_object_get(b, "rx_queue")), 0);
	/* the accepted end holds what was sent and never read */
	assert_int_equal(json_array_size(json_object_get(p, "sockets")), 2);
	{
		json_t *s0 = json_array_get(json_object_get(p, "sockets"), 0);
		json_t *s1 = json_array_get(json_object_get(p, "sockets"), 1);

		assert_int_equal(json_integer_value(json_object_get(s0, "rx_queue")) +
		                     json_integer_value(json_object_get(s1, "rx_queue")),
		                 7);
	}
	assert_int_equal(strncmp(json_string_value(json_object_get(b, "remote")), "127.0.0.1:", 10),
	                 0);
	json_decref(out);
	stop(pid);
}

static void a_hang_ready_rank_dumps_its_stacks_on_request(void **state)
{
	struct hangready h;
	char err[CD_ERRLEN], site[PATH_MAX + 64], pp[PATH_MAX + 32], hang[PATH_MAX + 16];
	char *argv[] = {"/usr/bin/python3", "-c",
	                "import time\n"
	                "def load_batch():\n"
	                "    time.sleep(30)\n"
	                "load_batch()\n",
	                NULL};
	const char *env[] = {"RANK=1", "CLUSTERDOC_RUN=r-st", pp, "CLUSTERDOC_DUMP_SIGNAL=SIGUSR2",
	                     NULL};
	json_t *out, *p;
	pid_t pid;

	if (access(argv[0], X_OK) != 0)
		skip();
	snprintf(hang, sizeof(hang), "%s/hang", top);
	snprintf(site, sizeof(site), "%s/sitecustomize.py", hang);
	snprintf(pp, sizeof(pp), "PYTHONPATH=%s", hang);
	assert_int_equal(hangready_build(top, "", NULL, &h, err, sizeof(err)), 0);
	assert_int_equal(cd_mkdir_parent(site, err, sizeof(err)), 0);
	assert_int_equal(
	    cd_write_file_atomic(site, h.site.data, h.site.len, 0644, err, sizeof(err)), 0);
	hangready_free(&h);
	pid = start(argv, env);
	p = sample_until(json_pack("{ss}", "run", "r-st"), pid, "sleep", &out);
	assert_non_null(p);
	json_decref(out);
	p = sample_find(json_pack("{sssb}", "run", "r-st", "stacks", 1), pid, &out);
	assert_non_null(p);
	assert_string_equal(json_string_value(json_object_get(p, "stacks_how")), "hang-ready");
	assert_non_null(strstr(json_string_value(json_object_get(p, "stacks")), "load_batch"));
	assert_int_equal(kill(pid, 0), 0); /* the dump did not stop it */
	json_decref(out);
	stop(pid);
}

/* A hang-ready rank that is no Python process (a shell's sleep) has no
 * handler for the dump signal: it is not sent, the note says so, and the
 * rank lives on. */
static void a_rank_without_a_handler_gets_no_dump_signal(void **state)
{
	struct hangready h;
	char err[CD_ERRLEN], site[PATH_MAX + 64], pp[PATH_MAX + 32], hang[PATH_MAX + 16];
	char *argv[] = {"/bin/sleep", "30", NULL};
	const char *env[] = {"NODE_RANK=0",
	                     "NNODES=1",
	                     "WORLD_SIZE=1",
	                     "CLUSTERDOC_RUN=r-nh",
	                     pp,
	                     "CLUSTERDOC_DUMP_SIGNAL=SIGUSR2",
	                     NULL};
	json_t *out, *p;
	pid_t pid;

	snprintf(hang, sizeof(hang), "%s/hang", top);
	snprintf(site, sizeof(site), "%s/sitecustomize.py", hang);
	snprintf(pp, sizeof(pp), "PYTHONPATH=%s", hang);
	assert_int_equal(hangready_build(top, "", NULL, &h, err, sizeof(err)), 0);
	assert_int_equal(cd_mkdir_parent(site, err, sizeof(err)), 0);
	assert_int_equal(
	    cd_write_file_atomic(site, h.site.data, h.site.len, 0644, err, sizeof(err)), 0);
	hangready_free(&h);
	pid = start(argv, env);
	p = sample_until(json_pack("{ss}", "run", "r-nh"), pid, "sleep", &out);
	assert_non_null(p);
	json_decref(out);
	p = sample_find(json_pack("{sssb}", "run", "r-nh", "stacks", 1), pid, &out);
	assert_non_null(p);
	assert_string_equal(json_string_value(json_object_get(p, "role")), "rank");
	assert_int_equal(json_integer_value(json_object_get(p, "rank")), 0);
	assert_string_equal(json_string_value(json_object_get(p, "stacks_how")), "none");
	assert_non_null(strstr(json_string_value(json_object_get(p, "stacks_note")),
	                       "no stacks: the rank does not handle the dump signal"));
	assert_int_equal(waitpid(pid, NULL, WNOHANG), 0); /* not ended by a signal */
	json_decref(out);
	stop(pid);
}

/* A process with the node's variables whose children name their own RANK
 * starts them: it is their launcher, they are ranks 2 and 3. */
static void a_process_whose_children_name_their_rank_is_their_launcher(void **state)
{
	char *argv[] = {
	    "/bin/sh", "-c",
	    "RANK=2 LOCAL_RANK=0 /bin/sleep 30 & RANK=3 LOCAL_RANK=1 /bin/sleep 30 & wait", NULL};
	const char *env[] = {"NODE_RANK=1",         "NNODES=2", "NPROC_PER_NODE=2", "WORLD_SIZE=4",
	                     "CLUSTERDOC_RUN=r-la", NULL};
	pid_t pid = start(argv, env);
	json_t *out = NULL, *p = NULL, *q;
	long ranks = 0;
	size_t i;

	for (int k = 0; k < 100 && ranks != 5; k++) {
		struct timespec ts = {0, 50 * 1000000L};

		json_decref(out);
		p = sample_find(json_pack("{ss}", "run", "r-la"), pid, &out);
		ranks = 0;
		json_array_foreach(json_object_get(out, "processes"), i, q)
		{
			if (json_integer_value(json_object_get(q, "ppid")) == pid &&
			    !strcmp(json_string_value(json_object_get(q, "role")), "rank"))
				ranks += json_integer_value(json_object_get(q, "rank"));
		}
		nanosleep(&ts, NULL);
	}
	assert_non_null(p);
	assert_int_equal(ranks, 2 + 3);
	assert_string_equal(json_string_value(json_object_get(p, "role")), "launcher");
	assert_int_equal(json_integer_value(json_object_get(p, "rank")), -1);
	json_array_foreach(json_object_get(out, "processes"), i, q)
	{
		if (json_integer_value(json_object_get(q, "ppid")) == pid)
			kill((pid_t)json_integer_value(json_object_get(q, "pid")), SIGKILL);
	}
	json_decref(out);
	stop(pid);
}

#define FIX "tests/fixtures/hang/"

/* Start argv with env as start() does, its stdout into a pipe; its first
 * line into line (a stand-in says "ready" or its port). */
static pid_t start_line(char *const argv[], const char *const *env, char *line, size_t len)
{
	int p[2], saved = dup(1);
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	dup2(p[1], 1);
	pid = start(argv, env);
	dup2(saved, 1);
	close(saved);
	close(p[1]);
	for (size_t k = 0; k + 1 < len; k++) {
		line[k + 1] = '\0';
		if (read(p[0], line + k, 1) <= 0 || line[k] == '\n') {
			line[k] = '\0';
			break;
		}
	}
	close(p[0]);
	return pid;
}

/* The RAS stand-in in mode; its port. */
static pid_t ras_standin(const char *mode, int *port)
{
	char *argv[] = {"/usr/bin/python3", FIX "ras_standin.py", (char *)mode, NULL};
	const char *env[] = {NULL};
	char line[32] = "";
	pid_t pid = start_line(argv, env, line, sizeof(line));

	*port = atoi(line);
	assert_true(*port > 0);
	return pid;
}

static void a_rank_that_maps_libnccl_gets_the_ras_answer_and_stuck_is_a_suspect(void **state)
{
	char lib[PATH_MAX + 32], addr[64], line[32] = "", code[PATH_MAX + 256];
	char *argv[] = {"/usr/bin/python3", "-c", code, NULL};
	const char *env[] = {"RANK=0", "WORLD_SIZE=1", "CLUSTERDOC_RUN=r-ras", addr, NULL};
	json_t *out, *out2, *p, *ras, *samples, *v, *s;
	int port, found = 0;
	pid_t ras_pid, pid;
	size_t i;
	FILE *f;

	if (access(argv[0], X_OK) != 0)
		skip();
	/* a file named as NCCL's library, mapped: what /proc/PID/maps shows of a rank using NCCL */
	snprintf(lib, sizeof(lib), "%s/libnccl.so.2", top);
	f = fopen(lib, "w");
	assert_non_null(f);
	fputs("not a library\n", f);
	fclose(f);
	snprintf(code, sizeof(code),
	         "import mmap, time\n"
	         "f = open('%s', 'rb')\n"
	         "m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)\n"
	         "print('ready', flush=True)\n"
	         "time.sleep(30)\n",
	         lib);
	ras_pid = ras_standin("stuck", &port);
	snprintf(addr, sizeof(addr), "NCCL_RAS_ADDR=127.0.0.1:%d", port);
	pid = start_line(argv, env, line, sizeof(line));
	assert_string_equal(line, "ready");
	p = sample_find(json_pack("{ss}", "run", "r-ras"), pid, &out);
	assert_non_null(p);
	ras = json_object_get(out, "ras");
	assert_true(json_is_true(json_object_get(ras, "ok")));
	assert_string_equal(json_string_value(json_object_get(ras, "format")), "json");
	assert_int_equal(json_integer_value(json_object_get(ras, "rank_pid")), pid);
	assert_true(json_is_null(json_object_get(out, "flight_recorder")));
	p = sample_find(json_pack("{ss}", "run", "r-ras"), pid, &out2);
	assert_non_null(p);
	/* the verdict: the communicator did not move between the two answers */
	samples = json_pack("[{sis[{ssso}]},{sis[{ssso}]}]", "t_ms", 0, "nodes", "host", "n1",
	                    "result", out, "t_ms", 2000, "nodes", "host", "n1", "result", out2);
	v = hang_analyze(samples);
	assert_int_equal(json_integer_value(json_object_get(v, "exit")), 1);
	assert_int_equal(json_array_size(json_object_get(v, "ras")), 1);
	json_array_foreach(json_object_get(v, "suspects"), i, s)
	{
		if (strstr(json_string_value(json_object_get(s, "reason")),
		           "is stuck (RAS, asked on n1)"))
			found = 1;
	}
	assert_true(found);
	json_decref(v);
	json_decref(samples);
	stop(pid);
	stop(ras_pid);
}

static void a_rank_without_libnccl_is_not_asked_for_ras(void **state)
{
	char *argv[] = {"/bin/sleep", "30", NULL};
	const char *env[] = {"RANK=0", "CLUSTERDOC_RUN=r-noras", "NCCL_RAS_ADDR=127.0.0.1:9", NULL};
	json_t *out, *p;
	pid_t pid = start(argv, env);

	p = sample_until(json_pack("{ss}", "run", "r-noras"), pid, "sleep", &out);
	assert_non_null(p);
	assert_true(json_is_null(json_object_get(out, "ras")));
	json_decref(out);
	stop(pid);
}

static void the_flight_recorder_of_a_rank_is_dumped_through_its_pipe(void **state)
{
	char pp[PATH_MAX + 64], tp[PATH_MAX + 64], pipe_env[PATH_MAX + 96], temp_env[PATH_MAX + 96];
	char line[32] = "", *dump = FIX "fr_rank_2.pkl";
	char *argv[] = {"/usr/bin/python3", FIX "fr_standin.py", pp, tp, "2", dump, NULL};
	const char *env[] = {"RANK=2", "WORLD_SIZE=4", "CLUSTERDOC_RUN=r-fr",
	                     pipe_env, temp_env,       NULL};
	json_t *out, *p, *fr, *d, *v, *samples;
	pid_t pid;

	if (access(argv[0], X_OK) != 0)
		skip();
	snprintf(pp, sizeof(pp), "%s/nccl_trace_pipe_", top);
	snprintf(tp, sizeof(tp), "%s/nccl_trace_rank_", top);
	snprintf(pipe_env, sizeof(pipe_env), "TORCH_NCCL_DEBUG_INFO_PIPE_FILE=%s", pp);
	snprintf(temp_env, sizeof(temp_env), "TORCH_NCCL_DEBUG_INFO_TEMP_FILE=%s", tp);
	pid = start_line(argv, env, line, sizeof(line));
	assert_string_equal(line, "ready");
	/* not asked: no dump */
	p = sample_find(json_pack("{ss}", "run", "r-fr"), pid, &out);
	assert_non_null(p);
	assert_true(json_is_null(json_object_get(out, "flight_recorder")));
	json_decref(out);
	p = sample_find(json_pack("{sssb}", "run", "r-fr", "flight_recorder", 1), pid, &out);
	assert_non_null(p);
	fr = json_object_get(out, "flight_recorder");
	assert_int_equal(json_array_size(json_object_get(fr, "dumps")), 1);
	d = json_array_get(json_object_get(fr, "dumps"), 0);
	assert_true(json_is_true(json_object_get(d, "ok")));
	assert_int_equal(json_integer_value(json_object_get(d, "rank")), 2);
	assert_true(json_array_size(json_object_get(d, "entries")) > 0);
	/* the verdict has the analysis of the one dump */
	samples = json_pack("[{sis[{ssso}]}]", "t_ms", 0, "nodes", "host", "n1", "result", out);
	v = hang_analyze(samples);
	assert_true(json_is_object(json_object_get(v, "flight_recorder")));
	assert_non_null(json_object_get(json_object_get(v, "flight_recorder"), "process_groups"));
	json_decref(v);
	json_decref(samples);
	stop(pid);
}

/* NVML through its stand-in (tests/fakes/fake_nvml.c): the rank's PID is
 * among GPU 1's compute processes, so the rank is on GPU 1 and gets its
 * utilisation; the node's GPUs are listed with theirs. */
static void a_rank_gets_the_gpu_nvml_runs_it_on_with_its_utilisation(void **state)
{
	char *argv[] = {"/bin/sleep", "30", NULL};
	const char *env[] = {"RANK=3", "WORLD_SIZE=4", "CLUSTERDOC_RUN=r-gpu", NULL};
	char spec[64];
	json_t *out, *p, *g, *gpus;
	pid_t pid = start(argv, env);

	snprintf(spec, sizeof(spec), "100/40:1,7/2:%ld", (long)pid);
	setenv("CLUSTERDOC_NVML_LIB", FAKE_NVML, 1);
	setenv("FAKE_NVML_DEVICES", spec, 1);
	p = sample_until(json_pack("{ss}", "run", "r-gpu"), pid, "sleep", &out);
	unsetenv("FAKE_NVML_DEVICES");
	unsetenv("CLUSTERDOC_NVML_LIB");
	assert_non_null(p);
	g = json_object_get(p, "gpu");
	assert_true(json_is_object(g));
	assert_int_equal(json_integer_value(json_object_get(g, "index")), 1);
	assert_int_equal(json_integer_value(json_object_get(g, "util_gpu")), 7);
	assert_int_equal(json_integer_value(json_object_get(g, "util_memory")), 2);
	assert_int_equal(json_integer_value(json_object_get(g, "used_memory_bytes")), 1 << 30);
	assert_string_equal(json_string_value(json_object_get(g, "uuid")),
	                    "GPU-fa4e0000-0000-0000-0000-000000000001");
	gpus = json_object_get(out, "gpus");
	assert_int_equal(json_array_size(gpus), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(gpus, 0), "util_gpu")),
	                 100);
	assert_int_equal(
	    json_integer_value(json_array_get(json_object_get(json_array_get(gpus, 0), "pids"), 0)),
	    1);
	assert_null(json_object_get(out, "gpu_error"));
	json_decref(out);
	stop(pid);
}

static void without_nvml_gpus_are_null_and_a_failing_nvml_says_why(void **state)
{
	char *argv[] = {"/bin/sleep", "30", NULL};
	const char *env[] = {"RANK=0", "WORLD_SIZE=1", "CLUSTERDOC_RUN=r-nogpu", NULL};
	json_t *out, *p;
	pid_t pid = start(argv, env);

	setenv("CLUSTERDOC_NVML_LIB", "/nonexistent/libnvidia-ml.so.1", 1);
	p = sample_until(json_pack("{ss}", "run", "r-nogpu"), pid, "sleep", &out);
	assert_non_null(p);
	assert_true(json_is_null(json_object_get(p, "gpu")));
	assert_true(json_is_null(json_object_get(out, "gpus")));
	assert_null(json_object_get(out, "gpu_error"));
	json_decref(out);
	setenv("CLUSTERDOC_NVML_LIB", FAKE_NVML, 1);
	setenv("FAKE_NVML_INIT", "9", 1);
	p = sample_find(json_pack("{ss}", "run", "r-nogpu"), pid, &out);
	unsetenv("FAKE_NVML_INIT");
	unsetenv("CLUSTERDOC_NVML_LIB");
	assert_non_null(p);
	assert_true(json_is_null(json_object_get(out, "gpus")));
	assert_string_equal(json_string_value(json_object_get(out, "gpu_error")),
	                    "nvmlInit: Driver Not Loaded (NVML error 9)");
	json_decref(out);
	stop(pid);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_sleeping_rank_is_found_with_its_sleep),
	    cmocka_unit_test(a_launcher_is_kept_apart_and_a_plain_process_is_not_found),
	    cmocka_unit_test(a_process_whose_children_name_their_rank_is_their_launcher),
	    cmocka_unit_test(a_rank_without_a_handler_gets_no_dump_signal),
	    cmocka_unit_test(with_a_run_only_that_runs_processes_are_sampled),
	    cmocka_unit_test(a_rank_blocked_in_recv_names_its_tcp_connection),
	    cmocka_unit_test(a_hang_ready_rank_dumps_its_stacks_on_request),
	    cmocka_unit_test(a_rank_that_maps_libnccl_gets_the_ras_answer_and_stuck_is_a_suspect),
	    cmocka_unit_test(a_rank_without_libnccl_is_not_asked_for_ras),
	    cmocka_unit_test(the_flight_recorder_of_a_rank_is_dumped_through_its_pipe),
	    cmocka_unit_test(a_rank_gets_the_gpu_nvml_runs_it_on_with_its_utilisation),
	    cmocka_unit_test(without_nvml_gpus_are_null_and_a_failing_nvml_says_why),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
