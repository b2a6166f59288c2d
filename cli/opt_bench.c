/* SPDX-License-Identifier: MIT */
/*
 * opt_bench.c - the bench's option group (optgroups.h): the knobs of
 * collectives/bench.h as `clusterdoc bench` and the TUI take them.
 */
#include "collectives/bench_agent.h"
#include "optgroups.h"
#include "targets.h"

#include <string.h>

static const struct optdef defs[] = {
    {"minbytes", required_argument, 'b', "-b",
     "  -b SIZE              smallest size per rank (default 8; K, M, G suffixes)\n"},
    {"maxbytes", required_argument, 'e', "-e",
     "  -e SIZE              largest size (default 256M)\n"},
    {"stepfactor", required_argument, 'f', "-f",
     "  -f N                 size factor (default 2)\n"},
    {"backend", required_argument, BENCHOPT_BACKEND, "--backend",
     "      --backend B      tcp, nccl or auto (default auto: nccl where every node\n"
     "                       has it and a GPU, else tcp)\n"},
    {"iters", required_argument, BENCHOPT_ITERS, "--iters",
     "      --iters N        timed iterations per size (default 20)\n"},
    {"warmup", required_argument, BENCHOPT_WARMUP, "--warmup",
     "      --warmup N       untimed iterations first (default 5)\n"},
    {"dtype", required_argument, BENCHOPT_DTYPE, "--dtype",
     "      --dtype T        float, double, int32 or bfloat16 (default float)\n"},
    {"ranks-per-node", required_argument, BENCHOPT_RANKS_PER_NODE, "--ranks-per-node",
     "      --ranks-per-node N   tcp ranks on each node (default 1)\n"},
    {"gpus-per-node", required_argument, BENCHOPT_GPUS_PER_NODE, "--gpus-per-node",
     "      --gpus-per-node N    nccl ranks (one GPU each) per node (default: all)\n"},
    {"iface", required_argument, BENCHOPT_IFACE, "--iface",
     "      --iface NAME     the network to test (default: NCCL's pick on each node)\n"},
    {"conns", required_argument, BENCHOPT_CONNS, "--conns",
     "      --conns N        TCP connections per neighbour (default: the agent's)\n"},
    {"pairs", no_argument, BENCHOPT_PAIRS, "--pairs",
     "      --pairs          per-link bandwidth of every pair (ring neighbours beyond\n"
     "                       --pairs-all-max nodes, default 16) at the largest size\n"},
    {"pairs-all-max", required_argument, BENCHOPT_PAIRS_ALL_MAX, "--pairs-all-max", NULL},
    {"no-check", no_argument, BENCHOPT_NO_CHECK, "--no-check",
     "      --no-check       do not verify the results\n"},
    {"stall-timeout", required_argument, BENCHOPT_STALL_TIMEOUT, "--stall-timeout",
     "      --stall-timeout MS   a rank waiting this long without progress fails the\n"
     "                       run (default 10000)\n"},
};

static int parse(void *dst, int id, const char *arg, const char *shown, char *err, size_t errlen)
{
	struct bench_opts *o = dst;

	switch (id) {
	case 'b':
	case 'e':
		return opt_size(shown, arg, id == 'b' ? &o->min_bytes : &o->max_bytes, err, errlen);
	case 'f':
		return opt_int(shown, arg, 2, 1 << 20, &o->factor, err, errlen);
	case BENCHOPT_BACKEND:
		if (strcmp(arg, "tcp") == 0)
			o->backend = BENCH_TCP;
		else if (strcmp(arg, "nccl") == 0)
			o->backend = BENCH_NCCL;
		else if (strcmp(arg, "auto") == 0)
			o->backend = BENCH_AUTO;
		else
			return cd_errf(err, errlen, CD_ERR_PARSE, "%s is tcp, nccl or auto", shown);
		return 0;
	case BENCHOPT_ITERS:
		return opt_int(shown, arg, 1, 1000000, &o->iters, err, errlen);
	case BENCHOPT_WARMUP:
		return opt_int(shown, arg, 0, 1000000, &o->warmup, err, errlen);
	case BENCHOPT_RANKS_PER_NODE:
		return opt_int(shown, arg, 1, 64, &o->ranks_per_node, err, errlen);
	case BENCHOPT_GPUS_PER_NODE:
		return opt_int(shown, arg, 1, 64, &o->gpus_per_node, err, errlen);
	case BENCHOPT_CONNS:
		return opt_int(shown, arg, 1, 16, &o->conns, err, errlen);
	case BENCHOPT_STALL_TIMEOUT:
		return opt_int(shown, arg, 100, 3600000, &o->stall_ms, err, errlen);
	case BENCHOPT_PAIRS_ALL_MAX:
		return opt_int(shown, arg, 2, 4096, &o->pairs_all_max, err, errlen);
	case BENCHOPT_IFACE:
		o->iface = arg;
		return 0;
	case BENCHOPT_DTYPE:
		if (coll_dtype_parse(arg, &o->dtype) < 0)
			return cd_errf(err, errlen, CD_ERR_PARSE,
			               "%s is float, double, int32 or bfloat16", shown);
		return 0;
	case BENCHOPT_PAIRS:
		o->pairs = 1;
		return 0;
	case BENCHOPT_NO_CHECK:
		o->check = 0;
		return 0;
	}
	return cd_errf(err, errlen, CD_ERR_PARSE, "%s is not an option of this group", shown);
}

static int finish(void *dst, const struct optset *s, char *err, size_t errlen)
{
	const struct bench_opts *o = dst;

	if (o->min_bytes > o->max_bytes)
		return cd_errf(err, errlen, CD_ERR_PARSE, "%s is larger than %s",
		               optset_shown(s, 'b'), optset_shown(s, 'e'));
	return 0;
}

static const struct optvalues values[] = {
    {BENCHOPT_BACKEND, "tcp nccl auto"},
    {0},
};

const struct optgroup benchopt_group = {
    .defs = defs,
    .ndefs = CD_ARRAY_LEN(defs),
    .parse = parse,
    .finish = finish,
    .values = values,
};
