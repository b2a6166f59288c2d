/* SPDX-License-Identifier: MIT */
/*
 * junit.c - JUnit XML reports (see junit.h).
 */
#include "junit.h"
#include "buf.h"
#include "cd.h"
#include "fsutil.h"
#include "utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JUNIT_MAX_XML (64u << 20)

struct junit_case {
	char *classname, *name, *type, *message, *detail, *out;
	long long ms; /* time, in whole milliseconds: what is written */
	enum junit_outcome outcome;
};

struct junit_suite {
	char *name, *hostname;
	struct junit_case *cases;
	size_t ncases, cap;
};

struct junit {
	char *name, *timestamp;
	struct junit_suite *suites;
	size_t nsuites, cap;
};

static char *dup_or_null(const char *s)
{
	return s ? cd_strdup(s) : NULL;
}

struct junit *junit_new(const char *name, const char *timestamp)
{
	struct junit *j = cd_calloc(1, sizeof(*j));

	j->name = cd_strdup(name ? name : "");
	j->timestamp = dup_or_null(timestamp);
	return j;
}

void junit_free(struct junit *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->nsuites; i++) {
		struct junit_suite *s = &j->suites[i];

		for (size_t k = 0; k < s->ncases; k++) {
			struct junit_case *c = &s->cases[k];

			free(c->classname);
			free(c->name);
			free(c->type);
			free(c->message);
			free(c->detail);
			free(c->out);
		}
		free(s->cases);
		free(s->name);
		free(s->hostname);
	}
	free(j->suites);
	free(j->name);
	free(j->timestamp);
	free(j);
}

int junit_suite(struct junit *j, const char *name, const char *hostname)
{
	if (j->nsuites == j->cap) {
		j->cap = j->cap ? 2 * j->cap : 8;
		j->suites = cd_realloc(j->suites, j->cap * sizeof(*j->suites));
	}
	j->suites[j->nsuites++] = (struct junit_suite){
	    .name = cd_strdup(name ? name : ""),
	    .hostname = dup_or_null(hostname),
	};
	return 0;
}

int junit_case(struct junit *j, const char *classname, const char *name, double time_s,
               enum junit_outcome outcome, const char *type, const char *message,
               const char *detail, const char *out)
{
	struct junit_suite *s;
	int pass = outcome == JUNIT_PASS, skip = outcome == JUNIT_SKIPPED;

	if ((unsigned)outcome > JUNIT_SKIPPED)
		return CD_ERR_PARSE;
	if (!j->nsuites)
		junit_suite(j, j->name, NULL);
	s = &j->suites[j->nsuites - 1];
	if (s->ncases == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 16;
		s->cases = cd_realloc(s->cases, s->cap * sizeof(*s->cases));
	}
	/* Whole milliseconds, so that a suite's time is exactly the sum of the
	 * times written for its cases; a negative or NaN duration is 0. The
	 * schema CI systems read gives <skipped> a message only: no type, no
	 * text. */
	s->cases[s->ncases++] = (struct junit_case){
	    .classname = cd_strdup(classname ? classname : ""),
	    .name = cd_strdup(name ? name : ""),
	    .type = pass || skip ? NULL : dup_or_null(type),
	    .message = pass ? NULL : dup_or_null(message),
	    .detail = pass || skip ? NULL : dup_or_null(detail),
	    .out = dup_or_null(out),
	    .ms = time_s > 0 && time_s < 1e15 ? (long long)(time_s * 1000 + 0.5) : 0,
	    .outcome = outcome,
	};
	return 0;
}

struct suite_counts {
	struct junit_counts c;
	long long ms;
};

static void suite_count(const struct junit_suite *s, struct suite_counts *sc)
{
	for (size_t k = 0; k < s->ncases; k++) {
		const struct junit_case *c = &s->cases[k];

		sc->c.tests++;
		sc->c.failures += c->outcome == JUNIT_FAILURE;
		sc->c.errors += c->outcome == JUNIT_ERROR;
		sc->c.skipped += c->outcome == JUNIT_SKIPPED;
		sc->ms += c->ms;
	}
}

void junit_counts(const struct junit *j, struct junit_counts *c)
{
	struct suite_counts sc = {.ms = 0};

	for (size_t i = 0; i < j->nsuites; i++)
		suite_count(&j->suites[i], &sc);
	*c = sc.c;
}

/* The length of the UTF-8 sequence at s (n bytes left) when it is a
 * character XML 1.0 allows, or 0. */
static size_t xml_char(const unsigned char *s, size_t n)
{
	size_t len;

	if (s[0] < 0x80)
		return s[0] >= 0x20 || s[0] == '\t' || s[0] == '\n' || s[0] == '\r';
	len = utf8_seq_len(s, n);
	/* U+FFFE and U+FFFF are not XML characters either. */
	if (len == 3 && s[0] == 0xef && s[1] == 0xbf && s[2] >= 0xbe)
		return 0;
	return len;
}

/*
 * Append s escaped for XML text or, when attr, an attribute value: there a
 * newline, tab or carriage return would be normalised to a space by the
 * reader, so they go as character references. A carriage return goes as one
 * in text too, or the reader would fold "\r\n" into "\n".
 */
static int append_xml(struct buf *b, const char *s, int attr)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s), i = 0;
	int rc = 0;

	while (i < n && !rc) {
		size_t len = xml_char(u + i, n - i);
		const char *rep = NULL;

		switch (len ? u[i] : 0) {
		case 0:
			rep = "?";
			len = 1;
			break;
		case '&':
			rep = "&amp;";
			break;
		case '<':
			rep = "&lt;";
			break;
		case '>':
			rep = "&gt;";
			break;
		case '"':
			rep = "&quot;";
			break;
		case '\'':
			rep = "&apos;";
			break;
		case '\r':
			rep = "&#13;";
			break;
		case '\n':
			rep = attr ? "&#10;" : NULL;
			break;
		case '\t':
			rep = attr ? "&#9;" : NULL;
			break;
		}
		rc = rep ? buf_append_str(b, rep) : buf_append(b, u + i, len);
		i += len;
	}
	return rc;
}

/* Append ` name="value"` (nothing when value is NULL). */
static int append_attr(struct buf *b, const char *name, const char *value)
{
	int rc = 0;

	if (!value)
		return 0;
	rc |= buf_append_str(b, " ");
	rc |= buf_append_str(b, name);
	rc |= buf_append_str(b, "=\"");
	rc |= append_xml(b, value, 1);
	rc |= buf_append_str(b, "\"");
	return rc;
}

static int append_counts(struct buf *b, const struct suite_counts *sc)
{
	char s[200];

	snprintf(
	    s, sizeof(s),
	    " tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\" time=\"%lld.%03lld\"",
	    sc->c.tests, sc->c.failures, sc->c.errors, sc->c.skipped, sc->ms / 1000, sc->ms % 1000);
	return buf_append_str(b, s);
}

static int append_case(struct buf *b, const struct junit_case *c)
{
	static const char *const elements[] = {
	    [JUNIT_FAILURE] = "failure",
	    [JUNIT_ERROR] = "error",
	    [JUNIT_SKIPPED] = "skipped",
	};
	const char *el = elements[c->outcome];
	char time[64];
	int rc = 0;

	snprintf(time, sizeof(time), "%lld.%03lld", c->ms / 1000, c->ms % 1000);
	rc |= buf_append_str(b, "    <testcase");
	rc |= append_attr(b, "classname", c->classname);
	rc |= append_attr(b, "name", c->name);
	rc |= append_attr(b, "time", time);
	if (!el && !c->out)
		return rc | buf_append_str(b, "/>\n");
	rc |= buf_append_str(b, ">\n");
	if (el) {
		rc |= buf_append_str(b, "      <");
		rc |= buf_append_str(b, el);
		rc |= append_attr(b, "message", c->message);
		rc |= append_attr(b, "type", c->type);
		if (c->detail) {
			rc |= buf_append_str(b, ">");
			rc |= append_xml(b, c->detail, 0);
			rc |= buf_append_str(b, "</");
			rc |= buf_append_str(b, el);
			rc |= buf_append_str(b, ">\n");
		} else {
			rc |= buf_append_str(b, "/>\n");
		}
	}
	if (c->out) {
		rc |= buf_append_str(b, "      <system-out>");
		rc |= append_xml(b, c->out, 0);
		rc |= buf_append_str(b, "</system-out>\n");
	}
	return rc | buf_append_str(b, "    </testcase>\n");
}

int junit_render(const struct junit *j, struct buf *out)
{
	struct suite_counts all = {.ms = 0};
	int rc = 0;

	for (size_t i = 0; i < j->nsuites; i++)
		suite_count(&j->suites[i], &all);
	rc |= buf_append_str(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites");
	rc |= append_attr(out, "name", j->name);
	rc |= append_counts(out, &all);
	rc |= buf_append_str(out, ">\n");
	for (size_t i = 0; i < j->nsuites && !rc; i++) {
		const struct junit_suite *s = &j->suites[i];
		struct suite_counts sc = {.ms = 0};

		suite_count(s, &sc);
		rc |= buf_append_str(out, "  <testsuite");
		rc |= append_attr(out, "name", s->name);
		rc |= append_counts(out, &sc);
		rc |= append_attr(out, "timestamp", j->timestamp);
		rc |= append_attr(out, "hostname", s->hostname);
		rc |= buf_append_str(out, ">\n");
		for (size_t k = 0; k < s->ncases && !rc; k++)
			rc |= append_case(out, &s->cases[k]);
		rc |= buf_append_str(out, "  </testsuite>\n");
	}
	rc |= buf_append_str(out, "</testsuites>\n");
	return rc ? CD_ERR_TOOBIG : 0;
}

int junit_write_file(const struct junit *j, const char *path, char *err, size_t errlen)
{
	struct buf b;
	int rc;

	buf_init(&b, JUNIT_MAX_XML);
	rc = junit_render(j, &b);
	if (rc)
		rc = cd_errf(err, errlen, CD_ERR_IO, "cannot write %s: more than %u bytes of XML",
		             path, JUNIT_MAX_XML);
	else
		rc = cd_write_file_atomic(path, b.data, b.len, 0644, err, errlen);
	buf_fini(&b);
	return rc;
}
