/* SPDX-License-Identifier: MIT */
/*
 * nodefile.c - the agent's fixer requests (see nodefile.h): whoami,
 * file_read and file_write as the agent's own user, and the reading, link
 * following and atomic replacing that the root path (nodefile_sudo.c) shares
 * through nodefile_internal.h.
 */
#include "nodefile.h"
#include "nodefile_internal.h"
#include "base64.h"
#include "buf.h"
#include "cd.h"
#include "filerecv.h"
#include "fsutil.h"
#include "noderun.h"
#include "proto.h"
#include "sha256.h"
#include "sudocmd.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_LINK_HOPS 40

/* ---------------------------------------------------------------- helpers */

/* The request's path field key, expanded into out. -1 with msg. */
static int path_field(json_t *req, const char *key, char *out, size_t outlen, char *msg,
                      size_t msglen)
{
	const char *p = json_string_value(json_object_get(req, key));
	size_t n;

	if (!p) {
		snprintf(msg, msglen, "\"%s\" must be a path string", key);
		return -1;
	}
	if (filerecv_expand(p, out, outlen, msg, msglen) < 0)
		return -1;
	n = strlen(out);
	if (out[n - 1] == '/') {
		snprintf(msg, msglen, "\"%.200s\" names a directory, not a file", p);
		return -1;
	}
	return 0;
}

static const char *kind_of(mode_t m)
{
	return S_ISDIR(m)    ? "a directory"
	       : S_ISFIFO(m) ? "a FIFO"
	       : S_ISSOCK(m) ? "a socket"
	       : S_ISCHR(m)  ? "a character device"
	       : S_ISBLK(m)  ? "a block device"
	                     : "not a regular file";
}

void nodefile_current_fini(struct nodefile_current *cur)
{
	free(cur->data);
	cur->data = NULL;
}

/*
 * The stat before the open keeps a FIFO or a device from being opened at
 * all. Not scan_read_file: it opens first (without O_NONBLOCK, so a FIFO
 * would hold the agent in open), reports an absent file as an error where
 * here it is a state, and words its messages differently from the "io" and
 * "too-big" ones the head shows.
 */
int nodefile_current_read(const char *path, size_t cap, struct nodefile_current *cur,
                          const char **code, char *msg, size_t msglen)
{
	struct buf b;
	int fd, rc = -1;

	memset(cur, 0, sizeof(*cur));
	*code = "io";
	if (stat(path, &cur->st) < 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(msg, msglen, "cannot stat %s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(cur->st.st_mode)) {
		snprintf(msg, msglen, "%s is %s", path, kind_of(cur->st.st_mode));
		return -1;
	}
	if ((unsigned long long)cur->st.st_size > cap) {
		*code = "too-big";
		snprintf(msg, msglen, "%s has %lld bytes, more than the %zu allowed", path,
		         (long long)cur->st.st_size, cap);
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(msg, msglen, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	buf_init(&b, cap + 1);
	if (fstat(fd, &cur->st) < 0 || !S_ISREG(cur->st.st_mode)) {
		snprintf(msg, msglen, "%s changed while being read", path);
		goto out;
	}
	for (;;) {
		ssize_t n = buf_read_fd(&b, fd);

		if (n > 0)
			continue;
		if (n == 0)
			break;
		snprintf(msg, msglen, "cannot read %s: %s", path, strerror(errno));
		goto out;
	}
	if (b.len > cap) {
		*code = "too-big";
		snprintf(msg, msglen, "%s has more than the %zu bytes allowed", path, cap);
		goto out;
	}
	cur->exists = 1;
	cur->len = b.len;
	cur->data = b.data;
	b.data = NULL;
	sha256_data_hex(cur->data ? cur->data : "", cur->len, cur->sha);
	rc = 0;
out:
	buf_fini(&b);
	close(fd);
	return rc;
}

/* realpath is not enough: it fails on a dangling link, which a write
 * should fill. */
int nodefile_final_target(const char *path, char *out, size_t outlen, char *msg, size_t msglen)
{
	char cur[PATH_MAX], link[PATH_MAX], next[2 * PATH_MAX];

	snprintf(cur, sizeof(cur), "%s", path);
	for (int hops = 0;; hops++) {
		const char *slash = strrchr(cur, '/');
		struct stat st;
		ssize_t n;

		if (lstat(cur, &st) < 0 || !S_ISLNK(st.st_mode))
			break;
		if (hops == MAX_LINK_HOPS) {
			snprintf(msg, msglen, "%s: %s", path, strerror(ELOOP));
			return -1;
		}
		n = readlink(cur, link, sizeof(link) - 1);
		if (n < 0) {
			snprintf(msg, msglen, "cannot read the link %s: %s", cur, strerror(errno));
			return -1;
		}
		link[n] = '\0';
		if (link[0] == '/')
			snprintf(next, sizeof(next), "%s", link);
		else
			snprintf(next, sizeof(next), "%.*s/%s", (int)(slash - cur), cur, link);
		if (strlen(next) >= sizeof(cur)) {
			snprintf(msg, msglen, "%s: %s", path, strerror(ENAMETOOLONG));
			return -1;
		}
		memcpy(cur, next, strlen(next) + 1);
	}
	if (strlen(cur) >= outlen) {
		snprintf(msg, msglen, "%s: %s", path, strerror(ENAMETOOLONG));
		return -1;
	}
	memcpy(out, cur, strlen(cur) + 1);
	return 0;
}

static int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The fallback for a file that cannot be renamed over (a bind mount). */
static int write_in_place(const char *path, const void *data, size_t len, char *msg, size_t msglen)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC), rc = 0;

	if (fd < 0 || write_all(fd, data, len) < 0 || fsync(fd) < 0)
		rc = -1;
	if (rc < 0)
		snprintf(msg, msglen, "cannot write %s in place: %s", path, strerror(errno));
	if (fd >= 0 && close(fd) < 0 && rc == 0) {
		snprintf(msg, msglen, "cannot write %s in place: %s", path, strerror(errno));
		rc = -1;
	}
	return rc;
}

/* The rename is durable only once the directory is synced; a failure here
 * changes nothing the caller could act on, so it is not reported. */
static void sync_dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = cd_strndup(path, slash == path ? 1 : (size_t)(slash - path));
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(dir);
}

/*
 * Replace target with data: a temporary in the same directory renamed over
 * it, or in place when the rename cannot work (see nodefile.h). cur is what
 * target holds now. 0, or -1 with msg; no temporary is left behind.
 */
static int replace_file(const char *target, const void *data, size_t len,
                        const struct nodefile_current *cur, unsigned new_mode, int *in_place,
                        char *msg, size_t msglen)
{
	const char *slash = strrchr(target, '/');
	char tmp[PATH_MAX + 64];
	int fd = -1, rc = -1;

	snprintf(tmp, sizeof(tmp), "%.*s/.%s.clusterdoc.%ld", (int)(slash - target), target,
	         slash + 1, (long)getpid());
	if (!cur->exists && cd_mkdir_parent(target, msg, msglen) < 0)
		return -1;
	fd = open(tmp, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST) {
		/* ours, left by a crash: in a container the PID repeats */
		unlink(tmp);
		fd = open(tmp, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
	}
	if (fd < 0) {
		snprintf(msg, msglen, "cannot create %s: %s", tmp, strerror(errno));
		return -1;
	}
	if (write_all(fd, data, len) < 0) {
		snprintf(msg, msglen, "cannot write %s: %s", tmp, strerror(errno));
		goto out;
	}
	/* chown before chmod: chown clears set-id bits */
	if (cur->exists && geteuid() == 0 && fchown(fd, cur->st.st_uid, cur->st.st_gid) < 0) {
		snprintf(msg, msglen, "cannot chown %s: %s", tmp, strerror(errno));
		goto out;
	}
	if (fchmod(fd, cur->exists ? cur->st.st_mode & 07777 : (mode_t)new_mode) < 0 ||
	    fsync(fd) < 0) {
		snprintf(msg, msglen, "cannot write %s: %s", tmp, strerror(errno));
		goto out;
	}
	rc = close(fd);
	fd = -1;
	if (rc < 0) {
		snprintf(msg, msglen, "cannot write %s: %s", tmp, strerror(errno));
		goto out;
	}
	rc = -1;
	if (rename(tmp, target) == 0) {
		sync_dir_of(target);
		rc = 0;
	} else if (errno == EBUSY || errno == EXDEV) {
		unlink(tmp);
		*in_place = 1;
		rc = write_in_place(target, data, len, msg, msglen);
	} else {
		snprintf(msg, msglen, "cannot rename %s over %s: %s", tmp, target, strerror(errno));
	}
out:
	if (fd >= 0)
		close(fd);
	if (rc < 0)
		unlink(tmp);
	return rc;
}

/* ---------------------------------------------------------------- requests */

/* {"name": "/usr/sbin/name" or null} for each program name in names, looked
 * for where sudo's usual secure_path looks (sudocmd_dirs). */
static json_t *which_paths(json_t *names)
{
	json_t *paths = json_object(), *v;
	size_t i;

	json_array_foreach(names, i, v)
	{
		const char *name = json_string_value(v);
		json_t *found = json_null();

		if (!name || !*name || strchr(name, '/') || i >= 64)
			continue;
		for (const char *const *d = sudocmd_dirs; *d; d++) {
			char path[PATH_MAX];

			snprintf(path, sizeof(path), "%s/%s", *d, name);
			if (access(path, X_OK) == 0) {
				json_decref(found);
				found = json_string(path);
				break;
			}
		}
		json_object_set_new(paths, name, found);
	}
	return paths;
}

json_t *nodefile_whoami(json_t *req, const char **code, char *msg, size_t msglen)
{
	struct passwd *pw = getpwuid(geteuid());
	const char *home = getenv("HOME");
	char sudo[PATH_MAX];
	json_t *r;

	if (!home || !*home)
		home = pw && pw->pw_dir ? pw->pw_dir : "";
	r = json_pack("{sIsIssssssss?}", "uid", (json_int_t)geteuid(), "gid", (json_int_t)getegid(),
	              "user", pw && pw->pw_name ? pw->pw_name : "", "home", home, "shell",
	              pw && pw->pw_shell ? pw->pw_shell : "", "sudo",
	              noderun_find_sudo(sudo, sizeof(sudo)) == 0 ? sudo : NULL);
	if (!r)
		return proto_handler_fail(code, "failed", msg, msglen,
		                          "the user's name, home or shell is not valid UTF-8");
	if (json_is_array(json_object_get(req, "which")))
		json_object_set_new(r, "paths", which_paths(json_object_get(req, "which")));
	return r;
}

json_t *nodefile_read(json_t *req, const char **code, char *msg, size_t msglen)
{
	long long max = NODEFILE_READ_MAX;
	char path[PATH_MAX], *text;
	struct nodefile_current cur;
	json_t *r;

	*code = "bad-request";
	if (path_field(req, "path", path, sizeof(path), msg, msglen) < 0)
		return NULL;
	if (proto_field_int(req, "max", 0, NODEFILE_MAX_FILE, &max) < 0)
		return proto_handler_fail(code, "bad-request", msg, msglen, "\"max\" must be 0..%d",
		                          NODEFILE_MAX_FILE);
	if (noderun_need_sudo(req))
		return nodefile_as_root(req, "file_read", path, NULL, code, msg, msglen);
	if (nodefile_current_read(path, (size_t)max, &cur, code, msg, msglen) < 0)
		return NULL;
	if (!cur.exists)
		return json_pack("{sbsisisisiss}", "exists", 0, "size", 0, "mode", 0, "uid", -1,
		                 "gid", -1, "sha256", "");
	if (cur.len > NODEFILE_MAX_LINE_FILE) {
		nodefile_current_fini(&cur);
		return proto_handler_fail(
		    code, "too-big", msg, msglen,
		    "%s has %zu bytes, more than one protocol line holds (%d)", path, cur.len,
		    NODEFILE_MAX_LINE_FILE);
	}
	text = cd_malloc(base64_encoded_size(cur.len));
	base64_encode(cur.data ? cur.data : "", cur.len, text);
	r = json_pack("{sbsssIsisIsIss}", "exists", 1, "data", text, "size", (json_int_t)cur.len,
	              "mode", (int)(cur.st.st_mode & 07777), "uid", (json_int_t)cur.st.st_uid,
	              "gid", (json_int_t)cur.st.st_gid, "sha256", cur.sha);
	free(text);
	nodefile_current_fini(&cur);
	return r;
}

static int is_sha_hex(const char *s)
{
	if (strlen(s) != SHA256_HEX_LEN - 1)
		return 0;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return 0;
	return 1;
}

/* Everything but data's decoding, so a request for sudo is checked before
 * it goes there. -1 with msg. */
static int write_req_parse(json_t *req, struct nodefile_write_req *w, char *msg, size_t msglen)
{
	json_t *data = json_object_get(req, "data"), *rm = json_object_get(req, "remove");
	json_t *backup = json_object_get(req, "backup"), *expect = json_object_get(req, "expect");

	memset(w, 0, sizeof(*w));
	w->mode = 0644;
	if (path_field(req, "path", w->path, sizeof(w->path), msg, msglen) < 0)
		return -1;
	if (backup && !json_is_null(backup)) {
		if (path_field(req, "backup", w->backup, sizeof(w->backup), msg, msglen) < 0)
			return -1;
		if (strcmp(w->backup, w->path) == 0) {
			snprintf(msg, msglen, "\"backup\" is the file itself");
			return -1;
		}
	}
	w->remove = json_is_true(rm);
	if ((rm && !json_is_null(rm) && !json_is_boolean(rm)) ||
	    (data && !json_is_null(data) && !json_is_string(data)) ||
	    w->remove == (data && json_is_string(data))) {
		snprintf(msg, msglen,
		         "needs exactly one of \"data\" (base64) and \"remove\": true");
		return -1;
	}
	if (expect && !json_is_null(expect)) {
		w->expect = json_string_value(expect);
		if (!w->expect || (strcmp(w->expect, "absent") != 0 && !is_sha_hex(w->expect))) {
			snprintf(msg, msglen,
			         "\"expect\" must be \"absent\" or 64 lowercase hex digits");
			return -1;
		}
	}
	if (proto_field_int(req, "mode", 0, 07777, &w->mode) < 0) {
		snprintf(msg, msglen, "\"mode\" must be 0..07777");
		return -1;
	}
	return 0;
}

int nodefile_write_req_decode(json_t *req, struct nodefile_write_req *w, char *msg, size_t msglen)
{
	json_t *data = json_object_get(req, "data");
	size_t cap = json_string_length(data) / 4 * 3 + 3;
	long long n;

	if (w->remove)
		return 0;
	w->data = cd_malloc(cap);
	n = base64_decode(json_string_value(data), json_string_length(data), w->data, cap);
	if (n < 0) {
		snprintf(msg, msglen, "\"data\" is not base64");
		return -1;
	}
	w->len = (size_t)n;
	return 0;
}

int nodefile_check_expect(const struct nodefile_write_req *w, const struct nodefile_current *cur,
                          char *msg, size_t msglen)
{
	int absent = w->expect && strcmp(w->expect, "absent") == 0;

	if (!w->expect)
		return 0;
	if (absent && cur->exists)
		snprintf(msg, msglen,
		         "%s changed since the plan was made (now exists with sha256 %.12s…, "
		         "expected absent)",
		         w->path, cur->sha);
	else if (!absent && !cur->exists)
		snprintf(msg, msglen,
		         "%s changed since the plan was made (now is absent, expected sha256 "
		         "%.12s…)",
		         w->path, w->expect);
	else if (!absent && strcmp(w->expect, cur->sha) != 0)
		snprintf(msg, msglen,
		         "%s changed since the plan was made (now sha256 %.12s…, expected %.12s…)",
		         w->path, cur->sha, w->expect);
	else
		return 0;
	return -1;
}

json_t *nodefile_write_result(int changed, const char *before, const char *after, int in_place,
                              const char *backup)
{
	return json_pack("{sbsssssbss?}", "changed", changed, "before_sha256", before,
	                 "after_sha256", after, "in_place", in_place, "backup", backup);
}

json_t *nodefile_write(json_t *req, const char **code, char *msg, size_t msglen)
{
	char target[PATH_MAX], after[SHA256_HEX_LEN] = "";
	struct nodefile_current cur = {0};
	struct nodefile_write_req w;
	json_t *result = NULL;
	int in_place = 0, backed_up = 0;

	*code = "bad-request";
	if (write_req_parse(req, &w, msg, msglen) < 0)
		return NULL;
	if (noderun_need_sudo(req))
		return nodefile_write_as_root(&w, req, code, msg, msglen);
	if (nodefile_write_req_decode(req, &w, msg, msglen) < 0)
		goto out;
	*code = "io";
	if (nodefile_final_target(w.path, target, sizeof(target), msg, msglen) < 0 ||
	    nodefile_current_read(target, NODEFILE_MAX_FILE, &cur, code, msg, msglen) < 0)
		goto out;
	if (!w.remove)
		sha256_data_hex(w.data ? (const char *)w.data : "", w.len, after);
	if (w.remove
	        ? !cur.exists
	        : cur.exists && cur.len == w.len && (!w.len || !memcmp(cur.data, w.data, w.len))) {
		result = nodefile_write_result(0, cur.sha, cur.sha, 0, NULL);
		goto out;
	}
	if (nodefile_check_expect(&w, &cur, msg, msglen) < 0) {
		*code = "conflict";
		goto out;
	}
	*code = "io";
	if (cur.exists && w.backup[0]) {
		if (cd_mkdir_parent(w.backup, msg, msglen) < 0 ||
		    cd_write_file_atomic(w.backup, cur.data ? cur.data : "", cur.len, 0600, msg,
		                         msglen) < 0)
			goto out;
		backed_up = 1;
	}
	if (w.remove) {
		if (unlink(w.path) < 0) {
			snprintf(msg, msglen, "cannot remove %s: %s", w.path, strerror(errno));
			goto out;
		}
		sync_dir_of(w.path);
	} else if (replace_file(target, w.data ? (const char *)w.data : "", w.len, &cur,
	                        (unsigned)w.mode, &in_place, msg, msglen) < 0) {
		goto out;
	}
	result = nodefile_write_result(1, cur.sha, after, in_place, backed_up ? w.backup : NULL);
out:
	nodefile_current_fini(&cur);
	free(w.data);
	return result;
}