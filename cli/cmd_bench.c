/*
 * cmd_bench.c - `clusterdoc bench`: the allreduce bandwidth test between
 * the nodes (collectives/bench.h), printed as nccl-tests prints it, or as
 * JSON. Exit status: 0 the run completed with every element right (and, with
 * --check-min-bw, fast enough); 1 wrong elements or too slow; 2 the run
 * could not complete (a node or rank failed, or none could run).
 */
#include "cd.h"
#include "termtext.h"
#include "collectives/bench.h"
#include "collectives/bench_agent.h"
#include "commands.h"
#include "loop.h"
#include "optgroups.h"
#include "report/bench_render.h"
#include "report/report.h"
#include "run_check.h"
#include "targets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
	OPT_CHECK_MIN_BW = OPT_TARGETS_END,
	OPT_PROGRESS,
};

struct bench_run {
	struct targets t;
	struct report_opts rep_o;
	struct bench_opts o;
	double min_bw; /* --check-min-bw GB/s; 0 = none */
	int progress;  /* --progress */
	int shown_round;
	size_t shown_sizes; /* the last progress line's round and sizes */
	struct loop *loop;
	struct sshpool *pool;
	struct bench *b;
};

static void on_done(void *arg)
{
	loop_stop(((struct bench_run *)arg)->loop);
}

/* --progress: one line on stderr each time the sizes every rank has
 * completed move, "sizes 7/26 done, now 1048576 bytes" (and the round of
 * --pairs first). */
static void on_progress(void *arg)
{
	struct bench_run *r = arg;
	struct bench_progress p;
	size_t sizes[BENCH_MAX_SIZES];

	bench_progress(r->b, &p);
	if (p.sizes_done == 0 || (p.round == r->shown_round && p.sizes_done == r->shown_sizes))
		return;
	r->shown_round = p.round;
	r->shown_sizes = p.sizes_done;
	fprintf(stderr, "clusterdoc bench: ");
	if (r->o.pairs)
		fprintf(stderr, "round %d/%d, ", p.round, p.rounds);
	fprintf(stderr, "sizes %zu/%zu done", p.sizes_done, p.nsizes);
	if (p.sizes_done < p.nsizes && bench_sizes(&r->o, sizes, BENCH_MAX_SIZES) > p.sizes_done)
		fprintf(stderr, ", now %zu bytes", sizes[p.sizes_done]);
	fputc('\n', stderr);
}

/* ---------------------------------------------------------------- options */

static void usage(FILE *f, void *arg)
{
	fputs("usage: clusterdoc bench -w HOSTLIST [options]\n\n"
	      "Allreduce bandwidth between the nodes: a TCP ring between the agents, or NCCL on\n"
	      "GPU nodes. Output as nccl-tests prints it.\n\n",
	      f);
	benchopt_help(f, 'b', BENCHOPT_PAIRS_ALL_MAX);
	fputs("      --check-min-bw GBPS  exit 1 when busbw at the largest size is below\n"
	      "                       0.9 x GBPS (every link with --pairs)\n",
	      f);
	benchopt_help(f, BENCHOPT_NO_CHECK, BENCHOPT_STALL_TIMEOUT);
	fputs("      --progress       \"sizes N/M done\" lines on stderr as the ring runs\n", f);
	optgroup_help(f, &reportopt_group, NULL);
	fputs(targets_help, f);
}

/* bench's own options (targets_cmd.own). */
static int parse_option(void *ctx, int opt, const char *arg)
{
	struct bench_run *r = ctx;

	switch (opt) {
	case OPT_CHECK_MIN_BW:
		r->min_bw = strtod(arg, NULL);
		if (r->min_bw <= 0) {
			fprintf(stderr, "clusterdoc bench: --check-min-bw wants GB/s above 0\n");
			return -1;
		}
		return 0;
	case OPT_PROGRESS:
		r->progress = 1;
		return 0;
	}
	return -2;
}

/* 0 to run, 1 after --help, -1 after an error. */
static int parse_options(struct bench_run *r, int argc, char **argv)
{
	static const struct option longopts[] = {
	    TARGETS_LONGOPTS,
	    {"check-min-bw", required_argument, NULL, OPT_CHECK_MIN_BW},
	    {"progress", no_argument, NULL, OPT_PROGRESS},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	/* -f is nccl-tests' size factor here; the fan-out stays --fanout */
	static const struct targets_cmd c = {
	    .name = "bench",
	    .shortopts = TARGETS_SHORTOPTS_NOF BENCHOPT_SHORTOPTS "h",
	    .usage = usage,
	    .own = parse_option,
	};
	struct optset set;
	int p;

	optset_init(&set);
	optset_add(&set, longopts);
	optset_add_group(&set, &benchopt_group, NULL, &r->o);
	optset_add_group(&set, &reportopt_group, NULL, &r->rep_o);
	p = targets_getopt(&c, &set, &r->t, r, argc, argv);
	if (p != 0)
		return p;
	return targets_finish(&r->t, "bench") < 0 ? -1 : 0;
}

/* ---------------------------------------------------------------- verdict */

static int too_slow(const struct bench_report *rep, const struct bench_opts *o, double min_bw)
{
	int slow = 0;

	if (min_bw <= 0)
		return 0;
	if (o->pairs) {
		for (size_t k = 0; k < rep->nlinks; k++) {
			if (!rep->links[k].failed && rep->links[k].busbw < 0.9 * min_bw) {
				fprintf(
				    stderr,
				    "clusterdoc bench: %s <-> %s: busbw %.2f GB/s is below 0.9 x "
				    "%.2f\n",
				    rep->nodes[rep->links[k].a].host,
				    rep->nodes[rep->links[k].b].host, rep->links[k].busbw, min_bw);
				slow = 1;
			}
		}
		return slow;
	}
	if (rep->nsizes && rep->sizes[rep->nsizes - 1].busbw < 0.9 * min_bw) {
		fprintf(stderr,
		        "clusterdoc bench: busbw %.2f GB/s at %zu bytes is below 0.9 x %.2f GB/s\n",
		        rep->sizes[rep->nsizes - 1].busbw, rep->sizes[rep->nsizes - 1].bytes,
		        min_bw);
		return 1;
	}
	return 0;
}

static int verdict(const struct bench_report *rep, const struct bench_opts *o, double min_bw)
{
	int incomplete = rep->nfailures > 0, wrong = 0;
	size_t want = 0;
	size_t sizes[BENCH_MAX_SIZES];

	for (size_t i = 0; i < rep->nnodes; i++)
		incomplete |= rep->nodes[i].error[0] != '\0';
	for (size_t s = 0; s < rep->nsizes; s++)
		wrong |= rep->sizes[s].wrong > 0;
	want = bench_sizes(o, sizes, BENCH_MAX_SIZES);
	if (!o->pairs && rep->nsizes < want)
		incomplete = 1;
	for (size_t k = 0; k < rep->nlinks; k++)
		incomplete |= rep->links[k].failed;
	if (o->pairs && rep->nlinks == 0)
		incomplete = 1;
	if (incomplete)
		return 2;
	return wrong || too_slow(rep, o, min_bw) ? 1 : 0;
}

int cmd_bench(int argc, char **argv)
{
	struct bench_run r = {0};
	const struct bench_report *rep;
	struct report_run run = {.command = "bench"};
	char err[CD_ERRLEN];
	int rc = 2, p;
	int64_t started_ms = cd_now_ms();
	struct job_plan *plan = NULL;
	const char **proved = NULL; /* into plan */

	targets_init(&r.t);
	bench_opts_init(&r.o);
	p = parse_options(&r, argc, argv);
	if (p != 0) {
		rc = p > 0 ? 0 : 2;
		goto out;
	}
	r.o.request_timeout_ms = r.t.pool.request_timeout_ms;
	run.started_at = (long long)time(NULL);
	r.loop = loop_new();
	r.pool = sshpool_new(r.loop, &r.t.pool, err, sizeof(err));
	if (!r.pool) {
		termtext_printf(stderr, "clusterdoc bench: %s\n", err);
		goto out;
	}
	if (!r.o.iface) {
		long long age = 0;

		plan = run_check_saved((const char *const *)r.t.hosts->names,
		                       hostlist_count(r.t.hosts), &age);
		r.o.proved_ifname = proved =
		    job_plan_proved_ifnames(plan, hostlist_count(r.t.hosts));
		if (plan)
			fprintf(
			    stderr,
			    "# on the interfaces the check of these nodes proved (saved %lld min "
			    "%lld s ago; --iface to choose)\n",
			    age / 60, age % 60);
	}
	r.b = bench_start(r.loop, r.pool, (const char *const *)r.t.hosts->names,
	                  hostlist_count(r.t.hosts), &r.o, on_done, &r);
	if (r.progress)
		bench_on_progress(r.b, on_progress, &r);
	loop_run(r.loop);
	rep = bench_report(r.b);
	if (r.t.json)
		bench_print_json(rep, &r.o);
	else
		bench_print_text(rep, &r.o);
	bench_print_failures(rep);
	rc = verdict(rep, &r.o, r.min_bw);
	if (report_wanted(&r.rep_o)) {
		struct prom *prom;
		struct junit *junit;

		run.exit_status = rc;
		run.elapsed_s = (double)(cd_now_ms() - started_ms) / 1000;
		prom = report_bench_prom(rep, &r.o, &run);
		junit = report_bench_junit(rep, &r.o, r.min_bw, &run);
		if (report_emit(&r.rep_o, &run, prom, junit) < 0 && rc == 0)
			rc = 2;
		prom_free(prom);
		junit_free(junit);
	}
out:
	sshpool_free(r.pool); /* first: it fails what is pending, into bench's callbacks */
	bench_free(r.b);
	loop_free(r.loop);
	free(proved);
	job_plan_free(plan);
	targets_fini(&r.t);
	return rc;
}
