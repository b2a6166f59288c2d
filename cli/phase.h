/* SPDX-License-Identifier: MIT */
/*
 * phase.h - run the event loop until one asynchronous phase (a gather, an
 * apply) calls back: pass phase_done and the phase as done/arg.
 */
#ifndef CD_CLI_PHASE_H
#define CD_CLI_PHASE_H

#include "loop.h"

#include <stddef.h>

struct phase {
	struct loop *loop;
	int done;
};

/* The phase's done callback: stops the loop. */
void phase_done(void *arg);
/* Run the loop until phase_done was called (at once if it already was). */
void phase_wait(struct phase *ph);

/* What a command prints on stderr when its flow enters a phase. */
struct phase_words {
	const char *phase, *text;
};
/* "# TEXT" on stderr for the phase named what; nothing for a phase not in words. */
void phase_say(const struct phase_words *words, size_t n, const char *what);

#endif
