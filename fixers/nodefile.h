/* SPDX-License-Identifier: MIT */
/*
 * nodefile.h - the agent's side of `clusterdoc fix` reading and changing
 * files on a node (docs/protocol.md, "Fixer requests"): who the agent runs
 * as, a file's content and owner, and a checked, atomic, backed-up write.
 *
 *   whoami     {} -> {"uid": int, "gid": int (effective ids), "user": str
 *              ("" without a passwd entry), "home": str ($HOME, or the
 *              passwd home without it), "shell": str (pw_shell, "" if none),
 *              "sudo": path of sudo on PATH, or null}
 *
 *   file_read  {"path", "max"?: int (default 1 MiB, 0..8 MiB), "sudo"?: bool}
 *              -> {"exists": bool, "data": base64 (only when it exists),
 *                  "size": int, "mode": int (st_mode & 07777), "uid": int,
 *                  "gid": int, "sha256": hex ("" when absent)}
 *              Symlinks are followed (the target's content and owner). When
 *              absent: size 0, mode 0, uid and gid -1. Not a regular file:
 *              "io". More than max bytes, or more than NODEFILE_MAX_LINE_FILE
 *              (the base64 must fit the protocol's 1 MiB line): "too-big".
 *
 *   file_write {"path", "data"?: base64, "remove"?: bool,
 *               "expect"?: "absent" | sha256 hex, "mode"?: int (0..07777,
 *               only for a new file; default 0644), "backup"?: path,
 *               "sudo"?: bool}
 *              -> {"changed": bool, "before_sha256": hex or "",
 *                  "after_sha256": hex or "", "in_place": bool,
 *                  "backup": path or null}
 *              Exactly one of "data" and "remove": true. In this order:
 *              1. The current state is read. A symlink is written through:
 *                 the final target of its chain is replaced (and created if
 *                 the link dangles), so the link survives. remove unlinks
 *                 path itself (a link, not the file it points to).
 *              2. Nothing to do -> changed false, nothing written, no backup:
 *                 data equal to the current content, or remove of an absent
 *                 file. This comes before expect: a second run of the same
 *                 plan succeeds.
 *              3. expect ("absent", or the content's sha256 when the plan was
 *                 made) differs from the current state -> "conflict", nothing
 *                 written.
 *              4. When the file exists and "backup" is given, its old content
 *                 is written to backup (replaced atomically, mode 0600, parent
 *                 directories created 0700); "backup" in the result is that
 *                 expanded path, else null.
 *              5. remove: unlink. Otherwise a temporary ".NAME.clusterdoc.PID"
 *                 in the same directory gets the data, an existing file's mode
 *                 (and, as root, its uid and gid) or "mode" for a new one, is
 *                 fsynced and renamed over the target (a new file's parent
 *                 directories are created 0700). When the rename fails with
 *                 EBUSY or EXDEV (the file is a bind mount: /etc/hosts in
 *                 Docker, `ip netns exec`), the temporary is removed and the
 *                 file is rewritten in place (O_TRUNC, write, fsync):
 *                 "in_place": true. No temporary is ever left behind.
 *              An existing file over NODEFILE_MAX_FILE bytes is "too-big".
 *
 * Paths are absolute or start with "~/" (the agent's $HOME, expanded by
 * the agent that received the request, also when it goes through sudo); a
 * ".." component or a trailing '/' is refused.
 *
 * "sudo": true, when noderun_need_sudo says so (effective uid not 0): the
 * agent runs `sudo -n -- SELF --one-request` (SELF: its own executable),
 * gives it the request as one line on stdin with "sudo" removed and the
 * paths expanded, waits at most 30 s (noderun_as_root), and answers what
 * that agent answered (its result, or its error code and message).
 *
 * Errors: "bad-request" (malformed), "io" (a system call failed; the path
 * and the reason named), "too-big", "conflict" (file_write's expect),
 * "sudo-password" (sudo -n wants a password), "sudo-denied" (sudoers
 * refuses), "sudo-missing" (no sudo on PATH), "failed" (the agent under
 * sudo gave no answer: timeout, crash). The sudo-* messages say what to do.
 */
#ifndef CD_NODEFILE_H
#define CD_NODEFILE_H

#include <jansson.h>
#include <stddef.h>

#include "proto.h"

#define NODEFILE_READ_MAX      (1024 * 1024)     /* file_read's default "max" */
#define NODEFILE_MAX_FILE      (8 * 1024 * 1024) /* the largest "max"; file_write's cap */
#define NODEFILE_MAX_LINE_FILE ((PROTO_MAX_LINE - 4096) / 4 * 3) /* what base64 lets fit */

json_t *nodefile_whoami(json_t *req, const char **code, char *msg, size_t msglen);
json_t *nodefile_read(json_t *req, const char **code, char *msg, size_t msglen);
json_t *nodefile_write(json_t *req, const char **code, char *msg, size_t msglen);

/* The executable run under sudo for "sudo": true. NULL or "" restores the
 * default, /proc/self/exe (tests point it at the built agent). The string is
 * copied. */
void nodefile_set_self(const char *path);

#endif
