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
 * A finding is avoided when every node it names is avoided. `run` and
 * `mnist` refuse only on error findings that are not avoided; `check` prints
 * and saves each finding's avoided_by. Pure.
 */
#ifndef CD_JOBS_JOBGATE_H
#define CD_JOBS_JOBGATE_H

#include "jobplan.h"

#include <stddef.h>

struct job_gate_rule;

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

/* The number of rows of the table (for the test that every id has one). */
size_t job_gate_rules_len(void);
const char *job_gate_rule_id(size_t k);

#endif
