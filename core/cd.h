/* SPDX-License-Identifier: MIT */
/*
 * cd.h - conventions shared by every clusterdoc module: error codes,
 * the caller-supplied error buffer, and allocation that never returns NULL.
 *
 * Library code returns 0 or a negative enum cd_err and writes the detail into
 * a caller-supplied buffer of CD_ERRLEN bytes (see cd_errf). Only the front
 * ends (cli/, tui/) decide what reaches the user.
 */
#ifndef CD_H
#define CD_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The version clusterdoc reports (--version, hello, the clusterdoc_info metric). */
#define CLUSTERDOC_VERSION "0.1.0"

#define CD_ERRLEN 512

enum cd_err {
	CD_OK = 0,
	CD_ERR_NOMEM = -1,    /* allocation failed */
	CD_ERR_PARSE = -2,    /* malformed input (hostlist, JSON, config) */
	CD_ERR_IO = -3,       /* a system call failed; errno is in the message */
	CD_ERR_TOOBIG = -4,   /* a bounded buffer or message cap was hit */
	CD_ERR_TIMEOUT = -5,  /* a deadline passed */
	CD_ERR_PROTO = -6,    /* the peer broke the agent protocol */
	CD_ERR_NOTFOUND = -7, /* a named thing does not exist */
	CD_ERR_AUTH = -8,     /* authentication failed */
	CD_ERR_HOSTKEY = -9,  /* host key unknown or changed */
	CD_ERR_REFUSED = -10, /* the peer refused (connection, request) */
	CD_ERR_UNSUPPORTED = -11,
	CD_ERR_AGAIN = -12, /* not ready yet: call again when the fd is ready */
};

/* A short stable name for an error code ("parse", "timeout", ...). */
const char *cd_err_name(int err);

/*
 * Format a message into errbuf (errlen bytes, always NUL-terminated when
 * errlen > 0). errbuf may be NULL. Returns err unchanged so callers can write
 * `return cd_errf(err, errlen, CD_ERR_PARSE, "...")`.
 */
int cd_errf(char *errbuf, size_t errlen, int err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/*
 * Fatal is for programmer errors and out-of-memory only. cd_fatal runs the
 * hook registered by cd_set_fatal_hook (the TUI restores the terminal there),
 * prints "clusterdoc: <message>" to stderr and exits with status 70.
 */
void cd_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void cd_set_fatal_hook(void (*hook)(void));

/* Allocation that calls cd_fatal on failure, so it never returns NULL. */
void *cd_malloc(size_t n);
void *cd_calloc(size_t nmemb, size_t size);
void *cd_realloc(void *p, size_t n);
char *cd_strdup(const char *s);
char *cd_strndup(const char *s, size_t n);
char *cd_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Write s to f as one shell word: as it is when every character is plain,
 * else single-quoted ("node[1-4]" would be a glob, "a b" two words). */
void cd_fput_shell_word(FILE *f, const char *s);
/*
 * s as a message echoes it: s itself when it has at most max bytes, else
 * its head and tail around "..." in buf (max bytes in all, at most
 * buflen - 1), so that a long name leaves room for the reason that follows
 * it in a CD_ERRLEN message. Returns s or buf.
 */
const char *cd_abridge(const char *s, size_t max, char *buf, size_t buflen);
/* cd_asprintf with a va_list (which it consumes); fatal on out-of-memory. */
char *cd_vasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
/* Append the formatted text to the heap string *s (NULL: an empty one), which
 * is reallocated; fatal on out-of-memory. */
void cd_strcatf(char **s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append printf output to the NUL-terminated text in buf (len bytes in all),
 * cut to fit; nothing when buf is already full. */
void cd_appendf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A per-run secret: 32 random lowercase hex characters (getrandom) and a
 * NUL into hex (len >= 33; a shorter buffer gets fewer). cd_fatal when the
 * kernel gives no randomness. */
void cd_random_token(char *hex, size_t len);

/* Monotonic clock in milliseconds, for deadlines. */
int64_t cd_now_ms(void);
int64_t cd_now_us(void); /* the same clock in microseconds */

#define CD_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#endif
