/* SPDX-License-Identifier: MIT */
/*
 * gpu_fixture.h - the GPU findings' test fixture (test_diagnose_gpu.c,
 * test_diagnose_gpu_far.c): three nodes p, q, r of routes-clean.json (eth0
 * their data interface), each with two healthy GPUs in the facts format of
 * docs/protocol.md, under one PCIe switch with eth0; helpers to break one
 * value, diagnose, and find the one finding of an id.
 */
#ifndef CD_TESTS_GPU_FIXTURE_H
#define CD_TESTS_GPU_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "probes/diagnose.h"

#ifndef FIXTURES
#define FIXTURES "tests/fixtures/clusters/"
#endif

/* The switch of every node: root port 17:01.0, upstream 18:00.0, the
 * GPUs at 1a:00.0 and 1b:00.0 and eth0 at 1c:00.0 below its downstream
 * ports. */
#define SW   "/sys/devices/pci0000:17/0000:17:01.0/0000:18:00.0/"
#define GPU0 SW "0000:19:00.0/0000:1a:00.0"
#define GPU1 SW "0000:19:01.0/0000:1b:00.0"
#define ETH0 SW "0000:19:02.0/0000:1c:00.0"
#define FAR0 "/sys/devices/pci0000:b0/0000:b0:01.0/0000:b1:00.0"
#define FAR1 "/sys/devices/pci0000:b0/0000:b0:02.0/0000:b2:00.0"

static inline json_t *healthy_gpu(int idx)
{
	char bus[32];

	snprintf(bus, sizeof(bus), "00000000:%X:00.0", 0x1a + idx);
	return json_pack(
	    "{s:i, s:s, s:I, s:s, s:{s:s, s:i, s:{s:s, s:{s:i, s:i}, s:{s:i, s:i}}, s:{s:b, s:i},"
	    " s:{s:b, s:b, s:i, s:i}, s:{s:i, s:i, s:i, s:i}, s:[{s:i, s:b}, {s:i, s:b}],"
	    " s:{s:i, s:i, s:i, s:i}, s:{s:s, s:[]}, s:i, s:i, s:f, s:f, s:s, s:s, s:s,"
	    " s:[], s:{}}}",
	    "index", idx, "name", "NVIDIA H200", "memory_bytes", (json_int_t)150000000000LL, "uuid",
	    "GPU-x", "health", "pci_bus_id", bus, "numa_node", 0, "ecc", "mode", "on", "volatile",
	    "corrected", 0, "uncorrected", 0, "aggregate", "corrected", 0, "uncorrected", 0,
	    "retired_pages", "pending", 0, "count", 0, "row_remap", "pending", 0, "failure", 0,
	    "corrected", 0, "uncorrected", 0, "pcie", "gen", 5, "gen_max", 5, "width", 16,
	    "width_max", 16, "nvlink", "link", 0, "up", 1, "link", 1, "up", 1, "clocks_mhz", "sm",
	    1980, "mem", 2619, "sm_max", 1980, "mem_max", 2619, "throttle", "mask",
	    "0x0000000000000000", "reasons", "temperature_c", 40, "temperature_slowdown_c", 90,
	    "power_w", 120.5, "power_limit_w", 700.0, "persistence", "on", "compute_mode",
	    "default", "mig", "off", "unsupported", "errors");
}

static inline json_t *gpu_facts(void)
{
	return json_pack("{s:[o, o], s:{s:i, s:{s:s, s:s}, s:{s:s}},"
	                 " s:{s:s, s:b, s:[]}}",
	                 "gpus", healthy_gpu(0), healthy_gpu(1), "gpu_pci", "nvidia_devices", 2,
	                 "paths", "0000:1a:00.0", GPU0, "0000:1b:00.0", GPU1, "nics", "eth0", ETH0,
	                 "xid", "source", "kmsg", "readable", 1, "events");
}

struct fx {
	json_t *doc;
	struct netmodel *m;
	struct diagnosis *d;
};

/* routes-clean.json with the GPU facts on every node. */
static inline void setup_fx(struct fx *f)
{
	json_error_t jerr;
	json_t *node;
	size_t i;

	memset(f, 0, sizeof(*f));
	f->doc = json_load_file(FIXTURES "routes-clean.json", 0, &jerr);
	if (!f->doc)
		fail_msg("routes-clean.json: %s", jerr.text);
	json_array_foreach(json_object_get(f->doc, "nodes"), i, node)
	{
		json_t *facts = json_object_get(node, "facts"), *add = gpu_facts();

		json_object_update(facts, add);
		json_decref(add);
	}
}

static inline json_t *facts_of(struct fx *f, size_t node)
{
	return json_object_get(json_array_get(json_object_get(f->doc, "nodes"), node), "facts");
}

static inline json_t *health(struct fx *f, size_t node, size_t gpu)
{
	return json_object_get(json_array_get(json_object_get(facts_of(f, node), "gpus"), gpu),
	                       "health");
}

/* Set a value at a dotted path under obj ("ecc.volatile.uncorrected"). */
static inline void set(json_t *obj, const char *path, json_t *v)
{
	char buf[128], *dot, *p = buf;

	snprintf(buf, sizeof(buf), "%s", path);
	while ((dot = strchr(p, '.'))) {
		*dot = '\0';
		obj = json_object_get(obj, p);
		p = dot + 1;
	}
	json_object_set_new(obj, p, v);
}

static inline void run(struct fx *f)
{
	char err[CD_ERRLEN] = "";

	f->m = netmodel_load_json(f->doc, err, sizeof(err));
	if (!f->m)
		fail_msg("%s", err);
	f->d = diagnose(f->m);
}

static inline void done(struct fx *f)
{
	diagnosis_free(f->d);
	netmodel_free(f->m);
	json_decref(f->doc);
}

static inline size_t count(const struct fx *f, const char *id)
{
	size_t n = 0;

	for (size_t k = 0; k < f->d->nfindings; k++)
		n += strcmp(f->d->findings[k].id, id) == 0;
	return n;
}

/* The only finding id: it must exist once, name node alone, and have sev. */
static inline const struct finding *only(const struct fx *f, const char *id, size_t node,
                                         enum severity sev)
{
	const struct finding *hit = NULL;

	for (size_t k = 0; k < f->d->nfindings; k++)
		if (strcmp(f->d->findings[k].id, id) == 0) {
			if (hit)
				fail_msg("%s twice", id);
			hit = &f->d->findings[k];
		}
	if (!hit)
		fail_msg("no %s", id);
	assert_int_equal(hit->nnodes, 1);
	assert_int_equal(hit->nodes[0], node);
	assert_int_equal(hit->severity, sev);
	return hit;
}

static inline void no_gpu_findings(const struct fx *f)
{
	for (size_t k = 0; k < f->d->nfindings; k++)
		if (strncmp(f->d->findings[k].id, "gpu-", 4) == 0 ||
		    strcmp(f->d->findings[k].id, "probe-incomplete") == 0)
			fail_msg("unexpected %s: %s", f->d->findings[k].id,
			         f->d->findings[k].evidence);
}

#endif
