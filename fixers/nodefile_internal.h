/* SPDX-License-Identifier: MIT */
/*
 * nodefile_internal.h - what nodefile.c (the requests as the agent's own
 * user) and nodefile_sudo.c (the same requests with "sudo": true) share:
 * reading what a path holds, finding where a write lands, the parsed
 * file_write request and its checks, and the two entry points of the root
 * path. Only those two files include it; nodefile.h is the contract.
 */
#ifndef CD_FIXERS_NODEFILE_INTERNAL_H
#define CD_FIXERS_NODEFILE_INTERNAL_H

#include "sha256.h"

#include <jansson.h>
#include <limits.h>
#include <stddef.h>
#include <sys/stat.h>

/* What a path holds now. */
struct nodefile_current {
	int exists;
	struct stat st;
	char *data; /* NULL when absent; may be NULL for an empty file */
	size_t len;
	char sha[SHA256_HEX_LEN]; /* "" when absent */
};

/*
 * Read path (symlinks followed) into cur, at most cap bytes: absent is not
 * an error (cur->exists 0). 0, or -1 with *code ("io", "too-big") and msg;
 * a FIFO, a device or a directory is "io" and is never opened. cur->sha is
 * the content's sha256. Free with nodefile_current_fini (nothing to free
 * after -1).
 */
int nodefile_current_read(const char *path, size_t cap, struct nodefile_current *cur,
                          const char **code, char *msg, size_t msglen);

/* Free cur's data; cur may then be read into again. */
void nodefile_current_fini(struct nodefile_current *cur);

/*
 * The file that a write through path lands in, into out: path itself, or
 * the end of the symlink chain that starts there (which need not exist).
 * 0, or -1 with msg (a loop of links, a link that cannot be read, a name
 * too long).
 */
int nodefile_final_target(const char *path, char *out, size_t outlen, char *msg, size_t msglen);

/* The parsed file_write request. */
struct nodefile_write_req {
	char path[PATH_MAX];
	char backup[PATH_MAX]; /* "" when none */
	const char *expect;    /* NULL, "absent" or 64 hex digits; borrowed from the request */
	int remove;
	long long mode;
	unsigned char *data; /* decoded; NULL for remove; the caller frees it */
	size_t len;
};

/* Decode req's "data" into w->data and w->len (nothing for remove). 0, or
 * -1 with msg when it is not base64. */
int nodefile_write_req_decode(json_t *req, struct nodefile_write_req *w, char *msg, size_t msglen);

/* 0 when w's "expect" (if any) describes cur; -1 with msg (the caller's
 * "conflict") when the file changed since the plan was made. */
int nodefile_check_expect(const struct nodefile_write_req *w, const struct nodefile_current *cur,
                          char *msg, size_t msglen);

/* file_write's response (nodefile.h); backup NULL when none was made. New. */
json_t *nodefile_write_result(int changed, const char *before, const char *after, int in_place,
                              const char *backup);

/*
 * Serve req as type ("file_read", "file_write") through the agent under
 * sudo (noderun_as_root), with path and backup already expanded here: sudo
 * gives the command root's $HOME, where "~/" would mean another directory.
 * The executable is nodefile_set_self's, or /proc/self/exe. backup may be
 * NULL. Returns the response (new), or NULL with *code and msg.
 */
json_t *nodefile_as_root(json_t *req, const char *type, const char *path, const char *backup,
                         const char **code, char *msg, size_t msglen);

/*
 * file_write with "sudo": true, for w as nodefile.c's write_req_parse left it (data not
 * yet decoded). A root-owned file changed as a user with sudo: read and
 * checked as the user (the fixers' root files are world-readable), backed
 * up as the user (so the backup is the user's to read), then replaced
 * through sudo with fixed commands: a copy of the file beside it (owner and
 * mode kept), the new content into it, the rename (sudocmd.h); written in
 * place when the rename is refused (a bind mount). Returns the response
 * (new), or NULL with *code ("bad-request", "io", "conflict", "sudo-*") and
 * msg. Frees w->data.
 */
json_t *nodefile_write_as_root(struct nodefile_write_req *w, json_t *req, const char **code,
                               char *msg, size_t msglen);

#endif
