/* SPDX-License-Identifier: MIT */
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

#define RUN     "20261204-211207-3f9a0c1b2d"
#define COMMENT "\"clusterdoc fix " RUN "\""
#define NFT_ADD "nft", "--echo", "--handle", "insert", "rule"

/* 0 when some line of the table allows argv */
static int allowed(const char *const *argv)
{
	char line[4096];

	return sudocmd_line_for("u", argv, NULL, line, sizeof(line));
}

static void an_nft_rule_gets_the_tables_line_with_the_nodes_path(void **state)
{
	const char *argv[] = {
	    NFT_ADD,       "inet", "filter",  "input", "iifname", "{ eth0, lo }", "ip",    "saddr",
	    "10.0.0.0/24", "meta", "l4proto", "tcp",   "accept",  "comment",      COMMENT, NULL};
	char line[4096];

	assert_int_equal(sudocmd_line_for("cdplain", argv, "/sbin/nft", line, sizeof(line)), 0);
	assert_non_null(strstr(line, "cdplain ALL=(root) NOPASSWD: /sbin/nft ^--echo --handle "
	                             "insert rule (ip|ip6|inet) "));
}

static void the_nft_rule_of_each_shape_the_fixer_builds_is_allowed(void **state)
{
	const char *all_tcp[] = {
	    NFT_ADD,  "ip",      "filter",          "INPUT", "iifname", "{ enp1s0f0, lo }",
	    "ip",     "saddr",   "192.168.10.0/24", "meta",  "l4proto", "tcp",
	    "accept", "comment", COMMENT,           NULL};
	const char *ports6[] = {
	    NFT_ADD,       "inet",         "firewalld", "filter_INPUT",
	    "iifname",     "{ eth0, lo }", "ip6",       "saddr",
	    "fd00:1::/64", "tcp",          "dport",     "{ 29500, 40000-40999 }",
	    "accept",      "comment",      COMMENT,     NULL};
	const char *del[] = {"nft",   "delete", "rule", "inet", "filter",
	                     "input", "handle", "17",   NULL};
	const char *list[] = {"nft", "--handle", "list", "chain", "inet", "filter", "input", NULL};

	assert_int_equal(allowed(all_tcp), 0);
	assert_int_equal(allowed(ports6), 0);
	assert_int_equal(allowed(del), 0);
	assert_int_equal(allowed(list), 0);
}

static void an_nft_rule_carrying_a_second_command_is_refused(void **state)
{
	/* fault-run-3 case 1: the tail of the old "insert rule *" line */
	const char *flush[] = {NFT_ADD,  "inet",    "filter",
	                       "input",  "iifname", "{ eth0, lo }",
	                       "ip",     "saddr",   "10.0.0.0/24",
	                       "meta",   "l4proto", "tcp",
	                       "accept", "comment", "\"x\"; flush ruleset",
	                       NULL};
	const char *shadow[] = {NFT_ADD,   "inet",    "filter",          "input",
	                        "accept;", "include", "\"/etc/shadow\"", NULL};
	const char *newline[] = {NFT_ADD,  "inet",    "filter",
	                         "input",  "iifname", "{ eth0, lo }",
	                         "ip",     "saddr",   "10.0.0.0/24",
	                         "meta",   "l4proto", "tcp",
	                         "accept", "comment", COMMENT "\nflush ruleset",
	                         NULL};

	assert_int_equal(allowed(flush), -1);
	assert_int_equal(allowed(shadow), -1);
	assert_int_equal(allowed(newline), -1);
}

static void an_nft_listing_or_delete_carrying_include_is_refused(void **state)
{
	const char *list[] = {"nft",    "--handle", "list",    "chain",           "inet",
	                      "filter", "input;",   "include", "\"/etc/shadow\"", NULL};
	const char *del[] = {"nft",    "delete", "rule",  "inet",    "filter", "input",
	                     "handle", "1;",     "flush", "ruleset", NULL};

	assert_int_equal(allowed(list), -1);
	assert_int_equal(allowed(del), -1);
}

static void nft_flush_ruleset_and_a_rule_file_are_refused(void **state)
{
	const char *flush[] = {"nft", "flush", "ruleset", NULL};
	const char *file[] = {"nft", "-f", "/etc/shadow", NULL};

	assert_int_equal(allowed(flush), -1);
	assert_int_equal(allowed(file), -1);
}

static void iptables_rule_is_allowed_and_modprobe_is_refused(void **state)
{
	const char *rule[] = {"iptables",
	                      "-I",
	                      "INPUT",
	                      "-i",
	                      "eth0",
	                      "-s",
	                      "10.0.0.0/24",
	                      "-p",
	                      "tcp",
	                      "-m",
	                      "multiport",
	                      "--dports",
	                      "29500,40000:40999",
	                      "-m",
	                      "comment",
	                      "--comment",
	                      "clusterdoc fix " RUN,
	                      "-j",
	                      "ACCEPT",
	                      NULL};
	const char *modprobe[] = {"iptables", "-I",  "INPUT", "--modprobe=/home/u/prog",
	                          "-m",       "foo", NULL};
	const char *in_comment[] = {"iptables",
	                            "-I",
	                            "INPUT",
	                            "-i",
	                            "eth0",
	                            "-s",
	                            "10.0.0.0/24",
	                            "-p",
	                            "tcp",
	                            "-m",
	                            "comment",
	                            "--comment",
	                            "clusterdoc fix " RUN " --modprobe=/home/u/prog",
	                            "-j",
	                            "ACCEPT",
	                            NULL};

	assert_int_equal(allowed(rule), 0);
	assert_int_equal(allowed(modprobe), -1);
	assert_int_equal(allowed(in_comment), -1);
}

static void ufw_and_firewalld_rules_are_allowed_and_nothing_more(void **state)
{
	const char *ufw[] = {"ufw",         "allow", "in",  "on",      "eth0",           "from",
	                     "10.0.0.0/24", "proto", "tcp", "comment", "clusterdoc fix", NULL};
	const char *ufw_more[] = {
	    "ufw",       "allow", "in",  "on",      "eth0",           "from",
	    "0.0.0.0/0", "proto", "tcp", "comment", "clusterdoc fix", "--dry-run",
	    NULL};
	const char *rich[] = {"firewall-cmd", "--zone=public",
	                      "--add-rich-rule=rule family=\"ipv4\" source address=\"10.0.0.0/24\" "
	                      "port port=\"40000-40999\" protocol=\"tcp\" accept",
	                      NULL};
	const char *direct[] = {
	    "firewall-cmd",
	    "--zone=public",
	    "--add-rich-rule=rule family=\"ipv4\" source address=\"10.0.0.0/24\" "
	    "protocol value=\"tcp\" accept",
	    "--direct",
	    "--passthrough",
	    "ipv4",
	    "-F",
	    NULL};

	assert_int_equal(allowed(ufw), 0);
	assert_int_equal(allowed(ufw_more), -1);
	assert_int_equal(allowed(rich), 0);
	assert_int_equal(allowed(direct), -1);
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
	const char *low[] = {"sysctl", "-w", "net.ipv4.ip_local_port_range=1024 65535", NULL};
	const char *privileged[] = {"sysctl", "-w", "net.ipv4.ip_local_port_range=1023 9999", NULL};
	const char *more[] = {"sysctl", "-w", "net.ipv4.ip_local_port_range=40000 40999",
	                      "kernel.core_pattern=|/tmp/x", NULL};
	const char *core[] = {"sysctl", "-w", "kernel.core_pattern=|/tmp/x", NULL};
	const char *file[] = {"sysctl", "-p", "/home/u/evil.conf", NULL};

	assert_int_equal(allowed(ok), 0);
	assert_int_equal(allowed(low), 0);
	assert_int_equal(allowed(privileged), -1);
	assert_int_equal(allowed(more), -1);
	assert_int_equal(allowed(core), -1);
	assert_int_equal(allowed(file), -1);
}

static void no_file_in_sysctl_d_can_be_written(void **state)
{
	const char *fill[] = {"tee", "/etc/sysctl.d/.60-clusterdoc-port-range.conf.clusterdoc",
	                      NULL};
	const char *in_place[] = {"tee", "/etc/sysctl.d/60-clusterdoc-port-range.conf", NULL};
	char *frag = sudocmd_sudoers("u");

	assert_int_equal(allowed(fill), -1);
	assert_int_equal(allowed(in_place), -1);
	assert_null(strstr(frag, "sysctl.d"));
	free(frag);
}

/* Whether re has a '.' outside a bracket expression that no '\' escapes:
 * one character of any kind, ';' and newline included. */
static int has_bare_dot(const char *re)
{
	int in_class = 0;

	for (const char *c = re; *c; c++) {
		if (*c == '\\' && !in_class && c[1])
			c++;
		else if (*c == '[' && !in_class)
			in_class = 1, c += c[1] == ']' ? 1 : 0;
		else if (*c == ']' && in_class)
			in_class = 0;
		else if (*c == '.' && !in_class)
			return 1;
	}
	return 0;
}

static void no_line_of_the_fragment_has_a_wildcard(void **state)
{
	char *frag = sudocmd_sudoers("u"), *save = NULL;
	size_t lines = 0;

	assert_null(strchr(frag, '*'));
	for (char *l = strtok_r(frag, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		const char *args;

		if (l[0] == '#')
			continue;
		args = strstr(l, "NOPASSWD: /");
		assert_non_null(args);
		args = strchr(args + strlen("NOPASSWD: "), ' ');
		assert_non_null(args);
		args++;
		if (sudocmd_is_regex(args)) {
			if (has_bare_dot(args))
				fail_msg("a bare '.' in: %s", l);
		} else if (strpbrk(args, "?[")) {
			fail_msg("a glob in: %s", l);
		}
		lines++;
	}
	assert_true(lines > 20);
	free(frag);
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
	    cmocka_unit_test(the_nft_rule_of_each_shape_the_fixer_builds_is_allowed),
	    cmocka_unit_test(an_nft_rule_carrying_a_second_command_is_refused),
	    cmocka_unit_test(an_nft_listing_or_delete_carrying_include_is_refused),
	    cmocka_unit_test(nft_flush_ruleset_and_a_rule_file_are_refused),
	    cmocka_unit_test(iptables_rule_is_allowed_and_modprobe_is_refused),
	    cmocka_unit_test(ufw_and_firewalld_rules_are_allowed_and_nothing_more),
	    cmocka_unit_test(a_file_step_gets_its_exact_line),
	    cmocka_unit_test(the_port_range_line_allows_no_other_sysctl),
	    cmocka_unit_test(no_file_in_sysctl_d_can_be_written),
	    cmocka_unit_test(no_line_of_the_fragment_has_a_wildcard),
	    cmocka_unit_test(a_command_no_line_allows_is_said_so),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
