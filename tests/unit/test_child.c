/* SPDX-License-Identifier: MIT */
/* test_child.c - ending a child gently (child_end) and every child at once
 * (child_kill_all), core/child.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cd.h"
#include "child.h"

/* The first line the child printed (at most 5 s), into line. */
static void read_line(struct child *c, char *line, size_t len)
{
	int64_t end = cd_now_ms() + 5000;
	size_t n = 0;

	while (n < len - 1 && cd_now_ms() < end) {
		struct pollfd p = {.fd = c->out_fd, .events = POLLIN};
		ssize_t r;

		poll(&p, 1, 100);
		r = read(c->out_fd, line + n, 1);
		if (r == 1 && line[n] == '\n')
			break;
		if (r == 1)
			n++;
	}
	line[n] = '\0';
}

/* 1 once pid is dead (at most 3 s): gone, or a zombie its new parent has
 * not reaped yet (it is not ours to reap). */
static int gone(pid_t pid)
{
	int64_t end = cd_now_ms() + 3000;
	char path[64], stat[256];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	while (cd_now_ms() < end) {
		FILE *f = fopen(path, "r");
		char *close_paren;

		if (!f)
			return 1;
		stat[0] = '\0';
		if (!fgets(stat, sizeof(stat), f))
			stat[0] = '\0';
		fclose(f);
		close_paren = strrchr(stat, ')');
		if (close_paren && close_paren[1] == ' ' && close_paren[2] == 'Z')
			return 1;
		poll(NULL, 0, 20);
	}
	return 0;
}

static void child_end_sends_the_signal_first_and_the_child_ends_of_it(void **state)
{
	char *argv[] = {"sh", "-c",
	                "trap 'echo cleaned; exit 7' TERM; echo ready; "
	                "while :; do sleep 0.05; done",
	                NULL};
	char err[CD_ERRLEN], line[64];
	struct child c;

	assert_int_equal(child_start(&c, argv, NULL, err, sizeof(err)), 0);
	read_line(&c, line, sizeof(line));
	assert_string_equal(line, "ready");
	child_end(&c, SIGTERM, 5000);
	assert_true(WIFEXITED(c.status));
	assert_int_equal(WEXITSTATUS(c.status), 7);
	assert_int_equal(c.pid, 0);
	assert_int_equal(c.out_fd, -1);
}

static void child_end_kills_a_child_that_ignores_the_signal_after_the_grace(void **state)
{
	struct child_opts o = {.own_group = 1};
	char *argv[] = {"sh", "-c", "trap '' TERM; echo ready; sleep 30", NULL};
	char err[CD_ERRLEN], line[64];
	struct child c;
	int64_t t0;

	assert_int_equal(child_start_opts(&c, argv, &o, err, sizeof(err)), 0);
	read_line(&c, line, sizeof(line));
	assert_string_equal(line, "ready");
	t0 = cd_now_ms();
	child_end(&c, SIGTERM, 300);
	assert_true(cd_now_ms() - t0 >= 300);
	assert_true(cd_now_ms() - t0 < 300 + CHILD_REAP_GRACE_MS);
	assert_true(WIFSIGNALED(c.status));
	assert_int_equal(WTERMSIG(c.status), SIGKILL);
}

static void child_end_of_a_child_already_gone_keeps_its_status(void **state)
{
	char *argv[] = {"sh", "-c", "exit 3", NULL};
	char err[CD_ERRLEN];
	struct child c;
	int64_t end = cd_now_ms() + 5000;

	assert_int_equal(child_start(&c, argv, NULL, err, sizeof(err)), 0);
	while (!child_reap(&c) && cd_now_ms() < end)
		poll(NULL, 0, 10);
	child_end(&c, SIGTERM, 5000);
	assert_true(WIFEXITED(c.status));
	assert_int_equal(WEXITSTATUS(c.status), 3);
}

/* What a process's SIGTERM handler does: each child started, and the
 * children its own-group children started, are killed. */
static void child_kill_all_kills_every_child_and_their_groups(void **state)
{
	struct child_opts o = {.own_group = 1};
	char *grouped[] = {"sh", "-c", "sleep 30 & echo $!; wait", NULL};
	char *plain[] = {"sleep", "30", NULL};
	char err[CD_ERRLEN], line[64];
	struct child g, p;
	pid_t grandchild;
	int64_t end = cd_now_ms() + 5000;

	assert_int_equal(child_start_opts(&g, grouped, &o, err, sizeof(err)), 0);
	assert_int_equal(child_start(&p, plain, NULL, err, sizeof(err)), 0);
	read_line(&g, line, sizeof(line));
	grandchild = (pid_t)atoi(line);
	assert_true(grandchild > 0);
	child_kill_all();
	while ((!child_reap(&g) || !child_reap(&p)) && cd_now_ms() < end)
		poll(NULL, 0, 10);
	assert_true(WIFSIGNALED(g.status) && WTERMSIG(g.status) == SIGKILL);
	assert_true(WIFSIGNALED(p.status) && WTERMSIG(p.status) == SIGKILL);
	assert_true(gone(grandchild));
	child_fini(&g);
	child_fini(&p);
}

/* A reaped child leaves the table: child_kill_all never reaches a pid
 * the system may have given to another process since. */
static void a_reaped_child_is_not_killed_again(void **state)
{
	char *argv[] = {"true", NULL};
	char err[CD_ERRLEN];
	struct child c;
	int64_t end = cd_now_ms() + 5000;

	for (int i = 0; i < CHILD_TRACK_MAX + 8; i++) {
		assert_int_equal(child_start(&c, argv, NULL, err, sizeof(err)), 0);
		while (!child_reap(&c) && cd_now_ms() < end)
			poll(NULL, 0, 1);
		child_fini(&c);
	}
	/* the table did not fill up: a new child is still recorded */
	{
		char *sl[] = {"sleep", "30", NULL};

		assert_int_equal(child_start(&c, sl, NULL, err, sizeof(err)), 0);
		child_kill_all();
		end = cd_now_ms() + 5000;
		while (!child_reap(&c) && cd_now_ms() < end)
			poll(NULL, 0, 10);
		assert_true(WIFSIGNALED(c.status) && WTERMSIG(c.status) == SIGKILL);
		child_fini(&c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(child_end_sends_the_signal_first_and_the_child_ends_of_it),
	    cmocka_unit_test(child_end_kills_a_child_that_ignores_the_signal_after_the_grace),
	    cmocka_unit_test(child_end_of_a_child_already_gone_keeps_its_status),
	    cmocka_unit_test(child_kill_all_kills_every_child_and_their_groups),
	    cmocka_unit_test(a_reaped_child_is_not_killed_again),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
