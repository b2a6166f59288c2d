/* SPDX-License-Identifier: MIT */
/* test_core.c - bounded buffers, the event loop's timers and fds, SHA-256. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "cd.h"
#include "loop.h"
#include "sha256.h"

static void buf_append_past_cap_fails_and_keeps_content(void **state)
{
	struct buf b;

	buf_init(&b, 8);
	assert_int_equal(buf_append_str(&b, "12345"), 0);
	assert_int_equal(buf_append_str(&b, "6789"), CD_ERR_TOOBIG);
	assert_int_equal(b.len, 5);
	assert_string_equal(b.data, "12345");
	buf_fini(&b);
}

static void buf_line_finds_only_complete_lines(void **state)
{
	struct buf b;
	const char *line;

	buf_init(&b, 64);
	buf_append_str(&b, "one\ntw");
	assert_int_equal(buf_line(&b, &line), 3);
	assert_memory_equal(line, "one", 3);
	buf_consume(&b, 4);
	assert_int_equal(buf_line(&b, &line), -1);
	buf_fini(&b);
}

static void fired(struct loop *loop, void *arg)
{
	int *order = arg;

	order[order[0]++ + 1] = order[10];
	order[10]++;
}

static void timers_fire_in_due_order(void **state)
{
	struct loop *loop = loop_new();
	int order[11] = {0};
	int64_t t0 = cd_now_ms();

	order[10] = 100;
	loop_timer_add(loop, 30, fired, order);
	loop_timer_add(loop, 10, fired, order);
	loop_run(loop);
	assert_int_equal(order[0], 2);
	assert_true(cd_now_ms() - t0 >= 30);
	loop_free(loop);
}

static void never(struct loop *loop, void *arg)
{
	fail_msg("a cancelled timer fired");
}

static void cancelled_timer_does_not_fire(void **state)
{
	struct loop *loop = loop_new();
	uint64_t id = loop_timer_add(loop, 5, never, NULL);

	loop_timer_cancel(loop, id);
	assert_int_equal(loop_run_once(loop, 20), 0);
	loop_free(loop);
}

static void on_readable(struct loop *loop, int fd, short revents, void *arg)
{
	char c;

	assert_true(revents & POLLIN);
	assert_int_equal(read(fd, &c, 1), 1);
	*(char *)arg = c;
	loop_unwatch(loop, fd);
}

static void readable_fd_runs_its_callback(void **state)
{
	struct loop *loop = loop_new();
	int p[2];
	char got = 0;

	assert_int_equal(pipe(p), 0);
	loop_watch(loop, p[0], POLLIN, on_readable, &got);
	assert_int_equal(write(p[1], "z", 1), 1);
	loop_run(loop);
	assert_int_equal(got, 'z');
	close(p[0]);
	close(p[1]);
	loop_free(loop);
}

static void fired_nothing(struct loop *loop, void *arg)
{
}

static void busy_300ms(struct loop *loop, void *arg)
{
	usleep(300000);
}

static void note_lateness(struct loop *loop, void *arg)
{
	*(int64_t *)arg = loop_timer_late_ms(loop);
}

/* A turn that keeps the loop busy makes the next timer late: the loop's lag,
 * seen by the late timer and kept in loop_stats. */
static void a_late_timer_is_the_loops_lag(void **state)
{
	struct loop *loop = loop_new();
	struct loop_stats st;
	int64_t late = -1;

	loop_timer_add(loop, 0, busy_300ms, NULL);
	loop_timer_add(loop, 50, note_lateness, &late);
	loop_run(loop);
	loop_stats(loop, &st);
	assert_true(late >= 200 && late < 1000);
	assert_int_equal(st.max_late_ms, late);
	assert_int_equal(loop_timer_late_ms(loop), 0); /* outside a timer */
	loop_free(loop);
}

/* With loop_watch_lag, a wake from poll past its due time counts too, and
 * the loop still ends when nothing is left. */
static void an_idle_loop_watching_lag_reports_none_and_ends(void **state)
{
	struct loop *loop = loop_new();
	struct loop_stats st;

	loop_watch_lag(loop, 20);
	loop_timer_add(loop, 100, fired_nothing, NULL);
	loop_run(loop);
	loop_stats(loop, &st);
	assert_true(st.max_late_ms < 100);
	assert_true(st.turns >= 4); /* woke every 20 ms */
	loop_free(loop);
}

/* A request in flight: its reply on a pipe, its deadline a timer. */
struct inflight {
	struct loop *loop;
	uint64_t deadline;
	int replied, timed_out;
};

static void inflight_reply(struct loop *loop, int fd, short revents, void *arg)
{
	struct inflight *f = arg;
	char c;

	if (read(fd, &c, 1) == 1)
		f->replied = 1;
	loop_timer_cancel(loop, f->deadline);
	loop_unwatch(loop, fd);
}

static void inflight_timeout(struct loop *loop, void *arg)
{
	struct inflight *f = arg;

	f->timed_out = 1;
	loop_stop(loop);
}

/* The stall rule: a process stopped (SIGSTOP) past a deadline, whose reply
 * came while it was stopped, reads the reply on resume instead of judging
 * the deadline by the time it did not run. */
static void a_stopped_loop_reads_the_reply_before_judging_the_deadline(void **state)
{
	struct inflight f = {.loop = loop_new()};
	struct loop_stats st;
	int p[2];
	pid_t child;

	assert_int_equal(pipe(p), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		pid_t head = getppid();

		usleep(50000);
		kill(head, SIGSTOP);
		usleep(100000);
		if (write(p[1], "r", 1) != 1) /* the reply, while the head is stopped */
			_exit(1);
		usleep(600000);
		kill(head, SIGCONT);
		_exit(0);
	}
	loop_watch_lag(f.loop, 20);
	loop_watch_stall(f.loop, 200);
	f.deadline = loop_timer_add(f.loop, 300, inflight_timeout, &f);
	loop_watch(f.loop, p[0], POLLIN, inflight_reply, &f);
	loop_run(f.loop);
	waitpid(child, NULL, 0);
	loop_stats(f.loop, &st);
	assert_true(f.replied);
	assert_false(f.timed_out);
	assert_true(st.max_late_ms >= 400); /* the stop still counts as lag */
	close(p[0]);
	close(p[1]);
	loop_free(f.loop);
}

static void stop_300ms_on_purpose(struct loop *loop, void *arg)
{
	usleep(300000);
	loop_note_stall(loop, 300);
}

static void note_when(struct loop *loop, void *arg)
{
	*(int64_t *)arg = cd_now_ms();
}

/* loop_note_stall: a gap the loop could not see moves every timer by it. */
static void a_noted_stall_moves_every_timer_later(void **state)
{
	struct loop *loop = loop_new();
	int64_t start = cd_now_ms(), fired = 0;

	loop_timer_add(loop, 0, stop_300ms_on_purpose, NULL);
	loop_timer_add(loop, 100, note_when, &fired);
	loop_run(loop);
	assert_true(fired - start >= 400);
	loop_free(loop);
}

struct reuse {
	int old_fd, new_fds[2], new_called;
};

static void cb_old(struct loop *loop, int fd, short revents, void *arg)
{
}

static void cb_new(struct loop *loop, int fd, short revents, void *arg)
{
	((struct reuse *)arg)->new_called = 1;
}

/* Runs after poll() saw old_fd readable, before fds are dispatched. */
static void close_and_reuse(struct loop *loop, void *arg)
{
	struct reuse *r = arg;

	loop_unwatch(loop, r->old_fd);
	close(r->old_fd);
	assert_int_equal(pipe(r->new_fds), 0);
	assert_int_equal(r->new_fds[0], r->old_fd); /* the lowest free number */
	loop_watch(loop, r->new_fds[0], POLLIN, cb_new, r);
}

static void event_for_a_closed_fd_is_not_given_to_its_new_owner(void **state)
{
	struct loop *loop = loop_new();
	struct reuse r = {0};
	int p[2];

	assert_int_equal(pipe(p), 0);
	r.old_fd = p[0];
	assert_int_equal(write(p[1], "x", 1), 1);
	loop_watch(loop, p[0], POLLIN, cb_old, &r);
	loop_timer_add(loop, 0, close_and_reuse, &r);
	loop_run_once(loop, 100);
	assert_int_equal(r.new_called, 0);
	close(p[1]);
	close(r.new_fds[0]);
	close(r.new_fds[1]);
	loop_free(loop);
}

static void sha256_matches_fips_vectors(void **state)
{
	unsigned char d[32];
	char hex[SHA256_HEX_LEN];
	struct sha256 s;
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";

	sha256_init(&s);
	sha256_update(&s, "abc", 3);
	sha256_final(&s, d);
	sha256_hex(d, hex);
	assert_string_equal(hex,
	                    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	sha256_init(&s);
	sha256_update(&s, two, strlen(two));
	sha256_final(&s, d);
	sha256_hex(d, hex);
	assert_string_equal(hex,
	                    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static void abridge_keeps_short_text_and_cuts_the_middle_of_long_text(void **state)
{
	char buf[16];

	assert_string_equal(cd_abridge("node1", 11, buf, sizeof(buf)), "node1");
	assert_string_equal(cd_abridge("abcdefghijkl", 11, buf, sizeof(buf)), "abcd...ijkl");
	assert_int_equal(strlen(cd_abridge("abcdefghijklmnopqrstuvwxyz", 64, buf, sizeof(buf))),
	                 15);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(buf_append_past_cap_fails_and_keeps_content),
	    cmocka_unit_test(buf_line_finds_only_complete_lines),
	    cmocka_unit_test(timers_fire_in_due_order),
	    cmocka_unit_test(cancelled_timer_does_not_fire),
	    cmocka_unit_test(a_late_timer_is_the_loops_lag),
	    cmocka_unit_test(an_idle_loop_watching_lag_reports_none_and_ends),
	    cmocka_unit_test(a_stopped_loop_reads_the_reply_before_judging_the_deadline),
	    cmocka_unit_test(a_noted_stall_moves_every_timer_later),
	    cmocka_unit_test(readable_fd_runs_its_callback),
	    cmocka_unit_test(event_for_a_closed_fd_is_not_given_to_its_new_owner),
	    cmocka_unit_test(sha256_matches_fips_vectors),
	    cmocka_unit_test(abridge_keeps_short_text_and_cuts_the_middle_of_long_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
