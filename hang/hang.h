/* SPDX-License-Identifier: MIT */
/*
 * hang.h - `clusterdoc hang` from the head's event loop: inspect a running
 * job on every node and say where it hangs.
 *
 * Phases (each waits for every live node, core/fanout):
 *   1. connect  the nodes join the pool (their agents start)
 *   2. sample   `hang_sample` (hang/hang_agent.h) on every ready node,
 *               opts.samples times, opts.interval_ms apart; the last one asks
 *               for stacks (the hang-ready dump signal, py-spy) when
 *               opts.stacks is set
 *   3. analyse  hang_analyze (hang/hang_analyze.h) over the samples
 * A node that fails is recorded with its reason and left out of the later
 * samples; the others go on. Nothing on the nodes is changed.
 */
#ifndef CD_COLLECTIVES_HANG_H
#define CD_COLLECTIVES_HANG_H

#include "loop.h"
#include "sshpool.h"

#include <jansson.h>
#include <stddef.h>

struct hang_opts {
	const char *run;        /* a `clusterdoc run` id (--run), or NULL: any torch job */
	int samples;            /* default 2, at least 2 */
	int interval_ms;        /* between samples; default 2000 */
	int stacks;             /* the last sample asks for Python stacks; default 1 */
	int request_timeout_ms; /* of each hang_sample, from the pool */
};

void hang_opts_init(struct hang_opts *o);

struct hang_events {
	void (*phase)(void *arg, const char *what); /* "connect", "sample 1"..., "analyse" */
	void (*done)(void *arg);                    /* read hang_verdict */
};

struct hang;

/* Start on loop with pool (the caller's; hosts are added to it). o and ev
 * must outlive the flow; hosts are copied by the pool. */
struct hang *hang_start(struct loop *loop, struct sshpool *pool, const char *const *hosts,
                        size_t nhosts, const struct hang_opts *o, const struct hang_events *ev,
                        void *arg);
/* The verdict (hang_analyze.h's object) once done; NULL before. Borrowed. */
const json_t *hang_verdict(const struct hang *h);
/* hang_free(NULL) is a no-op. Free the pool first: it fails what is pending. */
void hang_free(struct hang *h);

#endif
