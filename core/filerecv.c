/* SPDX-License-Identifier: MIT */
/*
 * filerecv.c - receive files pushed by the head (see filerecv.h).
 */
#include "filerecv.h"
#include "base64.h"
#include "cd.h"
#include "fsutil.h"
#include "proto.h"
#include "sha256.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define PART_MAX    (PATH_MAX + 320)
#define PENDING_MAX 16 /* part files being written at once that an exit removes */

/*
 * The part files this process started and has not committed or removed:
 * filerecv_remove_parts removes them when the agent exits (a head gone in
 * the middle of a put). The head puts a node's files one after another, so
 * a few slots are enough; a part past them is left to the stale sweep.
 * Locked: the stdin reader thread may end the agent while a put runs.
 */
static struct {
	pthread_mutex_t mu;
	char path[PENDING_MAX][PART_MAX];
} pending = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void pending_set(const char *part, int add)
{
	int free_slot = -1;

	pthread_mutex_lock(&pending.mu);
	for (int k = 0; k < PENDING_MAX; k++) {
		if (strcmp(pending.path[k], part) == 0) {
			if (!add)
				pending.path[k][0] = '\0';
			free_slot = -2; /* known */
			break;
		}
		if (!pending.path[k][0] && free_slot == -1)
			free_slot = k;
	}
	if (add && free_slot >= 0)
		snprintf(pending.path[free_slot], PART_MAX, "%s", part);
	pthread_mutex_unlock(&pending.mu);
}

void filerecv_remove_parts(void)
{
	/* the exit must not wait long for a put that holds the lock */
	for (int tries = 0; pthread_mutex_trylock(&pending.mu) != 0; tries++) {
		if (tries == 200)
			return;
		usleep(1000);
	}
	for (int k = 0; k < PENDING_MAX; k++) {
		if (pending.path[k][0])
			unlink(pending.path[k]);
		pending.path[k][0] = '\0';
	}
	pthread_mutex_unlock(&pending.mu);
}

/* From a part file's name "X.part.HOST.PID.RANDOM" (cd_writer_tag), its
 * writer's host (into host) and pid; 0, or -1 when it is not one. */
static int part_writer(const char *name, char *host, size_t hostlen, long *pid)
{
	const char *tag = strstr(name, ".part."), *dot_rnd, *dot_pid;
	char *end;

	if (!tag)
		return -1;
	tag += 6;
	dot_rnd = strrchr(tag, '.');
	if (!dot_rnd || dot_rnd == tag)
		return -1;
	for (dot_pid = dot_rnd - 1; dot_pid > tag && *dot_pid != '.'; dot_pid--)
		;
	if (dot_pid == tag)
		return -1;
	*pid = strtol(dot_pid + 1, &end, 10);
	if (end != dot_rnd || *pid <= 0)
		return -1;
	snprintf(host, hostlen, "%.*s", (int)(dot_pid - tag), tag);
	return 0;
}

int filerecv_sweep_stale(const char *dir, int min_age_s)
{
	char own_host[256], host[256], path[PART_MAX];
	long own_pid, pid;
	int removed = 0;
	struct dirent *e;
	struct stat st;
	DIR *d;

	snprintf(path, sizeof(path), "x.part.%s", cd_writer_tag());
	if (part_writer(path, own_host, sizeof(own_host), &own_pid) < 0 || !(d = opendir(dir)))
		return 0;
	while ((e = readdir(d))) {
		/* only this node's writers: a shared home holds the others' too,
		 * and their pids mean nothing here */
		if (part_writer(e->d_name, host, sizeof(host), &pid) < 0 ||
		    strcmp(host, own_host) != 0 || pid == own_pid)
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
		    time(NULL) - st.st_mtime >= min_age_s && unlink(path) == 0)
			removed++;
	}
	closedir(d);
	return removed;
}

/* The stale sweep of part's directory, once per directory and process. */
static void sweep_once(const char *part)
{
	static char swept[PART_MAX];
	char dir[PART_MAX];
	const char *slash = strrchr(part, '/');

	if (!slash)
		return;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - part), part);
	if (strcmp(dir, swept) == 0)
		return;
	snprintf(swept, sizeof(swept), "%s", dir);
	filerecv_sweep_stale(dir, FILERECV_STALE_S);
}

int filerecv_expand(const char *path, char *out, size_t outlen, char *msg, size_t msglen)
{
	const char *home = getenv("HOME");
	int n;

	if (!path || !*path) {
		snprintf(msg, msglen, "\"path\" is missing");
		return -1;
	}
	if (strcmp(path, "..") == 0 || strncmp(path, "../", 3) == 0 || strstr(path, "/../") ||
	    (strlen(path) >= 3 && strcmp(path + strlen(path) - 3, "/..") == 0)) {
		snprintf(msg, msglen, "\"%.200s\": a path with \"..\" is refused", path);
		return -1;
	}
	if (strncmp(path, "~/", 2) == 0) {
		if (!home || home[0] != '/') {
			snprintf(msg, msglen, "\"%.200s\": $HOME is not set on this node", path);
			return -1;
		}
		n = snprintf(out, outlen, "%s/%s", home, path + 2);
	} else if (path[0] == '/') {
		n = snprintf(out, outlen, "%s", path);
	} else {
		snprintf(msg, msglen, "\"%.200s\" must be absolute or start with ~/", path);
		return -1;
	}
	if (n < 0 || (size_t)n >= outlen) {
		snprintf(msg, msglen, "\"%.200s\" is too long", path);
		return -1;
	}
	return 0;
}

/* path, size and sha256 of a stat or commit request; -1 with msg. */
static int read_target(json_t *req, char *path, size_t pathlen, long long *size, const char **sha,
                       char *msg, size_t msglen)
{
	if (filerecv_expand(json_string_value(json_object_get(req, "path")), path, pathlen, msg,
	                    msglen) < 0)
		return -1;
	*size = -1;
	*sha = json_string_value(json_object_get(req, "sha256"));
	if (proto_field_int(req, "size", 0, LLONG_MAX, size) < 0 || *size < 0 || !*sha ||
	    strlen(*sha) != SHA256_HEX_LEN - 1) {
		snprintf(msg, msglen, "needs \"size\" and a 64-digit \"sha256\"");
		return -1;
	}
	return 0;
}

json_t *filerecv_stat(json_t *req, const char **code, char *msg, size_t msglen)
{
	char path[PATH_MAX], hex[SHA256_HEX_LEN], err[CD_ERRLEN];
	const char *sha;
	long long size;
	struct stat st;
	int present = 0;

	if (read_target(req, path, sizeof(path), &size, &sha, msg, msglen) < 0) {
		*code = "bad-request";
		return NULL;
	}
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == size &&
	    sha256_file_hex(path, hex, err, sizeof(err)) == 0)
		present = strcmp(hex, sha) == 0;
	return json_pack("{sb}", "present", present);
}

/* Inflate one zlib stream of exactly want bytes into out. */
static int inflate_exact(const unsigned char *z, size_t zlen, unsigned char *out, size_t want,
                         char *msg, size_t msglen)
{
	z_stream s = {0};
	int rc;

	if (inflateInit(&s) != Z_OK) {
		snprintf(msg, msglen, "zlib cannot start");
		return -1;
	}
	s.next_in = (unsigned char *)z;
	s.avail_in = (uInt)zlen;
	s.next_out = out;
	s.avail_out = (uInt)want;
	rc = inflate(&s, Z_FINISH);
	inflateEnd(&s);
	if (rc != Z_STREAM_END || s.total_out != want || s.avail_in != 0) {
		snprintf(msg, msglen, "\"zdata\" does not inflate to exactly %zu bytes (zlib %d)",
		         want, rc);
		return -1;
	}
	return 0;
}

json_t *filerecv_put(json_t *req, const char **code, char *msg, size_t msglen)
{
	json_t *zdata = json_object_get(req, "zdata");
	char path[PATH_MAX], part[PART_MAX];
	unsigned char *z = NULL, *raw = NULL;
	long long offset = -1, raw_len = -1, zlen;
	json_t *result = NULL;
	int fd = -1;

	*code = "bad-request";
	if (filerecv_expand(json_string_value(json_object_get(req, "path")), path, sizeof(path),
	                    msg, msglen) < 0)
		goto out;
	if (proto_field_int(req, "offset", 0, LLONG_MAX / 2, &offset) < 0 || offset < 0 ||
	    proto_field_int(req, "raw_len", 0, FILERECV_MAX_CHUNK, &raw_len) < 0 || raw_len < 0 ||
	    !json_is_string(zdata)) {
		snprintf(msg, msglen, "needs \"offset\", \"raw_len\" (at most %d) and \"zdata\"",
		         FILERECV_MAX_CHUNK);
		goto out;
	}
	z = cd_malloc(json_string_length(zdata) / 4 * 3 + 3);
	zlen = base64_decode(json_string_value(zdata), json_string_length(zdata), z,
	                     json_string_length(zdata) / 4 * 3 + 3);
	if (zlen < 0) {
		snprintf(msg, msglen, "\"zdata\" is not base64");
		goto out;
	}
	raw = cd_malloc((size_t)raw_len + 1);
	if (inflate_exact(z, (size_t)zlen, raw, (size_t)raw_len, msg, msglen) < 0)
		goto out;
	*code = "io";
	filerecv_part_path(path, part, sizeof(part));
	if (cd_mkdir_parent(part, msg, msglen) < 0)
		goto out;
	if (offset == 0) {
		sweep_once(part);
		pending_set(part, 1);
	}
	/* Only the put at offset 0 makes the part file, and it is the one that
	 * registers it for removal at exit: a later chunk that finds none (its
	 * file committed or removed meanwhile) must not make a new one that
	 * nothing commits or removes. */
	fd = open(part, O_WRONLY | O_CLOEXEC | (offset == 0 ? O_CREAT | O_TRUNC : 0), 0600);
	if (fd < 0 && errno == ENOENT && offset > 0) {
		snprintf(msg, msglen,
		         "%s: no part file to write at offset %lld (a put at offset 0 "
		         "starts it)",
		         part, offset);
		goto out;
	}
	if (fd < 0) {
		snprintf(msg, msglen, "cannot open %s: %s", part, strerror(errno));
		goto out;
	}
	for (long long done = 0; done < raw_len;) {
		ssize_t n = pwrite(fd, raw + done, (size_t)(raw_len - done), offset + done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(msg, msglen, "cannot write %s: %s", part,
			         n < 0 ? strerror(errno) : "no progress");
			/* A full disk is left as it was found: the part file
			 * (this agent's own, never resumed by another) goes. */
			unlink(part);
			pending_set(part, 0);
			goto out;
		}
		done += n;
	}
	result = json_object();
out:
	if (fd >= 0)
		close(fd);
	free(z);
	free(raw);
	return result;
}

void filerecv_part_path(const char *path, char *out, size_t outlen)
{
	snprintf(out, outlen, "%s.part.%s", path, cd_writer_tag());
}

json_t *filerecv_commit(json_t *req, const char **code, char *msg, size_t msglen)
{
	char path[PATH_MAX], part[PART_MAX], hex[SHA256_HEX_LEN];
	const char *sha;
	long long size;
	struct stat st;

	if (read_target(req, path, sizeof(path), &size, &sha, msg, msglen) < 0) {
		*code = "bad-request";
		return NULL;
	}
	filerecv_part_path(path, part, sizeof(part));
	if (stat(part, &st) < 0)
		return proto_handler_fail(code, "io", msg, msglen, "%s: %s", part, strerror(errno));
	if (st.st_size != size) {
		unlink(part);
		pending_set(part, 0);
		return proto_handler_fail(code, "mismatch", msg, msglen,
		                          "%s has %lld bytes, expected %lld", part,
		                          (long long)st.st_size, size);
	}
	if (sha256_file_hex(part, hex, msg, msglen) < 0) {
		*code = "io";
		return NULL;
	}
	if (strcmp(hex, sha) != 0) {
		unlink(part);
		pending_set(part, 0);
		return proto_handler_fail(code, "mismatch", msg, msglen,
		                          "%s has SHA-256 %s, expected %s", part, hex, sha);
	}
	if (rename(part, path) < 0)
		return proto_handler_fail(code, "io", msg, msglen, "cannot rename %s: %s", part,
		                          strerror(errno));
	pending_set(part, 0);
	return json_object();
}
