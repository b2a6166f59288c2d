/* SPDX-License-Identifier: MIT */
/*
 * test_diagnose_gpu.c - the NVIDIA GPU findings (probes/diagnose_gpu*.c) on
 * models built from facts JSON in the format of docs/protocol.md (gpus[] with
 * "health", "gpu_pci", "xid"): three nodes p, q, r of routes-clean.json (eth0
 * their data interface), two healthy GPUs each under one PCIe switch with
 * eth0; then one fault, which must land on exactly its GPU and node.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "probes/diagnose.h"
#include "report/check_render.h"
#include "report/report.h"
#include "buf.h"
#include "junit.h"
#include "prom.h"

#include <unistd.h>

#include "gpu_fixture.h"

/* ---------------------------------------------------------------- healthy */

static void
healthy_nodes_an_idle_gpu_at_a_lower_gen_and_a_node_without_gpus_have_no_finding(void **state)
{
	struct fx f;

	setup_fx(&f);
	/* sw_power_cap and applications_clocks are normal operation */
	set(health(&f, 0, 0), "throttle.reasons",
	    json_pack("[s, s]", "sw_power_cap", "applications_clocks"));
	set(health(&f, 1, 1), "pcie.gen", json_integer(1));
	set(health(&f, 1, 1), "throttle.mask", json_string("0x0000000000000001"));
	set(health(&f, 1, 1), "throttle.reasons", json_pack("[s]", "gpu_idle"));
	set(facts_of(&f, 2), "gpus", json_array());
	set(facts_of(&f, 2), "gpu_pci",
	    json_pack("{s:i, s:{}, s:{s:s}}", "nvidia_devices", 0, "paths", "nics", "eth0", ETH0));
	run(&f);
	no_gpu_findings(&f);
	assert_int_equal(f.d->nfindings, 0);
	done(&f);
}

/* ---------------------------------------------------------------- missing */

static void fewer_gpus_than_pci_devices_names_the_node_and_the_absent_address(void **state)
{
	struct fx f;
	const struct finding *x;

	setup_fx(&f);
	json_array_remove(json_object_get(facts_of(&f, 1), "gpus"), 1);
	run(&f);
	x = only(&f, "gpu-missing", 1, SEV_ERROR);
	assert_string_equal(x->evidence, "q: NVML lists 1 GPU, the PCI bus shows 2 NVIDIA display "
	                                 "controllers (not in NVML: 0000:1b:00.0)");
	done(&f);
}

static void fewer_gpus_than_expect_gpus_is_gpu_missing(void **state)
{
	struct fx f;
	const struct finding *x;

	setup_fx(&f);
	json_object_set_new(f.doc, "expect_gpus", json_integer(2));
	json_array_remove(json_object_get(facts_of(&f, 2), "gpus"), 0);
	set(facts_of(&f, 2), "gpu_pci.nvidia_devices", json_integer(1));
	json_object_del(json_object_get(json_object_get(facts_of(&f, 2), "gpu_pci"), "paths"),
	                "0000:1a:00.0");
	run(&f);
	x = only(&f, "gpu-missing", 2, SEV_ERROR);
	assert_string_equal(x->evidence, "r: NVML lists 1 GPU, --expect-gpus 2");
	done(&f);
}

static void a_gpu_nvml_lost_is_gpu_missing_on_that_gpu(void **state)
{
	struct fx f;
	const struct finding *x;

	setup_fx(&f);
	set(health(&f, 1, 1), "errors",
	    json_pack("{s:s}", "ecc", "nvmlDeviceGetTotalEccErrors: GPU is lost (NVML error 15)"));
	run(&f);
	x = only(&f, "gpu-missing", 1, SEV_ERROR);
	assert_string_equal(x->message, "GPU 1 of q is lost");
	assert_string_equal(x->evidence, "q/gpu1: NVML lost the GPU: nvmlDeviceGetTotalEccErrors: "
	                                 "GPU is lost (NVML error 15)");
	assert_int_equal(count(&f, "probe-incomplete"), 0);
	done(&f);
}

/* A query that never answered (facts_gpu_watch.h): the GPU does not
 * answer, gpu-missing, named by that query and not by the others' "not
 * asked", whatever their order. */
static void a_gpu_whose_nvml_query_never_answered_is_gpu_missing(void **state)
{
	struct fx f;
	const struct finding *x;

	setup_fx(&f);
	set(health(&f, 2, 0), "errors",
	    json_pack("{s:s, s:s}", "ecc",
	              "not asked: nvmlDeviceGetPowerUsage: no answer within 5 s", "power_w",
	              "nvmlDeviceGetPowerUsage: no answer within 5 s"));
	run(&f);
	x = only(&f, "gpu-missing", 2, SEV_ERROR);
	assert_string_equal(x->message, "GPU 0 of r does not answer");
	assert_string_equal(x->evidence, "r/gpu0: NVML does not answer for the GPU: "
	                                 "nvmlDeviceGetPowerUsage: no answer within 5 s");
	assert_int_equal(count(&f, "probe-incomplete"), 0);
	done(&f);
}

static void another_nvml_error_is_probe_incomplete_naming_the_gpu(void **state)
{
	struct fx f;
	const struct finding *x;

	setup_fx(&f);
	set(health(&f, 0, 1), "errors",
	    json_pack("{s:s}", "power", "nvmlDeviceGetPowerUsage: timed out after 2000 ms"));
	run(&f);
	x = only(&f, "probe-incomplete", 0, SEV_WARNING);
	assert_string_equal(x->evidence,
	                    "p/gpu1: GPU health power: nvmlDeviceGetPowerUsage: timed out after "
	                    "2000 ms");
	assert_int_equal(count(&f, "gpu-missing"), 0);
	done(&f);
}

/* ---------------------------------------------------------------- memory */

static void volatile_uncorrectable_ecc_is_an_error_on_its_gpu(void **state)
{
	struct fx f;
	const struct finding *x;

	setup_fx(&f);
	set(health(&f, 1, 1), "ecc.volatile.uncorrected", json_integer(2));
	set(health(&f, 1, 1), "ecc.aggregate.uncorrected", json_integer(5));
	run(&f);
	x = only(&f, "gpu-ecc-uncorrectable", 1, SEV_ERROR);
	assert_string_equal(x->message, "GPU 1 of q has uncorrectable ECC errors");
	assert_string_equal(x->evidence, "q/gpu1: uncorrectable ECC errors: 2 since the driver "
	                                 "loaded, 5 in the GPU's lifetime");
	done(&f);
}

static void a_lifetime_uncorrectable_count_alone_warns(void **state)
{
	struct fx f;

	setup_fx(&f);
	set(health(&f, 0, 0), "ecc.aggregate.uncorrected", json_integer(1));
	run(&f);
	only(&f, "gpu-ecc-uncorrectable", 0, SEV_WARNING);
	done(&f);
}

static void a_pending_row_remap_is_an_error_on_its_gpu(void **state)
{
	struct fx f;
	const struct finding *x;

	setup_fx(&f);
	set(health(&f, 2, 0), "row_remap.pending", json_true());
	set(health(&f, 2, 0), "row_remap.uncorrected", json_integer(1));
	run(&f);
	x = only(&f, "gpu-row-remap-pending", 2, SEV_ERROR);
	assert_string_equal(x->evidence, "r/gpu0: a row remap is pending (0 rows remapped for "
	                                 "correctable, 1 for uncorrectable errors)");
	assert_string_equal(x->fix, "Reset the GPU (nvidia-smi -r -i 00000000:1A:00.0, with no "
	                            "process on it) or reboot the node: the remap takes effect "
	                            "only then.");
	assert_int_equal(count(&f, "gpu-row-remap-failure"), 0);
	done(&f);
}

static void a_row_remap_failure_is_an_error_on_its_gpu(void **state)
{
	struct fx f;
	const struct finding *x;

	setup_fx(&f);
	set(health(&f, 0, 1), "row_remap.failure", json_true());
	run(&f);
	x = only(&f, "gpu-row-remap-failure", 0, SEV_ERROR);
	assert_string_equal(x->message, "GPU 1 of p could not remap a row");
	done(&f);
}

/* NVML reports no remapped rows while MIG is on: the check says it cannot
 * see them there (info), and says nothing for a GPU without MIG whose NVML
 * lacks the query. */
static void remapped_rows_unread_while_mig_is_on_are_named_unknown(void **state)
{
	struct fx f;
	const struct finding *x;

	setup_fx(&f);
	json_object_del(health(&f, 1, 0), "row_remap");
	json_array_append_new(json_object_get(health(&f, 1, 0), "unsupported"),
	                      json_string("row_remap"));
	set(health(&f, 1, 0), "mig", json_string("on"));
	json_object_del(health(&f, 2, 1), "row_remap");
	json_array_append_new(json_object_get(health(&f, 2, 1), "unsupported"),
	                      json_string("row_remap"));
	run(&f);
	x = only(&f, "gpu-row-remap-unknown", 1, SEV_INFO);
	assert_string_equal(x->evidence, "q/gpu0: MIG is on, and NVML reports no remapped rows "
	                                 "while it is; a pending remap or a remap failure would go "
	                                 "unseen");
	assert_int_equal(count(&f, "gpu-row-remap-unknown"), 1);
	done(&f);
}

static void a_pending_page_retirement_is_an_error_on_its_gpu(void **state)
{
	struct fx f;
	const struct finding *x;

	setup_fx(&f);
	set(health(&f, 1, 0), "retired_pages.pending", json_true());
	set(health(&f, 1, 0), "retired_pages.count", json_integer(3));
	run(&f);
	x = only(&f, "gpu-retired-pages-pending", 1, SEV_ERROR);
	assert_string_equal(x->evidence, "q/gpu0: a page retirement is pending (3 pages retired)");
	done(&f);
}

/* ---------------------------------------------------------------- Xid */

static json_t *xid_event(double t, int xid, const char *pci, const char *text)
{
	return json_pack("{s:f, s:i, s:s, s:s}", "time_s", t, "xid", xid, "pci", pci, "text", text);
}

static void xid_79_is_an_error_on_the_gpu_of_its_pci_address(void **state)
{
	struct fx f;
	const struct finding *x;

	setup_fx(&f);
	/* the line as NVIDIA's "XID Errors" document quotes it */
	json_array_append_new(
	    json_object_get(json_object_get(facts_of(&f, 1), "xid"), "events"),
	    xid_event(123.5, 79, "0000:1b:00",
	              "NVRM: Xid (PCI:0000:1b:00): 79, pid=1234, name=python, GPU has fallen "
	              "off the bus."));
	run(&f);
	x = only(&f, "gpu-xid", 1, SEV_ERROR);
	assert_string_equal(x->message, "the kernel log of q has Xid errors of GPU 1");
	assert_string_equal(x->evidence,
	                    "q/gpu1: Xid 79 at 123.5 s after boot: GPU has fallen off the bus "
	                    "(ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS); NVIDIA's action "
	                    "RESTART_BM: reboot the node (power-cycle it if the GPU stays lost); "
	                    "check the riser, cable and power; \"NVRM: Xid (PCI:0000:1b:00): 79, "
	                    "pid=1234, name=python, GPU has fallen off the bus.\"");
	done(&f);
}

static void repeated_xid_13_warns_once_with_its_count(void **state)
{
	struct fx f;
	const struct finding *x;
	json_t *ev;

	setup_fx(&f);
	ev = json_object_get(json_object_get(facts_of(&f, 0), "xid"), "events");
	for (int k = 0; k < 3; k++)
		json_array_append_new(ev, xid_event(10.0 + k, 13, "0000:1a:00",
		                                    "NVRM: Xid (PCI:0000:1a:00): 13, pid=99, "
		                                    "Graphics SM Warp Exception"));
	run(&f);
	x = only(&f, "gpu-xid", 0, SEV_WARNING);
	assert_non_null(strstr(x->evidence, "p/gpu0: Xid 13 3 times, 10.0 s to 12.0 s after boot: "
	                                    "Graphics Engine Exception"));
	assert_non_null(strstr(x->evidence, "RESTART_APP"));
	done(&f);
}

static void an_xid_of_an_address_nvml_does_not_list_names_the_address(void **state)
{
	struct fx f;
	const struct finding *x;

	setup_fx(&f);
	json_array_append_new(
	    json_object_get(json_object_get(facts_of(&f, 2), "xid"), "events"),
	    xid_event(5, 95, "0000:3b:00", "NVRM: Xid (PCI:0000:3b:00): 95, ..."));
	run(&f);
	x = only(&f, "gpu-xid", 2, SEV_ERROR);
	assert_int_equal(strncmp(x->evidence, "r/pci 0000:3b:00: Xid 95 ", 25), 0);
	done(&f);
}

static void xid_lines_the_agent_left_out_are_said_not_guessed(void **state)
{
	struct fx f;
	const struct finding *x;

	setup_fx(&f);
	set(facts_of(&f, 0), "xid.events_dropped", json_integer(44));
	run(&f);
	x = only(&f, "gpu-xid", 0, SEV_WARNING);
	assert_string_equal(x->evidence, "p: 44 older Xid lines are not in the facts (the agent "
	                                 "keeps the newest)");
	done(&f);
}

static void an_unknown_xid_warns_and_points_at_the_catalog(void **state)
{
	struct fx f;
	const struct finding *x;

	setup_fx(&f);
	json_array_append_new(json_object_get(json_object_get(facts_of(&f, 0), "xid"), "events"),
	                      xid_event(5, 154, "0000:1a:00", "NVRM: Xid (PCI:0000:1a:00): 154"));
	run(&f);
	x = only(&f, "gpu-xid", 0, SEV_WARNING);
	assert_non_null(strstr(x->evidence, "see NVIDIA's Xid catalog"));
	done(&f);
}

static void an_unreadable_kernel_log_is_probe_incomplete_not_clean(void **state)
{
	struct fx f;
	const struct finding *x;

	setup_fx(&f);
	set(facts_of(&f, 1), "xid",
	    json_pack("{s:n, s:b, s:s}", "source", "readable", 0, "why",
	              "/dev/kmsg: Operation not permitted; journalctl -k: no permission"));
	run(&f);
	x = only(&f, "probe-incomplete", 1, SEV_WARNING);
	assert_string_equal(x->evidence,
	                    "q: Xid errors unknown: the kernel log cannot be read: /dev/kmsg: "
	                    "Operation not permitted; journalctl -k: no permission");
	assert_int_equal(count(&f, "gpu-xid"), 0);
	done(&f);
}

/* ---------------------------------------------------------------- links, clocks */

static void a_busy_gpu_below_its_pcie_gen_is_degraded(void **state)
{
	struct fx f;
	const struct finding *x;

	setup_fx(&f);
	set(health(&f, 1, 1), "pcie.gen", json_integer(3));
	set(health(&f, 1, 1), "pcie.width", json_integer(8));
	run(&f);
	x = only(&f, "gpu-pcie-degraded", 1, SEV_WARNING);
	assert_string_equal(x->evidence, "q/gpu1: PCIe link gen 3 x8, the maximum is gen 5 x16 "
	                                 "(the GPU is not idle)");
	done(&f);
}

static void an_nvlink_link_down_is_named_with_its_gpu(void **state)
{
	struct fx f;
	const struct finding *x;

	setup_fx(&f);
	set(json_array_get(json_object_get(health(&f, 0, 1), "nvlink"), 1), "up", json_false());
	run(&f);
	x = only(&f, "gpu-nvlink-down", 0, SEV_WARNING);
	assert_string_equal(x->evidence, "p/gpu1: NVLink link 1 down");
	done(&f);
}

static void a_node_without_any_nvlink_up_has_no_nvlink_finding(void **state)
{
	struct fx f;

	setup_fx(&f);
	for (size_t g = 0; g < 2; g++)
		for (size_t l = 0; l < 2; l++)
			set(json_array_get(json_object_get(health(&f, 2, g), "nvlink"), l), "up",
			    json_false());
	run(&f);
	no_gpu_findings(&f);
	done(&f);
}

static void hw_slowdown_is_throttling_with_clocks_heat_and_power(void **state)
{
	struct fx f;
	const struct finding *x;

	setup_fx(&f);
	set(health(&f, 2, 1), "throttle.mask", json_string("0x0000000000000008"));
	set(health(&f, 2, 1), "throttle.reasons", json_pack("[s]", "hw_slowdown"));
	set(health(&f, 2, 1), "clocks_mhz.sm", json_integer(900));
	run(&f);
	x = only(&f, "gpu-throttled", 2, SEV_WARNING);
	assert_string_equal(x->evidence,
	                    "r/gpu1: clocks held down by hw_slowdown (mask 0x0000000000000008); SM "
	                    "clock 900 of 1980 MHz; 40 C (slowdown at 90 C); 120 of 700 W");
	done(&f);
}

static void persistence_off_warns_naming_the_gpu(void **state)
{
	struct fx f;
	const struct finding *x;

	setup_fx(&f);
	set(health(&f, 1, 0), "persistence", json_string("off"));
	run(&f);
	x = only(&f, "gpu-persistence-off", 1, SEV_WARNING);
	assert_string_equal(x->evidence, "q/gpu0: persistence mode off");
	done(&f);
}

static void a_node_in_another_mig_mode_is_named(void **state)
{
	struct fx f;
	const struct finding *x;

	setup_fx(&f);
	set(health(&f, 2, 0), "mig", json_string("on"));
	set(health(&f, 2, 1), "mig", json_string("on"));
	run(&f);
	x = only(&f, "gpu-mig-mismatch", 2, SEV_WARNING);
	assert_string_equal(x->evidence, "p: MIG off\nq: MIG off\nr: MIG on");
	done(&f);
}

/* ---------------------------------------------------------------- reports */

/* check --json's text of f's result, captured from stdout. */
static char *json_report(const struct fx *f)
{
	struct check_result r = {.m = f->m, .d = f->d};
	char path[] = "/tmp/test_diagnose_gpu.XXXXXX", *text;
	int fd = mkstemp(path), saved = dup(1);
	long len;
	FILE *in;

	assert_true(fd >= 0 && saved >= 0);
	fflush(stdout);
	dup2(fd, 1);
	check_print_json(&r);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	close(fd);
	in = fopen(path, "r");
	assert_non_null(in);
	fseek(in, 0, SEEK_END);
	len = ftell(in);
	rewind(in);
	text = calloc(1, (size_t)len + 1);
	assert_int_equal(fread(text, 1, (size_t)len, in), (size_t)len);
	fclose(in);
	unlink(path);
	return text;
}

static void a_gpu_finding_reaches_json_prometheus_and_junit_by_its_id(void **state)
{
	struct report_run rr = {.command = "check", .exit_status = 1};
	struct fx f;
	struct prom *p;
	struct junit *j;
	struct buf out;
	json_t *doc, *x;
	char *text;
	size_t k;
	int seen = 0;

	setup_fx(&f);
	set(health(&f, 1, 1), "row_remap.pending", json_true());
	run(&f);
	text = json_report(&f);
	doc = json_loads(text, 0, NULL);
	assert_non_null(doc);
	json_array_foreach(json_object_get(doc, "findings"), k, x)
	{
		if (strcmp(json_string_value(json_object_get(x, "id")), "gpu-row-remap-pending"))
			continue;
		seen++;
		assert_string_equal(json_string_value(json_object_get(x, "severity")), "error");
	}
	assert_int_equal(seen, 1);
	json_decref(doc);
	free(text);

	p = report_check_prom(f.m, f.d, &rr);
	buf_init(&out, 1 << 22);
	assert_int_equal(prom_render(p, &out), 0);
	assert_non_null(strstr(out.data, "clusterdoc_check_finding{node=\"q\",id=\"gpu-row-remap-"
	                                 "pending\",severity=\"error\"} 1"));
	assert_non_null(strstr(out.data, "clusterdoc_check_finding{node=\"p\",id=\"gpu-row-remap-"
	                                 "pending\",severity=\"error\"} 0"));
	buf_fini(&out);
	prom_free(p);

	j = report_check_junit(f.m, f.d, &rr);
	buf_init(&out, 1 << 22);
	assert_int_equal(junit_render(j, &out), 0);
	assert_non_null(strstr(out.data, "name=\"gpu-row-remap-pending\""));
	buf_fini(&out);
	junit_free(j);
	done(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(
	        healthy_nodes_an_idle_gpu_at_a_lower_gen_and_a_node_without_gpus_have_no_finding),
	    cmocka_unit_test(fewer_gpus_than_pci_devices_names_the_node_and_the_absent_address),
	    cmocka_unit_test(fewer_gpus_than_expect_gpus_is_gpu_missing),
	    cmocka_unit_test(a_gpu_nvml_lost_is_gpu_missing_on_that_gpu),
	    cmocka_unit_test(a_gpu_whose_nvml_query_never_answered_is_gpu_missing),
	    cmocka_unit_test(another_nvml_error_is_probe_incomplete_naming_the_gpu),
	    cmocka_unit_test(volatile_uncorrectable_ecc_is_an_error_on_its_gpu),
	    cmocka_unit_test(a_lifetime_uncorrectable_count_alone_warns),
	    cmocka_unit_test(a_pending_row_remap_is_an_error_on_its_gpu),
	    cmocka_unit_test(a_row_remap_failure_is_an_error_on_its_gpu),
	    cmocka_unit_test(remapped_rows_unread_while_mig_is_on_are_named_unknown),
	    cmocka_unit_test(a_pending_page_retirement_is_an_error_on_its_gpu),
	    cmocka_unit_test(xid_79_is_an_error_on_the_gpu_of_its_pci_address),
	    cmocka_unit_test(repeated_xid_13_warns_once_with_its_count),
	    cmocka_unit_test(an_xid_of_an_address_nvml_does_not_list_names_the_address),
	    cmocka_unit_test(xid_lines_the_agent_left_out_are_said_not_guessed),
	    cmocka_unit_test(an_unknown_xid_warns_and_points_at_the_catalog),
	    cmocka_unit_test(an_unreadable_kernel_log_is_probe_incomplete_not_clean),
	    cmocka_unit_test(a_busy_gpu_below_its_pcie_gen_is_degraded),
	    cmocka_unit_test(an_nvlink_link_down_is_named_with_its_gpu),
	    cmocka_unit_test(a_node_without_any_nvlink_up_has_no_nvlink_finding),
	    cmocka_unit_test(hw_slowdown_is_throttling_with_clocks_heat_and_power),
	    cmocka_unit_test(persistence_off_warns_naming_the_gpu),
	    cmocka_unit_test(a_node_in_another_mig_mode_is_named),
	    cmocka_unit_test(a_gpu_finding_reaches_json_prometheus_and_junit_by_its_id),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
