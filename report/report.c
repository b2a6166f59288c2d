/* SPDX-License-Identifier: MIT */
/*
 * report.c - what --prom, --push and --junit ask for: writing or pushing
 * what report_check.c and report_bench.c built.
 */
#include "report.h"

#include "cd.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int report_wanted(const struct report_opts *o)
{
	return o->prom_path || o->push_url || o->junit_path;
}

struct prom *report_prom_new(const struct report_run *run, const char *exit_help)
{
	struct prom *p = prom_new();
	char name[3][96], help[2][96];

	snprintf(name[0], sizeof(name[0]), "clusterdoc_%s_last_run_timestamp_seconds",
	         run->command);
	snprintf(name[1], sizeof(name[1]), "clusterdoc_%s_duration_seconds", run->command);
	snprintf(name[2], sizeof(name[2]), "clusterdoc_%s_exit_status", run->command);
	snprintf(help[0], sizeof(help[0]), "When the %s started (Unix time)", run->command);
	snprintf(help[1], sizeof(help[1]), "How long the whole %s took", run->command);
	prom_family(p, "clusterdoc_info", PROM_GAUGE, "clusterdoc's version; always 1");
	prom_family(p, name[0], PROM_GAUGE, help[0]);
	prom_family(p, name[1], PROM_GAUGE, help[1]);
	prom_family(p, name[2], PROM_GAUGE, exit_help);
	prom_add(p, "clusterdoc_info", NULL, 1, "version", CLUSTERDOC_VERSION, NULL);
	prom_add(p, name[0], NULL, (double)run->started_at, NULL);
	prom_add(p, name[1], NULL, run->elapsed_s, NULL);
	prom_add(p, name[2], NULL, run->exit_status, NULL);
	return p;
}

void report_timestamp(long long t, char *buf, size_t cap)
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(buf, cap, "%Y-%m-%dT%H:%M:%S", &tm);
}

static int push(const struct report_opts *o, const struct report_run *run, const struct prom *prom)
{
	char err[CD_ERRLEN], head[256] = "head";
	struct prom_push_opts po = {
	    .url = o->push_url,
	    .job = "clusterdoc",
	    .run_instance = head,
	    /* check and bench push to the same instances: without a grouping
	     * label of their own, each PUT would delete the other's series */
	    .label = "command",
	    .value = run->command,
	};
	int n;

	if (gethostname(head, sizeof(head) - 1) != 0)
		snprintf(head, sizeof(head), "head");
	n = prom_push(prom, &po, err, sizeof(err));
	if (n < 0) {
		fprintf(stderr, "clusterdoc %s: --push: %s\n", run->command, err);
		return -1;
	}
	return 0;
}

int report_emit(const struct report_opts *o, const struct report_run *run, const struct prom *prom,
                const struct junit *junit)
{
	char err[CD_ERRLEN];
	int rc = 0;

	if (o->prom_path && prom && prom_write_file(prom, o->prom_path, err, sizeof(err)) < 0) {
		fprintf(stderr, "clusterdoc %s: --prom: %s\n", run->command, err);
		rc = -1;
	}
	if (o->push_url && prom && push(o, run, prom) < 0)
		rc = -1;
	if (o->junit_path && junit &&
	    junit_write_file(junit, o->junit_path, err, sizeof(err)) < 0) {
		fprintf(stderr, "clusterdoc %s: --junit: %s\n", run->command, err);
		rc = -1;
	}
	return rc;
}
