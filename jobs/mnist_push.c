/* SPDX-License-Identifier: MIT */
/*
 * mnist_push.c - put files on one node over the agent protocol
 * (core/filerecv.h): stat, then compressed chunks a few at a time, then
 * commit, file after file. See mnist_internal.h.
 */
#include "jobs/mnist_internal.h"
#include "base64.h"
#include "filerecv.h"
#include "proto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define PUSH_IN_FLIGHT 4 /* chunks awaiting an answer, per node */

void push_file_init(struct push_file *f, const char *remote_path, const unsigned char *data,
                    size_t len, const char *sha256)
{
	memset(f, 0, sizeof(*f));
	f->remote_path = cd_strdup(remote_path);
	f->data = data;
	f->len = len;
	snprintf(f->sha256, sizeof(f->sha256), "%s", sha256);
	f->nchunks = (len + FILERECV_MAX_CHUNK - 1) / FILERECV_MAX_CHUNK;
	f->chunks = cd_calloc(f->nchunks ? f->nchunks : 1, sizeof(*f->chunks));
}

void push_file_fini(struct push_file *f)
{
	for (size_t i = 0; i < f->nchunks; i++)
		free(f->chunks[i]);
	free(f->chunks);
	free(f->remote_path);
	memset(f, 0, sizeof(*f));
}

/* Chunk k as base64 of its zlib stream, made once for all nodes. Level 1:
 * the data is mostly zeros and the head's CPU is shared with the pool. */
static const char *chunk_text(struct push_file *f, size_t k, size_t *raw_len)
{
	size_t off = k * FILERECV_MAX_CHUNK;

	*raw_len = f->len - off < FILERECV_MAX_CHUNK ? f->len - off : FILERECV_MAX_CHUNK;
	if (!f->chunks[k]) {
		uLongf zlen = compressBound((uLong)*raw_len);
		unsigned char *z = cd_malloc(zlen);

		if (compress2(z, &zlen, f->data + off, (uLong)*raw_len, 1) != Z_OK)
			cd_fatal("zlib could not compress %zu bytes", *raw_len);
		f->chunks[k] = cd_malloc(base64_encoded_size(zlen));
		base64_encode(z, zlen, f->chunks[k]);
		free(z);
	}
	return f->chunks[k];
}

struct push {
	struct sshpool_node *pn;
	struct push_file *files;
	size_t nfiles, file, node;
	size_t next_chunk, acked;
	int in_flight, timeout_ms, finished;
	int files_sent;
	long long bytes_sent;
	push_done_cb done;
	void *arg;
};

static void next_file(struct push *p);

static void finish(struct push *p, int err, const char *msg)
{
	if (p->finished)
		return;
	p->finished = 1;
	p->done(p->arg, p, p->node, err, msg);
}

/* A failed answer ends the push; 1 when it did. */
static int failed(struct push *p, json_t *result, const char *code, const char *msg,
                  const char *what)
{
	char m[CD_ERRLEN];

	if (p->finished)
		return 1;
	if (result)
		return 0;
	snprintf(m, sizeof(m), "%s %s: %s (%s)", what, p->files[p->file].remote_path,
	         msg ? msg : "no answer", code ? code : "failed");
	finish(p, CD_ERR_IO, m);
	return 1;
}

static void on_commit(struct sshpool_node *pn, json_t *result, const char *code, const char *msg,
                      void *arg)
{
	struct push *p = arg;

	if (failed(p, result, code, msg, "storing"))
		return;
	p->files_sent++;
	p->file++;
	next_file(p);
}

static void send_commit(struct push *p)
{
	struct push_file *f = &p->files[p->file];
	json_t *req = proto_request(0, "file_commit");

	json_object_set_new(req, "path", json_string(f->remote_path));
	json_object_set_new(req, "size", json_integer((json_int_t)f->len));
	json_object_set_new(req, "sha256", json_string(f->sha256));
	sshpool_request(p->pn, req, p->timeout_ms, on_commit, p);
}

static void send_chunks(struct push *p);

static void on_put(struct sshpool_node *pn, json_t *result, const char *code, const char *msg,
                   void *arg)
{
	struct push *p = arg;
	struct push_file *f = &p->files[p->file];

	if (failed(p, result, code, msg, "sending"))
		return;
	p->in_flight--;
	p->acked++;
	if (p->acked < f->nchunks)
		send_chunks(p);
	else
		send_commit(p);
}

/*
 * Keep up to PUSH_IN_FLIGHT chunks of the current file in flight. The libssh2
 * transport reads the agent's answers while it writes a request, so
 * sshpool_request may run on_put, and with it this file's commit, the next
 * files and finish, before it returns: each pass re-reads the state and the
 * loop ends once its file is no longer the current one. (A loop that went
 * on sent a chunk of a committed file again, with the next file's
 * next_chunk: the put made that file's part anew, and no commit came.)
 */
static void send_chunks(struct push *p)
{
	const size_t file = p->file;

	while (!p->finished && p->file == file && p->in_flight < PUSH_IN_FLIGHT &&
	       p->next_chunk < p->files[file].nchunks) {
		struct push_file *f = &p->files[file];
		size_t raw_len, k = p->next_chunk++;
		const char *text = chunk_text(f, k, &raw_len);
		json_t *req = proto_request(0, "file_put");

		json_object_set_new(req, "path", json_string(f->remote_path));
		json_object_set_new(req, "offset",
		                    json_integer((json_int_t)(k * FILERECV_MAX_CHUNK)));
		json_object_set_new(req, "raw_len", json_integer((json_int_t)raw_len));
		json_object_set_new(req, "zdata", json_string(text));
		p->bytes_sent += (long long)strlen(text) / 4 * 3;
		p->in_flight++;
		if (sshpool_request(p->pn, req, p->timeout_ms, on_put, p) < 0)
			return; /* on_put has been told */
	}
}

static void on_stat(struct sshpool_node *pn, json_t *result, const char *code, const char *msg,
                    void *arg)
{
	struct push *p = arg;

	if (failed(p, result, code, msg, "checking"))
		return;
	if (json_is_true(json_object_get(result, "present"))) {
		p->file++;
		next_file(p);
		return;
	}
	p->next_chunk = p->acked = 0;
	if (p->files[p->file].nchunks == 0)
		send_commit(p); /* an empty file */
	else
		send_chunks(p);
}

static void next_file(struct push *p)
{
	struct push_file *f;
	json_t *req;

	if (p->file == p->nfiles) {
		finish(p, 0, NULL);
		return;
	}
	f = &p->files[p->file];
	req = proto_request(0, "file_stat");
	json_object_set_new(req, "path", json_string(f->remote_path));
	json_object_set_new(req, "size", json_integer((json_int_t)f->len));
	json_object_set_new(req, "sha256", json_string(f->sha256));
	sshpool_request(p->pn, req, p->timeout_ms, on_stat, p);
}

struct push *push_start(struct sshpool_node *pn, struct push_file *files, size_t n, int timeout_ms,
                        push_done_cb done, void *arg, size_t node)
{
	struct push *p = cd_calloc(1, sizeof(*p));

	p->pn = pn;
	p->files = files;
	p->nfiles = n;
	p->timeout_ms = timeout_ms;
	p->done = done;
	p->arg = arg;
	p->node = node;
	next_file(p);
	return p;
}

int push_files_sent(const struct push *p)
{
	return p ? p->files_sent : 0;
}

long long push_bytes_sent(const struct push *p)
{
	return p ? p->bytes_sent : 0;
}

void push_free(struct push *p)
{
	free(p);
}
