/* SPDX-License-Identifier: MIT */
/*
 * loop.h - the one poll() event loop: fd watchers and one-shot timers.
 *
 * Everything that waits in clusterdoc waits here: SSH sockets, agent pipes,
 * child processes, the terminal, curl's sockets, deadlines. Callbacks run on
 * the loop's thread and must not block. Watchers and timers may be added or
 * removed from inside callbacks (including the running one).
 */
#ifndef CD_LOOP_H
#define CD_LOOP_H

#include <stdint.h>

struct loop;

/* revents is poll()'s revents for fd (POLLIN, POLLOUT, POLLERR, POLLHUP...). */
typedef void (*loop_fd_cb)(struct loop *loop, int fd, short revents, void *arg);
typedef void (*loop_timer_cb)(struct loop *loop, void *arg);

struct loop *loop_new(void);
/* Frees the loop; watchers and timers still registered are dropped, their
 * fds are not closed. loop_free(NULL) is a no-op. */
void loop_free(struct loop *loop);

/*
 * Watch fd for events (POLLIN|POLLOUT). Calling it again for the same fd
 * replaces events, callback and arg. events == 0 removes the watcher (same
 * as loop_unwatch). Returns 0.
 */
int loop_watch(struct loop *loop, int fd, short events, loop_fd_cb cb, void *arg);
void loop_unwatch(struct loop *loop, int fd);

/* A one-shot timer firing after delay_ms (>= 0). Returns a non-zero id. */
uint64_t loop_timer_add(struct loop *loop, int64_t delay_ms, loop_timer_cb cb, void *arg);
/* Cancel a timer; unknown or already fired ids (and 0) are ignored. */
void loop_timer_cancel(struct loop *loop, uint64_t id);
/* Inside a timer's callback: how many ms past its due time it fired (0
 * elsewhere). */
int64_t loop_timer_late_ms(const struct loop *loop);

/*
 * Wait at most max_wait_ms (-1 = until something happens) and dispatch what
 * is ready: expired timers first, then fds. Returns the number of callbacks
 * run, or 0 when there was nothing to wait for.
 */
int loop_run_once(struct loop *loop, int max_wait_ms);

/* Run until loop_stop() is called or nothing is left to wait for. */
void loop_run(struct loop *loop);
void loop_stop(struct loop *loop);

/*
 * How long callbacks kept the loop busy: a key typed while a turn runs waits
 * at most that turn's length before it is read. max_late_ms is the loop's
 * lag: the worst delay of a timer past its due time, from long turns or from
 * a process that did not get the CPU (an overloaded machine, SIGSTOP); a
 * deadline that fired that late measured the head's delay as much as the
 * peer's. Counted since loop_new or the last loop_stats_reset.
 */
struct loop_stats {
	uint64_t turns;      /* turns that dispatched (poll returned) */
	int64_t max_turn_us; /* the longest, from poll's return to the last callback's */
	int64_t max_late_ms; /* the worst delay of a timer past its due time */
};
void loop_stats(const struct loop *loop, struct loop_stats *st);
/* Measure the lag also when no timer is due: poll waits at most tick_ms, and
 * a wake later than that (the process was not scheduled, or stopped) counts
 * in max_late_ms like a late timer. Adds no timer, so loop_run still ends
 * when nothing else is left. tick_ms <= 0: off (the default). */
void loop_watch_lag(struct loop *loop, int tick_ms);
void loop_stats_reset(struct loop *loop);

/*
 * The stall rule: time the loop did not run (the process stopped by
 * SIGSTOP or Ctrl-Z, or not scheduled at all) is not counted against its
 * deadlines. When poll returns stall_ms or more past the moment it was due
 * back (its timeout, at most loop_watch_lag's tick), that gap is a stall:
 * every timer moves later by the gap, and that turn dispatches only the
 * fds, so a reply that arrived while the process was stopped is read before
 * any deadline is judged. The gap still counts in max_late_ms. Default
 * LOOP_STALL_MS; stall_ms <= 0 turns the rule off.
 */
#define LOOP_STALL_MS 5000
void loop_watch_stall(struct loop *loop, int stall_ms);

/* Tell the loop it did not run for gap_ms that it could not see itself (a
 * callback stopped the process on purpose, as a Ctrl-Z does): the same as
 * a stall of gap_ms seen by poll. gap_ms <= 0 is ignored. */
void loop_note_stall(struct loop *loop, int64_t gap_ms);

#endif
