/* SPDX-License-Identifier: MIT */
/*
 * dcgm_agent.h - the agent's "dcgm_diag" request (docs/protocol.md): DCGM's
 * GPU diagnostic, `dcgmi diag -r LEVEL -j`, as one child under a deadline.
 *
 * The agent does not read dcgmi's words: it returns them, and the head
 * parses them (dcgm_parse.h) into findings. A node without dcgmi on its
 * PATH answers {"present": false}, which is no error.
 */
#ifndef CD_PROBES_DCGM_AGENT_H
#define CD_PROBES_DCGM_AGENT_H

#include <jansson.h>
#include <stddef.h>

#define DCGM_L1_MS   60000        /* the deadline of level 1 (DCGM: "a quick test") */
#define DCGM_L2_MS   300000       /* of level 2 (DCGM: "about two minutes") */
#define DCGM_OUT_MAX (512 * 1024) /* dcgmi's JSON kept; more is an error */

/* The level's deadline in ms: DCGM_L1_MS, DCGM_L2_MS; 0 for no level. */
static inline int dcgm_level_ms(int level)
{
	return level == 1 ? DCGM_L1_MS : level == 2 ? DCGM_L2_MS : 0;
}

/*
 * {"type": "dcgm_diag", "level": 1|2, "timeout_ms": N (optional: what the
 * check's --deadline leaves, when that is shorter than the level's deadline,
 * or than $CLUSTERDOC_DCGM_TIMEOUT_MS on the node, the tests' override)}
 * -> {"present": false} when dcgmi is not on PATH; else {"present": true,
 *    "path", "level", "timeout_ms", "exit": N | null, "output": stdout
 *    (bounded), "stderr": its last bytes, "error": "..." (only when dcgmi did
 *    not finish: its deadline passed, or it could not run)}.
 * dcgmi's own process group is killed at the deadline.
 * Errors: code "bad_request" for a level other than 1 or 2.
 */
json_t *dcgm_agent_diag(json_t *req, const char **code, char *msg, size_t msglen);

#endif
