/* SPDX-License-Identifier: MIT */
/*
 * rdma_pair.c - the CDRDMA1 lines, the write's pattern and the status
 * names (rdma_pair.h). Pure: a cursor parser over the bytes given, no
 * allocation.
 */
#include "probes/rdma_pair.h"
#include "probes/verbs_abi.h"
#include "cd.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- format */

static int device_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n >= RDMA_DEV_MAX)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] <= ' ' || s[i] > '~')
			return 0;
	}
	return 1;
}

int rdma_endpoint_format(const struct rdma_endpoint *e, char *buf, size_t len)
{
	const unsigned char *g = e->gid;
	int n;

	if (!device_name_ok(e->device) || e->port < 1 || e->port > 255 || e->lid > 0xffff ||
	    e->gid_index < -1 || e->gid_index > 255 || e->qpn > 0xffffff || e->psn > 0xffffff ||
	    !rdma_mtu_enum(e->mtu))
		return -1;
	n = snprintf(buf, len,
	             "%s %d 0x%x %d %02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:"
	             "%02x%02x 0x%x 0x%x 0x%llx 0x%x %d",
	             e->device, e->port, e->lid, e->gid_index, g[0], g[1], g[2], g[3], g[4], g[5],
	             g[6], g[7], g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15], e->qpn,
	             e->psn, (unsigned long long)e->addr, e->rkey, e->mtu);
	return n < 0 || (size_t)n >= len ? -1 : n;
}

/* ----------------------------------------------------------------- parse */

struct cursor {
	const char *p, *end;
};

/* The next space-separated word (exactly one space between words, none
 * before the first or after the last). 0, or -1 at the end or on an empty
 * word. */
static int word(struct cursor *c, const char **w, size_t *n)
{
	const char *s = c->p;

	if (s >= c->end)
		return -1;
	while (c->p < c->end && *c->p != ' ')
		c->p++;
	*w = s;
	*n = (size_t)(c->p - s);
	if (c->p < c->end) {
		c->p++;
		if (c->p == c->end)
			return -1; /* a trailing space */
	}
	return *n ? 0 : -1;
}

static int is_word(const char *w, size_t n, const char *lit)
{
	return n == strlen(lit) && memcmp(w, lit, n) == 0;
}

static int hex_digit(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* "0x" and 1..16 hex digits, at most max. */
static int hex_word(struct cursor *c, uint64_t max, uint64_t *out)
{
	const char *w;
	size_t n;
	uint64_t v = 0;

	if (word(c, &w, &n) < 0 || n < 3 || n > 18 || w[0] != '0' || w[1] != 'x')
		return -1;
	for (size_t i = 2; i < n; i++) {
		int d = hex_digit(w[i]);

		if (d < 0)
			return -1;
		v = v << 4 | (uint64_t)d;
	}
	if (v > max)
		return -1;
	*out = v;
	return 0;
}

/* A decimal integer min..max (a leading '-' only for negatives, no '+'). */
static int dec_word(struct cursor *c, long min, long max, long *out)
{
	const char *w;
	size_t n, i = 0;
	long v = 0;
	int neg = 0;

	if (word(c, &w, &n) < 0 || n > 9)
		return -1;
	if (w[0] == '-') {
		neg = 1;
		i = 1;
	}
	if (i == n)
		return -1;
	for (; i < n; i++) {
		if (w[i] < '0' || w[i] > '9')
			return -1;
		v = v * 10 + (w[i] - '0');
	}
	v = neg ? -v : v;
	if (v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* Eight groups of four hex digits separated by ':'. */
static int gid_word(struct cursor *c, unsigned char gid[16])
{
	const char *w;
	size_t n;

	if (word(c, &w, &n) < 0 || n != 39)
		return -1;
	for (int g = 0; g < 8; g++) {
		const char *s = w + g * 5;
		int d[4];

		if (g < 7 && s[4] != ':')
			return -1;
		for (int k = 0; k < 4; k++) {
			if ((d[k] = hex_digit(s[k])) < 0)
				return -1;
		}
		gid[2 * g] = (unsigned char)(d[0] << 4 | d[1]);
		gid[2 * g + 1] = (unsigned char)(d[2] << 4 | d[3]);
	}
	return 0;
}

static int endpoint_words(struct cursor *c, struct rdma_endpoint *e)
{
	const char *w;
	size_t n;
	long port, gid_index, mtu;
	uint64_t lid, qpn, psn, addr, rkey;

	memset(e, 0, sizeof(*e));
	if (word(c, &w, &n) < 0 || n >= RDMA_DEV_MAX)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (w[i] <= ' ' || w[i] > '~')
			return -1;
	}
	memcpy(e->device, w, n);
	if (dec_word(c, 1, 255, &port) < 0 || hex_word(c, 0xffff, &lid) < 0 ||
	    dec_word(c, -1, 255, &gid_index) < 0 || gid_word(c, e->gid) < 0 ||
	    hex_word(c, 0xffffff, &qpn) < 0 || hex_word(c, 0xffffff, &psn) < 0 ||
	    hex_word(c, UINT64_MAX, &addr) < 0 || hex_word(c, UINT32_MAX, &rkey) < 0 ||
	    dec_word(c, 256, 4096, &mtu) < 0 || !rdma_mtu_enum((int)mtu))
		return -1;
	e->port = (int)port;
	e->lid = (unsigned)lid;
	e->gid_index = (int)gid_index;
	e->qpn = (uint32_t)qpn;
	e->psn = (uint32_t)psn;
	e->addr = addr;
	e->rkey = (uint32_t)rkey;
	e->mtu = (int)mtu;
	return 0;
}

/* "no <why>": the rest of the line, printable ASCII, kept whole. */
static int why_words(struct cursor *c, struct rdma_line *out)
{
	size_t n = (size_t)(c->end - c->p);

	if (n == 0 || n >= sizeof(out->why))
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (c->p[i] < ' ' || c->p[i] > '~')
			return -1;
	}
	memcpy(out->why, c->p, n);
	out->why[n] = '\0';
	c->p = c->end;
	return 0;
}

static int kind_body(struct cursor *c, const char *w, size_t n, struct rdma_line *out)
{
	if (is_word(w, n, "write")) {
		out->kind = RDMA_LINE_WRITE;
		return dec_word(c, 1, RDMA_BYTES_MAX, &out->bytes) < 0
		           ? -1
		           : endpoint_words(c, &out->ep);
	}
	if (is_word(w, n, "ep")) {
		out->kind = RDMA_LINE_EP;
		return endpoint_words(c, &out->ep);
	}
	if (is_word(w, n, "no") || is_word(w, n, "error")) {
		out->kind = is_word(w, n, "no") ? RDMA_LINE_NO : RDMA_LINE_ERROR;
		return why_words(c, out);
	}
	if (is_word(w, n, "done")) {
		out->kind = RDMA_LINE_DONE;
		return dec_word(c, 1, RDMA_BYTES_MAX, &out->bytes);
	}
	if (is_word(w, n, "bad")) {
		out->kind = RDMA_LINE_BAD;
		return dec_word(c, 0, RDMA_BYTES_MAX - 1, &out->offset);
	}
	if (is_word(w, n, "failed")) {
		out->kind = RDMA_LINE_FAILED;
		return 0;
	}
	if (is_word(w, n, "verified")) {
		out->kind = RDMA_LINE_VERIFIED;
		return 0;
	}
	return -1;
}

int rdma_line_parse(const char *buf, size_t len, struct rdma_line *out)
{
	struct cursor c = {buf, buf + len};
	const char *w;
	size_t n;

	memset(out, 0, sizeof(*out));
	if (len >= RDMA_LINE_MAX || word(&c, &w, &n) < 0 || !is_word(w, n, RDMA_MAGIC) ||
	    word(&c, &w, &n) < 0 || kind_body(&c, w, n, out) < 0)
		return -1;
	return c.p == c.end ? 0 : -1;
}

/* ------------------------------------------------------------------ MTU */

int rdma_mtu_bytes(int ibv_mtu)
{
	return ibv_mtu >= 1 && ibv_mtu <= 5 ? 256 << (ibv_mtu - 1) : 0;
}

int rdma_mtu_enum(int bytes)
{
	for (int v = 1; v <= 5; v++) {
		if (rdma_mtu_bytes(v) == bytes)
			return v;
	}
	return 0;
}

/* --------------------------------------------------------------- status */

const char *rdma_wc_status_name(int status)
{
	if (status < 0 || status >= CD_IBV_WC_STATUS_COUNT)
		return "unknown";
	return cd_ibv_wc_status_words[status];
}

/* -------------------------------------------------------------- pattern */

/* FNV-1a of the token seeds a splitmix64 step per 8-byte word: every word
 * differs from its neighbours and from another run's. */
static uint64_t token_seed(const char *token)
{
	uint64_t h = 1469598103934665603ull;

	for (const char *p = token; p && *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return h;
}

static uint64_t word_at(uint64_t seed, uint64_t i)
{
	uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static unsigned char byte_at(uint64_t seed, size_t off)
{
	return (unsigned char)(word_at(seed, off / 8) >> (8 * (off % 8)));
}

void rdma_pattern_fill(unsigned char *buf, size_t len, const char *token)
{
	uint64_t seed = token_seed(token);

	for (size_t i = 0; i < len; i++)
		buf[i] = byte_at(seed, i);
}

long rdma_pattern_check(const unsigned char *buf, size_t len, const char *token)
{
	uint64_t seed = token_seed(token);

	for (size_t i = 0; i < len; i++) {
		if (buf[i] != byte_at(seed, i))
			return (long)i;
	}
	return -1;
}
