/* SPDX-License-Identifier: MIT */
/*
 * test_dcgm_parse.c - dcgm_parse on what `dcgmi diag -j` prints (DCGM's
 * dcgmi/Diag.cpp at v3.3.9 and v4.0.0; the fixtures in tests/fixtures/dcgm/,
 * README there, are what tests/fakes/dcgmi prints).
 */
#include "probes/dcgm_parse.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct dcgm_report rep;

/* dcgm_parse on a fixture; its return */
static int parse_fixture(const char *name, char *err, size_t errlen)
{
	static char buf[16384];
	char path[256];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "tests/fixtures/dcgm/%s", name);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf), f);
	assert_true(n < sizeof(buf));
	fclose(f);
	return dcgm_parse(buf, n, &rep, err, errlen);
}

static void dcgm3_a_run_of_passes_keeps_no_result_and_reads_the_root_version(void **state)
{
	char err[128];

	(void)state;
	assert_int_equal(parse_fixture("dcgm3_pass.json", err, sizeof(err)), 0);
	assert_string_equal(rep.version, "3.3.9");
	assert_int_equal(rep.tests, 9);
	assert_int_equal(rep.n, 0);
}

static void dcgm3_a_deployment_fail_reads_its_integer_gpu_and_its_warnings_text(void **state)
{
	char err[128];

	(void)state;
	assert_int_equal(parse_fixture("dcgm3_fail.json", err, sizeof(err)), 0);
	assert_string_equal(rep.version, "3.3.9");
	assert_int_equal(rep.tests, 11);
	assert_int_equal(rep.n, 2);
	assert_int_equal(rep.results[0].status, DCGM_FAIL);
	assert_int_equal(rep.results[0].gpu, 1);
	assert_string_equal(rep.results[0].test, "Page Retirement/Row Remap");
	assert_string_equal(rep.results[0].message,
	                    "GPU 1 had memory errors and row remappings are pending");
	assert_int_equal(rep.results[1].status, DCGM_FAIL);
	assert_int_equal(rep.results[1].gpu, 1);
	assert_string_equal(rep.results[1].test, "PCIe");
	assert_string_equal(rep.results[1].message,
	                    "Bandwidth of GPU 1 in direction h2d of 2.15 did not exceed minimum "
	                    "required bandwidth of 11.00.");
}

static void dcgm4_a_fail_on_a_gpu_entity_is_kept_with_the_metadata_version(void **state)
{
	char err[128];

	(void)state;
	assert_int_equal(parse_fixture("dcgm4_fail.json", err, sizeof(err)), 0);
	assert_string_equal(rep.version, "4.0.0");
	assert_int_equal(rep.tests, 4);
	assert_int_equal(rep.n, 1);
	assert_int_equal(rep.results[0].status, DCGM_FAIL);
	assert_int_equal(rep.results[0].gpu, 1);
	assert_string_equal(rep.results[0].test, "memory");
	assert_string_equal(rep.results[0].message,
	                    "Detected 2 volatile double-bit ECC error(s) in GPU 1.");
}

static void dcgm4_a_cpu_entity_is_no_gpu_and_is_named_in_the_message(void **state)
{
	char err[128];

	(void)state;
	assert_int_equal(parse_fixture("dcgm4_cpu.json", err, sizeof(err)), 0);
	assert_int_equal(rep.n, 1);
	assert_int_equal(rep.results[0].status, DCGM_FAIL);
	assert_int_equal(rep.results[0].gpu, -1);
	assert_string_equal(rep.results[0].test, "cpu_eud");
	assert_string_equal(rep.results[0].message,
	                    "CPU 0: CPU EUD test failed: memory subtest reported errors.");
}

static void dcgm4_a_failing_test_summary_without_a_failing_entity_is_a_result(void **state)
{
	char err[128];

	(void)state;
	assert_int_equal(parse_fixture("dcgm4_summary.json", err, sizeof(err)), 0);
	assert_int_equal(rep.tests, 3);
	assert_int_equal(rep.n, 1);
	assert_int_equal(rep.results[0].status, DCGM_FAIL);
	assert_int_equal(rep.results[0].gpu, -1);
	assert_string_equal(rep.results[0].test, "software");
	assert_string_equal(rep.results[0].message,
	                    "Cannot open library libcuda.so.1: 'libcuda.so.1: cannot open shared "
	                    "object file: No such file or directory'");
}

static void dcgm4_a_fail_whose_warnings_are_all_monitor_is_a_warn(void **state)
{
	char err[128];

	(void)state;
	assert_int_equal(parse_fixture("dcgm4_warn.json", err, sizeof(err)), 0);
	assert_int_equal(rep.n, 1);
	assert_int_equal(rep.results[0].status, DCGM_WARN);
	assert_int_equal(rep.results[0].gpu, 0);
	assert_string_equal(rep.results[0].test, "targeted_stress");
	assert_string_equal(rep.results[0].message,
	                    "Temperature 92 of GPU 0 exceeded "
	                    "user-specified maximum allowed temperature 87");
}

static void dcgm4_a_runtime_error_is_an_error_carrying_dcgms_message(void **state)
{
	char err[512];

	(void)state;
	assert_int_equal(parse_fixture("dcgm4_runtime_error.json", err, sizeof(err)), -1);
	assert_string_equal(err, "dcgmi could not run the diagnostic: Error: Unable to complete "
	                         "diagnostic for group 2147483647. Return: (-34) The requested "
	                         "operation could not be completed because the affected resource "
	                         "is in use.");
	assert_int_equal(rep.n, 0);
}

static void a_runtime_error_over_lines_is_one_line_and_dcgm3_names_its_root(void **state)
{
	const char *s = "{\"DCGM GPU Diagnostic\":{\"version\":\"3.3.9\",\"runtime_error\":"
	                "\"Error: Unable to complete diagnostic for group 2. Return: (-40) \\n"
	                "Timeout\\n\\nError: Could not stop the launched diagnostic.\\n\"}}";
	char err[256];

	(void)state;
	assert_int_equal(dcgm_parse(s, strlen(s), &rep, err, sizeof(err)), -1);
	assert_string_equal(err, "dcgmi could not run the diagnostic: Error: Unable to complete "
	                         "diagnostic for group 2. Return: (-40) Timeout Error: Could not "
	                         "stop the launched diagnostic.");
}

static void severities_grade_a_fail(void **state)
{
	/* one result per case: MONITOR and CONFIG -> warn; CONFIG with ISOLATE,
	 * RESET, TRIAGE, UNKNOWN, NONE, no severity, no warning -> fail */
	const char *s =
	    "{\"DCGM Diagnostic\":{\"test_categories\":[{\"category\":\"Hardware\",\"tests\":[{"
	    "\"name\":\"t\",\"results\":["
	    "{\"entity_group_id\":1,\"entity_id\":0,\"status\":\"Fail\",\"warnings\":["
	    "{\"warning\":\"a\",\"error_severity\":1},{\"warning\":\"b\",\"error_severity\":5}]},"
	    "{\"entity_group_id\":1,\"entity_id\":1,\"status\":\"Fail\",\"warnings\":["
	    "{\"warning\":\"c\",\"error_severity\":5},{\"warning\":\"d\",\"error_severity\":2}]},"
	    "{\"entity_group_id\":1,\"entity_id\":2,\"status\":\"Fail\",\"warnings\":["
	    "{\"warning\":\"e\",\"error_severity\":6}]},"
	    "{\"entity_group_id\":1,\"entity_id\":3,\"status\":\"Fail\",\"warnings\":["
	    "{\"warning\":\"f\",\"error_severity\":4}]},"
	    "{\"entity_group_id\":1,\"entity_id\":4,\"status\":\"Fail\",\"warnings\":["
	    "{\"warning\":\"g\",\"error_severity\":3}]},"
	    "{\"entity_group_id\":1,\"entity_id\":5,\"status\":\"Fail\",\"warnings\":["
	    "{\"warning\":\"h\",\"error_severity\":0}]},"
	    "{\"entity_group_id\":1,\"entity_id\":6,\"status\":\"Fail\",\"warnings\":["
	    "{\"warning\":\"i\"}]},"
	    "{\"entity_group_id\":1,\"entity_id\":7,\"status\":\"Fail\"},"
	    "{\"entity_group_id\":1,\"entity_id\":8,\"status\":\"Warn\"}]}]}]}}";
	static const enum dcgm_status want[] = {DCGM_WARN, DCGM_FAIL, DCGM_FAIL,
	                                        DCGM_FAIL, DCGM_FAIL, DCGM_FAIL,
	                                        DCGM_FAIL, DCGM_FAIL, DCGM_WARN};
	char err[128];

	(void)state;
	assert_int_equal(dcgm_parse(s, strlen(s), &rep, err, sizeof(err)), 0);
	assert_int_equal(rep.n, 9);
	for (size_t i = 0; i < rep.n; i++) {
		assert_int_equal(rep.results[i].gpu, (int)i);
		assert_int_equal(rep.results[i].status, want[i]);
	}
	assert_string_equal(rep.results[0].message, "a; b");
}

static void an_entity_group_id_other_than_gpu_is_never_a_gpu(void **state)
{
	const char *s =
	    "{\"DCGM Diagnostic\":{\"test_categories\":[{\"category\":\"x\",\"tests\":[{"
	    "\"name\":\"t\",\"results\":["
	    "{\"entity_group_id\":4,\"entity_group\":\"GPU_I\",\"entity_id\":0,"
	    "\"status\":\"Fail\"},"
	    "{\"entity_group_id\":3,\"entity_id\":2,\"status\":\"Fail\"},"
	    "{\"entity_group\":\"GPU\",\"entity_id\":3,\"status\":\"Fail\"}]}]}]}}";
	char err[128];

	(void)state;
	assert_int_equal(dcgm_parse(s, strlen(s), &rep, err, sizeof(err)), 0);
	assert_int_equal(rep.n, 3);
	assert_int_equal(rep.results[0].gpu, -1);
	assert_string_equal(rep.results[0].message, "GPU_I 0");
	assert_int_equal(rep.results[1].gpu, -1);
	assert_string_equal(rep.results[1].message, "entity group 3 2");
	assert_int_equal(rep.results[2].gpu, 3);
	assert_string_equal(rep.results[2].message, "");
}

static void a_failing_summary_is_not_repeated_when_an_entity_result_fails(void **state)
{
	/* v4.5 onwards, the summary's warnings hold the entity errors too */
	const char *s =
	    "{\"DCGM Diagnostic\":{\"test_categories\":[{\"category\":\"x\",\"tests\":[{"
	    "\"name\":\"t\",\"results\":[{\"entity_group_id\":1,\"entity_id\":0,"
	    "\"status\":\"Fail\",\"warnings\":[{\"warning\":\"w\",\"error_severity\":2}]}"
	    "],\"test_summary\":{\"status\":\"Fail\",\"warnings\":[{\"warning\":\"w\","
	    "\"error_severity\":2}]}}]}]}}";
	char err[128];

	(void)state;
	assert_int_equal(dcgm_parse(s, strlen(s), &rep, err, sizeof(err)), 0);
	assert_int_equal(rep.n, 1);
	assert_int_equal(rep.results[0].gpu, 0);
}

static void plain_string_warnings_are_the_message(void **state)
{
	const char *s = "{\"DCGM GPU Diagnostic\":{\"test_categories\":[{\"category\":\"Hardware\","
	                "\"tests\":[{\"name\":\"GPU Memory\",\"results\":[{\"gpu_id\":\"2\","
	                "\"status\":\"Fail\",\"warnings\":[\"one\",\"two\"]}]}]}]}}";
	char err[128];

	(void)state;
	assert_int_equal(dcgm_parse(s, strlen(s), &rep, err, sizeof(err)), 0);
	assert_int_equal(rep.n, 1);
	assert_int_equal(rep.results[0].gpu, 2);
	assert_string_equal(rep.results[0].message, "one; two");
}

static void text_without_a_document_or_the_root_is_an_error_naming_it(void **state)
{
	const char *s = "Error: Unable to connect to host engine. Host engine connection invalid/"
	                "disconnected.\n";
	const char *v4_tests = "{\"version\":\"4.2.3\",\"tests\":[]}";
	char err[128];

	(void)state;
	assert_int_equal(dcgm_parse(s, strlen(s), &rep, err, sizeof(err)), -1);
	assert_string_equal(err, "no JSON document in dcgmi's output: Error: Unable to connect to "
	                         "host engine. Host engine connection invalid/disconnected.");
	assert_int_equal(dcgm_parse("", 0, &rep, err, sizeof(err)), -1);
	assert_string_equal(err, "no JSON document in dcgmi's output");
	assert_int_equal(dcgm_parse(v4_tests, strlen(v4_tests), &rep, err, sizeof(err)), -1);
	assert_string_equal(
	    err, "dcgmi's JSON has neither \"DCGM Diagnostic\" nor \"DCGM GPU Diagnostic\"");
	assert_int_equal(dcgm_parse("{\"DCGM Diagnostic\":{}}", 22, &rep, err, sizeof(err)), -1);
	assert_string_equal(err, "dcgmi's JSON has no \"test_categories\"");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(dcgm3_a_run_of_passes_keeps_no_result_and_reads_the_root_version),
	    cmocka_unit_test(dcgm3_a_deployment_fail_reads_its_integer_gpu_and_its_warnings_text),
	    cmocka_unit_test(dcgm4_a_fail_on_a_gpu_entity_is_kept_with_the_metadata_version),
	    cmocka_unit_test(dcgm4_a_cpu_entity_is_no_gpu_and_is_named_in_the_message),
	    cmocka_unit_test(dcgm4_a_failing_test_summary_without_a_failing_entity_is_a_result),
	    cmocka_unit_test(dcgm4_a_fail_whose_warnings_are_all_monitor_is_a_warn),
	    cmocka_unit_test(dcgm4_a_runtime_error_is_an_error_carrying_dcgms_message),
	    cmocka_unit_test(a_runtime_error_over_lines_is_one_line_and_dcgm3_names_its_root),
	    cmocka_unit_test(severities_grade_a_fail),
	    cmocka_unit_test(an_entity_group_id_other_than_gpu_is_never_a_gpu),
	    cmocka_unit_test(a_failing_summary_is_not_repeated_when_an_entity_result_fails),
	    cmocka_unit_test(plain_string_warnings_are_the_message),
	    cmocka_unit_test(text_without_a_document_or_the_root_is_an_error_naming_it),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
