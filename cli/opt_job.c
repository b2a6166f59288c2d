/* SPDX-License-Identifier: MIT */
/*
 * opt_job.c - the MNIST job's option group (optgroups.h): the knobs of
 * jobs/mnist.h as `clusterdoc mnist` and the TUI take them.
 */
#include "jobs/rdzvwatch.h"
#include "optgroups.h"
#include "targets.h"

#include <stdlib.h>
#include <string.h>

static const struct optdef defs[] = {
    {"mode", required_argument, JOBOPT_MODE, "--mode",
     "      --mode M            torch, embedded or auto (default: torch where every\n"
     "                          node has PyTorch, else embedded)\n"},
    {"epochs", required_argument, JOBOPT_EPOCHS, "--epochs",
     "      --epochs N          default 2\n"},
    {"backend", required_argument, JOBOPT_BACKEND, "--backend",
     "      --backend B         torch: gloo, nccl, hccl or auto (default: nccl where\n"
     "                          every node's torch has CUDA and NCCL, else gloo;\n"
     "                          hccl: Ascend NPUs, torch_npu on every node)\n"},
    {"nproc-per-node", required_argument, JOBOPT_NPROC, "--nproc-per-node",
     "      --nproc-per-node N  ranks per node (default 1)\n"},
    {"nproc_per_node", required_argument, JOBOPT_NPROC, "--nproc-per-node", NULL},
    {"data-url", required_argument, JOBOPT_DATA_URL, "--data-url",
     "      --data-url URL      MNIST mirror (default " MNIST_DEFAULT_URL ")\n"},
    {"data-dir", required_argument, JOBOPT_DATA_DIR, "--data-dir",
     "      --data-dir DIR      use a local copy (raw IDX files or .gz) instead\n"},
    {"data-md5", required_argument, JOBOPT_DATA_MD5, "--data-md5",
     "      --data-md5 FILE     MD5s of the .gz files, as md5sum prints them\n"},
    {"cache-dir", required_argument, JOBOPT_CACHE_DIR, "--cache-dir",
     "      --cache-dir DIR     downloads cache (default ~/.cache/clusterdoc/mnist)\n"},
    {"retries", required_argument, JOBOPT_RETRIES, "--retries",
     "      --retries N         download retries (default 3)\n"},
    {"remote-dir", required_argument, JOBOPT_REMOTE_DIR, "--remote-dir",
     "      --remote-dir DIR    data and script on the nodes (default\n"
     "                          ~/.cache/clusterdoc/data; where the agent left a\n"
     "                          full or read-only ~/.cache, <agent dir>/data)\n"},
    {"iface", required_argument, JOBOPT_IFACE, "--iface",
     "      --iface NAME        the data interface (default: NCCL's pick per node)\n"},
    {"master-port", required_argument, JOBOPT_MASTER_PORT, "--master-port",
     "      --master-port PORT  torch rendezvous port (default: the one the check\n"
     "                          proved, 29500 when it is free)\n"},
    {"python", required_argument, JOBOPT_PYTHON, "--python",
     "      --python PATH       torch: the interpreter on every node (a conda env or\n"
     "                          venv; default: python3 in the login PATH)\n"},
    {"batch", required_argument, JOBOPT_BATCH, "--batch",
     "      --batch N, --lr X, --seed N   training (default 64 per rank, 0.05, 1)\n"},
    {"lr", required_argument, JOBOPT_LR, "--lr", NULL},
    {"seed", required_argument, JOBOPT_SEED, "--seed", NULL},
    {"job-timeout", required_argument, JOBOPT_JOB_TIMEOUT, "--job-timeout",
     "      --job-timeout S     stop the job after S seconds (default 1800)\n"},
    {"stall-timeout", required_argument, JOBOPT_STALL_TIMEOUT, "--stall-timeout",
     "      --stall-timeout S   stop it after S seconds without output (default 300)\n"},
    {"rendezvous-timeout", required_argument, JOBOPT_RDZV_TIMEOUT, "--rendezvous-timeout",
     "      --rendezvous-timeout S  torch: stop the job when its ranks have not all\n"
     "                          joined MASTER_ADDR:PORT after S seconds and a node\n"
     "                          cannot reach it then, naming it (default 60, 0: off)\n"},
};

static int parse(void *dst, int id, const char *arg, const char *shown, char *err, size_t errlen)
{
	struct mnist_opts *o = dst;
	int v;

	switch (id) {
	case JOBOPT_MODE:
		if (strcmp(arg, "torch") == 0)
			o->mode = MNIST_TORCH;
		else if (strcmp(arg, "embedded") == 0)
			o->mode = MNIST_EMBEDDED;
		else if (strcmp(arg, "auto") == 0)
			o->mode = MNIST_AUTO;
		else
			return cd_errf(err, errlen, CD_ERR_PARSE, "%s is torch, embedded or auto",
			               shown);
		return 0;
	case JOBOPT_BACKEND:
		if (strcmp(arg, "gloo") != 0 && strcmp(arg, "nccl") != 0 &&
		    strcmp(arg, "hccl") != 0 && strcmp(arg, "auto") != 0)
			return cd_errf(err, errlen, CD_ERR_PARSE, "%s is gloo, nccl, hccl or auto",
			               shown);
		o->backend = arg;
		return 0;
	case JOBOPT_EPOCHS:
		return opt_int(shown, arg, 1, TRAIN_MAX_EPOCHS, &o->epochs, err, errlen);
	case JOBOPT_NPROC:
		o->nproc_given = 1;
		return opt_int(shown, arg, 1, 64, &o->nproc_per_node, err, errlen);
	case JOBOPT_BATCH:
		return opt_int(shown, arg, 1, 4096, &o->batch, err, errlen);
	case JOBOPT_MASTER_PORT:
		return opt_port(shown, arg, &o->master_port, err, errlen);
	case JOBOPT_RETRIES:
		if (opt_int(shown, arg, 0, 100, &v, err, errlen) < 0)
			return -1;
		o->data.retries = v ? v : -1;
		return 0;
	case JOBOPT_SEED:
		if (opt_int(shown, arg, 0, 1 << 30, &v, err, errlen) < 0)
			return -1;
		o->seed = (unsigned)v;
		return 0;
	case JOBOPT_JOB_TIMEOUT:
		if (opt_int(shown, arg, 1, 7 * 86400, &v, err, errlen) < 0)
			return -1;
		o->timeout_ms = v * 1000;
		return 0;
	case JOBOPT_RDZV_TIMEOUT:
		if (opt_int(shown, arg, 0, RDZVWATCH_MAX_SECONDS, &v, err, errlen) < 0)
			return -1;
		o->rendezvous_timeout_ms = v * 1000;
		return 0;
	case JOBOPT_STALL_TIMEOUT:
		if (opt_int(shown, arg, 1, 86400, &v, err, errlen) < 0)
			return -1;
		o->stall_ms = v * 1000;
		return 0;
	case JOBOPT_LR:
		o->lr = strtod(arg, NULL);
		if (o->lr <= 0 || o->lr > 100)
			return cd_errf(err, errlen, CD_ERR_PARSE, "%s wants a number above 0",
			               shown);
		return 0;
	case JOBOPT_DATA_URL:
		o->data.url = arg;
		return 0;
	case JOBOPT_DATA_DIR:
		o->data.data_dir = arg;
		return 0;
	case JOBOPT_DATA_MD5:
		o->data.md5_file = arg;
		return 0;
	case JOBOPT_CACHE_DIR:
		o->data.cache_dir = arg;
		return 0;
	case JOBOPT_REMOTE_DIR:
		if (arg[0] != '/' && strncmp(arg, "~/", 2) != 0)
			return cd_errf(err, errlen, CD_ERR_PARSE,
			               "%s must be absolute or start with ~/", shown);
		o->remote_root = arg;
		return 0;
	case JOBOPT_IFACE:
		o->iface = arg;
		return 0;
	case JOBOPT_PYTHON:
		o->python = arg;
		return 0;
	}
	return cd_errf(err, errlen, CD_ERR_PARSE, "%s is not an option of this group", shown);
}

/* A configured --nproc-per-node is a default: a host file's slots win over
 * it, as they do not over one given on the command line. */
static int finish(void *dst, const struct optset *s, char *err, size_t errlen)
{
	struct mnist_opts *o = dst;

	(void)err;
	(void)errlen;
	if (optset_from_config(s, JOBOPT_NPROC))
		o->nproc_given = 0;
	return 0;
}

static const struct optvalues values[] = {
    {JOBOPT_MODE, "torch embedded auto"},
    {JOBOPT_BACKEND, "gloo nccl hccl auto"},
    {0},
};

const struct optgroup jobopt_group = {
    .defs = defs,
    .ndefs = CD_ARRAY_LEN(defs),
    .parse = parse,
    .finish = finish,
    .values = values,
};
