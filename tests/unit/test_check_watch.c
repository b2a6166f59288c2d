/* SPDX-License-Identifier: MIT */
/* test_check_watch.c - which nodes a round of `check --watch` raised and cleared, per finding. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "probes/check_watch.h"

static size_t n_3[] = {3}, n_23[] = {2, 3}, n_02[] = {0, 2}, n_012[] = {0, 1, 2};

static struct finding mk(const char *id, enum severity sev, size_t *nodes, size_t n)
{
	return (struct finding){.id = id, .severity = sev, .nodes = nodes, .nnodes = n};
}

static void expect_nodes(const struct check_watch_change *c, const size_t *nodes, size_t n)
{
	assert_int_equal(c->nnodes, n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(c->nodes[i], nodes[i]);
}

static void the_first_round_raises_every_finding_with_all_its_nodes(void **state)
{
	struct finding fs[] = {mk("hostname-loopback", SEV_ERROR, n_3, 1),
	                       mk("mtu-mismatch", SEV_WARNING, n_012, 3)};
	struct diagnosis d = {.findings = fs, .nfindings = 2};
	struct check_watch_change out[2];

	assert_int_equal(check_watch_changes(NULL, &d, out), 2);
	assert_ptr_equal(out[0].f, &fs[0]);
	expect_nodes(&out[0], n_3, 1);
	assert_ptr_equal(out[1].f, &fs[1]);
	expect_nodes(&out[1], n_012, 3);
	check_watch_changes_fini(out, 2);
}

/* node3 had it; node2 joins: node2 alone is raised, nothing is cleared */
static void a_node_joining_a_finding_is_raised_alone(void **state)
{
	static const size_t joined[] = {2};
	struct finding before[] = {mk("firewall-blocks-port", SEV_WARNING, n_3, 1)};
	struct finding after[] = {mk("firewall-blocks-port", SEV_WARNING, n_23, 2)};
	struct diagnosis a = {.findings = before, .nfindings = 1};
	struct diagnosis b = {.findings = after, .nfindings = 1};
	struct check_watch_change out[1];

	assert_int_equal(check_watch_changes(&a, &b, out), 1);
	assert_ptr_equal(out[0].f, &after[0]);
	expect_nodes(&out[0], joined, 1);
	check_watch_changes_fini(out, 1);
	assert_int_equal(check_watch_changes(&b, &a, out), 0);
}

/* node2 and node3 had it; node2 leaves: node2 alone is cleared, nothing is raised */
static void a_node_leaving_a_finding_is_cleared_alone(void **state)
{
	static const size_t left[] = {2};
	struct finding before[] = {mk("firewall-blocks-port", SEV_WARNING, n_23, 2)};
	struct finding after[] = {mk("firewall-blocks-port", SEV_WARNING, n_3, 1)};
	struct diagnosis a = {.findings = before, .nfindings = 1};
	struct diagnosis b = {.findings = after, .nfindings = 1};
	struct check_watch_change out[1];

	assert_int_equal(check_watch_changes(&a, &b, out), 0);
	assert_int_equal(check_watch_changes(&b, &a, out), 1);
	assert_ptr_equal(out[0].f, &before[0]);
	expect_nodes(&out[0], left, 1);
	check_watch_changes_fini(out, 1);
}

/* a node named by another finding of the same id (another cause) still has it */
static void a_node_moving_between_findings_of_one_id_is_no_change(void **state)
{
	static size_t n_0[] = {0}, n_2[] = {2};
	struct finding before[] = {mk("duplicate-address", SEV_WARNING, n_02, 2)};
	struct finding after[] = {mk("duplicate-address", SEV_WARNING, n_0, 1),
	                          mk("duplicate-address", SEV_WARNING, n_2, 1)};
	struct diagnosis a = {.findings = before, .nfindings = 1};
	struct diagnosis b = {.findings = after, .nfindings = 2};
	struct check_watch_change out[2];

	assert_int_equal(check_watch_changes(&a, &b, out), 0);
	assert_int_equal(check_watch_changes(&b, &a, out), 0);
}

static void another_severity_is_another_finding(void **state)
{
	struct finding before[] = {mk("duplicate-address", SEV_WARNING, n_02, 2)};
	struct finding after[] = {mk("duplicate-address", SEV_ERROR, n_02, 2)};
	struct diagnosis a = {.findings = before, .nfindings = 1};
	struct diagnosis b = {.findings = after, .nfindings = 1};
	struct check_watch_change out[1];

	assert_int_equal(check_watch_changes(&a, &b, out), 1);
	expect_nodes(&out[0], n_02, 2);
	check_watch_changes_fini(out, 1);
	assert_int_equal(check_watch_changes(&b, &a, out), 1);
	expect_nodes(&out[0], n_02, 2);
	check_watch_changes_fini(out, 1);
}

static void a_finding_without_nodes_changes_as_a_whole(void **state)
{
	struct finding fs[] = {mk("probe-incomplete", SEV_WARNING, NULL, 0)};
	struct diagnosis a = {.findings = NULL, .nfindings = 0};
	struct diagnosis b = {.findings = fs, .nfindings = 1};
	struct check_watch_change out[1];

	assert_int_equal(check_watch_changes(&a, &b, out), 1);
	assert_ptr_equal(out[0].f, &fs[0]);
	assert_int_equal(out[0].nnodes, 0);
	check_watch_changes_fini(out, 1);
	assert_int_equal(check_watch_changes(&b, &b, out), 0);
}

static void a_message_changed_on_the_same_nodes_is_no_change(void **state)
{
	struct finding fs[] = {mk("firewall-blocks-port", SEV_WARNING, n_3, 1)};
	struct finding gs[] = {mk("firewall-blocks-port", SEV_WARNING, n_3, 1)};
	struct diagnosis a = {.findings = fs, .nfindings = 1};
	struct diagnosis b = {.findings = gs, .nfindings = 1};
	struct check_watch_change out[1];

	fs[0].message = "node3: port 29500 dropped (2 attempts)";
	gs[0].message = "node3: port 29500 dropped (3 attempts)";
	assert_int_equal(check_watch_changes(&a, &b, out), 0);
	assert_int_equal(check_watch_changes(&b, &a, out), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(the_first_round_raises_every_finding_with_all_its_nodes),
	    cmocka_unit_test(a_node_joining_a_finding_is_raised_alone),
	    cmocka_unit_test(a_node_leaving_a_finding_is_cleared_alone),
	    cmocka_unit_test(a_node_moving_between_findings_of_one_id_is_no_change),
	    cmocka_unit_test(another_severity_is_another_finding),
	    cmocka_unit_test(a_finding_without_nodes_changes_as_a_whole),
	    cmocka_unit_test(a_message_changed_on_the_same_nodes_is_no_change),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
