/* SPDX-License-Identifier: MIT */
/*
 * childrun.c - a child process watched by the loop (childrun.h), and
 * child_run/child_run_input (child.h) as one on a private loop.
 */
#include "childrun.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cd.h"
#include "child.h"

/* How often to try reaping a child without a pidfd (old kernels). */
#define REAP_POLL_MS 20

/* One of the child's output pipes and what is kept of it. */
struct stream {
	int *fd; /* &c.out_fd or &c.err_fd */
	struct buf b;
	enum childrun_cap cap;
	int truncated;
};

struct childrun {
	struct loop *loop;
	struct child c;
	struct stream out, err;
	const char *in; /* stdin still to write: in[sent..inlen) */
	size_t inlen, sent;
	char prog[64];
	int timeout_ms;
	uint64_t deadline, reap_timer;
	childrun_cb done;
	void *arg;
};

static void unwatch(struct childrun *r)
{
	int fds[] = {r->c.in_fd, r->c.out_fd, r->c.err_fd, r->c.pid_fd};

	for (size_t i = 0; i < CD_ARRAY_LEN(fds); i++)
		if (fds[i] >= 0)
			loop_unwatch(r->loop, fds[i]);
	loop_timer_cancel(r->loop, r->deadline);
	loop_timer_cancel(r->loop, r->reap_timer);
	r->deadline = r->reap_timer = 0;
}

static void release(struct childrun *r)
{
	unwatch(r);
	child_fini(&r->c); /* kills and reaps one still running */
	buf_fini(&r->out.b);
	buf_fini(&r->err.b);
	free(r);
}

/* Call done once, then free the run. */
static void finish(struct childrun *r, int rc, const char *error)
{
	struct childrun_result res = {.rc = rc,
	                              .out = &r->out.b,
	                              .err = &r->err.b,
	                              .out_truncated = r->out.truncated,
	                              .err_truncated = r->err.truncated,
	                              .spawn_errno = r->c.spawn_errno,
	                              .error = error ? error : ""};

	unwatch(r);
	child_fini(&r->c);
	res.status = r->c.status;
	r->done(&res, r->arg);
	buf_fini(&r->out.b);
	buf_fini(&r->err.b);
	free(r);
}

static void on_reap_timer(struct loop *loop, void *arg);

/* Done when both pipes are closed and the child is reaped; without a pidfd
 * to say when it exits, look again shortly. */
static void maybe_finish(struct childrun *r)
{
	if (r->c.out_fd >= 0 || r->c.err_fd >= 0)
		return;
	if (child_reap(&r->c))
		finish(r, 0, NULL);
	else if (r->c.pid_fd < 0 && !r->reap_timer)
		r->reap_timer = loop_timer_add(r->loop, REAP_POLL_MS, on_reap_timer, r);
}

static void on_reap_timer(struct loop *loop, void *arg)
{
	struct childrun *r = arg;

	r->reap_timer = 0;
	maybe_finish(r);
}

/* Keep what the cap allows of n bytes just read (caps other than FAIL). */
static void keep(struct stream *s, const char *p, size_t n)
{
	size_t max = s->b.max, room = max - s->b.len;

	if (s->cap == CHILDRUN_CAP_TAIL) {
		if (n >= max) {
			buf_reset(&s->b);
			p += n - max, n = max;
			s->truncated = 1;
		} else if (n > room) {
			buf_consume(&s->b, n - room);
			s->truncated = 1;
		}
	} else if (n > room) {
		n = room;
		s->truncated = 1;
	}
	buf_append(&s->b, p, n);
}

/* One read of s: > 0 read, 0 at EOF, CD_ERR_AGAIN, or CD_ERR_TOOBIG (a FAIL
 * cap hit) / CD_ERR_IO. */
static ssize_t read_stream(struct stream *s)
{
	char chunk[16384];
	ssize_t n;

	if (s->cap == CHILDRUN_CAP_FAIL)
		return buf_read_fd(&s->b, *s->fd);
	do
		n = read(*s->fd, chunk, sizeof(chunk));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return (errno == EAGAIN || errno == EWOULDBLOCK) ? CD_ERR_AGAIN : CD_ERR_IO;
	keep(s, chunk, (size_t)n);
	return n;
}

/* Read what s's pipe has: 0 at EOF (watch removed, fd closed), 1 when more
 * may come, < 0 when a FAIL cap was hit or the read failed. */
static int drain(struct childrun *r, struct stream *s)
{
	for (;;) {
		ssize_t n = read_stream(s);

		if (n > 0 && s->truncated && s->cap == CHILDRUN_CAP_STOP)
			return 1;
		if (n > 0)
			continue;
		if (n == CD_ERR_AGAIN)
			return 1;
		if (n == 0) {
			loop_unwatch(r->loop, *s->fd);
			close(*s->fd);
			*s->fd = -1;
			return 0;
		}
		if (n == CD_ERR_TOOBIG)
			s->truncated = 1;
		return (int)n;
	}
}

static void on_output(struct loop *loop, int fd, short revents, void *arg)
{
	struct childrun *r = arg;
	struct stream *s = fd == r->c.out_fd ? &r->out : &r->err;
	int rc = drain(r, s);
	char msg[128];

	if (rc < 0) {
		if (rc == CD_ERR_TOOBIG)
			snprintf(msg, sizeof(msg), "%s said more than expected", r->prog);
		else
			snprintf(msg, sizeof(msg), "reading from %s: %s", r->prog, strerror(errno));
		finish(r, CD_ERR_IO, msg);
		return;
	}
	if (s->truncated && s->cap == CHILDRUN_CAP_STOP) {
		finish(r, 0, NULL); /* child_fini kills it (and its group) */
		return;
	}
	maybe_finish(r);
}

/* The child's stdin can take more: write; at the end, or when the child no
 * longer reads, close it. */
static void on_input(struct loop *loop, int fd, short revents, void *arg)
{
	struct childrun *r = arg;
	ssize_t n = child_write_input(&r->c, r->in + r->sent, r->inlen - r->sent);

	if (n > 0)
		r->sent += (size_t)n;
	if ((n < 0 && errno != EAGAIN) || r->sent == r->inlen) {
		loop_unwatch(loop, fd);
		child_close_stdin(&r->c);
	}
}

static void on_exit_fd(struct loop *loop, int fd, short revents, void *arg)
{
	struct childrun *r = arg;

	/* a pidfd stays readable once the child exited: the pipes say the rest */
	loop_unwatch(loop, fd);
	maybe_finish(r);
}

static void on_deadline(struct loop *loop, void *arg)
{
	struct childrun *r = arg;
	char msg[128];

	r->deadline = 0;
	snprintf(msg, sizeof(msg), "%s did not finish within %d ms", r->prog, r->timeout_ms);
	finish(r, CD_ERR_TIMEOUT, msg);
}

struct childrun *childrun_start_opts(struct loop *loop, char *const argv[],
                                     const struct childrun_opts *o, childrun_cb done, void *arg,
                                     char *err, size_t errlen)
{
	struct childrun *r = cd_calloc(1, sizeof(*r));

	r->loop = loop;
	r->timeout_ms = o->timeout_ms;
	r->done = done;
	r->arg = arg;
	r->in = o->in;
	r->inlen = o->inlen;
	snprintf(r->prog, sizeof(r->prog), "%s", argv[0]);
	buf_init(&r->out.b, o->out_max);
	buf_init(&r->err.b, o->err_max);
	r->out.cap = o->out_cap;
	r->err.cap = o->err_cap;
	r->out.fd = &r->c.out_fd;
	r->err.fd = &r->c.err_fd;
	if (child_start_opts(&r->c, argv, &o->start, err, errlen) < 0) {
		buf_fini(&r->out.b);
		buf_fini(&r->err.b);
		free(r);
		return NULL;
	}
	if (r->inlen)
		loop_watch(loop, r->c.in_fd, POLLOUT, on_input, r);
	else
		child_close_stdin(&r->c);
	loop_watch(loop, r->c.out_fd, POLLIN, on_output, r);
	loop_watch(loop, r->c.err_fd, POLLIN, on_output, r);
	if (r->c.pid_fd >= 0)
		loop_watch(loop, r->c.pid_fd, POLLIN, on_exit_fd, r);
	r->deadline = loop_timer_add(loop, o->timeout_ms, on_deadline, r);
	return r;
}

struct childrun *childrun_start(struct loop *loop, char *const argv[], int timeout_ms,
                                size_t out_max, size_t err_max, childrun_cb done, void *arg,
                                char *err, size_t errlen)
{
	struct childrun_opts o = {.timeout_ms = timeout_ms, .out_max = out_max, .err_max = err_max};

	return childrun_start_opts(loop, argv, &o, done, arg, err, errlen);
}

void childrun_cancel(struct childrun *r)
{
	if (r)
		release(r);
}

/* --- child_run, child_run_input (child.h) ---------------------------------- */

struct sync_run {
	int done, rc, status;
	struct buf *out, *errout;
	char *err;
	size_t errlen;
};

static void on_sync_done(const struct childrun_result *res, void *arg)
{
	struct sync_run *s = arg;

	s->done = 1;
	s->rc = res->rc;
	s->status = res->status;
	/* the caps were the room these bufs had: both fit */
	buf_append(s->out, res->out->data, res->out->len);
	buf_append(s->errout, res->err->data, res->err->len);
	if (res->rc < 0)
		cd_errf(s->err, s->errlen, res->rc, "%s", res->error);
}

int child_run_input(char *const argv[], char *const env[], const void *in, size_t inlen,
                    struct buf *out, struct buf *errout, int timeout_ms, int *status, char *err,
                    size_t errlen)
{
	struct childrun_opts o = {.timeout_ms = timeout_ms,
	                          .out_max = out->max - out->len,
	                          .err_max = errout->max - errout->len,
	                          .start = {.env = env},
	                          .in = in,
	                          .inlen = inlen};
	struct sync_run s = {.out = out, .errout = errout, .err = err, .errlen = errlen};
	struct loop *loop = loop_new();

	if (!childrun_start_opts(loop, argv, &o, on_sync_done, &s, err, errlen))
		s.rc = CD_ERR_IO, s.done = 1;
	while (!s.done)
		loop_run_once(loop, -1); /* the run's deadline bounds this */
	loop_free(loop);
	if (s.rc == 0)
		*status = s.status;
	return s.rc;
}

int child_run(char *const argv[], struct buf *out, struct buf *errout, int timeout_ms, int *status,
              char *err, size_t errlen)
{
	return child_run_input(argv, NULL, NULL, 0, out, errout, timeout_ms, status, err, errlen);
}
