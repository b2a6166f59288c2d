/* SPDX-License-Identifier: MIT */
/*
 * view_hang.h - the Hang view (view_hang.c): `h` from any view opens it
 * over the current one; while it is open the session inspects the job on
 * the nodes in rounds (session_hang_open) and the view shows the last
 * verdict: progressing or hung, the suspects first in the words of
 * `clusterdoc hang`, then the ranks grouped by what they do. Enter opens
 * the full text report (report/hang_render.h); Esc or h closes it, and the
 * inspection stops.
 */
#ifndef CD_TUI_VIEW_HANG_H
#define CD_TUI_VIEW_HANG_H

#include "ui.h"

/* h: open the view and start inspecting (a message when it cannot). */
void view_hang_open(struct tui *t);
/* Stop inspecting and close the view (also before the session ends). */
void view_hang_close(struct tui *t);
/* Draw rows [y, y + h), w columns wide. */
void view_hang_draw(struct tui *t, int y, int h, int w);
/* A key while the view is open: 1 when it used it (every key but q, F10,
 * ? and F1, which stay the screen's). */
int view_hang_key(struct tui *t, int ch);

#endif
