/* SPDX-License-Identifier: MIT */
/*
 * cmd_check_watch.h - `clusterdoc check --watch SECONDS [--count N]`: the
 * check in rounds over agents kept connected (probes/check_watch.h),
 * printing only what changed: each finding raised or cleared, with the
 * time; with --json one JSON object per line per round. It ends after N
 * rounds or at SIGINT/SIGTERM, with the last round's state.
 */
#ifndef CD_CLI_CMD_CHECK_WATCH_H
#define CD_CLI_CMD_CHECK_WATCH_H

#include "probes/check_watch.h"

struct check_watch_cli {
	const struct sshpool_opts *pool;
	const char *const *hosts;
	size_t n;
	struct check_watch_opts o; /* o.check.master set from --master */
	int json;
	/* The exit status and reports of the last round, as `check` gives
	 * them (cmd_check.c's finish_check); m and d are borrowed. */
	int (*finish)(void *arg, const struct check_watch_round *last);
	void *finish_arg;
};

/*
 * Run the watch to its end. Returns finish's status for the last round, 2
 * when the pool could not start, or 128 + the signal when one ended the
 * watch before its first round did.
 */
int cmd_check_watch(const struct check_watch_cli *c);

#endif
