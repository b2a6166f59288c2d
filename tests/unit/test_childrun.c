/* test_childrun.c - a child process watched by the loop (core/childrun.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "cd.h"
#include "childrun.h"
#include "loop.h"

struct seen {
	int calls, rc, status;
	char out[256], err[256], error[CD_ERRLEN];
};

static void on_done(const struct childrun_result *r, void *arg)
{
	struct seen *s = arg;

	s->calls++;
	s->rc = r->rc;
	s->status = r->status;
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(output_and_exit_status_arrive_from_the_loop),
	    cmocka_unit_test(a_child_past_its_deadline_is_killed_and_a_timeout),
	    cmocka_unit_test(output_past_the_cap_is_an_error),
	    cmocka_unit_test(a_cancelled_run_never_calls_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
