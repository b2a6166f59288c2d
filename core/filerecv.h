/* SPDX-License-Identifier: MIT */
/*
 * filerecv.h - the agent's side of pushing a file from the head over the
 * agent protocol (docs/protocol.md): one mechanism for every transport
 * (libssh2, openssh, local), content-addressed so a node that already has
 * the file receives nothing.
 *
 *   file_stat   {"path", "size", "sha256"} -> {"present": bool}: the file
 *               exists with exactly that size and SHA-256
 *   file_put    {"path", "offset", "raw_len", "zdata"}: zdata is the base64
 *               of one zlib stream that inflates to exactly raw_len bytes,
 *               written at offset of the part file (offset 0 creates or
 *               truncates it, parent directories created 0700; any other
 *               offset needs the part file there: "io" when it is not)
 *               -> {}; a write that fails (a full disk) removes the part
 *               file
 *   file_commit {"path", "size", "sha256"}: the part file must have exactly
 *               that size and SHA-256; it is renamed to path -> {}
 *
 * The part file is "<path>.part.<writer>" (filerecv_part_path): this agent's
 * own, so that nodes sharing a home each write their own and the last
 * rename of identical content wins. A part left by a put that never got
 * its commit goes: the agent removes its own when it exits
 * (filerecv_remove_parts), and the first put into a directory removes the
 * parts there of writers of this node that are gone (filerecv_sweep_stale).
 *
 * path is absolute or starts with "~/" (the agent's $HOME); a path with a
 * ".." component is refused. Errors: "bad-request" (malformed), "io" (a
 * system call failed, errno named), "mismatch" (size or SHA-256 differ:
 * the part file is removed).
 */
#ifndef CD_FILERECV_H
#define CD_FILERECV_H

#include <jansson.h>
#include <stddef.h>

#define FILERECV_MAX_CHUNK (512 * 1024) /* raw bytes per file_put */
#define FILERECV_STALE_S   600          /* a dead writer's part older than this goes */

json_t *filerecv_stat(json_t *req, const char **code, char *msg, size_t msglen);
json_t *filerecv_put(json_t *req, const char **code, char *msg, size_t msglen);
json_t *filerecv_commit(json_t *req, const char **code, char *msg, size_t msglen);

/* Remove the part files this process started and did not commit (its
 * exit: the head went away mid-put). Safe from another thread than the
 * one serving puts; gives up after about 200 ms if a put holds the table. */
void filerecv_remove_parts(void);

/* Remove from dir the part files whose writer (the tag in the name) is of
 * this node (cd_writer_tag's host), is no longer running (no such pid),
 * and that are at least min_age_s old. Other nodes' parts (a shared home)
 * and live writers' are left. The number removed. */
int filerecv_sweep_stale(const char *dir, int min_age_s);

/* The part file of path (already expanded) for this process, into out. */
void filerecv_part_path(const char *path, char *out, size_t outlen);

/* "~/x" -> "$HOME/x"; other absolute paths unchanged. 0, or -1 with msg
 * (relative path, "..", too long, no $HOME). */
int filerecv_expand(const char *path, char *out, size_t outlen, char *msg, size_t msglen);

#endif
