/*
 * runopt.c - the options of a job both front ends take (runopt.h).
 */
#include "jobs/runopt.h"
#include "cd.h"
#include "job_process.h"
#include "jobs/rdzvwatch.h"
#include "probes/netcheck.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SECONDS (86400 * 7) /* --stall-timeout and --job-timeout */

const struct runopt runopts[] = {
    {"launcher", 1, RUNOPT_LAUNCHER, "L",
     "torchrun (default: torchrun --nnodes --node_rank ...\n"
     "COMMAND on every node), none (COMMAND itself) or\n"
     "mpirun (on the first node only: a hostfile of the\n"
     "nodes, -x for each variable; needs node-to-node SSH,\n"
     "see clusterdoc mpi-check)"},
    {"nproc-per-node", 1, RUNOPT_NPROC, "N",
     "ranks per node, or gpu (the node's GPU count); default 1"},
    {"master-port", 1, RUNOPT_MASTER_PORT, "PORT",
     "default: the one the check proved (29500 when free)"},
    {"python", 1, RUNOPT_PYTHON, "PATH", "torchrun's interpreter on every node"},
    {"iface", 1, RUNOPT_IFACE, "NAME", "the data interface (default: NCCL's pick per node)"},
    {"backend", 1, RUNOPT_BACKEND, "hccl",
     "Ascend NPUs: refuse unless every node has an NPU and\n"
     "torch_npu; add HCCL_IF_IP, HCCL_SOCKET_IFNAME and\n"
     "HCCL_CONNECT_TIMEOUT to each node's environment"},
    {"env", 1, RUNOPT_ENV, "NAME=VALUE", "add a variable on every node (repeatable)"},
    {"chdir", 1, RUNOPT_CHDIR, "DIR", "where COMMAND runs on the nodes (default: home)"},
    {"remote-dir", 1, RUNOPT_REMOTE_DIR, "DIR",
     "where the run's directory goes on the nodes, DIR/RUN\n"
     "(absolute or ~/...; default ~/.cache/clusterdoc/runs):\n"
     "the --sync tree and the hang-ready files"},
    {"no-hang-ready", 0, RUNOPT_NO_HANG_READY, NULL,
     "no TORCH_NCCL_* variables, no stack-dump signal"},
    {"kill-grace", 1, RUNOPT_KILL_GRACE, "S",
     "SIGTERM to SIGKILL when stopping (default 3, at most 600)"},
    {"stall-timeout", 1, RUNOPT_STALL, "S",
     "stop the job after S s without output (default: none)"},
    {"job-timeout", 1, RUNOPT_JOB_TIMEOUT, "S", "stop the job after S s (default: none)"},
    {"rendezvous-timeout", 1, RUNOPT_RDZV_TIMEOUT, "S",
     "stop the job when its ranks have not all joined\n"
     "MASTER_ADDR:MASTER_PORT after S s and a node cannot\n"
     "reach it then, naming it (default 60, 0: off)"},
};
const size_t runopts_len = CD_ARRAY_LEN(runopts);

const struct runopt *runopt_find(const char *name, size_t len)
{
	for (size_t k = 0; k < runopts_len; k++)
		if (strlen(runopts[k].name) == len && strncmp(runopts[k].name, name, len) == 0)
			return &runopts[k];
	return NULL;
}

/* A whole number in [lo, hi] into *out. */
static int whole(const struct runopt *op, const char *arg, int lo, int hi, int *out, char *err,
                 size_t errlen)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (!*arg || *end || errno || v < lo || v > hi)
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "--%s wants a number from %d to %d, not \"%s\"", op->name, lo, hi,
		               arg);
	*out = (int)v;
	return 0;
}

/* Seconds in [0, hi] into *ms. */
static int seconds(const struct runopt *op, const char *arg, int hi, int *ms, char *err,
                   size_t errlen)
{
	int s;

	if (whole(op, arg, 0, hi, &s, err, errlen) < 0)
		return CD_ERR_PARSE;
	*ms = s * 1000;
	return 0;
}

int runopt_apply(const struct runopt *op, const char *arg, struct run_opts *o, char *err,
                 size_t errlen)
{
	switch (op->id) {
	case RUNOPT_LAUNCHER:
		if (strcmp(arg, "torchrun") == 0)
			o->launcher = RUN_TORCHRUN;
		else if (strcmp(arg, "none") == 0)
			o->launcher = RUN_NONE;
		else if (strcmp(arg, "mpirun") == 0)
			o->launcher = RUN_MPIRUN;
		else
			return cd_errf(
			    err, errlen, CD_ERR_PARSE,
			    "--launcher is torchrun, none or mpirun (for the job), or ssh, "
			    "srun or local-connect (for the agents)");
		return 0;
	case RUNOPT_NPROC:
		if (strcmp(arg, "gpu") == 0) {
			o->nproc_per_node = 0;
			return 0;
		}
		return whole(op, arg, 1, 1024, &o->nproc_per_node, err, errlen);
	case RUNOPT_MASTER_PORT: /* the check also listens on port+10 */
		return whole(op, arg, 1, NETCHECK_PORT_MAX, &o->master_port, err, errlen);
	case RUNOPT_PYTHON:
		o->python = arg;
		return 0;
	case RUNOPT_IFACE:
		o->iface = arg;
		return 0;
	case RUNOPT_BACKEND:
		if (strcmp(arg, "hccl") != 0)
			return cd_errf(
			    err, errlen, CD_ERR_PARSE,
			    "--backend is hccl (the variables of NCCL and Gloo are always "
			    "set): %s",
			    arg);
		o->hccl = 1;
		return 0;
	case RUNOPT_ENV:
		return run_check_env(arg, strlen(arg), err, errlen) < 0 ? CD_ERR_PARSE : 0;
	case RUNOPT_CHDIR:
		o->chdir = arg;
		return 0;
	case RUNOPT_REMOTE_DIR:
		if (arg[0] != '/' && strncmp(arg, "~/", 2) != 0)
			return cd_errf(err, errlen, CD_ERR_PARSE,
			               "--remote-dir is absolute or ~/...: %s", arg);
		o->remote_dir = arg;
		return 0;
	case RUNOPT_NO_HANG_READY:
		o->no_hang_ready = 1;
		return 0;
	case RUNOPT_KILL_GRACE: /* the nodes take no more: refused here, before anything starts */
		return seconds(op, arg, JOB_PROCESS_GRACE_MAX_MS / 1000, &o->kill_grace_ms, err,
		               errlen);
	case RUNOPT_STALL:
		return seconds(op, arg, MAX_SECONDS, &o->stall_ms, err, errlen);
	case RUNOPT_JOB_TIMEOUT:
		return seconds(op, arg, MAX_SECONDS, &o->timeout_ms, err, errlen);
	case RUNOPT_RDZV_TIMEOUT:
		return seconds(op, arg, RDZVWATCH_MAX_SECONDS, &o->rendezvous_timeout_ms, err,
		               errlen);
	}
	return cd_errf(err, errlen, CD_ERR_PARSE, "--%s: not a job option", op->name);
}

void runopt_help(FILE *f)
{
	for (size_t k = 0; k < runopts_len; k++) {
		const struct runopt *op = &runopts[k];
		const char *h = op->help;
		char lead[64];
		int w;

		w = snprintf(lead, sizeof(lead), "      --%s%s%s", op->name, op->value ? " " : "",
		             op->value ? op->value : "");
		/* the text at column 26, or after two spaces when the name is longer */
		fprintf(f, "%s%*s", lead, w < 26 ? 26 - w : 2, "");
		while (*h) {
			size_t n = strcspn(h, "\n");

			fprintf(f, "%.*s\n", (int)n, h);
			h += n;
			if (*h == '\n') {
				h++;
				fprintf(f, "%26s", "");
			}
		}
	}
}

void runopt_names(char *out, size_t outlen)
{
	size_t used = 0;

	out[0] = '\0';
	for (size_t k = 0; k < runopts_len && used + 1 < outlen; k++)
		used += (size_t)snprintf(out + used, outlen - used, "%s--%s", k ? ", " : "",
		                         runopts[k].name);
}
