/* SPDX-License-Identifier: MIT */
/* cd.c - error codes, fatal errors and allocation helpers (see cd.h). */
#include "cd.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/types.h>
#include <time.h>

static void (*fatal_hook)(void);

static const char *const err_names[] = {
    [0] = "ok",
    [-CD_ERR_NOMEM] = "nomem",
    [-CD_ERR_PARSE] = "parse",
    [-CD_ERR_IO] = "io",
    [-CD_ERR_TOOBIG] = "toobig",
    [-CD_ERR_TIMEOUT] = "timeout",
    [-CD_ERR_PROTO] = "protocol",
    [-CD_ERR_NOTFOUND] = "notfound",
    [-CD_ERR_AUTH] = "auth",
    [-CD_ERR_HOSTKEY] = "hostkey",
    [-CD_ERR_REFUSED] = "refused",
    [-CD_ERR_UNSUPPORTED] = "unsupported",
    [-CD_ERR_AGAIN] = "again",
};

const char *cd_err_name(int err)
{
	if (err > 0 || (size_t)-err >= CD_ARRAY_LEN(err_names) || !err_names[-err])
		return "unknown";
	return err_names[-err];
}

int cd_errf(char *errbuf, size_t errlen, int err, const char *fmt, ...)
{
	va_list ap;

	if (errbuf && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(errbuf, errlen, fmt, ap);
		va_end(ap);
	}
	return err;
}

void cd_set_fatal_hook(void (*hook)(void))
{
	fatal_hook = hook;
}

void cd_fatal(const char *fmt, ...)
{
	va_list ap;

	if (fatal_hook)
		fatal_hook();
	fputs("clusterdoc: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(70);
}

void *cd_malloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		cd_fatal("out of memory (%zu bytes)", n);
	return p;
}

void *cd_calloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	if (!p)
		cd_fatal("out of memory (%zu x %zu bytes)", nmemb, size);
	return p;
}

void *cd_realloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		cd_fatal("out of memory (%zu bytes)", n);
	return q;
}

char *cd_strdup(const char *s)
{
	return cd_strndup(s, strlen(s));
}

char *cd_strndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *d = cd_malloc(len + 1);

	memcpy(d, s, len);
	d[len] = '\0';
	return d;
}

void cd_fput_shell_word(FILE *f, const char *s)
{
	if (*s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                    "0123456789-_.,/:=@%+^") == strlen(s)) {
		fputs(s, f);
		return;
	}
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s, f);
	}
	fputc('\'', f);
}

const char *cd_abridge(const char *s, size_t max, char *buf, size_t buflen)
{
	size_t len = strlen(s), head, tail;

	if (max > buflen - 1)
		max = buflen - 1;
	if (len <= max || max < 5)
		return len <= max ? s : "...";
	head = (max - 3) / 2;
	tail = max - 3 - head;
	snprintf(buf, buflen, "%.*s...%s", (int)head, s, s + len - tail);
	return buf;
}

char *cd_vasprintf(const char *fmt, va_list ap)
{
	char *s;

	if (vasprintf(&s, fmt, ap) < 0)
		cd_fatal("out of memory formatting a string");
	return s;
}

void cd_strcatf(char **s, const char *fmt, ...)
{
	size_t old = *s ? strlen(*s) : 0;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n <= 0)
		return;
	*s = cd_realloc(*s, old + (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(*s + old, (size_t)n + 1, fmt, ap);
	va_end(ap);
}

char *cd_asprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = cd_vasprintf(fmt, ap);
	va_end(ap);
	return s;
}

void cd_random_token(char *hex, size_t len)
{
	unsigned char raw[16] = {0};
	ssize_t got = getrandom(raw, sizeof(raw), 0);

	if (got != (ssize_t)sizeof(raw))
		cd_fatal("getrandom failed: cannot make the run's token");
	if (len)
		hex[0] = '\0';
	for (size_t i = 0; i < sizeof(raw) && 2 * i + 2 < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", raw[i]);
}

int64_t cd_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t cd_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void cd_appendf(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strnlen(buf, len);
	va_list ap;

	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}
