/* SPDX-License-Identifier: MIT */
/*
 * sshpool.h - reach many nodes' agents at once: a fan-out window, per-phase
 * deadlines, the agent bootstrap (upload when missing), and request/response
 * over the agent protocol, with the interim progress a request may ask for.
 *
 * Life of a node: queued -> config (ssh -G) -> connecting -> authenticating
 * -> starting (bootstrap, upload, hello) -> ready -> closed | failed.
 * At most `fanout` nodes are between config and ready at once; a ready node
 * no longer counts, so long-lived agents do not block the others.
 * Deadlines: connect_timeout_ms covers TCP connect, auth_timeout_ms covers
 * the SSH handshake and authentication, request_timeout_ms covers the
 * bootstrap (including an upload) and each request.
 *
 * A failed node carries a stable code and a message naming the node; the * others are unaffected.
 * Codes: config-timeout, resolve, refused, unreachable, connect, connect-timeout,
 * handshake-timeout, auth-timeout, handshake, auth, auth-rsa-sha1, hostkey-changed,
 * hostkey-unknown, hostkey-revoked, arch, upload, agent, protocol, request-timeout, ssh,
 * slow (a ready node, its agent past hello, that missed a request's deadline and
 * was found running, or could not be looked at), agent-stopped (the same, its
 * agent found stopped: state T), unreachable (also: a fresh connection to a
 * ready node that stopped answering timed out; sshpool_node_end),
 * launcher (the launcher, e.g. srun, could not start the node's agent: its words),
 * proxy (the ProxyCommand of ssh_config ended before the SSH session began:
 * its exit status and its last line of stderr).
 */
#ifndef CD_SSHPOOL_H
#define CD_SSHPOOL_H

#include <jansson.h>

#include "loop.h"
#include "transport.h"

enum sshpool_backend { SSHPOOL_BACKEND_LIBSSH2, SSHPOOL_BACKEND_OPENSSH };

struct sshpool_opts {
	int fanout;             /* window, default 64 */
	int connect_timeout_ms; /* default 10000 */
	int auth_timeout_ms;    /* handshake + auth, default 10000 */
	int request_timeout_ms; /* bootstrap and each request, default 30000 */
	/* hello's head_grace_ms: how long an agent whose head fell silent but
	 * kept its connection (stopped, cut off) keeps its jobs running past
	 * the silence bound (docs/protocol.md); default 0: a probe or a bench
	 * has nothing worth keeping, `run` sets its own (--head-grace) */
	int head_grace_ms;
	enum sshpool_backend backend;
	const char *ssh_config; /* -F FILE or NULL */
	const char *user;       /* -l USER or NULL */
	int port;               /* -p PORT or 0 */
	const char *identity;   /* -i KEY or NULL */
	int accept_new;         /* --accept-new */
	const char *agent_path; /* the clusterdoc-agent binary to run/upload */
	int local_localhost;    /* run "localhost" through the local transport */
	const char *local_host; /* this node name too (check --local: the node the
	                           check runs on, by its Slurm name); NULL: none */
	/* libssh2 only (transport.h's conn_config says how they are used): a
	 * password for nodes that refuse every key, and consent for unknown
	 * host keys. The strings are borrowed for the pool's life. */
	const char *password;
	int (*hostkey_consent)(const char *node, const char *keytype, const char *fp, void *arg);
	void *consent_arg;
	/* How the agents start (enum launcher, transport_back.h): 0 = over
	 * ssh; otherwise a launcher starts every node's agent at
	 * sshpool_start and each connects back to the head's port, on
	 * `listen` ("ADDR[:PORT]", NULL: the address that reaches the first
	 * node, an ephemeral port). The window does not apply then. */
	int launcher;
	const char *listen;
	int sbcast; /* srun: sbcast the agent to the nodes' /tmp first */
	/* One line for the user (no newline), e.g. "node3: ProxyCommand in
	 * ssh_config: using the openssh transport for this node", given at
	 * most once per run (process) and ssh_config key: the libssh2
	 * transport sends a node whose ssh_config it cannot honour to the
	 * openssh one (sshkeys.h). NULL: not said. */
	void (*notice)(const char *line, void *arg);
	void *notice_arg;
};

void sshpool_opts_init(struct sshpool_opts *o);

enum sshpool_node_state {
	SSHPOOL_NODE_QUEUED,
	SSHPOOL_NODE_CONFIG,
	SSHPOOL_NODE_CONNECTING,
	SSHPOOL_NODE_AUTHENTICATING,
	SSHPOOL_NODE_STARTING,
	SSHPOOL_NODE_READY,
	SSHPOOL_NODE_CLOSED,
	SSHPOOL_NODE_FAILED,
};

struct sshpool;
struct sshpool_node;

/* What the owner of the pool hears about nodes. */
struct sshpool_handlers {
	void (*ready)(struct sshpool *pool, struct sshpool_node *node, void *arg);
	/* Called once per node that fails (sshpool_node_error_code/message say why). */
	void (*failed)(struct sshpool *pool, struct sshpool_node *node, void *arg);
};

/* A reply callback gets the response's "result" (borrowed) when ok, or NULL
 * with code/msg set when the request failed or the node went away. */
typedef void (*sshpool_reply_cb)(struct sshpool_node *node, json_t *result, const char *code,
                                 const char *msg, void *arg);

/* A progress callback gets the "progress" object (borrowed) of an interim
 * message for a request still awaited (proto.h). */
typedef void (*sshpool_progress_cb)(struct sshpool_node *node, json_t *progress, void *arg);

/* Returns NULL with a message in err when the agent binary cannot be read. */
struct sshpool *sshpool_new(struct loop *loop, const struct sshpool_opts *opts, char *err,
                            size_t errlen);
/* Closes every node (agents are told to exit by closing their stdin). */
void sshpool_free(struct sshpool *pool);

/* Add a node by the name the user gave (an ssh_config alias, a hostname or an address). */
struct sshpool_node *sshpool_add(struct sshpool *pool, const char *host);
/* Start connecting; events arrive through h while the loop runs. */
void sshpool_start(struct sshpool *pool, const struct sshpool_handlers *h, void *arg);
/* Nodes neither ready, closed nor failed. */
size_t sshpool_busy(const struct sshpool *pool);

/*
 * Send a request (the pool assigns the id; req is consumed) to a ready node.
 * cb runs exactly once: with the result, or with an error (the request's
 * deadline, the node failing). A request that times out fails the node:
 * an agent that misses a deadline is not trusted with the next request.
 * cb may run before sshpool_request returns: at once when the node is not
 * ready, and with the answer when the transport reads the agent's answers
 * in the flush that writes this request (libssh2 does): a caller that
 * sends more after it returns re-reads its state first.
 */
int sshpool_request(struct sshpool_node *node, json_t *req_take, int timeout_ms,
                    sshpool_reply_cb cb, void *arg);

/*
 * sshpool_request that asks for interim progress: the request is sent with
 * "progress": true, and every progress message the agent sends for it
 * before its response goes to progress_cb (with arg); it neither completes
 * the request nor moves its deadline. cb then runs exactly once, as above.
 * Progress for an id no longer awaited (or sent without being asked) is
 * ignored; a malformed message (proto_progress_get) fails the node with
 * "protocol", as any malformed line does.
 */
int sshpool_request_progress(struct sshpool_node *node, json_t *req_take, int timeout_ms,
                             sshpool_progress_cb progress_cb, sshpool_reply_cb cb, void *arg);
/*
 * Tell every ready agent that takes keepalives that the head may be silent
 * for up to hold_ms (it is about to block: a question on the terminal), so
 * that the agents' silence bound does not end them meanwhile; the next
 * ordinary keepalive ends the hold. hold_ms <= 0 sends that ordinary
 * keepalive now (the head is back). The lines are flushed at once, as far
 * as the transport takes them; give the loop a turn to send the rest. The
 * next periodic keepalive is a whole interval (5 s) later, so turns taken
 * meanwhile do not end the hold before the caller blocks.
 */
void sshpool_keepalive_hold(struct sshpool *pool, int hold_ms);

/*
 * The job a node's agent runs for the owner (proc_start's answer: the
 * reaper's pid, which is the job's session, and the command's process
 * group; 0 when unknown), and the grace from SIGTERM to SIGKILL when it has
 * to be ended (0: 1 s). All 0: no job (it ended). sshpool_node_end ends
 * exactly these with the agent.
 */
void sshpool_node_set_job(struct sshpool_node *node, long long pid, long long pgid, int grace_ms);

/*
 * End a ready node whose agent stopped answering (why says how, e.g. "the
 * agent did not answer request 16 in time"): close its session, then
 * through a fresh login to the node (its ssh settings; the connection gets
 * at most 5 s, the re-test of the path) send SIGCONT, then SIGTERM and
 * after the job's grace SIGKILL, to the agent (its hello's pid) and to the
 * job of sshpool_node_set_job (its process group and session), nothing by
 * name, and check that they are gone. Its requests wait meanwhile, and
 * new ones are held unsent: all fail with the node. It then fails
 * (handlers->failed) with what the fresh session found: "agent-stopped"
 * (the agent was in state T), "slow" (it ran, or the session logged in
 * and could not tell), "unreachable" (a
 * fresh connection to its port timed out or failed: the head cannot reach
 * it any more). A node closed meanwhile is ended all the same, silently.
 * sshpool_node_ended says afterwards what was ended, for a summary.
 * A ready node whose request times out goes through this by itself.
 * Returns 0 when started; CD_ERR_UNSUPPORTED for a transport without a
 * login of its own (local, connect-back: nothing done), CD_ERR_AGAIN when
 * the node is not ready or already ending.
 */
int sshpool_node_end(struct sshpool_node *node, const char *why);
/* After sshpool_node_end: "its agent stopped answering; ended its job
 * (process group 812) and its agent (pid 790) through a fresh SSH session",
 * or why that could not be done and how long its job may still run; NULL
 * when the node needed no such end. Borrowed, for the pool's life. */
const char *sshpool_node_ended(const struct sshpool_node *node);

/* Politely end a node's agent (stdin closed) and mark it closed. */
void sshpool_close_node(struct sshpool_node *node);

const char *sshpool_node_host(const struct sshpool_node *node);
enum sshpool_node_state sshpool_node_state(const struct sshpool_node *node);
const char *sshpool_node_error_code(const struct sshpool_node *node);    /* NULL unless failed */
const char *sshpool_node_error_message(const struct sshpool_node *node); /* NULL unless failed */
json_t *sshpool_node_hello(const struct sshpool_node *node); /* borrowed; NULL before ready */
/* The host key the node offered ("SHA256:...", and its SSH type in
 * *keytype when not NULL); "" before the handshake or with openssh. */
const char *sshpool_node_hostkey_fp(const struct sshpool_node *node, const char **keytype);
int sshpool_node_uploaded(const struct sshpool_node *node); /* the agent was uploaded */
/* Where the node's agent runs from ("/root/.cache/clusterdoc"), NULL before
 * the bootstrap said or for the local transport. */
const char *sshpool_node_agent_dir(const struct sshpool_node *node);
/* A fallback worth telling the user once ("~/.cache/clusterdoc: no space
 * left on device; the agent is kept in /tmp/clusterdoc-0 instead"), or NULL. */
const char *sshpool_node_agent_note(const struct sshpool_node *node);
/* How many nodes of the pool keep their agent in this node's directory
 * (the same marker: a shared home); 1 when not shared, 0 when unknown. */
size_t sshpool_node_agent_dir_shared(const struct sshpool_node *node);
const char *sshpool_node_transport(const struct sshpool_node *node);
void sshpool_node_set_data(struct sshpool_node *node, void *data);
void *sshpool_node_data(const struct sshpool_node *node);

#endif
