/* SPDX-License-Identifier: MIT */
/*
 * jobplan.h - the one plan every job clusterdoc starts reads: the master
 * (node, address, MASTER_PORT) and, per node, the data interface, its
 * address and the NCCL and Gloo variables. `check`'s suggestions, `env`,
 * the env fixer, `run`, `mnist` and every --dry-run print or use this plan;
 * none of them picks a port, an address or a family of its own.
 *
 * Two ways to build it:
 *   job_plan_from_check  from a check's diagnosis: what the reachability
 *                        matrix proved (the check's suggestions), the
 *                        check's findings kept with it for the gate
 *                        (jobgate.h); a node the check proved nothing for
 *                        is taken from its probe, unproved
 *   job_plan_new         empty and unproved: a job started with no check
 *                        fills each node from its probe
 *                        (job_plan_take_pick), and every output says
 *                        that nothing was proved
 *
 * The plan is saved with the check as versioned JSON (job_plan_to_json) and
 * read back by `--no-check` (job_plan_from_json), which refuses a plan of
 * another version or made for other nodes, master, port or interface
 * (job_plan_key_differs). Pure: nothing here talks to a node.
 */
#ifndef CD_JOBS_JOBPLAN_H
#define CD_JOBS_JOBPLAN_H

#include "probes/diagnose.h"
#include "probes/netmodel.h"

#include <jansson.h>
#include <stddef.h>

#define JOB_PLAN_VERSION 2 /* 1: run's record of {errors, ifaces}, refused */
#define JOB_PLAN_VARS    7 /* the most variables a node gets from the plan */

/* A variable of a node's environment, as the plan sets it. */
struct job_var {
	const char *name; /* static */
	char value[NM_ADDR + 72];
};

struct job_plan_node {
	char host[256];
	char ifname[NM_NAME]; /* the data interface, "" = none yet */
	char addr[NM_ADDR];   /* its address */
	int proved;           /* the check's matrix proved the interface variables */
	int checked;          /* the check reached this node to the end */
	/* NCCL_SOCKET_IFNAME, NCCL_SOCKET_FAMILY, GLOO_SOCKET_IFNAME ("" = unset) */
	char nccl_ifname[NM_NAME * 4];
	char nccl_family[16];
	char gloo_ifname[NM_NAME];
	/* NCCL_IB_HCA, NCCL_IB_GID_INDEX as the check verified them against
	 * the IB prediction (ib_suggest.h); "" = unset */
	char nccl_ib_hca[IB_SUGGEST_HCA_MAX + 1];
	char nccl_ib_gid_index[12];
};

/* A finding of the check, as the gate judges it against the plan. */
struct job_plan_finding {
	char id[48];
	enum severity severity;
	char *message;
	char *evidence; /* what the check observed, one fact per line ("" when none) */
	size_t *nodes;  /* indexes into the plan's nodes */
	size_t nnodes;
};

struct job_plan {
	int proved; /* built from a check whose matrix ran */
	long long time;
	/* what the plan depends on (job_plan_key_differs) */
	int port_asked; /* --master-port the check was asked with, 0: none */
	int port_tried; /* the MASTER_PORT the check tried first (its candidate) */
	char iface_asked[NM_NAME];
	/* the master */
	size_t master; /* index into nodes */
	char master_addr[NM_ADDR];
	int master_port;        /* 0: none yet */
	int master_port_proved; /* every node reached it on the master */
	struct job_plan_node *nodes;
	size_t n;
	struct job_plan_finding *findings;
	size_t nfindings;
	char *notes; /* why something is unproved, one per line, or NULL */
};

/* An empty, unproved plan of hosts[0..n) with node master as the master. */
struct job_plan *job_plan_new(const char *const *hosts, size_t n, size_t master);

/*
 * The plan a check proved: m and d of one check (d = diagnose(m)); port
 * and iface are the --master-port and --iface the check was asked with
 * (0 / NULL when none), kept as the plan's key.
 */
struct job_plan *job_plan_from_check(const struct netmodel *m, const struct diagnosis *d, int port,
                                     const char *iface);
void job_plan_free(struct job_plan *p);

/*
 * Whether node i must be taken from its probe: the plan has no interface
 * for it, or iface (--iface) is given and is not the plan's.
 */
int job_plan_needs_pick(const struct job_plan *p, size_t i, const char *iface);

/*
 * Node i as its probe picks it (the address NCCL would use, or --iface's,
 * with rule saying why): its interface variables exact ("=ifname" for
 * NCCL, AF_INET6 for an IPv6 address), unproved, and said so in the notes.
 */
void job_plan_take_pick(struct job_plan *p, size_t i, const char *ifname, const char *addr,
                        const char *rule);

/*
 * jobplan_pick.c. Node i from its probe n when the plan lacks it or --iface
 * (iface) differs (job_plan_needs_pick): the bench's address pick
 * (bench_pick_address), taken unproved (job_plan_take_pick). 0, or -1 with
 * err (the node has no address).
 */
int job_plan_pick_node(struct job_plan *p, size_t i, const struct nm_node *n, const char *iface,
                       char *err, size_t errlen);

/*
 * The interfaces the check proved, per node, for the bench
 * (bench_opts.proved_ifname): n pointers into p (valid while p lives), NULL
 * where a node is unproved; the caller frees the array. NULL when there is
 * no plan or it is of another node count.
 */
const char **job_plan_proved_ifnames(const struct job_plan *p, size_t n);

/* A copy the caller frees (job_plan_free). */
struct job_plan *job_plan_copy(const struct job_plan *p);

/* A MASTER_PORT asked for (--master-port; 0: none): the plan's port from
 * now on, proved only when it is the one the check proved. */
void job_plan_use_port(struct job_plan *p, int port);

/* Set the master's address from its node (when none) and the port (when
 * none): what a plan without a proved master falls back to. */
void job_plan_default_master(struct job_plan *p, int port);

/*
 * Node i's variables, in a fixed order: NCCL_SOCKET_IFNAME,
 * NCCL_SOCKET_FAMILY, GLOO_SOCKET_IFNAME, NCCL_IB_HCA, NCCL_IB_GID_INDEX,
 * MASTER_ADDR, MASTER_PORT; unset
 * ones are left out. Returns how many were written to vars.
 */
int job_plan_vars(const struct job_plan *p, size_t i, struct job_var vars[JOB_PLAN_VARS]);
/* The same, set into env (an object). */
void job_plan_env(const struct job_plan *p, size_t i, json_t *env);

/*
 * The variables of job_plan_vars that NCCL reads (NCCL_*), into env (an
 * object): what `bench --backend nccl` sets on node i
 * (collectives/nccl_env.h), as `run` sets them all in a job's environment.
 * Returns how many were set.
 */
int job_plan_nccl_env(const struct job_plan *p, size_t i, json_t *env);

/* 1 when name is one of the variables the plan sets on node i. */
int job_plan_sets(const struct job_plan *p, size_t i, const char *name);

/* The plan as versioned JSON ({"version": JOB_PLAN_VERSION, ...}), and
 * back: NULL with err when the version is not JOB_PLAN_VERSION or a field
 * is missing. */
json_t *job_plan_to_json(const struct job_plan *p);
struct job_plan *job_plan_from_json(json_t *j, char *err, size_t errlen);

/*
 * Whether a saved plan fits a job on hosts[0..n) with the master first,
 * --master-port port (0: none asked) and --iface iface: 0, or 1 with why
 * ("it was made for --master-port 29501, not 29500").
 */
int job_plan_key_differs(const struct job_plan *p, const char *const *hosts, size_t n, int port,
                         const char *iface, char *why, size_t len);

#endif
