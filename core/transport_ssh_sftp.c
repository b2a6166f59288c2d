/* SPDX-License-Identifier: MIT */
/*
 * transport_ssh_sftp.c - the libssh2 transport's upload of the agent (see
 * transport_ssh.h): on the same session, after the bootstrap's channel
 * closed, copy c->upload_path by SFTP to the temp name the bootstrap gave,
 * then run the bootstrap again; it checks the copy and renames it into
 * place itself, so the head never renames anything on the node.
 */
#include "cd.h"
#include "transport_ssh.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void ssh_sftp_begin(struct conn *c, struct sshc *s)
{
	s->local_fd = open(c->upload_path, O_RDONLY | O_CLOEXEC);
	if (s->local_fd < 0) {
		ssh_fail(c, "upload", "cannot read %s: %s", c->upload_path, strerror(errno));
		return;
	}
	s->upload_pending = 0;
	if (!s->chunk)
		s->chunk = cd_malloc(SFTP_CHUNK);
	s->chunk_len = s->chunk_off = 0;
	s->state = S_SFTP_INIT;
}

enum ssh_next ssh_step_sftp_init(struct conn *c, struct sshc *s)
{
	s->sftp = libssh2_sftp_init(s->session);
	if (!s->sftp) {
		if (ssh_would_block(s))
			return SSH_WAIT;
		ssh_fail(c, "upload",
		         "cannot start SFTP (is the sftp subsystem enabled in sshd_config?): %s",
		         ssh_session_error(s));
		return SSH_STOP;
	}
	s->state = S_SFTP_OPEN;
	return SSH_NEXT;
}

enum ssh_next ssh_step_sftp_open(struct conn *c, struct sshc *s)
{
	s->sftp_file =
	    libssh2_sftp_open(s->sftp, s->remote_tmp,
	                      LIBSSH2_FXF_WRITE | LIBSSH2_FXF_CREAT | LIBSSH2_FXF_TRUNC, 0700);
	if (!s->sftp_file) {
		if (ssh_would_block(s))
			return SSH_WAIT;
		ssh_fail(c, "upload", "cannot create %s on the node (SFTP status %lu)",
		         s->remote_tmp, libssh2_sftp_last_error(s->sftp));
		return SSH_STOP;
	}
	s->state = S_SFTP_WRITE;
	return SSH_NEXT;
}

/* One chunk at a time: read it from the local file when the last one is
 * written, then write what is left of it. */
enum ssh_next ssh_step_sftp_write(struct conn *c, struct sshc *s)
{
	ssize_t n;

	if (s->chunk_off == s->chunk_len) {
		n = read(s->local_fd, s->chunk, SFTP_CHUNK);
		if (n < 0) {
			ssh_fail(c, "upload", "reading %s: %s", c->upload_path, strerror(errno));
			return SSH_STOP;
		}
		if (n == 0) {
			s->state = S_SFTP_CLOSE;
			return SSH_NEXT;
		}
		s->chunk_len = (size_t)n;
		s->chunk_off = 0;
	}
	/* On EAGAIN libssh2 wants the very same buffer again. */
	n = libssh2_sftp_write(s->sftp_file, s->chunk + s->chunk_off, s->chunk_len - s->chunk_off);
	if (n == LIBSSH2_ERROR_EAGAIN)
		return SSH_WAIT;
	if (n < 0) {
		ssh_fail(c, "upload", "writing %s on the node failed (SFTP status %lu)",
		         s->remote_tmp, libssh2_sftp_last_error(s->sftp));
		return SSH_STOP;
	}
	s->chunk_off += (size_t)n;
	return SSH_NEXT;
}

enum ssh_next ssh_step_sftp_close(struct conn *c, struct sshc *s)
{
	if (libssh2_sftp_close(s->sftp_file) == LIBSSH2_ERROR_EAGAIN)
		return SSH_WAIT;
	s->sftp_file = NULL;
	s->state = S_SFTP_SHUTDOWN;
	return SSH_NEXT;
}

/* The copy is complete: run the bootstrap again, which installs it. */
enum ssh_next ssh_step_sftp_shutdown(struct conn *c, struct sshc *s)
{
	if (libssh2_sftp_shutdown(s->sftp) == LIBSSH2_ERROR_EAGAIN)
		return SSH_WAIT;
	s->sftp = NULL;
	close(s->local_fd);
	s->local_fd = -1;
	free(s->chunk);
	s->chunk = NULL;
	ssh_exec_begin(s);
	return SSH_NEXT;
}
