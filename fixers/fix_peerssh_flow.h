/* SPDX-License-Identifier: MIT */
/*
 * fix_peerssh_flow.h - `clusterdoc mpi-check [--fix [--apply]]` as one
 * chain of phases driven by the loop, the way fix_flow.h drives `clusterdoc
 * fix`; the front end only parses options, starts the flow and renders.
 *
 *   check   every node logs in to every other (probes/peerssh_matrix.h);
 *           without fix the flow ends here
 *   key     the cluster key found on the head, or (apply) made once by
 *           ssh-keygen as a child of the loop; each node's host key as the
 *           check's login verified it (the head's known_hosts)
 *   gather  the nodes' files (fix_run.h, with fix_peerssh_paths)
 *   plan    fix_peerssh_plan (pure); without apply, or with nothing to
 *           change, the flow ends here; with ask it waits for
 *           fix_peerssh_flow_answer (the front end asks the user)
 *   apply   the plan, journalled (fix_run_apply); undone with `clusterdoc
 *           fix --undo RUN`
 *
 * done(arg) is called once, from a 0 ms timer of the flow's own (never
 * from inside fix_peerssh_flow_start); the report is then final. With ask
 * it is also called when the plan waits for an answer (report's asking);
 * then once more when the flow ends. Nothing
 * blocks: the nodes are reached through SSH pools of the loop.
 */
#ifndef CD_FIXERS_FIX_PEERSSH_FLOW_H
#define CD_FIXERS_FIX_PEERSSH_FLOW_H

#include <stddef.h>

#include "cd.h"
#include "fix.h"
#include "fix_run.h"
#include "loop.h"
#include "probes/peerssh_matrix.h"
#include "sshpool.h"

struct fix_peerssh_flow_opts {
	const struct sshpool_opts *pool; /* how to reach the nodes */
	const char *const *hosts;        /* borrowed until the flow is freed */
	size_t n;
	int pair_timeout_ms; /* one login of the check */
	int fix;             /* after the check: key, gather, plan */
	int apply;           /* with fix: make the key, apply the plan */
	int ask;             /* with apply: wait for fix_peerssh_flow_answer before it */
};

/* What the flow found (read-only; final once done was called). */
struct fix_peerssh_flow_report {
	int done;
	int asking;                     /* ask: the plan waits for fix_peerssh_flow_answer */
	const struct peerssh_matrix *m; /* the check's matrix */
	struct fix_plan *plan;          /* fix: the plan, NULL when it was not made */
	struct fix_result **results;    /* applied: [n][plan->nodes[i].nactions + 1], else NULL */
	char journal_err[CD_ERRLEN];    /* the journal could not be saved, or "" */
	char error[CD_ERRLEN];          /* a phase of fix that could not run, or "" */
	/* with fix: 0 nothing to do / everything applied, 1 changes planned /
	 * a change failed, 2 a phase could not run; without fix 0 (the
	 * matrix's status is report/peerssh_render.h's peerssh_exit_status) */
	int exit_status;
};

struct fix_peerssh_flow;

/*
 * Start the check on loop. o and its pointers are borrowed until the flow
 * is freed. NULL with err when the check's pool could not start: nothing
 * is called back.
 */
struct fix_peerssh_flow *fix_peerssh_flow_start(struct loop *loop,
                                                const struct fix_peerssh_flow_opts *o,
                                                void (*done)(void *arg), void *arg, char *err,
                                                size_t errlen);

const struct fix_peerssh_flow_report *fix_peerssh_flow_report(const struct fix_peerssh_flow *f);

/* While the plan waits (report's asking): the agents are told the head may
 * be silent for up to hold_ms (sshpool_keepalive_hold), before a question
 * that blocks the loop; give the loop a turn to send the lines. */
void fix_peerssh_flow_hold(struct fix_peerssh_flow *f, int hold_ms);

/* The answer to the plan's question: yes applies it; no ends the flow with
 * exit status 2 and nothing changed. Nothing when the plan does not wait. */
void fix_peerssh_flow_answer(struct fix_peerssh_flow *f, int yes);

/* Stops whatever runs (child, pools, timer); the private key leaves no copy
 * in freed memory. NULL is a no-op. */
void fix_peerssh_flow_free(struct fix_peerssh_flow *f);

#endif
