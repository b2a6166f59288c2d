/* SPDX-License-Identifier: MIT */
/*
 * sshpool_internal.h - the inside of sshpool (sshpool.h), shared by its
 * files and by nothing else:
 *
 *   sshpool.c          the pool and each node's life: the window, the
 *                      deadlines, the transport and its events, failing
 *                      and closing
 *   sshpool_config.c   SSHPOOL_NODE_CONFIG: the node's ssh settings (`ssh -G`,
 *                      then the command line's overrides)
 *   sshpool_boot.c     SSHPOOL_NODE_STARTING before the agent speaks: the
 *                      bootstrap's "CDBOOT" lines, the agent upload and
 *                      the nodes that share one agent directory
 *   sshpool_request.c  the agent protocol: hello, requests, their replies
 *                      and progress, their deadlines
 *   sshpool_end.c      a node whose agent stopped answering: the path
 *                      re-tested and the agent and its job ended, through
 *                      a fresh session
 */
#ifndef CD_SSHPOOL_INTERNAL_H
#define CD_SSHPOOL_INTERNAL_H

#include "agentset.h"
#include "buf.h"
#include "child.h"
#include "sshpool.h"
#include "transport_back.h"

#define BOOT_NOISE_MAX       200 /* lines a login shell may print before our bootstrap speaks */
#define SSH_G_OUT_MAX        (64 * 1024)
#define BOOT_RUNS_MAX        6   /* bootstrap runs per node: first, fallbacks, one fresh upload */
#define SSHPOOL_LATE_NOTE_MS 200 /* a deadline this late is the head's lag, said in the message */
#define SSHPOOL_LAG_TICK_MS  100 /* the loop's lag is sampled at least this often */

/* Where a node stands with the agent upload of its directory. */
enum upload_role {
	UP_NONE,
	UP_SENDING, /* this node uploads into a directory (maybe for others too) */
	UP_WAITING, /* a node sharing the directory uploads: wait for it */
};

struct pending {
	struct sshpool_node *node;
	long long id;
	sshpool_reply_cb cb;
	sshpool_progress_cb progress_cb; /* NULL: progress not asked for */
	void *arg;
	uint64_t timer;
	char type[24];   /* the request's type, for the -v trace */
	int64_t sent_ms; /* when it was queued for the agent (cd_now_ms) */
	struct pending *next;
};

struct sshpool_node {
	struct sshpool *pool;
	char *host;
	enum sshpool_node_state state;
	struct conn conn;
	int conn_started;
	uint64_t deadline; /* the current phase's timer */
	const char *deadline_code;
	char *error_code;
	char *error_msg;
	json_t *hello;
	int uploaded;
	int boot_lines;
	/* the bootstrap (bootstrap.h) */
	const struct agent_bin *bin; /* the agent the node's uname -m picked */
	char token[17];              /* random: the upload temp names are ours alone */
	int boot_runs;
	int force;        /* this run replaces a cached agent that proved bad */
	char *skip;       /* "|DIR|...|": directories that cannot take an agent */
	char *skip_notes; /* "DIR: reason; ..." for those, in words */
	char *boot_tmp;   /* next run: install (or, failed, clean up) this SFTP upload */
	int boot_tmp_failed;
	uint64_t reboot_timer;
	enum upload_role role;
	char *up_tmp; /* the temp name this node's upload goes to */
	char *dir;    /* where the agent runs from (after "exec") */
	char *dir_id; /* that directory's marker, "-" when it has none */
	char *note;   /* a fallback worth saying, or NULL */
	int booted;   /* the bootstrap said "exec": protocol lines follow */
	long long next_id;
	struct pending *pending, *pending_tail;
	struct child ssh_g; /* `ssh -G` while in SSHPOOL_NODE_CONFIG */
	struct buf ssh_g_out;
	void *data;
	int ssh_g_waiting; /* sshpool_config.c: waits for the pool's shared `ssh -G` */
	/* sshpool_end.c: the job to end with the agent, and the end itself */
	long long job_pid, job_pgid;
	int job_grace_ms;
	int ending;           /* sshpool_node_end runs: no requests, no keepalives */
	struct pool_end *end; /* its fresh session while it runs */
	char *ended;          /* what it found and ended (sshpool_node_ended), or NULL */
};

struct sshpool {
	struct loop *loop;
	struct sshpool_opts opts;
	struct conn_config cfg;
	const struct sshpool_handlers *h;
	void *harg;
	struct sshpool_node **nodes;
	size_t n, cap;
	size_t next_queued; /* index of the first node not yet started */
	size_t active;      /* nodes between config and ready */
	struct agentset agents;
	char home[512];
	int have_openssh;
	uint64_t keepalive_timer;        /* sshpool_request.c: keepalives to the ready agents */
	struct ssh_g_share *ssh_g_share; /* sshpool_config.c: one `ssh -G` for every host */
	struct backlisten *back;         /* the connect-back listener, with a launcher */
};

/* sshpool.c */
/* Move the node to state: the one place a node's state changes, and the
 * -v trace's line for it (trace.h). */
void pool_node_set_state(struct sshpool_node *node, enum sshpool_node_state state);
/* Start nodes from the queue while the window has room. */
void pool_fill_window(struct sshpool *pool);
/* Fail the node once (code, message): release it, fail its requests, tell
 * the owner, and let the next queued node in. Nothing after a failure. A
 * "request-timeout" of a node that is ready (its agent said hello) becomes
 * "slow", the message saying why. */
void pool_node_fail(struct sshpool_node *node, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Stop the node's timers, `ssh -G` and transport (its state stays). */
void pool_node_release(struct sshpool_node *node);
/* The current phase's deadline: code is the failure's code when it fires. */
void pool_node_set_deadline(struct sshpool_node *node, int ms, const char *code);
void pool_node_cancel_deadline(struct sshpool_node *node);
/* Choose the node's transport (its settings are known), then connect. */
void pool_node_start_transport(struct sshpool_node *node);
/* Whether the node runs through the local transport: "localhost" (unless
 * local_localhost is 0) or the pool's local_host. */
int pool_node_is_local(const struct sshpool_node *node);
/* Connect and run the bootstrap: the first time, and again on a fresh
 * connection after a fallback or a bad cached agent. */
void pool_node_connect(struct sshpool_node *node);

/* sshpool_request.c: stop sending keepalives (the pool is freed). */
void pool_keepalive_stop(struct sshpool *pool);

/* sshpool_config.c */
/* Enter SSHPOOL_NODE_CONFIG: find the node's settings, then start its transport. */
void pool_node_config_begin(struct sshpool_node *node);
/* Stop `ssh -G` (if it runs) and free its output. */
void pool_node_config_stop(struct sshpool_node *node);
/* Only the command line's settings (for a transport that reads
 * ssh_config itself). */
void pool_node_reset_to_overrides(struct sshpool_node *node);
/* The ssh_config key (its spelling, static) whose value the libssh2
 * transport cannot honour, so that this node goes through openssh: the
 * parser's switch_key, or GSSAPIAuthentication when it is yes and the user
 * holds a Kerberos ticket cache ($KRB5CCNAME, /tmp/krb5cc_UID); NULL. */
const char *pool_node_switch_key(const struct sshpool_node *node);
/* Send the node to the openssh transport for key: keep its ProxyJump or
 * ProxyCommand for it, tell the pool's notice (once per run and key),
 * keep only the command line's settings. */
void pool_node_switch_to_openssh(struct sshpool_node *node, const char *key);
/* Free the shared `ssh -G` answer (the pool is freed). */
void pool_config_share_free(struct sshpool *pool);

/* sshpool_boot.c */
/* Consume the bootstrap's lines from the conn's input, until it says exec. */
void pool_node_boot_input(struct sshpool_node *node);
/* Run the bootstrap again on a fresh connection, from the loop's next
 * turn; after BOOT_RUNS_MAX runs the node fails instead. */
void pool_node_reboot(struct sshpool_node *node);
/* The node that uploaded into a shared directory is done: the nodes that
 * waited for it look again (ok), or one of them uploads in its place. */
void pool_node_release_waiters(struct sshpool_node *node, int ok);
/* A cached agent that never said hello (or is another build) is replaced
 * by a fresh upload, once. Returns 1 when that was started. */
int pool_node_agent_suspect(struct sshpool_node *node);

/* sshpool_request.c */
/* Consume the agent's protocol messages from the conn's input. */
void pool_node_proto_input(struct sshpool_node *node);
/* Say hello to the agent that just started (readiness follows its reply). */
void pool_node_send_hello(struct sshpool_node *node);
/* Fail every pending request, without touching the node's state. */
void pool_node_fail_pending(struct sshpool_node *node, const char *code, const char *msg);

/* sshpool_end.c */
/* What the end script said (pure; CDEND lines among any login noise). */
struct pool_end_found {
	int have_agent;      /* it looked at the agent's pid */
	char agent_state[8]; /* its state before anything ("T", "S"...), "" when gone */
	char job[256];       /* the job's pids it found */
	char left[256];      /* the pids still there at its end, "" when none */
	int complete;        /* it said its last line */
};
/* The remote command: `exec /bin/sh -c '...'`, which says the agent's state
 * and the job's pids (process group `group`, session `session`; 0: none),
 * sends SIGCONT, SIGTERM, and SIGKILL after grace_ms (0: 1 s) to what is
 * left, and says what is still there, in CDEND lines. Free it. */
char *pool_end_command(long long agent, long long session, long long group, int grace_ms);
/* 0, or CD_ERR_PARSE when the script did not finish (f holds what came). */
int pool_end_parse(const char *text, size_t len, struct pool_end_found *f);
/* Abandon a running end (the pool is freed) and free its session. */
void pool_node_end_free(struct sshpool_node *node);

#endif
