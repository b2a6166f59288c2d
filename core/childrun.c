/*
 * childrun.c - a child process watched by the loop (childrun.h).
 */
#include "childrun.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cd.h"
#include "child.h"

/* How often to try reaping a child without a pidfd (old kernels). */
#define REAP_POLL_MS 20

struct childrun {
	struct loop *loop;
	struct child c;
	struct buf out, err;
	char prog[64];
	int timeout_ms;
	uint64_t deadline, reap_timer;
	childrun_cb done;
	void *arg;
};

static void unwatch(struct childrun *r)
{
	if (r->c.out_fd >= 0)
		loop_unwatch(r->loop, r->c.out_fd);
	if (r->c.err_fd >= 0)
		loop_unwatch(r->loop, r->c.err_fd);
	if (r->c.pid_fd >= 0)
		loop_unwatch(r->loop, r->c.pid_fd);
	loop_timer_cancel(r->loop, r->deadline);
	loop_timer_cancel(r->loop, r->reap_timer);
	r->deadline = r->reap_timer = 0;
}

static void release(struct childrun *r)
{
	unwatch(r);
	child_fini(&r->c); /* kills and reaps one still running */
	buf_fini(&r->out);
	buf_fini(&r->err);
	free(r);
}

/* Call done once, then free the run. */
static void finish(struct childrun *r, int rc, const char *error)
{
	struct childrun_result res = {
	    .rc = rc, .out = &r->out, .err = &r->err, .error = error ? error : ""};

	unwatch(r);
	child_fini(&r->c);
	res.status = r->c.status;
	r->done(&res, r->arg);
	buf_fini(&r->out);
	buf_fini(&r->err);
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

/* Read what fd has: 0 at EOF (watch removed, fd closed), 1 when more may
 * come, < 0 when the buffer's cap was hit. */
static int drain(struct childrun *r, int *fd, struct buf *b)
{
	for (;;) {
		ssize_t n = buf_read_fd(b, *fd);

		if (n > 0)
			continue;
		if (n == CD_ERR_AGAIN)
			return 1;
		if (n == 0) {
			loop_unwatch(r->loop, *fd);
			close(*fd);
			*fd = -1;
			return 0;
		}
		return (int)n;
	}
}

static void on_output(struct loop *loop, int fd, short revents, void *arg)
{
	struct childrun *r = arg;
	int rc =
	    fd == r->c.out_fd ? drain(r, &r->c.out_fd, &r->out) : drain(r, &r->c.err_fd, &r->err);
	char msg[128];

	if (rc < 0) {
		snprintf(msg, sizeof(msg), "%s said more than expected", r->prog);
		finish(r, CD_ERR_IO, msg);
		return;
	}
	maybe_finish(r);
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

struct childrun *childrun_start(struct loop *loop, char *const argv[], int timeout_ms,
                                size_t out_max, size_t err_max, childrun_cb done, void *arg,
                                char *err, size_t errlen)
{
	struct childrun *r = cd_calloc(1, sizeof(*r));

	r->loop = loop;
	r->timeout_ms = timeout_ms;
	r->done = done;
	r->arg = arg;
	snprintf(r->prog, sizeof(r->prog), "%s", argv[0]);
	buf_init(&r->out, out_max);
	buf_init(&r->err, err_max);
	if (child_start(&r->c, argv, NULL, err, errlen) < 0) {
		buf_fini(&r->out);
		buf_fini(&r->err);
		free(r);
		return NULL;
	}
	child_close_stdin(&r->c);
	loop_watch(loop, r->c.out_fd, POLLIN, on_output, r);
	loop_watch(loop, r->c.err_fd, POLLIN, on_output, r);
	if (r->c.pid_fd >= 0)
		loop_watch(loop, r->c.pid_fd, POLLIN, on_exit_fd, r);
	r->deadline = loop_timer_add(loop, timeout_ms, on_deadline, r);
	return r;
}

void childrun_cancel(struct childrun *r)
{
	if (r)
		release(r);
}
