/* SPDX-License-Identifier: MIT */
/*
 * fix_peerssh.h - the peer-ssh fixer of `clusterdoc mpi-check --fix`:
 * node-to-node SSH set up the way mpirun's rsh launcher needs it, in the
 * login user's own files (no sudo):
 *   - one cluster key pair, made once on the head in clusterdoc's state
 *     directory ($XDG_STATE_HOME/clusterdoc/mpi/id_ed25519, 0600, never
 *     printed), placed on every node as ~/.ssh/id_clusterdoc_mpi (0600);
 *   - its public key in a marked block of every node's authorized_keys;
 *   - a marked block in ~/.ssh/config: `Host <the nodes>` + IdentityFile;
 *   - every node's host key, as the head verified it when it logged in, in
 *     a marked block of every node's ~/.ssh/known_hosts.
 * The plan is fix.h's plain data, applied and journalled by fix_run.h and
 * undone with `clusterdoc fix --undo RUN`.
 */
#ifndef CD_FIXERS_FIX_PEERSSH_H
#define CD_FIXERS_FIX_PEERSSH_H

#include <limits.h>
#include <stddef.h>

#include "fix.h"

#define FIX_PEERSSH_ID      "peer-ssh"
#define FIX_PEERSSH_KEY     "~/.ssh/id_clusterdoc_mpi"
#define FIX_SSH_CONFIG      "~/.ssh/config"
#define FIX_KNOWN_HOSTS     "~/.ssh/known_hosts"
#define FIX_PEERSSH_BLOCK   "clusterdoc-mpi"
#define FIX_PEERSSH_KEY_MAX (16 * 1024)

/* The files the gather reads for it besides its own (fix_run_gather_extra). */
extern const char *const fix_peerssh_paths[];
extern const size_t fix_peerssh_npaths;

/* What the plan is made from. */
struct fix_peerssh_input {
	const char *const *hosts; /* [n]: the names the nodes use for each other */
	size_t n;
	const char *publine; /* the cluster key's public line ("ssh-ed25519 AAAA... comment") */
	/* its private key file's bytes; NULL in a dry run where the key is not
	 * made yet (the plan then shows the file without its bytes) */
	const char *privkey;
	size_t privlen;
	/* [n]: node i's host key as "KEYTYPE BASE64" (verified by the head),
	 * NULL when unknown: node i is then left out of known_hosts, with a note */
	char *const *hostkeys;
	const struct fix_node_state *states; /* [n], gathered with fix_peerssh_paths */
};

/*
 * The plan (pure): per gathered node, the actions above that would change
 * something, and notes for what is left as is (a different key already at
 * FIX_PEERSSH_KEY is never overwritten). run is the run id. Free with
 * fix_plan_free.
 */
struct fix_plan *fix_peerssh_plan(const struct fix_peerssh_input *in, const char *run);

/* The cluster key's path on the head: $XDG_STATE_HOME/clusterdoc/mpi/
 * id_ed25519 (or ~/.local/state/...). 0, or CD_ERR_NOTFOUND with err. */
int fix_peerssh_key_path(char *out, size_t len, char *err, size_t errlen);

/*
 * Node i's host key line "KEYTYPE BASE64" from known_hosts files: a line
 * (not @revoked or @cert-authority) naming host whose key has the
 * fingerprint fp (the key the node offered when the head logged in, so the
 * line is the one the head verified it with). New string, or NULL when no
 * line has it.
 */
char *fix_peerssh_hostkey(const char *const *files, size_t nfiles, const char *host,
                          const char *fp);

#endif
