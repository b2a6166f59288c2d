/*
 * nvml.h - the slice of NVIDIA's NVML that clusterdoc uses, loaded with
 * dlopen() at run time (the agent never links it): the node facts' GPUs
 * (facts_gpu.c) and the GPU utilisation of a hung job's ranks
 * (hang/hang_agent_gpu.c).
 *
 * The signatures and structs are NVML's documented API
 * (docs.nvidia.com/deploy/nvml-api: "Device Queries", "Initialization and
 * Cleanup", "System Queries", and the structs nvmlMemory_t,
 * nvmlUtilization_t, nvmlProcessInfo_v1_t, nvmlProcessInfo_t), declared
 * here so that no CUDA header is needed: nvmlReturn_t is a C enum (int ABI,
 * 0 NVML_SUCCESS, 7 NVML_ERROR_INSUFFICIENT_SIZE), nvmlDevice_t an opaque
 * pointer.
 *
 * The library is "libnvidia-ml.so.1" through the dynamic loader, or the
 * path in CLUSTERDOC_NVML_LIB when that is set: the tests' stand-in
 * (tests/fakes/fake_nvml.c), as CLUSTERDOC_NCCL_LIB selects the NCCL one.
 */
#ifndef CD_PROBES_NVML_H
#define CD_PROBES_NVML_H

#include <stddef.h>

typedef int nvml_return;
typedef struct nvml_device_st *nvml_device;

struct nvml_memory { /* nvmlMemory_t (v1) */
	unsigned long long total, free, used;
};

struct nvml_utilization { /* nvmlUtilization_t: percent of the last sample period */
	unsigned int gpu, memory;
};

/* Buffer sizes: NVML's *_V2_BUFFER_SIZE constants. */
#define NVML_NAME_LEN   96
#define NVML_UUID_LEN   96
#define NVML_DRIVER_LEN 80

#define NVML_ERROR_INSUFFICIENT_SIZE 7

struct nvml {
	void *lib;
	nvml_return (*init)(void);
	nvml_return (*shutdown)(void);
	nvml_return (*get_count)(unsigned int *count);
	nvml_return (*get_handle)(unsigned int index, nvml_device *dev);
	nvml_return (*get_name)(nvml_device dev, char *name, unsigned int len);
	nvml_return (*get_memory)(nvml_device dev, struct nvml_memory *mem);
	nvml_return (*get_uuid)(nvml_device dev, char *uuid, unsigned int len);
	nvml_return (*get_driver)(char *version, unsigned int len);
	const char *(*error_string)(nvml_return r);                                  /* optional */
	nvml_return (*get_utilization)(nvml_device dev, struct nvml_utilization *u); /* optional */
	/* nvmlDeviceGetComputeRunningProcesses_v3 or _v2 (nvmlProcessInfo_t), else the
	 * first version (nvmlProcessInfo_v1_t: procs_v1 is then 1); optional */
	nvml_return (*get_procs)(nvml_device dev, unsigned int *count, void *infos);
	int procs_v1;
};

/*
 * Load NVML into n and initialise it (nvmlInit_v2). Returns 1 when it is
 * ready (nvml_close then shuts it down and unloads it); 0 when there is no
 * library (no NVIDIA driver on this node: not an error; *n is then closed);
 * CD_ERR_NOTFOUND when the library lacks a function that is not optional,
 * CD_ERR_IO when nvmlInit fails ("nvmlInit: <NVML's message>"), with the
 * detail in err.
 */
int nvml_open(struct nvml *n, char *err, size_t errlen);

/* Shut NVML down and unload it; a closed or zeroed n is a no-op. */
void nvml_close(struct nvml *n);

/* "<NVML's message> (NVML error N)" into buf; returns buf. */
const char *nvml_error(const struct nvml *n, nvml_return r, char *buf, size_t len);

/*
 * The PIDs of the compute processes on dev (at most cap, into pids) and
 * their GPU memory (used, may be NULL) into *count. Returns 0, or
 * CD_ERR_UNSUPPORTED when the library has no such query, or CD_ERR_IO with
 * NVML's message in err.
 */
int nvml_device_pids(const struct nvml *n, nvml_device dev, unsigned int *pids,
                     unsigned long long *used, size_t cap, size_t *count, char *err, size_t errlen);

#endif
