/* SPDX-License-Identifier: MIT */
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
 * The GPU health queries (struct nvml_health below, read by
 * facts_gpu_health.c) are NVML's documented "Device Queries" sections
 * "ECC", "PCI", "NvLink Methods", "Clocks", "Power", "Temperature",
 * "Page Retirement", "Row Remapping" (nvmlDeviceGetRemappedRows),
 * "Multi Instance GPU Management" (nvmlDeviceGetMigMode) and the
 * "Clocks Event Reasons" constants (nvmlClocksEventReasons, formerly
 * nvmlClocksThrottleReasons); the enums they take are "Device Enums"
 * (nvmlEnableState_t, nvmlMemoryErrorType_t, nvmlEccCounterType_t,
 * nvmlClockType_t, nvmlTemperatureSensors_t, nvmlTemperatureThresholds_t,
 * nvmlComputeMode_t, nvmlPageRetirementCause_t, nvmlNvLinkErrorCounter_t).
 * Every one of them is optional: an older driver that lacks a symbol is a
 * GPU whose fact is "unsupported", never a failure to load.
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

/* The entries nvmlDeviceGetComputeRunningProcesses fills: nvmlProcessInfo_v1_t
 * (the first version), and nvmlProcessInfo_t, which is nvmlProcessInfo_v2_t
 * (_v2 and _v3). */
struct nvml_proc_v1 {
	unsigned int pid;
	unsigned long long used;
};
struct nvml_proc_v2 {
	unsigned int pid;
	unsigned long long used;
	unsigned int gpu_instance, compute_instance;
};

/* Buffer sizes: NVML's *_V2_BUFFER_SIZE constants. */
#define NVML_NAME_LEN   96
#define NVML_UUID_LEN   96
#define NVML_DRIVER_LEN 80

/* nvmlReturn_t values ("Error reporting") */
#define NVML_ERROR_INVALID_ARGUMENT   2
#define NVML_ERROR_NOT_SUPPORTED      3
#define NVML_ERROR_INSUFFICIENT_SIZE  7
#define NVML_ERROR_FUNCTION_NOT_FOUND 13
#define NVML_ERROR_GPU_IS_LOST        15

/* Enum values of the health queries ("Device Enums", "Constants") */
#define NVML_MEMORY_ERROR_TYPE_CORRECTED                          0 /* nvmlMemoryErrorType_t */
#define NVML_MEMORY_ERROR_TYPE_UNCORRECTED                        1
#define NVML_VOLATILE_ECC                                         0 /* nvmlEccCounterType_t */
#define NVML_AGGREGATE_ECC                                        1
#define NVML_CLOCK_SM                                             1 /* nvmlClockType_t */
#define NVML_CLOCK_MEM                                            2
#define NVML_TEMPERATURE_GPU                                      0 /* nvmlTemperatureSensors_t */
#define NVML_TEMPERATURE_THRESHOLD_SLOWDOWN                       1 /* nvmlTemperatureThresholds_t */
#define NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS 0
#define NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR           1
#define NVML_NVLINK_ERROR_DL_REPLAY                               0 /* nvmlNvLinkErrorCounter_t */
#define NVML_NVLINK_ERROR_DL_RECOVERY                             1
#define NVML_NVLINK_ERROR_DL_CRC_FLIT                             2
#define NVML_NVLINK_ERROR_DL_CRC_DATA                             3
#define NVML_NVLINK_ERROR_DL_ECC_DATA                             4
#define NVML_ERROR_ARGUMENT_VERSION_MISMATCH                      25 /* nvmlReturn_t */
#define NVML_COMPUTEMODE_DEFAULT                                  0  /* nvmlComputeMode_t */
#define NVML_COMPUTEMODE_EXCLUSIVE_THREAD                         1
#define NVML_COMPUTEMODE_PROHIBITED                               2
#define NVML_COMPUTEMODE_EXCLUSIVE_PROCESS                        3
#define NVML_DEVICE_MIG_DISABLE                                   0 /* nvmlDeviceGetMigMode */

/* The nvmlClocksEventReasons bits (nvmlClocksEventReason*, formerly
 * nvmlClocksThrottleReason*) of nvmlDeviceGetCurrentClocksEventReasons. */
#define NVML_CLOCKS_REASON_GPU_IDLE            0x1ull
#define NVML_CLOCKS_REASON_APPLICATIONS_CLOCKS 0x2ull
#define NVML_CLOCKS_REASON_SW_POWER_CAP        0x4ull
#define NVML_CLOCKS_REASON_HW_SLOWDOWN         0x8ull
#define NVML_CLOCKS_REASON_SYNC_BOOST          0x10ull
#define NVML_CLOCKS_REASON_SW_THERMAL_SLOWDOWN 0x20ull
#define NVML_CLOCKS_REASON_HW_THERMAL_SLOWDOWN 0x40ull
#define NVML_CLOCKS_REASON_HW_POWER_BRAKE      0x80ull
#define NVML_CLOCKS_REASON_DISPLAY_CLOCKS      0x100ull

/* The links asked for, 0.. until one answers that there is no such link:
 * NVML_NVLINK_MAX_LINKS is 18 in the headers of CUDA 12.x and 13.0 (H100,
 * H200, GB200 have 18) and 36 from CUDA 13.3's; the larger bound costs a
 * GPU with fewer links nothing. */
#define CD_NVLINK_PROBE_MAX 36

/* nvmlTemperature_t (v1) of nvmlDeviceGetTemperatureV (NVML 12.8 and later,
 * which deprecates nvmlDeviceGetTemperature in 13.0): its version is
 * NVML_STRUCT_VERSION(Temperature, 1), the struct's size | 1 << 24. */
struct nvml_temperature {
	unsigned int version;
	int sensor_type; /* nvmlTemperatureSensors_t */
	int temperature; /* degrees C, signed */
};
#define NVML_TEMPERATURE_V1 ((unsigned int)(sizeof(struct nvml_temperature) | 1u << 24))

/* nvmlPciInfo_t as nvmlDeviceGetPciInfo_v2 and _v3 fill it: busId is
 * "DDDDDDDD:BB:DD.F" (NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32). */
struct nvml_pci_info {
	char bus_id_legacy[16];
	unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
	char bus_id[32];
};

/*
 * The health queries, each NULL when the library lacks it. Where NVML has
 * versions, the newest the library has is taken (the names in nvml.c's
 * table, newest first). The enum arguments are C enums (int ABI) and are
 * passed as int; nvmlEnableState_t answers are 0 disabled, 1 enabled.
 */
struct nvml_health {
	nvml_return (*pci_info)(nvml_device dev, struct nvml_pci_info *pci); /* _v3, _v2 */
	nvml_return (*numa_node)(nvml_device dev, unsigned int *node);
	nvml_return (*ecc_mode)(nvml_device dev, int *current, int *pending);
	nvml_return (*ecc_total)(nvml_device dev, int error_type, int counter_type,
	                         unsigned long long *count);
	/* nvmlDeviceGetRetiredPages_v2 (timestamps), else nvmlDeviceGetRetiredPages */
	nvml_return (*retired_pages_v2)(nvml_device dev, int cause, unsigned int *count,
	                                unsigned long long *addresses,
	                                unsigned long long *timestamps);
	nvml_return (*retired_pages)(nvml_device dev, int cause, unsigned int *count,
	                             unsigned long long *addresses);
	nvml_return (*retired_pending)(nvml_device dev, int *pending);
	nvml_return (*remapped_rows)(nvml_device dev, unsigned int *corrected,
	                             unsigned int *uncorrected, unsigned int *pending,
	                             unsigned int *failure);
	nvml_return (*pcie_gen)(nvml_device dev, unsigned int *gen);
	/* nvmlDeviceGetMaxPcieLinkGeneration (the GPU's and the system's), else
	 * nvmlDeviceGetGpuMaxPcieLinkGeneration (the GPU's) */
	nvml_return (*pcie_gen_max)(nvml_device dev, unsigned int *gen);
	nvml_return (*pcie_width)(nvml_device dev, unsigned int *width);
	nvml_return (*pcie_width_max)(nvml_device dev, unsigned int *width);
	nvml_return (*nvlink_state)(nvml_device dev, unsigned int link, int *active);
	nvml_return (*nvlink_errors)(nvml_device dev, unsigned int link, int counter,
	                             unsigned long long *value);
	nvml_return (*clock)(nvml_device dev, int type, unsigned int *mhz);
	nvml_return (*clock_max)(nvml_device dev, int type, unsigned int *mhz);
	/* nvmlDeviceGetCurrentClocksEventReasons, else ...ClocksThrottleReasons */
	nvml_return (*clock_reasons)(nvml_device dev, unsigned long long *reasons);
	/* nvmlDeviceGetTemperatureV, else nvmlDeviceGetTemperature */
	nvml_return (*temperature_v)(nvml_device dev, struct nvml_temperature *t);
	nvml_return (*temperature)(nvml_device dev, int sensor, unsigned int *celsius);
	nvml_return (*temperature_threshold)(nvml_device dev, int threshold, unsigned int *celsius);
	nvml_return (*power_usage)(nvml_device dev, unsigned int *milliwatts);
	nvml_return (*power_limit)(nvml_device dev, unsigned int *milliwatts);
	nvml_return (*persistence)(nvml_device dev, int *mode);
	nvml_return (*compute_mode)(nvml_device dev, int *mode);
	nvml_return (*mig_mode)(nvml_device dev, unsigned int *current, unsigned int *pending);
};

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
	struct nvml_health h; /* every one optional */
};

/*
 * Load NVML into n and initialise it (nvmlInit_v2). Returns 1 when it is
 * ready (nvml_close then shuts it down and unloads it); 0 when there is no
 * library (no NVIDIA driver on this node: not an error; *n is then closed,
 * and err says why the loader found none);
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
