/* SPDX-License-Identifier: MIT */
/*
 * buf.h - a growable byte buffer with a hard cap.
 *
 * Every byte read from the network or a child process goes into a struct buf
 * whose `max` is explicit. Appending past `max` fails with CD_ERR_TOOBIG; it
 * never truncates silently. Embedded: buf_init/buf_fini.
 */
#ifndef CD_BUF_H
#define CD_BUF_H

#include <stddef.h>
#include <sys/types.h>

struct buf {
	char *data; /* always NUL-terminated after len (for convenience, not counted) */
	size_t len; /* bytes held */
	size_t cap; /* bytes allocated (excluding the NUL) */
	size_t max; /* hard cap on len */
};

void buf_init(struct buf *b, size_t max);
void buf_fini(struct buf *b);

/* Append n bytes. Returns 0, or CD_ERR_TOOBIG when len + n would exceed max
 * (nothing is appended then). */
int buf_append(struct buf *b, const void *p, size_t n);
int buf_append_str(struct buf *b, const char *s);
/* Append each string argument up to a NULL one: buf_append_strs(b, "a", s, NULL).
 * 0, or CD_ERR_TOOBIG (what came before the one that did not fit stays). */
int buf_append_strs(struct buf *b, ...);

/* Drop the first n bytes (n <= len). */
void buf_consume(struct buf *b, size_t n);
void buf_reset(struct buf *b);

/*
 * Find the first complete line ('\n'-terminated). Returns its length without
 * the '\n' and sets *line to its start, or -1 when no full line is buffered.
 * The caller consumes len + 1 bytes once done with it.
 */
ssize_t buf_line(const struct buf *b, const char **line);

/*
 * Read from fd once (non-blocking fds expected) into b. Returns bytes read
 * (> 0), 0 on EOF, CD_ERR_AGAIN when nothing is available, CD_ERR_TOOBIG when
 * b is full, CD_ERR_IO on a read error (errno kept).
 */
ssize_t buf_read_fd(struct buf *b, int fd);

/* Write as much of b to fd as possible and consume it. Returns 0 when b is now
 * empty, CD_ERR_AGAIN when bytes remain, CD_ERR_IO on error (errno kept). */
int buf_write_fd(struct buf *b, int fd);

#endif
