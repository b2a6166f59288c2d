/* SPDX-License-Identifier: MIT */
/*
 * bench_net.h - NCCL's own word on its network in `clusterdoc bench
 * --backend nccl`, on the head: the NCCL_DEBUG=INFO lines a node's
 * bench_run sent ("nccl_net", collectives/nccl_netlog.h) read with
 * probes/nccl_ib.h's nccl_ib_parse_log, and compared (nccl_ib_compare) with
 * the prediction from the node's probe (its "rdma" facts, its NCCL
 * variables, the NCCL version of bench_caps). Pure: no I/O.
 */
#ifndef CD_COLLECTIVES_BENCH_NET_H
#define CD_COLLECTIVES_BENCH_NET_H

#include <stddef.h>

#include <jansson.h>

#include "cd.h"
#include "probes/nccl_ib.h"

struct bench_net {
	struct nccl_ib_pick used;      /* NCCL's lines, parsed */
	struct nccl_ib_pick predicted; /* the caller's, from the probe */
	int agrees;                    /* 1 the same, 0 they differ, -1 a side is unknown */
	char why[512];                 /* nccl_ib_compare's words; "" when they agree */
	char error[CD_ERRLEN];         /* the node could not read NCCL's lines, or "" */
	json_t *lines;                 /* the lines as the node sent them (owned), or NULL */
	long long dropped;             /* lines the node left out (nccl_netlog.h) */
	/* a fallback to sockets the node's login caused and a check's plan
	 * would avoid: "with NCCL_IB_HCA==mlx5_0 (a check's plan) NCCL would use
	 * NET/IB mlx5_0:1/RoCE", set by the caller after bench_net_judge; "" */
	char avoid[512];
};

/* Read nccl_net (bench_run's object: {"lines", "file", "dropped"} or
 * {"error"}) into net->used and compare it with net->predicted, which the
 * caller has filled. A missing or malformed object is an error in words
 * ("no nccl_net in bench_run's answer"). net's earlier lines are released. */
void bench_net_judge(const json_t *nccl_net, struct bench_net *net);

/* Release what net holds (not net itself). */
void bench_net_fini(struct bench_net *net);

/* One line for host ("" without the "host: " prefix when NULL), e.g.
 *   "node1: NCCL used NET/IB [0]mlx5_0:1/RoCE (predicted: the same)"
 *   "node4: NCCL used NET/Socket [0]eth0:10.0.0.1<0> (NET/IB : No device
 *    found.) (predicted: the same, as NCCL_IB_HCA=mlx5_9 (from environment)
 *    matches no HCA of the node (mlx5_0)); a check's plan would avoid it:
 *    with NCCL_IB_HCA==mlx5_0 NCCL would use NET/IB mlx5_0:1/RoCE" (the
 *    prediction's reason whenever it is sockets; avoid when set)
 *   "node1: NCCL used NET/Socket [0]eth0:10.0.0.1<0> (NET/IB : No device
 *    found.); predicted NET/IB mlx5_0:1/RoCE"
 *   "node1: NCCL used NET/IB [0]mlx5_0:1/RoCE [1]mlx5_2:1/RoCE; predicted
 *    NET/IB mlx5_0:1/RoCE mlx5_1:1/RoCE: NCCL also used mlx5_2:1; NCCL did
 *    not use mlx5_1:1"
 *   "node1: NCCL used NET/Socket ... (no prediction: no RDMA facts)"
 *   "node1: NCCL's lines name no network; predicted NET/Socket (no ACTIVE port)"
 *   "node1: NCCL's lines could not be read (...); predicted ..." */
void bench_net_line(const struct bench_net *net, const char *host_or_null, char *buf, size_t len);

/* {"nccl": {"transport", "devices": [{"device", "port", "link_layer"}],
 * "reason", "socket", "lines", "dropped"}, "predicted": {"transport",
 * "devices": [{..., "gid_index"}], "reason"}, "agrees": bool or null (a
 * side unknown), "why", "error", "avoidable"}; empty strings and zero
 * counts are left out. New reference. */
json_t *bench_net_json(const struct bench_net *net);

#endif
