/* SPDX-License-Identifier: MIT */
/*
 * cmd_tui.c - `clusterdoc tui`: the options of the interactive TUI (the
 * nodes and how to reach them, as for every command; the check's, the
 * bench's and the MNIST job's main knobs), then tui_main (tui/tui.h).
 * `clusterdoc` alone on a terminal comes here too, and asks for the nodes.
 */
#include "cd.h"
#include "command.h"
#include "commands.h"
#include "optgroups.h"
#include "targets.h"
#include "tui/tui.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	OPT_NO_COLOR = OPT_TARGETS_END,
	OPT_READ_ONLY,
	OPT_ENV_FILE,
	OPT_EXIT_AFTER,
};

/* The check's, the bench's and the job's main knobs, as the TUI spells them. */
static const struct optuse check_opts[] = {
    {.id = CHECKOPT_MASTER},
    {.id = CHECKOPT_PORT},
    {.id = CHECKOPT_PROBE_TIMEOUT},
    {.id = CHECKOPT_NO_FIREWALL},
    {.id = CHECKOPT_DEADLINE},
    {.id = CHECKOPT_EXPECT_GPUS},
    {0},
};
/* --python: the check's, and the job's too (cmd_tui copies it) */
static const struct optuse python_opt[] = {
    {.id = CHECKOPT_PYTHON,
     .help = "      --python PATH        the interpreter on every node (a conda env or venv;\n"
             "                           default: python3 in the login PATH)\n"},
    {0},
};
static const struct optuse bench_opts[] = {
    {.id = 'b',
     .name = "bench-min",
     .help = "      --bench-min SIZE     smallest size (default 8)\n"},
    {.id = 'e',
     .name = "bench-max",
     .help = "      --bench-max SIZE     largest size (default 256M)\n"},
    {.id = BENCHOPT_ITERS,
     .name = "bench-iters",
     .help = "      --bench-iters N      timed iterations per size (default 20)\n"},
    {0},
};
static const struct optuse job_opts[] = {
    {.id = JOBOPT_MODE,
     .help = "      --mode MODE          torch, embedded or auto (default auto)\n"},
    {.id = JOBOPT_EPOCHS, .help = "      --epochs N           epochs (default 2)\n"},
    {.id = JOBOPT_DATA_DIR,
     .help = "      --data-dir DIR       the MNIST files from DIR instead of a download\n"},
    {.id = JOBOPT_DATA_URL,
     .help = "      --data-url URL       the mirror to download MNIST from\n"},
    {0},
};

struct tui_run {
	struct targets t;
	struct tui_opts o;
	const char *master;
	int exit_after;
	struct checkopt_dst ck; /* where the check group's values go */
};

static const struct optdef own_defs[] = {
    {"no-color", no_argument, OPT_NO_COLOR, "--no-color",
     "      --no-color           no colours (also when $NO_COLOR is set)\n"},
    {"read-only", no_argument, OPT_READ_ONLY, "--read-only",
     "      --read-only          run only the check: no bench, no job, no fix applied\n"},
    {"env-file", required_argument, OPT_ENV_FILE, "--env-file",
     "      --env-file PATH      where the Env view writes (default ./clusterdoc.env)\n"},
    {"exit-after", required_argument, OPT_EXIT_AFTER, "--exit-after", NULL},
};

static int parse_own(void *ctx, int opt, const char *arg, const char *shown, char *err,
                     size_t errlen)
{
	struct tui_run *r = ctx;

	switch (opt) {
	case OPT_NO_COLOR:
		r->o.no_color = 1;
		return 0;
	case OPT_READ_ONLY:
		r->o.read_only = 1;
		return 0;
	case OPT_ENV_FILE:
		r->o.env_path = arg;
		return 0;
	case OPT_EXIT_AFTER:
		return opt_int(shown, arg, 1, 86400, &r->o.max_seconds, err, errlen);
	}
	return cd_errf(err, errlen, CD_ERR_PARSE, "%s is not an option of tui", shown);
}

/* --python is the check's, and the job's too */
static int finish_own(void *ctx, const struct optset *s, char *err, size_t errlen)
{
	struct tui_run *r = ctx;

	(void)s;
	(void)err;
	(void)errlen;
	r->o.session.mnist.python = r->o.session.check.python;
	return 0;
}

static const struct optgroup own_group = {.defs = own_defs,
                                          .ndefs = CD_ARRAY_LEN(own_defs),
                                          .parse = parse_own,
                                          .finish = finish_own,
                                          .cmdline_only = (const int[]){OPT_EXIT_AFTER, 0}};

static const struct command_opts opts[] = {
    {.g = &own_group},
    {.g = &checkopt_group,
     .uses = check_opts,
     .dst = offsetof(struct tui_run, ck),
     .heading = "  the check:\n"},
    {.g = &benchopt_group,
     .uses = bench_opts,
     .dst = offsetof(struct tui_run, o.session.bench),
     .heading = "  the bench (key r in the Bench view):\n"},
    {.g = &jobopt_group,
     .uses = job_opts,
     .dst = offsetof(struct tui_run, o.session.mnist),
     .heading = "  the MNIST job (key r in the Job view):\n"},
    {.g = &checkopt_group,
     .uses = python_opt,
     .dst = offsetof(struct tui_run, ck),
     .heading = "  the check's torch facts and the MNIST job:\n"},
    {0},
};

const struct command command_tui = {
    .name = "tui",
    .summary = "the interactive view: nodes, network, findings, env, bench, job",
    .usage = "usage: clusterdoc tui [-w HOSTLIST] [options]\n"
             "The interactive view of the cluster: nodes as they connect and are probed, the\n"
             "network and its reachability matrix, the findings, the suggested environment,\n"
             "the allreduce bench and the MNIST job. Without nodes it asks for a hostlist.\n"
             "`clusterdoc` alone on a terminal opens it too. Keys: ? in the TUI; see\n"
             "docs/tui.md.\n\n"
             "Options:\n",
    .nodes = COMMAND_NODES_OPTIONAL,
    .targets = offsetof(struct tui_run, t),
    .opts = opts,
    .run = cmd_tui,
};

int cmd_tui(int argc, char **argv)
{
	struct tui_run r;
	const char *nc = getenv("NO_COLOR");
	char *hosts = NULL;
	int rc;

	memset(&r, 0, sizeof(r));
	targets_init(&r.t);
	netcheck_opts_init(&r.o.session.check);
	bench_opts_init(&r.o.session.bench);
	gpuburn_opts_init(&r.o.session.burn);
	mnist_opts_init(&r.o.session.mnist);
	r.o.session.mnist.master_port = 0; /* given or not: without it, the check's */
	r.o.no_color = nc && *nc;
	r.o.env_path = "clusterdoc.env";
	r.ck = (struct checkopt_dst){
	    .o = &r.o.session.check, .master = &r.master, .deadline_s = &r.o.session.deadline_s};
	rc = command_parse(&command_tui, &r, argc, argv, NULL);
	if (rc != 0) {
		targets_fini(&r.t);
		return rc > 0 ? 0 : 2;
	}
	r.o.session.pool = &r.t.pool;
	/* the prompt runs on the screen's loop: no group that waits on a program */
	r.t.groups.no_programs = 1;
	r.o.session.groups = &r.t.groups.hook;
	r.t.pool.notice = NULL; /* stderr is under the screen */
	if (hostlist_count(r.t.hosts)) {
		hosts = hostlist_fold(r.t.hosts);
		r.o.hosts = hosts;
	}
	if (r.master) {
		size_t i;

		for (i = 0; i < hostlist_count(r.t.hosts); i++)
			if (strcmp(r.t.hosts->names[i], r.master) == 0)
				break;
		if (i == hostlist_count(r.t.hosts)) {
			fprintf(stderr,
			        "clusterdoc tui: --master %s is not one of the nodes given "
			        "with -w\n",
			        r.master);
			free(hosts);
			targets_fini(&r.t);
			return 2;
		}
		r.o.session.check.master = i;
	}
	rc = tui_main(&r.o);
	free(hosts);
	targets_fini(&r.t);
	return rc;
}
