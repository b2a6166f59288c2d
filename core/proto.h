/* SPDX-License-Identifier: MIT */
/*
 * proto.h - the agent protocol: JSON lines over the agent's stdin/stdout.
 *
 * Each message is one JSON object on one line, at most PROTO_MAX_LINE bytes
 * including the '\n'. The head sends requests, the agent answers each with
 * one response carrying the same id, in order:
 *
 *   request:  {"id": 7, "type": "facts", ...type-specific fields}
 *   response: {"id": 7, "ok": true, "result": {...}}
 *             {"id": 7, "ok": false, "error": {"code": "unknown-type", "message": "..."}}
 *
 * The first request is always "hello" {"protocol": PROTO_VERSION}; the agent
 * refuses any other protocol version, and the head refuses an agent whose
 * hello result has another "protocol". Full reference: docs/protocol.md.
 */
#ifndef CD_PROTO_H
#define CD_PROTO_H

#include <jansson.h>
#include <stddef.h>

#include "buf.h"

#define PROTO_VERSION  1
#define PROTO_MAX_LINE (1024 * 1024)

/*
 * Append msg as one compact line (with '\n') to out. Fails with
 * CD_ERR_TOOBIG when the line would exceed PROTO_MAX_LINE or out's cap
 * (nothing is appended then). Does not take a reference to msg.
 */
int proto_write(struct buf *out, json_t *msg, char *err, size_t errlen);

/*
 * Decode one line (without its '\n'; pure). On success *msg is a new
 * reference to a JSON object that has an integer "id" >= 0. Returns 0, or
 * CD_ERR_PROTO with a message quoting the start of the bad line.
 */
int proto_decode(const char *line, size_t len, json_t **msg, char *err, size_t errlen);

/*
 * Take the next complete message out of in. Returns 1 and sets *msg (new
 * reference) when one was decoded, 0 when more bytes are needed, or a
 * negative error: CD_ERR_TOOBIG when in holds PROTO_MAX_LINE bytes without a
 * newline ("a line longer than N bytes": the caller knows which end sent
 * it), CD_ERR_PROTO for a malformed line (which is consumed).
 */
int proto_next(struct buf *in, json_t **msg, char *err, size_t errlen);

/* Build requests and responses. The returned object is a new reference. */
json_t *proto_request(long long id, const char *type);
json_t *proto_ok(long long id, json_t *result_take);
json_t *proto_fail(long long id, const char *code, const char *message);

/* An interim progress message for request id (progress_take: an object,
 * consumed; NULL = an empty one). A new reference. */
json_t *proto_progress(long long id, json_t *progress_take);

/*
 * Whether a decoded message from the agent is interim progress (pure).
 * Returns 1 with *progress (borrowed from msg) for {"id", "progress": {...}}
 * without "ok"; 0 with *progress NULL for anything without "progress" (a
 * response); CD_ERR_PROTO when "progress" is not an object or comes with
 * "ok" (a message that is neither).
 */
int proto_progress_get(json_t *msg, json_t **progress, char *err, size_t errlen);

/*
 * Agent side: sending progress for the request being served. The agent
 * installs an emitter for the length of one handler call, and only when the
 * request has "progress": true; proto_progress_install(NULL, NULL) removes
 * it. proto_progress_wanted says whether one is installed, and
 * proto_progress_emit hands a progress object (consumed) to it, or frees it
 * when none is. One emitter per process: call these only from the thread
 * that runs the handler.
 */
typedef void (*proto_progress_fn)(json_t *progress_take, void *arg);
void proto_progress_install(proto_progress_fn fn, void *arg);
int proto_progress_wanted(void);
void proto_progress_emit(json_t *progress_take);

/*
 * For an agent's request handlers. proto_field_int: an optional integer
 * field in [lo, hi]; 0 (*out untouched when the field is absent or null), or
 * -1 when it is out of range or not an integer. proto_handler_fail: set *code
 * to what and msg to the formatted message and return NULL, for
 * `return proto_handler_fail(...)` in a handler.
 */
int proto_field_int(json_t *obj, const char *key, long long lo, long long hi, long long *out);
json_t *proto_handler_fail(const char **code, const char *what, char *msg, size_t msglen,
                           const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#endif
