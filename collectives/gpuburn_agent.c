/* SPDX-License-Identifier: MIT */
/*
 * gpuburn_agent.c - the gpu_burn request (gpuburn_agent.h): the embedded
 * script through the node's torch, one child on a private loop under the
 * request's deadline.
 */
#include "collectives/gpuburn_agent.h"
#include "cd.h"
#include "childrun.h"
#include "loop.h"
#include "probes/facts_pyfind.h"
#include "proto.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_t *gpuburn_parse_output(const char *out, size_t len, const char *missing)
{
	json_t *head = NULL, *byidx[GPUBURN_MAX_GPUS] = {0}, *gpus;
	size_t at = 0;
	long long count;

	while (at < len) {
		const char *nl = memchr(out + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (out + at)) : len - at;
		json_t *v = json_loadb(out + at, n, JSON_REJECT_DUPLICATES, NULL), *g;
		long long i;

		at += n + 1;
		if (!json_is_object(v)) {
			json_decref(v);
			continue;
		}
		g = json_object_get(v, "gpu");
		if (!head && !g && !json_object_get(v, "done")) {
			head = v;
			continue;
		}
		i = json_is_object(g) ? json_integer_value(json_object_get(g, "index")) : -1;
		if (head && json_is_integer(json_object_get(g, "index")) && i >= 0 &&
		    i < GPUBURN_MAX_GPUS && !byidx[i])
			byidx[i] = json_incref(g);
		json_decref(v);
	}
	if (!head)
		goto out;
	if (json_object_get(head, "error_code") || json_object_get(head, "gpus"))
		goto out;
	count = json_integer_value(json_object_get(head, "count"));
	if (count > GPUBURN_MAX_GPUS)
		count = GPUBURN_MAX_GPUS;
	gpus = json_array();
	for (long long i = 0; i < count; i++)
		json_array_append_new(
		    gpus, byidx[i] ? json_incref(byidx[i])
		                   : json_pack("{sIss}", "index", (json_int_t)i, "error", missing));
	json_object_set_new(head, "gpus", gpus);
out:
	for (size_t i = 0; i < GPUBURN_MAX_GPUS; i++)
		json_decref(byidx[i]);
	return head;
}

/* One run of the script: what it said, read once the child has ended. */
struct burn_run {
	char *out;
	size_t out_len;
	char err_line[512]; /* stderr's last non-empty line */
	int rc, spawned;    /* childrun's rc; 0 when the program could not be run */
};

static void last_line(const struct buf *b, char *dst, size_t cap)
{
	size_t end = b->len, start;

	while (end > 0 && (b->data[end - 1] == '\n' || b->data[end - 1] == ' '))
		end--;
	start = end;
	while (start > 0 && b->data[start - 1] != '\n')
		start--;
	snprintf(dst, cap, "%.*s", (int)(end - start), b->data + start);
}

static void on_done(const struct childrun_result *r, void *arg)
{
	struct burn_run *b = arg;

	b->rc = r->rc;
	b->spawned = !r->spawn_errno;
	b->out = cd_malloc(r->out->len + 1);
	memcpy(b->out, r->out->data, r->out->len);
	b->out_len = r->out->len;
	last_line(r->err, b->err_line, sizeof(b->err_line));
	if (r->rc < 0 && !b->err_line[0])
		snprintf(b->err_line, sizeof(b->err_line), "%s", r->error);
}

/* Run the script with python for seconds, until deadline (cd_now_ms). */
static void run_script(const char *python, double seconds, int64_t deadline, struct burn_run *b)
{
	char secs[32], err[CD_ERRLEN];
	char *argv[] = {(char *)python, "-", "--seconds", secs, NULL};
	int64_t left = deadline - cd_now_ms();
	struct childrun_opts o = {
	    .timeout_ms = left > 1000 ? (int)left : 1000,
	    .out_max = GPUBURN_OUT_MAX,
	    .err_max = 4096,
	    .out_cap = CHILDRUN_CAP_FAIL,
	    .err_cap = CHILDRUN_CAP_TAIL,
	    .start = {.own_group = 1},
	    .in = gpuburn_py,
	    .inlen = gpuburn_py_len,
	};
	struct loop *loop = loop_new();

	*b = (struct burn_run){.rc = CD_ERR_IO};
	snprintf(secs, sizeof(secs), "%g", seconds);
	if (!childrun_start_opts(loop, argv, &o, on_done, b, err, sizeof(err)))
		snprintf(b->err_line, sizeof(b->err_line), "%s", err);
	else
		loop_run(loop);
	loop_free(loop);
}

/* What one interpreter answered: a result object (new), never NULL. */
static json_t *try_python(const char *python, double seconds, int64_t deadline)
{
	struct burn_run b;
	char missing[160];
	json_t *res;

	run_script(python, seconds, deadline, &b);
	snprintf(missing, sizeof(missing),
	         "no result before the request's deadline (the GPU hangs or fell off the bus); "
	         "the script was killed");
	res = b.out ? gpuburn_parse_output(b.out, b.out_len, missing) : NULL;
	free(b.out);
	if (res)
		return res;
	if (!b.spawned)
		return json_pack("{ssssss}", "python", python, "error_code", "no-python", "error",
		                 b.err_line[0] ? b.err_line : "cannot run the interpreter");
	if (b.rc == CD_ERR_TIMEOUT)
		return json_pack("{ssssss}", "python", python, "error_code", "timeout", "error",
		                 "the script said nothing before the deadline (importing torch "
		                 "or starting CUDA hung)");
	return json_pack("{ssssss}", "python", python, "error_code", "script-failed", "error",
	                 b.err_line[0] ? b.err_line : "it ended without a word");
}

static int is_code(json_t *res, const char *code)
{
	const char *c = json_string_value(json_object_get(res, "error_code"));

	return c && strcmp(c, code) == 0;
}

json_t *gpuburn_agent_run(json_t *req, const char **code, char *msg, size_t msglen)
{
	json_t *js = json_object_get(req, "seconds"), *py = json_object_get(req, "python"), *res;
	double seconds = json_is_number(js) ? json_number_value(js) : NAN;
	long long slack = GPUBURN_SLACK_MS;
	int64_t deadline;
	char **cands = NULL;

	if (!(seconds >= GPUBURN_SECS_MIN && seconds <= GPUBURN_SECS_MAX))
		return proto_handler_fail(code, "bad-request", msg, msglen,
		                          "\"seconds\" must be a number from %g to %g",
		                          GPUBURN_SECS_MIN, GPUBURN_SECS_MAX);
	if (py && !json_is_null(py) && (!json_is_string(py) || !*json_string_value(py)))
		return proto_handler_fail(code, "bad-request", msg, msglen,
		                          "\"python\" must be a path");
	if (proto_field_int(req, "slack_ms", 1000, 600000, &slack) < 0)
		return proto_handler_fail(code, "bad-request", msg, msglen,
		                          "\"slack_ms\" must be 1000 to 600000");
	deadline = cd_now_ms() + (int64_t)(seconds * 1000) + slack;
	if (json_is_string(py))
		return try_python(json_string_value(py), seconds, deadline);
	res = try_python("python3", seconds, deadline);
	if (!is_code(res, "no-torch") && !is_code(res, "no-python"))
		return res;
	/* facts' places: the first interpreter there that has torch */
	facts_pyfind_candidates(getenv("HOME"), getenv("CONDA_PREFIX"), &cands);
	for (size_t i = 0; cands && cands[i] && cd_now_ms() < deadline; i++) {
		json_t *r = try_python(cands[i], seconds, deadline);

		if (is_code(r, "no-torch") || is_code(r, "no-python")) {
			json_decref(r);
			continue;
		}
		json_decref(res);
		res = r;
		break;
	}
	facts_pyfind_free(cands);
	return res;
}
