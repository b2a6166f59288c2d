/* SPDX-License-Identifier: MIT */
/*
 * fuzz_blockedit.c - libFuzzer harness for the marked block clusterdoc fix
 * writes into users' files (fixers/blockedit.h) and the diffs that show it
 * (fixers/textdiff.h): whatever a ~/.bashrc or /etc/hosts holds, the edit
 * is confined to the block, is undone by removing the block, and the diff
 * shown, applied to the old text, gives the new one.
 *
 * The first input byte (the seeds start with an ASCII digit) picks:
 *   bits 0-1  where a new block goes: 0 BLOCK_TOP, 1 BLOCK_AFTER_COMMENTS,
 *             2 BLOCK_BOTTOM, 3 each of them in turn;
 *   bit 2     0: the rest is the text, a form feed ('\f'), then the body (up
 *             to a NUL byte, if any; a newline is added when it lacks one);
 *             no form feed: all text, and a fixed body;
 *             1: the whole rest is the text (form feeds and NUL bytes
 *             included), with the fixed body.
 * Seeds: tests/fuzz/corpus/blockedit/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "fixers/blockedit.h"
#include "fixers/textdiff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NAME "env"

static size_t count_lines(const char *s, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++)
		n += s[i] == '\n';
	return n;
}

static const char no_newline[] = "\\ No newline at end of file\n";

/* "-L,S" or "-L" (S = 1) of a hunk header, after *p's expected sign. */
static void parse_range(const char **p, char sign, long *line, long *count)
{
	char *e;

	if (**p != sign)
		abort();
	*line = strtol(*p + 1, &e, 10);
	*count = 1;
	if (*e == ',')
		*count = strtol(e + 1, &e, 10);
	if (*line < 0 || *count < 0)
		abort();
	*p = e;
}

/*
 * Apply the unified diff d to a (alen bytes) and check that it gives b:
 * every context and removed line must be a's, the hunks in order and their
 * counts right, and the '+'/'-' lines must number what textdiff_count says.
 */
static void check_diff(const char *a, size_t alen, const char *b, size_t blen, const char *d)
{
	char *out;
	size_t apos = 0, aline = 0, bline = 0, olen = 0, plus = 0, minus = 0, added, removed;
	const char *p = d;
	int same = alen == blen && (alen == 0 || memcmp(a, b, alen) == 0);

	textdiff_count(a, alen, b, blen, &added, &removed);
	if ((alen && memchr(a, '\0', alen)) || (blen && memchr(b, '\0', blen))) {
		if (strcmp(d, same ? "" : "Binary files a and b differ\n") != 0)
			abort();
		return;
	}
	if ((*d == '\0') != same)
		abort();
	if (same)
		return;
	if (strncmp(p, "--- a\n+++ b\n", 12) != 0)
		abort();
	p += 12;
	out = malloc(blen + 1);
	if (!out)
		abort();
	while (*p) {
		long l0, s0, l1, s1, seen0 = 0, seen1 = 0;

		if (strncmp(p, "@@ ", 3) != 0)
			abort();
		p += 3;
		parse_range(&p, '-', &l0, &s0);
		if (*p++ != ' ')
			abort();
		parse_range(&p, '+', &l1, &s1);
		if (strncmp(p, " @@\n", 4) != 0)
			abort();
		p += 4;
		/* Copy a's lines before the hunk (an empty range names the
		 * line before it). */
		while (aline < (size_t)(s0 == 0 ? l0 : l0 - 1)) {
			const char *nl = memchr(a + apos, '\n', alen - apos);
			size_t n = nl ? (size_t)(nl - (a + apos)) + 1 : alen - apos;

			if (n == 0 || olen + n > blen)
				abort();
			memcpy(out + olen, a + apos, n);
			olen += n;
			apos += n;
			aline++;
			bline++;
		}
		if (aline != (size_t)(s0 == 0 ? l0 : l0 - 1) ||
		    bline != (size_t)(s1 == 0 ? l1 : l1 - 1))
			abort();
		while (*p == ' ' || *p == '-' || *p == '+') {
			char mark = *p++;
			const char *nl = strchr(p, '\n');
			size_t n;

			if (!nl)
				abort();
			n = (size_t)(nl - p) + 1;
			if (strncmp(nl + 1, no_newline, sizeof(no_newline) - 1) == 0) {
				n--; /* the line ends its text without a newline */
				nl += sizeof(no_newline) - 1;
			}
			if (mark != '+') {
				if (apos + n > alen || memcmp(a + apos, p, n) != 0)
					abort();
				apos += n;
				aline++;
				seen0++;
				minus += mark == '-';
			}
			if (mark != '-') {
				if (olen + n > blen)
					abort();
				memcpy(out + olen, p, n);
				olen += n;
				bline++;
				seen1++;
				plus += mark == '+';
			}
			p = nl + 1;
		}
		if (seen0 != s0 || seen1 != s1)
			abort();
	}
	if (olen + (alen - apos) != blen)
		abort();
	memcpy(out + olen, a + apos, alen - apos);
	if (memcmp(out, b, blen) != 0)
		abort();
	if (added != plus || removed != minus)
		abort();
	free(out);
}

static void diff_both_ways(const char *a, size_t alen, const char *b, size_t blen)
{
	char *d = textdiff_unified(a, alen, b, blen, "a", "b", (int)(alen % 4));

	check_diff(a, alen, b, blen, d);
	free(d);
	d = textdiff_unified(b, blen, a, alen, "a", "b", 3);
	check_diff(b, blen, a, alen, d);
	free(d);
}

static void check_where(const char *text, size_t len, const char *body, int body_ok,
                        enum blockedit_where where)
{
	char err[CD_ERRLEN] = "", *out = NULL, *again = NULL, *back = NULL, *got = NULL;
	size_t outlen = 0, againlen, backlen, start = 0, end = 0, s2, e2;
	size_t blen = strlen(body);
	int found = blockedit_find(text, len, "#", NAME, &start, &end, err, sizeof(err));
	int rc = blockedit_set(text, len, "#", NAME, body, where, &out, &outlen, err, sizeof(err));

	if (found < 0 || !body_ok) {
		if (rc != CD_ERR_PARSE || out || outlen || err[0] == '\0')
			abort();
		return;
	}
	if (rc != 0 || !out || out[outlen] != '\0' || memchr(out, '\0', outlen))
		abort();
	/* The block is there, holding the body. */
	if (blockedit_find(out, outlen, "#", NAME, &s2, &e2, err, sizeof(err)) != 1)
		abort();
	got = blockedit_body(out, outlen, "#", NAME);
	if (!got || strcmp(got, body) != 0)
		abort();
	/* Setting it again changes nothing. */
	if (blockedit_set(out, outlen, "#", NAME, body, where, &again, &againlen, err,
	                  sizeof(err)) != 0 ||
	    againlen != outlen || memcmp(again, out, outlen) != 0)
		abort();
	if (found == 1) {
		/* Replaced where it was; the bytes around it kept. */
		if (s2 != start || memcmp(out, text, start) != 0 || outlen - e2 != len - end ||
		    memcmp(out + e2, text + end, len - end) != 0)
			abort();
	} else {
		/* Removing the new block gives the text back (with the final
		 * newline set added, when it had to). */
		if (blockedit_remove(out, outlen, "#", NAME, &back, &backlen, err, sizeof(err)) !=
		    0)
			abort();
		if (len == 0 || text[len - 1] == '\n') {
			size_t added, removed;

			if (backlen != len || memcmp(back, text, len) != 0)
				abort();
			textdiff_count(text, len, out, outlen, &added, &removed);
			if (added != count_lines(body, blen) + 2 || removed != 0)
				abort();
		} else if (!(backlen == len && memcmp(back, text, len) == 0) &&
		           !(backlen == len + 1 && memcmp(back, text, len) == 0 &&
		             back[len] == '\n')) {
			abort();
		}
	}
	diff_both_ways(text, len, out, outlen);
	free(back);
	free(again);
	free(got);
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *rest = (const char *)data + 1, *sep;
	size_t restlen = size ? size - 1 : 0, len, start, end, outlen;
	char *text, *body, *out = NULL, err[CD_ERRLEN] = "";
	int mode = size ? data[0] : 0, found, body_ok;

	if (size == 0)
		return 0;
	sep = (mode & 4) ? NULL : memchr(rest, '\f', restlen);
	len = sep ? (size_t)(sep - rest) : restlen;
	text = malloc(len + 1);
	if (!text)
		abort();
	memcpy(text, rest, len);
	text[len] = '\0';
	if (sep) {
		size_t blen = strnlen(sep + 1, restlen - len - 1);

		body = malloc(blen + 2);
		if (!body)
			abort();
		memcpy(body, sep + 1, blen);
		if (blen > 0 && body[blen - 1] != '\n')
			body[blen++] = '\n';
		body[blen] = '\0';
	} else {
		body = strdup("export NCCL_SOCKET_IFNAME=eth1\n");
		if (!body)
			abort();
	}
	/* A body holding one of the block's own markers cannot be written. */
	body_ok = blockedit_find(body, strlen(body), "#", NAME, &start, &end, NULL, 0) == 0;

	found = blockedit_find(text, len, "#", NAME, &start, &end, err, sizeof(err));
	if (found < 0) {
		if (found != CD_ERR_PARSE || strncmp(err, "line ", 5) != 0 ||
		    blockedit_body(text, len, "#", NAME) != NULL)
			abort();
	} else if (found == 1 && (start >= end || end > len)) {
		abort();
	}
	for (int w = 0; w < 3; w++)
		if ((mode & 3) == 3 || (mode & 3) == w)
			check_where(text, len, body, body_ok, (enum blockedit_where)w);

	/* Removing: the block's bytes go, nothing else. */
	if (blockedit_remove(text, len, "#", NAME, &out, &outlen, err, sizeof(err)) !=
	    (found < 0 ? CD_ERR_PARSE : 0))
		abort();
	if (found >= 0) {
		size_t cut = found == 1 ? end - start : 0;

		if (outlen != len - cut ||
		    (found == 1 && (memcmp(out, text, start) != 0 ||
		                    memcmp(out + start, text + end, len - end) != 0)))
			abort();
		if (found == 0 && memcmp(out, text, len) != 0)
			abort();
		free(out);
	}

	/* Arbitrary pairs through the diff. */
	diff_both_ways(text, len, body, strlen(body));
	free(body);
	free(text);
	return 0;
}
