/* SPDX-License-Identifier: MIT */
/* hostfile.c - pdsh, Open MPI, DeepSpeed and MPICH host files (see hostfile.h). */
#include "hostfile.h"

#include "cd.h"
#include "scan.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The most words a slots line may have: "host slots=N max_slots=M" and some room. */
#define WORDS_MAX 8

void hostslots_init(struct hostslots *s)
{
	memset(s, 0, sizeof(*s));
}

void hostslots_fini(struct hostslots *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->count; i++)
		free(s->names[i]);
	free(s->names);
	free(s->slots);
	free(s->lines);
	memset(s, 0, sizeof(*s));
}

static void slots_push(struct hostslots *s, const char *name, int slots, size_t line)
{
	if (s->count == s->capacity) {
		s->capacity = s->capacity ? s->capacity * 2 : 16;
		s->names = cd_realloc(s->names, s->capacity * sizeof(*s->names));
		s->slots = cd_realloc(s->slots, s->capacity * sizeof(*s->slots));
		s->lines = cd_realloc(s->lines, s->capacity * sizeof(*s->lines));
	}
	s->names[s->count] = cd_strdup(name);
	s->slots[s->count] = slots;
	s->lines[s->count++] = line;
}

int hostslots_get(const struct hostslots *s, const char *host)
{
	size_t lo = 0, hi;
	int c;

	if (!s || !host)
		return 0;
	/* sorted by strcmp (hostfile_parse keeps it so) */
	hi = s->count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		c = strcmp(host, s->names[mid]);
		if (c == 0)
			return s->slots[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return 0;
}

int hostslots_common(const struct hostslots *s, const struct hostlist *hl, char *err, size_t errlen)
{
	const char *first = NULL;
	int n = 0, v;

	if (!s || !s->count || !hl || !hl->count)
		return 0;
	for (size_t i = 0; i < hl->count; i++) {
		v = hostslots_get(s, hl->names[i]);
		if (!first) {
			first = hl->names[i];
			n = v;
			continue;
		}
		if (v == n)
			continue;
		if (!v || !n)
			cd_errf(err, errlen, CD_ERR_PARSE, "%s has %s, %s has %s", first,
			        n ? "slots" : "no slot count", hl->names[i], v ? "slots" : "none");
		else
			cd_errf(err, errlen, CD_ERR_PARSE, "%s has %d slots, %s has %d", first, n,
			        hl->names[i], v);
		return -1;
	}
	return n;
}

static const struct hostslots *sort_by; /* qsort has no context argument */

/* By name, then by line: a host given twice sits next to its first line. */
static int index_cmp(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int c = strcmp(sort_by->names[i], sort_by->names[j]);

	return c ? c
	         : (sort_by->lines[i] > sort_by->lines[j]) -
	               (sort_by->lines[i] < sort_by->lines[j]);
}

/* Sort s by name, keeping each name's slots and line beside it; a host
 * given slots twice is an error ("PATH:LINE: \"HOST\": ..."). */
static int slots_sort(struct hostslots *s, const char *path, char *err, size_t errlen)
{
	struct hostslots out;
	size_t *idx, k;
	int rc = 0;

	if (!s->count)
		return 0;
	idx = cd_malloc(s->count * sizeof(*idx));
	for (size_t i = 0; i < s->count; i++)
		idx[i] = i;
	sort_by = s;
	qsort(idx, s->count, sizeof(*idx), index_cmp);
	hostslots_init(&out);
	for (size_t i = 0; i < s->count && rc == 0; i++) {
		k = idx[i];
		if (i && strcmp(s->names[k], out.names[out.count - 1]) == 0)
			rc = cd_errf(err, errlen, CD_ERR_PARSE,
			             "%s:%zu: \"%s\": %s already has slots (line %zu)", path,
			             s->lines[k], s->names[k], s->names[k],
			             out.lines[out.count - 1]);
		else
			slots_push(&out, s->names[k], s->slots[k], s->lines[k]);
	}
	free(idx);
	hostslots_fini(s);
	*s = out;
	return rc;
}

/* ---- one line ---- */

/* A slot count: 1 to HOSTFILE_SLOTS_MAX in decimal digits, nothing else. */
static int parse_count(const char *s)
{
	long v = 0;

	if (!*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 5)
		return -1;
	v = strtol(s, NULL, 10);
	return v >= 1 && v <= HOSTFILE_SLOTS_MAX ? (int)v : -1;
}

enum key_id { KEY_SLOTS, KEY_MAX_SLOTS };

/* The keys of a slots line: Open MPI's (both spellings of max_slots) and DeepSpeed's. */
static const struct hostfile_key {
	const char *name;
	enum key_id id;
} hostfile_keys[] = {
    {.name = "slots", .id = KEY_SLOTS},
    {.name = "max_slots", .id = KEY_MAX_SLOTS},
    {.name = "max-slots", .id = KEY_MAX_SLOTS},
};

/* The key=value words after the host: into vals[KEY_SLOTS], vals[KEY_MAX_SLOTS]. */
static int parse_keys(const struct scan_file_line *l, char **words, size_t n, int vals[2])
{
	static const char usage[] = "slots=N and max_slots=N (N from 1 to 1024)";
	char why[160];

	for (size_t i = 0; i < n; i++) {
		char *eq = strchr(words[i], '=');
		const struct hostfile_key *k = NULL;
		int v;

		if (!eq) {
			snprintf(why, sizeof(why),
			         "after the host, a line takes only key=value words: %s", usage);
			return scan_file_bad(l, words[i], why);
		}
		for (size_t j = 0; j < CD_ARRAY_LEN(hostfile_keys); j++)
			if ((size_t)(eq - words[i]) == strlen(hostfile_keys[j].name) &&
			    strncmp(words[i], hostfile_keys[j].name, (size_t)(eq - words[i])) == 0)
				k = &hostfile_keys[j];
		if (!k) {
			snprintf(why, sizeof(why), "unknown key; a host file line takes %s", usage);
			return scan_file_bad(l, words[i], why);
		}
		if ((v = parse_count(eq + 1)) < 0) {
			snprintf(why, sizeof(why), "%s takes a whole number from 1 to %d", k->name,
			         HOSTFILE_SLOTS_MAX);
			return scan_file_bad(l, words[i], why);
		}
		if (vals[k->id]) {
			snprintf(why, sizeof(why), "%s is given twice on this line", k->name);
			return scan_file_bad(l, words[i], why);
		}
		vals[k->id] = v;
	}
	if (vals[KEY_MAX_SLOTS] && vals[KEY_SLOTS] > vals[KEY_MAX_SLOTS])
		return scan_file_bad(l, words[0], "slots is more than max_slots");
	return 0;
}

/* MPICH's "host:N": the ':' of a single-colon word that is not "@src:group". */
static char *mpich_colon(char *word)
{
	char *c = strchr(word, ':');

	if (!c || word[0] == '@' || strchr(c + 1, ':'))
		return NULL;
	return c;
}

static int add_names(struct hostlist *hl, const struct hostlist *from,
                     const struct scan_file_line *l)
{
	if (hostlist_union(hl, from) < 0)
		return cd_errf(l->err, l->errlen, CD_ERR_TOOBIG,
		               "%s:%zu: the host list would hold more than %d hosts", l->path,
		               l->no, HOSTLIST_MAX);
	return 0;
}

/* A line with slots: its host (expression) and counts into acc and slots. */
static int slots_line(const struct scan_file_line *l, char **words, size_t n, struct hostlist *acc,
                      struct hostslots *slots)
{
	struct hostlist hosts = {.groups = acc->groups};
	int vals[2] = {0, 0}, rc;
	char *colon = mpich_colon(words[0]), herr[CD_ERRLEN];
	char *shown = cd_strdup(words[0]);

	if (strchr(words[0], '=')) {
		rc = scan_file_bad(l, words[0], "a key=value with no host before it");
		goto out;
	}
	if (colon) {
		*colon = '\0';
		if ((vals[KEY_SLOTS] = parse_count(colon + 1)) < 0) {
			rc =
			    scan_file_bad(l, shown, "host:N takes a whole number N from 1 to 1024");
			goto out;
		}
	}
	if ((rc = parse_keys(l, words + 1, n - 1, vals)) < 0)
		goto out;
	if (colon && n > 1 && vals[KEY_SLOTS] && strstr(words[1], "slots=") == words[1]) {
		rc = scan_file_bad(l, shown, "slots given both as host:N and slots=N");
		goto out;
	}
	if ((rc = hostlist_parse(&hosts, words[0], herr, sizeof(herr))) < 0) {
		rc = cd_errf(l->err, l->errlen, rc, "%s:%zu: %s", l->path, l->no, herr);
		goto out;
	}
	for (size_t i = 0; i < hosts.count && vals[KEY_SLOTS]; i++)
		slots_push(slots, hosts.names[i], vals[KEY_SLOTS], l->no);
	rc = add_names(acc, &hosts, l);
out:
	for (size_t i = 0; i < hosts.count; i++)
		free(hosts.names[i]);
	free(hosts.names);
	free(shown);
	return rc;
}

/* Split line into at most WORDS_MAX whitespace-separated words (in place). */
static size_t split_words(char *line, char **words)
{
	size_t n = 0;
	char *save = NULL;

	for (char *w = strtok_r(line, " \t\v\f", &save); w; w = strtok_r(NULL, " \t\v\f", &save))
		if (n < WORDS_MAX + 1)
			words[n++] = w;
	return n;
}

static int parse_line(const struct scan_file_line *l, char *line, struct hostlist *acc,
                      struct hostslots *slots)
{
	char *copy = cd_strdup(line), *words[WORDS_MAX + 1], herr[CD_ERRLEN];
	size_t n = split_words(copy, words);
	int has_keys = 0, rc;

	for (size_t i = 0; i < n; i++)
		has_keys |= strchr(words[i], '=') != NULL;
	if (n > WORDS_MAX && has_keys)
		rc = scan_file_bad(l, words[WORDS_MAX], "too many words for a host and its slots");
	else if (has_keys || (n >= 1 && mpich_colon(words[0])))
		rc = slots_line(l, words, n, acc, slots);
	else if ((rc = hostlist_parse(acc, line, herr, sizeof(herr))) < 0)
		/* The whole line goes to the parser so that columns match the file. */
		cd_errf(l->err, l->errlen, rc, "%s:%zu: %s", l->path, l->no, herr);
	free(copy);
	return rc;
}

int hostfile_parse(struct hostlist *hl, struct hostslots *slots, const char *buf, size_t len,
                   const char *path, char *err, size_t errlen)
{
	struct hostlist *acc = hostlist_new();
	struct hostslots got;
	struct scan_file_line l = {.path = path, .err = err, .errlen = errlen};
	const char *p = buf, *end = buf + len;
	char *line = NULL;
	int rc;

	acc->groups = hl->groups;
	hostslots_init(&got);
	/* a host twice across files is the same mistake as twice in one */
	for (size_t i = 0; i < slots->count; i++)
		slots_push(&got, slots->names[i], slots->slots[i], slots->lines[i]);
	while ((rc = scan_file_next(&p, end, &l, &line)) > 0) {
		line[strcspn(line, "#\r")] = '\0';
		if (line[strspn(line, " \t\v\f")] == '\0')
			continue;
		if ((rc = parse_line(&l, line, acc, &got)) < 0)
			goto out;
	}
	if (rc < 0)
		goto out;
	if ((rc = slots_sort(&got, path, err, errlen)) < 0 || (rc = add_names(hl, acc, &l)) < 0)
		goto out;
	hostslots_fini(slots);
	*slots = got;
	hostslots_init(&got);
out:
	free(line);
	hostslots_fini(&got);
	hostlist_free(acc);
	return rc;
}

int hostfile_read(struct hostlist *hl, struct hostslots *slots, const char *path, char *err,
                  size_t errlen)
{
	int stdin_ = strcmp(path, "-") == 0;
	const char *name = stdin_ ? HOSTLIST_STDIN_NAME : path;
	char *data = NULL;
	size_t len = 0;
	int fd = stdin_ ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0)
		return cd_errf(err, errlen, CD_ERR_IO, "cannot open %s: %s", path, strerror(errno));
	rc = scan_read_fd(fd, name, HOSTLIST_FILE_MAX, SCAN_FILE_TO_EOF, &data, &len, err, errlen);
	if (!stdin_)
		close(fd);
	if (rc == 0)
		rc = hostfile_parse(hl, slots, data, len, name, err, errlen);
	free(data);
	return rc;
}
