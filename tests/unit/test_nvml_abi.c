/* SPDX-License-Identifier: MIT */
/*
 * test_nvml_abi.c - clusterdoc's own declarations of NVML (probes/nvml.h,
 * and the names probes/nvml.c resolves with dlsym) against NVIDIA's
 * <nvml.h>, where that header is on the include path at build time (the
 * Makefile's NVML_INCLUDE; `make deps-test` puts Debian's libnvidia-ml-dev
 * 12.4 header there): every struct size and offset, every value, buffer
 * length and clocks event reason bit, and the type of every function the
 * agent resolves are checked at compile time. What only a newer header has
 * (nvmlDeviceGetTemperatureV and nvmlTemperature_t, 12.8) is checked where
 * the header defines nvmlTemperature_v1. Without the header the
 * compile-time checks are left out and that test skips; that each name
 * nvml.c resolves has its type checked here is tested either way.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#if defined(__has_include)
#if __has_include(<nvml.h>)
#define HAVE_NVML_H 1
/* The entry points by the names the library exports (those dlsym is given),
 * not the header's macros that turn each into its newest version. */
#define NVML_NO_UNVERSIONED_FUNC_DEFS
#include <nvml.h>
#endif
#endif

/*
 * The values probes/nvml.h declares under NVML's own names. Their NVML
 * values are taken (REAL_name) before probes/nvml.h redefines the names as
 * its macros.
 */
#define SHARED_VALUES(X)                                             \
	X(NVML_ERROR_INVALID_ARGUMENT)                               \
	X(NVML_ERROR_NOT_SUPPORTED)                                  \
	X(NVML_ERROR_INSUFFICIENT_SIZE)                              \
	X(NVML_ERROR_FUNCTION_NOT_FOUND)                             \
	X(NVML_ERROR_GPU_IS_LOST)                                    \
	X(NVML_ERROR_ARGUMENT_VERSION_MISMATCH)                      \
	X(NVML_MEMORY_ERROR_TYPE_CORRECTED)                          \
	X(NVML_MEMORY_ERROR_TYPE_UNCORRECTED)                        \
	X(NVML_VOLATILE_ECC)                                         \
	X(NVML_AGGREGATE_ECC)                                        \
	X(NVML_CLOCK_SM)                                             \
	X(NVML_CLOCK_MEM)                                            \
	X(NVML_TEMPERATURE_GPU)                                      \
	X(NVML_TEMPERATURE_THRESHOLD_SLOWDOWN)                       \
	X(NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS) \
	X(NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR)           \
	X(NVML_NVLINK_ERROR_DL_REPLAY)                               \
	X(NVML_NVLINK_ERROR_DL_RECOVERY)                             \
	X(NVML_NVLINK_ERROR_DL_CRC_FLIT)                             \
	X(NVML_NVLINK_ERROR_DL_CRC_DATA)                             \
	X(NVML_NVLINK_ERROR_DL_ECC_DATA)                             \
	X(NVML_COMPUTEMODE_DEFAULT)                                  \
	X(NVML_COMPUTEMODE_EXCLUSIVE_THREAD)                         \
	X(NVML_COMPUTEMODE_PROHIBITED)                               \
	X(NVML_COMPUTEMODE_EXCLUSIVE_PROCESS)                        \
	X(NVML_DEVICE_MIG_DISABLE)

#ifdef HAVE_NVML_H
#define TAKE_REAL(name) REAL_##name = name,
enum { SHARED_VALUES(TAKE_REAL) };
/* the one of them that NVML defines as a macro */
#undef NVML_DEVICE_MIG_DISABLE
#endif

#include "probes/nvml.h"

/*
 * Each function nvml.c resolves: the field of struct nvml it lands in, its
 * name, and its type, written once with T_* names where the two
 * declarations spell a type differently (NVML's typedefs and enums against
 * clusterdoc's int, structs and opaque pointer). Each line is checked on
 * both sides: NVML's prototype, and the field's function pointer type.
 */
#define NVML_FUNCTIONS(X)                                                                          \
	X(init, nvmlInit_v2, T_RET, (void))                                                        \
	X(shutdown, nvmlShutdown, T_RET, (void))                                                   \
	X(get_count, nvmlDeviceGetCount_v2, T_RET, (unsigned int *))                               \
	X(get_handle, nvmlDeviceGetHandleByIndex_v2, T_RET, (unsigned int, T_DEV *))               \
	X(get_name, nvmlDeviceGetName, T_RET, (T_DEV, char *, unsigned int))                       \
	X(get_memory, nvmlDeviceGetMemoryInfo, T_RET, (T_DEV, T_MEMORY *))                         \
	X(get_uuid, nvmlDeviceGetUUID, T_RET, (T_DEV, char *, unsigned int))                       \
	X(get_driver, nvmlSystemGetDriverVersion, T_RET, (char *, unsigned int))                   \
	X(error_string, nvmlErrorString, const char *, (T_RET))                                    \
	X(get_utilization, nvmlDeviceGetUtilizationRates, T_RET, (T_DEV, T_UTILIZATION *))         \
	X(get_procs, nvmlDeviceGetComputeRunningProcesses_v3, T_RET,                               \
	  (T_DEV, unsigned int *, T_PROC *))                                                       \
	X(get_procs, nvmlDeviceGetComputeRunningProcesses_v2, T_RET,                               \
	  (T_DEV, unsigned int *, T_PROC *))                                                       \
	X(get_procs, nvmlDeviceGetComputeRunningProcesses, T_RET,                                  \
	  (T_DEV, unsigned int *, T_PROC_V1 *))                                                    \
	X(h.pci_info, nvmlDeviceGetPciInfo_v3, T_RET, (T_DEV, T_PCI *))                            \
	X(h.pci_info, nvmlDeviceGetPciInfo_v2, T_RET, (T_DEV, T_PCI *))                            \
	X(h.numa_node, nvmlDeviceGetNumaNodeId, T_RET, (T_DEV, unsigned int *))                    \
	X(h.ecc_mode, nvmlDeviceGetEccMode, T_RET, (T_DEV, T_ENABLE *, T_ENABLE *))                \
	X(h.ecc_total, nvmlDeviceGetTotalEccErrors, T_RET,                                         \
	  (T_DEV, T_MEMORY_ERROR, T_ECC_COUNTER, unsigned long long *))                            \
	X(h.retired_pages_v2, nvmlDeviceGetRetiredPages_v2, T_RET,                                 \
	  (T_DEV, T_RETIREMENT_CAUSE, unsigned int *, unsigned long long *, unsigned long long *)) \
	X(h.retired_pages, nvmlDeviceGetRetiredPages, T_RET,                                       \
	  (T_DEV, T_RETIREMENT_CAUSE, unsigned int *, unsigned long long *))                       \
	X(h.retired_pending, nvmlDeviceGetRetiredPagesPendingStatus, T_RET, (T_DEV, T_ENABLE *))   \
	X(h.remapped_rows, nvmlDeviceGetRemappedRows, T_RET,                                       \
	  (T_DEV, unsigned int *, unsigned int *, unsigned int *, unsigned int *))                 \
	X(h.pcie_gen, nvmlDeviceGetCurrPcieLinkGeneration, T_RET, (T_DEV, unsigned int *))         \
	X(h.pcie_gen_max, nvmlDeviceGetMaxPcieLinkGeneration, T_RET, (T_DEV, unsigned int *))      \
	X(h.pcie_gen_max, nvmlDeviceGetGpuMaxPcieLinkGeneration, T_RET, (T_DEV, unsigned int *))   \
	X(h.pcie_width, nvmlDeviceGetCurrPcieLinkWidth, T_RET, (T_DEV, unsigned int *))            \
	X(h.pcie_width_max, nvmlDeviceGetMaxPcieLinkWidth, T_RET, (T_DEV, unsigned int *))         \
	X(h.nvlink_state, nvmlDeviceGetNvLinkState, T_RET, (T_DEV, unsigned int, T_ENABLE *))      \
	X(h.nvlink_errors, nvmlDeviceGetNvLinkErrorCounter, T_RET,                                 \
	  (T_DEV, unsigned int, T_NVLINK_COUNTER, unsigned long long *))                           \
	X(h.clock, nvmlDeviceGetClockInfo, T_RET, (T_DEV, T_CLOCK, unsigned int *))                \
	X(h.clock_max, nvmlDeviceGetMaxClockInfo, T_RET, (T_DEV, T_CLOCK, unsigned int *))         \
	X(h.clock_reasons, nvmlDeviceGetCurrentClocksEventReasons, T_RET,                          \
	  (T_DEV, unsigned long long *))                                                           \
	X(h.clock_reasons, nvmlDeviceGetCurrentClocksThrottleReasons, T_RET,                       \
	  (T_DEV, unsigned long long *))                                                           \
	X(h.temperature, nvmlDeviceGetTemperature, T_RET, (T_DEV, T_SENSOR, unsigned int *))       \
	X(h.temperature_threshold, nvmlDeviceGetTemperatureThreshold, T_RET,                       \
	  (T_DEV, T_THRESHOLD, unsigned int *))                                                    \
	X(h.power_usage, nvmlDeviceGetPowerUsage, T_RET, (T_DEV, unsigned int *))                  \
	X(h.power_limit, nvmlDeviceGetEnforcedPowerLimit, T_RET, (T_DEV, unsigned int *))          \
	X(h.persistence, nvmlDeviceGetPersistenceMode, T_RET, (T_DEV, T_ENABLE *))                 \
	X(h.compute_mode, nvmlDeviceGetComputeMode, T_RET, (T_DEV, T_COMPUTE_MODE *))              \
	X(h.mig_mode, nvmlDeviceGetMigMode, T_RET, (T_DEV, unsigned int *, unsigned int *))

/* Those of NVML 12.8 and later (NVML_API_VERSION stays 12 from 12.0 to
 * 12.9, so the header's nvmlTemperature_v1 says whether it has them). */
#define NVML_FUNCTIONS_12_8(X) \
	X(h.temperature_v, nvmlDeviceGetTemperatureV, T_RET, (T_DEV, T_TEMPERATURE *))

#ifdef HAVE_NVML_H
/* NVML's names for the types of NVML_FUNCTIONS */
#define T_RET              nvmlReturn_t
#define T_DEV              nvmlDevice_t
#define T_MEMORY           nvmlMemory_t
#define T_UTILIZATION      nvmlUtilization_t
#define T_PROC             nvmlProcessInfo_t
#define T_PROC_V1          nvmlProcessInfo_v1_t
#define T_PCI              nvmlPciInfo_t
#define T_TEMPERATURE      nvmlTemperature_t
#define T_ENABLE           nvmlEnableState_t
#define T_MEMORY_ERROR     nvmlMemoryErrorType_t
#define T_ECC_COUNTER      nvmlEccCounterType_t
#define T_RETIREMENT_CAUSE nvmlPageRetirementCause_t
#define T_NVLINK_COUNTER   nvmlNvLinkErrorCounter_t
#define T_CLOCK            nvmlClockType_t
#define T_SENSOR           nvmlTemperatureSensors_t
#define T_THRESHOLD        nvmlTemperatureThresholds_t
#define T_COMPUTE_MODE     nvmlComputeMode_t

/* The deprecated entry points are named on purpose: the agent falls back to
 * them on the drivers that lack their successors. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#define NVML_HAS(field, sym, ret, args)                                             \
	_Static_assert(__builtin_types_compatible_p(__typeof__(&sym), ret(*) args), \
	               "<nvml.h> declares " #sym " otherwise than " #ret #args);
NVML_FUNCTIONS(NVML_HAS)
#ifdef nvmlTemperature_v1
NVML_FUNCTIONS_12_8(NVML_HAS)
#endif

/*
 * The type names on which the two sides differ are the same size, and so
 * passed alike: each enum is a C enum (int-sized, gcc makes it unsigned
 * int, clusterdoc passes int), nvmlDevice_t an opaque pointer.
 */
#define SAME(ours, theirs) \
	_Static_assert((long long)(ours) == (long long)(theirs), #ours " is not " #theirs)
#define SAME_TYPE_SIZE(ours, theirs)        \
	SAME(sizeof(ours), sizeof(theirs)); \
	SAME(_Alignof(ours), _Alignof(theirs))
_Static_assert(__builtin_types_compatible_p(nvmlDevice_t, struct nvmlDevice_st *),
               "nvmlDevice_t is not an opaque pointer");
SAME_TYPE_SIZE(nvml_device, nvmlDevice_t);
SAME_TYPE_SIZE(nvml_return, nvmlReturn_t);
SAME_TYPE_SIZE(int, nvmlEnableState_t);
SAME_TYPE_SIZE(int, nvmlMemoryErrorType_t);
SAME_TYPE_SIZE(int, nvmlEccCounterType_t);
SAME_TYPE_SIZE(int, nvmlPageRetirementCause_t);
SAME_TYPE_SIZE(int, nvmlNvLinkErrorCounter_t);
SAME_TYPE_SIZE(int, nvmlClockType_t);
SAME_TYPE_SIZE(int, nvmlTemperatureSensors_t);
SAME_TYPE_SIZE(int, nvmlTemperatureThresholds_t);
SAME_TYPE_SIZE(int, nvmlComputeMode_t);

#undef T_RET
#undef T_DEV
#undef T_MEMORY
#undef T_UTILIZATION
#undef T_PROC
#undef T_PROC_V1
#undef T_PCI
#undef T_TEMPERATURE
#undef T_ENABLE
#undef T_MEMORY_ERROR
#undef T_ECC_COUNTER
#undef T_RETIREMENT_CAUSE
#undef T_NVLINK_COUNTER
#undef T_CLOCK
#undef T_SENSOR
#undef T_THRESHOLD
#undef T_COMPUTE_MODE

/* clusterdoc's names for them (probes/nvml.h) */
#define T_RET              nvml_return
#define T_DEV              nvml_device
#define T_MEMORY           struct nvml_memory
#define T_UTILIZATION      struct nvml_utilization
#define T_PROC             void /* nvml_device_pids picks struct nvml_proc_v1 or _v2 */
#define T_PROC_V1          void
#define T_PCI              struct nvml_pci_info
#define T_TEMPERATURE      struct nvml_temperature
#define T_ENABLE           int
#define T_MEMORY_ERROR     int
#define T_ECC_COUNTER      int
#define T_RETIREMENT_CAUSE int
#define T_NVLINK_COUNTER   int
#define T_CLOCK            int
#define T_SENSOR           int
#define T_THRESHOLD        int
#define T_COMPUTE_MODE     int

#define FIELD_IS(field, sym, ret, args)                                                       \
	_Static_assert(                                                                       \
	    __builtin_types_compatible_p(__typeof__(((struct nvml *)0)->field), ret(*) args), \
	    "struct nvml's " #field " (" #sym ") is not " #ret #args);
NVML_FUNCTIONS(FIELD_IS)
NVML_FUNCTIONS_12_8(FIELD_IS)

/* The values probes/nvml.h shares with NVML's names */
#define SAME_AS_REAL(name) \
	_Static_assert((long long)(name) == (long long)(REAL_##name), #name " is not <nvml.h>'s");
SHARED_VALUES(SAME_AS_REAL)

/* The buffer lengths (NVML's *_BUFFER_SIZE) */
SAME(NVML_NAME_LEN, NVML_DEVICE_NAME_V2_BUFFER_SIZE);
SAME(NVML_UUID_LEN, NVML_DEVICE_UUID_V2_BUFFER_SIZE);
SAME(NVML_DRIVER_LEN, NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE);
/* Every link the header knows is asked for. */
_Static_assert(CD_NVLINK_PROBE_MAX >= NVML_NVLINK_MAX_LINKS,
               "CD_NVLINK_PROBE_MAX is below <nvml.h>'s NVML_NVLINK_MAX_LINKS");

/* The nvmlClocksEventReasons bits, by the names every header from 12.4 to
 * 13.3 has (the nvmlClocksEventReason* names of the hardware ones are newer
 * than 12.4). */
SAME(NVML_CLOCKS_REASON_GPU_IDLE, nvmlClocksThrottleReasonGpuIdle);
SAME(NVML_CLOCKS_REASON_APPLICATIONS_CLOCKS, nvmlClocksThrottleReasonApplicationsClocksSetting);
SAME(NVML_CLOCKS_REASON_SW_POWER_CAP, nvmlClocksThrottleReasonSwPowerCap);
SAME(NVML_CLOCKS_REASON_HW_SLOWDOWN, nvmlClocksThrottleReasonHwSlowdown);
SAME(NVML_CLOCKS_REASON_SYNC_BOOST, nvmlClocksThrottleReasonSyncBoost);
SAME(NVML_CLOCKS_REASON_SW_THERMAL_SLOWDOWN, nvmlClocksThrottleReasonSwThermalSlowdown);
SAME(NVML_CLOCKS_REASON_HW_THERMAL_SLOWDOWN, nvmlClocksThrottleReasonHwThermalSlowdown);
SAME(NVML_CLOCKS_REASON_HW_POWER_BRAKE, nvmlClocksThrottleReasonHwPowerBrakeSlowdown);
SAME(NVML_CLOCKS_REASON_DISPLAY_CLOCKS, nvmlClocksThrottleReasonDisplayClockSetting);

/* The structs: size, and each member's offset and size (and, where both
 * sides name an integer type, its signedness). */
#define MEMBER(s, m) (((s *)0)->m)
#define SIGNED(s, m) ((__typeof__(MEMBER(s, m)))-1 < (__typeof__(MEMBER(s, m)))1)
#define SAME_SIZE(ours, theirs)                               \
	_Static_assert(sizeof(struct ours) == sizeof(theirs), \
	               "sizeof(struct " #ours ") is not sizeof(" #theirs ")")
#define SAME_AT(ours, theirs, o, t)                                                      \
	_Static_assert(offsetof(struct ours, o) == offsetof(theirs, t),                  \
	               "struct " #ours "." #o " is not at " #theirs "." #t "'s offset"); \
	_Static_assert(sizeof(MEMBER(struct ours, o)) == sizeof(MEMBER(theirs, t)),      \
	               "struct " #ours "." #o " is not the size of " #theirs "." #t)
#define SAME_INT_AT(ours, theirs, o, t)                             \
	SAME_AT(ours, theirs, o, t);                                \
	_Static_assert(SIGNED(struct ours, o) == SIGNED(theirs, t), \
	               "struct " #ours "." #o " is not as signed as " #theirs "." #t)

SAME_SIZE(nvml_memory, nvmlMemory_t);
SAME_INT_AT(nvml_memory, nvmlMemory_t, total, total);
SAME_INT_AT(nvml_memory, nvmlMemory_t, free, free);
SAME_INT_AT(nvml_memory, nvmlMemory_t, used, used);

SAME_SIZE(nvml_utilization, nvmlUtilization_t);
SAME_INT_AT(nvml_utilization, nvmlUtilization_t, gpu, gpu);
SAME_INT_AT(nvml_utilization, nvmlUtilization_t, memory, memory);

SAME_SIZE(nvml_proc_v1, nvmlProcessInfo_v1_t);
SAME_INT_AT(nvml_proc_v1, nvmlProcessInfo_v1_t, pid, pid);
SAME_INT_AT(nvml_proc_v1, nvmlProcessInfo_v1_t, used, usedGpuMemory);

_Static_assert(__builtin_types_compatible_p(nvmlProcessInfo_t, nvmlProcessInfo_v2_t),
               "nvmlProcessInfo_t is no longer nvmlProcessInfo_v2_t");
SAME_SIZE(nvml_proc_v2, nvmlProcessInfo_t);
SAME_INT_AT(nvml_proc_v2, nvmlProcessInfo_t, pid, pid);
SAME_INT_AT(nvml_proc_v2, nvmlProcessInfo_t, used, usedGpuMemory);
SAME_INT_AT(nvml_proc_v2, nvmlProcessInfo_t, gpu_instance, gpuInstanceId);
SAME_INT_AT(nvml_proc_v2, nvmlProcessInfo_t, compute_instance, computeInstanceId);

SAME_SIZE(nvml_pci_info, nvmlPciInfo_t);
SAME_AT(nvml_pci_info, nvmlPciInfo_t, bus_id_legacy, busIdLegacy);
SAME(sizeof(((struct nvml_pci_info *)0)->bus_id_legacy), NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE);
SAME_INT_AT(nvml_pci_info, nvmlPciInfo_t, domain, domain);
SAME_INT_AT(nvml_pci_info, nvmlPciInfo_t, bus, bus);
SAME_INT_AT(nvml_pci_info, nvmlPciInfo_t, device, device);
SAME_INT_AT(nvml_pci_info, nvmlPciInfo_t, pci_device_id, pciDeviceId);
SAME_INT_AT(nvml_pci_info, nvmlPciInfo_t, pci_subsystem_id, pciSubSystemId);
SAME_AT(nvml_pci_info, nvmlPciInfo_t, bus_id, busId);
SAME(sizeof(((struct nvml_pci_info *)0)->bus_id), NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE);

/* NVML_TEMPERATURE_V1 is NVML_STRUCT_VERSION's encoding (size | version <<
 * 24), here on a versioned struct that every header has. */
SAME(nvmlMemory_v2, sizeof(nvmlMemory_v2_t) | 2u << 24);

#ifdef nvmlTemperature_v1
SAME_SIZE(nvml_temperature, nvmlTemperature_t);
SAME_INT_AT(nvml_temperature, nvmlTemperature_t, version, version);
SAME_AT(nvml_temperature, nvmlTemperature_t, sensor_type, sensorType);
SAME_INT_AT(nvml_temperature, nvmlTemperature_t, temperature, temperature);
SAME(NVML_TEMPERATURE_V1, nvmlTemperature_v1);
#endif
#endif /* HAVE_NVML_H */

static void declarations_match_nvml_h(void **state)
{
#ifdef HAVE_NVML_H
	/* the types, layouts and values are checked at compile time above */
	assert_int_equal(sizeof(struct nvml_pci_info), sizeof(nvmlPciInfo_t));
#else
	print_message("no <nvml.h> at build time: `make deps-test` fetches it into the Makefile's "
	              "NVML_INCLUDE\n");
	skip();
#endif
}

/* Whether name is one of NVML_FUNCTIONS or NVML_FUNCTIONS_12_8. */
static int is_checked(const char *name, size_t len)
{
#define NAME_OF(field, sym, ret, args) #sym,
	static const char *const names[] = {NVML_FUNCTIONS(NAME_OF) NVML_FUNCTIONS_12_8(NAME_OF)};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == len && memcmp(names[i], name, len) == 0)
			return 1;
	return 0;
}

#define IDENT_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_"

static void every_name_nvml_c_resolves_has_its_type_checked(void **state)
{
	static char src[64 * 1024];
	FILE *f = fopen("probes/nvml.c", "r");
	size_t n, found = 0;

	assert_non_null(f);
	n = fread(src, 1, sizeof(src) - 1, f);
	fclose(f);
	assert_true(n > 0 && n < sizeof(src) - 1);
	src[n] = '\0';
	/* each string literal that is one identifier "nvml<Capital>..." is a
	 * name given to dlsym (its messages say more: "nvmlInit: %s") */
	for (const char *p = strstr(src, "\"nvml"); p; p = strstr(p + 1, "\"nvml")) {
		const char *name = p + 1, *end = name + strspn(name, IDENT_CHARS);

		if (*end != '"' || name[4] < 'A' || name[4] > 'Z')
			continue;
		found++;
		if (!is_checked(name, (size_t)(end - name)))
			fail_msg("probes/nvml.c resolves %.*s, which NVML_FUNCTIONS does not list",
			         (int)(end - name), name);
	}
	assert_true(found >= 40);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(declarations_match_nvml_h),
	    cmocka_unit_test(every_name_nvml_c_resolves_has_its_type_checked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
