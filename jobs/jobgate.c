/* SPDX-License-Identifier: MIT */
/*
 * jobgate.c - the gate of a job: which findings its plan avoids (jobgate.h).
 */
#include "jobgate.h"
#include "cd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A clause cut at its buffer's end still names the node and the variable. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

/* How the plan's environment can avoid a finding on the node it names. */
enum job_avoid {
	AVOID_NONE,    /* nothing in the environment helps */
	AVOID_GLOO,    /* GLOO_SOCKET_IFNAME (Gloo binds to that interface's address) */
	AVOID_NCCL,    /* NCCL_SOCKET_IFNAME, per node */
	AVOID_IFNAMES, /* NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME, both proved */
	AVOID_PORT,    /* a proved MASTER_PORT other than the one the check found bad */
	AVOID_JOB,     /* the job checks it itself, with what it will really use */
	AVOID_IB_HCA,  /* NCCL_IB_HCA, verified against the IB prediction, per node */
	AVOID_IB_GID,  /* NCCL_IB_GID_INDEX, verified to pick a RoCE v2 GID of the family, per node
	                */
};

/* Which jobs a finding concerns: what their collectives use (jobgate.h's
 * JOB_USES_*). */
enum job_concern {
	EVERY_JOB, /* any job on the node: sockets, the store, the GPUs, the node */
	NCCL_IB,   /* only NCCL's IB transport (verbs: InfiniBand, RoCE); a Gloo job
	              never opens a verbs device */
};

struct job_gate_rule {
	const char *id;
	int between_nodes; /* about traffic between nodes: no one-node job meets it */
	enum job_avoid avoid;
	enum job_concern concerns;
	enum job_drain drain; /* whether `check --drain` and the Prolog fail the node */
};

static const struct job_gate_rule rules[] = {
    {"node-unreachable", 0, AVOID_NONE, EVERY_JOB, DRAINS},
    {"ipv6-no-route", 1, AVOID_IFNAMES, EVERY_JOB, DRAIN_NOT_AVOIDED},
    {"link-local-selected", 1, AVOID_IFNAMES, EVERY_JOB, DRAIN_NOT_AVOIDED},
    {"iface-unreachable", 1, AVOID_IFNAMES, EVERY_JOB, DRAIN_NOT_AVOIDED},
    {"hostname-loopback", 1, AVOID_GLOO, EVERY_JOB, DRAIN_NOT_AVOIDED},
    /* a stale name breaks NCCL on its own node too; the plan's value wins */
    {"stale-ifname-env", 0, AVOID_IFNAMES, EVERY_JOB, DRAIN_NOT_LOGIN},
    {"gloo-count-mismatch", 1, AVOID_GLOO, EVERY_JOB, DRAIN_NOT_AVOIDED},
    /* an address on several nodes (docker0): the proved interfaces keep jobs off it */
    {"duplicate-address", 1, AVOID_IFNAMES, EVERY_JOB, DRAIN_NOT_AVOIDED},
    {"master-port-blocked", 1, AVOID_PORT, EVERY_JOB, DRAIN_NOT_AVOIDED},
    /* taken on the master: a one-node job's store cannot listen either */
    {"master-port-in-use", 0, AVOID_PORT, EVERY_JOB, DRAIN_NOT_AVOIDED},
    {"master-port-held-by-run", 0, AVOID_NONE, EVERY_JOB, DRAINS},
    {"ephemeral-ports-blocked", 1, AVOID_NONE, EVERY_JOB, DRAINS},
    {"firewall-blocks-port", 1, AVOID_NONE, EVERY_JOB, DRAINS},
    {"route-egress-mismatch", 1, AVOID_NONE, EVERY_JOB, DRAINS},
    {"multiple-nics-same-subnet", 1, AVOID_NONE, EVERY_JOB, DRAINS},
    {"virtual-iface-selected", 1, AVOID_IFNAMES, EVERY_JOB, DRAIN_NOT_AVOIDED},
    {"nic-name-mismatch", 1, AVOID_NCCL, EVERY_JOB, DRAIN_NOT_AVOIDED},
    {"mtu-mismatch", 1, AVOID_NONE, EVERY_JOB, DRAINS},
    {"path-mtu-blackhole", 1, AVOID_NONE, EVERY_JOB, DRAINS},
    {"bulk-transfer-slow", 1, AVOID_NONE, EVERY_JOB, DRAINS},
    {"version-mismatch", 1, AVOID_NONE, EVERY_JOB, DRAIN_NOT_LOGIN},
    /* the check asks the login python3; a job checks the interpreter it starts
     * (--python), and --launcher none or mnist's embedded mode need no torch */
    {"torch-missing", 0, AVOID_JOB, EVERY_JOB, DRAIN_NOT_LOGIN},
    {"shm-small", 0, AVOID_NONE, EVERY_JOB, DRAINS},
    {"neigh-table-overflow", 1, AVOID_NONE, EVERY_JOB, DRAINS},
    {"probe-incomplete", 0, AVOID_NONE, EVERY_JOB, DRAINS},
    {"nccl-version-unknown", 0, AVOID_NONE, EVERY_JOB, DRAINS},
    {"ascend-probe-incomplete", 0, AVOID_NONE, EVERY_JOB, DRAINS},
    {"ascend-ip-plan", 1, AVOID_NONE, EVERY_JOB, DRAINS},
    {"ascend-duplicate-address", 1, AVOID_NONE, EVERY_JOB, DRAINS},
    {"ascend-link-down", 1, AVOID_NONE, EVERY_JOB, DRAINS},
    {"ascend-net-health", 1, AVOID_NONE, EVERY_JOB, DRAINS},
    {"ascend-tls-mismatch", 1, AVOID_NONE, EVERY_JOB, DRAINS},
    {"ascend-hccl-settings", 0, AVOID_NONE, EVERY_JOB, DRAINS},
    /* a GPU's own state breaks a job on its node alone too; the MIG modes
     * and the GPU-NIC distance matter between nodes */
    {"gpu-missing", 0, AVOID_NONE, EVERY_JOB, DRAINS},
    {"gpu-ecc-uncorrectable", 0, AVOID_NONE, EVERY_JOB, DRAINS},
    {"gpu-row-remap-pending", 0, AVOID_NONE, EVERY_JOB, DRAINS},
    {"gpu-retired-pages-pending", 0, AVOID_NONE, EVERY_JOB, DRAINS},
    {"gpu-row-remap-failure", 0, AVOID_NONE, EVERY_JOB, DRAINS},
    {"gpu-row-remap-unknown", 0, AVOID_NONE, EVERY_JOB, DRAINS},
    {"gpu-xid", 0, AVOID_NONE, EVERY_JOB, DRAINS},
    {"gpu-pcie-degraded", 0, AVOID_NONE, EVERY_JOB, DRAINS},
    {"gpu-nvlink-down", 0, AVOID_NONE, EVERY_JOB, DRAINS},
    {"gpu-throttled", 0, AVOID_NONE, EVERY_JOB, DRAINS},
    {"gpu-persistence-off", 0, AVOID_NONE, EVERY_JOB, DRAINS},
    {"gpu-mig-mismatch", 1, AVOID_NONE, EVERY_JOB, DRAINS},
    {"gpu-nic-far", 1, AVOID_NONE, EVERY_JOB, DRAINS},
    {"gpu-slow", 0, AVOID_NONE, EVERY_JOB, DRAINS},
    {"gpu-dcgm-fail", 0, AVOID_NONE, EVERY_JOB, DRAINS},
    {"gpu-dcgm-warn", 0, AVOID_NONE, EVERY_JOB, DRAINS},
    {"gpu-dcgm-absent", 0, AVOID_NONE, EVERY_JOB, DRAINS},
    /* NCCL's IB transport carries only the traffic between nodes, and only a
     * job that uses it (not --backend gloo) meets these */
    {"rdma-port-down", 1, AVOID_NONE, NCCL_IB, DRAINS},
    {"rdma-rate-mismatch", 1, AVOID_NONE, NCCL_IB, DRAINS},
    {"rdma-mtu-mismatch", 1, AVOID_NONE, NCCL_IB, DRAINS},
    /* the login's ulimit -l: a Slurm job gets slurmd's or the submitting shell's */
    {"rdma-memlock-low", 1, AVOID_NONE, NCCL_IB, DRAIN_NOT_LOGIN},
    {"gpudirect-rdma-missing", 1, AVOID_NONE, NCCL_IB, DRAINS},
    /* the plan's verified NCCL_IB_HCA replaces the stale one */
    {"nccl-ib-hca-stale", 1, AVOID_IB_HCA, NCCL_IB, DRAIN_NOT_LOGIN},
    {"nccl-ib-fallback", 1, AVOID_NONE, NCCL_IB, DRAINS},
    /* the plan's verified per-node NCCL_IB_GID_INDEX picks a RoCE v2 GID of one family */
    {"roce-gid-mismatch", 1, AVOID_IB_GID, NCCL_IB, DRAIN_NOT_LOGIN},
    /* the pair's RDMA write failed: nothing in the environment mends the fabric,
     * and nothing says which of the two nodes is at fault (no drain) */
    {"rdma-pair-failed", 1, AVOID_NONE, NCCL_IB, DRAIN_NOT_PAIR},
    /* a node unlike what the site declared ([expect]): its GPUs and driver
     * break a job on it alone; the IB rate and the MTU matter between nodes */
    {"expect-gpus", 0, AVOID_NONE, EVERY_JOB, DRAINS},
    {"expect-driver", 0, AVOID_NONE, EVERY_JOB, DRAINS},
    {"expect-ib-rate", 1, AVOID_NONE, NCCL_IB, DRAINS},
    {"expect-mtu", 1, AVOID_NONE, EVERY_JOB, DRAINS},
    /* node-to-node SSH is mpirun's way to start ranks on the other nodes */
    {"peer-ssh-hostkey-unknown", 1, AVOID_NONE, EVERY_JOB, DRAIN_NOT_LOGIN},
    {"peer-ssh-hostkey-changed", 1, AVOID_NONE, EVERY_JOB, DRAIN_NOT_LOGIN},
    {"peer-ssh-denied", 1, AVOID_NONE, EVERY_JOB, DRAIN_NOT_LOGIN},
    {"peer-ssh-unreachable", 1, AVOID_NONE, EVERY_JOB, DRAIN_NOT_LOGIN},
    {"peer-ssh-no-client", 1, AVOID_NONE, EVERY_JOB, DRAIN_NOT_LOGIN},
    {"peer-ssh-failed", 1, AVOID_NONE, EVERY_JOB, DRAIN_NOT_LOGIN},
};

size_t job_gate_rules_len(void)
{
	return CD_ARRAY_LEN(rules);
}

const char *job_gate_rule_id(size_t k)
{
	return k < CD_ARRAY_LEN(rules) ? rules[k].id : NULL;
}

const struct job_gate_rule *job_gate_rule(const char *id)
{
	for (size_t k = 0; k < CD_ARRAY_LEN(rules); k++)
		if (strcmp(rules[k].id, id) == 0)
			return &rules[k];
	return NULL;
}

enum job_drain job_gate_drain(const char *id)
{
	const struct job_gate_rule *r = job_gate_rule(id);

	return r ? r->drain : DRAINS;
}

const char *job_gate_drain_why(enum job_drain d)
{
	switch (d) {
	case DRAINS:
		break;
	case DRAIN_NOT_AVOIDED:
		return "the environment clusterdoc suggests (run, mnist, env) avoids it";
	case DRAIN_NOT_LOGIN:
		return "it comes from the checking user's login environment, not the node";
	case DRAIN_NOT_PAIR:
		return "it is between two nodes and does not say which one is at fault";
	}
	return "the node's own state";
}

int job_gate_concerns(const char *id, unsigned uses)
{
	const struct job_gate_rule *r = job_gate_rule(id);

	return !r || r->concerns == EVERY_JOB || (uses & JOB_USES_NCCL_IB);
}

/* The clause of one node ("GLOO_SOCKET_IFNAME=eth0 on node2"), or 0 when
 * the plan does not avoid the finding there. */
static int node_avoids(const struct job_plan *p, enum job_avoid how, size_t i, char *out,
                       size_t len)
{
	const struct job_plan_node *n = &p->nodes[i];

	if (!n->proved)
		return 0;
	switch (how) {
	case AVOID_GLOO:
		if (!n->gloo_ifname[0])
			return 0;
		snprintf(out, len, "on %s by GLOO_SOCKET_IFNAME=%s", n->host, n->gloo_ifname);
		return 1;
	case AVOID_NCCL:
		if (!n->nccl_ifname[0])
			return 0;
		snprintf(out, len, "on %s by NCCL_SOCKET_IFNAME=%s", n->host, n->nccl_ifname);
		return 1;
	case AVOID_IFNAMES:
		if (!n->nccl_ifname[0] || !n->gloo_ifname[0])
			return 0;
		snprintf(out, len, "on %s by NCCL_SOCKET_IFNAME=%s%s%s GLOO_SOCKET_IFNAME=%s",
		         n->host, n->nccl_ifname, n->nccl_family[0] ? " NCCL_SOCKET_FAMILY=" : "",
		         n->nccl_family, n->gloo_ifname);
		return 1;
	case AVOID_IB_HCA:
		if (!n->nccl_ib_hca[0])
			return 0;
		snprintf(out, len, "on %s by NCCL_IB_HCA=%s", n->host, n->nccl_ib_hca);
		return 1;
	case AVOID_IB_GID:
		if (!n->nccl_ib_gid_index[0])
			return 0;
		snprintf(out, len, "on %s by NCCL_IB_GID_INDEX=%s", n->host, n->nccl_ib_gid_index);
		return 1;
	case AVOID_NONE:
	case AVOID_PORT:
	case AVOID_JOB:
		break;
	}
	return 0;
}

int job_gate_avoided(const struct job_plan *p, const struct job_plan_finding *f, int one_node,
                     char *out, size_t len)
{
	const struct job_gate_rule *r = job_gate_rule(f->id);
	size_t used = 0;

	if (len)
		out[0] = '\0';
	if (!r)
		return 0;
	if (one_node && r->between_nodes) {
		snprintf(out, len, "in a one-node job: nothing crosses a network");
		return 1;
	}
	if (r->avoid == AVOID_PORT) {
		if (!p->master_port_proved || p->master_port == p->port_tried)
			return 0;
		snprintf(out, len, "on %s by MASTER_PORT=%d (proved; %d is not usable)",
		         p->nodes[p->master].host, p->master_port, p->port_tried);
		return 1;
	}
	if (r->avoid == AVOID_JOB) {
		snprintf(out, len, "for the job to check: it tries the interpreter it starts");
		return 1;
	}
	if (r->avoid == AVOID_NONE || f->nnodes == 0)
		return 0;
	for (size_t k = 0; k < f->nnodes; k++) {
		char clause[512];

		if (f->nodes[k] >= p->n ||
		    !node_avoids(p, r->avoid, f->nodes[k], clause, sizeof(clause))) {
			if (len)
				out[0] = '\0';
			return 0;
		}
		if (used < len)
			used +=
			    (size_t)snprintf(out + used, len - used, "%s%s", k ? "; " : "", clause);
	}
	return 1;
}

int job_gate_judge(const struct job_plan *p, int one_node, char **refused, char **avoided)
{
	return job_gate_judge_for(p, one_node, JOB_USES_ALL, refused, avoided);
}

/* "  id: message" and up to three of its evidence lines below it. */
static void add_refused(char **refused, const struct job_plan_finding *f)
{
	const char *e = f->evidence ? f->evidence : "";
	int lines = 0, left = 0;

	cd_strcatf(refused, "  %s: %s\n", f->id, f->message);
	while (*e) {
		const char *nl = strchr(e, '\n');
		int n = nl ? (int)(nl - e) : (int)strlen(e);

		if (lines < 3 && n)
			cd_strcatf(refused, "      %.*s\n", n, e);
		else if (n)
			left++;
		lines += n > 0;
		e += n + (nl ? 1 : 0);
	}
	if (left)
		cd_strcatf(refused, "      (%d more: `clusterdoc check` shows them all)\n", left);
}

int job_gate_leave_out(const struct job_plan *p, int one_node, unsigned uses, const char ***hosts)
{
	char *bad = cd_calloc(p->n ? p->n : 1, 1), why[1024];
	size_t nbad = 0, k;
	int ok = 1;

	*hosts = NULL;
	for (k = 0; k < p->nfindings && ok; k++) {
		const struct job_plan_finding *f = &p->findings[k];

		if (f->severity != SEV_ERROR || !job_gate_concerns(f->id, uses) ||
		    job_gate_avoided(p, f, one_node, why, sizeof(why)))
			continue;
		ok = job_gate_drain(f->id) == DRAINS && f->nnodes > 0;
		for (size_t j = 0; ok && j < f->nnodes; j++)
			if (f->nodes[j] < p->n && !bad[f->nodes[j]]) {
				bad[f->nodes[j]] = 1;
				nbad++;
			}
	}
	if (ok && nbad && nbad < p->n) {
		size_t at = 0;

		*hosts = cd_calloc(nbad + 1, sizeof(**hosts));
		for (k = 0; k < p->n; k++)
			if (bad[k])
				(*hosts)[at++] = p->nodes[k].host;
	}
	free(bad);
	return *hosts != NULL;
}

int job_gate_judge_for(const struct job_plan *p, int one_node, unsigned uses, char **refused,
                       char **avoided)
{
	int gating = 0;

	for (size_t k = 0; k < p->nfindings; k++) {
		const struct job_plan_finding *f = &p->findings[k];
		char why[1024];

		/* an error the job's transports never meet is said, not counted */
		if (!job_gate_concerns(f->id, uses)) {
			if (avoided && f->severity == SEV_ERROR)
				cd_strcatf(avoided,
				           "not for this job: %s (NCCL's IB transport only): %s\n",
				           f->id, f->message);
			continue;
		}
		if (job_gate_avoided(p, f, one_node, why, sizeof(why))) {
			if (avoided)
				cd_strcatf(avoided, "avoided: %s %s\n", f->id, why);
			continue;
		}
		if (f->severity != SEV_ERROR)
			continue;
		gating++;
		if (refused)
			add_refused(refused, f);
	}
	return gating;
}
