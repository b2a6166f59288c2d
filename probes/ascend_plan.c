/* SPDX-License-Identifier: MIT */
/* ascend_plan.c - the device IP plan rules (ascend_plan.h). */
#include "probes/ascend_plan.h"

#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>

struct ip4 {
	int ok;
	uint32_t addr, mask; /* host order */
};

static struct ip4 ip4_of(const struct ascend_dev_addr *d)
{
	struct ip4 r = {0};
	struct in_addr a, m;

	if (d && d->addr[0] && inet_pton(AF_INET, d->addr, &a) == 1 &&
	    inet_pton(AF_INET, d->mask, &m) == 1) {
		r.ok = 1;
		r.addr = ntohl(a.s_addr);
		r.mask = ntohl(m.s_addr);
	}
	return r;
}

static int same_segment(struct ip4 a, struct ip4 b)
{
	return a.mask == b.mask && (a.addr & a.mask) == (b.addr & b.mask);
}

static void segment_text(struct ip4 a, char *buf, size_t len)
{
	uint32_t net = a.addr & a.mask;
	int prefix = 0;

	for (uint32_t m = a.mask; m & 0x80000000u; m <<= 1)
		prefix++;
	snprintf(buf, len, "%u.%u.%u.%u/%d", net >> 24, (net >> 16) & 255, (net >> 8) & 255,
	         net & 255, prefix);
}

static const struct ascend_dev_addr *find_dev(const struct ascend_server_plan *s, int dev)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->dev[i].dev == dev)
			return &s->dev[i];
	return NULL;
}

struct ctx {
	ascend_plan_cb cb;
	void *arg;
	size_t count;
};

static void report(struct ctx *c, enum ascend_rule rule, size_t s1, size_t s2, const char *text)
{
	c->count++;
	if (c->cb)
		c->cb(c->arg, rule, s1, s2, text);
}

/* Rule 1 on one server. */
static void check_server(struct ctx *c, const struct ascend_server_plan *s, size_t si)
{
	size_t half = s->n / 2;
	char text[512], seg[32];

	if (s->n < 2 || s->n % 2)
		return;
	for (size_t i = 0; i < half; i++) {
		const struct ascend_dev_addr *a = find_dev(s, (int)i),
		                             *b = find_dev(s, (int)(i + half));
		struct ip4 x = ip4_of(a), y = ip4_of(b);

		if (x.ok && y.ok && !same_segment(x, y)) {
			snprintf(
			    text, sizeof(text),
			    "on %s, devices %zu (%s/%s) and %zu (%s/%s) are in different segments "
			    "(rule 1: devices i and i+%zu of a server share a segment)",
			    s->server, i, a->addr, a->mask, i + half, b->addr, b->mask, half);
			report(c, ASCEND_RULE_PAIR, si, si, text);
		}
	}
	for (size_t lo = 0; lo < s->n; lo += half)
		for (size_t i = lo; i < lo + half; i++)
			for (size_t j = i + 1; j < lo + half; j++) {
				const struct ascend_dev_addr *a = find_dev(s, (int)i),
				                             *b = find_dev(s, (int)j);
				struct ip4 x = ip4_of(a), y = ip4_of(b);

				if (!x.ok || !y.ok || !same_segment(x, y))
					continue;
				segment_text(x, seg, sizeof(seg));
				snprintf(
				    text, sizeof(text),
				    "on %s, devices %zu (%s) and %zu (%s) are both in %s (rule 1: "
				    "devices %zu-%zu of a server are in different segments)",
				    s->server, i, a->addr, j, b->addr, seg, lo, lo + half - 1);
				report(c, ASCEND_RULE_SPLIT, si, si, text);
			}
}

/* Rule 2: device d of server si against the first server that has it. */
static void check_cross(struct ctx *c, const struct ascend_server_plan *s, size_t ns)
{
	char text[512];

	for (size_t si = 1; si < ns; si++)
		for (size_t k = 0; k < s[si].n; k++) {
			const struct ascend_dev_addr *b = &s[si].dev[k], *a = NULL;
			struct ip4 y = ip4_of(b), x;
			size_t first;

			if (!y.ok)
				continue;
			for (first = 0; first < si; first++)
				if ((a = find_dev(&s[first], b->dev)) && ip4_of(a).ok)
					break;
			if (first == si)
				continue;
			x = ip4_of(a);
			if (same_segment(x, y))
				continue;
			snprintf(
			    text, sizeof(text),
			    "device %d of %s (%s/%s) and of %s (%s/%s) are in different segments "
			    "(rule 2: device i of every server is in the same segment)",
			    b->dev, s[first].server, a->addr, a->mask, s[si].server, b->addr,
			    b->mask);
			report(c, ASCEND_RULE_CROSS, first, si, text);
		}
}

/* Rule 3 over every pair of devices of the cluster. */
static void check_unique(struct ctx *c, const struct ascend_server_plan *s, size_t ns)
{
	char text[512];

	for (size_t si = 0; si < ns; si++)
		for (size_t i = 0; i < s[si].n; i++) {
			const struct ascend_dev_addr *a = &s[si].dev[i];
			struct ip4 x = ip4_of(a);

			if (!x.ok)
				continue;
			for (size_t sj = si; sj < ns; sj++)
				for (size_t j = sj == si ? i + 1 : 0; j < s[sj].n; j++) {
					const struct ascend_dev_addr *b = &s[sj].dev[j];
					struct ip4 y = ip4_of(b);

					if (!y.ok)
						continue;
					if (x.addr == y.addr) {
						snprintf(
						    text, sizeof(text),
						    "address %s is held by device %d of %s and "
						    "device %d of %s (rule 3: every address is "
						    "unique)",
						    a->addr, a->dev, s[si].server, b->dev,
						    s[sj].server);
						report(c, ASCEND_RULE_DUPLICATE, si, sj, text);
					} else if (same_segment(x, y) &&
					           (x.addr & 255) == (y.addr & 255)) {
						snprintf(
						    text, sizeof(text),
						    "device %d of %s (%s) and device %d of %s (%s) "
						    "share a segment and their last eight bits "
						    "(rule 3: addresses of one segment differ in "
						    "the last eight bits)",
						    a->dev, s[si].server, a->addr, b->dev,
						    s[sj].server, b->addr);
						report(c, ASCEND_RULE_LAST_OCTET, si, sj, text);
					}
				}
		}
}

size_t ascend_plan_check(const struct ascend_server_plan *s, size_t ns, ascend_plan_cb cb,
                         void *arg)
{
	struct ctx c = {.cb = cb, .arg = arg};

	for (size_t i = 0; i < ns; i++)
		check_server(&c, &s[i], i);
	check_cross(&c, s, ns);
	check_unique(&c, s, ns);
	return c.count;
}
