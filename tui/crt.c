/* SPDX-License-Identifier: MIT */
/*
 * crt.c - curses for the TUI (ui.h): start and end, colours, stderr kept
 * in a memory file while the screen is ours, and the drawing helpers.
 */
#include "ui.h"
#include "termtext.h"

#include <errno.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int saved_stderr = -1;
static int stderr_cache = -1;
static int crt_active;
static SCREEN *screen;

/* While curses owns the terminal, anything written to stderr (a library's
 * warning) would tear the screen: it goes to a memory file, printed after
 * endwin (as htop does). */
static void stderr_redirect(void)
{
	fflush(stderr);
	stderr_cache = memfd_create("clusterdoc-stderr", MFD_CLOEXEC);
	if (stderr_cache < 0)
		return;
	saved_stderr = dup(STDERR_FILENO);
	if (saved_stderr < 0 || dup2(stderr_cache, STDERR_FILENO) < 0) {
		close(stderr_cache);
		stderr_cache = -1;
	}
}

static void stderr_restore(void)
{
	char buf[4096];
	ssize_t n;

	if (stderr_cache < 0)
		return;
	fflush(stderr);
	dup2(saved_stderr, STDERR_FILENO);
	close(saved_stderr);
	saved_stderr = -1;
	if (lseek(stderr_cache, 0, SEEK_SET) == 0) {
		while ((n = read(stderr_cache, buf, sizeof(buf))) > 0)
			if (write(STDERR_FILENO, buf, (size_t)n) < 0)
				break;
	}
	close(stderr_cache);
	stderr_cache = -1;
}

/* cd_fatal's hook: put the terminal back before the message. */
static void crt_fatal_hook(void)
{
	crt_done();
}

int crt_init(struct tui *t, char *err, size_t errlen)
{
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
		return cd_errf(
		    err, errlen, CD_ERR_UNSUPPORTED,
		    "the TUI needs a terminal on stdin and stdout; use `clusterdoc check` "
		    "for scripts");
	if (!getenv("TERM") || !*getenv("TERM"))
		return cd_errf(err, errlen, CD_ERR_UNSUPPORTED,
		               "$TERM is not set: cannot drive the terminal");
	stderr_redirect();
	screen = newterm(NULL, stdout, stdin);
	if (!screen) {
		stderr_restore();
		return cd_errf(err, errlen, CD_ERR_UNSUPPORTED, "terminal \"%s\" is not usable",
		               getenv("TERM"));
	}
	crt_active = 1;
	cd_set_fatal_hook(crt_fatal_hook);
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	t->color = !t->o->no_color && has_colors();
	if (t->color) {
		start_color();
		use_default_colors();
		init_pair(UI_OK, COLOR_GREEN, -1);
		init_pair(UI_WARN, COLOR_YELLOW, -1);
		init_pair(UI_FAIL, COLOR_RED, -1);
		init_pair(UI_RUN, COLOR_CYAN, -1);
		init_pair(UI_TAB, COLOR_BLACK, COLOR_CYAN);
		init_pair(UI_BAR, COLOR_BLACK, COLOR_WHITE);
	}
	return 0;
}

void crt_done(void)
{
	if (!crt_active)
		return;
	crt_active = 0;
	endwin();
	delscreen(screen);
	screen = NULL;
	stderr_restore();
}

void crt_suspend(void)
{
	if (!crt_active)
		return;
	def_prog_mode();
	endwin();
}

void crt_resume(void)
{
	if (!crt_active)
		return;
	reset_prog_mode();
	clearok(curscr, TRUE); /* the shell wrote over the screen meanwhile */
	refresh();
}

int ui_attr(const struct tui *t, enum ui_color c)
{
	switch (c) {
	case UI_OK:
	case UI_WARN:
	case UI_FAIL:
	case UI_RUN:
		return t->color ? (int)COLOR_PAIR(c) : (c == UI_FAIL ? A_BOLD : A_NORMAL);
	case UI_DIM:
		return A_DIM;
	case UI_TITLE:
		return A_BOLD;
	case UI_SEL:
		return A_REVERSE;
	case UI_TAB:
		return t->color ? (int)(COLOR_PAIR(UI_TAB) | A_BOLD) : A_REVERSE;
	case UI_BAR:
		return t->color ? (int)COLOR_PAIR(UI_BAR) : A_REVERSE;
	case UI_NORMAL:
		break;
	}
	return A_NORMAL;
}

int ui_print(int y, int x, int w, int attr, const char *fmt, ...)
{
	char raw[1024], buf[1024];
	va_list ap;
	int n;

	if (w <= 0 || y < 0 || y >= LINES || x >= COLS)
		return 0;
	if (x + w > COLS)
		w = COLS - x;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	/* a node's text must not move the cursor or talk to the terminal */
	termtext_escape(buf, sizeof(buf), raw, strlen(raw), TERMTEXT_KEEP_NONE);
	n = (int)strlen(buf);
	if (n > w)
		n = w;
	attron(attr);
	mvaddnstr(y, x, buf, n);
	attroff(attr);
	return n;
}

void ui_clear_row(int y, int x)
{
	if (y < 0 || y >= LINES)
		return;
	move(y, x);
	clrtoeol();
}

void ui_scroll(size_t *sel, size_t *top, size_t n, int h)
{
	if (h < 1)
		h = 1;
	if (n == 0) {
		*sel = *top = 0;
		return;
	}
	if (*sel >= n)
		*sel = n - 1;
	if (*sel < *top)
		*top = *sel;
	if (*sel >= *top + (size_t)h)
		*top = *sel - (size_t)h + 1;
	if (*top + (size_t)h > n)
		*top = n > (size_t)h ? n - (size_t)h : 0;
}

void ui_text_add(struct ui_text *x, int attr, int indent, const char *fmt, ...)
{
	va_list ap;
	char *all, *line, *save = NULL;

	va_start(ap, fmt);
	if (vasprintf(&all, fmt, ap) < 0)
		cd_fatal("out of memory");
	va_end(ap);
	if (!*all) {
		free(all);
		all = cd_strdup(" ");
	}
	for (line = strtok_r(all, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *safe;

		if (x->n == x->cap) {
			x->cap = x->cap ? 2 * x->cap : 32;
			x->lines = cd_realloc(x->lines, x->cap * sizeof(*x->lines));
			x->attrs = cd_realloc(x->attrs, x->cap * sizeof(*x->attrs));
		}
		/* escaped before wrapping, so that rows are cut at the width shown */
		safe = termtext_dup(line, strlen(line), TERMTEXT_KEEP_NONE);

		x->lines[x->n] = cd_asprintf("%*s%s", indent, "", safe);
		free(safe);
		x->attrs[x->n++] = attr;
	}
	free(all);
}

/*
 * Cut line s for width w: the length of each row, at the last space that
 * fits (or hard at w); rows after the first are indented like the line.
 * Returns the number of rows; lens (may be NULL) gets at most cap lengths.
 */
static int wrap_line(const char *s, int w, int *starts, int *lens, int cap)
{
	int len = (int)strlen(s), indent = (int)strspn(s, " "), off = 0, rows = 0;

	if (indent > w / 2)
		indent = 0;
	while (off < len || rows == 0) {
		int room = rows == 0 ? w : w - indent, n = len - off;

		if (n > room) {
			n = room;
			for (int k = room; k > room / 2; k--) {
				if (s[off + k] == ' ') {
					n = k;
					break;
				}
			}
		}
		if (rows < cap) {
			starts[rows] = off;
			lens[rows] = n;
		}
		rows++;
		off += n;
		while (off < len && s[off] == ' ')
			off++;
	}
	return rows;
}

int ui_text_scroll_key(struct view_state *vs, int ch)
{
	int page = LINES > 6 ? LINES - 4 : 1;

	switch (ch) {
	case 'j':
	case KEY_DOWN:
		vs->scroll++;
		return 1;
	case 'k':
	case KEY_UP:
		vs->scroll = vs->scroll > 0 ? vs->scroll - 1 : 0;
		return 1;
	case KEY_NPAGE:
	case ' ':
		vs->scroll += page;
		return 1;
	case KEY_PPAGE:
		vs->scroll = vs->scroll > page ? vs->scroll - page : 0;
		return 1;
	case 'g':
	case KEY_HOME:
		vs->scroll = 0;
		return 1;
	case 'G':
	case KEY_END:
		vs->scroll = 1 << 20; /* ui_text_draw clamps it to the end */
		return 1;
	}
	return 0;
}

void ui_text_draw(const struct ui_text *x, int y, int h, int w, int *scroll)
{
	int total = 0, row = y, skip, starts[64], lens[64];

	if (w < 8)
		return;
	for (size_t k = 0; k < x->n; k++)
		total += wrap_line(x->lines[k], w - 1, starts, lens, 0);
	if (*scroll > total - h)
		*scroll = total - h > 0 ? total - h : 0;
	skip = *scroll;
	for (size_t k = 0; k < x->n && row < y + h; k++) {
		const char *s = x->lines[k];
		int indent = (int)strspn(s, " "),
		    n = wrap_line(s, w - 1, starts, lens, (int)CD_ARRAY_LEN(starts));

		if (indent > (w - 1) / 2)
			indent = 0;
		for (int r = 0; r < n && r < (int)CD_ARRAY_LEN(starts); r++) {
			if (skip > 0) {
				skip--;
				continue;
			}
			if (row >= y + h)
				break;
			ui_print(row++, 1 + (r ? indent : 0), w - 1 - (r ? indent : 0), x->attrs[k],
			         "%.*s", lens[r], s + starts[r]);
		}
	}
}

void ui_text_free(struct ui_text *x)
{
	for (size_t k = 0; k < x->n; k++)
		free(x->lines[k]);
	free(x->lines);
	free(x->attrs);
	memset(x, 0, sizeof(*x));
}
