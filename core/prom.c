/* SPDX-License-Identifier: MIT */
/*
 * prom.c - Prometheus text exposition, built in memory (see prom.h).
 */
#include "prom.h"
#include "base64.h"
#include "buf.h"
#include "cd.h"
#include "fsutil.h"
#include "utf8.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PROM_MAX_TEXT (64u << 20) /* a file or one push body */

struct prom_sample {
	size_t group; /* index in prom.groups */
	double value;
	char *labels;  /* rendered, in the order given: "{a=\"x\",b=\"y\"}" or "" */
	char *key;     /* the same, sorted by name, empty values left out */
	uint64_t hash; /* of key: most duplicate checks end at a compare of it */
};

struct prom_family {
	char *name, *help;
	enum prom_type type;
	struct prom_sample *samples;
	size_t nsamples, cap;
};

struct prom_group {
	char *name; /* NULL: the run-level samples */
	uint64_t hash;
};

struct prom {
	struct prom_family *families;
	size_t nfamilies, capfamilies;
	struct prom_group *groups; /* in first-use order */
	size_t ngroups, capgroups;
	size_t nsamples;
};

static const char *const type_names[] = {
    [PROM_GAUGE] = "gauge",
    [PROM_COUNTER] = "counter",
    [PROM_UNTYPED] = "untyped",
};

struct prom *prom_new(void)
{
	return cd_calloc(1, sizeof(struct prom));
}

void prom_free(struct prom *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nfamilies; i++) {
		struct prom_family *f = &p->families[i];

		for (size_t k = 0; k < f->nsamples; k++) {
			free(f->samples[k].labels);
			free(f->samples[k].key);
		}
		free(f->samples);
		free(f->name);
		free(f->help);
	}
	for (size_t i = 0; i < p->ngroups; i++)
		free(p->groups[i].name);
	free(p->families);
	free(p->groups);
	free(p);
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 14695981039346656037ull; /* FNV-1a */

	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* Spelled out: isalnum() would follow the locale. */
#define NAME_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"

/* [a-zA-Z_:][a-zA-Z0-9_:]* for a metric, [a-zA-Z_][a-zA-Z0-9_]* and no
 * leading "__" (reserved) for a label. */
static int name_valid(const char *s, int metric)
{
	return s && *s && (*s < '0' || *s > '9') &&
	       !s[strspn(s, metric ? NAME_CHARS ":" : NAME_CHARS)] &&
	       (metric || strncmp(s, "__", 2));
}

/*
 * Append s escaped for a label value (quotes too) or HELP text. Bytes that
 * are not UTF-8 become '?': Prometheus refuses the whole exposition
 * otherwise, and a host name or a message is not worth losing the scrape.
 */
static int append_escaped(struct buf *b, const char *s, int quotes)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s), i = 0;
	int rc = 0;

	while (i < n && !rc) {
		size_t len = utf8_seq_len(u + i, n - i);

		if (!len) {
			rc = buf_append(b, "?", 1);
			i++;
			continue;
		}
		if (u[i] == '\\')
			rc = buf_append(b, "\\\\", 2);
		else if (u[i] == '\n')
			rc = buf_append(b, "\\n", 2);
		else if (u[i] == '"' && quotes)
			rc = buf_append(b, "\\\"", 2);
		else
			rc = buf_append(b, u + i, len);
		i += len;
	}
	return rc;
}

/* Render labels (pairs, in the order given) as "{a=\"x\"}" into *out, and the
 * label set's canonical form into *key. */
static void labels_render(const char **pairs, size_t n, char **out, char **key)
{
	size_t *order = cd_malloc((n ? n : 1) * sizeof(*order));
	struct buf b;

	buf_init(&b, SIZE_MAX / 2);
	for (size_t i = 0; i < n; i++) {
		buf_append_strs(&b, i ? "," : "{", pairs[2 * i], "=\"", NULL);
		append_escaped(&b, pairs[2 * i + 1], 1);
		buf_append_strs(&b, "\"", i + 1 == n ? "}" : "", NULL);
	}
	*out = cd_strdup(b.data ? b.data : "");

	/* Sorted by name, so that the same set given in another order is seen
	 * as the same series; an empty value is the same as no label at all. */
	for (size_t i = 0; i < n; i++) {
		size_t k = i;

		for (; k > 0 && strcmp(pairs[2 * order[k - 1]], pairs[2 * i]) > 0; k--)
			order[k] = order[k - 1];
		order[k] = i;
	}
	buf_reset(&b);
	for (size_t i = 0; i < n; i++) {
		const char *name = pairs[2 * order[i]], *value = pairs[2 * order[i] + 1];

		if (!*value)
			continue;
		buf_append_strs(&b, name, "=\"", NULL);
		append_escaped(&b, value, 1);
		buf_append_strs(&b, "\",", NULL);
	}
	*key = cd_strdup(b.data ? b.data : "");
	buf_fini(&b);
	free(order);
}

static struct prom_family *family_find(const struct prom *p, const char *name)
{
	for (size_t i = 0; i < p->nfamilies; i++)
		if (!strcmp(p->families[i].name, name))
			return &p->families[i];
	return NULL;
}

/* The index of group in p->groups, or p->ngroups when it has none yet. */
static size_t group_find(const struct prom *p, const char *group, uint64_t hash)
{
	size_t i = 0;

	for (; i < p->ngroups; i++) {
		const struct prom_group *g = &p->groups[i];

		if (g->hash == hash &&
		    (!g->name || !group ? g->name == group : !strcmp(g->name, group)))
			break;
	}
	return i;
}

int prom_family(struct prom *p, const char *name, enum prom_type type, const char *help)
{
	struct prom_family *f;

	if (!name_valid(name, 1) || family_find(p, name) || (unsigned)type > PROM_UNTYPED)
		return CD_ERR_PARSE;
	if (p->nfamilies == p->capfamilies) {
		p->capfamilies = p->capfamilies ? 2 * p->capfamilies : 16;
		p->families = cd_realloc(p->families, p->capfamilies * sizeof(*p->families));
	}
	f = &p->families[p->nfamilies++];
	*f = (struct prom_family){.name = cd_strdup(name), .type = type};
	f->help = help && *help ? cd_strdup(help) : NULL;
	return 0;
}

int prom_add(struct prom *p, const char *name, const char *group, double value, ...)
{
	struct prom_family *f = family_find(p, name);
	const char **pairs = NULL;
	size_t n = 0, cap = 0, g;
	struct prom_sample s = {.value = value};
	uint64_t ghash = group ? hash_str(group) : 0;
	int rc = 0;
	va_list ap;

	if (!f)
		return CD_ERR_NOTFOUND;
	va_start(ap, value);
	for (;;) {
		const char *lname = va_arg(ap, const char *), *lvalue;

		if (!lname)
			break;
		lvalue = va_arg(ap, const char *);
		if (!name_valid(lname, 0) || !lvalue)
			rc = CD_ERR_PARSE;
		for (size_t i = 0; i < n && !rc; i++)
			if (!strcmp(pairs[2 * i], lname))
				rc = CD_ERR_PARSE;
		if (rc)
			break;
		if (n == cap) {
			cap = cap ? 2 * cap : 8;
			pairs = cd_realloc(pairs, 2 * cap * sizeof(*pairs));
		}
		pairs[2 * n] = lname;
		pairs[2 * n + 1] = lvalue;
		n++;
	}
	va_end(ap);
	if (rc)
		goto out;
	labels_render(pairs, n, &s.labels, &s.key);
	s.hash = hash_str(s.key);
	for (size_t i = 0; i < f->nsamples; i++) {
		if (f->samples[i].hash == s.hash && !strcmp(f->samples[i].key, s.key)) {
			rc = CD_ERR_PARSE;
			goto out;
		}
	}
	g = group_find(p, group, ghash);
	if (g == p->ngroups) {
		if (p->ngroups == p->capgroups) {
			p->capgroups = p->capgroups ? 2 * p->capgroups : 16;
			p->groups = cd_realloc(p->groups, p->capgroups * sizeof(*p->groups));
		}
		p->groups[p->ngroups++] = (struct prom_group){
		    .name = group ? cd_strdup(group) : NULL,
		    .hash = ghash,
		};
	}
	s.group = g;
	if (f->nsamples == f->cap) {
		f->cap = f->cap ? 2 * f->cap : 16;
		f->samples = cd_realloc(f->samples, f->cap * sizeof(*f->samples));
	}
	f->samples[f->nsamples++] = s;
	p->nsamples++;
	s.labels = s.key = NULL;
out:
	free(s.labels);
	free(s.key);
	free(pairs);
	return rc;
}

size_t prom_count(const struct prom *p)
{
	return p->nsamples;
}

/*
 * The shortest "%.Ng" that strtod reads back as v, so that 0.1 is "0.1" and
 * not "0.10000000000000001", while every double survives the trip.
 */
static void value_format(double v, char *out, size_t len)
{
	const char *point = localeconv()->decimal_point;
	char *at;

	if (isnan(v)) {
		snprintf(out, len, "NaN");
		return;
	}
	if (isinf(v)) {
		snprintf(out, len, v > 0 ? "+Inf" : "-Inf");
		return;
	}
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(out, len, "%.*g", prec, v);
		if (strtod(out, NULL) == v)
			break;
	}
	/* Under a locale that writes "0,5" (the TUI may set one), the format
	 * wants a '.'. */
	if (strcmp(point, ".") && (at = strstr(out, point))) {
		size_t plen = strlen(point);

		*at = '.';
		memmove(at + 1, at + plen, strlen(at + plen) + 1);
	}
}

/* Render the samples of group gi, or every sample when all. */
/* Every sample (all), or those of group gi and of gj (gj may equal gi). */
static int render(const struct prom *p, int all, size_t gi, size_t gj, struct buf *out)
{
	char value[64];
	int rc = 0;

	for (size_t i = 0; i < p->nfamilies && !rc; i++) {
		const struct prom_family *f = &p->families[i];
		int header = 0;

		for (size_t k = 0; k < f->nsamples && !rc; k++) {
			const struct prom_sample *s = &f->samples[k];

			if (!all && s->group != gi && s->group != gj)
				continue;
			if (!header && f->help) {
				rc |= buf_append_strs(out, "# HELP ", f->name, " ", NULL);
				rc |= append_escaped(out, f->help, 0);
				rc |= buf_append_strs(out, "\n", NULL);
			}
			if (!header)
				rc |= buf_append_strs(out, "# TYPE ", f->name, " ",
				                      type_names[f->type], "\n", NULL);
			header = 1;
			value_format(s->value, value, sizeof(value));
			rc |= buf_append_strs(out, f->name, s->labels, " ", value, "\n", NULL);
		}
	}
	return rc ? CD_ERR_TOOBIG : 0;
}

int prom_render(const struct prom *p, struct buf *out)
{
	return render(p, 1, 0, 0, out);
}

int prom_render_group(const struct prom *p, const char *group, struct buf *out)
{
	size_t gi = group_find(p, group, group ? hash_str(group) : 0);

	return gi == p->ngroups ? 0 : render(p, 0, gi, gi, out);
}

int prom_render_with_run(const struct prom *p, const char *group, struct buf *out)
{
	size_t gi = group_find(p, group, group ? hash_str(group) : 0);
	size_t gr = group_find(p, NULL, 0);

	if (gi == p->ngroups)
		gi = gr;
	return gi == p->ngroups ? 0 : render(p, 0, gi, gr, out);
}

int prom_write_file(const struct prom *p, const char *path, char *err, size_t errlen)
{
	struct buf b;
	int rc;

	buf_init(&b, PROM_MAX_TEXT);
	rc = prom_render(p, &b);
	if (rc)
		rc = cd_errf(err, errlen, CD_ERR_IO,
		             "cannot write %s: more than %u bytes of metrics", path, PROM_MAX_TEXT);
	else
		rc = cd_write_file_atomic(path, b.data ? b.data : "", b.len, 0644, err, errlen);
	buf_fini(&b);
	return rc;
}

size_t prom_group_count(const struct prom *p)
{
	return p->ngroups;
}

const char *prom_group_name(const struct prom *p, size_t i)
{
	return i < p->ngroups ? p->groups[i].name : NULL;
}

int prom_label_name_valid(const char *name)
{
	return name_valid(name, 0);
}
