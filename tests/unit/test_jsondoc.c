/* SPDX-License-Identifier: MIT */
/* test_jsondoc.c - every JSON document carries clusterdoc_version and start_time (RFC 3339
 * UTC) right after its "version", without its own keys moving or changing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "jsondoc.h"

/* the keys of o, in order, joined by commas */
static void keys_of(json_t *o, char *buf, size_t cap)
{
	const char *k;
	json_t *v;

	buf[0] = '\0';
	json_object_foreach(o, k, v)
	{
		if (buf[0])
			strncat(buf, ",", cap - strlen(buf) - 1);
		strncat(buf, k, cap - strlen(buf) - 1);
	}
}

static void the_stamp_follows_version_and_the_other_keys_keep_their_order(void **state)
{
	json_t *doc = json_pack("{sisss[]}", "version", 1, "command", "facts", "nodes");
	json_t *o;
	char keys[256];

	jsondoc_set_start_time(1764924413); /* 2025-12-05T08:46:53Z */
	o = jsondoc_stamped(doc);
	assert_non_null(o);
	keys_of(o, keys, sizeof(keys));
	assert_string_equal(keys, "version,clusterdoc_version,start_time,command,nodes");
	assert_string_equal(json_string_value(json_object_get(o, "clusterdoc_version")),
	                    CLUSTERDOC_VERSION);
	assert_string_equal(json_string_value(json_object_get(o, "start_time")),
	                    "2025-12-05T08:46:53Z");
	keys_of(doc, keys, sizeof(keys));
	assert_string_equal(keys, "version,command,nodes"); /* doc itself is untouched */
	json_decref(o);
	json_decref(doc);
}

static void the_dump_is_the_stamped_document(void **state)
{
	json_t *doc = json_pack("{siss}", "version", 1, "run", "r1");
	char *s;

	jsondoc_set_start_time(0 + 86400); /* 1970-01-02 */
	s = jsondoc_dumps(doc, JSON_COMPACT);
	assert_string_equal(s, "{\"version\":1,\"clusterdoc_version\":\"" CLUSTERDOC_VERSION
	                       "\",\"start_time\":\"1970-01-02T00:00:00Z\",\"run\":\"r1\"}");
	free(s);
	json_decref(doc);
}

static void a_document_without_version_gets_the_stamp_first(void **state)
{
	json_t *doc = json_pack("{si}", "exit", 0), *o;
	char keys[128];

	o = jsondoc_stamped(doc);
	keys_of(o, keys, sizeof(keys));
	assert_string_equal(keys, "clusterdoc_version,start_time,exit");
	json_decref(o);
	json_decref(doc);
}

static void a_document_that_has_the_keys_keeps_its_own(void **state)
{
	json_t *doc = json_pack("{siss}", "version", 1, "start_time", "then"), *o;
	char keys[128];

	o = jsondoc_stamped(doc);
	keys_of(o, keys, sizeof(keys));
	assert_string_equal(keys, "version,clusterdoc_version,start_time");
	assert_string_equal(json_string_value(json_object_get(o, "start_time")), "then");
	json_decref(o);
	json_decref(doc);
}

static void what_is_not_an_object_is_not_stamped(void **state)
{
	json_t *arr = json_array();

	assert_null(jsondoc_stamped(arr));
	json_decref(arr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(the_stamp_follows_version_and_the_other_keys_keep_their_order),
	    cmocka_unit_test(the_dump_is_the_stamped_document),
	    cmocka_unit_test(a_document_without_version_gets_the_stamp_first),
	    cmocka_unit_test(a_document_that_has_the_keys_keeps_its_own),
	    cmocka_unit_test(what_is_not_an_object_is_not_stamped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
