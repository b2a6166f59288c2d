/* SPDX-License-Identifier: MIT */
/* proto.c - agent protocol framing (see proto.h and docs/protocol.md). */
#include "proto.h"
#include "cd.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int proto_write(struct buf *out, json_t *msg, char *err, size_t errlen)
{
	char *s = json_dumps(msg, JSON_COMPACT | JSON_REAL_PRECISION(10));
	size_t len;
	int rc = 0;

	if (!s)
		return cd_errf(err, errlen, CD_ERR_PROTO, "message cannot be encoded as JSON");
	len = strlen(s);
	if (len + 1 > PROTO_MAX_LINE) {
		rc = cd_errf(err, errlen, CD_ERR_TOOBIG,
		             "message of %zu bytes exceeds the %d-byte cap", len + 1,
		             PROTO_MAX_LINE);
		goto out;
	}
	if (len + 1 > out->max - out->len) {
		rc = cd_errf(err, errlen, CD_ERR_TOOBIG, "output buffer full (%zu bytes queued)",
		             out->len);
		goto out;
	}
	buf_append(out, s, len);
	buf_append(out, "\n", 1);
out:
	free(s);
	return rc;
}

/* A printable excerpt of a bad line for error messages. */
static void excerpt(const char *line, size_t len, char *dst, size_t dstlen)
{
	size_t n = 0;

	for (size_t i = 0; i < len && n + 5 < dstlen; i++) {
		unsigned char c = (unsigned char)line[i];

		dst[n++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
	}
	if (len > n && n + 4 <= dstlen) {
		memcpy(dst + n, "...", 3);
		n += 3;
	}
	dst[n] = '\0';
}

int proto_decode(const char *line, size_t len, json_t **msg, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *m, *id;
	char ex[48];

	*msg = NULL;
	excerpt(line, len, ex, sizeof(ex));
	m = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!m)
		return cd_errf(err, errlen, CD_ERR_PROTO, "not JSON (%s): \"%s\"", jerr.text, ex);
	if (!json_is_object(m)) {
		json_decref(m);
		return cd_errf(err, errlen, CD_ERR_PROTO, "not a JSON object: \"%s\"", ex);
	}
	id = json_object_get(m, "id");
	if (!json_is_integer(id) || json_integer_value(id) < 0) {
		json_decref(m);
		return cd_errf(err, errlen, CD_ERR_PROTO, "message without a valid \"id\": \"%s\"",
		               ex);
	}
	*msg = m;
	return 0;
}

int proto_next(struct buf *in, json_t **msg, char *err, size_t errlen)
{
	const char *line;
	ssize_t n = buf_line(in, &line);
	int rc;

	*msg = NULL;
	if (n < 0) {
		if (in->len >= PROTO_MAX_LINE)
			return cd_errf(err, errlen, CD_ERR_TOOBIG, "a line longer than %d bytes",
			               PROTO_MAX_LINE);
		return 0;
	}
	if ((size_t)n + 1 > PROTO_MAX_LINE) {
		buf_consume(in, (size_t)n + 1);
		return cd_errf(err, errlen, CD_ERR_TOOBIG, "a line longer than %d bytes",
		               PROTO_MAX_LINE);
	}
	rc = proto_decode(line, (size_t)n, msg, err, errlen);
	buf_consume(in, (size_t)n + 1);
	return rc < 0 ? rc : 1;
}

json_t *proto_request(long long id, const char *type)
{
	return json_pack("{sIss}", "id", (json_int_t)id, "type", type);
}

json_t *proto_ok(long long id, json_t *result_take)
{
	return json_pack("{sIsbso}", "id", (json_int_t)id, "ok", 1, "result",
	                 result_take ? result_take : json_object());
}

json_t *proto_fail(long long id, const char *code, const char *message)
{
	return json_pack("{sIsbs{ssss}}", "id", (json_int_t)id, "ok", 0, "error", "code", code,
	                 "message", message);
}

json_t *proto_progress(long long id, json_t *progress_take)
{
	return json_pack("{sIso}", "id", (json_int_t)id, "progress",
	                 progress_take ? progress_take : json_object());
}

int proto_progress_get(json_t *msg, json_t **progress, char *err, size_t errlen)
{
	json_t *p = json_object_get(msg, "progress");

	*progress = NULL;
	if (!p)
		return 0;
	if (!json_is_object(p))
		return cd_errf(err, errlen, CD_ERR_PROTO,
		               "\"progress\" of message %lld is not an object",
		               (long long)json_integer_value(json_object_get(msg, "id")));
	if (json_object_get(msg, "ok"))
		return cd_errf(err, errlen, CD_ERR_PROTO,
		               "message %lld is both a response and progress",
		               (long long)json_integer_value(json_object_get(msg, "id")));
	*progress = p;
	return 1;
}

/* The agent serves one request at a time, so one emitter at a time. */
static struct {
	proto_progress_fn fn;
	void *arg;
} emitter;

void proto_progress_install(proto_progress_fn fn, void *arg)
{
	emitter.fn = fn;
	emitter.arg = fn ? arg : NULL;
}

int proto_progress_wanted(void)
{
	return emitter.fn != NULL;
}

void proto_progress_emit(json_t *progress_take)
{
	if (emitter.fn)
		emitter.fn(progress_take, emitter.arg);
	else
		json_decref(progress_take);
}

int proto_field_int(json_t *obj, const char *key, long long lo, long long hi, long long *out)
{
	json_t *v = json_object_get(obj, key);

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
		return -1;
	*out = json_integer_value(v);
	return 0;
}

json_t *proto_handler_fail(const char **code, const char *what, char *msg, size_t msglen,
                           const char *fmt, ...)
{
	va_list ap;

	*code = what;
	va_start(ap, fmt);
	vsnprintf(msg, msglen, fmt, ap);
	va_end(ap);
	return NULL;
}
