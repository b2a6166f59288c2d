/* SPDX-License-Identifier: MIT */
/* child.c - child processes with pipes and a pidfd (see child.h). */
#include "child.h"
#include "cd.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
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

/* The children not yet reaped: a pid, negated for a group leader (kill(2)
 * then takes the whole group); 0 is a free row. Atomic rows, no lock: the
 * table is read from a signal handler. */
static atomic_int tracked[CHILD_TRACK_MAX];

static void track(pid_t pid, int group)
{
	for (size_t i = 0; i < CHILD_TRACK_MAX; i++) {
		int free_row = 0;

		if (atomic_compare_exchange_strong(&tracked[i], &free_row, group ? -pid : pid))
			return;
	}
}

static void untrack(pid_t pid)
{
	for (size_t i = 0; i < CHILD_TRACK_MAX; i++) {
		int v = atomic_load(&tracked[i]);

		if (v == pid || v == -pid) {
			atomic_store(&tracked[i], 0);
			return;
		}
	}
}

void child_kill_all(void)
{
	for (size_t i = 0; i < CHILD_TRACK_MAX; i++) {
		int v = atomic_load(&tracked[i]);

		if (v)
			kill(v, SIGKILL);
	}
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

/* The spawn attributes: default SIGPIPE (the head ignores it; the child must
 * not), and with own_group a group of its own and no signal blocked. */
/* mask: the caller's signal mask before child_start blocked the end
 * signals around the spawn; the child starts with it (its own group: none). */
static void spawn_attr(posix_spawnattr_t *attr, const struct child_opts *o, const sigset_t *mask)
{
	sigset_t def, none;
	short flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;

	posix_spawnattr_init(attr);
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	posix_spawnattr_setsigdefault(attr, &def);
	sigemptyset(&none);
	posix_spawnattr_setsigmask(attr, o->own_group ? &none : mask);
	if (o->own_group) {
		posix_spawnattr_setpgroup(attr, 0);
		flags |= POSIX_SPAWN_SETPGROUP;
	}
	posix_spawnattr_setflags(attr, flags);
}

/* posix_spawn (o->path) or posix_spawnp (argv[0] in PATH), in env. */
static int spawn(pid_t *pid, char *const argv[], const struct child_opts *o,
                 const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr)
{
	char **envp = o->env && !o->env_only ? child_environ(o->env) : NULL;
	char *const *use = o->env_only ? o->env : envp ? envp : environ;
	int rc;

	if (o->path)
		rc = posix_spawn(pid, o->path, fa, attr, argv, use);
	else
		rc = posix_spawnp(pid, argv[0], fa, attr, argv, use);
	free(envp);
	return rc;
}

/*
 * posix_spawnp, not fork: the head calls this from its event loop, and a
 * fork copies the process's memory map under its lock, which can stall the
 * loop for tens of milliseconds while other threads or readers of /proc
 * hold it; spawn shares the memory until exec (vfork semantics).
 */
int child_start_opts(struct child *c, char *const argv[], const struct child_opts *o, char *err,
                     size_t errlen)
{
	static const struct child_opts none;
	int in[2] = {-1, -1}, out[2] = {-1, -1}, er[2] = {-1, -1}, rc;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t ends, mask;
	pid_t pid;

	if (!o)
		o = &none;
	memset(c, 0, sizeof(*c));
	c->in_fd = c->out_fd = c->err_fd = c->pid_fd = -1;
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(er, O_CLOEXEC) < 0)
		goto fail_errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], STDIN_FILENO);
	posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(&fa, er[1], STDERR_FILENO);
	/* the end signals wait until the child is in the table child_kill_all
	 * reads: a signal between the spawn and track() would miss it */
	sigemptyset(&ends);
	sigaddset(&ends, SIGTERM);
	sigaddset(&ends, SIGHUP);
	sigaddset(&ends, SIGINT);
	pthread_sigmask(SIG_BLOCK, &ends, &mask);
	spawn_attr(&attr, o, &mask);
	rc = spawn(&pid, argv, o, &fa, &attr);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (rc != 0) {
		c->spawn_errno = rc;
		pid = exec_failure_child(argv[0], rc, er[1]);
	}
	if (pid < 0) {
		pthread_sigmask(SIG_SETMASK, &mask, NULL);
		goto fail_errno;
	}
	close(in[0]);
	close(out[1]);
	close(er[1]);
	c->pid = pid;
	c->group = o->own_group && rc == 0;
	track(pid, c->group);
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
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

int child_start(struct child *c, char *const argv[], char *const env[], char *err, size_t errlen)
{
	struct child_opts o = {.env = env};

	return child_start_opts(c, argv, &o, err, errlen);
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
	untrack(c->pid);
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

/* Send sig to c (its group too) and reap it for up to grace_ms: 1 when it
 * is reaped. The pidfd turns readable when it is dead; without one, look
 * every millisecond. */
static int signal_and_wait(struct child *c, int sig, int grace_ms)
{
	int64_t give_up = cd_now_ms() + grace_ms;

	/* the group holds the leader: one signal each (srun takes a second
	 * SIGINT within a second as "abort") */
	if (c->group)
		kill(-c->pid, sig);
	else
		kill(c->pid, sig);
	while (!child_reap(c)) {
		struct pollfd p = {.fd = c->pid_fd, .events = POLLIN};
		int64_t left = give_up - cd_now_ms();

		if (left <= 0)
			return 0;
		poll(&p, c->pid_fd >= 0 ? 1 : 0, c->pid_fd >= 0 ? (int)left : 1);
	}
	return 1;
}

void child_fini(struct child *c)
{
	if (c->pid > 0) {
		signal_and_wait(c, SIGKILL, CHILD_REAP_GRACE_MS);
		if (c->pid)
			untrack(c->pid);
		c->pid = 0;
	}
	close_fd(&c->in_fd);
	close_fd(&c->out_fd);
	close_fd(&c->err_fd);
	close_fd(&c->pid_fd);
}

void child_end(struct child *c, int sig, int grace_ms)
{
	if (c->pid > 0 && !child_reap(c))
		signal_and_wait(c, sig, grace_ms);
	child_fini(c);
}

/* SIGPIPE is blocked around the write; one it raised is taken back (unless
 * one was already pending) before the mask is restored. */
ssize_t child_write_input(struct child *c, const void *p, size_t n)
{
	int fd = c->in_fd;
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
