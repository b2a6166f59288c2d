/* SPDX-License-Identifier: MIT */
/*
 * diagnose_routes.c - the checks of each node's own routing (see
 * diagnose.h): a route that sends peer traffic out of another NIC than the
 * one holding the source address (a stale more specific route, or two
 * same-metric routes to one subnet in an order that prefers the other NIC),
 * and several NICs in one IPv4 subnet (ARP flux; strict rp_filter drops what
 * arrives on the "wrong" one). Each finding names the node whose own route
 * answers (`ip route get`, taken on that node by its agent) or interfaces
 * show it, never the peer it points at.
 */
#include "diagnose.h"
#include "diagnose_internal.h"

#include <arpa/inet.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* Evidence lines are bounded on purpose (see diagnose_setup.c). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

/* Whether addr lies on the network of a (its address and prefix). */
static int on_network_of(const struct nm_addr *a, const char *addr)
{
	struct nm_addr peer = *a;
	char mine[NM_ADDR + 8], theirs[NM_ADDR + 8];

	snprintf(peer.addr, sizeof(peer.addr), "%s", addr);
	diagnose_network_of(a, mine, sizeof(mine));
	diagnose_network_of(&peer, theirs, sizeof(theirs));
	return strcmp(mine, theirs) == 0;
}

/* Whether r leaves through another interface than the one holding its
 * source, toward a peer on that interface's own network: the kernel has a
 * connected route there, and another route (more specific, or first of two
 * alike) takes it away. A peer on another network (a second data NIC's
 * subnet) leaves through the NIC on that network, as it should. *owner is
 * the source's interface. */
static int route_astray(const struct nm_node *n, const struct nm_route *r, const char **owner)
{
	const struct nm_addr *src;

	if (r->error[0] || !r->dev[0] || !r->from[0] || strcmp(r->dev, "lo") == 0)
		return 0;
	src = diagnose_addr_find(n, r->from);
	if (owner)
		*owner = src ? src->ifname : NULL;
	return src && strcmp(src->ifname, r->dev) != 0 && on_network_of(src, r->to);
}

const struct nm_route *diagnose_route_astray(const struct netmodel *m, size_t from,
                                             const char *addr)
{
	const struct nm_node *n;

	if (from >= m->nnodes)
		return NULL;
	n = &m->nodes[from];
	for (size_t k = 0; n->probed && k < n->nroutes; k++) {
		if (strcmp(n->routes[k].to, addr) == 0 && route_astray(n, &n->routes[k], NULL))
			return &n->routes[k];
	}
	return NULL;
}

const struct nm_route *diagnose_route_astray_from(const struct netmodel *m, size_t i,
                                                  const char *addr)
{
	const struct nm_node *n;

	if (i >= m->nnodes)
		return NULL;
	n = &m->nodes[i];
	for (size_t k = 0; n->probed && k < n->nroutes; k++) {
		if (strcmp(n->routes[k].from, addr) == 0 && route_astray(n, &n->routes[k], NULL))
			return &n->routes[k];
	}
	return NULL;
}

/* Whether node i asked about (to, from) before route k: the route request
 * repeats a peer address both NCCL and Gloo would use. */
static int asked_before(const struct nm_node *n, size_t k)
{
	for (size_t q = 0; q < k; q++) {
		if (strcmp(n->routes[q].to, n->routes[k].to) == 0 &&
		    strcmp(n->routes[q].from, n->routes[k].from) == 0)
			return 1;
	}
	return 0;
}

/* "; node2 -> node3 port 41234: timeout (ETIMEDOUT)" for node i's failed
 * attempts toward addr; NULL when none failed. */
static char *own_failures(const struct netmodel *m, size_t i, const char *addr)
{
	char *s = NULL;

	for (size_t k = 0; k < m->nattempts; k++) {
		const struct nm_attempt *a = &m->attempts[k];

		if (a->from != i || strcmp(a->addr, addr) != 0 || strcmp(a->result, "ok") == 0 ||
		    strcmp(a->result, "not-tested") == 0)
			continue;
		cd_strcatf(&s, "; %s -> %s port %d: %s%s%s%s", m->nodes[i].host,
		           m->nodes[a->to].host, a->port, a->result, a->errno_name[0] ? " (" : "",
		           a->errno_name, a->errno_name[0] ? ")" : "");
	}
	return s;
}

/*
 * route-egress-mismatch: node i's own answer to `ip route get PEER from
 * ADDR` leaves through another NIC than ADDR's. Only node i is named: the
 * peer's routes are its own business, and a connect of node i that failed
 * on this route is node i's failure (an error then), not the peer's.
 */
void diagnose_check_route_egress(struct dstate *st)
{
	const struct netmodel *m = st->m;

	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_node *n = &m->nodes[i];

		for (size_t k = 0; n->probed && k < n->nroutes; k++) {
			const struct nm_route *r = &n->routes[k];
			const char *owner = NULL;
			char ev[768], *fails;

			if (!route_astray(n, r, &owner) || asked_before(n, k))
				continue;
			fails = own_failures(m, i, r->to);
			snprintf(
			    ev, sizeof(ev),
			    "%s: ip route get %s from %s -> dev %s%s%s, but %s belongs to %s%s",
			    n->host, r->to, r->from, r->dev, r->src[0] ? " src " : "", r->src,
			    r->from, owner, fails ? fails : "");
			diagnose_note(
			    st, "route-egress-mismatch", fails ? SEV_ERROR : SEV_WARNING, "", i,
			    "%N: traffic to peers would leave through another interface than the "
			    "one NCCL/Gloo chose (setting NCCL_SOCKET_IFNAME \"has no effect\"): a "
			    "more specific route through the other NIC, two NICs sharing a subnet, "
			    "or same-metric routes whose order prefers the other one",
			    "Remove the stale route, give each NIC its own subnet, adjust route "
			    "metrics, or add policy routing (ip rule from <address> table <n>).",
			    ev);
			free(fails);
		}
	}
}

/* IPv4 text and prefix -> network number; 0 on a bad address. */
static int ipv4_net(const char *addr, int prefix, uint32_t *net)
{
	struct in_addr a;
	uint32_t mask;

	if (prefix < 1 || prefix > 32 || inet_pton(AF_INET, addr, &a) != 1)
		return 0;
	mask = prefix == 32 ? UINT32_MAX : ~(UINT32_MAX >> prefix);
	*net = ntohl(a.s_addr) & mask;
	return 1;
}

/* Whether another, earlier interface of n already has an address in a's
 * subnet (so each pair is told once, from its second NIC). */
static const struct nm_addr *same_subnet_before(const struct nm_node *n, size_t k)
{
	const struct nm_addr *a = &n->addrs[k];
	uint32_t net, other;

	if (!ipv4_net(a->addr, a->prefix, &net))
		return NULL;
	for (size_t q = 0; q < k; q++) {
		const struct nm_addr *b = &n->addrs[q];

		if (b->family != AF_INET || nm_addr_is_loopback(b) ||
		    strcmp(b->ifname, a->ifname) == 0 || b->prefix != a->prefix ||
		    !ipv4_net(b->addr, b->prefix, &other) || other != net)
			continue;
		return b;
	}
	return NULL;
}

static int conf_of(const struct nm_iface *f, size_t off)
{
	return f ? *(const int *)(const void *)((const char *)f + off) : -1;
}

/* "eth0=1 eth1=1" for one IPv4 conf value; "?" when unknown. */
static void conf_pair(char *buf, size_t len, const struct nm_addr *a, const struct nm_iface *fa,
                      const struct nm_addr *b, const struct nm_iface *fb, size_t off)
{
	char va[8] = "?", vb[8] = "?";

	if (conf_of(fa, off) >= 0)
		snprintf(va, sizeof(va), "%d", conf_of(fa, off));
	if (conf_of(fb, off) >= 0)
		snprintf(vb, sizeof(vb), "%d", conf_of(fb, off));
	snprintf(buf, len, "%s=%s %s=%s", b->ifname, vb, a->ifname, va);
}

/* ", ip route get 10.0.0.12 -> dev eth1" for node n's first route answer
 * toward an address inside net/prefix, or "". */
static void subnet_egress(char *buf, size_t len, const struct nm_node *n, uint32_t net, int prefix)
{
	buf[0] = '\0';
	for (size_t k = 0; k < n->nroutes; k++) {
		const struct nm_route *r = &n->routes[k];
		uint32_t to;

		if (r->error[0] || !r->dev[0] || !ipv4_net(r->to, prefix, &to) || to != net)
			continue;
		snprintf(buf, len, "; ip route get %s%s%s -> dev %s", r->to,
		         r->from[0] ? " from " : "", r->from, r->dev);
		return;
	}
}

/*
 * multiple-nics-same-subnet: two NICs of one node hold addresses in one IPv4
 * subnet. The kernel answers ARP for either address on both (ARP flux:
 * arp_ignore 0, arp_announce 0), and sends everything to the subnet out of
 * whichever route comes first; with strict reverse-path filtering
 * (rp_filter 1) what arrives on the other NIC is dropped: an error then.
 */
void diagnose_check_nics_same_subnet(struct dstate *st)
{
	const struct netmodel *m = st->m;

	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_node *n = &m->nodes[i];

		for (size_t k = 0; n->probed && k < n->naddrs; k++) {
			const struct nm_addr *a = &n->addrs[k], *b;
			const struct nm_iface *fa, *fb;
			char rp[64], ai[64], aa[64], eg[160], ev[640];
			uint32_t net;
			int strict;

			if (a->family != AF_INET || nm_addr_is_loopback(a) ||
			    !(b = same_subnet_before(n, k)) || !ipv4_net(a->addr, a->prefix, &net))
				continue;
			fa = nm_iface_find(n, a->ifname);
			fb = nm_iface_find(n, b->ifname);
			strict = conf_of(fa, offsetof(struct nm_iface, rp_filter)) == 1 ||
			         conf_of(fb, offsetof(struct nm_iface, rp_filter)) == 1;
			conf_pair(rp, sizeof(rp), a, fa, b, fb,
			          offsetof(struct nm_iface, rp_filter));
			conf_pair(ai, sizeof(ai), a, fa, b, fb,
			          offsetof(struct nm_iface, arp_ignore));
			conf_pair(aa, sizeof(aa), a, fa, b, fb,
			          offsetof(struct nm_iface, arp_announce));
			subnet_egress(eg, sizeof(eg), n, net, a->prefix);
			snprintf(
			    ev, sizeof(ev),
			    "%s: %s %s/%d and %s %s/%d share a subnet; rp_filter %s; arp_ignore "
			    "%s; arp_announce %s%s",
			    n->host, b->ifname, b->addr, b->prefix, a->ifname, a->addr, a->prefix,
			    rp, ai, aa, eg);
			diagnose_note(st, "multiple-nics-same-subnet",
			              strict ? SEV_ERROR : SEV_WARNING, "", i,
			              "%N: two NICs hold addresses in one IPv4 subnet: the node "
			              "answers ARP for "
			              "both on both (ARP flux), sends to the subnet out of "
			              "whichever route comes "
			              "first, and with strict rp_filter drops replies that arrive "
			              "on the other "
			              "NIC",
			              "Give each NIC its own subnet, or keep both with policy "
			              "routing (ip rule "
			              "from <address> table <n>), arp_ignore=1, arp_announce=2 and "
			              "rp_filter=2 "
			              "(loose).",
			              ev);
		}
	}
}
