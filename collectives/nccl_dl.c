/* SPDX-License-Identifier: MIT */
/* nccl_dl.c - NCCL and the CUDA runtime through dlopen (see nccl_dl.h). */
#include "collectives/nccl_dl.h"
#include "cd.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const nccl_names[] = {"libnccl.so.2", "libnccl.so"};
static const char *const cudart_names[] = {"libcudart.so.13", "libcudart.so.12",
                                           "libcudart.so.11.0", "libcudart.so"};

struct dl_sym {
	const char *name;
	size_t off;
	int optional;
};

#define SYM(member, symbol)                                             \
	{                                                               \
		.name = symbol, .off = offsetof(struct nccl_dl, member) \
	}
#define SYM_OPT(member, symbol)                                                        \
	{                                                                              \
		.name = symbol, .off = offsetof(struct nccl_dl, member), .optional = 1 \
	}

static const struct dl_sym nccl_syms[] = {
    SYM(get_version, "ncclGetVersion"),
    SYM(get_unique_id, "ncclGetUniqueId"),
    SYM(comm_init_rank, "ncclCommInitRank"),
    SYM_OPT(comm_init_rank_config, "ncclCommInitRankConfig"),
    SYM(comm_get_async_error, "ncclCommGetAsyncError"),
    SYM_OPT(comm_finalize, "ncclCommFinalize"),
    SYM(comm_destroy, "ncclCommDestroy"),
    SYM(comm_abort, "ncclCommAbort"),
    SYM(all_reduce, "ncclAllReduce"),
    SYM(get_error_string, "ncclGetErrorString"),
    SYM_OPT(get_last_error, "ncclGetLastError"),
};

static const struct dl_sym cudart_syms[] = {
    SYM(get_device_count, "cudaGetDeviceCount"),
    SYM(cuda_error_string, "cudaGetErrorString"),
    SYM(driver_get_version, "cudaDriverGetVersion"),
    SYM(runtime_get_version, "cudaRuntimeGetVersion"),
    SYM(set_device, "cudaSetDevice"),
    SYM(device_malloc, "cudaMalloc"),
    SYM(device_free, "cudaFree"),
    SYM(memcpy_async, "cudaMemcpyAsync"),
    SYM(memset_async, "cudaMemsetAsync"),
    SYM(stream_create, "cudaStreamCreateWithFlags"),
    SYM(stream_destroy, "cudaStreamDestroy"),
    SYM(stream_query, "cudaStreamQuery"),
    SYM(event_create, "cudaEventCreateWithFlags"),
    SYM(event_record, "cudaEventRecord"),
    SYM(event_query, "cudaEventQuery"),
    SYM(event_elapsed, "cudaEventElapsedTime"),
    SYM(event_destroy, "cudaEventDestroy"),
};

/*
 * Why no candidate loaded. Of several failures the most telling one is kept:
 * a library that is there but unusable says more than the absence of the
 * names tried before or after it.
 */
enum { WHY_NOT_FOUND = 1, WHY_BROKEN, WHY_DRIVER };

struct why {
	int rank;
	char text[CD_ERRLEN];
};

static void why_note(struct why *w, int rank, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void why_note(struct why *w, int rank, const char *fmt, ...)
{
	va_list ap;

	if (rank <= w->rank)
		return;
	w->rank = rank;
	va_start(ap, fmt);
	vsnprintf(w->text, sizeof(w->text), fmt, ap);
	va_end(ap);
}

/* The names to try: the override in env when it is set (*n becomes 1),
 * else names (*n of them). */
static const char *const *candidates(const char *env, const char *const *names, size_t *n,
                                     const char **one)
{
	const char *v = getenv(env);

	if (v && v[0]) {
		*one = v;
		*n = 1;
		return one;
	}
	return names;
}

static void *open_one(const char *name, struct why *w)
{
	void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	const char *e;

	if (lib)
		return lib;
	e = dlerror();
	if (!e)
		e = "unknown error";
	/* a missing dependency also reads "No such file", but names itself */
	if (strstr(e, "No such file") && strstr(e, name))
		why_note(w, WHY_NOT_FOUND, "%s not found (dlopen: %s)", name, e);
	else
		why_note(w, WHY_BROKEN, "%s did not load (dlopen: %s)", name, e);
	return NULL;
}

/* POSIX guarantees that a function pointer round-trips through void *;
 * memcpy says so without a cast between object and function pointers. */
static int resolve(void *lib, const char *name, const struct dl_sym *syms, size_t n,
                   struct nccl_dl *d, struct why *w)
{
	for (size_t i = 0; i < n; i++) {
		void *p = dlsym(lib, syms[i].name);

		if (!p && !syms[i].optional) {
			why_note(w, WHY_BROKEN, "%s has no %s", name, syms[i].name);
			return -1;
		}
		memcpy((char *)d + syms[i].off, &p, sizeof(p));
	}
	return 0;
}

static int open_nccl(struct nccl_dl *d, struct why *w)
{
	const char *one;
	size_t n = CD_ARRAY_LEN(nccl_names);
	const char *const *names = candidates("CLUSTERDOC_NCCL_LIB", nccl_names, &n, &one);
	nccl_result r;

	for (size_t i = 0; i < n; i++) {
		void *lib = open_one(names[i], w);

		if (!lib)
			continue;
		if (resolve(lib, names[i], nccl_syms, CD_ARRAY_LEN(nccl_syms), d, w) < 0) {
			dlclose(lib);
			continue;
		}
		if ((r = d->get_version(&d->nccl_version)) != NCCL_DL_SUCCESS) {
			why_note(w, WHY_BROKEN, "ncclGetVersion in %s failed (NCCL error %d)",
			         names[i], r);
			dlclose(lib);
			continue;
		}
		d->nccl_lib = lib;
		snprintf(d->nccl_name, sizeof(d->nccl_name), "%s", names[i]);
		return 0;
	}
	return -1;
}

/* A runtime newer than the driver cannot run anything (cudaGetDeviceCount
 * would say cudaErrorInsufficientDriver); an older one on the list may. */
static int open_cudart(struct nccl_dl *d, struct why *w)
{
	const char *one;
	size_t n = CD_ARRAY_LEN(cudart_names);
	const char *const *names = candidates("CLUSTERDOC_CUDART_LIB", cudart_names, &n, &one);

	for (size_t i = 0; i < n; i++) {
		void *lib = open_one(names[i], w);
		int driver = 0, runtime = 0;

		if (!lib)
			continue;
		if (resolve(lib, names[i], cudart_syms, CD_ARRAY_LEN(cudart_syms), d, w) < 0) {
			dlclose(lib);
			continue;
		}
		/* a driver version of 0 is no driver at all: cudaGetDeviceCount says so */
		if (d->driver_get_version(&driver) == NCCL_DL_CUDA_SUCCESS &&
		    d->runtime_get_version(&runtime) == NCCL_DL_CUDA_SUCCESS && driver > 0 &&
		    driver < runtime) {
			why_note(w, WHY_DRIVER,
			         "CUDA driver too old (driver %d.%d, %s needs %d.%d)",
			         driver / 1000, driver % 1000 / 10, names[i], runtime / 1000,
			         runtime % 1000 / 10);
			dlclose(lib);
			continue;
		}
		d->cudart_lib = lib;
		snprintf(d->cudart_name, sizeof(d->cudart_name), "%s", names[i]);
		return 0;
	}
	return -1;
}

int nccl_dl_open(struct nccl_dl *d, char *why, size_t whylen)
{
	struct why w = {0};

	memset(d, 0, sizeof(*d));
	if (open_nccl(d, &w) < 0)
		return cd_errf(why, whylen, CD_ERR_UNSUPPORTED, "%s", w.text);
	w.rank = 0;
	if (open_cudart(d, &w) < 0) {
		nccl_dl_close(d);
		return cd_errf(why, whylen, CD_ERR_UNSUPPORTED, "%s", w.text);
	}
	return 0;
}

void nccl_dl_close(struct nccl_dl *d)
{
	if (d->nccl_lib)
		dlclose(d->nccl_lib);
	if (d->cudart_lib)
		dlclose(d->cudart_lib);
	memset(d, 0, sizeof(*d));
}

/* The only global: the libraries, loaded once for every thread. */
static struct {
	pthread_once_t once;
	int err;
	char why[CD_ERRLEN];
	struct nccl_dl dl;
} loaded = {.once = PTHREAD_ONCE_INIT};

static void load_once(void)
{
	loaded.err = nccl_dl_open(&loaded.dl, loaded.why, sizeof(loaded.why));
}

int nccl_dl_get(const struct nccl_dl **d, char *why, size_t whylen)
{
	pthread_once(&loaded.once, load_once);
	if (loaded.err < 0)
		return cd_errf(why, whylen, loaded.err, "%s", loaded.why);
	*d = &loaded.dl;
	return 0;
}

void nccl_dl_version_string(int code, char *buf, size_t len)
{
	int major, minor;

	/* NCCL_VERSION(): X*1000 + Y*100 + Z up to 2.8, X*10000 + Y*100 + Z after */
	if (code >= 10000) {
		major = code / 10000;
		minor = code % 10000 / 100;
	} else {
		major = code / 1000;
		minor = code % 1000 / 100;
	}
	snprintf(buf, len, "%d.%d.%d", major, minor, code % 100);
}
