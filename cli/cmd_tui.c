/*
 * cmd_tui.c - `clusterdoc tui`: the options of the interactive TUI (the
 * nodes and how to reach them, as for every command; the check's, the
 * bench's and the MNIST job's main knobs), then tui_main (tui/tui.h).
 * `clusterdoc` alone on a terminal comes here too, and asks for the nodes.
 */
#include "cd.h"
#include "commands.h"
#include "optgroups.h"
#include "targets.h"
#include "tui/tui.h"

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
    {.id = CHECKOPT_MASTER},      {.id = CHECKOPT_PORT},     {.id = CHECKOPT_PROBE_TIMEOUT},
    {.id = CHECKOPT_NO_FIREWALL}, {.id = CHECKOPT_DEADLINE}, {0},
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

static void usage(FILE *f, void *arg)
{
	fputs("usage: clusterdoc tui [-w HOSTLIST] [options]\n"
	      "The interactive view of the cluster: nodes as they connect and are probed, the\n"
	      "network and its reachability matrix, the findings, the suggested environment,\n"
	      "the allreduce bench and the MNIST job. Without nodes it asks for a hostlist.\n"
	      "`clusterdoc` alone on a terminal opens it too. Keys: ? in the TUI; see\n"
	      "docs/tui.md.\n\n"
	      "Options:\n"
	      "      --no-color           no colours (also when $NO_COLOR is set)\n"
	      "      --read-only          run only the check: no bench, no job, no fix applied\n"
	      "      --env-file PATH      where the Env view writes (default ./clusterdoc.env)\n"
	      "  the check:\n",
	      f);
	optgroup_help(f, &checkopt_group, check_opts);
	fputs("  the bench (key r in the Bench view):\n", f);
	optgroup_help(f, &benchopt_group, bench_opts);
	fputs("  the MNIST job (key r in the Job view):\n", f);
	optgroup_help(f, &jobopt_group, job_opts);
	fputs("  the check's torch facts and the MNIST job:\n", f);
	optgroup_help(f, &checkopt_group, python_opt);
	fputs(targets_help, f);
}

struct tui_run {
	struct targets t;
	struct tui_opts o;
	const char *master;
	int exit_after;
};

/* The TUI's own options (targets_cmd.own). */
static int parse_option(void *ctx, int opt, const char *arg)
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
		return cli_parse_int("tui", "--exit-after", arg, 1, 86400, &r->o.max_seconds);
	}
	return -2;
}

/* 0 to run, 1 after --help, -1 after an error. */
static int parse_options(struct tui_run *r, int argc, char **argv)
{
	static const struct option longopts[] = {
	    TARGETS_LONGOPTS,
	    {"no-color", no_argument, NULL, OPT_NO_COLOR},
	    {"read-only", no_argument, NULL, OPT_READ_ONLY},
	    {"env-file", required_argument, NULL, OPT_ENV_FILE},
	    {"exit-after", required_argument, NULL, OPT_EXIT_AFTER},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	struct tui_session_opts *so = &r->o.session;
	struct checkopt_dst ck = {
	    .o = &so->check, .master = &r->master, .deadline_s = &so->deadline_s};
	static const struct targets_cmd c = {
	    .name = "tui",
	    .shortopts = TARGETS_SHORTOPTS "h",
	    .usage = usage,
	    .own = parse_option,
	};
	struct optset set;
	int p;

	optset_init(&set);
	optset_add(&set, longopts);
	optset_add_group(&set, &checkopt_group, check_opts, &ck);
	optset_add_group(&set, &checkopt_group, python_opt, &ck);
	optset_add_group(&set, &benchopt_group, bench_opts, &so->bench);
	optset_add_group(&set, &jobopt_group, job_opts, &so->mnist);
	p = targets_getopt(&c, &set, &r->t, r, argc, argv);
	if (p != 0)
		return p;
	so->mnist.python = so->check.python;
	r->t.hosts_optional = 1;
	return targets_finish(&r->t, "tui") < 0 ? -1 : 0;
}

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
	mnist_opts_init(&r.o.session.mnist);
	r.o.session.mnist.master_port = 0; /* given or not: without it, the check's */
	r.o.no_color = nc && *nc;
	r.o.env_path = "clusterdoc.env";
	rc = parse_options(&r, argc, argv);
	if (rc != 0) {
		targets_fini(&r.t);
		return rc > 0 ? 0 : 2;
	}
	r.o.session.pool = &r.t.pool;
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
