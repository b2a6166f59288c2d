/* SPDX-License-Identifier: MIT */
/*
 * child.h - start a child process with non-blocking pipes for stdin, stdout
 * and stderr, and learn of its exit through a pollable pidfd.
 *
 * Used by the openssh and local transports and by childrun.h (which every
 * short command of the head and the agent goes through). The caller owns the
 * struct child and must call child_fini, which kills (SIGKILL) and reaps a
 * child that is still running: nothing outlives the head.
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
	/* 0, or why the program could not be started (posix_spawn's errno):
	 * the child is then a stand-in that says "cannot run PROG: why" on its
	 * stderr and exits 127, as a shell would */
	int spawn_errno;
	int group; /* the child leads a process group of its own */
};

/* How child_start_opts starts a program; all zero is child_start's way. */
struct child_opts {
	const char *path; /* the file to run; NULL: argv[0], searched in PATH */
	char *const *env; /* NULL to inherit, or "NAME=value" strings (NULL-terminated) */
	int env_only;     /* env is the whole environment, not added to the inherited one */
	/* A process group of its own, with no signal blocked: child_fini (and
	 * so a childrun deadline) kills the whole group, grandchildren too.
	 * For system tools and interpreters that may start children of their
	 * own. */
	int own_group;
};

/*
 * Start argv[0] (searched in PATH) with argv. env: NULL to inherit, or extra
 * "NAME=value" strings added to the inherited environment (NULL-terminated).
 * Returns 0 or CD_ERR_IO (message in err). fds are O_NONBLOCK|O_CLOEXEC.
 */
int child_start(struct child *c, char *const argv[], char *const env[], char *err, size_t errlen);

/* child_start with o (NULL: as child_start with no env). Same returns. */
int child_start_opts(struct child *c, char *const argv[], const struct child_opts *o, char *err,
                     size_t errlen);

/* Write to the child's stdin without SIGPIPE (the agent does not ignore it,
 * and a child that exits before reading its input must not kill us): as
 * write(2), with errno EPIPE when the child closed its stdin. */
ssize_t child_write_input(struct child *c, const void *p, size_t n);

/* Close the child's stdin (it sees EOF). */
void child_close_stdin(struct child *c);

/* Reap without blocking: 1 when the child has exited (status set), 0 when
 * still running. */
int child_reap(struct child *c);

/* Describe an exit status: "exited with status 3", "killed by signal 9". */
void child_describe_status(int status, char *buf, size_t len);

/*
 * Run argv to completion, for short commands run outside the event loop
 * (scontrol). Defined in childrun.c: a childrun on a private loop, so there
 * is one way to watch a child. Here: stdin is empty, stdout and stderr are collected into out and
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

/* Kill (SIGKILL; its whole group with own_group) if still running, reap,
 * close every fd. Safe to call twice. A child in uninterruptible sleep cannot
 * die at once: after CHILD_REAP_GRACE_MS it is left to exit on its own
 * (unreaped) rather than block the caller. */
#define CHILD_REAP_GRACE_MS 1000
void child_fini(struct child *c);

/*
 * child_fini for a child that must clean up before it dies: if still
 * running, send it sig (its whole group with own_group), wait up to
 * grace_ms for it to exit, then child_fini (SIGKILL). srun given SIGTERM
 * revokes the allocation it waits for; an agent given SIGTERM ends the
 * children it started (child_kill_all). Blocks at most grace_ms plus
 * child_fini's own bound.
 */
void child_end(struct child *c, int sig, int grace_ms);

/*
 * Every child started by child_start_opts and not yet reaped is recorded
 * (a fixed table of CHILD_TRACK_MAX rows; one more is simply not recorded).
 * child_kill_all sends SIGKILL to each (to its whole group with own_group):
 * what a process calls from its SIGTERM handler so that nothing it started
 * outlives it. Async-signal-safe; any thread.
 */
#define CHILD_TRACK_MAX 256
void child_kill_all(void);

#endif
