/* SPDX-License-Identifier: MIT */
/*
 * check_once.h - run the network check once, to the end, from the CLI:
 * the SSH pool, netcheck's phases in a loop of their own, the deadline,
 * then diagnose(). `check`, `env` and `fix` (before and after fixing) use it.
 */
#ifndef CD_CLI_CHECK_ONCE_H
#define CD_CLI_CHECK_ONCE_H

#include "probes/diagnose.h"
#include "probes/netcheck.h"
#include "sshpool.h"

struct check_once {
	/* in */
	const struct sshpool_opts *pool; /* how to reach the nodes */
	struct netcheck_opts o;          /* netcheck_opts_init'ed by the caller */
	int deadline_s;                  /* 0 = none */
	const char *master;              /* --master HOST, or NULL: o.master is set from it */
	/* out: m is the caller's (netmodel_new with the hosts), d new */
	struct netmodel *m;
	struct diagnosis *d;
	struct netcheck_stats stats;
	int deadline_hit;
	int checked; /* nodes probed */
	int partial; /* of them, nodes that failed after their probe (nm_node_partial) */
};

/*
 * Run the check on c->m's nodes and diagnose it. 0, CD_ERR_NOTFOUND when
 * c->master is not one of the nodes ("--master X is not one of the nodes
 * given with -w" in err), or CD_ERR_IO when the pool could not start (the
 * agent unreadable), with a message in err.
 */
int check_once_run(struct check_once *c, char *err, size_t errlen);

#endif
