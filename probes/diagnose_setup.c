/* SPDX-License-Identifier: MIT */
/*
 * diagnose_setup.c - the checks of each node's setup and its agreement with
 * the other nodes: firewall rules inside the ephemeral port range,
 * data-interface MTUs and names, software versions, /dev/shm
 * and NCCL's version (see diagnose.h).
 */
#include "diagnose.h"
#include "diagnose_internal.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Evidence lines are bounded on purpose: a line cut at its buffer's end
 * still says what was seen, and no agent can make one grow without end. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

#define GIB (1024LL * 1024 * 1024)

/* Static evidence: a rule that drops part of the ephemeral range while the
 * active test happened to pick an open port. */
void diagnose_check_fw_rules(struct dstate *st)
{
	const struct netmodel *m = st->m;

	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_node *n = &m->nodes[i];

		for (size_t k = 0; n->probed && n->port_lo && k < n->nfwrules; k++) {
			const struct nm_fwrule *r = &n->fwrules[k];
			char ev[512];

			if (r->port_hi < n->port_lo || r->port_lo > n->port_hi)
				continue;
			if (r->port_lo == 0 && r->port_hi == 65535)
				continue; /* a policy: the matrix says what passes */
			snprintf(ev, sizeof(ev),
			         "%s: %s %s TCP %d-%d, inside ip_local_port_range %d-%d: %s",
			         n->host, r->tool, r->verdict, r->port_lo, r->port_hi, n->port_lo,
			         n->port_hi, r->text);
			diagnose_note(
			    st, "firewall-blocks-port", SEV_WARNING, "ephemeral", i,
			    "%N: a firewall rule drops or rejects part of the ephemeral port range "
			    "NCCL and Gloo listen on; connections fail at random",
			    "Allow the whole ip_local_port_range between the cluster's nodes, or "
			    "shrink the range to ports the firewall allows.",
			    ev);
		}
	}
}

/* The network of node i's data address ("" when unknown), and its data
 * interface's MTU (0 when unknown). */
static int data_network(const struct dstate *st, size_t i, char *net, size_t len)
{
	const struct nm_node *n = &st->m->nodes[i];
	const struct nm_iface *f = nm_iface_find(n, st->d->pred[i].data_iface);
	const struct nm_addr *a = diagnose_addr_find(n, st->d->pred[i].data_addr);

	net[0] = '\0';
	if (!n->probed || !f || !f->mtu || !a)
		return 0;
	diagnose_network_of(a, net, len);
	return f->mtu;
}

/* MTUs are compared like with like: the data interfaces on one network
 * (an address and its prefix), never one node's NIC on one network with
 * another node's on another. */
static void check_mtu_on(struct dstate *st, const char *net)
{
	const struct netmodel *m = st->m;
	char other[NM_ADDR + 8], *ev = NULL;
	int first = 0, differ = 0, mtu;

	for (size_t i = 0; i < m->nnodes; i++) {
		mtu = data_network(st, i, other, sizeof(other));
		if (!mtu || strcmp(other, net) != 0)
			continue;
		if (!first)
			first = mtu;
		differ |= mtu != first;
	}
	if (!differ)
		return;
	for (size_t i = 0; i < m->nnodes; i++) {
		mtu = data_network(st, i, other, sizeof(other));
		if (!mtu || strcmp(other, net) != 0)
			continue;
		cd_strcatf(&ev, "%s%s: %s mtu %d (network %s)", ev ? "\n" : "", m->nodes[i].host,
		           st->d->pred[i].data_iface, mtu, net);
		diagnose_note(
		    st, "mtu-mismatch", SEV_WARNING, net, i,
		    "%N: the data interfaces have different MTUs; large transfers can stall "
		    "(RDMA: \"local length error\"), small ones pass",
		    "Set one MTU on every node's data interface (and the switch ports).", NULL);
	}
	diagnose_note(st, "mtu-mismatch", SEV_WARNING, net, SIZE_MAX, "", "", ev);
	free(ev);
}

void diagnose_check_mtu(struct dstate *st)
{
	char net[NM_ADDR + 8], seen[NM_ADDR + 8];

	for (size_t i = 0; i < st->m->nnodes; i++) {
		size_t j;

		if (!data_network(st, i, net, sizeof(net)))
			continue;
		for (j = 0; j < i; j++) {
			if (data_network(st, j, seen, sizeof(seen)) && strcmp(seen, net) == 0)
				break;
		}
		if (j == i) /* the first node on this network */
			check_mtu_on(st, net);
	}
}

/* Whether another interface of node i was passed over for a refuted
 * address (diagnose_addr_refused): its data interface's name then differs
 * because of that finding, not because the NICs are named differently. */
static int passed_over(const struct netmodel *m, size_t i, const char *chosen)
{
	const struct nm_node *n = &m->nodes[i];

	for (size_t k = 0; k < n->naddrs; k++) {
		if (strcmp(n->addrs[k].ifname, chosen) != 0 &&
		    diagnose_addr_refused(m, i, &n->addrs[k], NULL, 0))
			return 1;
	}
	return 0;
}

void diagnose_check_nic_names(struct dstate *st)
{
	const struct netmodel *m = st->m;
	const char *first = NULL;
	int differ = 0;
	char *ev = NULL;

	for (size_t i = 0; i < m->nnodes; i++) {
		const char *name = st->d->pred[i].data_iface;

		if (!name[0] || passed_over(m, i, name))
			continue;
		if (!first)
			first = name;
		differ |= strcmp(first, name) != 0;
	}
	if (!differ)
		return;
	for (size_t i = 0; i < m->nnodes; i++) {
		if (!st->d->pred[i].data_iface[0] || passed_over(m, i, st->d->pred[i].data_iface))
			continue;
		cd_strcatf(&ev, "%s%s: %s %s", ev ? "\n" : "", m->nodes[i].host,
		           st->d->pred[i].data_iface, st->d->pred[i].data_addr);
		diagnose_note(
		    st, "nic-name-mismatch", SEV_WARNING, "", i,
		    "%N: the data interface has different names on different nodes, so one "
		    "GLOO_SOCKET_IFNAME cannot fit all and NCCL_SOCKET_IFNAME must list every name",
		    "Use the per-node GLOO_SOCKET_IFNAME and the NCCL_SOCKET_IFNAME suggested "
		    "below (or rename the NICs consistently with udev rules).",
		    NULL);
	}
	diagnose_note(st, "nic-name-mismatch", SEV_WARNING, "", SIZE_MAX, "", "", ev);
	free(ev);
}

void diagnose_check_software(struct dstate *st)
{
	const struct netmodel *m = st->m;
	static const struct {
		const char *what;
		size_t off;
		enum severity sev;
	} comps[] = {
	    {"torch", offsetof(struct nm_node, torch_version), SEV_ERROR},
	    {"NCCL", offsetof(struct nm_node, nccl_version), SEV_ERROR},
	    {"Python", offsetof(struct nm_node, python_version), SEV_WARNING},
	};

	for (size_t c = 0; c < CD_ARRAY_LEN(comps); c++) {
		const char *first = NULL;
		int differ = 0;

		for (size_t i = 0; i < m->nnodes; i++) {
			const char *v = (const char *)&m->nodes[i] + comps[c].off;

			if (!v[0])
				continue;
			if (!first)
				first = v;
			differ |= strcmp(first, v) != 0;
		}
		if (!differ)
			continue;
		for (size_t i = 0; i < m->nnodes; i++) {
			const char *v = (const char *)&m->nodes[i] + comps[c].off;
			char line[256];

			if (!v[0])
				continue;
			snprintf(line, sizeof(line), "%s: %s %s", m->nodes[i].host, comps[c].what,
			         v);
			diagnose_note(
			    st, "version-mismatch", comps[c].sev, comps[c].what, i,
			    comps[c].sev == SEV_ERROR
			        ? "%N: versions differ across nodes; mismatched NCCL/torch builds "
			          "hang or fail (\"message truncated\")"
			        : "%N: Python versions differ across nodes",
			    "Install the same versions on every node (one image or one "
			    "environment).",
			    line);
		}
	}
}

/* The interpreter every node that lacks torch has it in, or NULL when they
 * have none or different ones. */
static const char *common_torch_python(const struct netmodel *m)
{
	const char *common = NULL;

	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_node *n = &m->nodes[i];

		if (!n->probed || !n->torch_known || n->torch_version[0])
			continue;
		if (!n->python_found[0] || (common && strcmp(common, n->python_found) != 0))
			return NULL;
		common = n->python_found;
	}
	return common;
}

/*
 * torch-missing: the interpreter a job would use cannot import torch. When
 * the agent found torch in another interpreter (facts' python_candidates),
 * the evidence names it and the fix gives the --python to pass.
 */
void diagnose_check_torch(struct dstate *st)
{
	const struct netmodel *m = st->m;
	size_t missing = 0, known = 0, found = 0;
	const char *common = common_torch_python(m);
	char *ev = NULL, *fix;

	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_node *n = &m->nodes[i];

		if (!n->probed || !n->torch_known)
			continue;
		known++;
		if (n->torch_version[0])
			continue;
		missing++;
		cd_strcatf(&ev, "%s%s: %s %s has no torch", ev ? "\n" : "", n->host,
		           n->python_path[0] ? n->python_path : "python3",
		           n->python_version[0] ? n->python_version : "(not found)");
		if (n->python_found[0]) {
			found++;
			cd_strcatf(&ev, "; torch is in %s (Python %s)", n->python_found,
			           n->python_found_version);
			if (n->python_found_count > 1)
				cd_strcatf(&ev, " and %d more", n->python_found_count - 1);
		}
	}
	if (!missing) {
		free(ev);
		return;
	}
	if (common)
		fix = cd_asprintf(
		    "Pass --python %s to clusterdoc facts, check, mnist, run and tui (torch is "
		    "there on every node that lacks it), or activate that "
		    "environment in the non-interactive login (~/.bashrc before "
		    "the interactive guard).",
		    common);
	else if (found)
		fix = cd_strdup("Pass --python with an interpreter that has torch on every node "
		                "(the evidence names what was found on each), or install the "
		                "same torch on every node.");
	else
		fix = cd_strdup("Install the same torch on every node, or activate its "
		                "environment in the non-interactive login (~/.bashrc before the "
		                "interactive guard), or pass --python with the interpreter "
		                "that has it.");
	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_node *n = &m->nodes[i];

		if (n->probed && n->torch_known && !n->torch_version[0])
			diagnose_note(
			    st, "torch-missing", missing == known ? SEV_WARNING : SEV_ERROR, "", i,
			    missing == known ? "%N: PyTorch is not importable by the "
			                       "python a job would use (the login "
			                       "python3 over SSH, or --python)"
			                     : "%N: PyTorch is missing here but installed "
			                       "on the other nodes",
			    fix, NULL);
	}
	diagnose_note(st, "torch-missing", SEV_WARNING, "", SIZE_MAX, "", "", ev);
	free(fix);
	free(ev);
}

/* The neighbour table: overflowing during the matrix (evidence the drops
 * happened), or a hard limit below the number of peers (they will). */
void diagnose_check_neigh_table(struct dstate *st)
{
	const struct netmodel *m = st->m;
	static const char *const fam[2] = {"net.ipv4", "net.ipv6"};

	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_node *n = &m->nodes[i];
		char ev[256];

		if (!n->probed)
			continue;
		if (n->neigh_fulls > 0) {
			snprintf(ev, sizeof(ev),
			         "%s: neighbour table full %lld times during the test "
			         "(/proc/net/stat/arp_cache, ndisc_cache: table_fulls)",
			         n->host, (long long)n->neigh_fulls);
			diagnose_note(
			    st, "neigh-table-overflow", SEV_ERROR, "", i,
			    "%N: the kernel's neighbour (ARP/NDP) table overflowed while peers "
			    "were "
			    "tested; packets to a peer whose address it could not resolve are "
			    "dropped, so connects time out (dmesg: \"neighbor table overflow\")",
			    "Raise net.ipv4.neigh.default.gc_thresh3 and gc_thresh2 (and the "
			    "net.ipv6 ones) above the number of peer addresses, for example "
			    "sysctl -w net.ipv4.neigh.default.gc_thresh3=8192, and persist it in "
			    "/etc/sysctl.d/.",
			    ev);
			continue;
		}
		for (int f = 0; f < 2; f++) {
			if (n->neigh_thresh3[f] < 0 || (int64_t)m->nnodes - 1 < n->neigh_thresh3[f])
				continue;
			snprintf(ev, sizeof(ev),
			         "%s: %s.neigh.default.gc_thresh3 = %lld, peers: %zu", n->host,
			         fam[f], (long long)n->neigh_thresh3[f], m->nnodes - 1);
			diagnose_note(
			    st, "neigh-table-overflow", SEV_WARNING, "", i,
			    "%N: the kernel's neighbour table holds fewer entries than there are "
			    "peers; a job on every node overflows it and connects time out",
			    "Raise gc_thresh3 (and gc_thresh2) above the number of peer addresses "
			    "and persist it in /etc/sysctl.d/.",
			    ev);
			break;
		}
	}
}

/* A part of the probe that did not answer is reported, not guessed. */
void diagnose_check_probe_incomplete(struct dstate *st)
{
	const struct netmodel *m = st->m;

	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_node *n = &m->nodes[i];
		char ev[CD_ERRLEN + 300];

		if (!n->probed || !n->python_error[0])
			continue;
		snprintf(ev, sizeof(ev), "%s: %s", n->host, n->python_error);
		diagnose_note(st, "probe-incomplete", SEV_WARNING, "", i,
		              "%N: could not tell whether PyTorch is installed (the login python3 "
		              "did not answer); the torch and version checks skip it",
		              "Run the check again; a first torch import on a cold cache can take "
		              "many seconds on a loaded node, and one that outlives the deadline "
		              "goes on in the background on the node and caches its facts, so the "
		              "next check finds them warm (a longer -t waits for it).",
		              ev);
	}
}

void diagnose_check_shm_and_versions(struct dstate *st)
{
	const struct netmodel *m = st->m;

	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_node *n = &m->nodes[i];
		char ev[256];

		if (!n->probed)
			continue;
		if (n->shm_bytes >= 0 && n->shm_bytes < GIB) {
			snprintf(ev, sizeof(ev), "%s: /dev/shm is %lld MiB", n->host,
			         (long long)(n->shm_bytes / (1024 * 1024)));
			diagnose_note(
			    st, "shm-small", SEV_WARNING, "", i,
			    "%N: /dev/shm is smaller than 1 GiB; NCCL and DataLoader workers fail "
			    "with \"failed to extend /dev/shm\" or bus errors (Docker's default is "
			    "64 MiB)",
			    "Enlarge it: docker run --shm-size=16g (or --ipc=host), or a larger "
			    "tmpfs for /dev/shm.",
			    ev);
		}
		if (!n->nccl_version[0] && n->gpus > 0) {
			snprintf(ev, sizeof(ev), "%s: no NCCL version found (torch or libnccl)",
			         n->host);
			diagnose_note(
			    st, "nccl-version-unknown", SEV_INFO, "", i,
			    "%N: NCCL's version is unknown; the prediction follows NCCL 2.28.3+ "
			    "rules",
			    "Nothing to do unless the predicted NCCL line differs from NCCL's log.",
			    ev);
		}
	}
}
