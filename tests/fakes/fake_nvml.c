/* SPDX-License-Identifier: MIT */
/*
 * fake_nvml.c - a stand-in libnvidia-ml.so.1 for the tests, loaded through
 * CLUSTERDOC_NVML_LIB (probes/nvml.h): only the functions clusterdoc calls,
 * with the signatures, structs and result codes of NVML's documented API
 * (docs.nvidia.com/deploy/nvml-api: nvmlInit_v2, nvmlShutdown,
 * nvmlSystemGetDriverVersion, nvmlDeviceGetCount_v2,
 * nvmlDeviceGetHandleByIndex_v2, nvmlDeviceGetName, nvmlDeviceGetUUID,
 * nvmlDeviceGetMemoryInfo, nvmlDeviceGetUtilizationRates,
 * nvmlDeviceGetComputeRunningProcesses_v3 with nvmlProcessInfo_t,
 * nvmlErrorString; nvmlReturn_t values from "Error reporting").
 *
 * As NVML does, a call before nvmlInit answers NVML_ERROR_UNINITIALIZED,
 * and the process query answers NVML_ERROR_INSUFFICIENT_SIZE with the count
 * it needs when the caller's array is too small (or NULL with a count of 0).
 *
 * The GPUs are described, at every call, by the first line of the file
 * named by FAKE_NVML_FILE, else by FAKE_NVML_DEVICES:
 *     UTIL[/MEMUTIL][:PROC[+PROC...]][,...]      one entry per GPU
 * UTIL and MEMUTIL in percent; PROC a PID, or RANK=N: every process of this
 * user whose environment holds RANK=N (what a rank's CUDA context looks
 * like to NVML). "100:4242,0:RANK=1": GPU 0 busy running PID 4242, GPU 1
 * idle with rank 1's process. No devices when neither is set.
 *   FAKE_NVML_INIT=N   nvmlInit_v2 answers N (9: NVML_ERROR_DRIVER_NOT_LOADED)
 * Without either, a scenario's "count N" (fake_nvml_health.c) gives N idle
 * GPUs. A scenario's "gpu I lost" makes this file's device queries answer
 * NVML_ERROR_GPU_IS_LOST too.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_nvml.h"

typedef struct {
	unsigned long long total, free, used;
} nvmlMemory_t;

typedef struct {
	unsigned int gpu, memory;
} nvmlUtilization_t;

typedef struct {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;

nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlShutdown(void);
const char *nvmlErrorString(nvmlReturn_t r);
nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length);
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length);
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length);
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory);
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                     nvmlProcessInfo_t *infos);

static struct fake_gpu gpus[MAX_GPUS];
static unsigned int ngpus;
int fake_nvml_inited;

/* The processes of this user whose environment holds RANK=<rank>. */
static void add_rank(struct fake_gpu *g, const char *rank)
{
	char want[64], path[300], buf[65536];
	DIR *d = opendir("/proc");
	struct dirent *e;

	snprintf(want, sizeof(want), "RANK=%s", rank);
	while (d && (e = readdir(d))) {
		FILE *f;
		size_t n;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/environ", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		for (size_t i = 0; i < n; i += strlen(buf + i) + 1) {
			if (strcmp(buf + i, want) == 0 && g->nprocs < MAX_PROCS) {
				g->pids[g->nprocs++] = (unsigned)atoi(e->d_name);
				break;
			}
		}
	}
	if (d)
		closedir(d);
}

/* The GPUs, from FAKE_NVML_FILE's first line or FAKE_NVML_DEVICES. */
static void load(void)
{
	const char *file = getenv("FAKE_NVML_FILE"), *spec = getenv("FAKE_NVML_DEVICES");
	char line[4096] = "", *save = NULL, *dev;

	ngpus = 0;
	if (file && *file) {
		FILE *f = fopen(file, "r");

		if (f) {
			if (!fgets(line, sizeof(line), f))
				line[0] = '\0';
			fclose(f);
		}
		line[strcspn(line, "\n")] = '\0';
	} else if (spec) {
		snprintf(line, sizeof(line), "%s", spec);
	} else {
		for (unsigned int i = 0; i < fake_scenario_count() && i < MAX_GPUS; i++)
			gpus[ngpus++] = (struct fake_gpu){.index = i};
		return;
	}
	for (dev = strtok_r(line, ",", &save); dev && ngpus < MAX_GPUS;
	     dev = strtok_r(NULL, ",", &save)) {
		struct fake_gpu *g = &gpus[ngpus];
		char *procs = strchr(dev, ':'), *slash = strchr(dev, '/'), *s2 = NULL, *p;

		*g = (struct fake_gpu){.index = ngpus++, .util = (unsigned)atoi(dev)};
		if (slash && (!procs || slash < procs))
			g->mem_util = (unsigned)atoi(slash + 1);
		if (!procs)
			continue;
		for (p = strtok_r(procs + 1, "+", &s2); p; p = strtok_r(NULL, "+", &s2)) {
			if (strncmp(p, "RANK=", 5) == 0)
				add_rank(g, p + 5);
			else if (g->nprocs < MAX_PROCS)
				g->pids[g->nprocs++] = (unsigned)atoi(p);
		}
	}
}

nvmlReturn_t nvmlInit_v2(void)
{
	const char *fail = getenv("FAKE_NVML_INIT");

	if (fail && atoi(fail))
		return atoi(fail);
	fake_nvml_inited = 1;
	fake_scenario_load();
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void)
{
	if (!fake_nvml_inited)
		return NVML_ERROR_UNINITIALIZED;
	fake_nvml_inited = 0;
	return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t r)
{
	switch (r) {
	case NVML_SUCCESS:
		return "Success";
	case NVML_ERROR_UNINITIALIZED:
		return "Uninitialized";
	case NVML_ERROR_INVALID_ARGUMENT:
		return "Invalid Argument";
	case NVML_ERROR_NOT_SUPPORTED:
		return "Not Supported";
	case NVML_ERROR_NO_PERMISSION:
		return "Insufficient Permissions";
	case NVML_ERROR_INSUFFICIENT_SIZE:
		return "Insufficient Size";
	case NVML_ERROR_GPU_IS_LOST:
		return "GPU is lost";
	case NVML_ERROR_DRIVER_NOT_LOADED:
		return "Driver Not Loaded";
	default:
		return "Unknown Error";
	}
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
	if (!fake_nvml_inited)
		return NVML_ERROR_UNINITIALIZED;
	if (!version || length < 12)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	snprintf(version, length, "550.54.fake");
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
	if (!fake_nvml_inited)
		return NVML_ERROR_UNINITIALIZED;
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	load();
	*count = ngpus;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
	if (!fake_nvml_inited)
		return NVML_ERROR_UNINITIALIZED;
	load();
	if (index >= ngpus || !device)
		return NVML_ERROR_INVALID_ARGUMENT;
	*device = &gpus[index];
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
	nvmlReturn_t r = fake_gpu_call(device, NULL, "nvmlDeviceGetName");

	if (r != NVML_SUCCESS)
		return r;
	if (!name)
		return NVML_ERROR_INVALID_ARGUMENT;
	snprintf(name, length, "Fake GPU");
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
	nvmlReturn_t r = fake_gpu_call(device, NULL, "nvmlDeviceGetUUID");

	if (r != NVML_SUCCESS)
		return r;
	if (!uuid)
		return NVML_ERROR_INVALID_ARGUMENT;
	snprintf(uuid, length, "GPU-fa4e0000-0000-0000-0000-%012u", device->index);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
	nvmlReturn_t r = fake_gpu_call(device, NULL, "nvmlDeviceGetMemoryInfo");

	if (r != NVML_SUCCESS)
		return r;
	if (!memory)
		return NVML_ERROR_INVALID_ARGUMENT;
	memory->total = 80ull << 30;
	memory->used = (unsigned long long)device->nprocs << 30;
	memory->free = memory->total - memory->used;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization)
{
	if (!fake_nvml_inited)
		return NVML_ERROR_UNINITIALIZED;
	if (!device || !utilization)
		return NVML_ERROR_INVALID_ARGUMENT;
	utilization->gpu = device->util;
	utilization->memory = device->mem_util;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                     nvmlProcessInfo_t *infos)
{
	unsigned int have;

	if (!fake_nvml_inited)
		return NVML_ERROR_UNINITIALIZED;
	if (!device || !infoCount || (*infoCount && !infos))
		return NVML_ERROR_INVALID_ARGUMENT;
	have = *infoCount;
	*infoCount = device->nprocs;
	if (have < device->nprocs)
		return device->nprocs ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS;
	for (unsigned int i = 0; i < device->nprocs; i++)
		infos[i] = (nvmlProcessInfo_t){.pid = device->pids[i], .usedGpuMemory = 1ull << 30};
	return NVML_SUCCESS;
}
