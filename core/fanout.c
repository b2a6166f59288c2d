/* SPDX-License-Identifier: MIT */
/*
 * fanout.c - the barrier of one phase over many members (fanout.h).
 */
#include "fanout.h"

#include <stdint.h>
#include <stdlib.h>

#include "cd.h"

struct fanout {
	struct loop *loop;
	int *owed; /* per member */
	size_t n;
	long pending; /* the sum of owed */
	int open;
	uint64_t timer; /* done's turn, 0 when none is set */
	fanout_done_cb done;
	void *arg;
};

struct fanout *fanout_new(struct loop *loop, size_t n, fanout_done_cb done, void *arg)
{
	struct fanout *f = cd_calloc(1, sizeof(*f));

	f->loop = loop;
	f->n = n;
	f->owed = cd_calloc(n ? n : 1, sizeof(*f->owed));
	f->done = done;
	f->arg = arg;
	return f;
}

void fanout_free(struct fanout *f)
{
	if (!f)
		return;
	if (f->timer)
		loop_timer_cancel(f->loop, f->timer);
	free(f->owed);
	free(f);
}

/* The timer's turn: the phase ends unless answers were expected since the
 * timer was set (then their settling sets it again). The barrier is left
 * closed before done runs, since done may begin the next phase or free it. */
static void on_turn(struct loop *loop, void *arg)
{
	struct fanout *f = arg;

	f->timer = 0;
	if (!f->open || f->pending > 0)
		return;
	f->open = 0;
	f->done(f->arg);
}

static void schedule(struct fanout *f)
{
	if (f->open && f->pending == 0 && !f->timer)
		f->timer = loop_timer_add(f->loop, 0, on_turn, f);
}

void fanout_expect(struct fanout *f, size_t i, int k)
{
	if (i >= f->n || k <= 0)
		return;
	f->owed[i] += k;
	f->pending += k;
}

static void take(struct fanout *f, size_t i, int k)
{
	if (i >= f->n || f->owed[i] <= 0)
		return;
	if (k > f->owed[i])
		k = f->owed[i];
	f->owed[i] -= k;
	f->pending -= k;
	schedule(f);
}

void fanout_settle(struct fanout *f, size_t i)
{
	take(f, i, 1);
}

void fanout_settle_all(struct fanout *f, size_t i)
{
	if (i < f->n)
		take(f, i, f->owed[i]);
}

int fanout_owed(const struct fanout *f, size_t i)
{
	return i < f->n ? f->owed[i] : 0;
}

long fanout_pending(const struct fanout *f)
{
	return f->pending;
}

void fanout_begin(struct fanout *f)
{
	f->open = 1;
	schedule(f);
}

void fanout_close(struct fanout *f)
{
	f->open = 0;
	if (f->timer)
		loop_timer_cancel(f->loop, f->timer);
	f->timer = 0;
}
