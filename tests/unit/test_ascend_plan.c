/* SPDX-License-Identifier: MIT */
/*
 * test_ascend_plan.c - the device IP plan rules of Ascend servers
 * (probes/ascend_plan.h) on the guide's own 2 x 8 plan and on plans that
 * break one rule each.
 */
#include "probes/ascend_plan.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

/* The guide's plan: AI Server0 192.168.10x.101 / .100, AI Server1 .111 / .110. */
static void guide_plan(struct ascend_dev_addr d[2][8])
{
	for (int s = 0; s < 2; s++)
		for (int i = 0; i < 8; i++) {
			d[s][i].dev = i;
			snprintf(d[s][i].addr, sizeof(d[s][i].addr), "192.168.%d.%d", 100 + i % 4,
			         (s ? 111 : 101) - (i >= 4));
			snprintf(d[s][i].mask, sizeof(d[s][i].mask), "255.255.255.0");
		}
}

struct seen {
	size_t n;
	enum ascend_rule rule[16];
	size_t s1[16], s2[16];
	char text[16][512];
};

static void collect(void *arg, enum ascend_rule rule, size_t s1, size_t s2, const char *text)
{
	struct seen *s = arg;

	if (s->n < 16) {
		s->rule[s->n] = rule;
		s->s1[s->n] = s1;
		s->s2[s->n] = s2;
		snprintf(s->text[s->n], sizeof(s->text[0]), "%s", text);
	}
	s->n++;
}

static size_t run(struct ascend_dev_addr d[2][8], struct seen *seen)
{
	struct ascend_server_plan p[2] = {{.server = "server0", .n = 8, .dev = d[0]},
	                                  {.server = "server1", .n = 8, .dev = d[1]}};

	memset(seen, 0, sizeof(*seen));
	return ascend_plan_check(p, 2, collect, seen);
}

static void test_the_guides_plan_breaks_no_rule(void **state)
{
	struct ascend_dev_addr d[2][8];
	struct seen s;

	guide_plan(d);
	assert_int_equal(run(d, &s), 0);
}

static void test_devices_i_and_i_plus_4_in_different_segments_break_rule_1(void **state)
{
	struct ascend_dev_addr d[2][8];
	struct seen s;

	guide_plan(d);
	/* device 5 of server1 moved to device 2's segment: 1/5 differ, 2/5 share
	 * one, and device 5 of the two servers differ */
	snprintf(d[1][5].addr, sizeof(d[1][5].addr), "192.168.102.120");
	assert_int_equal(run(d, &s), 3);
	assert_int_equal(s.rule[0], ASCEND_RULE_PAIR);
	assert_string_equal(s.text[0],
	                    "on server1, devices 1 (192.168.101.111/255.255.255.0) and 5 "
	                    "(192.168.102.120/255.255.255.0) are in different segments (rule 1: "
	                    "devices i and i+4 of a server share a segment)");
	assert_int_equal(s.rule[1], ASCEND_RULE_SPLIT);
	assert_string_equal(s.text[1],
	                    "on server1, devices 5 (192.168.102.120) and 6 (192.168.102.110) are "
	                    "both in 192.168.102.0/24 (rule 1: devices 4-7 of a server are in "
	                    "different segments)");
	assert_int_equal(s.rule[2], ASCEND_RULE_CROSS);
}

static void test_two_of_devices_0_to_3_in_one_segment_break_rule_1(void **state)
{
	struct ascend_dev_addr d[2][8];
	struct seen s;

	guide_plan(d);
	/* the whole server on one segment pair: 0..3 and 4..7 all share */
	for (int i = 0; i < 8; i++)
		snprintf(d[0][i].addr, sizeof(d[0][i].addr), "10.0.0.%d", 10 + i);
	for (int i = 0; i < 8; i++)
		snprintf(d[1][i].addr, sizeof(d[1][i].addr), "10.0.0.%d", 20 + i);
	run(d, &s);
	assert_int_equal(s.rule[0], ASCEND_RULE_SPLIT);
	assert_true(strstr(s.text[0], "on server0, devices 0 (10.0.0.10) and 1 (10.0.0.11) are "
	                              "both in 10.0.0.0/24") != NULL);
	/* 6 pairs in each half of each server, no other rule broken */
	assert_int_equal(s.n, 24);
}

static void test_device_i_of_two_servers_in_different_segments_breaks_rule_2(void **state)
{
	struct ascend_dev_addr d[2][8];
	struct seen s;

	guide_plan(d);
	/* server1's devices 0 and 4 together on another segment: rule 1 holds */
	snprintf(d[1][0].addr, sizeof(d[1][0].addr), "192.168.200.111");
	snprintf(d[1][4].addr, sizeof(d[1][4].addr), "192.168.200.110");
	assert_int_equal(run(d, &s), 2);
	assert_int_equal(s.rule[0], ASCEND_RULE_CROSS);
	assert_int_equal(s.s1[0], 0);
	assert_int_equal(s.s2[0], 1);
	assert_string_equal(s.text[0],
	                    "device 0 of server0 (192.168.100.101/255.255.255.0) and of server1 "
	                    "(192.168.200.111/255.255.255.0) are in different segments (rule 2: "
	                    "device i of every server is in the same segment)");
	assert_int_equal(s.rule[1], ASCEND_RULE_CROSS);
}

static void test_a_netmask_differing_across_servers_breaks_rule_2(void **state)
{
	struct ascend_dev_addr d[2][8];
	struct seen s;

	guide_plan(d);
	snprintf(d[1][3].mask, sizeof(d[1][3].mask), "255.255.0.0");
	snprintf(d[1][7].mask, sizeof(d[1][7].mask), "255.255.0.0");
	assert_int_equal(run(d, &s), 2);
	assert_int_equal(s.rule[0], ASCEND_RULE_CROSS);
	assert_int_equal(s.rule[1], ASCEND_RULE_CROSS);
}

static void test_the_same_address_twice_breaks_rule_3(void **state)
{
	struct ascend_dev_addr d[2][8];
	struct seen s;

	guide_plan(d);
	snprintf(d[1][2].addr, sizeof(d[1][2].addr), "192.168.102.101");
	assert_int_equal(run(d, &s), 1);
	assert_int_equal(s.rule[0], ASCEND_RULE_DUPLICATE);
	assert_string_equal(s.text[0], "address 192.168.102.101 is held by device 2 of server0 "
	                               "and device 2 of server1 (rule 3: every address is unique)");
}

static void test_same_last_eight_bits_in_one_segment_break_rule_3(void **state)
{
	/* one device per server: rule 1 does not apply; /16 puts both in one
	 * segment, so rule 2 holds and only rule 3's last eight bits break */
	struct ascend_dev_addr a = {.dev = 0, .addr = "192.168.100.7", .mask = "255.255.0.0"};
	struct ascend_dev_addr b = {.dev = 0, .addr = "192.168.101.7", .mask = "255.255.0.0"};
	struct ascend_server_plan p[2] = {{.server = "server0", .n = 1, .dev = &a},
	                                  {.server = "server1", .n = 1, .dev = &b}};
	struct seen s;

	memset(&s, 0, sizeof(s));
	assert_int_equal(ascend_plan_check(p, 2, collect, &s), 1);
	assert_int_equal(s.rule[0], ASCEND_RULE_LAST_OCTET);
	assert_string_equal(s.text[0],
	                    "device 0 of server0 (192.168.100.7) and device 0 of server1 "
	                    "(192.168.101.7) share a segment and their last eight bits "
	                    "(rule 3: addresses of one segment differ in the last eight "
	                    "bits)");
}

static void test_devices_without_an_address_are_skipped(void **state)
{
	struct ascend_dev_addr d[2][8];
	struct seen s;

	guide_plan(d);
	d[0][4].addr[0] = '\0';
	snprintf(d[1][4].addr, sizeof(d[1][4].addr), "not-an-address");
	assert_int_equal(run(d, &s), 0);
}

static void test_an_odd_device_count_skips_rule_1_only(void **state)
{
	struct ascend_dev_addr d[2][8];
	struct ascend_server_plan p[2];

	guide_plan(d);
	snprintf(d[1][1].addr, sizeof(d[1][1].addr), "192.168.100.111");
	p[0] = (struct ascend_server_plan){.server = "a", .n = 7, .dev = d[0]};
	p[1] = (struct ascend_server_plan){.server = "b", .n = 7, .dev = d[1]};
	/* device 1 of b: different segment from a's device 1 (rule 2), and the
	 * same address as b's device 0 (rule 3) */
	assert_int_equal(ascend_plan_check(p, 2, NULL, NULL), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_the_guides_plan_breaks_no_rule),
	    cmocka_unit_test(test_devices_i_and_i_plus_4_in_different_segments_break_rule_1),
	    cmocka_unit_test(test_two_of_devices_0_to_3_in_one_segment_break_rule_1),
	    cmocka_unit_test(test_device_i_of_two_servers_in_different_segments_breaks_rule_2),
	    cmocka_unit_test(test_a_netmask_differing_across_servers_breaks_rule_2),
	    cmocka_unit_test(test_the_same_address_twice_breaks_rule_3),
	    cmocka_unit_test(test_same_last_eight_bits_in_one_segment_break_rule_3),
	    cmocka_unit_test(test_devices_without_an_address_are_skipped),
	    cmocka_unit_test(test_an_odd_device_count_skips_rule_1_only),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
