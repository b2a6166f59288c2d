/*
 * phase.h - run the event loop until one asynchronous phase (a gather, an
 * apply) calls back: pass phase_done and the phase as done/arg.
 */
#ifndef CD_CLI_PHASE_H
#define CD_CLI_PHASE_H

#include "loop.h"

struct phase {
	struct loop *loop;
	int done;
};

/* The phase's done callback: stops the loop. */
void phase_done(void *arg);
/* Run the loop until phase_done was called (at once if it already was). */
void phase_wait(struct phase *ph);

#endif
