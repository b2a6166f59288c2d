/* SPDX-License-Identifier: MIT */
/*
 * fanout.h - the barrier of one phase over many members (a pool's nodes,
 * and whatever else the phase waits on, such as a download on the head).
 *
 * An orchestrator (netcheck, bench, mnist, the fix flow) runs in phases:
 * it sends each member some requests, and the next phase starts when every
 * answer is in or its member has failed. The barrier keeps the count of
 * answers each member still owes and says when none is left.
 *
 * The rules, the same for every orchestrator:
 *   - fanout_expect(i, k) adds k answers that member i owes.
 *   - fanout_settle(i) takes one answer off member i; fanout_settle_all(i)
 *     all of them (the member failed). Settling a member that owes nothing
 *     does nothing, so an answer is never counted twice.
 *   - The phase is open from fanout_begin until its done callback runs.
 *     While it is open and nothing is owed, done runs on the loop's next
 *     turn (a 0 ms loop timer), never inside fanout_begin, fanout_settle or
 *     the pool callback that settled: the orchestrator may start the next
 *     phase, or free everything, from done.
 *   - When that timer fires, the count is looked at again: answers expected
 *     since it was set are waited for (done runs once they are settled).
 *   - done runs once per fanout_begin. Settling while no phase is open
 *     counts, but runs nothing.
 *
 * Typical use: fanout_new at start; per phase, fanout_expect for each
 * request sent, then fanout_begin; each reply callback calls fanout_settle,
 * each failure fanout_settle_all; done starts the next phase.
 */
#ifndef CD_FANOUT_H
#define CD_FANOUT_H

#include <stddef.h>

#include "loop.h"

struct fanout;

typedef void (*fanout_done_cb)(void *arg);

/* A barrier over members 0..n-1 (n may be 0), owing nothing, no phase
 * open. done(arg) is called from loop as above. */
struct fanout *fanout_new(struct loop *loop, size_t n, fanout_done_cb done, void *arg);
/* Cancels a pending done. fanout_free(NULL) is a no-op. */
void fanout_free(struct fanout *f);

/* Member i owes k (> 0) more answers. */
void fanout_expect(struct fanout *f, size_t i, int k);
/* One answer of member i is in. */
void fanout_settle(struct fanout *f, size_t i);
/* Member i owes nothing more in this phase (it failed, or was closed). */
void fanout_settle_all(struct fanout *f, size_t i);

/* The answers member i still owes (0 when none). */
int fanout_owed(const struct fanout *f, size_t i);
/* The answers all members still owe. */
long fanout_pending(const struct fanout *f);

/* Open a phase: done runs on a later loop turn once nothing is owed (on
 * the next one when nothing is owed now). Beginning an open phase again
 * changes nothing. */
void fanout_begin(struct fanout *f);
/* Close the phase without its done (the orchestrator ended early): a
 * pending done is cancelled and settling runs nothing until the next
 * fanout_begin. */
void fanout_close(struct fanout *f);

#endif
