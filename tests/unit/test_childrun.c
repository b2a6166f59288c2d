/* SPDX-License-Identifier: MIT */
/* test_childrun.c - a child process watched by the loop (core/childrun.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cd.h"
#include "childrun.h"
#include "loop.h"

struct seen {
	int calls, rc, status, out_truncated, err_truncated, spawn_errno;
	char out[4096], err[256], error[CD_ERRLEN];
};

static void on_done(const struct childrun_result *r, void *arg)
{
	struct seen *s = arg;

	s->calls++;
	s->rc = r->rc;
	s->status = r->status;
	s->out_truncated = r->out_truncated;
	s->err_truncated = r->err_truncated;
	s->spawn_errno = r->spawn_errno;
	snprintf(s->out, sizeof(s->out), "%s", r->out->data ? r->out->data : "");
	snprintf(s->err, sizeof(s->err), "%s", r->err->data ? r->err->data : "");
	snprintf(s->error, sizeof(s->error), "%s", r->error);
}

/* Run the loop until done was called (at most 10 s). */
static void wait_done(struct loop *loop, struct seen *s)
{
	int64_t end = cd_now_ms() + 10000;

	while (!s->calls && cd_now_ms() < end)
		loop_run_once(loop, 100);
}

static void output_and_exit_status_arrive_from_the_loop(void **state)
{
	char *argv[] = {"sh", "-c", "echo out; echo err >&2; exit 3", NULL};
	struct loop *loop = loop_new();
	struct seen s = {0};
	char err[CD_ERRLEN];

	assert_non_null(
	    childrun_start(loop, argv, 5000, 4096, 4096, on_done, &s, err, sizeof(err)));
	assert_int_equal(s.calls, 0); /* never from inside childrun_start */
	wait_done(loop, &s);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.rc, 0);
	assert_true(WIFEXITED(s.status));
	assert_int_equal(WEXITSTATUS(s.status), 3);
	assert_string_equal(s.out, "out\n");
	assert_string_equal(s.err, "err\n");
	assert_string_equal(s.error, "");
	loop_free(loop);
}

static void a_child_past_its_deadline_is_killed_and_a_timeout(void **state)
{
	char *argv[] = {"sleep", "10", NULL};
	struct loop *loop = loop_new();
	struct seen s = {0};
	char err[CD_ERRLEN];
	int64_t t0 = cd_now_ms();

	assert_non_null(childrun_start(loop, argv, 100, 4096, 4096, on_done, &s, err, sizeof(err)));
	wait_done(loop, &s);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.rc, CD_ERR_TIMEOUT);
	assert_string_equal(s.error, "sleep did not finish within 100 ms");
	assert_true(cd_now_ms() - t0 < 5000);
	loop_free(loop);
}

static void output_past_the_cap_is_an_error(void **state)
{
	char *argv[] = {"sh", "-c", "head -c 100000 /dev/zero", NULL};
	struct loop *loop = loop_new();
	struct seen s = {0};
	char err[CD_ERRLEN];

	assert_non_null(
	    childrun_start(loop, argv, 5000, 1000, 1000, on_done, &s, err, sizeof(err)));
	wait_done(loop, &s);
	assert_int_equal(s.rc, CD_ERR_IO);
	assert_string_equal(s.error, "sh said more than expected");
	loop_free(loop);
}

static void a_cancelled_run_never_calls_back(void **state)
{
	char *argv[] = {"sleep", "10", NULL};
	struct loop *loop = loop_new();
	struct seen s = {0};
	char err[CD_ERRLEN];
	struct childrun *r =
	    childrun_start(loop, argv, 5000, 64, 64, on_done, &s, err, sizeof(err));

	assert_non_null(r);
	childrun_cancel(r);
	assert_int_equal(loop_run_once(loop, 50), 0); /* nothing left to wait for */
	assert_int_equal(s.calls, 0);
	childrun_cancel(NULL);
	loop_free(loop);
}

/* Run argv with o until done. */
static void run_opts(char *const argv[], const struct childrun_opts *o, struct seen *s)
{
	struct loop *loop = loop_new();
	char err[CD_ERRLEN];

	assert_non_null(childrun_start_opts(loop, argv, o, on_done, s, err, sizeof(err)));
	wait_done(loop, s);
	assert_int_equal(s->calls, 1);
	loop_free(loop);
}

/* The pid a child wrote first on stdout is gone (or a zombie not ours). */
static int pid_is_dead(const char *out)
{
	pid_t pid = (pid_t)atoi(out);
	int64_t end = cd_now_ms() + 2000;

	assert_true(pid > 0);
	while (kill(pid, 0) == 0 && cd_now_ms() < end)
		usleep(10000); /* init reaps the orphan shortly after the kill */
	return kill(pid, 0) < 0 && errno == ESRCH;
}

static void own_group_deadline_kills_the_grandchildren_too(void **state)
{
	char *argv[] = {"sh", "-c", "sleep 30 & echo $!; wait", NULL};
	struct childrun_opts o = {
	    .timeout_ms = 300, .out_max = 4096, .err_max = 4096, .start = {.own_group = 1}};
	struct seen s = {0};

	run_opts(argv, &o, &s);
	assert_int_equal(s.rc, CD_ERR_TIMEOUT);
	assert_string_equal(s.error, "sh did not finish within 300 ms");
	assert_true(pid_is_dead(s.out));
}

static void a_stop_cap_keeps_the_start_and_kills_the_child(void **state)
{
	char *argv[] = {"sh", "-c", "echo $$; exec yes", NULL};
	struct childrun_opts o = {.timeout_ms = 5000,
	                          .out_max = 1000,
	                          .out_cap = CHILDRUN_CAP_STOP,
	                          .err_max = 64,
	                          .start = {.own_group = 1}};
	struct seen s = {0};

	run_opts(argv, &o, &s);
	assert_int_equal(s.rc, 0);
	assert_int_equal(s.out_truncated, 1);
	assert_int_equal(strlen(s.out), 1000);
	assert_true(WIFSIGNALED(s.status));
	assert_int_equal(WTERMSIG(s.status), SIGKILL);
	assert_int_equal(strncmp(strchr(s.out, '\n'), "\ny\ny\n", 5), 0);
	assert_string_equal(s.error, "");
}

static void a_head_cap_keeps_the_start_and_reads_to_the_end(void **state)
{
	char *argv[] = {"sh", "-c", "echo first >&2; head -c 100000 /dev/zero >&2; exit 4", NULL};
	struct childrun_opts o = {
	    .timeout_ms = 5000, .out_max = 64, .err_max = 6, .err_cap = CHILDRUN_CAP_HEAD};
	struct seen s = {0};

	run_opts(argv, &o, &s);
	assert_int_equal(s.rc, 0);
	assert_true(WIFEXITED(s.status));
	assert_int_equal(WEXITSTATUS(s.status), 4);
	assert_int_equal(s.err_truncated, 1);
	assert_int_equal(s.out_truncated, 0);
	assert_string_equal(s.err, "first\n");
}

static void a_tail_cap_keeps_the_end(void **state)
{
	char *argv[] = {"sh", "-c", "head -c 100000 /dev/zero | tr '\\0' x; echo; echo last", NULL};
	struct childrun_opts o = {
	    .timeout_ms = 5000, .out_max = 8, .out_cap = CHILDRUN_CAP_TAIL, .err_max = 64};
	struct seen s = {0};

	run_opts(argv, &o, &s);
	assert_int_equal(s.rc, 0);
	assert_int_equal(s.out_truncated, 1);
	assert_string_equal(s.out, "xx\nlast\n");
}

static void a_fail_cap_says_which_stream_passed_it(void **state)
{
	char *argv[] = {"sh", "-c", "head -c 100000 /dev/zero", NULL};
	struct childrun_opts o = {.timeout_ms = 5000, .out_max = 1000, .err_max = 1000};
	struct seen s = {0};

	run_opts(argv, &o, &s);
	assert_int_equal(s.rc, CD_ERR_IO);
	assert_int_equal(s.out_truncated, 1);
	assert_int_equal(s.err_truncated, 0);
	assert_string_equal(s.error, "sh said more than expected");
}

static void path_argv0_and_a_whole_environment(void **state)
{
	static char *const env[] = {"CD_ONLY=1", NULL};
	char *argv[] = {"tool", "-c", "echo \"$0 ${CD_ONLY:-} ${HOME:-nohome}\"", NULL};
	struct childrun_opts o = {.timeout_ms = 5000,
	                          .out_max = 4096,
	                          .err_max = 4096,
	                          .start = {.path = "/bin/sh", .env = env, .env_only = 1}};
	struct seen s = {0};

	run_opts(argv, &o, &s);
	assert_int_equal(s.rc, 0);
	assert_string_equal(s.out, "tool 1 nohome\n");
}

static void a_program_that_cannot_run_says_why(void **state)
{
	char *argv[] = {"/nonexistent/cd-prog", NULL};
	struct childrun_opts o = {.timeout_ms = 5000, .out_max = 64, .err_max = 4096};
	struct seen s = {0};

	run_opts(argv, &o, &s);
	assert_int_equal(s.rc, 0);
	assert_int_equal(s.spawn_errno, ENOENT);
	assert_true(WIFEXITED(s.status));
	assert_int_equal(WEXITSTATUS(s.status), 127);
	assert_string_equal(s.err, "cannot run /nonexistent/cd-prog: No such file or directory\n");
}

static void input_is_written_to_stdin_then_closed(void **state)
{
	char *argv[] = {"cat", NULL};
	struct childrun_opts o = {
	    .timeout_ms = 5000, .out_max = 64, .err_max = 64, .in = "hello\n", .inlen = 6};
	struct seen s = {0};

	run_opts(argv, &o, &s);
	assert_int_equal(s.rc, 0);
	assert_int_equal(WEXITSTATUS(s.status), 0);
	assert_string_equal(s.out, "hello\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(output_and_exit_status_arrive_from_the_loop),
	    cmocka_unit_test(a_child_past_its_deadline_is_killed_and_a_timeout),
	    cmocka_unit_test(output_past_the_cap_is_an_error),
	    cmocka_unit_test(a_cancelled_run_never_calls_back),
	    cmocka_unit_test(own_group_deadline_kills_the_grandchildren_too),
	    cmocka_unit_test(a_stop_cap_keeps_the_start_and_kills_the_child),
	    cmocka_unit_test(a_head_cap_keeps_the_start_and_reads_to_the_end),
	    cmocka_unit_test(a_tail_cap_keeps_the_end),
	    cmocka_unit_test(a_fail_cap_says_which_stream_passed_it),
	    cmocka_unit_test(path_argv0_and_a_whole_environment),
	    cmocka_unit_test(a_program_that_cannot_run_says_why),
	    cmocka_unit_test(input_is_written_to_stdin_then_closed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
