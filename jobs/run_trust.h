/* SPDX-License-Identifier: MIT */
/*
 * run_trust.h - the agent's check, before a run starts, that no other user
 * can change the code the job runs: its run directory (the --sync tree,
 * the job's working directory) and the run directory's hang/ (first on
 * every rank's PYTHONPATH, where Python imports any module from).
 *
 *   dir_trust {"paths": ["~/.cache/clusterdoc/runs/RUN", ".../hang"]} -> {"absent": bool}
 *
 * Each path ("~/..." or absolute) must be a directory, not a symlink
 * (opened with O_NOFOLLOW), owned by the agent's user and writable by
 * nobody else (no group or other write bit); every directory above it (its
 * real path) must be the user's or root's, and writable by others only
 * with the sticky bit (/tmp), or another user could rename it away and put
 * a directory of theirs in its place. A path that is not there (hang-ready's
 * file could not be put) is as safe when nobody else can make it: its
 * nearest existing ancestor is the user's or root's and writable by nobody
 * else (absent: true). Errors: "bad-request", "unsafe" (msg names the path
 * and what is wrong with it).
 */
#ifndef CD_COLLECTIVES_RUN_TRUST_H
#define CD_COLLECTIVES_RUN_TRUST_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

#define RUN_TRUST_MAX_PATHS 8

/*
 * 0 when path (absolute) is a directory only uid (and root) can change, 1
 * when it is not there and only they could make it, as above; -1 with msg
 * saying which directory and why ("/x/r is writable by its group or by
 * others (mode 0775)").
 */
int run_trust_dir(const char *path, uid_t uid, char *msg, size_t msglen);

json_t *run_trust_agent_check(json_t *req, const char **code, char *msg, size_t msglen);

#endif
