/* SPDX-License-Identifier: MIT */
/*
 * hang_analyze.c - the verdict of `clusterdoc hang` (hang_analyze.h): ranks
 * matched across samples, connections matched across nodes, suspects first.
 */
#include "hang/hang_analyze.h"
#include "hang/hang_rankset.h"
#include "hang/hang_gpu.h"
#include "hang/hang_nccl.h"
#include "cd.h"
#include "hostlist.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RANKS 4096
#define WHERE_LEN 96

struct rank {
	long rank;
	const char *node;
	json_t *first, *last; /* the process in the first sample it is in, in the last sample */
	int seen;
};

static const char *str(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "";
}

static long long num(const json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

/* The innermost frame of the main thread's Python stack ("load_batch
 * (train.py:42)"), or "": faulthandler's "Current thread" block first. */
static void stack_frame(const char *stacks, char *out, size_t outlen)
{
	const char *p = stacks ? strstr(stacks, "Current thread") : NULL, *f, *end, *in;

	out[0] = '\0';
	if (!stacks)
		return;
	if (!p)
		p = stacks;
	f = strstr(p, "File \"");
	if (!f)
		return;
	end = strchr(f, '\n');
	if (!end)
		end = f + strlen(f);
	in = strstr(f, " in ");
	if (in && in < end)
		snprintf(out, outlen, "%.*s (%.*s)", (int)(end - in - 4), in + 4, (int)(in - f), f);
	else
		snprintf(out, outlen, "%.*s", (int)(end - f), f);
}

static struct rank *rank_get(struct rank *r, size_t *n, long rank)
{
	for (size_t i = 0; i < *n; i++) {
		if (r[i].rank == rank)
			return &r[i];
	}
	if (*n >= MAX_RANKS)
		return NULL;
	r[*n] = (struct rank){.rank = rank};
	return &r[(*n)++];
}

/* The rank (and node) holding the other end of a connection in sample s. */
static long peer_of(const json_t *sample, const char *local, const char *remote, const char **node)
{
	size_t i, j, k;
	json_t *nd, *p, *s;

	json_array_foreach(json_object_get(sample, "nodes"), i, nd){
	    json_array_foreach(json_object_get(json_object_get(nd, "result"), "processes"), j,
	                       p){json_array_foreach(json_object_get(p, "sockets"), k, s){
	        if (!strcmp(str(s, "local"), remote) &&
	            !strcmp(str(s, "remote"), local)){ *node = str(nd, "host");
	return strcmp(str(p, "role"), "rank") == 0 ? (long)num(p, "rank") : -2;
}
}
}
}
*node = NULL;
return -1;
}

static const json_t *socket_find(const json_t *proc, const char *local, const char *remote)
{
	size_t i;
	json_t *s;

	json_array_foreach(json_object_get(proc, "sockets"), i, s)
	{
		if (!strcmp(str(s, "local"), local) && !strcmp(str(s, "remote"), remote))
			return s;
	}
	return NULL;
}

static json_t *suspect(const char *node, long rank, long long pid, json_t *evidence,
                       const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static json_t *suspect(const char *node, long rank, long long pid, json_t *evidence,
                       const char *fmt, ...)
{
	char reason[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	return json_pack("{sosIsIssso}", "node", node ? json_string(node) : json_null(), "rank",
	                 (json_int_t)rank, "pid", (json_int_t)pid, "reason", reason, "evidence",
	                 evidence ? evidence : json_array());
}

/* The words for a process that /proc/PID/stat says is stopped ("T": by a
 * signal, SIGSTOP or job control; "t": by a tracer), else NULL: its main
 * thread's system call is then where it was stopped, not what it does. */
static const char *stopped_words(const json_t *proc)
{
	const char *st = str(proc, "state");

	if (!strcmp(st, "T"))
		return "stopped (SIGSTOP, state T)";
	if (!strcmp(st, "t"))
		return "stopped by a tracer (a debugger, state t)";
	return NULL;
}

/* What a rank's main thread does, in words: "waits in futex", "sleeps in
 * clock_nanosleep", "is stopped (SIGSTOP, state T)". */
static void activity_words(const json_t *proc, const json_t *main, char *out, size_t outlen)
{
	const char *cls = str(main, "class"), *sys = str(main, "syscall");

	if (stopped_words(proc))
		snprintf(out, outlen, "is %s", stopped_words(proc));
	else if (!strcmp(cls, "running"))
		snprintf(out, outlen, "is running on a CPU");
	else if (!strcmp(cls, "sleep"))
		snprintf(out, outlen, "sleeps in %s", sys[0] ? sys : "a sleep");
	else if (!strcmp(cls, "wait"))
		snprintf(out, outlen, "waits in %s", sys[0] ? sys : "a system call");
	else
		snprintf(out, outlen, "is in %s", sys[0] ? sys : "no system call");
}

/* How much CPU time a rank's main thread used between its first and its
 * last sample (the whole process's when the agent did not say). */
static long long cpu_delta(const json_t *first, const json_t *last)
{
	const json_t *m0 = json_object_get(first, "main"), *m1 = json_object_get(last, "main");

	if (!last || first == last || num(last, "pid") != num(first, "pid"))
		return 0;
	if (json_is_integer(json_object_get(m0, "cpu_ms")) &&
	    json_is_integer(json_object_get(m1, "cpu_ms")))
		return num(m1, "cpu_ms") - num(m0, "cpu_ms");
	return num(last, "cpu_ms") - num(first, "cpu_ms");
}

/* How many collectives NCCL RAS says rank launched in the world communicator
 * (the one of world ranks), as the first node that answered RAS in sample
 * tells it (each node's answer covers the whole job); -1 when none says. */
static long long ras_collectives(const json_t *sample, long rank, long world)
{
	size_t i, j;
	json_t *nd, *c;
	char key[24];

	snprintf(key, sizeof(key), "%ld", rank);
	json_array_foreach(json_object_get(sample, "nodes"), i, nd)
	{
		json_array_foreach(
		    json_object_get(json_object_get(json_object_get(nd, "result"), "ras"),
		                    "communicators"),
		    j, c)
		{
			json_t *v = json_object_get(json_object_get(c, "collectives"), key);

			if (num(c, "ranks") == world && json_is_integer(v))
				return json_integer_value(v);
		}
	}
	return -1;
}

/* The launchers of the last sample when no rank was found anywhere: a job
 * that waits in its launchers' rendezvous ("torchrun on node[1-3] waits in
 * the rendezvous at 10.0.0.11:29500"). 1 with the summary in out, else 0. */
static int rendezvous_summary(const json_t *last, char *out, size_t outlen)
{
	struct hostlist *hl = hostlist_new();
	const char *name = NULL, *addr = "", *port = "", *syn = NULL;
	size_t i, j, k;
	json_t *nd, *p, *s;
	char err[CD_ERRLEN], where[WHERE_LEN];
	char *nodes;

	json_array_foreach(json_object_get(last, "nodes"), i, nd)
	{
		json_array_foreach(json_object_get(json_object_get(nd, "result"), "processes"), j,
		                   p)
		{
			json_t *env = json_object_get(p, "env");

			if (strcmp(str(p, "role"), "launcher") != 0)
				continue;
			hostlist_parse(hl, str(nd, "host"), err, sizeof(err));
			if (!name || strcmp(str(p, "launcher"), "torchrun") == 0)
				name = str(p, "launcher");
			if (!addr[0] && str(env, "MASTER_ADDR")[0]) {
				addr = str(env, "MASTER_ADDR");
				port = str(env, "MASTER_PORT");
			}
			json_array_foreach(json_object_get(p, "sockets"), k, s)
			{
				if (!syn && !strcmp(str(s, "state"), "SYN_SENT"))
					syn = str(s, "remote");
			}
		}
	}
	if (!hostlist_count(hl)) {
		hostlist_free(hl);
		return 0;
	}
	if (addr[0])
		snprintf(where, sizeof(where), "%s%s%s%s%s", strchr(addr, ':') ? "[" : "", addr,
		         strchr(addr, ':') ? "]" : "", port[0] ? ":" : "", port);
	else
		snprintf(where, sizeof(where), "%s", syn ? syn : "");
	nodes = hostlist_fold(hl);
	snprintf(out, outlen, "%s on %s waits in the rendezvous%s%s: no rank has started%s",
	         name && name[0] ? name : "the launcher", nodes, where[0] ? " at " : "", where,
	         syn ? " (a connection to the rendezvous is not answered: a firewall or a "
	               "node that cannot reach it; `clusterdoc check` names which)"
	             : "");
	free(nodes);
	hostlist_free(hl);
	return 1;
}

static int rank_cmp(const void *a, const void *b)
{
	const struct rank *x = a, *y = b;

	return (x->rank > y->rank) - (x->rank < y->rank);
}

/* The nodes' part of the verdict, and the ranks of every sample into r. */
static json_t *collect(const json_t *samples, struct rank *r, size_t *nr, long *world,
                       char *searched, size_t slen, int *answered)
{
	json_t *nodes = json_array(), *sample, *nd, *p;
	size_t ns = json_array_size(samples), si, i, j;

	*world = 0;
	*answered = 0;
	json_array_foreach(samples, si, sample)
	{
		json_array_foreach(json_object_get(sample, "nodes"), i, nd)
		{
			json_t *res = json_object_get(nd, "result");

			if (si == ns - 1) {
				json_array_append_new(
				    nodes,
				    json_pack("{sssOsIso}", "host", str(nd, "host"), "error",
				              json_object_get(nd, "error")
				                  ? json_object_get(nd, "error")
				                  : json_null(),
				              "processes",
				              (json_int_t)json_array_size(
				                  json_object_get(res, "processes")),
				              "denied",
				              json_object_get(res, "denied")
				                  ? json_incref(json_object_get(res, "denied"))
				                  : json_array()));
				if (res)
					(*answered)++;
			}
			if (res && !searched[0])
				snprintf(searched, slen, "%s", str(res, "searched"));
			json_array_foreach(json_object_get(res, "processes"), j, p)
			{
				long w = json_integer_value(json_object_get(p, "world_size")) > 0
				             ? (long)num(p, "world_size")
				             : atol(str(json_object_get(p, "env"), "WORLD_SIZE"));
				struct rank *k;

				if (strcmp(str(p, "role"), "rank") != 0 || num(p, "rank") < 0)
					continue;
				if (w > *world && w <= MAX_RANKS)
					*world = w;
				k = rank_get(r, nr, (long)num(p, "rank"));
				if (!k)
					continue;
				if (!k->first) {
					k->first = p;
					k->node = str(nd, "host");
				}
				if (si == ns - 1)
					k->last = p;
				k->seen = 1;
			}
		}
	}
	qsort(r, *nr, sizeof(*r), rank_cmp);
	return nodes;
}

/* What the verdict is built from, and what it builds. */
struct hang_ctx {
	const json_t *samples, *first, *last;
	size_t ns;
	long long elapsed; /* ms between the first sample and the last */
	struct rank *r;    /* the ranks found, by rank */
	size_t nr;
	long world;
	size_t nwait;      /* ranks whose main thread waits */
	char wait_sys[64]; /* the syscall they wait in */
	int nonadv;        /* ranks that did not advance */
	int hung;          /* a rule found the job hung */
	json_t *ranks;     /* per rank: what it does, whom it talks to */
	json_t *groups;    /* "what" -> the ranks doing it */
	json_t *garr;      /* the groups, smallest first */
	json_t *suspects;
};

/* Rank i as a "ranks" row: its state, activity, frame, whether it advanced,
 * and its connections matched to their peers; counted into the waiting and
 * not advancing ranks and into the group of what it does. */
static void describe_rank(struct hang_ctx *x, size_t i)
{
	struct rank *r = x->r;
	json_t *p = r[i].last ? r[i].last : r[i].first, *main = json_object_get(p, "main");
	json_t *conns = json_array(), *s, *rk, *g;
	long long d = cpu_delta(r[i].first, r[i].last), c0, c1;
	char frame[256], what[420], act[128], frame0[256];
	size_t k;
	int adv;

	stack_frame(json_string_value(json_object_get(r[i].first, "stacks")), frame0,
	            sizeof(frame0));
	stack_frame(json_string_value(json_object_get(p, "stacks")), frame, sizeof(frame));
	/* the main thread's CPU time, its Python stack when both samples
	 * have one, or its collective count in NCCL RAS's world communicator:
	 * torch's own threads (and the dumps hang asks for, which come after
	 * the samples are read) do not count */
	c0 = ras_collectives(x->first, r[i].rank, x->world);
	c1 = ras_collectives(x->last, r[i].rank, x->world);
	adv = r[i].last && x->elapsed > 0 &&
	      (d * 100 >= x->elapsed * HANG_ADVANCE_PCT ||
	       (r[i].first != r[i].last && frame0[0] && frame[0] && strcmp(frame0, frame)) ||
	       (c0 >= 0 && c1 > c0));
	activity_words(p, main, act, sizeof(act));
	json_array_foreach(json_object_get(p, "sockets"), k, s)
	{
		const char *pn;
		long peer = peer_of(x->last, str(s, "local"), str(s, "remote"), &pn);

		json_array_append_new(
		    conns,
		    json_pack("{sOsOsOsOsOsIso}", "local", json_object_get(s, "local"), "remote",
		              json_object_get(s, "remote"), "state", json_object_get(s, "state"),
		              "tx_queue", json_object_get(s, "tx_queue"), "rx_queue",
		              json_object_get(s, "rx_queue"), "peer_rank", (json_int_t)peer,
		              "peer_node", pn ? json_string(pn) : json_null()));
	}
	rk = json_pack("{sIsssIsssssO?sIsbsbssso}", "rank", (json_int_t)r[i].rank, "node",
	               r[i].node, "pid", (json_int_t)num(p, "pid"), "state", str(p, "state"),
	               "activity", str(main, "class"), "syscall", json_object_get(main, "syscall"),
	               "cpu_ms_delta", (json_int_t)d, "advancing", adv, "gone", !r[i].last, "frame",
	               frame, "connections", conns);
	json_object_set(rk, "stacks", json_object_get(p, "stacks"));
	json_object_set(rk, "stacks_how", json_object_get(p, "stacks_how"));
	json_object_set(rk, "stacks_note", json_object_get(p, "stacks_note"));
	json_array_append_new(x->ranks, rk);
	if (!r[i].last)
		snprintf(what, sizeof(what), "gone");
	else
		snprintf(what, sizeof(what), "%s%s%s%s", act, frame[0] ? ", at " : "", frame,
		         adv ? " (advancing)" : "");
	g = json_object_get(x->groups, what);
	if (!g)
		json_object_set_new(x->groups, what, g = json_array());
	json_array_append_new(g, json_integer(r[i].rank));
	if (r[i].last && !strcmp(str(main, "class"), "wait")) {
		x->nwait++;
		snprintf(x->wait_sys, sizeof(x->wait_sys), "%s", str(main, "syscall"));
	}
	if (r[i].last && !adv)
		x->nonadv++;
}

/* The groups, smallest first: the minority is where a suspect hides. */
static void order_groups(struct hang_ctx *x)
{
	const char *key;
	json_t *v;

	json_object_foreach(x->groups, key, v)
	{
		char text[256];
		size_t at = 0;

		hang_ranks_text(v, text, sizeof(text));
		while (at < json_array_size(x->garr) &&
		       json_array_size(json_object_get(json_array_get(x->garr, at), "ranks")) <=
		           json_array_size(v))
			at++;
		json_array_insert_new(
		    x->garr, at,
		    json_pack("{sssOss}", "what", key, "ranks", v, "ranks_text", text));
	}
}

/* Stopped ranks: nothing they hold moves until SIGCONT, whatever the
 * others wait for. */
static int rule_stopped(struct hang_ctx *x)
{
	int found = 0;

	for (size_t i = 0; i < x->nr; i++) {
		struct rank *r = &x->r[i];
		const char *how = r->last ? stopped_words(r->last) : NULL;

		if (!how)
			continue;
		found = 1;
		json_array_append_new(
		    x->suspects,
		    suspect(r->node, r->rank, num(r->last, "pid"),
		            json_pack("[s]", "its state in /proc/PID/stat"),
		            "rank %ld (%s, pid %lld) is %s: it runs no code until it is "
		            "continued (kill -CONT %lld; a debugger, job control or a freezer "
		            "stopped it); %zu ranks wait",
		            r->rank, r->node, num(r->last, "pid"), how, num(r->last, "pid"),
		            x->nwait));
	}
	return found;
}

/* Ranks gone during the inspection, or held by no process inspected. */
static int rule_gone(struct hang_ctx *x)
{
	int found = 0;

	for (long k = 0, i = 0; k < x->world; k++) {
		struct rank *r = x->r;

		while ((size_t)i < x->nr && r[i].rank < k)
			i++;
		if ((size_t)i < x->nr && r[i].rank == k && r[i].last)
			continue;
		found = 1;
		if ((size_t)i < x->nr && r[i].rank == k)
			json_array_append_new(
			    x->suspects,
			    suspect(
			        r[i].node, k, num(r[i].first, "pid"),
			        json_pack("[s]",
			                  "its process was there in the first sample and not "
			                  "in the last"),
			        "rank %ld (%s, pid %lld) is gone: its process exited during the "
			        "inspection, and %zu ranks still wait",
			        k, r[i].node, num(r[i].first, "pid"), x->nwait));
		else
			json_array_append_new(
			    x->suspects,
			    suspect(
			        NULL, k, 0,
			        json_pack("[s]", "no process on the inspected nodes holds "
			                         "this RANK"),
			        "rank %ld is gone: no process holds it (world size %ld; killed, "
			        "or on a node not inspected), and %zu ranks still wait",
			        k, x->world, x->nwait));
	}
	return found;
}

/* Links whose send queue does not drain between the samples. */
/*
 * Why the peer of a socket whose send queue did not drain takes nothing, into
 * why: the kernel's retransmission timeouts since the peer last acknowledged
 * new data, or its zero window (the persist timer, /proc/net/tcp "tr" 4).
 * 0, with why empty, when neither shows in the last sample: the queue is in
 * flight on a busy link, whose peer acknowledges as it goes.
 */
static int link_stuck_why(const json_t *s, char *why, size_t len)
{
	long long rto = num(s, "retransmits"), probes = num(s, "zero_window_probes");

	why[0] = 0;
	if (rto > 0)
		snprintf(why, len, ", %lld retransmission timeout(s) unanswered", rto);
	else if (num(s, "timer") == 4 || probes > 0)
		snprintf(why, len, ", the peer's receive window is zero (%lld probe(s))", probes);
	return why[0] != 0;
}

static int rule_links(struct hang_ctx *x)
{
	int found = 0;

	for (size_t i = 0; i < x->nr; i++) {
		struct rank *r = &x->r[i];
		size_t k;
		json_t *s;

		if (!r->last || r->first == r->last)
			continue;
		json_array_foreach(json_object_get(r->last, "sockets"), k, s)
		{
			const json_t *s0 = socket_find(r->first, str(s, "local"), str(s, "remote"));
			const char *pn;
			char why[96];
			long peer;

			if (!s0 || num(s0, "tx_queue") <= 0 ||
			    num(s, "tx_queue") < num(s0, "tx_queue") ||
			    !link_stuck_why(s, why, sizeof(why)))
				continue;
			found = 1;
			peer = peer_of(x->last, str(s, "local"), str(s, "remote"), &pn);
			json_array_append_new(
			    x->suspects,
			    suspect(r->node, r->rank, num(r->last, "pid"),
			            json_pack("[ss]",
			                      peer >= 0
			                          ? "the other end is held by a rank of the job"
			                          : "the other end was not found on the inspected "
			                            "nodes",
			                      str(s, "state")),
			            "link %s → %s (%s): %lld bytes queued, not drained for %.0f s "
			            "(rank %ld sends to %s%ld)%s",
			            r->node, pn ? pn : "?", str(s, "remote"), num(s, "tx_queue"),
			            x->elapsed / 1000.0, r->rank, peer >= 0 ? "rank " : "", peer,
			            why));
		}
	}
	return found;
}

/* Ranks not waiting while others wait, when the job does not advance. */
static int rule_outside(struct hang_ctx *x)
{
	int found = 0;

	if (!x->nonadv && !x->hung)
		return 0;
	for (size_t i = 0; i < x->nr; i++) {
		struct rank *r = &x->r[i];
		json_t *main = json_object_get(r->last, "main");
		char act[128], frame[256];

		if (!r->last || !x->nwait || !strcmp(str(main, "class"), "wait") ||
		    stopped_words(r->last))
			continue;
		found = 1;
		activity_words(r->last, main, act, sizeof(act));
		stack_frame(json_string_value(json_object_get(r->last, "stacks")), frame,
		            sizeof(frame));
		json_array_append_new(
		    x->suspects,
		    suspect(r->node, r->rank, num(r->last, "pid"),
		            json_pack("[s]", frame[0] ? frame : "no Python stack"),
		            "rank %ld (%s, pid %lld) has not entered the collective the others "
		            "wait in: its main thread %s%s%s; %zu ranks wait (%s)",
		            r->rank, r->node, num(r->last, "pid"), act,
		            frame[0] ? ", its stack in " : "", frame, x->nwait, x->wait_sys));
	}
	return found;
}

/* A GPU idle while the others' are busy, or the one busy GPU (hang_gpu.c). */
static int rule_gpu(struct hang_ctx *x)
{
	return hang_gpu_verdict(x->samples, x->ranks, x->suspects);
}

/* Everyone waits and no rule named anyone: the smallest group of ranks
 * doing the same thing, else no one stands out. */
static int rule_smallest_group(struct hang_ctx *x)
{
	json_t *g0 = json_array_get(x->garr, 0);

	if (!x->nonadv || json_array_size(x->suspects))
		return 0;
	if (json_array_size(x->garr) > 1) {
		long k = (long)json_integer_value(json_array_get(json_object_get(g0, "ranks"), 0));
		json_t *rk = NULL, *r;
		size_t i;

		json_array_foreach(x->ranks, i, r)
		{
			if (num(r, "rank") == k)
				rk = r;
		}
		json_array_append_new(
		    x->suspects,
		    suspect(str(rk, "node"), k, num(rk, "pid"), json_array(),
		            "rank %ld (%s) differs from the others: its main thread %s, while the "
		            "most ranks' %s",
		            k, str(rk, "node"), str(g0, "what"),
		            str(json_array_get(x->garr, json_array_size(x->garr) - 1), "what")));
	} else {
		json_array_append_new(
		    x->suspects,
		    suspect(
		        NULL, -1, 0, json_array(),
		        "every rank %s and none advanced in %.0f s: no rank stands out (all wait "
		        "for something outside the ranks inspected)",
		        str(g0, "what"), x->elapsed / 1000.0));
	}
	return 1;
}

/* The rules, in the order their suspects are listed. Each adds its
 * suspects and says whether it found the job hung; a rule may look at what
 * the ones before it found (x->hung, x->suspects). */
static int (*const rules[])(struct hang_ctx *x) = {
    rule_stopped, rule_gone, rule_links, rule_outside, rule_gpu, rule_smallest_group,
};

/* The verdict's head: its status, exit, summary and sizes. */
static json_t *verdict(struct hang_ctx *x, int answered, const char *searched, size_t nnodes)
{
	const char *status;
	char summary[1024];
	int exit;

	if (answered && !x->nr && rendezvous_summary(x->last, summary, sizeof(summary))) {
		status = "rendezvous";
		exit = HANG_EXIT_RENDEZVOUS;
	} else if (!answered || !x->nr) {
		snprintf(summary, sizeof(summary),
		         !answered ? "could not inspect: no node answered"
		                   : "no job found: searched %s on %zu node(s)",
		         searched[0] ? searched : "processes with rank variables", nnodes);
		status = "not_inspected";
		exit = 2;
	} else {
		snprintf(summary, sizeof(summary),
		         x->hung ? "hung: %zu suspect(s) among %zu ranks"
		                 : "progressing: %zu ranks advance",
		         x->hung ? json_array_size(x->suspects) : x->nr, x->nr);
		status = x->hung ? "hung" : "progressing";
		exit = x->hung ? 1 : 0;
	}
	return json_pack("{sisssisssIsIsIss}", "version", 1, "status", status, "exit", exit,
	                 "summary", summary, "elapsed_ms", (json_int_t)x->elapsed, "samples",
	                 (json_int_t)x->ns, "world_size", (json_int_t)x->world, "searched",
	                 searched);
}

json_t *hang_analyze(const json_t *samples)
{
	struct hang_ctx x = {.samples = samples};
	json_t *out, *nodes;
	char searched[512] = "";
	int answered;

	x.ns = json_array_size(samples);
	x.first = json_array_get(samples, 0);
	x.last = json_array_get(samples, x.ns - 1);
	x.elapsed = x.ns ? num(x.last, "t_ms") - num(x.first, "t_ms") : 0;
	x.r = cd_calloc(MAX_RANKS, sizeof(*x.r));
	x.ranks = json_array();
	x.groups = json_object();
	x.garr = json_array();
	x.suspects = json_array();
	nodes = collect(samples, x.r, &x.nr, &x.world, searched, sizeof(searched), &answered);
	for (size_t i = 0; i < x.nr; i++)
		describe_rank(&x, i);
	order_groups(&x);
	for (size_t k = 0; k < sizeof(rules) / sizeof(rules[0]); k++)
		if (rules[k](&x))
			x.hung = 1;
	out = verdict(&x, answered, searched, json_array_size(nodes));
	json_object_set_new(out, "nodes", nodes);
	json_object_set_new(out, "ranks", x.ranks);
	json_object_set_new(out, "groups", x.garr);
	json_object_set_new(out, "suspects", x.suspects);
	if (answered && x.nr)
		hang_nccl_verdict(samples, out);
	json_decref(x.groups);
	free(x.r);
	return out;
}
