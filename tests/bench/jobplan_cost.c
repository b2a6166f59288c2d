/* SPDX-License-Identifier: MIT */
/*
 * jobplan_cost.c - what the job plan adds to a check, for docs/performance.md:
 * a fixture cluster (tests/fixtures/clusters/ib0-link-local.json) grown to N
 * nodes by copies of its second node, each with its own addresses, then per
 * round: diagnose()
 * (the check's own pure part; the fixture's matrix covers its first two
 * nodes, so the copies are diagnosed as unreached, which is the slower case
 * for the plan: every node gets findings) beside job_plan_from_check +
 * job_gate_judge + the plan saved as JSON (what `run` and `check` add).
 * Prints the median of ROUNDS rounds of each, in microseconds.
 *
 *   cc -O2 -D_GNU_SOURCE -Icore -I. -o /tmp/jobplan_cost tests/bench/jobplan_cost.c \
 *      build/libclusterdoc.a -ljansson -lm && /tmp/jobplan_cost 512 15
 */
#include "jobs/jobgate.h"
#include "jobs/jobplan.h"
#include "probes/diagnose.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The fixture with copies of node 2 up to n nodes, every pair reached. */
static struct netmodel *grown(size_t n)
{
	json_error_t jerr;
	json_t *doc = json_load_file("tests/fixtures/clusters/ib0-link-local.json", 0, &jerr);
	json_t *nodes;
	char err[256];
	struct netmodel *m;

	if (!doc) {
		fprintf(stderr, "fixture: %s\n", jerr.text);
		exit(1);
	}
	nodes = json_object_get(doc, "nodes");
	for (size_t k = 2; k < n; k++) {
		json_t *node = json_deep_copy(json_array_get(nodes, 1)), *addrs;
		char host[16];

		snprintf(host, sizeof(host), "gpu%zu", k + 1);
		json_object_set_new(node, "host", json_string(host));
		json_object_set_new(json_object_get(node, "probe"), "hostname", json_string(host));
		addrs = json_object_get(json_object_get(node, "probe"), "addresses");
		for (size_t a = 0; a < json_array_size(addrs); a++) {
			json_t *x = json_array_get(addrs, a);
			const char *fam = json_string_value(json_object_get(x, "family"));
			char addr[64];

			if (fam && strcmp(fam, "inet") == 0)
				snprintf(addr, sizeof(addr), "10.0.%zu.%zu", (k + 1) / 250,
				         (k + 1) % 250 + 1);
			else
				snprintf(addr, sizeof(addr), "fe80::a288:c203:%zx:%zx", k / 65536,
				         k % 65536);
			json_object_set_new(x, "address", json_string(addr));
		}
		json_array_append_new(nodes, node);
	}
	m = netmodel_load_json(doc, err, sizeof(err));
	json_decref(doc);
	if (!m) {
		fprintf(stderr, "model: %s\n", err);
		exit(1);
	}
	return m;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 512;
	int rounds = argc > 2 ? atoi(argv[2]) : 15;
	struct netmodel *m = grown(n);
	double *diag = calloc((size_t)rounds, sizeof(double)),
	       *plan = calloc((size_t)rounds, sizeof(double));

	for (int r = 0; r < rounds; r++) {
		double t0 = now_us(), t1, t2;
		struct diagnosis *d = diagnose(m);
		struct job_plan *p;
		char *refused = NULL, *avoided = NULL, *text;
		json_t *j;

		t1 = now_us();
		p = job_plan_from_check(m, d, 0, NULL);
		job_gate_judge(p, 0, &refused, &avoided);
		j = job_plan_to_json(p);
		text = json_dumps(j, JSON_INDENT(2));
		t2 = now_us();
		diag[r] = t1 - t0;
		plan[r] = t2 - t1;
		free(text);
		json_decref(j);
		free(refused);
		free(avoided);
		job_plan_free(p);
		diagnosis_free(d);
	}
	qsort(diag, (size_t)rounds, sizeof(double), cmp);
	qsort(plan, (size_t)rounds, sizeof(double), cmp);
	printf("nodes %zu: diagnose %.0f us, plan + gate + JSON %.0f us (medians of %d)\n", n,
	       diag[rounds / 2], plan[rounds / 2], rounds);
	free(diag);
	free(plan);
	netmodel_free(m);
	return 0;
}
