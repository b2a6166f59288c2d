/* SPDX-License-Identifier: MIT */
/*
 * test_termtext.c - node text made safe for a terminal: escape sequences,
 * C1 controls, DEL and invalid UTF-8 become \xHH; valid UTF-8 text is kept.
 */
#include "termtext.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct esc_case {
	const char *name;
	const char *in;
	size_t len; /* 0: strlen(in) */
	unsigned keep;
	const char *want;
};

static const struct esc_case esc_cases[] = {
    {.name = "plain ASCII", .in = "node3 Debian 12", .want = "node3 Debian 12"},
    {.name = "clear screen", .in = "node3\x1b[2J", .want = "node3\\x1b[2J"},
    {.name = "OSC title ended by BEL",
     .in = "node3\x1b]0;X\x07 Debian",
     .want = "node3\\x1b]0;X\\x07 Debian"},
    {.name = "C1 CSI U+009B",
     .in = "a\xc2\x9b"
           "2Jb",
     .want = "a\\xc2\\x9b2Jb"},
    {.name = "C1 NEL U+0085", .in = "\xc2\x85", .want = "\\xc2\\x85"},
    {.name = "U+00A0 is text", .in = "\xc2\xa0", .want = "\xc2\xa0"},
    {.name = "DEL", .in = "x\x7fy", .want = "x\\x7fy"},
    {.name = "carriage return", .in = "10%\r20%", .want = "10%\\x0d20%"},
    {.name = "NUL inside", .in = "a\0b", .len = 3, .want = "a\\x00b"},
    {.name = "lone 8-bit C1 byte",
     .in = "\x9b"
           "2J",
     .want = "\\x9b2J"},
    {.name = "invalid UTF-8: stray continuation", .in = "a\x80z", .want = "a\\x80z"},
    {.name = "invalid UTF-8: truncated", .in = "a\xe2\x82", .want = "a\\xe2\\x82"},
    {.name = "invalid UTF-8: overlong slash", .in = "\xc0\xaf", .want = "\\xc0\\xaf"},
    {.name = "invalid UTF-8: surrogate", .in = "\xed\xa0\x80", .want = "\\xed\\xa0\\x80"},
    {.name = "valid multibyte kept",
     .in = "caf\xc3\xa9 \xe2\x82\xac \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x98\x80",
     .want = "caf\xc3\xa9 \xe2\x82\xac \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x98\x80"},
    {.name = "backslash kept", .in = "C:\\x1b", .want = "C:\\x1b"},
    {.name = "newline and tab escaped by default", .in = "a\tb\nc", .want = "a\\x09b\\x0ac"},
    {.name = "newline kept when asked",
     .in = "a\tb\nc",
     .keep = TERMTEXT_KEEP_NL,
     .want = "a\\x09b\nc"},
    {.name = "tab kept when asked",
     .in = "a\tb\nc",
     .keep = TERMTEXT_KEEP_TAB,
     .want = "a\tb\\x0ac"},
};

static void escape_table(void **state)
{
	for (size_t i = 0; i < sizeof(esc_cases) / sizeof(esc_cases[0]); i++) {
		const struct esc_case *c = &esc_cases[i];
		size_t n = c->len ? c->len : strlen(c->in);
		char *got = termtext_dup(c->in, n, c->keep);

		if (strcmp(got, c->want) != 0)
			fail_msg("%s: got \"%s\", want \"%s\"", c->name, got, c->want);
		assert_int_equal(termtext_len(c->in, n, c->keep), strlen(c->want));
		for (const char *p = got; *p; p++)
			if (*p == 0x1b || *p == 0x07 || *p == 0x7f)
				fail_msg("%s: control byte 0x%02x left", c->name, *p);
		free(got);
	}
}

/* A buffer too small keeps whole pieces only, NUL-ended, and says how long
 * the whole would be. */
static void escape_cut_keeps_whole_pieces(void **state)
{
	char out[8];

	assert_int_equal(termtext_escape(out, sizeof(out), "ab\x1b[2J", 6, 0), 9);
	assert_string_equal(out, "ab\\x1b[");
	assert_int_equal(termtext_escape(out, 5, "ab\x1b", 3, 0), 6);
	assert_string_equal(out, "ab");
	assert_int_equal(termtext_escape(out, 4, "\xe2\x82\xac\xe2\x82\xac", 6, 0), 6);
	assert_string_equal(out, "\xe2\x82\xac");
}

/* The text printers' printf: the formatted text is escaped, the printer's
 * own newlines and tabs stay. */
static void printf_escapes_arguments(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(termtext_printf(f, "%-8s|%s\t%d\n", "n\x1b]0;X\x07", "\xc2\x9b", 7), 26);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(buf, "n\\x1b]0;X\\x07 |\\xc2\\x9b\t7\n");
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(escape_table),
	    cmocka_unit_test(escape_cut_keeps_whole_pieces),
	    cmocka_unit_test(printf_escapes_arguments),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
