/* SPDX-License-Identifier: MIT */
/*
 * knownhosts.h - our own reader and appender for OpenSSH known_hosts files.
 *
 * We do not use libssh2's knownhost API: it matches names with strcmp (no
 * wildcards, no negation, no markers), stops at the first line it cannot
 * parse, reports a host known only under another key type as NOTFOUND (a
 * downgrade risk) and has memory-safety bugs on malformed lines.
 *
 * What is implemented, following OpenSSH's hostfile.c and match.c:
 *   - host fields: comma-separated patterns with '*' and '?' wildcards and a
 *     leading '!' for negation (a negated pattern that matches excludes the
 *     whole line), compared case-insensitively (ASCII); "[host]:port" forms;
 *     hashed "|1|base64(salt)|base64(hmac-sha1(salt, name))" fields;
 *   - the "@revoked" marker: a revoked key is refused even if another line
 *     accepts it;
 *   - comments ('#'), blank lines, a trailing CR;
 *   - malformed lines are skipped and counted, never fatal.
 * What is not: "@cert-authority" lines are skipped, because clusterdoc does
 * not do host certificates; CheckHostIP (we look up the name only); the
 * caller applies HostKeyAlias by passing the alias as the host.
 *
 * Every line read from a file goes into a buffer of KH_LINE_MAX bytes; a
 * longer line is skipped as a whole and counted, never truncated. A file
 * of more than KH_FILE_MAX bytes (UserKnownHostsFile /dev/zero) is an
 * error, CD_ERR_TOOBIG "PATH is larger than N bytes".
 */
#ifndef KNOWNHOSTS_H
#define KNOWNHOSTS_H

#include <stddef.h>

#define KH_FP_LEN   64
#define KH_LINE_MAX 16384                 /* longest line, '\n' excluded */
#define KH_KEY_MAX  (KH_LINE_MAX / 4 * 3) /* largest key blob a line can hold */
#define KH_FILE_MAX (64 << 20)            /* largest file: a stream fails fast */

enum kh_status { KH_MATCH, KH_MISMATCH, KH_NOTFOUND, KH_REVOKED };

struct kh_result {
	enum kh_status status;
	/* The stored key the status is about: the matching line (MATCH), the
	 * conflicting line (MISMATCH: one with the offered key type if any,
	 * else one with another type), the @revoked line (REVOKED). Empty
	 * strings and line 0 for NOTFOUND. file is cut to fit if longer. */
	char stored_fp[KH_FP_LEN];
	char file[512];
	int line;
	/* Comma-separated key types that non-revoked lines give for this host,
	 * strongest first ("ssh-ed25519,ecdsa-sha2-nistp256,..."), filled in
	 * every case; the caller puts them first in libssh2's host key method
	 * preference. Only when all eight supported types are known does the
	 * last one (sk-ecdsa-sha2-nistp256@openssh.com) not fit; it is then
	 * left out, never cut. */
	char known_types[128];
	int skipped; /* malformed or overlong lines skipped in all files */
};

enum kh_marker { KH_MARKER_NONE, KH_MARKER_REVOKED, KH_MARKER_CERT_AUTHORITY };

/* One parsed known_hosts line. hosts and keytype point into the line that
 * was parsed (borrowed, not NUL-terminated); the key blob is decoded. */
struct kh_entry {
	enum kh_marker marker;
	const char *hosts; /* the host field: patterns or a |1| hash */
	size_t hosts_len;
	int hashed;             /* hosts is "|1|salt|hash" */
	unsigned char salt[20]; /* valid when hashed */
	unsigned char hash[20]; /* valid when hashed */
	const char *keytype;    /* "ssh-ed25519", ... */
	size_t keytype_len;
	unsigned char key[KH_KEY_MAX]; /* raw public key blob */
	size_t keylen;
};

/*
 * Check the key a server offered against known_hosts files.
 *
 * files/nfiles: the user files then the global files (the order only decides
 * which line is reported); files that do not exist are skipped. host is the
 * name ssh would look up (HostName after config, or HostKeyAlias); it is
 * lowercased and looked up as "[host]:port" when port != 22 and as "host"
 * when port == 22, like OpenSSH. keytype is the SSH name of the key
 * ("ssh-ed25519", "ecdsa-sha2-nistp256", "ssh-rsa", ...), key/keylen the raw
 * public key blob, whose embedded type must be keytype.
 *
 * The status, strongest first:
 *   KH_REVOKED  a matching @revoked line holds this key;
 *   KH_MATCH    a line for the host holds this exact type and key;
 *   KH_MISMATCH the host has a line with this type but another key, or is
 *               known only under other key types (OpenSSH calls both a
 *               changed key; libssh2 says NOTFOUND for the second);
 *   KH_NOTFOUND no line names the host.
 *
 * Lookup only, before the handshake: keytype NULL or "", key NULL and keylen
 * 0. No key can then match, so the status is KH_MISMATCH (stored_* about the
 * first line for the host) when the host is known and KH_NOTFOUND when not;
 * known_types is what the caller wants.
 *
 * Returns 0 with *out filled, or: CD_ERR_PARSE (host, port, keytype or key
 * invalid: host must be non-empty, without whitespace, control characters or
 * any of ",*?![]|#", port 1..65535), CD_ERR_IO (a file exists but cannot be
 * read). err may be NULL.
 */
int knownhosts_check(const char *const *files, size_t nfiles, const char *host, int port,
                     const char *keytype, const unsigned char *key, size_t keylen,
                     struct kh_result *out, char *err, size_t errlen);

/*
 * Append one line for host/port to file, never rewriting what is there:
 * open with O_APPEND|O_CREAT and mode 0600, create the parent directory with
 * mode 0700 if it is missing (one level only, like OpenSSH's ~/.ssh), add a
 * '\n' first if the file does not end with one, then write the line with a
 * single write(2). The name is lowercased and written as "[host]:port" when
 * port != 22. hashed=1 writes "|1|base64(salt)|base64(hmac-sha1(salt, name))"
 * with 20 random bytes of salt from getrandom(2), as HashKnownHosts does.
 *
 * Returns 0, CD_ERR_PARSE (invalid host, port, keytype or key, as for
 * knownhosts_check), CD_ERR_TOOBIG (the line would exceed KH_LINE_MAX and
 * could not be read back) or CD_ERR_IO (errno in the message).
 */
int knownhosts_append(const char *file, const char *host, int port, const char *keytype,
                      const unsigned char *key, size_t keylen, int hashed, char *err,
                      size_t errlen);

/* "SHA256:" + unpadded base64 of sha256(key), exactly as ssh-keygen -l
 * prints it. Always NUL-terminates out. */
void knownhosts_fingerprint(const unsigned char *key, size_t keylen, char out[KH_FP_LEN]);

/*
 * Parse one known_hosts line (pure; len bytes, without the '\n'; a trailing
 * CR is ignored): an optional marker, the host field, the key type and the
 * base64 key blob, then an optional comment. The key type must be one we
 * know (ssh-ed25519, ecdsa-sha2-nistp256/384/521, ssh-rsa, ssh-dss and the
 * two sk-* types) and match the type inside the blob; base64 must be
 * canonical, as OpenSSH requires.
 *
 * Returns 1 with *out filled (out->hosts and out->keytype point into line),
 * 0 for a blank or comment line, CD_ERR_PARSE for a malformed line (reason in
 * err; a NUL byte anywhere makes a line malformed).
 */
int knownhosts_parse_line(const char *line, size_t len, struct kh_entry *out, char *err,
                          size_t errlen);

/*
 * Does the host field of a parsed line name `name`? name is the lookup name
 * ("host" or "[host]:port"), already lowercased. Returns 1 when a pattern (or
 * the hash) matches, 0 when none does, -1 when a negated pattern matches
 * (the line must then be ignored even if another pattern matches).
 */
int knownhosts_match_host(const struct kh_entry *e, const char *name);

#endif
