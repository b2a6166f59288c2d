/* SPDX-License-Identifier: MIT */
/*
 * fake_nvml.h - what the two halves of the stand-in NVML share
 * (fake_nvml.c: devices, processes, utilisation; fake_nvml_health.c: the
 * health queries answered from a scenario file). Types and result codes are
 * NVML's documented API (docs.nvidia.com/deploy/nvml-api, "Error reporting").
 */
#ifndef FAKE_NVML_H
#define FAKE_NVML_H

typedef int nvmlReturn_t;
typedef struct fake_gpu *nvmlDevice_t;

enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_UNINITIALIZED = 1,
	NVML_ERROR_INVALID_ARGUMENT = 2,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_NO_PERMISSION = 4,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_ERROR_DRIVER_NOT_LOADED = 9,
	NVML_ERROR_GPU_IS_LOST = 15,
	NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
};

#define MAX_GPUS  16
#define MAX_PROCS 64

struct fake_gpu {
	unsigned int index, util, mem_util, nprocs;
	unsigned int pids[MAX_PROCS];
};

extern int fake_nvml_inited;

/* (Re)read $CLUSTERDOC_FAKE_NVML_SCENARIO (at nvmlInit_v2). */
void fake_scenario_load(void);

/* The GPU count the scenario gives ("count N"), 0 when it gives none. */
unsigned int fake_scenario_count(void);

/* What a call of function fn (of the health family fam, or NULL) on dev
 * answers before its own work: UNINITIALIZED, INVALID_ARGUMENT, GPU_IS_LOST,
 * after a scenario's hang, NOT_SUPPORTED or a scripted error; else SUCCESS. */
nvmlReturn_t fake_gpu_call(nvmlDevice_t dev, const char *fam, const char *fn);

#endif
