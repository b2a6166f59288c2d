/*
 * transport_ssh.c - the libssh2 transport: one non-blocking session per
 * node, every session driven from the one event loop.
 *
 * Each node walks an explicit state machine; each state calls one libssh2
 * function and, on LIBSSH2_ERROR_EAGAIN, waits for the directions libssh2
 * asks for and calls the same function with the same arguments again.
 * Host keys are checked with our own known_hosts code (knownhosts.h), never
 * libssh2's, and new keys are only appended, never rewritten.
 */
#include "cd.h"
#include "knownhosts.h"
#include "proto.h"
#include "transport.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <libssh2.h>
#include <libssh2_sftp.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum ssh_state {
	S_RESOLVE,
	S_CONNECT,
	S_HANDSHAKE,
	S_HOSTKEY,
	S_AUTH_LIST,
	S_AUTH_AGENT,
	S_AUTH_KEY,
	S_AUTH_PASSWORD,
	S_AUTH_KBDINT,
	S_CHANNEL_OPEN,
	S_EXEC,
	S_RUNNING,
	S_CHANNEL_CLOSE,
	S_SFTP_INIT,
	S_SFTP_OPEN,
	S_SFTP_WRITE,
	S_SFTP_CLOSE,
	S_SFTP_RENAME,
	S_SFTP_SHUTDOWN,
	S_HOLD, /* the bootstrap's channel closed; its owner says when to go on */
	S_DONE,
};

#define SFTP_CHUNK    (32 * 1024)
#define AGENT_TRY_MAX 3

struct sshc {
	enum ssh_state state;
	int fd;
	struct gaicb gai;
	struct gaicb *gai_list[1];
	struct addrinfo hints;
	struct addrinfo *ai, *ai_next;
	char portstr[16];
	uint64_t resolve_timer;
	LIBSSH2_SESSION *session;
	LIBSSH2_CHANNEL *channel;
	LIBSSH2_AGENT *agent;
	struct libssh2_agent_publickey *agent_id;
	int agent_tries;
	size_t key_index;
	int rsa_skipped, keys_tried;
	int password_tried; /* "password" or "keyboard-interactive" was answered */
	int kbd_rounds;
	char *auth_methods;
	int out_eof;
	int reported;
	int depth; /* > 0 while ssh_step runs: close must not free under it */
	int dead;  /* closed while running: freed when ssh_step unwinds */
	/* SFTP upload */
	LIBSSH2_SFTP *sftp;
	LIBSSH2_SFTP_HANDLE *sftp_file;
	char *remote_tmp, *remote_final;
	int upload_pending; /* at the channel's close: upload (remote_tmp), or hold */
	int rerun;          /* ... or run the command again at once */
	int local_fd;
	char chunk[SFTP_CHUNK];
	size_t chunk_len, chunk_off;
};

static int libssh2_ready;

static void ssh_step(struct conn *c);
static void ssh_run(struct conn *c, struct sshc *s);

static void ssh_fail(struct conn *c, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void ssh_fail(struct conn *c, const char *code, const char *fmt, ...)
{
	struct sshc *s = c->priv;
	char msg[CD_ERRLEN];
	va_list ap;

	if (s->reported)
		return;
	s->reported = 1;
	s->state = S_DONE;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->ev->failed(c, code, msg);
}

static const char *session_error(struct sshc *s)
{
	char *msg = NULL;

	libssh2_session_last_error(s->session, &msg, NULL, 0);
	return msg ? msg : "unknown error";
}

static void ssh_destroy(struct conn *c, struct sshc *s);

/* Bracket every entry from the loop or the owner: a close requested by a
 * callback while we run is carried out by the outermost ssh_leave. */
static void ssh_enter(struct sshc *s)
{
	s->depth++;
}

static void ssh_leave(struct conn *c, struct sshc *s)
{
	if (--s->depth == 0 && s->dead)
		ssh_destroy(c, s);
}

static void ssh_step(struct conn *c)
{
	struct sshc *s = c->priv;

	if (!s)
		return;
	ssh_enter(s);
	ssh_run(c, s);
	ssh_leave(c, s);
}

static void on_fd(struct loop *loop, int fd, short revents, void *arg)
{
	ssh_step(arg);
}

/* Wait for what libssh2 (or the connect) needs next. */
static void ssh_wait(struct conn *c, short events)
{
	struct sshc *s = c->priv;

	loop_watch(c->loop, s->fd, events, on_fd, c);
}

static void ssh_wait_session(struct conn *c)
{
	struct sshc *s = c->priv;
	int dir = libssh2_session_block_directions(s->session);
	short ev = POLLIN; /* data for us may arrive at any time */

	if (dir & LIBSSH2_SESSION_BLOCK_OUTBOUND)
		ev |= POLLOUT;
	ssh_wait(c, ev);
}

static void on_resolve_poll(struct loop *loop, void *arg);
static void resolve_done(struct conn *c, struct sshc *s, int rc);
static void ssh_destroy(struct conn *c, struct sshc *s);

static int ssh_start(struct conn *c)
{
	struct sshc *s = cd_calloc(1, sizeof(*s));
	struct sigevent sev = {.sigev_notify = SIGEV_NONE};

	c->priv = s;
	s->fd = -1;
	s->local_fd = -1;
	if (!libssh2_ready) {
		if (libssh2_init(0) != 0)
			cd_fatal("libssh2_init failed");
		libssh2_ready = 1;
	}
	snprintf(s->portstr, sizeof(s->portstr), "%d", c->ssh.port > 0 ? c->ssh.port : 22);
	s->hints.ai_socktype = SOCK_STREAM;
	s->hints.ai_family = AF_UNSPEC;
	s->hints.ai_flags = AI_ADDRCONFIG;
	s->gai.ar_name = c->ssh.hostname ? c->ssh.hostname : c->label;
	s->gai.ar_service = s->portstr;
	s->gai.ar_request = &s->hints;
	s->gai_list[0] = &s->gai;
	s->state = S_RESOLVE;
	/* getaddrinfo blocks on DNS: resolve asynchronously and poll for the
	 * answer from a short timer; the connect deadline bounds it. */
	if (getaddrinfo_a(GAI_NOWAIT, s->gai_list, 1, &sev) != 0) {
		ssh_fail(c, "resolve", "cannot start resolving %s", s->gai.ar_name);
		return CD_ERR_IO;
	}
	s->resolve_timer = loop_timer_add(c->loop, 0, on_resolve_poll, c);
	return 0;
}

static void connect_next(struct conn *c);

static void on_resolve_poll(struct loop *loop, void *arg)
{
	struct conn *c = arg;
	struct sshc *s = c->priv;
	int rc = gai_error(&s->gai);

	ssh_enter(s);
	resolve_done(c, s, rc);
	ssh_leave(c, s);
}

static void resolve_done(struct conn *c, struct sshc *s, int rc)
{
	struct loop *loop = c->loop;

	s->resolve_timer = 0;
	if (rc == EAI_INPROGRESS) {
		s->resolve_timer = loop_timer_add(loop, 5, on_resolve_poll, c);
		return;
	}
	if (rc != 0) {
		ssh_fail(c, "resolve",
		         "name %s does not resolve: %s; check the name, /etc/hosts or DNS",
		         s->gai.ar_name, gai_strerror(rc));
		return;
	}
	s->ai = s->gai.ar_result;
	s->ai_next = s->ai;
	s->state = S_CONNECT;
	connect_next(c);
}

static const char *connect_code(int err)
{
	switch (err) {
	case ECONNREFUSED:
		return "refused";
	case EHOSTUNREACH:
	case ENETUNREACH:
		return "unreachable";
	case ETIMEDOUT:
		return "connect-timeout";
	default:
		return "connect";
	}
}

/* Start a non-blocking connect to the next address; report the last error
 * when none is left. */
static void connect_next(struct conn *c)
{
	struct sshc *s = c->priv;
	int last_err = ECONNREFUSED;

	while (s->ai_next) {
		struct addrinfo *ai = s->ai_next;

		s->ai_next = ai->ai_next;
		if (s->fd >= 0)
			close(s->fd);
		s->fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
		               ai->ai_protocol);
		if (s->fd < 0) {
			last_err = errno;
			continue;
		}
		if (connect(s->fd, ai->ai_addr, ai->ai_addrlen) == 0 || errno == EINPROGRESS) {
			ssh_wait(c, POLLOUT);
			return;
		}
		last_err = errno;
	}
	ssh_fail(c, connect_code(last_err), "cannot connect to %s port %s: %s", s->gai.ar_name,
	         s->portstr, strerror(last_err));
}

static void connect_done(struct conn *c)
{
	struct sshc *s = c->priv;
	int err = 0, one = 1;
	socklen_t len = sizeof(err);

	if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	if (err) {
		if (s->ai_next) {
			connect_next(c);
			return;
		}
		ssh_fail(c, connect_code(err), "cannot connect to %s port %s: %s", s->gai.ar_name,
		         s->portstr, strerror(err));
		return;
	}
	/* The handshake is a ping-pong of small packets: Nagle would stall it. */
	setsockopt(s->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->ev->connected(c);
	if (s->reported)
		return;
	s->session = libssh2_session_init_ex(NULL, NULL, NULL, c);
	if (!s->session) {
		ssh_fail(c, "handshake", "cannot create an SSH session");
		return;
	}
	libssh2_session_set_blocking(s->session, 0);
	s->state = S_HANDSHAKE;
}

static size_t known_hosts_files(const struct conn *c, const char **files, size_t max);

/* Put the host key types known_hosts has for this host first, so a host
 * known by its ed25519 key is not asked for another type (which would look
 * like an unknown host). */
static void set_hostkey_pref(struct conn *c)
{
	static const char *const supported[] = {"ssh-ed25519", "ecdsa-sha2-nistp256",
	                                        "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521",
	                                        "ssh-rsa"};
	struct sshc *s = c->priv;
	const char *files[16];
	size_t nfiles = known_hosts_files(c, files, CD_ARRAY_LEN(files));
	struct kh_result kr;
	char pref[256] = "";

	memset(&kr, 0, sizeof(kr));
	if (knownhosts_check(files, nfiles, c->ssh.hostname, c->ssh.port, "", NULL, 0, &kr, NULL,
	                     0) < 0)
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
	const char *files[16], *name;
	size_t keylen, nfiles = known_hosts_files(c, files, CD_ARRAY_LEN(files));
	int type;
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
	if (knownhosts_check(files, nfiles, c->ssh.hostname, c->ssh.port, name,
	                     (const unsigned char *)key, keylen, &kr, err, sizeof(err)) < 0) {
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
		    c->ssh.hostname, name, fp, kr.file, kr.line, kr.stored_fp, c->ssh.hostname);
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
		    c->ssh.hostname, name, fp);
		return -1;
	}
	if (!c->ssh.n_user_known_hosts ||
	    knownhosts_append(c->ssh.user_known_hosts[0], c->ssh.hostname, c->ssh.port, name,
	                      (const unsigned char *)key, keylen, c->ssh.hash_known_hosts, err,
	                      sizeof(err)) < 0) {
		ssh_fail(c, "hostkey-unknown", "cannot record the new host key %s: %s", fp,
		         c->ssh.n_user_known_hosts ? err : "no UserKnownHostsFile");
		return -1;
	}
	return 0;
}

/* Whether a key file holds an RSA key (libssh2 1.10 can only sign ssh-rsa,
 * SHA-1, which OpenSSH >= 8.8 refuses). Reads the .pub next to it, or the
 * PEM header. */
static int key_is_rsa(const char *path)
{
	char pub[1024], line[128] = "";
	FILE *f;

	snprintf(pub, sizeof(pub), "%s.pub", path);
	f = fopen(pub, "r");
	if (f) {
		int rsa = fgets(line, sizeof(line), f) && strncmp(line, "ssh-rsa ", 8) == 0;

		fclose(f);
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
		    "key files%s)",
		    c->ssh.user ? c->ssh.user : "?", s->auth_methods ? s->auth_methods : "?",
		    s->agent_tries, s->keys_tried,
		    s->rsa_skipped ? ", skipped RSA keys: this libssh2 signs them with SHA-1" : "");
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

static void start_exec(struct conn *c)
{
	struct sshc *s = c->priv;

	s->state = S_CHANNEL_OPEN;
	s->out_eof = 0;
}

/* Pump stdout/stderr into the conn and c->out to the channel. Returns < 0
 * on a channel error (already reported). */
static int pump_once(struct conn *c, struct sshc *s)
{
	char tmp[16384];
	ssize_t n;
	int got = 0, moved = 0;

	while (c->out.len) {
		n = libssh2_channel_write(s->channel, c->out.data, c->out.len);
		if (n == LIBSSH2_ERROR_EAGAIN)
			break;
		if (n < 0) {
			ssh_fail(c, "agent", "writing to the agent failed: %s", session_error(s));
			return -1;
		}
		buf_consume(&c->out, (size_t)n);
		moved = 1;
	}
	for (;;) {
		if (c->in.len >= c->in.max) {
			ssh_fail(c, "agent", "the agent sent more than %zu bytes without a newline",
			         c->in.max);
			return -1;
		}
		n = libssh2_channel_read(s->channel, tmp, sizeof(tmp));
		if (n == LIBSSH2_ERROR_EAGAIN || n == 0)
			break;
		if (n < 0) {
			ssh_fail(c, "agent", "reading from the agent failed: %s", session_error(s));
			return -1;
		}
		if (buf_append(&c->in, tmp, (size_t)n) < 0) {
			ssh_fail(c, "agent",
			         "the agent's output overflowed the buffer of %zu bytes",
			         c->in.max);
			return -1;
		}
		got = 1;
		/* Let the owner judge a full line's worth before reading more:
		 * the protocol reader names the line cap precisely. */
		if (c->in.len >= PROTO_MAX_LINE)
			break;
	}
	/* Always drain stderr too, or a chatty remote fills the window and stalls. */
	while ((n = libssh2_channel_read_stderr(s->channel, tmp, sizeof(tmp))) > 0) {
		conn_stderr_append(c, tmp, (size_t)n);
		moved = 1;
	}
	if (got) {
		c->ev->data(c);
		if (s->reported || s->dead)
			return -1;
	}
	if (libssh2_channel_eof(s->channel))
		s->out_eof = 1;
	return moved || got;
}

/*
 * Pump until nothing moves. Writing (and reading stderr) lets libssh2 read
 * and queue new packets for this channel after the stdout loop stopped;
 * poll() would then never wake us for data already inside libssh2, so a
 * pass that moved anything, or data libssh2 still holds, means another pass.
 */
static int pump(struct conn *c)
{
	struct sshc *s = c->priv;

	for (int pass = 0; pass < 1000; pass++) {
		int rc = pump_once(c, s);

		if (rc < 0)
			return rc;
		if (s->out_eof)
			return 0;
		if (!rc && !libssh2_poll_channel_read(s->channel, 0) &&
		    !libssh2_poll_channel_read(s->channel, 1))
			return 0;
	}
	return 0;
}

static void sftp_begin(struct conn *c);

/* Run the state machine until it must wait. Callbacks into the owner may
 * close this conn: after any of them, only s->reported/s->dead are read. */
static void ssh_run(struct conn *c, struct sshc *s)
{
	int rc;

	for (;;) {
		if (s->reported || s->dead)
			return;
		switch (s->state) {
		case S_RESOLVE:
			return;
		case S_CONNECT:
			connect_done(c);
			if (s->reported || s->dead || s->state == S_CONNECT)
				return; /* trying the next address */
			if (s->state == S_HANDSHAKE)
				set_hostkey_pref(c);
			continue;
		case S_HANDSHAKE:
			rc = libssh2_session_handshake(s->session, s->fd);
			if (rc == LIBSSH2_ERROR_EAGAIN)
				goto wait;
			if (rc) {
				ssh_fail(c, "handshake", "SSH handshake failed: %s",
				         session_error(s));
				return;
			}
			s->state = S_HOSTKEY;
			continue;
		case S_HOSTKEY:
			if (check_hostkey(c) < 0)
				return;
			c->ev->handshaken(c);
			s->state = S_AUTH_LIST;
			continue;
		case S_AUTH_LIST: {
			const char *user = c->ssh.user ? c->ssh.user : "root";
			char *list =
			    libssh2_userauth_list(s->session, user, (unsigned)strlen(user));

			if (!list) {
				if (libssh2_session_last_errno(s->session) == LIBSSH2_ERROR_EAGAIN)
					goto wait;
				if (libssh2_userauth_authenticated(s->session))
					goto authenticated;
				ssh_fail(c, "auth", "cannot list authentication methods: %s",
				         session_error(s));
				return;
			}
			s->auth_methods = cd_strdup(list);
			if (!strstr(list, "publickey") && c->cfg->password) {
				after_keys(c, s);
				continue;
			}
			if (!strstr(list, "publickey")) {
				ssh_fail(
				    c, "auth",
				    "the server offers no public key authentication (only: %s); "
				    "use --ssh openssh for other methods",
				    list);
				return;
			}
			s->state = S_AUTH_AGENT;
			if (c->ssh.identities_only || !getenv("SSH_AUTH_SOCK")) {
				s->state = S_AUTH_KEY;
				continue;
			}
			/* The agent socket is local: connect and list are quick. */
			s->agent = libssh2_agent_init(s->session);
			if (!s->agent || libssh2_agent_connect(s->agent) ||
			    libssh2_agent_list_identities(s->agent)) {
				s->state = S_AUTH_KEY;
				continue;
			}
			if (agent_next_identity(s, NULL) != 0)
				s->state = S_AUTH_KEY;
			continue;
		}
		case S_AUTH_AGENT: {
			const char *user = c->ssh.user ? c->ssh.user : "root";

			rc = libssh2_agent_userauth(s->agent, user, s->agent_id);
			if (rc == LIBSSH2_ERROR_EAGAIN)
				goto wait;
			s->agent_tries++;
			if (rc == 0)
				goto authenticated;
			/* Cap agent keys: sshd drops us after MaxAuthTries (6). */
			if (s->agent_tries >= AGENT_TRY_MAX ||
			    agent_next_identity(s, s->agent_id) != 0)
				s->state = S_AUTH_KEY;
			continue;
		}
		case S_AUTH_KEY: {
			const char *user = c->ssh.user ? c->ssh.user : "root";
			const char *path;

			while (
			    s->key_index < c->ssh.n_identity_files &&
			    (access(c->ssh.identity_files[s->key_index], R_OK) != 0 ||
			     (!rsa_sha2_ok() && key_is_rsa(c->ssh.identity_files[s->key_index])))) {
				if (access(c->ssh.identity_files[s->key_index], R_OK) == 0)
					s->rsa_skipped = 1;
				s->key_index++;
			}
			if (s->key_index >= c->ssh.n_identity_files) {
				after_keys(c, s);
				continue;
			}
			path = c->ssh.identity_files[s->key_index];
			rc = libssh2_userauth_publickey_fromfile_ex(
			    s->session, user, (unsigned)strlen(user), NULL, path, "");
			if (rc == LIBSSH2_ERROR_EAGAIN)
				goto wait;
			s->keys_tried++;
			s->key_index++;
			if (rc == 0)
				goto authenticated;
			continue;
		}
		case S_AUTH_PASSWORD: {
			const char *user = c->ssh.user ? c->ssh.user : "root";
			const char *pw = c->cfg->password;

			rc = libssh2_userauth_password_ex(s->session, user, (unsigned)strlen(user),
			                                  pw, (unsigned)strlen(pw), NULL);
			if (rc == LIBSSH2_ERROR_EAGAIN)
				goto wait;
			s->password_tried = 1;
			if (rc == 0)
				goto authenticated;
			auth_failed(c);
			return;
		}
		case S_AUTH_KBDINT: {
			const char *user = c->ssh.user ? c->ssh.user : "root";

			rc = libssh2_userauth_keyboard_interactive_ex(
			    s->session, user, (unsigned)strlen(user), kbdint_answer);
			if (rc == LIBSSH2_ERROR_EAGAIN)
				goto wait;
			s->password_tried = 1;
			if (rc == 0)
				goto authenticated;
			auth_failed(c);
			return;
		}
		authenticated:
			if (s->agent) {
				libssh2_agent_disconnect(s->agent);
				libssh2_agent_free(s->agent);
				s->agent = NULL;
			}
			c->ev->authenticated(c);
			start_exec(c);
			continue;
		case S_CHANNEL_OPEN:
			s->channel = libssh2_channel_open_session(s->session);
			if (!s->channel) {
				if (libssh2_session_last_errno(s->session) == LIBSSH2_ERROR_EAGAIN)
					goto wait;
				ssh_fail(c, "ssh", "cannot open a channel: %s", session_error(s));
				return;
			}
			s->state = S_EXEC;
			continue;
		case S_EXEC:
			rc = libssh2_channel_exec(s->channel, c->command);
			if (rc == LIBSSH2_ERROR_EAGAIN)
				goto wait;
			if (rc) {
				ssh_fail(c, "ssh", "the server refused to run the agent: %s",
				         session_error(s));
				return;
			}
			s->state = S_RUNNING;
			continue;
		case S_RUNNING:
			if (pump(c) < 0)
				return;
			if (s->state != S_RUNNING)
				continue; /* an upload was requested from the data callback */
			if (!s->out_eof)
				goto wait;
			s->state = S_CHANNEL_CLOSE;
			continue;
		case S_CHANNEL_CLOSE: {
			rc = libssh2_channel_close(s->channel);
			if (rc == LIBSSH2_ERROR_EAGAIN)
				goto wait;
			libssh2_channel_free(s->channel);
			s->channel = NULL;
			if (s->upload_pending && s->remote_tmp) {
				sftp_begin(c);
				continue;
			}
			if (s->upload_pending) {
				s->upload_pending = 0;
				if (s->rerun) {
					start_exec(c);
					continue;
				}
				s->state = S_HOLD;
				loop_unwatch(c->loop, s->fd);
				return;
			}
			s->state = S_DONE;
			s->reported = 1;
			c->ev->closed(c);
			return;
		}
		case S_SFTP_INIT:
			s->sftp = libssh2_sftp_init(s->session);
			if (!s->sftp) {
				if (libssh2_session_last_errno(s->session) == LIBSSH2_ERROR_EAGAIN)
					goto wait;
				ssh_fail(c, "upload",
				         "cannot start SFTP (is the sftp subsystem enabled "
				         "in sshd_config?): %s",
				         session_error(s));
				return;
			}
			s->state = S_SFTP_OPEN;
			continue;
		case S_SFTP_OPEN:
			s->sftp_file = libssh2_sftp_open(
			    s->sftp, s->remote_tmp,
			    LIBSSH2_FXF_WRITE | LIBSSH2_FXF_CREAT | LIBSSH2_FXF_TRUNC, 0700);
			if (!s->sftp_file) {
				if (libssh2_session_last_errno(s->session) == LIBSSH2_ERROR_EAGAIN)
					goto wait;
				ssh_fail(c, "upload",
				         "cannot create %s on the node (SFTP status %lu)",
				         s->remote_tmp, libssh2_sftp_last_error(s->sftp));
				return;
			}
			s->state = S_SFTP_WRITE;
			continue;
		case S_SFTP_WRITE: {
			ssize_t n;

			if (s->chunk_off == s->chunk_len) {
				n = read(s->local_fd, s->chunk, sizeof(s->chunk));
				if (n < 0) {
					ssh_fail(c, "upload", "reading %s: %s", c->upload_path,
					         strerror(errno));
					return;
				}
				if (n == 0) {
					s->state = S_SFTP_CLOSE;
					continue;
				}
				s->chunk_len = (size_t)n;
				s->chunk_off = 0;
			}
			/* On EAGAIN libssh2 wants the very same buffer again. */
			n = libssh2_sftp_write(s->sftp_file, s->chunk + s->chunk_off,
			                       s->chunk_len - s->chunk_off);
			if (n == LIBSSH2_ERROR_EAGAIN)
				goto wait;
			if (n < 0) {
				ssh_fail(c, "upload",
				         "writing %s on the node failed (SFTP status %lu)",
				         s->remote_tmp, libssh2_sftp_last_error(s->sftp));
				return;
			}
			s->chunk_off += (size_t)n;
			continue;
		}
		case S_SFTP_CLOSE:
			rc = libssh2_sftp_close(s->sftp_file);
			if (rc == LIBSSH2_ERROR_EAGAIN)
				goto wait;
			s->sftp_file = NULL;
			s->state = s->remote_final ? S_SFTP_RENAME : S_SFTP_SHUTDOWN;
			continue;
		case S_SFTP_RENAME:
			rc = libssh2_sftp_rename_ex(
			    s->sftp, s->remote_tmp, (unsigned)strlen(s->remote_tmp),
			    s->remote_final, (unsigned)strlen(s->remote_final),
			    LIBSSH2_SFTP_RENAME_OVERWRITE | LIBSSH2_SFTP_RENAME_ATOMIC |
			        LIBSSH2_SFTP_RENAME_NATIVE);
			if (rc == LIBSSH2_ERROR_EAGAIN)
				goto wait;
			if (rc) {
				/* Another head may have renamed the same build in place
				 * first (OpenSSH's rename refuses to overwrite). */
				libssh2_sftp_unlink(s->sftp, s->remote_tmp);
			}
			s->state = S_SFTP_SHUTDOWN;
			continue;
		case S_SFTP_SHUTDOWN:
			rc = libssh2_sftp_shutdown(s->sftp);
			if (rc == LIBSSH2_ERROR_EAGAIN)
				goto wait;
			s->sftp = NULL;
			close(s->local_fd);
			s->local_fd = -1;
			start_exec(c);
			continue;
		case S_HOLD:
		case S_DONE:
			return;
		}
	}
wait:
	ssh_wait_session(c);
}

static void sftp_begin(struct conn *c)
{
	struct sshc *s = c->priv;

	s->local_fd = open(c->upload_path, O_RDONLY | O_CLOEXEC);
	if (s->local_fd < 0) {
		ssh_fail(c, "upload", "cannot read %s: %s", c->upload_path, strerror(errno));
		return;
	}
	s->upload_pending = 0;
	s->chunk_len = s->chunk_off = 0;
	s->state = S_SFTP_INIT;
}

static int ssh_upload(struct conn *c, const char *remote_tmp, const char *remote_final)
{
	struct sshc *s = c->priv;

	if (!s || s->reported)
		return CD_ERR_IO;
	if (s->state == S_HOLD) {
		/* The owner goes on: upload now, or run the command again. */
		free(s->remote_tmp);
		free(s->remote_final);
		s->remote_tmp = remote_tmp ? cd_strdup(remote_tmp) : NULL;
		s->remote_final = remote_final ? cd_strdup(remote_final) : NULL;
		if (remote_tmp)
			sftp_begin(c);
		else
			start_exec(c);
		ssh_enter(s);
		ssh_run(c, s);
		ssh_leave(c, s);
		return 0;
	}
	if (!remote_tmp && s->upload_pending && !s->remote_tmp) {
		s->rerun = 1; /* released before the channel even closed */
		return 0;
	}
	free(s->remote_tmp);
	free(s->remote_final);
	s->remote_tmp = remote_tmp ? cd_strdup(remote_tmp) : NULL;
	s->remote_final = remote_final ? cd_strdup(remote_final) : NULL;
	s->upload_pending = 1;
	s->rerun = 0;
	/* The bootstrap exits after saying "missing": let its channel close,
	 * then S_CHANNEL_CLOSE starts the SFTP upload (or holds). */
	return 0;
}

static void ssh_flush(struct conn *c)
{
	struct sshc *s = c->priv;

	if (s && s->state == S_RUNNING && !s->reported) {
		ssh_enter(s);
		if (pump(c) == 0 && !s->reported && !s->dead)
			ssh_wait_session(c);
		ssh_leave(c, s);
	}
}

static void ssh_close(struct conn *c)
{
	struct sshc *s = c->priv;

	if (!s)
		return;
	c->priv = NULL;
	if (s->resolve_timer) {
		loop_timer_cancel(c->loop, s->resolve_timer);
		s->resolve_timer = 0;
	}
	if (s->fd >= 0)
		loop_unwatch(c->loop, s->fd);
	s->dead = 1;
	if (s->depth == 0)
		ssh_destroy(c, s);
}

static void ssh_destroy(struct conn *c, struct sshc *s)
{
	if (s->state == S_RESOLVE && gai_cancel(&s->gai) == EAI_NOTCANCELED) {
		/* glibc's resolver thread still writes into s->gai: leave this
		 * small struct to it rather than block the loop or free memory
		 * in use. It happens only when a deadline cuts a slow DNS query. */
		return;
	}
	if (s->gai.ar_result)
		freeaddrinfo(s->gai.ar_result);
	if (s->agent) {
		libssh2_agent_disconnect(s->agent);
		libssh2_agent_free(s->agent);
	}
	/* Teardown never waits for the peer: say goodbye without blocking,
	 * then shut the socket down so that every further send or read in
	 * libssh2's free functions fails at once instead of returning EAGAIN
	 * (in non-blocking mode a free that would block frees nothing).
	 * Closing the connection ends the remote agent: its stdin closes. */
	if (s->session) {
		libssh2_session_set_blocking(s->session, 0);
		libssh2_session_disconnect(s->session, "clusterdoc done");
		if (s->fd >= 0)
			shutdown(s->fd, SHUT_RDWR);
		libssh2_session_set_blocking(s->session, 1);
		if (s->sftp_file)
			libssh2_sftp_close(s->sftp_file);
		if (s->sftp)
			libssh2_sftp_shutdown(s->sftp);
		if (s->channel)
			libssh2_channel_free(s->channel);
		libssh2_session_free(s->session);
	}
	if (s->fd >= 0)
		close(s->fd);
	if (s->local_fd >= 0)
		close(s->local_fd);
	free(s->auth_methods);
	free(s->remote_tmp);
	free(s->remote_final);
	free(s);
}

const struct transport_ops transport_ssh = {
    .name = "ssh",
    .upload_mode = UPLOAD_SFTP,
    .start = ssh_start,
    .flush = ssh_flush,
    .upload = ssh_upload,
    .close = ssh_close,
};
