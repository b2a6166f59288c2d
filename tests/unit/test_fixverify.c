/* SPDX-License-Identifier: MIT */
/* test_fixverify.c - the second check's verdicts as data (fixers/fix_verify.h)
 * and the fixers' roles in the table (fixers/fix.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "fixers/fix.h"
#include "fixers/fix_login.h"
#include "fixers/fix_verify.h"

static const char *const hosts[] = {"node1", "node2"};

/* Two probed nodes reading ip_local_port_range lo-hi. */
static struct netmodel *model(int lo, int hi)
{
	struct netmodel *m = netmodel_new(hosts, 2);

	for (size_t i = 0; i < 2; i++) {
		m->nodes[i].probed = 1;
		m->nodes[i].port_lo = lo;
		m->nodes[i].port_hi = hi;
	}
	return m;
}

/* A plan whose node 0 wanted the fixer id, aiming at 40000-40999. */
static struct fix_plan *plan_wanting(const char *id)
{
	struct fix_plan *p = cd_calloc(1, sizeof(*p));

	p->nnodes = 2;
	p->nodes = cd_calloc(2, sizeof(*p->nodes));
	p->nodes[0].wanted = cd_calloc(1, sizeof(*p->nodes[0].wanted));
	p->nodes[0].wanted[0] = fixer_find(id)->id;
	p->nodes[0].nwanted = 1;
	p->port_lo = 40000;
	p->port_hi = 40999;
	return p;
}

static void port_range_is_verified_when_the_new_check_reads_the_target_range(void **state)
{
	struct netmodel *m2 = model(40000, 40999);
	struct fix_plan *p = plan_wanting("port-range");
	struct diagnosis after = {0};
	struct fix_verification v = {0};

	fix_verify_plan(&v, m2, p, NULL, &after);
	assert_int_equal(v.n, 1);
	assert_int_equal(v.bad, 0);
	assert_int_equal(v.v[0].kind, FIX_VERDICT_FIXER);
	assert_int_equal(v.v[0].node, 0);
	assert_string_equal(v.v[0].fixer, "port-range");
	assert_true(v.v[0].verified);
	assert_string_equal(v.v[0].still, "");
	fix_verification_fini(&v);
	fix_plan_free(p);
	netmodel_free(m2);
}

static void port_range_is_not_fixed_when_the_node_reads_another_range(void **state)
{
	struct netmodel *m2 = model(32768, 60999);
	struct fix_plan *p = plan_wanting("port-range");
	struct diagnosis after = {0};
	struct fix_verification v = {0};

	fix_verify_plan(&v, m2, p, NULL, &after);
	assert_int_equal(v.bad, 1);
	assert_false(v.v[0].verified);
	assert_string_equal(v.v[0].still, "ip_local_port_range is 32768-60999, not 40000-40999");
	fix_verification_fini(&v);
	fix_plan_free(p);
	netmodel_free(m2);
}

static void every_pair_is_not_fixed_when_the_second_check_did_not_run(void **state)
{
	struct netmodel *m2 = model(40000, 40999);
	struct fix_plan *p = plan_wanting("env");
	struct fix_verification v = {0};

	fix_verify_plan(&v, m2, p, NULL, NULL);
	assert_int_equal(v.bad, 1);
	assert_string_equal(v.v[0].still, "the second check did not run");
	fix_verification_fini(&v);
	fix_plan_free(p);
	netmodel_free(m2);
}

static void a_node_the_new_check_did_not_reach_is_not_fixed(void **state)
{
	struct netmodel *m2 = model(40000, 40999);
	struct fix_plan *p = plan_wanting("hosts");
	struct diagnosis after = {0};
	struct fix_verification v = {0};

	m2->nodes[0].probed = 0;
	snprintf(m2->nodes[0].error, sizeof(m2->nodes[0].error), "connection refused");
	fix_verify_plan(&v, m2, p, NULL, &after);
	assert_int_equal(v.bad, 1);
	assert_string_equal(v.v[0].still, "not checked: connection refused");
	fix_verification_fini(&v);
	fix_plan_free(p);
	netmodel_free(m2);
}

static void each_verdict_says_what_the_apply_did_for_its_fixer(void **state)
{
	struct netmodel *m2 = model(0, 0);
	struct fix_plan *p = plan_wanting("env");
	struct diagnosis after = {0};
	struct fix_verification v = {0};
	struct fix_action acts[2] = {{.fixer = "env"}, {.fixer = "hosts"}};
	struct fix_result r0[2] = {{.status = FIX_APPLIED}, {.status = FIX_FAILED}};
	struct fix_result *results[2] = {r0, NULL};

	p->nodes[0].wanted = cd_realloc(p->nodes[0].wanted, 3 * sizeof(*p->nodes[0].wanted));
	p->nodes[0].wanted[1] = "hosts";
	p->nodes[0].wanted[2] = "firewall";
	p->nodes[0].nwanted = 3;
	p->nodes[0].actions = acts;
	p->nodes[0].nactions = 2;
	fix_verify_plan(&v, m2, p, results, &after);
	assert_int_equal(v.n, 3);
	assert_int_equal(v.v[0].change, FIX_CHANGE_APPLIED);
	assert_int_equal(v.v[1].change, FIX_CHANGE_FAILED);
	assert_int_equal(v.v[2].change, FIX_CHANGE_NOT_PLANNED);
	p->nodes[0].actions = NULL; /* the test's, not the plan's */
	p->nodes[0].nactions = 0;
	fix_verification_fini(&v);
	fix_plan_free(p);
	netmodel_free(m2);
}

static void login_nodes_are_verified_when_the_new_check_logged_in_by_key(void **state)
{
	struct netmodel *m2 = model(0, 0);
	struct fix_login l = {.n = 2, .login = (int[]){1, 1}, .nlogin = 2};
	struct fix_verification v = {0};

	m2->nodes[1].probed = 0;
	snprintf(m2->nodes[1].error, sizeof(m2->nodes[1].error), "the node refused every key");
	snprintf(m2->nodes[1].error_code, sizeof(m2->nodes[1].error_code), "auth");
	fix_verify_login(&v, &l, m2);
	assert_int_equal(v.n, 2);
	assert_int_equal(v.bad, 1);
	assert_int_equal(v.v[0].kind, FIX_VERDICT_LOGIN);
	assert_string_equal(v.v[0].fixer, "ssh-key");
	assert_true(v.v[0].verified);
	assert_false(v.v[1].verified);
	assert_string_equal(v.v[1].still, "the node refused every key (auth)");
	fix_verification_fini(&v);
	netmodel_free(m2);
}

static void the_roles_are_fields_of_the_table(void **state)
{
	size_t login = 0;

	for (size_t k = 0; k < fixer_table_len; k++) {
		const struct fixer *f = &fixer_table[k];

		login += f->login_stage;
		/* a fixer narrowing the ports is verified by the range it reads */
		if (f->narrows_ports)
			assert_non_null(f->verify);
	}
	assert_int_equal(login, 1);
	assert_string_equal(fixer_login_stage()->id, "ssh-key");
	assert_true(fixer_find("firewall")->reads_firewall);
	assert_true(fixer_find("port-range")->narrows_ports);
}

static void selection_by_role_follows_only(void **state)
{
	struct fix_opts dflt = {0}, keys = {.only = "ssh-key"}, ports = {.only = "port-range"};

	assert_true(fix_login_selected(&dflt));
	assert_true(fix_checked_selected(&dflt));
	assert_false(fix_ports_selected(&dflt));
	assert_true(fix_login_selected(&keys));
	assert_false(fix_checked_selected(&keys));
	assert_true(fix_ports_selected(&ports));
	assert_false(fix_login_selected(&ports));
}

static void a_finding_still_reported_names_its_nodes_and_a_gone_one_none(void **state)
{
	size_t n1[] = {1}, n2[] = {0, 1}, *nodes, n;
	struct finding f[] = {
	    {.id = "hostname-loopback", .nodes = n1, .nnodes = 1},
	    {.id = "firewall-blocks-port", .nodes = n2, .nnodes = 2},
	    {.id = "hostname-loopback", .nodes = n2, .nnodes = 2},
	};
	struct diagnosis after = {.findings = f, .nfindings = 3};

	assert_int_equal(fix_verify_finding(&after, "hostname-loopback", &nodes, &n), 2);
	assert_int_equal(n, 3);
	assert_int_equal(nodes[0], 1);
	assert_int_equal(nodes[1], 0);
	assert_int_equal(nodes[2], 1);
	free(nodes);
	assert_int_equal(fix_verify_finding(&after, "ipv6-no-route", &nodes, &n), 0);
	assert_null(nodes);
	assert_int_equal(n, 0);
	assert_int_equal(fix_verify_finding(NULL, "hostname-loopback", &nodes, &n), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(port_range_is_verified_when_the_new_check_reads_the_target_range),
	    cmocka_unit_test(port_range_is_not_fixed_when_the_node_reads_another_range),
	    cmocka_unit_test(every_pair_is_not_fixed_when_the_second_check_did_not_run),
	    cmocka_unit_test(a_node_the_new_check_did_not_reach_is_not_fixed),
	    cmocka_unit_test(each_verdict_says_what_the_apply_did_for_its_fixer),
	    cmocka_unit_test(login_nodes_are_verified_when_the_new_check_logged_in_by_key),
	    cmocka_unit_test(the_roles_are_fields_of_the_table),
	    cmocka_unit_test(selection_by_role_follows_only),
	    cmocka_unit_test(a_finding_still_reported_names_its_nodes_and_a_gone_one_none),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
