/* SPDX-License-Identifier: MIT */
/*
 * report_gpuburn.c - `clusterdoc gpu-burn` results as Prometheus metrics
 * (docs/report-format.md, "Metrics"): per GPU its TFLOP/s, its bytes per
 * second and whether it is slow; per model the medians; a GPU or node
 * without a result has clusterdoc_gpuburn_gpu_ok 0 (or _node_ok 0) and no
 * number, so what was not measured is not reported as 0.
 */
#include "report.h"

#include "cd.h"

#include <stdio.h>

static void declare_families(struct prom *p)
{
	prom_family(p, "clusterdoc_gpuburn_seconds", PROM_GAUGE,
	            "Seconds of stress per GPU (half matrix product, half device copy)");
	prom_family(p, "clusterdoc_gpuburn_node_ok", PROM_GAUGE,
	            "1 when the node ran the stress, 0 when it could not (see the error)");
	prom_family(p, "clusterdoc_gpuburn_gpu_ok", PROM_GAUGE,
	            "1 when the GPU was measured, 0 when it failed during the stress");
	prom_family(p, "clusterdoc_gpuburn_tflops", PROM_GAUGE,
	            "bf16 (fp16) matrix product throughput of the GPU, TFLOP/s");
	prom_family(p, "clusterdoc_gpuburn_copy_bytes_per_second", PROM_GAUGE,
	            "Device-memory copy bandwidth of the GPU (bytes read and written per second)");
	prom_family(p, "clusterdoc_gpuburn_gpu_slow", PROM_GAUGE,
	            "1 when the GPU is more than --slow-pct below its model's median (gpu-slow)");
	prom_family(p, "clusterdoc_gpuburn_model_tflops_median", PROM_GAUGE,
	            "Median matrix product throughput of a GPU model over every node, TFLOP/s");
	prom_family(p, "clusterdoc_gpuburn_model_copy_bytes_per_second_median", PROM_GAUGE,
	            "Median device-memory copy bandwidth of a GPU model over every node");
}

static void gpu_metrics(struct prom *p, const char *host, const json_t *g)
{
	char idx[24];
	const char *model = json_string_value(json_object_get(g, "name"));
	int ok = !json_object_get(g, "error") && json_object_get(g, "tflops_pct");

	snprintf(idx, sizeof(idx), "%lld",
	         (long long)json_integer_value(json_object_get(g, "index")));
	model = model ? model : "unknown";
	prom_add(p, "clusterdoc_gpuburn_gpu_ok", host, ok, "node", host, "gpu", idx, "model", model,
	         NULL);
	if (!ok)
		return;
	prom_add(p, "clusterdoc_gpuburn_tflops", host,
	         json_number_value(json_object_get(g, "tflops")), "node", host, "gpu", idx, "model",
	         model, NULL);
	prom_add(p, "clusterdoc_gpuburn_copy_bytes_per_second", host,
	         json_number_value(json_object_get(g, "gbps")) * 1e9, "node", host, "gpu", idx,
	         "model", model, NULL);
	prom_add(p, "clusterdoc_gpuburn_gpu_slow", host,
	         json_is_true(json_object_get(g, "slow")) ? 1 : 0, "node", host, "gpu", idx,
	         "model", model, NULL);
}

struct prom *report_gpuburn_prom(const json_t *rep, const struct report_run *run)
{
	struct prom *p = report_prom_new(run, "gpu-burn's exit status: 0 every GPU measured and "
	                                      "none slow, 1 a GPU slow or failed, 2 no GPU "
	                                      "measured");
	const json_t *n, *g, *m;
	size_t i, k;

	declare_families(p);
	prom_add(p, "clusterdoc_gpuburn_seconds", NULL,
	         json_number_value(json_object_get(rep, "seconds")), NULL);
	json_array_foreach(json_object_get(rep, "models"), i, m)
	{
		const char *model = json_string_value(json_object_get(m, "name"));

		prom_add(p, "clusterdoc_gpuburn_model_tflops_median", NULL,
		         json_number_value(json_object_get(m, "tflops_median")), "model", model,
		         NULL);
		prom_add(p, "clusterdoc_gpuburn_model_copy_bytes_per_second_median", NULL,
		         json_number_value(json_object_get(m, "gbps_median")) * 1e9, "model", model,
		         NULL);
	}
	json_array_foreach(json_object_get(rep, "nodes"), i, n)
	{
		const char *host = json_string_value(json_object_get(n, "host"));

		prom_add(p, "clusterdoc_gpuburn_node_ok", host,
		         json_object_get(n, "error_code") ? 0 : 1, "node", host, NULL);
		json_array_foreach(json_object_get(n, "gpus"), k, g)
		{
			gpu_metrics(p, host, g);
		}
	}
	return p;
}
