/* SPDX-License-Identifier: MIT */
/*
 * ib_suggest.h - the suggested NCCL_IB_HCA and NCCL_IB_GID_INDEX, chosen
 * from the nodes' RDMA facts (netprobe's "rdma" and "rdma_node",
 * docs/nccl.md) and verified with the IB prediction (nccl_ib.h), as the
 * socket variables are verified with predict.h. Pure: no I/O.
 *
 * NCCL_IB_HCA: per node, "=" and the HCAs whose ports are ACTIVE and that
 * libibverbs lists (nccl_ib_port_listed: a provider serves them) (an HCA
 * with several ports of which not all are ACTIVE as "dev:port" items),
 * those nearest a GPU first where the node's gpu_pci paths and the ports'
 * pci_path are known (gpu_topo.h's distance). Suggested only when, on some
 * node, NCCL's pick with it differs from its pick as the node is set up;
 * then on every node where, set, it makes NCCL use exactly those ports.
 *
 * NCCL_IB_GID_INDEX: for the nodes with RoCE ports NCCL would use, the
 * lowest index that holds a RoCE v2 GID of the wanted family
 * (NCCL_IB_ADDR_FAMILY: AF_INET unless AF_INET6) on every such port of
 * every such node; when there is none, each node's own lowest one, and a
 * note says so. Kept only where, set, NCCL picks a v2 GID of that family
 * on every RoCE port of the node.
 */
#ifndef CD_PROBES_IB_SUGGEST_H
#define CD_PROBES_IB_SUGGEST_H

#include <stddef.h>

#include <jansson.h>

#include "nccl_ib.h"

#define IB_SUGGEST_HCA_MAX 128 /* the longest NCCL_IB_HCA value suggested */

/* One node, borrowed. rdma NULL (or no array) = a node without RDMA facts. */
struct ib_suggest_node {
	const char *host;
	const json_t *rdma;      /* the probe's "rdma" array */
	const json_t *rdma_node; /* the probe's "rdma_node" object */
	struct nccl_ib_env env;  /* the node's NCCL variables as they are */
	const char *version;     /* NCCL's version, NULL = unknown (newest) */
	const json_t *gpu_pci;   /* facts' "gpu_pci" ({"paths": {addr: path}}), or NULL */
};

struct ib_suggestion {
	char *hca;           /* NCCL_IB_HCA for every node, or NULL */
	char **hca_per_node; /* [n], NULL entries = none */
	int gid_index;       /* NCCL_IB_GID_INDEX for every node, or -1 */
	int *gid_per_node;   /* [n], -1 = none */
	char *notes;         /* why a value is missing or per node, one per line, or NULL */
};

/* Choose and verify; out is filled (ib_suggestion_fini frees it). */
void ib_suggest(const struct ib_suggest_node *nodes, size_t n, struct ib_suggestion *out);
void ib_suggestion_fini(struct ib_suggestion *s, size_t n);

/* The variables of one node as nccl_ib_env_from_json reads them, given a
 * lookup of the node's other sources (the conf files) for names the login
 * environment lacks: get(name, &source, ctx) returns the value or NULL. */
void ib_suggest_env(const json_t *rdma_node,
                    const char *(*get)(const char *name, const char **source, const void *ctx),
                    const void *ctx, struct nccl_ib_env *e);

#endif
