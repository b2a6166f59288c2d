/*
 * childrun.h - child_run (child.h) on the event loop: start a short command,
 * collect its stdout and stderr into bounded buffers and learn how it ended,
 * without blocking. For the commands a flow runs on the head between its
 * network steps (`ssh -G`, `ssh-keygen`), so a front end's loop keeps
 * serving keys and sockets while they run.
 *
 * done is called exactly once, from a loop callback (never from inside
 * childrun_start), unless the run is cancelled first. The handle is freed
 * right after done returns: do not use or cancel it from done on.
 */
#ifndef CD_CHILDRUN_H
#define CD_CHILDRUN_H

#include <stddef.h>

#include "buf.h"
#include "loop.h"

struct childrun_result {
	int rc;                /* 0, CD_ERR_IO (too much output) or CD_ERR_TIMEOUT */
	int status;            /* the waitpid status when rc == 0 */
	const struct buf *out; /* what it wrote, bounded by out_max */
	const struct buf *err; /* its stderr, bounded by err_max */
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

/* Kill (SIGKILL) and reap the child; done is not called. NULL is a no-op. */
void childrun_cancel(struct childrun *r);

#endif
