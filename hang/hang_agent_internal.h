/* SPDX-License-Identifier: MIT */
/*
 * hang_agent_internal.h - what hang_agent.c and hang_agent_stacks.c share:
 * the stacks, NCCL and GPU parts of `hang_sample` (hang_agent.h).
 */
#ifndef CD_PROBES_HANG_AGENT_INTERNAL_H
#define CD_PROBES_HANG_AGENT_INTERNAL_H

#include <jansson.h>
#include <stddef.h>

/* The py-spy on PATH or in ~/.local/bin into path: 1, or 0 when none. */
int hang_agent_find_pyspy(char *path, size_t len);

/*
 * Stacks for every "role":"rank" process of procs (their "_pythonpath" key
 * holds their PYTHONPATH): a hang-ready `clusterdoc run` rank gets its dump
 * signal (SIGUSR2, to its exact PID; all of them first, then one wait of
 * at most wait_ms for their stacks files to grow); else py-spy (pyspy, NULL
 * when none) under a 5 s deadline; else a note saying how to get stacks.
 * Sets "stacks", "stacks_how", "stacks_note" (and "stacks_truncated") on
 * each.
 */
void hang_agent_collect_stacks(json_t *procs, const char *pyspy, int wait_ms);

/* The deadlines of the NCCL parts: the RAS query of a node, and the Flight
 * Recorder dumps of all its ranks together. A rank's first dump takes torch
 * longer than the next ones (seen on torch 2.11: more than 3 s), and the
 * dumps are taken one rank after the other; the head's request deadline
 * (hang/hang.c) leaves room for this. */
#define HANG_AGENT_RAS_MS 2000
#define HANG_AGENT_FR_MS  12000

/*
 * The NCCL parts into out: "ras", hang_ras_query's answer (plus "rank_pid",
 * the rank it was asked for) when a "role":"rank" process of procs maps a
 * libnccl, at that rank's NCCL_RAS_ADDR ("_ras_addr") or localhost:28028,
 * within HANG_AGENT_RAS_MS; else null. "flight_recorder", when asked and a
 * rank's environment names TORCH_NCCL_DEBUG_INFO_PIPE_FILE ("_fr_pipe",
 * "_fr_temp"): {"dumps": [hang_fr_parse's object with "rank", "pid",
 * "ok":true and its newest 256 entries ("entries_truncated"; the stack
 * "frames" of the newest 16 only), or {"pid",
 * "rank", "ok":false, "error_code", "error"}]}, all within HANG_AGENT_FR_MS;
 * else null.
 */
void hang_agent_nccl(json_t *out, const json_t *procs, int flight_recorder);

#define HANG_AGENT_MAX_GPUS 64

/*
 * The GPUs through NVML (probes/nvml.h) into out: "gpus": [{"index", "uuid",
 * "util_gpu", "util_memory" (percent, null when NVML cannot say), "pids":
 * [the GPU's compute processes], "error" / "pids_error" when a query
 * failed}], null without NVML ("gpu_error" says why when it is there but
 * does not work); each process of procs gets "gpu": {"index", "uuid",
 * "util_gpu", "util_memory", "used_memory_bytes"} of the first GPU that
 * lists its PID, or null.
 */
void hang_agent_gpus(json_t *out, json_t *procs);

#endif
