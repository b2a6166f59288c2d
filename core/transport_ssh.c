/* SPDX-License-Identifier: MIT */
/*
 * transport_ssh.c - the libssh2 transport: one non-blocking session per
 * node, every session driven from the one event loop.
 *
 * Each node walks an explicit state machine (transport_ssh.h): a table of
 * one step per state, each calling one libssh2 function and, on
 * LIBSSH2_ERROR_EAGAIN, waiting for the directions libssh2 asks for and
 * calling the same function with the same arguments again. This file holds
 * the conn's life (resolve, connect, the loop, hold/resume, close); the
 * handshake and authentication, the channel and the SFTP upload have their
 * own files.
 */
#include "cd.h"
#include "trace.h"
#include "transport_ssh.h"

#include <errno.h>
#include <stdarg.h>
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

static int libssh2_ready;

/* How much of a node's address its messages echo (cd_abridge): a HostName
 * of any length leaves room for the reason. */
#define SHOWN_NAME_MAX 80

static const char *shown_name(const struct sshc *s, char shown[SHOWN_NAME_MAX + 1])
{
	return cd_abridge(s->gai.ar_name, SHOWN_NAME_MAX, shown, SHOWN_NAME_MAX + 1);
}

static void ssh_run(struct conn *c, struct sshc *s);

void ssh_fail(struct conn *c, const char *code, const char *fmt, ...)
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

const char *ssh_session_error(struct sshc *s)
{
	char *msg = NULL;

	libssh2_session_last_error(s->session, &msg, NULL, 0);
	return msg ? msg : "unknown error";
}

int ssh_would_block(struct sshc *s)
{
	return libssh2_session_last_errno(s->session) == LIBSSH2_ERROR_EAGAIN;
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

/* Run the machine from the loop or from an owner's call. */
static void ssh_run_now(struct conn *c, struct sshc *s)
{
	ssh_enter(s);
	ssh_run(c, s);
	ssh_leave(c, s);
}

static void on_fd(struct loop *loop, int fd, short revents, void *arg)
{
	struct conn *c = arg;

	if (c->priv)
		ssh_run_now(c, c->priv);
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

static int ssh_start(struct conn *c)
{
	struct sshc *s = cd_calloc(1, sizeof(*s));
	struct sigevent sev = {.sigev_notify = SIGEV_NONE};
	char shown[SHOWN_NAME_MAX + 1];

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
	/* AddressFamily inet or inet6 limits the addresses tried, as in ssh */
	s->hints.ai_family = c->ssh.address_family == 4   ? AF_INET
	                     : c->ssh.address_family == 6 ? AF_INET6
	                                                  : AF_UNSPEC;
	s->hints.ai_flags = AI_ADDRCONFIG;
	s->gai.ar_name = c->ssh.hostname ? c->ssh.hostname : c->label;
	s->gai.ar_service = s->portstr;
	s->gai.ar_request = &s->hints;
	s->gai_list[0] = &s->gai;
	s->state = S_RESOLVE;
	/* getaddrinfo blocks on DNS: resolve asynchronously and poll for the
	 * answer from a short timer; the connect deadline bounds it. */
	if (getaddrinfo_a(GAI_NOWAIT, s->gai_list, 1, &sev) != 0) {
		ssh_fail(c, "resolve", "cannot start resolving %s", shown_name(s, shown));
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
	char shown[SHOWN_NAME_MAX + 1];

	s->resolve_timer = 0;
	if (rc == EAI_INPROGRESS) {
		s->resolve_timer = loop_timer_add(loop, 5, on_resolve_poll, c);
		return;
	}
	if (rc != 0) {
		ssh_fail(c, "resolve",
		         "name %s does not resolve: %s; check the name, /etc/hosts or DNS",
		         shown_name(s, shown), gai_strerror(rc));
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
	char shown[SHOWN_NAME_MAX + 1];

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
		if (trace_on(TRACE_STEPS)) {
			char addr[64] = "?";

			getnameinfo(ai->ai_addr, ai->ai_addrlen, addr, sizeof(addr), NULL, 0,
			            NI_NUMERICHOST);
			trace_node(TRACE_STEPS, c->label, "TCP connect to %s port %s", addr,
			           s->portstr);
		}
		if (connect(s->fd, ai->ai_addr, ai->ai_addrlen) == 0 || errno == EINPROGRESS) {
			ssh_wait(c, POLLOUT);
			return;
		}
		last_err = errno;
	}
	ssh_fail(c, connect_code(last_err), "cannot connect to %s port %s: %s",
	         shown_name(s, shown), s->portstr, strerror(last_err));
}

static void connect_done(struct conn *c)
{
	struct sshc *s = c->priv;
	int err = 0, one = 1;
	socklen_t len = sizeof(err);
	char shown[SHOWN_NAME_MAX + 1];

	if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	if (err) {
		if (s->ai_next) {
			connect_next(c);
			return;
		}
		ssh_fail(c, connect_code(err), "cannot connect to %s port %s: %s",
		         shown_name(s, shown), s->portstr, strerror(err));
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

/* S_RESOLVE: the resolve timer, not the socket, moves it on. */
static enum ssh_next step_resolve(struct conn *c, struct sshc *s)
{
	return SSH_STOP;
}

static enum ssh_next step_connect(struct conn *c, struct sshc *s)
{
	connect_done(c);
	if (s->reported || s->dead || s->state == S_CONNECT)
		return SSH_STOP; /* trying the next address */
	if (s->state == S_HANDSHAKE)
		ssh_auth_prepare(c, s);
	return SSH_NEXT;
}

/* S_HOLD and S_DONE: nothing to do until the owner says. */
static enum ssh_next step_idle(struct conn *c, struct sshc *s)
{
	return SSH_STOP;
}

static const ssh_step_fn steps[S_COUNT] = {
    [S_RESOLVE] = step_resolve,
    [S_CONNECT] = step_connect,
    [S_HANDSHAKE] = ssh_step_handshake,
    [S_HOSTKEY] = ssh_step_hostkey,
    [S_AUTH_LIST] = ssh_step_auth_list,
    [S_AUTH_AGENT] = ssh_step_auth_agent,
    [S_AUTH_KEY] = ssh_step_auth_key,
    [S_AUTH_PASSWORD] = ssh_step_auth_password,
    [S_AUTH_KBDINT] = ssh_step_auth_kbdint,
    [S_CHANNEL_OPEN] = ssh_step_channel_open,
    [S_EXEC] = ssh_step_exec,
    [S_RUNNING] = ssh_step_running,
    [S_CHANNEL_CLOSE] = ssh_step_channel_close,
    [S_SFTP_INIT] = ssh_step_sftp_init,
    [S_SFTP_OPEN] = ssh_step_sftp_open,
    [S_SFTP_WRITE] = ssh_step_sftp_write,
    [S_SFTP_CLOSE] = ssh_step_sftp_close,
    [S_SFTP_SHUTDOWN] = ssh_step_sftp_shutdown,
    [S_HOLD] = step_idle,
    [S_DONE] = step_idle,
};

/* The -v trace's line for each step the machine enters (-vv: the inner
 * ones too). Never a password or a remote command: names and public facts. */
static const struct {
	int level;
	const char *what;
} step_trace[S_COUNT] = {
    [S_HANDSHAKE] = {TRACE_STEPS, "TCP connected; SSH handshake"},
    [S_HOSTKEY] = {TRACE_ALL, "host key check against known_hosts"},
    [S_AUTH_LIST] = {TRACE_STEPS, "host key accepted; asking the server's auth methods"},
    [S_AUTH_AGENT] = {TRACE_STEPS, "auth: publickey with the ssh agent's keys"},
    [S_AUTH_KEY] = {TRACE_STEPS, "auth: publickey with the key files"},
    [S_AUTH_PASSWORD] = {TRACE_STEPS, "auth: password"},
    [S_AUTH_KBDINT] = {TRACE_STEPS, "auth: keyboard-interactive"},
    [S_CHANNEL_OPEN] = {TRACE_STEPS, "authenticated; opening a session channel"},
    [S_EXEC] = {TRACE_STEPS, "agent start: running the bootstrap"},
    [S_RUNNING] = {TRACE_ALL, "the remote command runs"},
    [S_CHANNEL_CLOSE] = {TRACE_ALL, "the channel closes"},
    [S_SFTP_INIT] = {TRACE_STEPS, "agent upload by SFTP"},
    [S_SFTP_OPEN] = {TRACE_ALL, "SFTP: opening the temporary file"},
    [S_SFTP_WRITE] = {TRACE_ALL, "SFTP: writing"},
    [S_SFTP_CLOSE] = {TRACE_ALL, "SFTP: closing the file"},
    [S_SFTP_SHUTDOWN] = {TRACE_ALL, "SFTP: done"},
    [S_HOLD] = {TRACE_STEPS, "waiting for a node that shares the agent directory to upload"},
};

static void trace_step(struct conn *c, struct sshc *s)
{
	int level = step_trace[s->state].level;

	if (s->traced == (int)s->state + 1 || !step_trace[s->state].what || !trace_on(level))
		return;
	s->traced = (int)s->state + 1;
	if (s->state == S_AUTH_LIST)
		trace_node(level, c->label,
		           "host key %s %s accepted; asking the server's auth methods",
		           c->hostkey_type, c->hostkey_fp);
	else if ((s->state == S_AUTH_AGENT || s->state == S_AUTH_KEY) && s->auth_methods)
		trace_node(level, c->label, "%s (the server offers: %s)", step_trace[s->state].what,
		           s->auth_methods);
	else
		trace_node(level, c->label, "%s", step_trace[s->state].what);
}

/* Run the state machine until it must wait. Callbacks into the owner may
 * close this conn: after any of them, only s->reported/s->dead are read. */
static void ssh_run(struct conn *c, struct sshc *s)
{
	for (;;) {
		enum ssh_next next;

		if (s->reported || s->dead)
			return;
		trace_step(c, s);
		next = steps[s->state](c, s);
		if (next == SSH_STOP)
			return;
		if (next == SSH_WAIT)
			break;
	}
	ssh_wait_session(c);
}

static int ssh_upload(struct conn *c, const char *remote_tmp)
{
	struct sshc *s = c->priv;

	if (!s || s->reported)
		return CD_ERR_IO;
	free(s->remote_tmp);
	s->remote_tmp = cd_strdup(remote_tmp);
	if (s->state == S_HOLD) {
		ssh_sftp_begin(c, s);
		ssh_run_now(c, s);
		return 0;
	}
	/* The bootstrap exits after saying "missing": let its channel close,
	 * then ssh_step_channel_close starts the SFTP upload. */
	s->upload_pending = 1;
	s->rerun = 0;
	return 0;
}

static int ssh_hold(struct conn *c)
{
	struct sshc *s = c->priv;

	if (!s || s->reported)
		return CD_ERR_IO;
	if (s->state == S_HOLD)
		return 0;
	free(s->remote_tmp);
	s->remote_tmp = NULL;
	s->upload_pending = 1;
	s->rerun = 0;
	return 0;
}

static int ssh_resume(struct conn *c)
{
	struct sshc *s = c->priv;

	if (!s || s->reported)
		return CD_ERR_IO;
	if (s->state == S_HOLD) {
		ssh_exec_begin(s);
		ssh_run_now(c, s);
		return 0;
	}
	if (s->upload_pending && s->remote_tmp)
		return 0; /* the upload runs the command again anyway */
	free(s->remote_tmp);
	s->remote_tmp = NULL;
	s->upload_pending = 1;
	s->rerun = 1; /* released before the channel even closed */
	return 0;
}

static void ssh_flush(struct conn *c)
{
	struct sshc *s = c->priv;

	if (s && s->state == S_RUNNING && !s->reported) {
		ssh_enter(s);
		if (ssh_pump(c, s) == 0 && !s->reported && !s->dead)
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
	ssh_auth_fini(s);
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
	free(s->chunk);
	free(s->auth_methods);
	free(s->remote_tmp);
	free(s);
}

const struct transport_ops transport_ssh = {
    .name = "ssh",
    .upload_mode = UPLOAD_SFTP,
    .start = ssh_start,
    .flush = ssh_flush,
    .upload = ssh_upload,
    .hold = ssh_hold,
    .resume = ssh_resume,
    .close = ssh_close,
};
