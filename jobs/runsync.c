/* SPDX-License-Identifier: MIT */
/*
 * runsync.c - put a manifest's tree on one node (runsync_start, see
 * runsync.h): the manifest object, then sync_missing, the missing objects
 * (the file push of mnist_internal.h), then sync_tree.
 */
#include "jobs/runsync.h"
#include "jobs/mnist_internal.h"
#include "cd.h"
#include "proto.h"
#include "sshpool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Pushes in flight at once per node: a small file costs three round trips
 * (file_stat, file_put, file_commit), so a tree of many small files goes
 * faster over lanes than one file after the other. */
#define RUNSYNC_LANES 4

struct runsync {
	struct sshpool_node *pn;
	const struct runsync_manifest *m;
	char *remote_dir;
	char store[512]; /* the node's content store */
	int timeout_ms;
	runsync_done_cb done;
	void *arg;
	size_t node;

	char *text; /* the manifest's text, its own object */
	struct push_file manifest;
	struct push *manifest_push, *lanes[RUNSYNC_LANES];
	int lanes_left;
	struct push_file *objects; /* the missing ones */
	size_t nobjects;

	int files_sent, kept, finished;
	long long bytes_sent;
};

static void finish(struct runsync *s, int err, const char *what, const char *msg)
{
	char m[CD_ERRLEN];

	if (s->finished)
		return;
	s->finished = 1;
	if (err < 0) {
		snprintf(m, sizeof(m), "%s: %s%s%s", sshpool_node_host(s->pn), what ? what : "",
		         what && msg ? ": " : "", msg ? msg : "");
		s->done(s->arg, s, s->node, err, m);
		return;
	}
	s->done(s->arg, s, s->node, 0, NULL);
}

/* A failed answer ends the sync; 1 when it did. */
static int failed(struct runsync *s, json_t *result, const char *code, const char *msg,
                  const char *what)
{
	char m[CD_ERRLEN];

	if (s->finished)
		return 1;
	if (result)
		return 0;
	snprintf(m, sizeof(m), "%s (%s)", msg ? msg : "no answer", code ? code : "failed");
	/* a directory of the user's at remote_dir: refused, not an I/O error */
	finish(s, code && strcmp(code, "exists") == 0 ? CD_ERR_REFUSED : CD_ERR_IO, what, m);
	return 1;
}

static void on_tree(struct sshpool_node *pn, json_t *result, const char *code, const char *msg,
                    void *arg)
{
	struct runsync *s = arg;

	if (failed(s, result, code, msg, "making the tree"))
		return;
	s->kept = json_is_true(json_object_get(result, "kept"));
	finish(s, 0, NULL, NULL);
}

static void send_tree(struct runsync *s)
{
	json_t *req = proto_request(0, "sync_tree");

	json_object_set_new(req, "store", json_string(s->store));
	json_object_set_new(req, "manifest", json_string(s->m->sha256));
	json_object_set_new(req, "dir", json_string(s->remote_dir));
	sshpool_request(s->pn, req, s->timeout_ms, on_tree, s);
}

/* Each lane ends once; it may end before push_start returned it. */
static void on_objects(void *arg, const struct push *lane, size_t node, int err, const char *msg)
{
	struct runsync *s = arg;

	(void)node;
	s->files_sent += push_files_sent(lane);
	s->bytes_sent += push_bytes_sent(lane);
	if (err < 0) {
		finish(s, err, "sending the code", msg);
		return;
	}
	if (--s->lanes_left == 0 && !s->finished)
		send_tree(s);
}

static void on_missing(struct sshpool_node *pn, json_t *result, const char *code, const char *msg,
                       void *arg)
{
	struct runsync *s = arg;
	json_t *missing = json_object_get(result, "missing"), *v;
	size_t i;

	if (failed(s, result, code, msg, "asking which files are missing"))
		return;
	if (!json_is_array(missing) || json_array_size(missing) > s->m->n) {
		finish(s, CD_ERR_PROTO, "sync_missing", "the answer has no \"missing\" list");
		return;
	}
	s->objects = cd_calloc(json_array_size(missing) + 1, sizeof(*s->objects));
	json_array_foreach(missing, i, v)
	{
		const struct runsync_file *f;
		char path[600];

		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    (size_t)json_integer_value(v) >= s->m->n) {
			finish(s, CD_ERR_PROTO, "sync_missing", "an index out of the manifest");
			return;
		}
		f = &s->m->files[json_integer_value(v)];
		snprintf(path, sizeof(path), "%s/%s", s->store, f->sha256);
		push_file_init(&s->objects[s->nobjects++], path, f->data, f->len, f->sha256);
	}
	if (s->nobjects == 0) {
		send_tree(s);
		return;
	}
	/* lane k takes objects [k*n/L, (k+1)*n/L) */
	s->lanes_left = 0;
	for (size_t k = 0; k < RUNSYNC_LANES; k++)
		s->lanes_left +=
		    k * s->nobjects / RUNSYNC_LANES < (k + 1) * s->nobjects / RUNSYNC_LANES;
	for (size_t k = 0; k < RUNSYNC_LANES; k++) {
		size_t lo = k * s->nobjects / RUNSYNC_LANES,
		       hi = (k + 1) * s->nobjects / RUNSYNC_LANES;

		if (lo < hi)
			s->lanes[k] = push_start(s->pn, s->objects + lo, hi - lo, s->timeout_ms,
			                         on_objects, s, s->node);
	}
}

static void on_manifest(void *arg, const struct push *p, size_t node, int err, const char *msg)
{
	struct runsync *s = arg;
	json_t *req;

	(void)p;

	if (err < 0) {
		finish(s, err, "sending the manifest", msg);
		return;
	}
	req = proto_request(0, "sync_missing");
	json_object_set_new(req, "store", json_string(s->store));
	json_object_set_new(req, "manifest", json_string(s->m->sha256));
	sshpool_request(s->pn, req, s->timeout_ms, on_missing, s);
}

struct runsync *runsync_start(struct sshpool_node *pn, const struct runsync_manifest *m,
                              const char *remote_dir, int timeout_ms, runsync_done_cb done,
                              void *arg, size_t node)
{
	struct runsync *s = cd_calloc(1, sizeof(*s));
	const char *agent_dir = sshpool_node_agent_dir(pn);
	char path[600];
	size_t len;

	s->pn = pn;
	s->m = m;
	s->remote_dir = cd_strdup(remote_dir);
	s->timeout_ms = timeout_ms;
	s->done = done;
	s->arg = arg;
	s->node = node;
	/* Beside the agent when the bootstrap had to leave ~/.cache (full or
	 * read-only: the objects would not go there either), as mnist's data. */
	if (sshpool_node_agent_note(pn) && agent_dir)
		snprintf(s->store, sizeof(s->store), "%s/objects", agent_dir);
	else
		snprintf(s->store, sizeof(s->store), "%s", RUNSYNC_STORE);
	s->text = runsync_manifest_text(m, &len);
	snprintf(path, sizeof(path), "%s/%s", s->store, m->sha256);
	push_file_init(&s->manifest, path, (const unsigned char *)s->text, len, m->sha256);
	/* An empty tree's manifest is empty: the agent knows it without the
	 * object (and file_put never makes an empty file). */
	if (len == 0)
		on_manifest(s, NULL, node, 0, NULL);
	else
		s->manifest_push =
		    push_start(pn, &s->manifest, 1, timeout_ms, on_manifest, s, node);
	return s;
}

int runsync_files_sent(const struct runsync *s)
{
	return s ? s->files_sent : 0;
}

long long runsync_bytes_sent(const struct runsync *s)
{
	return s ? s->bytes_sent : 0;
}

int runsync_kept(const struct runsync *s)
{
	return s ? s->kept : 0;
}

void runsync_free(struct runsync *s)
{
	if (!s)
		return;
	push_free(s->manifest_push);
	for (int k = 0; k < RUNSYNC_LANES; k++)
		push_free(s->lanes[k]);
	push_file_fini(&s->manifest);
	for (size_t i = 0; i < s->nobjects; i++)
		push_file_fini(&s->objects[i]);
	free(s->objects);
	free(s->text);
	free(s->remote_dir);
	free(s);
}
