/* SPDX-License-Identifier: MIT */
/*
 * fsutil.h - the file-system chores several modules share: creating a
 * directory path, reading a whole bounded file, replacing a file atomically.
 */
#ifndef CD_FSUTIL_H
#define CD_FSUTIL_H

#include <stddef.h>

/* mkdir -p path, mode 0700 for every directory it creates. 0, or CD_ERR_IO
 * with "cannot create DIR: strerror" in err. */
int cd_mkdir_p(const char *path, char *err, size_t errlen);

/* mkdir -p of the directory that holds path (nothing for "/x"). */
int cd_mkdir_parent(const char *path, char *err, size_t errlen);

/*
 * Read the regular file path, at most cap bytes, into *out (new, one NUL
 * byte past the end; free it) and *len. 0, or CD_ERR_NOTFOUND, CD_ERR_IO or
 * CD_ERR_TOOBIG with a message naming path in err; *out is NULL then (*len
 * is left alone). scan_read_file in its SCAN_FILE_REGULAR mode (scan.h),
 * for the callers that hold bytes rather than text.
 */
int cd_read_file(const char *path, size_t cap, unsigned char **out, size_t *len, char *err,
                 size_t errlen);

/*
 * This process's name as a writer of shared files: "HOST.PID.RANDOM" (the
 * host name with anything but [A-Za-z0-9._-] as '_', 8 random hex digits
 * drawn once per process). Temporary names built from it are unique even
 * when every node of a cluster writes into one shared home at once, where
 * the pid alone repeats (containers) and the host alone is not enough (two
 * writers on one node). Borrowed, valid for the process's life.
 */
const char *cd_writer_tag(void);

/*
 * Write all len bytes of buf to fd, again after EINTR and after a short
 * write. 0, or -1 with errno set (EIO when write wrote nothing). Only
 * write(2): usable in a child after fork.
 */
int cd_write_all(int fd, const void *buf, size_t len);

/*
 * Replace path with data[0..len) atomically: write a temporary file in the
 * same directory (".NAME.tmp.TAG", TAG from cd_writer_tag, so a reader
 * globbing *.prom or *.xml never sees it and no other writer shares it), fsync it, chmod it to
 * mode, rename it over path. The directory must exist. 0, or CD_ERR_IO with "cannot write PATH:
 * strerror" in err; no temporary file is left behind.
 */
int cd_write_file_atomic(const char *path, const void *data, size_t len, unsigned mode, char *err,
                         size_t errlen);

/*
 * Close every descriptor above stderr but keep_a and keep_b (-1: none), in
 * a forked child that runs C code rather than a program: O_CLOEXEC does not
 * close what it inherited (the agent's listeners, sockets, pipes).
 * close_range(2) where the kernel has it, else what /proc/self/fd lists.
 */
void cd_close_all_but(int keep_a, int keep_b);

/* fd itself when it is above stderr, else a CLOEXEC copy above it (the same
 * open file description): for a child about to point 0-2 at /dev/null. */
int cd_fd_above_stderr(int fd);

#endif
