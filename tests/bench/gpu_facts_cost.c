/* SPDX-License-Identifier: MIT */
/*
 * gpu_facts_cost.c - what the GPU health facts (issue 35) add to a node's
 * `facts` answer, for docs/performance.md: facts_gpu_collect (NVML's GPUs
 * with their health, gpu_pci, the kernel log's Xid lines) ROUNDS times
 * through the NVML stand-in, and the median, 90th percentile and fastest
 * round in milliseconds. The GPUs are the stand-in's (FAKE_NVML_DEVICES);
 * the kernel log is /dev/kmsg unless CLUSTERDOC_KMSG names another. Built
 * against a tree before the change, the same program times the old part.
 *
 *   cc -O2 -D_GNU_SOURCE -Icore -I. -o /tmp/gpu_facts_cost tests/bench/gpu_facts_cost.c \
 *      build/libclusterdoc.a -ljansson -ldl -lm -pthread
 *   FAKE_NVML_DEVICES=0,0,0,0,0,0,0,0 \
 *      CLUSTERDOC_NVML_LIB=build/fakes/nvml/libnvidia-ml.so.1 /tmp/gpu_facts_cost 200
 */
#include "probes/facts_gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 100;
	double *ms;

	if (rounds < 1)
		rounds = 1;
	ms = calloc((size_t)rounds, sizeof(*ms));
	if (!ms)
		return 1;
	for (int i = 0; i < rounds; i++) {
		json_t *facts = json_object(), *errors = json_object();
		struct timespec a, b;

		clock_gettime(CLOCK_MONOTONIC, &a);
		facts_gpu_collect(facts, errors);
		clock_gettime(CLOCK_MONOTONIC, &b);
		ms[i] = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
		if (i == 0)
			fprintf(stderr, "%zu GPUs\n",
			        json_array_size(json_object_get(facts, "gpus")));
		json_decref(facts);
		json_decref(errors);
	}
	qsort(ms, (size_t)rounds, sizeof(*ms), by_value);
	printf("median %.2f ms  p90 %.2f ms  fastest %.2f ms\n", ms[rounds / 2],
	       ms[rounds * 9 / 10], ms[0]);
	free(ms);
	return 0;
}
