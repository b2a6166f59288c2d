/* SPDX-License-Identifier: MIT */
/*
 * gpuburn_render.c - the gpu-burn table and JSON (gpuburn_render.h).
 */
#include "report/gpuburn_render.h"
#include "cd.h"
#include "jsondoc.h"
#include "termtext.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct lines {
	char **v;
	size_t n, cap;
};

static void add(struct lines *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct lines *l, const char *fmt, ...)
{
	va_list ap;

	if (l->n + 2 > l->cap) {
		l->cap = l->cap ? 2 * l->cap : 32;
		l->v = cd_realloc(l->v, l->cap * sizeof(*l->v));
	}
	va_start(ap, fmt);
	l->v[l->n++] = cd_vasprintf(fmt, ap);
	va_end(ap);
	l->v[l->n] = NULL;
}

static const char *str(const json_t *o, const char *key, const char *dflt)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : dflt;
}

static double num(const json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

static void gpu_row(struct lines *l, const char *host, const json_t *g)
{
	long long idx = (long long)json_integer_value(json_object_get(g, "index"));

	if (json_object_get(g, "error") || !json_object_get(g, "tflops_pct")) {
		add(l, "%12s %4lld  %-24.24s %-5s %9s %7s %9s %7s  FAILED: %s", host, idx,
		    str(g, "name", "-"), str(g, "dtype", "-"), "-", "-", "-", "-",
		    str(g, "error", "no result"));
		return;
	}
	add(l, "%12s %4lld  %-24.24s %-5s %9.2f %6.1f%% %9.2f %6.1f%%  %s", host, idx,
	    str(g, "name", "-"), str(g, "dtype", "-"), num(g, "tflops"), num(g, "tflops_pct"),
	    num(g, "gbps"), num(g, "gbps_pct"),
	    json_is_true(json_object_get(g, "slow")) ? "SLOW" : "ok");
}

static void summary(struct lines *l, const json_t *rep)
{
	const json_t *s = json_object_get(rep, "summary"), *m, *n, *f;
	size_t i;

	add(l, "#");
	json_array_foreach(json_object_get(rep, "models"), i, m)
	{
		add(l, "# Median of %s (%lld GPUs): %.2f TFLOP/s, %.2f GB/s", str(m, "name", "?"),
		    (long long)json_integer_value(json_object_get(m, "gpus")),
		    num(m, "tflops_median"), num(m, "gbps_median"));
	}
	json_array_foreach(json_object_get(rep, "nodes"), i, n)
	{
		if (json_object_get(n, "tflops_median"))
			add(l, "# Node %s, the median of its GPUs: %.2f TFLOP/s, %.2f GB/s",
			    str(n, "host", "?"), num(n, "tflops_median"), num(n, "gbps_median"));
	}
	json_array_foreach(json_object_get(rep, "findings"), i, f)
	{
		add(l, "# %s %s: %s", str(f, "id", "?"), str(f, "key", "?"), str(f, "message", ""));
	}
	add(l, "# GPUs: %lld measured, %lld failed, %lld slow; nodes: %lld, %lld without a result",
	    (long long)json_integer_value(json_object_get(s, "measured")),
	    (long long)json_integer_value(json_object_get(s, "failed")),
	    (long long)json_integer_value(json_object_get(s, "slow")),
	    (long long)json_integer_value(json_object_get(s, "nodes")),
	    (long long)json_integer_value(json_object_get(s, "nodes_failed")));
}

size_t gpuburn_render_lines(const json_t *rep, char ***lines)
{
	struct lines l = {0};
	const json_t *n, *g;
	size_t i, k;

	add(&l,
	    "# clusterdoc gpu-burn: %g s on every GPU at once (half a bf16 matrix product, fp16 "
	    "without bf16; half a device-memory copy); slow: more than %g %% below its model's "
	    "median",
	    num(rep, "seconds"), num(rep, "slow_pct"));
	add(&l, "#");
	add(&l, "#%11s %4s  %-24s %-5s %9s %7s %9s %7s  %s", "node", "gpu", "model", "dtype",
	    "TFLOP/s", "of med", "GB/s", "of med", "status");
	json_array_foreach(json_object_get(rep, "nodes"), i, n)
	{
		const char *host = str(n, "host", "?");

		if (json_object_get(n, "error_code")) {
			add(&l, "%12s %4s  %-24s %-5s %9s %7s %9s %7s  %s: %s%s%s%s", host, "-",
			    "-", "-", "-", "-", "-", "-", str(n, "error_code", "?"),
			    str(n, "error", ""), json_object_get(n, "python") ? " (" : "",
			    str(n, "python", ""), json_object_get(n, "python") ? ")" : "");
			continue;
		}
		json_array_foreach(json_object_get(n, "gpus"), k, g)
		{
			gpu_row(&l, host, g);
		}
	}
	summary(&l, rep);
	*lines = l.v;
	return l.n;
}

void gpuburn_render_free(char **lines)
{
	if (!lines)
		return;
	for (size_t i = 0; lines[i]; i++)
		free(lines[i]);
	free(lines);
}

void gpuburn_print_text(const json_t *rep, FILE *f)
{
	char **lines;

	gpuburn_render_lines(rep, &lines);
	for (size_t i = 0; lines && lines[i]; i++)
		termtext_printf(f, "%s\n", lines[i]); /* node text: no terminal controls */
	gpuburn_render_free(lines);
}

void gpuburn_print_json(const json_t *rep, FILE *f)
{
	jsondoc_dumpf(rep, f, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
	fputc('\n', f);
}
