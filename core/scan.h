/* SPDX-License-Identifier: MIT */
/*
 * scan.h - the text scanning every parser of captured node text shares: a
 * line cursor, trimming, a word cursor, bounded unsigned integers, and one
 * bounded file reader, and the first line of a one-line file.
 *
 * The scanners work on byte spans (pointer and length, or [p, end)) that need
 * no NUL terminator and may hold NUL bytes; they never allocate and never
 * read outside the span they are given.
 *
 * Whitespace, for every function here, is the C locale's isspace() set:
 * ' ', '\t', '\r', '\n', '\v', '\f' (scan_is_space; never locale-dependent).
 * '\r' being whitespace is what makes CRLF files read like LF ones once a
 * line is trimmed.
 */
#ifndef CD_SCAN_H
#define CD_SCAN_H

#include <stddef.h>
#include <stdint.h>

/* Whether c is one of " \t\r\n\v\f". */
int scan_is_space(char c);

/*
 * Line cursor over [*p, end): sets *line and *n to the next line without its
 * '\n' and advances *p past that '\n'. A last line without '\n' is a line;
 * a final '\n' does not start another one, so "" has no line and "a\n" one.
 * A '\r' before the '\n' stays in the line (scan_trim removes it). Returns 1
 * when a line was found, 0 at the end (*line and *n then untouched).
 */
int scan_next_line(const char **p, const char *end, const char **line, size_t *n);

/* A line of a user's file (a hostfile, genders, groups.conf), for the
 * errors that name it: "PATH:LINE: ...". */
struct scan_file_line {
	const char *path;
	size_t no; /* 1-based; scan_file_next counts it */
	char *err;
	size_t errlen;
};

/*
 * The next line of [*p, end) (as scan_next_line) as a NUL-terminated copy
 * in *line: the previous *line is freed, the caller frees the last (start
 * with NULL). Returns 1 with l->no counted; 0 at the end; CD_ERR_PARSE with
 * l->err "PATH:N: a NUL byte at column C (not a text file?)" for a line
 * holding a NUL byte, which would otherwise end its text there.
 */
int scan_file_next(const char **p, const char *end, struct scan_file_line *l, char **line);

/* CD_ERR_PARSE with l->err "PATH:N: \"VALUE\": WHY". */
int scan_file_bad(const struct scan_file_line *l, const char *value, const char *why);

/* Narrow [*s, *s + *n) to leave out leading and trailing whitespace. */
void scan_trim(const char **s, size_t *n);

/*
 * Word cursor over [*p, end): skips whitespace, sets *w and *n to the run of
 * non-whitespace bytes that follows and advances *p past it. Returns 1 when a
 * word was found; 0 when only whitespace was left (*p is then end, *w and *n
 * untouched).
 */
int scan_next_word(const char **p, const char *end, const char **w, size_t *n);

/*
 * An unsigned integer in base 10 or 16 at *p (bytes up to end): one or more
 * digits ('0'-'9', and for base 16 'a'-'f' and 'A'-'F'), no sign, no "0x",
 * no leading whitespace; the digits end at end or at the first other byte.
 * On success *out is the value, *p is past the digits, and 0 is returned.
 * Errors leave *p and *out untouched: CD_ERR_PARSE when *p holds no digit
 * (or base is neither 10 nor 16), CD_ERR_TOOBIG when the value is larger
 * than max (which also catches what would overflow 64 bits).
 */
int scan_uint(const char **p, const char *end, unsigned base, uint64_t max, uint64_t *out);

/* How scan_read_file reads. */
enum scan_file_mode {
	/*
	 * A regular file, read to the size fstat() gives: anything else (a
	 * directory, a FIFO) is CD_ERR_IO; a size over cap is CD_ERR_TOOBIG
	 * before anything is read; a file that ends before that size is
	 * CD_ERR_IO ("shrank while being read"). Messages: "PATH: strerror",
	 * "PATH: not a readable regular file", "PATH: N bytes, more than the CAP
	 * expected".
	 */
	SCAN_FILE_REGULAR,
	/*
	 * Whatever open() reads, read until end of file: for procfs and sysfs
	 * files, whose size reads 0 (procfs) or 4096 (sysfs) whatever they hold.
	 * More than cap bytes is CD_ERR_TOOBIG (at most cap + 1 bytes are read).
	 * Messages: "cannot read PATH: strerror", "PATH is larger than CAP bytes".
	 */
	SCAN_FILE_TO_EOF,
};

/*
 * Read all of path, at most cap bytes, into *out (new, with one NUL byte past
 * the end; the caller frees it) and *len. Returns 0; or CD_ERR_NOTFOUND
 * (path does not exist), CD_ERR_IO or CD_ERR_TOOBIG with a message naming
 * path in err (the wording per mode above); *out is NULL and *len 0 then.
 * Blocks on the read (files of the local file system only).
 */
int scan_read_file(const char *path, size_t cap, enum scan_file_mode mode, char **out, size_t *len,
                   char *err, size_t errlen);

/*
 * A small text file such as /proc/PID/cmdline, comm or wchan flattened into
 * out (outlen bytes, cut to fit): its NUL bytes and newlines as spaces,
 * trailing spaces cut. At most cap bytes are read; "" when the file cannot be
 * read (a process that is gone, a file not ours to read).
 */
void scan_read_flat(const char *path, size_t cap, char *out, size_t outlen);

/*
 * scan_read_file on a file the caller has opened (fd, left open): for a
 * caller that words its own open() errors. path only names the file in the
 * messages. Returns and messages as scan_read_file's once the file is open.
 */
int scan_read_fd(int fd, const char *path, size_t cap, enum scan_file_mode mode, char **out,
                 size_t *len, char *err, size_t errlen);

/*
 * The first line of the regular file path, for one-line files such as an
 * ssh public key (KEY.pub): into *line (new, the caller frees it) go the
 * bytes before the first '\r', '\n' or NUL byte; "" for an empty file. The
 * whole file is read, so cap bounds the file, not the line. Returns 0; or
 * scan_read_file's errors and messages in SCAN_FILE_REGULAR mode, *line
 * NULL then.
 */
int scan_read_first_line(const char *path, size_t cap, char **line, char *err, size_t errlen);

#endif
