/* SPDX-License-Identifier: MIT */
/*
 * test_sshpool_end.c - ending a node whose agent stopped answering
 * (core/sshpool_end.c): the end script's words parsed among login noise,
 * and the script itself run here against a stopped "agent" and a job's
 * process group, which it continues, ends and finds gone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cd.h"
#include "sshpool_internal.h"

static void parse_reads_the_cdend_lines_among_login_noise(void **state)
{
	static const char out[] = "Welcome to node2\n"
	                          "CDEND agent T\n"
	                          "CDEND job 812 813\n"
	                          "CDEND left\n"
	                          "CDEND end\n";
	struct pool_end_found f;

	assert_int_equal(pool_end_parse(out, sizeof(out) - 1, &f), 0);
	assert_true(f.have_agent);
	assert_string_equal(f.agent_state, "T");
	assert_string_equal(f.job, "812 813");
	assert_string_equal(f.left, "");
	assert_true(f.complete);
}

static void parse_of_a_gone_agent_and_pids_left(void **state)
{
	static const char out[] = "CDEND agent\nCDEND job\nCDEND left 790 812\nCDEND end";
	struct pool_end_found f;

	assert_int_equal(pool_end_parse(out, sizeof(out) - 1, &f), 0);
	assert_true(f.have_agent);
	assert_string_equal(f.agent_state, "");
	assert_string_equal(f.left, "790 812");
}

static void parse_of_a_script_cut_short_is_incomplete(void **state)
{
	static const char out[] = "CDEND agent S\nCDEND job 812\n";
	struct pool_end_found f;

	assert_int_equal(pool_end_parse(out, sizeof(out) - 1, &f), CD_ERR_PARSE);
	assert_string_equal(f.agent_state, "S");
	assert_false(f.complete);
}

/* A child in its own process group that sleeps (SIGSTOPped when stop). */
static pid_t spawn_group(int stop)
{
	pid_t p = fork();

	assert_true(p >= 0);
	if (p == 0) {
		setpgid(0, 0);
		execlp("sleep", "sleep", "60", (char *)NULL);
		_exit(127);
	}
	setpgid(p, p);
	if (stop)
		kill(p, SIGSTOP);
	return p;
}

static int is_gone(pid_t p)
{
	/* the script saw our children die: reap them here */
	return waitpid(p, NULL, WNOHANG) == p;
}

static void the_script_continues_and_ends_a_stopped_agent_and_its_job(void **state)
{
	pid_t agent = spawn_group(1), job = spawn_group(0);
	char *cmd, out[4096];
	struct pool_end_found f;
	size_t len = 0;
	FILE *sh;

	usleep(100 * 1000);
	cmd = pool_end_command(agent, 0, job, 500);
	sh = popen(cmd, "r");
	assert_non_null(sh);
	while (len < sizeof(out) - 1) {
		size_t n = fread(out + len, 1, sizeof(out) - 1 - len, sh);

		if (n == 0)
			break;
		len += n;
	}
	out[len] = 0;
	pclose(sh);
	free(cmd);
	assert_int_equal(pool_end_parse(out, len, &f), 0);
	assert_string_equal(f.agent_state, "T");
	assert_int_equal(atoi(f.job), job);
	assert_string_equal(f.left, "");
	assert_true(is_gone(agent));
	assert_true(is_gone(job));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(parse_reads_the_cdend_lines_among_login_noise),
	    cmocka_unit_test(parse_of_a_gone_agent_and_pids_left),
	    cmocka_unit_test(parse_of_a_script_cut_short_is_incomplete),
	    cmocka_unit_test(the_script_continues_and_ends_a_stopped_agent_and_its_job),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
