/* SPDX-License-Identifier: MIT */
/*
 * phase.c - phase_done, phase_wait and phase_say (phase.h).
 */
#include "phase.h"

#include <stdio.h>
#include <string.h>

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

void phase_say(const struct phase_words *words, size_t n, const char *what)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(words[i].phase, what) == 0)
			fprintf(stderr, "# %s\n", words[i].text);
	}
}
