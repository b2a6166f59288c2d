/* SPDX-License-Identifier: MIT */
/*
 * signals.h - signals as events of the loop (loop.h): the signals asked
 * for are blocked and read from a signalfd the loop watches, so a SIGINT
 * or SIGTERM is handled by a callback on the loop's thread, between two
 * other callbacks, never in the middle of one (no async-signal-safety to
 * keep, no state half-written).
 *
 * The mask is the process's (the head is single-threaded); children that
 * start while it is blocked inherit it, so a Ctrl-C at the terminal, which
 * reaches the whole foreground group, does not kill the ssh children that
 * carry the answers the head waits for. signals_free unblocks: a signal
 * that arrived and was not read then takes its default action.
 */
#ifndef CD_SIGNALS_H
#define CD_SIGNALS_H

#include <stddef.h>

#include "loop.h"

struct signals;

/* sig arrived (one call per signal, in order). */
typedef void (*signals_cb)(struct signals *s, int sig, void *arg);

/*
 * Block sigs (n of them) and deliver them to cb on loop. NULL with err when
 * the signalfd cannot be made; nothing is blocked then.
 */
struct signals *signals_new(struct loop *loop, const int *sigs, size_t n, signals_cb cb, void *arg,
                            char *err, size_t errlen);

/* Stop watching, close the fd, restore the mask as it was before
 * signals_new. NULL is a no-op. */
void signals_free(struct signals *s);

/* The conventional exit status of a command ended by sig: 128 + sig
 * (130 for SIGINT, 143 for SIGTERM). */
int signals_exit_status(int sig);

#endif
