/* SPDX-License-Identifier: MIT */
/*
 * test_diagnose_ascend.c - the Ascend findings (probes/diagnose_ascend.c) on
 * models built from fixtures: two servers of eight devices with the guide's
 * plan, then one fault each.
 */
#include "probes/diagnose.h"
#include "probes/netmodel.h"
#include "cd.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Device d of server s as ascend_probe answers it, the guide's address. */
static json_t *device(int s, int d)
{
	char a[16];

	snprintf(a, sizeof(a), "192.168.%d.%d", 100 + d % 4, (s ? 111 : 101) - (d >= 4));
	return json_pack("{s:i, s:{s:s, s:s}, s:s, s:s, s:i, s:n, s:[]}", "id", d, "ip", "address",
	                 a, "netmask", "255.255.255.0", "link", "UP", "net_health", "Success",
	                 "tls", 1, "lldp", "incomplete");
}

/* A fixture of two Ascend servers; the caller breaks it, then diagnoses. */
static json_t *fixture(void)
{
	json_t *nodes = json_array();

	for (int s = 0; s < 2; s++) {
		json_t *devs = json_array(), *npus = json_array();
		char host[8];

		for (int d = 0; d < 8; d++) {
			json_array_append_new(devs, device(s, d));
			json_array_append_new(npus,
			                      json_pack("{s:i, s:s}", "id", d, "name", "910B3"));
		}
		snprintf(host, sizeof(host), "s%d", s);
		json_array_append_new(nodes, json_pack("{s:s, s:{s:o, s:{}}, s:{s:o}}", "host",
		                                       host, "facts", "npus", npus, "errors",
		                                       "ascend_probe", "devices", devs));
	}
	return json_pack("{s:o}", "nodes", nodes);
}

static json_t *dev_of(json_t *fx, int s, int d)
{
	return json_array_get(
	    json_object_get(json_object_get(json_array_get(json_object_get(fx, "nodes"), (size_t)s),
	                                    "ascend_probe"),
	                    "devices"),
	    (size_t)d);
}

/* The finding id, or an empty one (id "") when d has none. */
static const struct finding *find(const struct diagnosis *d, const char *id)
{
	static char empty[] = "";
	static const struct finding none = {.id = "", .message = empty, .evidence = empty};

	for (size_t i = 0; i < d->nfindings; i++)
		if (!strcmp(d->findings[i].id, id))
			return &d->findings[i];
	return &none;
}

static int has(const struct diagnosis *d, const char *id)
{
	return find(d, id)->id[0] != '\0';
}

static struct diagnosis *run(json_t *fx, struct netmodel **m)
{
	char err[CD_ERRLEN];

	*m = netmodel_load_json(fx, err, sizeof(err));
	assert_non_null(*m);
	return diagnose(*m);
}

static void test_the_guides_plan_gives_only_the_hccl_settings(void **state)
{
	json_t *fx = fixture();
	struct netmodel *m;
	struct diagnosis *d = run(fx, &m);

	for (size_t i = 0; i < d->nfindings; i++)
		if (!strncmp(d->findings[i].id, "ascend-", 7))
			assert_string_equal(d->findings[i].id, "ascend-hccl-settings");
	assert_true(has(d, "ascend-hccl-settings"));
	diagnosis_free(d);
	netmodel_free(m);
	json_decref(fx);
}

static void test_a_link_down_is_named_with_its_device(void **state)
{
	json_t *fx = fixture();
	struct netmodel *m;
	struct diagnosis *d;
	const struct finding *f;

	json_object_set_new(dev_of(fx, 1, 6), "link", json_string("DOWN"));
	d = run(fx, &m);
	f = find(d, "ascend-link-down");
	assert_string_equal(f->evidence, "s1: device 6: link status DOWN");
	assert_string_equal(f->message, "a device link is down on s1");
	diagnosis_free(d);
	netmodel_free(m);
	json_decref(fx);
}

static void test_a_tls_switch_off_on_one_device_is_a_mismatch(void **state)
{
	json_t *fx = fixture();
	struct netmodel *m;
	struct diagnosis *d;
	const struct finding *f;

	json_object_set_new(dev_of(fx, 0, 2), "tls", json_integer(0));
	d = run(fx, &m);
	f = find(d, "ascend-tls-mismatch");
	assert_non_null(strstr(f->evidence, "tls switch 0 (disabled) on 1: s0:2"));
	diagnosis_free(d);
	netmodel_free(m);
	json_decref(fx);
}

static void test_a_plan_break_names_devices_servers_and_rule(void **state)
{
	json_t *fx = fixture();
	struct netmodel *m;
	struct diagnosis *d;
	const struct finding *f;

	json_object_set_new(json_object_get(dev_of(fx, 1, 0), "ip"), "address",
	                    json_string("192.168.200.111"));
	json_object_set_new(json_object_get(dev_of(fx, 1, 4), "ip"), "address",
	                    json_string("192.168.200.110"));
	d = run(fx, &m);
	f = find(d, "ascend-ip-plan");
	assert_non_null(strstr(f->evidence, "device 0 of s0 (192.168.100.101/255.255.255.0) and of "
	                                    "s1 (192.168.200.111/255.255.255.0) are in different "
	                                    "segments (rule 2"));
	assert_false(has(d, "ascend-duplicate-address"));
	diagnosis_free(d);
	netmodel_free(m);
	json_decref(fx);
}

static void test_a_duplicated_address_has_its_own_finding(void **state)
{
	json_t *fx = fixture();
	struct netmodel *m;
	struct diagnosis *d;

	json_object_set_new(json_object_get(dev_of(fx, 1, 1), "ip"), "address",
	                    json_string("192.168.101.101"));
	d = run(fx, &m);
	assert_true(has(d, "ascend-duplicate-address"));
	assert_string_equal(find(d, "ascend-duplicate-address")->evidence,
	                    "address 192.168.101.101 is held by device 1 of s0 and device 1 of s1 "
	                    "(rule 3: every address is unique)");
	diagnosis_free(d);
	netmodel_free(m);
	json_decref(fx);
}

static void test_an_unreadable_answer_is_incomplete_never_healthy(void **state)
{
	json_t *fx = fixture(), *dv = dev_of(fx, 0, 3);
	struct netmodel *m;
	struct diagnosis *d;

	json_object_set_new(dv, "net_health", json_null());
	json_array_append_new(json_object_get(dv, "incomplete"),
	                      json_string("hccn_tool -i 3 -net_health -g: hccn_tool timed out"));
	d = run(fx, &m);
	assert_true(has(d, "ascend-probe-incomplete"));
	assert_string_equal(find(d, "ascend-probe-incomplete")->evidence,
	                    "s0: hccn_tool -i 3 -net_health -g: hccn_tool timed out");
	diagnosis_free(d);
	netmodel_free(m);
	json_decref(fx);
}

static void test_a_failed_netdetect_is_a_net_health_finding(void **state)
{
	json_t *fx = fixture(), *n0 = json_array_get(json_object_get(fx, "nodes"), 0);
	struct netmodel *m;
	struct diagnosis *d;

	json_object_set_new(n0, "ascend_netdetect",
	                    json_pack("{s:[{s:i, s:s, s:s}]}", "results", "device", 5, "address",
	                              "192.168.101.110", "health", "Receive timeout"));
	d = run(fx, &m);
	assert_true(has(d, "ascend-net-health"));
	assert_string_equal(
	    find(d, "ascend-net-health")->evidence,
	    "s0: device 5 toward 192.168.101.110: net health status Receive timeout");
	diagnosis_free(d);
	netmodel_free(m);
	json_decref(fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_the_guides_plan_gives_only_the_hccl_settings),
	    cmocka_unit_test(test_a_link_down_is_named_with_its_device),
	    cmocka_unit_test(test_a_tls_switch_off_on_one_device_is_a_mismatch),
	    cmocka_unit_test(test_a_plan_break_names_devices_servers_and_rule),
	    cmocka_unit_test(test_a_duplicated_address_has_its_own_finding),
	    cmocka_unit_test(test_an_unreadable_answer_is_incomplete_never_healthy),
	    cmocka_unit_test(test_a_failed_netdetect_is_a_net_health_finding),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
