/* SPDX-License-Identifier: MIT */
/*
 * nccl_ib.h - what NCCL's network layer will pick on one node: its IB
 * transport (which "dev:port" list, which RoCE GID index) or the socket
 * fallback and why, predicted from the node's RDMA facts (netprobe's "rdma"
 * array and "rdma_node" object, docs/nccl.md) and its NCCL variables.
 * Pure: no I/O, no system call; the JSON is only read.
 *
 * The rules, from NVIDIA/nccl src/transport/net_ib.cc (net_ib/init.cc and
 * net_ib/connect.cc in 2.23+) and the environment page
 * docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html:
 *   - NCCL_IB_DISABLE set to a non-zero integer: ncclIbInit returns an
 *     error at once, NCCL goes on with NET/Socket.
 *   - No libibverbs: wrap_ibv_symbols fails, same fallback.
 *   - Every port whose state is ACTIVE and whose link layer is InfiniBand
 *     or Ethernet (RoCE) is a device, unless NCCL_IB_HCA filters it
 *     (ncclIbInit; physical state is not looked at).
 *   - NCCL_IB_HCA: a leading '^' excludes, then a leading '=' makes names
 *     exact; items split on ',', "name:port" limits to that port
 *     (parseStringList, matchIfList: prefix match by strncmp of the item's
 *     length, a port only when given). No item (unset or empty) matches
 *     every port, so "^" alone excludes every port.
 *   - No device left: "NET/IB : No device found." and NET/Socket.
 *   - NCCL_NET=Socket (case-insensitive, net.cc) skips IB altogether.
 *   - The GID index of a RoCE port (ncclIbGetGidIndex): NCCL_IB_GID_INDEX
 *     when >= 0; else, since 2.21, index 0 then each index from 1 is
 *     weighed by ncclUpdateGidIndex under NCCL_IB_ADDR_FAMILY (AF_INET
 *     unless "AF_INET6"), NCCL_IB_ROCE_VERSION_NUM (2) and
 *     NCCL_IB_ADDR_RANGE (CIDR, none by default); before 2.21 the default
 *     index is 0. An InfiniBand port is addressed by its LID: gid_index -1.
 */
#ifndef CD_PROBES_NCCL_IB_H
#define CD_PROBES_NCCL_IB_H

#include <stddef.h>

#include <jansson.h>

#include "nccl_list.h"

#define NCCL_IB_MAX_DEVS 32 /* MAX_IB_DEVS of recent NCCL (16 in older ones) */

enum nccl_ib_transport {
	NCCL_IB_UNKNOWN = 0, /* no RDMA facts to predict from, or no NCCL line */
	NCCL_IB_IB,
	NCCL_IB_SOCKET,
	NCCL_IB_PLUGIN, /* NCCL's lines name another network ("Using network X") */
};

/* "ib", "socket", "plugin", "unknown". */
const char *nccl_ib_transport_name(enum nccl_ib_transport t);

struct nccl_ib_dev {
	char dev[64];
	int port;
	int roce;            /* 1 = Ethernet link layer ("/RoCE"), 0 = InfiniBand ("/IB") */
	int gid_index;       /* RoCE: the index NCCL uses; -1 on IB or when unknown */
	int gid_type;        /* the chosen GID's RoCE version: 1, 2, or -1 (unknown) */
	char gid_family[16]; /* "ipv4", "ipv6", "link-local", "ib", "zero" */
	char gid_address[48];
	char note[160]; /* why the GID is doubtful ("no GID at index 5"), or "" */
};

/* NCCL_IB_HCA is NCCL's list syntax (nccl_list.h), read with at most
 * NCCL_IB_MAX_DEVS items: nccl_list_parse(value, NCCL_IB_MAX_DEVS, &l). */

/* A variable and where it came from; value NULL = unset. */
struct nccl_ib_var {
	const char *value;
	const char *source; /* "environment", "/etc/nccl.conf", ... */
};

struct nccl_ib_env {
	struct nccl_ib_var ib_hca, ib_disable, ib_gid_index, ib_roce_version_num;
	struct nccl_ib_var ib_addr_family, ib_addr_range, net;
};

/* The variables as NCCL reads them: rdma_node's "nccl_vars" (the login
 * environment) first, then each file of the probe's "nccl_conf" array
 * ([{"path", "vars": {}}], in the agent's order); the first that sets a
 * name wins, as NCCL's initEnv sets conf values without overwriting
 * (setenv(..., 0)). Either argument may be NULL. The strings borrow from
 * the JSON. */
void nccl_ib_env_from_json(const json_t *rdma_node, const json_t *nccl_conf, struct nccl_ib_env *e);

/* Every variable of e still unset, from get(NAME, &source, ctx): its value,
 * NULL where NAME is not set there (source: where it was, borrowed). The one
 * table of the names NCCL's IB transport reads is nccl_ib.c's. */
void nccl_ib_env_fill(struct nccl_ib_env *e,
                      const char *(*get)(const char *name, const char **source, const void *ctx),
                      const void *ctx);

/* Set e's variable name (one NCCL's IB transport reads: nccl_ib.c's table)
 * to value from source, both borrowed: what a job's environment sets over
 * the node's own. 0, or -1 when the transport does not read name (e is
 * unchanged). */
int nccl_ib_env_set(struct nccl_ib_env *e, const char *name, const char *value, const char *source);

struct nccl_ib_pick {
	enum nccl_ib_transport transport;
	struct nccl_ib_dev devs[NCCL_IB_MAX_DEVS];
	int ndevs;
	/* socket: "NCCL_IB_DISABLE=1 (from environment)", "no libibverbs",
	 * "no verbs provider for mlx5_0" (every ACTIVE port's HCA lacks its
	 * provider: libibverbs does not list it), "no ACTIVE port", "NCCL_IB_HCA=mlx5_9 (from
	 * environment) matches no HCA of the node (mlx5_0, mlx5_1)", "NCCL_NET=Socket ...", "NET/IB
	 * : No device found."; ib: how the list was made */
	char reason[256];
	char socket[128];   /* parsed lines: "eth0:10.0.0.1<0>" of NET/Socket */
	char errors[512];   /* bad input, named per HCA and port; the rest goes on */
	char ib_line[1024]; /* parsed lines: the NET/IB line as NCCL wrote it */
};

/* Whether libibverbs lists the HCA of the "rdma" row: not when the agent
 * found its kernel driver ("driver") but no verbs provider that serves it
 * ("provider" null; probes/rdma_libs.h), as rdma-core's
 * ibv_get_device_list leaves such a device out. Rows without those keys
 * (an older agent) count as listed. */
int nccl_ib_port_listed(const json_t *row);

/* Predict. rdma is the node's "rdma" array, rdma_node its "rdma_node"
 * object; version is facts' "nccl_version" ("2.21.5") or NULL (newest).
 * An rdma that is not an array gives NCCL_IB_UNKNOWN. Never fails. */
void nccl_ib_predict(const json_t *rdma, const json_t *rdma_node, const struct nccl_ib_env *e,
                     const char *version, struct nccl_ib_pick *out);

/* Read NCCL's NCCL_DEBUG=INFO output (any number of lines, not NUL-
 * terminated, other lines ignored) into the same shape: "NET/IB : Using
 * [0]mlx5_0:1/RoCE [1]mlx5_1:1/IB [RO]; OOB eth0:10.0.0.1<0>" gives the
 * devices, "NET/IB : No device found." a reason, "NET/Socket : Using
 * [0]eth0:..." the socket transport, "Using network X" (init.cc) decides
 * when present. gid_index is -1 (NCCL does not print it). Returns 0 when a
 * network line was found, CD_ERR_NOTFOUND otherwise (transport UNKNOWN). */
int nccl_ib_parse_log(const char *buf, size_t len, struct nccl_ib_pick *out);

/* Compare a prediction with what NCCL's lines say: the transport, then the
 * set of "dev:port" (order aside: NCCL lists them in ibv_get_device_list
 * order). Returns 0 when they agree, 1 when they differ with the
 * difference in words in buf ("predicted ib (mlx5_0:1), NCCL used socket
 * (NET/IB : No device found.)"; "NCCL also used mlx5_2:1; NCCL did not use
 * mlx5_1:1"), -1 when either side is unknown (buf says which). */
int nccl_ib_compare(const struct nccl_ib_pick *predicted, const struct nccl_ib_pick *seen,
                    char *buf, size_t len);

#endif
