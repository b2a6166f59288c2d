/* SPDX-License-Identifier: MIT */
/*
 * fix_panel.h - the Findings view's fix panel: `f` on a finding plans the
 * fix of the fixers that answer it (session_fix.h) and shows the plan as
 * `clusterdoc fix` prints it; `y` applies it (after the password, when a
 * node refused the head's keys), Esc cancels it. While it applies and the
 * check verifies it, the panel follows; at the end it shows what each node
 * did, the verification and the `clusterdoc fix --undo RUN` command.
 *
 * The panel is the view's mode (view_state.mode): FIX_PANEL_FROM_LIST or
 * FIX_PANEL_FROM_DETAIL, where Esc goes back to. Its text scrolls as a
 * detail does (view_state.drill is set while it shows).
 */
#ifndef CD_TUI_FIX_PANEL_H
#define CD_TUI_FIX_PANEL_H

#include <stddef.h>

#include "ui.h"

enum { FIX_PANEL_FROM_LIST = 1, FIX_PANEL_FROM_DETAIL = 2 };

/* Plan the fix of diagnosis finding k and open the panel (or say why not). */
void fix_panel_open(struct tui *t, struct view_state *vs, size_t k);
/* Reopen the panel on the fix there is (1), or 0 when there is none. */
int fix_panel_reopen(struct tui *t, struct view_state *vs);
void fix_panel_draw(struct tui *t, struct view_state *vs, int y, int h, int w);
/* The panel's keys (y, Esc, G); 1 when the key was used. */
int fix_panel_key(struct tui *t, struct view_state *vs, int ch);

#endif
