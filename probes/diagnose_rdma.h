/*
 * diagnose_rdma.h - the RDMA findings (docs/findings.md): rdma-port-down,
 * rdma-rate-mismatch, rdma-mtu-mismatch, rdma-memlock-low,
 * gpudirect-rdma-missing and nccl-ib-hca-stale, from each node's "rdma"
 * ports and "rdma_node" object of its netprobe answer (probes/netprobe.h),
 * kept as the agent sent them in the node's "rdma" object (netmodel.h).
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

/* NCCL's MAX_IB_DEVS: the most NCCL_IB_HCA entries NCCL reads. */
#define RDMA_HCA_MAX 32

/* One NCCL_IB_HCA entry: "<hca>[:<port>[:<rail>[:<plane>]]]". */
struct rdma_hca_entry {
	char name[64]; /* NCCL's netIf.prefix: cut at 63 bytes, as NCCL does */
	int port;      /* -1 when absent or empty (every port) */
};

struct rdma_hca_list {
	int exclude; /* a leading '^' */
	int exact;   /* a '=' (after the '^'): names are exact, not prefixes */
	size_t n;
	struct rdma_hca_entry e[RDMA_HCA_MAX];
};

/*
 * Parse an NCCL_IB_HCA value (len bytes of s, not NUL-terminated) as
 * NVIDIA/nccl's parseStringList (src/misc/utils.cc) does: an optional '^',
 * then an optional '=', then comma-separated entries; an entry whose name
 * is empty is skipped; the port is atoi() of the second ':' field (digits
 * after an optional sign, 0 when none), -1 when that field is absent or
 * empty; past RDMA_HCA_MAX entries the rest is ignored. Pure; never fails.
 * Returns out->n (0: no list, which NCCL takes as every HCA).
 */
size_t rdma_hca_parse(const char *s, size_t len, struct rdma_hca_list *out);

/* Whether NCCL would take HCA dev's port for entry e (matchIfList): the
 * name is a prefix of dev (exact: equal to it) and the entry has no port
 * or that port. */
int rdma_hca_entry_matches(const struct rdma_hca_entry *e, int exact, const char *dev, int port);

struct dstate;

/* Note every RDMA finding of the model (diagnose.c's checks[] runs it). */
void diagnose_check_rdma(struct dstate *st);

#endif
