/* SPDX-License-Identifier: MIT */
/*
 * jobgate.h - which of a check's findings would still break a job started
 * with the plan's environment (jobplan.h).
 *
 * One const table holds a row for every finding id of the catalogue
 * (probes/diagnose.c; tests/unit/test_jobgate.c keeps them in step):
 *   - whether the finding is about traffic between nodes (such findings
 *     cannot break a one-node job: nothing crosses a network);
 *   - how the plan avoids it, if it can: the variable the plan sets on the
 *     node the finding names (GLOO_SOCKET_IFNAME for hostname-loopback,
 *     NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME for an address the job would
 *     otherwise pick, a proved MASTER_PORT other than the blocked one, the
 *     verified NCCL_IB_HCA for a stale one),
 *     or left to the job when the job checks it itself with what it really
 *     starts (torch-missing: the check asks the login python3, the job its
 *     --python interpreter).
 *   - which jobs it concerns: every job, or only those that use NCCL's IB
 *     transport (the RDMA findings: a Gloo job never opens a verbs device);
 *   - whether it drains a node (`check --drain`, the Prolog's verdict): only
 *     the node's own state does, not what the suggested environment avoids,
 *     what the checking user's login sets, or a pair's failure (docs/slurm.md).
 * A finding is avoided when every node it names is avoided. `run` and
 * `mnist` refuse only on error findings that are not avoided and concern the
 * job; `check` prints and saves each finding's avoided_by. Pure.
 */
#ifndef CD_JOBS_JOBGATE_H
#define CD_JOBS_JOBGATE_H

#include "jobplan.h"

#include <stddef.h>

struct job_gate_rule;

/* What a job's collectives use, for the findings that concern only some. */
#define JOB_USES_SOCKETS 1u /* TCP: Gloo, the rendezvous store, NCCL's socket transport */
#define JOB_USES_NCCL_IB 2u /* NCCL's IB transport (verbs: InfiniBand, RoCE) */
#define JOB_USES_ALL     (JOB_USES_SOCKETS | JOB_USES_NCCL_IB)

/* Whether a finding drains the node it names, and if not, why not. */
enum job_drain {
	DRAINS,            /* the node's own state: GPUs, [expect], firewall, ports, ... */
	DRAIN_NOT_AVOIDED, /* the suggested environment avoids it (interfaces, MASTER_PORT) */
	DRAIN_NOT_LOGIN,   /* from the checking user's login (~/.bashrc's NCCL_*, ulimit -l,
	                      python3, ssh keys): not every job's */
	DRAIN_NOT_PAIR,    /* between two nodes, with no telling which one is at fault */
};

/* The rule of a finding id, or NULL for an id the table lacks (then the
 * finding is never avoided and always gates). */
const struct job_gate_rule *job_gate_rule(const char *id);

/*
 * Why the plan's environment avoids finding f on every node it names:
 * out "on node2 by GLOO_SOCKET_IFNAME=eth0" (one clause per node, "; "
 * between), or for a one-node job of a between-nodes finding "in a
 * one-node job: nothing crosses a network". Returns 1 when avoided, 0 when not (out
 * ""). one_node: the job runs on one node.
 */
int job_gate_avoided(const struct job_plan *p, const struct job_plan_finding *f, int one_node,
                     char *out, size_t len);

/*
 * The gate over every finding of the plan: the error findings the plan
 * does not avoid are counted and, when refused is not NULL, written to it
 * one per line ("  id: message"); avoided ones to avoided ("avoided:
 * hostname-loopback on node2 by GLOO_SOCKET_IFNAME=eth0"). Returns the count of findings that
 * gate the job.
 */
int job_gate_judge(const struct job_plan *p, int one_node, char **refused, char **avoided);

/*
 * job_gate_judge for a job whose collectives use `uses` (JOB_USES_*): an
 * error finding that concerns only a transport the job does not use is not
 * counted, and is written to avoided as "not for this job: ID (NCCL's IB
 * transport only): MESSAGE". job_gate_judge is this with JOB_USES_ALL.
 */
int job_gate_judge_for(const struct job_plan *p, int one_node, unsigned uses, char **refused,
                       char **avoided);

/*
 * When every error job_gate_judge_for counts is a node's own state
 * (job_gate_drain: DRAINS: its GPUs, [expect], its firewall...) and they
 * name some of the plan's nodes but not all: those nodes' hosts in *hosts
 * (the plan's order, NULL-ended, borrowed from p; the caller frees the
 * array) and 1, so a caller can say "-x HOSTS starts it on the others".
 * 0 (*hosts NULL) otherwise.
 */
int job_gate_leave_out(const struct job_plan *p, int one_node, unsigned uses, const char ***hosts);

/* 1 when finding id concerns a job using `uses` (an id the table lacks
 * concerns every job), else 0. */
int job_gate_concerns(const char *id, unsigned uses);

/* The drain column of finding id (an id the table lacks drains), and the
 * reason of a value in words (for DRAINS: "the node's own state"). */
enum job_drain job_gate_drain(const char *id);
const char *job_gate_drain_why(enum job_drain d);

/* The number of rows of the table (for the test that every id has one). */
size_t job_gate_rules_len(void);
const char *job_gate_rule_id(size_t k);

#endif
