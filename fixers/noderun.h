/* SPDX-License-Identifier: MIT */
/*
 * noderun.h - the agent's side of `clusterdoc fix` running a command on a
 * node (docs/protocol.md, "Fixer requests"), and the sudo helpers that
 * nodefile.h shares.
 *
 *   run {"argv": [str, ...], "sudo"?: bool, "timeout_ms"?: int (default
 *       10000, 1..120000), "max_output"?: int (default 65536, 0..1 MiB),
 *       "stdin"?: str}
 *       -> {"status": int, "signal": int, "timed_out": bool,
 *           "stdout": str, "stderr": str,
 *           "sudo_error": null | "password" | "denied" | "missing",
 *           "truncated": true (only when output was cut)}
 *
 * argv[0] is searched in PATH; the command gets the agent's environment plus
 * LC_ALL=C (so what it prints, sudo's messages included, is in English) and
 * "stdin" (or nothing) on its stdin. status is the exit status, or -1 when
 * the command was killed by a signal (signal says which) or ran past
 * timeout_ms (timed_out true, signal 0: the agent killed it). A command that
 * cannot be executed gives status 127 and "cannot run ARGV0: REASON" on
 * stderr ("command not found in PATH", or exec's error).
 *
 * stdout and stderr each keep their first max_output bytes; past that,
 * "truncated": true. Bytes that are not valid UTF-8 become '?'. The agent
 * reads up to NODERUN_DRAIN_MAX bytes of each stream to learn the real exit
 * status; a command that writes more is killed (status -1, truncated). The
 * whole response must fit the protocol's 1 MiB line ("too-big" otherwise), so
 * a head asking for two full 1 MiB streams can get that error.
 *
 * "sudo": true runs `sudo -n -- ARGV...` when the agent's effective uid is
 * not 0 (as root the command runs directly). When sudo was used and status
 * is not 0, sudo_error classifies sudo's own refusal from stderr:
 * "password" (it wants a password or a terminal), "denied" (sudoers says
 * no); "missing" when sudo is not on PATH: then nothing runs, status is
 * 127. Otherwise null.
 *
 * Errors: "bad-request" (malformed), "io" (the command could not be started:
 * no pipe or fork).
 */
#ifndef CD_NODERUN_H
#define CD_NODERUN_H

#include <jansson.h>
#include <stddef.h>

#define NODERUN_TIMEOUT_MS         10000
#define NODERUN_MAX_TIMEOUT_MS     120000
#define NODERUN_MAX_OUTPUT         65536
#define NODERUN_MAX_MAX_OUTPUT     (1024 * 1024)
#define NODERUN_DRAIN_MAX          (8 * 1024 * 1024)
#define NODERUN_MAX_ARGS           256
#define NODERUN_AS_ROOT_TIMEOUT_MS 30000

json_t *noderun_run(json_t *req, const char **code, char *msg, size_t msglen);

/* Whether req's "sudo": true means going through sudo: the effective uid is
 * not 0, or noderun_force_sudo(1) was called. 0 when "sudo" is absent or
 * false. nodefile.h's requests decide the same way. */
int noderun_need_sudo(json_t *req);

/* For tests, which run as root and still want to see sudo used: on != 0
 * makes noderun_need_sudo ignore the effective uid; 0 restores it. */
void noderun_force_sudo(int on);

/* The first executable "sudo" in $PATH ("/usr/bin:/bin" when PATH is
 * unset) into path. 0, or -1 when there is none (or it does not fit). */
int noderun_find_sudo(char *path, size_t len);

/* sudo's refusal in its stderr (as printed under LC_ALL=C): "password" for
 * "a password is required" / "a terminal is required", "denied" for "not in
 * the sudoers file" / "is not allowed to execute" / "may not run sudo", or
 * NULL. A static string. */
const char *noderun_sudo_error(const char *stderr_text);

/*
 * Serve req through `sudo -n -- SELF --one-request`: the agent's own
 * executable run as root (nodefile.h's "sudo": true). req (not taken) must
 * hold "type" and every field that agent needs, paths already expanded;
 * "id" 0 is added when it has none. It goes as one line on the child's
 * stdin, with LC_ALL=C, and the child has NODERUN_AS_ROOT_TIMEOUT_MS.
 * Returns that agent's result (new reference), or NULL with *code and msg:
 * that agent's error (code and message), "sudo-password", "sudo-denied" or
 * "sudo-missing" (the message says what to do: passwordless sudo for the
 * user, or clusterdoc fix as root), "too-big" (req does not fit a line),
 * "failed" (no answer: a timeout, a crash; sudo's words quoted).
 */
json_t *noderun_as_root(json_t *req, const char *self, const char **code, char *msg, size_t msglen);

/* The effective user's name for messages: the passwd name, or "uid N".
 * Returns name. */
const char *noderun_user_name(char *name, size_t len);

#endif
