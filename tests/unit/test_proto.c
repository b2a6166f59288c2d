/* test_proto.c - agent protocol framing: caps, malformed lines, round trips. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "cd.h"
#include "proto.h"

static void request_round_trips_through_a_line(void **state)
{
	struct buf b;
	json_t *req = proto_request(7, "facts"), *msg;
	char err[CD_ERRLEN];

	buf_init(&b, 4096);
	assert_int_equal(proto_write(&b, req, err, sizeof(err)), 0);
	assert_string_equal(b.data, "{\"id\":7,\"type\":\"facts\"}\n");
	assert_int_equal(proto_next(&b, &msg, err, sizeof(err)), 1);
	assert_int_equal(json_integer_value(json_object_get(msg, "id")), 7);
	assert_string_equal(json_string_value(json_object_get(msg, "type")), "facts");
	assert_int_equal(b.len, 0);
	json_decref(msg);
	json_decref(req);
	buf_fini(&b);
}

static void partial_line_waits_for_more_bytes(void **state)
{
	struct buf b;
	json_t *msg;
	char err[CD_ERRLEN];

	buf_init(&b, 4096);
	buf_append_str(&b, "{\"id\":1,\"ok\":tr");
	assert_int_equal(proto_next(&b, &msg, err, sizeof(err)), 0);
	assert_null(msg);
	buf_append_str(&b, "ue}\n");
	assert_int_equal(proto_next(&b, &msg, err, sizeof(err)), 1);
	assert_true(json_is_true(json_object_get(msg, "ok")));
	json_decref(msg);
	buf_fini(&b);
}

static void garbage_line_is_a_protocol_error_quoting_it(void **state)
{
	struct buf b;
	json_t *msg;
	char err[CD_ERRLEN];

	buf_init(&b, 4096);
	buf_append_str(&b, "Welcome to node7!\n{\"id\":2}\n");
	assert_int_equal(proto_next(&b, &msg, err, sizeof(err)), CD_ERR_PROTO);
	assert_non_null(strstr(err, "\"Welcome to node7!\""));
	/* The bad line is consumed; the next one decodes. */
	assert_int_equal(proto_next(&b, &msg, err, sizeof(err)), 1);
	json_decref(msg);
	buf_fini(&b);
}

static void message_without_id_is_refused(void **state)
{
	json_t *msg;
	char err[CD_ERRLEN];

	assert_int_equal(proto_decode("{\"ok\":true}", 11, &msg, err, sizeof(err)), CD_ERR_PROTO);
	assert_non_null(strstr(err, "\"id\""));
	assert_int_equal(proto_decode("{\"id\":-1}", 9, &msg, err, sizeof(err)), CD_ERR_PROTO);
	assert_int_equal(proto_decode("[1,2]", 5, &msg, err, sizeof(err)), CD_ERR_PROTO);
	assert_null(msg);
}

static void duplicate_keys_are_refused(void **state)
{
	json_t *msg;
	char err[CD_ERRLEN];
	const char *s = "{\"id\":1,\"id\":2}";

	assert_int_equal(proto_decode(s, strlen(s), &msg, err, sizeof(err)), CD_ERR_PROTO);
}

static void line_over_the_cap_is_toobig(void **state)
{
	struct buf b;
	json_t *msg;
	char err[CD_ERRLEN];
	char *big = cd_malloc(PROTO_MAX_LINE);

	memset(big, 'x', PROTO_MAX_LINE);
	buf_init(&b, 2 * PROTO_MAX_LINE);
	buf_append(&b, big, PROTO_MAX_LINE);
	assert_int_equal(proto_next(&b, &msg, err, sizeof(err)), CD_ERR_TOOBIG);
	assert_non_null(strstr(err, "1048576 bytes"));
	free(big);
	buf_fini(&b);
}

static void encoding_over_the_cap_appends_nothing(void **state)
{
	struct buf b;
	char err[CD_ERRLEN];
	char *big = cd_malloc(PROTO_MAX_LINE + 1);
	json_t *msg;

	memset(big, 'y', PROTO_MAX_LINE);
	big[PROTO_MAX_LINE] = '\0';
	msg = json_pack("{si}", "id", 1);
	json_object_set_new(msg, "blob", json_string(big));
	buf_init(&b, 4 * PROTO_MAX_LINE);
	assert_int_equal(proto_write(&b, msg, err, sizeof(err)), CD_ERR_TOOBIG);
	assert_int_equal(b.len, 0);
	json_decref(msg);
	free(big);
	buf_fini(&b);
}

static void failure_response_carries_code_and_message(void **state)
{
	json_t *m = proto_fail(3, "unknown-type", "no such request");

	assert_false(json_is_true(json_object_get(m, "ok")));
	assert_string_equal(json_string_value(json_object_get(json_object_get(m, "error"), "code")),
	                    "unknown-type");
	json_decref(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(request_round_trips_through_a_line),
	    cmocka_unit_test(partial_line_waits_for_more_bytes),
	    cmocka_unit_test(garbage_line_is_a_protocol_error_quoting_it),
	    cmocka_unit_test(message_without_id_is_refused),
	    cmocka_unit_test(duplicate_keys_are_refused),
	    cmocka_unit_test(line_over_the_cap_is_toobig),
	    cmocka_unit_test(encoding_over_the_cap_appends_nothing),
	    cmocka_unit_test(failure_response_carries_code_and_message),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
