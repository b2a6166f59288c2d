/* SPDX-License-Identifier: MIT */
/*
 * session_fix.h - applying a fix from the TUI: the fix flow of `clusterdoc
 * fix --only FIXERS --apply` (fixers/fix_flow.h) on the session's loop and
 * its last check, in the order the screen drives them:
 *
 *   session_fix_plan   gather what the fixers read on every checked node
 *                      and build the plan. Nothing changes; the plan's text
 *                      is the CLI's: per node the diffs and the commands,
 *                      and the logins of ssh-key with the host keys they
 *                      would record.
 *   session_fix_apply  after the user said yes to that plan: the ssh-key
 *                      stage first (with the password the screen asked,
 *                      recording exactly the host keys the plan showed),
 *                      then the plan, journalled for `clusterdoc fix --undo
 *                      RUN`; then a new check of every node, whose
 *                      diagnosis verifies each fixer on each node.
 *
 * Everything runs from the loop; one node that fails never stops the
 * others, and the text says which failed and why.
 */
#ifndef CD_TUI_SESSION_FIX_H
#define CD_TUI_SESSION_FIX_H

#include <stddef.h>

#include "cd.h"

enum fixflow_state {
	FIXFLOW_IDLE,
	FIXFLOW_PLANNING,  /* reading the nodes' files and firewalls */
	FIXFLOW_PLANNED,   /* the plan is shown: waiting for yes or no */
	FIXFLOW_APPLYING,  /* logging in, changing the nodes */
	FIXFLOW_VERIFYING, /* the new check runs */
	FIXFLOW_DONE,      /* failed says how it went */
	FIXFLOW_FAILED,    /* could not plan or apply: error says why */
};

/* "planning", "planned", ... */
const char *fixflow_state_name(enum fixflow_state st);

struct fixflow_work; /* session_fix.c's own */

struct fixflow {
	enum fixflow_state state;
	char finding[64];      /* the finding it answers */
	char only[128];        /* its fixers: "firewall", "env,hosts" */
	char run[40];          /* the run: its journal's name for --undo */
	char error[CD_ERRLEN]; /* FIXFLOW_FAILED: why */
	char *text;            /* the plan; then what was applied and the verification */
	size_t changes;        /* planned changes (the ssh-key stage's included) */
	size_t nodes;          /* nodes they change */
	size_t hostkeys;       /* host keys the apply will record */
	int need_password;     /* a node refused the head's keys */
	char password_prompt[256];
	int journalled; /* the run changed something: --undo RUN restores it */
	int failed;     /* FIXFLOW_DONE: changes or verifications that failed */
	int unverified; /* FIXFLOW_DONE: the verifying check could not run */
	struct fixflow_work *w;
};

#endif
