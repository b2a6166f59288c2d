/* test_sudocmd.c - the root commands of `clusterdoc fix` and their sudoers
 * lines (fixers/sudocmd.h). Run from the top of the tree, as `make unit`
 * does: the test cluster's sudoers fragment must be what --sudoers prints. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "fsutil.h"
#include "fixers/sudocmd.h"

static void the_test_clusters_fragment_is_what_sudoers_prints(void **state)
{
	unsigned char *text = NULL;
	char err[CD_ERRLEN] = "", *want = sudocmd_sudoers("cdadmin");
	size_t len = 0;

	if (cd_read_file("tests/cluster/sudoers.cdadmin", 1 << 20, &text, &len, err, sizeof(err)) <
	    0)
		fail_msg("%s", err);
	assert_int_equal(len, strlen(want));
	assert_memory_equal(text, want, len);
	free(text);
	free(want);
}

static void a_root_file_is_copied_filled_and_renamed_beside_itself(void **state)
{
	struct sudocmd c;

	assert_int_equal(sudocmd_file(SUDOCMD_COPY, "/etc/hosts", 0644, &c), 0);
	assert_string_equal(c.argv[0], "cp");
	assert_string_equal(c.argv[1], "-p");
	assert_string_equal(c.argv[2], "/etc/hosts");
	assert_string_equal(c.argv[3], "/etc/.hosts.clusterdoc");
	assert_null(c.argv[4]);
	assert_int_equal(sudocmd_file(SUDOCMD_CHMOD, "/etc/x.conf", 0644, &c), 0);
	assert_string_equal(c.argv[1], "0644");
	assert_int_equal(sudocmd_file(SUDOCMD_RENAME, "relative", 0644, &c), -1);
}

static void steps_of_an_existing_file_a_new_one_and_a_removal(void **state)
{
	enum sudocmd_step s[8];

	assert_int_equal(sudocmd_file_steps(1, 0, s), 5);
	assert_int_equal(s[0], SUDOCMD_COPY);
	assert_int_equal(s[3], SUDOCMD_IN_PLACE);
	assert_int_equal(sudocmd_file_steps(0, 0, s), 4);
	assert_int_equal(s[1], SUDOCMD_CHMOD);
	assert_int_equal(sudocmd_file_steps(1, 1, s), 1);
	assert_int_equal(s[0], SUDOCMD_REMOVE);
}

static void an_nft_rule_gets_the_tables_line_with_the_nodes_path(void **state)
{
	const char *argv[] = {"nft",    "--echo",  "--handle",         "insert",
	                      "rule",   "inet",    "filter",           "input",
	                      "accept", "comment", "clusterdoc fix 1", NULL};
	char line[512];

	assert_int_equal(sudocmd_line_for("cdplain", argv, "/sbin/nft", line, sizeof(line)), 0);
	assert_string_equal(line,
	                    "cdplain ALL=(root) NOPASSWD: /sbin/nft --echo --handle insert rule *");
}

static void a_file_step_gets_its_exact_line(void **state)
{
	const char *argv[] = {"tee", "/etc/.hosts.clusterdoc", NULL};
	char line[512];

	assert_int_equal(sudocmd_line_for("u", argv, NULL, line, sizeof(line)), 0);
	assert_string_equal(line, "u ALL=(root) NOPASSWD: /usr/bin/tee /etc/.hosts.clusterdoc");
}

static void the_port_range_line_allows_no_other_sysctl(void **state)
{
	const char *ok[] = {"sysctl", "-w", "net.ipv4.ip_local_port_range=40000 40999", NULL};
	const char *low[] = {"sysctl", "-w", "net.ipv4.ip_local_port_range=1024 9999", NULL};
	const char *more[] = {"sysctl", "-w", "net.ipv4.ip_local_port_range=40000 40999",
	                      "kernel.core_pattern=|/tmp/x", NULL};
	char line[512];

	assert_int_equal(sudocmd_line_for("u", ok, NULL, line, sizeof(line)), 0);
	assert_non_null(strstr(line, "ip_local_port_range\\=[1-6]"));
	assert_int_equal(sudocmd_line_for("u", low, NULL, line, sizeof(line)), 0);
	assert_int_equal(sudocmd_line_for("u", more, NULL, line, sizeof(line)), -1);
}

static void a_command_no_line_allows_is_said_so(void **state)
{
	const char *argv[] = {"rm", "-f", "/etc/hosts", NULL};
	char line[512];

	assert_int_equal(sudocmd_line_for("u", argv, NULL, line, sizeof(line)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(the_test_clusters_fragment_is_what_sudoers_prints),
	    cmocka_unit_test(a_root_file_is_copied_filled_and_renamed_beside_itself),
	    cmocka_unit_test(steps_of_an_existing_file_a_new_one_and_a_removal),
	    cmocka_unit_test(an_nft_rule_gets_the_tables_line_with_the_nodes_path),
	    cmocka_unit_test(a_file_step_gets_its_exact_line),
	    cmocka_unit_test(the_port_range_line_allows_no_other_sysctl),
	    cmocka_unit_test(a_command_no_line_allows_is_said_so),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
