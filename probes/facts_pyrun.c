/* facts_pyrun.c - run an interpreter as a child under a deadline, with capped
 * output (see facts_pyrun.h). */
#include "probes/facts_pyrun.h"
#include "cd.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define REAP_GRACE_MS 1000

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* In the child after fork: only async-signal-safe calls until exec. */
static void __attribute__((noreturn))
child_exec(char *const argv[], int in, int out, int err, int exec_err)
{
	sigset_t none;
	ssize_t w;
	int e;

	/* own process group, so that a timeout kills the grandchildren too */
	setpgid(0, 0);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	if (dup2(in, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0 ||
	    dup2(err, STDERR_FILENO) < 0)
		goto fail;
	execvp(argv[0], argv);
fail:
	e = errno;
	w = write(exec_err, &e, sizeof(e));
	(void)w; /* nothing more to do about a failed write here */
	_exit(127);
}

/* SIGKILL the child's process group and reap the child. A process stuck in
 * uninterruptible sleep cannot die at once; it is left after a short grace
 * rather than blocking the agent. */
static void kill_and_reap(pid_t pid)
{
	int64_t give_up = cd_now_ms() + REAP_GRACE_MS;
	int status;

	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, WNOHANG) == 0 && cd_now_ms() < give_up)
		poll(NULL, 0, 1);
}

static void keep_tail(struct facts_pyrun *r, const char *p, size_t n)
{
	if (n >= FACTS_PYRUN_ERR_TAIL) {
		memcpy(r->err, p + n - FACTS_PYRUN_ERR_TAIL, FACTS_PYRUN_ERR_TAIL);
		r->err_len = FACTS_PYRUN_ERR_TAIL;
	} else {
		size_t drop = r->err_len + n > FACTS_PYRUN_ERR_TAIL
		                  ? r->err_len + n - FACTS_PYRUN_ERR_TAIL
		                  : 0;

		memmove(r->err, r->err + drop, r->err_len - drop);
		memcpy(r->err + r->err_len - drop, p, n);
		r->err_len += n - drop;
	}
	r->err[r->err_len] = '\0';
}

/*
 * Read the child's pipes until all three are closed, then wait for its exit,
 * all before deadline. Returns 0, CD_ERR_TIMEOUT, CD_ERR_TOOBIG or CD_ERR_IO;
 * *exec_errno is the errno of a failed exec (0 when exec succeeded).
 */
static int pump(const char *who, pid_t pid, int fds[3], int64_t deadline, struct facts_pyrun *r,
                int *exec_errno, char *errbuf, size_t errlen)
{
	char chunk[4096];

	while (fds[0] >= 0 || fds[1] >= 0 || fds[2] >= 0) {
		struct pollfd p[3];
		int idx[3], np = 0, left = (int)(deadline - cd_now_ms());

		if (left <= 0)
			return CD_ERR_TIMEOUT;
		for (int i = 0; i < 3; i++) {
			if (fds[i] >= 0) {
				p[np] = (struct pollfd){.fd = fds[i], .events = POLLIN};
				idx[np++] = i;
			}
		}
		if (poll(p, (nfds_t)np, left) < 0) {
			if (errno == EINTR)
				continue;
			return cd_errf(errbuf, errlen, CD_ERR_IO, "waiting for %s: poll: %s", who,
			               strerror(errno));
		}
		for (int k = 0; k < np; k++) {
			int i = idx[k];
			ssize_t n;

			if (!p[k].revents)
				continue;
			if (i == 0)
				n = read(fds[0], r->out + r->out_len,
				         FACTS_PYTHON_OUT_MAX + 1 - r->out_len);
			else
				n = read(fds[i], chunk, sizeof(chunk));
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n < 0)
				return cd_errf(errbuf, errlen, CD_ERR_IO, "reading from %s: %s",
				               who, strerror(errno));
			if (n == 0) {
				close_fd(&fds[i]);
			} else if (i == 0) {
				r->out_len += (size_t)n;
				if (r->out_len > FACTS_PYTHON_OUT_MAX)
					return cd_errf(errbuf, errlen, CD_ERR_TOOBIG,
					               "%s printed more than %d KiB", who,
					               FACTS_PYTHON_OUT_MAX / 1024);
			} else if (i == 1) {
				keep_tail(r, chunk, (size_t)n);
			} else if ((size_t)n >= sizeof(int)) {
				memcpy(exec_errno, chunk, sizeof(int));
			}
		}
	}
	r->out[r->out_len] = '\0';
	/* Both pipes are closed, so the child is exiting; wait in short steps
	 * rather than block, in case it closed them and lingers. */
	for (;;) {
		pid_t w = waitpid(pid, &r->status, WNOHANG);

		if (w == pid)
			return 0;
		if (w < 0 && errno != EINTR)
			return cd_errf(errbuf, errlen, CD_ERR_IO, "waiting for %s: %s", who,
			               strerror(errno));
		if (cd_now_ms() >= deadline)
			return CD_ERR_TIMEOUT;
		poll(NULL, 0, 2);
	}
}

int facts_pyrun_child(char *const argv[], int64_t deadline, struct facts_pyrun *r, char *errbuf,
                      size_t errlen)
{
	int out[2] = {-1, -1}, err[2] = {-1, -1}, ex[2] = {-1, -1}, null_fd = -1;
	int fds[3], exec_errno = 0, rc;
	pid_t pid = -1;

	memset(r, 0, sizeof(*r));
	r->out = cd_malloc(FACTS_PYTHON_OUT_MAX + 2);
	null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null_fd < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 ||
	    pipe2(ex, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
		rc = cd_errf(errbuf, errlen, CD_ERR_IO, "cannot start %s: %s", argv[0],
		             strerror(errno));
		goto out;
	}
	if (pid == 0)
		child_exec(argv, null_fd, out[1], err[1], ex[1]);
	setpgid(pid, pid); /* also here: the child may not have run yet */
	close_fd(&out[1]);
	close_fd(&err[1]);
	close_fd(&ex[1]);
	fds[0] = out[0], fds[1] = err[0], fds[2] = ex[0];
	for (int i = 0; i < 3; i++)
		fcntl(fds[i], F_SETFL, O_NONBLOCK);
	rc = pump(argv[0], pid, fds, deadline, r, &exec_errno, errbuf, errlen);
	out[0] = fds[0], err[0] = fds[1], ex[0] = fds[2];
	if (rc == 0) {
		pid = -1; /* reaped */
		if (exec_errno)
			rc = cd_errf(errbuf, errlen,
			             exec_errno == ENOENT ? CD_ERR_NOTFOUND : CD_ERR_IO,
			             "cannot run %s: %s", argv[0], strerror(exec_errno));
	}
out:
	if (pid > 0)
		kill_and_reap(pid);
	close_fd(&null_fd);
	for (int i = 0; i < 2; i++) {
		close_fd(&out[i]);
		close_fd(&err[i]);
		close_fd(&ex[i]);
	}
	if (rc < 0) {
		free(r->out);
		r->out = NULL;
	}
	return rc;
}
