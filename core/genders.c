/* SPDX-License-Identifier: MIT */
/* genders.c - parse genders(5) files and select nodes by attribute (see genders.h). */
#include "genders.h"

#include "cd.h"
#include "scan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"
#define ATTR_CHARS NAME_CHARS ":+/"
/* A node name as written may also hold the range syntax. */
#define NODE_CHARS NAME_CHARS "[],"

void genders_init(struct genders *g)
{
	memset(g, 0, sizeof(*g));
}

void genders_fini(struct genders *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->count; i++) {
		free(g->e[i].node);
		free(g->e[i].attr);
		free(g->e[i].val);
	}
	free(g->e);
	memset(g, 0, sizeof(*g));
}

static void push(struct genders *g, const char *node, const char *attr, size_t alen,
                 const char *val, size_t line)
{
	struct genders_entry *e;

	if (g->count == g->capacity) {
		g->capacity = g->capacity ? g->capacity * 2 : 64;
		g->e = cd_realloc(g->e, g->capacity * sizeof(*g->e));
	}
	e = &g->e[g->count++];
	e->node = cd_strdup(node);
	e->attr = cd_strndup(attr, alen);
	e->val = val ? cd_strdup(val) : NULL;
	e->line = line;
}

/* One attr or attr=value of ATTRS: checked; pushed for every node of nodes. */
static int add_attr(struct genders *g, const struct scan_file_line *l, const char *a,
                    const struct hostlist *nodes)
{
	const char *eq = strchr(a, '=');
	size_t alen = eq ? (size_t)(eq - a) : strlen(a);

	if (alen == 0)
		return scan_file_bad(l, a, "an attribute with no name");
	if (strspn(a, ATTR_CHARS) < alen)
		return scan_file_bad(l, a,
		                     "an attribute name holds letters, digits and . _ - : + / only "
		                     "(is it a genders file?)");
	if (eq && eq[1] == '\0')
		return scan_file_bad(l, a, "attr= with no value");
	for (size_t i = 0; i < nodes->count; i++)
		push(g, nodes->names[i], a, alen, eq ? eq + 1 : NULL, l->no);
	return 0;
}

/* NODES [ATTRS] of one line (comment cut). */
static int parse_line(struct genders *g, const struct scan_file_line *l, char *line)
{
	char *fields[3], *save = NULL, *a, herr[CD_ERRLEN];
	struct hostlist nodes = {0};
	size_t n = 0;
	int rc = 0;

	for (char *w = strtok_r(line, " \t\v\f", &save); w; w = strtok_r(NULL, " \t\v\f", &save)) {
		if (n < 3)
			fields[n] = w;
		n++;
	}
	if (n == 0)
		return 0;
	if (n > 2) {
		char why[128];

		snprintf(why, sizeof(why),
		         "a genders line is NODES [ATTRS]; this one has %zu fields "
		         "(is it a genders file?)",
		         n);
		return scan_file_bad(l, fields[2], why);
	}
	if (strspn(fields[0], NODE_CHARS) != strlen(fields[0]))
		return scan_file_bad(l, fields[0],
		                     "a node name holds letters, digits, . _ - and ranges only "
		                     "(is it a genders file?)");
	if ((rc = hostlist_parse(&nodes, fields[0], herr, sizeof(herr))) < 0)
		return cd_errf(l->err, l->errlen, rc, "%s:%zu: %s", l->path, l->no, herr);
	if (n == 2) {
		if (fields[1][0] == ',' || fields[1][strlen(fields[1]) - 1] == ',' ||
		    strstr(fields[1], ",,"))
			rc = scan_file_bad(l, fields[1], "an empty attribute in the list");
		for (a = strtok_r(fields[1], ",", &save); a && rc == 0;
		     a = strtok_r(NULL, ",", &save))
			rc = add_attr(g, l, a, &nodes);
	}
	for (size_t i = 0; i < nodes.count; i++)
		free(nodes.names[i]);
	free(nodes.names);
	return rc;
}

static int entry_cmp(const void *pa, const void *pb)
{
	const struct genders_entry *a = pa, *b = pb;
	int c = strcmp(a->node, b->node);

	if (!c)
		c = strcmp(a->attr, b->attr);
	if (!c)
		c = (a->line > b->line) - (a->line < b->line);
	return c;
}

/* libgenders refuses an attribute given twice for one node; so do we. */
static int check_duplicates(struct genders *g, const char *path, char *err, size_t errlen)
{
	qsort(g->e, g->count, sizeof(*g->e), entry_cmp);
	for (size_t i = 1; i < g->count; i++)
		if (!strcmp(g->e[i].node, g->e[i - 1].node) &&
		    !strcmp(g->e[i].attr, g->e[i - 1].attr))
			return cd_errf(err, errlen, CD_ERR_PARSE,
			               "%s:%zu: \"%s\": %s already has this attribute (line %zu)",
			               path, g->e[i].line, g->e[i].attr, g->e[i].node,
			               g->e[i - 1].line);
	return 0;
}

int genders_parse(struct genders *g, const char *buf, size_t len, const char *path, char *err,
                  size_t errlen)
{
	struct scan_file_line l = {.path = path, .err = err, .errlen = errlen};
	const char *p = buf, *end = buf + len;
	char *line = NULL;
	int rc;

	while ((rc = scan_file_next(&p, end, &l, &line)) > 0) {
		line[strcspn(line, "#\r")] = '\0';
		if ((rc = parse_line(g, &l, line)) < 0)
			break;
		if (g->count > HOSTLIST_MAX) {
			rc = cd_errf(err, errlen, CD_ERR_TOOBIG,
			             "%s:%zu: more than %d node attributes", path, l.no,
			             HOSTLIST_MAX);
			break;
		}
	}
	free(line);
	if (rc == 0)
		rc = check_duplicates(g, path, err, errlen);
	if (rc < 0)
		genders_fini(g);
	return rc;
}

static void push_name(struct hostlist *hl, const char *name)
{
	if (hl->count == hl->capacity) {
		hl->capacity = hl->capacity ? hl->capacity * 2 : 16;
		hl->names = cd_realloc(hl->names, hl->capacity * sizeof(*hl->names));
	}
	hl->names[hl->count++] = cd_strdup(name);
}

/* Does e match the query term t (attr or attr=value)? */
static int term_matches(const struct genders_entry *e, const char *t)
{
	const char *eq = strchr(t, '=');
	size_t alen = eq ? (size_t)(eq - t) : strlen(t);

	if (strlen(e->attr) != alen || strncmp(e->attr, t, alen) != 0)
		return 0;
	return !eq || (e->val && strcmp(e->val, eq + 1) == 0);
}

int genders_select(const struct genders *g, const char *query, struct hostlist *hl, char *err,
                   size_t errlen)
{
	char *q = cd_strdup(query), *save = NULL;
	struct hostlist *got = hostlist_new();
	int rc = 0;

	for (char *t = strtok_r(q, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (t[0] == '=' || strspn(t, ATTR_CHARS) == 0) {
			rc = cd_errf(
			    err, errlen, CD_ERR_PARSE,
			    "-g \"%s\": give attr or attr=value, as in -g gpu or -g rack=r2",
			    query);
			goto out;
		}
		for (size_t i = 0; i < g->count; i++)
			if (term_matches(&g->e[i], t))
				push_name(got, g->e[i].node);
	}
	if (!query[0] || query[strspn(query, ",")] == '\0')
		rc = cd_errf(err, errlen, CD_ERR_PARSE, "-g needs an attribute, as in -g gpu");
	else if (hostlist_union(hl, got) < 0)
		rc = cd_errf(err, errlen, CD_ERR_TOOBIG, "-g %s: more than %d hosts", query,
		             HOSTLIST_MAX);
	else
		rc = (int)got->count;
out:
	hostlist_free(got);
	free(q);
	return rc;
}

const char *genders_path(void)
{
	const char *env = getenv(GENDERS_ENV);

	return env && *env ? env : GENDERS_DEFAULT_FILE;
}

int genders_read(struct genders *g, const char *path, char *err, size_t errlen)
{
	char *data = NULL, ferr[CD_ERRLEN];
	size_t len = 0;
	int rc;

	rc = scan_read_file(path, HOSTLIST_FILE_MAX, SCAN_FILE_REGULAR, &data, &len, ferr,
	                    sizeof(ferr));
	if (rc == CD_ERR_NOTFOUND)
		return cd_errf(err, errlen, rc, "cannot open %s: no such file (-g reads genders)",
		               path);
	if (rc < 0)
		return cd_errf(err, errlen, rc, "%s", ferr);
	rc = genders_parse(g, data, len, path, err, errlen);
	free(data);
	return rc;
}
