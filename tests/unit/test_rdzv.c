/* SPDX-License-Identifier: MIT */
/* test_rdzv.c - the rendezvous watch's pure parts: the endpoint text, the
 * reading of /proc/net/tcp{,6} against MASTER_ADDR:PORT (on text captured
 * from Linux 6.1 x86_64, in a network namespace where 10.1.2.11 is a local
 * address: a TCPStore-like dual-stack listener on 29500, a client connected
 * to 10.1.2.11:29500 and the server's side of it, a connect to 29999 that a
 * firewall drops, and another process's listener on 127.0.0.1:41000), and
 * the verdict's words. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "cd.h"
#include "jobs/rdzv_agent.h"
#include "jobs/rdzvwatch.h"
#include "probes/procscan.h"

#define S(lit) lit, sizeof(lit) - 1

/* inodes: 135878 the listener (tcp6), 135879 the client, 135880 the
 * accepted side (tcp6, v4-mapped), 135881 the dropped connect, 135882
 * another process's listener */
static const char tcp4[] =
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
    "timeout inode                                                     \n"
    "   0: 0100007F:A028 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        "
    "0 135882 1 000000007d78dcc4 100 0 0 10 0                    \n"
    "   1: 0B02010A:CB08 0B02010A:733C 01 00000000:00000000 00:00000000 00000000     0        "
    "0 135879 2 00000000ec714b4b 20 0 0 10 -1                    \n"
    "   2: 0B02010A:C860 0B02010A:752F 02 00000001:00000000 01:00000045 00000000     0        "
    "0 135881 2 0000000084697c0a 100 0 0 10 -1                   \n";
static const char tcp6[] =
    "  sl  local_address                         remote_address                        st "
    "tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
    "   0: 00000000000000000000000000000000:733C 00000000000000000000000000000000:0000 0A "
    "00000000:00000000 00:00000000 00000000     0        0 135878 1 00000000e48d8d15 100 0 0 "
    "10 0\n"
    "   1: 0000000000000000FFFF00000B02010A:733C 0000000000000000FFFF00000B02010A:CB08 01 "
    "00000000:00000000 00:00000000 00000000     0        0 135880 1 00000000f7d0f6f0 20 0 0 "
    "10 -1\n";

static size_t read_tables(struct procscan_tcp *t, size_t max)
{
	char err[CD_ERRLEN];
	size_t n4 = 0, n6 = 0;

	assert_int_equal(procscan_tcp_parse(S(tcp4), 0, t, max, &n4, err, sizeof(err)), 0);
	assert_int_equal(procscan_tcp_parse(S(tcp6), 1, t + n4, max - n4, &n6, err, sizeof(err)),
	                 0);
	return n4 + n6;
}

static void endpoint_is_the_text_procscan_gives(void **state)
{
	char out[PROCSCAN_ADDR];

	assert_int_equal(rdzv_agent_endpoint("10.1.2.11", 29500, out, sizeof(out)), 0);
	assert_string_equal(out, "10.1.2.11:29500");
	assert_int_equal(rdzv_agent_endpoint("fd00:0:0::11", 29500, out, sizeof(out)), 0);
	assert_string_equal(out, "[fd00::11]:29500");
	assert_int_equal(rdzv_agent_endpoint("::ffff:10.1.2.11", 29500, out, sizeof(out)), 0);
	assert_string_equal(out, "10.1.2.11:29500");
	assert_int_equal(rdzv_agent_endpoint("node1", 29500, out, sizeof(out)), -1);
}

static void the_jobs_established_client_connection_is_a_join(void **state)
{
	struct procscan_tcp t[16];
	const uint64_t job[] = {135878, 135879, 135880, 135881};
	struct rdzv_sockets s;
	size_t n = read_tables(t, 16);

	rdzv_agent_classify(t, n, job, 4, "10.1.2.11:29500", 29500, &s);
	assert_int_equal(s.established, 1); /* the client; the accepted side is not a join */
	assert_int_equal(s.connecting, 0);
	assert_int_equal(s.listening, 1);
}

static void the_server_side_alone_is_no_join(void **state)
{
	struct procscan_tcp t[16];
	const uint64_t accepted[] = {135880};
	struct rdzv_sockets s;
	size_t n = read_tables(t, 16);

	rdzv_agent_classify(t, n, accepted, 1, "10.1.2.11:29500", 29500, &s);
	assert_int_equal(s.established, 0);
	assert_int_equal(s.listening, 0);
}

static void a_dropped_connect_is_connecting(void **state)
{
	struct procscan_tcp t[16];
	const uint64_t job[] = {135878, 135879, 135880, 135881};
	struct rdzv_sockets s;
	size_t n = read_tables(t, 16);

	rdzv_agent_classify(t, n, job, 4, "10.1.2.11:29999", 29999, &s);
	assert_int_equal(s.established, 0);
	assert_int_equal(s.connecting, 1);
	assert_int_equal(s.listening, 0);
}

static void another_processs_sockets_do_not_count(void **state)
{
	struct procscan_tcp t[16];
	const uint64_t other[] = {135882};
	struct rdzv_sockets s;
	size_t n = read_tables(t, 16);

	rdzv_agent_classify(t, n, other, 1, "10.1.2.11:29500", 29500, &s);
	assert_int_equal(s.established + s.connecting + s.listening, 0);
	rdzv_agent_classify(t, n, other, 1, "127.0.0.1:41000", 41000, &s);
	assert_int_equal(s.listening, 1);
	rdzv_agent_classify(t, n, NULL, 0, "10.1.2.11:29500", 29500, &s);
	assert_int_equal(s.established + s.connecting + s.listening, 0);
}

static void explain_names_the_node_the_path_and_the_likely_reason(void **state)
{
	static const struct {
		const char *host, *addr;
		int master;
		const char *result, *errno_name, *want;
	} cases[] = {
	    {"node3", "10.1.2.11", 0, "timeout", "ETIMEDOUT",
	     "node3 cannot reach 10.1.2.11:29500: timed out (a firewall drops it?)"},
	    {"node1", "10.1.2.11", 1, "timeout", "ETIMEDOUT",
	     "node1 cannot reach its own 10.1.2.11:29500: timed out (a firewall drops it?)"},
	    {"node2", "10.1.2.11", 0, "refused", "ECONNREFUSED",
	     "node2 cannot reach 10.1.2.11:29500: refused (nothing listens there, or a firewall "
	     "rejects it)"},
	    {"node2", "fd00::11", 0, "no-route", "EHOSTUNREACH",
	     "node2 cannot reach [fd00::11]:29500: no route to host (a firewall rejects it, or no "
	     "route)"},
	    {"node2", "10.1.2.11", 0, "error", "EACCES",
	     "node2 cannot reach 10.1.2.11:29500: EACCES"},
	    {"node2", "10.1.2.11", 0, "", "",
	     "node2 did not answer the connect test to 10.1.2.11:29500"},
	    {"node2", "10.1.2.11", 0, "connected", "",
	     "node2 reaches 10.1.2.11:29500 now (connected in 3 ms), but its job had not joined"},
	};
	char out[512];

	for (size_t i = 0; i < CD_ARRAY_LEN(cases); i++) {
		rdzvwatch_explain(cases[i].host, cases[i].addr, 29500, cases[i].master,
		                  cases[i].result, cases[i].errno_name, 3, out, sizeof(out));
		assert_string_equal(out, cases[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(endpoint_is_the_text_procscan_gives),
	    cmocka_unit_test(the_jobs_established_client_connection_is_a_join),
	    cmocka_unit_test(the_server_side_alone_is_no_join),
	    cmocka_unit_test(a_dropped_connect_is_connecting),
	    cmocka_unit_test(another_processs_sockets_do_not_count),
	    cmocka_unit_test(explain_names_the_node_the_path_and_the_likely_reason),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
