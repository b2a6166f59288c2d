/* SPDX-License-Identifier: MIT */
/* backauth.c - the connect-back handshake's messages and proofs (backauth.h). */
#include "backauth.h"
#include "sha256.h"

#include <stdio.h>
#include <string.h>

void backauth_hmac(const void *key, size_t keylen, const void *msg, size_t len,
                   unsigned char out[32])
{
	unsigned char k[64] = {0}, pad[64], inner[32];
	struct sha256 s;

	if (keylen > sizeof(k)) {
		sha256_init(&s);
		sha256_update(&s, key, keylen);
		sha256_final(&s, k);
	} else {
		memcpy(k, key, keylen);
	}
	for (size_t i = 0; i < sizeof(pad); i++)
		pad[i] = k[i] ^ 0x36;
	sha256_init(&s);
	sha256_update(&s, pad, sizeof(pad));
	sha256_update(&s, msg, len);
	sha256_final(&s, inner);
	for (size_t i = 0; i < sizeof(pad); i++)
		pad[i] = k[i] ^ 0x5c;
	sha256_init(&s);
	sha256_update(&s, pad, sizeof(pad));
	sha256_update(&s, inner, sizeof(inner));
	sha256_final(&s, out);
	memset(k, 0, sizeof(k));
	memset(pad, 0, sizeof(pad));
}

static int is_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

int backauth_secret_ok(const char *secret)
{
	size_t n = secret ? strlen(secret) : 0;

	return n >= BACKAUTH_SECRET_MIN && is_hex(secret, n);
}

static int name_ok(const char *s, size_t n)
{
	if (n == 0 || n >= BACKAUTH_NAME_MAX)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return 0;
	}
	return 1;
}

static int nonce_ok(const char *s, size_t n)
{
	return n == BACKAUTH_NONCE_HEX - 1 && is_hex(s, n);
}

int backauth_node_key(const char *secret, const char *name, char out[BACKAUTH_PROOF_HEX])
{
	char msg[BACKAUTH_NAME_MAX + 32];
	unsigned char mac[32];
	int n;

	if (!backauth_secret_ok(secret) || !name_ok(name, strlen(name)))
		return -1;
	n = snprintf(msg, sizeof(msg), "clusterdoc-back2 node %s", name);
	backauth_hmac(secret, strlen(secret), msg, (size_t)n, mac);
	sha256_hex(mac, out);
	memset(mac, 0, sizeof(mac));
	return 0;
}

/* The proof of role over both nonces, keyed with the node's key, as hex. */
static void proof(const struct backauth *a, const char *key, const char *role,
                  char out[BACKAUTH_PROOF_HEX])
{
	char msg[BACKAUTH_NAME_MAX + 2 * BACKAUTH_NONCE_HEX + 48];
	unsigned char mac[32];
	int n = snprintf(msg, sizeof(msg), "clusterdoc-back2 %s %s %s %s", role, a->name,
	                 a->nonce_a, a->nonce_h);

	backauth_hmac(key, strlen(key), msg, (size_t)n, mac);
	sha256_hex(mac, out);
}

/* The head's proof of role: with the key of the node a names. */
static void head_proof(const struct backauth *a, const char *secret, const char *role,
                       char out[BACKAUTH_PROOF_HEX])
{
	char key[BACKAUTH_PROOF_HEX];

	backauth_node_key(secret, a->name, key);
	proof(a, key, role, out);
	memset(key, 0, sizeof(key));
}

/* Compare two proofs in time independent of where they differ. */
static int proof_equal(const char *a, const char *b)
{
	unsigned char diff = 0;

	for (size_t i = 0; i < BACKAUTH_PROOF_HEX - 1; i++)
		diff |= (unsigned char)(a[i] ^ b[i]);
	return diff == 0;
}

/* Split "W1 W2 W3" (exactly words words, single spaces) in place into w[]. */
static int split(const char *line, size_t words, const char *w[], size_t len[])
{
	const char *p = line;

	if (strlen(line) >= BACKAUTH_LINE_MAX)
		return -1;
	for (size_t i = 0; i < words; i++) {
		w[i] = p;
		len[i] = strcspn(p, " ");
		p += len[i];
		if (i + 1 < words) {
			if (*p != ' ')
				return -1;
			p++;
		}
	}
	return *p ? -1 : 0;
}

int backauth_agent_hello(struct backauth *a, const char *name, const char *nonce_a, char *out,
                         size_t outlen)
{
	int n;

	memset(a, 0, sizeof(*a));
	if (!name_ok(name, strlen(name)) || !nonce_ok(nonce_a, strlen(nonce_a)))
		return -1;
	snprintf(a->name, sizeof(a->name), "%s", name);
	snprintf(a->nonce_a, sizeof(a->nonce_a), "%s", nonce_a);
	n = snprintf(out, outlen, "CDBACK2 %s %s\n", a->name, a->nonce_a);
	return n > 0 && (size_t)n < outlen ? n : -1;
}

int backauth_head_challenge(struct backauth *a, const char *secret, const char *line,
                            const char *nonce_h, char *out, size_t outlen)
{
	const char *w[3];
	size_t len[3];
	char p[BACKAUTH_PROOF_HEX];
	int n;

	memset(a, 0, sizeof(*a));
	if (!backauth_secret_ok(secret) || split(line, 3, w, len) < 0 || len[0] != 7 ||
	    memcmp(w[0], "CDBACK2", 7) != 0 || !name_ok(w[1], len[1]) || !nonce_ok(w[2], len[2]) ||
	    !nonce_ok(nonce_h, strlen(nonce_h)))
		return -1;
	memcpy(a->name, w[1], len[1]);
	memcpy(a->nonce_a, w[2], len[2]);
	memcpy(a->nonce_h, nonce_h, BACKAUTH_NONCE_HEX);
	head_proof(a, secret, "head", p);
	n = snprintf(out, outlen, "CDBACK2 %s %s\n", a->nonce_h, p);
	return n > 0 && (size_t)n < outlen ? n : -1;
}

int backauth_agent_answer(struct backauth *a, const char *key, const char *line, char *out,
                          size_t outlen)
{
	const char *w[3];
	size_t len[3];
	char want[BACKAUTH_PROOF_HEX];
	int n;

	if (!backauth_secret_ok(key) || split(line, 3, w, len) < 0 || len[0] != 7 ||
	    memcmp(w[0], "CDBACK2", 7) != 0 || !nonce_ok(w[1], len[1]) ||
	    len[2] != BACKAUTH_PROOF_HEX - 1)
		return -1;
	memcpy(a->nonce_h, w[1], len[1]);
	a->nonce_h[len[1]] = '\0';
	proof(a, key, "head", want);
	if (!proof_equal(want, w[2]))
		return -1;
	proof(a, key, "agent", want);
	n = snprintf(out, outlen, "%s\n", want);
	return n > 0 && (size_t)n < outlen ? n : -1;
}

int backauth_head_verify(const struct backauth *a, const char *secret, const char *line)
{
	char want[BACKAUTH_PROOF_HEX];

	if (!a->name[0] || strlen(line) != BACKAUTH_PROOF_HEX - 1)
		return -1;
	head_proof(a, secret, "agent", want);
	return proof_equal(want, line) ? 0 : -1;
}
