/* facts.c - node facts: collection, the /proc and os-release parsers, the
 * environment filter (see facts.h). */
#include "probes/facts.h"
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

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 when invalid.
 * NUL counts as invalid: a C consumer of the JSON would cut the string. */
static size_t utf8_seq_len(const unsigned char *s, size_t n)
{
	unsigned int cp, min;
	size_t len;

	if (s[0] >= 0x01 && s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f, min = 0x80;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f, min = 0x800;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07, min = 0x10000;
	else
		return 0;
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

json_t *facts_json_text(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	char *clean = cd_malloc(len * 3 + 1);
	size_t i = 0, o = 0;
	json_t *j;

	while (i < len) {
		size_t n = utf8_seq_len(u + i, len - i);

		if (n) {
			memcpy(clean + o, s + i, n);
			o += n;
			i += n;
		} else {
			memcpy(clean + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		}
	}
	j = json_stringn(clean, o);
	free(clean);
	if (!j)
		cd_fatal("out of memory making a JSON string");
	return j;
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

static int key_is(const char *key, size_t n, const char *want)
{
	return strlen(want) == n && memcmp(key, want, n) == 0;
}

/* arm64 cpuinfo names the core only by implementer and part number. */
static const struct arm_part {
	unsigned int implementer;
	unsigned int part;
	const char *name;
} arm_parts[] = {
    {.implementer = 0x41, .part = 0xd03, .name = "ARM Cortex-A53"},
    {.implementer = 0x41, .part = 0xd07, .name = "ARM Cortex-A57"},
    {.implementer = 0x41, .part = 0xd08, .name = "ARM Cortex-A72"},
    {.implementer = 0x41, .part = 0xd0b, .name = "ARM Cortex-A76"},
    {.implementer = 0x41, .part = 0xd0c, .name = "ARM Neoverse-N1"},
    {.implementer = 0x41, .part = 0xd40, .name = "ARM Neoverse-V1"},
    {.implementer = 0x41, .part = 0xd49, .name = "ARM Neoverse-N2"},
    {.implementer = 0x41, .part = 0xd4f, .name = "ARM Neoverse-V2"},
    {.implementer = 0x41, .part = 0xd84, .name = "ARM Neoverse-V3"},
    {.implementer = 0x41, .part = 0xd8e, .name = "ARM Neoverse-N3"},
    {.implementer = 0x46, .part = 0x001, .name = "Fujitsu A64FX"},
    {.implementer = 0x48, .part = 0xd01, .name = "HiSilicon Kunpeng-920"},
    {.implementer = 0xc0, .part = 0xac3, .name = "Ampere AmpereOne"},
};

/* Parse "0x41"-style numbers of at most 15 characters; -1 when malformed. */
static long parse_hex(const char *s, size_t n)
{
	char tmp[16], *end;
	long v;

	if (n == 0 || n >= sizeof(tmp))
		return -1;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	errno = 0;
	v = strtol(tmp, &end, 0);
	if (errno || *end || v < 0)
		return -1;
	return v;
}

static char *arm_part_name(const char *impl, size_t impl_n, const char *part, size_t part_n)
{
	long i = parse_hex(impl, impl_n), p = parse_hex(part, part_n);

	for (size_t k = 0; k < CD_ARRAY_LEN(arm_parts); k++)
		if (arm_parts[k].implementer == i && arm_parts[k].part == p)
			return cd_strdup(arm_parts[k].name);
	return cd_asprintf("CPU implementer %.*s part %.*s", (int)impl_n, impl, (int)part_n, part);
}

enum cpu_key { CPU_MODEL_NAME, CPU_HARDWARE, CPU_IMPLEMENTER, CPU_PART, CPU_POWER, CPU_NKEYS };

static const char *const cpu_keys[CPU_NKEYS] = {
    [CPU_MODEL_NAME] = "model name",
    [CPU_HARDWARE] = "Hardware",
    [CPU_IMPLEMENTER] = "CPU implementer",
    [CPU_PART] = "CPU part",
    [CPU_POWER] = "cpu",
};

int facts_parse_cpuinfo(const char *buf, size_t len, char **model)
{
	const char *val[CPU_NKEYS] = {0}, *p = buf, *end = buf + len, *line;
	size_t val_n[CPU_NKEYS] = {0}, n;

	*model = NULL;
	while (scan_next_line(&p, end, &line, &n)) {
		const char *colon = memchr(line, ':', n), *key = line, *v;
		size_t key_n, v_n;

		if (!colon)
			continue;
		key_n = (size_t)(colon - line);
		v = colon + 1;
		v_n = n - key_n - 1;
		scan_trim(&key, &key_n);
		scan_trim(&v, &v_n);
		for (int k = 0; k < CPU_NKEYS; k++) {
			if (!val[k] && v_n && key_is(key, key_n, cpu_keys[k])) {
				val[k] = v;
				val_n[k] = v_n;
			}
		}
	}
	if (val[CPU_MODEL_NAME])
		*model = cd_strndup(val[CPU_MODEL_NAME], val_n[CPU_MODEL_NAME]);
	else if (val[CPU_HARDWARE])
		*model = cd_strndup(val[CPU_HARDWARE], val_n[CPU_HARDWARE]);
	else if (val[CPU_IMPLEMENTER] && val[CPU_PART])
		*model = arm_part_name(val[CPU_IMPLEMENTER], val_n[CPU_IMPLEMENTER], val[CPU_PART],
		                       val_n[CPU_PART]);
	else if (val[CPU_PART])
		*model = cd_asprintf("CPU part %.*s", (int)val_n[CPU_PART], val[CPU_PART]);
	else if (val[CPU_POWER])
		*model = cd_strndup(val[CPU_POWER], val_n[CPU_POWER]);
	return *model ? 0 : CD_ERR_NOTFOUND;
}

/* "24684096 kB" -> bytes. Returns 0 or CD_ERR_PARSE. */
static int parse_mem_value(const char *v, size_t n, int64_t *bytes)
{
	int64_t x = 0;
	size_t i = 0;

	if (n == 0 || v[0] < '0' || v[0] > '9')
		return CD_ERR_PARSE;
	for (; i < n && v[i] >= '0' && v[i] <= '9'; i++) {
		if (x > (INT64_MAX - 9) / 10)
			return CD_ERR_PARSE;
		x = x * 10 + (v[i] - '0');
	}
	v += i;
	n -= i;
	scan_trim(&v, &n);
	if (n == 0) {
		*bytes = x;
		return 0;
	}
	if (!key_is(v, n, "kB") || x > INT64_MAX / 1024)
		return CD_ERR_PARSE;
	*bytes = x * 1024;
	return 0;
}

int facts_parse_meminfo(const char *buf, size_t len, struct facts_meminfo *out, char *errbuf,
                        size_t errlen)
{
	static const struct {
		const char *key;
		size_t off;
	} wanted[] = {
	    {.key = "MemTotal", .off = offsetof(struct facts_meminfo, total_bytes)},
	    {.key = "MemAvailable", .off = offsetof(struct facts_meminfo, available_bytes)},
	};
	const char *p = buf, *end = buf + len, *line;
	size_t n;

	out->total_bytes = -1;
	out->available_bytes = -1;
	while (scan_next_line(&p, end, &line, &n)) {
		const char *colon = memchr(line, ':', n), *v;
		size_t v_n;

		if (!colon)
			continue;
		v = colon + 1;
		v_n = n - (size_t)(colon - line) - 1;
		scan_trim(&v, &v_n);
		for (size_t k = 0; k < CD_ARRAY_LEN(wanted); k++) {
			int64_t *dst = (int64_t *)(void *)((char *)out + wanted[k].off);

			if (!key_is(line, (size_t)(colon - line), wanted[k].key) || *dst >= 0)
				continue;
			if (parse_mem_value(v, v_n, dst) < 0)
				return cd_errf(errbuf, errlen, CD_ERR_PARSE,
				               "malformed %s line in /proc/meminfo: \"%.*s\"",
				               wanted[k].key, (int)(n > 80 ? 80 : n), line);
		}
	}
	return 0;
}

/* Unquote an os-release value into a new string. */
static char *os_release_value(const char *v, size_t n)
{
	char *s = cd_malloc(n + 1), *o = s;
	size_t i = 0;

	if (n && (v[0] == '"' || v[0] == '\'')) {
		char q = v[0];

		for (i = 1; i < n && v[i] != q; i++) {
			if (q == '"' && v[i] == '\\' && i + 1 < n && strchr("\"\\$`", v[i + 1]))
				i++;
			*o++ = v[i];
		}
	} else {
		memcpy(o, v, n);
		o += n;
	}
	*o = '\0';
	return s;
}

void facts_os_release_values(const char *buf, size_t len, const char *const *keys, size_t nkeys,
                             char **val)
{
	const char *p = buf, *end = buf + len, *line;
	size_t n;

	for (size_t k = 0; k < nkeys; k++)
		val[k] = NULL;
	while (scan_next_line(&p, end, &line, &n)) {
		const char *eq, *v;
		size_t key_n, v_n;

		scan_trim(&line, &n);
		if (!n || line[0] == '#' || !(eq = memchr(line, '=', n)))
			continue;
		key_n = (size_t)(eq - line);
		v = eq + 1;
		v_n = n - key_n - 1;
		for (size_t k = 0; k < nkeys; k++) {
			if (key_is(line, key_n, keys[k])) {
				/* a later assignment wins, as when the file is sourced */
				free(val[k]);
				val[k] = os_release_value(v, v_n);
			}
		}
	}
}

int facts_parse_os_release(const char *buf, size_t len, char **pretty)
{
	enum { PRETTY, NAME, VERSION_ID, NKEYS };
	static const char *const keys[NKEYS] = {
	    [PRETTY] = "PRETTY_NAME", [NAME] = "NAME", [VERSION_ID] = "VERSION_ID"};
	char *val[NKEYS];

	*pretty = NULL;
	facts_os_release_values(buf, len, keys, NKEYS, val);
	if (val[PRETTY] && *val[PRETTY])
		*pretty = cd_strdup(val[PRETTY]);
	else if (val[NAME] && val[VERSION_ID] && *val[VERSION_ID])
		*pretty = cd_asprintf("%s %s", val[NAME], val[VERSION_ID]);
	else if (val[NAME] && *val[NAME])
		*pretty = cd_strdup(val[NAME]);
	for (int k = 0; k < NKEYS; k++)
		free(val[k]);
	return *pretty ? 0 : CD_ERR_NOTFOUND;
}

/* The environment a job reads: NCCL/Gloo/torch knobs and the launcher's
 * rendezvous variables. */
static const struct env_rule {
	const char *name;
	int prefix; /* 1: name is a prefix; 0: the whole name */
} env_rules[] = {
    {.name = "NCCL_", .prefix = 1},
    {.name = "GLOO_", .prefix = 1},
    {.name = "MASTER_", .prefix = 1},
    {.name = "TORCH_", .prefix = 1},
    {.name = "CUDA_VISIBLE_DEVICES", .prefix = 0},
    {.name = "WORLD_SIZE", .prefix = 0},
    {.name = "RANK", .prefix = 0},
    {.name = "LOCAL_RANK", .prefix = 0},
    {.name = "OMP_NUM_THREADS", .prefix = 0},
};

static int env_wanted(const char *name, size_t n)
{
	for (size_t k = 0; k < CD_ARRAY_LEN(env_rules); k++) {
		size_t rn = strlen(env_rules[k].name);

		if (env_rules[k].prefix ? n > rn && memcmp(name, env_rules[k].name, rn) == 0
		                        : key_is(name, n, env_rules[k].name))
			return 1;
	}
	return 0;
}

json_t *facts_env_filter(char *const *envp)
{
	json_t *env = json_object();

	for (; envp && *envp; envp++) {
		const char *eq = strchr(*envp, '=');
		json_t *name;
		size_t n;

		if (!eq || !env_wanted(*envp, n = (size_t)(eq - *envp)))
			continue;
		/* jansson keys must be UTF-8 too; names are ASCII in practice */
		name = facts_json_text(*envp, n);
		if (!json_object_get(env, json_string_value(name)))
			json_object_set_new(env, json_string_value(name),
			                    facts_json_text(eq + 1, strlen(eq + 1)));
		json_decref(name);
	}
	return env;
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
	json_object_update(facts, gpu);
	json_decref(gpu);
	json_object_set_new(facts, "env", facts_env_filter(environ));
	clock_gettime(CLOCK_REALTIME, &now);
	json_object_set_new(facts, "wall_clock_ms",
	                    json_integer((json_int_t)now.tv_sec * 1000 + now.tv_nsec / 1000000));
	json_object_set_new(facts, "errors", errors);
	return facts;
}
