/* SPDX-License-Identifier: MIT */
/*
 * fix_panel.c - the Findings view's fix panel (fix_panel.h).
 */
#include "fix_panel.h"

#include <stdlib.h>
#include <string.h>

#include "secret.h"

static const struct fixflow *flow(const struct tui *t)
{
	return &t->s.fix;
}

static void close_panel(struct view_state *vs)
{
	vs->drill = vs->mode == FIX_PANEL_FROM_DETAIL;
	vs->mode = 0;
	vs->scroll = 0;
}

void fix_panel_open(struct tui *t, struct view_state *vs, size_t k)
{
	char err[CD_ERRLEN];

	if (session_fix_plan(&t->s, k, err, sizeof(err)) < 0) {
		ui_message(t, 1, "%s", err);
		return;
	}
	vs->mode = vs->drill ? FIX_PANEL_FROM_DETAIL : FIX_PANEL_FROM_LIST;
	vs->drill = 1;
	vs->scroll = 0;
}

int fix_panel_reopen(struct tui *t, struct view_state *vs)
{
	if (flow(t)->state == FIXFLOW_IDLE)
		return 0;
	vs->mode = vs->drill ? FIX_PANEL_FROM_DETAIL : FIX_PANEL_FROM_LIST;
	vs->drill = 1;
	vs->scroll = 0;
	return 1;
}

/* ---------------------------------------------------------------- apply */

static void apply(struct tui *t, const char *password)
{
	char err[CD_ERRLEN];

	if (session_fix_apply(&t->s, password, err, sizeof(err)) < 0)
		ui_message(t, 1, "%s", err);
	else
		ui_message(t, 0, "applying run %s", flow(t)->run);
}

/* The secret prompt's done: the screen wipes its copies after this. */
static void password_entered(struct tui *t, const char *text)
{
	if (!*text) {
		ui_message(t, 1, "no password given: nothing was changed (y asks again)");
		return;
	}
	apply(t, text);
}

static void confirm(struct tui *t)
{
	const struct fixflow *f = flow(t);

	if (f->state != FIXFLOW_PLANNED) {
		ui_message(t, 1, "no plan waits to be applied");
		return;
	}
	if (!f->changes) {
		ui_message(t, 1, "the plan changes nothing");
		return;
	}
	if (t->o->read_only) {
		ui_message(t, 1, "--read-only: the plan is not applied");
		return;
	}
	if (f->need_password) {
		ui_prompt(t, PROMPT_SECRET, f->password_prompt, NULL, password_entered);
		return;
	}
	apply(t, NULL);
}

int fix_panel_key(struct tui *t, struct view_state *vs, int ch)
{
	const struct fixflow *f = flow(t);

	switch (ch) {
	case 'y':
	case 'Y':
		confirm(t);
		return 1;
	case 27: /* Esc */
	case KEY_LEFT:
		if (f->state == FIXFLOW_PLANNED) {
			session_fix_close(&t->s);
			ui_message(t, 0, "fix cancelled: nothing was changed");
		} else if (f->state == FIXFLOW_DONE || f->state == FIXFLOW_FAILED) {
			session_fix_close(&t->s);
		} /* planning, applying, verifying: the panel hides, f shows it again */
		close_panel(vs);
		return 1;
	case 'G':
	case KEY_END:
		vs->scroll = 1 << 20;
		return 1;
	default:
		return 0;
	}
}

/* ---------------------------------------------------------------- draw */

/* The line under the title: where the fix is and what the keys do. */
static void draw_state(struct tui *t, int y, int w)
{
	const struct fixflow *f = flow(t);
	int x = 1;

	switch (f->state) {
	case FIXFLOW_PLANNING:
		ui_print(y, x, w - x, ui_attr(t, UI_RUN),
		         "planning: reading the nodes' files and firewalls; nothing changes");
		break;
	case FIXFLOW_PLANNED:
		if (!f->changes) {
			ui_print(y, x, w - x, ui_attr(t, UI_OK), "nothing to change; Esc closes");
			break;
		}
		x += ui_print(y, x, w - x, ui_attr(t, UI_WARN) | A_BOLD,
		              "y applies %zu change%s on %zu node%s", f->changes,
		              f->changes == 1 ? "" : "s", f->nodes, f->nodes == 1 ? "" : "s");
		if (f->hostkeys)
			x += ui_print(y, x, w - x, ui_attr(t, UI_WARN) | A_BOLD,
			              ", recording the %zu host key%s shown", f->hostkeys,
			              f->hostkeys == 1 ? "" : "s");
		ui_print(y, x, w - x, A_NORMAL, "; Esc cancels");
		break;
	case FIXFLOW_APPLYING:
		ui_print(y, x, w - x, ui_attr(t, UI_RUN), "applying run %s ...", f->run);
		break;
	case FIXFLOW_VERIFYING:
		ui_print(y, x, w - x, ui_attr(t, UI_RUN),
		         "applied; a new check runs to verify it ...");
		break;
	case FIXFLOW_DONE:
		if (f->failed || f->unverified)
			ui_print(y, x, w - x, ui_attr(t, UI_FAIL),
			         "FAIL %d change(s) or verification(s) failed; Esc closes",
			         f->failed);
		else
			ui_print(y, x, w - x, ui_attr(t, UI_OK),
			         "ok applied and verified; Esc closes");
		if (f->journalled)
			ui_print(y + 1, x, w - x, A_BOLD, "undo with: clusterdoc fix --undo %s",
			         f->run);
		break;
	case FIXFLOW_FAILED:
		ui_print(y, x, w - x, ui_attr(t, UI_FAIL), "FAIL %s", f->error);
		break;
	case FIXFLOW_IDLE:
		break;
	}
}

/* The colour of a line of the plan or the results, by what it says. */
static int line_attr(const struct tui *t, const char *line)
{
	const char *p = line + strspn(line, " ");

	if (strstr(line, "-> failed") || strstr(line, "-> skipped") || strstr(line, "NOT FIXED") ||
	    strstr(line, "STILL REPORTED") || strstr(line, "not verified") ||
	    strstr(line, "could not"))
		return ui_attr(t, UI_FAIL);
	if (strstr(line, "-> applied") || strstr(line, " verified") || strstr(line, "is gone"))
		return ui_attr(t, UI_OK);
	if (p != line && (!strncmp(p, "+", 1) && strncmp(p, "+++", 3)))
		return ui_attr(t, UI_OK);
	if (p != line && (!strncmp(p, "-", 1) && strncmp(p, "---", 3)))
		return ui_attr(t, UI_FAIL);
	if (!strncmp(p, "record its host key", 19))
		return ui_attr(t, UI_WARN) | A_BOLD;
	if (p == line && *p)
		return A_BOLD; /* a heading or a node */
	return A_NORMAL;
}

void fix_panel_draw(struct tui *t, struct view_state *vs, int y, int h, int w)
{
	const struct fixflow *f = flow(t);
	struct ui_text x = {0};
	const char *p;

	ui_print(y, 1, w - 1, ui_attr(t, UI_TITLE), "Fix %s with %s  (%s)", f->finding, f->only,
	         fixflow_state_name(f->state));
	draw_state(t, y + 1, w);
	for (p = f->text; p && *p;) {
		size_t n = strcspn(p, "\n"), lead;
		char *line = cd_strndup(p, n);

		lead = strspn(line, " ");
		ui_text_add(&x, line_attr(t, line), (int)lead, "%s",
		            line[lead] ? line + lead : " ");
		free(line);
		p += n + (p[n] == '\n');
	}
	ui_text_draw(&x, y + 3, h - 3, w, &vs->scroll);
	ui_text_free(&x);
}
