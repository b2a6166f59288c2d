/* SPDX-License-Identifier: MIT */
/*
 * test_dcgm_parse.c - dcgm_parse on the documented shapes of `dcgmi diag -j`
 * (DCGM's nvvs/src/JsonOutput.cpp comment; the fixtures in tests/fixtures/dcgm/
 * are what tests/fakes/dcgmi prints).
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

static size_t load(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, cap, f);
	fclose(f);
	return n;
}

static void a_fail_and_a_warn_are_kept_with_gpu_test_and_message(void **state)
{
	static char buf[8192];
	size_t n = load("tests/fixtures/dcgm/r1_fail.json", buf, sizeof(buf));
	char err[128];

	(void)state;
	assert_int_equal(dcgm_parse(buf, n, &rep, err, sizeof(err)), 0);
	assert_string_equal(rep.version, "3.3.9");
	assert_int_equal(rep.tests, 5);
	assert_int_equal(rep.n, 2);
	assert_int_equal(rep.results[0].status, DCGM_WARN);
	assert_int_equal(rep.results[0].gpu, -1);
	assert_string_equal(rep.results[0].test, "Persistence Mode");
	assert_string_equal(rep.results[0].message,
	                    "Persistence mode for GPU 1 is currently disabled.");
	assert_int_equal(rep.results[1].status, DCGM_FAIL);
	assert_int_equal(rep.results[1].gpu, 1);
	assert_string_equal(rep.results[1].test, "PCIe");
	assert_string_equal(
	    rep.results[1].message,
	    "GPU 1 host to device bandwidth 2.15 GB/s is below the minimum 11.0 GB/s.");
}

static void a_run_of_passes_keeps_no_result(void **state)
{
	static char buf[8192];
	size_t n = load("tests/fixtures/dcgm/r1_pass.json", buf, sizeof(buf));
	char err[128];

	(void)state;
	assert_int_equal(dcgm_parse(buf, n, &rep, err, sizeof(err)), 0);
	assert_int_equal(rep.tests, 2);
	assert_int_equal(rep.n, 0);
}

static void dcgm4_top_level_tests_with_entity_ids_are_read(void **state)
{
	static char buf[8192];
	size_t n = load("tests/fixtures/dcgm/r2_v4_fail.json", buf, sizeof(buf));
	char err[128];

	(void)state;
	assert_int_equal(dcgm_parse(buf, n, &rep, err, sizeof(err)), 0);
	assert_string_equal(rep.version, "4.2.3");
	assert_int_equal(rep.tests, 3);
	assert_int_equal(rep.n, 1);
	assert_int_equal(rep.results[0].gpu, 0);
	assert_string_equal(rep.results[0].test, "memory");
	assert_string_equal(rep.results[0].message, "A DBE occurred on GPU 0.");
}

static void plain_string_warnings_of_older_dcgm_are_the_message(void **state)
{
	const char *s = "{\"DCGM GPU Diagnostic\":{\"test_categories\":[{\"category\":\"Hardware\","
	                "\"tests\":[{\"name\":\"GPU Memory\",\"results\":[{\"gpu_ids\":\"2\","
	                "\"status\":\"FAIL\",\"warnings\":[\"one\",\"two\"]}]}]}]}}";
	char err[128];

	(void)state;
	assert_int_equal(dcgm_parse(s, strlen(s), &rep, err, sizeof(err)), 0);
	assert_int_equal(rep.n, 1);
	assert_int_equal(rep.results[0].gpu, 2);
	assert_string_equal(rep.results[0].message, "one; two");
}

static void text_without_a_document_is_an_error_naming_it(void **state)
{
	const char *s = "Error: unable to connect to host engine. Host engine connection invalid";
	char err[128];

	(void)state;
	assert_int_equal(dcgm_parse(s, strlen(s), &rep, err, sizeof(err)), -1);
	assert_string_equal(err, "no JSON document in dcgmi's output");
	assert_int_equal(dcgm_parse("{\"x\":1}", 7, &rep, err, sizeof(err)), -1);
	assert_string_equal(err, "dcgmi's JSON has neither \"test_categories\" nor \"tests\"");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_fail_and_a_warn_are_kept_with_gpu_test_and_message),
	    cmocka_unit_test(a_run_of_passes_keeps_no_result),
	    cmocka_unit_test(dcgm4_top_level_tests_with_entity_ids_are_read),
	    cmocka_unit_test(plain_string_warnings_of_older_dcgm_are_the_message),
	    cmocka_unit_test(text_without_a_document_is_an_error_naming_it),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
