/* SPDX-License-Identifier: MIT */
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
#include "command.h"
#include "commands.h"
#include "loop.h"
#include "progress.h"
#include "optgroups.h"
#include "report/bench_render.h"
#include "report/report.h"
#include "run_check.h"
#include "targets.h"

#include <stddef.h>
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

static void poke(void *arg)
{
	progress_poke(arg);
}

/* The progress line on a terminal: the bench's phase, its answers, the
 * sizes every rank has completed (bench.h's bench_progress). */
static void bench_sample(void *arg, struct progress_sample *s)
{
	struct bench_run *r = arg;
	struct bench_progress p;

	bench_progress(r->b, &p);
	if (strcmp(p.phase, "done") == 0)
		return;
	s->phase = p.phase;
	s->answered = p.answered;
	s->total = p.nodes;
	if (strcmp(p.phase, "run") == 0 && r->o.pairs)
		snprintf(s->extra, sizeof(s->extra), "round %d/%d, sizes %zu/%zu", p.round,
		         p.rounds, p.sizes_done, p.nsizes);
	else if (strcmp(p.phase, "run") == 0)
		snprintf(s->extra, sizeof(s->extra), "sizes %zu/%zu", p.sizes_done, p.nsizes);
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

static const struct optdef own_defs[] = {
    {"check-min-bw", required_argument, OPT_CHECK_MIN_BW, "--check-min-bw",
     "      --check-min-bw GBPS  exit 1 when busbw at the largest size is below\n"
     "                       0.9 x GBPS (every link with --pairs)\n"},
    {"progress", no_argument, OPT_PROGRESS, "--progress",
     "      --progress       \"sizes N/M done\" lines on stderr as the ring runs\n"},
};

static int parse_own(void *ctx, int opt, const char *arg, const char *shown, char *err,
                     size_t errlen)
{
	struct bench_run *r = ctx;

	switch (opt) {
	case OPT_CHECK_MIN_BW:
		r->min_bw = strtod(arg, NULL);
		if (r->min_bw <= 0)
			return cd_errf(err, errlen, CD_ERR_PARSE, "%s wants GB/s above 0", shown);
		return 0;
	case OPT_PROGRESS:
		r->progress = 1;
		return 0;
	}
	return cd_errf(err, errlen, CD_ERR_PARSE, "%s is not an option of bench", shown);
}

static const struct optgroup own_group = {
    .defs = own_defs, .ndefs = CD_ARRAY_LEN(own_defs), .parse = parse_own};

/* --help lists the bench's sizes and knobs, then the check of the result */
static const struct optuse bench_knobs[] = {
    {.id = 'b'},
    {.id = 'e'},
    {.id = 'f'},
    {.id = BENCHOPT_BACKEND},
    {.id = BENCHOPT_ITERS},
    {.id = BENCHOPT_WARMUP},
    {.id = BENCHOPT_DTYPE},
    {.id = BENCHOPT_RANKS_PER_NODE},
    {.id = BENCHOPT_GPUS_PER_NODE},
    {.id = BENCHOPT_IFACE},
    {.id = BENCHOPT_CONNS},
    {.id = BENCHOPT_PAIRS},
    {.id = BENCHOPT_PAIRS_ALL_MAX},
    {0},
};
static const struct optuse bench_checks[] = {
    {.id = BENCHOPT_NO_CHECK},
    {.id = BENCHOPT_STALL_TIMEOUT},
    {0},
};
static const struct optuse own_min_bw[] = {{.id = OPT_CHECK_MIN_BW}, {0}};
static const struct optuse own_progress[] = {{.id = OPT_PROGRESS}, {0}};

static const struct command_opts opts[] = {
    {.g = &benchopt_group, .uses = bench_knobs, .dst = offsetof(struct bench_run, o)},
    {.g = &own_group, .uses = own_min_bw},
    {.g = &benchopt_group, .uses = bench_checks, .dst = offsetof(struct bench_run, o)},
    {.g = &own_group, .uses = own_progress},
    {.g = &reportopt_group, .dst = offsetof(struct bench_run, rep_o)},
    {0},
};

/* -f is nccl-tests' size factor here; the fan-out stays --fanout */
const struct command command_bench = {
    .name = "bench",
    .summary = "allreduce bandwidth between the nodes (TCP ring, or NCCL on GPUs)",
    .usage = "usage: clusterdoc bench -w HOSTLIST [options]\n\n"
             "Allreduce bandwidth between the nodes: a TCP ring between the agents, or NCCL on\n"
             "GPU nodes. Output as nccl-tests prints it.\n\n",
    .shortopts = BENCHOPT_SHORTOPTS,
    .nodes = COMMAND_NODES,
    .targets = offsetof(struct bench_run, t),
    .opts = opts,
    .run = cmd_bench,
};

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

/* The NCCL variables the plan sets on each node (job_plan_nccl_env: those
 * `run` sets), NULL where it sets none; NULL without a plan of these n
 * nodes. */
static json_t **plan_nccl_env(const struct job_plan *p, size_t n)
{
	json_t **env;

	if (!p || p->n != n)
		return NULL;
	env = cd_calloc(n ? n : 1, sizeof(*env));
	for (size_t i = 0; i < n; i++) {
		env[i] = json_object();
		if (job_plan_nccl_env(p, i, env[i]) == 0) {
			json_decref(env[i]);
			env[i] = NULL;
		}
	}
	return env;
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
	json_t **nccl_env = NULL;   /* per node, the plan's NCCL variables */
	size_t nhosts = 0;
	struct progress *prog = NULL;

	targets_init(&r.t);
	bench_opts_init(&r.o);
	p = command_parse(&command_bench, &r, argc, argv, NULL);
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
	nhosts = hostlist_count(r.t.hosts);
	if (!r.o.iface) {
		long long age = 0;

		plan = run_check_saved((const char *const *)r.t.hosts->names, nhosts, &age);
		r.o.proved_ifname = proved = job_plan_proved_ifnames(plan, nhosts);
		r.o.nccl_env = nccl_env = plan_nccl_env(plan, nhosts);
		if (plan)
			fprintf(
			    stderr,
			    "# on the interfaces the check of these nodes proved, NCCL with its "
			    "plan's variables (saved %lld min %lld s ago; --iface to choose)\n",
			    age / 60, age % 60);
	}
	if (!nccl_env && r.o.backend == BENCH_NCCL)
		fprintf(stderr, "# NCCL with each node's login variables: %s\n",
		        r.o.iface ? "--iface leaves the check's plan out"
		                  : "no check of these nodes is saved (clusterdoc check saves its "
		                    "plan)");
	r.b = bench_start(r.loop, r.pool, (const char *const *)r.t.hosts->names,
	                  hostlist_count(r.t.hosts), &r.o, on_done, &r);
	if (r.progress)
		bench_on_progress(r.b, on_progress, &r);
	else if ((prog = progress_start(r.loop, "bench", bench_sample, &r)))
		bench_on_progress(r.b, poke, prog); /* --progress prints lines instead */
	loop_run(r.loop);
	progress_end(prog);
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
	for (size_t i = 0; nccl_env && i < nhosts; i++)
		json_decref(nccl_env[i]);
	free(nccl_env);
	job_plan_free(plan);
	targets_fini(&r.t);
	return rc;
}
