/* SPDX-License-Identifier: MIT */
/*
 * transport.h - how the head reaches one node's agent: a struct of
 * operations per transport, as tmux does with its modes.
 *
 *   ssh      libssh2, non-blocking, every session in the one event loop
 *   openssh  the system `ssh` binary (full ssh_config, RSA-SHA2, Kerberos)
 *   local    fork/exec of the agent (localhost and tests)
 *   connect-back  the agent, started by a launcher (srun), connects to
 *            the head's port and proves the run's secret (transport_back.h)
 *
 * A transport moves bytes between the agent's stdin/stdout and the conn's
 * `out`/`in` buffers and reports progress through `conn_events`. It never
 * interprets those bytes: the bootstrap lines and the protocol belong to
 * sshpool. A transport reports each failure once, through `failed`, and
 * reports nothing after that.
 */
#ifndef CD_TRANSPORT_H
#define CD_TRANSPORT_H

#include "buf.h"
#include "loop.h"
#include "sshconfig.h"

struct conn;

/* How a missing agent binary reaches the node. */
enum upload_mode {
	UPLOAD_NONE,   /* the transport runs the local agent binary directly */
	UPLOAD_STREAM, /* the bootstrap reads the binary from stdin (openssh) */
	UPLOAD_SFTP,   /* ops->upload copies it by SFTP, then reruns the command */
};

/* Callbacks from a transport to its owner (sshpool). */
struct conn_events {
	void (*connected)(struct conn *c);     /* TCP is up, the SSH handshake begins */
	void (*handshaken)(struct conn *c);    /* host key accepted, authentication begins */
	void (*authenticated)(struct conn *c); /* logged in; the remote command runs */
	void (*data)(struct conn *c);          /* new bytes were appended to c->in */
	void (*closed)(struct conn *c);        /* the remote command's stdout ended */
	void (*failed)(struct conn *c, const char *code, const char *msg);
};

/* Settings shared by every conn of a run (owned by sshpool). */
struct conn_config {
	int accept_new;         /* record unknown host keys (never changed ones) */
	const char *ssh_config; /* -F FILE, or NULL */
	const char *agent_path; /* local agent binary (uploaded, or run by `local`) */
	long long agent_size;
	int connect_timeout_ms; /* passed to ssh's ConnectTimeout by openssh */
	/* libssh2 only. When the node refuses every key: log in with this
	 * password, by "password" and else "keyboard-interactive" (each hidden
	 * prompt of the first round gets it; no second try, so a wrong password
	 * cannot lock the account). NULL: keys only. */
	const char *password;
	/* libssh2 only. For a host key in no known_hosts file: record it when
	 * this returns 1 (consent given for exactly this key, e.g. a
	 * fingerprint the user confirmed for that node); node is c->label,
	 * keytype the SSH name, fp "SHA256:...". NULL: --accept-new decides. */
	int (*hostkey_consent)(const char *node, const char *keytype, const char *fp, void *arg);
	void *consent_arg;
	/* connect-back only (transport_back.h): the pool's listener */
	struct backlisten *back;
};

struct transport_ops {
	const char *name;
	enum upload_mode upload_mode;
	/* Start connecting; progress is reported through c->ev. Returns 0, or a
	 * negative cd_err after reporting `failed`. */
	int (*start)(struct conn *c);
	/* c->out has new bytes for the agent's stdin. */
	void (*flush)(struct conn *c);
	/*
	 * UPLOAD_SFTP only. The running command (the bootstrap) exits after
	 * it asked for the agent; what follows its channel's close:
	 *   upload  copy c->upload_path to remote_tmp (the bootstrap, run
	 *           again, checks it and renames it into place), then run
	 *           c->command again on a new channel; at once when the conn
	 *           holds.
	 *   hold    run nothing and wait for upload or resume (a node that
	 *           shares the agent's directory with another one uploading).
	 *   resume  run c->command again: at once when the conn holds, else
	 *           as soon as the channel closes.
	 * Each returns 0, or CD_ERR_IO when the conn has already failed.
	 */
	int (*upload)(struct conn *c, const char *remote_tmp);
	int (*hold)(struct conn *c);
	int (*resume)(struct conn *c);
	/* Stop everything and release transport state. Safe to call twice. */
	void (*close)(struct conn *c);
};

struct conn {
	struct loop *loop;
	const struct transport_ops *ops;
	const struct conn_events *ev;
	const struct conn_config *cfg;
	void *owner;             /* sshpool's node */
	void *priv;              /* the transport's state */
	const char *label;       /* the host as the user gave it (for messages) */
	struct ssh_settings ssh; /* hostname, user, port, keys, known_hosts... */
	char *command;           /* the remote command line */
	char *proxy_jump;        /* ProxyJump from ssh_config (openssh transport only) */
	/* ProxyCommand from ssh_config (openssh transport only): run so that
	 * its exit status is reported when it ends before the session began */
	char *proxy_command;
	const char *upload_path; /* the local agent binary ops->upload copies */
	struct buf in;           /* agent stdout, capped */
	struct buf out;          /* to agent stdin */
	struct buf errtail;      /* agent/ssh stderr, capped */
	char hostkey_type[32];   /* the key the server offered ("" before the */
	char hostkey_fp[64];     /* handshake; libssh2 only): "ssh-ed25519", "SHA256:..." */
};

extern const struct transport_ops transport_ssh;
extern const struct transport_ops transport_openssh;
extern const struct transport_ops transport_local;

/* Append stderr bytes to c->errtail, keeping only the newest when full. */
void conn_stderr_append(struct conn *c, const char *p, size_t n);
/* The last non-empty line of c->errtail, copied into dst. */
void conn_stderr_last_line(const struct conn *c, char *dst, size_t len);

#endif
