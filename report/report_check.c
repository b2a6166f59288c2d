/* SPDX-License-Identifier: MIT */
/*
 * report_check.c - `clusterdoc check` results as Prometheus metrics and as
 * JUnit test cases (docs/report-format.md, "Metrics" and "JUnit"), and
 * the head's own load (its event loop's lag) for the JSON and text reports.
 *
 * One series per node and finding id, for every id of the catalogue, so an
 * alert on `clusterdoc_check_finding == 1` resolves when the finding is gone
 * instead of going stale. A node that could not be checked reports only
 * that: nothing else about it is known.
 */
#include "report.h"

#include "cd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The worst severity of finding `id` that names node i, or -1 when none. */
static int node_severity(const struct diagnosis *d, size_t i, const char *id)
{
	int worst = -1;

	for (size_t k = 0; k < d->nfindings; k++) {
		const struct finding *f = &d->findings[k];

		if (strcmp(f->id, id) == 0 && finding_names(f, i) &&
		    (worst < 0 || (int)f->severity < worst))
			worst = (int)f->severity;
	}
	return worst;
}

/* The first finding of `id` that names node i with that severity. */
static const struct finding *node_finding(const struct diagnosis *d, size_t i, const char *id,
                                          int severity)
{
	for (size_t k = 0; k < d->nfindings; k++) {
		const struct finding *f = &d->findings[k];

		if (strcmp(f->id, id) == 0 && (int)f->severity == severity && finding_names(f, i))
			return f;
	}
	return NULL;
}

static void declare_check_families(struct prom *p)
{
	prom_family(p, "clusterdoc_check_nodes", PROM_GAUGE, "Nodes given to the check");
	prom_family(p, "clusterdoc_check_nodes_checked", PROM_GAUGE,
	            "Nodes that answered the probes");
	prom_family(p, "clusterdoc_check_findings", PROM_GAUGE,
	            "Findings of the run by severity (a finding may name several nodes)");
	prom_family(p, "clusterdoc_check_node_up", PROM_GAUGE,
	            "1 when the node was checked, 0 when it could not be reached or stopped "
	            "answering");
	prom_family(p, "clusterdoc_check_finding", PROM_GAUGE,
	            "1 when the finding names the node, 0 when it does not (docs/findings.md)");
	prom_family(p, "clusterdoc_check_node_findings", PROM_GAUGE,
	            "Findings that name the node, by severity");
	prom_family(p, "clusterdoc_check_peers_failed", PROM_GAUGE,
	            "TCP attempts from other nodes to this node's listeners that failed");
}

static void node_metrics(struct prom *p, const struct netmodel *m, const struct diagnosis *d,
                         size_t i)
{
	const char *host = m->nodes[i].host;
	int counts[3] = {0, 0, 0};
	size_t failed = 0;

	prom_add(p, "clusterdoc_check_node_up", host, m->nodes[i].probed ? 1 : 0, "node", host,
	         NULL);
	for (size_t c = 0; c < finding_catalogue_len; c++) {
		const struct finding_def *def = &finding_catalogue[c];
		int sev = node_severity(d, i, def->id);

		if (sev >= 0)
			counts[sev]++;
		/* what was not checked is unknown, not absent */
		if (!m->nodes[i].probed && sev < 0)
			continue;
		prom_add(p, "clusterdoc_check_finding", host, sev >= 0 ? 1 : 0, "node", host, "id",
		         def->id, "severity",
		         severity_name(sev >= 0 ? (enum severity)sev : def->severity), NULL);
	}
	for (int s = SEV_ERROR; s <= SEV_INFO; s++)
		prom_add(p, "clusterdoc_check_node_findings", host, counts[s], "node", host,
		         "severity", severity_name((enum severity)s), NULL);
	if (!m->nodes[i].probed)
		return;
	for (size_t k = 0; k < m->nattempts; k++) {
		const struct nm_attempt *a = &m->attempts[k];

		/* peers only: the master's own MASTER_PORT attempts (its path
		 * to its own address) are in master-port-blocked */
		failed += a->to == i && a->from != i && strcmp(a->result, "ok") != 0 &&
		          strcmp(a->result, "not-tested") != 0;
	}
	prom_add(p, "clusterdoc_check_peers_failed", host, (double)failed, "node", host, NULL);
}

struct prom *report_check_prom(const struct netmodel *m, const struct diagnosis *d,
                               const struct report_run *run)
{
	struct prom *p = report_prom_new(run, "The check's exit status: 0 no error findings, 1 "
	                                      "error findings, 2 a node could not be checked");
	int checked = 0, by_sev[3] = {0, 0, 0};

	declare_check_families(p);
	for (size_t i = 0; i < m->nnodes; i++)
		checked += m->nodes[i].probed;
	for (size_t k = 0; k < d->nfindings; k++)
		by_sev[d->findings[k].severity]++;
	prom_add(p, "clusterdoc_check_nodes", NULL, (double)m->nnodes, NULL);
	prom_add(p, "clusterdoc_check_nodes_checked", NULL, checked, NULL);
	for (int s = SEV_ERROR; s <= SEV_INFO; s++)
		prom_add(p, "clusterdoc_check_findings", NULL, by_sev[s], "severity",
		         severity_name((enum severity)s), NULL);
	for (size_t i = 0; i < m->nnodes; i++)
		node_metrics(p, m, d, i);
	return p;
}

/* "message\nevidence: ...\nfix: ..." for a failure's text. */
static char *finding_detail(const struct finding *f)
{
	return cd_asprintf("%s\nevidence:\n%s\nfix: %s", f->message, f->evidence ? f->evidence : "",
	                   f->fix ? f->fix : "");
}

static void node_cases(struct junit *j, const struct netmodel *m, const struct diagnosis *d,
                       size_t i)
{
	const struct nm_node *n = &m->nodes[i];
	/* a node too slow to check is that, not unreachable (diagnose_checks.c) */
	const char *not_checked = node_severity(d, i, "node-unreachable") < 0 &&
	                                  node_severity(d, i, "probe-incomplete") >= 0
	                              ? "probe-incomplete"
	                              : "node-unreachable";

	junit_suite(j, n->host, n->hostname[0] ? n->hostname : NULL);
	for (size_t c = 0; c < finding_catalogue_len; c++) {
		const char *id = finding_catalogue[c].id;
		int sev = node_severity(d, i, id);
		const struct finding *f = sev >= 0 ? node_finding(d, i, id, sev) : NULL;
		char *detail = f ? finding_detail(f) : NULL;

		if (!n->probed && strcmp(id, not_checked) == 0)
			junit_case(j, "clusterdoc.check", id, 0, JUNIT_ERROR, n->error_code,
			           n->error[0] ? n->error : "could not be checked", detail, NULL);
		else if (!n->probed)
			junit_case(j, "clusterdoc.check", id, 0, JUNIT_SKIPPED, NULL,
			           "not checked: the node could not be reached", NULL, NULL);
		else if (sev == SEV_ERROR)
			junit_case(j, "clusterdoc.check", id, 0, JUNIT_FAILURE, "error", f->message,
			           detail, NULL);
		else
			/* warnings and notes do not fail a build; they are shown */
			junit_case(j, "clusterdoc.check", id, 0, JUNIT_PASS, NULL, NULL, NULL,
			           detail);
		free(detail);
	}
}

struct junit *report_check_junit(const struct netmodel *m, const struct diagnosis *d,
                                 const struct report_run *run)
{
	char stamp[32];
	struct junit *j;

	report_timestamp(run->started_at, stamp, sizeof(stamp));
	j = junit_new("clusterdoc check", stamp);
	for (size_t i = 0; i < m->nnodes; i++)
		node_cases(j, m, d, i);
	return j;
}

json_t *report_check_head_load_json(const struct loop_stats *st)
{
	return json_pack("{sIsIsb}", "loop_lag_ms", (json_int_t)st->max_late_ms, "longest_turn_ms",
	                 (json_int_t)(st->max_turn_us / 1000), "overloaded",
	                 st->max_late_ms >= REPORT_HEAD_LAG_MS);
}

void report_check_head_load_note(FILE *f, const struct loop_stats *st)
{
	if (st->max_late_ms < REPORT_HEAD_LAG_MS)
		return;
	fprintf(f,
	        "note: this machine (the head) was overloaded: clusterdoc's event loop lagged up "
	        "to %.1f s, so deadlines fired late and a node reported slow may have waited on "
	        "the head\n\n",
	        (double)st->max_late_ms / 1000);
}
