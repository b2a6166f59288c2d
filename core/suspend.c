/* SPDX-License-Identifier: MIT */
/*
 * suspend.c - Ctrl-Z without losing the agents (suspend.h).
 */
#include "suspend.h"

#include <signal.h>
#include <stdlib.h>

#include "cd.h"
#include "signals.h"

struct suspend {
	struct loop *loop;
	const struct suspend_ops *ops;
	void *arg;
	struct signals *sig;
	uint64_t stop_timer; /* a Ctrl-Z whose hold is on its way */
};

/* Stop the process as SIGTSTP's default action would, then go on: the
 * signal is blocked (signals.h), so it is unblocked for the raise and
 * blocked again once the process runs again. */
static void stop_self(void)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL}, old;
	sigset_t tstp;

	sigemptyset(&tstp);
	sigaddset(&tstp, SIGTSTP);
	sigaction(SIGTSTP, &dfl, &old);
	raise(SIGTSTP); /* pending while blocked */
	sigprocmask(SIG_UNBLOCK, &tstp, NULL);
	/* stopped here until SIGCONT */
	sigprocmask(SIG_BLOCK, &tstp, NULL);
	sigaction(SIGTSTP, &old, NULL);
}

static void on_stop_timer(struct loop *loop, void *arg)
{
	struct suspend *s = arg;
	int64_t t0 = cd_now_ms();

	s->stop_timer = 0;
	if (s->ops->before_stop)
		s->ops->before_stop(s->arg);
	stop_self();
	/* the loop cannot see a stop inside a callback by itself */
	loop_note_stall(loop, cd_now_ms() - t0);
	if (s->ops->after_resume)
		s->ops->after_resume(s->arg);
}

static void on_signal(struct signals *sg, int sig, void *arg)
{
	struct suspend *s = arg;

	if (sig == SIGCONT) {
		/* an ordinary keepalive now: ends a hold, and tells agents that
		 * waited out a `kill -STOP` in their grace that the head is back */
		s->ops->hold(s->arg, 0);
		return;
	}
	if (s->stop_timer)
		return; /* a second Ctrl-Z before the first took effect */
	s->ops->hold(s->arg, SUSPEND_HOLD_MS);
	s->stop_timer = loop_timer_add(s->loop, SUSPEND_FLUSH_MS, on_stop_timer, s);
}

struct suspend *suspend_new(struct loop *loop, const struct suspend_ops *ops, void *arg, char *err,
                            size_t errlen)
{
	static const int sigs[] = {SIGTSTP, SIGCONT};
	struct suspend *s = cd_calloc(1, sizeof(*s));

	s->loop = loop;
	s->ops = ops;
	s->arg = arg;
	s->sig = signals_new(loop, sigs, CD_ARRAY_LEN(sigs), on_signal, s, err, errlen);
	if (!s->sig) {
		free(s);
		return NULL;
	}
	return s;
}

void suspend_free(struct suspend *s)
{
	if (!s)
		return;
	if (s->stop_timer)
		loop_timer_cancel(s->loop, s->stop_timer);
	signals_free(s->sig);
	free(s);
}
