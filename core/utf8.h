/* SPDX-License-Identifier: MIT */
/*
 * utf8.h - UTF-8 validation for text that leaves clusterdoc in formats that
 * refuse invalid bytes (Prometheus' exposition, XML).
 */
#ifndef CD_UTF8_H
#define CD_UTF8_H

#include <stddef.h>

/* The length (1-4) of the valid UTF-8 sequence at s, n bytes left, or 0
 * when it is not one: a stray continuation byte, a truncated sequence, an
 * overlong form, a surrogate, or a code point past U+10FFFF. */
size_t utf8_seq_len(const unsigned char *s, size_t n);

#endif
