/* test_check_watch.c - which findings a round of `check --watch` raised and cleared. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "collectives/check_watch.h"

static size_t n_a[] = {0, 2}, n_b[] = {2}, n_c[] = {0, 1, 2};

static struct finding mk(const char *id, enum severity sev, size_t *nodes, size_t n)
{
	return (struct finding){.id = id, .severity = sev, .nodes = nodes, .nnodes = n};
}

static void the_same_id_severity_and_nodes_are_the_same_finding(void **state)
{
	struct finding a = mk("firewall-blocks-port", SEV_WARNING, n_b, 1);
	struct finding b = mk("firewall-blocks-port", SEV_WARNING, n_b, 1);

	a.message = "node3: port 29500 dropped (2 attempts)";
	b.message = "node3: port 29500 dropped (3 attempts)";
	assert_true(check_watch_same(&a, &b));
}

static void another_severity_or_node_set_is_another_finding(void **state)
{
	struct finding a = mk("duplicate-address", SEV_WARNING, n_a, 2);
	struct finding b = mk("duplicate-address", SEV_ERROR, n_a, 2);
	struct finding c = mk("duplicate-address", SEV_WARNING, n_c, 3);
	struct finding d = mk("mtu-mismatch", SEV_WARNING, n_a, 2);

	assert_false(check_watch_same(&a, &b));
	assert_false(check_watch_same(&a, &c));
	assert_false(check_watch_same(&a, &d));
}

static void the_first_round_raises_every_finding(void **state)
{
	struct finding fs[] = {mk("hostname-loopback", SEV_ERROR, n_b, 1),
	                       mk("mtu-mismatch", SEV_WARNING, n_c, 3)};
	struct diagnosis d = {.findings = fs, .nfindings = 2};
	const struct finding *out[2];

	assert_int_equal(check_watch_new_findings(NULL, &d, out), 2);
	assert_ptr_equal(out[0], &fs[0]);
	assert_ptr_equal(out[1], &fs[1]);
}

static void raised_and_cleared_are_the_findings_one_round_lacks(void **state)
{
	struct finding before[] = {mk("hostname-loopback", SEV_ERROR, n_b, 1),
	                           mk("mtu-mismatch", SEV_WARNING, n_c, 3)};
	struct finding after[] = {mk("firewall-blocks-port", SEV_WARNING, n_b, 1),
	                          mk("mtu-mismatch", SEV_WARNING, n_c, 3)};
	struct diagnosis a = {.findings = before, .nfindings = 2};
	struct diagnosis b = {.findings = after, .nfindings = 2};
	const struct finding *out[2];

	assert_int_equal(check_watch_new_findings(&a, &b, out), 1);
	assert_string_equal(out[0]->id, "firewall-blocks-port");
	assert_int_equal(check_watch_new_findings(&b, &a, out), 1);
	assert_string_equal(out[0]->id, "hostname-loopback");
}

static void an_unchanged_round_raises_and_clears_nothing(void **state)
{
	struct finding fs[] = {mk("mtu-mismatch", SEV_WARNING, n_c, 3)};
	struct finding gs[] = {mk("mtu-mismatch", SEV_WARNING, n_c, 3)};
	struct diagnosis a = {.findings = fs, .nfindings = 1};
	struct diagnosis b = {.findings = gs, .nfindings = 1};
	const struct finding *out[1];

	assert_int_equal(check_watch_new_findings(&a, &b, out), 0);
	assert_int_equal(check_watch_new_findings(&b, &a, out), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(the_same_id_severity_and_nodes_are_the_same_finding),
	    cmocka_unit_test(another_severity_or_node_set_is_another_finding),
	    cmocka_unit_test(the_first_round_raises_every_finding),
	    cmocka_unit_test(raised_and_cleared_are_the_findings_one_round_lacks),
	    cmocka_unit_test(an_unchanged_round_raises_and_clears_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
