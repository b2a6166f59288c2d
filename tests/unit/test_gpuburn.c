/* SPDX-License-Identifier: MIT */
/* test_gpuburn.c - the pure parts of `clusterdoc gpu-burn`: the median,
 * the verdict per GPU model (collectives/gpuburn_verdict.c), the reading of
 * the node script's lines (gpuburn_parse_output) and the table's rows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "collectives/gpuburn.h"
#include "collectives/gpuburn_agent.h"
#include "report/gpuburn_render.h"
#include "report/report.h"

static json_t *gpu(int idx, const char *name, double tflops, double gbps)
{
	return json_pack("{sisssssfsf}", "index", idx, "name", name, "dtype", "bf16", "tflops",
	                 tflops, "gbps", gbps);
}

/* An answering node: {"host", "result": {"python", "torch", "count", "gpus"}}. */
static json_t *node(const char *host, json_t *gpus_take)
{
	return json_pack("{sss{sssssIso}}", "host", host, "result", "python", "/usr/bin/python3",
	                 "torch", "2.5.1", "count", (json_int_t)json_array_size(gpus_take), "gpus",
	                 gpus_take);
}

static json_t *rep_gpu(const json_t *rep, size_t n, size_t g)
{
	return json_array_get(
	    json_object_get(json_array_get(json_object_get(rep, "nodes"), n), "gpus"), g);
}

static json_int_t summary(const json_t *rep, const char *key)
{
	return json_integer_value(json_object_get(json_object_get(rep, "summary"), key));
}

static void the_median_of_an_odd_count_is_the_middle_and_of_an_even_the_mean_of_two(void **s)
{
	double odd[] = {5, 1, 3}, even[] = {4, 1, 3, 2};

	assert_true(gpuburn_median(odd, 3) == 3);
	assert_true(gpuburn_median(even, 4) == 2.5);
	assert_true(gpuburn_median(NULL, 0) == 0);
}

static void a_gpu_more_than_slow_pct_below_its_models_median_is_named_gpu_slow(void **s)
{
	json_t *nodes = json_pack("[oo]",
	                          node("node1", json_pack("[oo]", gpu(0, "NVIDIA H200", 500, 3000),
	                                                  gpu(1, "NVIDIA H200", 440, 3000))),
	                          node("node2", json_pack("[oo]", gpu(0, "NVIDIA H200", 500, 3000),
	                                                  gpu(1, "NVIDIA H200", 500, 2000))));
	json_t *rep = gpuburn_verdict(nodes, 10, 10), *f;

	/* median 500 TFLOP/s and 3000 GB/s: 440 is 88 %, 2000 is 66.7 % */
	assert_int_equal(json_array_size(json_object_get(rep, "findings")), 2);
	f = json_array_get(json_object_get(rep, "findings"), 0);
	assert_string_equal(json_string_value(json_object_get(f, "id")), "gpu-slow");
	assert_string_equal(json_string_value(json_object_get(f, "key")), "node1/gpu1");
	assert_string_equal(json_string_value(json_object_get(f, "node")), "node1");
	assert_int_equal(json_integer_value(json_object_get(f, "gpu")), 1);
	assert_string_equal(json_string_value(json_object_get(f, "message")),
	                    "GPU 1 of node1 (NVIDIA H200) is more than 10 % below the median of "
	                    "its model: 88.0 % of its TFLOP/s, 100.0 % of its GB/s");
	f = json_array_get(json_object_get(rep, "findings"), 1);
	assert_string_equal(json_string_value(json_object_get(f, "key")), "node2/gpu1");
	assert_true(json_is_true(json_object_get(rep_gpu(rep, 0, 1), "slow")));
	assert_true(json_is_false(json_object_get(rep_gpu(rep, 0, 0), "slow")));
	assert_true(json_number_value(json_object_get(rep_gpu(rep, 0, 1), "tflops_pct")) == 88.0);
	assert_int_equal(summary(rep, "slow"), 2);
	assert_int_equal(json_integer_value(json_object_get(rep, "exit")), 1);
	json_decref(rep);
	json_decref(nodes);
}

static void a_gpu_exactly_slow_pct_below_the_median_is_not_slow(void **s)
{
	json_t *nodes =
	    json_pack("[o]", node("n1", json_pack("[ooo]", gpu(0, "H", 100, 100),
	                                          gpu(1, "H", 100, 100), gpu(2, "H", 90, 90))));
	json_t *rep = gpuburn_verdict(nodes, 10, 10);

	assert_int_equal(json_array_size(json_object_get(rep, "findings")), 0);
	assert_int_equal(json_integer_value(json_object_get(rep, "exit")), 0);
	json_decref(rep);
	json_decref(nodes);
}

static void gpus_are_compared_only_with_their_own_model(void **s)
{
	json_t *nodes = json_pack(
	    "[oo]",
	    node("n1", json_pack("[oo]", gpu(0, "H200", 500, 3000), gpu(1, "H200", 500, 3000))),
	    node("n2", json_pack("[oo]", gpu(0, "A100", 200, 1500), gpu(1, "A100", 200, 1500))));
	json_t *rep = gpuburn_verdict(nodes, 10, 10), *m;

	assert_int_equal(json_array_size(json_object_get(rep, "findings")), 0);
	assert_int_equal(json_array_size(json_object_get(rep, "models")), 2);
	m = json_array_get(json_object_get(rep, "models"), 1);
	assert_string_equal(json_string_value(json_object_get(m, "name")), "A100");
	assert_int_equal(json_integer_value(json_object_get(m, "gpus")), 2);
	assert_true(json_number_value(json_object_get(m, "tflops_median")) == 200);
	assert_true(json_number_value(json_object_get(rep_gpu(rep, 1, 0), "tflops_pct")) == 100);
	json_decref(rep);
	json_decref(nodes);
}

static void a_node_without_cuda_is_named_and_the_others_results_stand(void **s)
{
	json_t *nodes = json_pack(
	    "[oo{ss}]", node("n1", json_pack("[oo]", gpu(0, "H", 100, 10), gpu(1, "H", 100, 10))),
	    json_pack("{sss{ssssss}}", "host", "n2", "result", "python", "/usr/bin/python3",
	              "error_code", "no-cuda", "error", "torch 1.13.0a0 has no CUDA"),
	    "host", "n3");
	json_t *rep, *n2, *n3;

	json_object_set_new(json_array_get(nodes, 2), "error", json_string("n3: refused"));
	rep = gpuburn_verdict(nodes, 10, 10);
	n2 = json_array_get(json_object_get(rep, "nodes"), 1);
	n3 = json_array_get(json_object_get(rep, "nodes"), 2);
	assert_string_equal(json_string_value(json_object_get(n2, "error_code")), "no-cuda");
	assert_string_equal(json_string_value(json_object_get(n2, "python")), "/usr/bin/python3");
	assert_string_equal(json_string_value(json_object_get(n3, "error_code")), "unreachable");
	assert_string_equal(json_string_value(json_object_get(n3, "error")), "n3: refused");
	assert_int_equal(summary(rep, "measured"), 2);
	assert_int_equal(summary(rep, "nodes_failed"), 2);
	assert_int_equal(json_integer_value(json_object_get(rep, "exit")), 1);
	json_decref(rep);
	json_decref(nodes);
}

static void no_gpu_measured_anywhere_is_exit_2(void **s)
{
	json_t *nodes = json_pack("[{ssss}]", "host", "n1", "error", "n1: refused");
	json_t *rep = gpuburn_verdict(nodes, 10, 10);

	assert_int_equal(json_integer_value(json_object_get(rep, "exit")), 2);
	assert_int_equal(summary(rep, "measured"), 0);
	json_decref(rep);
	json_decref(nodes);
}

static void a_failed_gpu_counts_failed_and_stays_out_of_the_median(void **s)
{
	json_t *nodes = json_pack(
	    "[o]", node("n1", json_pack("[oo{siss}]", gpu(0, "H", 100, 10), gpu(1, "H", 100, 10),
	                                "index", 2, "error", "RuntimeError: CUDA error")));
	json_t *rep = gpuburn_verdict(nodes, 10, 10);

	assert_int_equal(summary(rep, "failed"), 1);
	assert_int_equal(summary(rep, "measured"), 2);
	assert_true(
	    json_number_value(json_object_get(json_array_get(json_object_get(rep, "models"), 0),
	                                      "tflops_median")) == 100);
	assert_null(json_object_get(rep_gpu(rep, 0, 2), "slow"));
	assert_int_equal(json_integer_value(json_object_get(rep, "exit")), 1);
	json_decref(rep);
	json_decref(nodes);
}

static void the_scripts_lines_give_each_gpu_and_a_gpu_without_a_line_its_missing_error(void **s)
{
	const char out[] =
	    "{\"python\": \"/p\", \"torch\": \"2.5\", \"cuda\": \"12.4\", \"count\": 3}\n"
	    "not json\n"
	    "{\"gpu\": {\"index\": 2, \"tflops\": 1.5, \"gbps\": 2.5}}\n"
	    "{\"gpu\": {\"index\": 0, \"error\": \"RuntimeError: x\"}}\n"
	    "{\"gpu\": {\"index\": 99}}\n";
	json_t *r = gpuburn_parse_output(out, strlen(out), "no result"), *g;

	assert_non_null(r);
	assert_string_equal(json_string_value(json_object_get(r, "python")), "/p");
	assert_int_equal(json_array_size(json_object_get(r, "gpus")), 3);
	g = json_array_get(json_object_get(r, "gpus"), 0);
	assert_string_equal(json_string_value(json_object_get(g, "error")), "RuntimeError: x");
	g = json_array_get(json_object_get(r, "gpus"), 1);
	assert_int_equal(json_integer_value(json_object_get(g, "index")), 1);
	assert_string_equal(json_string_value(json_object_get(g, "error")), "no result");
	g = json_array_get(json_object_get(r, "gpus"), 2);
	assert_true(json_number_value(json_object_get(g, "tflops")) == 1.5);
	json_decref(r);
}

static void a_header_with_an_error_code_is_the_answer_and_no_header_is_null(void **s)
{
	const char out[] = "{\"python\": \"/p\", \"error_code\": \"no-torch\", \"error\": \"x\"}\n";
	json_t *r = gpuburn_parse_output(out, strlen(out), "m");

	assert_string_equal(json_string_value(json_object_get(r, "error_code")), "no-torch");
	assert_null(json_object_get(r, "gpus"));
	json_decref(r);
	assert_null(gpuburn_parse_output("Traceback\n", 10, "m"));
	assert_null(gpuburn_parse_output("{\"done\": true}\n", 15, "m"));
}

static void the_table_has_a_row_per_gpu_saying_slow_and_a_row_per_failed_node(void **s)
{
	json_t *nodes = json_pack("[o{sss{ssssss}}]",
	                          node("node1", json_pack("[oo]", gpu(0, "NVIDIA H200", 500, 3000),
	                                                  gpu(1, "NVIDIA H200", 250, 3000))),
	                          "host", "node2", "result", "python", "/usr/bin/python3",
	                          "error_code", "no-cuda", "error", "torch 1.13.0a0 has no CUDA");
	json_t *rep = gpuburn_verdict(nodes, 10, 10);
	char **lines;
	size_t n = gpuburn_render_lines(rep, &lines);

	assert_true(n >= 7);
	assert_string_equal(lines[3],
	                    "       node1    0  NVIDIA H200              bf16     500.00  "
	                    "133.3%   3000.00  100.0%  ok");
	assert_string_equal(lines[4],
	                    "       node1    1  NVIDIA H200              bf16     250.00  "
	                    " 66.7%   3000.00  100.0%  SLOW");
	assert_string_equal(lines[5], "       node2    -  -                        -             "
	                              "-       -         -       -  no-cuda: torch 1.13.0a0 has no "
	                              "CUDA (/usr/bin/python3)");
	assert_string_equal(lines[n - 1], "# GPUs: 2 measured, 0 failed, 1 slow; nodes: 2, 1 "
	                                  "without a result");
	assert_null(lines[n]);
	gpuburn_render_free(lines);
	json_decref(rep);
	json_decref(nodes);
}

static void the_metrics_give_a_failed_gpu_only_its_gpu_ok_0(void **s)
{
	json_t *nodes = json_pack(
	    "[o]", node("n1", json_pack("[o{sissss}]", gpu(0, "H", 123.5, 10), "index", 1, "name",
	                                "H", "error", "RuntimeError: CUDA error")));
	json_t *rep = gpuburn_verdict(nodes, 10, 10);
	struct report_run run = {.command = "gpuburn", .exit_status = 1};
	struct prom *p = report_gpuburn_prom(rep, &run);
	struct buf b;

	buf_init(&b, 1 << 20);
	assert_int_equal(prom_render(p, &b), 0);
	assert_non_null(
	    strstr(b.data, "clusterdoc_gpuburn_gpu_ok{node=\"n1\",gpu=\"1\",model=\"H\"} 0\n"));
	assert_non_null(
	    strstr(b.data, "clusterdoc_gpuburn_gpu_ok{node=\"n1\",gpu=\"0\",model=\"H\"} 1\n"));
	assert_non_null(
	    strstr(b.data, "clusterdoc_gpuburn_tflops{node=\"n1\",gpu=\"0\",model=\"H\"} 123.5\n"));
	assert_null(strstr(b.data, "clusterdoc_gpuburn_tflops{node=\"n1\",gpu=\"1\""));
	assert_null(strstr(b.data, "clusterdoc_gpuburn_gpu_slow{node=\"n1\",gpu=\"1\""));
	assert_non_null(strstr(b.data, "clusterdoc_gpuburn_node_ok{node=\"n1\"} 1\n"));
	buf_fini(&b);
	prom_free(p);
	json_decref(rep);
	json_decref(nodes);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(
	        the_median_of_an_odd_count_is_the_middle_and_of_an_even_the_mean_of_two),
	    cmocka_unit_test(a_gpu_more_than_slow_pct_below_its_models_median_is_named_gpu_slow),
	    cmocka_unit_test(a_gpu_exactly_slow_pct_below_the_median_is_not_slow),
	    cmocka_unit_test(gpus_are_compared_only_with_their_own_model),
	    cmocka_unit_test(a_node_without_cuda_is_named_and_the_others_results_stand),
	    cmocka_unit_test(no_gpu_measured_anywhere_is_exit_2),
	    cmocka_unit_test(a_failed_gpu_counts_failed_and_stays_out_of_the_median),
	    cmocka_unit_test(
	        the_scripts_lines_give_each_gpu_and_a_gpu_without_a_line_its_missing_error),
	    cmocka_unit_test(a_header_with_an_error_code_is_the_answer_and_no_header_is_null),
	    cmocka_unit_test(the_table_has_a_row_per_gpu_saying_slow_and_a_row_per_failed_node),
	    cmocka_unit_test(the_metrics_give_a_failed_gpu_only_its_gpu_ok_0),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
