/*
 * hang_agent_internal.h - what hang_agent.c and hang_agent_stacks.c share:
 * the stacks part of `hang_sample` (hang_agent.h).
 */
#ifndef CD_PROBES_HANG_AGENT_INTERNAL_H
#define CD_PROBES_HANG_AGENT_INTERNAL_H

#include <jansson.h>
#include <stddef.h>

/* The py-spy on PATH or in ~/.local/bin into path: 1, or 0 when none. */
int hang_agent_find_pyspy(char *path, size_t len);

/*
 * Stacks for every "role":"rank" process of procs (their "_pythonpath" key
 * holds their PYTHONPATH): a hang-ready `clusterdoc run` rank gets its dump
 * signal (SIGUSR2, to its exact PID; all of them first, then one wait of
 * at most wait_ms for their stacks files to grow); else py-spy (pyspy, NULL
 * when none) under a 5 s deadline; else a note saying how to get stacks.
 * Sets "stacks", "stacks_how", "stacks_note" (and "stacks_truncated") on
 * each.
 */
void hang_agent_collect_stacks(json_t *procs, const char *pyspy, int wait_ms);

#endif
