/* SPDX-License-Identifier: MIT */
/*
 * signals.c - signals as loop events through a signalfd (signals.h).
 */
#include "signals.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "cd.h"

struct signals {
	struct loop *loop;
	int fd;
	sigset_t old; /* the mask before signals_new */
	signals_cb cb;
	void *arg;
};

static void on_readable(struct loop *loop, int fd, short revents, void *arg)
{
	struct signals *s = arg;
	struct signalfd_siginfo si;

	/* one per turn: the callback may free s */
	if (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		s->cb(s, (int)si.ssi_signo, s->arg);
}

struct signals *signals_new(struct loop *loop, const int *sigs, size_t n, signals_cb cb, void *arg,
                            char *err, size_t errlen)
{
	struct signals *s = cd_calloc(1, sizeof(*s));
	sigset_t set;

	sigemptyset(&set);
	for (size_t k = 0; k < n; k++)
		sigaddset(&set, sigs[k]);
	if (sigprocmask(SIG_BLOCK, &set, &s->old) != 0) {
		cd_errf(err, errlen, CD_ERR_IO, "cannot block signals: %s", strerror(errno));
		free(s);
		return NULL;
	}
	s->fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (s->fd < 0) {
		cd_errf(err, errlen, CD_ERR_IO, "signalfd: %s", strerror(errno));
		sigprocmask(SIG_SETMASK, &s->old, NULL);
		free(s);
		return NULL;
	}
	s->loop = loop;
	s->cb = cb;
	s->arg = arg;
	loop_watch(loop, s->fd, POLLIN, on_readable, s);
	return s;
}

void signals_free(struct signals *s)
{
	if (!s)
		return;
	loop_unwatch(s->loop, s->fd);
	close(s->fd);
	sigprocmask(SIG_SETMASK, &s->old, NULL);
	free(s);
}

int signals_exit_status(int sig)
{
	return 128 + sig;
}
