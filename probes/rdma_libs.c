/* SPDX-License-Identifier: MIT */
/* rdma_libs.c - the node's verbs library and providers, as files (see
 * rdma_libs.h). The words of the files are parsed by rdma_parse.c. */
#include "probes/rdma_libs.h"
#include "probes/rdma_parse.h"
#include "probes/facts.h"
#include "cd.h"
#include "scan.h"

#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#define CONF_MAX (256u << 10) /* one ld.so.conf file */

/* Adds msg to errors["rdma_node"], after what is there. */
static void note_node(json_t *errors, const char *msg)
{
	const char *old = json_string_value(json_object_get(errors, "rdma_node"));
	char *joined;

	if (!old) {
		facts_set_error(errors, "rdma_node", msg);
		return;
	}
	if (strlen(old) + strlen(msg) + 2 >= 512)
		return;
	joined = cd_asprintf("%s; %s", old, msg);
	facts_set_error(errors, "rdma_node", joined);
	free(joined);
}

/* --- ld.so.conf ------------------------------------------------------------ */

struct conf_walk {
	const char *root;
	json_t *dirs, *errors;
};

static void conf_file(struct conf_walk *w, const char *path, int depth);

/* The files an include pattern names, under root, in name order. */
static void conf_include(struct conf_walk *w, const char *from, const char *pattern, int depth)
{
	const char *slash = strrchr(from, '/');
	char *full;
	glob_t g;

	/* ldconfig: a relative pattern is taken against the including file's
	 * directory */
	if (pattern[0] == '/' || !slash)
		full = cd_asprintf("%s%s", w->root, pattern);
	else
		full = cd_asprintf("%s%.*s/%s", w->root, (int)(slash - from), from, pattern);
	if (glob(full, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++)
			conf_file(w, g.gl_pathv[i] + strlen(w->root), depth + 1);
		globfree(&g);
	}
	free(full);
}

/* path (without root) read and its entries followed in order. */
static void conf_file(struct conf_walk *w, const char *path, int depth)
{
	char *full = cd_asprintf("%s%s", w->root, path), *data = NULL, err[CD_ERRLEN];
	json_t *entries, *e;
	size_t len, i;
	int rc;

	if (depth > RDMA_LIBS_CONF_DEPTH) {
		char msg[CD_ERRLEN];

		snprintf(msg, sizeof(msg), "%s: includes nested deeper than %d, not followed", path,
		         RDMA_LIBS_CONF_DEPTH);
		note_node(w->errors, msg);
		free(full);
		return;
	}
	rc = scan_read_file(full, CONF_MAX, SCAN_FILE_TO_EOF, &data, &len, err, sizeof(err));
	free(full);
	if (rc < 0) {
		if (rc != CD_ERR_NOTFOUND)
			note_node(w->errors, err);
		return;
	}
	entries = json_array();
	rdma_parse_ld_so_conf(data, len, entries);
	free(data);
	json_array_foreach(entries, i, e)
	{
		const char *dir = json_string_value(json_object_get(e, "dir"));

		if (dir && json_array_size(w->dirs) < RDMA_LIBS_CONF_DIRS)
			json_array_append_new(w->dirs, json_string(dir));
		else if (!dir)
			conf_include(w, path, json_string_value(json_object_get(e, "include")),
			             depth);
	}
	json_decref(entries);
}

void rdma_libs_conf_dirs(const char *root, json_t *dirs, json_t *errors)
{
	struct conf_walk w = {.root = root, .dirs = dirs, .errors = errors};

	conf_file(&w, "/etc/ld.so.conf", 0);
}

/* --- libibverbs ------------------------------------------------------------ */

/* dir/libibverbs.so.1 under root when it is a regular file (or a link to
 * one): the path without root, else NULL. */
static json_t *lib_in(const char *root, const char *dir, size_t n)
{
	char *path = cd_asprintf("%s%.*s/libibverbs.so.1", root, (int)n, dir);
	struct stat st;
	json_t *found = NULL;

	if (n && stat(path, &st) == 0 && S_ISREG(st.st_mode))
		found = facts_json_text(path + strlen(root), strlen(path + strlen(root)));
	free(path);
	return found;
}

json_t *rdma_libs_verbs_lib(const char *root, json_t *errors)
{
	static const struct {
		const char *dir;
		int multiarch; /* followed by /<machine>-linux-gnu */
	} dirs[] = {{"/usr/lib", 1}, {"/usr/lib64", 0}, {"/usr/lib", 0},      {"/lib", 1},
	            {"/lib64", 0},   {"/lib", 0},       {"/usr/local/lib", 0}};
	const char *ld = getenv("LD_LIBRARY_PATH");
	json_t *found = NULL, *conf = json_array(), *d;
	char multiarch[96];
	struct utsname u;
	size_t i;

	snprintf(multiarch, sizeof(multiarch), "%s-linux-gnu",
	         uname(&u) == 0 ? u.machine : "x86_64");
	/* LD_LIBRARY_PATH names the node's own directories: not under a test root */
	for (const char *s = !*root && ld ? ld : ""; *s && !found;) {
		size_t n = strcspn(s, ":");

		found = lib_in("", s, n);
		s += n + (s[n] == ':');
	}
	rdma_libs_conf_dirs(root, conf, errors);
	json_array_foreach(conf, i, d)
	{
		if (!found)
			found = lib_in(root, json_string_value(d), strlen(json_string_value(d)));
	}
	json_decref(conf);
	for (i = 0; i < CD_ARRAY_LEN(dirs) && !found; i++) {
		char *dir = cd_asprintf("%s%s%s", dirs[i].dir, dirs[i].multiarch ? "/" : "",
		                        dirs[i].multiarch ? multiarch : "");

		found = lib_in(root, dir, strlen(dir));
		free(dir);
	}
	return found ? found : json_null();
}

/* --- providers ------------------------------------------------------------- */

static int is_driver_file(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return d->d_name[0] != '.' && n > 7 && strcmp(d->d_name + n - 7, ".driver") == 0;
}

json_t *rdma_libs_providers(const char *root, json_t *errors)
{
	char *dir = cd_asprintf("%s/etc/libibverbs.d", root), err[CD_ERRLEN];
	struct dirent **ents = NULL;
	json_t *list = json_array();
	int n = scandir(dir, &ents, is_driver_file, alphasort);

	if (n < 0 && errno != ENOENT) {
		snprintf(err, sizeof(err), "cannot list /etc/libibverbs.d: %s", strerror(errno));
		note_node(errors, err);
	}
	for (int i = 0; i < n; i++) {
		char *path = cd_asprintf("%s/%s", dir, ents[i]->d_name), *data = NULL;
		size_t len;

		if (scan_read_file(path, 64u << 10, SCAN_FILE_TO_EOF, &data, &len, err,
		                   sizeof(err)) < 0)
			note_node(errors, err);
		else
			rdma_parse_driver_file(data, len, list);
		free(data);
		free(path);
		free(ents[i]);
	}
	free(ents);
	free(dir);
	return list;
}

/* rdma-core names a device after its provider: "rxe" for rxe0, "mlx5" for
 * mlx5_0 (the name, then a digit, '_' or nothing). */
static int names_device(const char *provider, const char *device)
{
	size_t n = strlen(provider);
	char next = device[n < strlen(device) ? n : strlen(device)];

	return n && strncmp(device, provider, n) == 0 &&
	       (next == '\0' || next == '_' || (next >= '0' && next <= '9'));
}

void rdma_libs_set_provider(json_t *o, const char *dev_dir, const char *device,
                            const json_t *providers)
{
	char *link = cd_asprintf("%s/device/driver", dev_dir), target[PATH_MAX];
	const char *driver = NULL, *want, *found = NULL;
	ssize_t n = readlink(link, target, sizeof(target) - 1);
	size_t i;
	json_t *p;

	/* the kernel's link ends in the driver's name: .../bus/pci/drivers/mlx5_core */
	if (n > 0) {
		target[n] = '\0';
		driver = strrchr(target, '/') ? strrchr(target, '/') + 1 : target;
		if (!*driver)
			driver = NULL;
	}
	want = rdma_provider_of_driver(driver);
	json_array_foreach(providers, i, p)
	{
		const char *name = json_string_value(p);

		if (!found && name && (want ? strcmp(name, want) == 0 : names_device(name, device)))
			found = name;
	}
	json_object_set_new(o, "driver",
	                    driver ? facts_json_text(driver, strlen(driver)) : json_null());
	json_object_set_new(o, "provider", found ? json_string(found) : json_null());
	free(link);
}
