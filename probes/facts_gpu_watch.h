/* SPDX-License-Identifier: MIT */
/*
 * facts_gpu_watch.h - NVML's GPU facts asked in a child process, each GPU
 * under a deadline, so that a query that never returns (a GPU falling off
 * the bus, a driver in a bad state: NVML's calls are synchronous and cannot
 * be cut) costs that GPU, named with the query, and not the node's facts.
 *
 * The child dlopens NVML, asks it what facts_gpu.c asks (the driver, the
 * count, then each GPU from a starting index) and writes one JSON record a
 * line to a pipe: the query it is about to make, the node's answers, each
 * GPU's facts. The parent reads them under a deadline that starts again
 * with each answer: FACTS_NVML_INIT_MS until the node's answers (nvmlInit
 * on a node without persistence mode initialises every GPU), then
 * FACTS_NVML_GPU_MS per GPU. When it passes, the child is killed and the
 * GPU it was asking is kept with its health's errors naming the query
 * ("nvmlDeviceGetPowerUsage: no answer within 5 s"; every other key "not
 * asked: ..."), and a new child goes on from the next GPU. When that child's
 * own nvmlInit does not answer either (the whole driver is stuck), every GPU
 * left is kept the same way, naming it. A child that crashes is named the
 * same way with its signal. The whole may take FACTS_NVML_INIT_MS + 2 x
 * FACTS_NVML_GPU_MS (20 s, within the head's 30 s request deadline): past
 * it, the GPUs left are named not asked. CLUSTERDOC_NVML_TIMEOUT_MS sets
 * both deadlines (tests).
 */
#ifndef CD_PROBES_FACTS_GPU_WATCH_H
#define CD_PROBES_FACTS_GPU_WATCH_H

#include <jansson.h>
#include <stddef.h>

#define FACTS_NVML_INIT_MS 10000
#define FACTS_NVML_GPU_MS  5000

/* The words every "no answer" error of a GPU's health carries, which the
 * findings read as a GPU that does not answer (gpu-missing). */
#define FACTS_NVML_NO_ANSWER "no answer within"

/*
 * facts["gpus"] and facts["gpu_driver"] as facts_gpu_collect documents them
 * (facts_gpu.h), asked in a child under the deadlines above; what could not
 * be asked is said in errors["gpus"] and in the GPUs' own health errors.
 * When no NVML library loads, absent gets the loader's reason ("" else).
 */
void facts_gpu_watch_collect(json_t *facts, json_t *errors, char *absent, size_t absent_len);

#endif
