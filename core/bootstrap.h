/* SPDX-License-Identifier: MIT */
/*
 * bootstrap.h - the remote command that starts the agent on a node: plain
 * POSIX sh, handed to the user's login shell in single quotes.
 *
 * It picks the agent by `uname -m` (one `case` arm per agent of the set),
 * runs the cached copy named by its SHA-256 when one is there, and
 * otherwise chooses where to keep a new one: ~/.cache/clusterdoc, else
 * $XDG_RUNTIME_DIR/clusterdoc, else /tmp/clusterdoc-UID (a 0700 directory
 * the user owns, never followed through a symlink). A copy cached in one of
 * the last two runs only while ~/.cache/clusterdoc still cannot take a new
 * agent. It speaks to the head
 * in lines "CDBOOT <word> ...":
 *
 *   arch M               no agent for `uname -m` M
 *   skip CODE DIR        DIR cannot take a new agent (CODE: nospace, rofs,
 *                        perm, quota, unsafe, other)
 *   nowhere              no directory can
 *   missing SHA ID TMP   upload agent SHA to the temp name TMP (unique per
 *                        writer: node name, shell pid, the head's token);
 *                        ID is the directory's marker ("-": none), the
 *                        same on every node that shares the directory
 *   fail CODE DIR        writing or installing in DIR failed (CODE as for
 *                        skip, or checksum, short, gone); TMP is removed
 *   exec SHA ID DIR      the agent starts; protocol lines follow
 *
 * With a stream upload, after "missing" the shell reads one line from
 * stdin: "send" followed by exactly the agent's bytes, or anything else to
 * look again (another node sharing the directory put the agent there).
 * An upload is checked (size, and sha256sum where the node has it), made
 * executable and renamed over the final name: only a complete copy ever
 * appears under it, and only the final name is ever executed.
 */
#ifndef CD_BOOTSTRAP_H
#define CD_BOOTSTRAP_H

#include "agentset.h"

struct boot_params {
	int stream;        /* the upload comes on stdin (openssh), else by SFTP */
	int force;         /* the cached copy proved bad: upload a fresh one */
	const char *skip;  /* "|DIR|DIR|": directories that already failed, or "" */
	const char *tmp;   /* SFTP second pass: the uploaded temp file, or NULL */
	int tmp_failed;    /* ... whose upload failed: diagnose and remove it */
	const char *token; /* random [0-9a-f]+, unique per node and run */
};

/* The command line (new string). Paths must not contain a single quote or
 * a double quote (the head refuses such directories before calling). */
char *bootstrap_command(const struct agentset *set, const struct boot_params *p);

#endif
