/* SPDX-License-Identifier: MIT */
/*
 * screen.c - the TUI's screen manager (tui.h, ui.h): the terminal is one
 * more fd on the head's event loop, next to every SSH socket of the
 * session's tasks. A key is read, handled and drawn in one callback; what
 * the tasks change is drawn by a 100 ms tick, only when something changed.
 */
#include "tui.h"
#include "ui.h"

#include <ctype.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hostlist.h"
#include "secret.h"
#include "suspend.h"

#define TICK_MS    100
#define MESSAGE_MS 6000

static const struct view *const all_views[] = {
    &view_nodes, &view_network, &view_findings, &view_env, &view_bench, &view_job,
};

/* The views opened over any view by a key of their own. */
static const struct overlay *const all_overlays[] = {&overlay_hang};

/* The overlay open now, or NULL. */
static const struct overlay *overlay_open(const struct tui *t)
{
	for (size_t k = 0; k < CD_ARRAY_LEN(all_overlays); k++)
		if (all_overlays[k]->open_now(t))
			return all_overlays[k];
	return NULL;
}

/* ---------------------------------------------------------------- drawing */

static void draw_tabs(struct tui *t)
{
	int x = 0;

	move(0, 0);
	clrtoeol();
	for (size_t i = 0; i < t->nviews && x < COLS; i++) {
		int cur = i == t->cur;

		/* the brackets say which view is current without colours */
		x += ui_print(0, x, COLS - x, cur ? ui_attr(t, UI_TAB) : (int)A_NORMAL,
		              cur ? "[%zu %s]" : " %zu %s ", i + 1, t->views[i]->name);
	}
	if (t->filter[0] && x + 4 < COLS)
		ui_print(0, x + 1, COLS - x - 1, ui_attr(t, UI_WARN), "/%s", t->filter);
}

static void bar_append(char *buf, size_t len, size_t *off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void bar_append(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*off >= len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *off, len - *off, fmt, ap);
	va_end(ap);
	*off = n < 0 ? len : *off + (size_t)n;
}

/* What runs, with its progress; else the last message; else the totals. */
static void status_text(struct tui *t, char *buf, size_t len, int *attr)
{
	struct tui_session *s = &t->s;
	const struct overlay *ov;
	size_t off = 0;

	buf[0] = 0;
	*attr = ui_attr(t, UI_BAR);
	if (s->check_state == TASK_RUNNING) {
		struct check_progress p;

		session_check_progress(s, &p);
		bar_append(buf, len, &off,
		           "check: %s, %zu/%zu connected, %zu/%zu probed, %zu failed  ", p.phase,
		           p.connected, p.nodes, p.probed, p.nodes, p.failed);
	}
	if (s->fix.state == FIXFLOW_PLANNING || s->fix.state == FIXFLOW_APPLYING ||
	    s->fix.state == FIXFLOW_VERIFYING)
		bar_append(buf, len, &off, "fix %s: %s  ", s->fix.only,
		           fixflow_state_name(s->fix.state));
	if (s->bench_state == TASK_RUNNING) {
		struct bench_progress p;
		double secs = (double)(cd_now_ms() - s->bench_started_ms) / 1000;

		bench_progress(s->bench, &p);
		if (strcmp(p.phase, "run") == 0 && p.rounds > 1)
			bar_append(buf, len, &off, "bench: round %d/%d, sizes %zu/%zu, %.0f s  ",
			           p.round, p.rounds, p.sizes_done, p.nsizes, secs);
		else if (strcmp(p.phase, "run") == 0)
			bar_append(buf, len, &off, "bench: run, sizes %zu/%zu, %.0f s  ",
			           p.sizes_done, p.nsizes, secs);
		else
			bar_append(buf, len, &off, "bench: %s %zu/%zu, %.0f s  ", p.phase,
			           p.answered, p.nodes, secs);
	}
	if (s->burn_state == TASK_RUNNING)
		bar_append(buf, len, &off, "gpu-burn: %s, %.0f s  ",
		           s->burn_phase[0] ? s->burn_phase : "starting",
		           (double)(cd_now_ms() - s->burn_started_ms) / 1000);
	if (s->job_state == TASK_RUNNING) {
		char words[160];

		SESSION_JOB_KIND(s)->progress(s, words, sizeof(words));
		bar_append(buf, len, &off, "%s  ", words);
	}
	if ((ov = overlay_open(t))) {
		char words[160];

		ov->progress(t, words, sizeof(words));
		bar_append(buf, len, &off, "%s  ", words);
	}
	/* a fresh error is shown even while something runs */
	if (t->msg[0] && t->msg_error && cd_now_ms() - t->msg_at < MESSAGE_MS) {
		snprintf(buf, len, "%s", t->msg);
		*attr = ui_attr(t, UI_FAIL) | A_REVERSE;
		return;
	}
	if (off > 0)
		return;
	if (t->msg[0] && cd_now_ms() - t->msg_at < MESSAGE_MS) {
		snprintf(buf, len, "%s", t->msg);
		if (t->msg_error)
			*attr = ui_attr(t, UI_FAIL) | A_REVERSE;
		return;
	}
	if (!s->nhosts)
		snprintf(buf, len, "no nodes: press H to give a hostlist");
	else if (s->check_state == TASK_DONE && s->d)
		snprintf(buf, len, "check done: %zu node(s), %d error(s), %d warning(s)", s->nhosts,
		         s->d->errors, s->d->warnings);
	else
		snprintf(buf, len, "%zu node(s); check %s", s->nhosts,
		         task_state_name(s->check_state));
}

static void draw_status(struct tui *t)
{
	int y = LINES - 1, attr;
	char buf[512];
	const char *keys = " ? help  q quit ";

	if (t->prompt != PROMPT_NONE) {
		int x;

		/* why the last input was refused, above the prompt that asks again */
		if (t->msg[0] && t->msg_error && cd_now_ms() - t->msg_at < MESSAGE_MS)
			ui_print(y - 1, 0, COLS, ui_attr(t, UI_FAIL) | A_REVERSE, " %s", t->msg);
		move(y, 0);
		clrtoeol();
		x = ui_print(y, 0, COLS, ui_attr(t, UI_TITLE), "%s", t->prompt_label);
		if (t->prompt == PROMPT_SECRET) { /* not echoed, not even its length */
			move(y, x < COLS ? x : COLS - 1);
			curs_set(1);
			return;
		}
		/* the end of a long input stays visible */
		{
			int room = COLS - x - 1;
			const char *in = t->input;

			if (room > 0 && (int)t->input_len > room)
				in += t->input_len - (size_t)room;
			ui_print(y, x, room, A_NORMAL, "%s", in);
			x += (int)strlen(in) < room ? (int)strlen(in) : room;
		}
		move(y, x < COLS ? x : COLS - 1);
		curs_set(1);
		return;
	}
	curs_set(0);
	status_text(t, buf, sizeof(buf), &attr);
	attron(ui_attr(t, UI_BAR));
	mvhline(y, 0, ' ', COLS);
	attroff(ui_attr(t, UI_BAR));
	ui_print(y, 0, COLS, attr, " %s", buf);
	if (COLS > (int)strlen(buf) + (int)strlen(keys) + 2)
		ui_print(y, COLS - (int)strlen(keys), (int)strlen(keys), ui_attr(t, UI_BAR), "%s",
		         keys);
}

static const struct {
	const char *keys, *what;
} help_rows[] = {
    {"? F1", "this help (any key closes it)"},
    {"q F10", "quit (twice while something runs)"},
    {"Tab S-Tab", "next / previous view; 1-6 jump to a view"},
    {"j k Up Down", "move; PgUp PgDn, g G: page, first, last"},
    {"Enter", "open the selected row's detail"},
    {"Esc", "back from a detail; clear the filter"},
    {"/", "filter rows: text, or a hostlist like node[1-4]"},
    {"r", "re-run what this view shows (check, bench, job)"},
    {"H", "give the nodes (a hostlist)"},
    {"h", "hang: why the running job is stuck (it only reads)"},
};

static void draw_help(struct tui *t, int y, int h)
{
	int row = y;

	ui_print(row++, 1, COLS - 2, ui_attr(t, UI_TITLE), "clusterdoc %s - keys", "TUI");
	row++;
	for (size_t i = 0; i < CD_ARRAY_LEN(help_rows) && row < y + h; i++, row++) {
		ui_print(row, 2, 14, ui_attr(t, UI_TITLE), "%s", help_rows[i].keys);
		ui_print(row, 17, COLS - 18, A_NORMAL, "%s", help_rows[i].what);
	}
	row++;
	for (size_t i = 0; i < t->nviews && row < y + h; i++, row++) {
		ui_print(row, 2, 14, ui_attr(t, UI_TITLE), "%s", t->views[i]->name);
		ui_print(row, 17, COLS - 18, A_NORMAL, "%s", t->views[i]->hint);
	}
	row++;
	if (row < y + h)
		ui_print(row, 2, COLS - 3, ui_attr(t, UI_DIM),
		         "Colours always come with a word: ok, FAIL, warn, running. NO_COLOR or "
		         "--no-color turns them off.");
}

static void draw(struct tui *t)
{
	int64_t t0 = cd_now_us();
	const struct overlay *ov;
	int body_y = 1, body_h = LINES - 2;

	erase();
	if (LINES < 6 || COLS < 20) {
		ui_print(0, 0, COLS, A_NORMAL, "terminal too small (%dx%d)", COLS, LINES);
		refresh();
		return;
	}
	draw_tabs(t);
	if (t->help)
		draw_help(t, body_y, body_h);
	else if ((ov = overlay_open(t)))
		ov->draw(t, body_y, body_h, COLS);
	else
		t->views[t->cur]->draw(t, &t->vs[t->cur], body_y, body_h, COLS);
	draw_status(t);
	refresh();
	t->dirty = 0;
	t->last_draw_ms = cd_now_ms();
	if (t->trace)
		fprintf(t->trace, "draw %lld us\n", (long long)(cd_now_us() - t0));
}

/* ---------------------------------------------------------------- keys */

/* Empty the input line (wiped: it may have held a password). */
static void input_clear(struct tui *t)
{
	secret_wipe(t->input, sizeof(t->input));
	t->input_len = 0;
}

static void prompt_key(struct tui *t, int ch)
{
	if (ch == 27) { /* Esc: cancel */
		if (t->prompt == PROMPT_SECRET)
			input_clear(t);
		t->prompt = PROMPT_NONE;
		return;
	}
	if (ch == '\r' || ch == '\n' || ch == KEY_ENTER) {
		enum prompt_kind k = t->prompt;

		t->prompt = PROMPT_NONE;
		t->input[t->input_len] = 0;
		if (k == PROMPT_FILTER) {
			snprintf(t->filter, sizeof(t->filter), "%s", t->input);
			for (size_t i = 0; i < t->nviews; i++)
				t->vs[i].sel = t->vs[i].top = 0;
		} else if (t->prompt_done) {
			char text[sizeof(t->input)];

			/* done may open the prompt again, over t->input */
			memcpy(text, t->input, sizeof(text));
			if (k == PROMPT_SECRET)
				input_clear(t);
			t->prompt_done(t, text);
			if (k == PROMPT_SECRET)
				secret_wipe(text, sizeof(text));
		}
		return;
	}
	if (ch == KEY_BACKSPACE || ch == 127 || ch == 8) {
		if (t->input_len)
			t->input[--t->input_len] = 0;
		return;
	}
	if (ch == 21) { /* ^U */
		input_clear(t);
		return;
	}
	if (ch >= 0x20 && ch < 0x7f && t->input_len + 1 < sizeof(t->input)) {
		t->input[t->input_len++] = (char)ch;
		t->input[t->input_len] = 0;
	}
}

static void hosts_entered(struct tui *t, const char *text)
{
	char err[CD_ERRLEN];

	if (!*text) {
		ui_message(t, 1, "no hostlist given; press H to give one");
		return;
	}
	if (session_set_hosts(&t->s, text, err, sizeof(err)) < 0) {
		ui_message(t, 1, "%s", err);
		ui_prompt(t, PROMPT_HOSTS, "Nodes (hostlist): ", text, hosts_entered);
		return;
	}
	for (size_t i = 0; i < t->nviews; i++)
		memset(&t->vs[i], 0, sizeof(t->vs[i]));
	ui_run(t, RERUN_CHECK);
}

static void move_sel(struct tui *t, int ch)
{
	const struct view *v = t->views[t->cur];
	struct view_state *vs = &t->vs[t->cur];
	size_t n = v->rows ? v->rows(t, vs) : 0;
	size_t *sel = vs->drill ? &vs->dsel : &vs->sel;
	size_t page = LINES > 6 ? (size_t)LINES - 6 : 1;

	if (vs->drill && n == 0) { /* a detail without rows scrolls */
		if (ch == 'j' || ch == KEY_DOWN)
			vs->scroll++;
		else if ((ch == 'k' || ch == KEY_UP) && vs->scroll > 0)
			vs->scroll--;
		else if (ch == KEY_NPAGE)
			vs->scroll += (int)page;
		else if (ch == KEY_PPAGE)
			vs->scroll = vs->scroll > (int)page ? vs->scroll - (int)page : 0;
		else if (ch == 'g' || ch == KEY_HOME)
			vs->scroll = 0;
		else if (ch == 'G' || ch == KEY_END)
			vs->scroll = 1 << 20; /* the drawing clamps it to the end */
		return;
	}
	if (n == 0)
		return;
	switch (ch) {
	case 'j':
	case KEY_DOWN:
		if (*sel + 1 < n)
			(*sel)++;
		break;
	case 'k':
	case KEY_UP:
		if (*sel > 0)
			(*sel)--;
		break;
	case KEY_NPAGE:
		*sel = *sel + page < n ? *sel + page : n - 1;
		break;
	case KEY_PPAGE:
		*sel = *sel > page ? *sel - page : 0;
		break;
	case 'g':
	case KEY_HOME:
		*sel = 0;
		break;
	case 'G':
	case KEY_END:
		*sel = n - 1;
		break;
	}
}

static void handle_key(struct tui *t, int ch)
{
	const struct view *v = t->views[t->cur];
	const struct overlay *ov = overlay_open(t);
	struct view_state *vs = &t->vs[t->cur];

	t->dirty = 1;
	if (ch == KEY_RESIZE)
		return;
	if (t->prompt != PROMPT_NONE) {
		prompt_key(t, ch);
		return;
	}
	if (t->help) {
		t->help = 0; /* any key closes the help; q does not quit from it */
		return;
	}
	if (ch != 'q' && ch != KEY_F(10))
		t->quit_armed = 0;
	if (ov && ov->key(t, ch))
		return;
	if (!ov && v->key && v->key(t, vs, ch))
		return;
	for (size_t k = 0; k < CD_ARRAY_LEN(all_overlays); k++)
		if (ch == all_overlays[k]->open_key && !ov) {
			all_overlays[k]->open(t);
			return;
		}
	switch (ch) {
	case 'q':
	case KEY_F(10):
		if (session_busy(&t->s) && !t->quit_armed) {
			t->quit_armed = 1;
			ui_message(t, 1, "something is running: press q again to stop it and quit");
			return;
		}
		t->quit = 1;
		return;
	case '?':
	case KEY_F(1):
		t->help = 1;
		return;
	case '\t':
		t->cur = (t->cur + 1) % t->nviews;
		return;
	case KEY_BTAB:
		t->cur = (t->cur + t->nviews - 1) % t->nviews;
		return;
	case '/':
		ui_prompt(t, PROMPT_FILTER, "Filter: ", t->filter, NULL);
		return;
	case 'H':
		ui_prompt(t, PROMPT_HOSTS, "Nodes (hostlist): ", NULL, hosts_entered);
		return;
	case 'r':
	case KEY_F(5):
		ui_run(t, v->rerun);
		return;
	case '\r':
	case '\n':
	case KEY_ENTER:
		if (!vs->drill && v->enter && v->enter(t, vs)) {
			vs->drill = 1;
			vs->dsel = vs->dtop = 0;
			vs->scroll = 0;
		}
		return;
	case 27: /* Esc */
	case KEY_LEFT:
		if (vs->drill)
			vs->drill = 0;
		else if (ch == 27 && t->filter[0])
			t->filter[0] = 0;
		return;
	default:
		break;
	}
	if (ch >= '1' && ch < '1' + (int)t->nviews) {
		t->cur = (size_t)(ch - '1');
		return;
	}
	move_sel(t, ch);
}

static void read_keys(struct tui *t)
{
	int ch;

	while ((ch = getch()) != ERR) {
		int64_t t0 = cd_now_us();
		int secret = t->prompt == PROMPT_SECRET;

		handle_key(t, ch);
		if (t->quit)
			break;
		draw(t);
		if (t->trace) {
			int64_t us = cd_now_us() - t0;

			/* a password's keys never reach the trace */
			if (secret)
				fprintf(t->trace, "key - %lld us\n", (long long)us);
			else
				fprintf(t->trace, "key %d %lld us\n", ch, (long long)us);
			if (us > t->key_max_us)
				t->key_max_us = us;
		}
	}
	if (t->quit)
		loop_stop(t->loop);
}

static void on_stdin(struct loop *loop, int fd, short revents, void *arg)
{
	struct tui *t = arg;

	if (revents & (POLLHUP | POLLERR | POLLNVAL)) {
		t->quit = 1; /* the terminal went away */
		loop_stop(loop);
		return;
	}
	read_keys(t);
}

static void on_changed(void *arg)
{
	((struct tui *)arg)->dirty = 1;
}

static void on_tick(struct loop *loop, void *arg)
{
	struct tui *t = arg;

	t->tick = loop_timer_add(loop, TICK_MS, on_tick, t);
	read_keys(t); /* KEY_RESIZE arrives through getch after SIGWINCH */
	if (t->quit)
		return;
	/* while something runs, elapsed times and messages move every tick */
	if (t->dirty || session_busy(&t->s) || overlay_open(t) ||
	    (t->msg[0] && cd_now_ms() - t->msg_at < MESSAGE_MS + TICK_MS))
		draw(t);
}

static void on_exit_after(struct loop *loop, void *arg)
{
	struct tui *t = arg;

	t->quit = 1;
	loop_stop(loop);
}

/* ---------------------------------------------------------------- Ctrl-Z */

/* core/suspend.h: the agents hold, the terminal is given back, and on
 * `fg` the screen is drawn again. SIGTSTP is caught on the loop, so
 * curses' own handler no longer runs: these do its work. */
static void suspend_hold(void *arg, int hold_ms)
{
	struct tui *t = arg;

	session_keepalive_hold(&t->s, hold_ms);
}

static void suspend_stop(void *arg)
{
	crt_suspend();
}

static void suspend_resume(void *arg)
{
	struct tui *t = arg;

	crt_resume();
	draw(t);
}

static const struct suspend_ops tui_suspend_ops = {
    .hold = suspend_hold,
    .before_stop = suspend_stop,
    .after_resume = suspend_resume,
};

/* ---------------------------------------------------------------- main */

int tui_main(const struct tui_opts *o)
{
	struct tui t;
	struct suspend *susp;
	char err[CD_ERRLEN];
	const char *trace = getenv("CLUSTERDOC_TUI_TRACE");

	memset(&t, 0, sizeof(t));
	t.o = o;
	t.views = all_views;
	t.nviews = CD_ARRAY_LEN(all_views);
	t.loop = loop_new();
	session_init(&t.s, t.loop, &o->session);
	t.s.changed = on_changed;
	t.s.changed_arg = &t;
	if (trace && *trace) {
		t.trace = fopen(trace, "w");
		if (t.trace)
			setvbuf(t.trace, NULL, _IOLBF, 0);
	}
	if (crt_init(&t, err, sizeof(err)) < 0) {
		fprintf(stderr, "clusterdoc tui: %s\n", err);
		session_fini(&t.s);
		loop_free(t.loop);
		if (t.trace)
			fclose(t.trace);
		return 2;
	}
	if (o->hosts)
		hosts_entered(&t, o->hosts);
	else
		ui_prompt(&t, PROMPT_HOSTS, "Nodes (hostlist): ", NULL, hosts_entered);
	loop_watch(t.loop, STDIN_FILENO, POLLIN, on_stdin, &t);
	susp = suspend_new(t.loop, &tui_suspend_ops, &t, err, sizeof(err));
	t.tick = loop_timer_add(t.loop, TICK_MS, on_tick, &t);
	if (o->max_seconds)
		loop_timer_add(t.loop, (int64_t)o->max_seconds * 1000, on_exit_after, &t);
	draw(&t);
	loop_stats_reset(t.loop);
	while (!t.quit)
		loop_run(t.loop);
	if (t.trace) {
		struct loop_stats st;

		loop_stats(t.loop, &st);
		fprintf(t.trace, "turns %llu max_turn_us %lld key_max_us %lld\n",
		        (unsigned long long)st.turns, (long long)st.max_turn_us,
		        (long long)t.key_max_us);
	}
	loop_unwatch(t.loop, STDIN_FILENO);
	loop_timer_cancel(t.loop, t.tick);
	suspend_free(susp);
	crt_done();
	for (size_t k = 0; k < CD_ARRAY_LEN(all_overlays); k++)
		all_overlays[k]->close(&t); /* their agents closed before the session's */
	session_fini(&t.s);
	loop_free(t.loop);
	if (t.trace)
		fclose(t.trace);
	return 0;
}
