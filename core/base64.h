/* SPDX-License-Identifier: MIT */
/*
 * base64.h - RFC 4648 base64 (standard alphabet, '=' padding), for binary
 * data inside the agent protocol's JSON lines.
 */
#ifndef CD_BASE64_H
#define CD_BASE64_H

#include <stddef.h>

/* Bytes needed to encode n bytes, including the terminating NUL. */
size_t base64_encoded_size(size_t n);

/* Encode src[0..n) into dst (at least base64_encoded_size(n) bytes), NUL-
 * terminated. Returns the length written, without the NUL. */
size_t base64_encode(const void *src, size_t n, char *dst);

/*
 * Decode text[0..len) into dst (room for cap bytes). Padding is required
 * (len a multiple of 4); whitespace, any other character and a
 * non-canonical ending (bits past the last byte that are not zero, which
 * OpenSSH refuses too) are refused.
 * Returns the number of bytes written, or -1 when the text is not base64 or
 * does not fit in cap.
 */
long long base64_decode(const char *text, size_t len, void *dst, size_t cap);

/* base64_decode into a new buffer (free it), NUL-terminated after *outlen
 * bytes; NULL when the text is not base64. */
char *base64_decode_new(const char *text, size_t len, size_t *outlen);

#endif
