/* SPDX-License-Identifier: MIT */
/*
 * cmd_fix_undo.h - the undo and list of `clusterdoc fix` (cmd_fix.c parses
 * the options and calls these).
 */
#ifndef CD_CLI_CMD_FIX_UNDO_H
#define CD_CLI_CMD_FIX_UNDO_H

#include <stddef.h>

#include "fixers/fix_journal.h"
#include "sshpool.h"

/*
 * Undo j's changes on hosts (n of them: the run's hosts or -w's), print
 * each change's outcome, and mark j undone when every change was undone or
 * found never made (an interrupted run's changes of unknown outcome are
 * looked up on the nodes: fix_run.h). Exit status: 0 everything restored,
 * 1 something was left as is or not asked (not in -w), 2 the nodes could
 * not be reached.
 */
int cmd_fix_undo(struct fix_journal *j, const char *const *hosts, size_t n,
                 const struct sshpool_opts *pool_opts);

/* Print the runs, newest first: changes, nodes, and whether the run was
 * interrupted (with how many outcomes are unknown) or undone. 0, or 2
 * when the journal directory cannot be read. */
int cmd_fix_list(void);

#endif
