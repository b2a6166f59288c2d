/* SPDX-License-Identifier: MIT */
/*
 * test_ascend_agent.c - the agent's ascend_probe and ascend_netdetect
 * requests (probes/ascend_agent.h) against the hccn_tool stand-in
 * (tests/fakes/hccn_tool): healthy, broken, hanging, garbled and absent.
 */
#include "probes/ascend_agent.h"
#include "cd.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char scenario[] = "/tmp/cd-test-ascend-agent-XXXXXX";
static char *old_path;

/* PATH = tests/fakes (the unit tests run from the top of the tree), then
 * the system's, for bash. */
static void use(const char *text)
{
	char cwd[PATH_MAX], path[PATH_MAX + 64];
	FILE *f = fopen(scenario, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	snprintf(path, sizeof(path), "%s/tests/fakes:/usr/bin:/bin", cwd);
	setenv("PATH", path, 1);
	setenv("CD_FAKE_ASCEND", scenario, 1);
}

static int setup(void **state)
{
	int fd;

	memcpy(scenario + sizeof(scenario) - 7, "XXXXXX", 6);
	fd = mkstemp(scenario);
	if (fd < 0)
		return -1;
	close(fd);
	old_path = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
	return 0;
}

static int teardown(void **state)
{
	char st[sizeof(scenario) + 16];

	for (int i = 0; i < 8; i++) {
		snprintf(st, sizeof(st), "%s.state.%d", scenario, i);
		unlink(st);
	}
	unlink(scenario);
	if (old_path)
		setenv("PATH", old_path, 1);
	free(old_path);
	unsetenv("CD_FAKE_ASCEND");
	return 0;
}

/* Whether the array of strings holds s (the calls end in any order). */
static int has_line(json_t *arr, const char *s)
{
	size_t i;
	json_t *v;

	json_array_foreach(arr, i, v)
	{
		if (!strcmp(json_string_value(v), s))
			return 1;
	}
	return 0;
}

static json_t *probe(const char *devices_json, int timeout_ms)
{
	json_t *req = json_pack("{s:s, s:o, s:i}", "type", "ascend_probe", "devices",
	                        json_loads(devices_json, 0, NULL), "timeout_ms", timeout_ms);
	const char *code = NULL;
	char msg[CD_ERRLEN];
	json_t *r = ascend_agent_probe(req, &code, msg, sizeof(msg));

	json_decref(req);
	return r;
}

static void test_probe_reads_every_answer_of_each_device(void **state)
{
	json_t *r, *d1;
	char *s;

	use("npus=2\nip.0=192.168.100.101/255.255.255.0\nip.1=192.168.101.101/255.255.255.0\n"
	    "link.1=DOWN\ntls.1=0\n");
	r = probe("[0, 1]", 5000);
	assert_non_null(r);
	d1 = json_array_get(json_object_get(r, "devices"), 1);
	s = json_dumps(d1, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(s,
	                    "{\"id\":1,\"incomplete\":[],\"ip\":{\"address\":\"192.168.101.101\","
	                    "\"netmask\":\"255.255.255.0\"},\"link\":\"DOWN\",\"lldp\":{\"port\":"
	                    "\"100GE1/0/2\",\"system\":\"leaf-switch-1\"},\"net_health\":\"Init\","
	                    "\"tls\":0}");
	free(s);
	json_decref(r);
}

static void test_probe_of_a_hanging_tool_is_incomplete_within_the_deadline(void **state)
{
	int64_t t0 = cd_now_ms();
	json_t *r, *d0;

	use("npus=2\nmode=hang\n");
	r = probe("[0, 1]", 400);
	/* ten calls at once, each with its own 400 ms deadline */
	assert_true(cd_now_ms() - t0 < 3000);
	d0 = json_array_get(json_object_get(r, "devices"), 0);
	assert_true(json_is_null(json_object_get(d0, "link")));
	assert_int_equal(json_array_size(json_object_get(d0, "incomplete")), 5);
	for (size_t k = 0; k < 5; k++)
		assert_non_null(
		    strstr(json_string_value(json_array_get(json_object_get(d0, "incomplete"), k)),
		           "/hccn_tool did not finish within 400 ms"));
	json_decref(r);
}

static void test_probe_of_an_unknown_format_quotes_the_tool(void **state)
{
	json_t *r, *d0;

	use("npus=1\nmode=garbage\n");
	r = probe("[0]", 5000);
	d0 = json_array_get(json_object_get(r, "devices"), 0);
	assert_true(json_is_null(json_object_get(d0, "net_health")));
	assert_true(
	    has_line(json_object_get(d0, "incomplete"),
	             "hccn_tool -i 0 -link -g: a format clusterdoc does not know: \"dcmi "
	             "model initialized failed, because the device is used. ret is -8020\""));
	json_decref(r);
}

static void test_probe_without_the_tool_says_so_per_device(void **state)
{
	json_t *r;

	use("npus=1\n");
	setenv("PATH", "/nonexistent", 1);
	r = probe("[0]", 5000);
	assert_string_equal(
	    json_string_value(json_array_get(
	        json_object_get(json_array_get(json_object_get(r, "devices"), 0), "incomplete"),
	        0)),
	    "hccn_tool is not on PATH");
	json_decref(r);
}

static void test_probe_rejects_a_request_without_devices(void **state)
{
	json_t *req = json_pack("{s:s}", "type", "ascend_probe");
	const char *code = NULL;
	char msg[CD_ERRLEN];

	assert_null(ascend_agent_probe(req, &code, msg, sizeof(msg)));
	assert_string_equal(code, "bad_request");
	json_decref(req);
}

static void test_netdetect_gives_each_targets_health(void **state)
{
	json_t *req, *r;
	const char *code = NULL;
	char msg[CD_ERRLEN], *s;

	use("npus=2\nunreach=192.168.101.111\n");
	req = json_loads("{\"type\":\"ascend_netdetect\",\"targets\":[{\"device\":0,\"address\":"
	                 "\"192.168.100.111\"},{\"device\":1,\"address\":\"192.168.101.111\"},"
	                 "{\"device\":0,\"address\":\"192.168.100.121\"}]}",
	                 0, NULL);
	r = ascend_agent_netdetect(req, &code, msg, sizeof(msg));
	s = json_dumps(r, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(s,
	                    "{\"results\":[{\"address\":\"192.168.100.111\",\"device\":0,"
	                    "\"health\":\"Success\"},{\"address\":\"192.168.101.111\",\"device\":"
	                    "1,\"health\":\"Receive timeout\"},{\"address\":\"192.168.100.121\","
	                    "\"device\":0,\"health\":\"Success\"}]}");
	free(s);
	json_decref(r);
	json_decref(req);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_probe_reads_every_answer_of_each_device, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(
	        test_probe_of_a_hanging_tool_is_incomplete_within_the_deadline, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_probe_of_an_unknown_format_quotes_the_tool, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_probe_without_the_tool_says_so_per_device, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_probe_rejects_a_request_without_devices, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_netdetect_gives_each_targets_health, setup,
	                                    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
