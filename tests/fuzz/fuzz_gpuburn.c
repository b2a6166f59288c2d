/* SPDX-License-Identifier: MIT */
/*
 * fuzz_gpuburn.c - libFuzzer harness for the reader of the gpu-burn
 * script's lines (collectives/gpuburn_agent.h, gpuburn_parse_output) and the
 * verdict and table made from what it read: whatever a node's Python
 * prints, nothing crashes, the GPUs never outnumber GPUBURN_MAX_GPUS and
 * each GPU entry is an object. Seeds: tests/fuzz/corpus/gpuburn/.
 */
#include <stdint.h>
#include <stdlib.h>

#include "cd.h"
#include "collectives/gpuburn.h"
#include "collectives/gpuburn_agent.h"
#include "report/gpuburn_render.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *r = gpuburn_parse_output((const char *)data, size, "no result"), *gpus, *g, *nodes,
	       *rep;
	char **lines;
	size_t i;

	if (!r)
		return 0;
	if (!json_is_object(r))
		abort();
	gpus = json_object_get(r, "gpus");
	if (json_array_size(gpus) > GPUBURN_MAX_GPUS)
		abort();
	json_array_foreach(gpus, i, g) if (!json_is_object(g)) abort();
	nodes = json_pack("[{sssO}]", "host", "n1", "result", r);
	rep = gpuburn_verdict(nodes, 10, 10);
	gpuburn_render_lines(rep, &lines);
	gpuburn_render_free(lines);
	json_decref(rep);
	json_decref(nodes);
	json_decref(r);
	return 0;
}
