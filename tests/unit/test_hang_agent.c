/* test_hang_agent.c - the agent's hang_sample on this machine's own
 * processes: a rank found by its environment, what its main thread blocks
 * in, the TCP connection it waits on, the run filter, and stacks through
 * the hang-ready dump signal (this machine's python3). */
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cd.h"
#include "collectives/hangready.h"
#include "fsutil.h"
#include "probes/hang_agent.h"

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

/* Start argv with env (NULL-terminated "NAME=value"s added to PATH). */
static pid_t start(char *const argv[], const char *const *env)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		char *envp[16];
		int n = 0;

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

	for (int i = 0; i < 100; i++) {
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_sleeping_rank_is_found_with_its_sleep),
	    cmocka_unit_test(a_launcher_is_kept_apart_and_a_plain_process_is_not_found),
	    cmocka_unit_test(with_a_run_only_that_runs_processes_are_sampled),
	    cmocka_unit_test(a_rank_blocked_in_recv_names_its_tcp_connection),
	    cmocka_unit_test(a_hang_ready_rank_dumps_its_stacks_on_request),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
