/* SPDX-License-Identifier: MIT */
/*
 * base64.c - RFC 4648 base64 (see base64.h).
 */
#include "base64.h"

#include "cd.h"

#include <stdint.h>
#include <stdlib.h>

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t base64_encoded_size(size_t n)
{
	return (n + 2) / 3 * 4 + 1;
}

size_t base64_encode(const void *src, size_t n, char *dst)
{
	const unsigned char *s = src;
	size_t o = 0, i = 0;

	for (; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];

		dst[o++] = alphabet[v >> 18 & 63];
		dst[o++] = alphabet[v >> 12 & 63];
		dst[o++] = alphabet[v >> 6 & 63];
		dst[o++] = alphabet[v & 63];
	}
	if (i < n) {
		uint32_t v = (uint32_t)s[i] << 16 | (i + 1 < n ? (uint32_t)s[i + 1] << 8 : 0);

		dst[o++] = alphabet[v >> 18 & 63];
		dst[o++] = alphabet[v >> 12 & 63];
		dst[o++] = i + 1 < n ? alphabet[v >> 6 & 63] : '=';
		dst[o++] = '=';
	}
	dst[o] = '\0';
	return o;
}

static int value_of(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

long long base64_decode(const char *text, size_t len, void *dst, size_t cap)
{
	unsigned char *d = dst;
	size_t o = 0;

	if (len % 4 != 0)
		return -1;
	for (size_t i = 0; i < len; i += 4) {
		int last = i + 4 == len;
		int pad =
		    last ? (text[i + 3] == '=') + (text[i + 2] == '=' && text[i + 3] == '=') : 0;
		int v[4];
		uint32_t w;

		for (int k = 0; k < 4 - pad; k++) {
			if ((v[k] = value_of(text[i + k])) < 0)
				return -1;
		}
		for (int k = 4 - pad; k < 4; k++)
			v[k] = 0;
		/* the bits of the last character that spill past the last byte
		 * must be zero: one encoding per byte string, as OpenSSH wants */
		if ((pad == 1 && (v[2] & 0x3)) || (pad == 2 && (v[1] & 0xf)))
			return -1;
		w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 |
		    (uint32_t)v[3];
		if (o + 3 - (size_t)pad > cap)
			return -1;
		d[o++] = (unsigned char)(w >> 16);
		if (pad < 2)
			d[o++] = (unsigned char)(w >> 8);
		if (pad < 1)
			d[o++] = (unsigned char)w;
	}
	return (long long)o;
}

char *base64_decode_new(const char *text, size_t len, size_t *outlen)
{
	size_t cap = len / 4 * 3 + 1;
	char *out = cd_malloc(cap);
	long long n = base64_decode(text, len, out, cap);

	if (n < 0) {
		free(out);
		return NULL;
	}
	out[n] = 0;
	*outlen = (size_t)n;
	return out;
}
