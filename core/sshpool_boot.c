/* SPDX-License-Identifier: MIT */
/*
 * sshpool_boot.c - a node's bootstrap (bootstrap.h), from the transport's
 * login to the agent's first protocol line (sshpool_internal.h): the
 * "CDBOOT" lines, the agent upload (on the stream or by SFTP), the
 * directories that cannot take an agent, and the nodes that share one
 * agent directory (one of them uploads, the others wait and look again).
 */
#include "sshpool_internal.h"
#include "bootstrap.h"
#include "cd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	struct sshpool_node *node = arg;

	node->reboot_timer = 0;
	pool_node_connect(node);
}

/* Run the bootstrap again on a fresh connection (after a fallback, or to
 * replace a bad cached agent), at most BOOT_RUNS_MAX runs in all. */
void pool_node_reboot(struct sshpool_node *node)
{
	if (node->role == UP_SENDING)
		pool_node_release_waiters(node, 0);
	node->role = UP_NONE;
	if (node->boot_runs >= BOOT_RUNS_MAX) {
		pool_node_fail(node, "upload", "%s: the agent did not start after %d tries%s%s",
		               node->host, node->boot_runs, node->skip_notes ? ": " : "",
		               node->skip_notes ? node->skip_notes : "");
		return;
	}
	pool_node_release(node);
	/* Only the hello can be pending before the node is ready: the next
	 * run sends its own. */
	while (node->pending) {
		struct pending *p = node->pending;

		node->pending = p->next;
		loop_timer_cancel(node->pool->loop, p->timer);
		free(p);
	}
	node->pending_tail = NULL;
	pool_node_set_state(node, SSHPOOL_NODE_CONNECTING);
	node->reboot_timer = loop_timer_add(node->pool->loop, 0, on_reboot, node);
}

/* DIR cannot take an agent (CODE): remember it in words, skip it next time. */
static void node_skip_dir(struct sshpool_node *node, const char *code, const char *dir)
{
	char *s = cd_asprintf("%s%s|", node->skip ? node->skip : "|", dir);
	char *n = cd_asprintf("%s%s%s: %s", node->skip_notes ? node->skip_notes : "",
	                      node->skip_notes ? "; " : "", dir, boot_code_words(code));

	free(node->skip);
	free(node->skip_notes);
	node->skip = s;
	node->skip_notes = n;
}

static void node_stream_agent(struct sshpool_node *node)
{
	const struct agent_bin *bin = node->bin;

	if (buf_append_str(&node->conn.out, "send\n") < 0 ||
	    buf_append(&node->conn.out, bin->data, (size_t)bin->size) < 0) {
		pool_node_fail(node, "upload",
		               "%s: the agent binary is larger than the upload buffer", node->host);
		return;
	}
	node->uploaded = 1;
	node->conn.ops->flush(&node->conn);
}

/* Upload this node's agent to its temp name (the bootstrap then checks and
 * installs it: by its stdin for a stream, on the next run for SFTP). */
static void node_send_agent(struct sshpool_node *node)
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
static void node_look_again(struct sshpool_node *node)
{
	node->role = UP_NONE;
	if (node->conn.ops->upload_mode == UPLOAD_STREAM) {
		buf_append_str(&node->conn.out, "again\n");
		node->conn.ops->flush(&node->conn);
	} else {
		node->conn.ops->resume(&node->conn);
	}
}

static int same_upload(const struct sshpool_node *a, const struct sshpool_node *b)
{
	return a != b && a->bin == b->bin && a->dir_id && b->dir_id &&
	       strcmp(a->dir_id, "-") != 0 && strcmp(a->dir_id, b->dir_id) == 0;
}

/*
 * The node that uploaded into a shared directory is done: the nodes that
 * waited for it look again (ok), or one of them uploads in its place.
 */
void pool_node_release_waiters(struct sshpool_node *node, int ok)
{
	struct sshpool *pool = node->pool;
	struct sshpool_node *next = NULL;

	node->role = UP_NONE;
	for (size_t i = 0; i < pool->n; i++) {
		struct sshpool_node *w = pool->nodes[i];

		if (w->role != UP_WAITING || w->state != SSHPOOL_NODE_STARTING ||
		    !same_upload(node, w))
			continue;
		if (ok) {
			node_look_again(w);
		} else if (!next) {
			next = w;
			node_send_agent(w);
		}
	}
}

/*
 * The two shapes of a line's detail. "SHA ID PATH" (missing, exec): the
 * agent of the set the bootstrap picked goes into node->bin and the
 * directory's marker into id; returns PATH, or NULL when the detail has
 * not that shape or names no agent of the set.
 */
static const char *boot_agent_path(struct sshpool_node *node, const char *detail, char id[40])
{
	char sha[65] = "";
	int off = 0;

	if (sscanf(detail, "%64s %39s %n", sha, id, &off) < 2 || !off ||
	    !(node->bin = agentset_by_sha(&node->pool->agents, sha)))
		return NULL;
	return detail + off;
}

/* "CODE DIR" (skip, fail): the code into code; returns DIR, or NULL when
 * there is none. */
static const char *boot_code_dir(const char *detail, char code[16])
{
	int off = 0;

	sscanf(detail, "%15s %n", code, &off);
	return off ? detail + off : NULL;
}

/* "missing SHA ID TMP": upload, unless a node sharing the directory
 * already does; then wait for it. */
static void boot_on_missing(struct sshpool_node *node, const char *detail)
{
	struct sshpool *pool = node->pool;
	char id[40] = "";
	const char *tmp = boot_agent_path(node, detail, id);

	if (!tmp) {
		pool_node_fail(node, "upload", "%s: the bootstrap asked for an unknown agent: %s",
		               node->host, detail);
		return;
	}
	if (!boot_path_ok(tmp)) {
		pool_node_fail(node, "upload",
		               "%s: the agent's directory has a quote, $, | or \\ in its name: %s",
		               node->host, tmp);
		return;
	}
	free(node->up_tmp);
	node->up_tmp = cd_strdup(tmp);
	free(node->dir_id);
	node->dir_id = cd_strdup(id);
	for (size_t i = 0; i < pool->n; i++) {
		struct sshpool_node *o = pool->nodes[i];

		if (o->role == UP_SENDING && o->state == SSHPOOL_NODE_STARTING &&
		    same_upload(node, o)) {
			node->role = UP_WAITING;
			if (node->conn.ops->upload_mode == UPLOAD_SFTP)
				node->conn.ops->hold(&node->conn);
			return;
		}
	}
	node_send_agent(node);
}

/* "exec SHA ID DIR": the agent starts in DIR. */
static void boot_on_exec(struct sshpool_node *node, const char *detail)
{
	char id[40] = "";
	const char *dir = boot_agent_path(node, detail, id);
	const char *home = "/.cache/clusterdoc";
	size_t hl = strlen(home), dl;

	if (!dir) {
		pool_node_fail(node, "agent", "%s: the bootstrap started an unknown agent: %s",
		               node->host, detail);
		return;
	}
	free(node->dir);
	node->dir = cd_strdup(dir);
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
		pool_node_release_waiters(node, 1);
	node->booted = 1;
	pool_node_send_hello(node);
}

/* "skip CODE DIR": DIR cannot take a new agent; the bootstrap goes on. */
static void boot_on_skip(struct sshpool_node *node, const char *detail)
{
	char code[16] = "";
	const char *dir = boot_code_dir(detail, code);

	if (dir && boot_path_ok(dir))
		node_skip_dir(node, code, dir);
}

/* "fail CODE DIR": writing into DIR failed; try the next directory. */
static void boot_on_fail(struct sshpool_node *node, const char *detail)
{
	char code[16] = "";
	const char *dir = boot_code_dir(detail, code);

	if (strcmp(code, "gone") == 0 || strcmp(code, "checksum") == 0 || !dir ||
	    !boot_path_ok(dir)) {
		pool_node_fail(node, "upload", "%s: %s: %s", node->host, dir ? dir : "?",
		               boot_code_words(code));
		return;
	}
	node_skip_dir(node, code, dir);
	pool_node_reboot(node);
}

/* "nowhere": no directory can take the agent. */
static void boot_on_nowhere(struct sshpool_node *node, const char *detail)
{
	pool_node_fail(node, "upload", "%s: no directory can take the agent: %s", node->host,
	               node->skip_notes ? node->skip_notes : "none is writable");
}

/* "arch M": the set has no agent for the node's `uname -m`. */
static void boot_on_arch(struct sshpool_node *node, const char *detail)
{
	char archs[128];

	agentset_arch_list(&node->pool->agents, archs, sizeof(archs));
	pool_node_fail(node, "arch",
	               "%s: the node's architecture is %s and there is no agent for it "
	               "(agents: %s)",
	               node->host, detail, archs);
}

static const struct {
	const char *word;
	void (*on)(struct sshpool_node *node, const char *detail);
} boot_words[] = {
    {.word = "exec", .on = boot_on_exec},       {.word = "missing", .on = boot_on_missing},
    {.word = "skip", .on = boot_on_skip},       {.word = "fail", .on = boot_on_fail},
    {.word = "nowhere", .on = boot_on_nowhere}, {.word = "arch", .on = boot_on_arch},
};

/* A line before the agent runs: "CDBOOT <word> [detail]", or what the
 * login shell prints first (a bounded number of lines). */
static void boot_line(struct sshpool_node *node, const char *line, size_t len)
{
	char word[16] = "", detail[480] = "";

	if (len < 7 || memcmp(line, "CDBOOT ", 7) != 0) {
		if (++node->boot_lines > BOOT_NOISE_MAX)
			pool_node_fail(node, "agent",
			               "%s: the login shell printed more than %d lines and the "
			               "bootstrap never started",
			               node->host, BOOT_NOISE_MAX);
		return;
	}
	sscanf(line + 7, "%15s %479[^\n]", word, detail);
	for (size_t i = 0; i < CD_ARRAY_LEN(boot_words); i++) {
		if (strcmp(word, boot_words[i].word) == 0) {
			boot_words[i].on(node, detail);
			return;
		}
	}
	pool_node_fail(node, "upload", "%s: bootstrap failed: %s %s", node->host, word, detail);
}

/*
 * The cached agent was started but never answered hello (an exec that
 * failed: "Exec format error" from a file of zeros): it is not trusted any
 * longer. Run the bootstrap again with a fresh upload, once. Returns 1 when
 * that was done.
 */
int pool_node_agent_suspect(struct sshpool_node *node)
{
	if (!node->booted || node->hello || node->force || !node->bin ||
	    node->conn.ops == &transport_local)
		return 0;
	node->force = 1;
	node->booted = 0;
	free(node->skip_notes);
	node->skip_notes = NULL;
	pool_node_reboot(node);
	return 1;
}

void pool_node_boot_input(struct sshpool_node *node)
{
	struct conn *c = &node->conn;
	const char *line;
	ssize_t len;

	while (!node->booted && node->state == SSHPOOL_NODE_STARTING &&
	       (len = buf_line(&c->in, &line)) >= 0) {
		char copy[512];

		snprintf(copy, sizeof(copy), "%.*s", (int)(len < 511 ? len : 511), line);
		buf_consume(&c->in, (size_t)len + 1);
		boot_line(node, copy, strlen(copy));
	}
	if (!node->booted && node->state == SSHPOOL_NODE_STARTING && c->in.len > 4096)
		pool_node_fail(node, "agent", "%s: the login shell printed a line over 4 KiB",
		               node->host);
}
