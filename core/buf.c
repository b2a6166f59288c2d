/* SPDX-License-Identifier: MIT */
/* buf.c - bounded byte buffer (see buf.h). */
#include "buf.h"
#include "cd.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void buf_init(struct buf *b, size_t max)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->max = max;
}

void buf_fini(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

static void buf_reserve(struct buf *b, size_t want)
{
	size_t cap = b->cap ? b->cap : 256;

	if (want <= b->cap && b->data)
		return;
	while (cap < want)
		cap *= 2;
	if (cap > b->max)
		cap = b->max;
	b->data = cd_realloc(b->data, cap + 1);
	b->cap = cap;
}

int buf_append(struct buf *b, const void *p, size_t n)
{
	if (n > b->max - b->len)
		return CD_ERR_TOOBIG;
	buf_reserve(b, b->len + n);
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int buf_append_strs(struct buf *b, ...)
{
	const char *s;
	int rc = 0;
	va_list ap;

	va_start(ap, b);
	while (!rc && (s = va_arg(ap, const char *)))
		rc = buf_append_str(b, s);
	va_end(ap);
	return rc;
}

int buf_append_str(struct buf *b, const char *s)
{
	return buf_append(b, s, strlen(s));
}

void buf_consume(struct buf *b, size_t n)
{
	if (n >= b->len) {
		b->len = 0;
	} else {
		memmove(b->data, b->data + n, b->len - n);
		b->len -= n;
	}
	if (b->data)
		b->data[b->len] = '\0';
}

void buf_reset(struct buf *b)
{
	buf_consume(b, b->len);
}

ssize_t buf_line(const struct buf *b, const char **line)
{
	const char *nl;

	if (!b->len)
		return -1;
	nl = memchr(b->data, '\n', b->len);
	if (!nl)
		return -1;
	*line = b->data;
	return nl - b->data;
}

ssize_t buf_read_fd(struct buf *b, int fd)
{
	size_t room;
	ssize_t n;

	if (b->len >= b->max)
		return CD_ERR_TOOBIG;
	room = b->max - b->len;
	if (room > 65536)
		room = 65536;
	buf_reserve(b, b->len + room);
	do
		n = read(fd, b->data + b->len, room);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return (errno == EAGAIN || errno == EWOULDBLOCK) ? CD_ERR_AGAIN : CD_ERR_IO;
	b->len += (size_t)n;
	b->data[b->len] = '\0';
	return n;
}

int buf_write_fd(struct buf *b, int fd)
{
	while (b->len) {
		ssize_t n = write(fd, b->data, b->len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return (errno == EAGAIN || errno == EWOULDBLOCK) ? CD_ERR_AGAIN : CD_ERR_IO;
		}
		buf_consume(b, (size_t)n);
	}
	return 0;
}
