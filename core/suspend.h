/* SPDX-License-Identifier: MIT */
/*
 * suspend.h - job control for a head that drives agents: a Ctrl-Z
 * (SIGTSTP) does not count as a dead head.
 *
 * The agents end their jobs when the head falls silent (docs/protocol.md,
 * "keepalive"). A head the user suspends with Ctrl-Z is silent but will come
 * back, so before it stops it tells every live agent to hold (its ops' hold:
 * sshpool_keepalive_hold, SUSPEND_HOLD_MS), gives the terminal back (the
 * TUI), then stops itself with the default action, as if it had not caught
 * the signal. On SIGCONT (after a Ctrl-Z, `fg`/`bg`, or a `kill -STOP` it
 * could not catch) it sends every agent an ordinary keepalive at once, which
 * ends a hold, and goes on; the time it was stopped does not count against
 * its deadlines (loop.h, the stall rule).
 *
 * SIGTTIN and SIGTTOU are left alone: blocked, they would make a background
 * head's terminal read fail and its write go through instead of stopping it.
 */
#ifndef CD_SUSPEND_H
#define CD_SUSPEND_H

#include <stddef.h>

#include "loop.h"

/* How long a head suspended with Ctrl-Z may stay stopped before the agents
 * end its jobs: the agents' cap on a hold (agent/agent.c). */
#define SUSPEND_HOLD_MS (60 * 60 * 1000)
/* From the hold to the stop: the loop turns meanwhile, so the hold lines
 * leave the head before it stops. Shorter than the keepalive interval: no
 * periodic keepalive goes out in between to end the hold
 * (sshpool_keepalive_hold). */
#define SUSPEND_FLUSH_MS 100

struct suspend;

/* What a head does around its stop; arg is suspend_new's. */
struct suspend_ops {
	/* Tell every live agent to hold for hold_ms (sshpool_keepalive_hold);
	 * hold_ms 0: the head is back, an ordinary keepalive now. */
	void (*hold)(void *arg, int hold_ms);
	/* Optional: just before the stop (the TUI gives the terminal back)
	 * and just after it (the TUI takes it again and redraws). */
	void (*before_stop)(void *arg);
	void (*after_resume)(void *arg);
};

/*
 * Catch SIGTSTP and SIGCONT on loop (ops and arg are borrowed and must
 * outlive the result). NULL with err when the signals cannot be watched;
 * nothing is caught then, and a Ctrl-Z stops the head as before.
 */
struct suspend *suspend_new(struct loop *loop, const struct suspend_ops *ops, void *arg, char *err,
                            size_t errlen);

/* Stop catching. NULL is a no-op. */
void suspend_free(struct suspend *s);

#endif
