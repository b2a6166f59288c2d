/* SPDX-License-Identifier: MIT */
/*
 * torchrun.h - what every job clusterdoc starts with PyTorch on the nodes
 * shares (`clusterdoc mnist --mode torch`, `clusterdoc run`): the torchrun
 * command line and the reading of a job's output for its first error line
 * (the variables come from the job's plan, jobs/jobplan.h). Pure:
 * nothing here talks to a node.
 */
#ifndef CD_COLLECTIVES_TORCHRUN_H
#define CD_COLLECTIVES_TORCHRUN_H

#include <jansson.h>
#include <stddef.h>

/*
 * The launcher's argv for node node_rank of nnodes, up to and including
 * --master_port (the caller appends the script and its arguments): python
 * (NULL: "python3") running torchrun through a shim that works around the
 * --redirects defect of torch < 2.0 on Python >= 3.11 (Debian 12), or
 * `-m torch.distributed.launch --use_env` for a torch older than 1.10
 * (torch_version "major.minor...", "" or NULL when unknown: torchrun). An
 * IPv6 master_addr is bracketed. A new array; the caller frees it.
 */
json_t *torchrun_argv(const char *python, const char *torch_version, int nnodes, int node_rank,
                      int nproc, const char *master_addr, int master_port);

/* Append one argument (a string, or a number written as %lld) to argv. */
void torchrun_arg(json_t *argv, const char *s);
void torchrun_arg_int(json_t *argv, long long v);

/* 1 when a line of a job's output states an error worth showing first: a
 * Python exception line ("RuntimeError: ..."), an NCCL warning, a socket
 * error, the agent's own failure to run the command. */
int torchrun_is_error_line(const char *line);

/*
 * Why a node cannot start torch, from its `facts` answer (asked with the
 * --python interpreter, python: NULL when none was given), or NULL when it
 * can: "HOST: import torch failed: ERR" or "HOST: no python3 in PATH",
 * with "(torch is in PATH: pass --python PATH)" when the agent found
 * torch in another interpreter. why holds the text.
 */
const char *torchrun_missing(json_t *facts, const char *host, const char *python, char *why,
                             size_t len);

#endif
