/* SPDX-License-Identifier: MIT */
/* termtext.c - text from nodes made safe for a terminal (see termtext.h). */
#include "termtext.h"

#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "utf8.h"

/* The length of the run of bytes at s (n left) that is written as it is:
 * 0 when s[0] starts something to escape. */
static size_t plain_len(const unsigned char *s, size_t n, unsigned keep)
{
	size_t len = utf8_seq_len(s, n);

	if (len == 1) {
		if (s[0] == '\n' && (keep & TERMTEXT_KEEP_NL))
			return 1;
		if (s[0] == '\t' && (keep & TERMTEXT_KEEP_TAB))
			return 1;
		return s[0] < 0x20 || s[0] == 0x7f ? 0 : 1;
	}
	/* U+0080-U+009F, the C1 controls, are 0xc2 0x80-0x9f. */
	if (len == 2 && s[0] == 0xc2 && s[1] < 0xa0)
		return 0;
	return len;
}

size_t termtext_escape(char *out, size_t cap, const char *s, size_t n, unsigned keep)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0, w = 0, i = 0;
	int cut = 0;

	while (i < n) {
		size_t len = plain_len(p + i, n - i, keep);

		if (len) {
			if (!cut && o + len < cap) {
				memcpy(out + o, p + i, len);
				w = o + len;
			} else {
				cut = 1;
			}
			o += len;
			i += len;
			continue;
		}
		if (!cut && o + 4 < cap) {
			out[o] = '\\';
			out[o + 1] = 'x';
			out[o + 2] = hex[p[i] >> 4];
			out[o + 3] = hex[p[i] & 0xf];
			w = o + 4;
		} else {
			cut = 1;
		}
		o += 4;
		i++;
	}
	/* When cut, the text ends after the last whole piece that fit. */
	if (cap > 0)
		out[w] = '\0';
	return o;
}

size_t termtext_len(const char *s, size_t n, unsigned keep)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0;

	for (size_t i = 0; i < n;) {
		size_t len = plain_len(p + i, n - i, keep);

		o += len ? len : 4;
		i += len ? len : 1;
	}
	return o;
}

char *termtext_dup(const char *s, size_t n, unsigned keep)
{
	size_t len = termtext_len(s, n, keep);
	char *out = cd_malloc(len + 1);

	termtext_escape(out, len + 1, s, n, keep);
	return out;
}

int termtext_fputs(const char *s, FILE *f, unsigned keep)
{
	char *e = termtext_dup(s, strlen(s), keep);
	int rc = fputs(e, f);

	free(e);
	return rc;
}

int termtext_vprintf(FILE *f, const char *fmt, va_list ap)
{
	char *raw = cd_vasprintf(fmt, ap);
	char *e = termtext_dup(raw, strlen(raw), TERMTEXT_KEEP_NL | TERMTEXT_KEEP_TAB);
	size_t len = strlen(e);
	int rc = fwrite(e, 1, len, f) == len ? (int)len : -1;

	free(e);
	free(raw);
	return rc;
}

int termtext_printf(FILE *f, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = termtext_vprintf(f, fmt, ap);
	va_end(ap);
	return rc;
}
