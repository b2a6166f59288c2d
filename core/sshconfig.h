/* SPDX-License-Identifier: MIT */
/*
 * sshconfig.h - the OpenSSH client settings clusterdoc needs, read from the
 * output of `ssh -G HOST` (so ~/.ssh/config, /etc/ssh/ssh_config, Include,
 * Match and Host patterns are applied by OpenSSH itself), with built-in
 * defaults for machines without OpenSSH.
 *
 * OpenSSH 9.2 prints one lowercase "key value" line per setting: single
 * values once, identityfile once per file, userknownhostsfile and
 * globalknownhostsfile with all files on one line separated by spaces (so a
 * known_hosts path containing a space cannot be told apart from two paths:
 * OpenSSH does not quote it; we split on blanks), stricthostkeychecking as
 * true/false/ask/accept-new, proxyjump only when set, connecttimeout as
 * "none" or seconds.
 */
#ifndef SSHCONFIG_H
#define SSHCONFIG_H

#include <stddef.h>

#define SSHCONFIG_LINE_MAX 16384 /* longer lines are skipped whole */

enum shk_policy { SHK_YES, SHK_ASK, SHK_ACCEPT_NEW, SHK_NO };

/* Every string and array is owned by the struct; ssh_settings_fini frees
 * them. */
struct ssh_settings {
	char *hostname;
	char *user;
	int port;
	char **identity_files; /* "~" expanded with the given home, in order */
	size_t n_identity_files;
	char **user_known_hosts;
	size_t n_user_known_hosts;
	char **global_known_hosts;
	size_t n_global_known_hosts;
	char *proxyjump; /* NULL when "none" or absent */
	enum shk_policy strict_host_key_checking;
	int hash_known_hosts;
	int identities_only;
	int batch_mode;
	int connect_timeout_s; /* 0 = none */
	int server_alive_interval_s;
	char *host_key_alias; /* the name known_hosts is searched for; NULL: hostname */
	/* IdentityAgent verbatim: NULL when absent (then $SSH_AUTH_SOCK),
	 * "none", "SSH_AUTH_SOCK", "$VARIABLE" or a path */
	char *identity_agent;
	int address_family;  /* AddressFamily: 0 any, 4 inet, 6 inet6 */
	int gssapi;          /* GSSAPIAuthentication yes */
	char *proxy_command; /* verbatim, %-tokens for ssh(1) to expand; NULL when none */
	/* The first key (ssh_config's spelling, static) whose value the libssh2
	 * transport cannot honour (sshkeys.h, SSHKEY_SWITCH); NULL when none. */
	const char *switch_key;
};

/* Zero everything, then port 22 and SHK_ASK. */
void ssh_settings_init(struct ssh_settings *s);

/* Free what s owns and leave it as ssh_settings_init does; safe to call
 * twice. */
void ssh_settings_fini(struct ssh_settings *s);

/*
 * Parse `ssh -G` output (pure): text/len need not be NUL-terminated. out is
 * initialised here (any previous contents are not freed); on error it is
 * left finalised, so calling ssh_settings_fini is always safe.
 *
 * Keys are compared case-insensitively; unknown keys are ignored; a key seen
 * twice keeps its first value (ssh_config's "first obtained value is used"),
 * except identityfile, whose lines accumulate in order. Lines end in "\n"
 * or "\r\n"; lines over SSHCONFIG_LINE_MAX bytes are skipped whole. Values:
 *   hostname, user          required;
 *   port                    1..65535;
 *   identityfile            "~" and "~/" expanded with home, then the
 *                           tokens %d (home), %h (hostname), %p (port),
 *                           %r (user) and %% expanded; other %-tokens and
 *                           "~otheruser/" are left as they are;
 *   user/globalknownhostsfile  blank-separated paths, "~" expanded, "none"
 *                           for no file;
 *   proxyjump               kept verbatim, "none" gives NULL;
 *   stricthostkeychecking   true/yes, false/no/off, ask, accept-new;
 *   hashknownhosts, identitiesonly, batchmode  yes/true or no/false;
 *   connecttimeout          "none" or seconds >= 0;
 *   serveraliveinterval     seconds >= 0;
 *   hostkeyalias, identityagent, proxycommand  kept verbatim (proxycommand
 *                           "none" gives NULL);
 *   addressfamily           any, inet, inet6;
 *   gssapiauthentication    yes/true or no/false.
 * Every other key is looked up in sshkeys.h's table: the first whose value
 * needs the openssh transport (sshkeys_switches) sets switch_key; ProxyJump
 * and ProxyCommand do too.
 * A key that is absent keeps the ssh_settings_init value. home may be NULL
 * (then "~" and %d are left unexpanded).
 *
 * Returns 0 or CD_ERR_PARSE (a value we use is malformed, contains a NUL
 * byte, or hostname/user is missing; the key and line are in err).
 */
int sshconfig_parse_g(const char *text, size_t len, const char *home, struct ssh_settings *out,
                      char *err, size_t errlen);

/* 1 when sshconfig_parse_g reads this `ssh -G` key into ssh_settings
 * (sshkeys.h's SSHKEY_READ and SSHKEY_LIBSSH2 rows), else 0. */
int sshconfig_reads_key(const char *key);

/*
 * Defaults when OpenSSH is not installed: hostname = host, user = the given
 * user, else $USER, else the passwd name of getuid(); port 22; identity files
 * ~/.ssh/id_ed25519, ~/.ssh/id_ecdsa, ~/.ssh/id_rsa; user known hosts
 * ~/.ssh/known_hosts ~/.ssh/known_hosts2; global known hosts
 * /etc/ssh/ssh_known_hosts /etc/ssh/ssh_known_hosts2; SHK_ASK; no
 * ProxyJump; everything else 0. "~" is home, else $HOME, else the passwd
 * directory. out is initialised here as in sshconfig_parse_g.
 *
 * Returns 0, CD_ERR_PARSE (host is NULL or empty) or CD_ERR_NOTFOUND (no
 * user name or home directory can be found).
 */
int sshconfig_defaults(const char *host, const char *home, const char *user,
                       struct ssh_settings *out);

/*
 * Split a ProxyJump value "[user@]host[:port]" (also "[user@][v6addr]:port"
 * and "ssh://[user@]host[:port]"); the user is everything before the last
 * '@', as in OpenSSH. Only one hop is supported: a comma-separated chain
 * gives CD_ERR_UNSUPPORTED.
 *
 * On success *host is a new string; *user is a new string or NULL when the
 * spec names none, and *port is 0 when the spec names none (take both from
 * `ssh -G host` for the jump host, as ssh -J does). The caller frees *user
 * and *host. On error all three are NULL/0.
 *
 * Returns 0, CD_ERR_UNSUPPORTED or CD_ERR_PARSE (empty user or host, blanks
 * or control characters, a host starting with '-', a port outside 1..65535).
 */
int sshconfig_parse_jump(const char *spec, char **user, char **host, int *port, char *err,
                         size_t errlen);

/*
 * Can ssh_config give two hosts different settings? Then `ssh -G` runs per
 * host; otherwise one `ssh -G` serves every host (its output with the
 * "hostname" line changed; OpenSSH prints the host there in lower case).
 *
 * sshconfig_scan_text looks at one file's text (pure): it returns 1 when
 * the file has a Match, a Host line other than "Host *", a HostName, a
 * CanonicalizeHostname other than "no", or a '%' token or "${" anywhere
 * outside comments (a value may then name the host); else 0, appending each
 * Include argument (new strings) to *includes / *n_includes (the caller
 * frees them and the array, also when 1 is returned).
 *
 * sshconfig_host_dependent scans what `ssh -G` reads: config_file (-F, must
 * exist) alone, else home/.ssh/config and /etc/ssh/ssh_config (missing
 * files are fine), following Include as OpenSSH does (glob; "~/" is home; a
 * relative path is under home/.ssh, or /etc/ssh for the system file; 16
 * levels at most). home is the passwd home directory, where OpenSSH looks
 * (not $HOME). Returns 1 when a file says so, cannot be read, is over 1 MiB
 * or home is NULL; else 0.
 *
 * sshconfig_host_plain: 1 when host is a name or address `ssh -G` prints
 * back unchanged but for case (letters, digits, ".-_:", not starting with
 * '-'), so that its "hostname" line can be made for it.
 */
int sshconfig_scan_text(const char *text, size_t len, char ***includes, size_t *n_includes);
int sshconfig_host_dependent(const char *config_file, const char *home);
int sshconfig_host_plain(const char *host);

#endif
