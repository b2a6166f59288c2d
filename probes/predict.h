/* SPDX-License-Identifier: MIT */
/*
 * predict.h - what NCCL and Gloo will pick on a node, emulated from the
 * node's interfaces (getifaddrs order) and effective variables. Pure
 * functions of the model (netmodel.h): no system calls.
 *
 * NCCL (docs/findings.md has the references; the rules are those of NCCL's
 * ncclFindInterfaces / ncclOsFindInterfaces):
 *   - NCCL_SOCKET_IFNAME is honoured only when longer than one character.
 *     A leading '^' excludes, then a leading '=' makes the match exact; both
 *     apply to the whole list. Items are split on ',' (empty items vanish,
 *     no trimming; NCCL reads at most 16 items, MAX_IFS); an item
 *     "name:port" keeps only "name". Prefix mode compares the first
 *     strlen(item) characters ("eth1" matches "eth10"). An empty list
 *     matches every name, so "^," or "^=" excludes every name.
 *   - Per getifaddrs entry: only AF_INET/AF_INET6; since 2.28.3 the
 *     interface must be RUNNING; NCCL_SOCKET_FAMILY "AF_INET"/"AF_INET6"
 *     keeps one family (any other value is ignored); IPv6 "::1" is skipped
 *     (link-local is not); the name filter applies; the first address per
 *     interface name wins; at most max_ifs interfaces.
 *   - Unset NCCL_SOCKET_IFNAME: "ib" prefix first; else, with NCCL_COMM_ID
 *     longer than one character, the first address whose subnet holds that
 *     address (no RUNNING, NCCL_SOCKET_FAMILY or loopback check; for IPv6
 *     the scope ids must be equal too: "[fe80::1%eth0]:port" carries eth0's
 *     index); else "^docker,lo,virbr" (before 2.28.3 "^docker,lo"); else
 *     "docker"; else "lo"; else (2.28.3+) "virbr".
 *   - Bootstrap uses max_ifs 1; with NCCL_COMM_ID set (to anything) only
 *     the subnet match, NCCL_SOCKET_IFNAME and "ib" are not consulted. The
 *     socket transport uses up to 16 (NCCL_PREDICT_MAX_IFS).
 *   - NCCL_COMM_ID is "ipv4:port", "[ipv6]:port", "[fe80::1%ifname]:port" or
 *     "hostname:port". A host name is resolved by NCCL on the node, which a
 *     pure function cannot do: the prediction then says cannot_predict.
 * Gloo / PyTorch ProcessGroupGloo:
 *   - GLOO_SOCKET_IFNAME longer than one character: split on ',' as
 *     std::getline does (an empty item between commas stays, a trailing
 *     one does not); one device per item, an exact interface name, its
 *     first IPv4 or IPv6 address in getifaddrs order (no RUNNING, loopback
 *     or link-local filter); a name without an address fails the whole
 *     process group ("Unable to find address for: X", no picks).
 *   - Otherwise the hostname's first bindable getaddrinfo result (ifname:
 *     the interface holding that address, "lo" for a 127/8 or ::1 address
 *     no interface holds, such as Debian's 127.0.1.1), else 127.0.0.1 with
 *     PyTorch's loopback warning in error.
 */
#ifndef CD_PROBES_PREDICT_H
#define CD_PROBES_PREDICT_H

#include "nccl_list.h"
#include "netmodel.h"

#define NCCL_PREDICT_MAX_IFS  16
#define NCCL_FILTER_MAX_ITEMS 32

/* An NCCL version as three numbers; {0,0,0} = unknown (treated as newest). */
struct nccl_version {
	int major, minor, patch;
};

/* "2.28.3" -> 0; anything else -> CD_ERR_PARSE and v = {0,0,0}. */
int nccl_version_parse(const char *s, struct nccl_version *v);
/* a < b: -1, equal 0, a > b: 1; an unknown version compares as newest. */
int nccl_version_cmp(const struct nccl_version *a, const struct nccl_version *b);

/* NCCL_SOCKET_IFNAME as ncclFindInterfaces reads it: NCCL's list syntax
 * (nccl_list.h), at most 16 items (MAX_IFS), ports ignored; a NULL or
 * 1-character value gives an empty include list, which matches everything.
 * Match a name with nccl_list_match(f, ifname, -1). */
void nccl_filter_parse(const char *value, struct nccl_list *f);

/* The variables the predictors read; NULL = unset. */
struct net_env {
	const char *nccl_socket_ifname;
	const char *nccl_socket_family;
	const char *nccl_comm_id;
	const char *gloo_socket_ifname;
};

/* The node's effective values (nm_var_get); pointers borrow from the node. */
void net_env_of(const struct nm_node *n, struct net_env *e);

struct net_pick {
	char ifname[NM_NAME];
	int family;
	char addr[NM_ADDR];
	unsigned scope_id;
};

struct nccl_prediction {
	struct net_pick picks[NCCL_PREDICT_MAX_IFS];
	int npicks;
	int bootstrap;      /* 1 = predicted with max_ifs 1 (the bootstrap's choice) */
	int cannot_predict; /* 1 = depends on what the node resolves (a host name in
	                       NCCL_COMM_ID): npicks is 0 and error says so */
	/* why these: "NCCL_SOCKET_IFNAME=^docker0 (from /etc/nccl.conf)",
	 * "default: ^docker,lo,virbr", "default: ib",
	 * "NCCL_COMM_ID=10.0.0.1:29500 (from environment): its subnet", then
	 * "; NCCL_SOCKET_FAMILY=AF_INET (from ...)" when set */
	char rule[160];
	char error[160]; /* NCCL's failure message when npicks == 0 */
};

/* Predict the socket transport's list (max_ifs = NCCL_PREDICT_MAX_IFS) or
 * the bootstrap's choice (max_ifs = 1, which also applies the NCCL_COMM_ID
 * rule). version may be NULL (newest). */
void nccl_predict(const struct nm_node *n, const struct net_env *e,
                  const struct nccl_version *version, int max_ifs, struct nccl_prediction *out);

/* The line NCCL logs: "NET/Socket : Using [0]eth0:10.0.0.1<0> [1]ib0:fe80::1%ib0<0>",
 * for a bootstrap prediction "Bootstrap: Using eth0:10.0.0.1<0>" (link-local
 * IPv6 printed with "%ifname"), or the error when there is no pick. */
void nccl_log_line(const struct nccl_prediction *p, char *buf, size_t len);

struct gloo_prediction {
	struct net_pick picks[NCCL_FILTER_MAX_ITEMS]; /* the first 32 devices */
	int npicks;
	int from_hostname;     /* 1 = no GLOO_SOCKET_IFNAME: hostname resolution */
	int loopback_fallback; /* 1 = nothing bindable: 127.0.0.1 with the warning */
	/* "GLOO_SOCKET_IFNAME=eth0 (from environment)", "hostname node1: first
	 * bindable address (answer 1 of 2)", "hostname node1: no bindable
	 * address; loopback fallback" */
	char rule[160];
	char error[160]; /* "Unable to find address for: ^lo" */
};

void gloo_predict(const struct nm_node *n, const struct net_env *e, struct gloo_prediction *out);

/* The interface that owns addr on node n (by exact address text), or "";
 * the string lives as long as the node. */
const char *predict_iface_of_addr(const struct nm_node *n, const char *addr);

#endif
