/* SPDX-License-Identifier: MIT */
/*
 * fsutil.c - see fsutil.h.
 */
#include "fsutil.h"
#include "cd.h"
#include "scan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

const char *cd_writer_tag(void)
{
	static char tag[300];
	static pid_t for_pid;
	char host[256] = "", rnd[9];

	if (for_pid == getpid())
		return tag;
	gethostname(host, sizeof(host) - 1);
	for (char *c = host; *c; c++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-",
		            *c))
			*c = '_';
	cd_random_token(rnd, sizeof(rnd));
	snprintf(tag, sizeof(tag), "%s.%ld.%s", host[0] ? host : "host", (long)getpid(), rnd);
	for_pid = getpid();
	return tag;
}

int cd_mkdir_p(const char *path, char *err, size_t errlen)
{
	char *dir = cd_strdup(path);
	int rc = 0;

	for (char *s = dir + 1;; s++) {
		char c = *s;

		if (c != '/' && c != '\0')
			continue;
		*s = '\0';
		if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
			rc = cd_errf(err, errlen, CD_ERR_IO, "cannot create %s: %s", dir,
			             strerror(errno));
			break;
		}
		*s = c;
		if (!c || !s[1])
			break;
	}
	free(dir);
	return rc;
}

int cd_mkdir_parent(const char *path, char *err, size_t errlen)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int rc;

	if (!slash || slash == path)
		return 0;
	dir = cd_strndup(path, (size_t)(slash - path));
	rc = cd_mkdir_p(dir, err, errlen);
	free(dir);
	return rc;
}

int cd_read_file(const char *path, size_t cap, unsigned char **out, size_t *len, char *err,
                 size_t errlen)
{
	char *data;
	size_t n;
	int rc = scan_read_file(path, cap, SCAN_FILE_REGULAR, &data, &n, err, errlen);

	*out = (unsigned char *)data;
	if (rc == 0)
		*len = n;
	return rc;
}

int cd_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!n)
				errno = EIO;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int cd_write_file_atomic(const char *path, const void *data, size_t len, unsigned mode, char *err,
                         size_t errlen)
{
	const char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	const char *p = data;
	char *tmp = NULL;
	int fd = -1, rc = 0, e = 0, created = 0;

	if (!*name) {
		e = EISDIR;
		goto out;
	}
	tmp = cd_asprintf("%.*s.%s.tmp.%s", (int)(name - path), path, name, cd_writer_tag());
	for (int tries = 0; fd < 0 && tries < 2; tries++) {
		fd = open(tmp, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
		/* Ours alone (cd_writer_tag); one that exists anyway is a leftover
		 * of this very process: replace it. */
		if (fd < 0 && errno == EEXIST && tries == 0)
			unlink(tmp);
		else if (fd < 0)
			break;
	}
	if (fd < 0) {
		e = errno;
		goto out;
	}
	created = 1;
	if (cd_write_all(fd, p, len) < 0) {
		e = errno;
		goto out;
	}
	if (fsync(fd) != 0 || fchmod(fd, (mode_t)mode) != 0) {
		e = errno;
		goto out;
	}
	/* close can report a delayed write error (NFS): the file is not whole then. */
	rc = close(fd);
	fd = -1;
	if (rc != 0 || rename(tmp, path) != 0)
		e = errno;
out:
	if (fd >= 0)
		close(fd);
	if (e) {
		if (created)
			unlink(tmp);
		rc = cd_errf(err, errlen, CD_ERR_IO, "cannot write %s: %s", path, strerror(e));
	}
	free(tmp);
	return rc;
}

#define FD_BATCH    256
#define FD_SCAN_MAX 65536

/* close_range(2) by its number: glibc's wrapper is 2.34 and newer, and the
 * agent runs on older ones. Returns -1 when the kernel lacks it. */
static int close_span(unsigned first, unsigned last)
{
	if (first > last)
		return 0;
#ifdef SYS_close_range
	return (int)syscall(SYS_close_range, first, last, 0u);
#else
	errno = ENOSYS;
	return -1;
#endif
}

/* Without close_range: close what /proc/self/fd lists, in batches (closing
 * while reading the directory could skip entries), or, without /proc, every
 * descriptor up to the limit. */
static void close_listed(int keep_a, int keep_b)
{
	for (;;) {
		int fds[FD_BATCH], n = 0;
		struct dirent *e;
		DIR *d = opendir("/proc/self/fd");

		if (!d) {
			long max = sysconf(_SC_OPEN_MAX);

			if (max < 0 || max > FD_SCAN_MAX)
				max = FD_SCAN_MAX;
			for (int fd = 3; fd < max; fd++)
				if (fd != keep_a && fd != keep_b)
					close(fd);
			return;
		}
		while (n < FD_BATCH && (e = readdir(d))) {
			int fd = atoi(e->d_name);

			if (fd > 2 && fd != keep_a && fd != keep_b && fd != dirfd(d))
				fds[n++] = fd;
		}
		closedir(d);
		for (int i = 0; i < n; i++)
			close(fds[i]);
		if (n == 0)
			return;
	}
}

void cd_close_all_but(int keep_a, int keep_b)
{
	unsigned lo, hi;

	/* -1 keeps nothing: keep the other twice (or, with neither, stderr) */
	if (keep_a < 0)
		keep_a = keep_b >= 0 ? keep_b : 2;
	if (keep_b < 0)
		keep_b = keep_a;
	lo = (unsigned)(keep_a < keep_b ? keep_a : keep_b);
	hi = (unsigned)(keep_a < keep_b ? keep_b : keep_a);
	if (close_span(3, lo - 1) == 0 && close_span(lo + 1, hi - 1) == 0 &&
	    close_span(hi + 1, ~0u) == 0)
		return;
	close_listed(keep_a, keep_b);
}

int cd_fd_above_stderr(int fd)
{
	return fd > 2 ? fd : fcntl(fd, F_DUPFD_CLOEXEC, 3);
}
