/* SPDX-License-Identifier: MIT */
/*
 * check_render.c - what `clusterdoc check` and `clusterdoc env` print: the
 * text report, the JSON report (docs/report-format.md) and the export lines
 * (see check_render.h).
 */
#include "check_render.h"
#include "jsondoc.h"
#include "termtext.h"

#include "cd.h"
#include "jobs/jobgate.h"
#include "jobs/jobplan.h"
#include "probes/predict.h"
#include "probes/rdma_matrix.h"
#include "report/report.h"

#include <jansson.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define REPORT_VERSION 1

/* ---------------------------------------------------------------- suggestions */

/* Only a node checked to the end is suggested for (nm_node_complete). */
static int node_checked(const struct netmodel *m, size_t i)
{
	return nm_node_complete(&m->nodes[i]);
}

static int count_complete(const struct netmodel *m)
{
	int n = 0;

	for (size_t i = 0; i < m->nnodes; i++)
		n += nm_node_complete(&m->nodes[i]);
	return n;
}

static int count_partial(const struct netmodel *m)
{
	int n = 0;

	for (size_t i = 0; i < m->nnodes; i++)
		n += nm_node_partial(&m->nodes[i]);
	return n;
}

/* The job plan of this check (jobs/jobplan.h): every variable a node gets,
 * as `env` prints it and `run` sets it. The caller frees it. */
static struct job_plan *plan_of(const struct check_result *r)
{
	return job_plan_from_check(r->m, r->d, 0, NULL);
}

static json_t *suggestions_json(const struct check_result *r, const struct job_plan *plan)
{
	const struct netmodel *m = r->m;
	const struct suggestions *s = &r->d->sugg;
	json_t *o = json_object(), *common = json_object(), *per = json_object(),
	       *tr = json_object(), *notes = json_array(), *left_out = json_array();
	char url[NM_ADDR + 32];

	if (s->nccl_ifname)
		json_object_set_new(common, "NCCL_SOCKET_IFNAME", json_string(s->nccl_ifname));
	if (diagnose_sugg_family(s) && s->nccl_ifname)
		json_object_set_new(common, "NCCL_SOCKET_FAMILY",
		                    json_string(diagnose_sugg_family(s)));
	if (s->ib.hca)
		json_object_set_new(common, "NCCL_IB_HCA", json_string(s->ib.hca));
	if (s->ib.gid_per_node && s->ib.gid_index >= 0)
		json_object_set_new(common, "NCCL_IB_GID_INDEX",
		                    json_sprintf("%d", s->ib.gid_index));
	if (s->master_addr[0])
		json_object_set_new(common, "MASTER_ADDR", json_string(s->master_addr));
	if (s->master_port)
		json_object_set_new(common, "MASTER_PORT", json_sprintf("%d", s->master_port));
	for (size_t i = 0; i < m->nnodes; i++) {
		json_t *vars = json_object();

		if (!node_checked(m, i)) {
			json_array_append_new(left_out, json_string(m->nodes[i].host));
			json_decref(vars);
			continue;
		}
		job_plan_env(plan, i, vars);
		json_object_set_new(per, m->nodes[i].host, vars);
		if (s->torchrun[i])
			json_object_set_new(tr, m->nodes[i].host, json_string(s->torchrun[i]));
	}
	for (char *p = s->notes; p && *p;) {
		char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		if (len)
			json_array_append_new(notes, json_stringn(p, len));
		p = nl ? nl + 1 : p + len;
	}
	json_object_set_new(o, "env", common);
	json_object_set_new(o, "per_node", per);
	json_object_set_new(o, "master_addr",
	                    s->master_addr[0] ? json_string(s->master_addr) : json_null());
	json_object_set_new(o, "master_port",
	                    s->master_port ? json_integer(s->master_port) : json_null());
	json_object_set_new(o, "init_method",
	                    diagnose_sugg_init_method(s, url, sizeof(url)) == 0 ? json_string(url)
	                                                                        : json_null());
	json_object_set_new(o, "torchrun", tr);
	json_object_set_new(o, "notes", notes);
	json_object_set_new(o, "left_out", left_out);
	return o;
}

/* ---------------------------------------------------------------- the deadline */

/* Did the deadline shorten or cut anything? */
static int deadline_cut(const struct netcheck_stats *st)
{
	return st->deadline_s > 0 &&
	       (st->deadline_phase[0] || st->confirm_skipped || st->python_timeout_ms ||
	        (st->connect_timeout_ms && st->connect_timeout_ms < st->probe_timeout_ms) ||
	        (st->confirm_timeout_ms && st->confirm_timeout_ms < st->probe_timeout_ms));
}

static json_t *deadline_json(const struct netcheck_stats *st)
{
	json_t *o;

	if (st->deadline_s <= 0)
		return json_null();
	o = json_pack("{sisbsbsosisisisI}", "seconds", st->deadline_s, "cut", deadline_cut(st),
	              "passed", st->deadline_hit, "passed_in",
	              st->deadline_phase[0] ? json_string(st->deadline_phase) : json_null(),
	              "probe_timeout_ms", st->probe_timeout_ms, "connect_timeout_ms",
	              st->connect_timeout_ms, "confirm_timeout_ms", st->confirm_timeout_ms,
	              "confirm_skipped", (json_int_t)st->confirm_skipped);
	json_object_set_new(o, "python_timeout_ms",
	                    st->python_timeout_ms ? json_integer(st->python_timeout_ms)
	                                          : json_null());
	return o;
}

/* What the deadline cut short, one line each, for the text report. */
static void print_deadline(const struct netcheck_stats *st)
{
	if (!deadline_cut(st))
		return;
	termtext_printf(stdout, "DEADLINE (--deadline %d s): the check was shortened to fit it\n",
	                st->deadline_s);
	if (st->python_timeout_ms)
		termtext_printf(stdout, "  probe:    the python probe was bounded to %d ms\n",
		                st->python_timeout_ms);
	if (st->connect_timeout_ms && st->connect_timeout_ms < st->probe_timeout_ms)
		termtext_printf(
		    stdout,
		    "  connect:  each TCP attempt got %d ms instead of --probe-timeout %d ms "
		    "(a timeout means no answer within %d ms)\n",
		    st->connect_timeout_ms, st->probe_timeout_ms, st->connect_timeout_ms);
	if (st->confirm_timeout_ms && st->confirm_timeout_ms < st->probe_timeout_ms)
		termtext_printf(stdout, "  confirm:  each retry got %d ms\n",
		                st->confirm_timeout_ms);
	if (st->confirm_skipped)
		termtext_printf(
		    stdout,
		    "  confirm:  %zu failed attempt(s) seen by no other node were not retried: "
		    "no time was left\n",
		    st->confirm_skipped);
	if (st->deadline_phase[0])
		termtext_printf(
		    stdout,
		    "  passed during the %s phase: the nodes that still owed answers were "
		    "closed (node-unreachable; partial when they had answered their probe)\n",
		    st->deadline_phase);
	putchar('\n');
}

/* ---------------------------------------------------------------- JSON report */

static const char *family_name(int family)
{
	return family == AF_INET ? "inet" : family == AF_INET6 ? "inet6" : "unknown";
}

static json_t *picks_json(const struct net_pick *p, int n)
{
	json_t *arr = json_array();

	for (int i = 0; i < n; i++)
		json_array_append_new(arr, json_pack("{sssssssI}", "name", p[i].ifname, "address",
		                                     p[i].addr, "family", family_name(p[i].family),
		                                     "scope_id", (json_int_t)p[i].scope_id));
	return arr;
}

static json_t *node_json(const struct check_result *r, size_t i)
{
	const struct nm_node *n = &r->m->nodes[i];
	const struct node_prediction *p = &r->d->pred[i];
	json_t *o = json_object(), *ifs = json_array();
	char line[1024];

	json_object_set_new(o, "host", json_string(n->host));
	json_object_set_new(o, "hostname", n->hostname[0] ? json_string(n->hostname) : json_null());
	json_object_set_new(o, "checked", json_boolean(n->probed));
	json_object_set_new(o, "partial", json_boolean(nm_node_partial(n)));
	json_object_set_new(o, "error", n->error[0] ? json_string(n->error) : json_null());
	json_object_set_new(o, "error_code",
	                    n->error_code[0] ? json_string(n->error_code) : json_null());
	if (!n->probed) {
		json_object_set_new(o, "interfaces", ifs);
		return o;
	}
	for (size_t k = 0; k < n->nifaces; k++) {
		const struct nm_iface *f = &n->ifaces[k];
		json_t *addrs = json_array();

		for (size_t a = 0; a < n->naddrs; a++) {
			const struct nm_addr *x = &n->addrs[a];

			if (strcmp(x->ifname, f->name) != 0)
				continue;
			json_array_append_new(
			    addrs, json_pack("{sssssisssI}", "address", x->addr, "family",
			                     family_name(x->family), "prefix", x->prefix, "scope",
			                     x->scope, "scope_id", (json_int_t)x->scope_id));
		}
		json_array_append_new(ifs, json_pack("{sssisssbsbso}", "name", f->name, "mtu",
		                                     f->mtu, "kind", f->kind, "up", f->up,
		                                     "running", f->running, "addresses", addrs));
	}
	json_object_set_new(o, "interfaces", ifs);
	nccl_log_line(&p->nccl, line, sizeof(line));
	json_object_set_new(
	    o, "nccl",
	    json_pack("{sssssosossssss}", "version",
	              n->nccl_version[0] ? n->nccl_version : "unknown", "rule", p->nccl.rule,
	              "interfaces", picks_json(p->nccl.picks, p->nccl.npicks), "bootstrap",
	              picks_json(p->bootstrap.picks, p->bootstrap.npicks), "log_line", line,
	              "error", p->nccl.error, "bootstrap_error", p->bootstrap.error));
	json_object_set_new(o, "gloo",
	                    json_pack("{sssosbsbss}", "rule", p->gloo.rule, "devices",
	                              picks_json(p->gloo.picks, p->gloo.npicks), "from_hostname",
	                              p->gloo.from_hostname, "loopback_fallback",
	                              p->gloo.loopback_fallback, "error", p->gloo.error));
	json_object_set_new(o, "data_interface",
	                    p->data_iface[0] ? json_string(p->data_iface) : json_null());
	return o;
}

static json_t *lines_json(const char *text)
{
	json_t *arr = json_array();

	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		json_array_append_new(arr, json_stringn(p, len));
		p = nl ? nl + 1 : p + len;
	}
	return arr;
}

void check_print_json(const struct check_result *r)
{
	const struct netmodel *m = r->m;
	const struct netcheck_stats st = r->stats;
	json_t *doc = json_object(), *nodes = json_array(), *matrix = json_array(),
	       *findings = json_array();
	struct job_plan *plan;

	json_object_set_new(doc, "version", json_integer(REPORT_VERSION));
	json_object_set_new(doc, "command", json_string("check"));
	json_object_set_new(doc, "master", json_string(m->nodes[m->master].host));
	json_object_set_new(doc, "master_port_candidate", json_integer(m->master_port));
	json_object_set_new(doc, "nodes_checked", json_integer(count_complete(m)));
	json_object_set_new(doc, "nodes_partial", json_integer(count_partial(m)));
	for (size_t i = 0; i < m->nnodes; i++)
		json_array_append_new(nodes, node_json(r, i));
	json_object_set_new(doc, "nodes", nodes);
	for (size_t k = 0; k < m->nattempts; k++) {
		const struct nm_attempt *a = &m->attempts[k];

		json_array_append_new(
		    matrix,
		    json_pack("{sssssssIsisbsssoso}", "from", m->nodes[a->from].host, "to",
		              m->nodes[a->to].host, "address", a->addr, "scope_id",
		              (json_int_t)a->scope_id, "port", a->port, "fixed_port", a->fixed_port,
		              "result", a->result, "rtt_us",
		              a->rtt_us >= 0 ? json_integer(a->rtt_us) : json_null(), "errno_name",
		              a->errno_name[0] ? json_string(a->errno_name) : json_null()));
		json_object_set_new(json_array_get(matrix, k), "bulk",
		                    json_string(a->bulk[0] ? a->bulk : "not-tried"));
		if (a->pmtu >= 0)
			json_object_update_new(
			    json_array_get(matrix, k),
			    json_pack("{sisi}", "pmtu", a->pmtu, "pmtu_max", a->pmtu_max));
		rdma_matrix_json(a, json_array_get(matrix, k));
	}
	json_object_set_new(doc, "matrix", matrix);
	plan = plan_of(r);
	for (size_t k = 0; k < r->d->nfindings; k++) {
		const struct finding *f = &r->d->findings[k];
		json_t *fn = json_array();
		char why[1024];

		for (size_t q = 0; q < f->nnodes; q++)
			json_array_append_new(fn, json_string(m->nodes[f->nodes[q]].host));
		json_array_append_new(findings,
		                      json_pack("{sssssosssossso}", "id", f->id, "severity",
		                                severity_name(f->severity), "nodes", fn, "message",
		                                f->message, "evidence", lines_json(f->evidence),
		                                "fix", f->fix, "avoided_by",
		                                job_gate_avoided(plan, &plan->findings[k],
		                                                 m->nnodes == 1, why, sizeof(why))
		                                    ? json_string(why)
		                                    : json_null()));
	}
	json_object_set_new(doc, "findings", findings);
	if (r->needs_peers) {
		json_t *left = json_array();

		for (size_t k = 0; k < r->nneeds_peers; k++)
			json_array_append_new(left, json_string(r->needs_peers[k]));
		json_object_set_new(doc, "needs_peers", left);
	}
	json_object_set_new(doc, "suggestions", suggestions_json(r, plan));
	job_plan_free(plan);
	json_object_set_new(doc, "deadline", deadline_json(&st));
	json_object_set_new(
	    doc, "timing_ms",
	    json_pack("{sIsIsIsIsIsI}", "total", (json_int_t)(cd_now_ms() - r->started_ms), "probe",
	              (json_int_t)st.probe_ms, "listen", (json_int_t)st.listen_ms, "connect",
	              (json_int_t)st.connect_ms, "confirm", (json_int_t)st.confirm_ms, "retried",
	              (json_int_t)st.retried));
	json_object_set_new(doc, "head_load", report_check_head_load_json(&st.loop));
	jsondoc_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	putchar('\n');
	json_decref(doc);
}

/* ---------------------------------------------------------------- text report */

static void print_indented(const char *label, const char *text)
{
	int first = 1;

	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		int len = (int)(nl ? nl - p : (long)strlen(p));

		termtext_printf(stdout, "         %-9s %.*s\n", first ? label : "", len, p);
		first = 0;
		p = nl ? nl + 1 : p + len;
	}
}

static void print_predictions(const struct check_result *r)
{
	const struct netmodel *m = r->m;

	termtext_printf(stdout, "WHAT NCCL AND GLOO WOULD USE (as configured now)\n");
	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_node *n = &m->nodes[i];
		const struct node_prediction *p = &r->d->pred[i];
		char line[1024];

		if (!n->probed) {
			termtext_printf(stdout, "  %s: not checked: %s\n", n->host, n->error);
			continue;
		}
		nccl_log_line(&p->nccl, line, sizeof(line));
		termtext_printf(stdout, "  %s (%s, NCCL %s)\n", n->host, n->hostname,
		                n->nccl_version[0] ? n->nccl_version : "unknown: 2.28.3+ rules");
		if (nm_node_partial(n))
			termtext_printf(stdout, "    partial: %s\n", n->error);
		termtext_printf(stdout, "    NCCL  %s   [%s]\n", line, p->nccl.rule);
		if (p->gloo.npicks)
			termtext_printf(stdout, "    Gloo  %s:%s%s   [%s]\n",
			                p->gloo.picks[0].ifname, p->gloo.picks[0].addr,
			                p->gloo.npicks > 1 ? " ..." : "", p->gloo.rule);
		else
			termtext_printf(stdout, "    Gloo  %s   [%s]\n", p->gloo.error,
			                p->gloo.rule);
	}
	putchar('\n');
}

static void print_findings(const struct check_result *r)
{
	const struct diagnosis *d = r->d;
	struct job_plan *plan = plan_of(r);

	termtext_printf(stdout, "FINDINGS: %d error(s), %d warning(s)\n", d->errors, d->warnings);
	if (d->nfindings == 0)
		termtext_printf(
		    stdout,
		    "  none: every address NCCL and Gloo would use was reached by every peer\n");
	for (size_t k = 0; k < d->nfindings; k++) {
		const struct finding *f = &d->findings[k];

		char why[1024];

		termtext_printf(stdout, "  %-7s %s\n", severity_name(f->severity), f->id);
		print_indented("", f->message);
		print_indented("evidence", f->evidence);
		print_indented("fix", f->fix);
		/* what a job started with the suggested environment still meets */
		if (job_gate_avoided(plan, &plan->findings[k], r->m->nnodes == 1, why, sizeof(why)))
			termtext_printf(stdout, "    avoided: %s %s\n", f->id, why);
	}
	job_plan_free(plan);
	putchar('\n');
}

/* Node i's NCCL_IB_HCA and NCCL_IB_GID_INDEX where no value is common. */
static void print_ib_per_node(const struct suggestions *s, const char *host, size_t i)
{
	if (!s->ib.hca && s->ib.hca_per_node && s->ib.hca_per_node[i])
		termtext_printf(stdout, "  %s:  NCCL_IB_HCA=%s\n", host, s->ib.hca_per_node[i]);
	if (s->ib.gid_per_node && s->ib.gid_index < 0 && s->ib.gid_per_node[i] >= 0)
		termtext_printf(stdout, "  %s:  NCCL_IB_GID_INDEX=%d\n", host,
		                s->ib.gid_per_node[i]);
}

static void print_suggestions(const struct check_result *r)
{
	const struct netmodel *m = r->m;
	const struct suggestions *s = &r->d->sugg;
	char url[NM_ADDR + 32];

	termtext_printf(
	    stdout,
	    "SUGGESTED ENVIRONMENT (each value verified against the reachability matrix)\n");
	if (s->nccl_ifname)
		termtext_printf(stdout, "  all nodes:  NCCL_SOCKET_IFNAME=%s\n", s->nccl_ifname);
	if (diagnose_sugg_family(s) && s->nccl_ifname)
		termtext_printf(stdout, "  all nodes:  NCCL_SOCKET_FAMILY=%s\n",
		                diagnose_sugg_family(s));
	if (s->ib.hca)
		termtext_printf(stdout, "  all nodes:  NCCL_IB_HCA=%s\n", s->ib.hca);
	if (s->ib.gid_per_node && s->ib.gid_index >= 0)
		termtext_printf(stdout, "  all nodes:  NCCL_IB_GID_INDEX=%d\n", s->ib.gid_index);
	if (s->master_addr[0])
		termtext_printf(stdout, "  all nodes:  MASTER_ADDR=%s\n", s->master_addr);
	if (s->master_port)
		termtext_printf(stdout, "  all nodes:  MASTER_PORT=%d\n", s->master_port);
	/* An IPv6 master: the URL form needs brackets, the variables do not */
	if (strchr(s->master_addr, ':') && diagnose_sugg_init_method(s, url, sizeof(url)) == 0)
		termtext_printf(stdout,
		                "  all nodes:  init_method=%s (init_process_group; MASTER_ADDR and "
		                "torchrun --master_addr take the bare address)\n",
		                url);
	for (size_t i = 0; i < m->nnodes; i++) {
		if (!node_checked(m, i))
			continue;
		if (!s->nccl_ifname && s->nccl_ifname_per_node[i])
			termtext_printf(stdout, "  %s:  NCCL_SOCKET_IFNAME=%s%s%s\n",
			                m->nodes[i].host, s->nccl_ifname_per_node[i],
			                diagnose_sugg_family(s) ? " NCCL_SOCKET_FAMILY=" : "",
			                diagnose_sugg_family(s) ? diagnose_sugg_family(s) : "");
		if (s->gloo_ifname_per_node[i])
			termtext_printf(stdout, "  %s:  GLOO_SOCKET_IFNAME=%s\n", m->nodes[i].host,
			                s->gloo_ifname_per_node[i]);
		print_ib_per_node(s, m->nodes[i].host, i);
	}
	for (size_t i = 0; i < m->nnodes; i++) {
		if (s->torchrun[i])
			termtext_printf(stdout, "  %s:  %s\n", m->nodes[i].host, s->torchrun[i]);
	}
	if (s->notes)
		print_indented("not shown", s->notes);
	termtext_printf(stdout, "  (`clusterdoc env -w ...` prints these as export lines)\n");
}

/* The RDMA proof per pair, beside its TCP result, where a node has RDMA
 * ports (rdma_matrix.h). */
static void print_rdma_pairs(const struct netmodel *m)
{
	char text[512], gids[512];
	int any = 0;

	if (!rdma_matrix_any_port(m))
		return;
	for (size_t k = 0; k < m->nattempts; k++) {
		const struct nm_attempt *a = &m->attempts[k];
		const char *from = m->nodes[a->from].host, *to = m->nodes[a->to].host;

		if (!a->rdma[0])
			continue;
		if (!any++) /* no header over no pair (a node checked alone) */
			termtext_printf(
			    stdout,
			    "RDMA PAIRS (one RDMA WRITE per pair, beside its TCP connection)\n");
		rdma_matrix_gid_text(a, from, to, gids, sizeof(gids));
		termtext_printf(stdout, "  %s -> %s  TCP %s  RDMA %s%s%s\n", from, to, a->result,
		                rdma_matrix_text(a, text, sizeof(text)), gids[0] ? "; " : "", gids);
	}
	if (any)
		termtext_printf(stdout, "\n");
}

void check_print_text(const struct check_result *r, int checked)
{
	int partial = count_partial(r->m);
	char part[32] = "";

	/* `checked` counts the probed nodes; a partial one was probed but not
	 * checked to the end, so it is counted apart */
	if (partial)
		snprintf(part, sizeof(part), ", %d partial", partial);
	termtext_printf(stdout,
	                "clusterdoc check: %zu node(s), %d checked%s, %zu TCP attempts, %.1f s\n\n",
	                r->m->nnodes, checked - partial, part, r->m->nattempts,
	                (double)(cd_now_ms() - r->started_ms) / 1000);
	print_deadline(&r->stats);
	report_check_head_load_note(stdout, &r->stats.loop);
	print_predictions(r);
	print_rdma_pairs(r->m);
	print_findings(r);
	print_suggestions(r);
}

/* ---------------------------------------------------------------- env */

/* Whether node i's variables were all verified (env's text and JSON). */
static int env_verified(const struct check_result *r, size_t i)
{
	return r->d->sugg.nccl_ifname_per_node[i] && r->d->sugg.gloo_ifname_per_node[i] &&
	       r->d->sugg.master_port;
}

/* check_write_env; *unknown: `only` is none of the nodes. */
static int write_env(FILE *f, const struct check_result *r, const char *only, int *unknown)
{
	const struct netmodel *m = r->m;
	struct job_plan *plan = plan_of(r);
	int missing = 0, shown = 0;

	for (size_t i = 0; i < m->nnodes; i++) {
		struct job_var v[JOB_PLAN_VARS];
		int nv;

		if (only && strcmp(only, m->nodes[i].host) != 0 &&
		    strcmp(only, m->nodes[i].hostname) != 0)
			continue;
		shown++;
		termtext_printf(f, "# %s\n", m->nodes[i].host);
		if (!node_checked(m, i)) {
			/* a node that could not be checked (to the end) has no lines:
			 * env's "could not check" */
			termtext_printf(f, "# not checked%s: %s\n",
			                m->nodes[i].probed ? " to the end (partial results)" : "",
			                m->nodes[i].error);
			missing = 2;
			continue;
		}
		nv = job_plan_vars(plan, i, v);
		for (int k = 0; k < nv; k++) {
			termtext_printf(f, "export %s=", v[k].name);
			cd_fput_shell_word(f, v[k].value);
			putc('\n', f);
		}
		if (!env_verified(r, i)) {
			termtext_printf(
			    f, "# some values could not be verified; run `clusterdoc check` for "
			       "why\n");
			missing = missing ? missing : 1;
		}
	}
	job_plan_free(plan);
	*unknown = only && !shown;
	return *unknown ? 2 : missing;
}

int check_write_env(FILE *f, const struct check_result *r, const char *only)
{
	int unknown;

	return write_env(f, r, only, &unknown);
}

/* env --json: {"nodes": [{"host", "checked", "error", "env": {NAME: VALUE},
 * "verified"}], "exit"} with the exit status check_print_env would give. */
int check_print_env_json(const struct check_result *r, const char *only)
{
	const struct netmodel *m = r->m;
	struct job_plan *plan = plan_of(r);
	json_t *doc = json_object(), *nodes = json_array();
	int missing = 0, shown = 0, rc;

	for (size_t i = 0; i < m->nnodes; i++) {
		struct job_var v[JOB_PLAN_VARS];
		json_t *env = json_object(), *n;
		int nv, verified;

		if (only && strcmp(only, m->nodes[i].host) != 0 &&
		    strcmp(only, m->nodes[i].hostname) != 0) {
			json_decref(env);
			continue;
		}
		shown++;
		n = json_pack("{s:s, s:b}", "host", m->nodes[i].host, "checked",
		              node_checked(m, i));
		if (!node_checked(m, i)) {
			json_object_set_new(n, "error", json_string(m->nodes[i].error));
			json_object_set_new(n, "env", env);
			json_object_set_new(n, "verified", json_false());
			json_array_append_new(nodes, n);
			missing = 2;
			continue;
		}
		nv = job_plan_vars(plan, i, v);
		for (int k = 0; k < nv; k++)
			json_object_set_new(env, v[k].name, json_string(v[k].value));
		verified = env_verified(r, i);
		json_object_set_new(n, "env", env);
		json_object_set_new(n, "verified", json_boolean(verified));
		if (!verified)
			missing = missing ? missing : 1;
		json_array_append_new(nodes, n);
	}
	job_plan_free(plan);
	rc = only && !shown ? 2 : missing;
	json_object_set_new(doc, "version", json_integer(1));
	json_object_set_new(doc, "nodes", nodes);
	json_object_set_new(doc, "exit", json_integer(rc));
	jsondoc_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	putchar('\n');
	json_decref(doc);
	if (only && !shown)
		termtext_printf(
		    stderr, "clusterdoc env: --node %s is not one of the nodes checked\n", only);
	return rc;
}

int check_print_env(const struct check_result *r, const char *only)
{
	int unknown, rc = write_env(stdout, r, only, &unknown);

	if (unknown)
		termtext_printf(
		    stderr, "clusterdoc env: --node %s is not one of the nodes checked\n", only);
	return rc;
}
