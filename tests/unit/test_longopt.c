/* SPDX-License-Identifier: MIT */
/* test_longopt.c - long options by their exact names only: which element getopt_long reads
 * next, and the error for a name that is not an option's in full. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "longopt.h"

static const struct option opts[] = {
    {"master-port", required_argument, NULL, 1}, {"max-bytes", required_argument, NULL, 2},
    {"port", required_argument, NULL, 3},        {"prom", required_argument, NULL, 4},
    {"dry-run", no_argument, NULL, 5},           {0},
};

static void an_exact_name_passes_alone_or_with_its_value(void **state)
{
	char msg[128] = "";

	assert_int_equal(longopt_check(opts, "--master-port", msg, sizeof(msg)), 0);
	assert_int_equal(longopt_check(opts, "--master-port=29501", msg, sizeof(msg)), 0);
	assert_int_equal(longopt_check(opts, "--dry-run", msg, sizeof(msg)), 0);
	assert_string_equal(msg, "");
}

static void what_is_not_a_long_option_passes(void **state)
{
	char msg[128] = "";

	assert_int_equal(longopt_check(opts, "-w", msg, sizeof(msg)), 0);
	assert_int_equal(longopt_check(opts, "node2", msg, sizeof(msg)), 0);
	assert_int_equal(longopt_check(opts, "--", msg, sizeof(msg)), 0);
}

static void a_prefix_of_one_option_is_an_error_naming_it(void **state)
{
	char msg[128];

	assert_int_equal(longopt_check(opts, "--master", msg, sizeof(msg)), -1);
	assert_string_equal(msg, "unknown option --master; did you mean --master-port?");
	assert_int_equal(longopt_check(opts, "--master=node2", msg, sizeof(msg)), -1);
	assert_string_equal(msg, "unknown option --master; did you mean --master-port?");
}

static void a_prefix_of_several_options_names_them_all(void **state)
{
	char msg[128];

	assert_int_equal(longopt_check(opts, "--ma", msg, sizeof(msg)), -1);
	assert_string_equal(msg, "unknown option --ma; did you mean --master-port or --max-bytes?");
}

static void a_near_misspelling_is_named(void **state)
{
	char msg[128];

	assert_int_equal(longopt_check(opts, "--prot", msg, sizeof(msg)), -1);
	assert_string_equal(msg, "unknown option --prot; did you mean --port or --prom?");
	assert_int_equal(longopt_check(opts, "--dryrun", msg, sizeof(msg)), -1);
	assert_string_equal(msg, "unknown option --dryrun; did you mean --dry-run?");
}

static void a_name_near_nothing_is_unknown_alone(void **state)
{
	char msg[128];

	assert_int_equal(longopt_check(opts, "--frobnicate", msg, sizeof(msg)), -1);
	assert_string_equal(msg, "unknown option --frobnicate");
}

static void the_next_option_skips_non_options_when_permuting(void **state)
{
	char *argv[] = {"run", "-w", "n1", "x.py", "--master", "n2", NULL};

	assert_int_equal(longopt_next(6, argv, 3, 1), 4);
	assert_int_equal(longopt_next(6, argv, 3, 0), -1);
	assert_int_equal(longopt_next(6, argv, 0, 1), 1);
}

static void nothing_after_a_double_dash_is_an_option(void **state)
{
	char *argv[] = {"run", "-w", "n1", "--", "x.py", "--master", "n2", NULL};

	assert_int_equal(longopt_next(7, argv, 3, 1), -1);
	assert_int_equal(longopt_next(7, argv, 7, 1), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(an_exact_name_passes_alone_or_with_its_value),
	    cmocka_unit_test(what_is_not_a_long_option_passes),
	    cmocka_unit_test(a_prefix_of_one_option_is_an_error_naming_it),
	    cmocka_unit_test(a_prefix_of_several_options_names_them_all),
	    cmocka_unit_test(a_near_misspelling_is_named),
	    cmocka_unit_test(a_name_near_nothing_is_unknown_alone),
	    cmocka_unit_test(the_next_option_skips_non_options_when_permuting),
	    cmocka_unit_test(nothing_after_a_double_dash_is_an_option),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
