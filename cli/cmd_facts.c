/* SPDX-License-Identifier: MIT */
/*
 * cmd_facts.c - `clusterdoc facts`: one row per node with what its agent
 * reports (OS, CPUs, memory, Python/torch, NCCL, GPUs, clock skew), or the
 * precise reason the node could not be reached. Exit 0 when every node
 * answered, 2 otherwise.
 */
#include "cd.h"
#include "jsondoc.h"
#include "termtext.h"
#include "command.h"
#include "commands.h"
#include "loop.h"
#include "progress.h"
#include "proto.h"
#include "targets.h"
#include "probes/facts_gpu_summary.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FACTS_JSON_VERSION 1

enum { OPT_PYTHON = OPT_TARGETS_END };

struct facts_run {
	struct targets t;
	const char *python; /* --python PATH, or NULL */
	struct loop *loop;
	struct sshpool *pool;
	struct sshpool_node **nodes;
	json_t **facts; /* per node, NULL until answered */
	char **errors;  /* per node message for a failed request */
	char **codes;   /* per node error code for a failed request */
	int64_t *skew_ms;
	size_t n, done;
	struct progress *progress; /* on a terminal: the line on stderr */
};

static int64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static size_t node_index(const struct sshpool_node *node)
{
	return (size_t)(uintptr_t)sshpool_node_data(node);
}

static void node_finished(struct facts_run *r)
{
	if (++r->done == r->n)
		loop_stop(r->loop);
	progress_poke(r->progress);
}

/* Where a node still waited for is, in the progress line's words. */
static const char *const waiting_at[] = {
    [SSHPOOL_NODE_QUEUED] = "queued",
    [SSHPOOL_NODE_CONFIG] = "reading its ssh settings",
    [SSHPOOL_NODE_CONNECTING] = "connecting",
    [SSHPOOL_NODE_AUTHENTICATING] = "authenticating",
    [SSHPOOL_NODE_STARTING] = "starting the agent",
    [SSHPOOL_NODE_READY] = "asked for its facts",
    [SSHPOOL_NODE_CLOSED] = "closed",
    [SSHPOOL_NODE_FAILED] = "failed",
};

/* The progress line: "connecting" while a node waited for has no agent yet,
 * then "facts"; the node waited for is the least advanced one. */
static void facts_sample(void *arg, struct progress_sample *s)
{
	struct facts_run *r = arg;
	enum sshpool_node_state least = SSHPOOL_NODE_CLOSED;

	if (r->done >= r->n)
		return;
	s->answered = r->done;
	s->total = r->n;
	for (size_t i = 0; i < r->n; i++) {
		enum sshpool_node_state st = sshpool_node_state(r->nodes[i]);

		if (r->facts[i] || r->errors[i] || st >= SSHPOOL_NODE_CLOSED || st >= least)
			continue;
		least = st;
		s->waiting = sshpool_node_host(r->nodes[i]);
		s->waiting_at = waiting_at[st];
	}
	s->phase = least < SSHPOOL_NODE_READY ? "connecting" : "facts";
}

static void on_facts(struct sshpool_node *node, json_t *result, const char *code, const char *msg,
                     void *arg)
{
	struct facts_run *r = arg;
	size_t i = node_index(node);
	json_t *wall;

	if (result) {
		r->facts[i] = json_incref(result);
		wall = json_object_get(result, "wall_clock_ms");
		/* The agent reads its clock last, just before answering: the
		 * error is the one-way transit time. */
		if (json_is_integer(wall))
			r->skew_ms[i] = json_integer_value(wall) - wall_ms();
		sshpool_close_node(node);
		node_finished(r);
	} else if (sshpool_node_state(node) != SSHPOOL_NODE_FAILED) {
		r->errors[i] = cd_asprintf("%s: %s", sshpool_node_host(node), msg ? msg : "failed");
		r->codes[i] = cd_strdup(code ? code : "agent");
		sshpool_close_node(node);
		node_finished(r);
	}
	/* A failed node is counted by on_failed. */
}

static void on_ready(struct sshpool *pool, struct sshpool_node *node, void *arg)
{
	struct facts_run *r = arg;
	json_t *req = proto_request(0, "facts");

	json_object_set_new(req, "python_timeout_ms",
	                    json_integer(r->t.pool.request_timeout_ms * 2 / 3));
	if (r->python)
		json_object_set_new(req, "python", json_string(r->python));
	sshpool_request(node, req, r->t.pool.request_timeout_ms, on_facts, r);
}

static void on_failed(struct sshpool *pool, struct sshpool_node *node, void *arg)
{
	node_finished(arg);
}

static const struct sshpool_handlers handlers = {.ready = on_ready, .failed = on_failed};

static const char *str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "-";
}

/* Why node i gave no facts: a failed request, or the node's own failure. */
static const char *node_error_text(const struct facts_run *r, size_t i)
{
	return r->errors[i] ? r->errors[i] : sshpool_node_error_message(r->nodes[i]);
}

/* What stopped node i, in the table's state column: only a node SSH could
 * not reach is UNREACHABLE; one whose agent failed or answered garbage was
 * reached. */
static const char *node_state_text(const struct facts_run *r, size_t i)
{
	const char *code = r->errors[i] ? r->codes[i] : sshpool_node_error_code(r->nodes[i]);

	if (code && strcmp(code, "request-timeout") == 0)
		return "NO ANSWER";
	if (r->errors[i])
		return "NO FACTS";
	if (code && strcmp(code, "ssh") != 0)
		return "AGENT FAILED";
	return "UNREACHABLE";
}

/* The RDMA column: "-" without ports; else the ACTIVE ports as "8x200G ib"
 * (count, rate, "ib" or "roce") when they share rate and link layer, "3 mixed"
 * when not, and " +1down" for ports that are not ACTIVE. */
static void rdma_word(json_t *f, char *out, size_t outlen)
{
	json_t *ports = json_object_get(f, "rdma"), *p, *first = NULL;
	size_t i, up = 0, down = 0, same = 1;
	char tail[32] = "";

	json_array_foreach(ports, i, p)
	{
		if (strcmp(str(p, "state"), "ACTIVE") != 0 ||
		    !json_is_number(json_object_get(p, "rate_gbps"))) {
			down++;
			continue;
		}
		if (first && (!json_equal(json_object_get(p, "rate_gbps"),
		                          json_object_get(first, "rate_gbps")) ||
		              !json_equal(json_object_get(p, "link_layer"),
		                          json_object_get(first, "link_layer"))))
			same = 0;
		first = first ? first : p;
		up++;
	}
	if (down)
		snprintf(tail, sizeof(tail), "%s+%zudown", up ? " " : "", down);
	if (!json_array_size(ports))
		snprintf(out, outlen, "-");
	else if (!up)
		snprintf(out, outlen, "%s", tail);
	else if (!same)
		snprintf(out, outlen, "%zu mixed%s", up, tail);
	else
		snprintf(out, outlen, "%zux%gG %s%s", up,
		         json_number_value(json_object_get(first, "rate_gbps")),
		         strcmp(str(first, "link_layer"), "InfiniBand") == 0 ? "ib" : "roce", tail);
}

static void print_table(struct facts_run *r)
{
	termtext_printf(stdout,
	                "%-16s %-14s %-20s %-22s %4s %8s %-8s %-10s %-7s %4s %-6s %-16s %7s\n",
	                "HOST", "HOSTNAME", "OS", "KERNEL", "CPUS", "MEM", "PYTHON", "TORCH",
	                "NCCL", "GPUS", "HEALTH", "RDMA", "SKEW");
	for (size_t i = 0; i < r->n; i++) {
		struct sshpool_node *node = r->nodes[i];
		json_t *f = r->facts[i], *torch, *nccl, *py;
		char mem[16], skew[16], health[8], rdma[96];

		if (!f) {
			const char *err = node_error_text(r, i);

			termtext_printf(stdout, "%-16s %-12s %s\n", sshpool_node_host(node),
			                node_state_text(r, i), err ? err : "no answer");
			continue;
		}
		snprintf(mem, sizeof(mem), "%.1fG",
		         (double)json_integer_value(json_object_get(f, "mem_total_bytes")) /
		             (1 << 30));
		snprintf(skew, sizeof(skew), "%+lldms", (long long)r->skew_ms[i]);
		rdma_word(f, rdma, sizeof(rdma));
		py = json_object_get(f, "python");
		torch = json_object_get(f, "torch");
		nccl = json_object_get(f, "nccl");
		termtext_printf(
		    stdout,
		    "%-16s %-14.14s %-20.20s %-22.22s %4lld %8s %-8s %-10s %-7s %4zu %-6s %-16s "
		    "%7s\n",
		    sshpool_node_host(node), str(f, "hostname"),
		    str(f, json_object_get(f, "os_short") ? "os_short" : "os"), str(f, "kernel"),
		    (long long)json_integer_value(json_object_get(f, "cpus")), mem,
		    str(py, "version"), str(torch, "version"), str(nccl, "version"),
		    json_array_size(json_object_get(f, "gpus")),
		    facts_gpu_health_word(f, health, sizeof(health)), rdma, skew);
	}
}

/* Under the table: where the agents found torch when the login python3 has
 * none, and the --python that would use it. */
static void print_python_hints(const struct facts_run *r)
{
	for (size_t i = 0; i < r->n; i++) {
		json_t *c = json_object_get(r->facts[i], "python_candidates"), *first;
		const char *py = json_string_value(
		    json_object_get(json_object_get(r->facts[i], "python"), "path"));

		if (!json_array_size(c))
			continue;
		first = json_array_get(c, 0);
		termtext_printf(
		    stdout, "%s: %s has no torch; torch is in %s (Python %s)%s: pass --python %s\n",
		    sshpool_node_host(r->nodes[i]), py ? py : "no python3", str(first, "path"),
		    str(first, "version"), json_array_size(c) > 1 ? " and others" : "",
		    str(first, "path"));
	}
}

/* Under the table: where agents run when that is worth knowing (a cache
 * shared by several nodes, a fallback directory), once per directory. */
static void print_agent_dirs(struct facts_run *r)
{
	for (size_t i = 0; i < r->n; i++) {
		const char *dir = sshpool_node_agent_dir(r->nodes[i]),
		           *note = sshpool_node_agent_note(r->nodes[i]);
		size_t shared = sshpool_node_agent_dir_shared(r->nodes[i]), j;

		if (note)
			termtext_printf(stdout, "%s: %s\n", sshpool_node_host(r->nodes[i]), note);
		if (!dir || shared < 2)
			continue;
		for (j = 0; j < i; j++)
			if (sshpool_node_agent_dir(r->nodes[j]) &&
			    strcmp(sshpool_node_agent_dir(r->nodes[j]), dir) == 0 &&
			    sshpool_node_agent_dir_shared(r->nodes[j]) == shared)
				break;
		if (j == i)
			termtext_printf(stdout, "agent cache %s: shared by %zu nodes\n", dir,
			                shared);
	}
}

static void print_json(struct facts_run *r)
{
	json_t *doc =
	    json_pack("{sisss[]}", "version", FACTS_JSON_VERSION, "command", "facts", "nodes");
	json_t *arr = json_object_get(doc, "nodes");

	for (size_t i = 0; i < r->n; i++) {
		struct sshpool_node *node = r->nodes[i];
		json_t *o = json_object();
		const char *err = node_error_text(r, i);
		const char *code;

		json_object_set_new(o, "host", json_string(sshpool_node_host(node)));
		json_object_set_new(o, "reachable", json_boolean(r->facts[i] != NULL));
		json_object_set_new(o, "error",
		                    r->facts[i] || !err ? json_null() : json_string(err));
		code = r->codes[i] ? r->codes[i] : sshpool_node_error_code(node);
		json_object_set_new(o, "error_code",
		                    r->facts[i] || !code ? json_null() : json_string(code));
		json_object_set_new(o, "transport", json_string(sshpool_node_transport(node)));
		json_object_set_new(o, "agent_uploaded", json_boolean(sshpool_node_uploaded(node)));
		json_object_set_new(o, "agent_dir",
		                    sshpool_node_agent_dir(node)
		                        ? json_string(sshpool_node_agent_dir(node))
		                        : json_null());
		json_object_set_new(o, "agent_dir_shared_by",
		                    json_integer((json_int_t)sshpool_node_agent_dir_shared(node)));
		json_object_set_new(o, "agent_note",
		                    sshpool_node_agent_note(node)
		                        ? json_string(sshpool_node_agent_note(node))
		                        : json_null());
		if (r->facts[i]) {
			json_object_update_missing(o, r->facts[i]);
			json_object_set_new(o, "clock_skew_ms", json_integer(r->skew_ms[i]));
		} else {
			json_object_set_new(o, "hostname", json_null());
		}
		json_array_append_new(arr, o);
	}
	jsondoc_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	putchar('\n');
	json_decref(doc);
}

static const struct optdef own_defs[] = {
    {"python", required_argument, OPT_PYTHON, "--python",
     "      --python PATH        the interpreter to ask about torch on every node (a\n"
     "                           conda env or venv; default: python3 in the login\n"
     "                           PATH, and where it has no torch, the usual conda\n"
     "                           and venv places are searched)\n"},
};

static int parse_own(void *ctx, int opt, const char *arg, const char *shown, char *err,
                     size_t errlen)
{
	if (opt != OPT_PYTHON)
		return cd_errf(err, errlen, CD_ERR_PARSE, "%s is not an option of facts", shown);
	((struct facts_run *)ctx)->python = arg;
	return 0;
}

static const struct optgroup own_group = {
    .defs = own_defs, .ndefs = CD_ARRAY_LEN(own_defs), .parse = parse_own};

static const struct command_opts opts[] = {
    {.g = &own_group},
    {0},
};

const struct command command_facts = {
    .name = "facts",
    .summary = "what every node is: OS, CPUs, Python, torch, NCCL, GPUs",
    .usage = "usage: clusterdoc facts -w HOSTLIST [options]\n"
             "Ask every node's agent for its facts: OS, kernel, CPUs, memory, clock, Python,\n"
             "torch, NCCL, GPUs and the NCCL_/GLOO_/MASTER_ variables of its login "
             "environment.\n"
             "Exit status: 0 when every node answered, 2 otherwise.\n\n"
             "Options:\n",
    .nodes = COMMAND_NODES,
    .targets = offsetof(struct facts_run, t),
    .opts = opts,
    .run = cmd_facts,
};

int cmd_facts(int argc, char **argv)
{
	struct facts_run r = {0};
	char err[CD_ERRLEN];
	int p, rc = 2, ok = 0;

	targets_init(&r.t);
	p = command_parse(&command_facts, &r, argc, argv, NULL);
	if (p != 0) {
		rc = p > 0 ? 0 : 2;
		goto out;
	}

	r.loop = loop_new();
	r.pool = sshpool_new(r.loop, &r.t.pool, err, sizeof(err));
	if (!r.pool) {
		termtext_printf(stderr, "clusterdoc facts: %s\n", err);
		goto out;
	}
	r.n = hostlist_count(r.t.hosts);
	r.nodes = cd_calloc(r.n, sizeof(*r.nodes));
	r.facts = cd_calloc(r.n, sizeof(*r.facts));
	r.errors = cd_calloc(r.n, sizeof(*r.errors));
	r.codes = cd_calloc(r.n, sizeof(*r.codes));
	r.skew_ms = cd_calloc(r.n, sizeof(*r.skew_ms));
	for (size_t i = 0; i < r.n; i++) {
		r.nodes[i] = sshpool_add(r.pool, r.t.hosts->names[i]);
		sshpool_node_set_data(r.nodes[i], (void *)(uintptr_t)i);
	}
	sshpool_start(r.pool, &handlers, &r);
	r.progress = progress_start(r.loop, "facts", facts_sample, &r);
	if (r.done < r.n)
		loop_run(r.loop);
	progress_end(r.progress);

	if (r.t.json)
		print_json(&r);
	else {
		print_table(&r);
		print_python_hints(&r);
		print_agent_dirs(&r);
	}
	for (size_t i = 0; i < r.n; i++)
		ok += r.facts[i] != NULL;
	if (!r.t.json && ok < (int)r.n)
		fprintf(stderr, "clusterdoc facts: %d of %zu nodes did not answer\n", (int)r.n - ok,
		        r.n);
	rc = ok == (int)r.n ? 0 : 2;
out:
	for (size_t i = 0; i < r.n; i++) {
		json_decref(r.facts[i]);
		free(r.errors[i]);
		free(r.codes[i]);
	}
	free(r.facts);
	free(r.errors);
	free(r.codes);
	free(r.skew_ms);
	free(r.nodes);
	sshpool_free(r.pool);
	loop_free(r.loop);
	targets_fini(&r.t);
	return rc;
}
