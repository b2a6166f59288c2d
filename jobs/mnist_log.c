/* SPDX-License-Identifier: MIT */
/*
 * mnist_log.c - pure helpers of the head's mnist run: reading the jobs'
 * output and writing the training script's command and environment on
 * top of the shared torchrun line (torchrun.h; see mnist_internal.h).
 */
#include "jobs/mnist_internal.h"
#include "jobs/torchrun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EVENT_PREFIX "CDMNIST "

int mnist_parse_event(const char *line, json_t **event)
{
	json_error_t e;
	json_t *v;

	*event = NULL;
	if (strncmp(line, EVENT_PREFIX, strlen(EVENT_PREFIX)) != 0)
		return 0;
	v = json_loads(line + strlen(EVENT_PREFIX), JSON_REJECT_DUPLICATES, &e);
	if (!json_is_object(v) || !json_is_string(json_object_get(v, "event"))) {
		json_decref(v);
		return -1;
	}
	*event = v;
	return 1;
}

int mnist_is_error_line(const char *line)
{
	return torchrun_is_error_line(line);
}

static void add_real(json_t *argv, double v)
{
	char s[32];

	snprintf(s, sizeof(s), "%g", v);
	torchrun_arg(argv, s);
}

json_t *mnist_torch_argv(const char *python, const char *torch_version, int nnodes, int node_rank,
                         int nproc, const char *master_addr, int master_port, const char *script,
                         const char *data_root, const char *checkpoint, const char *backend,
                         const struct mnist_opts *o)
{
	json_t *argv = torchrun_argv(python, torch_version, nnodes, node_rank, nproc, master_addr,
	                             master_port);

	torchrun_arg(argv, script);
	torchrun_arg(argv, "--data-root");
	torchrun_arg(argv, data_root);
	torchrun_arg(argv, "--epochs");
	torchrun_arg_int(argv, o->epochs);
	torchrun_arg(argv, "--backend");
	torchrun_arg(argv, backend);
	torchrun_arg(argv, "--batch");
	torchrun_arg_int(argv, o->batch);
	torchrun_arg(argv, "--lr");
	add_real(argv, o->lr);
	torchrun_arg(argv, "--momentum");
	add_real(argv, o->momentum);
	torchrun_arg(argv, "--seed");
	torchrun_arg_int(argv, o->seed);
	torchrun_arg(argv, "--timeout-s");
	torchrun_arg_int(argv, o->stall_ms / 1000 > 30 ? o->stall_ms / 1000 : 30);
	if (checkpoint) {
		torchrun_arg(argv, "--checkpoint");
		torchrun_arg(argv, checkpoint);
	}
	return argv;
}

json_t *mnist_torch_env(const struct job_plan *plan, size_t i, const char *backend)
{
	json_t *env = json_object();

	job_plan_env(plan, i, env);
	json_object_set_new(env, "OMP_NUM_THREADS", json_string("1"));
	json_object_set_new(env, "PYTHONUNBUFFERED", json_string("1"));
	if (strcmp(backend, "nccl") == 0)
		json_object_set_new(env, "TORCH_NCCL_ASYNC_ERROR_HANDLING", json_string("1"));
	return env;
}
