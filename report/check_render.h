/* SPDX-License-Identifier: MIT */
/*
 * check_render.h - what `clusterdoc check` and `clusterdoc env` print from a
 * finished check: the text report (predictions, findings worst first, the
 * verified environment), the JSON report (docs/report-format.md, version 1)
 * and the shell export lines. Output goes to stdout; nothing else is done.
 */
#ifndef CD_CHECK_RENDER_H
#define CD_CHECK_RENDER_H

#include <stdint.h>
#include <stdio.h>

#include "probes/diagnose.h"
#include "probes/netcheck.h"
#include "probes/netmodel.h"

struct check_result {
	const struct netmodel *m;
	const struct diagnosis *d;
	struct netcheck_stats stats;
	int64_t started_ms; /* cd_now_ms() when the check started */
	/* check --local: the checks left out because they need the peers (the
	 * JSON's "needs_peers"); NULL otherwise. Borrowed. */
	const char *const *needs_peers;
	size_t nneeds_peers;
};

void check_print_json(const struct check_result *r);
/* checked: the nodes probed; the header counts the partial ones apart
 * ("4 node(s), 3 checked, 1 partial"). */
void check_print_text(const struct check_result *r, int checked);

/* The export lines of every node, or of node `only` (NULL: all). Returns the
 * env command's exit status: 0 every value verified, 1 some could not be,
 * 2 a node shown could not be checked to the end (unreachable, or partial:
 * it stopped answering during the check; it gets a "# not checked" comment
 * and no lines) or `only` is not one of the nodes. */
int check_print_env(const struct check_result *r, const char *only);

/* check_print_env as one JSON document (docs/schema/env.json): each node's
 * host, whether it was checked (else its error), its variables and whether
 * they were all verified; the same exit status, also as "exit". */
int check_print_env_json(const struct check_result *r, const char *only);
/* The same lines to f, and the same status; 2 without a message. */
int check_write_env(FILE *f, const struct check_result *r, const char *only);

#endif
