/* SPDX-License-Identifier: MIT */
/*
 * childrun.h - a child process on the event loop: start a short command,
 * collect its stdout and stderr into bounded buffers and learn how it ended,
 * without blocking, under a deadline. The one way clusterdoc runs a command
 * and waits for it, on both sides:
 *   - the head runs the commands of a flow between its network steps
 *     (`ssh -G`, `ssh-keygen`), so a front end's loop keeps serving keys and
 *     sockets while they run;
 *   - an agent handler runs its probe's programs (nft, python, py-spy, ssh,
 *     npu-smi...) on a private loop of its own (loop_new, childrun_start
 *     for each, loop_run until the last done), several at once where they
 *     are independent;
 *   - child_run and child_run_input (child.h) are one childrun on a private
 *     loop, for callers outside any loop.
 *
 * done is called exactly once, from a loop callback (never from inside
 * childrun_start), unless the run is cancelled first. The handle is freed
 * right after done returns: do not use or cancel it from done on.
 */
#ifndef CD_CHILDRUN_H
#define CD_CHILDRUN_H

#include <stddef.h>

#include "buf.h"
#include "child.h"
#include "loop.h"

/* What a stream's cap (out_max, err_max) does when the child says more. */
enum childrun_cap {
	CHILDRUN_CAP_FAIL = 0, /* an error (CD_ERR_IO): the child is killed */
	CHILDRUN_CAP_HEAD,     /* keep the first max bytes, read and drop the rest */
	CHILDRUN_CAP_STOP,     /* keep the first max bytes, then kill the child
	                        * (its group with own_group) and end: rc 0 */
	CHILDRUN_CAP_TAIL,     /* keep the last max bytes (the end says why) */
};

/* How to run a child; all zero but timeout_ms and the caps is childrun_start. */
struct childrun_opts {
	int timeout_ms;          /* the deadline, from the start */
	size_t out_max, err_max; /* the most of stdout, stderr that is kept */
	enum childrun_cap out_cap, err_cap;
	struct child_opts start; /* program path, environment, process group */
	const void *in;          /* written to stdin (borrowed until done), then */
	size_t inlen;            /* closed; a child that stops reading is no error */
};

struct childrun_result {
	int rc;                /* 0, CD_ERR_IO (too much output, CAP_FAIL) or CD_ERR_TIMEOUT */
	int status;            /* the waitpid status when rc == 0 */
	const struct buf *out; /* what it wrote, bounded by out_max */
	const struct buf *err; /* its stderr, bounded by err_max */
	int out_truncated;     /* stdout passed out_max (what the cap did: out_cap) */
	int err_truncated;     /* stderr passed err_max */
	int spawn_errno;       /* 0, or why the program could not be run (child.h):
	                        * rc 0, status 127, "cannot run PROG: why" on err */
	const char *error;     /* rc < 0: why, naming argv[0]; else "" */
};

typedef void (*childrun_cb)(const struct childrun_result *r, void *arg);

struct childrun;

/*
 * Start argv (stdin empty) on loop with a deadline of timeout_ms; more than
 * out_max bytes of stdout or err_max of stderr is an error (CD_ERR_IO) and
 * kills the child. NULL with err when it could not start (CD_ERR_IO): done
 * is not called then.
 */
struct childrun *childrun_start(struct loop *loop, char *const argv[], int timeout_ms,
                                size_t out_max, size_t err_max, childrun_cb done, void *arg,
                                char *err, size_t errlen);

/* childrun_start with everything o says (see struct childrun_opts). The
 * deadline kills the child, its whole group with o->start.own_group. */
struct childrun *childrun_start_opts(struct loop *loop, char *const argv[],
                                     const struct childrun_opts *o, childrun_cb done, void *arg,
                                     char *err, size_t errlen);

/* Kill (SIGKILL) and reap the child; done is not called. NULL is a no-op. */
void childrun_cancel(struct childrun *r);

#endif
