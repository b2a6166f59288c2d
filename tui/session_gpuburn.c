/* SPDX-License-Identifier: MIT */
/*
 * session_gpuburn.c - the Bench view's GPU stress (g): `clusterdoc
 * gpu-burn` (collectives/gpuburn.h) on the session's nodes, on its own
 * pool, as the bench runs on its own (session.h).
 */
#include "session.h"

#include <stdio.h>
#include <string.h>

void session_burn_clear(struct tui_session *s)
{
	/* the pool first, as cmd_gpuburn does: it fails what is pending into
	 * the flow's callbacks while the flow lives */
	sshpool_free(s->burn_pool);
	s->burn_pool = NULL;
	gpuburn_free(s->burn);
	s->burn = NULL;
	s->burn_phase[0] = 0;
	s->burn_state = TASK_IDLE;
}

static void on_burn_phase(void *arg, const char *what)
{
	struct tui_session *s = arg;

	snprintf(s->burn_phase, sizeof(s->burn_phase), "%s", what);
	session_changed(s);
}

static void on_burn_done(void *arg)
{
	struct tui_session *s = arg;
	const json_t *rep = gpuburn_report(s->burn);

	/* exit 2: no GPU was measured anywhere */
	s->burn_state =
	    rep && json_integer_value(json_object_get(rep, "exit")) < 2 ? TASK_DONE : TASK_FAILED;
	s->burn_ended_ms = cd_now_ms();
	session_changed(s);
}

static const struct gpuburn_events burn_events = {.phase = on_burn_phase, .done = on_burn_done};

int session_burn_start(struct tui_session *s, char *err, size_t errlen)
{
	if (s->burn_state == TASK_RUNNING)
		return cd_errf(err, errlen, CD_ERR_REFUSED, "gpu-burn is running already");
	if (!s->nhosts)
		return cd_errf(err, errlen, CD_ERR_NOTFOUND, "no nodes: give a hostlist first");
	session_burn_clear(s);
	s->burn_started_ms = cd_now_ms(); /* the view shows it, started or not */
	s->burn_ended_ms = 0;
	s->burn_pool = sshpool_new(s->loop, s->o.pool, s->burn_error, sizeof(s->burn_error));
	if (!s->burn_pool) {
		s->burn_state = TASK_FAILED;
		return cd_errf(err, errlen, CD_ERR_IO, "%s", s->burn_error);
	}
	s->burn_error[0] = 0;
	s->burn_state = TASK_RUNNING;
	s->o.burn.request_timeout_ms = s->o.pool->request_timeout_ms;
	s->o.burn.python = s->o.check.python;
	s->burn = gpuburn_start(s->loop, s->burn_pool, (const char *const *)s->hosts, s->nhosts,
	                        &s->o.burn, &burn_events, s);
	session_changed(s);
	return 0;
}

const json_t *session_burn_report(const struct tui_session *s)
{
	return s->burn ? gpuburn_report(s->burn) : NULL;
}

int session_burn_shown(const struct tui_session *s)
{
	return s->burn_state != TASK_IDLE &&
	       (s->bench_state == TASK_IDLE || s->burn_started_ms >= s->bench_started_ms);
}
