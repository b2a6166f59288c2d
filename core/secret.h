/* SPDX-License-Identifier: MIT */
/*
 * secret.h - ask the user for a secret (an SSH password) so that it never
 * reaches argv, the environment, a log or a file, and wipe it after use.
 *
 * Where the question goes, following OpenSSH's SSH_ASKPASS convention:
 *   - SSH_ASKPASS_REQUIRE=force or prefer, with SSH_ASKPASS set: the
 *     program $SSH_ASKPASS runs with the prompt as its only argument and
 *     the first line it prints is the secret (tests and GUIs use this);
 *   - otherwise the controlling terminal (/dev/tty) with echo off, restored
 *     before returning; SSH_ASKPASS is still used when there is no terminal
 *     and SSH_ASKPASS_REQUIRE is not "never".
 */
#ifndef CD_SECRET_H
#define CD_SECRET_H

#include <stddef.h>

/*
 * Ask with prompt ("root@node[1-3]'s password: ") and put the answer,
 * without its newline, NUL-terminated, in out. Returns 0, or:
 * CD_ERR_UNSUPPORTED (no terminal and no SSH_ASKPASS: err says to run on a
 * terminal or set SSH_ASKPASS), CD_ERR_TOOBIG (longer than outlen - 1),
 * CD_ERR_IO (the terminal or the askpass program failed, or the answer was
 * empty: an empty password is never sent). out is wiped on error.
 */
int secret_ask(const char *prompt, char *out, size_t outlen, char *err, size_t errlen);

/* Overwrite n bytes at p with zeros in a way the compiler keeps. */
void secret_wipe(void *p, size_t n);

#endif
