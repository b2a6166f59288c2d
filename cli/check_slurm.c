/* SPDX-License-Identifier: MIT */
/* check_slurm.c - the Prolog verdict, --drain and --undrain (check_slurm.h). */
#include "check_slurm.h"
#include "termtext.h"

#include "cd.h"
#include "jobs/jobgate.h"
#include "slurm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

int check_error_ids(const struct diagnosis *d, size_t i, char *buf, size_t cap)
{
	int n = 0;
	size_t len = 0;

	buf[0] = '\0';
	/* the catalogue's order is fixed, so walking it gives a stable order */
	for (size_t c = 0; c < finding_catalogue_len; c++) {
		const char *id = finding_catalogue[c].id;
		int hit = 0;

		for (size_t k = 0; k < d->nfindings && !hit; k++)
			hit = d->findings[k].severity == SEV_ERROR &&
			      strcmp(d->findings[k].id, id) == 0 && job_gate_drain(id) == DRAINS &&
			      finding_names(&d->findings[k], i);
		if (!hit)
			continue;
		len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0, "%s%s", n ? "," : "",
		                        id);
		if (len >= cap)
			len = cap - 1;
		n++;
	}
	return n;
}

static int same_host(const char *a, const char *b)
{
	size_t la = strcspn(a, "."), lb = strcspn(b, ".");

	return strcmp(a, b) == 0 || (la == lb && strncmp(a, b, la) == 0 && (!a[la] || !b[lb]));
}

long check_local_node(const struct netmodel *m, const char *given, char *name, size_t cap)
{
	const char *env = getenv("SLURMD_NODENAME");
	char host[256] = "";

	if (given && *given)
		snprintf(name, cap, "%s", given);
	else if (env && *env)
		snprintf(name, cap, "%s", env);
	else {
		gethostname(host, sizeof(host) - 1);
		snprintf(name, cap, "%s", host);
	}
	for (size_t i = 0; i < m->nnodes; i++)
		if (strcmp(m->nodes[i].host, name) == 0)
			return (long)i;
	for (size_t i = 0; i < m->nnodes; i++)
		if (same_host(m->nodes[i].host, name) ||
		    (m->nodes[i].hostname[0] && same_host(m->nodes[i].hostname, name)))
			return (long)i;
	return -1;
}

int check_slurm_prolog_verdict(const struct netmodel *m, const struct diagnosis *d, size_t local)
{
	int failed = 0;

	for (size_t k = 0; k < d->nfindings; k++) {
		const struct finding *f = &d->findings[k];

		if (f->severity != SEV_ERROR || !finding_names(f, local) ||
		    job_gate_drain(f->id) != DRAINS)
			continue;
		if (!failed)
			openlog("clusterdoc", LOG_PID, LOG_DAEMON);
		syslog(LOG_ERR, "%s: %s: %s", m->nodes[local].host, f->id, f->message);
		termtext_printf(stderr, "clusterdoc check: %s: %s: %s\n", m->nodes[local].host,
		                f->id, f->message);
		failed = 1;
	}
	if (failed)
		closelog();
	return failed;
}

static int any_checked(const struct netmodel *m)
{
	for (size_t i = 0; i < m->nnodes; i++)
		if (m->nodes[i].probed)
			return 1;
	return 0;
}

/* What --drain --dry-run prints for one node: the command, quoted for a
 * shell (the reason holds a blank). */
static void print_would_drain(FILE *f, const char *host, const char *reason)
{
	termtext_printf(f, "would drain %s: scontrol update NodeName=%s State=DRAIN Reason='%s'\n",
	                host, host, reason);
}

/* The error findings of node i that do not drain it, each with why. */
static void print_not_drained(FILE *f, const struct diagnosis *d, size_t i, const char *host)
{
	for (size_t c = 0; c < finding_catalogue_len; c++) {
		const char *id = finding_catalogue[c].id;
		enum job_drain why = job_gate_drain(id);

		if (why == DRAINS)
			continue;
		for (size_t k = 0; k < d->nfindings; k++) {
			if (d->findings[k].severity == SEV_ERROR &&
			    strcmp(d->findings[k].id, id) == 0 &&
			    finding_names(&d->findings[k], i)) {
				termtext_printf(f, "not drained for %s's %s: %s\n", host, id,
				                job_gate_drain_why(why));
				break;
			}
		}
	}
}

int check_slurm_drain(const struct netmodel *m, const struct diagnosis *d, long only, int quiet,
                      FILE *dry_run)
{
	int rc = 0;

	if (!any_checked(m)) {
		fprintf(stderr, "clusterdoc check: --drain: no node could be checked, so the fault "
		                "is more likely this host's (its SSH keys, its network) than every "
		                "node's; nothing drained\n");
		return -1;
	}
	for (size_t i = 0; i < m->nnodes; i++) {
		const char *host = m->nodes[i].host;
		char ids[400], reason[440], err[CD_ERRLEN];
		struct slurm_node sn;

		if (only >= 0 && (size_t)only != i)
			continue;
		if (dry_run || !quiet)
			print_not_drained(dry_run ? dry_run : stderr, d, i, host);
		if (!check_error_ids(d, i, ids, sizeof(ids)))
			continue;
		snprintf(reason, sizeof(reason), "%s %s", SLURM_REASON_PREFIX, ids);
		if (dry_run) {
			print_would_drain(dry_run, host, reason);
			continue;
		}
		if (slurm_node_get(host, &sn, err, sizeof(err)) < 0) {
			termtext_printf(stderr, "clusterdoc check: --drain: %s: %s\n", host, err);
			rc = -1;
			continue;
		}
		if ((sn.drained || sn.down) && sn.reason[0] &&
		    strncmp(sn.reason, SLURM_REASON_PREFIX, strlen(SLURM_REASON_PREFIX)) != 0) {
			if (!quiet)
				fprintf(stderr,
				        "clusterdoc check: %s is already %s for another reason "
				        "(\"%s\"); left as it is\n",
				        host, sn.state, sn.reason);
			continue;
		}
		if (sn.drained && strcmp(sn.reason, reason) == 0) {
			if (!quiet)
				termtext_printf(stderr,
				                "clusterdoc check: %s already drained: %s\n", host,
				                reason);
			continue;
		}
		if (slurm_drain(host, reason, err, sizeof(err)) < 0) {
			termtext_printf(stderr, "clusterdoc check: --drain: %s: %s\n", host, err);
			rc = -1;
			continue;
		}
		if (!quiet)
			termtext_printf(stderr, "clusterdoc check: drained %s: %s\n", host, reason);
	}
	return rc;
}

int check_slurm_undrain(const struct netmodel *m, const struct diagnosis *d, long only, int quiet)
{
	int rc = 0;

	for (size_t i = 0; i < m->nnodes; i++) {
		const char *host = m->nodes[i].host;
		char ids[400], err[CD_ERRLEN];
		struct slurm_node sn;

		/* only a node that was checked and passes now comes back */
		if ((only >= 0 && (size_t)only != i) || !m->nodes[i].probed ||
		    check_error_ids(d, i, ids, sizeof(ids)))
			continue;
		if (slurm_node_get(host, &sn, err, sizeof(err)) < 0) {
			termtext_printf(stderr, "clusterdoc check: --undrain: %s: %s\n", host, err);
			rc = -1;
			continue;
		}
		if (!sn.drained)
			continue;
		if (strncmp(sn.reason, SLURM_REASON_PREFIX, strlen(SLURM_REASON_PREFIX)) != 0) {
			if (!quiet)
				fprintf(
				    stderr,
				    "clusterdoc check: %s is drained for another reason (\"%s\"); "
				    "not resumed\n",
				    host, sn.reason);
			continue;
		}
		if (slurm_resume(host, err, sizeof(err)) < 0) {
			termtext_printf(stderr, "clusterdoc check: --undrain: %s: %s\n", host, err);
			rc = -1;
			continue;
		}
		if (!quiet)
			termtext_printf(stderr, "clusterdoc check: resumed %s (was: %s)\n", host,
			                sn.reason);
	}
	return rc;
}
