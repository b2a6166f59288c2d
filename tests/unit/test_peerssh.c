/* SPDX-License-Identifier: MIT */
/* test_peerssh.c - the node-to-node SSH check: the reason read from ssh's
 * own stderr (OpenSSH 9.2's words, as captured from `ssh -o BatchMode=yes
 * -o StrictHostKeyChecking=yes PEER true` on the namespace cluster), the
 * matrix filled from the agents' answers, and its findings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cd.h"
#include "probes/peerssh.h"
#include "probes/peerssh_matrix.h"

#define EXIT(c) ((c) << 8) /* a wait status for exit code c */

static enum peerssh_reason classify(int status, int timed_out, const char *err, char *detail)
{
	return peerssh_classify(status, timed_out, err, strlen(err), detail);
}

static void exit_zero_is_ok_whatever_ssh_printed(void **state)
{
	char d[PEERSSH_DETAIL_MAX];

	assert_int_equal(classify(EXIT(0), 0, "Warning: Permanently added 'x'\r\n", d), PEERSSH_OK);
	assert_string_equal(d, "");
}

static void unknown_host_key_names_the_strict_checking_line(void **state)
{
	char d[PEERSSH_DETAIL_MAX];

	assert_int_equal(classify(EXIT(255), 0,
	                          "No ED25519 host key is known for node2 and you have requested "
	                          "strict checking.\r\nHost key verification failed.\r\n",
	                          d),
	                 PEERSSH_HOSTKEY_UNKNOWN);
	assert_string_equal(
	    d, "No ED25519 host key is known for node2 and you have requested strict checking.");
}

static void changed_host_key_wins_over_failed_verification(void **state)
{
	char d[PEERSSH_DETAIL_MAX];
	const char *err =
	    "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@\r\n"
	    "@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\r\n"
	    "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@\r\n"
	    "IT IS POSSIBLE THAT SOMEONE IS DOING SOMETHING NASTY!\r\n"
	    "Host key for node3 has changed and you have requested strict checking.\r\n"
	    "Host key verification failed.\r\n";

	assert_int_equal(classify(EXIT(255), 0, err, d), PEERSSH_HOSTKEY_CHANGED);
	assert_string_equal(d, "@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @");
}

static void permission_denied_is_denied(void **state)
{
	char d[PEERSSH_DETAIL_MAX];

	assert_int_equal(
	    classify(EXIT(255), 0, "root@node2: Permission denied (publickey).\r\n", d),
	    PEERSSH_DENIED);
	assert_string_equal(d, "root@node2: Permission denied (publickey).");
}

static void connection_errors_are_told_apart(void **state)
{
	char d[PEERSSH_DETAIL_MAX];

	assert_int_equal(
	    classify(EXIT(255), 0, "ssh: connect to host node2 port 22: Connection refused\r\n", d),
	    PEERSSH_REFUSED);
	assert_string_equal(d, "ssh: connect to host node2 port 22: Connection refused");
	assert_int_equal(classify(EXIT(255), 0,
	                          "ssh: connect to host node2 port 22: Connection timed out\r\n",
	                          d),
	                 PEERSSH_TIMEOUT);
	assert_int_equal(
	    classify(EXIT(255), 0, "ssh: connect to host node2 port 22: No route to host\r\n", d),
	    PEERSSH_UNREACHABLE);
	assert_int_equal(classify(EXIT(255), 0,
	                          "ssh: Could not resolve hostname nodex: Name or service not "
	                          "known\r\n",
	                          d),
	                 PEERSSH_RESOLVE);
}

static void our_deadline_is_a_timeout_with_the_last_line(void **state)
{
	char d[PEERSSH_DETAIL_MAX];

	assert_int_equal(classify(9, 1, "debug: still waiting\n\n", d), PEERSSH_TIMEOUT);
	assert_string_equal(d, "debug: still waiting");
}

static void exec_failure_is_no_client(void **state)
{
	char d[PEERSSH_DETAIL_MAX];

	assert_int_equal(classify(EXIT(127), 0, "ssh: No such file or directory\n", d),
	                 PEERSSH_NO_CLIENT);
	assert_string_equal(d, "ssh: No such file or directory");
}

static void unknown_words_are_other_with_the_last_line(void **state)
{
	char d[PEERSSH_DETAIL_MAX];

	assert_int_equal(classify(EXIT(255), 0,
	                          "kex_exchange_identification: read: Connection "
	                          "reset by peer\r\n",
	                          d),
	                 PEERSSH_OTHER);
	assert_string_equal(d, "kex_exchange_identification: read: Connection reset by peer");
	assert_int_equal(classify(EXIT(1), 0, "", d), PEERSSH_OTHER);
	assert_string_equal(d, "");
}

static void detail_is_plain_ascii(void **state)
{
	char d[PEERSSH_DETAIL_MAX];

	assert_int_equal(classify(EXIT(255), 0, "h\xc3\xa9: Permission denied (publickey).\n", d),
	                 PEERSSH_DENIED);
	assert_string_equal(d, "h??: Permission denied (publickey).");
}

static void reason_ids_round_trip(void **state)
{
	for (int r = 0; r < PEERSSH_NREASONS; r++)
		assert_int_equal(peerssh_reason_from_id(peerssh_reason_id((enum peerssh_reason)r)),
		                 r);
	assert_int_equal(peerssh_reason_from_id("nonsense"), PEERSSH_OTHER);
	assert_int_equal(peerssh_reason_from_id(NULL), PEERSSH_OTHER);
}

/* ---------------------------------------------------------------- the matrix */

static const char *const hosts3[] = {"node1", "node2", "node3"};

static json_t *answer(const char *p1, const char *r1, const char *p2, const char *r2)
{
	return json_pack("{s[{sssbsssssi}{sssbsssssi}]}", "results", "peer", p1, "ok",
	                 strcmp(r1, "ok") == 0, "reason", r1, "detail",
	                 strcmp(r1, "ok") ? "ssh said so" : "", "ms", 5, "peer", p2, "ok",
	                 strcmp(r2, "ok") == 0, "reason", r2, "detail",
	                 strcmp(r2, "ok") ? "ssh said so" : "", "ms", 6);
}

static void row_fills_every_other_column(void **state)
{
	struct peerssh_matrix *m = peerssh_matrix_new(hosts3, 3);
	json_t *a = answer("node1", "ok", "node3", "hostkey-unknown");
	char err[CD_ERRLEN];

	assert_int_equal(peerssh_matrix_fill_row(m, 1, a, err, sizeof(err)), 0);
	assert_true(peerssh_cell_at(m, 1, 0)->tested);
	assert_int_equal(peerssh_cell_at(m, 1, 0)->reason, PEERSSH_OK);
	assert_int_equal(peerssh_cell_at(m, 1, 2)->reason, PEERSSH_HOSTKEY_UNKNOWN);
	assert_string_equal(peerssh_cell_at(m, 1, 2)->detail, "ssh said so");
	assert_false(peerssh_cell_at(m, 1, 1)->tested);
	assert_false(peerssh_cell_at(m, 0, 1)->tested);
	assert_int_equal(peerssh_matrix_failed(m), 1);
	assert_int_equal(peerssh_matrix_untested(m), 4);
	json_decref(a);
	peerssh_matrix_free(m);
}

static void row_with_wrong_peer_or_count_is_a_protocol_error(void **state)
{
	struct peerssh_matrix *m = peerssh_matrix_new(hosts3, 3);
	json_t *swapped = answer("node3", "ok", "node1", "ok");
	json_t *short_row = json_pack("{s[]}", "results");
	char err[CD_ERRLEN];

	assert_int_equal(peerssh_matrix_fill_row(m, 1, swapped, err, sizeof(err)), CD_ERR_PROTO);
	assert_string_equal(err, "peer_ssh: result 0 is not the answer for node1");
	assert_int_equal(peerssh_matrix_fill_row(m, 0, short_row, err, sizeof(err)), CD_ERR_PROTO);
	assert_string_equal(err, "peer_ssh: 0 results for 2 peers");
	assert_int_equal(peerssh_matrix_untested(m), 6);
	json_decref(swapped);
	json_decref(short_row);
	peerssh_matrix_free(m);
}

static void findings_group_pairs_by_reason(void **state)
{
	struct peerssh_matrix *m = peerssh_matrix_new(hosts3, 3);
	json_t *a0 = answer("node2", "denied", "node3", "hostkey-unknown");
	json_t *a1 = answer("node1", "ok", "node3", "hostkey-unknown");
	json_t *a2 = answer("node1", "refused", "node2", "ok");
	char err[CD_ERRLEN];
	json_t *f;

	assert_int_equal(peerssh_matrix_fill_row(m, 0, a0, err, sizeof(err)), 0);
	assert_int_equal(peerssh_matrix_fill_row(m, 1, a1, err, sizeof(err)), 0);
	assert_int_equal(peerssh_matrix_fill_row(m, 2, a2, err, sizeof(err)), 0);
	f = peerssh_matrix_findings(m);
	assert_int_equal(json_array_size(f), 3);
	assert_string_equal(json_string_value(json_object_get(json_array_get(f, 0), "id")),
	                    "peer-ssh-hostkey-unknown");
	assert_string_equal(json_string_value(json_object_get(json_array_get(f, 0), "message")),
	                    "node1 -> node3 (host key unknown), node2 -> node3 (host key unknown)");
	assert_string_equal(json_string_value(json_object_get(json_array_get(f, 1), "id")),
	                    "peer-ssh-denied");
	assert_string_equal(json_string_value(json_object_get(json_array_get(f, 2), "id")),
	                    "peer-ssh-unreachable");
	assert_string_equal(
	    json_string_value(json_array_get(json_object_get(json_array_get(f, 2), "pairs"), 0)),
	    "node3 -> node1");
	json_decref(f);
	json_decref(a0);
	json_decref(a1);
	json_decref(a2);
	peerssh_matrix_free(m);
}

static void a_node_not_asked_is_node_unreachable(void **state)
{
	struct peerssh_matrix *m = peerssh_matrix_new(hosts3, 2);
	json_t *f;

	free(m->node_error[0]);
	m->node_error[0] = cd_strdup("refused: connection refused");
	f = peerssh_matrix_findings(m);
	assert_int_equal(json_array_size(f), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(f, 0), "id")),
	                    "node-unreachable");
	assert_string_equal(json_string_value(json_object_get(json_array_get(f, 0), "message")),
	                    "node1 -> node2 (not asked)");
	json_decref(f);
	peerssh_matrix_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(exit_zero_is_ok_whatever_ssh_printed),
	    cmocka_unit_test(unknown_host_key_names_the_strict_checking_line),
	    cmocka_unit_test(changed_host_key_wins_over_failed_verification),
	    cmocka_unit_test(permission_denied_is_denied),
	    cmocka_unit_test(connection_errors_are_told_apart),
	    cmocka_unit_test(our_deadline_is_a_timeout_with_the_last_line),
	    cmocka_unit_test(exec_failure_is_no_client),
	    cmocka_unit_test(unknown_words_are_other_with_the_last_line),
	    cmocka_unit_test(detail_is_plain_ascii),
	    cmocka_unit_test(reason_ids_round_trip),
	    cmocka_unit_test(row_fills_every_other_column),
	    cmocka_unit_test(row_with_wrong_peer_or_count_is_a_protocol_error),
	    cmocka_unit_test(findings_group_pairs_by_reason),
	    cmocka_unit_test(a_node_not_asked_is_node_unreachable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
