/* SPDX-License-Identifier: MIT */
/* test_homegroups.c - which nodes share a home: the token read from an
 * answer, what a mark may replace, and the groups the tokens make. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "homegroups.h"

#define T_A  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define T_B  "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define T_C  "cccccccccccccccccccccccccccccccc"
#define MAXN 6

/* One table row: each node's token (NULL: not taking part, "": none read),
 * the leaders expected. */
struct groups_case {
	const char *name;
	size_t n;
	const char *tokens[MAXN];
	long leader[MAXN];
};

static const struct groups_case groups_cases[] = {
    {"separate homes", 3, {T_A, T_B, T_C}, {0, 1, 2}},
    {"all shared", 4, {T_A, T_A, T_A, T_A}, {0, 0, 0, 0}},
    {"two groups", 5, {T_A, T_B, T_A, T_B, T_B}, {0, 1, 0, 1, 1}},
    /* no answer: no token, a group of its own, and nobody's leader */
    {"a node that did not answer", 4, {T_A, "", T_A, ""}, {0, 1, 0, 3}},
    /* a node gone before the marks leads nobody either */
    {"a node not taking part", 3, {NULL, T_A, T_A}, {0, 1, 1}},
    /* a copy of one token (nodes made from one image) reads as one home
     * until the put proves otherwise (homegroups_split below) */
    {"a copied home id", 3, {T_A, T_A, T_B}, {0, 0, 2}},
    {"no nodes", 0, {NULL}, {0}},
};

static void leaders_follow_the_tokens(void **state)
{
	for (size_t c = 0; c < sizeof(groups_cases) / sizeof(groups_cases[0]); c++) {
		const struct groups_case *k = &groups_cases[c];
		long leader[MAXN] = {-7, -7, -7, -7, -7, -7};

		homegroups_leaders(k->tokens, k->n, leader);
		for (size_t i = 0; i < k->n; i++) {
			if (leader[i] != k->leader[i])
				fail_msg("%s: node %zu: leader %ld, expected %ld", k->name, i,
				         leader[i], k->leader[i]);
		}
		if (k->n < MAXN) /* nothing past the nodes */
			assert_int_equal(leader[k->n], -7);
	}
}

static void a_copied_home_id_split_leads_its_own_group(void **state)
{
	const char *tokens[] = {T_A, T_A, T_A};
	long leader[3];

	homegroups_leaders(tokens, 3, leader);
	assert_int_equal(leader[2], 0);
	/* node 2's put sent files: it does not share node 0's home */
	assert_int_equal(homegroups_split(&leader[2], 2), 0);
	assert_int_equal(leader[0], 0);
	assert_int_equal(leader[1], 0);
	assert_int_equal(leader[2], 2);
}

static void same_needs_a_token_on_both(void **state)
{
	assert_true(homegroups_same(T_A, T_A));
	assert_false(homegroups_same(T_A, T_B));
	assert_false(homegroups_same("", ""));
	assert_false(homegroups_same(NULL, NULL));
	assert_false(homegroups_same(T_A, NULL));
	assert_false(homegroups_same(NULL, T_A));
}

/* An answer to the read: exists, and data as base64 of raw (NULL: no data). */
static json_t *answer(int exists, const char *raw)
{
	json_t *res = json_object();

	json_object_set_new(res, "exists", json_boolean(exists));
	if (raw) {
		char *b64 = malloc(base64_encoded_size(strlen(raw)));

		base64_encode(raw, strlen(raw), b64);
		json_object_set_new(res, "data", json_string(b64));
		free(b64);
	}
	return res;
}

struct token_case {
	const char *name;
	int exists;
	const char *raw;  /* the file's bytes (NULL: no data in the answer) */
	const char *want; /* the token, or NULL: none */
};

static const struct token_case token_cases[] = {
    {"a token and its newline", 1, T_A "\n", T_A},
    {"a token without a newline", 1, T_B, T_B},
    {"16 bytes, the least taken", 1, "0123456789abcdef", "0123456789abcdef"},
    {"15 bytes: not ours", 1, "0123456789abcde", NULL},
    {"40 bytes, the most taken", 1, T_A "01234567", T_A "0123456"},
    {"41 bytes: not ours", 1, T_A "012345678", NULL},
    {"no file", 0, NULL, NULL},
    {"a file said not to exist", 0, T_A "\n", NULL},
    {"exists without data", 1, NULL, NULL},
};

static void the_token_of_an_answer(void **state)
{
	for (size_t c = 0; c < sizeof(token_cases) / sizeof(token_cases[0]); c++) {
		const struct token_case *k = &token_cases[c];
		json_t *res = answer(k->exists, k->raw);
		char out[HOMEGROUPS_TOKEN_LEN] = "untouched";
		int got = homegroups_token(res, out);

		if (got != (k->want != NULL))
			fail_msg("%s: returned %d", k->name, got);
		if (strcmp(out, k->want ? k->want : "untouched") != 0)
			fail_msg("%s: token \"%s\"", k->name, out);
		json_decref(res);
	}
}

static void no_answer_and_bad_base64_have_no_token(void **state)
{
	char out[HOMEGROUPS_TOKEN_LEN] = "";
	json_t *res = json_pack("{s:b, s:s}", "exists", 1, "data", "!!!not base64!!!!!!!!!!");

	assert_int_equal(homegroups_token(NULL, out), 0);
	assert_int_equal(homegroups_token(res, out), 0);
	assert_string_equal(out, "");
	json_decref(res);
}

static void a_mark_replaces_the_token_it_read(void **state)
{
	char out[80];
	json_t *res = json_pack("{s:b, s:s}", "exists", 1, "sha256", "ab12");

	/* a copied token is replaced by each node's own: no false sharing */
	homegroups_expect(res, out, sizeof(out));
	assert_string_equal(out, "ab12");
	json_decref(res);
	homegroups_expect(NULL, out, sizeof(out));
	assert_string_equal(out, "absent");
	res = json_pack("{s:b, s:s}", "exists", 0, "sha256", "ab12");
	homegroups_expect(res, out, sizeof(out));
	assert_string_equal(out, "absent");
	json_decref(res);
	res = json_pack("{s:b, s:s}", "exists", 1, "sha256", "");
	homegroups_expect(res, out, sizeof(out));
	assert_string_equal(out, "absent");
	json_decref(res);
}

static void the_requests(void **state)
{
	char token[HOMEGROUPS_TOKEN_LEN], *data;
	size_t len;
	json_t *mark, *read;

	homegroups_token_new(token);
	assert_int_equal(strlen(token), 33);
	assert_int_equal(token[32], '\n');
	assert_int_equal(strspn(token, "0123456789abcdef"), 32);
	mark = homegroups_req_mark(token, "absent");
	assert_string_equal(json_string_value(json_object_get(mark, "type")), "file_write");
	assert_string_equal(json_string_value(json_object_get(mark, "path")), CD_HOME_ID);
	assert_string_equal(json_string_value(json_object_get(mark, "expect")), "absent");
	assert_int_equal(json_integer_value(json_object_get(mark, "mode")), 0600);
	data = base64_decode_new(json_string_value(json_object_get(mark, "data")),
	                         strlen(json_string_value(json_object_get(mark, "data"))), &len);
	assert_non_null(data);
	assert_int_equal(len, 33);
	assert_memory_equal(data, token, 33);
	free(data);
	json_decref(mark);
	read = homegroups_req_read();
	assert_string_equal(json_string_value(json_object_get(read, "type")), "file_read");
	assert_string_equal(json_string_value(json_object_get(read, "path")), CD_HOME_ID);
	json_decref(read);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(leaders_follow_the_tokens),
	    cmocka_unit_test(a_copied_home_id_split_leads_its_own_group),
	    cmocka_unit_test(same_needs_a_token_on_both),
	    cmocka_unit_test(the_token_of_an_answer),
	    cmocka_unit_test(no_answer_and_bad_base64_have_no_token),
	    cmocka_unit_test(a_mark_replaces_the_token_it_read),
	    cmocka_unit_test(the_requests),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
