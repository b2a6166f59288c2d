/* SPDX-License-Identifier: MIT */
/*
 * cmd_hang.c - `clusterdoc hang`: inspect a running job on the nodes and
 * say where it hangs (hang/hang.h). Exit status: 0 the job makes
 * progress; 1 it is hung and suspects are named; 2 it could not be
 * inspected (no job found, no node reached, bad options); 3 no rank has
 * started: the job's launchers wait in their rendezvous.
 */
#include "cd.h"
#include "termtext.h"
#include "hang/hang.h"
#include "command.h"
#include "commands.h"
#include "fixers/fix_journal.h"
#include "loop.h"
#include "report/hang_render.h"
#include "targets.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
	OPT_RUN = OPT_TARGETS_END,
	OPT_SAMPLES,
	OPT_INTERVAL,
	OPT_NO_STACKS,
};

struct hang_cli {
	struct targets t;
	struct hang_opts o;
	struct loop *loop;
};

static void on_phase(void *arg, const char *what)
{
	struct hang_cli *c = arg;

	if (!c->t.json && isatty(STDERR_FILENO))
		termtext_printf(stderr, "# %s\n", what);
}

static void on_done(void *arg)
{
	loop_stop(((struct hang_cli *)arg)->loop);
}

static const struct hang_events events = {.phase = on_phase, .done = on_done};

static const struct optdef own_defs[] = {
    {"run", required_argument, OPT_RUN, "--run",
     "      --run RUN           the `clusterdoc run` job with this id\n"},
    {"samples", required_argument, OPT_SAMPLES, "--samples",
     "      --samples N         samples per node (default 2, 2 to 20)\n"},
    {"interval", required_argument, OPT_INTERVAL, "--interval",
     "      --interval S        seconds between samples (default 2, 0.2 to 60)\n"},
    {"no-stacks", no_argument, OPT_NO_STACKS, "--no-stacks",
     "      --no-stacks         do not ask for Python stacks\n"},
};

static int parse_own(void *ctx, int opt, const char *arg, const char *shown, char *err,
                     size_t errlen)
{
	struct hang_cli *c = ctx;
	char *end;
	double s;

	switch (opt) {
	case OPT_RUN:
		if (!*arg || strlen(arg) > 64)
			return cd_errf(err, errlen, CD_ERR_PARSE, "%s wants a run id", shown);
		c->o.run = arg;
		return 0;
	case OPT_SAMPLES:
		return opt_int(shown, arg, 2, 20, &c->o.samples, err, errlen);
	case OPT_INTERVAL:
		s = strtod(arg, &end);
		if (end == arg || *end || s < 0.2 || s > 60)
			return cd_errf(err, errlen, CD_ERR_PARSE, "%s wants seconds from 0.2 to 60",
			               shown);
		c->o.interval_ms = (int)(s * 1000);
		return 0;
	case OPT_NO_STACKS:
		c->o.stacks = 0;
		return 0;
	}
	return cd_errf(err, errlen, CD_ERR_PARSE, "%s is not an option of hang", shown);
}

static const struct optgroup own_group = {.defs = own_defs,
                                          .ndefs = CD_ARRAY_LEN(own_defs),
                                          .parse = parse_own,
                                          .cmdline_only = (const int[]){OPT_RUN, 0}};

static const struct command_opts opts[] = {
    {.g = &own_group},
    {0},
};

const struct command command_hang = {
    .name = "hang",
    .summary = "a running job that hangs: the rank, the node and the link to blame",
    .usage = "usage: clusterdoc hang -w HOSTLIST [--run RUN] [--samples N] [--interval S] "
             "[--json]\n\n"
             "Inspect a running job on every node and say where it hangs: the job's processes\n"
             "(a `clusterdoc run` job by its id, else every process with RANK/LOCAL_RANK/\n"
             "WORLD_SIZE, NODE_RANK and NNODES, OMPI_COMM_WORLD_RANK or TORCHELASTIC_* in\n"
             "its environment), sampled N times: what each rank's threads block in, its TCP\n"
             "connections and their queues, the peer rank at the other end, its main\n"
             "thread's CPU progress, its Python stacks. Only reads; the one signal sent is a\n"
             "hang-ready `clusterdoc run` job's own dump signal, to a rank (never a\n"
             "launcher) that handles it.\n\n"
             "Exit status: 0 progressing, 1 hung (suspects named), 2 not inspected (no job\n"
             "found, no node reached, bad options), 3 no rank started: the launchers wait\n"
             "in their rendezvous.\n\n",
    .nodes = COMMAND_NODES,
    .targets = offsetof(struct hang_cli, t),
    .opts = opts,
    .run = cmd_hang,
};

/* --run RUN found no job: when that run has ended (its summary.json is in
 * the head's run logs, written at its end), say so with its exit status. */
static void say_run_ended(const char *run)
{
	char base[768], path[1200], err[CD_ERRLEN];
	json_t *s;

	/* a run id names a folder of the run logs, never a path */
	if (strchr(run, '/') || strcmp(run, "..") == 0 ||
	    fix_journal_dir(base, sizeof(base), err, sizeof(err)) < 0)
		return;
	snprintf(path, sizeof(path), "%s/%s/summary.json", base, run);
	if (!(s = json_load_file(path, 0, NULL)))
		return;
	fflush(stdout);
	termtext_printf(stderr,
	                "clusterdoc hang: run %s has ended (exit status %lld; its summary: %s): "
	                "no rank of it is left to inspect\n",
	                run, (long long)json_integer_value(json_object_get(s, "exit_status")),
	                path);
	json_decref(s);
}

int cmd_hang(int argc, char **argv)
{
	struct hang_cli c = {0};
	struct sshpool *pool = NULL;
	struct hang *h = NULL;
	const json_t *v;
	json_t *not_inspected = json_string("not_inspected");
	char err[CD_ERRLEN];
	int rc = 2, p;

	targets_init(&c.t);
	hang_opts_init(&c.o);
	p = command_parse(&command_hang, &c, argc, argv, NULL);
	if (p != 0) {
		rc = p > 0 ? 0 : 2;
		goto out;
	}
	c.o.request_timeout_ms = c.t.pool.request_timeout_ms;
	c.loop = loop_new();
	pool = sshpool_new(c.loop, &c.t.pool, err, sizeof(err));
	if (!pool) {
		termtext_printf(stderr, "clusterdoc hang: %s\n", err);
		goto out;
	}
	h = hang_start(c.loop, pool, (const char *const *)c.t.hosts->names,
	               hostlist_count(c.t.hosts), &c.o, &events, &c);
	loop_run(c.loop);
	v = hang_verdict(h);
	if (!v)
		goto out;
	if (c.t.json)
		hang_print_json(v, stdout);
	else
		hang_print_text(v, stdout);
	rc = (int)json_integer_value(json_object_get(v, "exit"));
	if (c.o.run && json_equal(json_object_get(v, "status"), not_inspected))
		say_run_ended(c.o.run);
out:
	sshpool_free(pool); /* first: it fails what is pending, into hang's callbacks */
	hang_free(h);
	loop_free(c.loop);
	targets_fini(&c.t);
	json_decref(not_inspected);
	return rc;
}
