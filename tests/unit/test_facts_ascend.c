/* SPDX-License-Identifier: MIT */
/*
 * test_facts_ascend.c - the Ascend facts' parsers (probes/facts_ascend.h) on
 * the tools' documented output (the layouts tests/fakes/npu-smi and
 * tests/fakes/hccn_tool replay, sources cited there), and the collection
 * against the stand-ins: absent, healthy, hanging and garbled.
 */
#include "probes/facts_ascend.h"
#include "cd.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* npu-smi 23.0.x on an Atlas 800T A2 (910B), two of its eight NPUs. */
static const char smi_910b[] = "+------------------------------------------------------------------"
                               "------------------------------+\n"
                               "| npu-smi 23.0.3                   Version: 23.0.3                 "
                               "                              |\n"
                               "+---------------------------+---------------+----------------------"
                               "------------------------------+\n"
                               "| NPU   Name                | Health        | Power(W)    Temp(C)  "
                               "         Hugepages-Usage(page)|\n"
                               "| Chip                      | Bus-Id        | AICore(%)   "
                               "Memory-Usage(MB)  HBM-Usage(MB)        |\n"
                               "+===========================+===============+======================"
                               "==============================+\n"
                               "| 0     910B3               | OK            | 93.6        40       "
                               "         0    / 0             |\n"
                               "| 0                         | 0000:C1:00.0  | 0           0    / 0 "
                               "         3402 / 65536         |\n"
                               "+===========================+===============+======================"
                               "==============================+\n"
                               "| 1     910B3               | Warning       | 91.0        41       "
                               "         0    / 0             |\n"
                               "| 0                         | 0000:C2:00.0  | 0           0    / 0 "
                               "         3402 / 65536         |\n"
                               "+===========================+===============+======================"
                               "==============================+\n"
                               "+---------------------------+---------------+----------------------"
                               "------------------------------+\n"
                               "| NPU     Chip              | Process id    | Process name         "
                               "    | Process memory(MB)      |\n"
                               "+===========================+===============+======================"
                               "==============================+\n"
                               "| No running processes found in NPU 0                              "
                               "                              |\n"
                               "+===========================+===============+======================"
                               "==============================+\n";

/* The older 310P layout (ModelZoo READMEs): chip and device on the second line. */
static const char smi_310p[] = "+-------------------+-----------------+----------------------------"
                               "--------------------------+\n"
                               "| NPU     Name      | Health          | Power(W)     Temp(C)       "
                               "    Hugepages-Usage(page) |\n"
                               "| Chip    Device    | Bus-Id          | AICore(%)    "
                               "Memory-Usage(MB)                        |\n"
                               "+===================+=================+============================"
                               "==========================+\n"
                               "| 0       310P3     | OK              | 15.8         42            "
                               "    0    / 0              |\n"
                               "| 0       0         | 0000:82:00.0    | 0            1074 / 21534  "
                               "                          |\n"
                               "+===================+=================+============================"
                               "==========================+\n";

static void test_npu_smi_910b_gives_each_npu_and_the_driver_version(void **state)
{
	struct ascend_smi s;
	char err[CD_ERRLEN];

	assert_int_equal(ascend_parse_npu_smi(smi_910b, strlen(smi_910b), &s, err, sizeof(err)), 0);
	assert_string_equal(s.version, "23.0.3");
	assert_int_equal(s.n, 2);
	assert_int_equal(s.npu[1].id, 1);
	assert_string_equal(s.npu[0].name, "910B3");
	assert_string_equal(s.npu[1].health, "Warning");
	assert_string_equal(s.npu[1].bus_id, "0000:C2:00.0");
}

static void test_npu_smi_310p_layout_without_banner(void **state)
{
	struct ascend_smi s;
	char err[CD_ERRLEN];

	assert_int_equal(ascend_parse_npu_smi(smi_310p, strlen(smi_310p), &s, err, sizeof(err)), 0);
	assert_string_equal(s.version, "");
	assert_int_equal(s.n, 1);
	assert_string_equal(s.npu[0].name, "310P3");
	assert_string_equal(s.npu[0].bus_id, "0000:82:00.0");
}

static void test_npu_smi_unknown_format_is_a_parse_error(void **state)
{
	static const char garbage[] = "dcmi model initialized failed, because the device is used. "
	                              "ret is -8020\n";
	struct ascend_smi s;
	char err[CD_ERRLEN];

	assert_int_equal(ascend_parse_npu_smi(garbage, strlen(garbage), &s, err, sizeof(err)),
	                 CD_ERR_PARSE);
	assert_string_equal(err, "npu-smi printed no device table (a format clusterdoc does not "
	                         "know)");
}

static void test_hccn_ip_gives_address_and_mask(void **state)
{
	static const char out[] = "ipaddr:192.168.100.101\nnetmask:255.255.255.0\n";
	char a[16], m[16];

	assert_int_equal(ascend_parse_ip(out, strlen(out), a, m), 0);
	assert_string_equal(a, "192.168.100.101");
	assert_string_equal(m, "255.255.255.0");
}

static void test_hccn_ip_empty_is_notfound_and_garbage_a_parse_error(void **state)
{
	static const char empty[] = "ipaddr:\nnetmask:\n";
	static const char bad[] = "ipaddr:192.168.1\nnetmask:255.255.255.0\n";
	char a[16], m[16];

	assert_int_equal(ascend_parse_ip(empty, strlen(empty), a, m), CD_ERR_NOTFOUND);
	assert_int_equal(ascend_parse_ip(bad, strlen(bad), a, m), CD_ERR_PARSE);
	assert_int_equal(ascend_parse_ip("Invalid command", 15, a, m), CD_ERR_PARSE);
}

static void test_hccn_link_and_net_health_values(void **state)
{
	static const char link[] = "link status: DOWN\n";
	static const char health[] = "net health status: Receive timeout\n";
	char v[32];

	assert_int_equal(ascend_parse_labelled(link, strlen(link), "link status", v, sizeof(v)), 0);
	assert_string_equal(v, "DOWN");
	assert_int_equal(
	    ascend_parse_labelled(health, strlen(health), "net health status", v, sizeof(v)), 0);
	assert_string_equal(v, "Receive timeout");
	assert_int_equal(
	    ascend_parse_labelled(link, strlen(link), "net health status", v, sizeof(v)),
	    CD_ERR_NOTFOUND);
}

static void test_hccn_tls_switch(void **state)
{
	static const char out[] =
	    "dev_id:3, tls switch[0](0:disable, 1:enable), tls preconfigured[1](0:non-preset, "
	    "1:preset), tls alarm time threshold[60]days\n";
	int sw = -1;

	assert_int_equal(ascend_parse_tls(out, strlen(out), &sw), 0);
	assert_int_equal(sw, 0);
	assert_int_equal(ascend_parse_tls("tls switch[7]", 13, &sw), CD_ERR_PARSE);
	assert_int_equal(ascend_parse_tls("tls switch[1", 12, &sw), CD_ERR_PARSE);
}

static void test_hccn_lldp_port_and_system(void **state)
{
	static const char out[] = "Chassis ID TLV\n\tMAC: 28:41:c6:00:10:01\n"
	                          "Port ID TLV\n\tIfname: 100GE1/0/3\n"
	                          "Time to Live TLV\n\t121\n"
	                          "System Name TLV\n\tleaf-switch-1\n"
	                          "End of LLDPDU TLV\n";
	char port[32], sys[32];

	assert_int_equal(ascend_parse_lldp(out, strlen(out), port, sizeof(port), sys, sizeof(sys)),
	                 0);
	assert_string_equal(port, "100GE1/0/3");
	assert_string_equal(sys, "leaf-switch-1");
	assert_int_equal(ascend_parse_lldp("nothing", 7, port, sizeof(port), sys, sizeof(sys)),
	                 CD_ERR_PARSE);
}

static void test_install_info_and_version_info_values(void **state)
{
	static const char info[] = "package_name=Ascend-cann-toolkit\nversion=7.0.0\n"
	                           "innerversion=V100R001C15SPC001B245\narch=x86_64\n";
	static const char drv[] = "Version=23.0.3\nascendhal_version=7.35.19\n";
	char v[64];

	assert_int_equal(ascend_parse_keyval(info, strlen(info), "version", v, sizeof(v)), 0);
	assert_string_equal(v, "7.0.0");
	assert_int_equal(ascend_parse_keyval(drv, strlen(drv), "Version", v, sizeof(v)), 0);
	assert_string_equal(v, "23.0.3");
	assert_int_equal(ascend_parse_keyval(drv, strlen(drv), "firmware", v, sizeof(v)),
	                 CD_ERR_NOTFOUND);
}

static void test_hccn_conf_groups_keys_by_device(void **state)
{
	static const char conf[] = "address_1=192.168.101.101\nnetmask_1=255.255.255.0\n"
	                           "address_0=192.168.100.101\nnetmask_0=255.255.255.0\n"
	                           "netdetect_0=192.168.100.1\n# comment\nbogus=1\n";
	json_t *a = ascend_parse_hccn_conf(conf, strlen(conf));
	char *s = json_dumps(a, JSON_COMPACT);

	assert_string_equal(s, "[{\"device\":0,\"address\":\"192.168.100.101\",\"netmask\":"
	                       "\"255.255.255.0\",\"netdetect\":\"192.168.100.1\"},{\"device\":1,"
	                       "\"address\":\"192.168.101.101\",\"netmask\":\"255.255.255.0\"}]");
	free(s);
	json_decref(a);
}

static void test_torch_npu_version_py(void **state)
{
	static const char py[] = "# generated\n__version__ = '2.1.0.post3'\ngit_version = 'abc'\n";
	char v[32];

	assert_int_equal(ascend_parse_py_version(py, strlen(py), v, sizeof(v)), 0);
	assert_string_equal(v, "2.1.0.post3");
	assert_int_equal(ascend_parse_py_version("x = 1\n", 6, v, sizeof(v)), CD_ERR_NOTFOUND);
}

static void test_env_keeps_hccl_and_ascend_variables_only(void **state)
{
	char *envp[] = {"HCCL_IF_IP=10.0.0.1",
	                "ASCEND_RT_VISIBLE_DEVICES=0,1",
	                "NCCL_DEBUG=INFO",
	                "HCCL_IF_IP=later",
	                "HCCLX",
	                NULL};
	json_t *e = facts_ascend_env(envp);
	char *s = json_dumps(e, JSON_COMPACT | JSON_SORT_KEYS);

	assert_string_equal(s,
	                    "{\"ASCEND_RT_VISIBLE_DEVICES\":\"0,1\",\"HCCL_IF_IP\":\"10.0.0.1\"}");
	free(s);
	json_decref(e);
}

/* tests/fakes as an absolute path, then the system's (bash, sleep): the
 * unit tests run from the top of the tree. */
static const char *fakes_path(void)
{
	static char path[PATH_MAX + 64];
	char cwd[PATH_MAX];

	if (!getcwd(cwd, sizeof(cwd)))
		return "/nonexistent";
	snprintf(path, sizeof(path), "%s/tests/fakes:/usr/bin:/bin", cwd);
	return path;
}

#define CD_TEST_FAKES fakes_path()

/* The collection with a PATH holding the stand-ins (or nothing). */
static json_t *collect_with(const char *path_dir, const char *scenario, json_t **errors)
{
	char *old = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
	json_t *facts = json_object();
	char *envp[] = {NULL};

	*errors = json_object();
	setenv("PATH", path_dir, 1);
	setenv("CLUSTERDOC_ASCEND_ROOT", "/nonexistent/ascend", 1);
	if (scenario)
		setenv("CD_FAKE_ASCEND", scenario, 1);
	facts_ascend_collect(facts, *errors, NULL, NULL, envp);
	if (old)
		setenv("PATH", old, 1);
	free(old);
	unsetenv("CD_FAKE_ASCEND");
	unsetenv("CLUSTERDOC_ASCEND_ROOT");
	return facts;
}

static void write_scenario(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_collect_without_ascend_gives_no_npus_and_no_error(void **state)
{
	json_t *errors, *f = collect_with("/nonexistent", NULL, &errors);

	assert_int_equal(json_array_size(json_object_get(f, "npus")), 0);
	assert_true(json_is_array(json_object_get(f, "npus")));
	assert_true(json_is_null(json_object_get(f, "ascend")));
	assert_int_equal(json_object_size(errors), 0);
	json_decref(f);
	json_decref(errors);
}

static void test_collect_with_the_stand_in_lists_eight_npus(void **state)
{
	char sc[] = "/tmp/cd-test-ascend-XXXXXX";
	json_t *errors, *f;
	int fd = mkstemp(sc);

	assert_true(fd >= 0);
	close(fd);
	write_scenario(sc, "npus=8\nhealth.3=Alarm\n");
	f = collect_with(CD_TEST_FAKES, sc, &errors);
	assert_int_equal(json_array_size(json_object_get(f, "npus")), 8);
	assert_string_equal(json_string_value(json_object_get(
	                        json_array_get(json_object_get(f, "npus"), 3), "health")),
	                    "Alarm");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(f, "ascend"), "driver")), "23.0.3");
	assert_int_equal(json_object_size(errors), 0);
	json_decref(f);
	json_decref(errors);
	unlink(sc);
}

static void test_collect_with_a_garbling_tool_is_incomplete_and_quotes_it(void **state)
{
	char sc[] = "/tmp/cd-test-ascend-XXXXXX";
	json_t *errors, *f;
	int fd = mkstemp(sc);

	assert_true(fd >= 0);
	close(fd);
	write_scenario(sc, "mode=garbage\n");
	f = collect_with(CD_TEST_FAKES, sc, &errors);
	assert_true(json_is_null(json_object_get(f, "npus")));
	assert_string_equal(json_string_value(json_object_get(errors, "npus")),
	                    "the NPU probe is incomplete: npu-smi printed no device table (a "
	                    "format clusterdoc does not know): \"dcmi model initialized failed, "
	                    "because the device is used. ret is -8020\"");
	json_decref(f);
	json_decref(errors);
	unlink(sc);
}

static void test_collect_with_a_hanging_tool_stops_at_the_deadline(void **state)
{
	char sc[] = "/tmp/cd-test-ascend-XXXXXX";
	json_t *errors, *f;
	int64_t t0;
	int fd = mkstemp(sc);

	assert_true(fd >= 0);
	close(fd);
	write_scenario(sc, "mode=hang\n");
	t0 = cd_now_ms();
	f = collect_with(CD_TEST_FAKES, sc, &errors);
	assert_true(cd_now_ms() - t0 < FACTS_ASCEND_TOOL_MS + 2000);
	assert_true(json_is_null(json_object_get(f, "npus")));
	assert_non_null(strstr(json_string_value(json_object_get(errors, "npus")),
	                       "the NPU probe is incomplete: npu-smi info: "));
	json_decref(f);
	json_decref(errors);
	unlink(sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_npu_smi_910b_gives_each_npu_and_the_driver_version),
	    cmocka_unit_test(test_npu_smi_310p_layout_without_banner),
	    cmocka_unit_test(test_npu_smi_unknown_format_is_a_parse_error),
	    cmocka_unit_test(test_hccn_ip_gives_address_and_mask),
	    cmocka_unit_test(test_hccn_ip_empty_is_notfound_and_garbage_a_parse_error),
	    cmocka_unit_test(test_hccn_link_and_net_health_values),
	    cmocka_unit_test(test_hccn_tls_switch),
	    cmocka_unit_test(test_hccn_lldp_port_and_system),
	    cmocka_unit_test(test_install_info_and_version_info_values),
	    cmocka_unit_test(test_hccn_conf_groups_keys_by_device),
	    cmocka_unit_test(test_torch_npu_version_py),
	    cmocka_unit_test(test_env_keeps_hccl_and_ascend_variables_only),
	    cmocka_unit_test(test_collect_without_ascend_gives_no_npus_and_no_error),
	    cmocka_unit_test(test_collect_with_the_stand_in_lists_eight_npus),
	    cmocka_unit_test(test_collect_with_a_garbling_tool_is_incomplete_and_quotes_it),
	    cmocka_unit_test(test_collect_with_a_hanging_tool_stops_at_the_deadline),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
