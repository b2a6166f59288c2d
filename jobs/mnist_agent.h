/* SPDX-License-Identifier: MIT */
/*
 * mnist_agent.h - the agent's side of `clusterdoc mnist --mode embedded`:
 * this node's ranks train the MLP of mlp.h data-parallel (train.h), their
 * gradients summed with the TCP ring allreduce (ring.h), as the agent's
 * background job (job.h).
 *
 *   mnist_start {"token", "nranks", "stall_ms", "connect_timeout_ms",
 *               "data_dir" (the four IDX files), "epochs", "batch", "lr",
 *               "momentum", "seed", "conns" (optional),
 *               "ranks": [{"rank", "right": {"address", "scope_id", "port"}}]}
 *               -> {"ranks": <local ranks started>}
 *
 * The listeners come from a bench_listen before it (bench_agent.h). Data is
 * read and validated before any thread starts (an error names the file).
 * The job's log gets a line per rank and epoch; global rank 0 also writes
 * the progress lines `CDMNIST {"event": "epoch"|"test", ...}` that the
 * torch mode's script writes, so the head reads both modes alike. The job's
 * result: {"ranks": [{"rank", "epochs_done", "loss": [...], "seconds":
 * [...], "test_correct", "test_total", "test_accuracy", "param_sha256",
 * "error" (when it failed)}]}; exit code 0 when every local rank finished.
 * job_stop ends every rank at its next allreduce (a pipe's hangup is the
 * ring's abort_fd).
 */
#ifndef CD_COLLECTIVES_MNIST_AGENT_H
#define CD_COLLECTIVES_MNIST_AGENT_H

#include <jansson.h>
#include <stddef.h>

json_t *mnist_agent_start(json_t *req, const char **code, char *msg, size_t msglen);

#endif
