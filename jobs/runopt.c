/* SPDX-License-Identifier: MIT */
/*
 * runopt.c - the options of a job both front ends take (runopt.h).
 */
#include "jobs/runopt.h"
#include "cd.h"
#include "job_process.h"
#include "jobs/rdzvwatch.h"
#include "transport_back.h"

#include <stdlib.h>
#include <string.h>

#define MAX_SECONDS (86400 * 7) /* --stall-timeout and --job-timeout */

static const struct optdef defs[] = {
    {"launcher", required_argument, RUNOPT_LAUNCHER, "--launcher",
     "      --launcher L        torchrun (default: torchrun --nnodes --node_rank ...\n"
     "                          COMMAND on every node), none (COMMAND itself) or\n"
     "                          mpirun (on the first node only: a hostfile of the\n"
     "                          nodes, -x for each variable; needs node-to-node SSH,\n"
     "                          see clusterdoc mpi-check)\n"},
    {"nproc-per-node", required_argument, RUNOPT_NPROC, "--nproc-per-node",
     "      --nproc-per-node N  ranks per node, or gpu (the node's GPU count); default 1\n"},
    {"master-port", required_argument, RUNOPT_MASTER_PORT, "--master-port",
     "      --master-port PORT  default: the one the check proved (29500 when free)\n"},
    {"python", required_argument, RUNOPT_PYTHON, "--python",
     "      --python PATH       torchrun's interpreter on every node\n"},
    {"iface", required_argument, RUNOPT_IFACE, "--iface",
     "      --iface NAME        the data interface (default: NCCL's pick per node)\n"},
    {"backend", required_argument, RUNOPT_BACKEND, "--backend",
     "      --backend B         what the job's collectives use: nccl (default: every\n"
     "                          finding of the check counts), gloo (sockets alone: the\n"
     "                          findings of NCCL's IB transport are shown, not\n"
     "                          refused) or hccl (Ascend NPUs: refuse unless every\n"
     "                          node has an NPU and torch_npu; add HCCL_IF_IP,\n"
     "                          HCCL_SOCKET_IFNAME and HCCL_CONNECT_TIMEOUT to each\n"
     "                          node's environment); NCCL's and Gloo's variables are\n"
     "                          always set\n"},
    {"env", required_argument, RUNOPT_ENV, "--env",
     "      --env NAME=VALUE    add a variable on every node (repeatable)\n"},
    {"chdir", required_argument, RUNOPT_CHDIR, "--chdir",
     "      --chdir DIR         where COMMAND runs on the nodes (default: home)\n"},
    {"remote-dir", required_argument, RUNOPT_REMOTE_DIR, "--remote-dir",
     "      --remote-dir DIR    where the run's directory goes on the nodes, DIR/RUN\n"
     "                          (absolute or ~/...; default ~/.cache/clusterdoc/runs):\n"
     "                          the --sync tree and the hang-ready files\n"},
    {"no-hang-ready", no_argument, RUNOPT_NO_HANG_READY, "--no-hang-ready",
     "      --no-hang-ready     no TORCH_NCCL_* variables, no stack-dump signal\n"},
    {"kill-grace", required_argument, RUNOPT_KILL_GRACE, "--kill-grace",
     "      --kill-grace S      SIGTERM to SIGKILL when stopping (default 3, at most 600)\n"},
    {"stall-timeout", required_argument, RUNOPT_STALL, "--stall-timeout",
     "      --stall-timeout S   stop the job after S s without output (default: none)\n"},
    {"job-timeout", required_argument, RUNOPT_JOB_TIMEOUT, "--job-timeout",
     "      --job-timeout S     stop the job after S s (default: none)\n"},
    {"rendezvous-timeout", required_argument, RUNOPT_RDZV_TIMEOUT, "--rendezvous-timeout",
     "      --rendezvous-timeout S  stop the job when its ranks have not all joined\n"
     "                          MASTER_ADDR:MASTER_PORT after S s and a node cannot\n"
     "                          reach it then, naming it (default 60, 0: off)\n"},
};

/* Seconds in [0, hi] into *ms. */
static int seconds(const char *shown, const char *arg, int hi, int *ms, char *err, size_t errlen)
{
	int s;

	if (opt_int(shown, arg, 0, hi, &s, err, errlen) < 0)
		return CD_ERR_PARSE;
	*ms = s * 1000;
	return 0;
}

static int parse_launcher(struct runopt_dst *d, const char *arg, char *err, size_t errlen)
{
	int agents;

	if (strcmp(arg, "torchrun") == 0)
		d->o->launcher = RUN_TORCHRUN;
	else if (strcmp(arg, "none") == 0)
		d->o->launcher = RUN_NONE;
	else if (strcmp(arg, "mpirun") == 0)
		d->o->launcher = RUN_MPIRUN;
	else if (d->agent_launcher && (agents = launcher_parse(arg)) >= 0)
		*d->agent_launcher = agents;
	else
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "--launcher is torchrun, none or mpirun (for the job), or ssh, "
		               "srun or local-connect (for the agents)");
	return 0;
}

static int parse(void *dst, int id, const char *arg, const char *shown, char *err, size_t errlen)
{
	struct runopt_dst *d = dst;
	struct run_opts *o = d->o;

	switch (id) {
	case RUNOPT_LAUNCHER:
		return parse_launcher(d, arg, err, errlen);
	case RUNOPT_NPROC:
		o->nproc_given = 1;
		if (strcmp(arg, "gpu") == 0) {
			o->nproc_per_node = 0;
			return 0;
		}
		return opt_int(shown, arg, 1, 1024, &o->nproc_per_node, err, errlen);
	case RUNOPT_MASTER_PORT:
		d->master_port_given = 1;
		return opt_port(shown, arg, &o->master_port, err, errlen);
	case RUNOPT_PYTHON:
		o->python = arg;
		return 0;
	case RUNOPT_IFACE:
		o->iface = arg;
		return 0;
	case RUNOPT_BACKEND:
		if (strcmp(arg, "nccl") != 0 && strcmp(arg, "gloo") != 0 &&
		    strcmp(arg, "hccl") != 0)
			return cd_errf(err, errlen, CD_ERR_PARSE,
			               "%s is nccl, gloo or hccl, not \"%s\"", shown, arg);
		o->hccl = strcmp(arg, "hccl") == 0;
		o->gloo = strcmp(arg, "gloo") == 0;
		return 0;
	case RUNOPT_ENV:
		if (run_check_env(arg, strlen(arg), err, errlen) < 0)
			return CD_ERR_PARSE;
		return d->env ? d->env(d->env_arg, arg, err, errlen) : 0;
	case RUNOPT_CHDIR:
		o->chdir = arg;
		return 0;
	case RUNOPT_REMOTE_DIR:
		if (arg[0] != '/' && strncmp(arg, "~/", 2) != 0)
			return cd_errf(err, errlen, CD_ERR_PARSE, "%s is absolute or ~/...: %s",
			               shown, arg);
		o->remote_dir = arg;
		return 0;
	case RUNOPT_NO_HANG_READY:
		o->no_hang_ready = 1;
		return 0;
	case RUNOPT_KILL_GRACE: /* the nodes take no more: refused here, before anything starts */
		return seconds(shown, arg, JOB_PROCESS_GRACE_MAX_MS / 1000, &o->kill_grace_ms, err,
		               errlen);
	case RUNOPT_STALL:
		return seconds(shown, arg, MAX_SECONDS, &o->stall_ms, err, errlen);
	case RUNOPT_JOB_TIMEOUT:
		return seconds(shown, arg, MAX_SECONDS, &o->timeout_ms, err, errlen);
	case RUNOPT_RDZV_TIMEOUT:
		return seconds(shown, arg, RDZVWATCH_MAX_SECONDS, &o->rendezvous_timeout_ms, err,
		               errlen);
	}
	return cd_errf(err, errlen, CD_ERR_PARSE, "%s is not a job option", shown);
}

/* A configured --nproc-per-node is a default: a host file's slots win over
 * it, as they do not over one given on the command line. */
static int finish(void *dst, const struct optset *s, char *err, size_t errlen)
{
	struct runopt_dst *d = dst;

	(void)err;
	(void)errlen;
	if (optset_from_config(s, RUNOPT_NPROC))
		d->o->nproc_given = 0;
	return 0;
}

static const struct optvalues values[] = {
    {RUNOPT_LAUNCHER, "torchrun none mpirun ssh srun local-connect"},
    {RUNOPT_BACKEND, "nccl gloo hccl"},
    {0},
};

const struct optgroup runopt_group = {
    .defs = defs,
    .ndefs = CD_ARRAY_LEN(defs),
    .parse = parse,
    .finish = finish,
    .values = values,
};

void runopt_names(char *out, size_t outlen)
{
	size_t used = 0;

	out[0] = '\0';
	for (size_t k = 0; k < CD_ARRAY_LEN(defs) && used + 1 < outlen; k++)
		used += (size_t)snprintf(out + used, outlen - used, "%s--%s", k ? ", " : "",
		                         defs[k].name);
}
