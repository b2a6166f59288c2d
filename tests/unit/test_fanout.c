/* SPDX-License-Identifier: MIT */
/* test_fanout.c - the phase barrier: one counting rule, done on the loop's next turn. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "fanout.h"
#include "loop.h"

struct probe {
	int calls;
	struct fanout *f;
	int begin_again; /* done opens the next phase with this many answers of member 0 */
	int free_in_done;
};

static void on_done(void *arg)
{
	struct probe *p = arg;

	p->calls++;
	if (p->begin_again) {
		fanout_expect(p->f, 0, p->begin_again);
		p->begin_again = 0;
		fanout_begin(p->f);
	}
	if (p->free_in_done) {
		fanout_free(p->f);
		p->f = NULL;
	}
}

/* Run the loop's turns that are due now (the 0 ms timers). */
static int one_turn(struct loop *loop)
{
	return loop_run_once(loop, 0);
}

static void done_runs_on_the_next_turn_not_inside_settle(void **state)
{
	struct loop *loop = loop_new();
	struct probe p = {0};
	struct fanout *f = fanout_new(loop, 2, on_done, &p);

	fanout_expect(f, 0, 1);
	fanout_expect(f, 1, 2);
	fanout_begin(f);
	fanout_settle(f, 0);
	fanout_settle(f, 1);
	fanout_settle(f, 1);
	assert_int_equal(p.calls, 0);
	assert_int_equal(fanout_pending(f), 0);
	one_turn(loop);
	assert_int_equal(p.calls, 1);
	fanout_free(f);
	loop_free(loop);
}

static void done_runs_once_per_phase(void **state)
{
	struct loop *loop = loop_new();
	struct probe p = {0};
	struct fanout *f = fanout_new(loop, 1, on_done, &p);

	fanout_expect(f, 0, 1);
	fanout_begin(f);
	fanout_settle(f, 0);
	one_turn(loop);
	one_turn(loop);
	fanout_settle(f, 0); /* owes nothing: a late answer changes nothing */
	one_turn(loop);
	assert_int_equal(p.calls, 1);
	assert_int_equal(loop_run_once(loop, 0), 0); /* nothing left to wait for */
	fanout_free(f);
	loop_free(loop);
}

static void a_member_settled_twice_is_not_counted_twice(void **state)
{
	struct loop *loop = loop_new();
	struct probe p = {0};
	struct fanout *f = fanout_new(loop, 2, on_done, &p);

	fanout_expect(f, 0, 1);
	fanout_expect(f, 1, 1);
	fanout_begin(f);
	fanout_settle(f, 0);
	fanout_settle(f, 0);
	fanout_settle_all(f, 0);
	assert_int_equal(fanout_owed(f, 0), 0);
	assert_int_equal(fanout_owed(f, 1), 1);
	assert_int_equal(fanout_pending(f), 1);
	one_turn(loop);
	assert_int_equal(p.calls, 0);
	fanout_settle(f, 1);
	one_turn(loop);
	assert_int_equal(p.calls, 1);
	fanout_free(f);
	loop_free(loop);
}

static void settle_all_takes_every_answer_of_a_failed_member(void **state)
{
	struct loop *loop = loop_new();
	struct probe p = {0};
	struct fanout *f = fanout_new(loop, 2, on_done, &p);

	fanout_expect(f, 0, 3);
	fanout_expect(f, 1, 1);
	fanout_begin(f);
	fanout_settle(f, 1);
	fanout_settle(f, 0);
	fanout_settle_all(f, 0);
	assert_int_equal(fanout_owed(f, 0), 0);
	assert_int_equal(p.calls, 0);
	one_turn(loop);
	assert_int_equal(p.calls, 1);
	fanout_free(f);
	loop_free(loop);
}

static void a_phase_with_nothing_expected_advances_on_the_next_turn(void **state)
{
	struct loop *loop = loop_new();
	struct probe p = {0};
	struct fanout *f = fanout_new(loop, 0, on_done, &p);

	fanout_begin(f);
	assert_int_equal(p.calls, 0);
	one_turn(loop);
	assert_int_equal(p.calls, 1);
	fanout_free(f);
	loop_free(loop);
}

static void an_answer_expected_after_the_turn_was_set_is_waited_for(void **state)
{
	struct loop *loop = loop_new();
	struct probe p = {0};
	struct fanout *f = fanout_new(loop, 1, on_done, &p);

	fanout_begin(f); /* nothing owed: the turn is set */
	fanout_expect(f, 0, 1);
	one_turn(loop);
	assert_int_equal(p.calls, 0);
	fanout_settle(f, 0);
	assert_int_equal(p.calls, 0);
	one_turn(loop);
	assert_int_equal(p.calls, 1);
	fanout_free(f);
	loop_free(loop);
}

static void settling_before_begin_runs_nothing_until_begin(void **state)
{
	struct loop *loop = loop_new();
	struct probe p = {0};
	struct fanout *f = fanout_new(loop, 1, on_done, &p);

	fanout_expect(f, 0, 1);
	fanout_settle(f, 0);
	one_turn(loop);
	assert_int_equal(p.calls, 0);
	fanout_begin(f);
	one_turn(loop);
	assert_int_equal(p.calls, 1);
	fanout_free(f);
	loop_free(loop);
}

static void done_may_begin_the_next_phase(void **state)
{
	struct loop *loop = loop_new();
	struct probe p = {.begin_again = 2};
	struct fanout *f = fanout_new(loop, 1, on_done, &p);

	p.f = f;
	fanout_begin(f);
	one_turn(loop);
	assert_int_equal(p.calls, 1);
	assert_int_equal(fanout_owed(f, 0), 2);
	fanout_settle(f, 0);
	one_turn(loop);
	assert_int_equal(p.calls, 1);
	fanout_settle(f, 0);
	one_turn(loop);
	assert_int_equal(p.calls, 2);
	fanout_free(f);
	loop_free(loop);
}

static void done_may_free_the_barrier(void **state)
{
	struct loop *loop = loop_new();
	struct probe p = {.free_in_done = 1};

	p.f = fanout_new(loop, 1, on_done, &p);
	fanout_begin(p.f);
	one_turn(loop);
	assert_int_equal(p.calls, 1);
	assert_null(p.f);
	loop_free(loop);
}

static void close_cancels_a_pending_done(void **state)
{
	struct loop *loop = loop_new();
	struct probe p = {0};
	struct fanout *f = fanout_new(loop, 1, on_done, &p);

	fanout_expect(f, 0, 1);
	fanout_begin(f);
	fanout_settle(f, 0);
	fanout_close(f);
	assert_int_equal(loop_run_once(loop, 0), 0);
	assert_int_equal(p.calls, 0);
	fanout_free(f);
	loop_free(loop);
}

static void free_cancels_a_pending_done(void **state)
{
	struct loop *loop = loop_new();
	struct probe p = {0};
	struct fanout *f = fanout_new(loop, 1, on_done, &p);

	fanout_begin(f);
	fanout_free(f);
	fanout_free(NULL);
	assert_int_equal(loop_run_once(loop, 0), 0);
	assert_int_equal(p.calls, 0);
	loop_free(loop);
}

static void members_out_of_range_are_ignored(void **state)
{
	struct loop *loop = loop_new();
	struct probe p = {0};
	struct fanout *f = fanout_new(loop, 1, on_done, &p);

	fanout_expect(f, 5, 1);
	fanout_settle(f, 5);
	fanout_settle_all(f, 5);
	assert_int_equal(fanout_owed(f, 5), 0);
	assert_int_equal(fanout_pending(f), 0);
	fanout_free(f);
	loop_free(loop);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(done_runs_on_the_next_turn_not_inside_settle),
	    cmocka_unit_test(done_runs_once_per_phase),
	    cmocka_unit_test(a_member_settled_twice_is_not_counted_twice),
	    cmocka_unit_test(settle_all_takes_every_answer_of_a_failed_member),
	    cmocka_unit_test(a_phase_with_nothing_expected_advances_on_the_next_turn),
	    cmocka_unit_test(an_answer_expected_after_the_turn_was_set_is_waited_for),
	    cmocka_unit_test(settling_before_begin_runs_nothing_until_begin),
	    cmocka_unit_test(done_may_begin_the_next_phase),
	    cmocka_unit_test(done_may_free_the_barrier),
	    cmocka_unit_test(close_cancels_a_pending_done),
	    cmocka_unit_test(free_cancels_a_pending_done),
	    cmocka_unit_test(members_out_of_range_are_ignored),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
