/* SPDX-License-Identifier: MIT */
/*
 * fake_nvml_health.c - the stand-in NVML's health queries (the other half
 * of tests/fakes/fake_nvml.c), each with the signature, the enum values and
 * the result codes of NVML's documented API (docs.nvidia.com/deploy/
 * nvml-api, "Device Queries"):
 *   PCI:      nvmlDeviceGetPciInfo_v3 / _v2 (nvmlPciInfo_t), nvmlDeviceGetNumaNodeId,
 *             nvmlDeviceGetCurrPcieLinkGeneration, nvmlDeviceGetMaxPcieLinkGeneration,
 *             nvmlDeviceGetGpuMaxPcieLinkGeneration, nvmlDeviceGetCurrPcieLinkWidth,
 *             nvmlDeviceGetMaxPcieLinkWidth
 *   ECC:      nvmlDeviceGetEccMode, nvmlDeviceGetTotalEccErrors (nvmlMemoryErrorType_t,
 *             nvmlEccCounterType_t)
 *   Page Retirement: nvmlDeviceGetRetiredPages / _v2 (nvmlPageRetirementCause_t;
 *             INSUFFICIENT_SIZE with the count when the array is too small;
 *             INVALID_ARGUMENT for a NULL pageCount, addresses or timestamps,
 *             as the header's return codes list them),
 *             nvmlDeviceGetRetiredPagesPendingStatus
 *   Row Remapping: nvmlDeviceGetRemappedRows
 *   NvLink:   nvmlDeviceGetNvLinkState, nvmlDeviceGetNvLinkErrorCounter
 *             (nvmlNvLinkErrorCounter_t 0..4, DL_REPLAY to DL_ECC_DATA; a link past
 *             the last, or a counter the GPU does not keep: INVALID_ARGUMENT)
 *   Clocks:   nvmlDeviceGetClockInfo, nvmlDeviceGetMaxClockInfo (nvmlClockType_t),
 *             nvmlDeviceGetCurrentClocksEventReasons / ...ClocksThrottleReasons
 *   Temperature: nvmlDeviceGetTemperatureV (nvmlTemperature_t v1; another
 *             version: ARGUMENT_VERSION_MISMATCH), nvmlDeviceGetTemperature,
 *             nvmlDeviceGetTemperatureThreshold
 *   Power:    nvmlDeviceGetPowerUsage, nvmlDeviceGetEnforcedPowerLimit (milliwatts)
 *   Modes:    nvmlDeviceGetPersistenceMode, nvmlDeviceGetComputeMode,
 *             nvmlDeviceGetMigMode ("Multi Instance GPU Management")
 * Built with -DFAKE_NVML_OLD it is an older driver's library: no _v3 PCI
 * query, no NUMA node, no _v2 retired pages, no remapped rows, no
 * ClocksEventReasons (only ClocksThrottleReasons), no MIG mode, no
 * TemperatureV.
 *
 * The answers: a healthy H200-like GPU, changed per GPU by the scenario file
 * $CLUSTERDOC_FAKE_NVML_SCENARIO (read at nvmlInit_v2), one directive a
 * line, '#' starts a comment:
 *   count N                          N GPUs when FAKE_NVML_DEVICES/FILE say none
 *   gpu I KEY VALUE                  a value (keys below)
 *   gpu I nvlink L up|down           link L's state
 *   gpu I nvlink L COUNTER N         replay, recovery, crc_flit, crc_data or ecc_data
 *   gpu I nvlink_invalid COUNTER     COUNTER answers INVALID_ARGUMENT on every link
 *   gpu I lost [AFTER]               NVML_ERROR_GPU_IS_LOST from the device's call
 *                                    AFTER on (0: every call)
 *   gpu I unsupported FAMILY         the family's functions answer NOT_SUPPORTED
 *   gpu I error FUNCTION CODE        FUNCTION answers nvmlReturn_t CODE
 *   gpu I hang FUNCTION [SECONDS]    FUNCTION sleeps SECONDS (3600) first
 *   gpu I crash FUNCTION             FUNCTION dies of SIGSEGV (a crashing driver library)
 *   wedge                            once a hang has begun, the driver stays stuck: a
 *                                    later nvmlInit_v2 (another process) sleeps too
 *                                    (the file SCENARIO.wedged says it has begun)
 * FAMILY is a key of the facts' "health" object (pci_bus_id, numa_node, ecc,
 * retired_pages, row_remap, pcie, nvlink, clocks_mhz, throttle,
 * temperature_c, temperature_slowdown_c, power_w, power_limit_w,
 * persistence, compute_mode, mig). KEY is one of vals[] below (numbers,
 * 0x hex, on/off, true/false, or a compute mode's name).
 */
#include "fake_nvml.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_LINKS  36 /* NVML_NVLINK_MAX_LINKS of CUDA 13.3's header */
#define H200_LINKS 18 /* an H200 SXM's NVLink links */
#define NCOUNTERS  5  /* nvmlNvLinkErrorCounter_t: DL_REPLAY .. DL_ECC_DATA */

typedef struct {
	char busIdLegacy[16];
	unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
	char busId[32];
} nvmlPciInfo_t;

/* The scenario's values, by name; default is a healthy GPU. */
static const struct val {
	const char *key, *family;
	double def;
} vals[] = {
    {"pci.bus", "pci_bus_id", -1}, /* -1: 0x18 + 0x10 x the index */
    {"numa_node", "numa_node", 0},
    {"ecc.mode", "ecc", 1},
    {"ecc.volatile.corrected", "ecc", 0},
    {"ecc.volatile.uncorrected", "ecc", 0},
    {"ecc.aggregate.corrected", "ecc", 0},
    {"ecc.aggregate.uncorrected", "ecc", 0},
    {"retired_pages.pending", "retired_pages", 0},
    {"retired_pages.count", "retired_pages", 0},
    {"row_remap.pending", "row_remap", 0},
    {"row_remap.failure", "row_remap", 0},
    {"row_remap.corrected", "row_remap", 0},
    {"row_remap.uncorrected", "row_remap", 0},
    {"pcie.gen", "pcie", 5},
    {"pcie.gen_max", "pcie", 5},
    {"pcie.width", "pcie", 16},
    {"pcie.width_max", "pcie", 16},
    {"nvlink.links", "nvlink", H200_LINKS},
    {"clocks_mhz.sm", "clocks_mhz", 1980},
    {"clocks_mhz.mem", "clocks_mhz", 3201},
    {"clocks_mhz.sm_max", "clocks_mhz", 1980},
    {"clocks_mhz.mem_max", "clocks_mhz", 3201},
    {"throttle", "throttle", 0x1},
    {"temperature_c", "temperature_c", 35},
    {"temperature_slowdown_c", "temperature_slowdown_c", 87},
    {"power_w", "power_w", 75},
    {"power_limit_w", "power_limit_w", 700},
    {"persistence", "persistence", 1},
    {"compute_mode", "compute_mode", 0},
    {"mig", "mig", 0},
};
#define NVALS (sizeof(vals) / sizeof(vals[0]))

enum {
	V_BUS,
	V_NUMA,
	V_ECC_MODE,
	V_ECC_VC,
	V_ECC_VU,
	V_ECC_AC,
	V_ECC_AU,
	V_RP_PENDING,
	V_RP_COUNT,
	V_RR_PENDING,
	V_RR_FAILURE,
	V_RR_CORR,
	V_RR_UNC,
	V_GEN,
	V_GEN_MAX,
	V_WIDTH,
	V_WIDTH_MAX,
	V_LINKS,
	V_SM,
	V_MEM,
	V_SM_MAX,
	V_MEM_MAX,
	V_THROTTLE,
	V_TEMP,
	V_SLOWDOWN,
	V_POWER,
	V_POWER_LIMIT,
	V_PERSISTENCE,
	V_COMPUTE,
	V_MIG
};

struct hgpu {
	double v[NVALS];
	int lost;            /* lost_after is set */
	unsigned lost_after; /* calls answered before the loss */
	unsigned calls;
	char unsupported[16][32];
	unsigned nunsupported;
	char err_fn[64], hang_fn[64], crash_fn[64];
	int err_code;
	unsigned hang_s;
	int link_down[MAX_LINKS];
	unsigned long long link_err[MAX_LINKS][NCOUNTERS];
	unsigned counter_invalid; /* bit C: counter C answers INVALID_ARGUMENT */
};

static struct hgpu hg[MAX_GPUS];
static unsigned int scenario_count;
static int wedge;             /* the scenario's "wedge" */
static char wedged_path[600]; /* SCENARIO.wedged */

static double parse_value(const char *s)
{
	static const char *const modes[] = {"default", "exclusive_thread", "prohibited",
	                                    "exclusive_process"};

	if (!strcmp(s, "on") || !strcmp(s, "true"))
		return 1;
	if (!strcmp(s, "off") || !strcmp(s, "false"))
		return 0;
	for (unsigned i = 0; i < 4; i++)
		if (!strcmp(s, modes[i]))
			return i;
	if (!strncmp(s, "0x", 2))
		return (double)strtoull(s, NULL, 16);
	return strtod(s, NULL);
}

static const char *const counters[NCOUNTERS] = {"replay", "recovery", "crc_flit", "crc_data",
                                                "ecc_data"};

/* One "gpu I ..." directive, w[0..n) its words after "gpu". */
static void gpu_line(char **w, int n)
{
	struct hgpu *g;
	unsigned i;

	if (n < 2 || (i = (unsigned)atoi(w[0])) >= MAX_GPUS)
		return;
	g = &hg[i];
	if (!strcmp(w[1], "lost")) {
		g->lost = 1;
		g->lost_after = n > 2 ? (unsigned)atoi(w[2]) : 0;
	} else if (!strcmp(w[1], "unsupported") && n > 2 && g->nunsupported < 16) {
		snprintf(g->unsupported[g->nunsupported++], 32, "%s", w[2]);
	} else if (!strcmp(w[1], "error") && n > 3) {
		snprintf(g->err_fn, sizeof(g->err_fn), "%s", w[2]);
		g->err_code = atoi(w[3]);
	} else if (!strcmp(w[1], "crash") && n > 2) {
		snprintf(g->crash_fn, sizeof(g->crash_fn), "%s", w[2]);
	} else if (!strcmp(w[1], "hang") && n > 2) {
		snprintf(g->hang_fn, sizeof(g->hang_fn), "%s", w[2]);
		g->hang_s = n > 3 ? (unsigned)atoi(w[3]) : 3600;
	} else if (!strcmp(w[1], "nvlink") && n > 3 && (unsigned)atoi(w[2]) < MAX_LINKS) {
		unsigned l = (unsigned)atoi(w[2]);

		if (!strcmp(w[3], "up") || !strcmp(w[3], "down"))
			g->link_down[l] = !strcmp(w[3], "down");
		for (unsigned c = 0; c < NCOUNTERS && n > 4; c++)
			if (!strcmp(w[3], counters[c]))
				g->link_err[l][c] = strtoull(w[4], NULL, 0);
	} else if (!strcmp(w[1], "nvlink_invalid") && n > 2) {
		for (unsigned c = 0; c < NCOUNTERS; c++)
			if (!strcmp(w[2], counters[c]))
				g->counter_invalid |= 1u << c;
	} else if (n > 2) {
		for (unsigned k = 0; k < NVALS; k++)
			if (!strcmp(w[1], vals[k].key))
				g->v[k] = parse_value(w[2]);
	}
}

void fake_scenario_load(void)
{
	const char *path = getenv("CLUSTERDOC_FAKE_NVML_SCENARIO");
	char line[512];
	FILE *f;

	memset(hg, 0, sizeof(hg));
	wedge = 0;
	scenario_count = 0;
	for (unsigned i = 0; i < MAX_GPUS; i++)
		for (unsigned k = 0; k < NVALS; k++)
			hg[i].v[k] = vals[k].def;
	if (!path || !*path || !(f = fopen(path, "r")))
		return;
	while (fgets(line, sizeof(line), f)) {
		char *w[8], *save = NULL, *t;
		int n = 0;

		line[strcspn(line, "#\n")] = '\0';
		for (t = strtok_r(line, " \t", &save); t && n < 8; t = strtok_r(NULL, " \t", &save))
			w[n++] = t;
		if (n == 2 && !strcmp(w[0], "count"))
			scenario_count = (unsigned)atoi(w[1]);
		else if (n == 1 && !strcmp(w[0], "wedge"))
			wedge = 1;
		else if (n > 1 && !strcmp(w[0], "gpu"))
			gpu_line(w + 1, n - 1);
	}
	fclose(f);
	snprintf(wedged_path, sizeof(wedged_path), "%s.wedged", path);
	if (wedge && access(wedged_path, F_OK) == 0)
		sleep(3600); /* nvmlInit_v2 of a driver that a hang left stuck */
}

unsigned int fake_scenario_count(void)
{
	return scenario_count;
}

nvmlReturn_t fake_gpu_call(nvmlDevice_t dev, const char *fam, const char *fn)
{
	struct hgpu *g;

	if (!fake_nvml_inited)
		return NVML_ERROR_UNINITIALIZED;
	if (!dev || dev->index >= MAX_GPUS)
		return NVML_ERROR_INVALID_ARGUMENT;
	g = &hg[dev->index];
	if (g->lost && g->calls++ >= g->lost_after)
		return NVML_ERROR_GPU_IS_LOST;
	if (g->crash_fn[0] && !strcmp(g->crash_fn, fn)) {
		signal(SIGSEGV, SIG_DFL);
		raise(SIGSEGV);
	}
	if (g->hang_fn[0] && !strcmp(g->hang_fn, fn)) {
		FILE *m = wedge ? fopen(wedged_path, "w") : NULL;

		if (m)
			fclose(m);
		sleep(g->hang_s);
	}
	for (unsigned i = 0; fam && i < g->nunsupported; i++)
		if (!strcmp(g->unsupported[i], fam))
			return NVML_ERROR_NOT_SUPPORTED;
	if (g->err_fn[0] && !strcmp(g->err_fn, fn))
		return g->err_code;
	return NVML_SUCCESS;
}

/* The preamble of every query: the scenario's say first, then the pointer. */
#define CALL(dev, fam, fn, out)                                      \
	do {                                                         \
		nvmlReturn_t r_ = fake_gpu_call((dev), (fam), (fn)); \
		if (r_ != NVML_SUCCESS)                              \
			return r_;                                   \
		if (!(out))                                          \
			return NVML_ERROR_INVALID_ARGUMENT;          \
	} while (0)

#define V(dev, k) (hg[(dev)->index].v[k])

/* Each query declared, as NVML's header does, before its definition. */
#define UINT_QUERY(name, fam, expr)                                \
	nvmlReturn_t name(nvmlDevice_t device, unsigned int *out); \
	nvmlReturn_t name(nvmlDevice_t device, unsigned int *out)  \
	{                                                          \
		CALL(device, fam, #name, out);                     \
		*out = (unsigned int)(expr);                       \
		return NVML_SUCCESS;                               \
	}

static unsigned int bus_of(nvmlDevice_t device)
{
	return V(device, V_BUS) >= 0 ? (unsigned int)V(device, V_BUS) : 0x18 + device->index * 0x10;
}

#ifndef FAKE_NVML_OLD
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci);
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
	CALL(device, "pci_bus_id", "nvmlDeviceGetPciInfo_v3", pci);
	memset(pci, 0, sizeof(*pci));
	pci->bus = bus_of(device);
	pci->pciDeviceId = 0x233510de; /* H200's device id, NVIDIA's vendor id */
	snprintf(pci->busId, sizeof(pci->busId), "00000000:%02X:00.0", pci->bus);
	snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "0000:%02X:00.0", pci->bus);
	return NVML_SUCCESS;
}

UINT_QUERY(nvmlDeviceGetNumaNodeId, "numa_node", V(device, V_NUMA))
#endif

nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_t *pci);
nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
	CALL(device, "pci_bus_id", "nvmlDeviceGetPciInfo_v2", pci);
	memset(pci, 0, sizeof(*pci));
	pci->bus = bus_of(device);
	snprintf(pci->busId, sizeof(pci->busId), "00000000:%02X:00.0", pci->bus);
	snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "0000:%02X:00.0", pci->bus);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t device, int *current, int *pending);
nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t device, int *current, int *pending)
{
	CALL(device, "ecc", "nvmlDeviceGetEccMode", current && pending);
	*current = *pending = V(device, V_ECC_MODE) != 0;
	return NVML_SUCCESS;
}

/* errorType: 0 corrected, 1 uncorrected; counterType: 0 volatile, 1 aggregate */
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, int errorType, int counterType,
                                         unsigned long long *eccCounts);
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, int errorType, int counterType,
                                         unsigned long long *eccCounts)
{
	CALL(device, "ecc", "nvmlDeviceGetTotalEccErrors", eccCounts);
	if (errorType < 0 || errorType > 1 || counterType < 0 || counterType > 1)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!V(device, V_ECC_MODE))
		return NVML_ERROR_NOT_SUPPORTED;
	*eccCounts = (unsigned long long)V(device, V_ECC_VC + counterType * 2 + errorType);
	return NVML_SUCCESS;
}

/* cause 0: multiple single-bit errors (none here), 1: a double-bit error */
static nvmlReturn_t retired(nvmlDevice_t device, const char *fn, int cause, unsigned int *count,
                            unsigned long long *addresses)
{
	unsigned int have;

	CALL(device, "retired_pages", fn, count);
	if (!addresses)
		return NVML_ERROR_INVALID_ARGUMENT;
	have = cause == 1 ? (unsigned int)V(device, V_RP_COUNT) : 0;
	if (*count < have) {
		*count = have;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	for (unsigned int i = 0; addresses && i < have; i++)
		addresses[i] = 0x100000ull * (i + 1);
	*count = have;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t device, int cause, unsigned int *pageCount,
                                       unsigned long long *addresses);
nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t device, int cause, unsigned int *pageCount,
                                       unsigned long long *addresses)
{
	return retired(device, "nvmlDeviceGetRetiredPages", cause, pageCount, addresses);
}

#ifndef FAKE_NVML_OLD
nvmlReturn_t nvmlDeviceGetRetiredPages_v2(nvmlDevice_t device, int cause, unsigned int *pageCount,
                                          unsigned long long *addresses,
                                          unsigned long long *timestamps);
nvmlReturn_t nvmlDeviceGetRetiredPages_v2(nvmlDevice_t device, int cause, unsigned int *pageCount,
                                          unsigned long long *addresses,
                                          unsigned long long *timestamps)
{
	nvmlReturn_t r;

	if (!timestamps)
		return NVML_ERROR_INVALID_ARGUMENT;
	r = retired(device, "nvmlDeviceGetRetiredPages_v2", cause, pageCount, addresses);

	for (unsigned int i = 0; r == NVML_SUCCESS && timestamps && i < *pageCount; i++)
		timestamps[i] = 1700000000ull + i;
	return r;
}

nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned int *corrRows,
                                       unsigned int *uncRows, unsigned int *isPending,
                                       unsigned int *failureOccurred);
nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned int *corrRows,
                                       unsigned int *uncRows, unsigned int *isPending,
                                       unsigned int *failureOccurred)
{
	CALL(device, "row_remap", "nvmlDeviceGetRemappedRows",
	     corrRows && uncRows && isPending && failureOccurred);
	*corrRows = (unsigned int)V(device, V_RR_CORR);
	*uncRows = (unsigned int)V(device, V_RR_UNC);
	*isPending = (unsigned int)V(device, V_RR_PENDING);
	*failureOccurred = (unsigned int)V(device, V_RR_FAILURE);
	return NVML_SUCCESS;
}
#endif

/* nvmlEnableState_t answers */
#define ENABLE_QUERY(name, fam, expr)                     \
	nvmlReturn_t name(nvmlDevice_t device, int *out); \
	nvmlReturn_t name(nvmlDevice_t device, int *out)  \
	{                                                 \
		CALL(device, fam, #name, out);            \
		*out = (expr) != 0;                       \
		return NVML_SUCCESS;                      \
	}

ENABLE_QUERY(nvmlDeviceGetRetiredPagesPendingStatus, "retired_pages", V(device, V_RP_PENDING))
ENABLE_QUERY(nvmlDeviceGetPersistenceMode, "persistence", V(device, V_PERSISTENCE))
UINT_QUERY(nvmlDeviceGetCurrPcieLinkGeneration, "pcie", V(device, V_GEN))
UINT_QUERY(nvmlDeviceGetMaxPcieLinkGeneration, "pcie", V(device, V_GEN_MAX))
UINT_QUERY(nvmlDeviceGetGpuMaxPcieLinkGeneration, "pcie", V(device, V_GEN_MAX))
UINT_QUERY(nvmlDeviceGetCurrPcieLinkWidth, "pcie", V(device, V_WIDTH))
UINT_QUERY(nvmlDeviceGetMaxPcieLinkWidth, "pcie", V(device, V_WIDTH_MAX))
UINT_QUERY(nvmlDeviceGetPowerUsage, "power_w", V(device, V_POWER) * 1000)
UINT_QUERY(nvmlDeviceGetEnforcedPowerLimit, "power_limit_w", V(device, V_POWER_LIMIT) * 1000)

nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t device, int *mode);
nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t device, int *mode)
{
	CALL(device, "compute_mode", "nvmlDeviceGetComputeMode", mode);
	*mode = (int)V(device, V_COMPUTE);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link, int *isActive);
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link, int *isActive)
{
	CALL(device, "nvlink", "nvmlDeviceGetNvLinkState", isActive);
	if (V(device, V_LINKS) == 0)
		return NVML_ERROR_NOT_SUPPORTED;
	if (link >= V(device, V_LINKS))
		return NVML_ERROR_INVALID_ARGUMENT;
	*isActive = !hg[device->index].link_down[link];
	return NVML_SUCCESS;
}

/* counter: 0 DL_REPLAY, 1 DL_RECOVERY, 2 DL_CRC_FLIT, 3 DL_CRC_DATA, 4 DL_ECC_DATA */
nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t device, unsigned int link, int counter,
                                             unsigned long long *counterValue);
nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t device, unsigned int link, int counter,
                                             unsigned long long *counterValue)
{
	CALL(device, "nvlink", "nvmlDeviceGetNvLinkErrorCounter", counterValue);
	if (link >= V(device, V_LINKS) || counter < 0 ||
	    (counter < NCOUNTERS && hg[device->index].counter_invalid & 1u << counter))
		return NVML_ERROR_INVALID_ARGUMENT;
	if (counter >= NCOUNTERS)
		return NVML_ERROR_NOT_SUPPORTED;
	*counterValue = hg[device->index].link_err[link][counter];
	return NVML_SUCCESS;
}

/* type: 1 NVML_CLOCK_SM, 2 NVML_CLOCK_MEM */
static nvmlReturn_t clock_of(nvmlDevice_t device, const char *fn, int type, int max,
                             unsigned int *clockMHz)
{
	CALL(device, "clocks_mhz", fn, clockMHz);
	if (type != 1 && type != 2)
		return NVML_ERROR_NOT_SUPPORTED;
	*clockMHz = (unsigned int)V(device, (type == 1 ? V_SM : V_MEM) + (max ? 2 : 0));
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, int type, unsigned int *clockMHz);
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, int type, unsigned int *clockMHz)
{
	return clock_of(device, "nvmlDeviceGetClockInfo", type, 0, clockMHz);
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, int type, unsigned int *clockMHz);
nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, int type, unsigned int *clockMHz)
{
	return clock_of(device, "nvmlDeviceGetMaxClockInfo", type, 1, clockMHz);
}

#ifndef FAKE_NVML_OLD
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                    unsigned long long *reasons);
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                    unsigned long long *reasons)
{
	CALL(device, "throttle", "nvmlDeviceGetCurrentClocksEventReasons", reasons);
	*reasons = (unsigned long long)V(device, V_THROTTLE);
	return NVML_SUCCESS;
}
#endif

nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
                                                       unsigned long long *reasons);
nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
                                                       unsigned long long *reasons)
{
	CALL(device, "throttle", "nvmlDeviceGetCurrentClocksThrottleReasons", reasons);
	*reasons = (unsigned long long)V(device, V_THROTTLE);
	return NVML_SUCCESS;
}

/* sensorType: 0 NVML_TEMPERATURE_GPU */
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, int sensorType, unsigned int *temp);
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, int sensorType, unsigned int *temp)
{
	CALL(device, "temperature_c", "nvmlDeviceGetTemperature", temp);
	if (sensorType != 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	*temp = (unsigned int)V(device, V_TEMP);
	return NVML_SUCCESS;
}

#ifndef FAKE_NVML_OLD
/* nvmlTemperature_t v1: {version, sensorType, temperature (signed)} */
typedef struct {
	unsigned int version;
	int sensorType;
	int temperature;
} nvmlTemperature_t;
#define nvmlTemperature_v1 ((unsigned int)(sizeof(nvmlTemperature_t) | 1u << 24))

nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t device, nvmlTemperature_t *temperature);
nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t device, nvmlTemperature_t *temperature)
{
	CALL(device, "temperature_c", "nvmlDeviceGetTemperatureV", temperature);
	if (temperature->version != nvmlTemperature_v1)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	if (temperature->sensorType != 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	temperature->temperature = (int)V(device, V_TEMP);
	return NVML_SUCCESS;
}
#endif

/* thresholdType: 1 NVML_TEMPERATURE_THRESHOLD_SLOWDOWN (0 SHUTDOWN: +5 here) */
nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t device, int thresholdType,
                                               unsigned int *temp);
nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t device, int thresholdType,
                                               unsigned int *temp)
{
	CALL(device, "temperature_slowdown_c", "nvmlDeviceGetTemperatureThreshold", temp);
	if (thresholdType != 0 && thresholdType != 1)
		return NVML_ERROR_NOT_SUPPORTED;
	*temp = (unsigned int)V(device, V_SLOWDOWN) + (thresholdType == 0 ? 5 : 0);
	return NVML_SUCCESS;
}

#ifndef FAKE_NVML_OLD
/* NVML_DEVICE_MIG_DISABLE 0, NVML_DEVICE_MIG_ENABLE 1 */
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *currentMode,
                                  unsigned int *pendingMode);
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *currentMode,
                                  unsigned int *pendingMode)
{
	CALL(device, "mig", "nvmlDeviceGetMigMode", currentMode && pendingMode);
	*currentMode = *pendingMode = (unsigned int)V(device, V_MIG);
	return NVML_SUCCESS;
}
#endif
