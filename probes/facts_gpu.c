/* SPDX-License-Identifier: MIT */
/* facts_gpu.c - GPUs through NVML (probes/nvml.h) and the NCCL version, both
 * dlopen()ed (see facts_gpu.h). */
#include "probes/facts_gpu.h"
#include "probes/facts.h"
#include "probes/facts_gpu_health.h"
#include "probes/facts_gpu_watch.h"
#include "probes/nvml.h"
#include "cd.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void facts_gpu_add_error(json_t *errors, const char *field, const char *msg)
{
	const char *old = json_string_value(json_object_get(errors, field));
	char *joined;

	if (!old) {
		facts_set_error(errors, field, msg);
		return;
	}
	joined = cd_asprintf("%s; %s", old, msg);
	facts_set_error(errors, field, joined);
	free(joined);
}

/* Name the query about to be made to the watcher (the GPU's own facts:
 * no health key yet). */
static void asking(const struct gpu_watch *w, const char *fn)
{
	if (w && w->asking)
		w->asking(w->arg, "", fn);
}

json_t *facts_gpu_one(const struct nvml *n, unsigned int index, json_t *errors,
                      const struct gpu_watch *w)
{
	char name[NVML_NAME_LEN] = "", uuid[NVML_UUID_LEN] = "", msg[CD_ERRLEN], why[128];
	json_t *gpu = json_object();
	struct nvml_memory mem;
	nvml_device dev;
	nvml_return r;

	json_object_set_new(gpu, "index", json_integer(index));
	asking(w, "nvmlDeviceGetHandleByIndex");
	if ((r = n->get_handle(index, &dev)) != 0) {
		snprintf(msg, sizeof(msg), "GPU %u: nvmlDeviceGetHandleByIndex: %s", index,
		         nvml_error(n, r, why, sizeof(why)));
		facts_gpu_add_error(errors, "gpus", msg);
		return gpu;
	}
	asking(w, "nvmlDeviceGetName");
	if ((r = n->get_name(dev, name, sizeof(name))) == 0) {
		name[sizeof(name) - 1] = '\0';
		json_object_set_new(gpu, "name", facts_json_text(name, strlen(name)));
	} else {
		snprintf(msg, sizeof(msg), "GPU %u: nvmlDeviceGetName: %s", index,
		         nvml_error(n, r, why, sizeof(why)));
		facts_gpu_add_error(errors, "gpus", msg);
	}
	asking(w, "nvmlDeviceGetMemoryInfo");
	if ((r = n->get_memory(dev, &mem)) == 0) {
		json_object_set_new(gpu, "memory_bytes", json_integer((json_int_t)mem.total));
	} else {
		snprintf(msg, sizeof(msg), "GPU %u: nvmlDeviceGetMemoryInfo: %s", index,
		         nvml_error(n, r, why, sizeof(why)));
		facts_gpu_add_error(errors, "gpus", msg);
	}
	asking(w, "nvmlDeviceGetUUID");
	if ((r = n->get_uuid(dev, uuid, sizeof(uuid))) == 0) {
		uuid[sizeof(uuid) - 1] = '\0';
		json_object_set_new(gpu, "uuid", facts_json_text(uuid, strlen(uuid)));
	} else {
		snprintf(msg, sizeof(msg), "GPU %u: nvmlDeviceGetUUID: %s", index,
		         nvml_error(n, r, why, sizeof(why)));
		facts_gpu_add_error(errors, "gpus", msg);
	}
	json_object_set_new(gpu, "health", facts_gpu_health(n, dev, w));
	return gpu;
}

json_t *facts_gpu_driver(const struct nvml *n, unsigned int *count, json_t *errors,
                         const struct gpu_watch *w)
{
	char msg[CD_ERRLEN], why[128], driver[NVML_DRIVER_LEN] = "";
	json_t *drv = json_null();
	nvml_return r;

	*count = 0;
	asking(w, "nvmlSystemGetDriverVersion");
	if ((r = n->get_driver(driver, sizeof(driver))) == 0) {
		driver[sizeof(driver) - 1] = '\0';
		drv = facts_json_text(driver, strlen(driver));
	} else {
		snprintf(msg, sizeof(msg), "nvmlSystemGetDriverVersion: %s",
		         nvml_error(n, r, why, sizeof(why)));
		facts_set_error(errors, "gpu_driver", msg);
	}
	asking(w, "nvmlDeviceGetCount");
	if ((r = n->get_count(count)) != 0) {
		snprintf(msg, sizeof(msg), "nvmlDeviceGetCount: %s",
		         nvml_error(n, r, why, sizeof(why)));
		facts_set_error(errors, "gpus", msg);
		*count = 0;
	}
	return drv;
}

void facts_gpu_absent_error(json_t *facts, json_t *errors, const char *absent)
{
	json_int_t devices = json_integer_value(
	    json_object_get(json_object_get(facts, "gpu_pci"), "nvidia_devices"));
	char msg[CD_ERRLEN + 96];

	if (!absent[0] || devices <= 0 || json_object_get(errors, "gpus"))
		return;
	snprintf(msg, sizeof(msg),
	         "the PCI bus shows %lld NVIDIA GPU%s, but no NVML library loads: %s",
	         (long long)devices, devices == 1 ? "" : "s", absent);
	facts_set_error(errors, "gpus", msg);
}

void facts_gpu_collect(json_t *facts, json_t *errors)
{
	char absent[CD_ERRLEN];

	facts_gpu_watch_collect(facts, errors, absent, sizeof(absent));
	facts_gpu_node_collect("/sys", facts, errors);
	facts_gpu_absent_error(facts, errors, absent);
}

int facts_nccl_version_string(int code, char *buf, size_t len)
{
	int major, minor, patch;

	if (code <= 0) {
		if (len)
			buf[0] = '\0';
		return CD_ERR_PARSE;
	}
	if (code >= 10000) {
		major = code / 10000;
		minor = code % 10000 / 100;
	} else {
		major = code / 1000;
		minor = code % 1000 / 100;
	}
	patch = code % 100;
	snprintf(buf, len, "%d.%d.%d", major, minor, patch);
	return 0;
}

/* Where libnccl.so.2 is looked for, in order: the loader's own search (which
 * honours LD_LIBRARY_PATH, as the job would), then the CUDA toolkit. */
static const char *const nccl_candidates[] = {
    "libnccl.so.2",
    "/usr/local/cuda/lib64/libnccl.so.2",
};

void facts_nccl_collect(json_t *facts, json_t *errors)
{
	char msg[CD_ERRLEN], version[32];
	int (*get_version)(int *code) = NULL;
	const char *path = NULL;
	struct link_map *map = NULL;
	json_t *nccl = json_null();
	void *lib = NULL, *sym;
	int code = 0, r;

	for (size_t i = 0; i < CD_ARRAY_LEN(nccl_candidates) && !lib; i++) {
		struct stat st;

		path = nccl_candidates[i];
		lib = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
		/* a file that is there but does not load is worth reporting */
		if (!lib && path[0] == '/' && stat(path, &st) == 0) {
			snprintf(msg, sizeof(msg), "%s", dlerror());
			facts_set_error(errors, "nccl", msg);
		}
	}
	if (!lib)
		goto out;
	if (dlinfo(lib, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && map->l_name[0])
		path = map->l_name;
	sym = dlsym(lib, "ncclGetVersion");
	if (!sym) {
		snprintf(msg, sizeof(msg), "%s has no ncclGetVersion", path);
		facts_set_error(errors, "nccl", msg);
		goto out;
	}
	memcpy(&get_version, &sym, sizeof(sym));
	if ((r = get_version(&code)) != 0 ||
	    facts_nccl_version_string(code, version, sizeof(version)) < 0) {
		snprintf(msg, sizeof(msg), "ncclGetVersion in %s failed (result %d, code %d)", path,
		         r, code);
		facts_set_error(errors, "nccl", msg);
		goto out;
	}
	json_decref(nccl);
	nccl = json_pack("{s:s, s:o}", "version", version, "library",
	                 facts_json_text(path, strlen(path)));
out:
	if (lib)
		dlclose(lib);
	json_object_set_new(facts, "nccl", nccl ? nccl : json_null());
}
