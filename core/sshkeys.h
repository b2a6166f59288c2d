/* SPDX-License-Identifier: MIT */
/*
 * sshkeys.h - what clusterdoc does with each key that `ssh -G` prints: one
 * row per key, so that no setting that changes where or how ssh connects
 * is silently left out by the libssh2 transport.
 *
 * Each key has one treatment:
 *   SSHKEY_READ      sshconfig_parse_g reads it and the libssh2 transport
 *                    applies it (the openssh transport reads ssh_config
 *                    itself);
 *   SSHKEY_LIBSSH2   the same, for keys the libssh2 transport applies in a
 *                    way of its own (HostKeyAlias in the known_hosts
 *                    look-up, the IdentityAgent socket, AddressFamily);
 *   SSHKEY_SWITCH    a value outside `keep` sends the node to the openssh
 *                    transport, which the pool says once per run and key;
 *   SSHKEY_KRB5      GSSAPIAuthentication: switch when it is yes and the
 *                    user holds a Kerberos ticket cache (without one ssh
 *                    falls through to keys, as libssh2 does; Debian's
 *                    /etc/ssh/ssh_config sets it yes for every host);
 *   SSHKEY_HARMLESS  left to ssh; `why` says why that changes nothing the
 *                    node's session depends on.
 * The rows are the keys of OpenSSH 9.2 (`ssh -G` with and without every
 * optional key set); tests/unit/test_sshkeys.c walks them against that list.
 */
#ifndef CD_SSHKEYS_H
#define CD_SSHKEYS_H

#include <stddef.h>

enum sshkey_use { SSHKEY_READ, SSHKEY_LIBSSH2, SSHKEY_SWITCH, SSHKEY_KRB5, SSHKEY_HARMLESS };

struct sshkey_rule {
	const char *key;  /* as `ssh -G` prints it, lower case */
	const char *name; /* as ssh_config(5) spells it, for messages */
	enum sshkey_use use;
	/* SSHKEY_SWITCH: the values (blank-separated, compared without case)
	 * that need no switch; NULL: any value switches */
	const char *keep;
	const char *why; /* one line: what is done, or why nothing is needed */
};

/* The row for a key (n bytes, compared without case), or NULL. */
const struct sshkey_rule *sshkeys_find(const char *key, size_t n);

/*
 * A key `ssh -G` printed that no row names (a newer OpenSSH's): it may change
 * where or how ssh connects, so the node goes through ssh(1), which honours
 * it. Returns "KEY (a key clusterdoc does not know)" for the notice: one
 * string per key for the process's life, so that pointers compare as the
 * table's names do; NULL past 32 such keys (then the first is kept).
 */
const char *sshkeys_unknown_name(const char *key, size_t n);

/* 1 when value, for row r, sends the node to the openssh transport
 * (SSHKEY_SWITCH and value not in keep); else 0. */
int sshkeys_switches(const struct sshkey_rule *r, const char *value);

/* The whole table (static), *n rows. */
const struct sshkey_rule *sshkeys_table(size_t *n);

/* Printable name of a treatment: "read", "libssh2", "switch", "krb5",
 * "harmless". */
const char *sshkeys_use_name(enum sshkey_use use);

#endif
