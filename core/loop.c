/* SPDX-License-Identifier: MIT */
/* loop.c - poll() event loop with timers (see loop.h). */
#include "loop.h"
#include "cd.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

struct watcher {
	uint64_t id; /* new for every registration, so stale events are not delivered */
	int fd;
	short events;
	loop_fd_cb cb;
	void *arg;
};

struct timer {
	uint64_t id;
	int64_t due_ms;
	loop_timer_cb cb;
	void *arg;
};

struct loop {
	struct watcher *w;
	size_t nw, capw;
	struct timer *t;
	size_t nt, capt;
	uint64_t next_timer_id;
	struct pollfd *pfd; /* scratch for poll(), sized like w */
	uint64_t *pfd_id;   /* the watcher each pfd entry was taken from */
	uint64_t next_watcher_id;
	int stopped;
	int64_t turn_start_us;
	int64_t firing_late_ms; /* the running timer's lateness, else 0 */
	int lag_tick_ms;        /* loop_watch_lag; 0: off */
	int stall_ms;           /* loop_watch_stall; 0: off */
	int stalled;            /* a stall was seen: the next dispatch is fds only */
	struct loop_stats stats;
};

struct loop *loop_new(void)
{
	struct loop *loop = cd_calloc(1, sizeof(*loop));

	loop->next_timer_id = 1;
	loop->stall_ms = LOOP_STALL_MS;
	return loop;
}

void loop_free(struct loop *loop)
{
	if (!loop)
		return;
	free(loop->w);
	free(loop->t);
	free(loop->pfd);
	free(loop->pfd_id);
	free(loop);
}

static struct watcher *watcher_find(struct loop *loop, int fd)
{
	for (size_t i = 0; i < loop->nw; i++)
		if (loop->w[i].fd == fd)
			return &loop->w[i];
	return NULL;
}

int loop_watch(struct loop *loop, int fd, short events, loop_fd_cb cb, void *arg)
{
	struct watcher *w;

	if (!events) {
		loop_unwatch(loop, fd);
		return 0;
	}
	w = watcher_find(loop, fd);
	if (!w) {
		if (loop->nw == loop->capw) {
			loop->capw = loop->capw ? loop->capw * 2 : 16;
			loop->w = cd_realloc(loop->w, loop->capw * sizeof(*loop->w));
			loop->pfd = cd_realloc(loop->pfd, loop->capw * sizeof(*loop->pfd));
			loop->pfd_id = cd_realloc(loop->pfd_id, loop->capw * sizeof(*loop->pfd_id));
		}
		w = &loop->w[loop->nw++];
		w->fd = fd;
		w->id = ++loop->next_watcher_id;
	} else if (w->cb != cb || w->arg != arg) {
		w->id = ++loop->next_watcher_id; /* a new owner of a reused fd number */
	}
	w->events = events;
	w->cb = cb;
	w->arg = arg;
	return 0;
}

void loop_unwatch(struct loop *loop, int fd)
{
	struct watcher *w = watcher_find(loop, fd);

	if (w)
		*w = loop->w[--loop->nw];
}

uint64_t loop_timer_add(struct loop *loop, int64_t delay_ms, loop_timer_cb cb, void *arg)
{
	struct timer *t;

	if (loop->nt == loop->capt) {
		loop->capt = loop->capt ? loop->capt * 2 : 16;
		loop->t = cd_realloc(loop->t, loop->capt * sizeof(*loop->t));
	}
	t = &loop->t[loop->nt++];
	t->id = loop->next_timer_id++;
	t->due_ms = cd_now_ms() + (delay_ms > 0 ? delay_ms : 0);
	t->cb = cb;
	t->arg = arg;
	return t->id;
}

void loop_timer_cancel(struct loop *loop, uint64_t id)
{
	for (size_t i = 0; i < loop->nt; i++) {
		if (loop->t[i].id == id) {
			loop->t[i] = loop->t[--loop->nt];
			return;
		}
	}
}

static void note_late(struct loop *loop, int64_t late_ms)
{
	if (late_ms > loop->stats.max_late_ms)
		loop->stats.max_late_ms = late_ms;
}

/* Fire one expired timer (the earliest). Returns 1 if one fired. Removing it
 * before the call lets the callback add or cancel timers freely. */
static int timer_fire_one(struct loop *loop, int64_t now, uint64_t id_limit)
{
	size_t best = loop->nt;
	struct timer t;

	for (size_t i = 0; i < loop->nt; i++)
		if (loop->t[i].due_ms <= now && loop->t[i].id < id_limit &&
		    (best == loop->nt || loop->t[i].due_ms < loop->t[best].due_ms))
			best = i;
	if (best == loop->nt)
		return 0;
	t = loop->t[best];
	loop->t[best] = loop->t[--loop->nt];
	/* measured now, not at the turn's start: the callbacks before this
	 * one delayed it too */
	loop->firing_late_ms = cd_now_ms() - t.due_ms;
	if (loop->firing_late_ms < 0)
		loop->firing_late_ms = 0;
	note_late(loop, loop->firing_late_ms);
	t.cb(loop, t.arg);
	loop->firing_late_ms = 0;
	return 1;
}

int64_t loop_timer_late_ms(const struct loop *loop)
{
	return loop->firing_late_ms;
}

static int next_timeout(const struct loop *loop, int max_wait_ms)
{
	int64_t now = cd_now_ms(), wait = max_wait_ms;

	for (size_t i = 0; i < loop->nt; i++) {
		int64_t d = loop->t[i].due_ms - now;

		if (d < 0)
			d = 0;
		if (wait < 0 || d < wait)
			wait = d;
	}
	return wait > 1000000 ? 1000000 : (int)wait;
}

/* How long the callbacks of this turn kept the loop from polling. */
static void turn_end(struct loop *loop)
{
	int64_t us = cd_now_us() - loop->turn_start_us;

	loop->stats.turns++;
	if (us > loop->stats.max_turn_us)
		loop->stats.max_turn_us = us;
}

void loop_note_stall(struct loop *loop, int64_t gap_ms)
{
	if (gap_ms <= 0)
		return;
	for (size_t i = 0; i < loop->nt; i++)
		loop->t[i].due_ms += gap_ms;
	note_late(loop, gap_ms);
	loop->stalled = 1;
}

void loop_watch_stall(struct loop *loop, int stall_ms)
{
	loop->stall_ms = stall_ms > 0 ? stall_ms : 0;
}

int loop_run_once(struct loop *loop, int max_wait_ms)
{
	int ran = 0, n, timeout;
	size_t nfds = loop->nw;
	int64_t now, lag_due = 0, wake_due = -1;
	uint64_t id_limit;

	if (!loop->nw && !loop->nt)
		return 0;
	timeout = next_timeout(loop, max_wait_ms);
	if (loop->lag_tick_ms > 0) {
		if (timeout < 0 || timeout > loop->lag_tick_ms)
			timeout = loop->lag_tick_ms;
		/* a healthy process is back from poll by then at the latest */
		lag_due = cd_now_ms() + timeout;
	}
	if (timeout >= 0)
		wake_due = cd_now_ms() + timeout;
	for (size_t i = 0; i < nfds; i++) {
		loop->pfd[i].fd = loop->w[i].fd;
		loop->pfd[i].events = loop->w[i].events;
		loop->pfd[i].revents = 0;
		loop->pfd_id[i] = loop->w[i].id;
	}
	n = poll(loop->pfd, nfds, timeout);
	if (n < 0 && errno != EINTR)
		cd_fatal("poll: %s", strerror(errno));

	now = cd_now_ms();
	loop->turn_start_us = cd_now_us();
	if (lag_due && now > lag_due)
		note_late(loop, now - lag_due);
	if (wake_due >= 0 && loop->stall_ms && now - wake_due >= loop->stall_ms)
		loop_note_stall(loop, now - wake_due);
	/* Only timers that existed before this turn: one a callback adds with
	 * delay 0 waits for the next turn, so timers cannot starve the fds.
	 * After a stall, none: the fds first (loop_watch_stall). */
	id_limit = loop->stalled ? 0 : loop->next_timer_id;
	loop->stalled = 0;
	while (timer_fire_one(loop, now, id_limit))
		ran++;

	for (size_t i = 0; n > 0 && i < nfds; i++) {
		struct watcher *w;

		if (!loop->pfd[i].revents)
			continue;
		/* A previous callback (or a timer) may have removed this fd, or
		 * closed it and registered the same number for someone else:
		 * those events were not for the new owner. */
		w = watcher_find(loop, loop->pfd[i].fd);
		if (!w || w->id != loop->pfd_id[i])
			continue;
		w->cb(loop, w->fd, loop->pfd[i].revents, w->arg);
		ran++;
	}
	turn_end(loop);
	return ran ? ran : 1;
}

void loop_stats(const struct loop *loop, struct loop_stats *st)
{
	*st = loop->stats;
}

void loop_watch_lag(struct loop *loop, int tick_ms)
{
	loop->lag_tick_ms = tick_ms > 0 ? tick_ms : 0;
}

void loop_stats_reset(struct loop *loop)
{
	memset(&loop->stats, 0, sizeof(loop->stats));
}

void loop_run(struct loop *loop)
{
	loop->stopped = 0;
	while (!loop->stopped && loop_run_once(loop, -1) > 0)
		;
}

void loop_stop(struct loop *loop)
{
	loop->stopped = 1;
}
