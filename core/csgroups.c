/* SPDX-License-Identifier: MIT */
/* csgroups.c - parse ClusterShell's groups.conf and groups.d files (see csgroups.h). */
#include "csgroups.h"

#include "cd.h"
#include "scan.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The largest groups.conf or groups.d file read (1 MiB). */
#define CSGROUPS_FILE_MAX ((size_t)1 << 20)

/* The most names one section header may give ("[a,b,c]"). */
#define SECTION_NAMES_MAX 16

void csgroups_init(struct csgroups *c)
{
	memset(c, 0, sizeof(*c));
}

static void source_fini(struct csgroups_source *s)
{
	free(s->name);
	free(s->map);
	free(s->cfgdir);
	free(s->path);
	for (size_t i = 0; i < s->ngroups; i++) {
		free(s->groups[i]);
		free(s->nodes[i]);
	}
	free(s->groups);
	free(s->nodes);
}

void csgroups_fini(struct csgroups *c)
{
	if (!c)
		return;
	free(c->default_source);
	for (size_t i = 0; i < c->ndirs; i++)
		free(c->dirs[i]);
	free(c->dirs);
	free(c->dir_yaml);
	for (size_t i = 0; i < c->nsrc; i++)
		source_fini(&c->src[i]);
	free(c->src);
	for (size_t i = 0; i < c->nfiles; i++)
		free(c->files[i]);
	free(c->files);
	memset(c, 0, sizeof(*c));
}

const struct csgroups_source *csgroups_find(const struct csgroups *c, const char *name)
{
	for (size_t i = 0; c && name && i < c->nsrc; i++)
		if (strcmp(c->src[i].name, name) == 0)
			return &c->src[i];
	return NULL;
}

/* The source named name, added (defined at path:line) when new. */
static struct csgroups_source *source_get(struct csgroups *c, const char *name, const char *path,
                                          size_t line)
{
	struct csgroups_source *s = (struct csgroups_source *)csgroups_find(c, name);

	if (s)
		return s;
	c->src = cd_realloc(c->src, (c->nsrc + 1) * sizeof(*c->src));
	s = &c->src[c->nsrc++];
	memset(s, 0, sizeof(*s));
	s->name = cd_strdup(name);
	s->path = cd_strdup(path);
	s->line = line;
	return s;
}

static void add_dir(struct csgroups *c, const char *dir, const char *cfgdir, int yaml)
{
	const char *v = strstr(dir, "$CFGDIR");

	c->dirs = cd_realloc(c->dirs, (c->ndirs + 1) * sizeof(*c->dirs));
	c->dir_yaml = cd_realloc(c->dir_yaml, (c->ndirs + 1) * sizeof(*c->dir_yaml));
	c->dirs[c->ndirs] =
	    v ? cd_asprintf("%.*s%s%s", (int)(v - dir), dir, cfgdir, v + 7) : cd_strdup(dir);
	c->dir_yaml[c->ndirs++] = yaml;
}

static int have_dirs(const struct csgroups *c, int yaml)
{
	for (size_t i = 0; i < c->ndirs; i++)
		if (c->dir_yaml[i] == yaml)
			return 1;
	return 0;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

/* ---- groups.conf ---- */

#define CONT_NONE    (-1)
#define CONT_DEFAULT (-2)

struct conf_state {
	char *names[SECTION_NAMES_MAX]; /* the current section's names; none before one */
	size_t nnames;
	int is_main;
	long cont; /* the value a continuation line extends: a source's map (its
	            * index), CONT_DEFAULT or CONT_NONE (c->src moves as it grows) */
	const char *cfgdir;
	int first_dirs[2]; /* this file sets confdir / autodir (no earlier file did) */
	int first_default;
};

static void section_clear(struct conf_state *st)
{
	for (size_t i = 0; i < st->nnames; i++)
		free(st->names[i]);
	st->nnames = 0;
	st->is_main = 0;
	st->cont = CONT_NONE;
}

static int conf_section(struct csgroups *c, struct conf_state *st, const struct scan_file_line *l,
                        char *line, int main)
{
	char *end = strchr(line, ']'), *save = NULL;

	section_clear(st);
	if (!end || *trim(end + 1))
		return scan_file_bad(l, line, "a section header is [name] or [name,alias]");
	*end = '\0';
	if (strcmp(trim(line + 1), "Main") == 0) {
		if (!main)
			return scan_file_bad(
			    l, "[Main]", "[Main] belongs in groups.conf, not in a confdir file");
		st->is_main = 1;
		return 0;
	}
	for (char *n = strtok_r(line + 1, ",", &save); n; n = strtok_r(NULL, ",", &save)) {
		n = trim(n);
		if (!*n || strpbrk(n, " \t@") || st->nnames == SECTION_NAMES_MAX)
			return scan_file_bad(l, n, "a group source name without spaces or '@'");
		st->names[st->nnames++] = cd_strdup(n);
	}
	if (!st->nnames)
		return scan_file_bad(l, "[]", "a section needs a name");
	(void)c;
	return 0;
}

/* A [Main] key (the first file to give one wins). */
static void conf_main_key(struct csgroups *c, struct conf_state *st, const char *key, char *val)
{
	char *save = NULL;
	int yaml = strcmp(key, "autodir") == 0;

	if (strcmp(key, "default") == 0 && (st->first_default || !c->default_source)) {
		free(c->default_source);
		c->default_source = cd_strdup(val);
		st->first_default = 1;
		st->cont = CONT_DEFAULT;
		return;
	}
	if (!yaml && strcmp(key, "confdir") != 0 && strcmp(key, "groupsdir") != 0)
		return;
	if (!st->first_dirs[yaml] && have_dirs(c, yaml))
		return;
	st->first_dirs[yaml] = 1;
	for (char *d = strtok_r(val, " \t", &save); d; d = strtok_r(NULL, " \t", &save))
		add_dir(c, d, st->cfgdir, yaml);
}

/* A key of a source section: map, for every name of the section. */
static void conf_source_key(struct csgroups *c, struct conf_state *st,
                            const struct scan_file_line *l, const char *key, const char *val)
{
	st->cont = CONT_NONE;
	if (strcmp(key, "map") != 0)
		return;
	for (size_t i = 0; i < st->nnames; i++) {
		struct csgroups_source *s = source_get(c, st->names[i], l->path, l->no);

		/* an earlier file's definition wins */
		if (strcmp(s->path, l->path) != 0 || s->map)
			continue;
		s->map = cd_strdup(val);
		s->cfgdir = cd_strdup(st->cfgdir);
		if (i == 0)
			st->cont = (long)(s - c->src);
	}
}

static int conf_line(struct csgroups *c, struct conf_state *st, const struct scan_file_line *l,
                     char *raw, int main)
{
	char *line = trim(raw), *sep, *key, *val;

	if (!*line || *line == '#' || *line == ';')
		return 0;
	if ((raw[0] == ' ' || raw[0] == '\t') && st->cont != CONT_NONE) {
		char **v = st->cont == CONT_DEFAULT ? &c->default_source : &c->src[st->cont].map;
		char *joined = cd_asprintf("%s\n%s", *v, line);

		free(*v);
		*v = joined;
		return 0;
	}
	if (*line == '[')
		return conf_section(c, st, l, line, main);
	sep = line + strcspn(line, ":=");
	if (!*sep)
		return scan_file_bad(l, line,
		                     "a groups.conf line is [section], key: value or a comment");
	*sep = '\0';
	key = trim(line);
	val = trim(sep + 1);
	if (!*key)
		return scan_file_bad(l, val, "a value without a key");
	if (!st->is_main && !st->nnames)
		return scan_file_bad(l, key, "a key before any [section]");
	if (st->is_main)
		conf_main_key(c, st, key, val);
	else
		conf_source_key(c, st, l, key, val);
	return 0;
}

int csgroups_parse_conf(struct csgroups *c, const char *buf, size_t len, const char *path,
                        const char *cfgdir, int main, char *err, size_t errlen)
{
	struct conf_state st = {.cfgdir = cfgdir, .cont = CONT_NONE};
	struct scan_file_line l = {.path = path, .err = err, .errlen = errlen};
	const char *p = buf, *end = buf + len;
	char *line = NULL;
	int rc;

	while ((rc = scan_file_next(&p, end, &l, &line)) > 0 &&
	       (rc = conf_line(c, &st, &l, line, main)) == 0)
		;
	free(line);
	section_clear(&st);
	return rc;
}

/* ---- groups.d YAML files ---- */

/* Cut a " # comment" outside quotes. */
static void yaml_cut_comment(char *s)
{
	char q = 0;

	for (char *p = s; *p; p++) {
		if (q) {
			q = *p == q ? 0 : q;
		} else if (*p == '\'' || *p == '"') {
			q = *p;
		} else if (*p == '#' && (p == s || p[-1] == ' ' || p[-1] == '\t')) {
			*p = '\0';
			return;
		}
	}
}

/* A scalar: 'x', "x", [a, b] (joined with ','), or plain. NULL when malformed. */
static char *yaml_scalar(const char *v)
{
	size_t n = strlen(v);
	char *out, *q;

	if (n >= 2 && (v[0] == '\'' || v[0] == '"') && v[n - 1] == v[0])
		return cd_strndup(v + 1, n - 2);
	if (v[0] == '\'' || v[0] == '"')
		return NULL;
	if (v[0] != '[')
		return cd_strdup(v);
	if (v[n - 1] != ']')
		return NULL;
	out = q = cd_strndup(v + 1, n - 2);
	for (char *p = out; *p; p++)
		if (*p != ' ' && *p != '\'' && *p != '"')
			*q++ = *p;
	*q = '\0';
	return out;
}

struct yaml_state {
	struct csgroups_source *cur; /* NULL: none yet, or an earlier file's */
	int seen;                    /* a "source:" line came */
	char **list;                 /* the group a "- item" line adds to, or NULL */
};

static void add_group(struct yaml_state *st, const char *name, char *nodes)
{
	struct csgroups_source *g = st->cur;

	st->list = NULL;
	if (!g) {
		free(nodes);
		return;
	}
	g->groups = cd_realloc(g->groups, (g->ngroups + 1) * sizeof(char *));
	g->nodes = cd_realloc(g->nodes, (g->ngroups + 1) * sizeof(char *));
	g->groups[g->ngroups] = cd_strdup(name);
	g->nodes[g->ngroups] = nodes;
	st->list = &g->nodes[g->ngroups++];
}

/* "- item" of a block list: the item joins the group's nodes with ','. */
static int yaml_item(struct yaml_state *st, const struct scan_file_line *l, char *line)
{
	char *v, *joined;

	if (!st->seen || !st->list)
		return scan_file_bad(l, line, "a list item with no group above it");
	v = yaml_scalar(trim(line + 1));
	if (!v || !*v) {
		free(v);
		return scan_file_bad(l, line, "an empty or unterminated list item");
	}
	joined = **st->list ? cd_asprintf("%s,%s", *st->list, v) : cd_strdup(v);
	free(*st->list);
	*st->list = joined;
	free(v);
	return 0;
}

static int yaml_line(struct csgroups *c, struct yaml_state *st, const struct scan_file_line *l,
                     char *raw)
{
	char *line, *colon, *key, *val;
	int indented = raw[0] == ' ' || raw[0] == '\t';

	yaml_cut_comment(raw);
	line = trim(raw);
	if (!*line || strcmp(line, "---") == 0)
		return 0;
	if (*line == '-' && indented && line[1] != '-')
		return yaml_item(st, l, line);
	if (!(colon = strchr(line, ':')))
		return scan_file_bad(l, line,
		                     "a groups.d line is \"source:\" or \"  group: nodes\"");
	*colon = '\0';
	key = trim(line);
	val = trim(colon + 1);
	if (strlen(key) >= 2 && (key[0] == '\'' || key[0] == '"') && key[strlen(key) - 1] == key[0])
		key[strlen(key) - 1] = '\0', key++;
	if (!*key || strchr(key, '@'))
		return scan_file_bad(l, key, "a source or group name, without '@'");
	if (!indented) {
		if (*val)
			return scan_file_bad(
			    l, val, "a source takes its groups on the indented lines below it");
		st->cur = source_get(c, key, l->path, l->no);
		st->seen = 1;
		st->list = NULL;
		if (strcmp(st->cur->path, l->path) != 0)
			st->cur = NULL; /* an earlier file's source wins */
		return 0;
	}
	if (!st->seen)
		return scan_file_bad(l, key, "a group before any \"source:\" line");
	if (!*val) {
		add_group(st, key, cd_strdup("")); /* a block list follows */
		return 0;
	}
	if (!(val = yaml_scalar(val)))
		return scan_file_bad(l, colon + 1, "an unterminated quote or list");
	add_group(st, key, val);
	st->list = NULL;
	return 0;
}

int csgroups_parse_yaml(struct csgroups *c, const char *buf, size_t len, const char *path,
                        char *err, size_t errlen)
{
	struct scan_file_line l = {.path = path, .err = err, .errlen = errlen};
	struct yaml_state st = {0};
	const char *p = buf, *end = buf + len;
	char *line = NULL;
	int rc;

	while ((rc = scan_file_next(&p, end, &l, &line)) > 0 &&
	       (rc = yaml_line(c, &st, &l, line)) == 0)
		;
	free(line);
	return rc;
}

/* ---- the files, where ClusterShell looks ---- */

/* Read and parse one file; a missing one is no error (1: read, 0: absent). */
static int load_file(struct csgroups *c, const char *path, const char *cfgdir, int kind, char *err,
                     size_t errlen)
{
	char *data = NULL;
	size_t len = 0;
	int rc;

	rc = scan_read_file(path, CSGROUPS_FILE_MAX, SCAN_FILE_REGULAR, &data, &len, err, errlen);
	if (rc == CD_ERR_NOTFOUND)
		return 0;
	if (rc < 0)
		return rc;
	c->files = cd_realloc(c->files, (c->nfiles + 1) * sizeof(*c->files));
	c->files[c->nfiles++] = cd_strdup(path);
	if (kind == 2)
		rc = csgroups_parse_yaml(c, data, len, path, err, errlen);
	else
		rc = csgroups_parse_conf(c, data, len, path, cfgdir, kind == 1, err, errlen);
	free(data);
	return rc < 0 ? rc : 1;
}

static int suffix_conf(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 5 && strcmp(d->d_name + n - 5, ".conf") == 0;
}

static int suffix_yaml(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 5 && strcmp(d->d_name + n - 5, ".yaml") == 0;
}

/* Every *.conf (or *.yaml) of dir, in name order. */
static int load_dir(struct csgroups *c, const char *dir, const char *cfgdir, int yaml, char *err,
                    size_t errlen)
{
	struct dirent **ents = NULL;
	int n = scandir(dir, &ents, yaml ? suffix_yaml : suffix_conf, alphasort), rc = 0;

	for (int i = 0; i < n; i++) {
		char *path = cd_asprintf("%s/%s", dir, ents[i]->d_name);

		if (rc == 0)
			rc = load_file(c, path, cfgdir, yaml ? 2 : 0, err, errlen);
		rc = rc < 0 ? rc : 0;
		free(path);
		free(ents[i]);
	}
	free(ents);
	return rc;
}

int csgroups_load(struct csgroups *c, char *err, size_t errlen)
{
	const char *env = getenv("CLUSTERSHELL_CFGDIR"), *xdg = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");
	char *dirs[4] = {0}, *first = NULL, *path;
	size_t nd = 0, ndirs;
	int rc = 0, got;

	if (env && *env)
		dirs[nd++] = cd_strdup(env);
	if (xdg && *xdg)
		dirs[nd++] = cd_asprintf("%s/clustershell", xdg);
	else if (home && *home)
		dirs[nd++] = cd_asprintf("%s/.config/clustershell", home);
	if (home && *home)
		dirs[nd++] = cd_asprintf("%s/.local/etc/clustershell", home);
	dirs[nd++] = cd_strdup("/etc/clustershell");
	for (size_t i = 0; i < nd && rc == 0; i++) {
		if (i && strcmp(dirs[i], dirs[0]) == 0)
			continue; /* $CLUSTERSHELL_CFGDIR naming a place read anyway */
		path = cd_asprintf("%s/groups.conf", dirs[i]);
		/* $CFGDIR is the directory of the first groups.conf, for every file */
		got = load_file(c, path, first ? first : dirs[i], 1, err, errlen);
		free(path);
		rc = got < 0 ? got : 0;
		if (got > 0 && !first)
			first = dirs[i];
	}
	if (rc == 0 && first) {
		if (!have_dirs(c, 0))
			add_dir(c, "$CFGDIR/groups.conf.d", first, 0);
		if (!have_dirs(c, 1))
			add_dir(c, "$CFGDIR/groups.d", first, 1);
		ndirs = c->ndirs;
		for (size_t i = 0; i < ndirs && rc == 0; i++)
			rc = load_dir(c, c->dirs[i], first, c->dir_yaml[i], err, errlen);
	}
	for (size_t i = 0; i < nd; i++)
		free(dirs[i]);
	return rc;
}
