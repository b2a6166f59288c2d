/* SPDX-License-Identifier: MIT */
/*
 * fix_verify.h - the verdicts of `clusterdoc fix`'s second check, as data:
 * per node and fixer, whether the new check shows the fix held. The
 * printers (report/fix_render.h) only print them.
 *
 * A (node, fixer) pair is NOT FIXED when the second check did not run, did
 * not reach the node, still finds an error the fixer answers on it, or
 * when the fixer's own verify role (fix.h) says so (port-range: the range
 * the node reads). The login stage's nodes are verified when the new check
 * logged in to them by key.
 */
#ifndef CD_FIXERS_FIX_VERIFY_H
#define CD_FIXERS_FIX_VERIFY_H

#include <stddef.h>

#include "fix.h"
#include "fix_login.h"
#include "fix_run.h"

enum fix_verdict_kind {
	FIX_VERDICT_FIXER, /* a fixer of the plan on a node its findings named */
	FIX_VERDICT_LOGIN, /* a node of the login stage (ssh-key) */
};

/* What the apply did for a (node, fixer) pair, beside what the check says. */
enum fix_verdict_change {
	FIX_CHANGE_NOT_PLANNED, /* no action of the fixer on the node */
	FIX_CHANGE_APPLIED,     /* every action applied (or already as planned) */
	FIX_CHANGE_FAILED,      /* an action failed or was skipped */
};

struct fix_verdict {
	enum fix_verdict_kind kind;
	enum fix_verdict_change change; /* FIX_VERDICT_FIXER with results */
	size_t node;                    /* the node's index in the models */
	const char *fixer;              /* the fixer's id (static) */
	int verified;                   /* 1: verified, 0: NOT FIXED */
	char still[CD_ERRLEN + 64];     /* NOT FIXED: why ("" when verified) */
};

struct fix_verification {
	struct fix_verdict *v; /* in the order they are printed */
	size_t n;
	int bad; /* verdicts that are NOT FIXED */
};

/* Add the plan's verdicts: per node, each selected fixer whose findings
 * named the node before (planned or not), against m2 and its diagnosis
 * after (NULL: the second check did not run). results (as fix_run.h's
 * apply filled them; NULL: not applied) give each verdict's change. */
void fix_verify_plan(struct fix_verification *out, const struct netmodel *m2,
                     const struct fix_plan *p, struct fix_result *const *results,
                     const struct diagnosis *after);

/* Add the login stage's verdicts: each of its nodes against m2. */
void fix_verify_login(struct fix_verification *out, const struct fix_login *l,
                      const struct netmodel *m2);

/* Whether the new check (after; NULL: it did not run) still reports finding
 * id: returns how many findings with that id it has (0: the finding is
 * gone) and, in *nodes (the caller frees it; NULL when none), the nodes they
 * name in order (indexes into the new check's model), *nnodes of them. */
size_t fix_verify_finding(const struct diagnosis *after, const char *id, size_t **nodes,
                          size_t *nnodes);

/* Frees the verdicts and leaves out empty. */
void fix_verification_fini(struct fix_verification *out);

#endif
