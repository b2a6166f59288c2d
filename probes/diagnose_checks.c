/* SPDX-License-Identifier: MIT */
/*
 * diagnose_checks.c - the checks of what NCCL and Gloo would use: unreachable
 * nodes, every picked address against the matrix, virtual interfaces, the
 * hostname, stale interface variables, Gloo's device count and duplicate
 * addresses (see diagnose.h); MASTER_PORT's are in diagnose_master.c.
 */
#include "diagnose.h"
#include "diagnose_internal.h"
#include "hostlist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* Evidence lines are bounded on purpose: a line cut at its buffer's end
 * still says what was seen, and no agent can make one grow without end. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

static const char *node_name(const struct netmodel *m, size_t i)
{
	return m->nodes[i].host;
}

char *diagnose_failed_attempts(const struct netmodel *m, size_t to, const char *addr,
                               int fixed_port, int port)
{
	char *s = NULL;

	for (size_t i = 0; i < m->nattempts; i++) {
		const struct nm_attempt *a = &m->attempts[i];

		if (!diagnose_attempt_toward(a, to, addr, fixed_port, port) ||
		    strcmp(a->result, "ok") == 0 || diagnose_route_astray(m, a->from, addr))
			continue;
		cd_strcatf(&s, "%s%s -> %s port %d: %s%s%s%s", s ? "; " : "", node_name(m, a->from),
		           node_name(m, to), a->port, a->result, a->errno_name[0] ? " (" : "",
		           a->errno_name, a->errno_name[0] ? ")" : "");
	}
	return s ? s : cd_strdup("");
}

int diagnose_target_failures(const struct netmodel *m, size_t to, const char *addr, int fixed_port,
                             int port)
{
	for (size_t i = 0; i < m->nattempts; i++) {
		const struct nm_attempt *a = &m->attempts[i];

		if (diagnose_attempt_toward(a, to, addr, fixed_port, port) &&
		    strcmp(a->result, "ok") != 0 && !diagnose_route_astray(m, a->from, addr))
			return 1;
	}
	return 0;
}

/* sshpool's codes for an agent that said hello, then missed a request, and
 * whose node a fresh session still reached: running ("slow") or stopped. */
static int is_slow_code(const char *code)
{
	return strcmp(code, "slow") == 0 || strcmp(code, "agent-stopped") == 0;
}

/* A node that answered its transport (it logged in) but not a request in
 * time is not unreachable: sshpool's "slow" and "agent-stopped" (its agent
 * said hello, then missed a request, and a fresh session still logged in)
 * and "request-timeout" (logged in, the agent did not say hello in time:
 * the request deadline starts only after login). Part of its probe is
 * missing, and it says so, partial or not checked at all. A node that a
 * fresh session could not reach any more ("unreachable") is unreachable. */
static int note_slow_node(struct dstate *st, size_t i)
{
	const struct nm_node *n = &st->m->nodes[i];
	int started = strcmp(n->error_code, "request-timeout") == 0;
	const char *key, *message;
	char ev[CD_ERRLEN + 64];
	size_t hl;

	if (n->probed && is_slow_code(n->lost_code)) {
		key = "slow-partial";
		message = "%N answered, then was too slow to answer a request in time: it is "
		          "reachable but overloaded (or its agent was stopped); its results are "
		          "partial";
	} else if (!n->probed && is_slow_code(n->error_code)) {
		key = "slow";
		message = "%N answered the login and the agent's hello but not the probe in time: "
		          "it is reachable but slow (overloaded, or its agent was stopped), so "
		          "nothing about it is known";
	} else if (!n->probed && started) {
		key = "slow-start";
		message = "%N logged in, but its agent did not start and answer in time: it is "
		          "reachable but slow (overloaded), or its agent hung, so nothing about it "
		          "is known";
	} else {
		return 0;
	}
	hl = strlen(n->host);
	/* sshpool's message already starts with "host: " */
	if (strncmp(n->error, n->host, hl) == 0 && n->error[hl] == ':')
		snprintf(ev, sizeof(ev), "%s (%s)", n->error,
		         started     ? "request-timeout"
		         : n->probed ? n->lost_code
		                     : n->error_code);
	else
		snprintf(ev, sizeof(ev), "%s: %s", n->host, n->error);
	diagnose_note(st, "probe-incomplete", SEV_WARNING, key, i, message,
	              "Look at the node's load, then run the check again (a longer -t gives a "
	              "slow node more time).",
	              ev);
	return 1;
}

/* What to do for a node never reached, by its error code: a launcher's
 * failure (srun's own words in the evidence) is not a matter of ssh. */
static const char *unreachable_fix(const char *code)
{
	static const struct {
		const char *code, *fix;
	} fixes[] = {
	    {"launcher",
	     "Make the launcher start the agent on the node (the evidence gives the launcher's "
	     "own words: with srun, a node Slurm cannot give now, or a check outside an "
	     "allocation), then run the check again."},
	};

	for (size_t k = 0; k < CD_ARRAY_LEN(fixes); k++)
		if (strcmp(code, fixes[k].code) == 0)
			return fixes[k].fix;
	return "Make `ssh <node>` work from this machine (the evidence says what failed), then "
	       "run the check again.";
}

void diagnose_check_unreachable_nodes(struct dstate *st)
{
	const struct netmodel *m = st->m;

	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_node *n = &m->nodes[i];
		char ev[CD_ERRLEN + 64];

		if (n->error[0] && note_slow_node(st, i))
			continue;
		if (n->probed && n->error[0]) {
			snprintf(ev, sizeof(ev), "%s: %s", n->host, n->error);
			diagnose_note(
			    st, "node-unreachable", SEV_ERROR, "partial", i,
			    "%N stopped answering during the check: its results are partial",
			    "Look at the node (load, OOM, sshd limits), then run the check again.",
			    ev);
		}
		if (n->probed)
			continue;
		snprintf(ev, sizeof(ev), "%s: %s (%s)", n->host,
		         n->error[0] ? n->error : "no answer",
		         n->error_code[0] ? n->error_code : "failed");
		diagnose_note(
		    st, "node-unreachable", SEV_ERROR, n->error_code, i,
		    "%N could not be checked: its network, NCCL and Gloo choices are unknown, and "
		    "nothing was verified against it",
		    unreachable_fix(n->error_code), ev);
	}
}

/* What one node would use, deduplicated by address, with who uses it. */
struct used_addr {
	struct net_pick pick;
	char who[48]; /* "NCCL", "NCCL bootstrap", "Gloo", joined by ", " */
};

static size_t used_addresses(const struct node_prediction *p, struct used_addr *out, size_t cap)
{
	size_t n = 0;
	const struct net_pick *all[NCCL_PREDICT_MAX_IFS + NCCL_FILTER_MAX_ITEMS + 1];
	const char *who[NCCL_PREDICT_MAX_IFS + NCCL_FILTER_MAX_ITEMS + 1];
	size_t k = 0;

	for (int i = 0; i < p->bootstrap.npicks; i++) {
		all[k] = &p->bootstrap.picks[i];
		who[k++] = "NCCL bootstrap";
	}
	for (int i = 0; i < p->nccl.npicks; i++) {
		all[k] = &p->nccl.picks[i];
		who[k++] = "NCCL";
	}
	for (int i = 0; i < p->gloo.npicks; i++) {
		all[k] = &p->gloo.picks[i];
		who[k++] = "Gloo";
	}
	for (size_t i = 0; i < k; i++) {
		size_t j;

		for (j = 0; j < n; j++) {
			if (strcmp(out[j].pick.addr, all[i]->addr) == 0)
				break;
		}
		if (j == n) {
			if (n == cap)
				continue;
			out[n].pick = *all[i];
			snprintf(out[n].who, sizeof(out[n].who), "%s", who[i]);
			n++;
		} else if (!strstr(out[j].who, who[i])) {
			size_t len = strlen(out[j].who);

			snprintf(out[j].who + len, sizeof(out[j].who) - len, ", %s", who[i]);
		}
	}
	return n;
}

static int fixed_port_reachable_on(const struct netmodel *m, size_t to, const char *addr)
{
	char worst[24];

	return diagnose_addr_reach(m, to, addr, 1, 0, worst, sizeof(worst)) == REACH_ALL_OK;
}

/* Judge every address a node would use against the matrix. */
void diagnose_check_used_addresses(struct dstate *st)
{
	const struct netmodel *m = st->m;

	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_node *n = &m->nodes[i];
		struct used_addr used[NCCL_PREDICT_MAX_IFS + NCCL_FILTER_MAX_ITEMS + 1];
		size_t nu;

		if (!n->probed)
			continue;
		nu = used_addresses(&st->d->pred[i], used, CD_ARRAY_LEN(used));
		for (size_t u = 0; u < nu; u++) {
			const struct net_pick *pk = &used[u].pick;
			char worst[24], ev[1024], key[160], shown[NM_ADDR + 24];
			enum reach_status rs;
			char *fails;

			nm_addr_format(shown, sizeof(shown), pk->addr, 0);
			if (pk->scope_id)
				snprintf(shown, sizeof(shown), "%s%%%s", pk->addr, pk->ifname);
			if (diagnose_is_link_local_text(pk->addr)) {
				snprintf(ev, sizeof(ev), "%s: %s would use %s:%s", n->host,
				         used[u].who, pk->ifname, shown);
				diagnose_note(
				    st, "link-local-selected", SEV_ERROR, "", i,
				    "%N: NCCL or Gloo would use a link-local address, which other "
				    "hosts cannot reach reliably (the scope id is this host's)",
				    "Give the interface a routable address or exclude it: set "
				    "NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME as suggested below.",
				    ev);
				continue;
			}
			rs = diagnose_addr_reach(m, i, pk->addr, 0, 0, worst, sizeof(worst));
			if (rs == REACH_LOOPBACK) {
				if (used[u].who[0] == 'G' && st->d->pred[i].gloo.from_hostname)
					continue; /* hostname-loopback says it */
				snprintf(ev, sizeof(ev), "%s: %s would use %s:%s", n->host,
				         used[u].who, pk->ifname, shown);
				diagnose_note(
				    st, "iface-unreachable", SEV_ERROR, "loopback", i,
				    "%N: NCCL or Gloo would use a loopback address; every peer "
				    "that "
				    "connects to it reaches itself",
				    "Set NCCL_SOCKET_IFNAME (never to lo) and GLOO_SOCKET_IFNAME "
				    "as "
				    "suggested below.",
				    ev);
				continue;
			}
			if (rs != REACH_SOME_BAD || !diagnose_target_failures(m, i, pk->addr, 0, 0))
				continue;
			fails = diagnose_failed_attempts(m, i, pk->addr, 0, 0);
			snprintf(ev, sizeof(ev), "%s: %s would use %s:%s; %s", n->host, used[u].who,
			         pk->ifname, shown, fails);
			free(fails);
			if (strcmp(worst, "wrong-peer") == 0)
				continue; /* duplicate-address explains it */
			if (pk->family == AF_INET6 &&
			    (strcmp(worst, "no-route") == 0 ||
			     strcmp(worst, "net-unreachable") == 0 ||
			     strcmp(worst, "timeout") == 0 || strcmp(worst, "error") == 0)) {
				snprintf(key, sizeof(key), "%s", pk->ifname);
				diagnose_note(
				    st, "ipv6-no-route", SEV_ERROR, "", i,
				    "%N: NCCL or Gloo would use an IPv6 address that other nodes "
				    "cannot "
				    "reach (\"No route to host\" / \"Network is unreachable\" in "
				    "NCCL's log, then a hang)",
				    "Exclude that interface: use the NCCL_SOCKET_IFNAME and "
				    "NCCL_SOCKET_FAMILY=AF_INET suggested below, and "
				    "GLOO_SOCKET_IFNAME "
				    "for Gloo.",
				    ev);
			} else if (fixed_port_reachable_on(m, i, pk->addr)) {
				diagnose_note(
				    st, "ephemeral-ports-blocked", SEV_ERROR, "", i,
				    "%N: peers reach MASTER_PORT but not the ephemeral ports NCCL "
				    "and "
				    "Gloo listen on; the job starts, then hangs or times out after "
				    "rendezvous",
				    "Allow TCP between the cluster's nodes on the data interface, "
				    "or "
				    "shrink net.ipv4.ip_local_port_range and open exactly that "
				    "range "
				    "plus MASTER_PORT. Do not disable the firewall.",
				    ev);
			} else {
				diagnose_note(
				    st, "iface-unreachable", SEV_ERROR, "peers", i,
				    "%N: NCCL or Gloo would use an address that other nodes cannot "
				    "reach",
				    "Use an interface every node reaches: set NCCL_SOCKET_IFNAME "
				    "and "
				    "GLOO_SOCKET_IFNAME as suggested below (or fix the routing or "
				    "firewall the evidence points at).",
				    ev);
			}
		}
	}
}

void diagnose_check_virtual_and_lo(struct dstate *st)
{
	const struct netmodel *m = st->m;

	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_node *n = &m->nodes[i];
		struct used_addr used[NCCL_PREDICT_MAX_IFS + NCCL_FILTER_MAX_ITEMS + 1];
		size_t nu;

		if (!n->probed)
			continue;
		nu = used_addresses(&st->d->pred[i], used, CD_ARRAY_LEN(used));
		for (size_t u = 0; u < nu; u++) {
			const struct nm_iface *f = nm_iface_find(n, used[u].pick.ifname);
			char ev[512];

			if (!diagnose_virtual_name(used[u].pick.ifname) &&
			    !(f && strcmp(f->kind, "tun") == 0))
				continue;
			snprintf(ev, sizeof(ev), "%s: %s would use %s:%s (%s)", n->host,
			         used[u].who, used[u].pick.ifname, used[u].pick.addr,
			         f && f->kind[0] ? f->kind : "virtual");
			diagnose_note(
			    st, "virtual-iface-selected", SEV_WARNING, "", i,
			    "%N: NCCL or Gloo would use a virtual interface (container bridge, "
			    "veth, "
			    "VPN or overlay); traffic through it is NATed or not routed between "
			    "nodes",
			    "List the data interfaces explicitly: NCCL_SOCKET_IFNAME and "
			    "GLOO_SOCKET_IFNAME as suggested below.",
			    ev);
		}
	}
}

void diagnose_check_hostname(struct dstate *st)
{
	const struct netmodel *m = st->m;

	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_node *n = &m->nodes[i];
		const struct gloo_prediction *g = &st->d->pred[i].gloo;
		const char *first = NULL;
		char *ev = NULL;

		if (!n->probed)
			continue;
		for (size_t k = 0; k < n->nhostaddrs && !first; k++) {
			if (n->hostaddrs[k].bindable)
				first = n->hostaddrs[k].addr;
		}
		if (first && !diagnose_is_loopback_text(first) &&
		    !diagnose_is_link_local_text(first))
			continue;
		if (!first && !n->hostname_error[0] && n->nhostaddrs == 0)
			continue; /* nothing reported */
		cd_strcatf(&ev, "%s: hostname %s resolves to %s%s", n->host, n->hostname,
		           first ? first : "nothing bindable", n->hostname_error[0] ? " (" : "");
		if (n->hostname_error[0])
			cd_strcatf(&ev, "%s)", n->hostname_error);
		for (size_t k = 0; k < n->nhosts_lines; k++)
			cd_strcatf(&ev, "\n%s: /etc/hosts: %s", n->host, n->hosts_lines[k]);
		diagnose_note(
		    st, "hostname-loopback", g->from_hostname ? SEV_ERROR : SEV_WARNING,
		    g->from_hostname ? "gloo" : "set", i,
		    g->from_hostname
		        ? "%N: the hostname resolves to a loopback (or no usable) address, so Gloo "
		          "binds to it and tells peers to connect there (\"Connection refused\", "
		          "remote=[127.0.1.1])"
		        : "%N: the hostname resolves to a loopback address; GLOO_SOCKET_IFNAME "
		          "avoids it for Gloo, but torchrun's rendezvous advertises the hostname",
		    "Map the hostname to the node's data address in /etc/hosts (replace the "
		    "127.0.1.1 line), or set GLOO_SOCKET_IFNAME as suggested below.",
		    ev);
		free(ev);
	}
}

static int ifname_matches_any(const struct nm_node *n, const char *name)
{
	return nm_iface_find(n, name) != NULL;
}

void diagnose_check_stale_env(struct dstate *st)
{
	const struct netmodel *m = st->m;

	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_node *n = &m->nodes[i];
		const struct node_prediction *p = &st->d->pred[i];
		const struct nm_var *nv = nm_var_get(n, "NCCL_SOCKET_IFNAME");
		const struct nm_var *gv = nm_var_get(n, "GLOO_SOCKET_IFNAME");
		char ev[768];

		if (!n->probed)
			continue;
		if (nv && strlen(nv->value) > 1 && p->nccl.npicks == 0 && !p->nccl.cannot_predict) {
			snprintf(ev, sizeof(ev),
			         "%s: NCCL_SOCKET_IFNAME=%s (from %s) matches no usable "
			         "interface: NCCL fails with \"%s\"",
			         n->host, nv->value, nv->source, p->nccl.error);
			diagnose_note(
			    st, "stale-ifname-env", SEV_ERROR, "nccl", i,
			    "%N: NCCL_SOCKET_IFNAME is set to a value that matches no interface "
			    "there",
			    "Remove the stale value (environment, ~/.nccl.conf or /etc/nccl.conf) "
			    "and "
			    "use the suggested NCCL_SOCKET_IFNAME.",
			    ev);
		}
		if (gv && strlen(gv->value) > 1) {
			char *copy = cd_strdup(gv->value), *save = NULL;
			int missing = 0;

			for (char *it = strtok_r(copy, ",", &save); it;
			     it = strtok_r(NULL, ",", &save))
				missing |= !ifname_matches_any(n, it);
			free(copy);
			if (missing || p->gloo.npicks == 0) {
				snprintf(ev, sizeof(ev), "%s: GLOO_SOCKET_IFNAME=%s (from %s): %s",
				         n->host, gv->value, gv->source,
				         p->gloo.error[0] ? p->gloo.error
				                          : "names a missing interface");
				diagnose_note(
				    st, "stale-ifname-env", SEV_ERROR, "gloo", i,
				    "%N: GLOO_SOCKET_IFNAME names an interface that does not "
				    "exist there "
				    "(Gloo takes exact names only, no ^ or prefixes)",
				    "Set GLOO_SOCKET_IFNAME to this node's own interface name, as "
				    "suggested below (names may differ per node, the count may "
				    "not).",
				    ev);
			}
		}
	}
}

void diagnose_check_gloo_count(struct dstate *st)
{
	const struct netmodel *m = st->m;
	int first = -1, differ = 0;
	char *ev = NULL;

	for (size_t i = 0; i < m->nnodes; i++) {
		const struct gloo_prediction *g = &st->d->pred[i].gloo;

		if (!m->nodes[i].probed || g->from_hostname || g->npicks == 0)
			continue;
		if (first < 0)
			first = g->npicks;
		differ |= g->npicks != first;
	}
	if (!differ)
		return;
	for (size_t i = 0; i < m->nnodes; i++) {
		const struct gloo_prediction *g = &st->d->pred[i].gloo;

		if (!m->nodes[i].probed)
			continue;
		cd_strcatf(&ev, "%s%s: %d Gloo device(s) (%s)", ev ? "\n" : "", m->nodes[i].host,
		           g->from_hostname ? 1 : g->npicks, g->rule);
		diagnose_note(
		    st, "gloo-count-mismatch", SEV_ERROR, "", i,
		    "%N: Gloo would create different numbers of devices on different nodes; "
		    "PyTorch requires the same count everywhere",
		    "Give every node the same number of names in GLOO_SOCKET_IFNAME.", NULL);
	}
	diagnose_note(st, "gloo-count-mismatch", SEV_ERROR, "", SIZE_MAX, "", "", ev);
	free(ev);
}

/* Whether any node's NCCL or Gloo would use addr. */
static int address_used(struct dstate *st, const char *addr)
{
	const struct netmodel *m = st->m;

	for (size_t q = 0; q < m->nnodes; q++) {
		struct used_addr u[NCCL_PREDICT_MAX_IFS + NCCL_FILTER_MAX_ITEMS + 1];
		size_t nu =
		    m->nodes[q].probed ? used_addresses(&st->d->pred[q], u, CD_ARRAY_LEN(u)) : 0;

		for (size_t r = 0; r < nu; r++)
			if (strcmp(u[r].pick.addr, addr) == 0)
				return 1;
	}
	return 0;
}

/* The index of the first probed node before node i (in model order) that
 * has addr, SIZE_MAX when i is the first. */
static size_t first_with_address(const struct netmodel *m, size_t i, const char *addr)
{
	for (size_t j = 0; j < i; j++) {
		const struct nm_node *b = &m->nodes[j];

		for (size_t l = 0; b->probed && l < b->naddrs; l++)
			if (strcmp(b->addrs[l].addr, addr) == 0)
				return j;
	}
	return SIZE_MAX;
}

/*
 * One finding per address configured on two or more nodes, with one
 * evidence line that folds the nodes per interface name:
 * "172.17.0.1 on docker0: node[1-4]", or
 * "10.0.0.5 on eth0: node1; on ens3: node2" when the names differ.
 * Each address is handled once, from the first node that has it.
 */
void diagnose_check_duplicates(struct dstate *st)
{
	const struct netmodel *m = st->m;
	size_t *who = cd_calloc(m->nnodes ? m->nnodes : 1, sizeof(*who));
	const char **ifn = cd_calloc(m->nnodes ? m->nnodes : 1, sizeof(*ifn));
	size_t *group = cd_calloc(m->nnodes ? m->nnodes : 1, sizeof(*group));

	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_node *a = &m->nodes[i];

		for (size_t k = 0; a->probed && k < a->naddrs; k++) {
			const struct nm_addr *x = &a->addrs[k];
			enum severity sev;
			char *ev = NULL;
			size_t n = 0;

			if (nm_addr_is_loopback(x) || nm_addr_is_link_local(x) ||
			    first_with_address(m, i, x->addr) != SIZE_MAX)
				continue;
			/* every node with the address, once, by the interface
			 * that carries it there (its first, if several do) */
			for (size_t j = i; j < m->nnodes; j++) {
				const struct nm_node *b = &m->nodes[j];

				for (size_t l = 0; b->probed && l < b->naddrs; l++) {
					if (strcmp(b->addrs[l].addr, x->addr) == 0) {
						who[n] = j;
						ifn[n++] = b->addrs[l].ifname;
						break;
					}
				}
			}
			if (n < 2)
				continue;
			sev = address_used(st, x->addr) ? SEV_ERROR : SEV_WARNING;
			for (size_t g = 0; g < n; g++) {
				size_t ng = 0;
				char *nodes;
				int seen = 0;

				for (size_t h = 0; h < g; h++)
					seen |= strcmp(ifn[h], ifn[g]) == 0;
				if (seen)
					continue;
				for (size_t h = g; h < n; h++)
					if (strcmp(ifn[h], ifn[g]) == 0)
						group[ng++] = who[h];
				nodes = diagnose_fold_nodes(m, group, ng);
				if (ev)
					cd_strcatf(&ev, "; on %s: %s", ifn[g], nodes);
				else
					cd_strcatf(&ev, "%s on %s: %s", x->addr, ifn[g], nodes);
				free(nodes);
			}
			for (size_t g = 0; g < n; g++)
				diagnose_note(
				    st, "duplicate-address", sev, x->addr, who[g],
				    "%N: the same address is configured on several nodes (a "
				    "container bridge such as docker0, or a cloned config); a "
				    "peer that connects to it reaches the wrong machine",
				    "Make sure NCCL and Gloo never use it: keep it out of "
				    "NCCL_SOCKET_IFNAME/GLOO_SOCKET_IFNAME (the suggestions below "
				    "do); give the nodes distinct addresses if it is meant to "
				    "carry traffic.",
				    g + 1 == n ? ev : NULL);
			free(ev);
		}
	}
	free(who);
	free(ifn);
	free(group);
}
