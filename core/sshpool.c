/* SPDX-License-Identifier: MIT */
/*
 * sshpool.c - fan-out of agent sessions over the transports (see
 * sshpool.h): the pool, the window, each node's life from the queue to
 * closed or failed, and what its transport reports. The bootstrap, the
 * protocol and the ssh settings have their own files (sshpool_internal.h).
 */
#include "sshpool_internal.h"
#include "bootstrap.h"
#include "cd.h"
#include "proto.h"
#include "sshconfig.h"
#include "trace.h"

#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct conn_events node_events;

void sshpool_opts_init(struct sshpool_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->fanout = 64;
	o->connect_timeout_ms = 10000;
	o->auth_timeout_ms = 10000;
	o->request_timeout_ms = 30000;
	o->backend = SSHPOOL_BACKEND_LIBSSH2;
	o->local_localhost = 1;
}

static int have_program(const char *name)
{
	const char *path = getenv("PATH");
	char buf[1024];

	if (!path)
		path = "/usr/bin:/bin";
	while (*path) {
		size_t len = strcspn(path, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, path, name);
		if (access(buf, X_OK) == 0)
			return 1;
		path += len + (path[len] == ':');
	}
	return 0;
}

struct sshpool *sshpool_new(struct loop *loop, const struct sshpool_opts *opts, char *err,
                            size_t errlen)
{
	struct sshpool *pool = cd_calloc(1, sizeof(*pool));
	const char *home = getenv("HOME");

	pool->loop = loop;
	/* every deadline of the pool runs on this loop: its lag says how
	 * late they may fire (loop_stats; the message of a "slow" node) */
	loop_watch_lag(loop, SSHPOOL_LAG_TICK_MS);
	pool->opts = *opts;
	if (pool->opts.fanout < 1)
		pool->opts.fanout = 1;
	pool->cfg.accept_new = opts->accept_new;
	pool->cfg.ssh_config = opts->ssh_config;
	pool->cfg.agent_path = opts->agent_path;
	pool->cfg.connect_timeout_ms = opts->connect_timeout_ms;
	pool->cfg.password = opts->password;
	pool->cfg.hostkey_consent = opts->hostkey_consent;
	pool->cfg.consent_arg = opts->consent_arg;
	if (!opts->agent_path) {
		cd_errf(err, errlen, CD_ERR_NOTFOUND,
		        "no agent binary (build it with `make`, or set CLUSTERDOC_AGENT)");
		free(pool);
		return NULL;
	}
	if (agentset_load(&pool->agents, opts->agent_path, err, errlen) < 0) {
		size_t l = strlen(err);

		snprintf(err + l, errlen - l, " (build it with `make`, or set CLUSTERDOC_AGENT)");
		free(pool);
		return NULL;
	}
	for (size_t i = 0; i < pool->agents.n; i++)
		if (pool->agents.bins[i].size > pool->cfg.agent_size)
			pool->cfg.agent_size = pool->agents.bins[i].size;
	if (!home) {
		struct passwd *pw = getpwuid(getuid());

		home = pw ? pw->pw_dir : "/";
	}
	snprintf(pool->home, sizeof(pool->home), "%s", home);
	pool->have_openssh = have_program("ssh");
	return pool;
}

const char *sshpool_node_host(const struct sshpool_node *node)
{
	return node->host;
}
enum sshpool_node_state sshpool_node_state(const struct sshpool_node *node)
{
	return node->state;
}
const char *sshpool_node_error_code(const struct sshpool_node *node)
{
	return node->error_code;
}
const char *sshpool_node_error_message(const struct sshpool_node *node)
{
	return node->error_msg;
}
const char *sshpool_node_hostkey_fp(const struct sshpool_node *node, const char **keytype)
{
	if (keytype)
		*keytype = node->conn.hostkey_type;
	return node->conn.hostkey_fp;
}
json_t *sshpool_node_hello(const struct sshpool_node *node)
{
	return node->hello;
}
int sshpool_node_uploaded(const struct sshpool_node *node)
{
	return node->uploaded;
}
const char *sshpool_node_agent_dir(const struct sshpool_node *node)
{
	return node->dir;
}
const char *sshpool_node_agent_note(const struct sshpool_node *node)
{
	return node->note;
}
size_t sshpool_node_agent_dir_shared(const struct sshpool_node *node)
{
	const struct sshpool *pool = node->pool;
	size_t n = 0;

	if (!node->dir_id || strcmp(node->dir_id, "-") == 0)
		return node->dir ? 1 : 0;
	for (size_t i = 0; i < pool->n; i++)
		n += pool->nodes[i]->dir_id && strcmp(pool->nodes[i]->dir_id, node->dir_id) == 0;
	return n;
}
const char *sshpool_node_transport(const struct sshpool_node *node)
{
	return node->conn.ops ? node->conn.ops->name : "none";
}
void sshpool_node_set_data(struct sshpool_node *node, void *data)
{
	node->data = data;
}
void *sshpool_node_data(const struct sshpool_node *node)
{
	return node->data;
}

struct sshpool_node *sshpool_add(struct sshpool *pool, const char *host)
{
	struct sshpool_node *node = cd_calloc(1, sizeof(*node));

	node->pool = pool;
	node->host = cd_strdup(host);
	pool_node_set_state(node, SSHPOOL_NODE_QUEUED);
	node->next_id = 1;
	node->ssh_g.pid = 0;
	node->ssh_g.in_fd = node->ssh_g.out_fd = node->ssh_g.err_fd = node->ssh_g.pid_fd = -1;
	buf_init(&node->ssh_g_out, SSH_G_OUT_MAX);
	ssh_settings_init(&node->conn.ssh);
	if (pool->n == pool->cap) {
		pool->cap = pool->cap ? pool->cap * 2 : 64;
		pool->nodes = cd_realloc(pool->nodes, pool->cap * sizeof(*pool->nodes));
	}
	pool->nodes[pool->n++] = node;
	return node;
}

size_t sshpool_busy(const struct sshpool *pool)
{
	size_t busy = 0;

	for (size_t i = 0; i < pool->n; i++)
		busy += pool->nodes[i]->state < SSHPOOL_NODE_READY;
	return busy;
}

static int node_in_window(const struct sshpool_node *node)
{
	return node->state >= SSHPOOL_NODE_CONFIG && node->state < SSHPOOL_NODE_READY;
}

void pool_node_cancel_deadline(struct sshpool_node *node)
{
	loop_timer_cancel(node->pool->loop, node->deadline);
	node->deadline = 0;
}

void pool_node_release(struct sshpool_node *node)
{
	pool_node_cancel_deadline(node);
	if (node->reboot_timer) {
		loop_timer_cancel(node->pool->loop, node->reboot_timer);
		node->reboot_timer = 0;
	}
	pool_node_config_stop(node);
	if (node->conn_started && node->conn.ops) {
		node->conn.ops->close(&node->conn);
		node->conn_started = 0;
	}
}

/*
 * A node whose agent said hello, then missed a request's deadline, answered
 * its transport: it is slow (overloaded, its agent stopped or swapping), not
 * unreachable, and its code ("slow") and message say so. When the deadline
 * itself fired late, the head's own loop lagged: the message says by how
 * much, since part of the wait was the head's.
 */
static const char *say_slow(struct sshpool_node *node, char *msg, size_t len)
{
	int64_t late = loop_timer_late_ms(node->pool->loop);
	size_t used = strlen(msg);

	snprintf(msg + used, len - used,
	         "; it logged in and its agent said hello, so it is slow (overloaded or "
	         "stopped), not unreachable");
	used = strlen(msg);
	if (late >= SSHPOOL_LATE_NOTE_MS)
		snprintf(msg + used, len - used,
		         " (this deadline fired %lld ms late: the head lagged too)",
		         (long long)late);
	return "slow";
}

void pool_node_fail(struct sshpool_node *node, const char *code, const char *fmt, ...)
{
	struct sshpool *pool = node->pool;
	int was_in_window = node_in_window(node);
	char msg[CD_ERRLEN];
	va_list ap;

	if (node->state == SSHPOOL_NODE_FAILED || node->state == SSHPOOL_NODE_CLOSED)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (node->state == SSHPOOL_NODE_READY && strcmp(code, "request-timeout") == 0)
		code = say_slow(node, msg, sizeof(msg));
	trace_node(TRACE_STEPS, node->host, "failed (%s): %s", code, msg);
	if (node->role == UP_SENDING)
		pool_node_release_waiters(node, 0);
	node->role = UP_NONE;
	pool_node_set_state(node, SSHPOOL_NODE_FAILED);
	node->error_code = cd_strdup(code);
	node->error_msg = cd_strdup(msg);
	pool_node_release(node);
	pool_node_fail_pending(node, code, msg);
	if (was_in_window)
		pool->active--;
	if (pool->h && pool->h->failed)
		pool->h->failed(pool, node, pool->harg);
	pool_fill_window(pool);
}

static void on_deadline(struct loop *loop, void *arg)
{
	struct sshpool_node *node = arg;
	static const struct {
		const char *code, *what;
	} phases[] = {
	    {"config-timeout", "`ssh -G` did not finish"},
	    {"connect-timeout", "no TCP connection"},
	    {"handshake-timeout", "the SSH handshake did not finish"},
	    {"auth-timeout", "authentication did not finish"},
	    {"request-timeout", "the agent did not start"},
	};
	const char *what = "timed out";

	node->deadline = 0;
	for (size_t i = 0; i < CD_ARRAY_LEN(phases); i++)
		if (strcmp(phases[i].code, node->deadline_code) == 0)
			what = phases[i].what;
	if (node->pool->back && (strcmp(node->deadline_code, "connect-timeout") == 0 ||
	                         strcmp(node->deadline_code, "handshake-timeout") == 0)) {
		if (backlisten_flooded(node->pool->back)) {
			pool_node_fail(
			    node, node->deadline_code,
			    "%s: %zu connections to %s did not prove themselves (a flood "
			    "or a scanner); its agent did not connect back within the "
			    "deadline, crowded out by them or not started%s",
			    node->host, backlisten_dropped(node->pool->back),
			    backlisten_address(node->pool->back),
			    backlisten_note(node->pool->back, node->host));
			return;
		}
		if (backlisten_waiting(node->pool->back)[0]) {
			pool_node_fail(
			    node, "launcher",
			    "%s: the launcher had not started its agent by the deadline; "
			    "it said: %s%s",
			    node->host, backlisten_waiting(node->pool->back),
			    backlisten_note(node->pool->back, node->host));
			return;
		}
		pool_node_fail(node, node->deadline_code,
		               "%s: its agent did not connect back to %s within the deadline (a "
		               "firewall between the node and the head's port, or the launcher "
		               "did not start it)%s",
		               node->host, backlisten_address(node->pool->back),
		               backlisten_note(node->pool->back, node->host));
		return;
	}
	pool_node_fail(node, node->deadline_code, "%s: %s within the deadline", node->host, what);
}

static const char *const state_names[] = {
    [SSHPOOL_NODE_QUEUED] = "queued",
    [SSHPOOL_NODE_CONFIG] = "reading its ssh settings",
    [SSHPOOL_NODE_CONNECTING] = "connecting",
    [SSHPOOL_NODE_AUTHENTICATING] = "connected; authenticating",
    [SSHPOOL_NODE_STARTING] = "logged in; starting the agent",
    [SSHPOOL_NODE_READY] = "the agent is ready",
    [SSHPOOL_NODE_CLOSED] = "closed",
    [SSHPOOL_NODE_FAILED] = "failed",
};

void pool_node_set_state(struct sshpool_node *node, enum sshpool_node_state state)
{
	const struct conn *c = &node->conn;
	int same = node->state == state;

	node->state = state;
	if (same || state == SSHPOOL_NODE_FAILED) /* pool_node_fail says why */
		return;
	/* libssh2's transport traces its own, finer steps of these two, in
	 * their order: the pool's would come before the first of them */
	if (c->ops == &transport_ssh &&
	    (state == SSHPOOL_NODE_AUTHENTICATING || state == SSHPOOL_NODE_STARTING))
		return;
	if (state != SSHPOOL_NODE_CONNECTING || !c->ops)
		trace_node(TRACE_STEPS, node->host, "%s", state_names[state]);
	else if (c->ops == &transport_local || c->ops == &transport_back)
		trace_node(TRACE_STEPS, node->host, "connecting: the %s transport", c->ops->name);
	else
		trace_node(TRACE_STEPS, node->host,
		           "connecting: the %s transport to %s%s%s port %d", c->ops->name,
		           c->ssh.user ? c->ssh.user : "", c->ssh.user ? "@" : "",
		           c->ssh.hostname ? c->ssh.hostname : node->host, c->ssh.port);
}

void pool_node_set_deadline(struct sshpool_node *node, int ms, const char *code)
{
	pool_node_cancel_deadline(node);
	node->deadline_code = code;
	node->deadline = loop_timer_add(node->pool->loop, ms, on_deadline, node);
}

/* The agent's stdout has new bytes: the bootstrap's lines until it says
 * exec, then protocol messages (both may come in one read). */
static void ev_data(struct conn *c)
{
	struct sshpool_node *node = c->owner;

	pool_node_boot_input(node);
	pool_node_proto_input(node);
}
static void ev_connected(struct conn *c)
{
	struct sshpool_node *node = c->owner;

	pool_node_set_state(node, SSHPOOL_NODE_AUTHENTICATING);
	pool_node_set_deadline(node, node->pool->opts.auth_timeout_ms, "handshake-timeout");
}

/* Same budget as the handshake: only the name of what timed out changes. */
static void ev_handshaken(struct conn *c)
{
	struct sshpool_node *node = c->owner;

	node->deadline_code = "auth-timeout";
}

static void ev_authenticated(struct conn *c)
{
	struct sshpool_node *node = c->owner;

	pool_node_set_state(node, SSHPOOL_NODE_STARTING);
	pool_node_set_deadline(node, node->pool->opts.request_timeout_ms, "request-timeout");
	/* A connected-back agent has proven the run's secret: it runs. */
	if (c->ops == &transport_back)
		pool_node_send_hello(node);
}

static void ev_closed(struct conn *c)
{
	struct sshpool_node *node = c->owner;
	char last[200];

	conn_stderr_last_line(c, last, sizeof(last));
	if (node->state == SSHPOOL_NODE_CLOSED)
		return;
	if (pool_node_agent_suspect(node))
		return;
	if (!node->booted)
		pool_node_fail(node, "agent",
		               "%s: the remote command ended before the agent started%s%s",
		               node->host, last[0] ? ": " : "", last);
	else if (!node->hello && node->force)
		pool_node_fail(
		    node, "agent",
		    "%s: the agent in %s ended before its hello, even after a fresh upload%s%s",
		    node->host, node->dir ? node->dir : "its cache", last[0] ? ": " : "", last);
	else
		pool_node_fail(node, "agent", "%s: the agent exited%s%s", node->host,
		               last[0] ? ": " : "", last);
}

static void ev_failed(struct conn *c, const char *code, const char *msg)
{
	struct sshpool_node *node = c->owner;

	if (node->role == UP_SENDING && node->conn.ops->upload_mode == UPLOAD_SFTP &&
	    strcmp(code, "upload") == 0 && node->up_tmp) {
		/* SFTP says only "failure": the next run finds out why in words,
		 * and removes what was written. */
		free(node->boot_tmp);
		node->boot_tmp = cd_strdup(node->up_tmp);
		node->boot_tmp_failed = 1;
		pool_node_reboot(node);
		return;
	}
	if (pool_node_agent_suspect(node))
		return;
	if (node->booted && strcmp(code, "agent") == 0)
		pool_node_fail(node, code, "%s: the agent died: %s", node->host, msg);
	else
		pool_node_fail(node, code, "%s: %s", node->host, msg);
}

static const struct conn_events node_events = {
    .connected = ev_connected,
    .handshaken = ev_handshaken,
    .authenticated = ev_authenticated,
    .data = ev_data,
    .closed = ev_closed,
    .failed = ev_failed,
};

int pool_node_is_local(const struct sshpool_node *node)
{
	const struct sshpool_opts *o = &node->pool->opts;

	return (o->local_localhost && strcmp(node->host, "localhost") == 0) ||
	       (o->local_host && strcmp(node->host, o->local_host) == 0);
}

void pool_node_start_transport(struct sshpool_node *node)
{
	struct sshpool *pool = node->pool;
	struct conn *c = &node->conn;
	const char *key;

	c->loop = pool->loop;
	c->ev = &node_events;
	c->cfg = &pool->cfg;
	c->owner = node;
	c->label = node->host;
	cd_random_token(node->token, sizeof(node->token));
	if (pool->back) {
		c->ops = &transport_back;
	} else if (pool_node_is_local(node)) {
		c->ops = &transport_local;
	} else if (pool->opts.backend == SSHPOOL_BACKEND_OPENSSH) {
		c->ops = &transport_openssh;
	} else if ((key = pool_node_switch_key(node)) != NULL) {
		/* ProxyJump, ProxyCommand, a certificate...: OpenSSH does them
		 * exactly as the user's own ssh would (sshkeys.h's table). */
		pool_node_switch_to_openssh(node, key);
	} else {
		c->ops = &transport_ssh;
	}
	pool_node_connect(node);
}

/* Connect with the transport chosen, and run the bootstrap: the first time,
 * and again on a fresh connection after a fallback or a bad cached agent. */
void pool_node_connect(struct sshpool_node *node)
{
	struct sshpool *pool = node->pool;
	struct conn *c = &node->conn;

	if (node->boot_runs++) {
		buf_fini(&c->in);
		buf_fini(&c->out);
		buf_fini(&c->errtail);
		free(c->command);
		c->command = NULL;
		node->booted = 0;
		node->boot_lines = 0;
	}
	buf_init(&c->in, 2 * PROTO_MAX_LINE);
	buf_init(&c->out, (size_t)pool->cfg.agent_size + 4 * PROTO_MAX_LINE);
	buf_init(&c->errtail, 4096);
	if (c->ops == &transport_local) {
		node->booted = 1; /* no bootstrap: the agent itself runs */
		pool_node_set_state(node, SSHPOOL_NODE_CONNECTING);
	} else if (c->ops == &transport_back) {
		/* The launcher runs the agent itself; it has until the connect
		 * and the handshake deadlines to connect back. */
		node->booted = 1;
		pool_node_set_state(node, SSHPOOL_NODE_CONNECTING);
		pool_node_set_deadline(node,
		                       pool->opts.connect_timeout_ms + pool->opts.auth_timeout_ms,
		                       "connect-timeout");
	} else {
		c->command = bootstrap_command(
		    &pool->agents,
		    &(struct boot_params){.stream = c->ops->upload_mode == UPLOAD_STREAM,
		                          .force = node->force,
		                          .skip = node->skip ? node->skip : "",
		                          .tmp = node->boot_tmp,
		                          .tmp_failed = node->boot_tmp_failed,
		                          .token = node->token});
		free(node->boot_tmp);
		node->boot_tmp = NULL;
		node->boot_tmp_failed = 0;
		pool_node_set_state(node, SSHPOOL_NODE_CONNECTING);
		/* openssh reports no phases: one deadline covers connect to login. */
		if (c->ops == &transport_openssh)
			pool_node_set_deadline(
			    node, pool->opts.connect_timeout_ms + pool->opts.auth_timeout_ms,
			    "auth-timeout");
		else
			pool_node_set_deadline(node, pool->opts.connect_timeout_ms,
			                       "connect-timeout");
	}
	node->conn_started = 1;
	if (c->ops->start(c) < 0)
		return; /* already reported through ev_failed */
	if (c->ops == &transport_local && node->state == SSHPOOL_NODE_STARTING)
		pool_node_send_hello(node);
}

void pool_fill_window(struct sshpool *pool)
{
	while (pool->active < (size_t)pool->opts.fanout && pool->next_queued < pool->n) {
		struct sshpool_node *node = pool->nodes[pool->next_queued++];

		if (node->state != SSHPOOL_NODE_QUEUED)
			continue;
		if (pool->back) {
			/* the launcher reaches the node: no ssh settings to find */
			pool_node_set_state(node, SSHPOOL_NODE_CONFIG);
			pool->active++;
			pool_node_start_transport(node);
		} else {
			pool_node_config_begin(node);
		}
	}
}

/* With a launcher: listen, start every node's agent, and take them all
 * into the window (they are started anyway). A listener or launcher that
 * fails fails every node with its reason. */
static void pool_launch(struct sshpool *pool)
{
	char err[CD_ERRLEN], **hosts = cd_calloc(pool->n ? pool->n : 1, sizeof(*hosts));

	for (size_t i = 0; i < pool->n; i++)
		hosts[i] = pool->nodes[i]->host;
	pool->back =
	    backlisten_new(pool->loop, (enum launcher)pool->opts.launcher, pool->opts.listen, hosts,
	                   pool->n, pool->opts.auth_timeout_ms, err, sizeof(err));
	free(hosts);
	pool->cfg.back = pool->back;
	if (pool->back && pool->opts.fanout < (int)pool->n)
		pool->opts.fanout = (int)pool->n;
	if (pool->back && pool->opts.sbcast)
		backlisten_set_sbcast(pool->back);
	if (pool->back &&
	    backlisten_launch(pool->back, pool->cfg.agent_path, err, sizeof(err)) == 0)
		return;
	for (size_t i = 0; i < pool->n; i++) {
		struct sshpool_node *node = pool->nodes[i];

		pool_node_set_state(node, SSHPOOL_NODE_FAILED);
		node->error_code = cd_strdup("launcher");
		node->error_msg = cd_asprintf("%s: %s", node->host, err);
	}
	pool->next_queued = pool->n;
	for (size_t i = 0; i < pool->n && pool->h && pool->h->failed; i++)
		pool->h->failed(pool, pool->nodes[i], pool->harg);
}

void sshpool_start(struct sshpool *pool, const struct sshpool_handlers *h, void *arg)
{
	pool->h = h;
	pool->harg = arg;
	if (pool->opts.launcher != LAUNCHER_SSH && !pool->back)
		pool_launch(pool);
	pool_fill_window(pool);
}

void sshpool_close_node(struct sshpool_node *node)
{
	if (node->state == SSHPOOL_NODE_CLOSED || node->state == SSHPOOL_NODE_FAILED)
		return;
	if (node_in_window(node))
		node->pool->active--;
	pool_node_set_state(node, SSHPOOL_NODE_CLOSED);
	pool_node_release(node);
	pool_node_fail_pending(node, "closed", "the node was closed");
	pool_fill_window(node->pool);
}

void sshpool_free(struct sshpool *pool)
{
	if (!pool)
		return;
	pool->h = NULL;
	pool_keepalive_stop(pool);
	for (size_t i = 0; i < pool->n; i++) {
		struct sshpool_node *node = pool->nodes[i];

		pool_node_set_state(node, SSHPOOL_NODE_CLOSED);
		pool_node_release(node);
		pool_node_fail_pending(node, "closed", "the pool was freed");
		ssh_settings_fini(&node->conn.ssh);
		buf_fini(&node->conn.in);
		buf_fini(&node->conn.out);
		buf_fini(&node->conn.errtail);
		free(node->conn.command);
		free(node->conn.proxy_jump);
		free(node->conn.proxy_command);
		free(node->host);
		free(node->error_code);
		free(node->error_msg);
		free(node->skip);
		free(node->skip_notes);
		free(node->boot_tmp);
		free(node->up_tmp);
		free(node->dir);
		free(node->dir_id);
		free(node->note);
		pool_node_end_free(node);
		free(node->ended);
		json_decref(node->hello);
		free(node);
	}
	/* the agents' sockets are closed: the launched processes end */
	backlisten_free(pool->back);
	free(pool->nodes);
	pool_config_share_free(pool);
	agentset_fini(&pool->agents);
	free(pool);
}
