/* SPDX-License-Identifier: MIT */
/*
 * fuzz_reach_pmtu.c - libFuzzer harness for the matrix's path-MTU probe
 * (probes/reach_pmtu.c): whatever datagram reaches a listener's UDP echo or
 * a connector's probe socket must never crash the agent, nor move the
 * search anywhere a whole echo of ours did not take it.
 *
 * Input: byte 0 picks the family (bit 0: IPv6) and whether the search is
 * driven (bit 1); byte 1 is the token's length (mod 40), the token follows
 * (a NUL ends it early); bytes 2-3 after it the route's MTU (576..9216).
 * The rest is datagrams, each a 2-byte big-endian header: its low 14 bits
 * the length of what follows, bit 15 "pad with '.' to the size the
 * datagram claims" (so that short inputs still make whole echoes).
 *
 * Every datagram goes through reach_pmtu_probe_size (the parser of both
 * halves). Driven, they are also fed to a search (reach_pmtu_read over an
 * AF_UNIX datagram socketpair standing in for the UDP socket), then the
 * search is stepped round after round: its answer must be the largest
 * whole echo, and every probe it sends must carry the token and be as
 * long as the size it claims. Seeds: tests/fuzz/corpus/reach_pmtu/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cd.h"
#include "probes/reach.h"
#include "probes/reach_internal.h"

#define MAX_DGRAM 16384

static size_t header_bytes(int family)
{
	return family == AF_INET6 ? 48 : 28;
}

/* The parser's contract: 0, or 1..65535 with the prefix, the token, a
 * space and a newline inside the datagram. */
static long parse_checked(const char *buf, size_t n, const char *token)
{
	size_t prefix = strlen(REACH_PMTU_PREFIX), tlen = strlen(token);
	long size = reach_pmtu_probe_size(buf, n, token);

	if (size < 0 || size > 65535)
		abort();
	if (size && (n < prefix + tlen + 2 || memcmp(buf, REACH_PMTU_PREFIX, prefix) != 0 ||
	             memcmp(buf + prefix, token, tlen) != 0 || buf[prefix + tlen] != ' ' ||
	             !memchr(buf + prefix + tlen + 1, '\n', n - prefix - tlen - 1)))
		abort();
	return size;
}

/* Reads what the search sent (the other end of the pair): each must be one
 * of our probes, whole. */
static void drain_probes(int fd, int family, const char *token, char *buf)
{
	for (;;) {
		ssize_t n = recv(fd, buf, MAX_DGRAM, MSG_DONTWAIT | MSG_TRUNC);
		long size;

		if (n < 0)
			return;
		if (n > MAX_DGRAM)
			abort();
		size = parse_checked(buf, (size_t)n, token);
		if (!size || (size_t)size != (size_t)n + header_bytes(family))
			abort();
	}
}

static void drive(const uint8_t *data, size_t size, int family, const char *token, int mtu)
{
	static char buf[65536], probe[MAX_DGRAM];
	struct reach_pmtu p;
	long best = 0;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0)
		return;
	/* a search after its first round (reach_pmtu_start needs a real route) */
	memset(&p, 0, sizeof(p));
	p.fd = sv[0];
	p.family = family;
	p.max = mtu;
	p.hi = mtu + 1;
	p.rounds = 1;
	p.wait_us = 1000;
	p.round_end = 1000;
	p.deadline = 1000000;
	p.sizes[p.nsizes++] = mtu;
	if (mtu > 1500)
		p.sizes[p.nsizes++] = 1500;
	if (mtu > 1280)
		p.sizes[p.nsizes++] = 1280;

	while (size >= 2) {
		size_t len = ((size_t)(data[0] & 0x3f) << 8) | data[1];
		int pad = data[0] & 0x80;
		long claimed;

		data += 2, size -= 2;
		if (len > size)
			len = size;
		memcpy(probe, data, len);
		data += len, size -= len;
		claimed = parse_checked(probe, len, token);
		if (pad && claimed > (long)header_bytes(family) &&
		    (size_t)claimed - header_bytes(family) <= MAX_DGRAM &&
		    (size_t)claimed - header_bytes(family) > len) {
			memset(probe + len, '.', (size_t)claimed - header_bytes(family) - len);
			len = (size_t)claimed - header_bytes(family);
		}
		if (send(sv[1], probe, len, MSG_DONTWAIT) != (ssize_t)len)
			continue;
		if (claimed && (size_t)claimed == len + header_bytes(family) && claimed > best)
			best = claimed;
	}

	reach_pmtu_read(&p, token, buf, sizeof(buf), 0);
	if (p.lo != best)
		abort();
	for (int round = 0; round < 24 && !p.done; round++) {
		drain_probes(sv[1], family, token, probe);
		reach_pmtu_step(&p, token, buf, sizeof(buf), reach_pmtu_wake(&p));
		if (!p.done && (p.hi <= p.lo + 1 || p.lo >= p.max))
			abort(); /* adjacent bounds, or the route's MTU passing, end it */
	}
	if (p.done && p.fd != -1)
		abort();
	if (!p.done)
		close(p.fd);
	else
		drain_probes(sv[1], family, token, probe);
	close(sv[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char token[48];
	size_t tlen;
	int family, mtu, driven;

	if (size < 2)
		return 0;
	family = data[0] & 1 ? AF_INET6 : AF_INET;
	driven = data[0] & 2;
	tlen = data[1] % 40;
	data += 2, size -= 2;
	if (tlen > size)
		tlen = size;
	memcpy(token, data, tlen);
	token[tlen] = '\0';
	data += tlen, size -= tlen;
	if (size < 2)
		return 0;
	mtu = 576 + (((data[0] << 8) | data[1]) % (9216 - 576 + 1));
	if (!driven) {
		/* the parser alone, over the whole rest */
		parse_checked((const char *)data + 2, size - 2, token);
		return 0;
	}
	drive(data + 2, size - 2, family, token, mtu);
	return 0;
}
