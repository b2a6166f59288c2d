/* SPDX-License-Identifier: MIT */
/*
 * tui.h - the interactive terminal UI: `clusterdoc tui -w HOSTLIST`, or
 * `clusterdoc` alone on a terminal. One screen from discovery to bandwidth
 * and training: Nodes, Network, Findings, Env, Bench and Job views over one
 * session (session.h) on the head's event loop. docs/tui.md is the guide.
 */
#ifndef CD_TUI_TUI_H
#define CD_TUI_TUI_H

#include "session.h"

struct tui_opts {
	struct tui_session_opts session; /* the tasks' options */
	const char *hosts;               /* a hostlist expression, or NULL: asked in the TUI */
	int no_color;                    /* --no-color, or $NO_COLOR set and not empty */
	int read_only;        /* --read-only: nothing is started on the nodes but the check */
	const char *env_path; /* the Env view's default file */
	int max_seconds;      /* --exit-after S (tests): quit after S seconds, 0 = never */
};

/* Run the TUI until the user quits. Returns the exit status: 0, or 2 when
 * the terminal could not be used (the reason printed on stderr). */
int tui_main(const struct tui_opts *o);

#endif
