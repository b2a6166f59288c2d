/* SPDX-License-Identifier: MIT */
/* facts.c - node facts: the collection on the node (see facts.h); the
 * parsers it feeds are in facts_parse.c. */
#include "probes/facts.h"
#include "probes/rdma_probe.h"
#include "probes/facts_ascend.h"
#include "probes/facts_gpu.h"
#include "probes/facts_python.h"
#include "cd.h"
#include "scan.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* /proc/cpuinfo is about 1.5 KiB per CPU on x86 (the flags line); 16 MiB
 * leaves room for thousands of CPUs. */
#define CPUINFO_MAX    (16u << 20)
#define SMALL_FILE_MAX (64u << 10)

void facts_opts_init(struct facts_opts *o)
{
	o->python_timeout_ms = FACTS_PYTHON_TIMEOUT_MS;
	o->cache_dir = NULL;
	o->no_cache = 0;
	o->python = NULL;
}

void facts_set_error(json_t *errors, const char *field, const char *msg)
{
	json_object_set_new(errors, field, facts_json_text(msg, strlen(msg)));
}

int facts_read_file(const char *path, size_t max, char **data, size_t *len, char *errbuf,
                    size_t errlen)
{
	return scan_read_file(path, max, SCAN_FILE_TO_EOF, data, len, errbuf, errlen);
}

static void set_text(json_t *facts, const char *key, const char *s)
{
	json_object_set_new(facts, key, facts_json_text(s, strlen(s)));
}

/* u is NULL when uname() failed. */
static void collect_identity(json_t *facts, json_t *errors, const struct utsname *u)
{
	char host[HOST_NAME_MAX + 2], err[CD_ERRLEN];
	char *data = NULL, *os = NULL;
	size_t len;
	int rc;

	host[sizeof(host) - 1] = '\0';
	if (gethostname(host, sizeof(host) - 1) == 0)
		set_text(facts, "hostname", host);
	else
		facts_set_error(errors, "hostname", strerror(errno));
	if (u) {
		set_text(facts, "kernel", u->release);
	} else {
		facts_set_error(errors, "kernel", "uname() failed");
		facts_set_error(errors, "arch", "uname() failed");
	}
	rc = facts_read_file("/etc/os-release", SMALL_FILE_MAX, &data, &len, err, sizeof(err));
	if (rc == CD_ERR_NOTFOUND)
		rc = facts_read_file("/usr/lib/os-release", SMALL_FILE_MAX, &data, &len, err,
		                     sizeof(err));
	if (rc == 0 && facts_parse_os_release(data, len, &os) < 0)
		rc =
		    cd_errf(err, sizeof(err), CD_ERR_PARSE, "no PRETTY_NAME or NAME in os-release");
	if (rc == 0) {
		set_text(facts, "os", os);
		free(os);
		os = facts_os_short(data, len);
		if (os)
			set_text(facts, "os_short", os);
	} else {
		facts_set_error(errors, "os", err);
	}
	free(data);
	free(os);
	if (u)
		set_text(facts, "arch", u->machine);
}

static void collect_cpu_mem(json_t *facts, json_t *errors, const char *machine)
{
	struct facts_meminfo mi;
	char err[CD_ERRLEN], *data = NULL, *model = NULL, *end;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t len;
	double up;

	if (cpus > 0)
		json_object_set_new(facts, "cpus", json_integer(cpus));
	else
		facts_set_error(errors, "cpus", "sysconf(_SC_NPROCESSORS_ONLN) failed");

	if (facts_read_file("/proc/cpuinfo", CPUINFO_MAX, &data, &len, err, sizeof(err)) < 0)
		facts_set_error(errors, "cpu_model", err);
	else if (facts_parse_cpuinfo(data, len, &model) == 0)
		set_text(facts, "cpu_model", model);
	else if (machine && *machine)
		set_text(facts, "cpu_model", machine);
	else
		facts_set_error(errors, "cpu_model", "no CPU model in /proc/cpuinfo");
	free(data);
	free(model);

	if (facts_read_file("/proc/meminfo", SMALL_FILE_MAX, &data, &len, err, sizeof(err)) < 0 ||
	    facts_parse_meminfo(data, len, &mi, err, sizeof(err)) < 0) {
		facts_set_error(errors, "mem_total_bytes", err);
		facts_set_error(errors, "mem_available_bytes", err);
	} else {
		if (mi.total_bytes >= 0)
			json_object_set_new(facts, "mem_total_bytes", json_integer(mi.total_bytes));
		else
			facts_set_error(errors, "mem_total_bytes", "no MemTotal in /proc/meminfo");
		if (mi.available_bytes >= 0)
			json_object_set_new(facts, "mem_available_bytes",
			                    json_integer(mi.available_bytes));
		else
			facts_set_error(
			    errors, "mem_available_bytes",
			    "no MemAvailable in /proc/meminfo (kernel older than 3.14)");
	}
	free(data);
	data = NULL;

	if (facts_read_file("/proc/uptime", SMALL_FILE_MAX, &data, &len, err, sizeof(err)) < 0) {
		facts_set_error(errors, "uptime_s", err);
	} else {
		errno = 0;
		up = strtod(data, &end);
		if (errno || end == data || up < 0)
			facts_set_error(errors, "uptime_s", "malformed /proc/uptime");
		else
			json_object_set_new(facts, "uptime_s", json_real(up));
	}
	free(data);
}

json_t *facts_collect(const struct facts_opts *opts)
{
	json_t *facts = json_object(), *errors = json_object(), *gpu = json_object();
	struct facts_opts defaults;
	struct timespec now;
	struct utsname u;
	int have_u;

	if (!opts) {
		facts_opts_init(&defaults);
		opts = &defaults;
	}
	have_u = uname(&u) == 0;
	collect_identity(facts, errors, have_u ? &u : NULL);
	collect_cpu_mem(facts, errors, have_u ? u.machine : NULL);
	/* NVML first: its driver version is part of the torch cache key */
	facts_gpu_collect(gpu, errors);
	facts_python_collect(opts, json_string_value(json_object_get(gpu, "gpu_driver")), facts,
	                     errors);
	facts_nccl_collect(facts, errors);
	facts_ascend_collect(
	    facts, errors,
	    json_string_value(json_object_get(json_object_get(facts, "python"), "path")),
	    json_string_value(json_object_get(json_object_get(facts, "python"), "version")),
	    environ);
	json_object_update(facts, gpu);
	json_decref(gpu);
	rdma_probe_collect(facts, NULL, environ, errors);
	json_object_set_new(facts, "env", facts_env_filter(environ));
	clock_gettime(CLOCK_REALTIME, &now);
	json_object_set_new(facts, "wall_clock_ms",
	                    json_integer((json_int_t)now.tv_sec * 1000 + now.tv_nsec / 1000000));
	json_object_set_new(facts, "errors", errors);
	return facts;
}
