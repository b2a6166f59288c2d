/* SPDX-License-Identifier: MIT */
/*
 * run_trust.c - is a run's directory the user's alone? (see run_trust.h)
 */
#include "jobs/run_trust.h"
#include "filerecv.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Another user can change what is in a directory they own or may write. */
static int others_write(const struct stat *st, uid_t uid)
{
	return st->st_uid != uid || (st->st_mode & (S_IWGRP | S_IWOTH)) != 0;
}

/* The directories above real (a path without symlinks): another user who
 * can rename an entry of one of them can swap the run's directory. */
static int check_above(const char *path, const char *real, uid_t uid, char *msg, size_t msglen)
{
	char dir[PATH_MAX];
	struct stat st;
	char *slash;

	snprintf(dir, sizeof(dir), "%s", real);
	while ((slash = strrchr(dir, '/'))) {
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
		if (lstat(dir, &st) < 0) {
			snprintf(msg, msglen, "cannot stat %s (above %s): %s", dir, path,
			         strerror(errno));
			return -1;
		}
		if (st.st_uid != uid && st.st_uid != 0) {
			snprintf(msg, msglen,
			         "%s, above %s, is owned by uid %u: that user could put a "
			         "directory of theirs in its place",
			         dir, path, (unsigned)st.st_uid);
			return -1;
		}
		if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
			snprintf(msg, msglen,
			         "%s, above %s, is writable by its group or by others (mode %04o, "
			         "no sticky bit): another user could put a directory of theirs in "
			         "its place",
			         dir, path, (unsigned)(st.st_mode & 07777));
			return -1;
		}
		if (strcmp(dir, "/") == 0)
			break;
	}
	return 0;
}

/* path is not there: nobody else may make it, so its nearest existing
 * ancestor must be the user's (or root's) and writable by nobody else, the
 * sticky bit not enough (anyone may create a new name in /tmp). */
static int check_absent(const char *path, uid_t uid, char *msg, size_t msglen)
{
	char dir[PATH_MAX], real[PATH_MAX];
	struct stat st;
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	for (;;) {
		slash = strrchr(dir, '/');
		if (!slash)
			break;
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
		if (stat(dir, &st) == 0)
			break;
		if (errno != ENOENT || strcmp(dir, "/") == 0) {
			snprintf(msg, msglen, "cannot stat %s (above %s): %s", dir, path,
			         strerror(errno));
			return -1;
		}
	}
	if ((st.st_uid != uid && st.st_uid != 0) || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(msg, msglen,
		         "%s is not there, and %s above it can be written by another user "
		         "(uid %u, mode %04o): they could make it",
		         path, dir, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		return -1;
	}
	if (!realpath(dir, real)) {
		snprintf(msg, msglen, "cannot resolve %s: %s", dir, strerror(errno));
		return -1;
	}
	return check_above(path, real, uid, msg, msglen) < 0 ? -1 : 1;
}

int run_trust_dir(const char *path, uid_t uid, char *msg, size_t msglen)
{
	char real[PATH_MAX];
	struct stat st;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT)
		return check_absent(path, uid, msg, msglen);
	if (fd < 0) {
		if (errno == ELOOP || errno == ENOTDIR)
			snprintf(msg, msglen, "%s is a symlink or not a directory", path);
		else
			snprintf(msg, msglen, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		snprintf(msg, msglen, "cannot stat %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	if (others_write(&st, uid)) {
		if (st.st_uid != uid)
			snprintf(msg, msglen,
			         "%s is owned by uid %u, not by uid %u who runs the job", path,
			         (unsigned)st.st_uid, (unsigned)uid);
		else
			snprintf(msg, msglen,
			         "%s is writable by its group or by others (mode %04o)", path,
			         (unsigned)(st.st_mode & 07777));
		return -1;
	}
	if (!realpath(path, real)) {
		snprintf(msg, msglen, "cannot resolve %s: %s", path, strerror(errno));
		return -1;
	}
	return check_above(path, real, uid, msg, msglen);
}

json_t *run_trust_agent_check(json_t *req, const char **code, char *msg, size_t msglen)
{
	json_t *paths = json_object_get(req, "paths"), *v;
	char path[PATH_MAX], why[768];
	int absent = 0, rc;
	size_t i;

	*code = "bad-request";
	if (!json_is_array(paths) || json_array_size(paths) == 0 ||
	    json_array_size(paths) > RUN_TRUST_MAX_PATHS) {
		snprintf(msg, msglen, "needs \"paths\", 1 to %d of them", RUN_TRUST_MAX_PATHS);
		return NULL;
	}
	json_array_foreach(paths, i, v)
	{
		if (filerecv_expand(json_string_value(v), path, sizeof(path), msg, msglen) < 0)
			return NULL;
	}
	json_array_foreach(paths, i, v)
	{
		filerecv_expand(json_string_value(v), path, sizeof(path), msg, msglen);
		rc = run_trust_dir(path, geteuid(), why, sizeof(why));
		absent |= rc == 1;
		if (rc < 0) {
			*code = "unsafe";
			snprintf(msg, msglen,
			         "%s: no code runs from a directory another user can "
			         "change",
			         why);
			return NULL;
		}
	}
	return json_pack("{sb}", "absent", absent);
}
