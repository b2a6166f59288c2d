/* SPDX-License-Identifier: MIT */
/*
 * check_slurm.h - what `clusterdoc check` does for Slurm (docs/slurm.md):
 *   --slurm-prolog  the verdict for the node the Prolog runs on: quiet, and
 *                   non-zero only for draining error findings that name
 *                   that node
 *   --drain         drain every node with draining error findings, Reason
 *                   "clusterdoc: <finding ids>"
 * A finding drains when it is the node's own state: jobs/jobgate.h's drain
 * column (not what the suggested environment avoids, what the checking
 * user's login sets, or a pair's failure).
 *   --undrain       resume the nodes that pass now and whose reason starts
 *                   with "clusterdoc:"; a drain by anyone else is left alone
 *   --dry-run       with --drain: print the scontrol command each drain
 *                   would run, on stdout, and run none (NHC's MARK_OFFLINE=0)
 */
#ifndef CD_CHECK_SLURM_H
#define CD_CHECK_SLURM_H

#include <stdio.h>

#include "probes/diagnose.h"
#include "probes/netmodel.h"

/* The ids of the draining error findings that name node i, sorted and
 * without repeats, comma-separated, into buf ("" when none). Returns how
 * many. */
int check_error_ids(const struct diagnosis *d, size_t i, char *buf, size_t cap);

/*
 * The index of the local node among m's nodes: `given` (--node), else
 * $SLURMD_NODENAME, else this machine's hostname (short or full). Matches
 * the host as given, or what the node calls itself. -1 when none matches;
 * the name looked for goes into name.
 */
long check_local_node(const struct netmodel *m, const char *given, char *name, size_t cap);

/*
 * The Prolog's verdict for node `local`: 1 when a draining error finding
 * names it
 * (each one is logged to syslog, facility daemon, and printed on stderr),
 * else 0. Nothing goes to stdout.
 */
int check_slurm_prolog_verdict(const struct netmodel *m, const struct diagnosis *d, size_t local);

/*
 * --drain and --undrain, on every node (only < 0) or on node `only` alone
 * (--node: a health check run on each node acts on itself). Each change and
 * each node left alone is printed on stderr (unless quiet). Nothing is
 * drained when no node could be checked: then the failure is the head's,
 * not the nodes'. An error finding of a node that does not drain is named
 * with why ("not drained for node1's ipv6-no-route: WHY") on dry_run, or
 * on stderr unless quiet. Returns 0, or -1 when an scontrol call failed or draining
 * was refused. dry_run non-NULL (drain only): each drain is one line on
 * it (stdout; stderr when stdout holds JSON), "would drain NODE: scontrol
 * update NodeName=NODE State=DRAIN Reason='clusterdoc: IDS'", and Slurm is
 * neither asked nor changed.
 */
int check_slurm_drain(const struct netmodel *m, const struct diagnosis *d, long only, int quiet,
                      FILE *dry_run);
int check_slurm_undrain(const struct netmodel *m, const struct diagnosis *d, long only, int quiet);

#endif
