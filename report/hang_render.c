/* SPDX-License-Identifier: MIT */
/*
 * hang_render.c - the text and JSON reports of `clusterdoc hang`
 * (hang_render.h).
 */
#include "report/hang_render.h"
#include "jsondoc.h"
#include "termtext.h"
#include "hang/hang_analyze.h"
#include "hang/hang_rankset.h"

#include <string.h>

static const char *str(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "";
}

/* "  gpu 1 at 0 %" (the last sample's utilisation), or "" without NVML. */
static void gpu_words(const json_t *gpu, char *out, size_t len)
{
	const json_t *util = json_object_get(gpu, "util");
	const json_t *last = json_array_get(util, json_array_size(util) - 1);

	out[0] = '\0';
	if (!json_is_object(gpu))
		return;
	if (json_is_integer(last))
		snprintf(out, len, "  gpu %lld at %lld %%",
		         json_integer_value(json_object_get(gpu, "index")),
		         json_integer_value(last));
	else
		snprintf(out, len, "  gpu %lld", json_integer_value(json_object_get(gpu, "index")));
}

void hang_print_json(const json_t *v, FILE *f)
{
	jsondoc_dumpf(v, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', f);
}

/* NCCL RAS: one line per communicator of each node's comparison. */
static void print_ras(const json_t *v, FILE *f)
{
	const json_t *n, *c;
	size_t i, j;

	json_array_foreach(json_object_get(v, "ras"), i, n)
	{
		termtext_printf(f, "\nNCCL RAS (asked on %s):\n", str(n, "host"));
		if (str(n, "note")[0])
			termtext_printf(f, "  %s\n", str(n, "note"));
		else if (!json_array_size(json_object_get(n, "communicators")))
			fputs("  no communicator in the answer\n", f);
		json_array_foreach(json_object_get(n, "communicators"), j, c)
		{
			char behind[128], missing[128];

			hang_ranks_text(json_object_get(c, "behind"), behind, sizeof(behind));
			hang_ranks_text(json_object_get(c, "missing"), missing, sizeof(missing));
			termtext_printf(
			    f, "  communicator %s: %s, highest collective count %lld%s%s%s%s\n",
			    str(c, "hash"), str(c, "state"),
			    json_integer_value(json_object_get(c, "max_count")),
			    behind[0] ? "; ranks behind: " : "", behind,
			    missing[0] ? "; ranks missing: " : "", missing);
		}
	}
}

/* The Flight Recorder: per process group, the last collective each rank
 * entered, with its stack frames where the dump has them. */
static void print_fr(const json_t *v, FILE *f)
{
	const json_t *fr = json_object_get(v, "flight_recorder"), *pg, *l, *fm;
	const char *rank;
	size_t i, j;

	if (!json_is_object(fr))
		return;
	json_array_foreach(json_object_get(fr, "process_groups"), i, pg)
	{
		termtext_printf(f,
		                "\nFlight Recorder, pg %s: the last collective each rank entered "
		                "(the furthest: %lld, %s):\n",
		                str(pg, "pg"), json_integer_value(json_object_get(pg, "max_seq")),
		                str(pg, "op"));
		json_object_foreach(json_object_get(pg, "last"), rank, l)
		{
			termtext_printf(f, "  rank %s (%s, pid %lld): %lld %s, %s\n", rank,
			                str(l, "node")[0] ? str(l, "node") : "?",
			                json_integer_value(json_object_get(l, "pid")),
			                json_integer_value(json_object_get(l, "seq")), str(l, "op"),
			                str(l, "state"));
			json_array_foreach(json_object_get(l, "frames"), j, fm) termtext_printf(
			    f, "      %s (%s:%lld)\n", str(fm, "name"), str(fm, "filename"),
			    json_integer_value(json_object_get(fm, "line")));
		}
	}
	json_array_foreach(json_object_get(fr, "errors"), i, l) termtext_printf(
	    f, "\nFlight Recorder: no dump from rank %lld on %s: %s\n",
	    json_integer_value(json_object_get(l, "rank")), str(l, "host"), str(l, "error"));
}

void hang_print_text(const json_t *v, FILE *f)
{
	const json_t *sus = json_object_get(v, "suspects"), *x, *y;
	size_t i, j;
	int stackless = 0;

	termtext_printf(f, "clusterdoc hang: %s (%lld samples over %.1f s)\n", str(v, "summary"),
	                json_integer_value(json_object_get(v, "samples")),
	                json_integer_value(json_object_get(v, "elapsed_ms")) / 1000.0);
	if (json_array_size(sus)) {
		fputs("\nsuspects:\n", f);
		json_array_foreach(sus, i, x)
		{
			termtext_printf(f, "  %zu. %s\n", i + 1, str(x, "reason"));
			json_array_foreach(json_object_get(x, "evidence"), j, y)
			    termtext_printf(f, "     - %s\n", json_string_value(y));
		}
	}
	if (json_array_size(json_object_get(v, "groups"))) {
		fputs("\nranks, grouped by what they do:\n", f);
		json_array_foreach(json_object_get(v, "groups"), i, x)
		{
			size_t n = json_array_size(json_object_get(x, "ranks"));

			termtext_printf(f, "  %zu rank%s [%s]: %s\n", n, n == 1 ? "" : "s",
			                str(x, "ranks_text"), str(x, "what"));
		}
	}
	if (json_array_size(json_object_get(v, "ranks"))) {
		fputs("\nranks:\n", f);
		json_array_foreach(json_object_get(v, "ranks"), i, x)
		{
			char gpu[64];
			const char *st = str(x, "state");
			int stopped = !strcmp(st, "T") || !strcmp(st, "t");

			gpu_words(json_object_get(x, "gpu"), gpu, sizeof(gpu));
			termtext_printf(
			    f, "  rank %lld  %s pid %lld  %s%s %s  cpu +%lld ms%s%s%s%s\n",
			    json_integer_value(json_object_get(x, "rank")), str(x, "node"),
			    json_integer_value(json_object_get(x, "pid")),
			    stopped ? (st[0] == 'T' ? "STOPPED (state T), in "
			                            : "STOPPED by a tracer (state t), in ")
			            : "",
			    str(x, "activity"), str(x, "syscall"),
			    json_integer_value(json_object_get(x, "cpu_ms_delta")), gpu,
			    json_is_true(json_object_get(x, "gone")) ? "  GONE" : "",
			    str(x, "frame")[0] ? "  at " : "", str(x, "frame"));
			if (!json_is_string(json_object_get(x, "stacks")))
				stackless = 1;
		}
	}
	print_ras(v, f);
	print_fr(v, f);
	json_array_foreach(json_object_get(v, "nodes"), i, x)
	{
		if (json_is_string(json_object_get(x, "error")))
			termtext_printf(f, "\n%s: not inspected: %s\n", str(x, "host"),
			                str(x, "error"));
		json_array_foreach(json_object_get(x, "denied"), j, y) termtext_printf(
		    f,
		    "\n%s: pid %lld (%s, user %s) looks like a torch process but is not "
		    "readable: %s\n",
		    str(x, "host"), json_integer_value(json_object_get(y, "pid")), str(y, "comm"),
		    str(y, "user"), str(y, "need"));
	}
	/* "no job found: searched ..." says it already */
	if (!strcmp(str(v, "status"), "not_inspected") && str(v, "searched")[0] &&
	    !strstr(str(v, "summary"), str(v, "searched")))
		termtext_printf(f, "\nsearched: %s\n", str(v, "searched"));
	if (stackless && strcmp(str(v, "status"), "hung") == 0)
		fputs("\nno Python stacks for some ranks: start the job with `clusterdoc run` (its "
		      "ranks "
		      "dump their stacks on SIGUSR2), or install py-spy on the nodes\n",
		      f);
}
