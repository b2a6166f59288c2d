/* SPDX-License-Identifier: MIT */
/*
 * rdma_matrix.h - the head's half of the matrix's RDMA proof (reach.h, "the
 * RDMA proof"): which HCA port and GID index each node proves with (the
 * ones NCCL would use there under the environment run and mnist set: the
 * check's suggested NCCL_IB_HCA and NCCL_IB_GID_INDEX for the node where it
 * suggests them, the login's variables otherwise; nccl_ib.h), which pairs
 * are tested and why the others are not, and the results in the model, the
 * report and the text. Head side; pure but for the jansson it reads and
 * writes.
 */
#ifndef CD_PROBES_RDMA_MATRIX_H
#define CD_PROBES_RDMA_MATRIX_H

#include <jansson.h>
#include <stddef.h>

struct nm_node;
struct nm_attempt;
struct netmodel;

/* One node's end of the proof. */
struct rdma_end {
	int ok;          /* 1: the node can take part */
	char device[64]; /* the port NCCL would use first, else the first ACTIVE one */
	int port;
	int gid_index; /* RoCE: NCCL's GID index; -1 on InfiniBand */
	int roce;      /* the port's link layer is Ethernet */
	char why[96];  /* !ok: "no libibverbs", "no RDMA device", "no ACTIVE port", ... */
	int has_ports; /* the facts list an RDMA port */
	/* RoCE: gid_index is the plan's NCCL_IB_GID_INDEX (1) or what the
	 * login's variables give (0: the plan sets none); login_gid_index is
	 * the latter either way (-1: none) */
	int gid_plan;
	int login_gid_index;
};

/* Node n's end, from its RDMA facts ("rdma", "rdma_node") and NCCL's
 * prediction there with the node's variables (diagnose_rdma_env) as the
 * plan changes them: plan_hca (NULL: none) for NCCL_IB_HCA and plan_gid
 * (-1: none) for NCCL_IB_GID_INDEX, the node's entries of
 * diagnose_suggest_ib, which the check knows before the matrix. Where NCCL
 * would not use IB even so (NCCL_IB_DISABLE, an NCCL_IB_HCA that matches
 * nothing), the fabric is proven with NCCL's pick without any variable. */
void rdma_matrix_end(const struct nm_node *n, const char *plan_hca, int plan_gid,
                     struct rdma_end *e);

/* Why the pair from -> to is not tested ("no libibverbs" for from's own
 * lack, "peer has no ACTIVE port" for to's, "link layers differ"), into
 * buf; NULL when both ends can take part. */

/* Whether the pair concerns RDMA at all: one of its nodes has a port (a
 * cluster without RDMA gets no proof and no "not tested" rows). */
int rdma_matrix_relevant(const struct rdma_end *from, const struct rdma_end *to);

const char *rdma_matrix_why_not(const struct rdma_end *from, const struct rdma_end *to, char *buf,
                                size_t len);

/* The `listen`/`connect` request's "rdma": {"device", "port", "gid_index"}. */
json_t *rdma_matrix_spec(const struct rdma_end *e);

/* Each write's bytes for a connect request with n tests: 4 MiB, less when
 * one node proves many pairs at once (a listener holds a buffer per
 * connector), never below 256 KiB. */
long rdma_matrix_bytes(size_t n);

/* An attempt's proof from a connect row or a report's matrix row ("rdma",
 * "rdma_why", "rdma_bytes", "rdma_ms", "rdma_local", "rdma_peer",
 * "active_mtu"; absent: not asked for). */
void rdma_matrix_set(struct nm_attempt *a, json_t *row);

/* The pair was not tested, for why. */
void rdma_matrix_not_tested(struct nm_attempt *a, const char *why);

/* Where each end's GID index came from (the plan's or the login's, and the
 * login's own index), from the ends the request was built with, onto an
 * attempt whose ends the proof answered with (rdma_matrix_set). */
void rdma_matrix_sources(struct nm_attempt *a, const struct rdma_end *from,
                         const struct rdma_end *to);

/* The same fields onto a report's matrix row (nothing when not asked);
 * rdma_local and rdma_peer add "gid_from" ("plan" or "login") and
 * "login_gid_index" where known. */
void rdma_matrix_json(const struct nm_attempt *a, json_t *row);

/* "ok 4.0 MiB in 2.1 ms (1997 MB/s), mlx5_0:1 gid 3 -> mlx5_0:1 gid 3,
 * MTU 1024" / "failed: transport retry counter exceeded (...)" / "not
 * tested: peer has no RDMA device", into buf. */
const char *rdma_matrix_text(const struct nm_attempt *a, char *buf, size_t len);

/* Which GID index each end of the attempt from host `from` to host `to`
 * proved and why: "GID index 3 at both ends, the plan's and the login's",
 * "node1 GID index 3, the plan's and the login's; node2 GID index 3, the
 * plan's (the login's 0 is what run and mnist replace)", "GID index 3 at
 * both ends, the login's (the plan sets none)"; "" where no end is a RoCE
 * end whose source is known. Into buf. */
const char *rdma_matrix_gid_text(const struct nm_attempt *a, const char *from, const char *to,
                                 char *buf, size_t len);

/* Whether a node of m has RDMA facts with a port (the text's RDMA section
 * is printed then). */
int rdma_matrix_any_port(const struct netmodel *m);

#endif
