/*
 * cmd_bench.c - `clusterdoc bench`: the allreduce bandwidth test between
 * the nodes (collectives/bench.h), printed as nccl-tests prints it, or as
 * JSON. Exit status: 0 the run completed with every element right (and, with
 * --check-min-bw, fast enough); 1 wrong elements or too slow; 2 the run
 * could not complete (a node or rank failed, or none could run).
 */
#include "cd.h"
#include "collectives/bench.h"
#include "collectives/bench_agent.h"
#include "commands.h"
#include "loop.h"
#include "report/bench_render.h"
#include "report/report.h"
#include "targets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
	OPT_BACKEND = OPT_TARGETS_END,
	OPT_ITERS,
	OPT_WARMUP,
	OPT_RANKS_PER_NODE,
	OPT_GPUS_PER_NODE,
	OPT_IFACE,
	OPT_CONNS,
	OPT_DTYPE,
	OPT_CHECK_MIN_BW,
	OPT_PAIRS,
	OPT_NO_CHECK,
	OPT_STALL_TIMEOUT,
	OPT_PAIRS_ALL_MAX,
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

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: clusterdoc bench -w HOSTLIST [options]\n\n"
	        "Allreduce bandwidth between the nodes: a TCP ring between the agents, or NCCL on\n"
	        "GPU nodes. Output as nccl-tests prints it.\n\n"
	        "  -b SIZE              smallest size per rank (default 8; K, M, G suffixes)\n"
	        "  -e SIZE              largest size (default 256M)\n"
	        "  -f N                 size factor (default 2)\n"
	        "      --backend B      tcp, nccl or auto (default auto: nccl where every node\n"
	        "                       has it and a GPU, else tcp)\n"
	        "      --iters N        timed iterations per size (default 20)\n"
	        "      --warmup N       untimed iterations first (default 5)\n"
	        "      --dtype T        float, double, int32 or bfloat16 (default float)\n"
	        "      --ranks-per-node N   tcp ranks on each node (default 1)\n"
	        "      --gpus-per-node N    nccl ranks (one GPU each) per node (default: all)\n"
	        "      --iface NAME     the network to test (default: NCCL's pick on each node)\n"
	        "      --conns N        TCP connections per neighbour (default: the agent's)\n"
	        "      --pairs          per-link bandwidth of every pair (ring neighbours beyond\n"
	        "                       --pairs-all-max nodes, default 16) at the largest size\n"
	        "      --check-min-bw GBPS  exit 1 when busbw at the largest size is below\n"
	        "                       0.9 x GBPS (every link with --pairs)\n"
	        "      --no-check       do not verify the results\n"
	        "      --stall-timeout MS   a rank waiting this long without progress fails the\n"
	        "                       run (default 10000)\n"
	        "      --progress       \"sizes N/M done\" lines on stderr as the ring runs\n"
	        "%s%s",
	        report_help, targets_help);
}

static int parse_option(struct bench_run *r, int opt, const char *arg)
{
	const char *cmd = "bench";
	int v;

	switch (opt) {
	case 'b':
	case 'e':
		if (cli_parse_size(arg, opt == 'b' ? &r->o.min_bytes : &r->o.max_bytes) < 0) {
			fprintf(stderr,
			        "clusterdoc bench: -%c wants a size from 1 to 4G, not \"%s\"\n",
			        opt, arg);
			return -1;
		}
		return 0;
	case 'f':
		return cli_parse_int(cmd, "-f", arg, 2, 1 << 20, &r->o.factor);
	case OPT_BACKEND:
		if (strcmp(arg, "tcp") == 0)
			r->o.backend = BENCH_TCP;
		else if (strcmp(arg, "nccl") == 0)
			r->o.backend = BENCH_NCCL;
		else if (strcmp(arg, "auto") == 0)
			r->o.backend = BENCH_AUTO;
		else {
			fprintf(stderr, "clusterdoc bench: --backend is tcp, nccl or auto\n");
			return -1;
		}
		return 0;
	case OPT_ITERS:
		return cli_parse_int(cmd, "--iters", arg, 1, 1000000, &r->o.iters);
	case OPT_WARMUP:
		return cli_parse_int(cmd, "--warmup", arg, 0, 1000000, &r->o.warmup);
	case OPT_RANKS_PER_NODE:
		return cli_parse_int(cmd, "--ranks-per-node", arg, 1, 64, &r->o.ranks_per_node);
	case OPT_GPUS_PER_NODE:
		return cli_parse_int(cmd, "--gpus-per-node", arg, 1, 64, &r->o.gpus_per_node);
	case OPT_CONNS:
		return cli_parse_int(cmd, "--conns", arg, 1, 16, &r->o.conns);
	case OPT_STALL_TIMEOUT:
		return cli_parse_int(cmd, "--stall-timeout", arg, 100, 3600000, &r->o.stall_ms);
	case OPT_PAIRS_ALL_MAX:
		return cli_parse_int(cmd, "--pairs-all-max", arg, 2, 4096, &r->o.pairs_all_max);
	case OPT_IFACE:
		r->o.iface = arg;
		return 0;
	case OPT_DTYPE:
		if (coll_dtype_parse(arg, &r->o.dtype) < 0) {
			fprintf(stderr,
			        "clusterdoc bench: --dtype is float, double, int32 or bfloat16\n");
			return -1;
		}
		return 0;
	case OPT_CHECK_MIN_BW:
		r->min_bw = strtod(arg, NULL);
		if (r->min_bw <= 0) {
			fprintf(stderr, "clusterdoc bench: --check-min-bw wants GB/s above 0\n");
			return -1;
		}
		return 0;
	case OPT_PAIRS:
		r->o.pairs = 1;
		return 0;
	case OPT_NO_CHECK:
		r->o.check = 0;
		return 0;
	case OPT_PROGRESS:
		r->progress = 1;
		return 0;
	}
	if (report_option(&r->rep_o, opt, arg))
		return 0;
	v = targets_option(&r->t, opt, arg, cmd);
	return v < 0 ? -1 : v == 1 ? 0 : -2;
}

/* 0 to run, 1 after --help, -1 after an error. */
static int parse_options(struct bench_run *r, int argc, char **argv)
{
	static const struct option longopts[] = {
	    TARGETS_LONGOPTS,
	    REPORT_LONGOPTS,
	    {"backend", required_argument, NULL, OPT_BACKEND},
	    {"iters", required_argument, NULL, OPT_ITERS},
	    {"warmup", required_argument, NULL, OPT_WARMUP},
	    {"ranks-per-node", required_argument, NULL, OPT_RANKS_PER_NODE},
	    {"gpus-per-node", required_argument, NULL, OPT_GPUS_PER_NODE},
	    {"iface", required_argument, NULL, OPT_IFACE},
	    {"conns", required_argument, NULL, OPT_CONNS},
	    {"dtype", required_argument, NULL, OPT_DTYPE},
	    {"check-min-bw", required_argument, NULL, OPT_CHECK_MIN_BW},
	    {"pairs", no_argument, NULL, OPT_PAIRS},
	    {"pairs-all-max", required_argument, NULL, OPT_PAIRS_ALL_MAX},
	    {"no-check", no_argument, NULL, OPT_NO_CHECK},
	    {"stall-timeout", required_argument, NULL, OPT_STALL_TIMEOUT},
	    {"progress", no_argument, NULL, OPT_PROGRESS},
	    {"minbytes", required_argument, NULL, 'b'},
	    {"maxbytes", required_argument, NULL, 'e'},
	    {"stepfactor", required_argument, NULL, 'f'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	int opt, rc;

	/* -f is nccl-tests' size factor here; the fan-out stays --fanout */
	while ((opt = getopt_long(argc, argv, "w:x:F:l:p:i:t:b:e:f:h", longopts, NULL)) != -1) {
		if (opt == 'h') {
			usage(stdout);
			return 1;
		}
		if (opt == '?') {
			usage(stderr);
			return -1;
		}
		rc = parse_option(r, opt, optarg);
		if (rc == -2) {
			usage(stderr);
			return -1;
		}
		if (rc < 0)
			return -1;
	}
	if (optind < argc) {
		fprintf(stderr, "clusterdoc bench: unexpected argument \"%s\"\n", argv[optind]);
		return -1;
	}
	if (r->o.min_bytes > r->o.max_bytes) {
		fprintf(stderr, "clusterdoc bench: -b is larger than -e\n");
		return -1;
	}
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
		fprintf(stderr, "clusterdoc bench: %s\n", err);
		goto out;
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
	targets_fini(&r.t);
	return rc;
}
