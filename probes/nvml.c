/* SPDX-License-Identifier: MIT */
/* nvml.c - NVML loaded with dlopen() (see nvml.h). */
#include "probes/nvml.h"
#include "cd.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct nvml_sym {
	const char *name;
	size_t off;
	int optional;
} nvml_syms[] = {
    {.name = "nvmlInit_v2", .off = offsetof(struct nvml, init)},
    {.name = "nvmlShutdown", .off = offsetof(struct nvml, shutdown)},
    {.name = "nvmlDeviceGetCount_v2", .off = offsetof(struct nvml, get_count)},
    {.name = "nvmlDeviceGetHandleByIndex_v2", .off = offsetof(struct nvml, get_handle)},
    {.name = "nvmlDeviceGetName", .off = offsetof(struct nvml, get_name)},
    {.name = "nvmlDeviceGetMemoryInfo", .off = offsetof(struct nvml, get_memory)},
    {.name = "nvmlDeviceGetUUID", .off = offsetof(struct nvml, get_uuid)},
    {.name = "nvmlSystemGetDriverVersion", .off = offsetof(struct nvml, get_driver)},
    {.name = "nvmlErrorString", .off = offsetof(struct nvml, error_string), .optional = 1},
    {.name = "nvmlDeviceGetUtilizationRates",
     .off = offsetof(struct nvml, get_utilization),
     .optional = 1},
};

/* The process query, newest first; the first version fills the v1 struct. */
static const char *const procs_syms[] = {
    "nvmlDeviceGetComputeRunningProcesses_v3",
    "nvmlDeviceGetComputeRunningProcesses_v2",
    "nvmlDeviceGetComputeRunningProcesses",
};

/* The health queries, each with its names newest first (nvml.h). */
static const struct nvml_hsym {
	const char *names[3];
	size_t off;
} health_syms[] = {
#define H(field) offsetof(struct nvml, h.field)
    {{"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2"}, H(pci_info)},
    {{"nvmlDeviceGetNumaNodeId"}, H(numa_node)},
    {{"nvmlDeviceGetEccMode"}, H(ecc_mode)},
    {{"nvmlDeviceGetTotalEccErrors"}, H(ecc_total)},
    {{"nvmlDeviceGetRetiredPages_v2"}, H(retired_pages_v2)},
    {{"nvmlDeviceGetRetiredPages"}, H(retired_pages)},
    {{"nvmlDeviceGetRetiredPagesPendingStatus"}, H(retired_pending)},
    {{"nvmlDeviceGetRemappedRows"}, H(remapped_rows)},
    {{"nvmlDeviceGetCurrPcieLinkGeneration"}, H(pcie_gen)},
    {{"nvmlDeviceGetMaxPcieLinkGeneration", "nvmlDeviceGetGpuMaxPcieLinkGeneration"},
     H(pcie_gen_max)},
    {{"nvmlDeviceGetCurrPcieLinkWidth"}, H(pcie_width)},
    {{"nvmlDeviceGetMaxPcieLinkWidth"}, H(pcie_width_max)},
    {{"nvmlDeviceGetNvLinkState"}, H(nvlink_state)},
    {{"nvmlDeviceGetNvLinkErrorCounter"}, H(nvlink_errors)},
    {{"nvmlDeviceGetClockInfo"}, H(clock)},
    {{"nvmlDeviceGetMaxClockInfo"}, H(clock_max)},
    {{"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"},
     H(clock_reasons)},
    {{"nvmlDeviceGetTemperatureV"}, H(temperature_v)},
    {{"nvmlDeviceGetTemperature"}, H(temperature)},
    {{"nvmlDeviceGetTemperatureThreshold"}, H(temperature_threshold)},
    {{"nvmlDeviceGetPowerUsage"}, H(power_usage)},
    {{"nvmlDeviceGetEnforcedPowerLimit"}, H(power_limit)},
    {{"nvmlDeviceGetPersistenceMode"}, H(persistence)},
    {{"nvmlDeviceGetComputeMode"}, H(compute_mode)},
    {{"nvmlDeviceGetMigMode"}, H(mig_mode)},
#undef H
};

/* POSIX guarantees that a function pointer round-trips through void *;
 * memcpy says so without a cast between object and function pointers. */
static int resolve(struct nvml *n, char *err, size_t errlen)
{
	for (size_t i = 0; i < CD_ARRAY_LEN(nvml_syms); i++) {
		void *p = dlsym(n->lib, nvml_syms[i].name);

		if (!p && !nvml_syms[i].optional)
			return cd_errf(err, errlen, CD_ERR_NOTFOUND, "NVML has no %s",
			               nvml_syms[i].name);
		memcpy((char *)n + nvml_syms[i].off, &p, sizeof(p));
	}
	for (size_t i = 0; i < CD_ARRAY_LEN(procs_syms) && !n->get_procs; i++) {
		void *p = dlsym(n->lib, procs_syms[i]);

		memcpy(&n->get_procs, &p, sizeof(p));
		n->procs_v1 = p && i == CD_ARRAY_LEN(procs_syms) - 1;
	}
	for (size_t i = 0; i < CD_ARRAY_LEN(health_syms); i++) {
		void *p = NULL;

		for (size_t v = 0; v < CD_ARRAY_LEN(health_syms[i].names) && !p; v++)
			if (health_syms[i].names[v])
				p = dlsym(n->lib, health_syms[i].names[v]);
		memcpy((char *)n + health_syms[i].off, &p, sizeof(p));
	}
	return 0;
}

const char *nvml_error(const struct nvml *n, nvml_return r, char *buf, size_t len)
{
	const char *s = n->error_string ? n->error_string(r) : NULL;

	snprintf(buf, len, "%s (NVML error %d)", s ? s : "unknown", r);
	return buf;
}

int nvml_open(struct nvml *n, char *err, size_t errlen)
{
	const char *path = getenv("CLUSTERDOC_NVML_LIB");
	char why[128];
	nvml_return r;
	int rc;

	memset(n, 0, sizeof(*n));
	n->lib = dlopen(path && *path ? path : "libnvidia-ml.so.1", RTLD_LAZY | RTLD_LOCAL);
	if (!n->lib) { /* no NVIDIA driver on this node: no GPUs, not an error */
		const char *why_not = dlerror();

		snprintf(err, errlen, "%s", why_not ? why_not : "libnvidia-ml.so.1 does not load");
		return 0;
	}
	if ((rc = resolve(n, err, errlen)) < 0)
		goto fail;
	if ((r = n->init()) != 0) {
		rc = cd_errf(err, errlen, CD_ERR_IO, "nvmlInit: %s",
		             nvml_error(n, r, why, sizeof(why)));
		goto fail;
	}
	return 1;
fail:
	dlclose(n->lib);
	memset(n, 0, sizeof(*n));
	return rc;
}

void nvml_close(struct nvml *n)
{
	if (!n->lib)
		return;
	n->shutdown();
	dlclose(n->lib);
	memset(n, 0, sizeof(*n));
}

int nvml_device_pids(const struct nvml *n, nvml_device dev, unsigned int *pids,
                     unsigned long long *used, size_t cap, size_t *count, char *err, size_t errlen)
{
	size_t size = n->procs_v1 ? sizeof(struct nvml_proc_v1) : sizeof(struct nvml_proc_v2);
	unsigned int want = 0;
	char *buf = NULL, why[128];
	nvml_return r;
	int rc = 0;

	*count = 0;
	if (!n->get_procs)
		return cd_errf(err, errlen, CD_ERR_UNSUPPORTED,
		               "NVML has no nvmlDeviceGetComputeRunningProcesses");
	/* the count first; processes may start between the two calls, hence the slack */
	r = n->get_procs(dev, &want, NULL);
	for (int tries = 0; r == NVML_ERROR_INSUFFICIENT_SIZE && tries < 3; tries++) {
		want += 8;
		free(buf);
		buf = cd_calloc(want, size);
		r = n->get_procs(dev, &want, buf);
	}
	if (r != 0) {
		rc = cd_errf(err, errlen, CD_ERR_IO, "nvmlDeviceGetComputeRunningProcesses: %s",
		             nvml_error(n, r, why, sizeof(why)));
		goto out;
	}
	for (unsigned int i = 0; buf && i < want && *count < cap; i++) {
		struct nvml_proc_v1 p1;
		struct nvml_proc_v2 p2;

		if (n->procs_v1) {
			memcpy(&p1, buf + i * size, sizeof(p1));
			p2.pid = p1.pid;
			p2.used = p1.used;
		} else {
			memcpy(&p2, buf + i * size, sizeof(p2));
		}
		pids[*count] = p2.pid;
		if (used)
			used[*count] = p2.used;
		(*count)++;
	}
out:
	free(buf);
	return rc;
}
