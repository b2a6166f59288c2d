/* SPDX-License-Identifier: MIT */
/*
 * runsync_walk.c - the head's walk of a --sync directory into a manifest
 * (runsync_manifest_build, runsync.h): .gitignore rules as git applies
 * them, symlinks kept inside the tree, the size cap, the hashes.
 */
#include "jobs/runsync.h"
#include "cd.h"
#include "fsutil.h"
#include "sha256.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define IGNORE_FILE_MAX (1 << 20)
#define WALK_MAX_DEPTH  64

/* One .gitignore line: pat relative to base (the rel of its directory). */
struct pattern {
	char *base;
	char *pat;
	int neg, dir_only, anchored;
};

struct entry {
	char *rel, *path;
	unsigned mode;
	long long size;
};

struct walk {
	const char *dir; /* as the user gave it, for messages */
	char root[PATH_MAX];
	struct pattern *pats;
	size_t npats, patcap;
	struct entry *ents;
	size_t nents, entcap;
	long long total;
	struct stat parents[WALK_MAX_DEPTH]; /* the directories above, for loops */
	int depth;
	char *err;
	size_t errlen;
};

/* ------------------------------------------------------------ matching */

/* [...] at p against c; *end past the class. -1 when p is no class. */
static int class_match(const char *p, char c, const char **end)
{
	const char *q = p + 1;
	int neg = 0, hit = 0;

	if (*q == '!' || *q == '^') {
		neg = 1;
		q++;
	}
	if (*q == ']') { /* a leading ] is literal */
		hit |= c == ']';
		q++;
	}
	for (; *q && *q != ']'; q++) {
		if (q[1] == '-' && q[2] && q[2] != ']') {
			hit |= c >= q[0] && c <= q[2];
			q += 2;
		} else {
			hit |= c == *q;
		}
	}
	if (!*q)
		return -1;
	*end = q + 1;
	return c != '/' && (hit ^ neg);
}

/*
 * Git's wildmatch, the common part: '*' and '?' never match '/', "**"
 * matches across directories ("**" + "/" also matches no directory at
 * all), [...] classes, '\' escapes the next character.
 */
static int glob_match(const char *p, const char *s)
{
	const char *end;
	int m;

	for (; *p; p++, s++) {
		switch (*p) {
		case '*':
			if (p[1] == '*') {
				p += 2;
				while (*p == '*')
					p++;
				if (!*p)
					return 1;
				if (*p == '/' && glob_match(p + 1, s))
					return 1;
				for (; *s; s++) {
					if (glob_match(p, s))
						return 1;
				}
				return 0;
			}
			for (;; s++) {
				if (glob_match(p + 1, s))
					return 1;
				if (!*s || *s == '/')
					return 0;
			}
		case '?':
			if (!*s || *s == '/')
				return 0;
			break;
		case '[':
			m = class_match(p, *s, &end);
			if (m < 0) {
				if (*s != '[')
					return 0;
				break;
			}
			if (!*s || !m)
				return 0;
			p = end - 1;
			break;
		case '\\':
			if (p[1])
				p++;
			/* fall through */
		default:
			if (*p != *s)
				return 0;
		}
	}
	return *s == '\0';
}

static int pattern_matches(const struct pattern *pt, const char *rel, int is_dir)
{
	const char *sub = rel, *slash;
	size_t bl = strlen(pt->base);

	if (pt->dir_only && !is_dir)
		return 0;
	if (bl) {
		if (strncmp(rel, pt->base, bl) != 0 || rel[bl] != '/')
			return 0;
		sub = rel + bl + 1;
	}
	if (!pt->anchored && (slash = strrchr(sub, '/')))
		sub = slash + 1;
	return glob_match(pt->pat, sub);
}

/* The last pattern that matches decides, deeper files after higher ones. */
static int ignored(const struct walk *w, const char *rel, int is_dir)
{
	int ign = 0;

	for (size_t i = 0; i < w->npats; i++) {
		if (pattern_matches(&w->pats[i], rel, is_dir))
			ign = !w->pats[i].neg;
	}
	return ign;
}

static void add_pattern(struct walk *w, const char *base, char *line)
{
	struct pattern *pt;
	size_t len = strlen(line);
	int neg = 0, dir_only = 0;

	if (len && line[len - 1] == '\r')
		line[--len] = '\0';
	/* Trailing spaces go unless a backslash keeps the last one. */
	while (len && line[len - 1] == ' ' && !(len >= 2 && line[len - 2] == '\\'))
		line[--len] = '\0';
	if (!len || line[0] == '#')
		return;
	if (line[0] == '!') {
		neg = 1;
		line++;
		len--;
	}
	if (len && line[len - 1] == '/') {
		dir_only = 1;
		line[--len] = '\0';
	}
	if (!len)
		return;
	if (w->npats == w->patcap) {
		w->patcap = w->patcap ? 2 * w->patcap : 32;
		w->pats = cd_realloc(w->pats, w->patcap * sizeof(*w->pats));
	}
	pt = &w->pats[w->npats++];
	pt->neg = neg;
	pt->dir_only = dir_only;
	pt->anchored = strchr(line, '/') != NULL;
	pt->base = cd_strdup(base);
	pt->pat = cd_strdup(line[0] == '/' ? line + 1 : line);
}

static void read_ignore_file(struct walk *w, const char *path, const char *base)
{
	unsigned char *text = NULL;
	size_t len = 0;
	char err[CD_ERRLEN], *line, *save = NULL;

	if (cd_read_file(path, IGNORE_FILE_MAX, &text, &len, err, sizeof(err)) < 0)
		return; /* none here */
	for (line = strtok_r((char *)text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		add_pattern(w, base, line);
	free(text);
}

/* ------------------------------------------------------------ the walk */

static int name_ok(const char *name)
{
	for (; *name; name++) {
		if ((unsigned char)*name < 0x20 || *name == 0x7f)
			return 0;
	}
	return 1;
}

static void add_entry(struct walk *w, const char *rel, const char *path, const struct stat *st)
{
	struct entry *e;

	if (w->nents == w->entcap) {
		w->entcap = w->entcap ? 2 * w->entcap : 64;
		w->ents = cd_realloc(w->ents, w->entcap * sizeof(*w->ents));
	}
	e = &w->ents[w->nents++];
	e->rel = cd_strdup(rel);
	e->path = cd_strdup(path);
	e->mode = (unsigned)(st->st_mode & 0777);
	e->size = (long long)st->st_size;
	w->total += e->size;
}

static int walk_dir(struct walk *w, const char *path, const char *rel);

/* One directory entry; 0 or a negative cd_err in w->err. */
static int walk_entry(struct walk *w, const char *dpath, const char *drel, const char *name)
{
	char path[PATH_MAX], rel[PATH_MAX], real[PATH_MAX];
	size_t rootlen = strlen(w->root);
	struct stat lst, st;
	int is_link, rc = 0;

	if (snprintf(path, sizeof(path), "%s/%s", dpath, name) >= (int)sizeof(path) ||
	    snprintf(rel, sizeof(rel), "%s%s%s", drel, *drel ? "/" : "", name) >= (int)sizeof(rel))
		return cd_errf(w->err, w->errlen, CD_ERR_TOOBIG, "%s/%s: path too long", dpath,
		               name);
	if (lstat(path, &lst) < 0)
		return cd_errf(w->err, w->errlen, CD_ERR_IO, "%s: %s", path, strerror(errno));
	is_link = S_ISLNK(lst.st_mode);
	st = lst;
	if (is_link && stat(path, &st) < 0) {
		if (ignored(w, rel, 0))
			return 0;
		return cd_errf(w->err, w->errlen, CD_ERR_NOTFOUND,
		               "%s is a symlink to nothing: remove it or list it in a .gitignore",
		               path);
	}
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
		return 0; /* sockets, fifos, devices: git keeps none either */
	if (ignored(w, rel, S_ISDIR(st.st_mode)))
		return 0;
	if (!name_ok(name))
		return cd_errf(w->err, w->errlen, CD_ERR_PARSE,
		               "%s: a control character in the name cannot be synced: rename it "
		               "or list it in a .gitignore",
		               path);
	if (is_link) {
		if (!realpath(path, real))
			return cd_errf(w->err, w->errlen, CD_ERR_IO, "%s: %s", path,
			               strerror(errno));
		if (strcmp(real, w->root) != 0 &&
		    (strncmp(real, w->root, rootlen) != 0 || real[rootlen] != '/'))
			return cd_errf(w->err, w->errlen, CD_ERR_REFUSED,
			               "%s is a symlink to %s, outside %s: replace it by a copy or "
			               "list it in a .gitignore",
			               path, real, w->dir);
	}
	if (S_ISREG(st.st_mode)) {
		add_entry(w, rel, path, &st);
		return 0;
	}
	for (int i = 0; i < w->depth; i++) {
		if (w->parents[i].st_dev == st.st_dev && w->parents[i].st_ino == st.st_ino)
			return cd_errf(w->err, w->errlen, CD_ERR_REFUSED,
			               "%s leads back to a directory that holds it (a loop): list "
			               "it in a .gitignore",
			               path);
	}
	if (w->depth == WALK_MAX_DEPTH)
		return cd_errf(w->err, w->errlen, CD_ERR_TOOBIG,
		               "%s: more than %d directories deep", path, WALK_MAX_DEPTH);
	w->parents[w->depth++] = st;
	rc = walk_dir(w, path, rel);
	w->depth--;
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int walk_dir(struct walk *w, const char *path, const char *rel)
{
	char ign[PATH_MAX + 16];
	size_t npats = w->npats, n = 0, cap = 0;
	char **names = NULL;
	struct dirent *de;
	DIR *d = opendir(path);
	int rc = 0;

	if (!d)
		return cd_errf(w->err, w->errlen, CD_ERR_IO, "cannot read %s: %s", path,
		               strerror(errno));
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    strcmp(de->d_name, ".git") == 0 || strcmp(de->d_name, RUNSYNC_MARK) == 0)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 32;
			names = cd_realloc(names, cap * sizeof(*names));
		}
		names[n++] = cd_strdup(de->d_name);
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	snprintf(ign, sizeof(ign), "%s/.gitignore", path);
	read_ignore_file(w, ign, rel);
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = walk_entry(w, path, rel, names[i]);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	/* The patterns of this directory end with it. */
	for (size_t i = npats; i < w->npats; i++) {
		free(w->pats[i].base);
		free(w->pats[i].pat);
	}
	w->npats = npats;
	return rc;
}

/* ------------------------------------------------------------ manifest */

void runsync_manifest_free(struct runsync_manifest *m)
{
	for (size_t i = 0; m && i < m->n; i++) {
		free(m->files[i].rel);
		free(m->files[i].data);
	}
	if (m) {
		free(m->files);
		memset(m, 0, sizeof(*m));
	}
}

char *runsync_manifest_text(const struct runsync_manifest *m, size_t *len)
{
	size_t cap = 64, used = 0;
	char *text = cd_malloc(cap);

	text[0] = '\0';
	for (size_t i = 0; i < m->n; i++) {
		const struct runsync_file *f = &m->files[i];
		size_t need = strlen(f->rel) + 100;

		while (used + need > cap) {
			cap *= 2;
			text = cd_realloc(text, cap);
		}
		used += (size_t)snprintf(text + used, cap - used, "%o %zu %s %s\n", f->mode, f->len,
		                         f->sha256, f->rel);
	}
	*len = used;
	return text;
}

static void manifest_rehash(struct runsync_manifest *m)
{
	size_t len;
	char *text = runsync_manifest_text(m, &len);

	sha256_data_hex(text, len, m->sha256);
	free(text);
}

int runsync_manifest_add(struct runsync_manifest *m, const struct runsync_file *f, char *err,
                         size_t errlen)
{
	struct runsync_file *nf;
	size_t at = 0;

	if (!runsync_rel_ok(f->rel))
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "\"%.200s\" is not a path inside the tree", f->rel);
	while (at < m->n && strcmp(m->files[at].rel, f->rel) < 0)
		at++;
	if (at < m->n && strcmp(m->files[at].rel, f->rel) == 0)
		return cd_errf(
		    err, errlen, CD_ERR_PARSE,
		    "the synced directory has a file %s of its own: clusterdoc needs that "
		    "path; rename it or list it in a .gitignore",
		    f->rel);
	m->files = cd_realloc(m->files, (m->n + 1) * sizeof(*m->files));
	memmove(&m->files[at + 1], &m->files[at], (m->n - at) * sizeof(*m->files));
	nf = &m->files[at];
	nf->rel = cd_strdup(f->rel);
	nf->mode = f->mode & 0777;
	nf->len = f->len;
	nf->data = cd_malloc(f->len ? f->len : 1);
	memcpy(nf->data, f->data, f->len);
	sha256_data_hex(nf->data, nf->len, nf->sha256);
	m->n++;
	m->total_bytes += (long long)f->len;
	manifest_rehash(m);
	return 0;
}

/* "N MiB" with one decimal below 10 MiB. */
static void mib(long long bytes, char *out, size_t outlen)
{
	double v = (double)bytes / (1 << 20);

	snprintf(out, outlen, v < 10 ? "%.1f MiB" : "%.0f MiB", v);
}

static int read_files(struct walk *w, struct runsync_manifest *m, long long cap)
{
	m->files = cd_calloc(w->nents ? w->nents : 1, sizeof(*m->files));
	for (size_t i = 0; i < w->nents; i++) {
		struct runsync_file *f = &m->files[m->n];
		size_t len = 0;
		int rc = cd_read_file(w->ents[i].path, (size_t)cap + 1, &f->data, &len, w->err,
		                      w->errlen);

		if (rc < 0)
			return rc;
		f->rel = cd_strdup(w->ents[i].rel);
		f->mode = w->ents[i].mode;
		f->len = len;
		sha256_data_hex(f->data, len, f->sha256);
		m->total_bytes += (long long)len;
		m->n++;
		if (m->total_bytes > cap)
			return cd_errf(w->err, w->errlen, CD_ERR_TOOBIG,
			               "%s grew past the cap of %lld bytes while it was read",
			               w->dir, cap);
	}
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->rel, ((const struct entry *)b)->rel);
}

int runsync_manifest_build(const char *dir, long long cap_bytes, struct runsync_manifest *m,
                           char *err, size_t errlen)
{
	struct walk w = {.dir = dir, .err = err, .errlen = errlen};
	char have[32], limit[32];
	struct stat st;
	int rc;

	memset(m, 0, sizeof(*m));
	errno = 0;
	if (!realpath(dir, w.root) || stat(w.root, &st) < 0 || !S_ISDIR(st.st_mode)) {
		rc = cd_errf(err, errlen, CD_ERR_NOTFOUND, "%s: %s", dir,
		             errno ? strerror(errno) : "not a directory");
		goto out;
	}
	w.parents[w.depth++] = st;
	rc = walk_dir(&w, w.root, "");
	if (rc < 0)
		goto out;
	if (w.total > cap_bytes) {
		mib(w.total, have, sizeof(have));
		mib(cap_bytes, limit, sizeof(limit));
		rc = cd_errf(err, errlen, CD_ERR_TOOBIG,
		             "%s holds %s to sync, over the cap of %s: add a .gitignore or raise "
		             "--sync-cap",
		             dir, have, limit);
		goto out;
	}
	if (w.nents)
		qsort(w.ents, w.nents, sizeof(*w.ents), cmp_entry);
	rc = read_files(&w, m, cap_bytes);
	if (rc < 0)
		goto out;
	manifest_rehash(m);
out:
	if (rc < 0)
		runsync_manifest_free(m);
	for (size_t i = 0; i < w.nents; i++) {
		free(w.ents[i].rel);
		free(w.ents[i].path);
	}
	free(w.ents);
	for (size_t i = 0; i < w.npats; i++) {
		free(w.pats[i].base);
		free(w.pats[i].pat);
	}
	free(w.pats);
	return rc;
}
