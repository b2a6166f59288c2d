/* SPDX-License-Identifier: MIT */
/*
 * predict_gloo.c - emulate Gloo's network interface selection (PyTorch's
 * ProcessGroupGloo) on one node of the model; predict.h has the rules and
 * their sources. Like predict.c, it walks the node's addresses in getifaddrs
 * order and never makes a system call.
 */
#include "predict.h"
#include "predict_internal.h"

#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

static const char gloo_loopback_warning[] =
    "Unable to resolve hostname to a (local) address. Using the loopback address as fallback. "
    "Manually set the network interface to bind to with GLOO_SOCKET_IFNAME.";

/* Gloo's lookupAddrForIface: the first IPv4 or IPv6 entry of exactly that
 * name, whatever its flags or scope. */
static const struct nm_addr *first_addr_of_iface(const struct nm_node *n, const char *ifname)
{
	for (size_t i = 0; i < n->naddrs; i++) {
		const struct nm_addr *a = &n->addrs[i];

		if ((a->family == AF_INET || a->family == AF_INET6) &&
		    strcmp(a->ifname, ifname) == 0)
			return a;
	}
	return NULL;
}

/* One device per item of GLOO_SOCKET_IFNAME, split on ',' as std::getline
 * does (an empty item between two commas stays, a trailing one does not).
 * The first item without an address fails the whole process group. */
static void predict_gloo_ifnames(const struct nm_node *n, const char *value,
                                 struct gloo_prediction *out)
{
	const char *p = value;

	predict_append_variable(out->rule, sizeof(out->rule), n, "GLOO_SOCKET_IFNAME", value);
	while (*p) {
		size_t len = strcspn(p, ",");
		char item[NM_NAME];
		const struct nm_addr *a = NULL;

		snprintf(item, sizeof(item), "%.*s", (int)len, p);
		if (len < sizeof(item))
			a = first_addr_of_iface(n, item);
		if (!a) {
			snprintf(out->error, sizeof(out->error), "Unable to find address for: %.*s",
			         (int)len, p);
			out->npicks = 0;
			return;
		}
		if (out->npicks < NCCL_FILTER_MAX_ITEMS)
			predict_pick_from_addr(&out->picks[out->npicks++], a);
		p += len;
		if (*p == ',')
			p++;
	}
}

static void pick_from_hostaddr(const struct nm_node *n, struct net_pick *p, int family,
                               const char *addr)
{
	const char *ifname = predict_iface_of_addr(n, addr);

	/* 127.0.1.1 is on no interface, yet lo answers for all of 127/8 */
	if (!ifname[0] && predict_text_is_loopback(family, addr))
		ifname = "lo";
	predict_copy_text(p->ifname, sizeof(p->ifname), ifname);
	predict_copy_text(p->addr, sizeof(p->addr), addr);
	p->family = family;
	p->scope_id = 0;
}

/* No GLOO_SOCKET_IFNAME: the hostname's first getaddrinfo answer that can
 * be bound (which a 127.0.1.1 line in /etc/hosts passes), else 127.0.0.1. */
static void predict_gloo_hostname(const struct nm_node *n, struct gloo_prediction *out)
{
	out->from_hostname = 1;
	for (size_t i = 0; i < n->nhostaddrs; i++) {
		const struct nm_hostaddr *h = &n->hostaddrs[i];

		if (!h->bindable)
			continue;
		pick_from_hostaddr(n, &out->picks[0], h->family, h->addr);
		out->npicks = 1;
		cd_appendf(out->rule, sizeof(out->rule),
		           "hostname %s: first bindable address (answer %zu of %zu)", n->hostname,
		           i + 1, n->nhostaddrs);
		return;
	}
	pick_from_hostaddr(n, &out->picks[0], AF_INET, "127.0.0.1");
	out->npicks = 1;
	out->loopback_fallback = 1;
	cd_appendf(out->rule, sizeof(out->rule), "hostname %s: %s; loopback fallback", n->hostname,
	           n->nhostaddrs ? "no bindable address" : "does not resolve");
	predict_copy_text(out->error, sizeof(out->error), gloo_loopback_warning);
}

void gloo_predict(const struct nm_node *n, const struct net_env *e, struct gloo_prediction *out)
{
	const char *ifname = e->gloo_socket_ifname;

	memset(out, 0, sizeof(*out));
	if (ifname && strlen(ifname) > 1) {
		predict_gloo_ifnames(n, ifname, out);
		return;
	}
	predict_gloo_hostname(n, out);
	if (ifname)
		cd_appendf(out->rule, sizeof(out->rule),
		           " (GLOO_SOCKET_IFNAME=\"%s\" ignored: %zu character%s)", ifname,
		           strlen(ifname), strlen(ifname) == 1 ? "" : "s");
}
