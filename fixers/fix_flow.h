/* SPDX-License-Identifier: MIT */
/*
 * fix_flow.h - the fix flow, once for both front ends: after a check, plan
 * (the login stage's key, the gather, the plan), then on the user's word
 * apply (the head's key, the password, the login stage, the plan,
 * journalled), then verify against a new check. `clusterdoc fix` runs it
 * on a loop of its own and waits; the TUI drives it on the session's loop.
 *
 * The flow is a state machine that stops where the front end must answer:
 *
 *   fix_flow_start --> PLANNING --> PLANNED --fix_flow_apply--> APPLYING
 *                         |                                        |
 *                         v                     PASSWORD <---------+
 *                       FAILED        fix_flow_password /          |
 *                                     fix_flow_skip_login          |
 *                                                  LOGIN_FAILED <--+
 *                                     fix_flow_skip_login          |
 *                                                                  v
 *                      DONE <--fix_flow_verify(new check)-- APPLIED
 *
 * changed(flow, arg) is called when the flow enters PLANNED, FAILED,
 * PASSWORD, LOGIN_FAILED or APPLIED: always from a loop callback of its
 * own (a 0 ms timer), never from inside fix_flow_start, a pool callback or
 * a call of the front end's; the front end may free the flow from it.
 * fix_flow_verify is synchronous: DONE when it returns, no callback.
 *
 * Nothing blocks: `ssh -G` and `ssh-keygen` run as children of the loop,
 * the nodes through SSH pools of the loop. The text and JSON are
 * report/fix_render.h's and the front ends'.
 */
#ifndef CD_FIXERS_FIX_FLOW_H
#define CD_FIXERS_FIX_FLOW_H

#include <stddef.h>

#include "fix.h"
#include "fix_journal.h"
#include "fix_login.h"
#include "fix_run.h"
#include "fix_verify.h"
#include "loop.h"
#include "sshpool.h"

enum fix_flow_state {
	FIX_FLOW_PLANNING,     /* the head's key (ssh -G), the gather, the plan */
	FIX_FLOW_PLANNED,      /* waits: fix_flow_apply (or free: nothing changes) */
	FIX_FLOW_APPLYING,     /* the head's key, the login stage, the plan */
	FIX_FLOW_PASSWORD,     /* waits: fix_flow_password or fix_flow_skip_login */
	FIX_FLOW_LOGIN_FAILED, /* the login stage could not run (error): waits for
	                          fix_flow_skip_login, which goes on without it */
	FIX_FLOW_APPLIED,      /* every pool closed; waits: fix_flow_verify */
	FIX_FLOW_DONE,         /* verified */
	FIX_FLOW_FAILED,       /* could not plan: error says why */
};

struct fix_flow_opts {
	struct fix_opts fo;              /* the fixers (only), port range */
	const struct sshpool_opts *pool; /* how to reach the nodes */
	const char *const *hosts;        /* the check's nodes, in its order */
	size_t nhosts;
	/* the check the plan is made from */
	const struct netmodel *m;
	const struct diagnosis *d;
};

/* What the flow has learned so far, for the front ends (read-only). */
struct fix_flow_report {
	enum fix_flow_state state;
	char error[CD_ERRLEN]; /* FAILED, LOGIN_FAILED: why */
	char run[40];          /* the run id, the journal's name */

	/* PLANNED on */
	struct fix_login login; /* the login stage's nodes and the head's key */
	struct fix_plan *p;
	size_t checked;  /* nodes the check probed */
	size_t gathered; /* of them, the nodes the gather read */
	size_t changes;  /* planned changes, the login stage's included */
	size_t nodes;    /* nodes they change */

	/* APPLIED on */
	struct fix_journal *j;
	struct fix_result **results;   /* [nhosts][p->nodes[i].nactions] */
	char journal_error[CD_ERRLEN]; /* the plan's apply could not save it, or "" */
	int login_ran;                 /* the login stage ran: login_outcome is set */
	struct fix_login_outcome login_outcome;
	int login_failed; /* nodes of the login stage not completed */
	int failed;       /* login_failed + the plan's changes failed or skipped */
	int interrupted;  /* fix_flow_interrupt was called while applying */

	/* DONE */
	struct fix_verification verdicts;
};

struct fix_flow;
typedef void (*fix_flow_cb)(struct fix_flow *f, void *arg);

/*
 * Start planning on loop. o's pointers are borrowed and must outlive the
 * flow. NULL with err when the pool could not start (the agent could not be
 * read): nothing was called back.
 */
struct fix_flow *fix_flow_start(struct loop *loop, const struct fix_flow_opts *o,
                                fix_flow_cb changed, void *arg, char *err, size_t errlen);

const struct fix_flow_report *fix_flow_report(const struct fix_flow *f);

/* "Password for USER on node1 node2: " (PASSWORD, or a front end that asks
 * before applying: report's login.need_password). */
void fix_flow_password_prompt(const struct fix_flow *f, char *out, size_t len);

/*
 * From PLANNED: apply. password (copied) is for the nodes that refused the
 * head's keys; NULL when none did or to be asked in state PASSWORD.
 * CD_ERR_REFUSED unless PLANNED.
 */
int fix_flow_apply(struct fix_flow *f, const char *password, char *err, size_t errlen);

/* The front end is about to block for up to hold_ms (a question on the
 * terminal): the gather's agents are told not to take the silence for a
 * lost head (sshpool_keepalive_hold). */
void fix_flow_hold(struct fix_flow *f, int hold_ms);

/* From PASSWORD: the password (copied) the login stage logs in with. */
int fix_flow_password(struct fix_flow *f, const char *password, char *err, size_t errlen);

/* From PASSWORD or LOGIN_FAILED: go on with the plan without the login
 * stage (its nodes count as failed). */
int fix_flow_skip_login(struct fix_flow *f, char *err, size_t errlen);

/*
 * From APPLIED: the verdicts of the new check m2 (the same nodes in the
 * same order) and its diagnosis (NULL: the check did not run). DONE when it
 * returns; m2 and after are not kept.
 */
int fix_flow_verify(struct fix_flow *f, const struct netmodel *m2, const struct diagnosis *after,
                    char *err, size_t errlen);

/*
 * The run is to stop (SIGINT, SIGTERM): from APPLYING, no new change is
 * sent; each node's request in flight still has its answer recorded, and
 * the flow enters APPLIED as usual when the last one is in (the login
 * stage, if it runs, ends first; the plan's changes are then all skipped).
 * The journal is marked interrupted and saved. How long to wait for
 * APPLIED is the front end's bound: the intents of the answers it does not
 * wait for stay on disk, of unknown outcome. 0, or CD_ERR_IO when the
 * journal could not be saved (err says why); nothing to do outside
 * APPLYING, PASSWORD and LOGIN_FAILED.
 */
int fix_flow_interrupt(struct fix_flow *f, char *err, size_t errlen);

/* Stops whatever runs (children, pools, timers). NULL is a no-op. */
void fix_flow_free(struct fix_flow *f);

#endif
