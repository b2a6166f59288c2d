/* SPDX-License-Identifier: MIT */
/*
 * diagnose_suggest.c - the data interface chosen for each node, and the
 * suggested environment, re-verified with the predictors against the matrix
 * (see diagnose.h).
 */
#include "diagnose.h"
#include "diagnose_internal.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* Evidence lines are bounded on purpose: a line cut at its buffer's end
 * still says what was seen, and no agent can make one grow without end. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

/* The nodes whose results are whole: only they are suggested for. */
static int count_complete(const struct netmodel *m)
{
	int n = 0;

	for (size_t i = 0; i < m->nnodes; i++)
		n += nm_node_complete(&m->nodes[i]);
	return n;
}

static int same_subnet(const char *a, const char *b, int family, int prefix)
{
	unsigned char x[16], y[16];
	int bytes = family == AF_INET ? 4 : 16;

	if (inet_pton(family, a, x) != 1 || inet_pton(family, b, y) != 1)
		return 0;
	for (int bit = 0; bit < prefix && bit < bytes * 8; bit++) {
		int mask = 0x80 >> (bit % 8);

		if ((x[bit / 8] & mask) != (y[bit / 8] & mask))
			return 0;
	}
	return 1;
}

/* Is this address of node i safe to use: every peer reached it, it is not
 * loopback or link-local, and no other node has it. */
static int addr_proved(const struct netmodel *m, size_t i, const char *addr)
{
	char worst[24];

	if (diagnose_is_loopback_text(addr) || diagnose_is_link_local_text(addr))
		return 0;
	for (size_t j = 0; j < m->nnodes; j++) {
		for (size_t k = 0; j != i && k < m->nodes[j].naddrs; k++) {
			if (strcmp(m->nodes[j].addrs[k].addr, addr) == 0)
				return 0;
		}
	}
	return diagnose_addr_reach(m, i, addr, 0, 0, worst, sizeof(worst)) == REACH_ALL_OK;
}

/* The first IPv4 address (else IPv6) of an interface, in getifaddrs order. */
static const struct nm_addr *first_addr(const struct nm_node *n, const char *ifname, int family)
{
	for (size_t k = 0; k < n->naddrs; k++) {
		if (strcmp(n->addrs[k].ifname, ifname) == 0 &&
		    (!family || n->addrs[k].family == family))
			return &n->addrs[k];
	}
	return NULL;
}

/* The address of interface f that node i would be suggested with in this
 * family, or NULL: for IPv4 its first IPv4 address; for IPv6 its first
 * IPv6 address that is neither link-local nor loopback (an interface also
 * has a link-local one, which NCCL and Gloo must not be steered to). Either
 * must be proved. */
static const struct nm_addr *iface_candidate(const struct netmodel *m, size_t i,
                                             const struct nm_iface *f, int family)
{
	const struct nm_node *n = &m->nodes[i];

	if (family == AF_INET) {
		const struct nm_addr *a = first_addr(n, f->name, AF_INET);

		return a && addr_proved(m, i, a->addr) ? a : NULL;
	}
	for (size_t k = 0; k < n->naddrs; k++) {
		const struct nm_addr *a = &n->addrs[k];

		if (a->family != AF_INET6 || strcmp(a->ifname, f->name) != 0 ||
		    diagnose_is_link_local_text(a->addr) || diagnose_is_loopback_text(a->addr))
			continue;
		return addr_proved(m, i, a->addr) ? a : NULL;
	}
	return NULL;
}

/* The name of the node that holds addr, or "?". */
static const char *host_of_addr(const struct netmodel *m, const char *addr)
{
	for (size_t j = 0; j < m->nnodes; j++) {
		if (diagnose_addr_find(&m->nodes[j], addr))
			return m->nodes[j].host;
	}
	return "?";
}

int diagnose_addr_refused(const struct netmodel *m, size_t i, const struct nm_addr *a, char *why,
                          size_t len)
{
	const struct nm_route *r;

	if (diagnose_bulk_failed(m, i, a->addr)) {
		if (why)
			snprintf(why, len,
			         "its bulk transfer stalled (path-mtu-blackhole): connections "
			         "open, a job's large messages do not pass");
		return 1;
	}
	r = diagnose_route_astray_from(m, i, a->addr);
	if (r) {
		if (why)
			snprintf(why, len,
			         "its own route sends traffic from %s to %s (%s) out of %s "
			         "(route-egress-mismatch)",
			         a->addr, r->to, host_of_addr(m, r->to), r->dev);
		return 1;
	}
	return 0;
}

/* For the report: every proved interface of node i in family that was
 * passed over, and why, with what was suggested instead. With IPv6 data,
 * an interface whose proved IPv4 address was refused is said too (IPv4 is
 * what would have been suggested first); each interface once. */
static void note_refused(const struct netmodel *m, const struct diagnosis *d, size_t i, int family,
                         char **notes)
{
	const struct nm_node *n = &m->nodes[i];
	const char *chosen = d->pred[i].data_iface;
	char why[240];

	for (size_t f = 0; f < n->nifaces; f++) {
		const struct nm_iface *fi = &n->ifaces[f];
		const struct nm_addr *a;

		if (fi->loopback || diagnose_virtual_name(fi->name))
			continue;
		a = iface_candidate(m, i, fi, family);
		if ((!a || !diagnose_addr_refused(m, i, a, why, sizeof(why))) && family == AF_INET6)
			a = iface_candidate(m, i, fi, AF_INET);
		if (!a || !diagnose_addr_refused(m, i, a, why, sizeof(why)))
			continue;
		if (chosen[0])
			cd_strcatf(notes,
			           "%s: %s is not suggested: %s; %s is suggested instead "
			           "(every peer reached it, nothing refutes it)\n",
			           n->host, fi->name, why, chosen);
		else
			cd_strcatf(notes, "%s: %s is not suggested: %s\n", n->host, fi->name, why);
	}
}

/*
 * The data address of each complete node in one family (pick[i], NULL =
 * none): an interface whose candidate address every peer reached, not
 * virtual by name. Prefer the one on the master's data subnet, then a
 * physical one, then getifaddrs order. Returns how many nodes got one.
 */
static size_t choose_in_family(const struct netmodel *m, int family, const struct nm_addr **pick)
{
	const struct nm_addr *master_addr = NULL;
	size_t chosen = 0;

	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < m->nnodes; i++) {
			const struct nm_node *n = &m->nodes[i];
			const struct nm_addr *best = NULL;
			int best_score = -1;

			if (!nm_node_complete(n) || (pass == 0) != (i == m->master))
				continue;
			for (size_t f = 0; f < n->nifaces; f++) {
				const struct nm_iface *fi = &n->ifaces[f];
				const struct nm_addr *a;
				int score = 0;

				if (fi->loopback || diagnose_virtual_name(fi->name))
					continue;
				a = iface_candidate(m, i, fi, family);
				if (!a || diagnose_addr_refused(m, i, a, NULL, 0))
					continue;
				if (master_addr && same_subnet(a->addr, master_addr->addr, family,
				                               master_addr->prefix))
					score += 4;
				if (strcmp(fi->kind, "physical") == 0 ||
				    strcmp(fi->kind, "ipoib") == 0)
					score += 2;
				if (fi->running)
					score += 1;
				if (score > best_score) {
					best = a;
					best_score = score;
				}
			}
			pick[i] = best;
			chosen += best != NULL;
			if (i == m->master)
				master_addr = best;
		}
	}
	return chosen;
}

/*
 * The data interface of each node. IPv4 first, as NCCL and most clusters
 * are set up; only where IPv4 leaves a node without a proved address and
 * IPv6 gives every node one (an IPv6-only data network, or an IPv6-only
 * cluster) is the cluster suggested IPv6, then on every node: one family
 * for all, so that no node's sockets wait for a peer in the other family.
 */
void diagnose_choose_data_ifaces(const struct netmodel *m, struct diagnosis *d)
{
	size_t nn = m->nnodes, complete = (size_t)count_complete(m);
	const struct nm_addr **v4 = cd_calloc(nn ? nn : 1, sizeof(*v4));
	const struct nm_addr **v6 = cd_calloc(nn ? nn : 1, sizeof(*v6));
	const struct nm_addr **pick = v4;

	if (choose_in_family(m, AF_INET, v4) < complete &&
	    choose_in_family(m, AF_INET6, v6) == complete && complete > 0)
		pick = v6;
	for (size_t i = 0; i < nn; i++) {
		if (!pick[i])
			continue;
		snprintf(d->pred[i].data_iface, sizeof(d->pred[i].data_iface), "%s",
		         pick[i]->ifname);
		snprintf(d->pred[i].data_addr, sizeof(d->pred[i].data_addr), "%s", pick[i]->addr);
	}
	free(v4);
	free(v6);
}

/* ---------------------------------------------------------------- suggestions */

/* Proved, and not refuted by its bulk proof or its node's routes. */
static int addr_usable(const struct netmodel *m, size_t i, const char *addr)
{
	const struct nm_addr *a = diagnose_addr_find(&m->nodes[i], addr);

	return addr_proved(m, i, addr) && !(a && diagnose_addr_refused(m, i, a, NULL, 0));
}

/* Every address NCCL would pick on node i under env e is usable. */
static int nccl_env_proved(const struct netmodel *m, size_t i, const struct node_prediction *p,
                           const struct net_env *e)
{
	struct nccl_prediction sock, boot;

	nccl_predict(&m->nodes[i], e, &p->version, NCCL_PREDICT_MAX_IFS, &sock);
	nccl_predict(&m->nodes[i], e, &p->version, 1, &boot);
	if (sock.npicks == 0 || boot.npicks == 0)
		return 0;
	for (int k = 0; k < sock.npicks; k++) {
		if (!addr_usable(m, i, sock.picks[k].addr))
			return 0;
	}
	return addr_usable(m, i, boot.picks[0].addr);
}

static void env_with(const struct nm_node *n, struct net_env *e, const char *nccl_ifname,
                     const char *family, const char *gloo_ifname)
{
	net_env_of(n, e);
	if (nccl_ifname)
		e->nccl_socket_ifname = nccl_ifname;
	if (family)
		e->nccl_socket_family = family;
	if (gloo_ifname)
		e->gloo_socket_ifname = gloo_ifname;
	e->nccl_comm_id = NULL; /* torchrun passes the id through the store */
}

static int ipv6_trap_exists(const struct netmodel *m, const struct diagnosis *d)
{
	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_node *n = &m->nodes[i];

		for (size_t k = 0; nm_node_complete(n) && k < n->naddrs; k++) {
			const struct nm_addr *a = &n->addrs[k];
			const struct nm_iface *f = nm_iface_find(n, a->ifname);

			if (a->family != AF_INET6 || nm_addr_is_loopback(a) || (f && f->loopback))
				continue;
			/* An interface with IPv6 only is what NCCL keeps with its IPv6. */
			if (!first_addr(n, a->ifname, AF_INET) && !diagnose_virtual_name(a->ifname))
				return 1;
		}
	}
	(void)d;
	return 0;
}

/* Is name one of the comma-separated items of list? */
static int list_has(const char *list, const char *name)
{
	size_t len = strlen(name);

	for (const char *p = list; p && *p;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (n == len && strncmp(p, name, len) == 0)
			return 1;
		p = end ? end + 1 : NULL;
	}
	return 0;
}

/* Try one cluster-wide NCCL_SOCKET_IFNAME value on every node. */
static int nccl_value_works(const struct netmodel *m, const struct diagnosis *d, const char *value,
                            const char *family)
{
	for (size_t i = 0; i < m->nnodes; i++) {
		struct net_env e;

		if (!nm_node_complete(&m->nodes[i]))
			continue;
		env_with(&m->nodes[i], &e, value, family, NULL);
		if (!nccl_env_proved(m, i, &d->pred[i], &e))
			return 0;
	}
	return 1;
}

/* Is the data address chosen for any node an IPv6 one (then it is for
 * every node: see diagnose_choose_data_ifaces)? */
static int data_is_ipv6(const struct netmodel *m, const struct diagnosis *d)
{
	for (size_t i = 0; i < m->nnodes; i++) {
		if (strchr(d->pred[i].data_addr, ':'))
			return 1;
	}
	return 0;
}

/* The nodes' NCCL_SOCKET_IFNAME (one cluster value when one verifies on
 * every node, else one per node) and GLOO_SOCKET_IFNAME under this
 * NCCL_SOCKET_FAMILY (NULL = unset). names/exact: the data interfaces as a
 * prefix list and as an exact list, NULL when a node has none. Notes go to
 * *notes when it is not NULL. Returns how many nodes got no verified
 * NCCL_SOCKET_IFNAME. */
static int suggest_ifnames(const struct netmodel *m, struct diagnosis *d, const char *names,
                           const char *exact, const char *family, char **notes)
{
	struct suggestions *s = &d->sugg;
	int failed = 0, ipv6 = data_is_ipv6(m, d);

	if (names) {
		if (nccl_value_works(m, d, names, family))
			s->nccl_ifname = cd_strdup(names);
		else if (nccl_value_works(m, d, exact, family))
			s->nccl_ifname = cd_strdup(exact);
	}
	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_node *n = &m->nodes[i];
		const char *name = d->pred[i].data_iface;
		struct gloo_prediction g;
		struct net_env e;
		char value[NM_NAME + 2];

		if (!nm_node_complete(n) || !name[0])
			continue;
		snprintf(value, sizeof(value), "=%s", name);
		env_with(n, &e, s->nccl_ifname ? s->nccl_ifname : value, family, name);
		if (nccl_env_proved(m, i, &d->pred[i], &e)) {
			s->nccl_ifname_per_node[i] = cd_strdup(e.nccl_socket_ifname);
		} else {
			failed++;
			if (notes)
				cd_strcatf(notes, "%s: NCCL_SOCKET_IFNAME=%s%s did not verify\n",
				           n->host, e.nccl_socket_ifname,
				           ipv6 ? " (with or without NCCL_SOCKET_FAMILY=AF_INET6)"
				                : "");
		}
		gloo_predict(n, &e, &g);
		if (g.npicks == 1 && addr_proved(m, i, g.picks[0].addr))
			s->gloo_ifname_per_node[i] = cd_strdup(name);
		else if (notes)
			cd_strcatf(notes, "%s: GLOO_SOCKET_IFNAME=%s did not verify\n", n->host,
			           name);
	}
	if (s->nccl_ifname) {
		for (size_t i = 0; i < m->nnodes; i++) {
			if (nm_node_complete(&m->nodes[i]) && !s->nccl_ifname_per_node[i]) {
				free(s->nccl_ifname);
				s->nccl_ifname = NULL;
				break;
			}
		}
	}
	return failed;
}

static void clear_ifnames(const struct netmodel *m, struct suggestions *s)
{
	free(s->nccl_ifname);
	s->nccl_ifname = NULL;
	for (size_t i = 0; i < m->nnodes; i++) {
		free(s->nccl_ifname_per_node[i]);
		free(s->gloo_ifname_per_node[i]);
		s->nccl_ifname_per_node[i] = NULL;
		s->gloo_ifname_per_node[i] = NULL;
	}
}

static const char *var_of(const char *name, const char **source, const void *ctx)
{
	const struct nm_var *v = nm_var_get(ctx, name);

	*source = v ? v->source : NULL;
	return v ? v->value : NULL;
}

void diagnose_suggest_ib(const struct netmodel *m, struct ib_suggestion *out)
{
	struct ib_suggest_node *in = cd_calloc(m->nnodes ? m->nnodes : 1, sizeof(*in));

	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_node *n = &m->nodes[i];

		in[i].host = n->host;
		if (!nm_node_complete(n))
			continue;
		in[i].rdma = json_object_get(n->rdma, "rdma");
		in[i].rdma_node = json_object_get(n->rdma, "rdma_node");
		in[i].version = n->nccl_version[0] ? n->nccl_version : NULL;
		in[i].gpu_pci = json_object_get(n->nvidia, "gpu_pci");
		ib_suggest_env(in[i].rdma_node, var_of, n, &in[i].env);
	}
	ib_suggest(in, m->nnodes, out);
	free(in);
}

/* NCCL_IB_HCA and NCCL_IB_GID_INDEX for the complete nodes (ib_suggest.h);
 * nothing, and no note, where no node has RDMA ports. */
static void suggest_ib(const struct netmodel *m, struct suggestions *s)
{
	diagnose_suggest_ib(m, &s->ib);
	if (s->ib.notes)
		cd_strcatf(&s->notes, "%s", s->ib.notes);
}

void diagnose_suggest(const struct netmodel *m, struct diagnosis *d)
{
	struct suggestions *s = &d->sugg;
	const char *family = NULL;
	char *names = NULL, *exact = NULL;
	int all_have = 1, complete = count_complete(m), ipv6 = data_is_ipv6(m, d);
	size_t nn = m->nnodes;

	s->nccl_ifname_per_node = cd_calloc(nn ? nn : 1, sizeof(char *));
	s->gloo_ifname_per_node = cd_calloc(nn ? nn : 1, sizeof(char *));
	s->torchrun = cd_calloc(nn ? nn : 1, sizeof(char *));
	/* A node that stopped answering after its probe may have stopped
	 * before its peers tested it or it tested them: nothing it would use
	 * is proved, so it is left out, and said so. */
	for (size_t i = 0; i < nn; i++) {
		if (nm_node_partial(&m->nodes[i]))
			cd_strcatf(&s->notes,
			           "%s: left out: it stopped answering during the check (its "
			           "results are partial), so nothing is suggested for it%s\n",
			           m->nodes[i].host,
			           i == m->master ? " and it cannot be the master" : "");
	}
	if (complete < 2 || !m->matrix_done) {
		cd_strcatf(&s->notes, "%s\n",
		           complete < 2
		               ? "fewer than two nodes were checked to the end: nothing could be "
		                 "verified between nodes, so nothing is suggested"
		               : "the reachability matrix did not run: nothing is suggested");
		return;
	}
	for (size_t i = 0; i < nn; i++) {
		const char *name = d->pred[i].data_iface;

		if (!nm_node_complete(&m->nodes[i]))
			continue;
		note_refused(m, d, i, ipv6 ? AF_INET6 : AF_INET, &s->notes);
		if (!name[0]) {
			all_have = 0;
			cd_strcatf(&s->notes,
			           "%s: no interface with an IPv4 address (nor, on every node, "
			           "an IPv6 one) that every other node reached; no interface is "
			           "suggested for it\n",
			           m->nodes[i].host);
			continue;
		}
		if (!list_has(names, name)) {
			cd_strcatf(&names, "%s%s", names ? "," : "", name);
			cd_strcatf(&exact, "%s%s", exact ? "," : "=", name);
		}
	}
	/* AF_INET keeps NCCL off an IPv6-only NIC beside IPv4 data NICs; never
	 * when the data addresses are IPv6: NCCL would then find nothing. */
	if (!ipv6 && ipv6_trap_exists(m, d)) {
		family = "AF_INET";
		s->nccl_family_inet = 1;
	}
	/* IPv6 data: NCCL left alone takes each interface's first address, of
	 * either family; AF_INET6 is suggested only where that is not the
	 * proved IPv6 one on some node and AF_INET6 makes it so. */
	if (ipv6 && suggest_ifnames(m, d, all_have ? names : NULL, exact, NULL, NULL) > 0) {
		int failed_inet6;

		clear_ifnames(m, s);
		failed_inet6 =
		    suggest_ifnames(m, d, all_have ? names : NULL, exact, "AF_INET6", NULL);
		clear_ifnames(m, s);
		if (failed_inet6 == 0) {
			family = "AF_INET6";
			s->nccl_family_inet6 = 1;
		}
	} else if (ipv6) {
		clear_ifnames(m, s);
	}
	suggest_ifnames(m, d, all_have ? names : NULL, exact, family, &s->notes);
	free(names);
	free(exact);
	suggest_ib(m, s);

	/* MASTER_ADDR: the master's data address; MASTER_PORT: the first
	 * candidate every node reached there, the master itself included
	 * (torchrun's rank-0 agent connects to its own MASTER_ADDR). A master
	 * whose results are partial is never suggested (its note above says
	 * so). */
	if (nm_node_partial(&m->nodes[m->master]))
		return;
	if (d->pred[m->master].data_addr[0]) {
		snprintf(s->master_addr, sizeof(s->master_addr), "%s",
		         d->pred[m->master].data_addr);
		for (size_t k = 0; k < m->nlisteners && !s->master_port; k++) {
			const struct nm_listener *l = &m->listeners[k];
			const struct nm_attempt *self;
			char worst[24];

			if (l->node != m->master || !l->fixed_port || l->error[0])
				continue;
			self = diagnose_self_attempt(m, s->master_addr, l->port);
			if (self && strcmp(self->result, "ok") != 0)
				continue;
			if (diagnose_addr_reach(m, m->master, s->master_addr, 1, l->port, worst,
			                        sizeof(worst)) == REACH_ALL_OK)
				s->master_port = l->port;
		}
		if (!s->master_port)
			cd_strcatf(
			    &s->notes,
			    "%s (master): no MASTER_PORT candidate was reachable from every node "
			    "and the master itself\n",
			    m->nodes[m->master].host);
	} else {
		cd_strcatf(&s->notes,
		           "%s (master): no address every node reached; no MASTER_ADDR\n",
		           m->nodes[m->master].host);
	}
	if (!s->master_port)
		return;
	for (size_t i = 0, rank = 0; i < nn; i++) {
		int nproc = m->nodes[i].gpus > 0 ? m->nodes[i].gpus : 1;

		if (!nm_node_complete(&m->nodes[i]))
			continue;
		s->torchrun[i] = cd_asprintf(
		    "torchrun --nnodes=%d --node_rank=%zu --nproc_per_node=%d "
		    "--master_addr=%s --master_port=%d train.py",
		    complete, i == m->master ? 0 : ++rank, nproc, s->master_addr, s->master_port);
	}
}

const char *diagnose_sugg_family(const struct suggestions *s)
{
	if (s->nccl_family_inet6)
		return "AF_INET6";
	return s->nccl_family_inet ? "AF_INET" : NULL;
}

int diagnose_sugg_init_method(const struct suggestions *s, char *buf, size_t len)
{
	int v6 = strchr(s->master_addr, ':') != NULL;

	if (len)
		buf[0] = '\0';
	if (!s->master_addr[0] || !s->master_port)
		return -1;
	snprintf(buf, len, "tcp://%s%s%s:%d", v6 ? "[" : "", s->master_addr, v6 ? "]" : "",
	         s->master_port);
	return 0;
}
