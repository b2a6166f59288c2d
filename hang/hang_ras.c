/* SPDX-License-Identifier: MIT */
/*
 * hang_ras.c - the RAS client (hang_ras.h): one TCP connection to a local
 * NCCL process's RAS thread, under one deadline for all of it. The
 * exchange follows NVIDIA/nccl src/ras/client.cc (what ncclras sends) and
 * the command loop of src/ras/client_support.cc (what the server answers):
 *   -> CLIENT PROTOCOL 2          <- SERVER PROTOCOL <n>
 *   -> TIMEOUT <s>                <- OK
 *   -> SET FORMAT json            <- OK | ERROR: Unknown command ... (< 2.28.7)
 *   -> VERBOSE STATUS             <- the status, then the server closes.
 */
#include "hang/hang_ras.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cd.h"

/* One query's connection: the socket, the bytes read and not yet used,
 * and the deadline every wait counts down to. */
struct ras_conn {
	int fd;
	char *buf;
	size_t len, cap;
	int64_t deadline; /* cd_now_ms() */
	char where[300];  /* "host:port", for messages */
};

/* The failure a step ended in: an error code for the result, and words. */
struct ras_fail {
	const char *code;
	char msg[CD_ERRLEN];
};

static int fail(struct ras_fail *f, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct ras_fail *f, const char *code, const char *fmt, ...)
{
	va_list ap;

	f->code = code;
	va_start(ap, fmt);
	vsnprintf(f->msg, sizeof(f->msg), fmt, ap);
	va_end(ap);
	return -1;
}

static int left_ms(const struct ras_conn *c)
{
	int64_t l = c->deadline - cd_now_ms();

	return l < 0 ? 0 : (int)l;
}

/* Wait for events on the socket until the deadline; 0 ready, -1 timed out. */
static int wait_fd(struct ras_conn *c, short events, struct ras_fail *f, const char *doing)
{
	struct pollfd p = {.fd = c->fd, .events = events};
	int r;

	for (;;) {
		int l = left_ms(c);
		if (l == 0)
			return fail(f, "timeout", "%s: no answer to %s within the deadline",
			            c->where, doing);
		r = poll(&p, 1, l);
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return fail(f, "io", "%s: poll: %s", c->where, strerror(errno));
	}
}

static int conn_open(struct ras_conn *c, const char *host, int port, struct ras_fail *f)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV},
	                *ai = NULL, *a;
	char ps[16];
	int r, err = 0, ret = -1;

	snprintf(ps, sizeof(ps), "%d", port);
	r = getaddrinfo(host, ps, &hints, &ai);
	if (r != 0) {
		fail(f, "resolve", "%s: %s", c->where, gai_strerror(r));
		goto out;
	}
	for (a = ai; a; a = a->ai_next) {
		socklen_t el = sizeof(err);

		c->fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
		               a->ai_protocol);
		if (c->fd < 0)
			continue;
		if (connect(c->fd, a->ai_addr, a->ai_addrlen) == 0) {
			ret = 0;
			goto out;
		}
		err = errno;
		if (err == EINPROGRESS) {
			if (wait_fd(c, POLLOUT, f, "the connection") < 0)
				goto out;
			err = 0;
			getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &el);
			if (err == 0) {
				ret = 0;
				goto out;
			}
		}
		close(c->fd);
		c->fd = -1;
	}
	if (err == ECONNREFUSED)
		fail(
		    f, "refused",
		    "%s: connection refused: no NCCL process with RAS listens there (NCCL >= 2.24, "
		    "NCCL_RAS_ENABLE not 0, NCCL_RAS_ADDR)",
		    c->where);
	else
		fail(f, "io", "%s: connect: %s", c->where, strerror(err));
out:
	if (ai)
		freeaddrinfo(ai);
	return ret;
}

static int conn_send(struct ras_conn *c, const char *line, struct ras_fail *f)
{
	size_t off = 0, n = strlen(line);

	while (off < n) {
		ssize_t w = send(c->fd, line + off, n - off, MSG_NOSIGNAL);
		if (w > 0) {
			off += (size_t)w;
			continue;
		}
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			return fail(f, "io", "%s: send: %s", c->where, strerror(errno));
		if (wait_fd(c, POLLOUT, f, "sending") < 0)
			return -1;
	}
	return 0;
}

/* Read more bytes into the buffer (at most HANG_RAS_MAX_REPLY in all).
 * Returns the count read, 0 at end of stream, -1 on failure. */
static ssize_t conn_fill(struct ras_conn *c, struct ras_fail *f, const char *doing)
{
	for (;;) {
		ssize_t r;

		if (c->len == HANG_RAS_MAX_REPLY)
			return fail(f, "toobig", "%s: the answer to %s is larger than %u bytes",
			            c->where, doing, HANG_RAS_MAX_REPLY);
		if (c->cap - c->len < 4096) {
			c->cap = c->cap ? c->cap * 2 : 8192;
			if (c->cap > HANG_RAS_MAX_REPLY + 1)
				c->cap = HANG_RAS_MAX_REPLY + 1;
			c->buf = cd_realloc(c->buf, c->cap);
		}
		r = recv(c->fd, c->buf + c->len, c->cap - 1 - c->len, 0);
		if (r >= 0) {
			c->len += (size_t)r;
			c->buf[c->len] = '\0';
			return r;
		}
		if (errno != EAGAIN && errno != EINTR)
			return fail(f, "io", "%s: recv: %s", c->where, strerror(errno));
		if (wait_fd(c, POLLIN, f, doing) < 0)
			return -1;
	}
}

/* One answer line (without its '\n') into line; the bytes after it stay. */
static int conn_line(struct ras_conn *c, char *line, size_t ll, struct ras_fail *f,
                     const char *doing)
{
	char *nl;

	while (!(nl = c->len ? memchr(c->buf, '\n', c->len) : NULL)) {
		ssize_t r;
		if (c->len > 1024)
			return fail(f, "garbage",
			            "%s: answered %s with more than 1024 bytes and no "
			            "line end: not an NCCL RAS server",
			            c->where, doing);
		r = conn_fill(c, f, doing);
		if (r < 0)
			return -1;
		if (r == 0)
			return fail(f, "garbage",
			            "%s: closed the connection instead of answering %s", c->where,
			            doing);
	}
	snprintf(line, ll, "%.*s", (int)(nl - c->buf), c->buf);
	c->len -= (size_t)(nl + 1 - c->buf);
	memmove(c->buf, nl + 1, c->len);
	return 0;
}

/* A line made printable for a message: control bytes become '?'. */
static const char *printable(char *s)
{
	for (char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
			*p = '?';
	return s;
}

/* The first n bytes of the answer as a JSON string: bytes that are not
 * printable ASCII (or a line end or tab) become '?', so that a cut in the
 * middle of a character, or binary garbage, still makes a valid string. */
static json_t *raw_text(const char *buf, size_t n)
{
	char *s = cd_strndup(buf ? buf : "", n);
	json_t *j;

	for (size_t i = 0; i < n; i++) {
		unsigned char b = (unsigned char)s[i];
		if ((b < 0x20 && b != '\n' && b != '\t') || b >= 0x7f)
			s[i] = '?';
	}
	j = json_stringn(s, n);
	free(s);
	return j;
}

/* The exchange up to and including the status; fills r or f. */
static int ras_talk(struct ras_conn *c, json_t *r, struct ras_fail *f)
{
	char line[1100], cmd[64];
	long proto;
	int json = 0, secs;

	snprintf(cmd, sizeof(cmd), "CLIENT PROTOCOL %d\n", HANG_RAS_PROTOCOL);
	if (conn_send(c, cmd, f) < 0 || conn_line(c, line, sizeof(line), f, "the handshake") < 0)
		return -1;
	if (strncasecmp(line, "SERVER PROTOCOL ", 16) != 0)
		return fail(f, "garbage",
		            "%s: answered the handshake with \"%.80s\": not an NCCL RAS "
		            "server",
		            c->where, printable(line));
	proto = strtol(line + 16, NULL, 10);
	json_object_set_new(r, "server_protocol", json_integer(proto));
	/* RAS's own wait for the other processes: what is left of ours, less
	 * a second for the answer to travel (ncclras's -t; whole seconds). */
	secs = left_ms(c) / 1000 - 1;
	snprintf(cmd, sizeof(cmd), "TIMEOUT %d\n", secs < 1 ? 1 : secs);
	if (conn_send(c, cmd, f) < 0 || conn_line(c, line, sizeof(line), f, "TIMEOUT") < 0)
		return -1;
	if (strcasecmp(line, "OK") != 0)
		return fail(f, "garbage", "%s: answered TIMEOUT with \"%.80s\"", c->where,
		            printable(line));
	if (conn_send(c, "SET FORMAT json\n", f) < 0 ||
	    conn_line(c, line, sizeof(line), f, "SET FORMAT") < 0)
		return -1;
	if (strcasecmp(line, "OK") == 0)
		json = 1;
	else if (strncasecmp(line, "ERROR", 5) != 0)
		return fail(f, "garbage", "%s: answered SET FORMAT with \"%.80s\"", c->where,
		            printable(line));
	if (conn_send(c, "VERBOSE STATUS\n", f) < 0)
		return -1;
	for (;;) {
		ssize_t n = conn_fill(c, f, "VERBOSE STATUS");
		if (n < 0)
			return -1;
		if (n == 0)
			break;
	}
	json_object_set_new(r, "format", json_string(json ? "json" : "text"));
	return json;
}

json_t *hang_ras_query(const char *addr, int port, int deadline_ms)
{
	struct ras_conn c = {.fd = -1};
	struct ras_fail f = {0};
	json_t *r = json_object(), *parsed = NULL;
	char host[256] = "localhost", err[CD_ERRLEN];
	int64_t t0 = cd_now_ms();
	int json;

	c.deadline = t0 + (deadline_ms > 0 ? deadline_ms : 0);
	if (!addr || !port) {
		const char *env = getenv("NCCL_RAS_ADDR");
		const char *colon = env ? strrchr(env, ':') : NULL;

		port = HANG_RAS_PORT;
		if (colon && colon > env) {
			snprintf(host, sizeof(host), "%.*s", (int)(colon - env), env);
			port = atoi(colon + 1);
		}
	} else {
		snprintf(host, sizeof(host), "%s", addr);
	}
	/* "[::1]" as NCCL_RAS_ADDR writes an IPv6 address */
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	snprintf(c.where, sizeof(c.where), "NCCL RAS at %s:%d", host, port);
	if (port <= 0 || port > 65535) {
		fail(&f, "resolve", "%s: not a TCP port", c.where);
		goto out;
	}
	if (conn_open(&c, host, port, &f) < 0 || (json = ras_talk(&c, r, &f)) < 0)
		goto out;
	parsed = json ? hang_ras_parse_json(c.buf ? c.buf : "", c.len, err, sizeof(err))
	              : hang_ras_parse_text(c.buf ? c.buf : "", c.len, err, sizeof(err));
	if (!parsed) {
		fail(&f, "garbage", "%s: the %s status does not read: %s", c.where,
		     json ? "JSON" : "text", err);
		goto out;
	}
	json_object_set_new(r, "ok", json_true());
	json_object_update(r, parsed);
	json_object_set_new(r, "raw",
	                    raw_text(c.buf, c.len > HANG_RAS_RAW_CAP ? HANG_RAS_RAW_CAP : c.len));
	json_object_set_new(r, "raw_truncated", json_boolean(c.len > HANG_RAS_RAW_CAP));
out:
	if (f.code) {
		json_object_clear(r);
		json_object_set_new(r, "ok", json_false());
		json_object_set_new(r, "error_code", json_string(f.code));
		json_object_set_new(r, "error", json_string(printable(f.msg)));
	}
	json_object_set_new(r, "elapsed_ms", json_integer(cd_now_ms() - t0));
	json_decref(parsed);
	if (c.fd >= 0)
		close(c.fd);
	free(c.buf);
	return r;
}
