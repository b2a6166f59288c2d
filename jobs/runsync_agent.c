/* SPDX-License-Identifier: MIT */
/*
 * runsync_agent.c - the agent's side of --sync (see runsync.h): which
 * objects the content store lacks, and the tree made from it. Nothing here
 * may call into runsync.c (the head's side pulls the SSH pool).
 */
#include "jobs/runsync.h"
#include "cd.h"
#include "filerecv.h"
#include "fsutil.h"
#include "proto.h"
#include "sha256.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MANIFEST_MAX (64 << 20)
#define EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

int runsync_rel_ok(const char *rel)
{
	const char *p = rel, *seg;

	if (!rel || !*rel || rel[0] == '/' || strcmp(rel, RUNSYNC_MARK) == 0)
		return 0;
	for (seg = p;; p++) {
		if (*p && (unsigned char)*p < 0x20)
			return 0;
		if (*p == '/' || !*p) {
			size_t n = (size_t)(p - seg);

			if (n == 0 || (n == 1 && seg[0] == '.') ||
			    (n == 2 && seg[0] == '.' && seg[1] == '.'))
				return 0;
			if (!*p)
				return 1;
			seg = p + 1;
		}
	}
}

void runsync_entries_free(struct runsync_entry *e, size_t n)
{
	for (size_t i = 0; e && i < n; i++)
		free(e[i].rel);
	free(e);
}

static int is_hex64(const char *s, size_t n)
{
	if (n != 64)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	}
	return 1;
}

int runsync_manifest_parse(const char *text, size_t len, struct runsync_entry **out, size_t *n,
                           char *msg, size_t msglen)
{
	struct runsync_entry *e = NULL;
	size_t cap = 0, count = 0, line = 0;
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *sp1, *sp2, *sp3;
		char *stop;
		unsigned long mode;
		long long size;

		line++;
		if (!nl) {
			snprintf(msg, msglen, "manifest line %zu does not end with a newline",
			         line);
			goto fail;
		}
		sp1 = memchr(p, ' ', (size_t)(nl - p));
		sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(nl - sp1 - 1)) : NULL;
		sp3 = sp2 ? memchr(sp2 + 1, ' ', (size_t)(nl - sp2 - 1)) : NULL;
		if (!sp3 || !is_hex64(sp2 + 1, (size_t)(sp3 - sp2 - 1))) {
			snprintf(msg, msglen, "manifest line %zu is not \"MODE SIZE SHA256 PATH\"",
			         line);
			goto fail;
		}
		errno = 0;
		mode = strtoul(p, &stop, 8);
		if (stop != sp1 || errno || mode > 07777) {
			snprintf(msg, msglen, "manifest line %zu: bad mode", line);
			goto fail;
		}
		size = strtoll(sp1 + 1, &stop, 10);
		if (stop != sp2 || errno || size < 0) {
			snprintf(msg, msglen, "manifest line %zu: bad size", line);
			goto fail;
		}
		if (count == cap) {
			cap = cap ? 2 * cap : 64;
			e = cd_realloc(e, cap * sizeof(*e));
		}
		e[count].rel = cd_malloc((size_t)(nl - sp3));
		memcpy(e[count].rel, sp3 + 1, (size_t)(nl - sp3 - 1));
		e[count].rel[nl - sp3 - 1] = '\0';
		e[count].mode = (unsigned)mode;
		e[count].size = size;
		memcpy(e[count].sha256, sp2 + 1, 64);
		e[count].sha256[64] = '\0';
		count++;
		if (strlen(e[count - 1].rel) != (size_t)(nl - sp3 - 1) ||
		    !runsync_rel_ok(e[count - 1].rel)) {
			snprintf(msg, msglen,
			         "manifest line %zu: the path \"%.200s\" is refused "
			         "(absolute, empty, or with a \".\" or \"..\" component)",
			         line, e[count - 1].rel);
			goto fail;
		}
		p = nl + 1;
	}
	*out = e;
	*n = count;
	return 0;
fail:
	runsync_entries_free(e, count);
	return -1;
}

/* The store's directory and the manifest's entries of a request. */
static int read_request(json_t *req, char *store, size_t storelen, struct runsync_entry **e,
                        size_t *n, const char **code, char *msg, size_t msglen)
{
	const char *sha = json_string_value(json_object_get(req, "manifest"));
	char path[PATH_MAX + 80], hex[SHA256_HEX_LEN];
	unsigned char *text = NULL;
	size_t len = 0;
	int rc = -1;

	*code = "bad-request";
	if (filerecv_expand(json_string_value(json_object_get(req, "store")), store, storelen, msg,
	                    msglen) < 0)
		return -1;
	if (!sha || !is_hex64(sha, strlen(sha))) {
		snprintf(msg, msglen, "needs a 64-digit \"manifest\"");
		return -1;
	}
	/* The empty manifest is never pushed (see object_present). */
	if (strcmp(sha, EMPTY_SHA256) == 0) {
		*e = NULL;
		*n = 0;
		return 0;
	}
	snprintf(path, sizeof(path), "%s/%s", store, sha);
	*code = "missing";
	if (cd_read_file(path, MANIFEST_MAX, &text, &len, msg, msglen) < 0)
		return -1;
	sha256_data_hex(text, len, hex);
	if (strcmp(hex, sha) != 0) {
		snprintf(msg, msglen, "%s has SHA-256 %s", path, hex);
		goto out;
	}
	*code = "bad-request";
	rc = runsync_manifest_parse((const char *)text, len, e, n, msg, msglen);
out:
	free(text);
	return rc;
}

/* An object is present when the store holds a regular file of its size:
 * objects arrive only through file_commit, which checked the SHA-256. An
 * empty file needs no object (file_put cannot make one): place_file
 * creates it. */
static int object_present(const char *store, const struct runsync_entry *e)
{
	char path[PATH_MAX + 80];
	struct stat st;

	if (e->size == 0)
		return 1;
	snprintf(path, sizeof(path), "%s/%s", store, e->sha256);
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == e->size;
}

static int cmp_by_sha(const void *a, const void *b, void *arg)
{
	const struct runsync_entry *e = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int c = strcmp(e[i].sha256, e[j].sha256);

	return c ? c : (i > j) - (i < j);
}

static int cmp_index(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;

	return (i > j) - (i < j);
}

json_t *runsync_agent_missing(json_t *req, const char **code, char *msg, size_t msglen)
{
	char store[PATH_MAX];
	struct runsync_entry *e = NULL;
	size_t n = 0, *order, *missing, nmissing = 0;
	json_t *list;

	if (read_request(req, store, sizeof(store), &e, &n, code, msg, msglen) < 0)
		return NULL;
	/* Files by object, each object's first file first: one stat per object,
	 * in n log n for a tree of many files. */
	order = cd_calloc(n + 1, sizeof(*order));
	missing = cd_calloc(n + 1, sizeof(*missing));
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof(*order), cmp_by_sha, e);
	for (size_t k = 0; k < n; k++) {
		const struct runsync_entry *f = &e[order[k]];

		if (k > 0 && strcmp(e[order[k - 1]].sha256, f->sha256) == 0)
			continue;
		if (!object_present(store, f))
			missing[nmissing++] = order[k];
	}
	qsort(missing, nmissing, sizeof(*missing), cmp_index);
	list = json_array();
	for (size_t k = 0; k < nmissing; k++)
		json_array_append_new(list, json_integer((json_int_t)missing[k]));
	free(order);
	free(missing);
	runsync_entries_free(e, n);
	return json_pack("{so}", "missing", list);
}

/* ------------------------------------------------------------ the tree */

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/* rm -rf path, never following a symlink. */
static void remove_tree(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* 1 when dir holds no entry. */
static int dir_is_empty(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int empty = 1;

	if (!d)
		return 0;
	while (empty && (de = readdir(d)))
		empty = strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0;
	closedir(d);
	return empty;
}

/* 1 when dir is a tree made for manifest (its RUNSYNC_MARK names it);
 * else 0, with *free_ok set when dir is missing or an empty directory
 * (rename(2) takes the place of an empty one). Anything else at dir, an
 * older tree of ours included, is never replaced: a job writes its outputs
 * into its tree, and a job may still be running there. */
static int tree_state(const char *dir, const char *manifest, int *free_ok)
{
	char path[PATH_MAX + 40];
	unsigned char *mark = NULL;
	size_t len = 0;
	char err[CD_ERRLEN];
	struct stat st;
	int rc = 0;

	*free_ok = 1;
	if (lstat(dir, &st) < 0)
		return 0;
	*free_ok = 0;
	if (!S_ISDIR(st.st_mode))
		return 0;
	snprintf(path, sizeof(path), "%s/%s", dir, RUNSYNC_MARK);
	if (cd_read_file(path, 128, &mark, &len, err, sizeof(err)) == 0) {
		rc = len >= 64 && memcmp(mark, manifest, 64) == 0;
		free(mark);
		return rc;
	}
	*free_ok = dir_is_empty(dir);
	return 0;
}

/* Copy the object src to dst, created with mode. */
static int copy_file(const char *src, const char *dst, unsigned mode, char *msg, size_t msglen)
{
	char buf[65536];
	int in = open(src, O_RDONLY | O_CLOEXEC), out = -1, rc = -1;
	ssize_t r;

	if (in < 0) {
		snprintf(msg, msglen, "cannot open %s: %s", src, strerror(errno));
		return -1;
	}
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (out < 0) {
		snprintf(msg, msglen, "cannot create %s: %s", dst, strerror(errno));
		goto out;
	}
	while ((r = read(in, buf, sizeof(buf))) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || write(out, buf, (size_t)r) != r) {
			snprintf(msg, msglen, "cannot copy %s to %s: %s", src, dst,
			         strerror(errno));
			goto out;
		}
	}
	if (fchmod(out, mode) < 0) {
		snprintf(msg, msglen, "cannot chmod %s: %s", dst, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	close(in);
	if (out >= 0)
		close(out);
	return rc;
}

/*
 * One file of the tree. Its mode loses the write bits: a hard link shares
 * the store's inode, and a job writing into its own code must not change
 * the object every other tree links. The object takes the file's mode when
 * no tree links it yet; a second mode of the same content is a copy.
 */
static int place_file(const char *store, const char *tmp, const struct runsync_entry *e,
                      int *linked, char *msg, size_t msglen)
{
	char obj[PATH_MAX + 80], dst[2 * PATH_MAX];
	unsigned mode = e->mode & 07555;
	struct stat st;

	snprintf(obj, sizeof(obj), "%s/%s", store, e->sha256);
	if (snprintf(dst, sizeof(dst), "%s/%s", tmp, e->rel) >= (int)sizeof(dst)) {
		snprintf(msg, msglen, "%.200s: path too long", e->rel);
		return -1;
	}
	if (cd_mkdir_parent(dst, msg, msglen) < 0)
		return -1;
	*linked = 0;
	if (e->size == 0)
		return copy_file("/dev/null", dst, mode, msg, msglen);
	if (lstat(obj, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size != e->size) {
		snprintf(msg, msglen, "%s (for %.200s) is not in the store", obj, e->rel);
		return -2;
	}
	if ((st.st_mode & 07777) != mode && st.st_nlink == 1 && chmod(obj, mode) == 0)
		st.st_mode = (st.st_mode & ~07777u) | mode;
	if ((st.st_mode & 07777) == mode && link(obj, dst) == 0) {
		*linked = 1;
		return 0;
	}
	return copy_file(obj, dst, mode, msg, msglen);
}

/* Move tmp to dir, which must be free (missing or an empty directory):
 * 1 when it was, 0 when something took dir first (another node of a shared
 * filesystem making the same run's tree), -1 on an error. Nothing at dir
 * is ever swapped out or removed. */
static int install_tree(const char *tmp, const char *dir, char *msg, size_t msglen)
{
	if (rename(tmp, dir) == 0)
		return 1;
	if (errno == ENOTEMPTY || errno == EEXIST)
		return 0;
	snprintf(msg, msglen, "cannot rename %s to %s: %s", tmp, dir, strerror(errno));
	return -1;
}

static void refuse_exists(const char *dir, const char **code, char *msg, size_t msglen)
{
	*code = "exists";
	snprintf(msg, msglen,
	         "%s exists and is not this run's tree: sync never replaces or removes a "
	         "directory, choose another --remote-dir or remove it",
	         dir);
}

json_t *runsync_agent_tree(json_t *req, const char **code, char *msg, size_t msglen)
{
	const char *sha = json_string_value(json_object_get(req, "manifest"));
	char store[PATH_MAX], dir[PATH_MAX], tmp[PATH_MAX + 320], mark[PATH_MAX + 340];
	struct runsync_entry *e = NULL;
	size_t n = 0;
	int free_ok, state, installed, linked = 0, copied = 0, made = 0;
	json_t *result = NULL;

	if (read_request(req, store, sizeof(store), &e, &n, code, msg, msglen) < 0)
		return NULL;
	*code = "bad-request";
	if (filerecv_expand(json_string_value(json_object_get(req, "dir")), dir, sizeof(dir), msg,
	                    msglen) < 0)
		goto out;
	while (strlen(dir) > 1 && dir[strlen(dir) - 1] == '/')
		dir[strlen(dir) - 1] = '\0';
	state = tree_state(dir, sha, &free_ok);
	if (state == 1) {
		result = json_pack("{sbsisi}", "kept", 1, "linked", 0, "copied", 0);
		goto out;
	}
	if (!free_ok) {
		refuse_exists(dir, code, msg, msglen);
		goto out;
	}
	*code = "io";
	snprintf(tmp, sizeof(tmp), "%s.sync.%s", dir, cd_writer_tag());
	remove_tree(tmp);
	if (cd_mkdir_parent(tmp, msg, msglen) < 0)
		goto out;
	if (mkdir(tmp, 0755) < 0) {
		snprintf(msg, msglen, "cannot create %s: %s", tmp, strerror(errno));
		goto out;
	}
	made = 1;
	for (size_t i = 0; i < n; i++) {
		int l, rc = place_file(store, tmp, &e[i], &l, msg, msglen);

		if (rc < 0) {
			*code = rc == -2 ? "missing" : "io";
			goto out;
		}
		l ? linked++ : copied++;
	}
	snprintf(mark, sizeof(mark), "%s/%s", tmp, RUNSYNC_MARK);
	if (cd_write_file_atomic(mark, sha, strlen(sha), 0444, msg, msglen) < 0 ||
	    (installed = install_tree(tmp, dir, msg, msglen)) < 0)
		goto out;
	if (installed == 0) {
		/* taken meanwhile: this very tree (kept), or refused as above */
		if (tree_state(dir, sha, &free_ok) != 1) {
			refuse_exists(dir, code, msg, msglen);
			goto out;
		}
		result = json_pack("{sbsisi}", "kept", 1, "linked", 0, "copied", 0);
		goto out;
	}
	made = 0;
	result = json_pack("{sbsisi}", "kept", 0, "linked", linked, "copied", copied);
out:
	if (made)
		remove_tree(tmp);
	runsync_entries_free(e, n);
	return result;
}
