/* SPDX-License-Identifier: MIT */
/*
 * cmd_check_watch.c - `clusterdoc check --watch` (cmd_check_watch.h): the
 * lines it prints and the loop it runs.
 *
 * Text: round 1 says how many nodes were checked and lists its findings as
 * raised; a later round prints its changes, one line per finding and
 * direction, naming only the nodes that joined (raised) or left (cleared)
 * it, or one line saying nothing changed:
 *   2026-11-27T05:31:02Z round 3 raised warning firewall-blocks-port node3: MESSAGE
 *   2026-11-27T05:31:07Z round 4: no change (0 error(s), 1 warning(s))
 * MESSAGE is the finding's, its leading node set (the catalogue's "%N: ")
 * cut to the changed nodes. A node that could not be checked, or whose
 * reason changed since the round before (sshd down, then a new host key),
 * gets a line with the reason, as a plain check gives it:
 *   2026-11-27T05:31:12Z round 5 node2: HOST KEY CHANGED: ...
 * At the end, the last round's full report.
 * --json: one object per line per round ({"version": 1, "event": "round",
 * ...}, changes or not; a change's "nodes" are the nodes that changed,
 * "finding_nodes" all of the finding's; "node_errors" [{"host",
 * "error_code", "error"}] every node of the round that could not be
 * checked, and why), then one {"event": "end"} line with the last round's
 * findings and the exit status.
 */
#include "cmd_check_watch.h"
#include "jsondoc.h"
#include "termtext.h"
#include "hostlist.h"
#include "report/check_render.h"
#include "report/report.h"
#include "signals.h"

#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct watch_cli {
	const struct check_watch_cli *c;
	struct loop *loop;
	int sig; /* the signal that ended the watch, 0 = none */
};

/* The nodes of m listed in idx, folded ("node[1-3]"); the caller frees. */
static char *fold_hosts(const struct netmodel *m, const size_t *idx, size_t n)
{
	struct hostlist hl = {.names = cd_calloc(n + 1, sizeof(char *))};
	char *s;

	for (size_t k = 0; k < n; k++)
		hl.names[hl.count++] = (char *)m->nodes[idx[k]].host;
	hl.capacity = hl.count;
	s = hostlist_fold(&hl); /* it reads the names, never changes them */
	free(hl.names);
	return s;
}

static json_t *hosts_json(const struct netmodel *m, const size_t *idx, size_t n)
{
	json_t *nodes = json_array();

	for (size_t k = 0; k < n; k++)
		json_array_append_new(nodes, json_string(m->nodes[idx[k]].host));
	return nodes;
}

static json_t *finding_json(const struct netmodel *m, const struct finding *f)
{
	return json_pack("{sssssoss}", "id", f->id, "severity", severity_name(f->severity), "nodes",
	                 hosts_json(m, f->nodes, f->nnodes), "message",
	                 f->message ? f->message : "");
}

static json_t *change_json(const struct netmodel *m, const struct check_watch_change *c)
{
	json_t *o = finding_json(m, c->f);

	json_object_set_new(o, "nodes", hosts_json(m, c->nodes, c->nnodes));
	json_object_set_new(o, "finding_nodes", hosts_json(m, c->f->nodes, c->f->nnodes));
	return o;
}

/* c's line: its changed nodes, and the finding's message with the node set
 * it starts with (most do: "%N: ...") cut to them. */
static void print_change(const char *when, unsigned round, const char *what,
                         const struct netmodel *m, const struct check_watch_change *c)
{
	const struct finding *f = c->f;
	const char *msg = f->message ? f->message : "";
	char *hosts = fold_hosts(m, c->nodes, c->nnodes), *all = fold_hosts(m, f->nodes, f->nnodes);
	size_t al = strlen(all);

	if (c->nnodes && al && strncmp(msg, all, al) == 0 && (msg[al] == ':' || msg[al] == ' '))
		printf("%s round %u %s %s %s %s: %s%s\n", when, round, what,
		       severity_name(f->severity), f->id, hosts, hosts, msg + al);
	else
		printf("%s round %u %s %s %s %s: %s\n", when, round, what,
		       severity_name(f->severity), f->id, hosts[0] ? hosts : "-", msg);
	free(hosts);
	free(all);
}

/* The error node i of r's model had in the round before ("" none, or no
 * round before). */
static const char *prev_error(const struct check_watch_round *r, size_t i)
{
	if (!r->prev_m)
		return "";
	for (size_t k = 0; k < r->prev_m->nnodes; k++)
		if (strcmp(r->prev_m->nodes[k].host, r->m->nodes[i].host) == 0)
			return r->prev_m->nodes[k].error;
	return "";
}

/* A line per node whose reason is new or changed: a finding that stays
 * (node-unreachable) would otherwise never say that its cause did. */
static void print_node_errors_text(const char *when, const struct check_watch_round *r)
{
	for (size_t i = 0; i < r->m->nnodes; i++) {
		const struct nm_node *n = &r->m->nodes[i];

		if (n->error[0] && strcmp(n->error, prev_error(r, i)) != 0)
			termtext_printf(stdout, "%s round %u %s: %s\n", when, r->round, n->host,
			                n->error);
	}
}

static json_t *node_errors_json(const struct netmodel *m)
{
	json_t *a = json_array();

	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_node *n = &m->nodes[i];

		if (n->error[0])
			json_array_append_new(
			    a,
			    json_pack("{sssoss}", "host", n->host, "error_code",
			              n->error_code[0] ? json_string(n->error_code) : json_null(),
			              "error", n->error));
	}
	return a;
}

static void print_round_text(const struct check_watch_round *r)
{
	char when[32];

	report_timestamp(r->time, when, sizeof(when));
	strcat(when, "Z");
	if (r->round == 1)
		printf("%s round 1: %zu node(s), %d checked, %d partial: %d error(s), %d "
		       "warning(s) (%lld ms)\n",
		       when, r->m->nnodes, r->checked, r->partial, r->d->errors, r->d->warnings,
		       (long long)r->elapsed_ms);
	else if (!r->nraised && !r->ncleared)
		/* the watch is alive: a round that changed nothing says so */
		printf("%s round %u: no change (%d error(s), %d warning(s))\n", when, r->round,
		       r->d->errors, r->d->warnings);
	for (size_t i = 0; i < r->nraised; i++)
		print_change(when, r->round, "raised", r->m, &r->raised[i]);
	for (size_t i = 0; i < r->ncleared; i++)
		print_change(when, r->round, "cleared", r->prev_m, &r->cleared[i]);
	print_node_errors_text(when, r);
}

static void print_json_line(json_t *o)
{
	char *s = jsondoc_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);

	if (s)
		puts(s);
	free(s);
	json_decref(o);
}

static void print_round_json(const struct check_watch_round *r)
{
	char when[32];
	json_t *raised = json_array(), *cleared = json_array(), *o;

	report_timestamp(r->time, when, sizeof(when));
	strcat(when, "Z");
	for (size_t i = 0; i < r->nraised; i++)
		json_array_append_new(raised, change_json(r->m, &r->raised[i]));
	for (size_t i = 0; i < r->ncleared; i++)
		json_array_append_new(cleared, change_json(r->prev_m, &r->cleared[i]));
	o = json_pack("{sisssIsssIsIsisisIsIsisisoso}", "version", 1, "event", "round", "round",
	              (json_int_t)r->round, "time", when, "elapsed_ms", (json_int_t)r->elapsed_ms,
	              "nodes", (json_int_t)r->m->nnodes, "checked", r->checked, "partial",
	              r->partial, "kept", (json_int_t)r->kept, "reconnected",
	              (json_int_t)(r->m->nnodes - r->kept), "errors", r->d->errors, "warnings",
	              r->d->warnings, "raised", raised, "cleared", cleared);
	json_object_set_new(o, "node_errors", node_errors_json(r->m));
	json_object_set_new(o, "phases_ms",
	                    json_pack("{sIsIsIsI}", "probe", (json_int_t)r->stats.probe_ms,
	                              "listen", (json_int_t)r->stats.listen_ms, "connect",
	                              (json_int_t)r->stats.connect_ms, "confirm",
	                              (json_int_t)r->stats.confirm_ms));
	print_json_line(o);
}

static void on_round(void *arg, const struct check_watch_round *r)
{
	struct watch_cli *w = arg;

	if (w->c->json)
		print_round_json(r);
	else
		print_round_text(r);
	fflush(stdout);
}

static void on_done(void *arg)
{
	loop_stop(((struct watch_cli *)arg)->loop);
}

static void on_signal(struct signals *s, int sig, void *arg)
{
	struct watch_cli *w = arg;

	(void)s;
	w->sig = sig;
	loop_stop(w->loop);
}

static const struct check_watch_events watch_events = {.round = on_round, .done = on_done};

/* The last round's state: the full report, or the JSON end line. */
static void print_last(const struct watch_cli *w, const struct check_watch_round *r, int rc)
{
	json_t *all;

	if (!w->c->json) {
		struct check_result res = {.m = r->m, .d = r->d, .started_ms = r->started_ms};

		res.stats = r->stats;
		printf("\nlast state (round %u%s):\n", r->round, w->sig ? ", interrupted" : "");
		check_print_text(&res, r->checked);
		return;
	}
	all = json_array();
	for (size_t i = 0; i < r->d->nfindings; i++)
		json_array_append_new(all, finding_json(r->m, &r->d->findings[i]));
	print_json_line(json_pack("{sisssIsbsosi}", "version", 1, "event", "end", "round",
	                          (json_int_t)r->round, "interrupted", w->sig != 0, "findings", all,
	                          "exit_status", rc));
}

int cmd_check_watch(const struct check_watch_cli *c)
{
	static const int sigs[] = {SIGINT, SIGTERM};
	struct watch_cli w = {.c = c};
	const struct check_watch_round *last;
	struct check_watch *cw = NULL;
	struct signals *sg = NULL;
	char err[CD_ERRLEN];
	int rc = 2;

	w.loop = loop_new();
	sg = signals_new(w.loop, sigs, CD_ARRAY_LEN(sigs), on_signal, &w, err, sizeof(err));
	if (!sg) {
		termtext_printf(stderr, "clusterdoc check: %s\n", err);
		goto out;
	}
	cw = check_watch_start(w.loop, c->pool, c->hosts, c->n, &c->o, &watch_events, &w, err,
	                       sizeof(err));
	if (!cw) {
		termtext_printf(stderr, "clusterdoc check: %s\n", err);
		goto out;
	}
	loop_run(w.loop);
	last = check_watch_last(cw);
	if (!last) {
		termtext_printf(stderr, "clusterdoc check: %s before the first round ended\n",
		                w.sig == SIGINT ? "interrupted" : "terminated");
		rc = signals_exit_status(w.sig ? w.sig : SIGTERM);
		goto out;
	}
	rc = c->finish(c->finish_arg, last);
	print_last(&w, last, rc);
	fflush(stdout);
out:
	check_watch_free(cw);
	signals_free(sg);
	loop_free(w.loop);
	return rc;
}
