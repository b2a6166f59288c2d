/* SPDX-License-Identifier: MIT */
/*
 * hang_nccl.c - the NCCL RAS and Flight Recorder parts of the verdict (see
 * hang_nccl.h).
 */
#include "hang/hang_nccl.h"

#include "cd.h"
#include "hang/hang_analyze.h"
#include "hang/hang_rankset.h"
#include "hang/hang_fr.h"
#include "hang/hang_ras.h"

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

/*
 * Where a stuck communicator's first rank behind (else missing) runs: the
 * outlier NCCL names for it (its pid and node address) in the answer, then
 * the rank of the job with that pid, so that suspect s has the node, the
 * global rank and the pid; without a match, the communicator's rank and the
 * outlier's pid (0 when NCCL names none) stay.
 */
static void ras_where(json_t *s, const json_t *c, const json_t *answer, const json_t *ranks)
{
	const json_t *r = json_array_get(json_object_get(c, "behind"), 0), *comm, *o, *x;
	const json_t *out = NULL;
	size_t i, j;

	if (!r)
		r = json_array_get(json_object_get(c, "missing"), 0);
	if (!r)
		return;
	json_object_set_new(s, "rank", json_integer(json_integer_value(r)));
	json_array_foreach(json_object_get(answer, "communicators"), i, comm)
	{
		if (strcmp(str(comm, "hash"), str(c, "hash")) != 0)
			continue;
		json_array_foreach(json_object_get(comm, "outliers"), j, o)
		{
			if (json_integer_value(json_object_get(o, "rank")) == json_integer_value(r))
				out = o;
		}
	}
	if (!out || !json_integer_value(json_object_get(out, "pid")))
		return;
	json_object_set_new(s, "pid",
	                    json_integer(json_integer_value(json_object_get(out, "pid"))));
	if (str(out, "node")[0])
		json_object_set_new(s, "node", json_string(str(out, "node")));
	json_array_foreach(ranks, i, x)
	{
		if (json_integer_value(json_object_get(x, "pid")) ==
		    json_integer_value(json_object_get(out, "pid"))) {
			json_object_set_new(s, "node", json_string(str(x, "node")));
			json_object_set_new(
			    s, "rank",
			    json_integer(json_integer_value(json_object_get(x, "rank"))));
			break;
		}
	}
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
			ras_where(add_suspect(suspects, host, reason, json_pack("[O]", c)), c,
			          after, json_object_get(verdict, "ranks"));
		}
		json_array_append_new(out, json_pack("{ssso}", "host", host, "communicators", cmp));
	}
	json_object_set_new(verdict, "ras", out);
}

/* "at train_step (/srv/train.py:42)": the first frame of an entry's stack
 * that is not torch's own, else its first; "" without frames. */
static void fr_frame(const json_t *frames, char *out, size_t len)
{
	const json_t *f, *pick = json_array_get(frames, 0);
	size_t i;

	out[0] = '\0';
	json_array_foreach(frames, i, f)
	{
		if (!strstr(str(f, "filename"), "torch/")) {
			pick = f;
			break;
		}
	}
	if (pick)
		snprintf(out, len, "%s (%s:%lld)", str(pick, "name"), str(pick, "filename"),
		         (long long)json_integer_value(json_object_get(pick, "line")));
}

/* One suspect per Flight Recorder message, on the first rank it names
 * (missing, else not completed), with every such rank as evidence. */
static void fr_suspects(const json_t *an, json_t *suspects)
{
	const json_t *pg;
	size_t i, k = 0;

	json_array_foreach(json_object_get(an, "process_groups"), i, pg)
	{
		const json_t *ranks = json_object_get(pg, "missing"), *r;
		const char *msg;
		char reason[768], first[256] = "";
		json_t *evidence, *s;
		size_t j;

		if (!json_array_size(ranks))
			ranks = json_object_get(pg, "not_completed");
		if (!json_array_size(ranks))
			continue;
		msg = json_string_value(json_array_get(json_object_get(an, "messages"), k++));
		evidence = json_array();
		json_array_foreach(ranks, j, r)
		{
			char key[24], where[160], frame[256];
			const json_t *last;

			snprintf(key, sizeof(key), "%lld", (long long)json_integer_value(r));
			last = json_object_get(json_object_get(pg, "last"), key);
			fr_frame(json_object_get(last, "frames"), frame, sizeof(frame));
			snprintf(where, sizeof(where), "rank %s (%s, pid %lld)", key,
			         str(last, "node")[0] ? str(last, "node") : "?",
			         (long long)json_integer_value(json_object_get(last, "pid")));
			json_array_append_new(
			    evidence,
			    json_sprintf(
			        "%s: its last collective is %lld (%s), %s%s%s", where,
			        (long long)json_integer_value(json_object_get(last, "seq")),
			        str(last, "op"), str(last, "state"), frame[0] ? ", at " : "",
			        frame));
			if (!j)
				snprintf(
				    first, sizeof(first), "%s is at collective %lld (%s, %s)",
				    where,
				    (long long)json_integer_value(json_object_get(last, "seq")),
				    str(last, "op"), str(last, "state"));
		}
		snprintf(reason, sizeof(reason), "Flight Recorder: %s; %s", msg ? msg : "", first);
		r = json_array_get(ranks, 0);
		{
			char key[24];
			const json_t *last;

			snprintf(key, sizeof(key), "%lld", (long long)json_integer_value(r));
			last = json_object_get(json_object_get(pg, "last"), key);
			s = add_suspect(suspects, str(last, "node")[0] ? str(last, "node") : NULL,
			                reason, evidence);
			json_object_set_new(s, "rank", json_integer(json_integer_value(r)));
			json_object_set_new(
			    s, "pid",
			    json_integer(json_integer_value(json_object_get(last, "pid"))));
		}
	}
}

static void fr_part(const json_t *samples, json_t *verdict, json_t *suspects)
{
	const json_t *last = json_array_get(samples, json_array_size(samples) - 1);
	json_t *dumps[MAX_DUMPS], *errors = json_array(), *who = json_object(), *n, *d, *an, *pg;
	size_t nd = 0, i, j, asked = 0;

	json_array_foreach(json_object_get(last, "nodes"), i, n)
	{
		const json_t *fr = json_object_get(json_object_get(n, "result"), "flight_recorder");

		json_array_foreach(json_object_get(fr, "dumps"), j, d)
		{
			asked++;
			if (json_is_true(json_object_get(d, "ok")) && nd < MAX_DUMPS) {
				char key[24];

				dumps[nd++] = d;
				snprintf(key, sizeof(key), "%lld",
				         (long long)json_integer_value(json_object_get(d, "rank")));
				json_object_set_new(
				    who, key,
				    json_pack("{sssO}", "node", str(n, "host"), "pid",
				              json_object_get(d, "pid") ? json_object_get(d, "pid")
				                                        : json_null()));
			} else if (!json_is_true(json_object_get(d, "ok")))
				json_array_append_new(errors,
				                      json_pack("{sssOss}", "host", str(n, "host"),
				                                "rank", json_object_get(d, "rank"),
				                                "error", str(d, "error")));
		}
	}
	if (!asked) {
		json_decref(errors);
		json_decref(who);
		json_object_set_new(verdict, "flight_recorder", json_null());
		return;
	}
	an = nd ? hang_fr_analyze(dumps, nd) : json_object();
	json_object_set_new(an, "errors", errors);
	/* each rank's last collective says where the rank runs */
	json_array_foreach(json_object_get(an, "process_groups"), i, pg)
	{
		const char *rank;
		json_t *l;

		json_object_foreach(json_object_get(pg, "last"), rank, l)
		    json_object_update(l, json_object_get(who, rank));
	}
	json_decref(who);
	fr_suspects(an, suspects);
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
