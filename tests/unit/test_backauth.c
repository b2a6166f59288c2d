/* SPDX-License-Identifier: MIT */
/*
 * test_backauth.c - the connect-back handshake (core/backauth.h): HMAC-SHA256
 * against RFC 4231's vectors, a full exchange, and the ways it must fail:
 * a wrong secret on either side, no proof, a proof replayed on a new
 * connection, the head's proof sent back as the agent's, truncated lines,
 * and one node's key used under another node's name.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "backauth.h"
#include "sha256.h"

#define SECRET "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
#define OTHER  "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100"
#define NA     "0123456789abcdef0123456789abcdef"
#define NH     "fedcba9876543210fedcba9876543210"
#define NH2    "aaaaaaaaaaaaaaaabbbbbbbbbbbbbbbb"

/* line without its newline, in place */
static char *chomp(char *s)
{
	s[strcspn(s, "\n")] = '\0';
	return s;
}

static void test_hmac_matches_rfc4231(void **state)
{
	unsigned char mac[32], key[131];
	char hex[SHA256_HEX_LEN];
	const char *big = "Test Using Larger Than Block-Size Key - Hash Key First";

	backauth_hmac("Jefe", 4, "what do ya want for nothing?", 28, mac);
	sha256_hex(mac, hex);
	assert_string_equal(hex,
	                    "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
	memset(key, 0xaa, sizeof(key)); /* case 6: a key longer than a block */
	backauth_hmac(key, sizeof(key), big, strlen(big), mac);
	sha256_hex(mac, hex);
	assert_string_equal(hex,
	                    "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

/* One exchange up to the agent's proof, the agent holding node01's key
 * under agent_secret; returns the proof in proof_line. */
static void exchange(struct backauth *agent, struct backauth *head, const char *agent_secret,
                     const char *head_nonce, char *proof_line)
{
	char hello[BACKAUTH_LINE_MAX], chal[BACKAUTH_LINE_MAX], key[BACKAUTH_PROOF_HEX];

	assert_int_equal(backauth_node_key(agent_secret, "node01", key), 0);
	assert_true(backauth_agent_hello(agent, "node01", NA, hello, sizeof(hello)) > 0);
	assert_true(backauth_head_challenge(head, SECRET, chomp(hello), head_nonce, chal,
	                                    sizeof(chal)) > 0);
	assert_string_equal(head->name, "node01");
	if (strcmp(agent_secret, SECRET) == 0)
		assert_true(backauth_agent_answer(agent, key, chomp(chal), proof_line,
		                                  BACKAUTH_LINE_MAX) > 0);
	else
		assert_int_equal(
		    backauth_agent_answer(agent, key, chomp(chal), proof_line, BACKAUTH_LINE_MAX),
		    -1);
}

static void test_both_sides_prove_the_same_secret(void **state)
{
	struct backauth agent, head;
	char proof[BACKAUTH_LINE_MAX];

	exchange(&agent, &head, SECRET, NH, proof);
	assert_int_equal(backauth_head_verify(&head, SECRET, chomp(proof)), 0);
}

static void test_an_agent_with_another_secret_refuses_the_head(void **state)
{
	struct backauth agent, head;
	char proof[BACKAUTH_LINE_MAX];

	/* The agent sees the head cannot prove its secret: it answers nothing. */
	exchange(&agent, &head, OTHER, NH, proof);
}

static void test_a_wrong_or_missing_agent_proof_is_refused(void **state)
{
	struct backauth agent, head;
	char proof[BACKAUTH_LINE_MAX], hello[BACKAUTH_LINE_MAX], chal[BACKAUTH_LINE_MAX];
	char key[BACKAUTH_PROOF_HEX];

	exchange(&agent, &head, SECRET, NH, proof);
	chomp(proof);
	proof[0] = proof[0] == '0' ? '1' : '0';
	assert_int_equal(backauth_head_verify(&head, SECRET, proof), -1);
	assert_int_equal(backauth_head_verify(&head, SECRET, ""), -1);
	/* An agent that answers with its own secret's proof (the head's check
	 * fails on the agent's side first in real life; here the head checks). */
	assert_true(backauth_agent_hello(&agent, "node01", NA, hello, sizeof(hello)) > 0);
	assert_true(backauth_head_challenge(&head, OTHER, chomp(hello), NH, chal, sizeof(chal)) >
	            0);
	assert_int_equal(backauth_node_key(OTHER, "node01", key), 0);
	assert_true(backauth_agent_answer(&agent, key, chomp(chal), proof, sizeof(proof)) > 0);
	assert_int_equal(backauth_head_verify(&head, SECRET, chomp(proof)), -1);
	/* The head's own proof, sent back as the agent's: the roles differ. */
	assert_true(backauth_head_challenge(&head, SECRET, "CDBACK2 node01 " NA, NH, chal,
	                                    sizeof(chal)) > 0);
	chomp(chal);
	assert_int_equal(backauth_head_verify(&head, SECRET, chal + strlen("CDBACK2 ") + 33), -1);
}

static void test_a_proof_replayed_on_a_new_connection_is_refused(void **state)
{
	struct backauth agent, head, head2;
	char proof[BACKAUTH_LINE_MAX], chal[BACKAUTH_LINE_MAX];

	exchange(&agent, &head, SECRET, NH, proof);
	chomp(proof);
	/* A listener that recorded hello and proof sends both again: the head
	 * picked a fresh nonce for the new connection. */
	assert_true(backauth_head_challenge(&head2, SECRET, "CDBACK2 node01 " NA, NH2, chal,
	                                    sizeof(chal)) > 0);
	assert_int_equal(backauth_head_verify(&head2, SECRET, proof), -1);
	/* ...and the same proof under another node's name */
	assert_true(backauth_head_challenge(&head2, SECRET, "CDBACK2 node02 " NA, NH, chal,
	                                    sizeof(chal)) > 0);
	assert_int_equal(backauth_head_verify(&head2, SECRET, proof), -1);
}

static void test_truncated_and_malformed_lines_are_refused(void **state)
{
	struct backauth a;
	char out[BACKAUTH_LINE_MAX], chal[BACKAUTH_LINE_MAX], key[BACKAUTH_PROOF_HEX];
	static const char *bad_hello[] = {
	    "",
	    "CDBACK2",
	    "CDBACK2 node01",
	    "CDBACK2 node01 0123456789abcdef",                 /* short nonce */
	    "CDBACK2 node01 0123456789abcdef0123456789ABCDEF", /* upper case */
	    "CDBACK2 node01  0123456789abcdef0123456789abcdef",
	    "CDBACK2 no/de 0123456789abcdef0123456789abcdef",
	    "CDBACK1 node01 0123456789abcdef0123456789abcdef", /* the version before node keys */
	    "CDBACK2 node01 0123456789abcdef0123456789abcdef extra",
	    "{\"type\": \"hello\"}",
	};

	for (size_t i = 0; i < sizeof(bad_hello) / sizeof(bad_hello[0]); i++)
		assert_int_equal(
		    backauth_head_challenge(&a, SECRET, bad_hello[i], NH, out, sizeof(out)), -1);
	/* a secret too short to be the run's is never used */
	assert_int_equal(
	    backauth_head_challenge(&a, "abc", "CDBACK2 node01 " NA, NH, out, sizeof(out)), -1);
	assert_false(backauth_secret_ok(NULL));
	assert_true(backauth_secret_ok(SECRET));
	/* the head's challenge cut short */
	assert_true(backauth_agent_hello(&a, "node01", NA, out, sizeof(out)) > 0);
	assert_true(
	    backauth_head_challenge(&a, SECRET, "CDBACK2 node01 " NA, NH, chal, sizeof(chal)) > 0);
	chomp(chal);
	chal[strlen(chal) - 1] = '\0';
	assert_int_equal(backauth_node_key(SECRET, "node01", key), 0);
	assert_int_equal(backauth_agent_answer(&a, key, chal, out, sizeof(out)), -1);
	assert_int_equal(backauth_agent_answer(&a, key, "CDBACK2 " NH, out, sizeof(out)), -1);
	/* an agent name that is not a node's */
	assert_int_equal(backauth_agent_hello(&a, "", NA, out, sizeof(out)), -1);
	assert_int_equal(backauth_agent_hello(&a, "a b", NA, out, sizeof(out)), -1);
}

/* Case 20 of fault-run-3: node02's agent, holding node02's key only (as
 * local-connect gives it), says hello as node01. The head proves node01's
 * key, which the agent cannot check, so it answers nothing; and a proof
 * made with node02's key under node01's name is refused by the head. */
static void test_one_nodes_key_cannot_prove_another_node(void **state)
{
	struct backauth agent, head;
	char k1[BACKAUTH_PROOF_HEX], k2[BACKAUTH_PROOF_HEX], hello[BACKAUTH_LINE_MAX];
	char chal[BACKAUTH_LINE_MAX], out[BACKAUTH_LINE_MAX], want[BACKAUTH_PROOF_HEX];
	unsigned char mac[32];
	char msg[256];

	assert_int_equal(backauth_node_key(SECRET, "node01", k1), 0);
	assert_int_equal(backauth_node_key(SECRET, "node02", k2), 0);
	assert_string_not_equal(k1, k2);
	assert_string_not_equal(k1, SECRET);
	/* KEY(NAME) = HMAC-SHA256(secret, "clusterdoc-back2 node " NAME), as hex */
	backauth_hmac(SECRET, strlen(SECRET), "clusterdoc-back2 node node01", 28, mac);
	sha256_hex(mac, want);
	assert_string_equal(k1, want);
	assert_true(backauth_agent_hello(&agent, "node01", NA, hello, sizeof(hello)) > 0);
	assert_true(backauth_head_challenge(&head, SECRET, chomp(hello), NH, chal, sizeof(chal)) >
	            0);
	assert_int_equal(backauth_agent_answer(&agent, k2, chomp(chal), out, sizeof(out)), -1);
	/* the agent's proof made as node01 with node02's key */
	snprintf(msg, sizeof(msg), "clusterdoc-back2 agent node01 %s %s", NA, NH);
	backauth_hmac(k2, strlen(k2), msg, strlen(msg), mac);
	sha256_hex(mac, want);
	assert_int_equal(backauth_head_verify(&head, SECRET, want), -1);
	/* ...and with node01's own key it is the proof the head wants */
	backauth_hmac(k1, strlen(k1), msg, strlen(msg), mac);
	sha256_hex(mac, want);
	assert_int_equal(backauth_head_verify(&head, SECRET, want), 0);
	/* a name that is not a node's has no key */
	assert_int_equal(backauth_node_key(SECRET, "a b", k1), -1);
	assert_int_equal(backauth_node_key("abc", "node01", k1), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hmac_matches_rfc4231),
	    cmocka_unit_test(test_both_sides_prove_the_same_secret),
	    cmocka_unit_test(test_an_agent_with_another_secret_refuses_the_head),
	    cmocka_unit_test(test_a_wrong_or_missing_agent_proof_is_refused),
	    cmocka_unit_test(test_a_proof_replayed_on_a_new_connection_is_refused),
	    cmocka_unit_test(test_truncated_and_malformed_lines_are_refused),
	    cmocka_unit_test(test_one_nodes_key_cannot_prove_another_node),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
