/* SPDX-License-Identifier: MIT */
/*
 * facts_gpu_health.h - what a node's GPUs and their kernel log say about
 * their health, for the node facts (issue 35; the findings that judge it are
 * the head's).
 *
 * Per GPU, facts_gpu_health asks NVML (probes/nvml.h; every query optional)
 * for ECC, retired pages, remapped rows, the PCIe link, NVLink, clocks and
 * their event (throttle) reasons, temperature, power, persistence, compute
 * and MIG modes, the PCI bus id and the NUMA node. Per node,
 * facts_gpu_node_collect reads the NVIDIA PCI devices and the NICs' PCI
 * paths from sysfs ("gpu_pci") and the Xid lines of the kernel log ("xid").
 * The JSON is docs/protocol.md's "facts" answer.
 */
#ifndef CD_PROBES_FACTS_GPU_HEALTH_H
#define CD_PROBES_FACTS_GPU_HEALTH_H

#include <jansson.h>
#include <stddef.h>

#include "probes/nvml.h"

/* How long `journalctl -k` may take when /dev/kmsg cannot be read. */
#define FACTS_JOURNALCTL_MS 3000

/*
 * The "health" object of one GPU: the keys of docs/protocol.md
 * (pci_bus_id, numa_node, ecc, retired_pages, row_remap, pcie, nvlink,
 * clocks_mhz, throttle, temperature_c, temperature_slowdown_c, power_w,
 * power_limit_w, persistence, compute_mode, mig), each present only when
 * NVML answered it. A key NVML answers NVML_ERROR_NOT_SUPPORTED for, or
 * whose function the library lacks, is named in "unsupported"; one that
 * failed otherwise is errors[key] = "<function>: <NVML's message>". After
 * NVML_ERROR_GPU_IS_LOST no further query is made on this GPU: each key
 * left is errors[key] = "not asked: the GPU is lost". "ecc" may keep its
 * "mode" when only its counters failed. Returns a new reference.
 *
 * NVML calls are synchronous: watch->asking (when watch is not NULL) is
 * called with the step's key and the function before each query, so that a
 * watcher can name the one that never returns (facts_gpu_watch.h).
 */
struct gpu_watch {
	void (*asking)(void *arg, const char *key, const char *fn);
	void *arg;
};
json_t *facts_gpu_health(const struct nvml *n, nvml_device dev, const struct gpu_watch *watch);

/* The i-th key of the "health" object, in the order they are asked; NULL
 * past the last. */
const char *facts_gpu_health_key(size_t i);

/*
 * The node's half: facts["gpu_pci"] from sysfs_root ("/sys" on a node;
 * tests pass a tree of their own) and facts["xid"] from the kernel log
 * (/dev/kmsg, or the file CLUSTERDOC_KMSG names, for tests; when it may not
 * be read, `journalctl -k -b -o short-monotonic --no-pager` under
 * FACTS_JOURNALCTL_MS; when neither works, "readable": false and "why").
 * Never fails: what it cannot read is said in the objects themselves, and a
 * sysfs that cannot be listed is errors["gpu_pci"].
 */
void facts_gpu_node_collect(const char *sysfs_root, json_t *facts, json_t *errors);

/*
 * facts["gpu_pci"] alone: {"nvidia_devices": N, "paths": {BDF: realpath},
 * "nics": {IF: realpath}} from root/bus/pci/devices (vendor 0x10de, class
 * 0x03xxxx) and root/class/net/IF/device. 0, or CD_ERR_IO with err when
 * root/bus/pci/devices cannot be listed (the key is then absent).
 */
int facts_gpu_pci_collect(const char *sysfs_root, json_t *facts, char *err, size_t errlen);

/* facts["xid"] alone, as facts_gpu_node_collect reads it. */
void facts_xid_collect(json_t *facts);

#endif
