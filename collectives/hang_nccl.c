/*
 * hang_nccl.c - the NCCL RAS and Flight Recorder parts of the verdict (see
 * hang_nccl.h).
 */
#include "collectives/hang_nccl.h"

#include "cd.h"
#include "collectives/hang_analyze.h"
#include "collectives/hang_fr.h"
#include "collectives/hang_ras.h"

#include <stdio.h>
#include <string.h>

#define MAX_DUMPS 4096

static const char *str(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "";
}

static json_t *add_suspect(json_t *suspects, const char *node, const char *reason, json_t *evidence)
{
	json_t *s =
	    json_pack("{sosIsIssso}", "node", node ? json_string(node) : json_null(), "rank",
	              (json_int_t)-1, "pid", (json_int_t)0, "reason", reason, "evidence", evidence);

	json_array_append_new(suspects, s);
	return s;
}

/* The node's answer in a sample, by host; NULL when none. */
static const json_t *node_result(const json_t *sample, const char *host)
{
	size_t i;
	const json_t *n;

	json_array_foreach(json_object_get(sample, "nodes"), i, n)
	{
		if (strcmp(str(n, "host"), host) == 0)
			return json_object_get(n, "result");
	}
	return NULL;
}

static void ras_part(const json_t *samples, json_t *verdict, json_t *suspects)
{
	const json_t *first = json_array_get(samples, 0);
	const json_t *last = json_array_get(samples, json_array_size(samples) - 1);
	json_t *out = json_array(), *n;
	size_t i;

	json_array_foreach(json_object_get(last, "nodes"), i, n)
	{
		const char *host = str(n, "host");
		const json_t *after = json_object_get(json_object_get(n, "result"), "ras");
		const json_t *before = json_object_get(node_result(first, host), "ras");
		json_t *cmp, *c;
		size_t j;

		if (!json_is_object(after))
			continue;
		if (first == last || !json_is_object(before)) {
			json_array_append_new(
			    out, json_pack("{sss[]ss}", "host", host, "communicators", "note",
			                   "one RAS answer only: nothing to compare"));
			continue;
		}
		cmp = hang_ras_compare(before, after);
		json_array_foreach(cmp, j, c)
		{
			char reason[512], behind[256] = "", missing[256] = "";

			if (strcmp(str(c, "state"), "stuck") != 0)
				continue;
			hang_ranks_text(json_object_get(c, "behind"), behind, sizeof(behind));
			hang_ranks_text(json_object_get(c, "missing"), missing, sizeof(missing));
			snprintf(reason, sizeof(reason),
			         "NCCL communicator %s is stuck (RAS, asked on %s): its collective "
			         "counts did not move between samples%s%s%s%s",
			         str(c, "hash"), host, behind[0] ? "; ranks behind: " : "", behind,
			         missing[0] ? "; ranks missing: " : "", missing);
			add_suspect(suspects, host, reason, json_pack("[O]", c));
		}
		json_array_append_new(out, json_pack("{ssso}", "host", host, "communicators", cmp));
	}
	json_object_set_new(verdict, "ras", out);
}

static void fr_part(const json_t *samples, json_t *verdict, json_t *suspects)
{
	const json_t *last = json_array_get(samples, json_array_size(samples) - 1);
	json_t *dumps[MAX_DUMPS], *errors = json_array(), *n, *d, *an, *m;
	size_t nd = 0, i, j, asked = 0;

	json_array_foreach(json_object_get(last, "nodes"), i, n)
	{
		const json_t *fr = json_object_get(json_object_get(n, "result"), "flight_recorder");

		json_array_foreach(json_object_get(fr, "dumps"), j, d)
		{
			asked++;
			if (json_is_true(json_object_get(d, "ok")) && nd < MAX_DUMPS)
				dumps[nd++] = d;
			else if (!json_is_true(json_object_get(d, "ok")))
				json_array_append_new(errors,
				                      json_pack("{sssOss}", "host", str(n, "host"),
				                                "rank", json_object_get(d, "rank"),
				                                "error", str(d, "error")));
		}
	}
	if (!asked) {
		json_decref(errors);
		json_object_set_new(verdict, "flight_recorder", json_null());
		return;
	}
	an = nd ? hang_fr_analyze(dumps, nd) : json_object();
	json_object_set_new(an, "errors", errors);
	json_array_foreach(json_object_get(an, "messages"), i, m)
	{
		char reason[512];

		snprintf(reason, sizeof(reason), "Flight Recorder: %s", json_string_value(m));
		add_suspect(suspects, NULL, reason, json_array());
	}
	json_object_set_new(verdict, "flight_recorder", an);
}

void hang_nccl_verdict(const json_t *samples, json_t *verdict)
{
	json_t *suspects = json_object_get(verdict, "suspects");
	size_t before = json_array_size(suspects);

	if (!json_array_size(samples) || !suspects)
		return;
	ras_part(samples, verdict, suspects);
	fr_part(samples, verdict, suspects);
	if (json_array_size(suspects) > before &&
	    strcmp(str(verdict, "status"), "progressing") == 0) {
		char summary[128];

		snprintf(summary, sizeof(summary), "hung: %zu suspect(s) among %zu ranks",
		         json_array_size(suspects),
		         json_array_size(json_object_get(verdict, "ranks")));
		json_object_set_new(verdict, "status", json_string("hung"));
		json_object_set_new(verdict, "exit", json_integer(1));
		json_object_set_new(verdict, "summary", json_string(summary));
	}
}
