/* SPDX-License-Identifier: MIT */
/* config.c - clusterdoc's configuration files, read line by line into layers (config.h). */
#include "config.h"
#include "cd.h"
#include "fsutil.h"
#include "longopt.h"
#include "utf8.h"

#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

void config_init(struct config *c)
{
	memset(c, 0, sizeof(*c));
}

void config_fini(struct config *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->entries[i].section);
		free(c->entries[i].key);
		free(c->entries[i].value);
		free(c->entries[i].file);
	}
	free(c->entries);
	for (size_t i = 0; i < c->nfiles; i++)
		free(c->files[i].path);
	free(c->files);
	memset(c, 0, sizeof(*c));
}

const char *config_origin_name(enum config_origin o)
{
	switch (o) {
	case CONFIG_SYSTEM:
		return "system";
	case CONFIG_USER:
		return "user";
	case CONFIG_ENV:
		return "$CLUSTERDOC_CONFIG";
	case CONFIG_OPTION:
		return "-O";
	}
	return "?";
}

int config_bool(const char *v)
{
	static const char *const yes[] = {"yes", "true", "on", "1"}, *const no[] = {"no", "false",
	                                                                            "off", "0"};

	for (size_t i = 0; i < CD_ARRAY_LEN(yes); i++) {
		if (strcasecmp(v, yes[i]) == 0)
			return 1;
		if (strcasecmp(v, no[i]) == 0)
			return 0;
	}
	return -1;
}

/* ---------------------------------------------------------------- the schema */

static const struct config_section *section_named(const struct config_schema *s, const char *name)
{
	for (size_t i = 0; i < s->nsections; i++)
		if (strcmp(s->sections[i].name, name) == 0)
			return &s->sections[i];
	return NULL;
}

static const struct option *key_named_in(const struct option *keys, const char *key)
{
	for (const struct option *o = keys; o && o->name; o++)
		if (strcmp(o->name, key) == 0)
			return o;
	return NULL;
}

static const struct option *key_named(const struct config_section *sec, const char *key)
{
	return key_named_in(sec->keys, key);
}

/* The name nearest to word among the keys of sec (or, sec NULL, among the
 * sections' names), or NULL when there is none. */
static const char *nearest(const struct config_schema *s, const struct config_section *sec,
                           const char *word)
{
	const char *best = NULL;
	size_t bestd = (size_t)-1, wl = strlen(word);

	if (sec) {
		for (const struct option *o = sec->keys; o && o->name; o++) {
			size_t d = longopt_distance(word, wl, o->name);

			if (d < bestd || (d == bestd && best && strcmp(o->name, best) < 0)) {
				bestd = d;
				best = o->name;
			}
		}
		return best;
	}
	for (size_t i = 0; i < s->nsections; i++) {
		size_t d = longopt_distance(word, wl, s->sections[i].name);

		if (s->sections[i].name[0] && d < bestd) {
			bestd = d;
			best = s->sections[i].name;
		}
	}
	if (longopt_distance(word, wl, CONFIG_GROUPS) < bestd)
		best = CONFIG_GROUPS;
	return best;
}

/* ---------------------------------------------------------------- entries */

static void add_entry(struct config *c, const char *section, const char *key, const char *value,
                      const char *file, int line, enum config_origin origin)
{
	struct config_entry *e;

	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 16;
		c->entries = cd_realloc(c->entries, c->cap * sizeof(*c->entries));
	}
	e = &c->entries[c->n++];
	e->section = cd_strdup(section);
	e->key = cd_strdup(key);
	e->value = cd_strdup(value);
	e->file = file ? cd_strdup(file) : NULL;
	e->line = line;
	e->origin = origin;
}

static void add_file(struct config *c, const char *path, enum config_origin origin, int found)
{
	c->files = cd_realloc(c->files, (c->nfiles + 1) * sizeof(*c->files));
	c->files[c->nfiles++] = (struct config_file){cd_strdup(path), origin, found};
}

const struct config_entry *config_get(const struct config *c, const char *cmd, const char *key)
{
	for (size_t i = c->n; i-- > 0;) {
		const struct config_entry *e = &c->entries[i];

		if (strcmp(e->key, key) != 0)
			continue;
		if (!e->section[0] || (cmd && strcmp(e->section, cmd) == 0))
			return e;
	}
	return NULL;
}

const struct config_entry *config_group(const struct config *c, const char *name)
{
	for (size_t i = c->n; i-- > 0;)
		if (strcmp(c->entries[i].section, CONFIG_GROUPS) == 0 &&
		    strcmp(c->entries[i].key, name) == 0)
			return &c->entries[i];
	return NULL;
}

/* ---------------------------------------------------------------- one line */

/* The state of one file being read: where, which section, the chain of
 * files including it (for loops). */
struct reader {
	struct config *c;
	const struct config_schema *schema;
	const char *path;
	int line;
	char section[64];
	enum config_origin origin;
	int include_ok;
	const char *const *chain; /* the real paths of the files being read, outermost first */
	size_t depth;
};

static char *trim(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		*--end = '\0';
	return s;
}

static int bad(const struct reader *r, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int bad(const struct reader *r, char *err, size_t errlen, const char *fmt, ...)
{
	char what[CD_ERRLEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return cd_errf(err, errlen, CD_ERR_PARSE, "%s:%d: %s", r->path, r->line, what);
}

/* A group's name: what "@name" may spell (core/nodegroup.c, as ClusterShell). */
static int group_name_ok(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("._+-/", *s))
			return 0;
	return 1;
}

/* While a file is read, "@other" in a group's hosts is only spelled: the
 * group is looked up when the hosts are (config_group's caller). */
static int any_group(const struct hostlist_groups *g, const char *name, struct hostlist *out,
                     char *err, size_t errlen)
{
	(void)g, (void)name, (void)out, (void)err, (void)errlen;
	return 0;
}

static int read_section(struct reader *r, char *s, char *err, size_t errlen)
{
	char *end = strchr(s, ']');
	const char *near;

	if (!end || end[1])
		return bad(r, err, errlen, "\"%s\": a section is [NAME], alone on its line", s);
	*end = '\0';
	s = trim(s + 1);
	if (strcmp(s, "group") == 0 || strcmp(s, CONFIG_GROUPS) == 0) {
		snprintf(r->section, sizeof(r->section), "%s", CONFIG_GROUPS);
		return 0;
	}
	if (!*s || strlen(s) >= sizeof(r->section) || !section_named(r->schema, s)) {
		near = nearest(r->schema, NULL, s);
		return bad(r, err, errlen, "unknown section [%s]%s%s%s", s,
		           near ? "; did you mean [" : "", near ? near : "", near ? "]?" : "");
	}
	snprintf(r->section, sizeof(r->section), "%s", s);
	return 0;
}

/* KEY = VALUE in a section of options: the key is one of the section's,
 * a flag's value yes or no. */
static int check_option(const struct reader *r, const char *section, const char *key,
                        const char *value, char *err, size_t errlen)
{
	const struct config_section *sec = section_named(r->schema, section);
	const struct option *o = sec ? key_named(sec, key) : NULL;
	const char *near;

	if (!o && sec && sec->cmdline && key_named_in(sec->cmdline, key))
		return bad(r, err, errlen,
		           "%s is given on the command line only (an action, a consent or a "
		           "mode), never by a configuration file",
		           key);
	if (!o) {
		near = sec ? nearest(r->schema, sec, key) : NULL;
		return bad(r, err, errlen, "unknown key \"%s\"%s%s%s%s%s%s", key,
		           section[0] ? " in [" : "", section, section[0] ? "]" : "",
		           near ? "; did you mean " : "", near ? near : "", near ? "?" : "");
	}
	if (!*value)
		return bad(r, err, errlen, "%s has no value", key);
	if (o->has_arg == no_argument && config_bool(value) < 0)
		return bad(r, err, errlen, "%s = %s: the value is yes or no", key, value);
	return 0;
}

static int check_group(const struct reader *r, const char *name, const char *value, char *err,
                       size_t errlen)
{
	static const struct hostlist_groups spelled = {.resolve = any_group};
	struct hostlist *hl;
	char herr[CD_ERRLEN];
	int rc;

	if (!group_name_ok(name))
		return bad(r, err, errlen, "group name \"%s\": letters, digits and . _ + - / only",
		           name);
	hl = hostlist_new();
	hl->groups = &spelled;
	rc = hostlist_parse(hl, value, herr, sizeof(herr));
	hostlist_free(hl);
	if (rc < 0)
		return bad(r, err, errlen, "group %s = %s: %s", name, value, herr);
	return 0;
}

static int read_include(struct reader *r, const char *arg, char *err, size_t errlen);

static int read_line(struct reader *r, char *s, char *err, size_t errlen)
{
	char *eq, *key, *value;
	int rc;

	s = trim(s);
	if (!*s || *s == '#')
		return 0;
	if (*s == '[')
		return read_section(r, s, err, errlen);
	if (strncmp(s, "include", 7) == 0 && (s[7] == ' ' || s[7] == '\t') && !strchr(s, '='))
		return read_include(r, trim(s + 7), err, errlen);
	eq = strchr(s, '=');
	if (!eq)
		return bad(r, err, errlen,
		           "\"%s\": expected KEY = VALUE, [SECTION] or include FILE", s);
	*eq = '\0';
	key = trim(s);
	value = trim(eq + 1);
	if (!*key)
		return bad(r, err, errlen, "\"= %s\": the key is missing", value);
	if (r->c->n >= CONFIG_ENTRIES_MAX)
		return cd_errf(err, errlen, CD_ERR_TOOBIG, "%s:%d: more than %d settings in all",
		               r->path, r->line, CONFIG_ENTRIES_MAX);
	if (strcmp(r->section, CONFIG_GROUPS) == 0)
		rc = check_group(r, key, value, err, errlen);
	else
		rc = check_option(r, r->section, key, value, err, errlen);
	if (rc < 0)
		return rc;
	add_entry(r->c, r->section, key, value, r->path, r->line, r->origin);
	return 0;
}

/* ---------------------------------------------------------------- files */

/* The column (from 1) of the first byte of s[0..n) that is not UTF-8 text,
 * or 0: what is read is said in JSON, which takes nothing else. */
static size_t not_utf8(const char *s, size_t n)
{
	for (size_t k = 0, l; k < n; k += l)
		if (!(l = utf8_seq_len((const unsigned char *)s + k, n - k)))
			return k + 1;
	return 0;
}

static int parse_text(struct reader *r, const char *buf, size_t len, char *err, size_t errlen)
{
	char line[CONFIG_LINE_MAX + 1];
	size_t at = 0, col;
	int rc;

	while (at < len) {
		const char *nl = memchr(buf + at, '\n', len - at);
		size_t n = (nl ? (size_t)(nl - buf) : len) - at;

		r->line++;
		if (memchr(buf + at, '\0', n))
			return bad(r, err, errlen, "a NUL byte (not a text file?)");
		if ((col = not_utf8(buf + at, n)))
			return bad(r, err, errlen, "byte 0x%02x is not UTF-8 text (at column %zu)",
			           (unsigned char)buf[at + col - 1], col);
		if (n > CONFIG_LINE_MAX)
			return cd_errf(err, errlen, CD_ERR_TOOBIG,
			               "%s:%d: a line longer than %d bytes", r->path, r->line,
			               CONFIG_LINE_MAX);
		memcpy(line, buf + at, n);
		line[n] = '\0';
		if ((rc = read_line(r, line, err, errlen)) < 0)
			return rc;
		at += n + 1;
	}
	return 0;
}

int config_parse(struct config *c, const struct config_schema *schema, const char *buf, size_t len,
                 const char *path, enum config_origin origin, int include_ok, char *err,
                 size_t errlen)
{
	struct reader r = {
	    .c = c, .schema = schema, .path = path, .origin = origin, .include_ok = include_ok};

	return parse_text(&r, buf, len, err, errlen);
}

/* Read path as one more file of the chain (of depth files): its lines
 * into r's config. */
static int read_chained(struct config *c, const struct config_schema *schema, const char *path,
                        enum config_origin origin, int must_exist, const char *const *chain,
                        size_t depth, const struct reader *from, char *err, size_t errlen)
{
	const char *inner[CONFIG_INCLUDE_MAX + 1];
	struct reader r = {.c = c,
	                   .schema = schema,
	                   .path = path,
	                   .origin = origin,
	                   .include_ok = 1,
	                   .chain = inner,
	                   .depth = depth + 1};
	unsigned char *buf = NULL;
	char real[PATH_MAX];
	size_t len = 0;
	int rc;

	rc = cd_read_file(path, CONFIG_FILE_MAX, &buf, &len, err, errlen);
	if (rc == CD_ERR_NOTFOUND && !must_exist) {
		add_file(c, path, origin, 0);
		return 0;
	}
	if (rc < 0 && from) {
		char why[CD_ERRLEN];

		snprintf(why, sizeof(why), "%s", rc == CD_ERR_NOTFOUND ? "no such file" : err);
		return bad(from, err, errlen, "include %s: %s", path, why);
	}
	if (rc < 0)
		return rc;
	add_file(c, path, origin, 1);
	if (!realpath(path, real))
		snprintf(real, sizeof(real), "%s", path);
	for (size_t i = 0; i < depth; i++)
		inner[i] = chain[i];
	inner[depth] = real;
	rc = parse_text(&r, (const char *)buf, len, err, errlen);
	free(buf);
	return rc;
}

int config_read_file(struct config *c, const struct config_schema *schema, const char *path,
                     enum config_origin origin, int must_exist, char *err, size_t errlen)
{
	return read_chained(c, schema, path, origin, must_exist, NULL, 0, NULL, err, errlen);
}

/* Read the file at path (arg as the line spelt it) where r includes it. */
static int include_one(struct reader *r, const char *arg, const char *path, char *err,
                       size_t errlen)
{
	char real[PATH_MAX], *chain = NULL;
	int rc;

	if (realpath(path, real)) {
		for (size_t i = 0; i < r->depth; i++) {
			if (strcmp(r->chain[i], real) != 0)
				continue;
			for (size_t k = i; k < r->depth; k++)
				cd_strcatf(&chain, "%s -> ", r->chain[k]);
			rc =
			    bad(r, err, errlen, "include %s: include loop: %s%s", arg, chain, real);
			free(chain);
			return rc;
		}
	}
	if (r->depth >= CONFIG_INCLUDE_MAX)
		return bad(r, err, errlen, "include %s: more than %d files deep", arg,
		           CONFIG_INCLUDE_MAX);
	return read_chained(r->c, r->schema, path, r->origin, 1, r->chain, r->depth, r, err,
	                    errlen);
}

static int read_include(struct reader *r, const char *arg, char *err, size_t errlen)
{
	char *path, *copy;
	glob_t g;
	int rc = 0, gr;

	if (!r->include_ok)
		return bad(r, err, errlen, "include %s: no include here", arg);
	if (!*arg)
		return bad(r, err, errlen, "include without a file");
	copy = cd_strdup(r->path);
	path = arg[0] == '/' ? cd_strdup(arg) : cd_asprintf("%s/%s", dirname(copy), arg);
	free(copy);
	if (!strpbrk(arg, "*?[")) {
		rc = include_one(r, arg, path, err, errlen);
		free(path);
		return rc;
	}
	/* a pattern (*.conf in conf.d): each file it matches, in the
	 * alphabet's order; none is no error, as in ssh_config's Include */
	gr = glob(path, 0, NULL, &g);
	if (gr != 0 && gr != GLOB_NOMATCH)
		rc = bad(r, err, errlen, "include %s: cannot read the folder", arg);
	for (size_t i = 0; gr == 0 && rc == 0 && i < g.gl_pathc; i++)
		rc = include_one(r, arg, g.gl_pathv[i], err, errlen);
	if (gr == 0)
		globfree(&g);
	free(path);
	return rc;
}

/* ---------------------------------------------------------------- -O */

int config_add_option(struct config *c, const struct config_schema *schema, const char *arg,
                      char *err, size_t errlen)
{
	const char *eq = strchr(arg, '=');
	struct reader r = {.c = c, .schema = schema, .path = "-O", .origin = CONFIG_OPTION};
	char *key, *dot, *section = "";
	int rc;

	if (!eq || eq == arg)
		return cd_errf(err, errlen, CD_ERR_PARSE, "-O %s: expected KEY=VALUE", arg);
	if (not_utf8(arg, strlen(arg)))
		return cd_errf(err, errlen, CD_ERR_PARSE, "-O %s: byte 0x%02x is not UTF-8 text",
		               arg, (unsigned char)arg[not_utf8(arg, strlen(arg)) - 1]);
	key = cd_strndup(arg, (size_t)(eq - arg));
	if ((dot = strchr(key, '.'))) {
		*dot = '\0';
		section = key;
		key = dot + 1;
	}
	if (section[0] && !section_named(schema, section))
		rc =
		    cd_errf(err, errlen, CD_ERR_PARSE, "-O %s: unknown section [%s]", arg, section);
	else
		rc = check_option(&r, section, key, eq + 1, err, errlen);
	if (rc == 0) {
		add_entry(c, section, key, eq + 1, NULL, 0, CONFIG_OPTION);
	} else if (strncmp(err, "-O:0: ", 6) == 0) {
		char what[CD_ERRLEN];

		snprintf(what, sizeof(what), "%s", err + 6);
		cd_errf(err, errlen, rc, "-O %s: %s", arg, what);
	}
	free(section[0] ? section : key);
	return rc;
}
