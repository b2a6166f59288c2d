/* SPDX-License-Identifier: MIT */
/* dcgm_parse.c - `dcgmi diag -j` into results (dcgm_parse.h). */
#include "probes/dcgm_parse.h"

#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "FAIL", "Fail", "fail" -> DCGM_FAIL; WARN likewise; else -1 (a pass, a
 * skip or a word DCGM does not document). */
static int status_of(const char *s)
{
	if (!s)
		return -1;
	if (strcasecmp(s, "fail") == 0)
		return DCGM_FAIL;
	if (strcasecmp(s, "warn") == 0 || strcasecmp(s, "warning") == 0)
		return DCGM_WARN;
	return -1;
}

/* The GPU a result names: "gpu_ids" "3" (or "gpu_id"), "entity_id" 3;
 * a CSV or nothing is -1 (all). */
static int gpu_of(json_t *r)
{
	json_t *v = json_object_get(r, "gpu_ids");
	const char *s;
	char *end;
	long g;

	if (!v)
		v = json_object_get(r, "gpu_id");
	if (!v)
		v = json_object_get(r, "entity_id");
	if (json_is_integer(v))
		return json_integer_value(v) >= 0 && json_integer_value(v) < 4096
		           ? (int)json_integer_value(v)
		           : -1;
	s = json_string_value(v);
	if (!s || !isdigit((unsigned char)*s))
		return -1;
	g = strtol(s, &end, 10);
	return *end == '\0' && g < 4096 ? (int)g : -1;
}

/* Append text to dst (cap DCGM_TEXT_MAX), "; " between parts. */
static void add_text(char *dst, const char *text)
{
	size_t have = strlen(dst);

	if (!text || !*text || have >= DCGM_TEXT_MAX - 1)
		return;
	snprintf(dst + have, DCGM_TEXT_MAX - have, "%s%s", have ? "; " : "", text);
}

/* A warning is a string (DCGM 1.x-2.x) or {"warning": text} (3.x), or in
 * DCGM 4 an "errors" entry {"message": text}. */
static void add_messages(char *dst, json_t *list)
{
	size_t k;
	json_t *w;

	json_array_foreach(list, k, w)
	{
		if (json_is_string(w))
			add_text(dst, json_string_value(w));
		else if (json_is_string(json_object_get(w, "warning")))
			add_text(dst, json_string_value(json_object_get(w, "warning")));
		else
			add_text(dst, json_string_value(json_object_get(w, "message")));
	}
}

static void read_test(json_t *test, struct dcgm_report *out)
{
	const char *name = json_string_value(json_object_get(test, "name"));
	json_t *results = json_object_get(test, "results"), *r;
	size_t k;

	if (!name || !*name || !json_is_array(results))
		return;
	json_array_foreach(results, k, r)
	{
		int st = status_of(json_string_value(json_object_get(r, "status")));
		struct dcgm_result *d;

		if (!json_is_object(r))
			continue;
		out->tests++;
		if (st < 0)
			continue;
		if (out->n == DCGM_RESULTS_MAX) {
			out->dropped++;
			continue;
		}
		d = &out->results[out->n++];
		d->status = (enum dcgm_status)st;
		d->gpu = gpu_of(r);
		snprintf(d->test, sizeof(d->test), "%s", name);
		add_messages(d->message, json_object_get(r, "warnings"));
		add_messages(d->message, json_object_get(r, "errors"));
	}
}

static void read_tests(json_t *tests, struct dcgm_report *out)
{
	size_t k;
	json_t *t;

	json_array_foreach(tests, k, t)
	{
		read_test(t, out);
	}
}

int dcgm_parse(const char *buf, size_t len, struct dcgm_report *out, char *err, size_t errlen)
{
	const char *open = memchr(buf, '{', len), *close = NULL;
	json_t *doc, *top, *cats, *c;
	const char *version;
	size_t k;

	memset(out, 0, sizeof(*out));
	for (size_t i = len; open && i > (size_t)(open - buf); i--)
		if (buf[i - 1] == '}') {
			close = buf + i;
			break;
		}
	if (!open || !close) {
		snprintf(err, errlen, "no JSON document in dcgmi's output");
		return -1;
	}
	doc = json_loadb(open, (size_t)(close - open), JSON_DISABLE_EOF_CHECK, NULL);
	if (!json_is_object(doc)) {
		json_decref(doc);
		snprintf(err, errlen, "dcgmi's output is not a JSON object");
		return -1;
	}
	top = json_object_get(doc, "DCGM GPU Diagnostic");
	cats = json_object_get(top, "test_categories");
	if (json_is_array(cats)) {
		json_array_foreach(cats, k, c)
		{
			read_tests(json_object_get(c, "tests"), out);
		}
	} else if (json_is_array(json_object_get(doc, "tests"))) {
		top = doc; /* DCGM 4 */
		read_tests(json_object_get(doc, "tests"), out);
	} else {
		json_decref(doc);
		snprintf(err, errlen, "dcgmi's JSON has neither \"test_categories\" nor \"tests\"");
		return -1;
	}
	version = json_string_value(json_object_get(top, "version"));
	snprintf(out->version, sizeof(out->version), "%s", version ? version : "");
	json_decref(doc);
	return 0;
}
