/* SPDX-License-Identifier: MIT */
/* facts_gpu_health.c - one GPU's health through NVML (see facts_gpu_health.h):
 * one step per key, each a few optional NVML queries. */
#include "probes/facts_gpu_health.h"
#include "probes/facts.h"
#include "cd.h"
#include "scan.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One GPU's queries: the step that fails names its function in fn. */
struct hq {
	const struct nvml *n;
	const struct nvml_health *h;
	nvml_device dev;
	json_t *health;
	const char *fn;
	const char *key; /* the step's key */
	char bdf[16];    /* sysfs's "0000:18:00.0", from pci_bus_id; "" when unknown */
	const struct gpu_watch *watch;
};

/* Name the query about to be made, to whoever watches for one that hangs. */
static void asking(struct hq *q, const char *fn)
{
	q->fn = fn;
	if (q->watch && q->watch->asking)
		q->watch->asking(q->watch->arg, q->key, fn);
}

/* The function a step needs, or NVML_ERROR_FUNCTION_NOT_FOUND naming it. */
#define NEED(q, f, name)                                      \
	do {                                                  \
		(q)->fn = (name);                             \
		if (!(q)->h->f)                               \
			return NVML_ERROR_FUNCTION_NOT_FOUND; \
	} while (0)

/* Run one query: name it, and hand its result on unless it succeeded. */
#define ASK(q, name, call)                                      \
	do {                                                    \
		nvml_return r_ = (asking((q), (name)), (call)); \
		if (r_ != 0)                                    \
			return r_;                              \
	} while (0)

static const char *on_off(int v)
{
	return v ? "on" : "off";
}

static json_t *pair(unsigned long long corrected, unsigned long long uncorrected)
{
	return json_pack("{s:I, s:I}", "corrected", (json_int_t)corrected, "uncorrected",
	                 (json_int_t)uncorrected);
}

/* NVML's "00000000:18:00.0" as sysfs names it: "0000:18:00.0", lower case. */
static void bus_id_to_bdf(const char *bus_id, char *bdf, size_t len)
{
	size_t n = strlen(bus_id);
	const char *s = n > 12 ? bus_id + n - 12 : bus_id;
	size_t i;

	for (i = 0; s[i] && i + 1 < len; i++)
		bdf[i] = (char)tolower((unsigned char)s[i]);
	bdf[i] = '\0';
}

static nvml_return step_pci(struct hq *q)
{
	struct nvml_pci_info pci;

	memset(&pci, 0, sizeof(pci));
	NEED(q, pci_info, "nvmlDeviceGetPciInfo");
	ASK(q, "nvmlDeviceGetPciInfo", q->h->pci_info(q->dev, &pci));
	pci.bus_id[sizeof(pci.bus_id) - 1] = '\0';
	json_object_set_new(q->health, "pci_bus_id",
	                    facts_json_text(pci.bus_id, strlen(pci.bus_id)));
	bus_id_to_bdf(pci.bus_id, q->bdf, sizeof(q->bdf));
	return 0;
}

/* NVML's answer, else (no such query, or NOT_SUPPORTED) the PCI device's
 * numa_node in sysfs (-1: none, null). */
static nvml_return step_numa(struct hq *q)
{
	char path[128], err[CD_ERRLEN], *data = NULL;
	nvml_return r = NVML_ERROR_FUNCTION_NOT_FOUND;
	unsigned int node;
	size_t len;
	long v;

	asking(q, "nvmlDeviceGetNumaNodeId");
	if (q->h->numa_node && (r = q->h->numa_node(q->dev, &node)) == 0) {
		json_object_set_new(q->health, "numa_node", json_integer(node));
		return 0;
	}
	if (r != NVML_ERROR_FUNCTION_NOT_FOUND && r != NVML_ERROR_NOT_SUPPORTED)
		return r;
	if (!q->bdf[0])
		return r;
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/numa_node", q->bdf);
	if (scan_read_file(path, 64, SCAN_FILE_TO_EOF, &data, &len, err, sizeof(err)) < 0)
		return r;
	v = strtol(data, NULL, 10);
	free(data);
	json_object_set_new(q->health, "numa_node", v < 0 ? json_null() : json_integer(v));
	return 0;
}

static nvml_return step_ecc(struct hq *q)
{
	unsigned long long c[2][2]; /* [counter type][error type] */
	int cur = 0, pend = 0;
	json_t *ecc;

	NEED(q, ecc_mode, "nvmlDeviceGetEccMode");
	ASK(q, "nvmlDeviceGetEccMode", q->h->ecc_mode(q->dev, &cur, &pend));
	ecc = json_pack("{s:s}", "mode", on_off(cur));
	json_object_set_new(q->health, "ecc", ecc);
	if (!cur)
		return 0; /* no counters without ECC: NVML answers NOT_SUPPORTED */
	NEED(q, ecc_total, "nvmlDeviceGetTotalEccErrors");
	for (int t = 0; t < 2; t++)
		for (int e = 0; e < 2; e++)
			ASK(q, "nvmlDeviceGetTotalEccErrors",
			    q->h->ecc_total(q->dev, e, t, &c[t][e]));
	json_object_set_new(ecc, "volatile",
	                    pair(c[NVML_VOLATILE_ECC][0], c[NVML_VOLATILE_ECC][1]));
	json_object_set_new(ecc, "aggregate",
	                    pair(c[NVML_AGGREGATE_ECC][0], c[NVML_AGGREGATE_ECC][1]));
	return 0;
}

/* The pages retired for one cause: the count alone (a count of 0 asks for
 * it; NVML answers INSUFFICIENT_SIZE when there are some). The buffers are
 * given all the same: NVML's return codes name a NULL one INVALID_ARGUMENT. */
static nvml_return retired_count(struct hq *q, int cause, unsigned int *count)
{
	unsigned long long addresses[1] = {0}, timestamps[1] = {0};
	nvml_return r;

	*count = 0;
	if (q->h->retired_pages_v2)
		r = q->h->retired_pages_v2(q->dev, cause, count, addresses, timestamps);
	else
		r = q->h->retired_pages(q->dev, cause, count, addresses);
	return r == NVML_ERROR_INSUFFICIENT_SIZE ? 0 : r;
}

static nvml_return step_retired(struct hq *q)
{
	unsigned int sbe, dbe;
	int pending = 0;

	NEED(q, retired_pending, "nvmlDeviceGetRetiredPagesPendingStatus");
	ASK(q, "nvmlDeviceGetRetiredPagesPendingStatus", q->h->retired_pending(q->dev, &pending));
	q->fn = "nvmlDeviceGetRetiredPages";
	if (!q->h->retired_pages_v2 && !q->h->retired_pages)
		return NVML_ERROR_FUNCTION_NOT_FOUND;
	ASK(q, "nvmlDeviceGetRetiredPages",
	    retired_count(q, NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS, &sbe));
	ASK(q, "nvmlDeviceGetRetiredPages",
	    retired_count(q, NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR, &dbe));
	json_object_set_new(
	    q->health, "retired_pages",
	    json_pack("{s:b, s:I}", "pending", pending != 0, "count", (json_int_t)sbe + dbe));
	return 0;
}

static nvml_return step_remap(struct hq *q)
{
	unsigned int corr = 0, unc = 0, pend = 0, fail = 0;

	NEED(q, remapped_rows, "nvmlDeviceGetRemappedRows");
	ASK(q, "nvmlDeviceGetRemappedRows", q->h->remapped_rows(q->dev, &corr, &unc, &pend, &fail));
	json_object_set_new(q->health, "row_remap",
	                    json_pack("{s:b, s:b, s:I, s:I}", "pending", pend != 0, "failure",
	                              fail != 0, "corrected", (json_int_t)corr, "uncorrected",
	                              (json_int_t)unc));
	return 0;
}

static nvml_return step_pcie(struct hq *q)
{
	unsigned int gen, gen_max, width, width_max;

	NEED(q, pcie_gen, "nvmlDeviceGetCurrPcieLinkGeneration");
	NEED(q, pcie_gen_max, "nvmlDeviceGetMaxPcieLinkGeneration");
	NEED(q, pcie_width, "nvmlDeviceGetCurrPcieLinkWidth");
	NEED(q, pcie_width_max, "nvmlDeviceGetMaxPcieLinkWidth");
	ASK(q, "nvmlDeviceGetCurrPcieLinkGeneration", q->h->pcie_gen(q->dev, &gen));
	ASK(q, "nvmlDeviceGetMaxPcieLinkGeneration", q->h->pcie_gen_max(q->dev, &gen_max));
	ASK(q, "nvmlDeviceGetCurrPcieLinkWidth", q->h->pcie_width(q->dev, &width));
	ASK(q, "nvmlDeviceGetMaxPcieLinkWidth", q->h->pcie_width_max(q->dev, &width_max));
	json_object_set_new(q->health, "pcie",
	                    json_pack("{s:I, s:I, s:I, s:I}", "gen", (json_int_t)gen, "gen_max",
	                              (json_int_t)gen_max, "width", (json_int_t)width, "width_max",
	                              (json_int_t)width_max));
	return 0;
}

/* One link's error counters, by nvmlNvLinkErrorCounter_t; those the GPU
 * does not keep (NOT_SUPPORTED, or INVALID_ARGUMENT: "counter is invalid";
 * Hopper keeps ECC_DATA and not CRC_DATA) are left out. */
static nvml_return nvlink_counters(struct hq *q, unsigned int link, json_t *o)
{
	static const char *const names[] = {"replay", "recovery", "crc_flit", "crc_data",
	                                    "ecc_data"};

	for (int c = 0; q->h->nvlink_errors && c < (int)CD_ARRAY_LEN(names); c++) {
		unsigned long long v = 0;
		nvml_return r;

		asking(q, "nvmlDeviceGetNvLinkErrorCounter");
		r = q->h->nvlink_errors(q->dev, link, c, &v);
		if (r == NVML_ERROR_NOT_SUPPORTED || r == NVML_ERROR_INVALID_ARGUMENT)
			continue;
		if (r != 0)
			return r;
		json_object_set_new(o, names[c], json_integer((json_int_t)v));
	}
	return 0;
}

/* Links 0.. until NVML says there is no such link (NOT_SUPPORTED or
 * INVALID_ARGUMENT); none at all is an unsupported key. */
static nvml_return step_nvlink(struct hq *q)
{
	json_t *links = json_array();
	nvml_return r = 0;
	unsigned int l;

	q->fn = "nvmlDeviceGetNvLinkState";
	if (!q->h->nvlink_state)
		r = NVML_ERROR_FUNCTION_NOT_FOUND;
	for (l = 0; r == 0 && l < CD_NVLINK_PROBE_MAX; l++) {
		json_t *o;
		int up = 0;

		asking(q, "nvmlDeviceGetNvLinkState");
		r = q->h->nvlink_state(q->dev, l, &up);
		if (r == NVML_ERROR_NOT_SUPPORTED || r == NVML_ERROR_INVALID_ARGUMENT) {
			r = l ? 0 : NVML_ERROR_NOT_SUPPORTED;
			break;
		}
		if (r != 0)
			break;
		o = json_pack("{s:I, s:b}", "link", (json_int_t)l, "up", up != 0);
		json_array_append_new(links, o);
		r = nvlink_counters(q, l, o);
	}
	if (r == 0)
		json_object_set_new(q->health, "nvlink", links);
	else
		json_decref(links);
	return r;
}

static nvml_return step_clocks(struct hq *q)
{
	unsigned int sm, mem, sm_max, mem_max;

	NEED(q, clock, "nvmlDeviceGetClockInfo");
	NEED(q, clock_max, "nvmlDeviceGetMaxClockInfo");
	ASK(q, "nvmlDeviceGetClockInfo", q->h->clock(q->dev, NVML_CLOCK_SM, &sm));
	ASK(q, "nvmlDeviceGetClockInfo", q->h->clock(q->dev, NVML_CLOCK_MEM, &mem));
	ASK(q, "nvmlDeviceGetMaxClockInfo", q->h->clock_max(q->dev, NVML_CLOCK_SM, &sm_max));
	ASK(q, "nvmlDeviceGetMaxClockInfo", q->h->clock_max(q->dev, NVML_CLOCK_MEM, &mem_max));
	json_object_set_new(q->health, "clocks_mhz",
	                    json_pack("{s:I, s:I, s:I, s:I}", "sm", (json_int_t)sm, "mem",
	                              (json_int_t)mem, "sm_max", (json_int_t)sm_max, "mem_max",
	                              (json_int_t)mem_max));
	return 0;
}

/* nvmlClocksEventReasons bits ("Clocks Event Reasons") */
static const struct {
	unsigned long long bit;
	const char *name;
} reasons[] = {
    {NVML_CLOCKS_REASON_GPU_IDLE, "gpu_idle"},
    {NVML_CLOCKS_REASON_APPLICATIONS_CLOCKS, "applications_clocks"},
    {NVML_CLOCKS_REASON_SW_POWER_CAP, "sw_power_cap"},
    {NVML_CLOCKS_REASON_HW_SLOWDOWN, "hw_slowdown"},
    {NVML_CLOCKS_REASON_SYNC_BOOST, "sync_boost"},
    {NVML_CLOCKS_REASON_SW_THERMAL_SLOWDOWN, "sw_thermal"},
    {NVML_CLOCKS_REASON_HW_THERMAL_SLOWDOWN, "hw_thermal"},
    {NVML_CLOCKS_REASON_HW_POWER_BRAKE, "hw_power_brake"},
    {NVML_CLOCKS_REASON_DISPLAY_CLOCKS, "display_clocks"},
};

static nvml_return step_throttle(struct hq *q)
{
	unsigned long long mask = 0;
	json_t *names;
	char hex[24];

	NEED(q, clock_reasons, "nvmlDeviceGetCurrentClocksEventReasons");
	ASK(q, "nvmlDeviceGetCurrentClocksEventReasons", q->h->clock_reasons(q->dev, &mask));
	names = json_array();
	for (size_t i = 0; i < CD_ARRAY_LEN(reasons); i++)
		if (mask & reasons[i].bit)
			json_array_append_new(names, json_string(reasons[i].name));
	snprintf(hex, sizeof(hex), "0x%016llx", mask);
	json_object_set_new(q->health, "throttle",
	                    json_pack("{s:s, s:o}", "mask", hex, "reasons", names));
	return 0;
}

static nvml_return step_temperature(struct hq *q)
{
	unsigned int c;

	if (q->h->temperature_v) {
		struct nvml_temperature t = {.version = NVML_TEMPERATURE_V1,
		                             .sensor_type = NVML_TEMPERATURE_GPU};
		nvml_return r;

		asking(q, "nvmlDeviceGetTemperatureV");
		r = q->h->temperature_v(q->dev, &t);

		/* a library that knows the name but not this version of the
		 * struct, or not the query on this GPU: the older query decides */
		if (r == 0) {
			json_object_set_new(q->health, "temperature_c",
			                    json_integer(t.temperature));
			return 0;
		}
		if (r == NVML_ERROR_GPU_IS_LOST || !q->h->temperature ||
		    (r != NVML_ERROR_NOT_SUPPORTED && r != NVML_ERROR_ARGUMENT_VERSION_MISMATCH &&
		     r != NVML_ERROR_FUNCTION_NOT_FOUND)) {
			return r;
		}
	}
	NEED(q, temperature, "nvmlDeviceGetTemperature");
	ASK(q, "nvmlDeviceGetTemperature", q->h->temperature(q->dev, NVML_TEMPERATURE_GPU, &c));
	json_object_set_new(q->health, "temperature_c", json_integer(c));
	return 0;
}

static nvml_return step_slowdown(struct hq *q)
{
	unsigned int c;

	NEED(q, temperature_threshold, "nvmlDeviceGetTemperatureThreshold");
	ASK(q, "nvmlDeviceGetTemperatureThreshold",
	    q->h->temperature_threshold(q->dev, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, &c));
	json_object_set_new(q->health, "temperature_slowdown_c", json_integer(c));
	return 0;
}

static nvml_return step_power(struct hq *q)
{
	unsigned int mw;

	NEED(q, power_usage, "nvmlDeviceGetPowerUsage");
	ASK(q, "nvmlDeviceGetPowerUsage", q->h->power_usage(q->dev, &mw));
	json_object_set_new(q->health, "power_w", json_real(mw / 1000.0));
	return 0;
}

static nvml_return step_power_limit(struct hq *q)
{
	unsigned int mw;

	NEED(q, power_limit, "nvmlDeviceGetEnforcedPowerLimit");
	ASK(q, "nvmlDeviceGetEnforcedPowerLimit", q->h->power_limit(q->dev, &mw));
	json_object_set_new(q->health, "power_limit_w", json_real(mw / 1000.0));
	return 0;
}

static nvml_return step_persistence(struct hq *q)
{
	int mode;

	NEED(q, persistence, "nvmlDeviceGetPersistenceMode");
	ASK(q, "nvmlDeviceGetPersistenceMode", q->h->persistence(q->dev, &mode));
	json_object_set_new(q->health, "persistence", json_string(on_off(mode)));
	return 0;
}

/* nvmlComputeMode_t, by value */
static const char *const compute_modes[] = {
    [NVML_COMPUTEMODE_DEFAULT] = "default",
    [NVML_COMPUTEMODE_EXCLUSIVE_THREAD] = "exclusive_thread",
    [NVML_COMPUTEMODE_PROHIBITED] = "prohibited",
    [NVML_COMPUTEMODE_EXCLUSIVE_PROCESS] = "exclusive_process",
};

static nvml_return step_compute(struct hq *q)
{
	int mode;

	NEED(q, compute_mode, "nvmlDeviceGetComputeMode");
	ASK(q, "nvmlDeviceGetComputeMode", q->h->compute_mode(q->dev, &mode));
	if (mode >= 0 && mode < (int)CD_ARRAY_LEN(compute_modes))
		json_object_set_new(q->health, "compute_mode", json_string(compute_modes[mode]));
	else
		json_object_set_new(q->health, "compute_mode", json_integer(mode));
	return 0;
}

static nvml_return step_mig(struct hq *q)
{
	unsigned int cur, pend;

	NEED(q, mig_mode, "nvmlDeviceGetMigMode");
	ASK(q, "nvmlDeviceGetMigMode", q->h->mig_mode(q->dev, &cur, &pend));
	json_object_set_new(q->health, "mig", json_string(on_off(cur != NVML_DEVICE_MIG_DISABLE)));
	return 0;
}

/* The steps, in the order of docs/protocol.md; numa after pci (its sysfs
 * fallback needs the bus id). */
static const struct hstep {
	const char *key;
	nvml_return (*run)(struct hq *q);
} steps[] = {
    {"pci_bus_id", step_pci},
    {"numa_node", step_numa},
    {"ecc", step_ecc},
    {"retired_pages", step_retired},
    {"row_remap", step_remap},
    {"pcie", step_pcie},
    {"nvlink", step_nvlink},
    {"clocks_mhz", step_clocks},
    {"throttle", step_throttle},
    {"temperature_c", step_temperature},
    {"temperature_slowdown_c", step_slowdown},
    {"power_w", step_power},
    {"power_limit_w", step_power_limit},
    {"persistence", step_persistence},
    {"compute_mode", step_compute},
    {"mig", step_mig},
};

const char *facts_gpu_health_key(size_t i)
{
	return i < CD_ARRAY_LEN(steps) ? steps[i].key : NULL;
}

json_t *facts_gpu_health(const struct nvml *n, nvml_device dev, const struct gpu_watch *watch)
{
	struct hq q = {.n = n, .h = &n->h, .dev = dev, .health = json_object(), .watch = watch};
	json_t *unsupported = json_array(), *errors = json_object();
	char why[128], msg[CD_ERRLEN];
	int lost = 0;

	for (size_t i = 0; i < CD_ARRAY_LEN(steps); i++) {
		nvml_return r;

		if (lost) {
			json_object_set_new(errors, steps[i].key,
			                    json_string("not asked: the GPU is lost"));
			continue;
		}
		q.fn = NULL;
		q.key = steps[i].key;
		r = steps[i].run(&q);
		if (r == 0)
			continue;
		if (r == NVML_ERROR_NOT_SUPPORTED || r == NVML_ERROR_FUNCTION_NOT_FOUND) {
			json_array_append_new(unsupported, json_string(steps[i].key));
			continue;
		}
		snprintf(msg, sizeof(msg), "%s: %s", q.fn ? q.fn : steps[i].key,
		         nvml_error(n, r, why, sizeof(why)));
		json_object_set_new(errors, steps[i].key, facts_json_text(msg, strlen(msg)));
		lost = r == NVML_ERROR_GPU_IS_LOST;
	}
	json_object_set_new(q.health, "unsupported", unsupported);
	json_object_set_new(q.health, "errors", errors);
	return q.health;
}
