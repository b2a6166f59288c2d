/* SPDX-License-Identifier: MIT */
/*
 * nccl_env.h - the NCCL variables a bench request carries (agent side):
 * bench_nccl_id's and bench_run's "env" object, {"NCCL_IB_HCA": "=mlx5_0",
 * ...}, the values the check's plan sets on this node (the head's
 * collectives/bench_env.c), set in the agent's environment around the
 * request's NCCL calls, as `run` sets them in a job's environment.
 *
 * NCCL reads its variables in the process that calls it: NCCL_SOCKET_* when
 * its bootstrap starts (ncclGetUniqueId, the first communicator), the
 * NCCL_IB_* ones when its IB transport starts (once per process) and at
 * each connection. So they are set before the first NCCL call of the
 * request and kept until its last rank thread has ended; the agent's own
 * environment is restored after (what it starts later sees the login's).
 * NCCL keeps the values it has read for the life of the process (its
 * parameters are read once, and its IB transport starts once): in an agent
 * that serves several benches (the TUI's session), a later request's
 * different values are set but not all of them take effect; a command-line
 * `clusterdoc bench` starts its own agents, so its values are NCCL's.
 *
 * setenv is not thread-safe: begin and end a scope in the thread that
 * serves the request, while no other thread reads the environment (as
 * nccl_netlog.h's scope, which nests inside this one).
 */
#ifndef CD_COLLECTIVES_NCCL_ENV_H
#define CD_COLLECTIVES_NCCL_ENV_H

#include <stddef.h>

#include <jansson.h>

#define NCCL_ENV_MAX       16  /* variables in one request */
#define NCCL_ENV_VALUE_MAX 512 /* bytes of one value */

/* Whether name is one the bench sets itself to read NCCL's lines back
 * (NCCL_DEBUG, NCCL_DEBUG_SUBSYS, NCCL_DEBUG_FILE: nccl_netlog.h). */
int nccl_env_is_own(const char *name);

struct nccl_env_scope {
	char *name[NCCL_ENV_MAX];
	char *saved[NCCL_ENV_MAX]; /* the agent's value, NULL = was unset */
	size_t n;
};

/*
 * Pure: whether env (the request's "env", NULL = absent) may be set: an
 * object of at most NCCL_ENV_MAX names "NCCL_" followed by capitals, digits
 * and '_' (at most 63 bytes), each a string value under NCCL_ENV_VALUE_MAX
 * bytes without a newline; NCCL_DEBUG, NCCL_DEBUG_SUBSYS and NCCL_DEBUG_FILE
 * are the bench's own (nccl_netlog.h) and refused. 0, or CD_ERR_PARSE with err
 * naming the variable ("env: NCCL_IB_HCA is not a string").
 */
int nccl_env_check(const json_t *env, char *err, size_t errlen);

/* Set env's variables (checked with nccl_env_check; NULL: none), keeping
 * the agent's values in s. */
void nccl_env_begin(struct nccl_env_scope *s, const json_t *env);

/* Restore what begin changed. */
void nccl_env_end(struct nccl_env_scope *s);

#endif
