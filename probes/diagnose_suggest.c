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

/*
 * The data interface of each node: an interface whose first IPv4 address
 * every peer reached, not virtual by name. Prefer the one on the master's
 * data subnet, then a physical one, then getifaddrs order.
 */
void diagnose_choose_data_ifaces(const struct netmodel *m, struct diagnosis *d)
{
	const struct nm_addr *master_addr = NULL;

	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < m->nnodes; i++) {
			const struct nm_node *n = &m->nodes[i];
			const struct nm_addr *best = NULL;
			int best_score = -1;

			if (!nm_node_complete(n) || (pass == 0) != (i == m->master))
				continue;
			for (size_t f = 0; f < n->nifaces; f++) {
				const struct nm_iface *fi = &n->ifaces[f];
				const struct nm_addr *a = first_addr(n, fi->name, AF_INET);
				int score = 0;

				if (fi->loopback || !a || diagnose_virtual_name(fi->name) ||
				    !addr_proved(m, i, a->addr) ||
				    diagnose_bulk_failed(m, i, a->addr))
					continue;
				if (master_addr && same_subnet(a->addr, master_addr->addr, AF_INET,
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
			if (!best)
				continue;
			snprintf(d->pred[i].data_iface, sizeof(d->pred[i].data_iface), "%s",
			         best->ifname);
			snprintf(d->pred[i].data_addr, sizeof(d->pred[i].data_addr), "%s",
			         best->addr);
			if (i == m->master)
				master_addr = best;
		}
	}
}

/* ---------------------------------------------------------------- suggestions */

/* Every address NCCL would pick on node i under env e is proved. */
static int nccl_env_proved(const struct netmodel *m, size_t i, const struct node_prediction *p,
                           const struct net_env *e)
{
	struct nccl_prediction sock, boot;

	nccl_predict(&m->nodes[i], e, &p->version, NCCL_PREDICT_MAX_IFS, &sock);
	nccl_predict(&m->nodes[i], e, &p->version, 1, &boot);
	if (sock.npicks == 0 || boot.npicks == 0)
		return 0;
	for (int k = 0; k < sock.npicks; k++) {
		if (!addr_proved(m, i, sock.picks[k].addr))
			return 0;
	}
	return addr_proved(m, i, boot.picks[0].addr);
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

void diagnose_suggest(const struct netmodel *m, struct diagnosis *d)
{
	struct suggestions *s = &d->sugg;
	const char *family = NULL;
	char *names = NULL, *exact = NULL;
	int all_have = 1, complete = count_complete(m);
	size_t nn = m->nnodes;

	s->nccl_ifname_per_node = cd_calloc(nn ? nn : 1, sizeof(char *));
	s->gloo_ifname_per_node = cd_calloc(nn ? nn : 1, sizeof(char *));
	s->torchrun = cd_calloc(nn ? nn : 1, sizeof(char *));
	/* A node that stopped answering after its probe may have stopped
	 * before its peers tested it or it tested them: nothing it would use
	 * is proved, so it is left out, and said so. */
	for (size_t i = 0; i < nn; i++) {
		if (nm_node_partial(&m->nodes[i]))
			diagnose_sb_addf(&s->notes,
			                 "%s: left out: it stopped answering during the check (its "
			                 "results are partial), so nothing is suggested for it%s\n",
			                 m->nodes[i].host,
			                 i == m->master ? " and it cannot be the master" : "");
	}
	if (complete < 2 || !m->matrix_done) {
		diagnose_sb_addf(
		    &s->notes, "%s\n",
		    complete < 2 ? "fewer than two nodes were checked to the end: nothing could be "
		                   "verified between nodes, so nothing is suggested"
		                 : "the reachability matrix did not run: nothing is suggested");
		return;
	}
	for (size_t i = 0; i < nn; i++) {
		const char *name = d->pred[i].data_iface;

		if (!nm_node_complete(&m->nodes[i]))
			continue;
		if (!name[0]) {
			all_have = 0;
			diagnose_sb_addf(
			    &s->notes,
			    "%s: no interface with an IPv4 address that every other node reached; "
			    "no interface is suggested for it\n",
			    m->nodes[i].host);
			continue;
		}
		if (!list_has(names, name)) {
			diagnose_sb_addf(&names, "%s%s", names ? "," : "", name);
			diagnose_sb_addf(&exact, "%s%s", exact ? "," : "=", name);
		}
	}
	if (ipv6_trap_exists(m, d)) {
		family = "AF_INET";
		s->nccl_family_inet = 1;
	}
	/* One value for the cluster: the plain list (prefix semantics, what
	 * people write), else the exact list; each verified on every node. */
	if (all_have && names) {
		if (nccl_value_works(m, d, names, family))
			s->nccl_ifname = cd_strdup(names);
		else if (nccl_value_works(m, d, exact, family))
			s->nccl_ifname = cd_strdup(exact);
	}
	for (size_t i = 0; i < nn; i++) {
		const struct nm_node *n = &m->nodes[i];
		const char *name = d->pred[i].data_iface;
		struct gloo_prediction g;
		struct net_env e;
		char value[NM_NAME + 2];

		if (!nm_node_complete(n) || !name[0])
			continue;
		snprintf(value, sizeof(value), "=%s", name);
		env_with(n, &e, s->nccl_ifname ? s->nccl_ifname : value, family, name);
		if (nccl_env_proved(m, i, &d->pred[i], &e))
			s->nccl_ifname_per_node[i] = cd_strdup(e.nccl_socket_ifname);
		else
			diagnose_sb_addf(&s->notes, "%s: NCCL_SOCKET_IFNAME=%s did not verify\n",
			                 n->host, e.nccl_socket_ifname);
		gloo_predict(n, &e, &g);
		if (g.npicks == 1 && addr_proved(m, i, g.picks[0].addr))
			s->gloo_ifname_per_node[i] = cd_strdup(name);
		else
			diagnose_sb_addf(&s->notes, "%s: GLOO_SOCKET_IFNAME=%s did not verify\n",
			                 n->host, name);
	}
	if (s->nccl_ifname) {
		for (size_t i = 0; i < nn; i++) {
			if (nm_node_complete(&m->nodes[i]) && !s->nccl_ifname_per_node[i]) {
				free(s->nccl_ifname);
				s->nccl_ifname = NULL;
				break;
			}
		}
	}
	free(names);
	free(exact);

	/* MASTER_ADDR: the master's data address; MASTER_PORT: the first
	 * candidate every node reached there. A master whose results are
	 * partial is never suggested (its note above says so). */
	if (nm_node_partial(&m->nodes[m->master]))
		return;
	if (d->pred[m->master].data_addr[0]) {
		snprintf(s->master_addr, sizeof(s->master_addr), "%s",
		         d->pred[m->master].data_addr);
		for (size_t k = 0; k < m->nlisteners && !s->master_port; k++) {
			const struct nm_listener *l = &m->listeners[k];
			char worst[24];

			if (l->node != m->master || !l->fixed_port || l->error[0])
				continue;
			if (diagnose_addr_reach(m, m->master, s->master_addr, 1, l->port, worst,
			                        sizeof(worst)) == REACH_ALL_OK)
				s->master_port = l->port;
		}
		if (!s->master_port)
			diagnose_sb_addf(
			    &s->notes,
			    "%s (master): no MASTER_PORT candidate was reachable from every node\n",
			    m->nodes[m->master].host);
	} else {
		diagnose_sb_addf(&s->notes,
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
		    "torchrun --nnodes=%d --node-rank=%zu --nproc-per-node=%d "
		    "--master-addr=%s --master-port=%d train.py",
		    complete, i == m->master ? 0 : ++rank, nproc, s->master_addr, s->master_port);
	}
}
