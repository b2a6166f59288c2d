/*
 * child.h - start a child process with non-blocking pipes for stdin, stdout
 * and stderr, and learn of its exit through a pollable pidfd.
 *
 * Used by the openssh and local transports and for `ssh -G`. The caller owns
 * the struct child and must call child_fini, which kills (SIGKILL) and reaps
 * a child that is still running: nothing outlives the head.
 */
#ifndef CD_CHILD_H
#define CD_CHILD_H

#include <sys/types.h>

struct child {
	pid_t pid;  /* 0 once reaped */
	int in_fd;  /* write end of the child's stdin, -1 when closed */
	int out_fd; /* read end of the child's stdout */
	int err_fd; /* read end of the child's stderr */
	int pid_fd; /* readable once the child has exited */
	int status; /* waitpid status, valid after child_reap returned 1 */
};

/*
 * Start argv[0] (searched in PATH) with argv. env: NULL to inherit, or extra
 * "NAME=value" strings added to the inherited environment (NULL-terminated).
 * Returns 0 or CD_ERR_IO (message in err). fds are O_NONBLOCK|O_CLOEXEC.
 */
int child_start(struct child *c, char *const argv[], char *const env[], char *err, size_t errlen);

/* Close the child's stdin (it sees EOF). */
void child_close_stdin(struct child *c);

/* Reap without blocking: 1 when the child has exited (status set), 0 when
 * still running. */
int child_reap(struct child *c);

/* Describe an exit status: "exited with status 3", "killed by signal 9". */
void child_describe_status(int status, char *buf, size_t len);

/*
 * Run argv to completion, for short commands run outside the event loop
 * (scontrol): stdin is empty, stdout and stderr are collected into out and
 * errout (each buf's max bounds it; more is an error). Blocks at most
 * timeout_ms, then kills the child. Returns 0 with *status set (waitpid
 * status), or CD_ERR_IO (it could not start, or said more than the bufs
 * hold) or CD_ERR_TIMEOUT, with a message naming argv[0] in err.
 */
struct buf;
int child_run(char *const argv[], struct buf *out, struct buf *errout, int timeout_ms, int *status,
              char *err, size_t errlen);

/*
 * child_run with more: env as for child_start (NULL, or extra "NAME=value"
 * strings), and in[0..inlen) written to the child's stdin while its output
 * is read (so neither side can block the other), then stdin is closed. A
 * child that stops reading (closes stdin, exits) gets no more input: that is
 * not an error, and the caller is never killed by SIGPIPE. Same returns,
 * messages and deadline as child_run, which is this with NULL, NULL, 0.
 */
int child_run_input(char *const argv[], char *const env[], const void *in, size_t inlen,
                    struct buf *out, struct buf *errout, int timeout_ms, int *status, char *err,
                    size_t errlen);

/* Kill (SIGKILL) if still running, reap, close every fd. Safe to call twice. */
void child_fini(struct child *c);

#endif
