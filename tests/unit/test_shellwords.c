/* SPDX-License-Identifier: MIT */
/*
 * test_shellwords.c - a typed command line split into words as a POSIX
 * shell splits it (no expansion): the cases are what `sh -c 'printf
 * "<%s>" ...'` prints for the same line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "shellwords.h"

/* The words of line as "<w1><w2>...", or "error: MESSAGE". */
static char *split(const char *line)
{
	char **w, err[CD_ERRLEN] = "", out[4096] = "";
	size_t n, off = 0;

	if (shellwords_split(line, &w, &n, err, sizeof(err)) < 0) {
		assert_null(w);
		return cd_asprintf("error: %s", err);
	}
	assert_null(w[n]);
	for (size_t i = 0; i < n; i++)
		off += (size_t)snprintf(out + off, sizeof(out) - off, "<%s>", w[i]);
	shellwords_free(w);
	return cd_strdup(out);
}

#define assert_split(line, want)                 \
	do {                                     \
		char *got_ = split(line);        \
		assert_string_equal(got_, want); \
		free(got_);                      \
	} while (0)

static void test_blanks_separate_words_and_runs_of_them_count_once(void **state)
{
	assert_split("  python3\t-c  x ", "<python3><-c><x>");
}

static void test_single_quotes_keep_everything_to_the_next_quote(void **state)
{
	assert_split("python3 -c 'print(\"a b\", {node_rank}); x = \\n'",
	             "<python3><-c><print(\"a b\", {node_rank}); x = \\n>");
}

static void
test_double_quotes_drop_the_backslash_only_before_quote_backslash_dollar_backtick(void **state)
{
	assert_split("echo \"a \\\"b\\\" \\\\ \\$HOME \\` \\n\"", "<echo><a \"b\" \\ $HOME ` \\n>");
}

static void test_a_backslash_outside_quotes_keeps_the_next_character(void **state)
{
	assert_split("a\\ b c\\'d", "<a b><c'd>");
}

static void test_quotes_join_with_what_touches_them(void **state)
{
	assert_split("\"a\"'b'c d''e", "<abc><de>");
}

static void test_empty_quotes_are_an_empty_word(void **state)
{
	assert_split("run '' \"\" x", "<run><><><x>");
}

static void test_no_expansion_of_dollar_star_or_tilde(void **state)
{
	assert_split("echo $HOME * ~/x", "<echo><$HOME><*><~/x>");
}

static void test_an_unclosed_quote_is_refused(void **state)
{
	assert_split("python3 -c 'print(1)", "error: a quote ' is not closed");
	assert_split("echo \"a", "error: a quote \" is not closed");
	assert_split("echo \"a\\\"", "error: a quote \" is not closed");
}

static void test_a_blank_line_is_no_command(void **state)
{
	assert_split("", "error: no command given");
	assert_split(" \t ", "error: no command given");
}

static void test_more_than_the_cap_of_words_is_refused(void **state)
{
	char line[2 * (SHELLWORDS_MAX + 1) + 1];

	for (size_t i = 0; i < SHELLWORDS_MAX + 1; i++)
		memcpy(line + 2 * i, "x ", 2);
	line[2 * (SHELLWORDS_MAX + 1)] = 0;
	assert_split(line, "error: more than 256 words");
	line[2 * SHELLWORDS_MAX] = 0;
	{
		char **w, err[CD_ERRLEN];
		size_t n;

		assert_int_equal(shellwords_split(line, &w, &n, err, sizeof(err)), 0);
		assert_int_equal(n, SHELLWORDS_MAX);
		shellwords_free(w);
	}
}

static void test_free_of_null_is_a_no_op(void **state)
{
	shellwords_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_blanks_separate_words_and_runs_of_them_count_once),
	    cmocka_unit_test(test_single_quotes_keep_everything_to_the_next_quote),
	    cmocka_unit_test(
	        test_double_quotes_drop_the_backslash_only_before_quote_backslash_dollar_backtick),
	    cmocka_unit_test(test_a_backslash_outside_quotes_keeps_the_next_character),
	    cmocka_unit_test(test_quotes_join_with_what_touches_them),
	    cmocka_unit_test(test_empty_quotes_are_an_empty_word),
	    cmocka_unit_test(test_no_expansion_of_dollar_star_or_tilde),
	    cmocka_unit_test(test_an_unclosed_quote_is_refused),
	    cmocka_unit_test(test_a_blank_line_is_no_command),
	    cmocka_unit_test(test_more_than_the_cap_of_words_is_refused),
	    cmocka_unit_test(test_free_of_null_is_a_no_op),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
