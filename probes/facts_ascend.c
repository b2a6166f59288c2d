/* SPDX-License-Identifier: MIT */
/* facts_ascend.c - the Ascend NPU facts on the node (facts_ascend.h): npu-smi
 * under a deadline, and file lookups for the versions (no Python start). */
#include "probes/facts_ascend.h"
#include "probes/facts.h"
#include "cd.h"
#include "childrun.h"
#include "loop.h"
#include "scan.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#define INFO_MAX (64u << 10)
#define OUT_MAX  (1u << 20)
#define ERR_MAX  4096
/* How much of a tool's words a finding quotes. */
#define QUOTE_MAX 200

/* The install root (see facts_ascend.h). */
const char *ascend_root(void)
{
	const char *r = getenv("CLUSTERDOC_ASCEND_ROOT");

	return r && *r ? r : ASCEND_DEFAULT_ROOT;
}

/* Whether prog is an executable file in a directory of PATH. */
int ascend_on_path(const char *prog, char *path, size_t len)
{
	const char *env = getenv("PATH"), *p = env ? env : "/usr/bin:/bin";

	while (*p) {
		const char *colon = strchr(p, ':');
		size_t n = colon ? (size_t)(colon - p) : strlen(p);

		if (n && (size_t)snprintf(path, len, "%.*s/%s", (int)n, p, prog) < len &&
		    access(path, X_OK) == 0)
			return 1;
		p += n + (colon != NULL);
	}
	return 0;
}

struct tool_run {
	struct loop *loop;
	int ok;
	char *out;
	size_t len;
	char why[CD_ERRLEN];
};

void ascend_quote(char *dst, size_t cap, const struct buf *b)
{
	size_t n = cap && b->len > cap - 1 ? cap - 1 : b->len;
	const char *s = b->data;

	scan_trim(&s, &n);
	snprintf(dst, cap, "%.*s", (int)n, n ? s : "");
	for (char *c = dst; *c; c++)
		if (*c == '\n' || *c == '\r' || *c == '\t')
			*c = ' ';
}

static void tool_done(const struct childrun_result *r, void *arg)
{
	struct tool_run *t = arg;
	char words[QUOTE_MAX + 1];

	if (r->rc < 0) {
		snprintf(t->why, sizeof(t->why), "npu-smi info: %s", r->error);
	} else if (!WIFEXITED(r->status) || WEXITSTATUS(r->status) != 0) {
		ascend_quote(words, sizeof(words), r->err->len ? r->err : r->out);
		snprintf(t->why, sizeof(t->why), "npu-smi info: exit status %d: \"%s\"",
		         WIFEXITED(r->status) ? WEXITSTATUS(r->status) : 128 + WTERMSIG(r->status),
		         words);
	} else {
		t->ok = 1;
		t->out = malloc(r->out->len + 1);
		if (!t->out)
			cd_fatal("out of memory");
		memcpy(t->out, r->out->data, r->out->len);
		t->out[r->out->len] = '\0';
		t->len = r->out->len;
	}
	loop_stop(t->loop);
}

/* Run `npu-smi info` under FACTS_ASCEND_TOOL_MS. 0 with *out (caller frees),
 * or -1 with why. */
static int run_npu_smi(const char *prog, char **out, size_t *len, char *why, size_t wlen)
{
	struct tool_run t = {.loop = loop_new()};
	char *argv[] = {(char *)prog, "info", NULL};

	if (childrun_start(t.loop, argv, FACTS_ASCEND_TOOL_MS, OUT_MAX, ERR_MAX, tool_done, &t,
	                   t.why, sizeof(t.why)))
		loop_run(t.loop); /* until tool_done: childrun's deadline bounds it */
	loop_free(t.loop);
	if (!t.ok) {
		snprintf(why, wlen, "%s", t.why);
		return -1;
	}
	*out = t.out;
	*len = t.len;
	return 0;
}

/* The value of key in the key=value file at path, as a JSON string; null
 * when the file or key is absent. */
static json_t *file_value(const char *path, const char *key)
{
	char err[CD_ERRLEN], val[128], *data = NULL;
	json_t *v = json_null();
	size_t len;

	if (scan_read_file(path, INFO_MAX, SCAN_FILE_TO_EOF, &data, &len, err, sizeof(err)) == 0 &&
	    ascend_parse_keyval(data, len, key, val, sizeof(val)) == 0)
		v = facts_json_text(val, strlen(val));
	free(data);
	return v;
}

/* CANN: the toolkit named by ASCEND_TOOLKIT_HOME (set by its set_env.sh),
 * else <root>/ascend-toolkit/latest; its <arch>-linux install info. */
static json_t *cann_version(const char *root)
{
	const char *home = getenv("ASCEND_TOOLKIT_HOME");
	char dir[PATH_MAX], path[2 * PATH_MAX];
	struct utsname u;
	json_t *v;

	if (home && *home)
		snprintf(dir, sizeof(dir), "%s", home);
	else
		snprintf(dir, sizeof(dir), "%s/ascend-toolkit/latest", root);
	if (uname(&u) == 0) {
		snprintf(path, sizeof(path), "%s/%s-linux/ascend_toolkit_install.info", dir,
		         u.machine);
		if (!json_is_null(v = file_value(path, "version")))
			return v;
		json_decref(v);
	}
	snprintf(path, sizeof(path), "%s/version.cfg", dir);
	return file_value(path, "toolkit_installed_version");
}

/* torch_npu/version.py in the site directories of the interpreter. */
static json_t *site_torch_npu_version(const char *python, const char *pyver)
{
	static const char *const sub[] = {"site-packages", "dist-packages"};
	char prefix[PATH_MAX], mm[16], path[PATH_MAX + 96], val[64], err[CD_ERRLEN];
	const char *home = getenv("HOME");
	char *data = NULL, *slash;
	unsigned maj, min;
	size_t len;

	if (!python || !pyver || sscanf(pyver, "%u.%u", &maj, &min) != 2)
		return json_null();
	snprintf(mm, sizeof(mm), "%u.%u", maj, min);
	snprintf(prefix, sizeof(prefix), "%s", python);
	for (int up = 0; up < 2; up++) /* .../bin/python3 -> ... */
		if ((slash = strrchr(prefix, '/')))
			*slash = '\0';
	for (int where = 0; where < 3; where++) {
		for (size_t s = 0; s < 2; s++) {
			const char *base = where == 0 ? prefix : where == 1 ? "/usr/local" : home;

			if (!base)
				continue;
			snprintf(path, sizeof(path), "%s/%slib/python%s/%s/torch_npu/version.py",
			         base, where == 2 ? ".local/" : "", mm, sub[s]);
			if (scan_read_file(path, INFO_MAX, SCAN_FILE_TO_EOF, &data, &len, err,
			                   sizeof(err)) < 0)
				continue;
			if (ascend_parse_py_version(data, len, val, sizeof(val)) == 0) {
				free(data);
				return facts_json_text(val, strlen(val));
			}
			free(data);
			data = NULL;
		}
	}
	return json_null();
}

/* The version in DIR/torch_npu/version.py, or NULL. */
static json_t *version_py_in(const char *dir, size_t dlen)
{
	char path[PATH_MAX + 32], val[64], err[CD_ERRLEN], *data = NULL;
	json_t *v = NULL;
	size_t len;

	if (dlen == 0 || dlen >= PATH_MAX)
		return NULL;
	snprintf(path, sizeof(path), "%.*s/torch_npu/version.py", (int)dlen, dir);
	if (scan_read_file(path, INFO_MAX, SCAN_FILE_TO_EOF, &data, &len, err, sizeof(err)) < 0)
		return NULL;
	if (ascend_parse_py_version(data, len, val, sizeof(val)) == 0)
		v = facts_json_text(val, strlen(val));
	free(data);
	return v;
}

/* torch_npu/version.py in the directories of envp's PYTHONPATH (searched
 * first by the interpreter), then in the site directories of the
 * interpreter. */
static json_t *torch_npu_version(const char *python, const char *pyver, char *const *envp)
{
	for (; envp && *envp; envp++) {
		const char *p, *colon;
		json_t *v;

		if (strncmp(*envp, "PYTHONPATH=", 11) != 0)
			continue;
		for (p = *envp + 11; *p; p = *colon ? colon + 1 : colon) {
			colon = strchrnul(p, ':');
			if ((v = version_py_in(p, (size_t)(colon - p))))
				return v;
		}
		break;
	}
	return site_torch_npu_version(python, pyver);
}

static json_t *hccn_conf(void)
{
	char err[CD_ERRLEN], *data = NULL;
	json_t *v = json_null();
	size_t len;

	if (scan_read_file("/etc/hccn.conf", INFO_MAX, SCAN_FILE_TO_EOF, &data, &len, err,
	                   sizeof(err)) == 0)
		v = ascend_parse_hccn_conf(data, len);
	free(data);
	return v;
}

static json_t *npus_json(const struct ascend_smi *s)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < s->n; i++)
		json_array_append_new(arr, json_pack("{s:i, s:s, s:s, s:s}", "id", s->npu[i].id,
		                                     "name", s->npu[i].name, "health",
		                                     s->npu[i].health, "bus_id", s->npu[i].bus_id));
	return arr;
}

json_t *facts_ascend_env(char *const *envp)
{
	json_t *env = json_object();

	for (; envp && *envp; envp++) {
		const char *eq = strchr(*envp, '=');
		json_t *name;

		if (!eq || (strncmp(*envp, "HCCL_", 5) && strncmp(*envp, "ASCEND_", 7)))
			continue;
		name = facts_json_text(*envp, (size_t)(eq - *envp));
		if (!json_object_get(env, json_string_value(name)))
			json_object_set_new(env, json_string_value(name),
			                    facts_json_text(eq + 1, strlen(eq + 1)));
		json_decref(name);
	}
	return env;
}

void facts_ascend_collect(json_t *facts, json_t *errors, const char *python_path,
                          const char *python_version, char *const *envp)
{
	const char *root = ascend_root();
	char smi[PATH_MAX], why[2 * PATH_MAX], dir[PATH_MAX], err[CD_ERRLEN];
	struct ascend_smi *s = NULL;
	json_t *asc = json_null();
	int have_tool = ascend_on_path("npu-smi", smi, sizeof(smi));
	struct stat st;
	char *out = NULL;
	size_t len;

	snprintf(dir, sizeof(dir), "%s/driver", root);
	if (!have_tool && stat(dir, &st) != 0) {
		json_object_set_new(facts, "npus", json_array());
		json_object_set_new(facts, "ascend", json_null());
		json_object_set_new(facts, "ascend_env", facts_ascend_env(envp));
		return;
	}
	if (!have_tool) {
		json_object_set_new(facts, "npus", json_null());
		snprintf(why, sizeof(why),
		         "the NPU probe is incomplete: npu-smi is not on PATH though %s exists",
		         dir);
		facts_set_error(errors, "npus", why);
	} else if (run_npu_smi(smi, &out, &len, err, sizeof(err)) < 0) {
		snprintf(why, sizeof(why), "the NPU probe is incomplete: %s", err);
		json_object_set_new(facts, "npus", json_null());
		facts_set_error(errors, "npus", why);
	} else if (!(s = calloc(1, sizeof(*s)))) {
		cd_fatal("out of memory");
	} else if (ascend_parse_npu_smi(out, len, s, err, sizeof(err)) < 0) {
		char words[QUOTE_MAX + 1];
		struct buf b = {.data = out, .len = len};

		ascend_quote(words, sizeof(words), &b);
		snprintf(why, sizeof(why), "the NPU probe is incomplete: %s: \"%s\"", err, words);
		json_object_set_new(facts, "npus", json_null());
		facts_set_error(errors, "npus", why);
	} else {
		json_object_set_new(facts, "npus", npus_json(s));
	}
	asc = json_object();
	snprintf(dir, sizeof(dir), "%s/driver/version.info", root);
	json_object_set_new(asc, "driver", file_value(dir, "Version"));
	if (json_is_null(json_object_get(asc, "driver")) && s && s->version[0])
		json_object_set_new(asc, "driver", json_string(s->version));
	snprintf(dir, sizeof(dir), "%s/firmware/version.info", root);
	json_object_set_new(asc, "firmware", file_value(dir, "Version"));
	json_object_set_new(asc, "cann", cann_version(root));
	json_object_set_new(asc, "torch_npu", torch_npu_version(python_path, python_version, envp));
	json_object_set_new(asc, "hccn_conf", hccn_conf());
	json_object_set_new(facts, "ascend", asc);
	json_object_set_new(facts, "ascend_env", facts_ascend_env(envp));
	free(out);
	free(s);
}
