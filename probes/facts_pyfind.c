/* SPDX-License-Identifier: MIT */
/*
 * facts_pyfind.c - the usual places of conda and virtualenv interpreters
 * (facts_pyfind.h). Only globbing and access(2): running the candidates is
 * facts_python.c's job.
 */
#include "probes/facts_pyfind.h"
#include "cd.h"

#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* One place: a glob pattern under a root ("~" is HOME, "" is absolute). */
static const struct place {
	int in_home;
	const char *pattern;
} places[] = {
    {.in_home = 1, .pattern = "miniconda3/envs/*/bin/python"},
    {.in_home = 1, .pattern = "miniconda3/bin/python"},
    {.in_home = 1, .pattern = "anaconda3/envs/*/bin/python"},
    {.in_home = 1, .pattern = "anaconda3/bin/python"},
    {.in_home = 1, .pattern = "miniforge3/envs/*/bin/python"},
    {.in_home = 1, .pattern = "miniforge3/bin/python"},
    {.in_home = 1, .pattern = "mambaforge/envs/*/bin/python"},
    {.in_home = 1, .pattern = "mambaforge/bin/python"},
    {.in_home = 0, .pattern = "/opt/conda/envs/*/bin/python"},
    {.in_home = 0, .pattern = "/opt/conda/bin/python"},
    {.in_home = 1, .pattern = ".venv/bin/python"},
    {.in_home = 1, .pattern = "venv*/bin/python"},
    {.in_home = 1, .pattern = ".virtualenvs/*/bin/python"},
    /* pyenv's builds (not its shims, which are scripts that pick one by the
     * directory they run in) */
    {.in_home = 1, .pattern = ".pyenv/versions/*/bin/python"},
    /* the distribution's own, which a pyenv or module-provided python3 first
     * in PATH hides (Debian's and Ubuntu's python3-torch live there) */
    {.in_home = 0, .pattern = "/usr/local/bin/python3"},
    {.in_home = 0, .pattern = "/usr/bin/python3"},
};

static int usable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

static void add(char ***paths, size_t *n, const char *path)
{
	if (*n >= FACTS_PYFIND_MAX || !usable(path))
		return;
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*paths)[i], path) == 0)
			return;
	(*paths)[(*n)++] = cd_strdup(path);
	(*paths)[*n] = NULL;
}

size_t facts_pyfind_candidates(const char *home, const char *conda_prefix, char ***paths)
{
	size_t n = 0;
	int have_home = home && home[0] == '/';

	*paths = cd_calloc(FACTS_PYFIND_MAX + 1, sizeof(**paths));
	if (conda_prefix && conda_prefix[0] == '/') {
		char *p = cd_asprintf("%s/bin/python", conda_prefix);

		add(paths, &n, p);
		free(p);
	}
	for (size_t k = 0; k < CD_ARRAY_LEN(places); k++) {
		const struct place *pl = &places[k];
		char *pattern;
		glob_t g;

		if (pl->in_home && !have_home)
			continue;
		/* a HOME of "/" must not give "//x" */
		pattern = pl->in_home
		              ? cd_asprintf("%s%s%s", home,
		                            home[strlen(home) - 1] == '/' ? "" : "/", pl->pattern)
		              : cd_strdup(pl->pattern);
		memset(&g, 0, sizeof(g));
		if (glob(pattern, 0, NULL, &g) == 0) /* sorted: the envs in name order */
			for (size_t i = 0; i < g.gl_pathc; i++)
				add(paths, &n, g.gl_pathv[i]);
		globfree(&g);
		free(pattern);
	}
	return n;
}

void facts_pyfind_free(char **paths)
{
	for (size_t i = 0; paths && paths[i]; i++)
		free(paths[i]);
	free(paths);
}
