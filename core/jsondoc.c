/* SPDX-License-Identifier: MIT */
/* jsondoc.c - see jsondoc.h. */
#include "jsondoc.h"

#include "cd.h"

#include <string.h>
#include <time.h>

static long long start_time;

void jsondoc_set_start_time(long long unix_s)
{
	start_time = unix_s;
}

void jsondoc_start_time(char *buf, size_t cap)
{
	time_t t;
	struct tm tm;

	if (!start_time)
		start_time = (long long)time(NULL);
	t = (time_t)start_time;
	if (!gmtime_r(&t, &tm) || !strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, cap, "%s", "");
}

/* The stamp's keys, into o, unless doc already has them. */
static int add_stamp(json_t *o, const json_t *doc)
{
	char when[32];

	jsondoc_start_time(when, sizeof(when));
	if (!json_object_get(doc, "clusterdoc_version") &&
	    json_object_set_new(o, "clusterdoc_version", json_string(CLUSTERDOC_VERSION)) < 0)
		return -1;
	if (!json_object_get(doc, "start_time") &&
	    json_object_set_new(o, "start_time", json_string(when)) < 0)
		return -1;
	return 0;
}

json_t *jsondoc_stamped(const json_t *doc)
{
	/* jansson's getters take no const; nothing below changes doc */
	json_t *src = (json_t *)doc, *o, *v;
	const char *key;
	int stamped = 0;

	if (!json_is_object(src) || !(o = json_object()))
		return NULL;
	if (!json_object_get(src, "version")) {
		if (add_stamp(o, src) < 0)
			goto err;
		stamped = 1;
	}
	json_object_foreach(src, key, v)
	{
		if (json_object_set(o, key, v) < 0)
			goto err;
		if (!stamped && strcmp(key, "version") == 0) {
			if (add_stamp(o, src) < 0)
				goto err;
			stamped = 1;
		}
	}
	return o;
err:
	json_decref(o);
	return NULL;
}

int jsondoc_dumpf(const json_t *doc, FILE *f, size_t flags)
{
	json_t *o = jsondoc_stamped(doc);
	int rc = json_dumpf(o ? o : doc, f, flags);

	json_decref(o);
	return rc;
}

char *jsondoc_dumps(const json_t *doc, size_t flags)
{
	json_t *o = jsondoc_stamped(doc);
	char *s = json_dumps(o ? o : doc, flags);

	json_decref(o);
	return s;
}
