/*
 * cmd_mnist.c - `clusterdoc mnist`: the short DDP MNIST job across the nodes
 * (collectives/mnist.h), torch mode or embedded, with every rank's output
 * streamed as it comes and a summary (or JSON) at the end. Exit status: 0
 * the job trained and tested; 1 it started but failed (a rank failed or
 * hung, the parameters differ); 2 it could not start (data, nodes, torch).
 */
#include "cd.h"
#include "collectives/mnist.h"
#include "commands.h"
#include "loop.h"
#include "report/mnist_render.h"
#include "targets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
	OPT_MODE = OPT_TARGETS_END,
	OPT_EPOCHS,
	OPT_BACKEND,
	OPT_NPROC,
	OPT_DATA_URL,
	OPT_DATA_DIR,
	OPT_DATA_MD5,
	OPT_CACHE_DIR,
	OPT_RETRIES,
	OPT_IFACE,
	OPT_MASTER_PORT,
	OPT_BATCH,
	OPT_LR,
	OPT_SEED,
	OPT_JOB_TIMEOUT,
	OPT_STALL_TIMEOUT,
	OPT_REMOTE_DIR,
	OPT_QUIET,
	OPT_PYTHON,
};

struct mnist_run {
	struct targets t;
	struct mnist_opts o;
	int quiet;
	int tty; /* stderr is a terminal: progress redrawn in place */
	struct loop *loop;
	struct sshpool *pool;
	struct mnist *m;
	const char *const *hosts;
};

/* ---------------------------------------------------------------- live */

static void on_line(void *arg, size_t node, const char *stream, const char *text)
{
	struct mnist_run *r = arg;
	FILE *f = r->t.json ? stderr : stdout;

	if (r->quiet || strncmp(text, "CDMNIST ", 8) == 0)
		return;
	fprintf(f, "%s%s: %s\n", r->hosts[node], strcmp(stream, "err") == 0 ? " (stderr)" : "",
	        text);
	fflush(f);
}

static void on_data_progress(void *arg, enum mnist_file file, long long got, long long total)
{
	struct mnist_run *r = arg;

	if (r->quiet || !r->tty)
		return;
	if (total > 0)
		fprintf(stderr, "\rdownloading %s.gz: %3lld%% of %.1f MB", mnist_file_name(file),
		        got * 100 / total, total / 1e6);
	else
		fprintf(stderr, "\rdownloading %s.gz: %.1f MB", mnist_file_name(file), got / 1e6);
	if (got == total)
		fputc('\n', stderr);
}

static void on_phase(void *arg, const char *what)
{
	struct mnist_run *r = arg;
	static const struct {
		const char *phase, *text;
	} texts[] = {
	    {"data", "preparing the dataset and connecting to the nodes"},
	    {"push", "putting the dataset on the nodes"},
	    {"train", "training"},
	};

	if (r->quiet)
		return;
	for (size_t i = 0; i < CD_ARRAY_LEN(texts); i++) {
		if (strcmp(texts[i].phase, what) == 0)
			fprintf(stderr, "# %s\n", texts[i].text);
	}
}

static void on_done(void *arg)
{
	loop_stop(((struct mnist_run *)arg)->loop);
}

static const struct mnist_events events = {
    .line = on_line, .data_progress = on_data_progress, .phase = on_phase, .done = on_done};

/* ---------------------------------------------------------------- options */

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: clusterdoc mnist -w HOSTLIST [options]\n\n"
	        "A short data-parallel MNIST training job across the nodes: PyTorch DDP through\n"
	        "torchrun with the environment clusterdoc picks, or an MLP trained by the agents\n"
	        "themselves over the TCP ring allreduce. Every rank's output is shown live.\n\n"
	        "      --mode M            torch, embedded or auto (default: torch where every\n"
	        "                          node has PyTorch, else embedded)\n"
	        "      --epochs N          default 2\n"
	        "      --backend B         torch: gloo, nccl or auto (default: nccl where every\n"
	        "                          node's torch has CUDA and NCCL, else gloo)\n"
	        "      --nproc-per-node N  ranks per node (default 1)\n"
	        "      --data-url URL      MNIST mirror (default %s)\n"
	        "      --data-dir DIR      use a local copy (raw IDX files or .gz) instead\n"
	        "      --data-md5 FILE     MD5s of the .gz files, as md5sum prints them\n"
	        "      --cache-dir DIR     downloads cache (default ~/.cache/clusterdoc/mnist)\n"
	        "      --retries N         download retries (default 3)\n"
	        "      --remote-dir DIR    data and script on the nodes (default\n"
	        "                          ~/.cache/clusterdoc/data; where the agent left a\n"
	        "                          full or read-only ~/.cache, <agent dir>/data)\n"
	        "      --iface NAME        the data interface (default: NCCL's pick per node)\n"
	        "      --master-port PORT  torch rendezvous port (default 29500)\n"
	        "      --python PATH       torch: the interpreter on every node (a conda env or\n"
	        "                          venv; default: python3 in the login PATH)\n"
	        "      --batch N, --lr X, --seed N   training (default 64 per rank, 0.05, 1)\n"
	        "      --job-timeout S     stop the job after S seconds (default 1800)\n"
	        "      --stall-timeout S   stop it after S seconds without output (default 300)\n"
	        "      --quiet             no live output, only the summary\n"
	        "%s",
	        MNIST_DEFAULT_URL, targets_help);
}

static int parse_option(struct mnist_run *r, int opt, const char *arg)
{
	const char *cmd = "mnist";
	int v;

	switch (opt) {
	case OPT_MODE:
		if (strcmp(arg, "torch") == 0)
			r->o.mode = MNIST_TORCH;
		else if (strcmp(arg, "embedded") == 0)
			r->o.mode = MNIST_EMBEDDED;
		else if (strcmp(arg, "auto") == 0)
			r->o.mode = MNIST_AUTO;
		else {
			fprintf(stderr, "clusterdoc mnist: --mode is torch, embedded or auto\n");
			return -1;
		}
		return 0;
	case OPT_BACKEND:
		if (strcmp(arg, "gloo") != 0 && strcmp(arg, "nccl") != 0 &&
		    strcmp(arg, "auto") != 0) {
			fprintf(stderr, "clusterdoc mnist: --backend is gloo, nccl or auto\n");
			return -1;
		}
		r->o.backend = arg;
		return 0;
	case OPT_EPOCHS:
		return cli_parse_int(cmd, "--epochs", arg, 1, TRAIN_MAX_EPOCHS, &r->o.epochs);
	case OPT_NPROC:
		return cli_parse_int(cmd, "--nproc-per-node", arg, 1, 64, &r->o.nproc_per_node);
	case OPT_BATCH:
		return cli_parse_int(cmd, "--batch", arg, 1, 4096, &r->o.batch);
	case OPT_MASTER_PORT:
		return cli_parse_int(cmd, "--master-port", arg, 1, 65535, &r->o.master_port);
	case OPT_RETRIES:
		if (cli_parse_int(cmd, "--retries", arg, 0, 100, &v) < 0)
			return -1;
		r->o.data.retries = v ? v : -1;
		return 0;
	case OPT_SEED:
		if (cli_parse_int(cmd, "--seed", arg, 0, 1 << 30, &v) < 0)
			return -1;
		r->o.seed = (unsigned)v;
		return 0;
	case OPT_JOB_TIMEOUT:
		if (cli_parse_int(cmd, "--job-timeout", arg, 1, 7 * 86400, &v) < 0)
			return -1;
		r->o.timeout_ms = v * 1000;
		return 0;
	case OPT_STALL_TIMEOUT:
		if (cli_parse_int(cmd, "--stall-timeout", arg, 1, 86400, &v) < 0)
			return -1;
		r->o.stall_ms = v * 1000;
		return 0;
	case OPT_LR:
		r->o.lr = strtod(arg, NULL);
		if (r->o.lr <= 0 || r->o.lr > 100) {
			fprintf(stderr, "clusterdoc mnist: --lr wants a number above 0\n");
			return -1;
		}
		return 0;
	case OPT_DATA_URL:
		r->o.data.url = arg;
		return 0;
	case OPT_DATA_DIR:
		r->o.data.data_dir = arg;
		return 0;
	case OPT_DATA_MD5:
		r->o.data.md5_file = arg;
		return 0;
	case OPT_CACHE_DIR:
		r->o.data.cache_dir = arg;
		return 0;
	case OPT_REMOTE_DIR:
		if (arg[0] != '/' && strncmp(arg, "~/", 2) != 0) {
			fprintf(stderr, "clusterdoc mnist: --remote-dir must be absolute or start "
			                "with ~/\n");
			return -1;
		}
		r->o.remote_root = arg;
		return 0;
	case OPT_IFACE:
		r->o.iface = arg;
		return 0;
	case OPT_QUIET:
		r->quiet = 1;
		return 0;
	case OPT_PYTHON:
		r->o.python = arg;
		return 0;
	}
	v = targets_option(&r->t, opt, arg, cmd);
	return v < 0 ? -1 : v == 1 ? 0 : -2;
}

/* 0 to run, 1 after --help, -1 after an error. */
static int parse_options(struct mnist_run *r, int argc, char **argv)
{
	static const struct option longopts[] = {
	    TARGETS_LONGOPTS,
	    {"mode", required_argument, NULL, OPT_MODE},
	    {"epochs", required_argument, NULL, OPT_EPOCHS},
	    {"backend", required_argument, NULL, OPT_BACKEND},
	    {"nproc-per-node", required_argument, NULL, OPT_NPROC},
	    {"nproc_per_node", required_argument, NULL, OPT_NPROC},
	    {"data-url", required_argument, NULL, OPT_DATA_URL},
	    {"data-dir", required_argument, NULL, OPT_DATA_DIR},
	    {"data-md5", required_argument, NULL, OPT_DATA_MD5},
	    {"cache-dir", required_argument, NULL, OPT_CACHE_DIR},
	    {"retries", required_argument, NULL, OPT_RETRIES},
	    {"remote-dir", required_argument, NULL, OPT_REMOTE_DIR},
	    {"iface", required_argument, NULL, OPT_IFACE},
	    {"master-port", required_argument, NULL, OPT_MASTER_PORT},
	    {"batch", required_argument, NULL, OPT_BATCH},
	    {"lr", required_argument, NULL, OPT_LR},
	    {"seed", required_argument, NULL, OPT_SEED},
	    {"job-timeout", required_argument, NULL, OPT_JOB_TIMEOUT},
	    {"stall-timeout", required_argument, NULL, OPT_STALL_TIMEOUT},
	    {"quiet", no_argument, NULL, OPT_QUIET},
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
		fprintf(stderr, "clusterdoc mnist: unexpected argument \"%s\"\n", argv[optind]);
		return -1;
	}
	return targets_finish(&r->t, "mnist") < 0 ? -1 : 0;
}

/* ---------------------------------------------------------------- status */

static int started_any(const struct mnist_report *rep)
{
	for (size_t i = 0; i < rep->nnodes; i++) {
		if (rep->nodes[i].started)
			return 1;
	}
	return 0;
}

int cmd_mnist(int argc, char **argv)
{
	struct mnist_run r = {0};
	const struct mnist_report *rep;
	char err[CD_ERRLEN];
	int rc = 2, p;

	targets_init(&r.t);
	mnist_opts_init(&r.o);
	r.tty = isatty(STDERR_FILENO);
	p = parse_options(&r, argc, argv);
	if (p != 0) {
		rc = p > 0 ? 0 : 2;
		goto out;
	}
	r.o.request_timeout_ms = r.t.pool.request_timeout_ms;
	r.loop = loop_new();
	r.pool = sshpool_new(r.loop, &r.t.pool, err, sizeof(err));
	if (!r.pool) {
		fprintf(stderr, "clusterdoc mnist: %s\n", err);
		goto out;
	}
	r.hosts = (const char *const *)r.t.hosts->names;
	r.m = mnist_start(r.loop, r.pool, r.hosts, hostlist_count(r.t.hosts), &r.o, &events, &r);
	loop_run(r.loop);
	rep = mnist_report(r.m);
	if (r.t.json)
		mnist_print_json(rep);
	else
		mnist_print_text(rep);
	rc = !rep->failed ? 0 : started_any(rep) ? 1 : 2;
out:
	sshpool_free(r.pool); /* first: it fails what is pending, into mnist's callbacks */
	mnist_free(r.m);
	loop_free(r.loop);
	targets_fini(&r.t);
	return rc;
}
