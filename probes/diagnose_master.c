/* SPDX-License-Identifier: MIT */
/*
 * diagnose_master.c - the MASTER_PORT checks (see diagnose.h): the master's
 * bind of the port, every node's path to it, and the master's own path to
 * its MASTER_ADDR (netcheck.h, phase 3).
 */
#include "diagnose.h"
#include "diagnose_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Evidence lines are bounded on purpose, as in diagnose_checks.c. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

const struct nm_attempt *diagnose_self_attempt(const struct netmodel *m, const char *addr, int port)
{
	for (size_t k = 0; k < m->nattempts; k++) {
		const struct nm_attempt *a = &m->attempts[k];

		if (a->from == m->master && a->to == m->master && a->fixed_port &&
		    a->port == port && strcmp(a->addr, addr) == 0 &&
		    strcmp(a->result, "not-tested") != 0)
			return a;
	}
	return NULL;
}

/* The firewall rule of node n that names port, NULL when none does. */
static const struct nm_fwrule *port_rule(const struct nm_node *n, int port)
{
	for (size_t q = 0; q < n->nfwrules; q++) {
		if (n->fwrules[q].port_lo <= port && port <= n->fwrules[q].port_hi)
			return &n->fwrules[q];
	}
	return NULL;
}

void diagnose_check_master_bind(struct dstate *st)
{
	const struct netmodel *m = st->m;
	size_t mi = m->master;
	const struct nm_node *mn = &m->nodes[mi];

	if (!m->matrix_done || mi >= m->nnodes || !mn->probed)
		return;
	for (size_t i = 0; i < m->nlisteners; i++) {
		const struct nm_listener *l = &m->listeners[i];
		char ev[256];

		if (l->node != mi || !l->fixed_port || l->port != m->master_port || !l->error[0])
			continue;
		snprintf(ev, sizeof(ev), "%s: bind to port %d failed: %s", mn->host, l->port,
		         l->error);
		/* The holder said it is clusterdoc's own listener: a concurrent
		 * check of this node (it lets the port go within seconds), or
		 * this run's for another name of the same machine. Neither is a
		 * stale job; only the first is worth a word. */
		if (strcmp(l->held_by, "this-run") == 0)
			continue;
		if (strcmp(l->held_by, "other-run") == 0) {
			snprintf(ev + strlen(ev), sizeof(ev) - strlen(ev),
			         " (held by another clusterdoc run)");
			diagnose_note(
			    st, "master-port-held-by-run", SEV_INFO, "", mi,
			    "%N: another clusterdoc run checking this node held MASTER_PORT at the "
			    "same time, so this run could not test binding it (not a stale job)",
			    "Nothing to fix: the port is free again when that run ends; run the "
			    "check alone to test it.",
			    ev);
			continue;
		}
		diagnose_note(
		    st, "master-port-in-use", SEV_ERROR, "", mi,
		    "%N: MASTER_PORT is already in use on the master (\"Address already in use\", "
		    "errno 98, from the TCPStore)",
		    "Stop the stale job holding the port (ss -ltnp), or use the MASTER_PORT "
		    "suggested below.",
		    ev);
	}
}

/* Fixed-port listeners: on the master, a blocked MASTER_PORT is an error;
 * on other nodes it is evidence that the port cannot move there. */
void diagnose_check_fixed_ports(struct dstate *st)
{
	const struct netmodel *m = st->m;

	for (size_t to = 0; to < m->nnodes; to++) {
		const struct nm_node *n = &m->nodes[to];
		const char *addr = st->d->pred[to].data_addr;
		int seen_addr = 0;

		if (!n->probed)
			continue;
		/* Judge on the address peers would use: the data address, else any
		 * address fixed-port attempts went to. */
		for (size_t k = 0; k < m->nattempts && !addr[0]; k++) {
			if (m->attempts[k].to == to && m->attempts[k].fixed_port)
				addr = m->attempts[k].addr;
		}
		for (size_t k = 0; k < m->nattempts; k++)
			seen_addr |= m->attempts[k].to == to && m->attempts[k].fixed_port &&
			             strcmp(m->attempts[k].addr, addr) == 0;
		if (!seen_addr)
			continue;
		{
			char worst[24], ev[1024];
			enum reach_status rs = diagnose_addr_reach(m, to, addr, 1, m->master_port,
			                                           worst, sizeof(worst));
			char *fails;
			const struct nm_fwrule *r;
			const char *how;

			if (rs != REACH_SOME_BAD ||
			    !diagnose_target_failures(m, to, addr, 1, m->master_port))
				continue;
			fails = diagnose_failed_attempts(m, to, addr, 1, m->master_port);
			r = port_rule(n, m->master_port);
			how = strcmp(worst, "timeout") == 0 ? "dropped (no answer)"
			      : strcmp(worst, "refused") == 0
			          ? "rejected (connection refused)"
			          : "rejected (host unreachable / administratively prohibited)";
			snprintf(ev, sizeof(ev), "%s: TCP port %d %s; %s%s%s%s", n->host,
			         m->master_port, how, fails, r ? "\n" : "", r ? r->tool : "",
			         r ? ": " : "");
			if (r)
				snprintf(ev + strlen(ev), sizeof(ev) - strlen(ev), "%s", r->text);
			free(fails);
			if (to == m->master)
				diagnose_note(
				    st, "master-port-blocked", SEV_ERROR, "", to,
				    "%N (the master): MASTER_PORT is blocked, so no worker can "
				    "join the "
				    "rendezvous (\"The client socket has timed out ... while "
				    "trying to "
				    "connect\")",
				    "Open MASTER_PORT for the cluster's nodes on the master (a "
				    "least-"
				    "privilege rule: TCP from the data subnet to that port), or "
				    "use the "
				    "MASTER_PORT suggested below.",
				    ev);
			else
				diagnose_note(
				    st, "firewall-blocks-port", SEV_WARNING, "", to,
				    "%N: a firewall blocks the MASTER_PORT candidate; this node "
				    "cannot "
				    "be the master with that port",
				    "Keep the master on another node, or allow that TCP port from "
				    "the "
				    "cluster's data subnet on this node.",
				    ev);
		}
	}
}

/*
 * The master's own connection to MASTER_ADDR:MASTER_PORT: torchrun's rank-0
 * agent makes it before any worker can join. It arrives on `lo`, so a drop
 * of the port with an accept for the data interface only (the peers' way
 * in) blocks the master alone: the job then hangs in its rendezvous while
 * every peer path is fine. Noted under master-port-blocked, whose message
 * is the peers' when they are blocked too (the first note's).
 */
void diagnose_check_master_self(struct dstate *st)
{
	const struct netmodel *m = st->m;
	size_t mi = m->master;
	const struct nm_node *mn;
	const struct nm_attempt *a;
	const struct nm_fwrule *r;
	const char *addr;
	char ev[512];
	int timeout;

	if (!m->matrix_done || mi >= m->nnodes || !m->nodes[mi].probed)
		return;
	mn = &m->nodes[mi];
	addr = st->d->pred[mi].data_addr;
	a = addr[0] ? diagnose_self_attempt(m, addr, m->master_port) : NULL;
	if (!a || strcmp(a->result, "ok") == 0)
		return;
	/* the rule goes with the first line that names the port: the peers'
	 * (check_fixed_ports) when they are blocked too */
	r = diagnose_target_failures(m, mi, addr, 1, m->master_port)
	        ? NULL
	        : port_rule(mn, m->master_port);
	timeout = strcmp(a->result, "timeout") == 0;
	snprintf(ev, sizeof(ev), "%s -> its own %s%s%s:%d: %s%s%s%s%s%s%s", mn->host,
	         strchr(addr, ':') ? "[" : "", addr, strchr(addr, ':') ? "]" : "", a->port,
	         timeout ? "timed out" : a->result, a->errno_name[0] && !timeout ? " (" : "",
	         timeout ? "" : a->errno_name, a->errno_name[0] && !timeout ? ")" : "",
	         r ? "\n" : "", r ? r->tool : "", r ? ": " : "");
	if (r)
		snprintf(ev + strlen(ev), sizeof(ev) - strlen(ev), "%s", r->text);
	diagnose_note(st, "master-port-blocked", SEV_ERROR, "", mi,
	              "%N (the master): MASTER_PORT is blocked for the master's own connection "
	              "to MASTER_ADDR (torchrun's rank-0 agent makes it, over lo), so the "
	              "rendezvous never starts although the workers reach the port",
	              "Let the node's own connections to its addresses in too (a rule for "
	              "`iifname lo` from the data subnet beside the data interface's; "
	              "`clusterdoc fix` adds both), or use the MASTER_PORT suggested below.",
	              ev);
}

/*
 * One node checked alone (check --local, or -w with one host): no peer
 * tries its MASTER_PORT candidate, and its own connection comes in on lo,
 * which a rule for the data interface does not see. Its firewall rules
 * are what is left to judge: one that drops or rejects the port (a policy
 * over every port is left out: without the peers, what it accepts is not
 * known) blocks the workers of a job whose master it is.
 */
void diagnose_check_master_alone(struct dstate *st)
{
	const struct netmodel *m = st->m;
	const struct nm_node *n = m->nnodes == 1 ? &m->nodes[0] : NULL;
	char ev[512];

	if (!n || !n->probed || !m->master_port)
		return;
	for (size_t q = 0; q < n->nfwrules; q++) {
		const struct nm_fwrule *r = &n->fwrules[q];

		if (r->port_lo > m->master_port || m->master_port > r->port_hi ||
		    (r->port_lo == 0 && r->port_hi == 65535))
			continue;
		snprintf(ev, sizeof(ev), "%s: %s %s TCP %d-%d, the MASTER_PORT candidate %d: %s",
		         n->host, r->tool, r->verdict, r->port_lo, r->port_hi, m->master_port,
		         r->text);
		diagnose_note(
		    st, "master-port-blocked", SEV_ERROR, "", 0,
		    "%N (the master, checked alone): a firewall rule drops or rejects "
		    "MASTER_PORT, so the workers of a job it leads cannot join the "
		    "rendezvous (\"The client socket has timed out ... while trying to "
		    "connect\")",
		    "Open MASTER_PORT for the cluster's nodes (a least-privilege rule: TCP "
		    "from the data subnet to that port, on the data interface and lo), or "
		    "use another MASTER_PORT (--port).",
		    ev);
	}
}
