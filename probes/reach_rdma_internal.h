/* SPDX-License-Identifier: MIT */
/*
 * reach_rdma_internal.h - what reach_rdma.c (the verbs context and its
 * queue pairs) and reach_rdma_try.c (the two halves of the exchange)
 * share. Not a public interface: include it only from probes/reach_rdma*.c.
 */
#ifndef CD_PROBES_REACH_RDMA_INTERNAL_H
#define CD_PROBES_REACH_RDMA_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "probes/reach_internal.h"
#include "probes/reach_rdma.h"
#include "probes/verbs_lib.h"

struct rdma_side {
	struct rdma_spec spec;
	struct verbs_lib v;
	struct cd_ibv_context *ctx;
	struct cd_ibv_pd *pd;
	struct cd_ibv_cq *cq;
	union cd_ibv_gid gid; /* at spec.gid_index; zero without one */
	unsigned lid;
	int mtu; /* the port's active MTU in bytes */
	/* the connector's source: the pattern, registered once for all tries */
	unsigned char *src;
	size_t src_bytes;
	struct cd_ibv_mr *src_mr;
};

/* The words of a completion status: the library's ibv_wc_status_str where
 * it has one, else rdma-core's (rdma_wc_status_name). */
const char *rdma_side_status(const struct rdma_side *s, int status);

/* A new RC QP on s, moved to INIT (remote writes allowed); NULL with why. */
struct cd_ibv_qp *rdma_qp_new(struct rdma_side *s, char *why, size_t len);

/* This end's endpoint for qp: s's port, LID, GID, a fresh PSN, and the
 * buffer (addr, rkey) the peer is told of. */
void rdma_local_endpoint(const struct rdma_side *s, const struct cd_ibv_qp *qp, uint64_t addr,
                         uint32_t rkey, struct rdma_endpoint *ep);

/* qp to RTR and RTS toward peer (reach_rdma.c says how); 0, or -1 with
 * why ("link layers differ", "ibv_modify_qp to RTR: ..."). */
int rdma_qp_connect(struct rdma_side *s, struct cd_ibv_qp *qp, const struct rdma_endpoint *self,
                    const struct rdma_endpoint *peer, char *why, size_t len);

#endif
