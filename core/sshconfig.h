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
 *   serveraliveinterval     seconds >= 0.
 * A key that is absent keeps the ssh_settings_init value. home may be NULL
 * (then "~" and %d are left unexpanded).
 *
 * Returns 0 or CD_ERR_PARSE (a value we use is malformed, contains a NUL
 * byte, or hostname/user is missing; the key and line are in err).
 */
int sshconfig_parse_g(const char *text, size_t len, const char *home, struct ssh_settings *out,
                      char *err, size_t errlen);

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

#endif
