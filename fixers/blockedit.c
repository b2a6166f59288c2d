/* SPDX-License-Identifier: MIT */
/*
 * blockedit.c - find, set and remove clusterdoc's marked block in a text
 * (see blockedit.h).
 */
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "fixers/blockedit.h"

/* NAME's two marker lines, as written (without "\n"). */
struct markers {
	char *begin;
	char *end;
};

/* Where NAME's block lies in a text. */
struct span {
	size_t start, end;           /* the whole block */
	size_t body_start, body_end; /* the lines between the markers */
};

enum line_kind { LINE_OTHER, LINE_BEGIN, LINE_END };

static int name_valid(const char *name)
{
	if (!name || !*name)
		return 0;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-'))
			return 0;
	return 1;
}

/* A prefix with a line break would make markers that are not one line, and
 * one with leading blanks markers that the tolerant match trims away. */
static int prefix_valid(const char *prefix)
{
	if (!prefix || !*prefix || *prefix == ' ')
		return 0;
	for (const unsigned char *p = (const unsigned char *)prefix; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return 0;
	return 1;
}

static int markers_init(struct markers *m, const char *prefix, const char *name, char *err,
                        size_t errlen)
{
	m->begin = m->end = NULL;
	if (!name_valid(name))
		return cd_errf(err, errlen, CD_ERR_PARSE, "block name \"%s\" is not [a-z0-9-]+",
		               name ? name : "(null)");
	if (!prefix_valid(prefix))
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "comment prefix \"%s\" is empty, starts with a blank or holds a "
		               "control character",
		               prefix ? prefix : "(null)");
	m->begin = cd_asprintf("%s >>> clusterdoc %s >>>", prefix, name);
	m->end = cd_asprintf("%s <<< clusterdoc %s <<<", prefix, name);
	return 0;
}

static void markers_fini(struct markers *m)
{
	free(m->begin);
	free(m->end);
}

static int blank(char c)
{
	return c == ' ' || c == '\t';
}

/*
 * Trim the spaces and tabs around line [*p, *p + *n) (no '\n'), and the '\r'
 * of a CRLF ending. Not scan_trim: it also takes '\v', '\f' and a leading
 * '\r', and both callers would then read real files differently. A line that
 * is only a form feed (the page break some editors put between sections of
 * an rc file) would count as blank, so insert_pos would carry the block past
 * it and into the comments of the next section; and a marker line ending in
 * '\f' or '\v', which is not the line we write, would be taken for ours and
 * rewritten.
 */
static void trim(const char **p, size_t *n)
{
	while (*n > 0 && blank(**p)) {
		(*p)++;
		(*n)--;
	}
	while (*n > 0 && (blank((*p)[*n - 1]) || (*p)[*n - 1] == '\r'))
		(*n)--;
}

static int line_equals(const char *p, size_t n, const char *s)
{
	return n == strlen(s) && memcmp(p, s, n) == 0;
}

static enum line_kind line_kind(const char *p, size_t n, const struct markers *m)
{
	trim(&p, &n);
	if (line_equals(p, n, m->begin))
		return LINE_BEGIN;
	if (line_equals(p, n, m->end))
		return LINE_END;
	return LINE_OTHER;
}

/*
 * Walk the lines of text once: 1 with *s filled, 0 when NAME has no marker,
 * or CD_ERR_PARSE naming the line. A line is the bytes up to and including
 * its '\n'; the last one may have none.
 */
static int scan(const char *text, size_t len, const struct markers *m, struct span *s, char *err,
                size_t errlen)
{
	size_t pos = 0, line = 0, open_line = 0, first_line = 0;
	int open = 0, found = 0;

	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t eol = nl ? (size_t)(nl - text) : len, next = nl ? eol + 1 : len;

		line++;
		if (memchr(text + pos, '\0', eol - pos))
			return cd_errf(err, errlen, CD_ERR_PARSE,
			               "line %zu holds a NUL byte: not a text file", line);
		switch (line_kind(text + pos, eol - pos, m)) {
		case LINE_BEGIN:
			if (open)
				return cd_errf(err, errlen, CD_ERR_PARSE,
				               "line %zu: a second \"%s\" before the \"%s\" that "
				               "would close the one on line %zu",
				               line, m->begin, m->end, open_line);
			if (found)
				return cd_errf(err, errlen, CD_ERR_PARSE,
				               "line %zu: \"%s\" again (the block is already on "
				               "line %zu)",
				               line, m->begin, first_line);
			open = 1;
			open_line = line;
			s->start = pos;
			s->body_start = next;
			break;
		case LINE_END:
			if (!open)
				return cd_errf(err, errlen, CD_ERR_PARSE,
				               "line %zu: \"%s\" without a \"%s\" before it", line,
				               m->end, m->begin);
			open = 0;
			found = 1;
			first_line = open_line;
			s->body_end = pos;
			s->end = next;
			break;
		case LINE_OTHER:
			break;
		}
		pos = next;
	}
	if (open)
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "line %zu: \"%s\" without a \"%s\" after it", open_line, m->begin,
		               m->end);
	return found;
}

/* The start of the line after the one that starts at pos. */
static size_t next_line(const char *text, size_t len, size_t pos)
{
	const char *nl = memchr(text + pos, '\n', len - pos);

	return nl ? (size_t)(nl - text) + 1 : len;
}

/* Where a new block goes (the start of a line, or len). */
static size_t insert_pos(const char *text, size_t len, const char *prefix,
                         enum blockedit_where where)
{
	static const char any_begin[] = " >>> clusterdoc ";
	size_t pos = 0, plen = strlen(prefix);

	switch (where) {
	case BLOCK_TOP:
		return len >= 2 && text[0] == '#' && text[1] == '!' ? next_line(text, len, 0) : 0;
	case BLOCK_BOTTOM:
		return len;
	case BLOCK_AFTER_COMMENTS:
		break;
	}
	while (pos < len) {
		size_t next = next_line(text, len, pos), n = next - pos;
		const char *p = text + pos;

		if (p[n - 1] == '\n')
			n--;
		trim(&p, &n);
		if (n == 0) {
			pos = next;
			continue;
		}
		if (n < plen || memcmp(p, prefix, plen) != 0)
			break;
		/* Another clusterdoc block among the leading comments: ours goes
		 * before it, never inside it. */
		if (n - plen >= strlen(any_begin) &&
		    memcmp(p + plen, any_begin, strlen(any_begin)) == 0)
			break;
		pos = next;
	}
	return pos;
}

/* A byte range of the text being assembled. */
struct piece {
	const char *p;
	size_t n;
};

/* *out = the pieces one after the other, NUL-terminated. */
static void join(const struct piece *pieces, size_t count, char **out, size_t *outlen)
{
	size_t total = 0, at = 0;
	char *s;

	for (size_t i = 0; i < count; i++)
		total += pieces[i].n;
	s = cd_malloc(total + 1);
	for (size_t i = 0; i < count; i++) {
		if (pieces[i].n)
			memcpy(s + at, pieces[i].p, pieces[i].n);
		at += pieces[i].n;
	}
	s[total] = '\0';
	*out = s;
	*outlen = total;
}

int blockedit_find(const char *text, size_t len, const char *prefix, const char *name,
                   size_t *start, size_t *end, char *err, size_t errlen)
{
	struct markers m;
	struct span s;
	int rc = markers_init(&m, prefix, name, err, errlen);

	if (!text)
		text = "";
	if (rc < 0)
		goto out;
	rc = scan(text, len, &m, &s, err, errlen);
	if (rc == 1) {
		*start = s.start;
		*end = s.end;
	}
out:
	markers_fini(&m);
	return rc;
}

int blockedit_set(const char *text, size_t len, const char *prefix, const char *name,
                  const char *body, enum blockedit_where where, char **out, size_t *outlen,
                  char *err, size_t errlen)
{
	struct markers m;
	struct span s, in_body;
	size_t blen = body ? strlen(body) : 0, pos, tail;
	int rc, add_nl = 0, final_nl = 1;

	*out = NULL;
	*outlen = 0;
	if (!text)
		text = "";
	rc = markers_init(&m, prefix, name, err, errlen);
	if (rc < 0)
		goto out;
	if (where != BLOCK_TOP && where != BLOCK_AFTER_COMMENTS && where != BLOCK_BOTTOM) {
		rc = cd_errf(err, errlen, CD_ERR_PARSE, "block \"%s\": unknown place %d", name,
		             (int)where);
		goto out;
	}
	if (!body || (blen > 0 && body[blen - 1] != '\n')) {
		rc =
		    cd_errf(err, errlen, CD_ERR_PARSE,
		            "the body of block \"%s\" is not whole lines (no final newline)", name);
		goto out;
	}
	if (scan(body, blen, &m, &in_body, NULL, 0) != 0) {
		rc = cd_errf(err, errlen, CD_ERR_PARSE,
		             "the body of block \"%s\" holds one of its marker lines", name);
		goto out;
	}
	rc = scan(text, len, &m, &s, err, errlen);
	if (rc < 0)
		goto out;
	if (rc == 1) {
		pos = s.start;
		tail = s.end;
		final_nl = text[s.end - 1] == '\n';
	} else {
		pos = tail = insert_pos(text, len, prefix, where);
		add_nl = pos == len && len > 0 && text[len - 1] != '\n';
	}
	{
		const struct piece pieces[] = {
		    {text, pos},
		    {"\n", (size_t)add_nl},
		    {m.begin, strlen(m.begin)},
		    {"\n", 1},
		    {body, blen},
		    {m.end, strlen(m.end)},
		    {"\n", (size_t)final_nl},
		    {text + tail, len - tail},
		};

		join(pieces, CD_ARRAY_LEN(pieces), out, outlen);
	}
	rc = 0;
out:
	markers_fini(&m);
	return rc;
}

int blockedit_remove(const char *text, size_t len, const char *prefix, const char *name, char **out,
                     size_t *outlen, char *err, size_t errlen)
{
	struct markers m;
	struct span s = {0, 0, 0, 0};
	int rc;

	*out = NULL;
	*outlen = 0;
	if (!text)
		text = "";
	rc = markers_init(&m, prefix, name, err, errlen);
	if (rc < 0)
		goto out;
	rc = scan(text, len, &m, &s, err, errlen);
	if (rc < 0)
		goto out;
	if (rc == 0)
		s.start = s.end = len;
	{
		const struct piece pieces[] = {{text, s.start}, {text + s.end, len - s.end}};

		join(pieces, CD_ARRAY_LEN(pieces), out, outlen);
	}
	rc = 0;
out:
	markers_fini(&m);
	return rc;
}

char *blockedit_body(const char *text, size_t len, const char *prefix, const char *name)
{
	struct markers m;
	struct span s;
	char *body = NULL;

	if (!text)
		text = "";
	if (markers_init(&m, prefix, name, NULL, 0) == 0 && scan(text, len, &m, &s, NULL, 0) == 1)
		body = cd_strndup(text + s.body_start, s.body_end - s.body_start);
	markers_fini(&m);
	return body;
}
