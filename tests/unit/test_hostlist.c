/* SPDX-License-Identifier: MIT */
/*
 * test_hostlist.c - hostlist expressions: expansion, operators, errors, the
 * size cap, folding, exclusion, host files.
 *
 * Cases follow the behaviour pinned down by ClusterShell's
 * tests/NodeSetTest.py and RangeSetTest.py, Slurm's testsuite/expect/test2.20
 * and testsuite/slurm_unit/common/hostlist, and pdsh's tests/t0003-wcoll.sh;
 * each test names its source where there is one. Where this dialect
 * diverges on purpose (sorted sets, whitespace as a separator), the test
 * says so.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cd.h"
#include "hostlist.h"

/* ---- helpers ---- */

static struct hostlist *parsed(const char *expr)
{
	struct hostlist *hl = hostlist_new();
	char err[CD_ERRLEN] = "";
	int rc = hostlist_parse(hl, expr, err, sizeof(err));

	if (rc != 0)
		fail_msg("hostlist_parse(\"%s\") = %d: %s", expr, rc, err);
	return hl;
}

/* The hosts of hl, space separated; the caller frees. */
static char *joined(const struct hostlist *hl)
{
	size_t len = 1, at = 0;
	char *s;

	for (size_t i = 0; i < hl->count; i++)
		len += strlen(hl->names[i]) + 1;
	s = cd_malloc(len);
	s[0] = '\0';
	for (size_t i = 0; i < hl->count; i++)
		at += (size_t)sprintf(s + at, "%s%s", i ? " " : "", hl->names[i]);
	return s;
}

static void assert_hosts(const struct hostlist *hl, const char *want)
{
	char *got = joined(hl);

	assert_string_equal(got, want);
	free(got);
}

static void assert_expands(const char *expr, const char *want)
{
	struct hostlist *hl = parsed(expr);

	assert_hosts(hl, want);
	hostlist_free(hl);
}

static void assert_folds(const char *expr, const char *want)
{
	struct hostlist *hl = parsed(expr);
	char *folded = hostlist_fold(hl);

	assert_string_equal(folded, want);
	free(folded);
	hostlist_free(hl);
}

/* expr fails with code; when want is not NULL the message must be exactly want. */
static void assert_fails(const char *expr, int code, const char *want)
{
	struct hostlist *hl = hostlist_new();
	char err[CD_ERRLEN] = "";

	assert_int_equal(hostlist_parse(hl, expr, err, sizeof(err)), code);
	assert_int_equal(hl->count, 0);
	if (want)
		assert_string_equal(err, want);
	hostlist_free(hl);
}

/* expr is a parse error whose message contains what and names the column. */
static void assert_parse_error(const char *expr, const char *what, size_t column)
{
	struct hostlist *hl = hostlist_new();
	char err[CD_ERRLEN] = "", at[32];

	assert_int_equal(hostlist_parse(hl, expr, err, sizeof(err)), CD_ERR_PARSE);
	snprintf(at, sizeof(at), "(at column %zu)", column);
	if (!strstr(err, what) || !strstr(err, at))
		fail_msg("\"%s\": got \"%s\", want \"%s\" and \"%s\"", expr, err, what, at);
	hostlist_free(hl);
}

/* A temporary file holding content; the caller unlinks and frees the path. */
static char *temp_file_n(const char *content, size_t len)
{
	char *path = cd_strdup("/tmp/test_hostlist.XXXXXX");
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, len), (ssize_t)len);
	close(fd);
	return path;
}

static char *temp_file(const char *content)
{
	return temp_file_n(content, strlen(content));
}

/* ---- expansion ---- */

static void name_without_index_is_one_host(void **state)
{
	assert_expands("cws-machin", "cws-machin"); /* ClusterShell testUnnumberedNode */
	assert_expands("supercluster0", "supercluster0");
}

static void range_expands_in_order(void **state)
{
	assert_expands("foo[0-3]", "foo0 foo1 foo2 foo3"); /* pdsh t0003 */
}

static void leading_zeros_are_kept(void **state)
{
	assert_expands("foo[00-02]", "foo00 foo01 foo02"); /* pdsh t0003 */
}

static void range_across_digit_counts_is_unpadded(void **state)
{
	assert_expands("foo[9-11]", "foo9 foo10 foo11"); /* pdsh t0003 */
}

static void comma_list_inside_brackets(void **state)
{
	assert_expands("foo[0-2,4]", "foo0 foo1 foo2 foo4"); /* pdsh t0003 */
}

static void two_groups_vary_last_fastest(void **state)
{
	/* pdsh t0003 "2 sets of brackets" */
	assert_expands("foo[1-2]-[0-3]", "foo1-0 foo1-1 foo1-2 foo1-3 foo2-0 foo2-1 foo2-2 foo2-3");
}

static void two_groups_give_the_cartesian_product(void **state)
{
	/* Slurm test2.20 "double bracket hostnames" */
	assert_expands("rack[0-1]_blade[2,3]",
	               "rack0_blade2 rack0_blade3 rack1_blade2 rack1_blade3");
}

static void three_groups_give_the_cartesian_product(void **state)
{
	/* Slurm test2.20 "triple bracket hostnames" */
	assert_expands("row[0,1]_rack[2-3]_blade[4,5]",
	               "row0_rack2_blade4 row0_rack2_blade5 row0_rack3_blade4 row0_rack3_blade5 "
	               "row1_rack2_blade4 row1_rack2_blade5 row1_rack3_blade4 row1_rack3_blade5");
}

static void text_may_follow_brackets(void **state)
{
	assert_expands("foo[0-3]-eth0", "foo0-eth0 foo1-eth0 foo2-eth0 foo3-eth0"); /* pdsh */
}

static void step_takes_every_nth_index(void **state)
{
	assert_expands("n[1-9/2]", "n1 n3 n5 n7 n9");
	assert_expands("n[1-4/3]", "n1 n4"); /* ClusterShell testStepSimple */
	assert_expands("n[1-4/4]", "n1");
}

static void step_keeps_padding(void **state)
{
	assert_expands("n[00-08/2]", "n00 n02 n04 n06 n08"); /* ClusterShell "00-08/2" */
}

static void leading_zeros_of_a_step_are_ignored(void **state)
{
	assert_expands("n[1-7/02]", "n1 n3 n5 n7"); /* ClusterShell "1-17/02" */
}

static void width_comes_only_from_padded_bounds(void **state)
{
	assert_expands("n[1-10]", "n1 n2 n3 n4 n5 n6 n7 n8 n9 n10");
	assert_expands("n[08-12]", "n08 n09 n10 n11 n12");
}

static void different_widths_in_different_ranges_are_allowed(void **state)
{
	assert_expands("n[07-09,010]", "n07 n08 n09 n010");
}

static void padded_list_and_range_mix(void **state)
{
	/* ClusterShell testCommaSeparatedAndRangeWithPadding */
	assert_expands("cluster[0001,0002,1555-1559]",
	               "cluster0001 cluster0002 cluster1555 cluster1556 cluster1557 cluster1558 "
	               "cluster1559");
}

static void digits_before_brackets_join_the_index(void **state)
{
	/* ClusterShell test_numerical_bracket_folding */
	assert_expands("node01[0-1]", "node010 node011");
	assert_expands("node0[0]", "node00");
	assert_expands("prod-1[09-11]", "prod-109 prod-110 prod-111");
}

static void digits_after_brackets_join_the_index(void **state)
{
	assert_expands("nova[1-4]56", "nova156 nova256 nova356 nova456"); /* ClusterShell */
}

static void brackets_may_start_a_name(void **state)
{
	assert_expands("[0]cluster", "0cluster"); /* ClusterShell testNoPrefix */
	assert_expands("[1-3]", "1 2 3");
}

static void commas_and_whitespace_both_separate_hosts(void **state)
{
	assert_expands("a b\tc,d\n e", "a b c d e"); /* Slurm: "separated by , or whitespace" */
}

static void blanks_around_names_and_inside_brackets_are_ignored(void **state)
{
	/* ClusterShell testWhitespacePrefix */
	assert_folds(" tigrou2 , tigrou7 , tigrou[5,9-11] ", "tigrou[2,5,7,9-11]");
	assert_folds("   tigrou2 ,    tigrou5,tigrou7 , tigrou[ 9   - 11 ]    ",
	             "tigrou[2,5,7,9-11]");
}

static void whitespace_inside_a_name_splits_it(void **state)
{
	/* Divergence: ClusterShell keeps "tigrou 0" as one name. */
	assert_expands("tigrou 0", "0 tigrou");
}

static void result_is_sorted_and_deduplicated(void **state)
{
	/* Divergence: Slurm's hostlist keeps "tux2,tux1,tux2" as written. */
	assert_expands("tux2,tux1,tux2", "tux1 tux2");
}

static void indexes_sort_numerically(void **state)
{
	assert_expands("n10,n9,n100,n1", "n1 n9 n10 n100");
}

static void names_sort_by_text_then_index(void **state)
{
	/* ClusterShell testIterOrder */
	assert_folds("bcluster25,ccluster12,acluster4,acluster39,acluster41",
	             "acluster[4,39,41],bcluster25,ccluster12");
}

static void names_with_several_indexes_sort_index_by_index(void **state)
{
	/* Divergence: ClusterShell lists a[1-2]p[1-2] first, then a0p0 (product by product). */
	assert_expands("a[1-2]p[1-2],a0p0", "a0p0 a1p1 a1p2 a2p1 a2p2");
}

static void padded_and_unpadded_indexes_are_different_hosts(void **state)
{
	assert_expands("n001,n01,n1", "n1 n01 n001");
}

static void parse_adds_to_the_hosts_already_there(void **state)
{
	struct hostlist *hl = parsed("b1");
	char err[CD_ERRLEN];

	assert_int_equal(hostlist_parse(hl, "a1,b1", err, sizeof(err)), 0);
	assert_hosts(hl, "a1 b1");
	hostlist_free(hl);
}

static void list_and_range_give_each_host_once(void **state)
{
	/* Slurm slurm_unit hostlist_nth: "host[1-3],host5" */
	struct hostlist *hl = parsed("host[1-3],host5");

	assert_int_equal(hostlist_count(hl), 4);
	assert_hosts(hl, "host1 host2 host3 host5");
	hostlist_free(hl);
}

/* ---- operators ---- */

static void comma_is_union(void **state)
{
	assert_folds("cluster[115-117,130,166-170],cluster171", "cluster[115-117,130,166-171]");
}

static void bang_is_difference(void **state)
{
	assert_folds("node[10-42],node46!node10", "node[11-42,46]"); /* ClusterShell docs */
	assert_folds("cluster[115-117,130,166-170]!cluster[115,130]", "cluster[116-117,166-170]");
}

static void ampersand_is_intersection(void **state)
{
	/* ClusterShell testOperatorAnd */
	assert_folds("cluster[115-117,130,166-170]&cluster[115-167]",
	             "cluster[115-117,130,166-167]");
}

static void caret_is_symmetric_difference(void **state)
{
	/* ClusterShell testOperatorXor */
	assert_folds("cluster[115-117,130,166-170]^cluster[115-167]",
	             "cluster[118-129,131-165,168-170]");
}

static void operators_apply_left_to_right(void **state)
{
	/* ClusterShell testWhitespaceInsideNodeName, operators part */
	assert_folds(" t[1-5] & t[0,2,4] ! t[2-3] ^ t[3-5], t1", "t[1,3,5]");
	assert_folds("a,b!b", "a");
	assert_folds("a!b,b", "a,b");
}

static void symmetric_difference_keeps_other_names(void **state)
{
	/* ClusterShell testSymmetricDifferenceUpdate */
	assert_folds("artcore[3-999],lounge^artcore[1-2000]", "artcore[1-2,1000-2000],lounge");
}

static void difference_of_absent_hosts_changes_nothing(void **state)
{
	assert_folds("yellow[120-160]!red5", "yellow[120-160]");
}

static void intersection_can_be_empty(void **state)
{
	assert_folds("blue43&red1", "");
}

/* ---- errors ---- */

static void backwards_range_is_an_error(void **state)
{
	assert_fails("n[5-3]", CD_ERR_PARSE,
	             "hostlist \"n[5-3]\": range 5-3 goes backwards (at column 3)");
	assert_parse_error("nova[004-002]", "range 004-002 goes backwards", 6);
	assert_parse_error("nova[4-3/2]", "range 4-3/2 goes backwards", 6);
}

static void unclosed_bracket_is_an_error(void **state)
{
	assert_fails("n[1-", CD_ERR_PARSE,
	             "hostlist \"n[1-\": '[' without a matching ']' (at column 2)");
	assert_parse_error("n[1-2", "'[' without a matching ']'", 2);
	assert_parse_error("nova[3-59/2,102", "'[' without a matching ']'", 5);
	assert_parse_error("nova6[", "'[' without a matching ']'", 6);
}

static void non_number_in_brackets_is_an_error(void **state)
{
	assert_fails("n[a]", CD_ERR_PARSE,
	             "hostlist \"n[a]\": expected a number, found 'a' (at column 3)");
	assert_parse_error("nova[2-5/a]", "expected a number, found 'a'", 10);
	assert_parse_error("nova[4-a/2]", "expected a number, found 'a'", 8);
	assert_parse_error("nova[-]", "expected a number, found '-'", 6);
}

static void empty_brackets_are_an_error(void **state)
{
	assert_fails("n[]", CD_ERR_PARSE,
	             "hostlist \"n[]\": nothing between '[' and ']' (at column 3)");
	assert_parse_error("nova[]p0", "nothing between '[' and ']'", 6);
}

static void stray_closing_bracket_is_an_error(void **state)
{
	assert_fails("n]", CD_ERR_PARSE,
	             "hostlist \"n]\": ']' without a matching '[' (at column 2)");
	assert_parse_error("n6[1-4]]", "']' without a matching '['", 8);
	assert_parse_error("xazer][1-30]p[4-9]", "']' without a matching '['", 6);
	assert_parse_error("x[1-30]p4-9]", "']' without a matching '['", 12);
}

static void empty_expression_is_an_error(void **state)
{
	assert_fails("", CD_ERR_PARSE, "hostlist \"\": the expression is empty");
	assert_fails(" \t ", CD_ERR_PARSE, "hostlist \" ? \": the expression is empty");
	assert_fails(NULL, CD_ERR_PARSE, "hostlist \"\": the expression is empty");
}

static void doubled_comma_is_an_error(void **state)
{
	assert_fails("a,,b", CD_ERR_PARSE,
	             "hostlist \"a,,b\": missing host name before ',' (at column 3)");
	assert_parse_error("nova3,nova4,,nova6", "missing host name before ','", 13);
	assert_parse_error(",,,", "missing host name before ','", 1);
}

static void operator_without_right_operand_is_an_error(void **state)
{
	/* ClusterShell test_empty_operand */
	assert_fails("foo!", CD_ERR_PARSE,
	             "hostlist \"foo!\": missing host name after '!' (at column 4)");
	assert_parse_error("foo,", "missing host name after ','", 4);
	assert_parse_error("foo&", "missing host name after '&'", 4);
	assert_parse_error("foo^ ", "missing host name after '^'", 4);
	assert_parse_error("c[1-30]c[1-2]!", "missing host name after '!'", 14);
}

static void operator_without_left_operand_is_an_error(void **state)
{
	assert_fails("!foo", CD_ERR_PARSE,
	             "hostlist \"!foo\": missing host name before '!' (at column 1)");
	assert_parse_error(",foo", "missing host name before ','", 1);
	assert_parse_error(" &foo", "missing host name before '&'", 2);
	assert_parse_error("^foo", "missing host name before '^'", 1);
	assert_parse_error("!", "missing host name before '!'", 1);
}

static void padding_mismatch_in_one_range_is_an_error(void **state)
{
	/* ClusterShell test_mixed_padding_mismatch */
	assert_fails("node[9-011]", CD_ERR_PARSE,
	             "hostlist \"node[9-011]\": range 9-011 mixes padding widths; write 009-011 or "
	             "9-11 (at column 6)");
	assert_parse_error("[01-044]", "range 01-044 mixes padding widths", 2);
	assert_parse_error("n[001-44]", "range 001-44 mixes padding widths", 3);
	assert_parse_error("n[0-9,01-044]", "range 01-044 mixes padding widths", 7);
}

static void step_errors(void **state)
{
	/* ClusterShell testBadRangeUsages */
	assert_parse_error("nova[3/2]", "a step needs a range, as in 1-9/2", 7);
	assert_parse_error("nova[1-9/0]", "step must be at least 1 in 1-9/0", 10);
	assert_parse_error("nova[4-5/-2]", "expected a number, found '-'", 10);
	assert_parse_error("nova[3-/2]", "expected a number, found '/'", 8);
	assert_parse_error("nova[-/2]", "expected a number, found '-'", 6);
}

static void empty_element_in_brackets_is_an_error(void **state)
{
	assert_parse_error("nova[3-59/2,,102]", "expected a number, found ','", 13);
	assert_parse_error("n[1,]", "expected a number, found ']'", 5);
}

static void garbage_after_an_index_is_an_error(void **state)
{
	assert_parse_error("nova[3-59/2,102a]", "expected ',' or ']', found 'a'", 16);
	assert_parse_error("n[0 1]", "expected ',' or ']', found '1'", 5);
	assert_parse_error("n[1-2-3]", "expected ',' or ']', found '-'", 6);
}

static void adjacent_bracket_groups_are_an_error(void **state)
{
	/* ClusterShell testBadUsages: digits between groups would belong to both */
	assert_parse_error("n6[1-4][3-4]", "bracket groups need a non-digit between them", 8);
	assert_parse_error("n[1-4]0[3-4]", "bracket groups need a non-digit between them", 8);
	assert_parse_error("n6[1-4]56[3-4]", "bracket groups need a non-digit between them", 10);
	assert_parse_error("[1-30][4-9]p", "bracket groups need a non-digit between them", 7);
}

static void nested_bracket_is_an_error(void **state)
{
	assert_parse_error("xa[[zer[1-30]p[4-9]", "'[' inside brackets", 4);
}

static void control_character_is_an_error(void **state)
{
	assert_fails("a\001b", CD_ERR_PARSE,
	             "hostlist \"a?b\": invalid character 0x01 (at column 2)");
}

static void overlong_number_is_an_error(void **state)
{
	assert_parse_error("n[1234567890123456789]", "number has more than 18 digits", 3);
}

static void error_leaves_the_list_unchanged(void **state)
{
	struct hostlist *hl = parsed("a1");
	char err[CD_ERRLEN];

	assert_int_equal(hostlist_parse(hl, "b1,n[5-3]", err, sizeof(err)), CD_ERR_PARSE);
	assert_hosts(hl, "a1");
	hostlist_free(hl);
}

static void long_expression_is_abridged_in_the_message(void **state)
{
	char expr[200], err[CD_ERRLEN];
	struct hostlist *hl = hostlist_new();

	memset(expr, 'n', 150);
	strcpy(expr + 150, "[5-3],b");
	assert_int_equal(hostlist_parse(hl, expr, err, sizeof(err)), CD_ERR_PARSE);
	assert_non_null(strstr(err, "hostlist \"...nnn"));
	assert_non_null(strstr(err, "[5-3],b\": range 5-3 goes backwards (at column 152)"));
	assert_true(strlen(err) < 140);
	hostlist_free(hl);
}

/* ---- the size cap ---- */

static void range_over_the_cap_is_too_big(void **state)
{
	assert_fails(
	    "n[0-99999999]", CD_ERR_TOOBIG,
	    "hostlist \"n[0-99999999]\": expands to more than 1000000 hosts (at column 1)");
}

static void product_over_the_cap_is_too_big(void **state)
{
	assert_fails("a,n[1-1000]x[1-1001]", CD_ERR_TOOBIG,
	             "hostlist \"a,n[1-1000]x[1-1001]\": expands to more than 1000000 hosts "
	             "(at column 3)");
}

static void a_million_hosts_fit(void **state)
{
	/* ClusterShell testVeryBigRange */
	assert_folds("bigcluster[1-1000000]", "bigcluster[1-1000000]");
}

static void union_over_the_cap_is_too_big(void **state)
{
	assert_fails("a[1-600000],b[1-600000]", CD_ERR_TOOBIG,
	             "hostlist \"a[1-600000],b[1-600000]\": expands to more than 1000000 hosts "
	             "(at column 13)");
}

static void duplicates_do_not_count_against_the_cap(void **state)
{
	struct hostlist *hl = parsed("a[1-600000],a[1-600000]");
	char err[CD_ERRLEN];

	assert_int_equal(hl->count, 600000);
	assert_int_equal(hostlist_parse(hl, "a[1-600000]", err, sizeof(err)), 0);
	assert_int_equal(hl->count, 600000);
	hostlist_free(hl);
}

static void adding_past_the_cap_is_too_big_and_changes_nothing(void **state)
{
	struct hostlist *hl = parsed("a[1-600000]");
	char err[CD_ERRLEN];

	assert_int_equal(hostlist_parse(hl, "b[1-600000]", err, sizeof(err)), CD_ERR_TOOBIG);
	assert_string_equal(err, "hostlist \"b[1-600000]\": the host list would hold more than "
	                         "1000000 hosts");
	assert_int_equal(hl->count, 600000);
	hostlist_free(hl);
}

/* ---- folding ---- */

static void fold_joins_consecutive_indexes(void **state)
{
	assert_folds("node1,node2,node3,node5,other", "node[1-3,5],other");
	/* ClusterShell testCommaSeparated */
	assert_folds("cluster115,cluster116,cluster117,cluster130,cluster166",
	             "cluster[115-117,130,166]");
}

static void fold_writes_a_single_index_without_brackets(void **state)
{
	assert_folds("cluster[115]", "cluster115"); /* ClusterShell testSingleNodeInRange */
	assert_folds("n[1-3]!n[1-2]", "n3");
}

static void fold_keeps_padding(void **state)
{
	assert_folds("cluster[0001-0100]", "cluster[0001-0100]"); /* ClusterShell */
	assert_folds("cluster[0001,0002,1555-1559]-ipmi", "cluster[0001-0002,1555-1559]-ipmi");
}

static void fold_keeps_mixed_padding_apart(void **state)
{
	assert_folds("n[8-9],n[08-10]", "n[8-9,08-10]");
	assert_folds("n[07-09,010]", "n[07-09,010]");
}

static void fold_puts_the_name_without_index_first(void **state)
{
	/* ClusterShell testFromListConstructor */
	assert_folds("cluster0,cluster1,cluster,wool,cluster3", "cluster,cluster[0-1,3],wool");
}

static void fold_of_a_full_product_folds_every_axis(void **state)
{
	assert_folds("rack2-n[1-4],rack1-n[1-4]", "rack[1-2]-n[1-4]");
	assert_folds("da[1-10]c[1-2]p0", "da[1-10]c[1-2]p0"); /* ClusterShell test_nd_multiple */
	assert_folds("[1-7,10]xpc[3,4]p40_3,9xpc[3,4]p40_3,8xpc[3,4]p[40]_[3]",
	             "[1-10]xpc[3-4]p40_3");
}

static void fold_of_a_partial_product_matches_clustershell(void **state)
{
	/* ClusterShell test_nd_fold, test_nd_multiple */
	assert_folds("da[2-3]c[1-2],da[3-4]c[3-4]", "da3c[1-4],da2c[1-2],da4c[3-4]");
	assert_folds("da[2-3]c[1-2],da[3-4]c[2-3]", "da3c[1-3],da2c[1-2],da4c[2-3]");
	assert_folds("da[2-3]c[1-2]p3,da[3-4]c[1-3]p3", "da[3-4]c[1-3]p3,da2c[1-2]p3");
	assert_folds("da[2-3]c[1-2],da[2,5]c[2-3]", "da2c[1-3],da3c[1-2],da5c[2-3]");
	assert_folds("da[30,34-51,59-60]p[1-2],da[70-77]p3",
	             "da[30,34-51,59-60]p[1-2],da[70-77]p3");
}

static void fold_after_difference_matches_clustershell(void **state)
{
	/* ClusterShell test_nd_difference, test_nd_nonoverlap */
	assert_folds("a[0-3]b[1-5]c5!a[0-2]b[2-4]c5", "a[0-2]b[1,5]c5,a3b[1-5]c5");
	assert_folds("a[0-3]b[1-4]c[5]!a[0-2]b1c5", "a[0-2]b[2-4]c5,a3b[1-4]c5");
	assert_folds("a[0-2]b[1-4]c5!a[0-3]b[2-3]c5", "a[0-2]b[1,4]c5");
	assert_folds("a[0-2]b[2-3]c[4-6],a[0-1]b[1-3]c[4-5]", "a[0-2]b[2-3]c[4-6],a[0-1]b1c[4-5]");
}

static void fold_may_split_three_axes_differently_from_clustershell(void **state)
{
	/* ClusterShell prints a[0-1]b[1-2]c4,a[0-1]b3c[4-5],a2b[1-3]c4,a[0-1]b2c5 */
	assert_folds("a[0-2]b[1-3]c[4],a[0-1]b[2-3]c[4-5]",
	             "a[0-1]b[2-3]c[4-5],a2b[1-3]c4,a[0-1]b1c4");
}

static void fold_keeps_digits_in_the_text(void **state)
{
	assert_folds("clu-0-[3-23]", "clu-0-[3-23]"); /* ClusterShell testDigitInPrefix */
	assert_folds("clu-0-3", "clu-0-3");
}

static void fold_moves_digits_next_to_brackets_into_the_range(void **state)
{
	/* ClusterShell test_numerical_bracket_folding */
	assert_folds("prod-02[10-20]", "prod-[0210-0220]");
	assert_folds("prod-100[040-042]", "prod-[100040-100042]");
	assert_folds("x01[0-1]y01[0-1]z01[0-1]", "x[010-011]y[010-011]z[010-011]");
}

static void digits_before_a_range_prefix_each_index(void **state)
{
	/* As Slurm and pdsh; ClusterShell reads this as prod-[210-2320], 2111 hosts. */
	struct hostlist *hl = parsed("prod-2[10-320]");
	char *folded = hostlist_fold(hl);

	assert_int_equal(hostlist_count(hl), 311);
	assert_string_equal(folded, "prod-[210-299,2100-2320]");
	free(folded);
	hostlist_free(hl);
}

static void fold_handles_percent_signs(void **state)
{
	/* ClusterShell testNodeWithPercent */
	assert_folds("myclu%ster,clust%ser[3-30]", "clust%ser[3-30],myclu%ster");
	assert_folds("cluster%eth0,cluster%eth1", "cluster%eth[0-1]");
	assert_folds("fe80::5054:ff:feff:6944%eth0", "fe80::5054:ff:feff:6944%eth0");
}

static void fold_treats_overlong_numbers_as_text(void **state)
{
	assert_folds("n1234567890123456789[1-2]", "n12345678901234567891,n12345678901234567892");
}

static void fold_of_an_empty_list_is_empty(void **state)
{
	struct hostlist *hl = hostlist_new();
	char *a = hostlist_fold(hl), *b = hostlist_fold(NULL);

	assert_string_equal(a, "");
	assert_string_equal(b, "");
	free(a);
	free(b);
	hostlist_free(hl);
}

static void fold_does_not_need_a_sorted_list(void **state)
{
	struct hostlist *hl = hostlist_new();
	const char *names[] = {"n3", "n1", "n2", "n1"};
	char *folded;

	hl->names = cd_malloc(sizeof(names));
	for (size_t i = 0; i < 4; i++)
		hl->names[i] = cd_strdup(names[i]);
	hl->count = hl->capacity = 4;
	folded = hostlist_fold(hl);
	assert_string_equal(folded, "n[1-3]");
	assert_string_equal(hl->names[0], "n3");
	free(folded);
	hostlist_free(hl);
}

static void fold_parses_back_to_the_same_hosts(void **state)
{
	static const char *const exprs[] = {
	    "n[8-9],n[08-10],n[098-101],n[0999-1001]",
	    "a[0-2]b[1-3]c[4],a[0-1]b[2-3]c[4-5],z,0,[1-20/3]x",
	    "node[1-100/7]-ib[0-1],node[1-50]-ib2",
	};

	for (size_t i = 0; i < CD_ARRAY_LEN(exprs); i++) {
		struct hostlist *a = parsed(exprs[i]), *b;
		char *folded = hostlist_fold(a), *ja = joined(a), *jb;

		b = parsed(folded);
		jb = joined(b);
		assert_string_equal(ja, jb);
		free(folded);
		free(ja);
		free(jb);
		hostlist_free(a);
		hostlist_free(b);
	}
}

/* ---- exclusion ---- */

static void assert_excludes(const char *from, const char *minus, const char *want, int removed)
{
	struct hostlist *hl = parsed(from), *m = parsed(minus);

	assert_int_equal(hostlist_exclude(hl, m), removed);
	assert_hosts(hl, want);
	hostlist_free(hl);
	hostlist_free(m);
}

static void exclude_removes_the_listed_hosts(void **state)
{
	assert_excludes("foo[9-11]", "foo10", "foo9 foo11", 1); /* pdsh "-x option works" */
}

static void exclude_accepts_ranges(void **state)
{
	assert_excludes("foo[0-5]", "foo[1-3]", "foo0 foo4 foo5", 3); /* pdsh gnats:118 */
}

static void exclude_handles_names_without_index(void **state)
{
	/* pdsh gnats:120 */
	assert_excludes("fooi,fooj,foo[0-5]", "fooj,fooi,foo2", "foo0 foo1 foo3 foo4 foo5", 3);
}

static void exclude_ignores_absent_hosts(void **state)
{
	assert_excludes("foo[1-2]", "bar1,foo9", "foo1 foo2", 0);
}

static void exclude_one_by_one_refolds(void **state)
{
	/* Slurm slurm_unit hostlist_iterator_remove_check */
	static const char *const removed[] = {"a1", "c1", "d2", "d5", "e1"};
	static const char *const want[] = {"b[1-3],c1,d[1-5],e1", "b[1-3],d[1-5],e1",
	                                   "b[1-3],d[1,3-5],e1", "b[1-3],d[1,3-4],e1",
	                                   "b[1-3],d[1,3-4]"};
	struct hostlist *hl = parsed("a1,b1,b2,b3,c1,d1,d2,d3,d4,d5,e1");

	for (size_t i = 0; i < CD_ARRAY_LEN(removed); i++) {
		struct hostlist *m = parsed(removed[i]);
		char *folded;

		assert_int_equal(hostlist_exclude(hl, m), 1);
		folded = hostlist_fold(hl);
		assert_string_equal(folded, want[i]);
		free(folded);
		hostlist_free(m);
	}
	hostlist_free(hl);
}

static void exclude_of_itself_empties_the_list(void **state)
{
	struct hostlist *hl = parsed("n[1-5]");

	assert_int_equal(hostlist_exclude(hl, hl), 5);
	assert_int_equal(hostlist_count(hl), 0);
	hostlist_free(hl);
}

/* ---- files and arguments ---- */

static void read_file_skips_comments_and_blank_lines(void **state)
{
	char *path = temp_file("# wcoll\nfoo[9-11]\n\n   \n  foo12  # the last one\n#foo13\n");
	struct hostlist *hl = hostlist_new();
	char err[CD_ERRLEN];

	/* pdsh t0003 "ranges can be embedded in wcoll files" */
	assert_int_equal(hostlist_read_file(hl, path, err, sizeof(err)), 0);
	assert_hosts(hl, "foo9 foo10 foo11 foo12");
	unlink(path);
	free(path);
	hostlist_free(hl);
}

static void read_file_accepts_crlf_line_ends(void **state)
{
	char *path = temp_file("a1\r\nb1\r\n");
	struct hostlist *hl = hostlist_new();
	char err[CD_ERRLEN];

	assert_int_equal(hostlist_read_file(hl, path, err, sizeof(err)), 0);
	assert_hosts(hl, "a1 b1");
	unlink(path);
	free(path);
	hostlist_free(hl);
}

static void read_file_error_names_file_line_and_column(void **state)
{
	char *path = temp_file("ok1\n  n[5-3]\n");
	struct hostlist *hl = parsed("x1");
	char err[CD_ERRLEN], want[CD_ERRLEN];

	assert_int_equal(hostlist_read_file(hl, path, err, sizeof(err)), CD_ERR_PARSE);
	snprintf(want, sizeof(want),
	         "%s:2: hostlist \"  n[5-3]\": range 5-3 goes backwards (at column 5)", path);
	assert_string_equal(err, want);
	assert_hosts(hl, "x1");
	unlink(path);
	free(path);
	hostlist_free(hl);
}

static void read_file_refuses_a_nul_byte_naming_the_line(void **state)
{
	char *path = temp_file_n("node1\nno\0de2\n", 13);
	struct hostlist *hl = parsed("x1");
	char err[CD_ERRLEN], want[CD_ERRLEN];

	assert_int_equal(hostlist_read_file(hl, path, err, sizeof(err)), CD_ERR_PARSE);
	snprintf(want, sizeof(want), "%s:2: a NUL byte at column 3 (not a text file?)", path);
	assert_string_equal(err, want);
	assert_hosts(hl, "x1");
	unlink(path);
	free(path);
	hostlist_free(hl);
}

/* fault-run-3 case 14: a name that is not UTF-8 text would reach --json as
 * null or raw bytes; it is refused like a NUL byte, naming line and column. */
static void read_file_refuses_a_name_that_is_not_utf8_naming_the_line(void **state)
{
	char *path = temp_file_n("node1\n\xff\xfenode2\nn\xc3\xb6"
	                         "de3\n",
	                         21);
	struct hostlist *hl = parsed("x1");
	char err[CD_ERRLEN], want[CD_ERRLEN];

	assert_int_equal(hostlist_read_file(hl, path, err, sizeof(err)), CD_ERR_PARSE);
	snprintf(want, sizeof(want),
	         "%s:2: hostlist \"??node2\": byte 0xff is not UTF-8 text (at column 1)", path);
	assert_string_equal(err, want);
	assert_hosts(hl, "x1");
	unlink(path);
	free(path);
	hostlist_free(hl);
}

static void parse_refuses_bytes_that_are_not_utf8_and_takes_utf8_names(void **state)
{
	struct hostlist *hl = parsed("n\xc3\xb6"
	                             "de3");

	assert_fails("node1,no\xe9"
	             "de2",
	             CD_ERR_PARSE,
	             "hostlist \"node1,no?de2\": byte 0xe9 is not UTF-8 text (at column 9)");
	/* a truncated sequence, an overlong form */
	assert_parse_error("node\xc3", "byte 0xc3 is not UTF-8 text", 5);
	assert_parse_error("n\xc0\xafx", "byte 0xc0 is not UTF-8 text", 2);
	assert_hosts(hl, "n\xc3\xb6"
	                 "de3");
	hostlist_free(hl);
}

static void read_file_of_an_endless_stream_stops_at_the_cap(void **state)
{
	struct hostlist *hl = hostlist_new();
	char err[CD_ERRLEN], want[CD_ERRLEN];

	assert_int_equal(hostlist_read_file(hl, "/dev/zero", err, sizeof(err)), CD_ERR_TOOBIG);
	snprintf(want, sizeof(want), "/dev/zero is larger than %zu bytes", HOSTLIST_FILE_MAX);
	assert_string_equal(err, want);
	assert_int_equal(hostlist_count(hl), 0);
	hostlist_free(hl);
}

static void read_file_of_a_directory_is_an_io_error(void **state)
{
	struct hostlist *hl = hostlist_new();
	char err[CD_ERRLEN];

	assert_int_equal(hostlist_read_file(hl, "/", err, sizeof(err)), CD_ERR_IO);
	assert_string_equal(err, "cannot read /: Is a directory");
	hostlist_free(hl);
}

static void read_file_reads_a_last_line_without_newline(void **state)
{
	char *path = temp_file("a1\nb[1-2]");
	struct hostlist *hl = hostlist_new();
	char err[CD_ERRLEN];

	assert_int_equal(hostlist_read_file(hl, path, err, sizeof(err)), 0);
	assert_hosts(hl, "a1 b1 b2");
	unlink(path);
	free(path);
	hostlist_free(hl);
}

static void name_longer_than_a_host_name_can_be_keeps_the_reason(void **state)
{
	char expr[420], err[CD_ERRLEN];
	struct hostlist *hl = hostlist_new();

	memset(expr, 'a', 400);
	expr[400] = '\0';
	assert_int_equal(hostlist_parse(hl, expr, err, sizeof(err)), CD_ERR_PARSE);
	assert_non_null(
	    strstr(err, "\": a host name of 400 bytes, longer than the 255 a host name can have "
	                "(at column 1)"));
	assert_int_equal(hostlist_count(hl), 0);
	hostlist_free(hl);
}

static void name_of_255_bytes_is_a_host_and_256_is_not(void **state)
{
	char expr[300], err[CD_ERRLEN];
	struct hostlist *hl = hostlist_new();

	/* the longest name a pattern can make counts: a...a100 */
	memset(expr, 'a', 252);
	strcpy(expr + 252, "[1-100]");
	assert_int_equal(hostlist_parse(hl, expr, err, sizeof(err)), 0);
	assert_int_equal(hostlist_count(hl), 100);
	memset(expr, 'b', 253);
	strcpy(expr + 253, "[1-100]");
	assert_int_equal(hostlist_parse(hl, expr, err, sizeof(err)), CD_ERR_PARSE);
	assert_non_null(strstr(err, ": a host name of 256 bytes, longer than the 255"));
	assert_int_equal(hostlist_count(hl), 100);
	hostlist_free(hl);
}

static void read_file_of_a_missing_file_is_an_io_error(void **state)
{
	struct hostlist *hl = hostlist_new();
	char err[CD_ERRLEN];

	/* pdsh t0003 "^file errors out if file doesnt exist" */
	assert_int_equal(hostlist_read_file(hl, "/nonexistent/nosuchfile", err, sizeof(err)),
	                 CD_ERR_IO);
	assert_string_equal(err, "cannot open /nonexistent/nosuchfile: No such file or directory");
	hostlist_free(hl);
}

static void add_arg_caret_reads_a_file(void **state)
{
	char *path = temp_file("foo[9-11]\nfoo12\n"), arg[64];
	struct hostlist *hl = parsed("foo[1-2]");
	char err[CD_ERRLEN];

	/* pdsh t0003 "^file works with other args" */
	snprintf(arg, sizeof(arg), "^%s", path);
	assert_int_equal(hostlist_add_arg(hl, arg, err, sizeof(err)), 0);
	assert_hosts(hl, "foo1 foo2 foo9 foo10 foo11 foo12");
	unlink(path);
	free(path);
	hostlist_free(hl);
}

static void add_arg_twice_gives_the_union(void **state)
{
	char *a = temp_file("foo1\nfoo2\n"), *b = temp_file("foo7\nfoo8\n"), arg[64];
	struct hostlist *hl = hostlist_new();
	char err[CD_ERRLEN];

	/* pdsh t0003 "Multiple -w^file" */
	snprintf(arg, sizeof(arg), "^%s", a);
	assert_int_equal(hostlist_add_arg(hl, arg, err, sizeof(err)), 0);
	snprintf(arg, sizeof(arg), "^%s", b);
	assert_int_equal(hostlist_add_arg(hl, arg, err, sizeof(err)), 0);
	assert_hosts(hl, "foo1 foo2 foo7 foo8");
	unlink(a);
	unlink(b);
	free(a);
	free(b);
	hostlist_free(hl);
}

static void add_arg_without_caret_is_an_expression(void **state)
{
	struct hostlist *hl = hostlist_new();
	char err[CD_ERRLEN];

	assert_int_equal(hostlist_add_arg(hl, "foo[1-2]!foo1", err, sizeof(err)), 0);
	assert_hosts(hl, "foo2");
	assert_int_equal(hostlist_add_arg(hl, "n[5-3]", err, sizeof(err)), CD_ERR_PARSE);
	hostlist_free(hl);
}

static void add_arg_caret_alone_is_an_error(void **state)
{
	struct hostlist *hl = hostlist_new();
	char err[CD_ERRLEN];

	assert_int_equal(hostlist_add_arg(hl, "^", err, sizeof(err)), CD_ERR_PARSE);
	assert_string_equal(err, "hostlist \"^\": missing file name after '^'");
	hostlist_free(hl);
}

/* ---- the vector ---- */

static void count_is_the_number_of_hosts(void **state)
{
	struct hostlist *hl = parsed("da[1-1000]c[1-2]p[0-1]"); /* ClusterShell test_nd_len */

	assert_int_equal(hostlist_count(hl), 4000);
	assert_int_equal(hostlist_count(NULL), 0);
	hostlist_free(hl);
}

static void free_of_null_does_nothing(void **state)
{
	hostlist_free(NULL);
}

static void sort_uniq_orders_and_drops_duplicates(void **state)
{
	struct hostlist *hl = hostlist_new();
	const char *names[] = {"n10", "m", "n9", "n09", "n10", "n%", "n", "nA", "n9"};

	hl->names = cd_malloc(sizeof(names));
	for (size_t i = 0; i < CD_ARRAY_LEN(names); i++)
		hl->names[i] = cd_strdup(names[i]);
	hl->count = hl->capacity = CD_ARRAY_LEN(names);
	hostlist_sort_uniq(hl);
	/* Patterns "m" < "n" < "n%%" < "n%s" < "nA"; then 9 < 09 < 10. */
	assert_hosts(hl, "m n n% n9 n09 n10 nA");
	hostlist_free(hl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(name_without_index_is_one_host),
	    cmocka_unit_test(range_expands_in_order),
	    cmocka_unit_test(leading_zeros_are_kept),
	    cmocka_unit_test(range_across_digit_counts_is_unpadded),
	    cmocka_unit_test(comma_list_inside_brackets),
	    cmocka_unit_test(two_groups_vary_last_fastest),
	    cmocka_unit_test(two_groups_give_the_cartesian_product),
	    cmocka_unit_test(three_groups_give_the_cartesian_product),
	    cmocka_unit_test(text_may_follow_brackets),
	    cmocka_unit_test(step_takes_every_nth_index),
	    cmocka_unit_test(step_keeps_padding),
	    cmocka_unit_test(leading_zeros_of_a_step_are_ignored),
	    cmocka_unit_test(width_comes_only_from_padded_bounds),
	    cmocka_unit_test(different_widths_in_different_ranges_are_allowed),
	    cmocka_unit_test(padded_list_and_range_mix),
	    cmocka_unit_test(digits_before_brackets_join_the_index),
	    cmocka_unit_test(digits_after_brackets_join_the_index),
	    cmocka_unit_test(brackets_may_start_a_name),
	    cmocka_unit_test(commas_and_whitespace_both_separate_hosts),
	    cmocka_unit_test(blanks_around_names_and_inside_brackets_are_ignored),
	    cmocka_unit_test(whitespace_inside_a_name_splits_it),
	    cmocka_unit_test(result_is_sorted_and_deduplicated),
	    cmocka_unit_test(indexes_sort_numerically),
	    cmocka_unit_test(names_sort_by_text_then_index),
	    cmocka_unit_test(names_with_several_indexes_sort_index_by_index),
	    cmocka_unit_test(padded_and_unpadded_indexes_are_different_hosts),
	    cmocka_unit_test(parse_adds_to_the_hosts_already_there),
	    cmocka_unit_test(list_and_range_give_each_host_once),
	    cmocka_unit_test(comma_is_union),
	    cmocka_unit_test(bang_is_difference),
	    cmocka_unit_test(ampersand_is_intersection),
	    cmocka_unit_test(caret_is_symmetric_difference),
	    cmocka_unit_test(operators_apply_left_to_right),
	    cmocka_unit_test(symmetric_difference_keeps_other_names),
	    cmocka_unit_test(difference_of_absent_hosts_changes_nothing),
	    cmocka_unit_test(intersection_can_be_empty),
	    cmocka_unit_test(backwards_range_is_an_error),
	    cmocka_unit_test(unclosed_bracket_is_an_error),
	    cmocka_unit_test(non_number_in_brackets_is_an_error),
	    cmocka_unit_test(empty_brackets_are_an_error),
	    cmocka_unit_test(stray_closing_bracket_is_an_error),
	    cmocka_unit_test(empty_expression_is_an_error),
	    cmocka_unit_test(doubled_comma_is_an_error),
	    cmocka_unit_test(operator_without_right_operand_is_an_error),
	    cmocka_unit_test(operator_without_left_operand_is_an_error),
	    cmocka_unit_test(padding_mismatch_in_one_range_is_an_error),
	    cmocka_unit_test(step_errors),
	    cmocka_unit_test(empty_element_in_brackets_is_an_error),
	    cmocka_unit_test(garbage_after_an_index_is_an_error),
	    cmocka_unit_test(adjacent_bracket_groups_are_an_error),
	    cmocka_unit_test(nested_bracket_is_an_error),
	    cmocka_unit_test(control_character_is_an_error),
	    cmocka_unit_test(overlong_number_is_an_error),
	    cmocka_unit_test(error_leaves_the_list_unchanged),
	    cmocka_unit_test(long_expression_is_abridged_in_the_message),
	    cmocka_unit_test(range_over_the_cap_is_too_big),
	    cmocka_unit_test(product_over_the_cap_is_too_big),
	    cmocka_unit_test(a_million_hosts_fit),
	    cmocka_unit_test(union_over_the_cap_is_too_big),
	    cmocka_unit_test(duplicates_do_not_count_against_the_cap),
	    cmocka_unit_test(adding_past_the_cap_is_too_big_and_changes_nothing),
	    cmocka_unit_test(fold_joins_consecutive_indexes),
	    cmocka_unit_test(fold_writes_a_single_index_without_brackets),
	    cmocka_unit_test(fold_keeps_padding),
	    cmocka_unit_test(fold_keeps_mixed_padding_apart),
	    cmocka_unit_test(fold_puts_the_name_without_index_first),
	    cmocka_unit_test(fold_of_a_full_product_folds_every_axis),
	    cmocka_unit_test(fold_of_a_partial_product_matches_clustershell),
	    cmocka_unit_test(fold_after_difference_matches_clustershell),
	    cmocka_unit_test(fold_may_split_three_axes_differently_from_clustershell),
	    cmocka_unit_test(fold_keeps_digits_in_the_text),
	    cmocka_unit_test(fold_moves_digits_next_to_brackets_into_the_range),
	    cmocka_unit_test(digits_before_a_range_prefix_each_index),
	    cmocka_unit_test(fold_handles_percent_signs),
	    cmocka_unit_test(fold_treats_overlong_numbers_as_text),
	    cmocka_unit_test(fold_of_an_empty_list_is_empty),
	    cmocka_unit_test(fold_does_not_need_a_sorted_list),
	    cmocka_unit_test(fold_parses_back_to_the_same_hosts),
	    cmocka_unit_test(exclude_removes_the_listed_hosts),
	    cmocka_unit_test(exclude_accepts_ranges),
	    cmocka_unit_test(exclude_handles_names_without_index),
	    cmocka_unit_test(exclude_ignores_absent_hosts),
	    cmocka_unit_test(exclude_one_by_one_refolds),
	    cmocka_unit_test(exclude_of_itself_empties_the_list),
	    cmocka_unit_test(read_file_skips_comments_and_blank_lines),
	    cmocka_unit_test(read_file_accepts_crlf_line_ends),
	    cmocka_unit_test(read_file_refuses_a_nul_byte_naming_the_line),
	    cmocka_unit_test(read_file_refuses_a_name_that_is_not_utf8_naming_the_line),
	    cmocka_unit_test(parse_refuses_bytes_that_are_not_utf8_and_takes_utf8_names),
	    cmocka_unit_test(read_file_of_an_endless_stream_stops_at_the_cap),
	    cmocka_unit_test(read_file_of_a_directory_is_an_io_error),
	    cmocka_unit_test(read_file_reads_a_last_line_without_newline),
	    cmocka_unit_test(name_longer_than_a_host_name_can_be_keeps_the_reason),
	    cmocka_unit_test(name_of_255_bytes_is_a_host_and_256_is_not),
	    cmocka_unit_test(read_file_error_names_file_line_and_column),
	    cmocka_unit_test(read_file_of_a_missing_file_is_an_io_error),
	    cmocka_unit_test(add_arg_caret_reads_a_file),
	    cmocka_unit_test(add_arg_twice_gives_the_union),
	    cmocka_unit_test(add_arg_without_caret_is_an_expression),
	    cmocka_unit_test(add_arg_caret_alone_is_an_error),
	    cmocka_unit_test(count_is_the_number_of_hosts),
	    cmocka_unit_test(free_of_null_does_nothing),
	    cmocka_unit_test(sort_uniq_orders_and_drops_duplicates),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
