/* SPDX-License-Identifier: MIT */
/*
 * sha256.h - SHA-256 (FIPS 180-4) without dependencies, so the agent (libc
 * only) and the head compute the same content address for the agent binary.
 */
#ifndef CD_SHA256_H
#define CD_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_HEX_LEN 65 /* 64 hex digits + NUL */

struct sha256 {
	uint32_t h[8];
	uint64_t bytes;
	unsigned char block[64];
	size_t fill;
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t len);
void sha256_final(struct sha256 *s, unsigned char digest[32]);

/* Hash a whole file into lowercase hex. Returns 0 or CD_ERR_IO (message in err). */
int sha256_file_hex(const char *path, char hex[SHA256_HEX_LEN], char *err, size_t errlen);
void sha256_hex(const unsigned char digest[32], char hex[SHA256_HEX_LEN]);
/* Hash data[0..len) into lowercase hex (data may be NULL when len is 0). */
void sha256_data_hex(const void *data, size_t len, char hex[SHA256_HEX_LEN]);

#endif
