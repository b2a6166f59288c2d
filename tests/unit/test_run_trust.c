/* SPDX-License-Identifier: MIT */
/* test_run_trust.c - the node's check that a run's directory (and its hang/,
 * first on PYTHONPATH) is its user's alone, on real directories in /tmp. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cd.h"
#include "jobs/run_trust.h"

#define OTHER_UID 2902

static char top[64];

static void rm_rf(const char *path)
{
	char cmd[PATH_MAX];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	if (system(cmd) != 0)
		fail_msg("%s", cmd);
}

static int fresh_top(void **state)
{
	snprintf(top, sizeof(top), "/tmp/cd-trust-XXXXXX");
	if (!mkdtemp(top))
		return -1;
	return 0;
}

static int drop_top(void **state)
{
	rm_rf(top);
	return 0;
}

/* top/rel made with mode (chmod: the umask plays no part) */
static void dir(const char *rel, mode_t mode, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", top, rel);
	assert_int_equal(mkdir(out, 0700), 0);
	assert_int_equal(chmod(out, mode), 0);
}

static void expect_refused(const char *path, const char *why)
{
	char msg[CD_ERRLEN];

	assert_int_equal(run_trust_dir(path, geteuid(), msg, sizeof(msg)), -1);
	if (!strstr(msg, why))
		fail_msg("\"%s\" does not say \"%s\"", msg, why);
}

static void a_directory_of_the_user_writable_by_nobody_else_is_trusted(void **state)
{
	char run[PATH_MAX], hang[PATH_MAX], msg[CD_ERRLEN];

	dir("run", 0755, run, sizeof(run));
	dir("run/hang", 0700, hang, sizeof(hang));
	assert_int_equal(run_trust_dir(run, geteuid(), msg, sizeof(msg)), 0);
	assert_int_equal(run_trust_dir(hang, geteuid(), msg, sizeof(msg)), 0);
}

static void a_group_writable_run_dir_is_refused_naming_it_and_its_mode(void **state)
{
	char run[PATH_MAX], want[PATH_MAX + 80];

	dir("run", 0775, run, sizeof(run));
	snprintf(want, sizeof(want), "%s is writable by its group or by others (mode 0775)", run);
	expect_refused(run, want);
}

static void a_world_writable_hang_dir_is_refused(void **state)
{
	char run[PATH_MAX], hang[PATH_MAX], want[PATH_MAX + 80];

	dir("run", 0755, run, sizeof(run));
	dir("run/hang", 0777, hang, sizeof(hang));
	snprintf(want, sizeof(want), "%s is writable by its group or by others (mode 0777)", hang);
	expect_refused(hang, want);
}

static void a_symlink_is_refused_even_to_a_good_directory(void **state)
{
	char run[PATH_MAX], link[PATH_MAX], want[PATH_MAX + 80];

	dir("run", 0755, run, sizeof(run));
	snprintf(link, sizeof(link), "%s/link", top);
	assert_int_equal(symlink(run, link), 0);
	snprintf(want, sizeof(want), "%s is a symlink or not a directory", link);
	expect_refused(link, want);
}

static void a_directory_of_another_user_is_refused(void **state)
{
	char run[PATH_MAX], want[PATH_MAX + 80];

	if (geteuid() != 0)
		skip(); /* chown needs root */
	dir("run", 0755, run, sizeof(run));
	assert_int_equal(chown(run, OTHER_UID, OTHER_UID), 0);
	snprintf(want, sizeof(want), "%s is owned by uid %d, not by uid 0 who runs the job", run,
	         OTHER_UID);
	expect_refused(run, want);
}

static void a_parent_others_can_write_without_the_sticky_bit_is_refused(void **state)
{
	char parent[PATH_MAX], run[PATH_MAX], msg[CD_ERRLEN], want[3 * PATH_MAX];

	dir("shared", 0777, parent, sizeof(parent));
	dir("shared/run", 0755, run, sizeof(run));
	snprintf(want, sizeof(want),
	         "%s, above %s, is writable by its group or by others (mode 0777", parent, run);
	expect_refused(run, want);
	/* the sticky bit (/tmp's 1777): nobody else may rename run */
	assert_int_equal(chmod(parent, 01777), 0);
	assert_int_equal(run_trust_dir(run, geteuid(), msg, sizeof(msg)), 0);
}

static void a_parent_of_another_user_is_refused(void **state)
{
	char parent[PATH_MAX], run[PATH_MAX], want[3 * PATH_MAX];

	if (geteuid() != 0)
		skip();
	dir("theirs", 0755, parent, sizeof(parent));
	dir("theirs/run", 0755, run, sizeof(run));
	assert_int_equal(chown(parent, OTHER_UID, OTHER_UID), 0);
	snprintf(want, sizeof(want), "%s, above %s, is owned by uid %d", parent, run, OTHER_UID);
	expect_refused(run, want);
}

static void an_absent_dir_nobody_else_could_make_is_trusted_else_refused(void **state)
{
	char mine[PATH_MAX], shared[PATH_MAX], path[PATH_MAX + 16], msg[CD_ERRLEN];

	dir("mine", 0755, mine, sizeof(mine));
	snprintf(path, sizeof(path), "%s/run/hang", mine);
	assert_int_equal(run_trust_dir(path, geteuid(), msg, sizeof(msg)), 1);
	/* in a sticky 1777 directory anyone may make a new name */
	dir("shared", 01777, shared, sizeof(shared));
	snprintf(path, sizeof(path), "%s/run/hang", shared);
	expect_refused(path, "can be written by another user");
}

static void the_agent_answers_unsafe_with_the_reason(void **state)
{
	char run[PATH_MAX], msg[CD_ERRLEN];
	const char *code = NULL;
	json_t *req, *res;

	dir("run", 0755, run, sizeof(run));
	req = json_pack("{s[s]}", "paths", run);
	res = run_trust_agent_check(req, &code, msg, sizeof(msg));
	assert_non_null(res);
	assert_false(json_is_true(json_object_get(res, "absent")));
	json_decref(res);
	assert_int_equal(chmod(run, 0770), 0);
	assert_null(run_trust_agent_check(req, &code, msg, sizeof(msg)));
	assert_string_equal(code, "unsafe");
	assert_non_null(strstr(msg, "(mode 0770): no code runs from a directory another user can"));
	json_decref(req);
	req = json_pack("{s[]}", "paths");
	assert_null(run_trust_agent_check(req, &code, msg, sizeof(msg)));
	assert_string_equal(code, "bad-request");
	json_decref(req);
	req = json_pack("{s[s]}", "paths", "relative/run");
	assert_null(run_trust_agent_check(req, &code, msg, sizeof(msg)));
	assert_string_equal(code, "bad-request");
	json_decref(req);
}

#define T(t) cmocka_unit_test_setup_teardown(t, fresh_top, drop_top)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(a_directory_of_the_user_writable_by_nobody_else_is_trusted),
	    T(a_group_writable_run_dir_is_refused_naming_it_and_its_mode),
	    T(a_world_writable_hang_dir_is_refused),
	    T(a_symlink_is_refused_even_to_a_good_directory),
	    T(a_directory_of_another_user_is_refused),
	    T(a_parent_others_can_write_without_the_sticky_bit_is_refused),
	    T(a_parent_of_another_user_is_refused),
	    T(an_absent_dir_nobody_else_could_make_is_trusted_else_refused),
	    T(the_agent_answers_unsafe_with_the_reason),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
