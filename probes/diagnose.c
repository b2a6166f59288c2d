/* SPDX-License-Identifier: MIT */
/*
 * diagnose.c - findings and verified suggestions from the network model;
 * this file holds the catalogue, the accumulation and merging of findings,
 * the matrix lookups the checks share, and the entry point.
 *
 * The order of work: predict what NCCL and Gloo pick on every node as it is
 * configured now; judge every picked address against the matrix; look at
 * what is static (names, MTUs, versions, /dev/shm, firewall rules); then
 * choose a data interface per node that every peer reached, and only then
 * build and re-verify the suggested environment with the same predictors.
 */
#include "diagnose.h"
#include "diagnose_internal.h"
#include "diagnose_rdma.h"
#include "hostlist.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Evidence lines are bounded on purpose: a line cut at its buffer's end
 * still says what was seen, and no agent can make one grow without end. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

const struct finding_def finding_catalogue[] = {
    {"node-unreachable", SEV_ERROR, "a node could not be checked"},
    {"ipv6-no-route", SEV_ERROR, "an IPv6 address NCCL/Gloo would use is unreachable"},
    {"link-local-selected", SEV_ERROR, "NCCL/Gloo would use a link-local address"},
    {"iface-unreachable", SEV_ERROR, "an address NCCL/Gloo would use is unreachable"},
    {"hostname-loopback", SEV_ERROR, "the hostname resolves to a loopback address"},
    {"stale-ifname-env", SEV_ERROR, "a set NCCL/GLOO interface variable is wrong"},
    {"gloo-count-mismatch", SEV_ERROR, "nodes would create different numbers of Gloo devices"},
    {"duplicate-address", SEV_ERROR, "the same address exists on several nodes"},
    {"master-port-blocked", SEV_ERROR, "MASTER_PORT on the master is not reachable"},
    {"master-port-in-use", SEV_ERROR, "MASTER_PORT is already taken on the master"},
    {"master-port-held-by-run", SEV_INFO, "another clusterdoc run held MASTER_PORT meanwhile"},
    {"ephemeral-ports-blocked", SEV_ERROR, "ephemeral ports are blocked on a node"},
    {"firewall-blocks-port", SEV_WARNING, "a firewall drops or rejects a port a job may use"},
    {"route-egress-mismatch", SEV_WARNING, "traffic would leave through another interface"},
    {"multiple-nics-same-subnet", SEV_WARNING, "two NICs of a node hold addresses in one subnet"},
    {"virtual-iface-selected", SEV_WARNING, "NCCL/Gloo would use a virtual interface"},
    {"nic-name-mismatch", SEV_WARNING, "the data interface has different names on the nodes"},
    {"mtu-mismatch", SEV_WARNING, "the data interfaces have different MTUs"},
    {"path-mtu-blackhole", SEV_ERROR, "connections open but large transfers stall (MTU)"},
    {"bulk-transfer-slow", SEV_WARNING, "a transfer stalled on a path that carries full frames"},
    {"version-mismatch", SEV_ERROR, "torch, NCCL or Python versions differ across nodes"},
    {"torch-missing", SEV_ERROR, "PyTorch is not installed for the login python3"},
    {"shm-small", SEV_WARNING, "/dev/shm is small"},
    {"neigh-table-overflow", SEV_ERROR, "the kernel's neighbour (ARP/NDP) table is too small"},
    {"probe-incomplete", SEV_WARNING, "part of a node's probe did not answer"},
    {"nccl-version-unknown", SEV_INFO, "NCCL's version is unknown; newest rules assumed"},
    {"ascend-probe-incomplete", SEV_WARNING, "the NPU probe is incomplete"},
    {"ascend-ip-plan", SEV_ERROR, "the device IP plan breaks the Ascend rules"},
    {"ascend-duplicate-address", SEV_ERROR, "the same device address is used twice"},
    {"ascend-link-down", SEV_ERROR, "a device link is down"},
    {"ascend-net-health", SEV_ERROR, "a device's network health is not success"},
    {"ascend-tls-mismatch", SEV_ERROR, "TLS settings differ across devices"},
    {"ascend-hccl-settings", SEV_INFO, "HCCL settings verified for the Ascend nodes"},
    {"gpu-missing", SEV_ERROR, "a node has fewer GPUs than it should"},
    {"expect-gpus", SEV_ERROR, "a node's GPU count is not the [expect] gpus"},
    {"expect-ib-rate", SEV_ERROR, "an ACTIVE RDMA port is slower than the [expect] ib-rate"},
    {"expect-mtu", SEV_ERROR, "an interface's MTU is not the [expect] mtu"},
    {"expect-driver", SEV_ERROR, "the NVIDIA driver is not the [expect] driver"},
    {"gpu-ecc-uncorrectable", SEV_ERROR, "a GPU has uncorrectable ECC errors"},
    {"gpu-row-remap-pending", SEV_ERROR, "a GPU needs a reset to remap a memory row"},
    {"gpu-retired-pages-pending", SEV_ERROR, "a GPU needs a reset to retire a memory page"},
    {"gpu-row-remap-failure", SEV_ERROR, "a GPU could not remap a memory row"},
    {"gpu-row-remap-unknown", SEV_INFO, "a MIG-enabled GPU's remapped rows cannot be read"},
    {"gpu-xid", SEV_ERROR, "the kernel log has Xid errors of a GPU"},
    {"gpu-pcie-degraded", SEV_WARNING, "a GPU's PCIe link runs below its maximum"},
    {"gpu-nvlink-down", SEV_WARNING, "an NVLink link of a GPU is down"},
    {"gpu-throttled", SEV_WARNING, "a GPU is throttled by power or heat"},
    {"gpu-persistence-off", SEV_WARNING, "GPU persistence mode is off"},
    {"gpu-mig-mismatch", SEV_WARNING, "the GPUs' MIG mode differs across the nodes"},
    {"gpu-nic-far", SEV_WARNING, "every GPU is across the CPU interconnect from the data NIC"},
    {"peer-ssh-hostkey-unknown", SEV_ERROR, "a node does not know another node's SSH host key"},
    {"peer-ssh-hostkey-changed", SEV_ERROR, "a node holds another host key for a peer"},
    {"peer-ssh-denied", SEV_ERROR, "a node cannot log in to another without a password"},
    {"peer-ssh-unreachable", SEV_ERROR, "a node cannot open an SSH connection to another"},
    {"peer-ssh-no-client", SEV_ERROR, "a node has no ssh client for mpirun to use"},
    {"peer-ssh-failed", SEV_ERROR, "node-to-node SSH failed for another reason"},
    {"gpu-slow", SEV_WARNING, "a GPU is slower than the median of its model"},
    {"gpu-dcgm-fail", SEV_ERROR, "DCGM's diagnostic fails a test of a GPU"},
    {"gpu-dcgm-warn", SEV_WARNING, "DCGM's diagnostic warns about a test of a GPU"},
    {"gpu-dcgm-absent", SEV_INFO, "DCGM is not installed on a node"},
    {"rdma-port-down", SEV_WARNING, "an RDMA port is not ACTIVE or its link is not up"},
    {"rdma-rate-mismatch", SEV_WARNING, "RDMA ports run at different rates"},
    {"rdma-mtu-mismatch", SEV_WARNING, "RDMA ports have different MTUs"},
    {"rdma-memlock-low", SEV_ERROR,
     "the memlock limit is below what NCCL's IB transport registers"},
    {"gpudirect-rdma-missing", SEV_WARNING, "GPUs and RDMA ports but no peer-memory module"},
    {"nccl-ib-hca-stale", SEV_WARNING, "NCCL_IB_HCA names an HCA the node lacks"},
    {"nccl-ib-fallback", SEV_ERROR, "NCCL will use sockets on a node that has RDMA ports"},
    {"roce-gid-mismatch", SEV_ERROR,
     "the RoCE GID NCCL would use differs in type or address family across nodes"},
    {"rdma-pair-failed", SEV_ERROR, "an RDMA write between two nodes failed"},
};
const size_t finding_catalogue_len = CD_ARRAY_LEN(finding_catalogue);

const char *severity_name(enum severity s)
{
	return s == SEV_ERROR ? "error" : s == SEV_WARNING ? "warning" : "info";
}

/* ---------------------------------------------------------------- text */

/* The hosts of a node set, folded like nodeset -f ("node[1-3]"). */
char *diagnose_fold_nodes(const struct netmodel *m, const size_t *idx, size_t n)
{
	struct hostlist *hl = hostlist_new();
	char *s;

	hl->names = cd_calloc(n ? n : 1, sizeof(char *));
	hl->capacity = n ? n : 1;
	for (size_t i = 0; i < n; i++)
		hl->names[hl->count++] = cd_strdup(m->nodes[idx[i]].host);
	s = hostlist_fold(hl);
	hostlist_free(hl);
	return s;
}

/* ---------------------------------------------------------------- findings */

/*
 * Findings of one id that share a key (the same cause) merge: the nodes and
 * evidence lines accumulate, and the message's "%N" is replaced by the
 * folded node set when the diagnosis is finished.
 */
struct pending {
	const char *id;
	enum severity severity;
	char *key;
	size_t *nodes;
	size_t nnodes;
	char *message; /* may hold "%N" */
	char *evidence;
	char *fix;
};

static const struct finding_def *def_of(const char *id)
{
	for (size_t i = 0; i < finding_catalogue_len; i++) {
		if (strcmp(finding_catalogue[i].id, id) == 0)
			return &finding_catalogue[i];
	}
	cd_fatal("finding id \"%s\" is not in the catalogue", id);
}

/* Find or create the pending finding (id, key); add node (unless SIZE_MAX)
 * and one evidence line. message and fix are taken from the first call. */
struct pending *diagnose_note(struct dstate *st, const char *id, enum severity sev, const char *key,
                              size_t node, const char *message, const char *fix,
                              const char *evidence)
{
	struct pending *p = NULL;
	int have = 0;

	(void)def_of(id);
	for (size_t i = 0; i < st->np; i++) {
		if (strcmp(st->p[i].id, id) == 0 && strcmp(st->p[i].key, key) == 0)
			p = &st->p[i];
	}
	if (!p) {
		st->p = cd_realloc(st->p, (st->np + 1) * sizeof(*st->p));
		p = &st->p[st->np++];
		memset(p, 0, sizeof(*p));
		p->id = id;
		p->severity = sev;
		p->key = cd_strdup(key);
		p->message = cd_strdup(message);
		p->fix = cd_strdup(fix);
	}
	if (sev < p->severity)
		p->severity = sev;
	for (size_t i = 0; i < p->nnodes; i++)
		have |= p->nodes[i] == node;
	if (node != SIZE_MAX && !have) {
		p->nodes = cd_realloc(p->nodes, (p->nnodes + 1) * sizeof(size_t));
		p->nodes[p->nnodes++] = node;
	}
	if (evidence && evidence[0])
		cd_strcatf(&p->evidence, "%s%s", p->evidence ? "\n" : "", evidence);
	return p;
}

static char *expand_nodes(const char *msg, const char *nodes)
{
	const char *at = strstr(msg, "%N");
	char *out = NULL;

	if (!at)
		return cd_strdup(msg);
	cd_strcatf(&out, "%.*s%s%s", (int)(at - msg), msg, nodes, at + 2);
	return out;
}

static int cmp_finding(const void *pa, const void *pb)
{
	const struct finding *a = pa, *b = pb;

	if (a->severity != b->severity)
		return (int)a->severity - (int)b->severity;
	return strcmp(a->id, b->id);
}

static void finish_findings(struct dstate *st)
{
	struct diagnosis *d = st->d;

	d->findings = cd_calloc(st->np + 1, sizeof(*d->findings));
	for (size_t i = 0; i < st->np; i++) {
		struct pending *p = &st->p[i];
		struct finding *f = &d->findings[d->nfindings++];
		char *nodes = diagnose_fold_nodes(st->m, p->nodes, p->nnodes);

		f->id = p->id;
		f->severity = p->severity;
		f->nodes = p->nodes;
		f->nnodes = p->nnodes;
		f->message = expand_nodes(p->message, nodes[0] ? nodes : "the cluster");
		f->evidence = p->evidence ? p->evidence : cd_strdup("");
		f->fix = p->fix;
		free(nodes);
		free(p->message);
		free(p->key);
		if (f->severity == SEV_ERROR)
			d->errors++;
		else if (f->severity == SEV_WARNING)
			d->warnings++;
	}
	free(st->p);
	qsort(d->findings, d->nfindings, sizeof(*d->findings), cmp_finding);
}

/* ---------------------------------------------------------------- the matrix */

int diagnose_is_loopback_text(const char *addr)
{
	struct nm_addr a = {0};

	snprintf(a.addr, sizeof(a.addr), "%s", addr);
	return nm_addr_is_loopback(&a);
}

int diagnose_is_link_local_text(const char *addr)
{
	struct nm_addr a = {0};

	snprintf(a.addr, sizeof(a.addr), "%s", addr);
	return nm_addr_is_link_local(&a);
}

int diagnose_attempt_toward(const struct nm_attempt *a, size_t to, const char *addr, int fixed_port,
                            int port)
{
	return a->to == to && a->from != to && a->fixed_port == fixed_port &&
	       strcmp(a->addr, addr) == 0 && (!port || a->port == port) &&
	       strcmp(a->result, "not-tested") != 0;
}

enum reach_status diagnose_addr_reach(const struct netmodel *m, size_t to, const char *addr,
                                      int fixed_port, int port, char *worst, size_t worst_len)
{
	size_t ok = 0, bad = 0;

	if (worst_len)
		worst[0] = '\0';
	if (diagnose_is_loopback_text(addr))
		return REACH_LOOPBACK;
	for (size_t i = 0; i < m->nattempts; i++) {
		const struct nm_attempt *a = &m->attempts[i];

		if (!diagnose_attempt_toward(a, to, addr, fixed_port, port))
			continue;
		if (strcmp(a->result, "ok") == 0) {
			ok++;
		} else if (diagnose_route_astray(m, a->from, addr)) {
			continue; /* the sender's own route's fault, never the target's */
		} else {
			if (!bad && worst_len)
				snprintf(worst, worst_len, "%s", a->result);
			bad++;
		}
	}
	if (bad)
		return REACH_SOME_BAD;
	return ok ? REACH_ALL_OK : REACH_UNKNOWN;
}

/* ---------------------------------------------------------------- classification */

int diagnose_virtual_name(const char *name)
{
	static const char *const prefixes[] = {
	    "docker", "virbr", "veth",   "br-",   "cni",   "flannel", "cali", "tailscale", "wg",
	    "vxlan",  "lxc",   "podman", "weave", "kube-", "tun",     "tap",  "zt",        "vnet",
	};

	for (size_t i = 0; i < CD_ARRAY_LEN(prefixes); i++) {
		if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	}
	return 0;
}

/* ---------------------------------------------------------------- predictions */

static void predict_all(const struct netmodel *m, struct diagnosis *d)
{
	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_node *n = &m->nodes[i];
		struct node_prediction *p = &d->pred[i];
		struct net_env e;

		if (!n->probed)
			continue;
		nccl_version_parse(n->nccl_version, &p->version);
		net_env_of(n, &e);
		nccl_predict(n, &e, &p->version, NCCL_PREDICT_MAX_IFS, &p->nccl);
		nccl_predict(n, &e, &p->version, 1, &p->bootstrap);
		gloo_predict(n, &e, &p->gloo);
	}
}

/* ---------------------------------------------------------------- entry */

int finding_names(const struct finding *f, size_t i)
{
	for (size_t q = 0; q < f->nnodes; q++)
		if (f->nodes[q] == i)
			return 1;
	return 0;
}

/* Every check, in the order it runs: the order of the findings within a
 * severity. */
static void (*const checks[])(struct dstate *st) = {
    /* between the nodes: what NCCL and Gloo would use */
    diagnose_check_unreachable_nodes,
    diagnose_check_used_addresses,
    diagnose_check_virtual_and_lo,
    diagnose_check_hostname,
    diagnose_check_stale_env,
    diagnose_check_gloo_count,
    diagnose_check_duplicates,
    diagnose_check_master_bind,
    diagnose_check_fixed_ports,
    diagnose_check_master_self,
    diagnose_check_master_alone,
    /* each node's setup */
    diagnose_check_fw_rules,
    diagnose_check_bulk,
    diagnose_check_mtu,
    diagnose_check_nic_names,
    diagnose_check_route_egress,
    diagnose_check_nics_same_subnet,
    diagnose_check_software,
    diagnose_check_torch,
    diagnose_check_shm_and_versions,
    diagnose_check_neigh_table,
    diagnose_check_probe_incomplete,
    /* Ascend NPUs and HCCL */
    diagnose_check_ascend,
    /* NVIDIA GPUs */
    diagnose_check_gpu,
    /* InfiniBand and RoCE */
    diagnose_check_rdma,
    diagnose_check_rdma_pairs,
    /* what the configuration declares the node has ([expect]) */
    diagnose_check_expect,
};

struct diagnosis *diagnose(const struct netmodel *m)
{
	struct diagnosis *d = cd_calloc(1, sizeof(*d));
	struct dstate st = {.m = m, .d = d};

	d->nnodes = m->nnodes;
	d->pred = cd_calloc(m->nnodes ? m->nnodes : 1, sizeof(*d->pred));
	predict_all(m, d);
	diagnose_choose_data_ifaces(m, d);

	for (size_t c = 0; c < sizeof(checks) / sizeof(checks[0]); c++)
		checks[c](&st);
	finish_findings(&st);
	diagnose_suggest(m, d);
	return d;
}

struct diagnosis *diagnose_predictions(const struct netmodel *m)
{
	struct diagnosis *d = cd_calloc(1, sizeof(*d));

	d->nnodes = m->nnodes;
	d->pred = cd_calloc(m->nnodes ? m->nnodes : 1, sizeof(*d->pred));
	predict_all(m, d);
	return d;
}

void diagnosis_free(struct diagnosis *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nfindings; i++) {
		free(d->findings[i].nodes);
		free(d->findings[i].message);
		free(d->findings[i].evidence);
		free(d->findings[i].fix);
	}
	free(d->findings);
	for (size_t i = 0; d->sugg.torchrun && i < d->nnodes; i++) { /* none: predictions only */
		free(d->sugg.nccl_ifname_per_node[i]);
		free(d->sugg.gloo_ifname_per_node[i]);
		free(d->sugg.torchrun[i]);
	}
	free(d->sugg.nccl_ifname_per_node);
	free(d->sugg.gloo_ifname_per_node);
	free(d->sugg.torchrun);
	free(d->sugg.nccl_ifname);
	free(d->sugg.notes);
	ib_suggestion_fini(&d->sugg.ib, d->nnodes);
	free(d->pred);
	free(d);
}
