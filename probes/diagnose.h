/* SPDX-License-Identifier: MIT */
/*
 * diagnose.h - diagnose(model) -> findings + suggestions: a pure function of
 * the network model (netmodel.h), unit tested on fixture clusters.
 *
 * Findings come from one const table (finding_catalogue); every id is
 * documented in docs/findings.md with the NCCL/Gloo/torch messages it
 * explains. Ids are never renamed, only added.
 *
 * Suggestions are only made when the matrix proved them: an interface is
 * suggested for a node only when every other checked node reached that
 * node's address on it (an ephemeral-port listener), and a MASTER_PORT only
 * when every node reached it on the master.
 */
#ifndef CD_PROBES_DIAGNOSE_H
#define CD_PROBES_DIAGNOSE_H

#include "netmodel.h"
#include "ib_suggest.h"
#include "predict.h"

enum severity { SEV_ERROR = 0, SEV_WARNING = 1, SEV_INFO = 2 };

const char *severity_name(enum severity s);

struct finding_def {
	const char *id;
	enum severity severity; /* the usual severity; a finding may differ */
	const char *title;      /* one line: what is wrong */
};

extern const struct finding_def finding_catalogue[];
extern const size_t finding_catalogue_len;

struct finding {
	const char *id;
	enum severity severity;
	size_t *nodes; /* indexes into the model's nodes */
	size_t nnodes;
	char *message;  /* one line a newcomer understands, naming the nodes */
	char *evidence; /* what was observed, one fact per line */
	char *fix;      /* what to do */
};

/* What NCCL and Gloo would pick on one node, as it is configured now. */
struct node_prediction {
	struct nccl_prediction nccl;      /* socket transport list */
	struct nccl_prediction bootstrap; /* the first interface */
	struct gloo_prediction gloo;
	struct nccl_version version;
	char data_iface[NM_NAME]; /* the interface suggested for this node, "" = none */
	char data_addr[NM_ADDR];
};

struct suggestions {
	/* NCCL_SOCKET_IFNAME for every node, or NULL when nodes need
	 * different values (nccl_ifname_per_node then). */
	char *nccl_ifname;
	char **nccl_ifname_per_node; /* [nnodes], NULL entries = none verified */
	char **gloo_ifname_per_node; /* [nnodes] */
	int nccl_family_inet;        /* suggest NCCL_SOCKET_FAMILY=AF_INET */
	int nccl_family_inet6;       /* suggest NCCL_SOCKET_FAMILY=AF_INET6 (IPv6 data only) */
	char master_addr[NM_ADDR];   /* "" = none verified */
	int master_port;             /* 0 = none verified */
	char **torchrun;             /* [nnodes], NULL when not every value is known */
	char *notes;                 /* why something is missing, one per line, or NULL */
	/* NCCL_IB_HCA and NCCL_IB_GID_INDEX (ib_suggest.h), over the model's
	 * nodes; its notes are also in notes */
	struct ib_suggestion ib;
};

/* The NCCL_SOCKET_FAMILY value suggested ("AF_INET", "AF_INET6"), or NULL
 * when none is. The string is static. */
const char *diagnose_sugg_family(const struct suggestions *s);

/* The suggested master as the URL torch.distributed.init_process_group's
 * init_method takes: "tcp://10.0.0.1:29500", an IPv6 address bracketed
 * ("tcp://[fd00::1]:29500"). MASTER_ADDR and torchrun's --master_addr take
 * the bare address. Returns 0, or -1 (buf "") when no MASTER_ADDR and
 * MASTER_PORT were verified. */
int diagnose_sugg_init_method(const struct suggestions *s, char *buf, size_t len);

struct diagnosis {
	struct finding *findings; /* sorted: worst severity first, then by id */
	size_t nfindings;
	struct node_prediction *pred; /* [nnodes] */
	struct suggestions sugg;
	size_t nnodes;
	int errors, warnings; /* counts by severity */
};

struct diagnosis *diagnose(const struct netmodel *m);
/* Only pred[] (what NCCL and Gloo pick on each probed node): no findings,
 * no suggestions. What the check needs before the matrix, for a fraction
 * of diagnose's work. Freed with diagnosis_free. */
struct diagnosis *diagnose_predictions(const struct netmodel *m);

/* NCCL_IB_HCA and NCCL_IB_GID_INDEX as the check suggests them (ib_suggest.h)
 * over the model's complete nodes: a function of the probes alone (each
 * node's RDMA facts, NCCL variables, NCCL version, GPU PCI paths), so it is
 * known before the matrix, and the matrix's RDMA proof proves the pairs with
 * it (rdma_matrix.h) as run and mnist will set it; the bench, with no plan,
 * says with it what a check's plan would set. diagnose's suggestions.ib is
 * this. out is freed with ib_suggestion_fini(out, m->nnodes). */
void diagnose_suggest_ib(const struct netmodel *m, struct ib_suggestion *out);

/* Whether finding f names node i (an index into the model's nodes). */
int finding_names(const struct finding *f, size_t i);
void diagnosis_free(struct diagnosis *d);

/* The reachability of one address of node `to` on its ephemeral listener,
 * over the attempts of every other checked node. A failed attempt whose
 * sender's own route toward addr leaves another NIC (route-egress-mismatch,
 * the sender's fault) is not counted against the target. */
enum reach_status {
	REACH_UNKNOWN,  /* not tested (no matrix, one node, no listener) */
	REACH_ALL_OK,   /* every peer reached it */
	REACH_SOME_BAD, /* at least one peer did not */
	REACH_LOOPBACK, /* a loopback address: peers reach themselves */
};
enum reach_status diagnose_addr_reach(const struct netmodel *m, size_t to, const char *addr,
                                      int fixed_port, int port, char *worst, size_t worst_len);

#endif
