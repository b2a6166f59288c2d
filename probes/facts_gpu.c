/* facts_gpu.c - GPUs through NVML and the NCCL version, both dlopen()ed (see
 * facts_gpu.h). */
#include "probes/facts_gpu.h"
#include "probes/facts.h"
#include "cd.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/*
 * The slice of nvml.h that is used, declared here so that no CUDA header is
 * needed to build the agent. nvmlReturn_t is a C enum (int ABI), 0 is
 * NVML_SUCCESS; nvmlDevice_t is an opaque pointer; nvmlMemory_t (v1) is three
 * unsigned long longs. Buffer sizes are NVML's *_V2_BUFFER_SIZE constants.
 */
typedef int nvml_return;
typedef struct nvml_device_st *nvml_device;
struct nvml_memory {
	unsigned long long total, free, used;
};
#define NVML_NAME_LEN   96
#define NVML_UUID_LEN   96
#define NVML_DRIVER_LEN 80

struct nvml {
	nvml_return (*init)(void);
	nvml_return (*shutdown)(void);
	nvml_return (*get_count)(unsigned int *count);
	nvml_return (*get_handle)(unsigned int index, nvml_device *dev);
	nvml_return (*get_name)(nvml_device dev, char *name, unsigned int len);
	nvml_return (*get_memory)(nvml_device dev, struct nvml_memory *mem);
	nvml_return (*get_uuid)(nvml_device dev, char *uuid, unsigned int len);
	nvml_return (*get_driver)(char *version, unsigned int len);
	const char *(*error_string)(nvml_return r); /* optional */
};

static const struct nvml_sym {
	const char *name;
	size_t off;
	int optional;
} nvml_syms[] = {
    {.name = "nvmlInit_v2", .off = offsetof(struct nvml, init)},
    {.name = "nvmlShutdown", .off = offsetof(struct nvml, shutdown)},
    {.name = "nvmlDeviceGetCount_v2", .off = offsetof(struct nvml, get_count)},
    {.name = "nvmlDeviceGetHandleByIndex_v2", .off = offsetof(struct nvml, get_handle)},
    {.name = "nvmlDeviceGetName", .off = offsetof(struct nvml, get_name)},
    {.name = "nvmlDeviceGetMemoryInfo", .off = offsetof(struct nvml, get_memory)},
    {.name = "nvmlDeviceGetUUID", .off = offsetof(struct nvml, get_uuid)},
    {.name = "nvmlSystemGetDriverVersion", .off = offsetof(struct nvml, get_driver)},
    {.name = "nvmlErrorString", .off = offsetof(struct nvml, error_string), .optional = 1},
};

/* POSIX guarantees that a function pointer round-trips through void *;
 * memcpy says so without a cast between object and function pointers. */
static int resolve(void *lib, const struct nvml_sym *syms, size_t n, void *table, char *err,
                   size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		void *p = dlsym(lib, syms[i].name);

		if (!p && !syms[i].optional)
			return cd_errf(err, errlen, CD_ERR_NOTFOUND, "%s has no %s", "NVML",
			               syms[i].name);
		memcpy((char *)table + syms[i].off, &p, sizeof(p));
	}
	return 0;
}

static const char *nvml_msg(const struct nvml *n, nvml_return r, char *buf, size_t len)
{
	const char *s = n->error_string ? n->error_string(r) : NULL;

	snprintf(buf, len, "%s (NVML error %d)", s ? s : "unknown", r);
	return buf;
}

/* Append "msg" to errors[field], so that one bad GPU does not hide another. */
static void add_error(json_t *errors, const char *field, const char *msg)
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

static json_t *nvml_gpu(const struct nvml *n, unsigned int index, json_t *errors)
{
	char name[NVML_NAME_LEN] = "", uuid[NVML_UUID_LEN] = "", msg[CD_ERRLEN], why[128];
	json_t *gpu = json_object();
	struct nvml_memory mem;
	nvml_device dev;
	nvml_return r;

	json_object_set_new(gpu, "index", json_integer(index));
	if ((r = n->get_handle(index, &dev)) != 0) {
		snprintf(msg, sizeof(msg), "GPU %u: nvmlDeviceGetHandleByIndex: %s", index,
		         nvml_msg(n, r, why, sizeof(why)));
		add_error(errors, "gpus", msg);
		return gpu;
	}
	if ((r = n->get_name(dev, name, sizeof(name))) == 0) {
		name[sizeof(name) - 1] = '\0';
		json_object_set_new(gpu, "name", facts_json_text(name, strlen(name)));
	} else {
		snprintf(msg, sizeof(msg), "GPU %u: nvmlDeviceGetName: %s", index,
		         nvml_msg(n, r, why, sizeof(why)));
		add_error(errors, "gpus", msg);
	}
	if ((r = n->get_memory(dev, &mem)) == 0) {
		json_object_set_new(gpu, "memory_bytes", json_integer((json_int_t)mem.total));
	} else {
		snprintf(msg, sizeof(msg), "GPU %u: nvmlDeviceGetMemoryInfo: %s", index,
		         nvml_msg(n, r, why, sizeof(why)));
		add_error(errors, "gpus", msg);
	}
	if ((r = n->get_uuid(dev, uuid, sizeof(uuid))) == 0) {
		uuid[sizeof(uuid) - 1] = '\0';
		json_object_set_new(gpu, "uuid", facts_json_text(uuid, strlen(uuid)));
	} else {
		snprintf(msg, sizeof(msg), "GPU %u: nvmlDeviceGetUUID: %s", index,
		         nvml_msg(n, r, why, sizeof(why)));
		add_error(errors, "gpus", msg);
	}
	return gpu;
}

void facts_gpu_collect(json_t *facts, json_t *errors)
{
	char msg[CD_ERRLEN], why[128], driver[NVML_DRIVER_LEN] = "";
	json_t *gpus = json_array(), *drv = json_null();
	struct nvml n;
	unsigned int count = 0;
	nvml_return r;
	void *lib;

	lib = dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_LOCAL);
	if (!lib)
		goto out; /* no NVIDIA driver on this node: no GPUs, not an error */
	if (resolve(lib, nvml_syms, CD_ARRAY_LEN(nvml_syms), &n, msg, sizeof(msg)) < 0) {
		facts_set_error(errors, "gpus", msg);
		goto out;
	}
	if ((r = n.init()) != 0) {
		snprintf(msg, sizeof(msg), "nvmlInit: %s", nvml_msg(&n, r, why, sizeof(why)));
		facts_set_error(errors, "gpus", msg);
		goto out;
	}
	if ((r = n.get_driver(driver, sizeof(driver))) == 0) {
		driver[sizeof(driver) - 1] = '\0';
		json_decref(drv);
		drv = facts_json_text(driver, strlen(driver));
	} else {
		snprintf(msg, sizeof(msg), "nvmlSystemGetDriverVersion: %s",
		         nvml_msg(&n, r, why, sizeof(why)));
		facts_set_error(errors, "gpu_driver", msg);
	}
	if ((r = n.get_count(&count)) != 0) {
		snprintf(msg, sizeof(msg), "nvmlDeviceGetCount: %s",
		         nvml_msg(&n, r, why, sizeof(why)));
		facts_set_error(errors, "gpus", msg);
		count = 0;
	}
	for (unsigned int i = 0; i < count; i++)
		json_array_append_new(gpus, nvml_gpu(&n, i, errors));
	n.shutdown();
out:
	if (lib)
		dlclose(lib);
	json_object_set_new(facts, "gpus", gpus);
	json_object_set_new(facts, "gpu_driver", drv);
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
