/* SPDX-License-Identifier: MIT */
/* utf8.c - UTF-8 validation (see utf8.h). */
#include "utf8.h"

size_t utf8_seq_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len = c < 0x80 ? 1 : c < 0xc2 ? 0 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : c < 0xf5 ? 4 : 0;
	unsigned char lo = 0x80, hi = 0xbf;

	if (!len || len > n)
		return 0;
	/* The second byte's range rules out overlong forms, surrogates and
	 * code points past U+10FFFF. */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	for (size_t i = 1; i < len; i++) {
		if (s[i] < lo || s[i] > hi)
			return 0;
		lo = 0x80;
		hi = 0xbf;
	}
	return len;
}
