/* child.c - child processes with pipes and a pidfd (see child.h). */
#include "child.h"
#include "buf.h"
#include "cd.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static int pidfd_open_compat(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* The environment for the child: the inherited one with env's entries
 * replacing those of the same name (as putenv would). Freed with free();
 * the strings are borrowed. */
static char **child_environ(char *const env[])
{
	size_t n = 0, k = 0, extra = 0;
	char **out;

	while (environ && environ[n])
		n++;
	while (env && env[extra])
		extra++;
	out = cd_calloc(n + extra + 1, sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		size_t name = strcspn(environ[i], "=");
		int replaced = 0;

		for (size_t e = 0; e < extra && !replaced; e++)
			replaced = strncmp(env[e], environ[i], name) == 0 && env[e][name] == '=';
		if (!replaced)
			out[k++] = environ[i];
	}
	for (size_t e = 0; e < extra; e++)
		out[k++] = env[e];
	return out;
}

/*
 * A program that cannot be run still gets a child, which says why on its
 * stderr and exits 127 as a shell's would, so callers read one outcome for
 * every failure of the command. It only writes and exits: fork's cost here
 * is paid on this rare path alone.
 */
static pid_t exec_failure_child(const char *prog, int spawn_errno, int err_fd)
{
	pid_t pid = fork();

	if (pid == 0) {
		dprintf(err_fd, "cannot run %s: %s\n", prog, strerror(spawn_errno));
		_exit(127);
	}
	return pid;
}

/*
 * posix_spawnp, not fork: the head calls this from its event loop, and a
 * fork copies the process's memory map under its lock, which can stall the
 * loop for tens of milliseconds while other threads or readers of /proc
 * hold it; spawn shares the memory until exec (vfork semantics).
 */
int child_start(struct child *c, char *const argv[], char *const env[], char *err, size_t errlen)
{
	int in[2] = {-1, -1}, out[2] = {-1, -1}, er[2] = {-1, -1}, rc;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t def;
	char **envp = NULL;
	pid_t pid;

	c->pid = 0;
	c->in_fd = c->out_fd = c->err_fd = c->pid_fd = -1;
	c->status = 0;
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(er, O_CLOEXEC) < 0)
		goto fail_errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], STDIN_FILENO);
	posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(&fa, er[1], STDERR_FILENO);
	posix_spawnattr_init(&attr);
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE); /* the head ignores it; the child must not */
	posix_spawnattr_setsigdefault(&attr, &def);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
	if (env)
		envp = child_environ(env);
	rc = posix_spawnp(&pid, argv[0], &fa, &attr, argv, envp ? envp : environ);
	free(envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (rc != 0)
		pid = exec_failure_child(argv[0], rc, er[1]);
	if (pid < 0)
		goto fail_errno;
	close(in[0]);
	close(out[1]);
	close(er[1]);
	c->pid = pid;
	c->in_fd = in[1];
	c->out_fd = out[0];
	c->err_fd = er[0];
	fcntl(c->in_fd, F_SETFL, O_NONBLOCK);
	fcntl(c->out_fd, F_SETFL, O_NONBLOCK);
	fcntl(c->err_fd, F_SETFL, O_NONBLOCK);
	c->pid_fd = pidfd_open_compat(pid);
	if (c->pid_fd >= 0)
		fcntl(c->pid_fd, F_SETFD, FD_CLOEXEC);
	return 0;

fail_errno:
	cd_errf(err, errlen, CD_ERR_IO, "cannot start %s: %s", argv[0], strerror(errno));
	close_fd(&in[0]), close_fd(&in[1]), close_fd(&out[0]), close_fd(&out[1]);
	close_fd(&er[0]), close_fd(&er[1]);
	return CD_ERR_IO;
}

void child_close_stdin(struct child *c)
{
	close_fd(&c->in_fd);
}

int child_reap(struct child *c)
{
	pid_t r;

	if (!c->pid)
		return 1;
	do
		r = waitpid(c->pid, &c->status, WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		return 0;
	c->pid = 0;
	return 1;
}

void child_describe_status(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(status),
		         strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "ended with wait status %#x", status);
}

void child_fini(struct child *c)
{
	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		while (waitpid(c->pid, &c->status, 0) < 0 && errno == EINTR)
			;
		c->pid = 0;
	}
	close_fd(&c->in_fd);
	close_fd(&c->out_fd);
	close_fd(&c->err_fd);
	close_fd(&c->pid_fd);
}

/* Read what is available on fd into b; 0 at EOF (fd closed), 1 when more may
 * come, CD_ERR_TOOBIG/CD_ERR_IO. */
static int drain_fd(int *fd, struct buf *b)
{
	for (;;) {
		ssize_t n = buf_read_fd(b, *fd);

		if (n > 0)
			continue;
		if (n == CD_ERR_AGAIN)
			return 1;
		if (n == 0) {
			close_fd(fd);
			return 0;
		}
		return (int)n;
	}
}

/* Write to the child's stdin without SIGPIPE: the agent does not ignore it,
 * and a child that exits before reading all of its input must not kill us.
 * SIGPIPE is blocked around the write; one it raised is taken back (unless
 * one was already pending) before the mask is restored. */
static ssize_t write_nosigpipe(int fd, const void *p, size_t n)
{
	struct timespec zero = {0, 0};
	sigset_t pipe_set, old, pending;
	int was_pending, e;
	ssize_t w;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigpending(&pending);
	was_pending = sigismember(&pending, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	do
		w = write(fd, p, n);
	while (w < 0 && errno == EINTR);
	e = errno;
	if (w < 0 && e == EPIPE && !was_pending)
		while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR)
			;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = e;
	return w;
}

int child_run_input(char *const argv[], char *const env[], const void *in, size_t inlen,
                    struct buf *out, struct buf *errout, int timeout_ms, int *status, char *err,
                    size_t errlen)
{
	struct child c;
	int64_t deadline = cd_now_ms() + timeout_ms;
	size_t sent = 0;
	int rc;

	rc = child_start(&c, argv, env, err, errlen);
	if (rc < 0)
		return rc;
	if (inlen == 0)
		child_close_stdin(&c);
	while (c.out_fd >= 0 || c.err_fd >= 0) {
		struct pollfd p[3] = {{.fd = c.out_fd, .events = POLLIN},
		                      {.fd = c.err_fd, .events = POLLIN},
		                      {.fd = c.in_fd, .events = POLLOUT}};
		int64_t left = deadline - cd_now_ms();

		if (left <= 0) {
			rc = cd_errf(err, errlen, CD_ERR_TIMEOUT, "%s did not finish within %d ms",
			             argv[0], timeout_ms);
			goto out;
		}
		if (poll(p, 3, (int)left) < 0 && errno != EINTR) {
			rc = cd_errf(err, errlen, CD_ERR_IO, "poll: %s", strerror(errno));
			goto out;
		}
		if (c.in_fd >= 0 && p[2].revents) {
			ssize_t n = write_nosigpipe(c.in_fd, (const char *)in + sent, inlen - sent);

			/* EPIPE and the like: the child does not want the rest */
			if (n > 0)
				sent += (size_t)n;
			if ((n < 0 && errno != EAGAIN) || sent == inlen)
				child_close_stdin(&c);
		}
		if ((c.out_fd >= 0 && drain_fd(&c.out_fd, out) < 0) ||
		    (c.err_fd >= 0 && drain_fd(&c.err_fd, errout) < 0)) {
			rc = cd_errf(err, errlen, CD_ERR_IO, "%s said more than expected", argv[0]);
			goto out;
		}
	}
	/* both pipes closed: the child has exited or is about to */
	child_close_stdin(&c);
	while (!child_reap(&c)) {
		if (cd_now_ms() >= deadline) {
			rc = cd_errf(err, errlen, CD_ERR_TIMEOUT, "%s did not finish within %d ms",
			             argv[0], timeout_ms);
			goto out;
		}
		poll(NULL, 0, 5);
	}
	*status = c.status;
	rc = 0;
out:
	child_fini(&c);
	return rc;
}

int child_run(char *const argv[], struct buf *out, struct buf *errout, int timeout_ms, int *status,
              char *err, size_t errlen)
{
	return child_run_input(argv, NULL, NULL, 0, out, errout, timeout_ms, status, err, errlen);
}
