/* SPDX-License-Identifier: MIT */
/*
 * nccl_list.h - the list syntax NCCL reads in NCCL_SOCKET_IFNAME and
 * NCCL_IB_HCA: parseStringList and matchIfList of NVIDIA/nccl
 * src/misc/utils.cc (src/include/utils.h: struct netIf), with the '^' and
 * '=' the callers (ncclFindInterfaces, ncclIbInit) strip first.
 *
 *   - a leading '^' excludes what the list names, then a leading '=' makes
 *     the names exact instead of prefixes; both apply to the whole list and
 *     only in that order ("=^x" is an exact "^x");
 *   - items split on ','; "name:N" limits an item to port N (atoi of what
 *     follows the ':', so "name:" is port 0 and "name:1:0:0" port 1), the
 *     rest of the item is skipped; an empty name makes no item;
 *   - NCCL copies a name into char[64] unchecked: a name of 64 bytes or more
 *     is undefined there, and makes no item here;
 *   - matchIfList: an item matches a name it is a prefix of (exact: equal
 *     to), and a port when it has none, names that port, or the caller asks
 *     about any port (-1); an empty list matches every name; the result is
 *     then flipped by '^' (so "^" alone matches nothing).
 *
 * Pure. The one parser of this syntax in clusterdoc: predict.c reads
 * NCCL_SOCKET_IFNAME with it, nccl_ib.c and diagnose_rdma.c NCCL_IB_HCA.
 */
#ifndef CD_PROBES_NCCL_LIST_H
#define CD_PROBES_NCCL_LIST_H

#define NCCL_LIST_CAP 32 /* the most items any caller reads (MAX_IB_DEVS) */

struct nccl_list_item {
	char prefix[64];
	int port; /* -1: any port */
};

struct nccl_list {
	int exclude; /* '^' */
	int exact;   /* '=' */
	int nitems;
	struct nccl_list_item items[NCCL_LIST_CAP];
};

/* Parse value (NUL-terminated; NULL = no item) into l, keeping at most
 * max_items items (NCCL's maxList; capped at NCCL_LIST_CAP). Never fails. */
void nccl_list_parse(const char *value, int max_items, struct nccl_list *l);

/* Whether item k of l names name's port (see above); the '^' of l is not
 * applied. port -1 asks about any port of name. */
int nccl_list_item_matches(const struct nccl_list *l, int k, const char *name, int port);

/* Whether NCCL would take name's port under l: an item matches (or l has
 * none), flipped by '^'. */
int nccl_list_match(const struct nccl_list *l, const char *name, int port);

#endif
