/* SPDX-License-Identifier: MIT */
/*
 * facts_gpu.h - GPUs (NVML) and NCCL for the node facts.
 *
 * Both libraries are loaded with dlopen() at run time and closed again; the
 * agent never links them, so a node without them is simply a node without
 * GPUs or NCCL. NVML's signatures are declared in probes/nvml.h (whose loader
 * honours CLUSTERDOC_NVML_LIB, the tests' stand-in), NCCL's one in
 * facts_gpu.c; no CUDA header is included.
 */
#ifndef CD_PROBES_FACTS_GPU_H
#define CD_PROBES_FACTS_GPU_H

#include <jansson.h>
#include <stddef.h>

#include "probes/facts_gpu_health.h"
#include "probes/nvml.h"

/*
 * Set facts["gpus"] to an array of {"index", "name", "memory_bytes", "uuid",
 * "health"} (one per device NVML sees; a field NVML cannot give is left out
 * and errors["gpus"] says why; "health" is facts_gpu_health's, with its own
 * "unsupported" and "errors"), facts["gpu_driver"] to the driver version
 * string or null, and facts["gpu_pci"] and facts["xid"] as
 * facts_gpu_node_collect (facts_gpu_health.h) reads them on this node. Without
 * libnvidia-ml.so.1 that is [] and null, with no error unless the PCI bus shows NVIDIA GPUs
 * (then errors["gpus"] gives the loader's reason); when the library is there but nvmlInit
 * fails (no driver loaded), errors["gpus"] carries NVML's message. NVML is asked in a child
 * process under deadlines (facts_gpu_watch.h): a query that never returns
 * costs its GPU, named, not the node's facts.
 */
void facts_gpu_collect(json_t *facts, json_t *errors);

/*
 * What the watched child asks, with NVML open in n. facts_gpu_driver: the
 * driver version string (or null, with errors["gpu_driver"]) and *count,
 * the GPUs NVML sees (0, with errors["gpus"], when it cannot count).
 * facts_gpu_one: GPU index's object as above; errors["gpus"] gains what NVML
 * would not say of it; w (may be NULL) hears each query before it is made.
 */
json_t *facts_gpu_driver(const struct nvml *n, unsigned int *count, json_t *errors,
                         const struct gpu_watch *w);
json_t *facts_gpu_one(const struct nvml *n, unsigned int index, json_t *errors,
                      const struct gpu_watch *w);

/* No NVML library loads (absent: the loader's reason, "" when one did) on a
 * node whose PCI bus shows NVIDIA GPUs (facts["gpu_pci"]): errors["gpus"]
 * says so, unless it already says something. */
void facts_gpu_absent_error(json_t *facts, json_t *errors, const char *absent);

/* Append msg to errors[field] ("; " between), so that one bad GPU does not
 * hide another. */
void facts_gpu_add_error(json_t *errors, const char *field, const char *msg);

/*
 * Set facts["nccl"] to {"version": "2.28.3", "library": path} from
 * ncclGetVersion, or null when no libnccl.so.2 can be loaded. The library is
 * looked up as "libnccl.so.2" (LD_LIBRARY_PATH, ld.so.cache), then at
 * /usr/local/cuda/lib64/libnccl.so.2; "library" is the path the dynamic
 * loader actually opened. errors["nccl"] is set when the library loads but
 * has no working ncclGetVersion.
 */
void facts_nccl_collect(json_t *facts, json_t *errors);

/*
 * Format an NCCL version code as "major.minor.patch". NCCL >= 2.9 encodes
 * major*10000 + minor*100 + patch; older releases major*1000 + minor*100 +
 * patch. Returns 0, or CD_ERR_PARSE for a code <= 0 (buf is then "").
 */
int facts_nccl_version_string(int code, char *buf, size_t len);

#endif
