/* SPDX-License-Identifier: MIT */
/*
 * diagnose_internal.h - what the files of diagnose() share and nothing else
 * uses: the state a diagnosis is built in, how a check notes a finding, and
 * a few helpers (all defined in diagnose.c unless said otherwise). Not a
 * public interface: include it only from probes/diagnose*.c.
 */
#ifndef CD_PROBES_DIAGNOSE_INTERNAL_H
#define CD_PROBES_DIAGNOSE_INTERNAL_H

#include <stddef.h>

#include "diagnose.h"

struct pending; /* a finding being accumulated (diagnose.c) */

/* One diagnosis in progress: the model (borrowed), the result being filled,
 * and the pending findings. */
struct dstate {
	const struct netmodel *m;
	struct diagnosis *d;
	struct pending *p;
	size_t np;
};

/* The hosts of the nodes of m listed in idx, folded like nodeset -f
 * ("h1,node[2-3]"). The caller frees the string. */
char *diagnose_fold_nodes(const struct netmodel *m, const size_t *idx, size_t n);

/* Find or create the pending finding (id, key); add node (unless SIZE_MAX)
 * and one evidence line. message and fix are taken from the first call; "%N"
 * in message becomes the folded node set. id must be in the catalogue. */
struct pending *diagnose_note(struct dstate *st, const char *id, enum severity sev, const char *key,
                              size_t node, const char *message, const char *fix,
                              const char *evidence);

/* Whether the address text is a loopback address. */
int diagnose_is_loopback_text(const char *addr);

/* A tested attempt of another node toward (to, addr) on the ephemeral
 * (fixed_port 0) or fixed listeners, on `port` (0 = any). */
int diagnose_attempt_toward(const struct nm_attempt *a, size_t to, const char *addr, int fixed_port,
                            int port);

/* diagnose_checks.c: "node2 -> node1 port 29500: timeout; ..." for the
 * failed attempts toward (to, addr) (the caller frees; "" when none), and
 * whether one of them is the target's: a failure whose sender's own route
 * toward addr went out of another NIC is the sender's
 * (route-egress-mismatch names it), so the target is not blamed for it. */
char *diagnose_failed_attempts(const struct netmodel *m, size_t to, const char *addr,
                               int fixed_port, int port);
int diagnose_target_failures(const struct netmodel *m, size_t to, const char *addr, int fixed_port,
                             int port);

/* diagnose_master.c: the master's own attempt toward its address addr on
 * the MASTER_PORT candidate port (netcheck.h, phase 3); NULL when it was
 * not tested. */
const struct nm_attempt *diagnose_self_attempt(const struct netmodel *m, const char *addr,
                                               int port);

/* Whether the address text is a link-local address. */
int diagnose_is_link_local_text(const char *addr);

/* Whether an interface name is one of a container bridge, veth, VPN or
 * overlay (docker0, veth*, wg0, ...). */
int diagnose_virtual_name(const char *name);

/*
 * The checks. diagnose() runs them in the order of its table `checks[]`
 * (diagnose.c), which is the order their findings come in within a
 * severity. Each notes findings (diagnose_note) from st->m and st->d.
 */
/* diagnose_checks.c: what NCCL and Gloo would use between the nodes */
void diagnose_check_unreachable_nodes(struct dstate *st);
void diagnose_check_used_addresses(struct dstate *st);
void diagnose_check_virtual_and_lo(struct dstate *st);
void diagnose_check_hostname(struct dstate *st);
void diagnose_check_stale_env(struct dstate *st);
void diagnose_check_gloo_count(struct dstate *st);
void diagnose_check_duplicates(struct dstate *st);
/* diagnose_master.c: MASTER_PORT on the master (its bind, the nodes' paths
 * to it, the fixed ports the check tried, the master's own path to itself) */
void diagnose_check_master_bind(struct dstate *st);
void diagnose_check_fixed_ports(struct dstate *st);
void diagnose_check_master_self(struct dstate *st);
/* diagnose_master.c: one node alone: its rules against MASTER_PORT */
void diagnose_check_master_alone(struct dstate *st);
/* diagnose_setup.c: each node's setup */
void diagnose_check_fw_rules(struct dstate *st);
void diagnose_check_mtu(struct dstate *st);
void diagnose_check_nic_names(struct dstate *st);
void diagnose_check_software(struct dstate *st);
void diagnose_check_torch(struct dstate *st);
void diagnose_check_shm_and_versions(struct dstate *st);
void diagnose_check_neigh_table(struct dstate *st);
void diagnose_check_probe_incomplete(struct dstate *st);
/* diagnose_routes.c: each node's own routing (route-egress-mismatch,
 * multiple-nics-same-subnet) */
void diagnose_check_route_egress(struct dstate *st);
void diagnose_check_nics_same_subnet(struct dstate *st);
/* diagnose_ascend.c: the Ascend NPU findings and HCCL settings (with
 * d->pred's data addresses chosen) */
void diagnose_check_ascend(struct dstate *st);
/* diagnose_gpu.c: the NVIDIA GPU findings (gpu-*), each node's from its
 * "nvidia" facts (netmodel.h), MIG modes across the nodes; with
 * diagnose_gpu_xid.c (node i's Xids) and diagnose_gpu_topo.c (gpu-nic-far:
 * node i's GPUs against its data NIC, d->pred's data interfaces chosen) */
void diagnose_check_gpu(struct dstate *st);
void diagnose_gpu_xid(struct dstate *st, size_t i);
void diagnose_gpu_nic_far(struct dstate *st, size_t i);
/* diagnose_gpu_dcgm.c: gpu-dcgm-fail, -warn and -absent from the node's
 * "dcgm" answer (check --dcgm-level). */
void diagnose_gpu_dcgm(struct dstate *st, size_t i);

/* Node from's own route answer toward addr when it leaves through another
 * interface than the one holding its source address, else NULL
 * (diagnose_routes.c). A failed attempt of that node toward addr is its own
 * route's fault, not the target's. */
const struct nm_route *diagnose_route_astray(const struct netmodel *m, size_t from,
                                             const char *addr);

/* Node i's own route answer from its address addr toward a peer when that
 * traffic leaves through another interface than addr's, else NULL
 * (diagnose_routes.c): an address no suggestion may use on that node. */
const struct nm_route *diagnose_route_astray_from(const struct netmodel *m, size_t i,
                                                  const char *addr);

/* Whether node i's address a, though every peer reached it, must not be
 * suggested (diagnose_suggest.c): its bulk transfer stalled
 * (path-mtu-blackhole), or its own route answers send the traffic from it
 * out of another interface (route-egress-mismatch: a job bound there would
 * leave elsewhere). why (len bytes; NULL: not wanted) says which. */
int diagnose_addr_refused(const struct netmodel *m, size_t i, const struct nm_addr *a, char *why,
                          size_t len);

/* diagnose_bulk.c: the bulk proof. diagnose_bulk_failed: a peer's bulk
 * transfer to node i's address stalled (the address carries connections,
 * not a job's traffic). diagnose_check_bulk: the path-mtu-blackhole
 * findings. diagnose_addr_find: node n's entry for an address, or NULL.
 * diagnose_network_of: "10.0.0.0/24" for an address and its prefix. */
int diagnose_bulk_failed(const struct netmodel *m, size_t i, const char *addr);
void diagnose_check_bulk(struct dstate *st);

/* diagnose_rdma_pair.c: rdma-pair-failed, from the matrix's RDMA proof. */
void diagnose_check_rdma_pairs(struct dstate *st);
const struct nm_addr *diagnose_addr_find(const struct nm_node *n, const char *addr);
void diagnose_network_of(const struct nm_addr *a, char *buf, size_t len);

/* Each probed node's data interface and address in d->pred
 * (diagnose_suggest.c). */
void diagnose_choose_data_ifaces(const struct netmodel *m, struct diagnosis *d);

/* d->sugg, re-verified against the matrix (diagnose_suggest.c). */
void diagnose_suggest(const struct netmodel *m, struct diagnosis *d);

/* diagnose_expect.c: the configuration's [expect] on each node checked */
void diagnose_check_expect(struct dstate *st);

#endif
