/* SPDX-License-Identifier: MIT */
/*
 * gpuburn_verdict.c - the gpu-burn report from the nodes' answers
 * (gpuburn_verdict in gpuburn.h): medians per GPU model over every node,
 * each GPU against its model's median, and gpu-slow for a GPU more than
 * slow_pct below it. Pure.
 */
#include "collectives/gpuburn.h"
#include "cd.h"

#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double gpuburn_median(double *v, size_t n)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A GPU that was measured: no error, and both numbers. */
static int measured(const json_t *g)
{
	return !json_object_get(g, "error") && json_is_number(json_object_get(g, "tflops")) &&
	       json_is_number(json_object_get(g, "gbps"));
}

static const char *model_of(const json_t *g)
{
	const char *name = json_string_value(json_object_get(g, "name"));

	return name ? name : "unknown";
}

/* The median of key over the measured GPUs of the nlists arrays of GPUs
 * whose model is name (every model: NULL). *count (when not NULL): how
 * many GPUs that was. */
static double median_of(const json_t *gpus_list[], size_t nlists, const char *name, const char *key,
                        size_t *count)
{
	double *v = NULL;
	size_t n = 0, cap = 0;
	double med;

	for (size_t l = 0; l < nlists; l++) {
		size_t i;
		json_t *g;

		json_array_foreach(gpus_list[l], i, g)
		{
			if (!measured(g) || (name && strcmp(model_of(g), name) != 0))
				continue;
			if (n == cap) {
				cap = cap ? 2 * cap : 16;
				v = cd_realloc(v, cap * sizeof(*v));
			}
			v[n++] = json_number_value(json_object_get(g, key));
		}
	}
	med = gpuburn_median(v, n);
	free(v);
	if (count)
		*count = n;
	return med;
}

static const json_t *model_row(const json_t *models, const char *name)
{
	for (size_t k = 0; k < json_array_size(models); k++) {
		const json_t *m = json_array_get(models, k);

		if (strcmp(json_string_value(json_object_get(m, "name")), name) == 0)
			return m;
	}
	return NULL;
}

/* The models, in the order they are first seen: [{"name", "gpus", medians}]. */
static json_t *models_of(const json_t *gpus_list[], size_t nlists)
{
	json_t *models = json_array();

	for (size_t l = 0; l < nlists; l++) {
		for (size_t i = 0; i < json_array_size(gpus_list[l]); i++) {
			const json_t *g = json_array_get(gpus_list[l], i);
			const char *name = model_of(g);
			size_t n;
			double t, b;

			if (!measured(g) || model_row(models, name))
				continue;
			t = median_of(gpus_list, nlists, name, "tflops", &n);
			b = median_of(gpus_list, nlists, name, "gbps", NULL);
			json_array_append_new(models, json_pack("{sssIsfsf}", "name", name, "gpus",
			                                        (json_int_t)n, "tflops_median", t,
			                                        "gbps_median", b));
		}
	}
	return models;
}

static double pct(double v, double median)
{
	return median > 0 ? 100.0 * v / median : 100.0;
}

static json_t *slow_finding(const char *host, const json_t *g, const json_t *m, double slow_pct)
{
	json_int_t idx = json_integer_value(json_object_get(g, "index"));
	double t = json_number_value(json_object_get(g, "tflops"));
	double b = json_number_value(json_object_get(g, "gbps"));
	double tm = json_number_value(json_object_get(m, "tflops_median"));
	double bm = json_number_value(json_object_get(m, "gbps_median"));
	const char *bus = json_string_value(json_object_get(g, "pci_bus_id"));
	char *key = cd_asprintf("%s/gpu%lld", host, (long long)idx);
	/* the bus id, where torch gave it, names the GPU as nvidia-smi -i does */
	char *msg = cd_asprintf("GPU %lld of %s (%s%s%s) is more than %g %% below the median of "
	                        "its model: %.1f %% of its TFLOP/s, %.1f %% of its GB/s",
	                        (long long)idx, host, model_of(g), bus ? ", " : "", bus ? bus : "",
	                        slow_pct, pct(t, tm), pct(b, bm));
	char *ev = cd_asprintf("matrix product: %.2f TFLOP/s, the median of %lld %s: %.2f\n"
	                       "device copy: %.2f GB/s, the median: %.2f",
	                       t, (long long)json_integer_value(json_object_get(m, "gpus")),
	                       model_of(g), tm, b, bm);
	json_t *f = json_pack(
	    "{sssssssssIssssss}", "id", "gpu-slow", "severity", "warning", "key", key, "node", host,
	    "gpu", (json_int_t)idx, "message", msg, "evidence", ev, "fix",
	    "look at this GPU's clocks, temperature, power and throttle reasons (clusterdoc "
	    "facts; nvidia-smi -q -d PERFORMANCE), its PCIe link and its neighbours' load; "
	    "reset it or drain the node if it stays slow (docs/findings.md, gpu-slow)");

	free(key);
	free(msg);
	free(ev);
	return f;
}

/* Mark node n's GPUs against models; append gpu-slow findings; count. */
static void judge_node(json_t *n, const json_t *models, double slow_pct, json_t *findings,
                       json_int_t *nmeasured, json_int_t *nfailed, json_int_t *nslow)
{
	const char *host = json_string_value(json_object_get(n, "host"));
	json_t *gpus = json_object_get(n, "gpus"), *g;
	const json_t *one[1] = {gpus};
	double floor = 1.0 - slow_pct / 100.0;
	size_t i, cnt;

	json_array_foreach(gpus, i, g)
	{
		const json_t *m;
		double t, b, tm, bm;
		int slow;

		if (!measured(g)) {
			(*nfailed)++;
			continue;
		}
		(*nmeasured)++;
		m = model_row(models, model_of(g));
		t = json_number_value(json_object_get(g, "tflops"));
		b = json_number_value(json_object_get(g, "gbps"));
		tm = json_number_value(json_object_get(m, "tflops_median"));
		bm = json_number_value(json_object_get(m, "gbps_median"));
		slow = t < tm * floor || b < bm * floor;
		json_object_set_new(g, "tflops_pct", json_real(pct(t, tm)));
		json_object_set_new(g, "gbps_pct", json_real(pct(b, bm)));
		json_object_set_new(g, "slow", json_boolean(slow));
		if (slow) {
			(*nslow)++;
			json_array_append_new(findings, slow_finding(host, g, m, slow_pct));
		}
	}
	median_of(one, 1, NULL, "tflops", &cnt);
	if (cnt) {
		json_object_set_new(n, "tflops_median",
		                    json_real(median_of(one, 1, NULL, "tflops", NULL)));
		json_object_set_new(n, "gbps_median",
		                    json_real(median_of(one, 1, NULL, "gbps", NULL)));
	}
}

/* One node of the report from its answer: the result's keys, or its error. */
static json_t *node_of(const json_t *in)
{
	const json_t *res = json_object_get(in, "result");
	json_t *n = json_pack("{sO}", "host", json_object_get(in, "host"));
	const char *keys[] = {"python", "torch", "cuda", "error_code", "error"};

	for (size_t k = 0; k < CD_ARRAY_LEN(keys); k++)
		if (res && json_object_get(res, keys[k]))
			json_object_set(n, keys[k], json_object_get(res, keys[k]));
	if (!res) {
		json_object_set_new(n, "error_code", json_string("unreachable"));
		json_object_set(n, "error", json_object_get(in, "error"));
	}
	json_object_set_new(n, "gpus",
	                    res && json_is_array(json_object_get(res, "gpus"))
	                        ? json_deep_copy(json_object_get(res, "gpus"))
	                        : json_array());
	return n;
}

json_t *gpuburn_verdict(const json_t *nodes, double seconds, double slow_pct)
{
	size_t nn = json_array_size(nodes), i;
	const json_t **lists = cd_calloc(nn ? nn : 1, sizeof(*lists));
	json_t *out_nodes = json_array(), *findings = json_array(), *models, *n;
	json_int_t measured_n = 0, failed = 0, slow = 0, nodes_failed = 0, gpus = 0;
	int exit_status;

	for (i = 0; i < nn; i++) {
		json_array_append_new(out_nodes, node_of(json_array_get(nodes, i)));
		lists[i] = json_object_get(json_array_get(out_nodes, i), "gpus");
	}
	models = models_of(lists, nn);
	json_array_foreach(out_nodes, i, n)
	{
		if (json_object_get(n, "error_code"))
			nodes_failed++;
		gpus += (json_int_t)json_array_size(json_object_get(n, "gpus"));
		judge_node(n, models, slow_pct, findings, &measured_n, &failed, &slow);
	}
	free(lists);
	exit_status = measured_n == 0 ? 2 : slow || failed || nodes_failed ? 1 : 0;
	return json_pack("{sisssfsfsososos{sIsIsIsIsIsI}si}", "version", 1, "command", "gpu-burn",
	                 "seconds", seconds, "slow_pct", slow_pct, "nodes", out_nodes, "models",
	                 models, "findings", findings, "summary", "nodes", (json_int_t)nn,
	                 "nodes_failed", nodes_failed, "gpus", gpus, "measured", measured_n,
	                 "failed", failed, "slow", slow, "exit", exit_status);
}
