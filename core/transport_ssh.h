/* SPDX-License-Identifier: MIT */
/*
 * transport_ssh.h - the inside of the libssh2 transport (transport.h's
 * `transport_ssh`), shared by its files and by nothing else:
 *
 *   transport_ssh.c          the conn's life: resolve, connect, the state
 *                            machine's table and loop, hold/resume, close
 *   transport_ssh_auth.c     the SSH handshake, the host key check and
 *                            authentication (agent, key files, password)
 *   transport_ssh_channel.c  the channel that runs the remote command and
 *                            pumps its stdin/stdout/stderr
 *   transport_ssh_sftp.c     the SFTP upload of the agent binary
 *
 * Each state has one step function (one libssh2 call). A step returns what
 * the machine does next; on LIBSSH2_ERROR_EAGAIN it returns SSH_WAIT, and
 * the loop calls the same step with the same arguments once the socket is
 * ready, as libssh2 asks.
 */
#ifndef CD_TRANSPORT_SSH_H
#define CD_TRANSPORT_SSH_H

#include "transport.h"

#include <libssh2.h>
#include <libssh2_sftp.h>
#include <netdb.h>

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
	S_SFTP_SHUTDOWN,
	S_HOLD, /* the bootstrap's channel closed; its owner says when to go on */
	S_DONE,
	S_COUNT
};

/* What a step asks of the machine. */
enum ssh_next {
	SSH_NEXT, /* run the step of the (maybe new) state now */
	SSH_WAIT, /* wait for the socket in the directions libssh2 asks */
	SSH_STOP, /* return to the loop: done, failed, held, or waiting elsewhere */
};

#define SFTP_CHUNK (32 * 1024)

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
	/* authentication */
	LIBSSH2_AGENT *agent;
	struct libssh2_agent_publickey *agent_id;
	int agent_tries;
	size_t key_index;
	int rsa_skipped, keys_tried;
	int odd_key_skipped; /* a key file that is no regular file of at most KEY_FILE_MAX */
	int password_tried;  /* "password" or "keyboard-interactive" was answered */
	int kbd_rounds;
	char *auth_methods;
	int out_eof;
	int reported;
	int depth;  /* > 0 while the machine runs: close must not free under it */
	int dead;   /* closed while running: freed when the machine unwinds */
	int traced; /* 1 + the state the -v trace named last (0: none yet) */
	/* what happens when the running command's channel closes */
	char *remote_tmp;   /* the SFTP upload's remote name while one is asked for */
	int upload_pending; /* at the channel's close: upload (remote_tmp), or hold */
	int rerun;          /* ... or run the command again at once */
	/* SFTP upload */
	LIBSSH2_SFTP *sftp;
	LIBSSH2_SFTP_HANDLE *sftp_file;
	int local_fd;
	char *chunk; /* SFTP_CHUNK bytes, only while an upload runs */
	size_t chunk_len, chunk_off;
};

/* One state's step. Callbacks into the owner may close the conn: after any
 * of them a step reads only s->reported and s->dead. */
typedef enum ssh_next (*ssh_step_fn)(struct conn *c, struct sshc *s);

/* Report the failure once (later calls do nothing) and stop the machine. */
void ssh_fail(struct conn *c, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* libssh2's last error message for the session (never NULL). */
const char *ssh_session_error(struct sshc *s);
/* Whether libssh2's last error on the session is EAGAIN (for the calls
 * that return a pointer). */
int ssh_would_block(struct sshc *s);

/* transport_ssh_auth.c: set the host key preference for the handshake,
 * then the steps from S_HANDSHAKE to S_AUTH_KBDINT. */
void ssh_auth_prepare(struct conn *c, struct sshc *s);
enum ssh_next ssh_step_handshake(struct conn *c, struct sshc *s);
enum ssh_next ssh_step_hostkey(struct conn *c, struct sshc *s);
enum ssh_next ssh_step_auth_list(struct conn *c, struct sshc *s);
enum ssh_next ssh_step_auth_agent(struct conn *c, struct sshc *s);
enum ssh_next ssh_step_auth_key(struct conn *c, struct sshc *s);
enum ssh_next ssh_step_auth_password(struct conn *c, struct sshc *s);
enum ssh_next ssh_step_auth_kbdint(struct conn *c, struct sshc *s);
/* Free the agent connection used for authentication (if any). */
void ssh_auth_fini(struct sshc *s);

/* transport_ssh_channel.c: run c->command on a new channel (from
 * S_CHANNEL_OPEN), and the steps up to the channel's close. */
void ssh_exec_begin(struct sshc *s);
enum ssh_next ssh_step_channel_open(struct conn *c, struct sshc *s);
enum ssh_next ssh_step_exec(struct conn *c, struct sshc *s);
enum ssh_next ssh_step_running(struct conn *c, struct sshc *s);
enum ssh_next ssh_step_channel_close(struct conn *c, struct sshc *s);
/* Move bytes both ways until nothing moves. < 0: failed (reported) or
 * the conn was closed by the owner. */
int ssh_pump(struct conn *c, struct sshc *s);

/* transport_ssh_sftp.c: copy c->upload_path to s->remote_tmp (from
 * S_SFTP_INIT), then run the command again. */
void ssh_sftp_begin(struct conn *c, struct sshc *s);
enum ssh_next ssh_step_sftp_init(struct conn *c, struct sshc *s);
enum ssh_next ssh_step_sftp_open(struct conn *c, struct sshc *s);
enum ssh_next ssh_step_sftp_write(struct conn *c, struct sshc *s);
enum ssh_next ssh_step_sftp_close(struct conn *c, struct sshc *s);
enum ssh_next ssh_step_sftp_shutdown(struct conn *c, struct sshc *s);

#endif
