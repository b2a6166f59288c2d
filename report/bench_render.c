/* SPDX-License-Identifier: MIT */
/* bench_render.c - the text and JSON renderings of a bench run (see bench_render.h). */
#include "bench_render.h"
#include "jsondoc.h"
#include "termtext.h"

#include "cd.h"
#include "collectives/bench_agent.h"

#include <stdio.h>
#include <string.h>

static void print_nodes(const struct bench_report *rep, int pairs)
{
	for (size_t i = 0; i < rep->nnodes; i++) {
		const struct bench_node *n = &rep->nodes[i];

		if (n->error[0])
			termtext_printf(stdout, "#  %-12s NOT IN THE RUN: %s\n", n->host, n->error);
		else if (pairs) /* a node's rank is 0 or 1 of each pair it is in */
			termtext_printf(stdout, "#  %-12s %s %s  (%s)\n", n->host, n->ifname,
			                n->addr, n->addr_rule);
		else if (n->nranks == 1)
			termtext_printf(stdout, "#  %-12s rank %d  %s %s  (%s)\n", n->host,
			                n->first_rank, n->ifname, n->addr, n->addr_rule);
		else if (n->nranks > 1)
			termtext_printf(stdout, "#  %-12s ranks %d-%d  %s %s  (%s)\n", n->host,
			                n->first_rank, n->first_rank + n->nranks - 1, n->ifname,
			                n->addr, n->addr_rule);
	}
}

/* nccl-tests' columns (out-of-place only). */
static void print_table(const struct bench_report *rep, const struct bench_opts *o)
{
	long long wrong = 0;

	termtext_printf(stdout, "#\n#%12s %13s %9s %7s %7s %10s %8s %8s %6s\n", "size", "count",
	                "type", "redop", "root", "time", "algbw", "busbw", "#wrong");
	termtext_printf(stdout, "#%12s %13s %9s %7s %7s %10s %8s %8s %6s\n", "(B)", "(elements)",
	                "", "", "", "(us)", "(GB/s)", "(GB/s)", "");
	for (size_t s = 0; s < rep->nsizes; s++) {
		const struct bench_size *z = &rep->sizes[s];
		char w[24];

		if (z->wrong < 0)
			snprintf(w, sizeof(w), "N/A");
		else
			snprintf(w, sizeof(w), "%lld", z->wrong);
		termtext_printf(stdout, " %12zu %13zu %9s %7s %7d %10.2f %8.2f %8.2f %6s\n",
		                z->bytes, z->count, coll_dtype_name(o->dtype), "sum", -1,
		                z->time_us, z->algbw, z->busbw, w);
		wrong += z->wrong > 0 ? z->wrong : 0;
	}
	if (rep->stop.bytes)
		termtext_printf(stdout, " %12zu %13zu %9s %7s %7d %s on %s\n", rep->stop.bytes,
		                rep->stop.count, coll_dtype_name(o->dtype), "sum", -1,
		                rep->stop.state, rep->nodes[rep->stop.node].host);
	/* "0 OK" only for a sweep that ran to its end: a run that stopped did
	 * not check the sizes it never reached. */
	if (rep->nsizes < rep->nsizes_planned)
		termtext_printf(stdout, "# Out of bounds values : %lld in %zu of %zu sizes, %s\n",
		                wrong, rep->nsizes, rep->nsizes_planned,
		                wrong ? "FAILED" : "INCOMPLETE");
	else
		termtext_printf(stdout, "# Out of bounds values : %lld %s\n", wrong,
		                wrong ? "FAILED" : "OK");
	termtext_printf(stdout, "# Avg bus bandwidth    : %g \n", rep->avg_busbw);
}

static void print_links(const struct bench_report *rep, const struct bench_opts *o)
{
	termtext_printf(stdout, "#\n# pairwise: %zu link(s), %zu bytes each\n", rep->nlinks,
	                o->max_bytes);
	termtext_printf(stdout, "#%-32s %12s %12s\n", " link", "busbw(GB/s)", "time(us)");
	for (size_t k = 0; k < rep->nlinks; k++) {
		const struct bench_link *l = &rep->links[k];
		char name[300];

		snprintf(name, sizeof(name), "%s <-> %s", rep->nodes[l->a].host,
		         rep->nodes[l->b].host);
		if (l->failed)
			termtext_printf(stdout, "  %-31s FAILED: %s\n", name, l->error);
		else
			termtext_printf(stdout, "  %-31s %12.2f %12.1f%s\n", name, l->busbw,
			                l->time_us, l->slow ? "  SLOW" : "");
	}
	if (rep->slow_nodes[0])
		termtext_printf(stdout, "# slow nodes: %s\n", rep->slow_nodes);
}

/* A node's NCCL variables (bench.h's nccl_env): "NCCL_IB_HCA==mlx5_0
 * NCCL_IB_GID_INDEX=3 (the check's plan); NCCL_IB_DISABLE=0 (environment)",
 * grouped by source in their order; "none" when there is none. */
static void env_words(const json_t *env, char *buf, size_t len)
{
	const char *last = NULL;
	size_t k;
	json_t *v;

	buf[0] = '\0';
	json_array_foreach(json_object_get(env, "vars"), k, v)
	{
		const char *source = json_string_value(json_object_get(v, "source"));

		if (last && strcmp(last, source) != 0)
			cd_appendf(buf, len, " (%s);",
			           strcmp(last, "plan") == 0 ? "the check's plan" : last);
		cd_appendf(buf, len, " %s=%s", json_string_value(json_object_get(v, "name")),
		           json_string_value(json_object_get(v, "value")));
		last = source;
	}
	if (last)
		cd_appendf(buf, len, " (%s)",
		           strcmp(last, "plan") == 0 ? "the check's plan" : last);
	else
		cd_appendf(buf, len, " none (the login sets none)");
}

/* What NCCL ran with on each node: the check's plan's variables, or the
 * login's (nccl backend). */
static void print_envs(const struct bench_report *rep)
{
	char line[2048];
	int any = 0, planned = 0;

	for (size_t i = 0; i < rep->nnodes; i++)
		planned |=
		    rep->nodes[i].nccl_env &&
		    strcmp(json_string_value(json_object_get(rep->nodes[i].nccl_env, "from")),
		           "plan") == 0;
	for (size_t i = 0; i < rep->nnodes; i++) {
		const json_t *env = rep->nodes[i].nccl_env;

		if (!env)
			continue;
		if (!any++)
			termtext_printf(stdout, "#\n# NCCL's variables (%s):\n",
			                planned ? "the check's plan's, set over the login's"
			                        : "each node's login: no check's plan");
		env_words(env, line, sizeof(line));
		termtext_printf(stdout, "#  %s:%s\n", rep->nodes[i].host, line);
	}
}

/* After the table: what NCCL said of its network on each node, against the
 * prediction (nccl backend). */
static void print_networks(const struct bench_report *rep)
{
	char line[2048];
	int any = 0;

	print_envs(rep);
	for (size_t i = 0; i < rep->nnodes; i++) {
		if (!rep->nodes[i].net)
			continue;
		if (!any++)
			termtext_printf(stdout,
			                "#\n# NCCL's network (its NCCL_DEBUG=INFO lines):\n");
		bench_net_line(rep->nodes[i].net, rep->nodes[i].host, line, sizeof(line));
		termtext_printf(stdout, "#  %s\n", line);
	}
}

void bench_print_failures(const struct bench_report *rep)
{
	for (size_t k = 0; k < rep->nfailures; k++) {
		const struct bench_failure *f = &rep->failures[k];

		if (f->rank >= 0)
			termtext_printf(stderr, "clusterdoc bench: rank %d (%s) %s: %s\n", f->rank,
			                rep->nodes[f->node].host, f->kind, f->message);
		else
			termtext_printf(stderr, "clusterdoc bench: %s %s: %s\n",
			                rep->nodes[f->node].host, f->kind, f->message);
	}
}

json_t *bench_report_json(const struct bench_report *rep, const struct bench_opts *o)
{
	json_t *nodes = json_array(), *sizes = json_array(), *fails = json_array();
	json_t *links = json_array(), *j;

	for (size_t i = 0; i < rep->nnodes; i++) {
		const struct bench_node *n = &rep->nodes[i];

		j = json_pack("{ss sb}", "host", n->host, "in_run", n->nranks > 0 && !n->error[0]);
		if (n->error[0]) {
			json_object_set_new(j, "error", json_string(n->error));
			json_object_set_new(j, "error_code", json_string(n->error_code));
		} else {
			json_object_set_new(j, "iface", json_string(n->ifname));
			json_object_set_new(j, "address", json_string(n->addr));
			json_object_set_new(j, "address_rule", json_string(n->addr_rule));
			json_object_set_new(j, "first_rank", json_integer(n->first_rank));
			json_object_set_new(j, "ranks", json_integer(n->nranks));
		}
		json_object_set_new(
		    j, "nccl",
		    n->nccl_available
		        ? json_pack("{sbsiss}", "available", 1, "gpus", n->gpus, "version",
		                    n->nccl_version)
		        : json_pack("{sbss}", "available", 0, "reason", n->nccl_reason));
		if (n->nccl_env)
			json_object_set(j, "nccl_env", n->nccl_env);
		if (n->net)
			json_object_set_new(j, "network", bench_net_json(n->net));
		json_array_append_new(nodes, j);
	}
	for (size_t s = 0; s < rep->nsizes; s++) {
		const struct bench_size *z = &rep->sizes[s];

		json_array_append_new(
		    sizes, json_pack("{sIsIsssssfsfsfsI}", "bytes", (json_int_t)z->bytes, "count",
		                     (json_int_t)z->count, "type", coll_dtype_name(o->dtype),
		                     "redop", "sum", "time_us", z->time_us, "algbw_gbps", z->algbw,
		                     "busbw_gbps", z->busbw, "wrong", (json_int_t)z->wrong));
	}
	for (size_t k = 0; k < rep->nfailures; k++) {
		const struct bench_failure *f = &rep->failures[k];

		json_array_append_new(fails,
		                      json_pack("{sisssssisIss}", "rank", f->rank, "node",
		                                rep->nodes[f->node].host, "kind", f->kind,
		                                "peer_rank", f->peer_rank, "bytes",
		                                (json_int_t)f->bytes, "message", f->message));
	}
	for (size_t k = 0; k < rep->nlinks; k++) {
		const struct bench_link *l = &rep->links[k];

		j = json_pack("{ssss}", "a", rep->nodes[l->a].host, "b", rep->nodes[l->b].host);
		if (l->failed)
			json_object_set_new(j, "error", json_string(l->error));
		else {
			json_object_set_new(j, "busbw_gbps", json_real(l->busbw));
			json_object_set_new(j, "time_us", json_real(l->time_us));
			json_object_set_new(j, "slow", json_boolean(l->slow));
		}
		json_array_append_new(links, j);
	}
	j = json_pack("{sisssssisosososfsssI}", "version", 1, "command", "bench", "backend",
	              bench_backend_name(rep->backend), "nranks", rep->nranks, "nodes", nodes,
	              "results", sizes, "failures", fails, "avg_busbw_gbps", rep->avg_busbw,
	              "slow_nodes", rep->slow_nodes, "elapsed_ms", (json_int_t)rep->elapsed_ms);
	if (rep->backend_note[0])
		json_object_set_new(j, "backend_note", json_string(rep->backend_note));
	if (!o->pairs) {
		json_object_set_new(j, "sizes_planned",
		                    json_integer((json_int_t)rep->nsizes_planned));
		json_object_set_new(
		    j, "complete",
		    json_boolean(rep->nsizes == rep->nsizes_planned && !rep->stop.bytes));
	}
	if (rep->stop.bytes)
		json_object_set_new(
		    j, "stopped",
		    json_pack("{sIsIsssssssI}", "bytes", (json_int_t)rep->stop.bytes, "count",
		              (json_int_t)rep->stop.count, "state", rep->stop.state, "node",
		              rep->nodes[rep->stop.node].host, "message", rep->stop.message,
		              "sizes_done", (json_int_t)rep->nsizes));
	if (o->pairs)
		json_object_set_new(j, "links", links);
	else
		json_decref(links);
	return j;
}

void bench_print_json(const struct bench_report *rep, const struct bench_opts *o)
{
	json_t *j = bench_report_json(rep, o);

	jsondoc_dumpf(j, stdout, JSON_INDENT(2));
	putchar('\n');
	json_decref(j);
}

void bench_print_text(const struct bench_report *rep, const struct bench_opts *o)
{
	if (o->pairs)
		termtext_printf(
		    stdout,
		    "# clusterdoc bench --pairs: %s backend, %zu node(s), 2 ranks a pair, %s "
		    "sum, iters %d, warmup %d\n",
		    bench_backend_name(rep->backend), rep->nnodes, coll_dtype_name(o->dtype),
		    o->iters, o->warmup);
	else
		termtext_printf(
		    stdout,
		    "# clusterdoc bench: %s backend, %d rank(s), %s sum, iters %d, warmup %d\n",
		    bench_backend_name(rep->backend), rep->nranks, coll_dtype_name(o->dtype),
		    o->iters, o->warmup);
	if (rep->backend_note[0])
		termtext_printf(stdout, "# %s\n", rep->backend_note);
	print_nodes(rep, o->pairs);
	if (o->pairs)
		print_links(rep, o);
	else
		print_table(rep, o);
	print_networks(rep);
}
