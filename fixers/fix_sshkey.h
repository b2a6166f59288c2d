/* SPDX-License-Identifier: MIT */
/*
 * fix_sshkey.h - the head's side of the ssh-key fixer: which key the head
 * logs in with (and creating one when there is none), and whether a node's
 * authorized_keys already holds it. The node's side is a plain file action
 * on ~/.ssh/authorized_keys (fix_sshkey.c's plan, fix_run.h's apply).
 */
#ifndef CD_FIXERS_FIX_SSHKEY_H
#define CD_FIXERS_FIX_SSHKEY_H

#include <limits.h>
#include <stddef.h>

struct head_key {
	char path[PATH_MAX]; /* the private key; the public half is path + ".pub" */
	int exists;          /* both halves are there (else: to be created at path) */
	char *publine;       /* "TYPE BASE64 COMMENT" without the newline, NULL unless exists */
	char type[32];       /* "ssh-ed25519" */
	char fp[64];         /* "SHA256:..." as ssh-keygen -l prints it */
};

/*
 * The key the head would log in with: the first of files[0..n) whose private
 * key and ".pub" both exist and whose public half parses (type, canonical
 * base64 blob naming that type). None: exists = 0 and path = files[0], or
 * home + "/.ssh/id_ed25519" when n is 0. A ".pub" that does not parse is an
 * error naming it (CD_ERR_PARSE), never silently passed over.
 */
int head_key_find(char *const *files, size_t n, const char *home, struct head_key *k, char *err,
                  size_t errlen);

/*
 * Create k->path as an ed25519 key without a passphrase (the logins that
 * follow are unattended; an ssh-agent key is the alternative for people who
 * want one) by running ssh-keygen, with comment, then read it back as
 * head_key_find does. Never overwrites: a file already at k->path is
 * CD_ERR_IO. ~/.ssh is created 0700 by ssh-keygen when missing.
 */
int head_key_create(struct head_key *k, const char *comment, char *err, size_t errlen);

/* head_key_create in two halves, for a caller that runs ssh-keygen as a
 * child of its event loop (childrun.h): the checks and the directory, and
 * the NULL-terminated argv to run (borrowing comment and k->path), then,
 * from its wait status and stderr, the key read back. Same errors. */
#define HEAD_KEY_ARGV       11
#define HEAD_KEY_TIMEOUT_MS 30000
int head_key_create_argv(struct head_key *k, const char *comment, char *argv[HEAD_KEY_ARGV],
                         char *err, size_t errlen);
int head_key_created(struct head_key *k, int status, const char *errout, char *err, size_t errlen);

void head_key_fini(struct head_key *k);

/*
 * Parse a public key line "TYPE BASE64 [COMMENT]" (pure): type and the
 * fingerprint of the blob. 0, or CD_ERR_PARSE when the type is not one of
 * OpenSSH's key types or the blob is not canonical base64 of a key of that
 * type.
 */
int pubkey_parse(const char *line, size_t len, char type[32], char fp[64]);

/*
 * Whether authorized_keys text data[0..len) authorizes publine's key: a
 * line that is not a comment holds TYPE BASE64 of publine as two whole
 * words (after options such as from="..." or not). 1 or 0.
 */
int authorized_keys_has(const char *data, size_t len, const char *publine);

#endif
