/*
 * suspend.h - job control for a head that drives agents: a Ctrl-Z
 * (SIGTSTP) does not count as a dead head.
 *
 * The agents end their jobs when the head falls silent (docs/protocol.md,
 * "keepalive"). A head the user suspends with Ctrl-Z is silent but will come
 * back, so before it stops it tells every live agent to hold
 * (sshpool_keepalive_hold, SUSPEND_HOLD_MS), then stops itself with the
 * default action, as if it had not caught the signal. On SIGCONT (after a
 * Ctrl-Z, `fg`/`bg`, or a `kill -STOP` it could not catch) it sends every
 * agent an ordinary keepalive at once, which ends a hold, and goes on; the
 * time it was stopped does not count against its deadlines (loop.h, the
 * stall rule).
 *
 * SIGTTIN and SIGTTOU are not caught: blocking them (signals.h) would make
 * a background head's terminal read fail and its write go through, not
 * stop it; the head reads no terminal while it waits for agents.
 */
#ifndef CD_SUSPEND_H
#define CD_SUSPEND_H

#include <stddef.h>

#include "loop.h"
#include "sshpool.h"

/* How long a head suspended with Ctrl-Z may stay stopped before the agents
 * end its jobs: the agents' cap on a hold (agent/agent.c). */
#define SUSPEND_HOLD_MS (60 * 60 * 1000)
/* From the hold to the stop: the loop turns meanwhile, so the hold lines
 * leave the head before it stops. Shorter than the keepalive interval: no
 * periodic keepalive goes out in between to end the hold
 * (sshpool_keepalive_hold). */
#define SUSPEND_FLUSH_MS 100

struct suspend;

/*
 * Catch SIGTSTP and SIGCONT on loop for pool's agents (pool is borrowed and
 * must outlive the result). NULL with err when the signals cannot be
 * watched; nothing is caught then, and a Ctrl-Z stops the head as before.
 */
struct suspend *suspend_new(struct loop *loop, struct sshpool *pool, char *err, size_t errlen);

/* Stop catching. NULL is a no-op. */
void suspend_free(struct suspend *s);

#endif
