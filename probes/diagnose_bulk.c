/* SPDX-License-Identifier: MIT */
/*
 * diagnose_bulk.c - what the matrix's bulk proof (reach.h) says about each
 * network: a path that opens connections but does not carry a transfer
 * larger than its MTU is a path-MTU black hole (jumbo frames on the NICs,
 * a switch that passes fewer and sends no ICMP back). A stall on a path
 * whose path-MTU probe echoed full-size frames is no black hole: the path
 * was slow (loss, a peer too busy, hundreds of transfers into one node),
 * a warning that excludes no interface. Also the network an address
 * belongs to, so MTUs are compared like with like.
 */
#include "diagnose.h"
#include "diagnose_internal.h"

#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

/* "stalled": connected and answered, then the transfer did not complete
 * before the deadline. "broken" (the peer closed) is not a black hole. */
static int bulk_stalled(const struct nm_attempt *a)
{
	return strcmp(a->result, "ok") == 0 && strcmp(a->bulk, "stalled") == 0;
}

/* The network (diagnose_network_of) of the address an attempt went to;
 * "" when the target node does not list it. */
static void attempt_network(const struct netmodel *m, const struct nm_attempt *a, char *buf,
                            size_t len)
{
	const struct nm_addr *ta = diagnose_addr_find(&m->nodes[a->to], a->addr);

	buf[0] = '\0';
	if (ta)
		diagnose_network_of(ta, buf, len);
}

static int stall_is_blackhole(const struct netmodel *m, const struct nm_attempt *a);

/* One bulk proof covers both directions of a pair (netcheck_matrix.c sends
 * it from one side): node i's address failed when a transfer to it stalled
 * in a black hole, or one from node i to a peer on the same network. */
int diagnose_bulk_failed(const struct netmodel *m, size_t i, const char *addr)
{
	const struct nm_addr *own = diagnose_addr_find(&m->nodes[i], addr);
	char net[NM_ADDR + 8] = "", other[NM_ADDR + 8];

	if (own)
		diagnose_network_of(own, net, sizeof(net));
	for (size_t k = 0; k < m->nattempts; k++) {
		const struct nm_attempt *a = &m->attempts[k];

		if (!bulk_stalled(a))
			continue;
		/* the cheap tests first: stall_is_blackhole walks the attempts */
		if (a->to == i && strcmp(a->addr, addr) == 0) {
			if (stall_is_blackhole(m, a))
				return 1;
			continue;
		}
		if (a->from != i || !net[0])
			continue;
		attempt_network(m, a, other, sizeof(other));
		if (strcmp(other, net) == 0 && stall_is_blackhole(m, a))
			return 1;
	}
	return 0;
}

const struct nm_addr *diagnose_addr_find(const struct nm_node *n, const char *addr)
{
	for (size_t k = 0; k < n->naddrs; k++) {
		if (strcmp(n->addrs[k].addr, addr) == 0)
			return &n->addrs[k];
	}
	return NULL;
}

void diagnose_network_of(const struct nm_addr *a, char *buf, size_t len)
{
	unsigned char bytes[16];
	int nbytes = a->family == AF_INET ? 4 : 16, prefix = a->prefix;
	char text[INET6_ADDRSTRLEN];

	if (inet_pton(a->family, a->addr, bytes) != 1 || prefix < 0 || prefix > nbytes * 8) {
		snprintf(buf, len, "%s", a->addr);
		return;
	}
	for (int bit = prefix; bit < nbytes * 8; bit++)
		bytes[bit / 8] &= (unsigned char)~(0x80u >> (bit % 8));
	inet_ntop(a->family, bytes, text, sizeof(text));
	snprintf(buf, len, "%s/%d", text, prefix);
}

/* Node n's interface on the network `net` (diagnose_network_of), or NULL. */
static const struct nm_addr *addr_on_network(const struct nm_node *n, const char *net)
{
	char other[NM_ADDR + 8];

	for (size_t k = 0; k < n->naddrs; k++) {
		diagnose_network_of(&n->addrs[k], other, sizeof(other));
		if (strcmp(other, net) == 0)
			return &n->addrs[k];
	}
	return NULL;
}

static int iface_mtu(const struct nm_node *n, const char *ifname)
{
	const struct nm_iface *f = nm_iface_find(n, ifname);

	return f ? f->mtu : 0;
}

/* The frame size (the smaller MTU of its two ends) of a tested attempt on
 * the network `net`; 0 when an end is unknown. */
static int attempt_frame(const struct netmodel *m, const struct nm_attempt *a, const char *net)
{
	const struct nm_addr *ta = diagnose_addr_find(&m->nodes[a->to], a->addr), *fa;
	char other[NM_ADDR + 8];
	int f, t;

	if (!ta)
		return 0;
	diagnose_network_of(ta, other, sizeof(other));
	if (strcmp(other, net) != 0 || !(fa = addr_on_network(&m->nodes[a->from], net)))
		return 0;
	f = iface_mtu(&m->nodes[a->from], fa->ifname);
	t = iface_mtu(&m->nodes[a->to], ta->ifname);
	return f && t ? (f < t ? f : t) : 0;
}

/* The largest frame proven to pass to or from node x or y on `net`: a bulk
 * transfer that passed there at that size (the MTU its ends agreed on), so
 * the switch carries it. 0 when no such transfer passed; *via is its
 * attempt. */
static int largest_passed(const struct netmodel *m, const char *net, size_t x, size_t y,
                          const struct nm_attempt **via)
{
	int best = 0;

	*via = NULL;
	for (size_t k = 0; k < m->nattempts; k++) {
		const struct nm_attempt *b = &m->attempts[k];
		int frame;

		if (strcmp(b->bulk, "ok") != 0 ||
		    (b->to != x && b->to != y && b->from != x && b->from != y))
			continue;
		frame = attempt_frame(m, b, net);
		if (frame > best) {
			best = frame;
			*via = b;
		}
	}
	return best;
}

/* The path-MTU probe's answer for the pair of a stalled attempt: its own,
 * else one the other way between the same addresses' nodes on `net`. The
 * probe's attempt, or NULL when no probe there got an echo. */
static const struct nm_attempt *pair_pmtu(const struct netmodel *m, const struct nm_attempt *a,
                                          const char *net)
{
	if (a->pmtu > 0)
		return a;
	for (size_t k = 0; k < m->nattempts; k++) {
		const struct nm_attempt *b = &m->attempts[k];

		if (b->pmtu > 0 && b->from == a->to && b->to == a->from &&
		    attempt_frame(m, b, net) > 0)
			return b;
	}
	return NULL;
}

/* Whether a stalled attempt is a black hole: no path-MTU probe of its pair
 * echoed a frame as large as its ends' MTU (the probe did not run, UDP was
 * filtered, or it proved a smaller frame). */
static int stall_is_blackhole(const struct netmodel *m, const struct nm_attempt *a)
{
	const struct nm_addr *ta = diagnose_addr_find(&m->nodes[a->to], a->addr);
	const struct nm_attempt *probe;
	char net[NM_ADDR + 8];
	int frame;

	if (!ta)
		return 1;
	diagnose_network_of(ta, net, sizeof(net));
	frame = attempt_frame(m, a, net);
	probe = pair_pmtu(m, a, net);
	return !(probe && frame > 0 && probe->pmtu >= frame);
}

/* The evidence line of a stalled attempt: both ends, the bytes and the
 * time, and the path-MTU probe's sizes when it ran. */
static void stall_evidence(const struct netmodel *m, const struct nm_attempt *a,
                           const struct nm_addr *fa, const struct nm_addr *ta, char *ev, size_t len)
{
	const struct nm_node *from = &m->nodes[a->from], *to = &m->nodes[a->to];
	size_t used;

	snprintf(ev, len,
	         "%s (%s mtu %d) -> %s %s (%s mtu %d): connected and answered, then %lld of "
	         "%lld bytes sent and %lld received within %lld ms",
	         from->host, fa ? fa->ifname : "?", fa ? iface_mtu(from, fa->ifname) : 0, to->host,
	         a->addr, ta->ifname, iface_mtu(to, ta->ifname), (long long)a->bulk_sent,
	         (long long)a->bulk_bytes, (long long)a->bulk_received, (long long)a->bulk_ms);
	if (a->pmtu < 0)
		return;
	used = strlen(ev);
	if (a->pmtu)
		snprintf(ev + used, len - used, "; path-MTU probe: %d bytes echoed, up to %d tried",
		         a->pmtu, a->pmtu_max);
	else
		snprintf(ev + used, len - used,
		         "; path-MTU probe: no UDP echo at any size up to %d", a->pmtu_max);
}

static const char slow_fix[] =
    "Run the check again; if the same pairs stall, look for packet loss on the path (`ip -s "
    "link` on both nodes, the switch's error counters) and for a node whose CPU is "
    "saturated. On a very large or loaded cluster a longer --probe-timeout gives each "
    "transfer more time.";

/* A stall on a path that carries full-size frames: a warning that names
 * the pair and excludes no interface. */
static void note_slow(struct dstate *st, const struct nm_attempt *a, const struct nm_addr *fa,
                      const struct nm_addr *ta, const char *net)
{
	char ev[640], msg[480];
	int frame = attempt_frame(st->m, a, net);

	stall_evidence(st->m, a, fa, ta, ev, sizeof(ev));
	snprintf(msg, sizeof(msg),
	         "%%N: %s (network %s, MTU %d): a transfer connected but did not finish within "
	         "its deadline, although the path carries full %d-byte frames (the path-MTU "
	         "probe echoed them): not an MTU problem; the path was slow or lost packets, or "
	         "a node was too busy to keep up",
	         ta->ifname, net, iface_mtu(&st->m->nodes[a->to], ta->ifname), frame);
	diagnose_note(st, "bulk-transfer-slow", SEV_WARNING, net, a->from, msg, slow_fix, ev);
	diagnose_note(st, "bulk-transfer-slow", SEV_WARNING, net, a->to, msg, slow_fix, NULL);
}

/* One stalled attempt: its nodes and evidence into the network's finding. */
static void note_stall(struct dstate *st, const struct nm_attempt *a)
{
	const struct netmodel *m = st->m;
	const struct nm_node *from = &m->nodes[a->from], *to = &m->nodes[a->to];
	const struct nm_addr *ta = diagnose_addr_find(to, a->addr), *fa;
	const struct nm_attempt *via, *probe;
	char net[NM_ADDR + 8], ev[640], msg[480], fix[400], passes[200];
	int to_mtu, passed;

	/* fe80:: rides on the same NIC as its routable address, which names
	 * the network; a job never uses it */
	if (!ta || diagnose_is_link_local_text(a->addr))
		return;
	diagnose_network_of(ta, net, sizeof(net));
	fa = addr_on_network(from, net);
	if (!stall_is_blackhole(m, a)) {
		note_slow(st, a, fa, ta, net);
		return;
	}
	to_mtu = iface_mtu(to, ta->ifname);
	stall_evidence(m, a, fa, ta, ev, sizeof(ev));
	passed = largest_passed(m, net, a->from, a->to, &via);
	probe = pair_pmtu(m, a, net);
	if (probe) {
		/* the probe measured this very path; the bulk proof only says
		 * what another pair's MTU let through */
		passed = probe->pmtu;
		snprintf(passes, sizeof(passes),
		         "the largest frame proven to pass is %d bytes (%s -> %s carried UDP "
		         "datagrams of that size with Don't Fragment; %d did not pass)",
		         passed, m->nodes[probe->from].host, m->nodes[probe->to].host,
		         probe->pmtu_max);
	} else if (via)
		snprintf(passes, sizeof(passes),
		         "the largest frame proven to pass is %d bytes (%s -> %s carried its bulk "
		         "transfer at that MTU)",
		         passed, m->nodes[via->from].host, m->nodes[via->to].host);
	else
		snprintf(passes, sizeof(passes),
		         "no bulk transfer passed on this network, so no frame size is proven "
		         "(1500 passes any Ethernet switch)");
	snprintf(msg, sizeof(msg),
	         "%%N: %s (network %s, MTU %d) opens connections but large transfers stall: "
	         "a path-MTU black hole (frames above what the switch passes are dropped and "
	         "nothing tells the sender); %s",
	         ta->ifname, net, to_mtu, passes);
	snprintf(fix, sizeof(fix),
	         "Set the MTU of %s to what the path passes on every node (`ip link set dev %s "
	         "mtu %d`), or enable jumbo frames (MTU %d) on the switch ports. Until then "
	         "no interface whose bulk transfer stalled is suggested.",
	         ta->ifname, ta->ifname, passed && passed < to_mtu ? passed : 1500,
	         to_mtu > 1500 ? to_mtu : 9000);
	diagnose_note(st, "path-mtu-blackhole", SEV_ERROR, net, a->from, msg, fix, ev);
	diagnose_note(st, "path-mtu-blackhole", SEV_ERROR, net, a->to, msg, fix, NULL);
}

void diagnose_check_bulk(struct dstate *st)
{
	for (size_t k = 0; k < st->m->nattempts; k++) {
		if (bulk_stalled(&st->m->attempts[k]))
			note_stall(st, &st->m->attempts[k]);
	}
}
