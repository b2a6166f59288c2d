/* sshpool.c - fan-out of agent sessions over the transports (see sshpool.h). */
#include "sshpool.h"
#include "agentset.h"
#include "bootstrap.h"
#include "cd.h"
#include "child.h"
#include "proto.h"
#include "sha256.h"
#include "sshconfig.h"

#include <errno.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <stdarg.h>
#include <unistd.h>

#define BOOT_NOISE_MAX 200 /* lines a login shell may print before our bootstrap speaks */
#define SSH_G_OUT_MAX  (64 * 1024)
#define BOOT_RUNS_MAX  6 /* bootstrap runs per node: first, fallbacks, one fresh upload */

/* Where a node stands with the agent upload of its directory. */
enum upload_role {
	UP_NONE,
	UP_SENDING, /* this node uploads into a directory (maybe for others too) */
	UP_WAITING, /* a node sharing the directory uploads: wait for it */
};

struct pending {
	struct pool_node *node;
	long long id;
	sshpool_reply_cb cb;
	sshpool_progress_cb progress_cb; /* NULL: progress not asked for */
	void *arg;
	uint64_t timer;
	struct pending *next;
};

struct pool_node {
	struct sshpool *pool;
	char *host;
	enum node_state state;
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
	struct child ssh_g; /* `ssh -G` while in NODE_CONFIG */
	struct buf ssh_g_out;
	void *data;
};

struct sshpool {
	struct loop *loop;
	struct sshpool_opts opts;
	struct conn_config cfg;
	const struct sshpool_handlers *h;
	void *harg;
	struct pool_node **nodes;
	size_t n, cap;
	size_t next_queued; /* index of the first node not yet started */
	size_t active;      /* nodes between config and ready */
	struct agentset agents;
	char home[512];
	int have_openssh;
};

static const struct conn_events node_events;
static void pool_fill_window(struct sshpool *pool);

void sshpool_opts_init(struct sshpool_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->fanout = 64;
	o->connect_timeout_ms = 10000;
	o->auth_timeout_ms = 10000;
	o->request_timeout_ms = 30000;
	o->backend = SSH_BACKEND_LIBSSH2;
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

const char *node_host(const struct pool_node *node)
{
	return node->host;
}
enum node_state node_state(const struct pool_node *node)
{
	return node->state;
}
const char *node_error_code(const struct pool_node *node)
{
	return node->error_code;
}
const char *node_error_message(const struct pool_node *node)
{
	return node->error_msg;
}
const char *node_hostkey_fp(const struct pool_node *node, const char **keytype)
{
	if (keytype)
		*keytype = node->conn.hostkey_type;
	return node->conn.hostkey_fp;
}
json_t *node_hello(const struct pool_node *node)
{
	return node->hello;
}
int node_uploaded(const struct pool_node *node)
{
	return node->uploaded;
}
const char *node_agent_dir(const struct pool_node *node)
{
	return node->dir;
}
const char *node_agent_note(const struct pool_node *node)
{
	return node->note;
}
size_t node_agent_dir_shared(const struct pool_node *node)
{
	const struct sshpool *pool = node->pool;
	size_t n = 0;

	if (!node->dir_id || strcmp(node->dir_id, "-") == 0)
		return node->dir ? 1 : 0;
	for (size_t i = 0; i < pool->n; i++)
		n += pool->nodes[i]->dir_id && strcmp(pool->nodes[i]->dir_id, node->dir_id) == 0;
	return n;
}
const char *node_transport(const struct pool_node *node)
{
	return node->conn.ops ? node->conn.ops->name : "none";
}
void node_set_data(struct pool_node *node, void *data)
{
	node->data = data;
}
void *node_data(const struct pool_node *node)
{
	return node->data;
}

struct pool_node *sshpool_add(struct sshpool *pool, const char *host)
{
	struct pool_node *node = cd_calloc(1, sizeof(*node));

	node->pool = pool;
	node->host = cd_strdup(host);
	node->state = NODE_QUEUED;
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
		busy += pool->nodes[i]->state < NODE_READY;
	return busy;
}

static int node_in_window(const struct pool_node *node)
{
	return node->state >= NODE_CONFIG && node->state < NODE_READY;
}

static void node_cancel_deadline(struct pool_node *node)
{
	loop_timer_cancel(node->pool->loop, node->deadline);
	node->deadline = 0;
}

static void ssh_g_stop(struct pool_node *node)
{
	struct loop *loop = node->pool->loop;

	if (node->ssh_g.out_fd >= 0)
		loop_unwatch(loop, node->ssh_g.out_fd);
	if (node->ssh_g.pid_fd >= 0)
		loop_unwatch(loop, node->ssh_g.pid_fd);
	child_fini(&node->ssh_g);
	buf_fini(&node->ssh_g_out);
}

static void node_release(struct pool_node *node)
{
	node_cancel_deadline(node);
	if (node->reboot_timer) {
		loop_timer_cancel(node->pool->loop, node->reboot_timer);
		node->reboot_timer = 0;
	}
	ssh_g_stop(node);
	if (node->conn_started && node->conn.ops) {
		node->conn.ops->close(&node->conn);
		node->conn_started = 0;
	}
}

/* Fail every pending request, without touching the node's state. */
static void node_fail_pending(struct pool_node *node, const char *code, const char *msg)
{
	struct pending *p;

	while ((p = node->pending)) {
		node->pending = p->next;
		loop_timer_cancel(node->pool->loop, p->timer);
		p->cb(node, NULL, code, msg, p->arg);
		free(p);
	}
	node->pending_tail = NULL;
}

static void node_fail(struct pool_node *node, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void node_release_waiters(struct pool_node *node, int ok);

static void node_fail(struct pool_node *node, const char *code, const char *fmt, ...)
{
	struct sshpool *pool = node->pool;
	int was_in_window = node_in_window(node);
	char msg[CD_ERRLEN];
	va_list ap;

	if (node->state == NODE_FAILED || node->state == NODE_CLOSED)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (node->role == UP_SENDING)
		node_release_waiters(node, 0);
	node->role = UP_NONE;
	node->state = NODE_FAILED;
	node->error_code = cd_strdup(code);
	node->error_msg = cd_strdup(msg);
	node_release(node);
	node_fail_pending(node, code, msg);
	if (was_in_window)
		pool->active--;
	if (pool->h && pool->h->failed)
		pool->h->failed(pool, node, pool->harg);
	pool_fill_window(pool);
}

static void on_deadline(struct loop *loop, void *arg)
{
	struct pool_node *node = arg;
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
	node_fail(node, node->deadline_code, "%s: %s within the deadline", node->host, what);
}

static void node_set_deadline(struct pool_node *node, int ms, const char *code)
{
	node_cancel_deadline(node);
	node->deadline_code = code;
	node->deadline = loop_timer_add(node->pool->loop, ms, on_deadline, node);
}

static void node_send_hello(struct pool_node *node);
static void node_connect(struct pool_node *node);

/* Queue msg for the agent; a message over the cap fails the node. */
static void node_write(struct pool_node *node, json_t *msg)
{
	char err[CD_ERRLEN];

	if (proto_write(&node->conn.out, msg, err, sizeof(err)) < 0)
		node_fail(node, "protocol", "%s: %s", node->host, err);
	else
		node->conn.ops->flush(&node->conn);
}

/* The words for a bootstrap's CODE (bootstrap.h). */
static const char *boot_code_words(const char *code)
{
	static const struct {
		const char *code, *words;
	} codes[] = {
	    {"nospace", "no space left on device"},
	    {"rofs", "read-only file system"},
	    {"perm", "permission denied"},
	    {"quota", "disk quota exceeded"},
	    {"unsafe", "not a 0700 directory of this user, or a symlink: not used"},
	    {"short", "the upload was cut short"},
	    {"checksum", "the uploaded agent did not match its SHA-256"},
	    {"gone", "the agent vanished right after it was put in place"},
	    {"other", "cannot be written"},
	};

	for (size_t i = 0; i < CD_ARRAY_LEN(codes); i++)
		if (strcmp(codes[i].code, code) == 0)
			return codes[i].words;
	return "cannot be written";
}

/* A directory the head may send back inside the bootstrap's quotes. */
static int boot_path_ok(const char *p)
{
	return *p && !strpbrk(p, "'\"`$\\|\n");
}

/* Restart the bootstrap on a fresh connection, from the loop (never from
 * inside a transport callback, which may still use the conn). */
static void on_reboot(struct loop *loop, void *arg)
{
	struct pool_node *node = arg;

	node->reboot_timer = 0;
	node_connect(node);
}

static void node_release_waiters(struct pool_node *node, int ok);

static void node_reboot(struct pool_node *node)
{
	if (node->role == UP_SENDING)
		node_release_waiters(node, 0);
	node->role = UP_NONE;
	if (node->boot_runs >= BOOT_RUNS_MAX) {
		node_fail(node, "upload", "%s: the agent did not start after %d tries%s%s",
		          node->host, node->boot_runs, node->skip_notes ? ": " : "",
		          node->skip_notes ? node->skip_notes : "");
		return;
	}
	node_release(node);
	/* Only the hello can be pending before the node is ready: the next
	 * run sends its own. */
	while (node->pending) {
		struct pending *p = node->pending;

		node->pending = p->next;
		loop_timer_cancel(node->pool->loop, p->timer);
		free(p);
	}
	node->pending_tail = NULL;
	node->state = NODE_CONNECTING;
	node->reboot_timer = loop_timer_add(node->pool->loop, 0, on_reboot, node);
}

/* DIR cannot take an agent (CODE): remember it in words, skip it next time. */
static void node_skip_dir(struct pool_node *node, const char *code, const char *dir)
{
	char *s = cd_asprintf("%s%s|", node->skip ? node->skip : "|", dir);
	char *n = cd_asprintf("%s%s%s: %s", node->skip_notes ? node->skip_notes : "",
	                      node->skip_notes ? "; " : "", dir, boot_code_words(code));

	free(node->skip);
	free(node->skip_notes);
	node->skip = s;
	node->skip_notes = n;
}

static void node_stream_agent(struct pool_node *node)
{
	const struct agent_bin *bin = node->bin;

	if (buf_append_str(&node->conn.out, "send\n") < 0 ||
	    buf_append(&node->conn.out, bin->data, (size_t)bin->size) < 0) {
		node_fail(node, "upload", "%s: the agent binary is larger than the upload buffer",
		          node->host);
		return;
	}
	node->uploaded = 1;
	node->conn.ops->flush(&node->conn);
}

/* Upload this node's agent to its temp name (the bootstrap then checks and
 * installs it: by its stdin for a stream, on the next run for SFTP). */
static void node_send_agent(struct pool_node *node)
{
	node->role = UP_SENDING;
	if (node->conn.ops->upload_mode == UPLOAD_STREAM) {
		node_stream_agent(node);
		return;
	}
	/* The next run (on this channel, after the copy) installs up_tmp. */
	free(node->conn.command);
	node->conn.command = bootstrap_command(
	    &node->pool->agents, &(struct boot_params){.force = node->force,
	                                               .skip = node->skip ? node->skip : "",
	                                               .tmp = node->up_tmp,
	                                               .token = node->token});
	node->uploaded = 1;
	node->conn.upload_path = node->bin->path;
	node->conn.ops->upload(&node->conn, node->up_tmp);
}

/* Look in the directory again: the node sharing it put the agent there. */
static void node_look_again(struct pool_node *node)
{
	node->role = UP_NONE;
	if (node->conn.ops->upload_mode == UPLOAD_STREAM) {
		buf_append_str(&node->conn.out, "again\n");
		node->conn.ops->flush(&node->conn);
	} else {
		node->conn.ops->resume(&node->conn);
	}
}

static int same_upload(const struct pool_node *a, const struct pool_node *b)
{
	return a != b && a->bin == b->bin && a->dir_id && b->dir_id &&
	       strcmp(a->dir_id, "-") != 0 && strcmp(a->dir_id, b->dir_id) == 0;
}

/*
 * The node that uploaded into a shared directory is done: the nodes that
 * waited for it look again (ok), or one of them uploads in its place.
 */
static void node_release_waiters(struct pool_node *node, int ok)
{
	struct sshpool *pool = node->pool;
	struct pool_node *next = NULL;

	node->role = UP_NONE;
	for (size_t i = 0; i < pool->n; i++) {
		struct pool_node *w = pool->nodes[i];

		if (w->role != UP_WAITING || w->state != NODE_STARTING || !same_upload(node, w))
			continue;
		if (ok) {
			node_look_again(w);
		} else if (!next) {
			next = w;
			node_send_agent(w);
		}
	}
}

/* "missing SHA ID TMP": upload, unless a node sharing the directory
 * already does; then wait for it. */
static void node_on_missing(struct pool_node *node, const char *detail)
{
	struct sshpool *pool = node->pool;
	char sha[65] = "", id[40] = "";
	int off = 0;

	if (sscanf(detail, "%64s %39s %n", sha, id, &off) < 2 || !off ||
	    !(node->bin = agentset_by_sha(&pool->agents, sha))) {
		node_fail(node, "upload", "%s: the bootstrap asked for an unknown agent: %s",
		          node->host, detail);
		return;
	}
	if (!boot_path_ok(detail + off)) {
		node_fail(node, "upload",
		          "%s: the agent's directory has a quote, $, | or \\ in its name: %s",
		          node->host, detail + off);
		return;
	}
	free(node->up_tmp);
	node->up_tmp = cd_strdup(detail + off);
	free(node->dir_id);
	node->dir_id = cd_strdup(id);
	for (size_t i = 0; i < pool->n; i++) {
		struct pool_node *o = pool->nodes[i];

		if (o->role == UP_SENDING && o->state == NODE_STARTING && same_upload(node, o)) {
			node->role = UP_WAITING;
			if (node->conn.ops->upload_mode == UPLOAD_SFTP)
				node->conn.ops->hold(&node->conn);
			return;
		}
	}
	node_send_agent(node);
}

/* "exec SHA ID DIR": the agent starts in DIR. */
static void node_on_exec(struct pool_node *node, const char *detail)
{
	struct sshpool *pool = node->pool;
	char sha[65] = "", id[40] = "";
	const char *home = "/.cache/clusterdoc";
	size_t hl = strlen(home), dl;
	int off = 0;

	if (sscanf(detail, "%64s %39s %n", sha, id, &off) < 2 || !off ||
	    !(node->bin = agentset_by_sha(&pool->agents, sha))) {
		node_fail(node, "agent", "%s: the bootstrap started an unknown agent: %s",
		          node->host, detail);
		return;
	}
	free(node->dir);
	node->dir = cd_strdup(detail + off);
	free(node->dir_id);
	node->dir_id = cd_strdup(id);
	dl = strlen(node->dir);
	free(node->note);
	node->note = NULL;
	if (node->skip_notes)
		node->note =
		    cd_asprintf("%s; the agent is kept in %s instead", node->skip_notes, node->dir);
	else if (dl < hl || strcmp(node->dir + dl - hl, home) != 0)
		node->note = cd_asprintf("the agent is kept in %s (~/.cache/clusterdoc could not "
		                         "take it)",
		                         node->dir);
	if (node->role == UP_SENDING)
		node_release_waiters(node, 1);
	node->booted = 1;
	node_send_hello(node);
}

/* "fail CODE DIR": writing into DIR failed; try the next directory. */
static void node_on_boot_fail(struct pool_node *node, const char *detail)
{
	char code[16] = "";
	int off = 0;

	sscanf(detail, "%15s %n", code, &off);
	if (strcmp(code, "gone") == 0 || strcmp(code, "checksum") == 0 || !off ||
	    !boot_path_ok(detail + off)) {
		node_fail(node, "upload", "%s: %s: %s", node->host, off ? detail + off : "?",
		          boot_code_words(code));
		return;
	}
	node_skip_dir(node, code, detail + off);
	node_reboot(node);
}

/* A bootstrap line "CDBOOT <word> [detail]". */
static void node_boot_line(struct pool_node *node, const char *line, size_t len)
{
	char word[16] = "", detail[480] = "";
	char archs[128];

	if (len < 7 || memcmp(line, "CDBOOT ", 7) != 0) {
		if (++node->boot_lines > BOOT_NOISE_MAX)
			node_fail(
			    node, "agent",
			    "%s: the login shell printed more than %d lines and the bootstrap "
			    "never started",
			    node->host, BOOT_NOISE_MAX);
		return;
	}
	sscanf(line + 7, "%15s %479[^\n]", word, detail);
	if (strcmp(word, "exec") == 0) {
		node_on_exec(node, detail);
	} else if (strcmp(word, "missing") == 0) {
		node_on_missing(node, detail);
	} else if (strcmp(word, "skip") == 0) {
		char code[16] = "";
		int off = 0;

		if (sscanf(detail, "%15s %n", code, &off) == 1 && off && boot_path_ok(detail + off))
			node_skip_dir(node, code, detail + off);
	} else if (strcmp(word, "fail") == 0) {
		node_on_boot_fail(node, detail);
	} else if (strcmp(word, "nowhere") == 0) {
		node_fail(node, "upload", "%s: no directory can take the agent: %s", node->host,
		          node->skip_notes ? node->skip_notes : "none is writable");
	} else if (strcmp(word, "arch") == 0) {
		agentset_arch_list(&node->pool->agents, archs, sizeof(archs));
		node_fail(node, "arch",
		          "%s: the node's architecture is %s and there is no agent for it "
		          "(agents: %s)",
		          node->host, detail, archs);
	} else {
		node_fail(node, "upload", "%s: bootstrap failed: %s %s", node->host, word, detail);
	}
}

static void node_on_reply(struct pool_node *node, json_t *msg)
{
	struct pending *p = node->pending;
	long long id = json_integer_value(json_object_get(msg, "id"));
	json_t *err;

	if (!p || p->id != id) {
		node_fail(node, "protocol",
		          "%s: the agent answered request %lld, which was not asked", node->host,
		          id);
		return;
	}
	node->pending = p->next;
	if (!node->pending)
		node->pending_tail = NULL;
	loop_timer_cancel(node->pool->loop, p->timer);
	if (json_is_true(json_object_get(msg, "ok"))) {
		p->cb(node, json_object_get(msg, "result"), NULL, NULL, p->arg);
	} else {
		err = json_object_get(msg, "error");
		p->cb(node, NULL, json_string_value(json_object_get(err, "code")),
		      json_string_value(json_object_get(err, "message")), p->arg);
	}
	free(p);
}

/* Interim progress: for the request it names when that one is awaited and
 * asked for it; anything else is dropped. */
static void node_on_progress(struct pool_node *node, json_t *msg, json_t *progress)
{
	long long id = json_integer_value(json_object_get(msg, "id"));

	for (struct pending *p = node->pending; p; p = p->next) {
		if (p->id != id)
			continue;
		if (p->progress_cb)
			p->progress_cb(node, progress, p->arg);
		return;
	}
}

/* Every message from the agent, whatever the transport: progress or a
 * response. */
static void node_on_message(struct pool_node *node, json_t *msg)
{
	char err[CD_ERRLEN];
	json_t *progress;
	int rc = proto_progress_get(msg, &progress, err, sizeof(err));

	if (rc < 0)
		node_fail(node, "protocol", "%s: agent: %s", node->host, err);
	else if (rc == 1)
		node_on_progress(node, msg, progress);
	else
		node_on_reply(node, msg);
}

static void ev_data(struct conn *c)
{
	struct pool_node *node = c->owner;
	char err[CD_ERRLEN];
	json_t *msg;
	const char *line;
	ssize_t len;

	while (!node->booted && node->state == NODE_STARTING &&
	       (len = buf_line(&c->in, &line)) >= 0) {
		char copy[512];

		snprintf(copy, sizeof(copy), "%.*s", (int)(len < 511 ? len : 511), line);
		buf_consume(&c->in, (size_t)len + 1);
		node_boot_line(node, copy, strlen(copy));
	}
	if (!node->booted && node->state == NODE_STARTING && c->in.len > 4096)
		node_fail(node, "agent", "%s: the login shell printed a line over 4 KiB",
		          node->host);
	while (node->booted && (node->state == NODE_STARTING || node->state == NODE_READY)) {
		int got = proto_next(&c->in, &msg, err, sizeof(err));

		if (got == 0)
			break;
		if (got < 0) {
			node_fail(node, "protocol", "%s: agent: %s", node->host, err);
			break;
		}
		node_on_message(node, msg);
		json_decref(msg);
	}
}

static void ev_connected(struct conn *c)
{
	struct pool_node *node = c->owner;

	node->state = NODE_AUTHENTICATING;
	node_set_deadline(node, node->pool->opts.auth_timeout_ms, "handshake-timeout");
}

/* Same budget as the handshake: only the name of what timed out changes. */
static void ev_handshaken(struct conn *c)
{
	struct pool_node *node = c->owner;

	node->deadline_code = "auth-timeout";
}

static void ev_authenticated(struct conn *c)
{
	struct pool_node *node = c->owner;

	node->state = NODE_STARTING;
	node_set_deadline(node, node->pool->opts.request_timeout_ms, "request-timeout");
}

/*
 * The cached agent was started but never answered hello (an exec that
 * failed: "Exec format error" from a file of zeros): it is not trusted any
 * longer. Run the bootstrap again with a fresh upload, once. Returns 1 when
 * that was done.
 */
static int node_agent_suspect(struct pool_node *node)
{
	if (!node->booted || node->hello || node->force || !node->bin ||
	    node->conn.ops == &transport_local)
		return 0;
	node->force = 1;
	node->booted = 0;
	free(node->skip_notes);
	node->skip_notes = NULL;
	node_reboot(node);
	return 1;
}

static void ev_closed(struct conn *c)
{
	struct pool_node *node = c->owner;
	char last[200];

	conn_stderr_last_line(c, last, sizeof(last));
	if (node->state == NODE_CLOSED)
		return;
	if (node_agent_suspect(node))
		return;
	if (!node->booted)
		node_fail(node, "agent",
		          "%s: the remote command ended before the agent started%s%s", node->host,
		          last[0] ? ": " : "", last);
	else if (!node->hello && node->force)
		node_fail(
		    node, "agent",
		    "%s: the agent in %s ended before its hello, even after a fresh upload%s%s",
		    node->host, node->dir ? node->dir : "its cache", last[0] ? ": " : "", last);
	else
		node_fail(node, "agent", "%s: the agent exited%s%s", node->host,
		          last[0] ? ": " : "", last);
}

static void ev_failed(struct conn *c, const char *code, const char *msg)
{
	struct pool_node *node = c->owner;

	if (node->role == UP_SENDING && node->conn.ops->upload_mode == UPLOAD_SFTP &&
	    strcmp(code, "upload") == 0 && node->up_tmp) {
		/* SFTP says only "failure": the next run finds out why in words,
		 * and removes what was written. */
		free(node->boot_tmp);
		node->boot_tmp = cd_strdup(node->up_tmp);
		node->boot_tmp_failed = 1;
		node_reboot(node);
		return;
	}
	if (node_agent_suspect(node))
		return;
	if (node->booted && strcmp(code, "agent") == 0)
		node_fail(node, code, "%s: the agent died: %s", node->host, msg);
	else
		node_fail(node, code, "%s: %s", node->host, msg);
}

static const struct conn_events node_events = {
    .connected = ev_connected,
    .handshaken = ev_handshaken,
    .authenticated = ev_authenticated,
    .data = ev_data,
    .closed = ev_closed,
    .failed = ev_failed,
};

static void on_hello(struct pool_node *node, json_t *result, const char *code, const char *msg,
                     void *arg)
{
	struct sshpool *pool = node->pool;
	const struct agent_bin *bin;
	const char *got, *want;
	json_t *proto, *sha;

	if (!result) {
		if (node->state != NODE_FAILED)
			node_fail(node, "agent", "%s: hello refused: %s", node->host,
			          msg ? msg : "no reason");
		return;
	}
	proto = json_object_get(result, "protocol");
	sha = json_object_get(result, "sha256");
	if (!json_is_integer(proto) || json_integer_value(proto) != PROTO_VERSION) {
		node_fail(node, "protocol", "%s: the agent speaks protocol %lld, this head %d",
		          node->host, (long long)json_integer_value(proto), PROTO_VERSION);
		return;
	}
	bin = node->bin ? node->bin : &pool->agents.bins[0];
	got = json_string_value(bin->build_id[0] ? json_object_get(result, "build_id") : sha);
	want = bin->build_id[0] ? bin->build_id : bin->sha256;
	if (!got || strcmp(got, want) != 0) {
		/* Another build under this agent's name: replace it, once. */
		if (node_agent_suspect(node))
			return;
		node_fail(node, "agent",
		          "%s: the agent in %s is build %.16s, expected %.16s, even after a fresh "
		          "upload",
		          node->host, node->dir ? node->dir : "its cache", got ? got : "unknown",
		          want);
		return;
	}
	node->hello = json_incref(result);
	node_cancel_deadline(node);
	node->state = NODE_READY;
	pool->active--;
	if (pool->h && pool->h->ready)
		pool->h->ready(pool, node, pool->harg);
	pool_fill_window(pool);
}

static void node_send_hello(struct pool_node *node)
{
	json_t *req = proto_request(0, "hello");

	json_object_set_new(req, "protocol", json_integer(PROTO_VERSION));
	/* Without a build id, the agent proves its content by hashing itself. */
	if (!(node->bin ? node->bin : &node->pool->agents.bins[0])->build_id[0])
		json_object_set_new(req, "verify", json_true());
	/* The bootstrap deadline still runs; hello's own is a backstop. */
	sshpool_request(node, req, node->pool->opts.request_timeout_ms, on_hello, NULL);
}

static void on_request_timeout(struct loop *loop, void *arg)
{
	struct pending *p = arg;
	struct pool_node *node = p->node;

	p->timer = 0;
	node_fail(node, "request-timeout", "%s: the agent did not answer request %lld in time",
	          node->host, p->id);
}

int sshpool_request(struct pool_node *node, json_t *req_take, int timeout_ms, sshpool_reply_cb cb,
                    void *arg)
{
	return sshpool_request_progress(node, req_take, timeout_ms, NULL, cb, arg);
}

int sshpool_request_progress(struct pool_node *node, json_t *req_take, int timeout_ms,
                             sshpool_progress_cb progress_cb, sshpool_reply_cb cb, void *arg)
{
	struct pending *p;

	if (node->state != NODE_READY && !(node->state == NODE_STARTING && node->booted)) {
		json_decref(req_take);
		cb(node, NULL, "not-ready", "the node is not connected", arg);
		return CD_ERR_AGAIN;
	}
	p = cd_calloc(1, sizeof(*p));
	p->node = node;
	p->id = node->next_id++;
	p->cb = cb;
	p->progress_cb = progress_cb;
	p->arg = arg;
	p->timer = loop_timer_add(node->pool->loop, timeout_ms > 0 ? timeout_ms : 30000,
	                          on_request_timeout, p);
	json_object_set_new(req_take, "id", json_integer(p->id));
	if (progress_cb)
		json_object_set_new(req_take, "progress", json_true());
	if (node->pending_tail)
		node->pending_tail->next = p;
	else
		node->pending = p;
	node->pending_tail = p;
	node_write(node, req_take);
	json_decref(req_take);
	return 0;
}

/* Settings for the transport: what ssh -G said, then our command line on top. */
static void node_apply_overrides(struct pool_node *node)
{
	const struct sshpool_opts *o = &node->pool->opts;
	struct ssh_settings *s = &node->conn.ssh;

	if (o->user) {
		free(s->user);
		s->user = cd_strdup(o->user);
	}
	if (o->port > 0)
		s->port = o->port;
	if (o->identity) {
		/* -i KEY replaces the identity files of ssh_config (agent keys are
		 * still offered first unless IdentitiesOnly is set). */
		for (size_t i = 0; i < s->n_identity_files; i++)
			free(s->identity_files[i]);
		free(s->identity_files);
		s->identity_files = cd_malloc(sizeof(char *));
		s->identity_files[0] = cd_strdup(o->identity);
		s->n_identity_files = 1;
	}
}

/* Settings for a transport that reads ssh_config itself: only what our
 * command line sets (port 0 = ssh_config decides). */
static void node_reset_to_overrides(struct pool_node *node)
{
	ssh_settings_fini(&node->conn.ssh);
	ssh_settings_init(&node->conn.ssh);
	node->conn.ssh.port = 0;
	node_apply_overrides(node);
}

static void node_start_transport(struct pool_node *node)
{
	struct sshpool *pool = node->pool;
	struct conn *c = &node->conn;

	c->loop = pool->loop;
	c->ev = &node_events;
	c->cfg = &pool->cfg;
	c->owner = node;
	c->label = node->host;
	cd_random_token(node->token, sizeof(node->token));
	if (pool->opts.local_localhost && strcmp(node->host, "localhost") == 0) {
		c->ops = &transport_local;
	} else if (pool->opts.backend == SSH_BACKEND_OPENSSH) {
		c->ops = &transport_openssh;
	} else if (c->ssh.proxyjump) {
		/* A jump host: OpenSSH does ProxyJump exactly as the user's own
		 * ssh would, so such a node goes through the openssh transport
		 * (with only our command-line overrides, ssh_config does the rest). */
		c->proxy_jump = cd_strdup(c->ssh.proxyjump);
		node_reset_to_overrides(node);
		c->ops = &transport_openssh;
	} else {
		c->ops = &transport_ssh;
	}
	node_connect(node);
}

/* Connect with the transport chosen, and run the bootstrap: the first time,
 * and again on a fresh connection after a fallback or a bad cached agent. */
static void node_connect(struct pool_node *node)
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
		node->state = NODE_CONNECTING;
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
		node->state = NODE_CONNECTING;
		/* openssh reports no phases: one deadline covers connect to login. */
		if (c->ops == &transport_openssh)
			node_set_deadline(
			    node, pool->opts.connect_timeout_ms + pool->opts.auth_timeout_ms,
			    "auth-timeout");
		else
			node_set_deadline(node, pool->opts.connect_timeout_ms, "connect-timeout");
	}
	node->conn_started = 1;
	if (c->ops->start(c) < 0)
		return; /* already reported through ev_failed */
	if (c->ops == &transport_local && node->state == NODE_STARTING)
		node_send_hello(node);
}

static void ssh_g_done(struct pool_node *node)
{
	struct sshpool *pool = node->pool;
	char err[CD_ERRLEN], how[64];
	int status = node->ssh_g.status;

	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		child_describe_status(status, how, sizeof(how));
		ssh_g_stop(node);
		node_fail(
		    node, "ssh",
		    "%s: `ssh -G` %s: the ssh_config for this host is invalid (run `ssh -G %s` "
		    "to see why)",
		    node->host, how, node->host);
		return;
	}
	ssh_settings_fini(&node->conn.ssh);
	ssh_settings_init(&node->conn.ssh);
	if (sshconfig_parse_g(node->ssh_g_out.data ? node->ssh_g_out.data : "", node->ssh_g_out.len,
	                      pool->home, &node->conn.ssh, err, sizeof(err)) < 0) {
		ssh_g_stop(node);
		node_fail(node, "ssh", "%s: cannot read `ssh -G` output: %s", node->host, err);
		return;
	}
	ssh_g_stop(node);
	node_apply_overrides(node);
	node_start_transport(node);
}

static void on_ssh_g(struct loop *loop, int fd, short revents, void *arg)
{
	struct pool_node *node = arg;

	if (fd == node->ssh_g.out_fd) {
		ssize_t n = buf_read_fd(&node->ssh_g_out, fd);

		if (n == CD_ERR_TOOBIG) {
			ssh_g_stop(node);
			node_fail(node, "ssh", "%s: `ssh -G` printed more than %d bytes",
			          node->host, SSH_G_OUT_MAX);
			return;
		}
		if (n == 0 || n == CD_ERR_IO)
			loop_unwatch(loop, fd);
		return;
	}
	loop_unwatch(loop, fd);
	if (child_reap(&node->ssh_g)) {
		/* Take what is still in the pipe before judging. */
		while (buf_read_fd(&node->ssh_g_out, node->ssh_g.out_fd) > 0)
			;
		ssh_g_done(node);
	}
}

static void node_begin(struct pool_node *node)
{
	struct sshpool *pool = node->pool;
	char err[CD_ERRLEN];
	char *argv[8];
	int n = 0;

	node->state = NODE_CONFIG;
	pool->active++;
	if (pool->opts.backend == SSH_BACKEND_OPENSSH || !pool->have_openssh ||
	    (pool->opts.local_localhost && strcmp(node->host, "localhost") == 0)) {
		/* The openssh backend reads ssh_config itself; without OpenSSH we
		 * fall back to the defaults it would use. */
		if (pool->opts.backend == SSH_BACKEND_OPENSSH) {
			node_reset_to_overrides(node);
		} else {
			const char *user = getenv("USER");
			struct passwd *pw = getpwuid(getuid());

			if (!user)
				user = pw ? pw->pw_name : "root";
			sshconfig_defaults(node->host, pool->home, user, &node->conn.ssh);
			node_apply_overrides(node);
		}
		node_start_transport(node);
		return;
	}
	argv[n++] = "ssh";
	if (pool->opts.ssh_config) {
		argv[n++] = "-F";
		argv[n++] = (char *)pool->opts.ssh_config;
	}
	argv[n++] = "-G";
	argv[n++] = "--";
	argv[n++] = node->host;
	argv[n] = NULL;
	if (child_start(&node->ssh_g, argv, NULL, err, sizeof(err)) < 0) {
		node_fail(node, "ssh", "%s: %s", node->host, err);
		return;
	}
	child_close_stdin(&node->ssh_g);
	loop_watch(pool->loop, node->ssh_g.out_fd, POLLIN, on_ssh_g, node);
	loop_watch(pool->loop, node->ssh_g.pid_fd, POLLIN, on_ssh_g, node);
	node_set_deadline(node, pool->opts.connect_timeout_ms, "config-timeout");
}

static void pool_fill_window(struct sshpool *pool)
{
	while (pool->active < (size_t)pool->opts.fanout && pool->next_queued < pool->n) {
		struct pool_node *node = pool->nodes[pool->next_queued++];

		if (node->state == NODE_QUEUED)
			node_begin(node);
	}
}

void sshpool_start(struct sshpool *pool, const struct sshpool_handlers *h, void *arg)
{
	pool->h = h;
	pool->harg = arg;
	pool_fill_window(pool);
}

void sshpool_close_node(struct pool_node *node)
{
	if (node->state == NODE_CLOSED || node->state == NODE_FAILED)
		return;
	if (node_in_window(node))
		node->pool->active--;
	node->state = NODE_CLOSED;
	node_release(node);
	node_fail_pending(node, "closed", "the node was closed");
	pool_fill_window(node->pool);
}

void sshpool_free(struct sshpool *pool)
{
	if (!pool)
		return;
	pool->h = NULL;
	for (size_t i = 0; i < pool->n; i++) {
		struct pool_node *node = pool->nodes[i];

		node->state = NODE_CLOSED;
		node_release(node);
		node_fail_pending(node, "closed", "the pool was freed");
		ssh_settings_fini(&node->conn.ssh);
		buf_fini(&node->conn.in);
		buf_fini(&node->conn.out);
		buf_fini(&node->conn.errtail);
		free(node->conn.command);
		free(node->conn.proxy_jump);
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
		json_decref(node->hello);
		free(node);
	}
	free(pool->nodes);
	agentset_fini(&pool->agents);
	free(pool);
}
