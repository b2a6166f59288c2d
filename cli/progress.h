/* SPDX-License-Identifier: MIT */
/*
 * progress.h - the one line of progress `facts`, `check` and `bench` keep
 * on stderr while they wait, on a terminal only: the phase, how many nodes
 * answered out of how many, and the node waited for the longest ("clusterdoc
 * check: probe, 3/4 nodes answered, waiting 2.1 s for node4 (connecting)"; the
 * time counts from the phase's start).
 * Redrawn in place (carriage return, erase to the end of the line) from a
 * loop timer and when the command pokes it, and erased at the end, so that
 * nothing of it stays in a terminal's scrollback or reaches a pipe or file.
 */
#ifndef CD_CLI_PROGRESS_H
#define CD_CLI_PROGRESS_H

#include "loop.h"

#include <stddef.h>

/* What the command says of itself at each redraw. */
struct progress_sample {
	const char *phase;      /* "connecting", "facts", "probe", ...; NULL: done */
	size_t answered, total; /* nodes that answered this phase (or failed), of total */
	const char *waiting;    /* the node waited for the longest, or NULL */
	const char *waiting_at; /* where that node is ("connecting"), or NULL */
	char extra[64];         /* more of the phase ("sizes 3/24"), or "" */
};
typedef void (*progress_sample_fn)(void *arg, struct progress_sample *s);

/*
 * Start the line for cmd on loop: sample(arg, s) fills s at each redraw
 * (every PROGRESS_TICK_MS while the loop runs, and at progress_poke). NULL
 * when stderr is not a terminal: every function below takes NULL and does
 * nothing. The timer stops when a sample says done (phase NULL) and at
 * progress_end, so it never keeps a loop alive by itself for longer than a
 * tick.
 */
#define PROGRESS_TICK_MS 200
struct progress *progress_start(struct loop *loop, const char *cmd, progress_sample_fn sample,
                                void *arg);
/* Redraw now (a node answered, the phase moved). */
void progress_poke(struct progress *p);
/* Erase the line, stop the timer and free p. */
void progress_end(struct progress *p);

/* Erase the line while it is drawn, before other stderr output (the -v
 * trace, messages); the next redraw draws it again. */
void progress_hide(void);

#endif
