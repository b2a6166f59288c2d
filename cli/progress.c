/* SPDX-License-Identifier: MIT */
/* progress.c - see progress.h. */
#include "progress.h"

#include "cd.h"
#include "termtext.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

struct progress {
	struct loop *loop;
	const char *cmd;
	progress_sample_fn sample;
	void *arg;
	uint64_t timer;
	char phase[32];   /* the phase the last sample named */
	int64_t phase_ms; /* when it began */
};

/* The progress whose line is on the terminal now (one at a time). */
static struct progress *drawn;

void progress_hide(void)
{
	if (!drawn)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	drawn = NULL;
}

static size_t columns(void)
{
	struct winsize ws;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1)
		return ws.ws_col - 1; /* the last column would wrap on some terminals */
	return 79;
}

static void draw(struct progress *p, const struct progress_sample *s)
{
	char line[512];
	int n;
	size_t cols = columns();

	if (strcmp(p->phase, s->phase) != 0) {
		snprintf(p->phase, sizeof(p->phase), "%s", s->phase);
		p->phase_ms = cd_now_ms();
	}
	n = snprintf(line, sizeof(line), "clusterdoc %s: %s, %zu/%zu nodes answered%s%s", p->cmd,
	             s->phase, s->answered, s->total, s->extra[0] ? ", " : "", s->extra);
	/* the time before the name: a narrow terminal cuts the name, not the time */
	if (n > 0 && (size_t)n < sizeof(line) && s->waiting)
		snprintf(line + n, sizeof(line) - (size_t)n, ", waiting %.1f s for %s%s%s%s",
		         (double)(cd_now_ms() - p->phase_ms) / 1000, s->waiting,
		         s->waiting_at ? " (" : "", s->waiting_at ? s->waiting_at : "",
		         s->waiting_at ? ")" : "");
	if (cols < sizeof(line))
		line[cols] = '\0';
	/* node names are node text: no terminal controls reach the screen */
	fputc('\r', stderr);
	termtext_printf(stderr, "%s", line);
	fputs("\033[K", stderr);
	fflush(stderr);
	drawn = p;
}

/* Sample and redraw; 0 when the command is done (the line erased). */
static int redraw(struct progress *p)
{
	struct progress_sample s = {0};

	p->sample(p->arg, &s);
	if (!s.phase) {
		if (drawn == p)
			progress_hide();
		return 0;
	}
	draw(p, &s);
	return 1;
}

static void on_tick(struct loop *loop, void *arg)
{
	struct progress *p = arg;

	p->timer = 0;
	if (redraw(p))
		p->timer = loop_timer_add(loop, PROGRESS_TICK_MS, on_tick, p);
}

struct progress *progress_start(struct loop *loop, const char *cmd, progress_sample_fn sample,
                                void *arg)
{
	struct progress *p;

	if (!isatty(STDERR_FILENO))
		return NULL;
	p = cd_calloc(1, sizeof(*p));
	p->loop = loop;
	p->cmd = cmd;
	p->sample = sample;
	p->arg = arg;
	p->phase_ms = cd_now_ms();
	if (redraw(p))
		p->timer = loop_timer_add(loop, PROGRESS_TICK_MS, on_tick, p);
	return p;
}

void progress_poke(struct progress *p)
{
	if (p && p->timer)
		redraw(p);
}

void progress_end(struct progress *p)
{
	if (!p)
		return;
	loop_timer_cancel(p->loop, p->timer);
	if (drawn == p)
		progress_hide();
	free(p);
}
