/* SPDX-License-Identifier: MIT */
/* dcgm_parse.c - `dcgmi diag -j` into results (dcgm_parse.h). */
#include "probes/dcgm_parse.h"

#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* DCGM_FE_GPU, dcgmlib/dcgm_fields.h */
#define ENTITY_GROUP_GPU 1

/* The severities that leave the GPU able to run work (dcgm_parse.h). */
enum { SEVERITY_MONITOR = 1, SEVERITY_CONFIG = 5 };

/* The root object's name: DCGM 4.x's, then 3.x's (NVVS_NAME). */
static const char *const root_names[] = {"DCGM Diagnostic", "DCGM GPU Diagnostic"};

/* "Fail" (any case) -> DCGM_FAIL, to be graded; "Warn" -> DCGM_WARN; else
 * -1 (a pass, a skip, or a word dcgmi does not print). */
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

/* A "Fail" is a warning only when DCGM says of each of its warnings that
 * the GPU can still run work; no warning, or one without a severity, is a
 * fail: the status is all there is to go on. */
static enum dcgm_status grade(json_t *warnings)
{
	size_t k;
	json_t *w;

	if (json_array_size(warnings) == 0)
		return DCGM_FAIL;
	json_array_foreach(warnings, k, w)
	{
		json_t *sev = json_object_get(w, "error_severity");
		json_int_t v = json_is_integer(sev) ? json_integer_value(sev) : -1;

		if (v != SEVERITY_MONITOR && v != SEVERITY_CONFIG)
			return DCGM_FAIL;
	}
	return DCGM_WARN;
}

/* Append text to dst (cap bytes), sep before it when dst is not empty.
 * Line breaks and other control characters become one space, and leading
 * and trailing spaces go: DCGM's messages may span lines, a finding's
 * evidence is one. */
static void add_text(char *dst, size_t cap, const char *sep, const char *text)
{
	size_t have = strlen(dst), at = have, start;
	int space = 0;

	if (!text)
		return;
	if (have && have + strlen(sep) < cap) {
		memcpy(dst + have, sep, strlen(sep));
		at += strlen(sep);
	}
	start = at;
	for (; *text && at + 1 < cap; text++) {
		unsigned char c = (unsigned char)*text;

		if (c <= ' ' || c == 0x7f) {
			space = at > start;
			continue;
		}
		if (space) {
			dst[at++] = ' ';
			space = 0;
			if (at + 1 >= cap)
				break;
		}
		dst[at++] = (char)c;
	}
	if (at == start) /* nothing printable: no separator either */
		at = have;
	dst[at] = '\0';
}

/* Each warning's text: {"warning": text}, the 3.x deployment tests'
 * {"warnings": text}, or a plain string. */
static void add_messages(char *dst, json_t *list, size_t prefix)
{
	size_t k;
	json_t *w;

	json_array_foreach(list, k, w)
	{
		const char *text = json_string_value(w);

		if (!text)
			text = json_string_value(json_object_get(w, "warning"));
		if (!text)
			text = json_string_value(json_object_get(w, "warnings"));
		add_text(dst, DCGM_TEXT_MAX, prefix && strlen(dst) == prefix ? ": " : "; ", text);
	}
}

/* A GPU index: an integer or a string of digits below 4096; else -1 (a
 * list of ids, -1, nothing). */
static int index_of(json_t *v)
{
	const char *s = json_string_value(v);
	char *end;
	long g;

	if (json_is_integer(v))
		return json_integer_value(v) >= 0 && json_integer_value(v) < 4096
		           ? (int)json_integer_value(v)
		           : -1;
	if (!s || !isdigit((unsigned char)*s))
		return -1;
	g = strtol(s, &end, 10);
	return *end == '\0' && g < 4096 ? (int)g : -1;
}

/* The GPU result r is about, or -1; an entity that is not a GPU is named in
 * who ("CPU 0") instead. */
static int entity_of(json_t *r, char *who, size_t wholen)
{
	json_t *gid = json_object_get(r, "entity_group_id"), *eid = json_object_get(r, "entity_id");
	const char *group = json_string_value(json_object_get(r, "entity_group"));
	json_t *cpu = json_object_get(r, "cpu_id");
	char id[32] = "";

	if (gid || group) { /* DCGM 4.x */
		if (json_is_integer(gid) ? json_integer_value(gid) == ENTITY_GROUP_GPU
		                         : group && strcmp(group, "GPU") == 0)
			return index_of(eid);
		if (json_is_integer(eid))
			snprintf(id, sizeof(id), " %lld", (long long)json_integer_value(eid));
		if (group)
			snprintf(who, wholen, "%s%s", group, id);
		else
			snprintf(who, wholen, "entity group %lld%s",
			         (long long)json_integer_value(gid), id);
		return -1;
	}
	if (json_is_string(cpu) || json_is_integer(cpu)) { /* 3.x CPU EUD */
		if (json_is_integer(cpu))
			snprintf(who, wholen, "CPU %lld", (long long)json_integer_value(cpu));
		else
			snprintf(who, wholen, "CPU %s", json_string_value(cpu));
		return -1;
	}
	if (json_object_get(r, "gpu_id"))
		return index_of(json_object_get(r, "gpu_id"));
	return index_of(json_object_get(r, "gpu_ids")); /* NVVS's own key */
}

/* Keep r, a result of test name, when it is not a pass or a skip; says
 * whether it was one. */
static int keep_result(struct dcgm_report *out, const char *name, json_t *r)
{
	int st = status_of(json_string_value(json_object_get(r, "status")));
	json_t *warnings = json_object_get(r, "warnings");
	struct dcgm_result *d;

	if (st < 0)
		return 0;
	if (out->n == DCGM_RESULTS_MAX) {
		out->dropped++;
		return 1;
	}
	d = &out->results[out->n++];
	d->status = st == DCGM_FAIL ? grade(warnings) : DCGM_WARN;
	d->gpu = entity_of(r, d->message, sizeof(d->message));
	snprintf(d->test, sizeof(d->test), "%s", name);
	add_messages(d->message, warnings, strlen(d->message));
	return 1;
}

/* A test's results; its 4.x test_summary when it fails and no result
 * does (an error tied to no entity is only there). */
static void read_test(json_t *test, struct dcgm_report *out)
{
	const char *name = json_string_value(json_object_get(test, "name"));
	json_t *summary = json_object_get(test, "test_summary"), *r;
	int kept = 0;
	size_t k;

	if (!name || !*name)
		return;
	json_array_foreach(json_object_get(test, "results"), k, r)
	{
		if (!json_is_object(r))
			continue;
		out->tests++;
		kept |= keep_result(out, name, r);
	}
	if (!kept && json_is_object(summary) &&
	    status_of(json_string_value(json_object_get(summary, "status"))) == DCGM_FAIL) {
		out->tests++;
		keep_result(out, name, summary);
	}
}

/* 3.x: the root's "version"; 4.x: the root's "metadata"."version"; a
 * runtime_error document: the inner one. */
static const char *version_of(json_t *doc, json_t *top)
{
	const char *v = json_string_value(json_object_get(doc, "version"));

	if (!v)
		v = json_string_value(json_object_get(json_object_get(doc, "metadata"), "version"));
	if (!v)
		v = json_string_value(json_object_get(top, "version"));
	return v ? v : "";
}

int dcgm_parse(const char *buf, size_t len, struct dcgm_report *out, char *err, size_t errlen)
{
	const char *open = memchr(buf, '{', len), *close = NULL;
	json_t *doc = NULL, *top = NULL, *cats, *c, *t;
	const char *rte;
	char why[512] = "";
	size_t k, j;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	for (size_t i = len; open && i > (size_t)(open - buf); i--)
		if (buf[i - 1] == '}') {
			close = buf + i;
			break;
		}
	if (!open || !close) {
		/* dcgmi's words, as when it cannot reach its host engine */
		char text[sizeof(why)];

		snprintf(text, sizeof(text), "%.*s",
		         (int)(len < sizeof(text) ? len : sizeof(text) - 1), buf);
		add_text(why, sizeof(why), "", text);
		snprintf(err, errlen, "no JSON document in dcgmi's output%s%s", why[0] ? ": " : "",
		         why);
		goto out;
	}
	doc = json_loadb(open, (size_t)(close - open), JSON_DISABLE_EOF_CHECK, NULL);
	if (!json_is_object(doc)) {
		snprintf(err, errlen, "dcgmi's output is not a JSON object");
		goto out;
	}
	for (k = 0; k < sizeof(root_names) / sizeof(root_names[0]) && !json_is_object(top); k++)
		top = json_object_get(doc, root_names[k]);
	if (!json_is_object(top)) {
		snprintf(
		    err, errlen,
		    "dcgmi's JSON has neither \"DCGM Diagnostic\" nor \"DCGM GPU Diagnostic\"");
		goto out;
	}
	snprintf(out->version, sizeof(out->version), "%s", version_of(doc, top));
	rte = json_string_value(json_object_get(top, "runtime_error"));
	if (rte) {
		add_text(why, sizeof(why), "", rte);
		snprintf(err, errlen, "dcgmi could not run the diagnostic%s%s", why[0] ? ": " : "",
		         why);
		goto out;
	}
	cats = json_object_get(top, "test_categories");
	if (!json_is_array(cats)) {
		snprintf(err, errlen, "dcgmi's JSON has no \"test_categories\"");
		goto out;
	}
	json_array_foreach(cats, k, c)
	{
		json_array_foreach(json_object_get(c, "tests"), j, t)
		{
			read_test(t, out);
		}
	}
	rc = 0;
out:
	json_decref(doc);
	return rc;
}
