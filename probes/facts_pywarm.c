/* SPDX-License-Identifier: MIT */
/* facts_pywarm.c - the warm key of the Python/torch facts (see facts_pywarm.h). */
#include "probes/facts_pywarm.h"
#include "probes/facts.h"
#include "cd.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What the interpreter reads from the environment to find its packages, and
 * what torch reads to find GPUs. */
static const char *const key_env[] = {
    "PATH",           "PYTHONPATH",  "PYTHONHOME",   "PYTHONUSERBASE",       "PYTHONNOUSERSITE",
    "PYTHONSAFEPATH", "VIRTUAL_ENV", "CONDA_PREFIX", "CUDA_VISIBLE_DEVICES",
};

static json_t *text_or_null(const char *s)
{
	return s ? facts_json_text(s, strlen(s)) : json_null();
}

/* "dev:ino:size:mode:mtime_ns:ctime_ns" of path, or "missing". */
static json_t *stat_text(const char *path)
{
	struct stat st;

	if (!path || stat(path, &st) < 0)
		return json_string("missing");
	return json_sprintf("%ju:%ju:%jd:%o:%jd%09ld:%jd%09ld", (uintmax_t)st.st_dev,
	                    (uintmax_t)st.st_ino, (intmax_t)st.st_size, (unsigned)st.st_mode,
	                    (intmax_t)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
	                    (intmax_t)st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
}

static void add_file(json_t *files, const char *path)
{
	json_array_append_new(files, json_pack("[o, o]", text_or_null(path), stat_text(path)));
}

static int runnable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

char *facts_pywarm_which(const char *name)
{
	const char *path = getenv("PATH"), *p, *end;

	if (!name || !name[0])
		return NULL;
	if (strchr(name, '/'))
		return cd_strdup(name);
	if (!path)
		path = "/bin:/usr/bin";
	for (p = path;; p = end + 1) {
		char *cand;

		end = strchrnul(p, ':');
		cand = end == p ? cd_asprintf("%s", name)
		                : cd_asprintf("%.*s/%s", (int)(end - p), p, name);
		if (runnable(cand))
			return cand;
		free(cand);
		if (!*end)
			return NULL;
	}
}

json_t *facts_pywarm_key(const char *py, const char *executable, const char *torch_origin,
                         json_t *paths, const char *gpu_driver)
{
	char *found = facts_pywarm_which(py), cwd[PATH_MAX], *torch_dir = NULL;
	json_t *key, *env, *files;
	size_t i, kept = 0;
	json_t *p;

	if (!found)
		return NULL;
	env = json_object();
	for (i = 0; i < sizeof(key_env) / sizeof(key_env[0]); i++)
		json_object_set_new(env, key_env[i], text_or_null(getenv(key_env[i])));
	json_object_set_new(env, "cwd", text_or_null(getcwd(cwd, sizeof(cwd))));
	files = json_array();
	add_file(files, executable);
	add_file(files, torch_origin);
	if (torch_origin && strrchr(torch_origin, '/')) {
		torch_dir = cd_strdup(torch_origin);
		*strrchr(torch_dir, '/') = '\0';
	}
	add_file(files, torch_dir);
	json_array_foreach(paths, i, p)
	{
		if (!json_is_string(p) || kept >= FACTS_PYWARM_PATHS_MAX)
			continue;
		add_file(files, json_string_value(p));
		kept++;
	}
	key = json_pack(
	    "{s:o, s:o, s:o, s:o}", "interpreter",
	    json_pack("[o, o, o]", text_or_null(py), text_or_null(found), stat_text(found)), "env",
	    env, "gpu_driver", text_or_null(gpu_driver), "files", files);
	free(torch_dir);
	free(found);
	return key;
}
