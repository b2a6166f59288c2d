/* SPDX-License-Identifier: MIT */
/*
 * session_hang.c - the TUI's live hang inspection (session.h): the flow of
 * `clusterdoc hang` (hang/hang.h) run in rounds on the session's
 * nodes while the Hang view is open, each round with its own pool, freed
 * from a timer before the next round, never inside the flow's callbacks.
 */
#include "session.h"

#include <string.h>

static void round_stop(struct tui_session *s)
{
	s->hang_freeing = 1;
	sshpool_free(s->hang_pool); /* first: it fails what is pending, into the flow */
	s->hang_pool = NULL;
	hang_free(s->hang);
	s->hang = NULL;
	s->hang_freeing = 0;
}

static void on_hang_phase(void *arg, const char *what)
{
	struct tui_session *s = arg;

	snprintf(s->hang_phase, sizeof(s->hang_phase), "%s", what);
	session_changed(s);
}

static void next_round(struct loop *loop, void *arg);

/* The round's verdict kept, the next round set for after the pause. */
static void round_done(struct tui_session *s)
{
	const json_t *v = hang_verdict(s->hang);

	if (v) {
		json_decref(s->hang_verdict);
		s->hang_verdict = json_deep_copy(v);
		s->hang_verdict_ms = cd_now_ms();
		s->hang_rounds++;
	}
	snprintf(s->hang_phase, sizeof(s->hang_phase), "waiting");
	s->hang_timer = loop_timer_add(s->loop, HANG_ROUND_PAUSE_MS, next_round, s);
	session_changed(s);
}

static void on_hang_done(void *arg)
{
	struct tui_session *s = arg;

	if (s->hang_freeing || !s->hang_open)
		return;
	if (!s->hang) { /* from inside hang_start: round_start takes it */
		s->hang_done_early = 1;
		return;
	}
	round_done(s);
}

static const struct hang_events hang_ev = {.phase = on_hang_phase, .done = on_hang_done};

static int round_start(struct tui_session *s)
{
	round_stop(s);
	s->hang_pool = sshpool_new(s->loop, s->o.pool, s->hang_error, sizeof(s->hang_error));
	if (!s->hang_pool)
		return CD_ERR_IO;
	s->hang_error[0] = 0;
	snprintf(s->hang_phase, sizeof(s->hang_phase), "connect");
	s->hang_done_early = 0;
	s->hang = hang_start(s->loop, s->hang_pool, (const char *const *)s->hosts, s->nhosts,
	                     &s->hang_o, &hang_ev, s);
	if (s->hang_done_early)
		round_done(s);
	return 0;
}

static void next_round(struct loop *loop, void *arg)
{
	struct tui_session *s = arg;

	s->hang_timer = 0;
	if (round_start(s) < 0) {
		snprintf(s->hang_phase, sizeof(s->hang_phase), "stopped");
		session_changed(s); /* the view shows hang_error; h h starts again */
	}
}

int session_hang_open(struct tui_session *s, char *err, size_t errlen)
{
	const struct run_report *r = session_run_report(s);

	if (!s->nhosts)
		return cd_errf(err, errlen, CD_ERR_NOTFOUND, "no nodes: give a hostlist first");
	session_hang_close(s);
	snprintf(s->hang_run, sizeof(s->hang_run), "%s", r ? r->run_id : "");
	hang_opts_init(&s->hang_o);
	s->hang_o.run = s->hang_run[0] ? s->hang_run : NULL;
	s->hang_o.samples = HANG_ROUND_SAMPLES;
	s->hang_o.interval_ms = HANG_ROUND_INTERVAL;
	s->hang_o.request_timeout_ms = s->o.pool->request_timeout_ms;
	s->hang_open = 1;
	if (round_start(s) < 0) {
		s->hang_open = 0;
		return cd_errf(err, errlen, CD_ERR_IO, "%s", s->hang_error);
	}
	return 0;
}

void session_hang_close(struct tui_session *s)
{
	s->hang_open = 0;
	loop_timer_cancel(s->loop, s->hang_timer);
	s->hang_timer = 0;
	round_stop(s);
	json_decref(s->hang_verdict);
	s->hang_verdict = NULL;
	s->hang_rounds = 0;
	s->hang_verdict_ms = 0;
	s->hang_phase[0] = 0;
}
