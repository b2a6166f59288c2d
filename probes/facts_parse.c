/* SPDX-License-Identifier: MIT */
/* facts_parse.c - the node-facts probe's pure parsers (see facts.h): text as
 * JSON, /proc/cpuinfo, /proc/meminfo, os-release, and the environment
 * filter. No file and no system call: they are unit tested and fuzzed on
 * captured text, and the network probe's parsers link them alone. */
#include "probes/facts.h"
#include "cd.h"
#include "scan.h"
#include "utf8.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

json_t *facts_json_text(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	char *clean = cd_malloc(len * 3 + 1);
	size_t i = 0, o = 0;
	json_t *j;

	while (i < len) {
		/* NUL counts as invalid: a C consumer of the JSON would cut the
		 * string there. */
		size_t n = u[i] ? utf8_seq_len(u + i, len - i) : 0;

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
