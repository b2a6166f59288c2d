/* SPDX-License-Identifier: MIT */
/*
 * fix_journal.c - the undo journal of `clusterdoc fix` (fix_journal.h).
 */
#include "fix_journal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base64.h"
#include "fsutil.h"
#include "hostlist.h"
#include "sha256.h"

#define JOURNAL_MAX (64u << 20) /* a run's old file contents, base64 */

void fix_run_id(char *out, size_t len)
{
	time_t now = time(NULL);
	struct tm tm;
	char rnd[8];

	gmtime_r(&now, &tm);
	cd_random_token(rnd, 5);
	snprintf(out, len, "%04d%02d%02d-%02d%02d%02d-%s", tm.tm_year + 1900, tm.tm_mon + 1,
	         tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, rnd);
}

int fix_journal_dir(char *out, size_t len, char *err, size_t errlen)
{
	const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");

	if (state && state[0] == '/')
		snprintf(out, len, "%s/clusterdoc/runs", state);
	else if (home && home[0])
		snprintf(out, len, "%s/.local/state/clusterdoc/runs", home);
	else
		return cd_errf(err, errlen, CD_ERR_NOTFOUND,
		               "neither XDG_STATE_HOME nor HOME is set: nowhere to keep the undo "
		               "journal");
	return 0;
}

static int run_id_ok(const char *run)
{
	if (!run[0] || strlen(run) >= 40)
		return 0;
	for (const char *s = run; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'z') || *s == '-'))
			return 0;
	return 1;
}

struct fix_journal *fix_journal_new(const char *run, const char *const *hosts, size_t nhosts)
{
	struct fix_journal *j = cd_calloc(1, sizeof(*j));

	snprintf(j->run, sizeof(j->run), "%s", run);
	j->created = (long long)time(NULL);
	j->hosts = cd_calloc(nhosts + 1, sizeof(*j->hosts));
	for (size_t k = 0; k < nhosts; k++)
		j->hosts[k] = cd_strdup(hosts[k]);
	j->nhosts = nhosts;
	return j;
}

struct fix_change *fix_journal_add(struct fix_journal *j, const char *host,
                                   const struct fix_action *a)
{
	struct fix_change *c;

	j->changes = cd_realloc(j->changes, (j->nchanges + 1) * sizeof(*j->changes));
	c = &j->changes[j->nchanges++];
	memset(c, 0, sizeof(*c));
	c->host = cd_strdup(host);
	c->fixer = cd_strdup(a->fixer);
	c->summary = cd_strdup(a->summary ? a->summary : "");
	c->kind = a->kind;
	c->sudo = a->sudo;
	if (a->kind == FIX_FILE) {
		c->path = cd_strdup(a->path);
		c->before_exists = a->before_exists;
		c->before = a->before ? cd_strndup(a->before, a->before_len) : NULL;
		c->before_len = a->before_len;
		c->after_exists = a->after != NULL;
		sha256_data_hex(a->after, a->after_len, c->after_sha256);
		c->shared_by = a->shared_by ? cd_strdup(a->shared_by) : NULL;
	} else {
		c->argv = fix_argv_copy(a->argv);
		c->undo = fix_argv_copy(a->undo);
	}
	return c;
}

struct fix_change *fix_journal_intend(struct fix_journal *j, const char *host,
                                      const struct fix_action *a)
{
	struct fix_change *c = fix_journal_add(j, host, a);

	c->outcome = FIX_OUTCOME_UNKNOWN;
	return c;
}

size_t fix_journal_count(const struct fix_journal *j)
{
	size_t n = 0;

	for (size_t k = 0; k < j->nchanges; k++)
		n += j->changes[k].outcome != FIX_OUTCOME_DROPPED;
	return n;
}

size_t fix_journal_unknown(const struct fix_journal *j)
{
	size_t n = 0;

	for (size_t k = 0; k < j->nchanges; k++)
		n += j->changes[k].outcome == FIX_OUTCOME_UNKNOWN;
	return n;
}

static void change_fini(struct fix_change *c)
{
	free(c->host);
	free(c->fixer);
	free(c->summary);
	free(c->path);
	free(c->before);
	free(c->backup);
	free(c->shared_by);
	fix_argv_free(c->argv);
	fix_argv_free(c->undo);
}

void fix_journal_compact(struct fix_journal *j)
{
	size_t n = 0;

	for (size_t k = 0; k < j->nchanges; k++) {
		if (j->changes[k].outcome == FIX_OUTCOME_DROPPED)
			change_fini(&j->changes[k]);
		else
			j->changes[n++] = j->changes[k];
	}
	j->nchanges = n;
}

size_t fix_journal_nodes_changed(const struct fix_journal *j)
{
	struct hostlist *hl = hostlist_new();
	char err[CD_ERRLEN];
	size_t n = 0;

	for (size_t k = 0; k < j->nchanges; k++) {
		const struct fix_change *c = &j->changes[k];
		size_t q;

		if (c->outcome == FIX_OUTCOME_DROPPED)
			continue;
		/* a name hostlist_parse refuses still counts, once */
		if (hostlist_parse(hl, c->host, err, sizeof(err)) < 0) {
			for (q = 0; q < k && strcmp(j->changes[q].host, c->host) != 0; q++)
				;
			n += q == k;
		}
		if (c->shared_by)
			(void)hostlist_parse(hl, c->shared_by, err, sizeof(err));
	}
	hostlist_sort_uniq(hl);
	n += hostlist_count(hl);
	hostlist_free(hl);
	return n;
}

void fix_journal_free(struct fix_journal *j)
{
	if (!j)
		return;
	for (size_t k = 0; k < j->nhosts; k++)
		free(j->hosts[k]);
	free(j->hosts);
	for (size_t k = 0; k < j->nchanges; k++)
		change_fini(&j->changes[k]);
	free(j->changes);
	free(j);
}

/* ---------------------------------------------------------------- JSON */

static json_t *argv_json(char **v)
{
	json_t *a = json_array();

	for (char **s = v; s && *s; s++)
		json_array_append_new(a, json_string(*s));
	return a;
}

static json_t *journal_json(const struct fix_journal *j)
{
	/* version 1 when it says nothing version 1 lacks (fix_journal.h) */
	int v2 = j->interrupted || fix_journal_unknown(j) > 0;
	json_t *o = json_pack("{sisssI}", "version", v2 ? 2 : 1, "run", j->run, "created",
	                      (json_int_t)j->created),
	       *hosts = json_array(), *ch = json_array();

	for (size_t k = 0; k < j->nhosts; k++)
		json_array_append_new(hosts, json_string(j->hosts[k]));
	json_object_set_new(o, "hosts", hosts);
	if (j->undone)
		json_object_set_new(o, "undone", json_integer(j->undone));
	if (j->interrupted)
		json_object_set_new(o, "interrupted", json_integer(j->interrupted));
	if (j->undo_failed)
		json_object_set_new(o, "undo_failed", json_integer((json_int_t)j->undo_failed));
	for (size_t k = 0; k < j->nchanges; k++) {
		const struct fix_change *c = &j->changes[k];
		json_t *e;

		if (c->outcome == FIX_OUTCOME_DROPPED)
			continue;
		e = json_pack("{sssssssssb}", "host", c->host, "fixer", c->fixer, "summary",
		              c->summary, "kind", c->kind == FIX_FILE ? "file" : "cmd", "sudo",
		              c->sudo);
		if (v2)
			json_object_set_new(
			    e, "outcome",
			    json_string(c->outcome == FIX_OUTCOME_UNKNOWN ? "unknown" : "applied"));

		if (c->kind == FIX_FILE) {
			char *b64 = cd_malloc(base64_encoded_size(c->before_len));

			base64_encode(c->before ? c->before : "", c->before_len, b64);
			json_object_set_new(e, "path", json_string(c->path));
			json_object_set_new(e, "before_exists", json_boolean(c->before_exists));
			json_object_set_new(e, "before", json_string(b64));
			json_object_set_new(e, "after_exists", json_boolean(c->after_exists));
			json_object_set_new(e, "after_sha256", json_string(c->after_sha256));
			json_object_set_new(e, "backup",
			                    c->backup ? json_string(c->backup) : json_null());
			if (c->shared_by)
				json_object_set_new(e, "shared_by", json_string(c->shared_by));
			free(b64);
		} else {
			json_object_set_new(e, "argv", argv_json(c->argv));
			json_object_set_new(e, "undo", argv_json(c->undo));
		}
		json_array_append_new(ch, e);
	}
	json_object_set_new(o, "changes", ch);
	return o;
}

/* The rename of the new file is on disk only once its directory is. */
static int sync_dir(const char *dir, char *err, size_t errlen)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = 0;

	if (fd < 0 || fsync(fd) != 0)
		rc = cd_errf(err, errlen, CD_ERR_IO, "cannot sync %s: %s", dir, strerror(errno));
	if (fd >= 0)
		close(fd);
	return rc;
}

int fix_journal_save(const struct fix_journal *j, char *err, size_t errlen)
{
	char dir[1024], path[1100];
	json_t *o;
	char *text;
	int rc;

	if ((rc = fix_journal_dir(dir, sizeof(dir), err, errlen)) < 0)
		return rc;
	if ((rc = cd_mkdir_p(dir, err, errlen)) < 0)
		return rc;
	snprintf(path, sizeof(path), "%s/%s.json", dir, j->run);
	o = journal_json(j);
	text = json_dumps(o, JSON_INDENT(1));
	json_decref(o);
	if (!text)
		cd_fatal("out of memory");
	rc = cd_write_file_atomic(path, text, strlen(text), 0600, err, errlen);
	free(text);
	if (rc == 0)
		rc = sync_dir(dir, err, errlen);
	return rc;
}

static char **argv_from(json_t *a)
{
	size_t n = json_array_size(a), k;
	json_t *v;
	char **out = cd_calloc(n + 1, sizeof(*out));

	json_array_foreach(a, k, v) out[k] = cd_strdup(json_string_value(v) ?: "");
	return out;
}

static int change_from(json_t *e, struct fix_change *c)
{
	const char *host = json_string_value(json_object_get(e, "host"));
	const char *fixer = json_string_value(json_object_get(e, "fixer"));
	const char *kind = json_string_value(json_object_get(e, "kind"));
	const char *outcome = json_string_value(json_object_get(e, "outcome"));

	memset(c, 0, sizeof(*c));
	if (!host || !fixer || !kind)
		return -1;
	if (outcome && strcmp(outcome, "unknown") == 0)
		c->outcome = FIX_OUTCOME_UNKNOWN;
	else if (outcome && strcmp(outcome, "applied") != 0)
		return -1;
	c->host = cd_strdup(host);
	c->fixer = cd_strdup(fixer);
	c->summary = cd_strdup(json_string_value(json_object_get(e, "summary")) ?: "");
	c->sudo = json_is_true(json_object_get(e, "sudo"));
	if (strcmp(kind, "file") == 0) {
		const char *path = json_string_value(json_object_get(e, "path"));
		const char *b64 = json_string_value(json_object_get(e, "before"));
		const char *sha = json_string_value(json_object_get(e, "after_sha256"));
		const char *backup = json_string_value(json_object_get(e, "backup"));
		const char *shared = json_string_value(json_object_get(e, "shared_by"));

		c->kind = FIX_FILE;
		if (!path || !b64 || !sha || strlen(sha) != 64)
			return -1;
		c->path = cd_strdup(path);
		c->before_exists = json_is_true(json_object_get(e, "before_exists"));
		c->after_exists = json_is_true(json_object_get(e, "after_exists"));
		snprintf(c->after_sha256, sizeof(c->after_sha256), "%s", sha);
		c->before = base64_decode_new(b64, strlen(b64), &c->before_len);
		if (!c->before)
			return -1;
		c->backup = backup ? cd_strdup(backup) : NULL;
		c->shared_by = shared ? cd_strdup(shared) : NULL;
		return 0;
	}
	if (strcmp(kind, "cmd") != 0 || !json_is_array(json_object_get(e, "argv")) ||
	    !json_is_array(json_object_get(e, "undo")))
		return -1;
	c->kind = FIX_CMD;
	c->argv = argv_from(json_object_get(e, "argv"));
	c->undo = argv_from(json_object_get(e, "undo"));
	return 0;
}

int fix_journal_load(const char *run, struct fix_journal **out, char *err, size_t errlen)
{
	char dir[1024], path[1100];
	unsigned char *text = NULL;
	size_t len, k;
	json_t *o = NULL, *v;
	json_error_t je;
	struct fix_journal *j = NULL;
	int rc;

	*out = NULL;
	if (!run_id_ok(run))
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "\"%s\" is not a run id (like 20261121-183005-3f9a; `clusterdoc fix "
		               "--list` shows them)",
		               run);
	if ((rc = fix_journal_dir(dir, sizeof(dir), err, errlen)) < 0)
		return rc;
	snprintf(path, sizeof(path), "%s/%s.json", dir, run);
	rc = cd_read_file(path, JOURNAL_MAX, &text, &len, err, errlen);
	if (rc == CD_ERR_NOTFOUND)
		return cd_errf(
		    err, errlen, rc,
		    "no journal for run %s in %s (`clusterdoc fix --list` shows the runs)", run,
		    dir);
	if (rc < 0)
		return rc;
	o = json_loadb((const char *)text, len, 0, &je);
	free(text);
	if (!o ||
	    (json_integer_value(json_object_get(o, "version")) != 1 &&
	     json_integer_value(json_object_get(o, "version")) != 2) ||
	    !json_is_array(json_object_get(o, "changes"))) {
		rc = cd_errf(err, errlen, CD_ERR_PARSE, "%s is not a clusterdoc fix journal%s%s",
		             path, o ? "" : ": ", o ? "" : je.text);
		goto out;
	}
	j = cd_calloc(1, sizeof(*j));
	snprintf(j->run, sizeof(j->run), "%s", run);
	j->created = json_integer_value(json_object_get(o, "created"));
	j->undone = json_integer_value(json_object_get(o, "undone"));
	j->interrupted = json_integer_value(json_object_get(o, "interrupted"));
	if (json_integer_value(json_object_get(o, "undo_failed")) > 0)
		j->undo_failed = (size_t)json_integer_value(json_object_get(o, "undo_failed"));
	j->nhosts = json_array_size(json_object_get(o, "hosts"));
	j->hosts = cd_calloc(j->nhosts + 1, sizeof(*j->hosts));
	json_array_foreach(json_object_get(o, "hosts"), k, v) j->hosts[k] =
	    cd_strdup(json_string_value(v) ?: "");
	json_array_foreach(json_object_get(o, "changes"), k, v)
	{
		j->changes = cd_realloc(j->changes, (j->nchanges + 1) * sizeof(*j->changes));
		if (change_from(v, &j->changes[j->nchanges++]) < 0) {
			rc = cd_errf(err, errlen, CD_ERR_PARSE, "%s: change %zu is malformed", path,
			             k + 1);
			goto out;
		}
	}
	*out = j;
	j = NULL;
	rc = 0;
out:
	fix_journal_free(j);
	json_decref(o);
	return rc;
}

static int newest_first(const void *a, const void *b)
{
	return strcmp(*(char *const *)b, *(char *const *)a);
}

int fix_journal_list(char ***runs, size_t *n, char *err, size_t errlen)
{
	char dir[1024];
	DIR *d;
	struct dirent *e;
	int rc;

	*runs = NULL;
	*n = 0;
	if ((rc = fix_journal_dir(dir, sizeof(dir), err, errlen)) < 0)
		return rc;
	if (!(d = opendir(dir)))
		return errno == ENOENT ? 0
		                       : cd_errf(err, errlen, CD_ERR_IO, "cannot read %s: %s", dir,
		                                 strerror(errno));
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		char run[40];

		if (len < 6 || len - 5 >= sizeof(run) || strcmp(e->d_name + len - 5, ".json") != 0)
			continue;
		/* the saved job plans of run and mnist share the directory */
		if (strncmp(e->d_name, "check-", 6) == 0)
			continue;
		snprintf(run, sizeof(run), "%.*s", (int)(len - 5), e->d_name);
		if (!run_id_ok(run))
			continue;
		*runs = cd_realloc(*runs, (*n + 1) * sizeof(**runs));
		(*runs)[(*n)++] = cd_strdup(run);
	}
	closedir(d);
	qsort(*runs, *n, sizeof(**runs), newest_first);
	return 0;
}
