/* SPDX-License-Identifier: MIT */
/*
 * gpuburn_agent.h - the agent's side of `clusterdoc gpu-burn`: run the
 * stress (collectives/gpuburn.py, compiled in) through the node's torch,
 * one Python process that drives every GPU it sees at once, and answer its
 * results per GPU. The head's side is gpuburn.h; docs/protocol.md has the
 * request.
 *
 *   gpu_burn {"seconds": S (0.5 to 3600), "python": PATH (optional),
 *             "slack_ms": N (optional, default GPUBURN_SLACK_MS)}
 *     -> {"python", "torch", "cuda", "count", "gpus": [GPU...]}
 *     or {"python", "torch", "cuda", "error_code", "error"} when nothing ran:
 *        "no-python" (the interpreter cannot be run), "no-torch", "no-cuda"
 *        (torch has no CUDA, or sees no usable GPU), "no-gpu"
 *        (device_count() is 0), "script-failed" (it ended without a line
 *        saying why: its last line of stderr), "timeout" (not even its
 *        first line before the deadline)
 *   GPU: {"index", "name", "dtype": "bf16"|"fp16", "tflops", "gbps",
 *         "matmuls", "copies", "matmul_ms", "copy_ms"}, or {"index", "name"?,
 *         "error": WHY} for a GPU that failed (its CUDA error) or gave no
 *         result before the deadline; the others' results stand.
 *
 * Which interpreter: "python" when given; else python3 from the login PATH
 * and, when that one has no torch, the places `facts` looks in
 * (probes/facts_pyfind.h), the first that imports torch. The whole request
 * is bounded by S + slack_ms (torch's import and CUDA's start): at that
 * deadline the script's process group is killed.
 */
#ifndef CD_COLLECTIVES_GPUBURN_AGENT_H
#define CD_COLLECTIVES_GPUBURN_AGENT_H

#include <jansson.h>
#include <stddef.h>

#define GPUBURN_SLACK_MS 60000
#define GPUBURN_OUT_MAX  (256 * 1024)
#define GPUBURN_MAX_GPUS 64
#define GPUBURN_SECS_MIN 0.5
#define GPUBURN_SECS_MAX 3600.0

/* The script, compiled in by scripts/embed.sh (build/gen/gpuburn_py.c). */
extern const unsigned char gpuburn_py[];
extern const size_t gpuburn_py_len;

json_t *gpuburn_agent_run(json_t *req, const char **code, char *msg, size_t msglen);

/*
 * Read the script's stdout (len bytes, no NUL needed): its first line, one
 * line per GPU and "done". Pure. Returns the result object of gpu_burn
 * above (new): the header's keys, and "gpus" with an entry per index below
 * "count" (at most GPUBURN_MAX_GPUS), the script's own or, for an index
 * with no line, {"index", "error": missing}. A header with "error_code" is
 * returned as it is. NULL when there is no header line (the script failed
 * before it); lines that are not JSON objects are skipped.
 */
json_t *gpuburn_parse_output(const char *out, size_t len, const char *missing);

#endif
