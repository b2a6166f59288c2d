/* SPDX-License-Identifier: MIT */
/*
 * fuzz_facts.c - libFuzzer harness for the pure parsers of the node-facts
 * probe (probes/facts.h, probes/facts_python.h): what /proc, os-release or a
 * Python child prints on a node must never crash the agent.
 *
 * The first input byte picks the parser (its low three bits, so the seeds
 * start with an ASCII digit); the rest of the input is fed to it, not
 * NUL-terminated:
 *   0 facts_parse_cpuinfo      4 facts_python_parse_torch
 *   1 facts_parse_meminfo      5 facts_env_filter (one "NAME=value" per line)
 *   2 facts_parse_os_release   6 facts_json_text
 *   3 facts_python_parse_info  7 all of the above
 * Seeds: tests/fuzz/corpus/facts/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "probes/facts.h"
#include "probes/facts_python.h"

static void fuzz_cpuinfo(const char *buf, size_t len)
{
	char *model = (char *)1;
	int rc = facts_parse_cpuinfo(buf, len, &model);

	if ((rc == 0) != (model != NULL) || (rc != 0 && rc != CD_ERR_NOTFOUND))
		abort();
	free(model);
}

static void fuzz_meminfo(const char *buf, size_t len)
{
	char err[CD_ERRLEN] = "";
	struct facts_meminfo m;
	int rc = facts_parse_meminfo(buf, len, &m, err, sizeof(err));

	if (rc == 0) {
		if (m.total_bytes < -1 || m.available_bytes < -1)
			abort();
	} else if (rc != CD_ERR_PARSE || err[0] == '\0') {
		abort();
	}
}

static void fuzz_os_release(const char *buf, size_t len)
{
	char *pretty = (char *)1;
	int rc = facts_parse_os_release(buf, len, &pretty);

	if ((rc == 0) != (pretty != NULL) || (rc != 0 && rc != CD_ERR_NOTFOUND))
		abort();
	if (pretty && pretty[0] == '\0')
		abort();
	free(pretty);
	/* the short name of the same text: any string or NULL, never a crash */
	free(facts_os_short(buf, len));
}

static void fuzz_python_info(const char *buf, size_t len)
{
	char err[CD_ERRLEN] = "";
	struct facts_python_info info;
	int rc = facts_python_parse_info(buf, len, &info, err, sizeof(err));

	if (rc == 0) {
		if (!info.executable || info.executable[0] != '/' || !info.version)
			abort();
	} else if (rc != CD_ERR_PARSE || err[0] == '\0' || info.executable || info.version ||
	           info.torch_origin) {
		abort();
	}
	facts_python_info_fini(&info);
	facts_python_info_fini(&info);
}

static void fuzz_torch(const char *buf, size_t len)
{
	char err[CD_ERRLEN] = "";
	json_t *t = (json_t *)1, *v;
	int rc = facts_python_parse_torch(buf, len, &t, err, sizeof(err));

	if (rc == 0) {
		if (!json_is_object(t) || !json_is_string(json_object_get(t, "version")) ||
		    !json_is_boolean(json_object_get(t, "cuda_available")) ||
		    !json_is_integer(json_object_get(t, "import_ms")))
			abort();
		v = json_object_get(t, "cuda_version");
		if (!json_is_string(v) && !json_is_null(v))
			abort();
		v = json_object_get(t, "nccl_version");
		if (!json_is_string(v) && !json_is_null(v))
			abort();
		if (json_object_size(t) != 5)
			abort();
	} else if ((rc != CD_ERR_PARSE && rc != CD_ERR_IO) || t != NULL || err[0] == '\0') {
		abort();
	}
	json_decref(t);
}

/* The selection rule of facts.h, written out again. */
static int env_name_wanted(const char *k)
{
	static const char *const prefixes[] = {"NCCL_", "GLOO_", "MASTER_", "TORCH_"};
	static const char *const names[] = {"CUDA_VISIBLE_DEVICES", "WORLD_SIZE", "RANK",
	                                    "LOCAL_RANK", "OMP_NUM_THREADS"};

	for (size_t i = 0; i < CD_ARRAY_LEN(prefixes); i++)
		if (strncmp(k, prefixes[i], strlen(prefixes[i])) == 0 &&
		    strlen(k) > strlen(prefixes[i]))
			return 1;
	for (size_t i = 0; i < CD_ARRAY_LEN(names); i++)
		if (strcmp(k, names[i]) == 0)
			return 1;
	return 0;
}

static void fuzz_env(const char *buf, size_t len)
{
	char *copy = malloc(len + 1), **envp;
	size_t n = 1, i = 0, pos = 0;
	const char *key;
	json_t *env, *val;

	if (!copy)
		abort();
	memcpy(copy, buf, len);
	copy[len] = '\0';
	for (size_t k = 0; k < len; k++)
		n += copy[k] == '\n';
	if (!(envp = calloc(n + 1, sizeof(*envp))))
		abort();
	for (;;) {
		char *nl = strchr(copy + pos, '\n');

		envp[i++] = copy + pos;
		if (!nl || (size_t)(nl - copy) >= len)
			break;
		*nl = '\0';
		pos = (size_t)(nl - copy) + 1;
	}
	env = facts_env_filter(envp);
	if (!json_is_object(env) || json_object_size(env) > i)
		abort();
	json_object_foreach(env, key, val)
	{
		if (!env_name_wanted(key) || !json_is_string(val))
			abort();
	}
	json_decref(env);
	free(envp);
	free(copy);
}

static void fuzz_text(const char *buf, size_t len)
{
	json_t *j = facts_json_text(buf, len), *back;
	size_t n, plain = 1;
	char *dump;

	if (!json_is_string(j))
		abort();
	n = json_string_length(j);
	if (n < len || n > 3 * len)
		abort();
	for (size_t i = 0; i < len && plain; i++)
		plain = buf[i] > 0 && (unsigned char)buf[i] < 0x80;
	if (plain && (n != len || memcmp(json_string_value(j), buf, len) != 0))
		abort();
	if (memchr(json_string_value(j), '\0', n))
		abort();
	/* valid UTF-8: jansson dumps it and reads the same string back */
	if (!(dump = json_dumps(j, JSON_ENCODE_ANY)))
		abort();
	back = json_loads(dump, JSON_DECODE_ANY, NULL);
	if (!json_equal(j, back))
		abort();
	json_decref(back);
	free(dump);
	json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static void (*const parsers[])(const char *, size_t) = {
	    fuzz_cpuinfo, fuzz_meminfo, fuzz_os_release, fuzz_python_info,
	    fuzz_torch,   fuzz_env,     fuzz_text,
	};
	const char *buf = (const char *)data + 1;
	size_t len;
	unsigned sel;

	if (size == 0)
		return 0;
	sel = data[0] & 7u;
	len = size - 1;
	if (sel < CD_ARRAY_LEN(parsers)) {
		parsers[sel](buf, len);
	} else {
		for (size_t i = 0; i < CD_ARRAY_LEN(parsers); i++)
			parsers[i](buf, len);
	}
	return 0;
}
