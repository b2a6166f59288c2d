/*
 * cmd_tui.c - `clusterdoc tui`: the options of the interactive TUI (the
 * nodes and how to reach them, as for every command; the check's, the
 * bench's and the MNIST job's main knobs), then tui_main (tui/tui.h).
 * `clusterdoc` alone on a terminal comes here too, and asks for the nodes.
 */
#include "cd.h"
#include "commands.h"
#include "targets.h"
#include "tui/tui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	OPT_NO_COLOR = OPT_TARGETS_END,
	OPT_READ_ONLY,
	OPT_MASTER,
	OPT_PORT,
	OPT_PROBE_TIMEOUT,
	OPT_NO_FIREWALL,
	OPT_DEADLINE,
	OPT_BENCH_MIN,
	OPT_BENCH_MAX,
	OPT_BENCH_ITERS,
	OPT_MODE,
	OPT_EPOCHS,
	OPT_DATA_DIR,
	OPT_DATA_URL,
	OPT_ENV_FILE,
	OPT_EXIT_AFTER,
	OPT_PYTHON,
};

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: clusterdoc tui [-w HOSTLIST] [options]\n"
	        "The interactive view of the cluster: nodes as they connect and are probed, the\n"
	        "network and its reachability matrix, the findings, the suggested environment,\n"
	        "the allreduce bench and the MNIST job. Without nodes it asks for a hostlist.\n"
	        "`clusterdoc` alone on a terminal opens it too. Keys: ? in the TUI; see\n"
	        "docs/tui.md.\n\n"
	        "Options:\n"
	        "      --no-color           no colours (also when $NO_COLOR is set)\n"
	        "      --read-only          run only the check: no bench, no job, no fix applied\n"
	        "      --env-file PATH      where the Env view writes (default ./clusterdoc.env)\n"
	        "  the check:\n"
	        "      --master HOST        the node that will be rank 0 (default: the first)\n"
	        "      --port N             the MASTER_PORT candidate (default 29500)\n"
	        "      --probe-timeout MS   deadline of each TCP attempt (default 3000)\n"
	        "      --no-firewall        do not read the nodes' firewall rules\n"
	        "      --deadline S         end the check after S seconds (default: none)\n"
	        "  the bench (key r in the Bench view):\n"
	        "      --bench-min SIZE     smallest size (default 8)\n"
	        "      --bench-max SIZE     largest size (default 256M)\n"
	        "      --bench-iters N      timed iterations per size (default 20)\n"
	        "  the MNIST job (key r in the Job view):\n"
	        "      --mode MODE          torch, embedded or auto (default auto)\n"
	        "      --epochs N           epochs (default 2)\n"
	        "      --data-dir DIR       the MNIST files from DIR instead of a download\n"
	        "      --data-url URL       the mirror to download MNIST from\n"
	        "  the check's torch facts and the MNIST job:\n"
	        "      --python PATH        the interpreter on every node (a conda env or venv;\n"
	        "                           default: python3 in the login PATH)\n"
	        "%s",
	        targets_help);
}

struct tui_run {
	struct targets t;
	struct tui_opts o;
	const char *master;
	int exit_after;
};

static int parse_option(struct tui_run *r, int opt, const char *arg)
{
	const char *cmd = "tui";
	int v;

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
	case OPT_MASTER:
		r->master = arg;
		return 0;
	case OPT_PORT:
		return cli_parse_int(cmd, "--port", arg, 1, 65535, &r->o.session.check.master_port);
	case OPT_PROBE_TIMEOUT:
		return cli_parse_int(cmd, "--probe-timeout", arg, 50, 600000,
		                     &r->o.session.check.probe_timeout_ms);
	case OPT_NO_FIREWALL:
		r->o.session.check.no_firewall = 1;
		return 0;
	case OPT_DEADLINE:
		return cli_parse_int(cmd, "--deadline", arg, 1, 86400, &r->o.session.deadline_s);
	case OPT_BENCH_MIN:
	case OPT_BENCH_MAX:
		if (cli_parse_size(arg, opt == OPT_BENCH_MIN ? &r->o.session.bench.min_bytes
		                                             : &r->o.session.bench.max_bytes) < 0) {
			fprintf(stderr,
			        "clusterdoc tui: %s wants a size from 1 to 4G, not \"%s\"\n",
			        opt == OPT_BENCH_MIN ? "--bench-min" : "--bench-max", arg);
			return -1;
		}
		return 0;
	case OPT_BENCH_ITERS:
		return cli_parse_int(cmd, "--bench-iters", arg, 1, 100000,
		                     &r->o.session.bench.iters);
	case OPT_MODE:
		if (strcmp(arg, "torch") == 0)
			r->o.session.mnist.mode = MNIST_TORCH;
		else if (strcmp(arg, "embedded") == 0)
			r->o.session.mnist.mode = MNIST_EMBEDDED;
		else if (strcmp(arg, "auto") == 0)
			r->o.session.mnist.mode = MNIST_AUTO;
		else {
			fprintf(stderr, "clusterdoc tui: --mode is torch, embedded or auto\n");
			return -1;
		}
		return 0;
	case OPT_EPOCHS:
		return cli_parse_int(cmd, "--epochs", arg, 1, TRAIN_MAX_EPOCHS,
		                     &r->o.session.mnist.epochs);
	case OPT_DATA_DIR:
		r->o.session.mnist.data.data_dir = arg;
		return 0;
	case OPT_DATA_URL:
		r->o.session.mnist.data.url = arg;
		return 0;
	case OPT_PYTHON:
		r->o.session.check.python = arg;
		r->o.session.mnist.python = arg;
		return 0;
	case OPT_EXIT_AFTER:
		return cli_parse_int(cmd, "--exit-after", arg, 1, 86400, &r->o.max_seconds);
	}
	v = targets_option(&r->t, opt, arg, cmd);
	return v < 0 ? -1 : v == 1 ? 0 : -2;
}

/* 0 to run, 1 after --help, -1 after an error. */
static int parse_options(struct tui_run *r, int argc, char **argv)
{
	static const struct option longopts[] = {
	    TARGETS_LONGOPTS,
	    {"no-color", no_argument, NULL, OPT_NO_COLOR},
	    {"read-only", no_argument, NULL, OPT_READ_ONLY},
	    {"env-file", required_argument, NULL, OPT_ENV_FILE},
	    {"master", required_argument, NULL, OPT_MASTER},
	    {"port", required_argument, NULL, OPT_PORT},
	    {"probe-timeout", required_argument, NULL, OPT_PROBE_TIMEOUT},
	    {"no-firewall", no_argument, NULL, OPT_NO_FIREWALL},
	    {"deadline", required_argument, NULL, OPT_DEADLINE},
	    {"bench-min", required_argument, NULL, OPT_BENCH_MIN},
	    {"bench-max", required_argument, NULL, OPT_BENCH_MAX},
	    {"bench-iters", required_argument, NULL, OPT_BENCH_ITERS},
	    {"mode", required_argument, NULL, OPT_MODE},
	    {"epochs", required_argument, NULL, OPT_EPOCHS},
	    {"data-dir", required_argument, NULL, OPT_DATA_DIR},
	    {"data-url", required_argument, NULL, OPT_DATA_URL},
	    {"exit-after", required_argument, NULL, OPT_EXIT_AFTER},
	    {"python", required_argument, NULL, OPT_PYTHON},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	int opt, rc;

	while ((opt = getopt_long(argc, argv, TARGETS_SHORTOPTS "h", longopts, NULL)) != -1) {
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
		fprintf(stderr, "clusterdoc tui: unexpected argument \"%s\"\n", argv[optind]);
		return -1;
	}
	if (r->o.session.bench.min_bytes > r->o.session.bench.max_bytes) {
		fprintf(stderr, "clusterdoc tui: --bench-min is larger than --bench-max\n");
		return -1;
	}
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
