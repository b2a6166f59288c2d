/* SPDX-License-Identifier: MIT */
/*
 * hang_gpu.c - the ranks' GPU utilisation in the verdict of `clusterdoc
 * hang` (hang_gpu.h).
 */
#include "hang/hang_gpu.h"

#include "cd.h"
#include "hang/hang_analyze.h"
#include "hang/hang_rankset.h"

#include <stdio.h>
#include <string.h>

static const char *str(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "";
}

static long long num(const json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

/* The process of rank rk (by node and pid) in sample s; NULL when absent. */
static const json_t *proc_in(const json_t *s, const json_t *rk)
{
	size_t i, j;
	const json_t *nd, *p;

	json_array_foreach(json_object_get(s, "nodes"), i, nd)
	{
		if (strcmp(str(nd, "host"), str(rk, "node")) != 0)
			continue;
		json_array_foreach(json_object_get(json_object_get(nd, "result"), "processes"), j,
		                   p)
		{
			if (num(p, "pid") == num(rk, "pid"))
				return p;
		}
	}
	return NULL;
}

/* The rank's "gpu" over the samples; null when no sample had one. */
static json_t *rank_gpu(const json_t *samples, const json_t *rk)
{
	json_t *util = json_array(), *out = NULL;
	const json_t *s, *g = NULL;
	size_t i;

	json_array_foreach(samples, i, s)
	{
		const json_t *p = proc_in(s, rk), *pg = json_object_get(p, "gpu");

		if (!p)
			continue;
		json_array_append(util, json_is_object(pg) &&
		                                json_is_integer(json_object_get(pg, "util_gpu"))
		                            ? json_object_get(pg, "util_gpu")
		                            : json_null());
		if (json_is_object(pg))
			g = pg;
	}
	if (!g) {
		json_decref(util);
		return json_null();
	}
	out = json_pack("{sOsOsosO}", "index", json_object_get(g, "index"), "uuid",
	                json_object_get(g, "uuid") ? json_object_get(g, "uuid") : json_null(),
	                "util", util, "util_memory",
	                json_object_get(g, "util_memory") ? json_object_get(g, "util_memory")
	                                                  : json_null());
	return out;
}

enum load { LOAD_UNKNOWN, LOAD_IDLE, LOAD_BUSY, LOAD_BETWEEN };

static enum load gpu_load(const json_t *gpu)
{
	const json_t *u = json_object_get(gpu, "util"), *x;
	long long lo = 101, hi = -1;
	size_t i;

	json_array_foreach(u, i, x)
	{
		if (!json_is_integer(x))
			return LOAD_UNKNOWN;
		if (json_integer_value(x) < lo)
			lo = json_integer_value(x);
		if (json_integer_value(x) > hi)
			hi = json_integer_value(x);
	}
	if (hi < 0)
		return LOAD_UNKNOWN;
	if (hi <= HANG_GPU_IDLE_PCT)
		return LOAD_IDLE;
	return lo >= HANG_GPU_BUSY_PCT ? LOAD_BUSY : LOAD_BETWEEN;
}

/* "100 %, 98 %" of the samples. */
static void util_text(const json_t *gpu, char *out, size_t len)
{
	const json_t *x;
	size_t i, used = 0;

	out[0] = '\0';
	json_array_foreach(json_object_get(gpu, "util"), i, x)
	{
		if (used + 1 >= len)
			break;
		used += (size_t)snprintf(out + used, len - used, "%s%lld %%", i ? ", " : "",
		                         json_integer_value(x));
	}
}

static void activity_words(const json_t *rk, char *out, size_t len)
{
	const char *cls = str(rk, "activity"), *sys = str(rk, "syscall");

	if (!strcmp(cls, "running"))
		snprintf(out, len, "runs on a CPU");
	else if (!strcmp(cls, "sleep"))
		snprintf(out, len, "sleeps in %s", sys[0] ? sys : "a sleep");
	else if (!strcmp(cls, "wait"))
		snprintf(out, len, "waits in %s", sys[0] ? sys : "a system call");
	else
		snprintf(out, len, "is in %s", sys[0] ? sys : "no system call");
}

/* The suspect of rank k already named, or NULL. */
static json_t *suspect_of(json_t *suspects, long long k)
{
	size_t i;
	json_t *s;

	json_array_foreach(suspects, i, s)
	{
		if (num(s, "rank") == k)
			return s;
	}
	return NULL;
}

static void name(json_t *suspects, const json_t *rk, const char *evidence, const char *reason)
{
	json_t *s = suspect_of(suspects, num(rk, "rank"));

	if (s) {
		json_array_append_new(json_object_get(s, "evidence"), json_string(evidence));
		return;
	}
	json_array_append_new(
	    suspects, json_pack("{sOsOsOsss[s]}", "node", json_object_get(rk, "node"), "rank",
	                        json_object_get(rk, "rank"), "pid", json_object_get(rk, "pid"),
	                        "reason", reason, "evidence", evidence));
}

int hang_gpu_verdict(const json_t *samples, json_t *ranks, json_t *suspects)
{
	json_t *busy = json_array(), *idle = json_array(), *rk;
	size_t i, known = 0;
	int changed = 0;
	char busy_text[128];

	json_array_foreach(ranks, i, rk)
	{
		json_t *g = rank_gpu(samples, rk);
		enum load l =
		    json_is_true(json_object_get(rk, "gone")) ? LOAD_UNKNOWN : gpu_load(g);

		json_object_set_new(rk, "gpu", g);
		if (l == LOAD_UNKNOWN)
			continue;
		known++;
		if (l == LOAD_BUSY)
			json_array_append(busy, rk);
		else if (l == LOAD_IDLE)
			json_array_append(idle, rk);
	}
	if (known < 2 || !json_array_size(busy) || !json_array_size(idle))
		goto out;
	{
		json_t *nums = json_array(), *x;

		json_array_foreach(busy, i, x)
		    json_array_append_new(nums, json_integer(num(x, "rank")));
		hang_ranks_text(nums, busy_text, sizeof(busy_text));
		json_decref(nums);
	}
	if (json_array_size(busy) == 1 && json_array_size(idle) == known - 1) {
		const json_t *b = json_array_get(busy, 0), *gpu = json_object_get(b, "gpu");
		char util[96], ev[256], reason[640];

		util_text(gpu, util, sizeof(util));
		snprintf(ev, sizeof(ev), "GPU %lld at %s; the %zu other ranks' GPUs idle",
		         num(gpu, "index"), util, known - 1);
		snprintf(reason, sizeof(reason),
		         "rank %lld (%s, pid %lld) is the only rank whose GPU is busy (GPU %lld at "
		         "%s) while the others' GPUs are idle: a kernel there does not end (a "
		         "collective the others did not enter, or a loop in its own kernel)",
		         num(b, "rank"), str(b, "node"), num(b, "pid"), num(gpu, "index"), util);
		name(suspects, b, ev, reason);
		changed = 1;
		goto out;
	}
	json_array_foreach(idle, i, rk)
	{
		const json_t *gpu = json_object_get(rk, "gpu");
		char util[96], ev[512], reason[768], act[128];

		util_text(gpu, util, sizeof(util));
		activity_words(rk, act, sizeof(act));
		snprintf(ev, sizeof(ev), "GPU %lld at %s while the GPUs of ranks %s are busy",
		         num(gpu, "index"), util, busy_text);
		snprintf(
		    reason, sizeof(reason),
		    "rank %lld (%s, pid %lld) has its GPU %lld idle (%s) while %zu rank(s)' "
		    "GPUs are busy as NCCL's kernels are while they wait for a peer: it is not "
		    "in their collective; its main thread %s",
		    num(rk, "rank"), str(rk, "node"), num(rk, "pid"), num(gpu, "index"), util,
		    json_array_size(busy), act);
		name(suspects, rk, ev, reason);
		changed = 1;
	}
out:
	json_decref(busy);
	json_decref(idle);
	return changed;
}
