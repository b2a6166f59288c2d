/* SPDX-License-Identifier: MIT */
/* facts_torch_bg.c - the detached finisher of a torch import and its lock
 * (see facts_torch_bg.h). */
#include "probes/facts_torch_bg.h"
#include "cd.h"
#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define REAP_GRACE_MS 1000

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* The pid the lock file records, 0 when there is none. */
static pid_t read_holder(int fd)
{
	char buf[24];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	long v;

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	v = strtol(buf, NULL, 10);
	return v > 0 && v <= INT32_MAX ? (pid_t)v : 0;
}

int facts_torch_bg_lock(const char *cache_path, int64_t deadline, int *lock_fd, pid_t *holder,
                        char *errbuf, size_t errlen)
{
	char *path = cd_asprintf("%s.lock", cache_path);
	int fd = -1, rc = 0;

	*lock_fd = -1;
	*holder = 0;
	if ((rc = cd_mkdir_parent(path, errbuf, errlen)) < 0)
		goto out;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc =
		    cd_errf(errbuf, errlen, CD_ERR_IO, "cannot open %s: %s", path, strerror(errno));
		goto out;
	}
	for (;;) {
		int64_t left;

		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			break;
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK) {
			rc = cd_errf(errbuf, errlen, CD_ERR_IO, "cannot lock %s: %s", path,
			             strerror(errno));
			goto out;
		}
		rc = 1;
		left = deadline - cd_now_ms();
		if (left <= 0) {
			*holder = read_holder(fd);
			rc = cd_errf(errbuf, errlen, CD_ERR_TIMEOUT,
			             "%s is held by an earlier import", path);
			goto out;
		}
		poll(NULL, 0, (int)(left < FACTS_TORCH_BG_POLL_MS ? left : FACTS_TORCH_BG_POLL_MS));
	}
	*lock_fd = fd;
	fd = -1;
out:
	close_fd(&fd);
	free(path);
	return rc;
}

/* The finisher: detach, run the work, report, exit. It exits with _exit so
 * that nothing of the agent (atexit handlers, stdio buffers) runs twice. */
static void __attribute__((noreturn))
finisher_main(int wfd, int lock_fd, facts_torch_bg_work_fn work, void *arg)
{
	pid_t me = getpid();
	char pidtext[24];
	sigset_t none;
	char *record;
	int null_fd;

	setsid();
	/* not the agent any more: ps, and whoever counts agents by name, tell
	 * them apart */
	prctl(PR_SET_NAME, FACTS_TORCH_BG_NAME, 0, 0, 0);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* the agent may have stopped reading: a late record is simply lost */
	signal(SIGPIPE, SIG_IGN);
	wfd = cd_fd_above_stderr(wfd);
	lock_fd = cd_fd_above_stderr(lock_fd);
	null_fd = open("/dev/null", O_RDWR);
	if (wfd < 0 || lock_fd < 0 || null_fd < 0)
		_exit(1);
	for (int fd = 0; fd <= 2; fd++)
		if (null_fd != fd && dup2(null_fd, fd) < 0)
			_exit(1);
	if (null_fd > 2)
		close(null_fd);
	cd_close_all_but(wfd, lock_fd);

	snprintf(pidtext, sizeof(pidtext), "%ld\n", (long)me);
	if (ftruncate(lock_fd, 0) == 0)
		(void)!pwrite(lock_fd, pidtext, strlen(pidtext), 0);
	if (cd_write_all(wfd, &me, sizeof(me)) < 0)
		_exit(1);
	record = work(arg);
	if (record)
		(void)cd_write_all(wfd, record, strlen(record));
	/* the lock goes with the exit; its pid must not outlive it */
	(void)!ftruncate(lock_fd, 0);
	_exit(0);
}

/* The middle process exits at once; reap it, but never wait long. */
static void reap_middle(pid_t pid)
{
	int64_t give_up = cd_now_ms() + REAP_GRACE_MS;
	int status;

	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);

		if (w == pid || (w < 0 && errno != EINTR) || cd_now_ms() >= give_up)
			return;
		poll(NULL, 0, 1);
	}
}

/*
 * Read the finisher's pid, then its record to EOF, until deadline. buf holds
 * FACTS_TORCH_BG_RECORD_MAX + sizeof(pid_t) + 1 bytes.
 */
static int read_record(int rfd, int64_t deadline, char *buf, size_t *len, pid_t *pid, char *errbuf,
                       size_t errlen)
{
	const size_t cap = sizeof(pid_t) + FACTS_TORCH_BG_RECORD_MAX;

	*len = 0;
	for (;;) {
		struct pollfd p = {.fd = rfd, .events = POLLIN};
		int64_t left = deadline - cd_now_ms();
		ssize_t n;

		if (left <= 0)
			return cd_errf(errbuf, errlen, CD_ERR_TIMEOUT,
			               "the torch import did not end in time");
		if (poll(&p, 1, (int)left) < 0) {
			if (errno == EINTR)
				continue;
			return cd_errf(errbuf, errlen, CD_ERR_IO,
			               "waiting for the torch import: poll: %s", strerror(errno));
		}
		if (!p.revents)
			continue;
		n = read(rfd, buf + *len, cap + 1 - *len);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return cd_errf(errbuf, errlen, CD_ERR_IO,
			               "reading from the torch import: %s", strerror(errno));
		if (n == 0)
			break;
		*len += (size_t)n;
		if (*pid == 0 && *len >= sizeof(pid_t))
			memcpy(pid, buf, sizeof(pid_t));
		if (*len > cap)
			return cd_errf(errbuf, errlen, CD_ERR_TOOBIG,
			               "the torch import wrote more than %d KiB",
			               FACTS_TORCH_BG_RECORD_MAX / 1024);
	}
	if (*len <= sizeof(pid_t))
		return cd_errf(errbuf, errlen, CD_ERR_IO,
		               *len < sizeof(pid_t) ? "the torch import could not be started"
		                                    : "the torch import ended without a result");
	buf[*len] = '\0';
	return 0;
}

int facts_torch_bg_run(int lock_fd, int64_t deadline, facts_torch_bg_work_fn work, void *arg,
                       char **record, pid_t *pid, char *errbuf, size_t errlen)
{
	int pfd[2] = {-1, -1}, rc;
	char *buf = NULL;
	size_t len = 0;
	pid_t mid;

	*record = NULL;
	*pid = 0;
	if (pipe2(pfd, O_CLOEXEC) < 0 || (mid = fork()) < 0) {
		rc = cd_errf(errbuf, errlen, CD_ERR_IO, "cannot start the torch import: %s",
		             strerror(errno));
		goto out;
	}
	if (mid == 0) {
		pid_t f;

		close(pfd[0]);
		f = fork();
		if (f == 0)
			finisher_main(pfd[1], lock_fd, work, arg);
		_exit(f < 0 ? 1 : 0);
	}
	/* from here on the lock is the finisher's alone */
	close_fd(&lock_fd);
	close_fd(&pfd[1]);
	reap_middle(mid);
	buf = cd_malloc(sizeof(pid_t) + FACTS_TORCH_BG_RECORD_MAX + 2);
	rc = read_record(pfd[0], deadline, buf, &len, pid, errbuf, errlen);
	if (rc == 0) {
		*record = cd_strdup(buf + sizeof(pid_t));
	}
out:
	close_fd(&lock_fd);
	close_fd(&pfd[0]);
	close_fd(&pfd[1]);
	free(buf);
	return rc;
}
