/* SPDX-License-Identifier: MIT */
/* test_scan.c - the line and word cursors, trimming, bounded integers, the
 * bounded file reader and its first-line form (core/scan.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cd.h"
#include "scan.h"

/* Every line of text (len bytes), each as "[line]", joined. */
static void lines_of(const char *text, size_t len, char *out, size_t outlen)
{
	const char *p = text, *end = text + len, *line;
	size_t n, o = 0;

	out[0] = '\0';
	while (scan_next_line(&p, end, &line, &n))
		o += (size_t)snprintf(out + o, outlen - o, "[%.*s]", (int)n, line);
}

static void empty_input_has_no_line(void **state)
{
	const char *p = "", *line = NULL;
	size_t n = 99;

	assert_int_equal(scan_next_line(&p, p, &line, &n), 0);
	assert_null(line);
	assert_int_equal(n, 99);
}

static void last_line_without_newline_is_a_line(void **state)
{
	char got[64];

	lines_of("one\ntwo", 7, got, sizeof(got));
	assert_string_equal(got, "[one][two]");
}

static void final_newline_starts_no_empty_line(void **state)
{
	char got[64];

	lines_of("one\n", 4, got, sizeof(got));
	assert_string_equal(got, "[one]");
	lines_of("\n\n", 2, got, sizeof(got));
	assert_string_equal(got, "[][]");
}

static void crlf_line_keeps_its_cr_until_trimmed(void **state)
{
	const char *text = "key = value\r\nnext\r\n", *p = text, *line;
	size_t n;

	assert_int_equal(scan_next_line(&p, text + strlen(text), &line, &n), 1);
	assert_int_equal(n, 12);
	assert_int_equal(line[11], '\r');
	scan_trim(&line, &n);
	assert_int_equal(n, 11);
	assert_memory_equal(line, "key = value", 11);
}

static void line_cursor_stops_at_end_not_at_nul(void **state)
{
	static const char text[] = {'a', '\0', 'b', '\n', 'c'};
	const char *p = text, *line;
	size_t n;

	assert_int_equal(scan_next_line(&p, text + 3, &line, &n), 1);
	assert_int_equal(n, 3);
	assert_ptr_equal(p, text + 3);
	assert_int_equal(scan_next_line(&p, text + 3, &line, &n), 0);
}

static void trim_removes_the_whole_whitespace_set_at_both_ends(void **state)
{
	const char *s = " \t\r\n\v\fa b\f\v\n\r\t ";
	size_t n = strlen(s);

	scan_trim(&s, &n);
	assert_int_equal(n, 3);
	assert_memory_equal(s, "a b", 3);
}

static void trim_of_only_whitespace_is_empty(void **state)
{
	const char *s = " \t \r", *start = s;
	size_t n = strlen(s);

	scan_trim(&s, &n);
	assert_int_equal(n, 0);
	assert_ptr_equal(s, start + 4);
}

static void trim_keeps_other_control_bytes(void **state)
{
	const char *s = "\x01x\x1b";
	size_t n = 3;

	scan_trim(&s, &n);
	assert_int_equal(n, 3);
}

static void words_are_split_on_any_whitespace(void **state)
{
	const char *text = "  10.0.0.1\tnode1 \v node1.cluster\r\n", *p = text, *w;
	const char *end = text + strlen(text);
	size_t n;

	assert_int_equal(scan_next_word(&p, end, &w, &n), 1);
	assert_int_equal(n, 8);
	assert_memory_equal(w, "10.0.0.1", 8);
	assert_int_equal(scan_next_word(&p, end, &w, &n), 1);
	assert_memory_equal(w, "node1", n);
	assert_int_equal(scan_next_word(&p, end, &w, &n), 1);
	assert_int_equal(n, 13);
	assert_int_equal(scan_next_word(&p, end, &w, &n), 0);
	assert_ptr_equal(p, end);
}

static void no_word_in_empty_or_blank_input(void **state)
{
	const char *text = " \t ", *p = text, *w = NULL;
	size_t n = 7;

	assert_int_equal(scan_next_word(&p, text, &w, &n), 0);
	assert_int_equal(scan_next_word(&p, text + 3, &w, &n), 0);
	assert_ptr_equal(p, text + 3);
	assert_null(w);
	assert_int_equal(n, 7);
}

static void uint_stops_at_the_first_non_digit(void **state)
{
	const char *s = "32768\t60999", *p = s;
	uint64_t v = 0;

	assert_int_equal(scan_uint(&p, s + strlen(s), 10, 65535, &v), 0);
	assert_int_equal(v, 32768);
	assert_ptr_equal(p, s + 5);
}

static void uint_at_max_is_accepted_and_one_past_is_toobig(void **state)
{
	const char *ok = "65535", *over = "65536", *p;
	uint64_t v = 7;

	p = ok;
	assert_int_equal(scan_uint(&p, ok + 5, 10, 65535, &v), 0);
	assert_int_equal(v, 65535);
	p = over;
	assert_int_equal(scan_uint(&p, over + 5, 10, 65535, &v), CD_ERR_TOOBIG);
	assert_ptr_equal(p, over);
	assert_int_equal(v, 65535);
}

static void uint_overflowing_64_bits_is_toobig(void **state)
{
	const char *max = "18446744073709551615", *over = "18446744073709551616";
	const char *big = "99999999999999999999999", *p;
	uint64_t v = 0;

	p = max;
	assert_int_equal(scan_uint(&p, max + strlen(max), 10, UINT64_MAX, &v), 0);
	assert_true(v == UINT64_MAX);
	p = over;
	assert_int_equal(scan_uint(&p, over + strlen(over), 10, UINT64_MAX, &v), CD_ERR_TOOBIG);
	p = big;
	assert_int_equal(scan_uint(&p, big + strlen(big), 10, UINT64_MAX, &v), CD_ERR_TOOBIG);
	p = "10000000000000000"; /* 2^64 in hexadecimal */
	assert_int_equal(scan_uint(&p, p + 17, 16, UINT64_MAX, &v), CD_ERR_TOOBIG);
}

static void uint_without_a_digit_is_a_parse_error(void **state)
{
	const char *cases[] = {"", " 1", "-1", "+1", "x"};
	uint64_t v = 5;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *p = cases[i];

		assert_int_equal(scan_uint(&p, cases[i] + strlen(cases[i]), 10, 100, &v),
		                 CD_ERR_PARSE);
		assert_ptr_equal(p, cases[i]);
	}
	assert_int_equal(v, 5);
}

static void uint_reads_hexadecimal_of_either_case(void **state)
{
	const char *s = "00fFaA g", *p = s;
	uint64_t v = 0;

	assert_int_equal(scan_uint(&p, s + strlen(s), 16, UINT64_MAX, &v), 0);
	assert_int_equal(v, 0xffaa);
	assert_ptr_equal(p, s + 6);
	p = "1f";
	assert_int_equal(scan_uint(&p, p + 2, 10, UINT64_MAX, &v), 0);
	assert_int_equal(v, 1);
}

static void uint_reads_no_byte_past_end(void **state)
{
	const char *s = "12345", *p = s;
	uint64_t v = 0;

	assert_int_equal(scan_uint(&p, s + 2, 10, 1000, &v), 0);
	assert_int_equal(v, 12);
	assert_int_equal(scan_uint(&p, p, 10, 1000, &v), CD_ERR_PARSE);
}

static void uint_rejects_other_bases(void **state)
{
	const char *p = "17";
	uint64_t v = 0;

	assert_int_equal(scan_uint(&p, p + 2, 8, 100, &v), CD_ERR_PARSE);
}

/* A temporary file holding len bytes of 'x'; its path in path. */
static void write_file(char *path, size_t pathlen, size_t len)
{
	FILE *f;

	snprintf(path, pathlen, "/tmp/test_scan.%ld.%zu", (long)getpid(), len);
	f = fopen(path, "w");
	assert_non_null(f);
	for (size_t i = 0; i < len; i++)
		fputc('x', f);
	fclose(f);
}

static void reader_takes_a_file_of_exactly_cap_bytes(void **state)
{
	static const enum scan_file_mode modes[] = {SCAN_FILE_REGULAR, SCAN_FILE_TO_EOF};
	char path[128], err[CD_ERRLEN], *data;
	size_t len;

	write_file(path, sizeof(path), 10000);
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(
		    scan_read_file(path, 10000, modes[i], &data, &len, err, sizeof(err)), 0);
		assert_int_equal(len, 10000);
		assert_int_equal(data[9999], 'x');
		assert_int_equal(data[10000], '\0');
		free(data);
	}
	unlink(path);
}

static void reader_refuses_a_file_one_byte_over_cap(void **state)
{
	char path[128], err[CD_ERRLEN], want[256], *data = (char *)1;
	size_t len = 5;

	write_file(path, sizeof(path), 10001);
	assert_int_equal(
	    scan_read_file(path, 10000, SCAN_FILE_TO_EOF, &data, &len, err, sizeof(err)),
	    CD_ERR_TOOBIG);
	assert_null(data);
	assert_int_equal(len, 0);
	snprintf(want, sizeof(want), "%s is larger than 10000 bytes", path);
	assert_string_equal(err, want);
	assert_int_equal(
	    scan_read_file(path, 10000, SCAN_FILE_REGULAR, &data, &len, err, sizeof(err)),
	    CD_ERR_TOOBIG);
	snprintf(want, sizeof(want), "%s: 10001 bytes, more than the 10000 expected", path);
	assert_string_equal(err, want);
	unlink(path);
}

static void reader_reads_an_empty_file(void **state)
{
	char path[128], err[CD_ERRLEN], *data;
	size_t len = 9;

	write_file(path, sizeof(path), 0);
	assert_int_equal(scan_read_file(path, 0, SCAN_FILE_TO_EOF, &data, &len, err, sizeof(err)),
	                 0);
	assert_int_equal(len, 0);
	assert_string_equal(data, "");
	free(data);
	unlink(path);
}

/* /proc/self/status reads as size 0, yet holds text. */
static void to_eof_mode_reads_a_proc_file_whose_size_is_zero(void **state)
{
	char err[CD_ERRLEN], *data;
	size_t len;

	assert_int_equal(scan_read_file("/proc/self/status", 1 << 20, SCAN_FILE_TO_EOF, &data, &len,
	                                err, sizeof(err)),
	                 0);
	assert_true(len > 0);
	assert_int_equal(strlen(data), len);
	assert_non_null(strstr(data, "Pid:"));
	free(data);
}

static void regular_mode_sees_a_proc_file_as_empty(void **state)
{
	char err[CD_ERRLEN], *data;
	size_t len = 9;

	assert_int_equal(scan_read_file("/proc/self/status", 1 << 20, SCAN_FILE_REGULAR, &data,
	                                &len, err, sizeof(err)),
	                 0);
	assert_int_equal(len, 0);
	free(data);
}

static void to_eof_mode_applies_the_cap_to_a_proc_file(void **state)
{
	char err[CD_ERRLEN], *data = (char *)1;
	size_t len;

	assert_int_equal(
	    scan_read_file("/proc/self/status", 8, SCAN_FILE_TO_EOF, &data, &len, err, sizeof(err)),
	    CD_ERR_TOOBIG);
	assert_null(data);
	assert_string_equal(err, "/proc/self/status is larger than 8 bytes");
}

static void missing_file_is_notfound_with_the_mode_s_message(void **state)
{
	char err[CD_ERRLEN], *data;
	size_t len;

	assert_int_equal(
	    scan_read_file("/nonexistent/x", 10, SCAN_FILE_TO_EOF, &data, &len, err, sizeof(err)),
	    CD_ERR_NOTFOUND);
	assert_string_equal(err, "cannot read /nonexistent/x: No such file or directory");
	assert_int_equal(
	    scan_read_file("/nonexistent/x", 10, SCAN_FILE_REGULAR, &data, &len, err, sizeof(err)),
	    CD_ERR_NOTFOUND);
	assert_string_equal(err, "/nonexistent/x: No such file or directory");
}

static void regular_mode_refuses_a_directory(void **state)
{
	char err[CD_ERRLEN], *data;
	size_t len;

	assert_int_equal(
	    scan_read_file("/tmp", 10, SCAN_FILE_REGULAR, &data, &len, err, sizeof(err)),
	    CD_ERR_IO);
	assert_string_equal(err, "/tmp: not a readable regular file");
}

/* A temporary file holding the len bytes of text; its path in path. */
static void write_text(char *path, size_t pathlen, const char *text, size_t len)
{
	FILE *f;

	snprintf(path, pathlen, "/tmp/test_scan.%ld.text", (long)getpid());
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	fclose(f);
}

static void first_line_ends_at_cr_lf_or_nul(void **state)
{
	static const struct {
		const char *text;
		size_t len;
		const char *line;
	} cases[] = {
	    {"ssh-ed25519 AAAA me@head\n", 25, "ssh-ed25519 AAAA me@head"},
	    {"ssh-ed25519 AAAA me@head\r\nsecond\n", 33, "ssh-ed25519 AAAA me@head"},
	    {"ssh-ed25519 AAAA", 16, "ssh-ed25519 AAAA"},
	    {"ssh-ed25519\0AAAA\n", 17, "ssh-ed25519"},
	    {"", 0, ""},
	    {"\nssh-ed25519 AAAA\n", 18, ""},
	};
	char path[128], err[CD_ERRLEN], *line;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		write_text(path, sizeof(path), cases[i].text, cases[i].len);
		assert_int_equal(scan_read_first_line(path, 100, &line, err, sizeof(err)), 0);
		assert_string_equal(line, cases[i].line);
		free(line);
	}
	unlink(path);
}

static void first_line_of_a_missing_file_is_notfound(void **state)
{
	char err[CD_ERRLEN], *line = (char *)1;

	assert_int_equal(scan_read_first_line("/nonexistent/x.pub", 100, &line, err, sizeof(err)),
	                 CD_ERR_NOTFOUND);
	assert_null(line);
	assert_string_equal(err, "/nonexistent/x.pub: No such file or directory");
}

static void first_line_applies_the_cap_to_the_whole_file(void **state)
{
	char path[128], err[CD_ERRLEN], want[256], *line = (char *)1;

	write_text(path, sizeof(path), "ab\ncdef\n", 8);
	assert_int_equal(scan_read_first_line(path, 7, &line, err, sizeof(err)), CD_ERR_TOOBIG);
	assert_null(line);
	snprintf(want, sizeof(want), "%s: 8 bytes, more than the 7 expected", path);
	assert_string_equal(err, want);
	unlink(path);
}

/* scan_read_flat: /proc's NUL-separated text as one line, as a process list shows it */
static void flat_reads_nuls_and_newlines_as_spaces_and_cuts_the_tail(void **state)
{
	char path[] = "/tmp/cd-test-scan-flat-XXXXXX", out[64];
	static const char text[] = "python3\0train.py\0--epochs\0"
	                           "3\n\0";
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)(sizeof(text) - 1));
	close(fd);
	scan_read_flat(path, 4096, out, sizeof(out));
	assert_string_equal(out, "python3 train.py --epochs 3");
	scan_read_flat(path, 4096, out, 8); /* cut to fit */
	assert_string_equal(out, "python3");
	unlink(path);
	scan_read_flat(path, 4096, out, sizeof(out)); /* gone: empty */
	assert_string_equal(out, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(empty_input_has_no_line),
	    cmocka_unit_test(last_line_without_newline_is_a_line),
	    cmocka_unit_test(final_newline_starts_no_empty_line),
	    cmocka_unit_test(crlf_line_keeps_its_cr_until_trimmed),
	    cmocka_unit_test(line_cursor_stops_at_end_not_at_nul),
	    cmocka_unit_test(trim_removes_the_whole_whitespace_set_at_both_ends),
	    cmocka_unit_test(trim_of_only_whitespace_is_empty),
	    cmocka_unit_test(trim_keeps_other_control_bytes),
	    cmocka_unit_test(words_are_split_on_any_whitespace),
	    cmocka_unit_test(no_word_in_empty_or_blank_input),
	    cmocka_unit_test(uint_stops_at_the_first_non_digit),
	    cmocka_unit_test(uint_at_max_is_accepted_and_one_past_is_toobig),
	    cmocka_unit_test(uint_overflowing_64_bits_is_toobig),
	    cmocka_unit_test(uint_without_a_digit_is_a_parse_error),
	    cmocka_unit_test(uint_reads_hexadecimal_of_either_case),
	    cmocka_unit_test(uint_reads_no_byte_past_end),
	    cmocka_unit_test(uint_rejects_other_bases),
	    cmocka_unit_test(reader_takes_a_file_of_exactly_cap_bytes),
	    cmocka_unit_test(reader_refuses_a_file_one_byte_over_cap),
	    cmocka_unit_test(reader_reads_an_empty_file),
	    cmocka_unit_test(to_eof_mode_reads_a_proc_file_whose_size_is_zero),
	    cmocka_unit_test(regular_mode_sees_a_proc_file_as_empty),
	    cmocka_unit_test(to_eof_mode_applies_the_cap_to_a_proc_file),
	    cmocka_unit_test(missing_file_is_notfound_with_the_mode_s_message),
	    cmocka_unit_test(regular_mode_refuses_a_directory),
	    cmocka_unit_test(first_line_ends_at_cr_lf_or_nul),
	    cmocka_unit_test(first_line_of_a_missing_file_is_notfound),
	    cmocka_unit_test(first_line_applies_the_cap_to_the_whole_file),
	    cmocka_unit_test(flat_reads_nuls_and_newlines_as_spaces_and_cuts_the_tail),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
