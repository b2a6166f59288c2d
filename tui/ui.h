/* SPDX-License-Identifier: MIT */
/*
 * ui.h - what the TUI's screen manager (screen.c) and its views share: the
 * TUI's state, the view interface, and the drawing helpers (crt.c).
 *
 * A view is a const struct of function pointers, as tmux's window modes
 * are: it draws its part of the screen from the session (session.h) and
 * answers the keys that belong to it. Everything common (Tab, j/k, Enter,
 * Esc, /, r, ?, q, the tab bar and the status bar) is the screen's.
 *
 * The screen: row 0 the tabs, rows 1 .. LINES-2 the view, row LINES-1 the
 * status bar (what runs, with its progress; the prompt while one is open).
 * Everything is drawn in ASCII and every colour is paired with a word, so
 * NO_COLOR and monochrome terminals lose nothing.
 */
#ifndef CD_TUI_UI_H
#define CD_TUI_UI_H

#include <curses.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "session.h"
#include "tui.h"

enum ui_color {
	UI_NORMAL,
	UI_OK,    /* green: passed, reached */
	UI_WARN,  /* yellow: a warning */
	UI_FAIL,  /* red: failed, unreachable, an error */
	UI_RUN,   /* cyan: running */
	UI_DIM,   /* not run, not tested, unknown */
	UI_TITLE, /* headings */
	UI_SEL,   /* the selected row */
	UI_TAB,   /* the current tab */
	UI_BAR,   /* the status bar */
};

/* Where a view is: its selected row and scroll, and one drill-down level. */
struct view_state {
	size_t sel, top; /* the list */
	int drill;       /* 0 = the list; 1 = the selected row's detail */
	size_t dsel, dtop;
	int scroll; /* the detail's scroll, in lines */
	int mode;   /* a view's own toggle (Nodes: grouped facts) */
};

struct tui;

/* What `r` starts in a view (ui_run). */
enum ui_rerun { RERUN_CHECK, RERUN_BENCH, RERUN_JOB };

struct view {
	const char *name;    /* the tab: "Nodes", "Network", ... */
	const char *hint;    /* the view's own keys, for the help and the status bar */
	enum ui_rerun rerun; /* what `r` re-runs here */
	/* Draw rows [y, y + h) of the screen, w columns wide. */
	void (*draw)(struct tui *t, struct view_state *vs, int y, int h, int w);
	/* Rows j/k move over at this level (drill or not). */
	size_t (*rows)(struct tui *t, struct view_state *vs);
	/* The view's own keys; 1 when the key was used. May be NULL. */
	int (*key)(struct tui *t, struct view_state *vs, int ch);
	/* Enter on the selected row: 1 when a detail opened. May be NULL. */
	int (*enter)(struct tui *t, struct view_state *vs);
};

/* The Bench view's GPU stress (view_gpuburn.c): draw it in the view's
 * rows, scroll it with the keys (1 when used), start it (b; refused with
 * --read-only, as the bench is). */
void view_gpuburn_draw(struct tui *t, struct view_state *vs, int y, int h, int w);
int view_gpuburn_key(struct tui *t, struct view_state *vs, int ch);
void view_gpuburn_start(struct tui *t, struct view_state *vs);

extern const struct view view_nodes, view_network, view_findings, view_env, view_bench, view_job;

/*
 * A view drawn over the current one from any view, until it closes (the
 * Hang view): screen.c knows it only through this row (all_overlays[]).
 * open: its key was pressed (a message when it cannot open); open_now:
 * whether it is open; key: a key while it is open, 1 when used; progress:
 * the status bar's words while it is open, into buf.
 */
struct overlay {
	int open_key;
	void (*open)(struct tui *t);
	void (*close)(struct tui *t);
	int (*open_now)(const struct tui *t);
	void (*draw)(struct tui *t, int y, int h, int w);
	int (*key)(struct tui *t, int ch);
	void (*progress)(const struct tui *t, char *buf, size_t len);
};

extern const struct overlay overlay_hang;

/* PROMPT_SECRET: the input is not shown, not traced, and wiped after done. */
enum prompt_kind {
	PROMPT_NONE,
	PROMPT_FILTER,
	PROMPT_HOSTS,
	PROMPT_PATH,
	PROMPT_CONFIRM,
	PROMPT_SECRET,
	PROMPT_COMMAND, /* a command line (the Job view's R) */
};

#define UI_MAX_VIEWS 8

struct tui {
	struct tui_session s;
	struct loop *loop;
	const struct tui_opts *o;
	int color; /* colours in use */
	int quit;
	int quit_armed; /* q pressed once while tasks run */

	const struct view *const *views;
	size_t nviews, cur;
	struct view_state vs[UI_MAX_VIEWS];
	int help; /* the help screen is shown */
	int hang; /* the Hang view (view_hang.h) is open over the current view */
	struct view_state hang_vs;

	/* the prompt line */
	enum prompt_kind prompt;
	char prompt_label[256];
	char input[512];
	size_t input_len;
	/* PROMPT_PATH, PROMPT_CONFIRM, PROMPT_SECRET call this with the text */
	void (*prompt_done)(struct tui *t, const char *text);

	char filter[512]; /* "/": applies to the rows of every view */
	char msg[CD_ERRLEN];
	int msg_error;
	int64_t msg_at;

	int dirty; /* something to redraw */
	int64_t last_draw_ms;
	uint64_t tick;
	FILE *trace; /* $CLUSTERDOC_TUI_TRACE: keys and loop turns, for the tests */
	int64_t key_max_us;
};

/* ---- crt.c: curses, colours, drawing helpers */

/* Start curses on the terminal; stderr goes to a memory file until crt_done,
 * which puts the terminal back and prints what was written there. */
int crt_init(struct tui *t, char *err, size_t errlen);
void crt_done(void);
/* Ctrl-Z: give the terminal back as it was before curses (crt_suspend),
 * then take it again and redraw all of it once the TUI runs again
 * (crt_resume). No-ops when curses is not started. */
void crt_suspend(void);
void crt_resume(void);
int ui_attr(const struct tui *t, enum ui_color c);
/* printf into row y from column x, at most w columns, with attr; the rest of
 * the text is cut. Returns the columns written. */
int ui_print(int y, int x, int w, int attr, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Clear row y from column x to the end. */
void ui_clear_row(int y, int x);
/* Keep vs->sel inside [0, n) and visible in a list h rows high. */
void ui_scroll(size_t *sel, size_t *top, size_t n, int h);

/* A scrolling text (a detail): lines with one attribute each, wrapped when
 * drawn at the last space that fits, rows after the first indented like
 * the line, so views add whole paragraphs. */
struct ui_text {
	char **lines;
	int *attrs;
	size_t n, cap;
};
/* Add one line per '\n' of the formatted text, each indented by indent. */
void ui_text_add(struct ui_text *x, int attr, int indent, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Draw from line *scroll (clamped) in rows [y, y + h); long lines wrap. */
void ui_text_draw(const struct ui_text *x, int y, int h, int w, int *scroll);
void ui_text_free(struct ui_text *x);
/* A view that shows a text with no rows to select: j/k, the page keys (and
 * space) and g/G (Home/End) move vs->scroll (ui_text_draw clamps it). 1 when
 * ch was one of them. */
int ui_text_scroll_key(struct view_state *vs, int ch);

/* ---- screen.c */

/* A message on the status bar for a few seconds. */
void ui_message(struct tui *t, int error, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Whether text passes the "/" filter (every row does when there is none):
 * a case-insensitive substring, or a host of the filter when it is a
 * hostlist expression with brackets. */
int ui_filter_match(const struct tui *t, const char *text);
/* Open the prompt line; done runs with the text on Enter. */
void ui_prompt(struct tui *t, enum prompt_kind kind, const char *label, const char *initial,
               void (*done)(struct tui *t, const char *text));
/* Start what `r` starts for a view ("check", "bench", "job"). */
void ui_run(struct tui *t, enum ui_rerun what);

/* For a view that shows the diagnosis before there is one: where the check
 * is, in words ("the check is running: WHAT when it ends", its progress,
 * why it could not start, or what to press), from row y + 1. */
void ui_draw_check_waiting(struct tui *t, int y, int w, const char *what);

/* The colour and word of a check stage (ok, failed, probing...). */
enum ui_color ui_stage_color(enum netcheck_stage st);
/* The colour of a task's state, and its word in *word ("running", "done",
 * "FAILED", "not run"). */
enum ui_color ui_task_color(enum task_state st, const char **word);

#endif
