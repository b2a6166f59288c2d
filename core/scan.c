/* SPDX-License-Identifier: MIT */
/* scan.c - line and word cursors, trimming, bounded integers, the bounded
 * file reader and its first-line form (see scan.h). */
#include "scan.h"
#include "cd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The first allocation of a SCAN_FILE_TO_EOF read; it doubles from there. */
#define TO_EOF_FIRST_CHUNK 4096u

int scan_is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

int scan_next_line(const char **p, const char *end, const char **line, size_t *n)
{
	const char *nl;

	if (*p >= end)
		return 0;
	nl = memchr(*p, '\n', (size_t)(end - *p));
	*line = *p;
	*n = (size_t)((nl ? nl : end) - *p);
	*p = nl ? nl + 1 : end;
	return 1;
}

int scan_file_next(const char **p, const char *end, struct scan_file_line *l, char **line)
{
	const char *s, *nul;
	size_t n;

	free(*line);
	*line = NULL;
	if (!scan_next_line(p, end, &s, &n))
		return 0;
	l->no++;
	if ((nul = memchr(s, '\0', n)))
		return cd_errf(l->err, l->errlen, CD_ERR_PARSE,
		               "%s:%zu: a NUL byte at column %zu (not a text file?)", l->path,
		               l->no, (size_t)(nul - s) + 1);
	*line = cd_strndup(s, n);
	return 1;
}

int scan_file_bad(const struct scan_file_line *l, const char *value, const char *why)
{
	return cd_errf(l->err, l->errlen, CD_ERR_PARSE, "%s:%zu: \"%s\": %s", l->path, l->no, value,
	               why);
}

void scan_trim(const char **s, size_t *n)
{
	while (*n && scan_is_space(**s))
		(*s)++, (*n)--;
	while (*n && scan_is_space((*s)[*n - 1]))
		(*n)--;
}

int scan_next_word(const char **p, const char *end, const char **w, size_t *n)
{
	const char *s = *p;

	while (s < end && scan_is_space(*s))
		s++;
	if (s == end) {
		*p = s;
		return 0;
	}
	*w = s;
	while (s < end && !scan_is_space(*s))
		s++;
	*n = (size_t)(s - *w);
	*p = s;
	return 1;
}

static int digit_value(char c, unsigned base)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (base == 16 && c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (base == 16 && c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int scan_uint(const char **p, const char *end, unsigned base, uint64_t max, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int d;

	if ((base != 10 && base != 16) || s >= end || digit_value(*s, base) < 0)
		return CD_ERR_PARSE;
	for (; s < end && (d = digit_value(*s, base)) >= 0; s++) {
		/* v * base + d > max, asked without overflowing */
		if (v > max / base || v * base > max - (uint64_t)d)
			return CD_ERR_TOOBIG;
		v = v * base + (uint64_t)d;
	}
	*p = s;
	*out = v;
	return 0;
}

/*
 * The two modes keep the messages their callers have always shown: the node
 * facts (TO_EOF) put theirs in the facts' "errors" object, the others
 * (REGULAR) prefix their own context.
 */
static int read_failed(char *err, size_t errlen, enum scan_file_mode mode, int code,
                       const char *path, int e)
{
	if (mode == SCAN_FILE_TO_EOF)
		return cd_errf(err, errlen, code, "cannot read %s: %s", path, strerror(e));
	return cd_errf(err, errlen, code, "%s: %s", path, strerror(e));
}

/* How many bytes to read from fd (REGULAR: its size; TO_EOF: one past the cap,
 * to see that it is exceeded). 0 or an error, with the message in err. */
static int read_target(int fd, const char *path, size_t cap, enum scan_file_mode mode, size_t *want,
                       char *err, size_t errlen)
{
	struct stat st;

	if (mode == SCAN_FILE_TO_EOF) {
		*want = cap < SIZE_MAX ? cap + 1 : cap;
		return 0;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return cd_errf(err, errlen, CD_ERR_IO, "%s: not a readable regular file", path);
	if ((unsigned long long)st.st_size > cap)
		return cd_errf(err, errlen, CD_ERR_TOOBIG,
		               "%s: %lld bytes, more than the %zu expected", path,
		               (long long)st.st_size, cap);
	*want = (size_t)st.st_size;
	return 0;
}

int scan_read_fd(int fd, const char *path, size_t cap, enum scan_file_mode mode, char **out,
                 size_t *len, char *err, size_t errlen)
{
	size_t want = 0, room, got = 0;
	char *b = NULL;
	int rc;

	*out = NULL;
	*len = 0;
	if ((rc = read_target(fd, path, cap, mode, &want, err, errlen)) < 0)
		goto out;
	/* A regular file's buffer is its size; a stream's grows as it comes. */
	room = mode == SCAN_FILE_TO_EOF && want > TO_EOF_FIRST_CHUNK ? TO_EOF_FIRST_CHUNK : want;
	b = cd_malloc(room + 1);
	while (got < want) {
		ssize_t n;

		if (got == room) {
			room = room > want / 2 ? want : room * 2;
			b = cd_realloc(b, room + 1);
		}
		n = read(fd, b + got, room - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = read_failed(err, errlen, mode, CD_ERR_IO, path, errno);
			goto out;
		}
		if (n == 0 && mode == SCAN_FILE_TO_EOF)
			break;
		if (n == 0) {
			rc = cd_errf(err, errlen, CD_ERR_IO, "%s: shrank while being read", path);
			goto out;
		}
		got += (size_t)n;
	}
	if (got > cap) {
		rc = cd_errf(err, errlen, CD_ERR_TOOBIG, "%s is larger than %zu bytes", path, cap);
		goto out;
	}
	b[got] = '\0';
	*out = b;
	*len = got;
	b = NULL;
out:
	free(b);
	return rc;
}

int scan_read_file(const char *path, size_t cap, enum scan_file_mode mode, char **out, size_t *len,
                   char *err, size_t errlen)
{
	int fd, rc;

	*out = NULL;
	*len = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return read_failed(err, errlen, mode, errno == ENOENT ? CD_ERR_NOTFOUND : CD_ERR_IO,
		                   path, errno);
	rc = scan_read_fd(fd, path, cap, mode, out, len, err, errlen);
	close(fd);
	return rc;
}

int scan_read_first_line(const char *path, size_t cap, char **line, char *err, size_t errlen)
{
	size_t len;
	int rc;

	*line = NULL;
	rc = scan_read_file(path, cap, SCAN_FILE_REGULAR, line, &len, err, errlen);
	if (rc < 0)
		return rc;
	/* the buffer is NUL-terminated, so a NUL byte ends the line as well */
	(*line)[strcspn(*line, "\r\n")] = '\0';
	return 0;
}

void scan_read_flat(const char *path, size_t cap, char *out, size_t outlen)
{
	char *data = NULL, err[CD_ERRLEN];
	size_t len = 0;

	out[0] = '\0';
	if (scan_read_file(path, cap, SCAN_FILE_TO_EOF, &data, &len, err, sizeof(err)) < 0)
		return;
	for (size_t i = 0; i < len; i++) {
		if (data[i] == '\0' || data[i] == '\n')
			data[i] = ' ';
	}
	while (len && data[len - 1] == ' ')
		len--;
	snprintf(out, outlen, "%.*s", (int)len, data);
	free(data);
}
