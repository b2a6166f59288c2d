/* SPDX-License-Identifier: MIT */
/*
 * diagnose_rdma.h - the RDMA findings (docs/findings.md): rdma-port-down,
 * rdma-rate-mismatch, rdma-mtu-mismatch, rdma-memlock-low,
 * gpudirect-rdma-missing and nccl-ib-hca-stale, from each node's "rdma"
 * ports and "rdma_node" object of its netprobe answer (probes/netprobe.h),
 * kept as the agent sent them in the node's "rdma" object (netmodel.h);
 * nccl-ib-fallback and roce-gid-mismatch from what NCCL will pick there
 * (probes/nccl_ib.h's nccl_ib_predict, the NCCL_IB_HCA parser too).
 *
 * Only a node whose probe has "rdma_node" (an agent that reads the RDMA
 * facts) and at least one RDMA port is judged; a field that is null or
 * absent says nothing, so an older agent's answer gives no finding.
 */
#ifndef CD_PROBES_DIAGNOSE_RDMA_H
#define CD_PROBES_DIAGNOSE_RDMA_H

#include <stddef.h>

/*
 * The smallest memlock limit (bytes) NCCL's IB transport can work under:
 * what it registers with ibv_reg_mr for one connection on one channel when
 * the buffers are in host memory (no GPUDirect RDMA): one buffer per
 * protocol, NVIDIA/nccl src/init.cc DEFAULT_LL_BUFFSIZE (8 lines x 512
 * threads x 8 steps x 16 bytes = 524288) + DEFAULT_LL128_BUFFSIZE (120
 * elements x 640 threads x 8 steps x 8 bytes = 4915200) + DEFAULT_BUFFSIZE
 * (NCCL_BUFFSIZE's default, 4 MiB), each registered by
 * src/transport/net.cc through the network's regMr. A job needs a multiple
 * of it (channels x peers); NCCL's troubleshooting guide says to lift the
 * limit ("memlock unlimited"), and a limit below this fails the first
 * connection ("NCCL WARN Call to ibv_reg_mr failed").
 */
#define RDMA_MEMLOCK_MIN_BYTES (524288LL + 4915200LL + 4194304LL)

struct dstate;
struct nm_node;
struct nccl_ib_pick;
struct nccl_ib_env;

/* Note every RDMA finding of the model (diagnose.c's checks[] runs it). */
void diagnose_check_rdma(struct dstate *st);

/* What NCCL will pick on node n (nccl_ib_predict) as the check predicts it:
 * its "rdma" facts and NCCL variables (the login environment the RDMA facts
 * saw, else netmodel's), for NCCL version ("2.21.5", NULL = newest). The
 * bench compares it with NCCL's own lines. */
void diagnose_rdma_predict(const struct nm_node *n, const char *version, struct nccl_ib_pick *pk);

/* The two halves of diagnose_rdma_predict, for a prediction under other
 * values (the bench's, under the check's plan): node n's NCCL variables
 * as the check reads them (borrowing from n), and nccl_ib_predict over n's
 * RDMA facts with the variables e. */
struct nccl_ib_env;
void diagnose_rdma_env(const struct nm_node *n, struct nccl_ib_env *e);
void diagnose_rdma_predict_env(const struct nm_node *n, const char *version,
                               const struct nccl_ib_env *e, struct nccl_ib_pick *pk);

#endif
