/*
 * phase.c - phase_done and phase_wait (phase.h).
 */
#include "phase.h"

void phase_done(void *arg)
{
	struct phase *ph = arg;

	ph->done = 1;
	loop_stop(ph->loop);
}

void phase_wait(struct phase *ph)
{
	if (!ph->done)
		loop_run(ph->loop);
	ph->done = 0;
}
