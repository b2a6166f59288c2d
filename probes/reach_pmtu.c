/* SPDX-License-Identifier: MIT */
/*
 * reach_pmtu.c - the matrix's path-MTU probe (reach.h), both halves: the
 * listener's UDP echo (one UDP socket per address listener, on the TCP
 * listener's port) and the connector's search for the largest datagram
 * that passes with Don't Fragment.
 *
 * Why UDP and not the TCP connection: TCP adapts its segments to the path
 * (and a black hole only shows as a stall), so it cannot say which size
 * passes. A datagram sent with IP_PMTUDISC_PROBE / IPV6_PMTUDISC_PROBE and
 * IPV6_DONTFRAG leaves at exactly its size or not at all, whatever the
 * kernel learned of the path, and the echo comes back the same way.
 *
 * The search, in rounds under the attempt's deadline: the first round sends
 * the route's MTU, 1500 and REACH_PMTU_FLOOR at once (resent up to
 * REACH_PMTU_FIRST_TRIES times while nothing answers: a node that drops all
 * UDP gives 0, not a black hole); each later round sends up to
 * REACH_PMTU_PER_ROUND sizes spread between the largest size answered and
 * the smallest size not answered above it (a binary search that splits the
 * interval in more than two per round trip), until they are adjacent. A
 * clean path answers the first round, so it costs one round trip.
 */
#include "probes/reach.h"
#include "probes/reach_internal.h"
#include "cd.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define REACH_PMTU_FLOOR       1280 /* IPv6's minimum MTU: the smallest size tried */
#define REACH_PMTU_FIRST_TRIES 3
#define REACH_PMTU_COPIES \
	2 /* each size is sent twice per round: one lost datagram is not a verdict */

/* IP + UDP header bytes: a "size" is the whole IP packet, as an MTU counts. */
static int header_bytes(int family)
{
	return family == AF_INET6 ? 40 + 8 : 20 + 8;
}

/* Don't Fragment, and ignore what the kernel learned of the path: a probe
 * leaves at its size or fails with EMSGSIZE. */
static int set_probe_mode(int fd, int family)
{
	int probe4 = IP_PMTUDISC_PROBE, probe6 = IPV6_PMTUDISC_PROBE, one = 1;

	if (family == AF_INET)
		return setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &probe4, sizeof(probe4));
	if (setsockopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &probe6, sizeof(probe6)) < 0)
		return -1;
	return setsockopt(fd, IPPROTO_IPV6, IPV6_DONTFRAG, &one, sizeof(one));
}

/* --- the listener's echo ------------------------------------------------------ */

int reach_pmtu_open_echo(const struct sockaddr *addr, socklen_t len)
{
	int fd = socket(addr->sa_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), err;

	if (fd < 0)
		return -errno;
	if (set_probe_mode(fd, addr->sa_family) < 0 || bind(fd, addr, len) < 0) {
		err = errno;
		close(fd);
		return -err;
	}
	return fd;
}

long reach_pmtu_probe_size(const char *buf, size_t n, const char *token)
{
	size_t prefix = strlen(REACH_PMTU_PREFIX), tlen = strlen(token);
	char num[8];
	char *end;
	long size;
	size_t k;

	if (n < prefix + tlen + 3 || memcmp(buf, REACH_PMTU_PREFIX, prefix) != 0 ||
	    memcmp(buf + prefix, token, tlen) != 0 || buf[prefix + tlen] != ' ')
		return 0;
	for (k = 0; k < sizeof(num) - 1 && prefix + tlen + 1 + k < n; k++) {
		num[k] = buf[prefix + tlen + 1 + k];
		if (num[k] == '\n')
			break;
	}
	if (k == sizeof(num) - 1 || prefix + tlen + 1 + k == n)
		return 0;
	num[k] = '\0';
	size = strtol(num, &end, 10);
	return *end == '\0' && size > 0 && size <= 65535 ? size : 0;
}

void reach_pmtu_echo(int fd, const char *token, char *buf, size_t cap)
{
	/* a few per turn: the socket stays readable if more wait */
	for (int i = 0; i < 64; i++) {
		struct sockaddr_storage from;
		socklen_t fromlen = sizeof(from);
		ssize_t n = recvfrom(fd, buf, cap, MSG_TRUNC, (struct sockaddr *)&from, &fromlen);

		if (n < 0)
			return;
		/* Only our own probes, and whole: a stray datagram is not reflected. */
		if ((size_t)n > cap || !reach_pmtu_probe_size(buf, (size_t)n, token))
			continue;
		/* Failing (EMSGSIZE when our way back is narrower) means no echo:
		 * the prober counts that size as not passing, which is the truth. */
		sendto(fd, buf, (size_t)n, MSG_DONTWAIT, (struct sockaddr *)&from, fromlen);
	}
}

/* --- the connector's search --------------------------------------------------- */

int reach_pmtu_start(struct reach_pmtu *p, const struct sockaddr *addr, socklen_t len,
                     int64_t wait_us, int64_t deadline)
{
	int mtu = 0;
	socklen_t mlen = sizeof(mtu);

	memset(p, 0, sizeof(*p));
	p->family = addr->sa_family;
	p->wait_us = wait_us;
	p->deadline = deadline;
	p->fd = socket(addr->sa_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (p->fd < 0)
		return -errno;
	if (set_probe_mode(p->fd, p->family) < 0 || connect(p->fd, addr, len) < 0) {
		int err = errno;

		close(p->fd);
		p->fd = -1;
		return -err;
	}
	/* The route's MTU (the interface's, unless a route sets less): the
	 * largest size worth trying. */
	if (getsockopt(p->fd, p->family == AF_INET6 ? IPPROTO_IPV6 : IPPROTO_IP,
	               p->family == AF_INET6 ? IPV6_MTU : IP_MTU, &mtu, &mlen) < 0 ||
	    mtu < 576)
		mtu = 1500;
	if (mtu > 65535) /* loopback's 65536: an IP packet holds 65535 */
		mtu = 65535;
	p->max = mtu;
	p->hi = mtu + 1;
	return 0;
}

/* Sends one datagram of `size` bytes (IP packet). 0, or -1 when the kernel
 * refused it (EMSGSIZE: over the interface's MTU, which may have just
 * changed; the size counts as not passing). */
static int send_probe(struct reach_pmtu *p, const char *token, int size, char *buf, size_t cap)
{
	size_t payload = (size_t)(size - header_bytes(p->family));
	int n;

	if (size <= header_bytes(p->family) || payload > cap)
		return -1;
	memset(buf, '.', payload);
	n = snprintf(buf, payload, REACH_PMTU_PREFIX "%s %d\n", token, size);
	if (n < 0 || (size_t)n >= payload)
		return -1;
	return send(p->fd, buf, payload, MSG_DONTWAIT) == (ssize_t)payload ? 0 : -1;
}

static void add_size(struct reach_pmtu *p, int size)
{
	for (int i = 0; i < p->nsizes; i++) {
		if (p->sizes[i] == size)
			return;
	}
	if (size > p->lo && size < p->hi && p->nsizes < REACH_PMTU_PER_ROUND + 1)
		p->sizes[p->nsizes++] = size;
}

/* Picks the next round's sizes: the first round's three, or points spread
 * between lo and hi. 0 when there is nothing left to try. */
static int plan_round(struct reach_pmtu *p)
{
	p->nsizes = 0;
	if (p->rounds == 0) {
		add_size(p, p->max);
		add_size(p, p->max > 1500 ? 1500 : p->max);
		add_size(p, p->max > REACH_PMTU_FLOOR ? REACH_PMTU_FLOOR : p->max);
		return p->nsizes;
	}
	for (int j = 1; j <= REACH_PMTU_PER_ROUND; j++)
		add_size(p, p->lo + (int)((long)(p->hi - p->lo) * j / (REACH_PMTU_PER_ROUND + 1)));
	return p->nsizes;
}

static void send_round(struct reach_pmtu *p, const char *token, char *buf, size_t cap, int64_t now)
{
	p->rounds++;
	memset(p->answered, 0, sizeof(p->answered));
	/* a refused send (EMSGSIZE) is a size that does not pass: it stays
	 * unanswered */
	for (int c = 0; c < REACH_PMTU_COPIES; c++) {
		for (int i = 0; i < p->nsizes; i++)
			send_probe(p, token, p->sizes[i], buf, cap);
	}
	p->round_end = now + p->wait_us;
}

static void finish(struct reach_pmtu *p)
{
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
	p->done = 1;
}

/* The round is over: what did not answer bounds the search from above. */
static void close_round(struct reach_pmtu *p)
{
	for (int i = 0; i < p->nsizes; i++) {
		if (!p->answered[i] && p->sizes[i] > p->lo && p->sizes[i] < p->hi)
			p->hi = p->sizes[i];
	}
}

int reach_pmtu_step(struct reach_pmtu *p, const char *token, char *buf, size_t cap, int64_t now)
{
	if (p->done)
		return 1;
	if (now >= p->deadline) {
		finish(p);
		return 1;
	}
	if (p->rounds && now < p->round_end)
		return 0;
	if (p->rounds) {
		if (p->lo == 0 && p->rounds < REACH_PMTU_FIRST_TRIES) {
			/* nothing answered yet: the same sizes again */
			send_round(p, token, buf, cap, now);
			return 0;
		}
		close_round(p);
		if (p->lo == 0 || p->hi - p->lo <= 1) {
			finish(p);
			return 1;
		}
	}
	if (!plan_round(p)) {
		finish(p);
		return 1;
	}
	send_round(p, token, buf, cap, now);
	return 0;
}

int reach_pmtu_read(struct reach_pmtu *p, const char *token, char *buf, size_t cap, int64_t now)
{
	for (;;) {
		ssize_t n = recv(p->fd, buf, cap, MSG_TRUNC);
		long size;

		if (n < 0)
			break; /* EAGAIN, or an ICMP error (refused): no echo */
		size = (size_t)n <= cap ? reach_pmtu_probe_size(buf, (size_t)n, token) : 0;
		/* the echo must be whole: its length says the size came back */
		if (!size || n != size - header_bytes(p->family))
			continue;
		if (size > p->lo)
			p->lo = (int)size;
		for (int i = 0; i < p->nsizes; i++) {
			if (p->sizes[i] == size)
				p->answered[i] = 1;
		}
	}
	if (p->lo >= p->max) {
		finish(p);
		return 1;
	}
	/* every size of this round answered: no need to wait out the round */
	for (int i = 0; i < p->nsizes; i++) {
		if (!p->answered[i] && p->sizes[i] > p->lo)
			return reach_pmtu_step(p, token, buf, cap, now);
	}
	if (p->hi - p->lo <= 1) {
		finish(p);
		return 1;
	}
	p->round_end = now;
	return reach_pmtu_step(p, token, buf, cap, now);
}

int64_t reach_pmtu_wake(const struct reach_pmtu *p)
{
	return p->round_end < p->deadline ? p->round_end : p->deadline;
}

void reach_pmtu_abort(struct reach_pmtu *p)
{
	if (!p->done)
		finish(p);
}
