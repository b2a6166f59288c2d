/* SPDX-License-Identifier: MIT */
/* test_mnist_log.c - the pure side of the torch mnist run (mnist_log.c):
 * reading the jobs' output, writing torchrun's command and environment. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cd.h"
#include "jobs/mnist_internal.h"

#define SCRIPT "~/.cache/clusterdoc/mnist_ddp.py"
#define ROOT   "~/.cache/clusterdoc/data"

/* ================================================================ events */

static void parse_event_returns_the_object_of_a_cdmnist_line(void **state)
{
	json_t *ev = NULL;

	assert_int_equal(
	    mnist_parse_event("CDMNIST {\"event\":\"epoch\",\"epoch\":1,\"loss\":0.25}", &ev), 1);
	assert_non_null(ev);
	assert_string_equal(json_string_value(json_object_get(ev, "event")), "epoch");
	assert_int_equal(json_integer_value(json_object_get(ev, "epoch")), 1);
	assert_true(json_real_value(json_object_get(ev, "loss")) == 0.25);
	json_decref(ev);
}

static void parse_event_passes_over_other_lines(void **state)
{
	const char *other[] = {"epoch 1 loss 0.2",
	                       "",
	                       "CDMNIST",
	                       "CDMNISTX {\"event\":\"a\"}",
	                       " CDMNIST {\"event\":\"a\"}",
	                       "cdmnist {\"event\":\"a\"}"};

	for (size_t i = 0; i < CD_ARRAY_LEN(other); i++) {
		json_t *ev = json_object(), *was = ev;

		assert_int_equal(mnist_parse_event(other[i], &ev), 0);
		assert_null(ev);
		json_decref(was);
	}
}

static void parse_event_refuses_a_malformed_cdmnist_line(void **state)
{
	const char *bad[] = {
	    "CDMNIST not json",
	    "CDMNIST ",
	    "CDMNIST {\"epoch\":1}",
	    "CDMNIST {\"event\":1}",
	    "CDMNIST [\"event\"]",
	    "CDMNIST {\"event\":\"a\",\"event\":\"b\"}",
	    "CDMNIST {\"event\":\"a\"} trailing",
	};

	for (size_t i = 0; i < CD_ARRAY_LEN(bad); i++) {
		json_t *ev = json_object(), *was = ev;

		if (mnist_parse_event(bad[i], &ev) != -1)
			fail_msg("\"%s\" was not refused", bad[i]);
		assert_null(ev);
		json_decref(was);
	}
}

/* ================================================================ errors */

static void error_lines_are_exceptions_warnings_and_failures_to_run(void **state)
{
	const char *errors[] = {
	    "RuntimeError: [/path/gloo] Connection closed by peer [10.0.0.2]:1234",
	    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:",
	    "  ValueError: x",
	    "\tOSError: [Errno 99] Cannot assign requested address",
	    "KeyboardInterrupt",
	    "torch.distributed.DistBackendException: NCCL error",
	    "node1:123:456 [0] NCCL WARN NET/Socket : message truncated",
	    "clusterdoc-agent: cannot run x: No such file",
	    "[W socket.cpp:601] [c10d] connect to 10.0.0.1:29500 failed: Connection refused",
	};

	for (size_t i = 0; i < CD_ARRAY_LEN(errors); i++) {
		if (!mnist_is_error_line(errors[i]))
			fail_msg("\"%s\" is not taken for an error", errors[i]);
	}
}

static void ordinary_output_is_not_an_error_line(void **state)
{
	const char *ordinary[] = {
	    "Traceback (most recent call last):",
	    "epoch 1 loss 0.2",
	    "  File \"x.py\", line 3, in <module>",
	    "ErrorHandler registered",
	    "Errors: none",
	    "UserWarning: the default will change",
	    "/usr/lib/python3/dist-packages/torch/x.py:10: UserWarning: y",
	    "CDMNIST {\"event\":\"epoch\"}",
	    "",
	};

	for (size_t i = 0; i < CD_ARRAY_LEN(ordinary); i++) {
		if (mnist_is_error_line(ordinary[i]))
			fail_msg("\"%s\" is taken for an error", ordinary[i]);
	}
}

/* ================================================================ argv */

/* argv with the shim (checked) in place of argv[2], as compact JSON. */
static char *argv_with_shim_checked(json_t *argv)
{
	const char *shim = json_string_value(json_array_get(argv, 2));
	json_t *copy = json_deep_copy(argv);
	char *s;

	assert_non_null(shim);
	assert_string_equal(json_string_value(json_array_get(argv, 1)), "-c");
	assert_int_equal(strncmp(shim, "import re, sys\n", 15), 0);
	assert_non_null(strstr(shim, "from torch.distributed.run import main\n"));
	assert_non_null(strstr(shim, "main()\n"));
	json_array_set_new(copy, 2, json_string("<shim>"));
	s = json_dumps(copy, JSON_COMPACT);
	json_decref(copy);
	return s;
}

static json_t *default_argv(const char *version, const char *master, const char *checkpoint,
                            const struct mnist_opts *o)
{
	return mnist_torch_argv("/usr/bin/python3", version, 2, 1, 1, master, 29500, SCRIPT, ROOT,
	                        checkpoint, "gloo", o);
}

#define TAIL                                                                                     \
	"\"--nnodes\",\"2\",\"--node_rank\",\"1\",\"--nproc_per_node\",\"1\",\"--master_addr\"," \
	"\"10.0.0.1\",\"--master_port\",\"29500\",\"" SCRIPT "\",\"--data-root\",\"" ROOT "\","  \
	"\"--epochs\",\"2\",\"--backend\",\"gloo\",\"--batch\",\"64\",\"--lr\",\"0.05\","        \
	"\"--momentum\",\"0.9\",\"--seed\",\"1\",\"--timeout-s\",\"300\""

static void torch_argv_for_1_13_runs_torchrun_through_the_shim(void **state)
{
	struct mnist_opts o;
	json_t *argv;
	char *s;

	mnist_opts_init(&o);
	argv = default_argv("1.13.0", "10.0.0.1", NULL, &o);
	s = argv_with_shim_checked(argv);
	assert_string_equal(s, "[\"/usr/bin/python3\",\"-c\",\"<shim>\"," TAIL "]");
	free(s);
	json_decref(argv);
}

static void torch_argv_for_1_10_runs_torchrun_through_the_shim(void **state)
{
	struct mnist_opts o;
	json_t *argv;
	char *s;

	mnist_opts_init(&o);
	argv = default_argv("1.10.2+cpu", "10.0.0.1", NULL, &o);
	s = argv_with_shim_checked(argv);
	assert_string_equal(s, "[\"/usr/bin/python3\",\"-c\",\"<shim>\"," TAIL "]");
	free(s);
	json_decref(argv);
}

static void torch_argv_for_1_9_uses_launch_with_use_env(void **state)
{
	struct mnist_opts o;
	json_t *argv;
	char *s;

	mnist_opts_init(&o);
	argv = default_argv("1.9.1", "10.0.0.1", NULL, &o);
	s = json_dumps(argv, JSON_COMPACT);
	assert_string_equal(s, "[\"/usr/bin/python3\",\"-m\",\"torch.distributed.launch\","
	                       "\"--use_env\"," TAIL "]");
	free(s);
	json_decref(argv);
}

static void torch_argv_writes_an_ipv6_master_address_in_brackets(void **state)
{
	struct mnist_opts o;
	json_t *argv;
	size_t i;

	mnist_opts_init(&o);
	argv = default_argv("2.1.0", "fd00::1", NULL, &o);
	for (i = 0; i < json_array_size(argv); i++) {
		if (strcmp(json_string_value(json_array_get(argv, i)), "--master_addr") == 0)
			break;
	}
	assert_string_equal(json_string_value(json_array_get(argv, i + 1)), "[fd00::1]");
	json_decref(argv);
}

static void torch_argv_ends_with_the_checkpoint_when_given(void **state)
{
	struct mnist_opts o;
	json_t *argv;
	size_t n;

	mnist_opts_init(&o);
	argv = default_argv("2.1.0", "10.0.0.1", "/tmp/ckpt.pt", &o);
	n = json_array_size(argv);
	assert_string_equal(json_string_value(json_array_get(argv, n - 2)), "--checkpoint");
	assert_string_equal(json_string_value(json_array_get(argv, n - 1)), "/tmp/ckpt.pt");
	assert_string_equal(json_string_value(json_array_get(argv, n - 4)), "--timeout-s");
	json_decref(argv);
}

static void torch_argv_passes_the_options_on(void **state)
{
	struct mnist_opts o;
	json_t *argv;
	char *s;

	mnist_opts_init(&o);
	o.epochs = 5;
	o.batch = 32;
	o.lr = 0.125;
	o.momentum = 0.5;
	o.seed = 7;
	argv = mnist_torch_argv(NULL, "2.1.0", 4, 0, 2, "10.0.0.9", 29600, "s.py", "/data", NULL,
	                        "nccl", &o);
	json_array_set_new(argv, 2, json_string("<shim>"));
	s = json_dumps(argv, JSON_COMPACT);
	assert_string_equal(s, "[\"python3\",\"-c\",\"<shim>\",\"--nnodes\",\"4\",\"--node_rank\","
	                       "\"0\",\"--nproc_per_node\",\"2\",\"--master_addr\",\"10.0.0.9\","
	                       "\"--master_port\",\"29600\",\"s.py\",\"--data-root\",\"/data\","
	                       "\"--epochs\",\"5\",\"--backend\",\"nccl\",\"--batch\",\"32\","
	                       "\"--lr\",\"0.125\",\"--momentum\",\"0.5\",\"--seed\",\"7\","
	                       "\"--timeout-s\",\"300\"]");
	free(s);
	json_decref(argv);
}

static const char *timeout_arg(int stall_ms)
{
	static char v[32];
	struct mnist_opts o;
	json_t *argv;
	size_t n;

	mnist_opts_init(&o);
	o.stall_ms = stall_ms;
	argv = default_argv("2.1.0", "10.0.0.1", NULL, &o);
	n = json_array_size(argv);
	assert_string_equal(json_string_value(json_array_get(argv, n - 2)), "--timeout-s");
	snprintf(v, sizeof(v), "%s", json_string_value(json_array_get(argv, n - 1)));
	json_decref(argv);
	return v;
}

static void torch_argv_timeout_is_the_stall_time_but_at_least_30_s(void **state)
{
	assert_string_equal(timeout_arg(45000), "45");
	assert_string_equal(timeout_arg(10000), "30");
	assert_string_equal(timeout_arg(0), "30");
}

/* ================================================================ env */

/* mnist_torch_env of a one-node plan whose node picked ifname and addr
 * (no master: the unit under test is the node's own variables). */
static json_t *torch_env(const char *ifname, const char *addr, const char *backend)
{
	static const char *const hosts[] = {"node1"};
	struct job_plan *p = job_plan_new(hosts, 1, 0);
	json_t *env;

	job_plan_take_pick(p, 0, ifname, addr, "test");
	env = mnist_torch_env(p, 0, backend);
	job_plan_free(p);
	return env;
}

static void expect_env(json_t *env, const char *want_json)
{
	json_t *want = json_loads(want_json, 0, NULL);
	char *got = json_dumps(env, JSON_COMPACT | JSON_SORT_KEYS);

	assert_non_null(want);
	if (!json_equal(env, want))
		fail_msg("env %s, expected %s", got, want_json);
	free(got);
	json_decref(want);
	json_decref(env);
}

static void torch_env_pins_the_one_interface_for_gloo_and_nccl(void **state)
{
	expect_env(torch_env("eth1", "10.0.0.2", "gloo"),
	           "{\"GLOO_SOCKET_IFNAME\":\"eth1\",\"NCCL_SOCKET_IFNAME\":\"=eth1\","
	           "\"OMP_NUM_THREADS\":\"1\",\"PYTHONUNBUFFERED\":\"1\"}");
}

static void torch_env_sets_the_socket_family_for_an_ipv6_address(void **state)
{
	expect_env(torch_env("eth1", "fd00::2", "gloo"),
	           "{\"GLOO_SOCKET_IFNAME\":\"eth1\",\"NCCL_SOCKET_IFNAME\":\"=eth1\","
	           "\"NCCL_SOCKET_FAMILY\":\"AF_INET6\",\"OMP_NUM_THREADS\":\"1\","
	           "\"PYTHONUNBUFFERED\":\"1\"}");
}

static void torch_env_for_nccl_turns_on_async_error_handling(void **state)
{
	expect_env(torch_env("ib0", "10.1.0.2", "nccl"),
	           "{\"GLOO_SOCKET_IFNAME\":\"ib0\",\"NCCL_SOCKET_IFNAME\":\"=ib0\","
	           "\"OMP_NUM_THREADS\":\"1\",\"PYTHONUNBUFFERED\":\"1\","
	           "\"TORCH_NCCL_ASYNC_ERROR_HANDLING\":\"1\"}");
}

/* ================================================================ the shim, for real */

#define PYTHON          "/usr/bin/python3"
#define SHIM_TIMEOUT_MS 30000

/*
 * Run argv (strings) with env added, stdout and stderr into out (NUL-
 * terminated, the rest dropped); the wait status, or -1 after timeout_ms (the
 * process group is killed).
 */
static int run_capture(json_t *argv, json_t *env, int timeout_ms, char *out, size_t cap)
{
	const char *args[64];
	int64_t until = cd_now_ms() + timeout_ms;
	size_t len = 0, i;
	int fds[2], status = -1;
	pid_t pid;

	assert_true(json_array_size(argv) < CD_ARRAY_LEN(args));
	for (i = 0; i < json_array_size(argv); i++)
		args[i] = json_string_value(json_array_get(argv, i));
	args[i] = NULL;
	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		const char *key;
		json_t *v;

		setpgid(0, 0);
		json_object_foreach(env, key, v)
		{
			setenv(key, json_string_value(v), 1);
		}
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		execv(args[0], (char *const *)args);
		_exit(127);
	}
	close(fds[1]);
	for (;;) {
		struct pollfd p = {.fd = fds[0], .events = POLLIN};
		int64_t left = until - cd_now_ms();
		char buf[4096];
		ssize_t n;

		if (left <= 0) {
			kill(-pid, SIGKILL);
			break;
		}
		if (poll(&p, 1, (int)left) <= 0)
			continue;
		n = read(fds[0], buf, sizeof(buf));
		if (n <= 0)
			break;
		if (len + 1 < cap) {
			size_t k = (size_t)n < cap - 1 - len ? (size_t)n : cap - 1 - len;

			memcpy(out + len, buf, k);
			len += k;
		}
	}
	out[len] = '\0';
	close(fds[0]);
	if (cd_now_ms() >= until)
		kill(-pid, SIGKILL);
	waitpid(pid, &status, 0);
	return cd_now_ms() >= until ? -1 : status;
}

/* A TCP port free on 127.0.0.1 just now (the kernel's pick). */
static int free_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	return ntohs(a.sin_port);
}

/* torch's version from PYTHON, or "" when torch does not import. */
static void torch_version(char *v, size_t len)
{
	json_t *argv = json_pack("[sss]", PYTHON, "-c", "import torch; print(torch.__version__)");
	json_t *env = json_object();
	char out[512];
	int st = access(PYTHON, X_OK) == 0 ? run_capture(argv, env, 30000, out, sizeof(out)) : -1;

	json_decref(env);
	json_decref(argv);
	v[0] = '\0';
	if (st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0)
		snprintf(v, len, "%.*s", (int)strcspn(out, "\n"), out);
}

static void torchrun_shim_runs_the_script_on_one_node(void **state)
{
	char version[64], script[] = "/tmp/cd-shim-XXXXXX.py", *out, *line;
	const char *body = "import json, os, sys\n"
	                   "print('CDMNIST ' + json.dumps({'event': 'hello',\n"
	                   "    'rank': int(os.environ['RANK']),\n"
	                   "    'world': int(os.environ['WORLD_SIZE']),\n"
	                   "    'args': sys.argv[1:3]}), flush=True)\n";
	struct mnist_opts o;
	json_t *argv, *env, *ev = NULL;
	int fd, st, found = 0;

	torch_version(version, sizeof(version));
	if (!version[0])
		skip(); /* no torch here: nothing to run the shim with */
	fd = mkstemps(script, 3);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, body, strlen(body)), (ssize_t)strlen(body));
	close(fd);
	mnist_opts_init(&o);
	o.epochs = 1;
	argv = mnist_torch_argv(PYTHON, version, 1, 0, 1, "127.0.0.1", free_port(), script,
	                        "/nonexistent-data", NULL, "gloo", &o);
	env = torch_env("lo", "127.0.0.1", "gloo");
	out = malloc(1 << 16);
	st = run_capture(argv, env, SHIM_TIMEOUT_MS, out, 1 << 16);
	unlink(script);
	if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("torch %s: the shim ended with status %d:\n%s", version, st, out);
	for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		if (mnist_parse_event(line, &ev) != 1)
			continue;
		found++;
		assert_string_equal(json_string_value(json_object_get(ev, "event")), "hello");
		assert_int_equal(json_integer_value(json_object_get(ev, "rank")), 0);
		assert_int_equal(json_integer_value(json_object_get(ev, "world")), 1);
		assert_string_equal(
		    json_string_value(json_array_get(json_object_get(ev, "args"), 0)),
		    "--data-root");
		json_decref(ev);
	}
	assert_int_equal(found, 1);
	free(out);
	json_decref(env);
	json_decref(argv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(parse_event_returns_the_object_of_a_cdmnist_line),
	    cmocka_unit_test(parse_event_passes_over_other_lines),
	    cmocka_unit_test(parse_event_refuses_a_malformed_cdmnist_line),
	    cmocka_unit_test(error_lines_are_exceptions_warnings_and_failures_to_run),
	    cmocka_unit_test(ordinary_output_is_not_an_error_line),
	    cmocka_unit_test(torch_argv_for_1_13_runs_torchrun_through_the_shim),
	    cmocka_unit_test(torch_argv_for_1_10_runs_torchrun_through_the_shim),
	    cmocka_unit_test(torch_argv_for_1_9_uses_launch_with_use_env),
	    cmocka_unit_test(torch_argv_writes_an_ipv6_master_address_in_brackets),
	    cmocka_unit_test(torch_argv_ends_with_the_checkpoint_when_given),
	    cmocka_unit_test(torch_argv_passes_the_options_on),
	    cmocka_unit_test(torch_argv_timeout_is_the_stall_time_but_at_least_30_s),
	    cmocka_unit_test(torch_env_pins_the_one_interface_for_gloo_and_nccl),
	    cmocka_unit_test(torch_env_sets_the_socket_family_for_an_ipv6_address),
	    cmocka_unit_test(torch_env_for_nccl_turns_on_async_error_handling),
	    cmocka_unit_test(torchrun_shim_runs_the_script_on_one_node),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
