/* SPDX-License-Identifier: MIT */
/*
 * netmodel.h - the cluster's network as plain data, on the head: what each
 * node's agent reported (netprobe.h, facts.h) and what the reachability
 * matrix found (reach.h). Parsed once from the agents' JSON, then read by
 * the predictors (predict.h) and the diagnosis (diagnose.h), which are pure
 * functions of it. Unit tests build models from fixture JSON files.
 */
#ifndef CD_PROBES_NETMODEL_H
#define CD_PROBES_NETMODEL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "cd.h"
#include "probes/expect.h"

#define NM_NAME 64 /* interface names (IFNAMSIZ is 16; input is not trusted) */
#define NM_ADDR 64 /* an address in text, without "%scope" */

struct nm_iface {
	char name[NM_NAME];
	int index;
	int up, running, loopback;
	char operstate[16];
	int mtu;         /* 0 when unknown */
	int speed_mbps;  /* -1 when unknown */
	char kind[16];   /* netprobe.h's kinds; "" when unknown */
	char driver[32]; /* "" when unknown */
	char master[NM_NAME];
	int rp_filter, arp_ignore, arp_announce; /* effective IPv4 conf; -1 unknown */
};

/* One getifaddrs() entry with an IP address, in getifaddrs order. */
struct nm_addr {
	char ifname[NM_NAME];
	int family; /* AF_INET or AF_INET6 */
	char addr[NM_ADDR];
	int prefix;
	unsigned scope_id;
	char scope[8]; /* "host", "link", "global", "ula", "site" */
};

struct nm_hostaddr {
	int family;
	char addr[NM_ADDR];
	int bindable;
};

/* A variable that NCCL or Gloo would read, with where it came from. */
struct nm_var {
	char name[64];
	char *value;
	char source[128]; /* "environment", "/etc/nccl.conf", "~/.nccl.conf" (the path) */
};

struct nm_route {
	char to[NM_ADDR];
	char from[NM_ADDR];
	char dev[NM_NAME]; /* "" when error is set */
	char src[NM_ADDR];
	char error[64]; /* "" or the errno name */
};

/* A firewall rule that drops or rejects TCP ports on input (fwrules.h). */
struct nm_fwrule {
	int port_lo, port_hi; /* 0..65535 */
	char verdict[8];      /* "drop" or "reject" */
	char tool[12];        /* "nft", "iptables", "ip6tables" */
	char text[160];       /* the rule as the tool prints it, for evidence */
};

struct nm_node {
	char host[256];     /* as given on the command line */
	char hostname[256]; /* the node's own gethostname() */
	int probed;         /* the netprobe answered */
	char error[CD_ERRLEN];
	char error_code[32];
	char lost_code[32];    /* partial: the failure code that ended it after its probe */
	char hostkey_type[32]; /* the host key a node that failed offered, */
	char hostkey_fp[64];   /* "" when unknown: "ssh-ed25519", "SHA256:..." */

	struct nm_iface *ifaces;
	size_t nifaces;
	struct nm_addr *addrs;
	size_t naddrs;
	struct nm_hostaddr *hostaddrs;
	size_t nhostaddrs;
	char hostname_error[128];
	char **hosts_lines;
	size_t nhosts_lines;
	int port_lo, port_hi;     /* 0 when unknown */
	int64_t shm_bytes;        /* -1 when unknown */
	int64_t neigh_thresh3[2]; /* gc_thresh3 for IPv4, IPv6; -1 when unknown */
	int64_t neigh_fulls;      /* neighbour table full during the matrix; -1 unknown */
	int rdma_ports;           /* RDMA ports reported */

	/* The effective NCCL_ / GLOO_ / MASTER_ variables: the environment,
	 * then the NCCL conf files in NCCL's precedence (first one wins). */
	struct nm_var *vars;
	size_t nvars;

	/* From facts. "" when unknown. */
	char os[64];           /* os-release's PRETTY_NAME */
	char os_short[64];     /* "Debian 12" (facts_os_short); else os */
	char kernel[64];       /* uname -r */
	char nccl_version[32]; /* the NCCL a job would load: torch's, else libnccl */
	char torch_version[64];
	char python_version[32];
	char python_path[256];  /* the interpreter probed (sys.executable) */
	char python_found[256]; /* the first of python_candidates: has torch */
	char python_found_version[32];
	int python_found_count;       /* how many python_candidates have torch */
	int torch_known;              /* 1 when facts said whether torch is there */
	char python_error[CD_ERRLEN]; /* why facts could not tell, or "" */
	int gpus;

	struct nm_route *routes;
	size_t nroutes;
	struct nm_fwrule *fwrules;
	size_t nfwrules;
	char firewall_summary[160]; /* "nftables: 1 table; ufw inactive" */

	/* Ascend NPUs (docs/ascend.md); NULL on a node without them. An object
	 * with "npus" (facts), "npus_error" (errors["npus"]), "env" (HCCL_*,
	 * ASCEND_*), "probe" (the ascend_probe answer), "netdetect" (the
	 * ascend_netdetect answer), each absent until known. Owned. */
	json_t *ascend;

	/* NVIDIA GPUs (probes/diagnose_gpu.c): the facts' "gpus" array and
	 * "gpu_driver", "gpu_pci" and "xid" as the agent sent them (docs/protocol.md),
	 * under those keys, each absent when the facts lack it, and
	 * "gpus_error" (errors["gpus"]) when set; NULL when the facts have
	 * none of the three; "dcgm", the dcgm_diag answer (or {"error": ...})
	 * with --dcgm-level. Owned. */
	json_t *nvidia;

	/* RDMA (probes/diagnose_rdma.c): the probe's "rdma" array and
	 * "rdma_node" object as the agent sent them, under those keys, each
	 * absent when the probe lacks it; NULL when it has neither. Owned. */
	json_t *rdma;
};

/* The matrix's bulk proof, each way: far larger than any MTU (jumbo
 * frames included), small enough to cost little beside the connect on every
 * pair. A node's request moves NM_BULK_NODE_BUDGET bytes each way at most:
 * with many peers each gets less, never below NM_BULK_MIN (still several
 * full-size segments at MTU 9000, and one lost segment stalls it). */
#define NM_BULK_BYTES       (256 * 1024)
#define NM_BULK_MIN         (32 * 1024)
#define NM_BULK_NODE_BUDGET (2 * 1024 * 1024)

/* One attempt of the matrix. */
struct nm_attempt {
	size_t from, to; /* node indexes */
	char addr[NM_ADDR];
	unsigned scope_id;
	int port;
	int fixed_port;  /* 1 = a MASTER_PORT candidate, 0 = an ephemeral listener */
	char result[24]; /* reach.h's results, or "not-tested" */
	char errno_name[24];
	int64_t rtt_us; /* -1 unless ok */
	/* The bulk proof (reach.h): "" when not tried, else "ok", "stalled"
	 * (no complete transfer before the deadline) or "broken" (the peer
	 * closed or reset the connection); bytes moved each way, its time. */
	char bulk[12];
	int64_t bulk_bytes; /* asked for each way */
	int64_t bulk_sent, bulk_received, bulk_ms;
	/* The path-MTU probe (reach.h): the largest IP packet echoed over UDP
	 * with Don't Fragment, 0 when no size was echoed, -1 when not probed;
	 * pmtu_max the largest size tried (the route's MTU at the sender). */
	int pmtu, pmtu_max;
	/* The RDMA proof (reach.h, probes/rdma_matrix.h): "" when not asked
	 * for, else "ok", "failed" or "not tested" with why; the bytes written
	 * and the time, each end's port and GID index, the path's MTU. A RoCE
	 * end's index is the plan's ("plan": the suggested NCCL_IB_GID_INDEX
	 * run and mnist set) or the login's ("login": the plan sets none), with
	 * the index the login environment alone gives; "" when unknown (an
	 * InfiniBand end, a report without them). */
	char rdma[12];
	char rdma_why[192];
	int64_t rdma_bytes;
	double rdma_ms;
	struct nm_rdma_end {
		char device[64];
		int port, gid_index;
		char gid_from[8];    /* "plan", "login" or "" */
		int login_gid_index; /* -1: none */
	} rdma_local, rdma_peer;
	int active_mtu;
};

struct nm_listener {
	size_t node;
	char addr[NM_ADDR]; /* "" for a fixed-port wildcard listener */
	unsigned scope_id;
	int port;
	int fixed_port;
	char error[64];   /* "" or why it could not listen (errno name) */
	char held_by[16]; /* port in use: "other-run"/"this-run" (reach.h), or "" */
	int pmtu_echo;    /* its UDP echo for the path-MTU probe is open */
};

struct netmodel {
	struct nm_node *nodes;
	size_t nnodes;
	size_t master;   /* index of the master node */
	int master_port; /* the MASTER_PORT candidate */
	int matrix_done; /* the matrix ran */
	struct nm_listener *listeners;
	size_t nlisteners;
	struct nm_attempt *attempts;
	size_t nattempts;
	int expect_gpus;      /* --expect-gpus: GPUs every node should have; 0 = not said */
	struct expect expect; /* the configuration's [expect] (probes/expect.h) */
};

/* Allocate a model for n nodes named hosts[i] (copied); master is node 0. */
struct netmodel *netmodel_new(const char *const *hosts, size_t n);
void netmodel_free(struct netmodel *m);

/*
 * Fill node i from the agents' answers (borrowed; either may be NULL when
 * the node did not answer it). probe is the netprobe result, facts the facts
 * result. Malformed entries are skipped and never fail the whole: the model
 * records what it could read. Sets probed = 1 when probe is non-NULL.
 */
void netmodel_set_node(struct netmodel *m, size_t i, json_t *probe, json_t *facts);

/* Set key of node i's "ascend" object to v (a reference is taken),
 * creating the object. */
void netmodel_set_ascend(struct netmodel *m, size_t i, const char *key, json_t *v);

/* Set key of node i's "nvidia" object (made when absent) to v (a reference
 * is taken): the check's "dcgm" answer (dcgm_agent.h). */
void netmodel_set_nvidia(struct netmodel *m, size_t i, const char *key, json_t *v);

/* Mark node i as not checked, with a code and message naming the node. */
void netmodel_node_failed(struct netmodel *m, size_t i, const char *code, const char *msg);

/* Append routes answered by node i's agent (netprobe_routes format). */
void netmodel_add_routes(struct netmodel *m, size_t i, json_t *routes);

/* Add a connect answer's "neigh_table_fulls" (an integer; null or absent:
 * nothing) to node i's count; the first integer makes the count known. */
void netmodel_add_neigh_fulls(struct netmodel *m, size_t i, json_t *fulls);

/* Append listeners node i reported (reach_listen result). */
void netmodel_add_listeners(struct netmodel *m, size_t i, json_t *listen_result);

/* Append one attempt. */
struct nm_attempt *netmodel_add_attempt(struct netmodel *m);

/* Copy a connect result's (or a report matrix row's) bulk proof fields
 * ("bulk", "bulk_sent", "bulk_received", "bulk_ms"; absent or "not-tried":
 * not tried) and path-MTU probe ("pmtu", "pmtu_max"; absent: not probed)
 * into an attempt. */
void netmodel_attempt_set_bulk(struct nm_attempt *a, json_t *row);

/* Load a whole model from a fixture file (tests): {"master": i,
 * "master_port": p, "nodes": [{"host", "probe": {...}, "facts": {...},
 * "routes": [...], "error": "..."}], "listeners": [...], "matrix": [...],
 * "expect_gpus": n} with the matrix in the report's format. NULL with a message on error. */
struct netmodel *netmodel_load_json(json_t *fixture, char *err, size_t errlen);

/* The effective value of a variable on a node, or NULL when unset. */
const struct nm_var *nm_var_get(const struct nm_node *n, const char *name);

const struct nm_iface *nm_iface_find(const struct nm_node *n, const char *name);

/* nm_node_complete: the node answered its probe and every phase after it,
 * so its results are whole. nm_node_partial: it answered its probe, then
 * failed or stopped answering (error says why): what it answered stands as
 * evidence, but nothing is verified for it, suggested for it or chosen on it. */
int nm_node_complete(const struct nm_node *n);
int nm_node_partial(const struct nm_node *n);

/* nm_addr_is_loopback: 127/8 or ::1. nm_addr_is_link_local: 169.254/16 or
 * fe80::/10. Computed from the address text. */
int nm_addr_is_loopback(const struct nm_addr *a);
int nm_addr_is_link_local(const struct nm_addr *a);

/* "fe80::1%3" or "10.0.0.1" (scope id appended when non-zero) */
void nm_addr_format(char *buf, size_t len, const char *addr, unsigned scope_id);

#endif
