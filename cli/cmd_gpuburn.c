/* SPDX-License-Identifier: MIT */
/*
 * cmd_gpuburn.c - `clusterdoc gpu-burn`: a short stress of every GPU of
 * every node at once through the node's torch, and the GPUs slower than
 * their model's median (collectives/gpuburn.h). Exit status: 0 every GPU
 * measured and none slow; 1 a GPU slow, or a GPU or node failed while
 * others were measured; 2 no GPU measured (no node reached, no torch with
 * CUDA anywhere, bad options).
 */
#include "cd.h"
#include "collectives/gpuburn.h"
#include "collectives/gpuburn_agent.h"
#include "command.h"
#include "commands.h"
#include "loop.h"
#include "optgroups.h"
#include "report/gpuburn_render.h"
#include "report/report.h"
#include "targets.h"
#include "termtext.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum {
	OPT_SECONDS = OPT_TARGETS_END,
	OPT_SLOW_PCT,
	OPT_PYTHON,
};

struct gpuburn_cli {
	struct targets t;
	struct gpuburn_opts o;
	struct report_opts rep_o;
	struct loop *loop;
};

static void on_phase(void *arg, const char *what)
{
	struct gpuburn_cli *c = arg;

	if (!c->t.json && isatty(STDERR_FILENO))
		termtext_printf(stderr, "# %s\n", what);
}

static void on_done(void *arg)
{
	loop_stop(((struct gpuburn_cli *)arg)->loop);
}

static const struct gpuburn_events events = {.phase = on_phase, .done = on_done};

static const struct optdef own_defs[] = {
    {"seconds", required_argument, OPT_SECONDS, "--seconds",
     "      --seconds S         seconds of stress per GPU, half a matrix product and half a\n"
     "                          device copy (default 10, 0.5 to 3600)\n"},
    {"slow-pct", required_argument, OPT_SLOW_PCT, "--slow-pct",
     "      --slow-pct X        a GPU more than X % below its model's median is slow\n"
     "                          (gpu-slow; default 10, 1 to 90)\n"},
    {"python", required_argument, OPT_PYTHON, "--python",
     "      --python PATH       the interpreter with torch on every node (default: python3\n"
     "                          of the login PATH, then conda's and venv's places)\n"},
};

static int parse_double(const char *shown, const char *arg, double lo, double hi, double *out,
                        char *err, size_t errlen)
{
	char *end;
	double v = strtod(arg, &end);

	if (end == arg || *end || !(v >= lo && v <= hi))
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "%s wants a number from %g to %g, not \"%s\"", shown, lo, hi, arg);
	*out = v;
	return 0;
}

static int parse_own(void *ctx, int opt, const char *arg, const char *shown, char *err,
                     size_t errlen)
{
	struct gpuburn_cli *c = ctx;

	switch (opt) {
	case OPT_SECONDS:
		return parse_double(shown, arg, GPUBURN_SECS_MIN, GPUBURN_SECS_MAX, &c->o.seconds,
		                    err, errlen);
	case OPT_SLOW_PCT:
		return parse_double(shown, arg, 1, 90, &c->o.slow_pct, err, errlen);
	case OPT_PYTHON:
		if (!*arg || strlen(arg) > 4096)
			return cd_errf(err, errlen, CD_ERR_PARSE, "%s wants a path", shown);
		c->o.python = arg;
		return 0;
	}
	return cd_errf(err, errlen, CD_ERR_PARSE, "%s is not an option of gpu-burn", shown);
}

static const struct optgroup own_group = {
    .defs = own_defs, .ndefs = CD_ARRAY_LEN(own_defs), .parse = parse_own};

static const struct optuse report_uses[] = {
    {.id = REPORTOPT_PROM},
    {.id = REPORTOPT_PUSH},
    {0},
};

static const struct command_opts opts[] = {
    {.g = &own_group},
    {.g = &reportopt_group, .uses = report_uses, .dst = offsetof(struct gpuburn_cli, rep_o)},
    {0},
};

const struct command command_gpuburn = {
    .name = "gpu-burn",
    .summary = "a short stress of every GPU at once; the GPUs slower than their siblings",
    .usage = "usage: clusterdoc gpu-burn -w HOSTLIST [--seconds S] [--slow-pct X] [--python "
             "PATH] [--json]\n\n"
             "On every GPU of every node at once, through the node's torch: a bf16 matrix\n"
             "product (fp16 where bf16 is not supported) and a device-memory copy, for S\n"
             "seconds in all; TFLOP/s and GB/s per GPU against the median of its model over\n"
             "every node. A GPU more than X % below that median is named (gpu-slow). A node\n"
             "without torch, or whose torch has no CUDA, is named with why.\n\n"
             "Exit status: 0 every GPU measured and none slow, 1 a GPU slow or failed (or a\n"
             "node), 2 no GPU measured.\n\n",
    .nodes = COMMAND_NODES,
    .targets = offsetof(struct gpuburn_cli, t),
    .opts = opts,
    .run = cmd_gpuburn,
};

/* CLUSTERDOC_GPUBURN_SLACK_MS (tests only): the nodes' bound past --seconds, 1000 to 600000;
 * else GPUBURN_SLACK_MS. */
static int slack_from_env(void)
{
	const char *v = getenv("CLUSTERDOC_GPUBURN_SLACK_MS");
	char *end;
	long ms = v ? strtol(v, &end, 10) : 0;

	return v && *v && !*end && ms >= 1000 && ms <= 600000 ? (int)ms : GPUBURN_SLACK_MS;
}

/* --prom and --push: 0, or 2 when one failed. */
static int emit_reports(struct gpuburn_cli *c, const json_t *rep, int rc, long long started_at,
                        int64_t started_ms)
{
	struct report_run run = {.command = "gpuburn", .started_at = started_at, .exit_status = rc};
	struct prom *prom;
	int failed;

	run.elapsed_s = (double)(cd_now_ms() - started_ms) / 1000;
	prom = report_gpuburn_prom(rep, &run);
	failed = report_emit(&c->rep_o, &run, prom, NULL) < 0;
	prom_free(prom);
	return failed && rc == 0 ? 2 : rc;
}

int cmd_gpuburn(int argc, char **argv)
{
	struct gpuburn_cli c = {0};
	struct sshpool *pool = NULL;
	struct gpuburn *g = NULL;
	const json_t *rep;
	char err[CD_ERRLEN];
	int rc = 2, p;
	int64_t started_ms = cd_now_ms();
	long long started_at = (long long)time(NULL);

	targets_init(&c.t);
	gpuburn_opts_init(&c.o);
	p = command_parse(&command_gpuburn, &c, argc, argv, NULL);
	if (p != 0) {
		rc = p > 0 ? 0 : 2;
		goto out;
	}
	c.o.request_timeout_ms = c.t.pool.request_timeout_ms;
	c.o.slack_ms = slack_from_env();
	c.loop = loop_new();
	pool = sshpool_new(c.loop, &c.t.pool, err, sizeof(err));
	if (!pool) {
		termtext_printf(stderr, "clusterdoc gpu-burn: %s\n", err);
		goto out;
	}
	g = gpuburn_start(c.loop, pool, (const char *const *)c.t.hosts->names,
	                  hostlist_count(c.t.hosts), &c.o, &events, &c);
	loop_run(c.loop);
	rep = gpuburn_report(g);
	if (!rep)
		goto out;
	if (c.t.json)
		gpuburn_print_json(rep, stdout);
	else
		gpuburn_print_text(rep, stdout);
	rc = (int)json_integer_value(json_object_get(rep, "exit"));
	if (report_wanted(&c.rep_o))
		rc = emit_reports(&c, rep, rc, started_at, started_ms);
out:
	sshpool_free(pool); /* first: it fails what is pending, into gpu-burn's callbacks */
	gpuburn_free(g);
	loop_free(c.loop);
	targets_fini(&c.t);
	return rc;
}
