/* SPDX-License-Identifier: MIT */
/*
 * run_agent.h - the agent's side of `clusterdoc run`'s orphan check: the
 * processes of this user on this node that still belong to a run.
 *
 *   run_orphans {"run": "<run id>", "node_rank": "<this node's NODE_RANK>" (optional)}
 *       -> {"processes": [{"pid", "comm", "cmdline", "gpu": true|false}...],
 *           "gpu_holders": [{"pid", "comm"}...]}
 *
 * A process belongs to the run when its environment (/proc/PID/environ)
 * holds CLUSTERDOC_RUN=<run id>: every process the job started inherits it,
 * whatever it renamed itself to, and nothing else has it; with node_rank,
 * NODE_RANK=<node_rank> too (nodes that share one process table, as
 * containers on one host may, see only their own). Only processes of
 * the agent's own user are read (the others' environ is not readable
 * anyway); the agent and its own ancestors are left out. gpu_holders: the
 * user's processes with a /dev/nvidia* device open, whichever run they
 * belong to. Nothing is changed: the list is for the report.
 */
#ifndef CD_COLLECTIVES_RUN_AGENT_H
#define CD_COLLECTIVES_RUN_AGENT_H

#include <jansson.h>
#include <stddef.h>

#define RUN_AGENT_MAX_LISTED 64 /* processes listed per answer */

json_t *run_agent_orphans(json_t *req, const char **code, char *msg, size_t msglen);

/* 1 when environ (len bytes of NUL-separated "NAME=value") holds
 * CLUSTERDOC_RUN=run_id. Pure. */
int run_agent_environ_has(const char *environ, size_t len, const char *run_id);
/* 1 when environ holds exactly the entry name_value ("NAME=value"). Pure. */
int run_agent_environ_has_var(const char *environ, size_t len, const char *name_value);

#endif
