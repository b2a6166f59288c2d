/* SPDX-License-Identifier: MIT */
/*
 * test_proto.c - agent protocol framing: caps, malformed lines, round trips;
 * interim progress: its builder and decoder, the agent's emitter, and the
 * head's pool handing it to the request that asked (through the local
 * transport, with a scripted agent).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cd.h"
#include "loop.h"
#include "proto.h"
#include "sshpool.h"

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

/* ---------------------------------------------------------------- progress */

static void progress_message_is_the_id_and_the_object_without_ok(void **state)
{
	json_t *m =
	    proto_progress(7, json_pack("{sisisi}", "sizes_done", 5, "sizes", 26, "bytes", 128));
	struct buf b;
	char err[CD_ERRLEN];

	buf_init(&b, 4096);
	assert_int_equal(proto_write(&b, m, err, sizeof(err)), 0);
	assert_string_equal(
	    b.data, "{\"id\":7,\"progress\":{\"sizes_done\":5,\"sizes\":26,\"bytes\":128}}\n");
	json_decref(m);
	buf_fini(&b);
}

static void progress_line_decodes_as_progress(void **state)
{
	const char *line = "{\"id\":7,\"progress\":{\"sizes_done\":5,\"sizes\":26,\"bytes\":128}}";
	json_t *msg, *progress;
	char err[CD_ERRLEN];

	assert_int_equal(proto_decode(line, strlen(line), &msg, err, sizeof(err)), 0);
	assert_int_equal(proto_progress_get(msg, &progress, err, sizeof(err)), 1);
	assert_int_equal(json_integer_value(json_object_get(progress, "sizes_done")), 5);
	assert_int_equal(json_integer_value(json_object_get(progress, "sizes")), 26);
	json_decref(msg);
}

static void a_response_is_not_progress(void **state)
{
	json_t *ok = proto_ok(3, NULL), *fail = proto_fail(4, "failed", "no"), *progress;
	char err[CD_ERRLEN];

	progress = ok; /* stale: it must be cleared */
	assert_int_equal(proto_progress_get(ok, &progress, err, sizeof(err)), 0);
	assert_null(progress);
	assert_int_equal(proto_progress_get(fail, &progress, err, sizeof(err)), 0);
	assert_null(progress);
	json_decref(ok);
	json_decref(fail);
}

static void progress_that_is_not_an_object_is_a_protocol_error(void **state)
{
	const char *line = "{\"id\":3,\"progress\":[1]}";
	json_t *msg, *progress;
	char err[CD_ERRLEN];

	assert_int_equal(proto_decode(line, strlen(line), &msg, err, sizeof(err)), 0);
	assert_int_equal(proto_progress_get(msg, &progress, err, sizeof(err)), CD_ERR_PROTO);
	assert_string_equal(err, "\"progress\" of message 3 is not an object");
	assert_null(progress);
	json_decref(msg);
}

static void progress_with_ok_is_a_protocol_error(void **state)
{
	const char *line = "{\"id\":3,\"ok\":true,\"progress\":{}}";
	json_t *msg, *progress;
	char err[CD_ERRLEN];

	assert_int_equal(proto_decode(line, strlen(line), &msg, err, sizeof(err)), 0);
	assert_int_equal(proto_progress_get(msg, &progress, err, sizeof(err)), CD_ERR_PROTO);
	assert_string_equal(err, "message 3 is both a response and progress");
	json_decref(msg);
}

static void record_progress(json_t *progress_take, void *arg)
{
	json_array_append_new(arg, progress_take);
}

static void emit_reaches_the_installed_emitter_only(void **state)
{
	json_t *got = json_array();

	assert_false(proto_progress_wanted());
	proto_progress_emit(json_pack("{si}", "n", 0)); /* nobody: freed */
	proto_progress_install(record_progress, got);
	assert_true(proto_progress_wanted());
	proto_progress_emit(json_pack("{si}", "n", 1));
	proto_progress_install(NULL, NULL);
	assert_false(proto_progress_wanted());
	proto_progress_emit(json_pack("{si}", "n", 2));
	assert_int_equal(json_array_size(got), 1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(got, 0), "n")), 1);
	json_decref(got);
}

/* ---------------------------------------------------------------- the pool */

/* A stand-in agent for the local transport: hello answered as the agent
 * does (its own SHA-256, so the pool accepts it), every other request with
 * the lines of $CD_FAKE_LINES, ID replaced by the request's id and ASKED by
 * whether it carried "progress": true. */
static const char fake_agent_text[] =
    "#!/bin/sh\n"
    "sha=$(sha256sum \"$0\" | cut -c1-64)\n"
    "while IFS= read -r line; do\n"
    "\tid=$(printf '%s\\n' \"$line\" | sed 's/.*\"id\":\\([0-9]*\\).*/\\1/')\n"
    "\tcase $line in\n"
    "\t*'\"type\":\"hello\"'*)\n"
    "\t\tprintf '{\"id\":%s,\"ok\":true,\"result\":{\"protocol\":%s,\"sha256\":\"%s\"}}\\n' "
    "\"$id\" \"$CD_FAKE_PROTOCOL\" \"$sha\" ;;\n"
    "\t*)\n"
    "\t\tasked=false\n"
    "\t\tcase $line in *'\"progress\":true'*) asked=true ;; esac\n"
    "\t\tprintf '%s\\n' \"$CD_FAKE_LINES\" | sed \"s/ID/$id/g; s/ASKED/$asked/g\" ;;\n"
    "\tesac\n"
    "done\n";

static char fake_dir[] = "/tmp/cd-proto-XXXXXX";
static char fake_agent[sizeof(fake_dir) + 16];

static int pool_setup(void **state)
{
	char proto[16];
	FILE *f;

	if (!mkdtemp(fake_dir))
		return -1;
	snprintf(fake_agent, sizeof(fake_agent), "%s/agent", fake_dir);
	f = fopen(fake_agent, "w");
	if (!f)
		return -1;
	fputs(fake_agent_text, f);
	fclose(f);
	snprintf(proto, sizeof(proto), "%d", PROTO_VERSION);
	setenv("CD_FAKE_PROTOCOL", proto, 1);
	return chmod(fake_agent, 0700);
}

static int pool_teardown(void **state)
{
	unlink(fake_agent);
	rmdir(fake_dir);
	return 0;
}

/* What one request through the pool saw. */
struct pool_run {
	int ask;         /* send it with sshpool_request_progress */
	json_t *seen;    /* the progress objects, in order, each with "replies" then */
	int replies;     /* reply callbacks */
	json_t *result;  /* the reply's result, or NULL */
	char code[32];   /* the reply's error code, or "" */
	int node_failed; /* the pool's failed handler ran */
	char node_code[32];
	char node_msg[CD_ERRLEN];
};

static void on_pool_progress(struct sshpool_node *node, json_t *progress, void *arg)
{
	struct pool_run *pr = arg;
	json_t *copy = json_deep_copy(progress);

	json_object_set_new(copy, "replies", json_integer(pr->replies));
	json_array_append_new(pr->seen, copy);
}

static void on_pool_reply(struct sshpool_node *node, json_t *result, const char *code,
                          const char *msg, void *arg)
{
	struct pool_run *pr = arg;

	pr->replies++;
	pr->result = result ? json_incref(result) : NULL;
	snprintf(pr->code, sizeof(pr->code), "%s", code ? code : "");
}

static void on_pool_ready(struct sshpool *pool, struct sshpool_node *node, void *arg)
{
	struct pool_run *pr = arg;
	json_t *req = proto_request(0, "probe");

	if (pr->ask)
		sshpool_request_progress(node, req, 5000, on_pool_progress, on_pool_reply, pr);
	else
		sshpool_request(node, req, 5000, on_pool_reply, pr);
}

static void on_pool_failed(struct sshpool *pool, struct sshpool_node *node, void *arg)
{
	struct pool_run *pr = arg;

	pr->node_failed = 1;
	snprintf(pr->node_code, sizeof(pr->node_code), "%s", sshpool_node_error_code(node));
	snprintf(pr->node_msg, sizeof(pr->node_msg), "%s", sshpool_node_error_message(node));
}

static const struct sshpool_handlers pool_handlers = {.ready = on_pool_ready,
                                                      .failed = on_pool_failed};

/* One request to the stand-in agent on "localhost", answered with lines. */
static void pool_run(struct pool_run *pr, const char *lines)
{
	struct loop *loop = loop_new();
	struct sshpool_opts o;
	struct sshpool *pool;
	char err[CD_ERRLEN];
	int64_t until = cd_now_ms() + 10000;

	pr->seen = json_array();
	setenv("CD_FAKE_LINES", lines, 1);
	sshpool_opts_init(&o);
	o.agent_path = fake_agent;
	pool = sshpool_new(loop, &o, err, sizeof(err));
	assert_non_null(pool);
	sshpool_add(pool, "localhost");
	sshpool_start(pool, &pool_handlers, pr);
	while (!pr->replies && cd_now_ms() < until)
		loop_run_once(loop, 100);
	assert_int_equal(pr->replies, 1);
	sshpool_free(pool);
	loop_free(loop);
}

static void pool_run_fini(struct pool_run *pr)
{
	json_decref(pr->seen);
	json_decref(pr->result);
}

static void pool_hands_progress_to_the_request_before_its_reply(void **state)
{
	struct pool_run pr = {.ask = 1};

	pool_run(&pr, "{\"id\":ID,\"progress\":{\"n\":1}}\n"
	              "{\"id\":ID,\"progress\":{\"n\":2}}\n"
	              "{\"id\":ID,\"ok\":true,\"result\":{\"asked\":ASKED}}");
	assert_int_equal(json_array_size(pr.seen), 2);
	for (size_t k = 0; k < 2; k++) {
		json_t *p = json_array_get(pr.seen, k);

		assert_int_equal(json_integer_value(json_object_get(p, "n")), k + 1);
		assert_int_equal(json_integer_value(json_object_get(p, "replies")), 0);
	}
	assert_string_equal(pr.code, "");
	assert_true(json_is_true(json_object_get(pr.result, "asked")));
	assert_false(pr.node_failed);
	pool_run_fini(&pr);
}

static void pool_ignores_progress_for_an_id_not_awaited(void **state)
{
	struct pool_run pr = {.ask = 1};

	pool_run(&pr, "{\"id\":99,\"progress\":{\"n\":1}}\n"
	              "{\"id\":ID,\"ok\":true,\"result\":{}}");
	assert_int_equal(json_array_size(pr.seen), 0);
	assert_non_null(pr.result);
	assert_false(pr.node_failed);
	pool_run_fini(&pr);
}

static void pool_sends_no_progress_field_and_ignores_progress_unless_asked(void **state)
{
	struct pool_run pr = {.ask = 0};

	pool_run(&pr, "{\"id\":ID,\"progress\":{\"n\":1}}\n"
	              "{\"id\":ID,\"ok\":true,\"result\":{\"asked\":ASKED}}");
	assert_true(json_is_false(json_object_get(pr.result, "asked")));
	assert_false(pr.node_failed);
	pool_run_fini(&pr);
}

static void malformed_progress_fails_the_node_as_a_protocol_error(void **state)
{
	struct pool_run pr = {.ask = 1};

	pool_run(&pr, "{\"id\":ID,\"progress\":7}\n"
	              "{\"id\":ID,\"ok\":true,\"result\":{}}");
	assert_int_equal(json_array_size(pr.seen), 0);
	assert_null(pr.result);
	assert_string_equal(pr.code, "protocol");
	assert_true(pr.node_failed);
	assert_string_equal(pr.node_code, "protocol");
	assert_string_equal(pr.node_msg,
	                    "localhost: agent: \"progress\" of message 2 is not an object");
	pool_run_fini(&pr);
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
	    cmocka_unit_test(progress_message_is_the_id_and_the_object_without_ok),
	    cmocka_unit_test(progress_line_decodes_as_progress),
	    cmocka_unit_test(a_response_is_not_progress),
	    cmocka_unit_test(progress_that_is_not_an_object_is_a_protocol_error),
	    cmocka_unit_test(progress_with_ok_is_a_protocol_error),
	    cmocka_unit_test(emit_reaches_the_installed_emitter_only),
	    cmocka_unit_test(pool_hands_progress_to_the_request_before_its_reply),
	    cmocka_unit_test(pool_ignores_progress_for_an_id_not_awaited),
	    cmocka_unit_test(pool_sends_no_progress_field_and_ignores_progress_unless_asked),
	    cmocka_unit_test(malformed_progress_fails_the_node_as_a_protocol_error),
	};
	return cmocka_run_group_tests(tests, pool_setup, pool_teardown);
}
