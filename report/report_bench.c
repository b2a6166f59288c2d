/* SPDX-License-Identifier: MIT */
/*
 * report_bench.c - `clusterdoc bench` results as Prometheus metrics and as
 * JUnit test cases (docs/report-format.md, "Metrics" and "JUnit").
 * Bandwidths go out in bytes per second (base units), times in seconds.
 */
#include "report.h"

#include "cd.h"
#include "collectives/bench_agent.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GB 1e9

static void declare_bench_families(struct prom *p)
{
	prom_family(p, "clusterdoc_bench_ranks", PROM_GAUGE, "Ranks in the allreduce ring");
	prom_family(p, "clusterdoc_bench_busbw_bytes_per_second", PROM_GAUGE,
	            "Allreduce bus bandwidth at one size (algbw x 2(n-1)/n, as nccl-tests)");
	prom_family(p, "clusterdoc_bench_algbw_bytes_per_second", PROM_GAUGE,
	            "Allreduce algorithm bandwidth (size / time) at one size");
	prom_family(p, "clusterdoc_bench_time_seconds", PROM_GAUGE,
	            "Allreduce time at one size, the slowest rank's");
	prom_family(p, "clusterdoc_bench_wrong_elements", PROM_GAUGE,
	            "Elements with a wrong result at one size, over all ranks");
	prom_family(p, "clusterdoc_bench_avg_busbw_bytes_per_second", PROM_GAUGE,
	            "Bus bandwidth averaged over the sizes (nccl-tests' Avg bus bandwidth)");
	prom_family(p, "clusterdoc_bench_failures", PROM_GAUGE,
	            "Ranks or nodes that failed during the run");
	prom_family(p, "clusterdoc_bench_node_in_run", PROM_GAUGE,
	            "1 when the node's ranks took part, 0 when it was left out (see the error)");
	prom_family(p, "clusterdoc_bench_link_busbw_bytes_per_second", PROM_GAUGE,
	            "Bus bandwidth of the 2-rank allreduce between node and peer (--pairs)");
	prom_family(p, "clusterdoc_bench_link_up", PROM_GAUGE,
	            "1 when the pair's allreduce completed, 0 when it failed (--pairs)");
	prom_family(p, "clusterdoc_bench_link_slow", PROM_GAUGE,
	            "1 when the link is below 0.7 x the median link (--pairs)");
}

static void size_metrics(struct prom *p, const struct bench_report *rep, const struct bench_opts *o)
{
	const char *backend = bench_backend_name(rep->backend), *dtype = coll_dtype_name(o->dtype);

	for (size_t s = 0; s < rep->nsizes; s++) {
		const struct bench_size *z = &rep->sizes[s];
		char bytes[32];

		snprintf(bytes, sizeof(bytes), "%zu", z->bytes);
		prom_add(p, "clusterdoc_bench_busbw_bytes_per_second", NULL, z->busbw * GB,
		         "backend", backend, "dtype", dtype, "size_bytes", bytes, NULL);
		prom_add(p, "clusterdoc_bench_algbw_bytes_per_second", NULL, z->algbw * GB,
		         "backend", backend, "dtype", dtype, "size_bytes", bytes, NULL);
		prom_add(p, "clusterdoc_bench_time_seconds", NULL, z->time_us / 1e6, "backend",
		         backend, "dtype", dtype, "size_bytes", bytes, NULL);
		if (z->wrong >= 0)
			prom_add(p, "clusterdoc_bench_wrong_elements", NULL, (double)z->wrong,
			         "backend", backend, "dtype", dtype, "size_bytes", bytes, NULL);
	}
	if (rep->nsizes)
		prom_add(p, "clusterdoc_bench_avg_busbw_bytes_per_second", NULL,
		         rep->avg_busbw * GB, "backend", backend, "dtype", dtype, NULL);
}

static void link_metrics(struct prom *p, const struct bench_report *rep)
{
	for (size_t k = 0; k < rep->nlinks; k++) {
		const struct bench_link *l = &rep->links[k];
		const char *a = rep->nodes[l->a].host, *b = rep->nodes[l->b].host;

		prom_add(p, "clusterdoc_bench_link_up", a, l->failed ? 0 : 1, "node", a, "peer", b,
		         NULL);
		if (l->failed)
			continue;
		prom_add(p, "clusterdoc_bench_link_busbw_bytes_per_second", a, l->busbw * GB,
		         "node", a, "peer", b, NULL);
		prom_add(p, "clusterdoc_bench_link_slow", a, l->slow, "node", a, "peer", b, NULL);
	}
}

struct prom *report_bench_prom(const struct bench_report *rep, const struct bench_opts *o,
                               const struct report_run *run)
{
	struct prom *p = report_prom_new(run, "The bench's exit status: 0 right and fast enough, "
	                                      "1 wrong results or too slow, 2 the run could not "
	                                      "complete");

	declare_bench_families(p);
	prom_add(p, "clusterdoc_bench_ranks", NULL, rep->nranks, NULL);
	prom_add(p, "clusterdoc_bench_failures", NULL, (double)rep->nfailures, NULL);
	size_metrics(p, rep, o);
	for (size_t i = 0; i < rep->nnodes; i++) {
		const struct bench_node *n = &rep->nodes[i];

		prom_add(p, "clusterdoc_bench_node_in_run", n->host,
		         n->nranks > 0 && !n->error[0] ? 1 : 0, "node", n->host, NULL);
	}
	link_metrics(p, rep);
	return p;
}

/* The failures that name node i, one per line, or NULL. */
static char *node_failures(const struct bench_report *rep, size_t i)
{
	char *text = NULL;

	for (size_t k = 0; k < rep->nfailures; k++) {
		const struct bench_failure *f = &rep->failures[k];
		char *line;

		if (f->node != i)
			continue;
		line = f->rank >= 0
		           ? cd_asprintf("%s%srank %d %s at %zu bytes: %s", text ? text : "",
		                         text ? "\n" : "", f->rank, f->kind, f->bytes, f->message)
		           : cd_asprintf("%s%s%s: %s", text ? text : "", text ? "\n" : "", f->kind,
		                         f->message);
		free(text);
		text = line;
	}
	return text;
}

static void size_cases(struct junit *j, const struct bench_report *rep, const struct bench_opts *o,
                       double min_bw)
{
	size_t want[BENCH_MAX_SIZES], nwant = bench_sizes(o, want, BENCH_MAX_SIZES);
	const char *dtype = coll_dtype_name(o->dtype);

	junit_suite(j, "allreduce", NULL);
	for (size_t w = 0; w < nwant; w++) {
		const struct bench_size *z = NULL;
		char name[96], msg[256];

		for (size_t s = 0; s < rep->nsizes; s++)
			if (rep->sizes[s].bytes == want[w])
				z = &rep->sizes[s];
		snprintf(name, sizeof(name), "%zu bytes %s sum", want[w], dtype);
		if (!z) {
			junit_case(j, "clusterdoc.bench.allreduce", name, 0, JUNIT_ERROR,
			           "incomplete",
			           "the run ended before this size (see the failures)", NULL, NULL);
			continue;
		}
		snprintf(msg, sizeof(msg), "busbw %.2f GB/s, algbw %.2f GB/s, %.2f us", z->busbw,
		         z->algbw, z->time_us);
		if (z->wrong > 0) {
			char m2[320];

			snprintf(m2, sizeof(m2), "%lld wrong element(s); %s", z->wrong, msg);
			junit_case(j, "clusterdoc.bench.allreduce", name, z->time_us / 1e6,
			           JUNIT_FAILURE, "wrong", m2, NULL, NULL);
		} else if (min_bw > 0 && w + 1 == nwant && z->busbw < 0.9 * min_bw) {
			char m2[320];

			snprintf(m2, sizeof(m2), "busbw %.2f GB/s is below 0.9 x %.2f GB/s",
			         z->busbw, min_bw);
			junit_case(j, "clusterdoc.bench.allreduce", name, z->time_us / 1e6,
			           JUNIT_FAILURE, "slow", m2, NULL, NULL);
		} else {
			junit_case(j, "clusterdoc.bench.allreduce", name, z->time_us / 1e6,
			           JUNIT_PASS, NULL, NULL, NULL, msg);
		}
	}
}

static void link_cases(struct junit *j, const struct bench_report *rep, double min_bw)
{
	junit_suite(j, "links", NULL);
	for (size_t k = 0; k < rep->nlinks; k++) {
		const struct bench_link *l = &rep->links[k];
		char name[600], msg[256];

		snprintf(name, sizeof(name), "%s <-> %s", rep->nodes[l->a].host,
		         rep->nodes[l->b].host);
		snprintf(msg, sizeof(msg), "busbw %.2f GB/s", l->busbw);
		if (l->failed)
			junit_case(j, "clusterdoc.bench.link", name, 0, JUNIT_ERROR, "failed",
			           l->error, NULL, NULL);
		else if (l->slow || (min_bw > 0 && l->busbw < 0.9 * min_bw))
			junit_case(j, "clusterdoc.bench.link", name, l->time_us / 1e6,
			           JUNIT_FAILURE, "slow", msg,
			           rep->slow_nodes[0] ? rep->slow_nodes : NULL, NULL);
		else
			junit_case(j, "clusterdoc.bench.link", name, l->time_us / 1e6, JUNIT_PASS,
			           NULL, NULL, NULL, msg);
	}
}

struct junit *report_bench_junit(const struct bench_report *rep, const struct bench_opts *o,
                                 double min_bw, const struct report_run *run)
{
	char stamp[32];
	struct junit *j;

	report_timestamp(run->started_at, stamp, sizeof(stamp));
	j = junit_new("clusterdoc bench", stamp);
	for (size_t i = 0; i < rep->nnodes; i++) {
		const struct bench_node *n = &rep->nodes[i];
		char *fails = node_failures(rep, i);

		junit_suite(j, n->host, NULL);
		if (n->error[0])
			junit_case(j, "clusterdoc.bench", "ranks", 0, JUNIT_ERROR,
			           n->error_code[0] ? n->error_code : NULL, n->error, NULL, NULL);
		else if (fails)
			junit_case(j, "clusterdoc.bench", "ranks", 0, JUNIT_FAILURE, "failed",
			           "a rank on this node failed", fails, NULL);
		else
			junit_case(j, "clusterdoc.bench", "ranks", 0, JUNIT_PASS, NULL, NULL, NULL,
			           NULL);
		free(fails);
	}
	if (o->pairs)
		link_cases(j, rep, min_bw);
	else
		size_cases(j, rep, o, min_bw);
	return j;
}
