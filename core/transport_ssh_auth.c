/* SPDX-License-Identifier: MIT */
/*
 * transport_ssh_auth.c - the libssh2 transport's handshake, host key check
 * and authentication (see transport_ssh.h): from S_HANDSHAKE to a session
 * logged in, which then runs the command (transport_ssh_channel.c).
 *
 * Host keys are checked with our own known_hosts code (knownhosts.h), never
 * libssh2's, and new keys are only appended, never rewritten. Keys are
 * offered from the ssh agent first (at most AGENT_TRY_MAX), then the key
 * files; a password, when given, is tried once.
 */
#include "cd.h"
#include "knownhosts.h"
#include "scan.h"
#include "trace.h"
#include "transport_ssh.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define AGENT_TRY_MAX 3

static size_t known_hosts_files(const struct conn *c, const char **files, size_t max);
static const char *agent_socket(const struct conn *c);

/* The name and port known_hosts holds the node under: HostKeyAlias, when
 * set, with no port (as ssh(1) looks it up), else HostName and Port. */
static const char *kh_name(const struct conn *c, int *port)
{
	*port = c->ssh.host_key_alias ? 22 : c->ssh.port;
	return c->ssh.host_key_alias ? c->ssh.host_key_alias : c->ssh.hostname;
}

/* Put the host key types known_hosts has for this host first, so a host
 * known by its ed25519 key is not asked for another type (which would look
 * like an unknown host). */
void ssh_auth_prepare(struct conn *c, struct sshc *s)
{
	static const char *const supported[] = {"ssh-ed25519", "ecdsa-sha2-nistp256",
	                                        "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521",
	                                        "ssh-rsa"};
	const char *files[16];
	size_t nfiles = known_hosts_files(c, files, CD_ARRAY_LEN(files));
	struct kh_result kr;
	char pref[256] = "";
	int port;
	const char *host = kh_name(c, &port);

	memset(&kr, 0, sizeof(kr));
	if (knownhosts_check(files, nfiles, host, port, "", NULL, 0, &kr, NULL, 0) < 0)
		kr.known_types[0] = '\0';
	for (size_t i = 0; i < CD_ARRAY_LEN(supported); i++) {
		const char *t = strstr(kr.known_types, supported[i]);
		size_t n = strlen(supported[i]);

		if (t && (t[n] == ',' || t[n] == '\0')) {
			strcat(pref, pref[0] ? "," : "");
			strcat(pref, supported[i]);
		}
	}
	for (size_t i = 0; i < CD_ARRAY_LEN(supported); i++) {
		if (!strstr(pref, supported[i])) {
			strcat(pref, pref[0] ? "," : "");
			strcat(pref, supported[i]);
		}
	}
	libssh2_session_method_pref(s->session, LIBSSH2_METHOD_HOSTKEY, pref);
}

static const char *hostkey_type_name(int type)
{
	switch (type) {
	case LIBSSH2_HOSTKEY_TYPE_RSA:
		return "ssh-rsa";
	case LIBSSH2_HOSTKEY_TYPE_DSS:
		return "ssh-dss";
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_256:
		return "ecdsa-sha2-nistp256";
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_384:
		return "ecdsa-sha2-nistp384";
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_521:
		return "ecdsa-sha2-nistp521";
	case LIBSSH2_HOSTKEY_TYPE_ED25519:
		return "ssh-ed25519";
	default:
		return "unknown";
	}
}

/* All known_hosts files to consult: the user's, then the global ones. */
static size_t known_hosts_files(const struct conn *c, const char **files, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < c->ssh.n_user_known_hosts && n < max; i++)
		files[n++] = c->ssh.user_known_hosts[i];
	for (size_t i = 0; i < c->ssh.n_global_known_hosts && n < max; i++)
		files[n++] = c->ssh.global_known_hosts[i];
	return n;
}

/* Returns 0 when the host key is trusted (possibly just recorded). */
static int check_hostkey(struct conn *c)
{
	struct sshc *s = c->priv;
	const char *files[16], *name, *host;
	size_t keylen, nfiles = known_hosts_files(c, files, CD_ARRAY_LEN(files));
	int type, port;
	const char *key = libssh2_session_hostkey(s->session, &keylen, &type);
	char fp[KH_FP_LEN], err[CD_ERRLEN];
	struct kh_result kr;

	if (!key) {
		ssh_fail(c, "handshake", "the server sent no host key");
		return -1;
	}
	name = hostkey_type_name(type);
	knownhosts_fingerprint((const unsigned char *)key, keylen, fp);
	snprintf(c->hostkey_type, sizeof(c->hostkey_type), "%s", name);
	snprintf(c->hostkey_fp, sizeof(c->hostkey_fp), "%s", fp);
	host = kh_name(c, &port);
	if (knownhosts_check(files, nfiles, host, port, name, (const unsigned char *)key, keylen,
	                     &kr, err, sizeof(err)) < 0) {
		ssh_fail(c, "hostkey-unknown", "cannot check the host key: %s", err);
		return -1;
	}
	switch (kr.status) {
	case KH_MATCH:
		return 0;
	case KH_REVOKED:
		ssh_fail(c, "hostkey-revoked", "host key %s %s is marked @revoked in %s:%d", name,
		         fp, kr.file, kr.line);
		return -1;
	case KH_MISMATCH:
		ssh_fail(
		    c, "hostkey-changed",
		    "HOST KEY CHANGED: %s offers %s %s but %s:%d has %s; nothing was run. If the "
		    "node was reinstalled, verify the new key and run: ssh-keygen -R %s",
		    host, name, fp, kr.file, kr.line, kr.stored_fp, host);
		return -1;
	case KH_NOTFOUND:
		break;
	}
	/* --accept-new, or StrictHostKeyChecking accept-new (or no) in the
	 * user's ssh_config, is consent to record an unknown key. A changed
	 * key is refused above whatever the config says. */
	if (!c->cfg->accept_new && c->ssh.strict_host_key_checking != SHK_ACCEPT_NEW &&
	    c->ssh.strict_host_key_checking != SHK_NO &&
	    !(c->cfg->hostkey_consent &&
	      c->cfg->hostkey_consent(c->label, name, fp, c->cfg->consent_arg))) {
		ssh_fail(
		    c, "hostkey-unknown",
		    "host key unknown: %s offers %s %s, which is in no known_hosts file; verify it "
		    "and rerun with --accept-new to record it",
		    host, name, fp);
		return -1;
	}
	if (!c->ssh.n_user_known_hosts ||
	    knownhosts_append(c->ssh.user_known_hosts[0], host, port, name,
	                      (const unsigned char *)key, keylen, c->ssh.hash_known_hosts, err,
	                      sizeof(err)) < 0) {
		ssh_fail(c, "hostkey-unknown", "cannot record the new host key %s: %s", fp,
		         c->ssh.n_user_known_hosts ? err : "no UserKnownHostsFile");
		return -1;
	}
	return 0;
}

/* The largest private key file tried (a key is a few KiB; OpenSSH's cap). */
#define KEY_FILE_MAX (1 << 20)

/* Whether a key file holds an RSA key (libssh2 1.10 can only sign ssh-rsa,
 * SHA-1, which OpenSSH >= 8.8 refuses). Reads the .pub next to it, or the
 * PEM header. */
static int key_is_rsa(const char *path)
{
	char pub[1024], line[128] = "", *publine, err[CD_ERRLEN];
	FILE *f;

	snprintf(pub, sizeof(pub), "%s.pub", path);
	if (scan_read_first_line(pub, KH_LINE_MAX, &publine, err, sizeof(err)) == 0) {
		int rsa = strncmp(publine, "ssh-rsa ", 8) == 0;

		free(publine);
		return rsa;
	}
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	return strstr(line, "BEGIN RSA PRIVATE KEY") != NULL;
}

/* libssh2 signs RSA user keys with rsa-sha2-* only from 1.11.0 on. */
static int rsa_sha2_ok(void)
{
	return libssh2_version(0x010b00) != NULL;
}

/* The agent's next identity after prev (NULL: the first), passing over RSA
 * keys this libssh2 cannot use. Returns 0, or non-zero at the end. */
static int agent_next_identity(struct sshc *s, struct libssh2_agent_publickey *prev)
{
	while (libssh2_agent_get_identity(s->agent, &s->agent_id, prev) == 0) {
		const unsigned char *b = s->agent_id->blob;

		if (rsa_sha2_ok() || s->agent_id->blob_len < 11 || memcmp(b + 4, "ssh-rsa", 7) != 0)
			return 0;
		s->rsa_skipped = 1;
		prev = s->agent_id;
	}
	return 1;
}

static void auth_failed(struct conn *c)
{
	struct sshc *s = c->priv;

	if (s->password_tried)
		ssh_fail(c, "auth",
		         "the password for %s was refused (server accepts: %s); it was tried once, "
		         "so the account is not locked: check it and run again",
		         c->ssh.user ? c->ssh.user : "?", s->auth_methods ? s->auth_methods : "?");
	else if (s->rsa_skipped && !s->keys_tried && s->agent_tries == 0)
		ssh_fail(c, "auth-rsa-sha1",
		         "only RSA keys are available, and libssh2 %s signs them with SHA-1, which "
		         "OpenSSH 8.8 and later refuse; use --ssh openssh, or an ed25519 key",
		         libssh2_version(0));
	else
		ssh_fail(
		    c, "auth",
		    "authentication as %s failed (server accepts: %s; tried %d agent keys and %d "
		    "key files%s%s)",
		    c->ssh.user ? c->ssh.user : "?", s->auth_methods ? s->auth_methods : "?",
		    s->agent_tries, s->keys_tried,
		    s->rsa_skipped ? ", skipped RSA keys: this libssh2 signs them with SHA-1" : "",
		    s->odd_key_skipped ? ", skipped key files that are not regular files of at "
		                         "most 1 MiB"
		                       : "");
}

/* Where to go when the keys are used up: a password method the server
 * offers, when there is a password; else the failure. */
static void after_keys(struct conn *c, struct sshc *s)
{
	const char *m = s->auth_methods ? s->auth_methods : "";

	if (c->cfg->password && strstr(m, "password"))
		s->state = S_AUTH_PASSWORD;
	else if (c->cfg->password && strstr(m, "keyboard-interactive"))
		s->state = S_AUTH_KBDINT;
	else
		auth_failed(c);
}

/* keyboard-interactive: the password for each hidden prompt of the first
 * round, "" for everything else (a second round is a refusal retried). */
static LIBSSH2_USERAUTH_KBDINT_RESPONSE_FUNC(kbdint_answer)
{
	struct conn *c = *abstract;
	struct sshc *s = c->priv;

	(void)name;
	(void)name_len;
	(void)instruction;
	(void)instruction_len;
	s->kbd_rounds++;
	for (int k = 0; k < num_prompts; k++) {
		const char *a = !prompts[k].echo && s->kbd_rounds == 1 ? c->cfg->password : "";

		/* libssh2 frees each answer with its default allocator, free() */
		responses[k].text = strdup(a);
		responses[k].length = responses[k].text ? (unsigned)strlen(a) : 0;
	}
}

enum ssh_next ssh_step_handshake(struct conn *c, struct sshc *s)
{
	int rc = libssh2_session_handshake(s->session, s->fd);

	if (rc == LIBSSH2_ERROR_EAGAIN)
		return SSH_WAIT;
	if (rc) {
		ssh_fail(c, "handshake", "SSH handshake failed: %s", ssh_session_error(s));
		return SSH_STOP;
	}
	s->state = S_HOSTKEY;
	return SSH_NEXT;
}

enum ssh_next ssh_step_hostkey(struct conn *c, struct sshc *s)
{
	if (check_hostkey(c) < 0)
		return SSH_STOP;
	c->ev->handshaken(c);
	s->state = S_AUTH_LIST;
	return SSH_NEXT;
}

void ssh_auth_fini(struct sshc *s)
{
	if (s->agent) {
		libssh2_agent_disconnect(s->agent);
		libssh2_agent_free(s->agent);
		s->agent = NULL;
	}
}

/* Logged in: tell the owner, then run the command. */
static enum ssh_next auth_done(struct conn *c, struct sshc *s)
{
	ssh_auth_fini(s);
	c->ev->authenticated(c);
	ssh_exec_begin(s);
	return SSH_NEXT;
}

static const char *auth_user(const struct conn *c)
{
	return c->ssh.user ? c->ssh.user : "root";
}

/* The methods the server offers decide where authentication starts: the
 * ssh agent's keys, the key files, or (no public key method) a password. */
enum ssh_next ssh_step_auth_list(struct conn *c, struct sshc *s)
{
	const char *user = auth_user(c), *sock;
	char *list = libssh2_userauth_list(s->session, user, (unsigned)strlen(user));

	if (!list) {
		if (ssh_would_block(s))
			return SSH_WAIT;
		if (libssh2_userauth_authenticated(s->session))
			return auth_done(c, s);
		ssh_fail(c, "auth", "cannot list authentication methods: %s", ssh_session_error(s));
		return SSH_STOP;
	}
	s->auth_methods = cd_strdup(list);
	if (!strstr(list, "publickey") && c->cfg->password) {
		after_keys(c, s);
		return SSH_NEXT;
	}
	if (!strstr(list, "publickey")) {
		ssh_fail(c, "auth",
		         "the server offers no public key authentication "
		         "(only: %s); "
		         "use --ssh openssh for other methods",
		         list);
		return SSH_STOP;
	}
	s->state = S_AUTH_AGENT;
	if (c->ssh.identities_only || !(sock = agent_socket(c))) {
		s->state = S_AUTH_KEY;
		return SSH_NEXT;
	}
	/* The agent socket is local: connect and list are quick. */
	s->agent = libssh2_agent_init(s->session);
	if (s->agent)
		libssh2_agent_set_identity_path(s->agent, sock);
	if (!s->agent || libssh2_agent_connect(s->agent) ||
	    libssh2_agent_list_identities(s->agent)) {
		s->state = S_AUTH_KEY;
		return SSH_NEXT;
	}
	if (agent_next_identity(s, NULL) != 0)
		s->state = S_AUTH_KEY;
	return SSH_NEXT;
}

/*
 * The agent socket to ask, as ssh(1) finds it from IdentityAgent: absent or
 * "SSH_AUTH_SOCK": $SSH_AUTH_SOCK; "none": no agent; "$NAME": that
 * variable; else the path itself (ssh -G has expanded "~" and %-tokens).
 * NULL: no agent.
 */
static const char *agent_socket(const struct conn *c)
{
	const char *v = c->ssh.identity_agent, *sock;

	if (!v || strcmp(v, "SSH_AUTH_SOCK") == 0)
		sock = getenv("SSH_AUTH_SOCK");
	else if (strcasecmp(v, "none") == 0)
		sock = NULL;
	else if (v[0] == '$')
		sock = getenv(v + 1);
	else
		sock = v;
	return sock && *sock ? sock : NULL;
}

enum ssh_next ssh_step_auth_agent(struct conn *c, struct sshc *s)
{
	int rc = libssh2_agent_userauth(s->agent, auth_user(c), s->agent_id);

	if (rc == LIBSSH2_ERROR_EAGAIN)
		return SSH_WAIT;
	s->agent_tries++;
	trace_node(TRACE_STEPS, c->label, "auth: the ssh agent's key %d %s", s->agent_tries,
	           rc == 0 ? "accepted" : "refused");
	if (rc == 0)
		return auth_done(c, s);
	/* Cap agent keys: sshd drops us after MaxAuthTries (6). */
	if (s->agent_tries >= AGENT_TRY_MAX || agent_next_identity(s, s->agent_id) != 0)
		s->state = S_AUTH_KEY;
	return SSH_NEXT;
}

/* Whether the key file at s->key_index is passed over: unreadable, or RSA
 * where this libssh2 can only sign with SHA-1 (then remembered). */
static int key_skipped(const struct conn *c, struct sshc *s)
{
	const char *path = c->ssh.identity_files[s->key_index];
	struct stat st;

	if (access(path, R_OK) != 0)
		return 1;
	/* libssh2 reads the whole file, blocking: "-i /dev/zero" would never end. */
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > KEY_FILE_MAX) {
		s->odd_key_skipped = 1;
		return 1;
	}
	if (rsa_sha2_ok() || !key_is_rsa(path))
		return 0;
	s->rsa_skipped = 1;
	return 1;
}

enum ssh_next ssh_step_auth_key(struct conn *c, struct sshc *s)
{
	const char *user = auth_user(c);
	int rc;

	while (s->key_index < c->ssh.n_identity_files && key_skipped(c, s))
		s->key_index++;
	if (s->key_index >= c->ssh.n_identity_files) {
		after_keys(c, s);
		return SSH_NEXT;
	}
	rc = libssh2_userauth_publickey_fromfile_ex(s->session, user, (unsigned)strlen(user), NULL,
	                                            c->ssh.identity_files[s->key_index], "");
	if (rc == LIBSSH2_ERROR_EAGAIN)
		return SSH_WAIT;
	s->keys_tried++;
	trace_node(TRACE_STEPS, c->label, "auth: the key file %s %s",
	           c->ssh.identity_files[s->key_index], rc == 0 ? "accepted" : "refused");
	s->key_index++;
	if (rc == 0)
		return auth_done(c, s);
	return SSH_NEXT;
}

enum ssh_next ssh_step_auth_password(struct conn *c, struct sshc *s)
{
	const char *user = auth_user(c);
	const char *pw = c->cfg->password;
	int rc = libssh2_userauth_password_ex(s->session, user, (unsigned)strlen(user), pw,
	                                      (unsigned)strlen(pw), NULL);

	if (rc == LIBSSH2_ERROR_EAGAIN)
		return SSH_WAIT;
	s->password_tried = 1;
	trace_node(TRACE_STEPS, c->label, "auth: %s",
	           rc == 0 ? "the password was accepted" : "the password was refused");
	if (rc == 0)
		return auth_done(c, s);
	auth_failed(c);
	return SSH_STOP;
}

enum ssh_next ssh_step_auth_kbdint(struct conn *c, struct sshc *s)
{
	const char *user = auth_user(c);
	int rc = libssh2_userauth_keyboard_interactive_ex(s->session, user, (unsigned)strlen(user),
	                                                  kbdint_answer);

	if (rc == LIBSSH2_ERROR_EAGAIN)
		return SSH_WAIT;
	s->password_tried = 1;
	trace_node(TRACE_STEPS, c->label, "auth: %s",
	           rc == 0 ? "the password was accepted" : "the password was refused");
	if (rc == 0)
		return auth_done(c, s);
	auth_failed(c);
	return SSH_STOP;
}
