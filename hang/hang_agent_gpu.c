/* SPDX-License-Identifier: MIT */
/*
 * hang_agent_gpu.c - the GPU part of `hang_sample` (hang_agent.h): each
 * GPU's utilisation through NVML (probes/nvml.h) and the GPU each rank's
 * process runs on, by its PID among the GPU's compute processes.
 */
#include "cd.h"
#include "hang/hang_agent_internal.h"
#include "probes/nvml.h"

#include <stdio.h>
#include <string.h>

#define MAX_GPU_PROCS 256

static json_t *gpu_one(const struct nvml *n, unsigned int index, json_t *procs)
{
	char uuid[NVML_UUID_LEN] = "", why[128], err[CD_ERRLEN];
	unsigned int pids[MAX_GPU_PROCS];
	unsigned long long used[MAX_GPU_PROCS];
	struct nvml_utilization u;
	json_t *g = json_pack("{sIsnsnsns[]}", "index", (json_int_t)index, "uuid", "util_gpu",
	                      "util_memory", "pids"),
	       *p;
	size_t np = 0, i;
	nvml_device dev;
	nvml_return r;

	if ((r = n->get_handle(index, &dev)) != 0) {
		json_object_set_new(g, "error",
		                    json_sprintf("nvmlDeviceGetHandleByIndex: %s",
		                                 nvml_error(n, r, why, sizeof(why))));
		return g;
	}
	if (n->get_uuid(dev, uuid, sizeof(uuid)) == 0) {
		uuid[sizeof(uuid) - 1] = '\0';
		json_object_set_new(g, "uuid", json_string(uuid));
	}
	if (!n->get_utilization)
		json_object_set_new(g, "error",
		                    json_string("NVML has no nvmlDeviceGetUtilizationRates"));
	else if ((r = n->get_utilization(dev, &u)) == 0) {
		json_object_set_new(g, "util_gpu", json_integer(u.gpu));
		json_object_set_new(g, "util_memory", json_integer(u.memory));
	} else
		json_object_set_new(g, "error",
		                    json_sprintf("nvmlDeviceGetUtilizationRates: %s",
		                                 nvml_error(n, r, why, sizeof(why))));
	if (nvml_device_pids(n, dev, pids, used, MAX_GPU_PROCS, &np, err, sizeof(err)) < 0)
		json_object_set_new(g, "pids_error", json_string(err));
	for (size_t k = 0; k < np; k++)
		json_array_append_new(json_object_get(g, "pids"), json_integer(pids[k]));
	/* the ranks on this GPU (the first GPU found holds a rank that has several) */
	json_array_foreach(procs, i, p)
	{
		json_int_t pid = json_integer_value(json_object_get(p, "pid"));

		if (json_is_object(json_object_get(p, "gpu")))
			continue;
		for (size_t k = 0; k < np; k++) {
			if ((json_int_t)pids[k] != pid)
				continue;
			json_object_set_new(p, "gpu",
			                    json_pack("{sIsOsOsOsI}", "index", (json_int_t)index,
			                              "uuid", json_object_get(g, "uuid"),
			                              "util_gpu", json_object_get(g, "util_gpu"),
			                              "util_memory",
			                              json_object_get(g, "util_memory"),
			                              "used_memory_bytes", (json_int_t)used[k]));
			break;
		}
	}
	return g;
}

void hang_agent_gpus(json_t *out, json_t *procs)
{
	char err[CD_ERRLEN], why[128];
	unsigned int count = 0;
	struct nvml n;
	json_t *gpus, *p;
	nvml_return r;
	size_t i;
	int rc;

	json_array_foreach(procs, i, p) json_object_set_new(p, "gpu", json_null());
	rc = nvml_open(&n, err, sizeof(err));
	if (rc <= 0) {
		json_object_set_new(out, "gpus", json_null());
		if (rc < 0)
			json_object_set_new(out, "gpu_error", json_string(err));
		return;
	}
	gpus = json_array();
	if ((r = n.get_count(&count)) != 0) {
		json_object_set_new(
		    out, "gpu_error",
		    json_sprintf("nvmlDeviceGetCount: %s", nvml_error(&n, r, why, sizeof(why))));
		count = 0;
	}
	for (unsigned int k = 0; k < count && k < HANG_AGENT_MAX_GPUS; k++)
		json_array_append_new(gpus, gpu_one(&n, k, procs));
	nvml_close(&n);
	json_object_set_new(out, "gpus", gpus);
}
