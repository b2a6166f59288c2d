/* SPDX-License-Identifier: MIT */
/*
 * gpuburn.h - `clusterdoc gpu-burn` on the head: every GPU of every node
 * at once runs a bf16 (fp16) matrix product and a device-memory copy for N
 * seconds through the node's torch (the agent's gpu_burn request,
 * gpuburn_agent.h); the results are compared per GPU model, and a GPU more
 * than slow_pct below its model's median is named (the finding gpu-slow).
 *
 * The flow is one async module on the loop (core/fanout.h): connect every
 * node, send each ready node one gpu_burn, and when every answer is in or
 * its node has failed, build the report (gpuburn_verdict) and call done.
 * A node that cannot be reached, has no torch or no CUDA, or dies mid-run
 * is named in the report; the other nodes' results stand.
 *
 * The report (JSON, "version" 1):
 *   {"version": 1, "command": "gpu-burn", "seconds", "slow_pct",
 *    "nodes": [{"host", "python", "torch", "cuda", "error_code", "error"
 *               (the last two only when the node ran nothing),
 *               "tflops_median", "gbps_median" (over its measured GPUs; absent
 *               without one), "gpus": [GPU...]}],
 *    "models": [{"name", "gpus", "tflops_median", "gbps_median"}],
 *    "findings": [{"id": "gpu-slow", "severity": "warning", "key": "NODE/gpuI",
 *                  "node", "gpu", "message", "evidence", "fix"}],
 *    "summary": {"nodes", "nodes_failed", "gpus", "measured", "failed", "slow"},
 *    "exit": 0 | 1 | 2}
 *   GPU: the agent's (index, name, dtype, tflops, gbps, ...; error when it
 *        failed) with "tflops_pct" and "gbps_pct" (of its model's median)
 *        and "slow": true|false for a measured GPU.
 *   exit: 0 every GPU measured and none slow; 1 a GPU slow, or a GPU or
 *        node failed while others were measured; 2 no GPU was measured.
 */
#ifndef CD_COLLECTIVES_GPUBURN_H
#define CD_COLLECTIVES_GPUBURN_H

#include <jansson.h>
#include <stddef.h>

#include "loop.h"
#include "sshpool.h"

struct gpuburn_opts {
	double seconds;         /* --seconds: of stress per GPU (half product, half copy) */
	double slow_pct;        /* --slow-pct: below the model's median by more: gpu-slow */
	const char *python;     /* --python: the interpreter on every node, or NULL */
	int request_timeout_ms; /* the pool's, added to the stress's own bound */
	int slack_ms;           /* beyond seconds, for torch's import and CUDA's start: the
	                           node's deadline (GPUBURN_SLACK_MS; tests make it short) */
};

void gpuburn_opts_init(struct gpuburn_opts *o);

/* What the command hears while the flow runs (both may be NULL). */
struct gpuburn_events {
	void (*phase)(void *arg, const char *what); /* "connect", "stress 10 s" */
	void (*done)(void *arg);                    /* gpuburn_report is ready */
};

struct gpuburn;

/* Start on pool (not yet started: this adds hosts and starts it). o and ev
 * are borrowed until gpuburn_free. */
struct gpuburn *gpuburn_start(struct loop *loop, struct sshpool *pool, const char *const *hosts,
                              size_t nhosts, const struct gpuburn_opts *o,
                              const struct gpuburn_events *ev, void *arg);
/* The report above once done has run, else NULL (borrowed). */
const json_t *gpuburn_report(const struct gpuburn *g);
/* gpuburn_free(NULL) is a no-op. */
void gpuburn_free(struct gpuburn *g);

/*
 * The report from the nodes' answers (pure; gpuburn_verdict.c). nodes:
 * [{"host", "result": the gpu_burn result} or {"host", "error": WHY}]
 * (borrowed). A new object, as above.
 */
json_t *gpuburn_verdict(const json_t *nodes, double seconds, double slow_pct);

/* The median of n values (sorted in place); 0 when n is 0. */
double gpuburn_median(double *v, size_t n);

#endif
