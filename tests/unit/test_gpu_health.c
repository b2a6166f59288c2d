/* SPDX-License-Identifier: MIT */
/*
 * test_gpu_health.c - the GPU health facts (issue 35): the Xid parser on the
 * driver's documented lines, each health key through the NVML stand-in
 * (tests/fakes/fake_nvml*.c, a scenario per test), the bad input named per
 * GPU while the other GPUs go on, the NVIDIA PCI devices of a sysfs tree,
 * and the kernel log's sources.
 */
#include "probes/facts_gpu.h"
#include "probes/facts_gpu_health.h"
#include "probes/facts_gpu_summary.h"
#include "probes/xid_parse.h"
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
#include <time.h>
#include <unistd.h>

/* Xid lines as NVIDIA's "XID Errors" document (docs.nvidia.com/deploy/
 * xid-errors) and the driver write them. */
static const char xid79[] =
    "NVRM: Xid (PCI:0000:18:00): 79, pid=1234, name=python, GPU has fallen off the bus.";
static const char xid13_old[] = "NVRM: Xid (0000:03:00): 13, 0003 00000000 0000c1c0 00001b0c "
                                "1000f010 00000000";
static const char xid94[] = "NVRM: Xid (PCI:0000:3b:00): 94, pid=2264, name=python, "
                            "Contained: SM (0x1). RST: No, D-RST: No";

/* /dev/kmsg records (Documentation/ABI/testing/dev-kmsg), one Xid with its
 * continuation lines among other messages. */
static const char kmsg[] =
    "6,1201,4012345678,-;mlx5_core 0000:5e:00.0: Port module event: module 0, Cable plugged\n"
    "4,1202,5123456789,-;NVRM: Xid (PCI:0000:18:00): 79, pid=1234, name=python, GPU has fallen "
    "off the bus.\n"
    " SUBSYSTEM=pci\n"
    " DEVICE=+pci:0000:18:00.0\n"
    "4,1203,5200000000,-;NVRM: Xid (PCI:0000:3b:00): 94, pid=2264, name=python, Contained: SM "
    "(0x1). RST: No, D-RST: No\n";

/* `journalctl -k -b -o short-monotonic` lines. */
static const char journal[] =
    "[    0.000000] node1 kernel: Linux version 6.1.0-18-amd64\n"
    "[ 5123.456789] node1 kernel: NVRM: Xid (PCI:0000:18:00): 48, pid=77, name=python, An "
    "uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at "
    "partition 0, subpartition 0.\n";

static double num(json_t *o, const char *path)
{
	char key[64], *dot;
	json_t *v = o;
	const char *p = path;

	while (v && *p) {
		snprintf(key, sizeof(key), "%s", p);
		dot = strchr(key, '.');
		if (dot)
			*dot = '\0';
		v = json_object_get(v, key);
		p += strlen(key) + (dot ? 1 : 0);
	}
	return json_number_value(v);
}

static const char *str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "(absent)";
}

static void test_xid_line_from_nvidias_document_gives_number_pci_and_text(void **state)
{
	struct xid_event ev;

	assert_int_equal(xid_parse_text(xid79, strlen(xid79), &ev), 0);
	assert_int_equal(ev.xid, 79);
	assert_string_equal(ev.pci, "0000:18:00");
	assert_string_equal(ev.text, xid79);
	assert_int_equal(xid_parse_text(xid94, strlen(xid94), &ev), 0);
	assert_int_equal(ev.xid, 94);
	assert_string_equal(ev.pci, "0000:3b:00");
}

static void test_xid_line_of_drivers_before_r450_without_pci_prefix_parses(void **state)
{
	struct xid_event ev;

	assert_int_equal(xid_parse_text(xid13_old, strlen(xid13_old), &ev), 0);
	assert_int_equal(ev.xid, 13);
	assert_string_equal(ev.pci, "0000:03:00");
}

/* A MIG-enabled GPU's line names the GPU instance (NVIDIA's "A100 GPU
 * Memory Error Management", "User Visible Statistics", MIG enabled). */
static const char xid94_mig[] = "NVRM: Xid (PCI:0000:01:00 GPU-I:05): 94, pid=7194, Contained: "
                                "CE User Channel (0x9). RST: No, D-RST: No";

static void test_xid_line_of_a_mig_gpu_gives_its_pci_and_gpu_instance(void **state)
{
	struct xid_event ev;
	json_t *events = json_array();
	size_t dropped;
	char rec[256];

	assert_int_equal(xid_parse_text(xid94_mig, strlen(xid94_mig), &ev), 0);
	assert_int_equal(ev.xid, 94);
	assert_string_equal(ev.pci, "0000:01:00");
	assert_int_equal(ev.gpu_instance, 5);
	assert_int_equal(xid_parse_text(xid79, strlen(xid79), &ev), 0);
	assert_int_equal(ev.gpu_instance, -1);
	snprintf(rec, sizeof(rec), "4,7,9000000,-;%s\n", xid94_mig);
	assert_int_equal(xid_parse_kmsg(rec, strlen(rec), events, &dropped), 1);
	assert_int_equal(
	    json_integer_value(json_object_get(json_array_get(events, 0), "gpu_instance")), 5);
	json_decref(events);
}

static void test_xid_malformed_or_other_lines_are_not_events(void **state)
{
	static const char *const bad[] = {
	    "NVRM: Xid (PCI:zz:18:00): 79, GPU has fallen off the bus.",
	    "NVRM: Xid (PCI:0000:18:00): , no number",
	    "NVRM: Xid (PCI:0000:18:00",
	    "NVRM: Xid (PCI:0000:18:00 GPU-I:): 94, no instance number",
	    "NVRM: Xid (PCI:0000:18:00 GPU-I:05: 94, unclosed",
	    "NVRM: Xid (PCI:0000:18:00): 1234567, too long a number",
	    "NVRM: GPU at PCI:0000:18:00: GPU-1234",
	    "",
	};
	struct xid_event ev;

	for (size_t i = 0; i < CD_ARRAY_LEN(bad); i++)
		assert_int_equal(xid_parse_text(bad[i], strlen(bad[i]), &ev), CD_ERR_NOTFOUND);
}

static void test_kmsg_records_give_each_xid_with_its_time_since_boot(void **state)
{
	json_t *events = json_array(), *e;
	size_t dropped = 9;

	assert_int_equal(xid_parse_kmsg(kmsg, strlen(kmsg), events, &dropped), 2);
	assert_int_equal(dropped, 0);
	assert_int_equal(json_array_size(events), 2);
	e = json_array_get(events, 0);
	assert_true(num(e, "time_s") > 5123.456788 && num(e, "time_s") < 5123.45679);
	assert_int_equal(num(e, "xid"), 79);
	assert_string_equal(str(e, "pci"), "0000:18:00");
	assert_string_equal(str(e, "text"), xid79);
	assert_int_equal(num(json_array_get(events, 1), "xid"), 94);
	json_decref(events);
}

static void test_journal_lines_give_each_xid_with_its_time_since_boot(void **state)
{
	json_t *events = json_array(), *e;
	size_t dropped;

	assert_int_equal(xid_parse_journal(journal, strlen(journal), events, &dropped), 1);
	e = json_array_get(events, 0);
	assert_int_equal(num(e, "xid"), 48);
	assert_true(num(e, "time_s") > 5123.45 && num(e, "time_s") < 5123.46);
	assert_string_equal(str(e, "pci"), "0000:18:00");
	json_decref(events);
}

static void test_xid_keeps_the_newest_events_and_counts_the_dropped(void **state)
{
	json_t *events = json_array();
	char *log = NULL, *line;
	size_t len = 0, dropped;

	for (int i = 0; i < XID_EVENTS_MAX + 10; i++) {
		line = cd_asprintf("%s4,%d,%d000000,-;NVRM: Xid (PCI:0000:18:00): %d, pid=1, x\n",
		                   log ? log : "", i, i + 1, i % 100 + 1);
		free(log);
		log = line;
	}
	len = strlen(log);
	assert_int_equal(xid_parse_kmsg(log, len, events, &dropped), XID_EVENTS_MAX + 10);
	assert_int_equal(dropped, 10);
	assert_int_equal(json_array_size(events), XID_EVENTS_MAX);
	assert_int_equal(num(json_array_get(events, 0), "time_s"), 11);
	free(log);
	json_decref(events);
}

/* The facts of GPUs described by scenario (a file written here) through lib. */
static json_t *gpus_of(const char *lib, const char *scenario, json_t **errors)
{
	char path[64] = "/tmp/cd-gpuhealth-XXXXXX";
	int fd = mkstemp(path);
	json_t *facts = json_object();

	assert_true(fd >= 0);
	assert_int_equal(write(fd, scenario, strlen(scenario)), (ssize_t)strlen(scenario));
	close(fd);
	*errors = json_object();
	setenv("CLUSTERDOC_NVML_LIB", lib, 1);
	setenv("CLUSTERDOC_FAKE_NVML_SCENARIO", path, 1);
	setenv("CLUSTERDOC_KMSG", "/nonexistent/kmsg", 1);
	facts_gpu_collect(facts, *errors);
	unsetenv("CLUSTERDOC_NVML_LIB");
	unsetenv("CLUSTERDOC_FAKE_NVML_SCENARIO");
	unsetenv("CLUSTERDOC_KMSG");
	unlink(path);
	strcat(path, ".wedged"); /* the stand-in's "wedge" mark, when a hang left one */
	unlink(path);
	return facts;
}

static json_t *health(json_t *facts, size_t i)
{
	return json_object_get(json_array_get(json_object_get(facts, "gpus"), i), "health");
}

static void test_health_of_a_healthy_gpu_has_every_key_and_nothing_missing(void **state)
{
	json_t *errors, *facts = gpus_of(FAKE_NVML, "count 1\n", &errors), *h = health(facts, 0);

	assert_non_null(h);
	assert_string_equal(str(h, "pci_bus_id"), "00000000:18:00.0");
	assert_int_equal(num(h, "numa_node"), 0);
	assert_string_equal(str(json_object_get(h, "ecc"), "mode"), "on");
	assert_int_equal(num(h, "ecc.volatile.uncorrected"), 0);
	assert_int_equal(num(h, "ecc.aggregate.corrected"), 0);
	assert_true(json_is_false(json_object_get(json_object_get(h, "retired_pages"), "pending")));
	assert_true(json_is_false(json_object_get(json_object_get(h, "row_remap"), "failure")));
	assert_int_equal(num(h, "pcie.gen"), 5);
	assert_int_equal(num(h, "pcie.width_max"), 16);
	assert_int_equal(json_array_size(json_object_get(h, "nvlink")), 18);
	assert_int_equal(num(h, "clocks_mhz.sm_max"), 1980);
	assert_string_equal(str(json_object_get(h, "throttle"), "mask"), "0x0000000000000001");
	assert_int_equal(num(h, "temperature_c"), 35);
	assert_int_equal(num(h, "temperature_slowdown_c"), 87);
	assert_true(num(h, "power_w") == 75.0 && num(h, "power_limit_w") == 700.0);
	assert_string_equal(str(h, "persistence"), "on");
	assert_string_equal(str(h, "compute_mode"), "default");
	assert_string_equal(str(h, "mig"), "off");
	assert_int_equal(json_array_size(json_object_get(h, "unsupported")), 0);
	assert_int_equal(json_object_size(json_object_get(h, "errors")), 0);
	json_decref(facts);
	json_decref(errors);
}

static void test_health_scenario_reaches_each_field_family_of_its_gpu_only(void **state)
{
	static const char scenario[] = "count 2\n"
	                               "gpu 1 numa_node 1\n"
	                               "gpu 1 ecc.volatile.uncorrected 2\n"
	                               "gpu 1 ecc.aggregate.corrected 40\n"
	                               "gpu 1 retired_pages.pending on\n"
	                               "gpu 1 retired_pages.count 3\n"
	                               "gpu 1 row_remap.pending true\n"
	                               "gpu 1 row_remap.uncorrected 1\n"
	                               "gpu 1 pcie.gen 3\n"
	                               "gpu 1 pcie.width 8\n"
	                               "gpu 1 nvlink 3 down\n"
	                               "gpu 1 nvlink 2 replay 7\n"
	                               "gpu 1 clocks_mhz.sm 990\n"
	                               "gpu 1 throttle 0x48\n"
	                               "gpu 1 temperature_c 91\n"
	                               "gpu 1 power_w 312.5\n"
	                               "gpu 1 persistence off\n"
	                               "gpu 1 compute_mode exclusive_process\n"
	                               "gpu 1 mig on\n";
	json_t *errors, *facts = gpus_of(FAKE_NVML, scenario, &errors), *h = health(facts, 1);
	json_t *links = json_object_get(h, "nvlink"), *reasons;

	assert_string_equal(str(h, "pci_bus_id"), "00000000:28:00.0");
	assert_int_equal(num(h, "numa_node"), 1);
	assert_int_equal(num(h, "ecc.volatile.uncorrected"), 2);
	assert_int_equal(num(h, "ecc.aggregate.corrected"), 40);
	assert_true(json_is_true(json_object_get(json_object_get(h, "retired_pages"), "pending")));
	assert_int_equal(num(h, "retired_pages.count"), 3);
	assert_true(json_is_true(json_object_get(json_object_get(h, "row_remap"), "pending")));
	assert_int_equal(num(h, "row_remap.uncorrected"), 1);
	assert_int_equal(num(h, "pcie.gen"), 3);
	assert_int_equal(num(h, "pcie.width"), 8);
	assert_true(json_is_false(json_object_get(json_array_get(links, 3), "up")));
	assert_true(json_is_true(json_object_get(json_array_get(links, 2), "up")));
	assert_int_equal(num(json_array_get(links, 2), "replay"), 7);
	assert_int_equal(num(h, "clocks_mhz.sm"), 990);
	reasons = json_object_get(json_object_get(h, "throttle"), "reasons");
	assert_int_equal(json_array_size(reasons), 2);
	assert_string_equal(json_string_value(json_array_get(reasons, 0)), "hw_slowdown");
	assert_string_equal(json_string_value(json_array_get(reasons, 1)), "hw_thermal");
	assert_int_equal(num(h, "temperature_c"), 91);
	assert_true(num(h, "power_w") == 312.5);
	assert_string_equal(str(h, "persistence"), "off");
	assert_string_equal(str(h, "compute_mode"), "exclusive_process");
	assert_string_equal(str(h, "mig"), "on");
	/* the other GPU is untouched */
	h = health(facts, 0);
	assert_int_equal(num(h, "ecc.volatile.uncorrected"), 0);
	assert_int_equal(num(h, "pcie.width"), 16);
	assert_string_equal(str(h, "mig"), "off");
	json_decref(facts);
	json_decref(errors);
}

static void test_health_not_supported_is_named_per_gpu_and_the_others_go_on(void **state)
{
	static const char scenario[] = "count 2\n"
	                               "gpu 0 unsupported row_remap\n"
	                               "gpu 0 nvlink.links 0\n"
	                               "gpu 0 ecc.mode off\n";
	json_t *errors, *facts = gpus_of(FAKE_NVML, scenario, &errors), *h = health(facts, 0);
	json_t *un = json_object_get(h, "unsupported");

	assert_int_equal(json_array_size(un), 2);
	assert_string_equal(json_string_value(json_array_get(un, 0)), "row_remap");
	assert_string_equal(json_string_value(json_array_get(un, 1)), "nvlink");
	assert_null(json_object_get(h, "row_remap"));
	assert_null(json_object_get(h, "nvlink"));
	/* ECC off: its mode, and no counters, is no error */
	assert_string_equal(str(json_object_get(h, "ecc"), "mode"), "off");
	assert_null(json_object_get(json_object_get(h, "ecc"), "volatile"));
	assert_int_equal(json_object_size(json_object_get(h, "errors")), 0);
	h = health(facts, 1);
	assert_int_equal(json_array_size(json_object_get(h, "unsupported")), 0);
	assert_non_null(json_object_get(h, "row_remap"));
	json_decref(facts);
	json_decref(errors);
}

static void test_health_of_a_lost_gpu_stops_its_queries_and_the_next_gpu_answers(void **state)
{
	/* three calls answered (name, memory, uuid), then the first health query */
	static const char scenario[] = "count 3\ngpu 1 lost 3\n";
	json_t *errors, *facts = gpus_of(FAKE_NVML, scenario, &errors), *h = health(facts, 1);
	json_t *herr = json_object_get(h, "errors");

	assert_string_equal(str(herr, "pci_bus_id"),
	                    "nvmlDeviceGetPciInfo: GPU is lost (NVML error 15)");
	assert_string_equal(str(herr, "mig"), "not asked: the GPU is lost");
	assert_int_equal(json_object_size(herr), 16);
	assert_int_equal(json_object_size(h), 2); /* unsupported and errors alone */
	assert_int_equal(json_object_size(json_object_get(health(facts, 2), "errors")), 0);
	assert_string_equal(str(health(facts, 2), "pci_bus_id"), "00000000:38:00.0");
	json_decref(facts);
	json_decref(errors);
}

static void test_health_other_nvml_errors_are_named_with_their_function(void **state)
{
	static const char scenario[] = "count 1\ngpu 0 error nvmlDeviceGetPowerUsage 4\n";
	json_t *errors, *facts = gpus_of(FAKE_NVML, scenario, &errors), *h = health(facts, 0);

	assert_string_equal(str(json_object_get(h, "errors"), "power_w"),
	                    "nvmlDeviceGetPowerUsage: Insufficient Permissions (NVML error 4)");
	assert_null(json_object_get(h, "power_w"));
	assert_true(num(h, "power_limit_w") == 700.0);
	json_decref(facts);
	json_decref(errors);
}

/* Hopper keeps DL_ECC_DATA and not DL_CRC_DATA: a counter the GPU does not
 * keep answers INVALID_ARGUMENT ("counter is invalid" in NVML's header),
 * which leaves that counter out and keeps the links. */
static void test_nvlink_counter_the_gpu_does_not_keep_is_left_out_and_ecc_data_is_read(void **state)
{
	static const char scenario[] = "count 1\n"
	                               "gpu 0 nvlink_invalid crc_data\n"
	                               "gpu 0 nvlink 2 ecc_data 4\n";
	json_t *errors, *facts = gpus_of(FAKE_NVML, scenario, &errors), *h = health(facts, 0);
	json_t *link2 = json_array_get(json_object_get(h, "nvlink"), 2);

	assert_int_equal(json_array_size(json_object_get(h, "nvlink")), 18);
	assert_int_equal(num(link2, "ecc_data"), 4);
	assert_int_equal(num(link2, "replay"), 0);
	assert_null(json_object_get(link2, "crc_data"));
	assert_int_equal(json_object_size(json_object_get(h, "errors")), 0);
	json_decref(facts);
	json_decref(errors);
}

/* CUDA 13.3's header raises NVML_NVLINK_MAX_LINKS from 18 to 36. */
static void test_nvlink_links_beyond_eighteen_are_read(void **state)
{
	static const char scenario[] = "count 1\ngpu 0 nvlink.links 36\ngpu 0 nvlink 30 down\n";
	json_t *errors, *facts = gpus_of(FAKE_NVML, scenario, &errors), *h = health(facts, 0);
	json_t *links = json_object_get(h, "nvlink");

	assert_int_equal(json_array_size(links), 36);
	assert_true(json_is_false(json_object_get(json_array_get(links, 30), "up")));
	json_decref(facts);
	json_decref(errors);
}

/* nvmlDeviceGetTemperatureV first (NVML 12.8+; the old query is deprecated
 * in 13.0): with the old query failing, the temperature still comes. */
static void test_temperature_is_read_through_the_versioned_query_first(void **state)
{
	static const char scenario[] = "count 1\n"
	                               "gpu 0 temperature_c 61\n"
	                               "gpu 0 error nvmlDeviceGetTemperature 3\n";
	json_t *errors, *facts = gpus_of(FAKE_NVML, scenario, &errors), *h = health(facts, 0);

	assert_int_equal(num(h, "temperature_c"), 61);
	assert_int_equal(json_object_size(json_object_get(h, "errors")), 0);
	assert_int_equal(json_array_size(json_object_get(h, "unsupported")), 0);
	json_decref(facts);
	json_decref(errors);
}

static void test_health_with_an_older_nvml_takes_older_versions_and_names_the_missing(void **state)
{
	json_t *errors,
	    *facts = gpus_of(FAKE_NVML_OLD, "count 1\ngpu 0 throttle 0x4\ngpu 0 pci.bus 0xfe\n",
	                     &errors);
	json_t *h = health(facts, 0), *un = json_object_get(h, "unsupported");
	char names[256] = "";

	for (size_t i = 0; i < json_array_size(un); i++)
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s ",
		         json_string_value(json_array_get(un, i)));
	/* _v2 of the PCI query, ClocksThrottleReasons, RetiredPages (v1) */
	assert_string_equal(str(h, "pci_bus_id"), "00000000:FE:00.0");
	assert_string_equal(str(json_object_get(h, "throttle"), "mask"), "0x0000000000000004");
	assert_non_null(json_object_get(h, "retired_pages"));
	/* no NUMA query (and no PCI device 0000:fe:00.0 in this machine's sysfs), no remapped rows,
	 * no MIG mode */
	assert_string_equal(names, "numa_node row_remap mig ");
	/* no TemperatureV: the older query */
	assert_int_equal(num(h, "temperature_c"), 35);
	json_decref(facts);
	json_decref(errors);
}

/* Without NVML's NUMA query, the GPU's PCI device in sysfs says it: here the stand-in's GPU
 * sits on this machine's first PCI bus device, whatever that says. */
static void test_numa_node_not_supported_by_nvml_comes_from_sysfs(void **state)
{
	static const char sysfs[] = "/sys/bus/pci/devices/0000:00:00.0/numa_node";
	json_t *errors, *facts, *h;
	FILE *f = fopen(sysfs, "r");
	long want = -2;

	if (!f)
		skip();
	assert_int_equal(fscanf(f, "%ld", &want), 1);
	fclose(f);
	facts =
	    gpus_of(FAKE_NVML, "count 1\ngpu 0 pci.bus 0\ngpu 0 unsupported numa_node\n", &errors);
	h = health(facts, 0);
	assert_string_equal(str(h, "pci_bus_id"), "00000000:00:00.0");
	if (want < 0)
		assert_true(json_is_null(json_object_get(h, "numa_node")));
	else
		assert_int_equal(num(h, "numa_node"), want);
	assert_int_equal(json_array_size(json_object_get(h, "unsupported")), 0);
	json_decref(facts);
	json_decref(errors);
}

static void test_hang_directive_holds_the_named_query_for_its_seconds(void **state)
{
	json_t *errors, *facts;
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	facts = gpus_of(FAKE_NVML, "count 2\ngpu 1 hang nvmlDeviceGetPowerUsage 1\n", &errors);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_true(t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9 >= 0.99);
	assert_true(num(health(facts, 1), "power_w") == 75.0);
	json_decref(facts);
	json_decref(errors);
}

/* A node whose PCI bus shows NVIDIA GPUs but where no NVML loads (a driver
 * whose library is not where the loader looks) says why, and a node
 * without NVIDIA devices says nothing. */
static void test_no_nvml_on_a_node_with_nvidia_gpus_says_why(void **state)
{
	json_t *errors = json_object(),
	       *facts = json_pack("{s:{s:i}}", "gpu_pci", "nvidia_devices", 8);

	facts_gpu_absent_error(facts, errors, "libnvidia-ml.so.1: cannot open shared object file");
	assert_string_equal(str(errors, "gpus"), "the PCI bus shows 8 NVIDIA GPUs, but no NVML "
	                                         "library loads: libnvidia-ml.so.1: cannot open "
	                                         "shared object file");
	json_decref(errors);
	errors = json_object();
	json_object_set_new(json_object_get(facts, "gpu_pci"), "nvidia_devices", json_integer(0));
	facts_gpu_absent_error(facts, errors, "libnvidia-ml.so.1: cannot open shared object file");
	assert_int_equal(json_object_size(errors), 0);
	json_decref(facts);
	json_decref(errors);
}

static double since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* NVML's calls cannot be cut: a query that never returns costs its GPU,
 * named with the query, and the GPUs after it are asked by a new process. */
static void test_a_hung_query_names_its_gpu_and_function_and_the_other_gpus_answer(void **state)
{
	json_t *errors, *facts, *h;
	struct timespec t0;

	setenv("CLUSTERDOC_NVML_TIMEOUT_MS", "1000", 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	facts = gpus_of(FAKE_NVML, "count 3\ngpu 1 hang nvmlDeviceGetPowerUsage 60\n", &errors);
	unsetenv("CLUSTERDOC_NVML_TIMEOUT_MS");
	assert_true(since(&t0) < 5.0);
	assert_int_equal(json_array_size(json_object_get(facts, "gpus")), 3);
	h = health(facts, 1);
	assert_string_equal(str(json_object_get(h, "errors"), "power_w"),
	                    "nvmlDeviceGetPowerUsage: no answer within 1 s");
	assert_string_equal(str(json_object_get(h, "errors"), "mig"),
	                    "not asked: nvmlDeviceGetPowerUsage: no answer within 1 s");
	assert_true(num(health(facts, 0), "power_w") == 75.0);
	assert_true(num(health(facts, 2), "power_w") == 75.0);
	assert_int_equal(json_object_size(json_object_get(health(facts, 2), "errors")), 0);
	assert_string_equal(str(facts, "gpu_driver"), "550.54.fake");
	json_decref(facts);
	json_decref(errors);
}

/* A driver that a hang leaves stuck: the next process's nvmlInit does not
 * answer either, and every GPU left is named so. */
static void test_a_driver_left_stuck_by_a_hang_names_every_gpu_left(void **state)
{
	json_t *errors, *facts;
	struct timespec t0;

	setenv("CLUSTERDOC_NVML_TIMEOUT_MS", "1000", 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	facts = gpus_of(FAKE_NVML, "count 4\nwedge\ngpu 1 hang nvmlDeviceGetEccMode 60\n", &errors);
	unsetenv("CLUSTERDOC_NVML_TIMEOUT_MS");
	assert_true(since(&t0) < 6.0);
	assert_int_equal(json_array_size(json_object_get(facts, "gpus")), 4);
	assert_int_equal(json_object_size(json_object_get(health(facts, 0), "errors")), 0);
	assert_string_equal(str(json_object_get(health(facts, 1), "errors"), "ecc"),
	                    "nvmlDeviceGetEccMode: no answer within 1 s");
	for (size_t i = 2; i < 4; i++)
		assert_string_equal(str(json_object_get(health(facts, i), "errors"), "pcie"),
		                    "not asked: nvmlInit_v2: no answer within 1 s (after GPU 1)");
	json_decref(facts);
	json_decref(errors);
}

/* A driver library that crashes in a query costs that GPU, named. */
static void test_a_crash_in_nvml_names_its_gpu_and_the_other_gpus_answer(void **state)
{
	json_t *errors,
	    *facts = gpus_of(FAKE_NVML, "count 2\ngpu 0 crash nvmlDeviceGetEccMode\n", &errors);

	assert_int_equal(json_array_size(json_object_get(facts, "gpus")), 2);
	assert_string_equal(str(json_object_get(health(facts, 0), "errors"), "ecc"),
	                    "nvmlDeviceGetEccMode: NVML's process died of signal 11 in it");
	assert_int_equal(json_object_size(json_object_get(health(facts, 1), "errors")), 0);
	json_decref(facts);
	json_decref(errors);
}

static void put(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
}

/* Run a shell command with every "@" replaced by root. */
static void sh(const char *cmd, const char *root)
{
	char *full = NULL, *next;

	for (const char *p = cmd; *p; p++) {
		if (*p == '@')
			next = cd_asprintf("%s%s", full ? full : "", root);
		else
			next = cd_asprintf("%s%c", full ? full : "", *p);
		free(full);
		full = next;
	}
	assert_int_equal(system(full), 0);
	free(full);
}

static void test_gpu_pci_counts_nvidia_display_devices_and_resolves_paths(void **state)
{
	char root[] = "/tmp/cd-sysfs-XXXXXX", dev[PATH_MAX + 600], real[PATH_MAX], err[CD_ERRLEN];
	json_t *facts = json_object(), *p;

	assert_non_null(mkdtemp(root));
	sh("mkdir -p @/devices/pci0000:17/0000:17:00.0/0000:18:00.0 "
	   "@/devices/pci0000:00/0000:00:01.0/0000:01:00.0 @/bus/pci/devices @/class/net/lo",
	   root);
	snprintf(dev, sizeof(dev),
	         "cd %s && ln -s ../../../devices/pci0000:17/0000:17:00.0/0000:18:00.0 "
	         "bus/pci/devices/0000:18:00.0 && ln -s "
	         "../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0 "
	         "bus/pci/devices/0000:01:00.0 && ln -s ../../../devices/pci0000:17/0000:17:00.0 "
	         "bus/pci/devices/0000:17:00.0 && mkdir class/net/eth0 && ln -s "
	         "../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0 class/net/eth0/device",
	         root);
	assert_int_equal(system(dev), 0);
	snprintf(dev, sizeof(dev), "%s/devices/pci0000:17/0000:17:00.0/0000:18:00.0", root);
	put(dev, "vendor", "0x10de\n");
	put(dev, "class", "0x030200\n");
	snprintf(dev, sizeof(dev), "%s/devices/pci0000:00/0000:00:01.0/0000:01:00.0", root);
	put(dev, "vendor", "0x15b3\n"); /* Mellanox: a NIC */
	put(dev, "class", "0x020000\n");
	snprintf(dev, sizeof(dev), "%s/devices/pci0000:17/0000:17:00.0", root);
	put(dev, "vendor", "0x10de\n"); /* an NVIDIA bridge (NVSwitch's class 0x0680): no GPU */
	put(dev, "class", "0x068000\n");
	assert_int_equal(facts_gpu_pci_collect(root, facts, err, sizeof(err)), 0);
	p = json_object_get(facts, "gpu_pci");
	assert_int_equal(num(p, "nvidia_devices"), 1);
	assert_non_null(realpath(root, real));
	snprintf(dev, sizeof(dev), "%s/devices/pci0000:17/0000:17:00.0/0000:18:00.0", real);
	assert_string_equal(str(json_object_get(p, "paths"), "0000:18:00.0"), dev);
	snprintf(dev, sizeof(dev), "%s/devices/pci0000:00/0000:00:01.0/0000:01:00.0", real);
	assert_string_equal(str(json_object_get(p, "nics"), "eth0"), dev);
	assert_null(json_object_get(json_object_get(p, "nics"), "lo"));
	sh("rm -rf @", root);
	json_decref(facts);
}

static void test_gpu_pci_without_sysfs_says_why(void **state)
{
	json_t *facts = json_object();
	char err[CD_ERRLEN];

	assert_int_equal(facts_gpu_pci_collect("/nonexistent", facts, err, sizeof(err)), CD_ERR_IO);
	assert_string_equal(err, "/nonexistent/bus/pci/devices: No such file or directory");
	assert_null(json_object_get(facts, "gpu_pci"));
	json_decref(facts);
}

/* facts["xid"] with CLUSTERDOC_KMSG at kmsg_path and a journalctl on PATH
 * that prints journal_out (NULL: exits 1 with a message). */
static json_t *xid_with(const char *kmsg_path, const char *journal_out)
{
	char dir[] = "/tmp/cd-journal-XXXXXX", script[600], *path = getenv("PATH"), *old;
	json_t *facts = json_object(), *x;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(script, sizeof(script), "%s/journalctl", dir);
	assert_non_null(f = fopen(script, "w"));
	if (journal_out)
		fprintf(f, "#!/bin/sh\ncat <<'END'\n%sEND\n", journal_out);
	else
		fprintf(f, "#!/bin/sh\necho 'No journal files were found.' >&2\nexit 1\n");
	fclose(f);
	chmod(script, 0755);
	old = cd_asprintf("%s", path ? path : "/usr/bin:/bin");
	path = cd_asprintf("%s:%s", dir, old);
	setenv("PATH", path, 1);
	setenv("CLUSTERDOC_KMSG", kmsg_path, 1);
	facts_xid_collect(facts);
	unsetenv("CLUSTERDOC_KMSG");
	setenv("PATH", old, 1);
	unlink(script);
	rmdir(dir);
	free(path);
	free(old);
	x = json_incref(json_object_get(facts, "xid"));
	json_decref(facts);
	return x;
}

static void test_xid_from_kmsg_gives_source_and_events(void **state)
{
	char path[] = "/tmp/cd-kmsg-XXXXXX";
	int fd = mkstemp(path);
	json_t *x;

	assert_int_equal(write(fd, kmsg, strlen(kmsg)), (ssize_t)strlen(kmsg));
	close(fd);
	x = xid_with(path, NULL);
	unlink(path);
	assert_string_equal(str(x, "source"), "kmsg");
	assert_true(json_is_true(json_object_get(x, "readable")));
	assert_int_equal(json_array_size(json_object_get(x, "events")), 2);
	assert_null(json_object_get(x, "why"));
	json_decref(x);
}

/* A saved log (CLUSTERDOC_KMSG) is read in chunks: a line across a chunk's end stays whole. */
static void test_xid_line_across_a_read_chunk_of_a_log_file_stays_whole(void **state)
{
	char path[] = "/tmp/cd-kmsg-XXXXXX", line[128];
	int fd = mkstemp(path), seq = 0;
	size_t written = 0;
	json_t *x, *e;

	while (written < 8192 - 40) {
		int n = snprintf(line, sizeof(line), "6,%d,1000,-;eth0: link up\n", seq++);

		assert_int_equal(write(fd, line, (size_t)n), n);
		written += (size_t)n;
	}
	/* from the Xid record on: the 8 KiB chunk ends 14 to 40 bytes into it */
	assert_int_equal(write(fd, strchr(kmsg, '\n') + 1, strlen(strchr(kmsg, '\n') + 1)),
	                 (ssize_t)strlen(strchr(kmsg, '\n') + 1));
	close(fd);
	x = xid_with(path, NULL);
	unlink(path);
	e = json_object_get(x, "events");
	assert_int_equal(json_array_size(e), 2);
	assert_string_equal(str(json_array_get(e, 0), "text"), xid79);
	json_decref(x);
}

static void test_xid_when_kmsg_is_unreadable_falls_back_to_journalctl(void **state)
{
	json_t *x = xid_with("/nonexistent/kmsg", journal);

	assert_string_equal(str(x, "source"), "journalctl");
	assert_true(json_is_true(json_object_get(x, "readable")));
	assert_int_equal(num(json_array_get(json_object_get(x, "events"), 0), "xid"), 48);
	json_decref(x);
}

static void test_xid_when_no_log_is_readable_says_so_instead_of_none(void **state)
{
	json_t *x = xid_with("/nonexistent/kmsg", NULL);

	assert_true(json_is_null(json_object_get(x, "source")));
	assert_true(json_is_false(json_object_get(x, "readable")));
	assert_int_equal(json_array_size(json_object_get(x, "events")), 0);
	assert_non_null(strstr(str(x, "why"), "/nonexistent/kmsg: No such file or directory; "
	                                      "journalctl -k exited with status 1: No journal "
	                                      "files were found."));
	json_decref(x);
	x = xid_with("/nonexistent/kmsg", "-- No entries --\n");
	assert_true(json_is_false(json_object_get(x, "readable")));
	assert_non_null(strstr(str(x, "why"), "journalctl -k -b shows no kernel messages"));
	json_decref(x);
}

static void test_health_word_names_the_worst_gpu_of_the_node(void **state)
{
	static const struct {
		const char *facts, *word;
	} cases[] = {
	    {"{\"gpus\": []}", "-"},
	    {"{\"gpus\": [{\"health\": {\"errors\": {}}}]}", "ok"},
	    {"{\"gpus\": [{\"health\": {\"errors\": {\"power_w\": \"x\"}}}, {\"health\": "
	     "{\"errors\": {\"mig\": \"y\"}}}]}",
	     "2 err"},
	    {"{\"gpus\": [{\"health\": {}}], \"xid\": {\"events\": [{\"xid\": 79}]}}", "Xid!"},
	    {"{\"gpus\": [{\"health\": {\"row_remap\": {\"pending\": true}}}]}", "ECC!"},
	    {"{\"gpus\": [{\"health\": {\"ecc\": {\"volatile\": {\"uncorrected\": 2}}}}]}", "ECC!"},
	    {"{\"gpus\": [{\"health\": {\"row_remap\": {\"failure\": true}}}, {\"health\": "
	     "{\"errors\": {\"pcie\": \"nvmlDeviceGetPciInfo: GPU is lost (NVML error 15)\"}}}]}",
	     "lost"},
	};
	char buf[8];

	for (size_t i = 0; i < CD_ARRAY_LEN(cases); i++) {
		json_t *f = json_loads(cases[i].facts, 0, NULL);

		assert_non_null(f);
		assert_string_equal(facts_gpu_health_word(f, buf, sizeof(buf)), cases[i].word);
		json_decref(f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_xid_line_from_nvidias_document_gives_number_pci_and_text),
	    cmocka_unit_test(test_xid_line_of_drivers_before_r450_without_pci_prefix_parses),
	    cmocka_unit_test(test_xid_line_of_a_mig_gpu_gives_its_pci_and_gpu_instance),
	    cmocka_unit_test(test_xid_malformed_or_other_lines_are_not_events),
	    cmocka_unit_test(test_kmsg_records_give_each_xid_with_its_time_since_boot),
	    cmocka_unit_test(test_journal_lines_give_each_xid_with_its_time_since_boot),
	    cmocka_unit_test(test_xid_keeps_the_newest_events_and_counts_the_dropped),
	    cmocka_unit_test(test_health_of_a_healthy_gpu_has_every_key_and_nothing_missing),
	    cmocka_unit_test(test_health_scenario_reaches_each_field_family_of_its_gpu_only),
	    cmocka_unit_test(test_health_not_supported_is_named_per_gpu_and_the_others_go_on),
	    cmocka_unit_test(test_health_of_a_lost_gpu_stops_its_queries_and_the_next_gpu_answers),
	    cmocka_unit_test(test_health_other_nvml_errors_are_named_with_their_function),
	    cmocka_unit_test(
	        test_nvlink_counter_the_gpu_does_not_keep_is_left_out_and_ecc_data_is_read),
	    cmocka_unit_test(test_nvlink_links_beyond_eighteen_are_read),
	    cmocka_unit_test(test_temperature_is_read_through_the_versioned_query_first),
	    cmocka_unit_test(
	        test_health_with_an_older_nvml_takes_older_versions_and_names_the_missing),
	    cmocka_unit_test(test_numa_node_not_supported_by_nvml_comes_from_sysfs),
	    cmocka_unit_test(test_hang_directive_holds_the_named_query_for_its_seconds),
	    cmocka_unit_test(
	        test_a_hung_query_names_its_gpu_and_function_and_the_other_gpus_answer),
	    cmocka_unit_test(test_a_driver_left_stuck_by_a_hang_names_every_gpu_left),
	    cmocka_unit_test(test_a_crash_in_nvml_names_its_gpu_and_the_other_gpus_answer),
	    cmocka_unit_test(test_no_nvml_on_a_node_with_nvidia_gpus_says_why),
	    cmocka_unit_test(test_gpu_pci_counts_nvidia_display_devices_and_resolves_paths),
	    cmocka_unit_test(test_gpu_pci_without_sysfs_says_why),
	    cmocka_unit_test(test_xid_from_kmsg_gives_source_and_events),
	    cmocka_unit_test(test_xid_line_across_a_read_chunk_of_a_log_file_stays_whole),
	    cmocka_unit_test(test_xid_when_kmsg_is_unreadable_falls_back_to_journalctl),
	    cmocka_unit_test(test_xid_when_no_log_is_readable_says_so_instead_of_none),
	    cmocka_unit_test(test_health_word_names_the_worst_gpu_of_the_node),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
