/* SPDX-License-Identifier: MIT */
/*
 * transport_ssh_channel.c - the libssh2 transport's channel (see
 * transport_ssh.h): open it, exec the command, move bytes between it and
 * the conn's buffers, and at its close go on as the owner asked (end,
 * upload, hold, or run the command again).
 */
#include "cd.h"
#include "proto.h"
#include "transport_ssh.h"

#include <stdio.h>
#include <string.h>

void ssh_exec_begin(struct sshc *s)
{
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
			ssh_fail(c, "agent", "writing to the agent failed: %s",
			         ssh_session_error(s));
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
			ssh_fail(c, "agent", "reading from the agent failed: %s",
			         ssh_session_error(s));
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
int ssh_pump(struct conn *c, struct sshc *s)
{
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

enum ssh_next ssh_step_channel_open(struct conn *c, struct sshc *s)
{
	s->channel = libssh2_channel_open_session(s->session);
	if (!s->channel) {
		if (ssh_would_block(s))
			return SSH_WAIT;
		ssh_fail(c, "ssh", "cannot open a channel: %s", ssh_session_error(s));
		return SSH_STOP;
	}
	s->state = S_EXEC;
	return SSH_NEXT;
}

enum ssh_next ssh_step_exec(struct conn *c, struct sshc *s)
{
	int rc = libssh2_channel_exec(s->channel, c->command);

	if (rc == LIBSSH2_ERROR_EAGAIN)
		return SSH_WAIT;
	if (rc) {
		ssh_fail(c, "ssh", "the server refused to run the agent: %s", ssh_session_error(s));
		return SSH_STOP;
	}
	s->state = S_RUNNING;
	return SSH_NEXT;
}

enum ssh_next ssh_step_running(struct conn *c, struct sshc *s)
{
	if (ssh_pump(c, s) < 0)
		return SSH_STOP;
	if (s->state != S_RUNNING)
		return SSH_NEXT; /* an upload was requested from the data callback */
	if (!s->out_eof)
		return SSH_WAIT;
	s->state = S_CHANNEL_CLOSE;
	return SSH_NEXT;
}

/* The command's stdout ended. Go on as the owner asked while it ran: copy
 * the agent and run again, hold, run again at once, or report the end. */
enum ssh_next ssh_step_channel_close(struct conn *c, struct sshc *s)
{
	int rc = libssh2_channel_close(s->channel);

	if (rc == LIBSSH2_ERROR_EAGAIN)
		return SSH_WAIT;
	libssh2_channel_free(s->channel);
	s->channel = NULL;
	if (s->upload_pending && s->remote_tmp) {
		ssh_sftp_begin(c, s);
		return SSH_NEXT;
	}
	if (s->upload_pending) {
		s->upload_pending = 0;
		if (s->rerun) {
			ssh_exec_begin(s);
			return SSH_NEXT;
		}
		s->state = S_HOLD;
		loop_unwatch(c->loop, s->fd);
		return SSH_STOP;
	}
	s->state = S_DONE;
	s->reported = 1;
	c->ev->closed(c);
	return SSH_STOP;
}
