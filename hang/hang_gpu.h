/* SPDX-License-Identifier: MIT */
/*
 * hang_gpu.h - the GPU part of `clusterdoc hang`'s verdict: each rank's GPU
 * utilisation through NVML across the samples (the agents' "gpu" of each
 * process, hang/hang_agent.h), and the suspects it names. Pure, JSON in,
 * JSON out.
 *
 * A GPU is idle when its utilisation is at most HANG_GPU_IDLE_PCT in every
 * sample, busy when at least HANG_GPU_BUSY_PCT in every sample. NCCL's
 * kernels keep a GPU busy while they wait for a peer, so among the ranks
 * whose GPU is known (at least two):
 *   - one busy GPU while every other is idle: that rank runs a kernel that
 *     does not end (a collective the others did not enter, or a loop in its
 *     own kernel): it is the suspect;
 *   - otherwise, idle GPUs while others are busy: each idle rank is not in
 *     the collective the others' kernels run: a suspect.
 * A rank that is already a suspect gets the GPU as evidence instead.
 */
#ifndef CD_COLLECTIVES_HANG_GPU_H
#define CD_COLLECTIVES_HANG_GPU_H

#include <jansson.h>

#define HANG_GPU_IDLE_PCT 5
#define HANG_GPU_BUSY_PCT 90

/*
 * For samples as hang_analyze.h describes them, set "gpu" on each rank of
 * ranks (hang_analyze's "ranks": it finds the rank's process by node and
 * pid in every sample) to {"index", "uuid", "util": [percent per sample,
 * null where unknown], "util_memory": the last one} or null when NVML gave
 * none, and add the suspects above to suspects. Returns 1 when it added a
 * suspect or evidence (the job is then hung), else 0.
 */
int hang_gpu_verdict(const json_t *samples, json_t *ranks, json_t *suspects);

#endif
