/* SPDX-License-Identifier: MIT */
/*
 * view_network_detail.c - the Network view's drill-down texts: a pair of
 * nodes (every attempt of the matrix between them, the routes, the
 * firewall and the findings that explain them) and a node's whole probe.
 */
#include "view_network.h"

#include <stdlib.h>
#include <string.h>

/* "NCCL, bootstrap, Gloo": who would use addr on node i, "" for nobody. */
static void pick_users(const struct tui *t, size_t i, const char *addr, char *buf, size_t len)
{
	const struct node_prediction *p = netview_prediction(t, i);

	snprintf(buf, len, "%s%s%s",
	         p && netview_picks_hold(p->nccl.picks, p->nccl.npicks, addr) ? "NCCL " : "",
	         p && netview_picks_hold(p->bootstrap.picks, p->bootstrap.npicks, addr)
	             ? "bootstrap "
	             : "",
	         p && netview_picks_hold(p->gloo.picks, p->gloo.npicks, addr) ? "Gloo " : "");
	if (buf[0])
		buf[strlen(buf) - 1] = 0;
}

static void finding_text(struct tui *t, const struct finding *f, int w, struct ui_text *x)
{
	ui_text_add(x, ui_attr(t, f->severity == SEV_ERROR ? UI_FAIL : UI_WARN), 2, "%-7s %s",
	            severity_name(f->severity), f->id);
	ui_text_add(x, A_NORMAL, 10, "%s", f->message ? f->message : "");
	ui_text_add(x, ui_attr(t, UI_DIM), 10, "%s", f->evidence ? f->evidence : "");
	if (f->fix && f->fix[0])
		ui_text_add(x, A_NORMAL, 10, "fix:");
	ui_text_add(x, A_NORMAL, 12, "%s", f->fix ? f->fix : "");
}

/* The findings naming node b and, when both is set, node a too (else
 * those naming b but not a). */
static void findings_text(struct tui *t, size_t a, size_t b, int both, int w, struct ui_text *x)
{
	const struct diagnosis *d = t->s.d;
	size_t shown = 0;

	if (a == b)
		ui_text_add(x, A_BOLD, 0, "\nFindings naming %s", t->s.hosts[b]);
	else if (both)
		ui_text_add(x, A_BOLD, 0, "\nFindings naming %s and %s", t->s.hosts[a],
		            t->s.hosts[b]);
	else
		ui_text_add(x, A_BOLD, 0, "\nFindings naming %s, not %s", t->s.hosts[b],
		            t->s.hosts[a]);
	if (!d) {
		ui_text_add(x, ui_attr(t, UI_DIM), 2, "after the check");
		return;
	}
	for (size_t k = 0; k < d->nfindings; k++) {
		const struct finding *f = &d->findings[k];

		if (!finding_names(f, b) || (a != b && finding_names(f, a) != both))
			continue;
		finding_text(t, f, w, x);
		shown++;
	}
	if (!shown)
		ui_text_add(x, ui_attr(t, UI_DIM), 2, "none");
}

/* Node i's firewall; rules holding one of ports (the ports that failed
 * toward it) are marked. */
static void fwrules_text(struct tui *t, size_t i, const int *ports, size_t nports, int w,
                         struct ui_text *x)
{
	const struct nm_node *n = &t->s.m->nodes[i];

	ui_text_add(x, A_NORMAL, 2, "%s",
	            n->firewall_summary[0] ? n->firewall_summary : "(none seen)");
	for (size_t k = 0; k < n->nfwrules; k++) {
		const struct nm_fwrule *r = &n->fwrules[k];
		int hit = 0;

		for (size_t q = 0; q < nports && !hit; q++)
			hit = ports[q] >= r->port_lo && ports[q] <= r->port_hi ? ports[q] : 0;
		if (hit)
			ui_text_add(x, ui_attr(t, UI_FAIL), 2,
			            "%s %s ports %d-%d: MATCHES port %d (failed)", r->tool,
			            r->verdict, r->port_lo, r->port_hi, hit);
		else
			ui_text_add(x, A_NORMAL, 2, "%s %s ports %d-%d", r->tool, r->verdict,
			            r->port_lo, r->port_hi);
		ui_text_add(x, ui_attr(t, UI_DIM), 6, "%s", r->text);
	}
}

/* One row of the attempts: the address (with '*' when NCCL or Gloo would
 * use it), the port, the listener, reach.h's result, then the round trip
 * when it reached, else the errno. */
static void attempt_line(struct tui *t, const struct nm_attempt *a, int aw, struct ui_text *x)
{
	const struct node_prediction *p = netview_prediction(t, a->to);
	char addr[NM_ADDR + 16], detail[32];
	int ok = strcmp(a->result, "ok") == 0;

	nm_addr_format(addr, sizeof(addr), a->addr, a->scope_id);
	if (ok && a->rtt_us >= 0)
		snprintf(detail, sizeof(detail), "rtt %.2f ms", (double)a->rtt_us / 1000);
	else
		snprintf(detail, sizeof(detail), "%s", a->errno_name);
	ui_text_add(x,
	            ui_attr(t, ok                  ? UI_OK
	                       : netview_tested(a) ? UI_FAIL
	                                           : UI_DIM),
	            1, "%c%-*s %5d %-9s %-15s %s", p && netview_pick_used(p, a->addr) ? '*' : ' ',
	            aw, addr, a->port, a->fixed_port ? "fixed" : "ephemeral", a->result, detail);
}

static int node_has_addr(const struct nm_node *n, const char *addr)
{
	for (size_t a = 0; a < n->naddrs; a++)
		if (strcmp(n->addrs[a].addr, addr) == 0)
			return 1;
	return 0;
}

/* Route r of node n, unless an earlier route of n has the same ends. */
static void route_line(struct tui *t, const struct nm_node *n, size_t r, struct ui_text *x)
{
	const struct nm_route *rt = &n->routes[r];
	char from[NM_ADDR + 8] = "", src[NM_ADDR + 8] = "";

	for (size_t k = 0; k < r; k++)
		if (strcmp(n->routes[k].to, rt->to) == 0 &&
		    strcmp(n->routes[k].from, rt->from) == 0)
			return;
	if (rt->from[0])
		snprintf(from, sizeof(from), " from %s", rt->from);
	if (rt->src[0])
		snprintf(src, sizeof(src), " src %s", rt->src);
	if (rt->error[0])
		ui_text_add(x, ui_attr(t, UI_FAIL), 2, "to %s%s: FAIL %s", rt->to, from, rt->error);
	else
		ui_text_add(x, A_NORMAL, 2, "to %s%s: dev %s%s", rt->to, from, rt->dev, src);
}

static void pair_attempts_text(struct tui *t, size_t from, size_t to, int *ports, size_t *nports,
                               struct ui_text *x)
{
	const struct netmodel *m = t->s.m;
	size_t shown = 0;
	int aw = 7;

	for (size_t k = 0; k < m->nattempts; k++) {
		char addr[NM_ADDR + 16];

		nm_addr_format(addr, sizeof(addr), m->attempts[k].addr, m->attempts[k].scope_id);
		if (m->attempts[k].from == from && m->attempts[k].to == to &&
		    (int)strlen(addr) > aw)
			aw = (int)strlen(addr);
	}
	ui_text_add(x, ui_attr(t, UI_TITLE), 1, " %-*s %5s %-9s %-15s %s", aw, "ADDRESS", "PORT",
	            "LISTENER", "RESULT", "RTT/ERRNO");
	for (size_t k = 0; k < m->nattempts; k++) {
		const struct nm_attempt *a = &m->attempts[k];

		if (a->from != from || a->to != to)
			continue;
		attempt_line(t, a, aw, x);
		if (strcmp(a->result, "ok") != 0)
			ports[(*nports)++] = a->port;
		shown++;
	}
	if (!shown)
		ui_text_add(x, ui_attr(t, UI_DIM), 2, "none: %s",
		            m->matrix_done ? "this pair was not tested"
		                           : "the matrix has not run yet");
	else
		ui_text_add(x, ui_attr(t, UI_DIM), 2, "* an address NCCL or Gloo would use on %s",
		            m->nodes[to].host);
	for (size_t l = 0; l < m->nlisteners; l++) {
		const struct nm_listener *ls = &m->listeners[l];

		if (ls->node == to && ls->error[0])
			ui_text_add(x, ui_attr(t, UI_WARN), 2,
			            "%s could not listen on %s port %d: %s", m->nodes[to].host,
			            ls->addr[0] ? ls->addr : "*", ls->port, ls->error);
	}
}

void netview_pair_text(struct tui *t, size_t from, size_t to, int w, struct ui_text *x)
{
	const struct netmodel *m = t->s.m;
	const struct nm_node *src = &m->nodes[from], *dst = &m->nodes[to];
	int *ports = cd_calloc(m->nattempts + 1, sizeof(*ports));
	size_t nports = 0, nroutes = 0;

	ui_text_add(x, A_BOLD, 0, "%s -> %s: the attempts of the matrix", src->host, dst->host);
	pair_attempts_text(t, from, to, ports, &nports, x);
	ui_text_add(x, A_BOLD, 0, "\nRoutes on %s toward %s", src->host, dst->host);
	for (size_t r = 0; r < src->nroutes; r++) {
		if (!node_has_addr(dst, src->routes[r].to))
			continue;
		route_line(t, src, r, x);
		nroutes++;
	}
	if (!nroutes)
		ui_text_add(x, ui_attr(t, UI_DIM), 2,
		            "none looked up (only toward the addresses NCCL/Gloo would use)");
	ui_text_add(x, A_BOLD, 0, "\nFirewall on %s (input rules that drop or reject)", dst->host);
	fwrules_text(t, to, ports, nports, w, x);
	findings_text(t, from, to, 0, w, x);
	findings_text(t, from, to, 1, w, x);
	free(ports);
}

static void iface_text(struct tui *t, size_t i, const struct nm_iface *f, struct ui_text *x)
{
	const struct nm_node *n = &t->s.m->nodes[i];

	ui_text_add(x, A_NORMAL, 2, "%-10s %-6s mtu %d  %s%s%s%s%s", f->name,
	            netview_iface_state(f), f->mtu, f->kind[0] ? f->kind : "?",
	            f->driver[0] ? ", driver " : "", f->driver, f->master[0] ? ", in " : "",
	            f->master);
	for (size_t a = 0; a < n->naddrs; a++) {
		const struct nm_addr *ad = &n->addrs[a];
		char worst[32], users[48];
		const char *why = NULL;

		if (strcmp(ad->ifname, f->name) != 0)
			continue;
		pick_users(t, i, ad->addr, users, sizeof(users));
		if (users[0])
			why = netview_pick_trouble(t, i, ad->addr, worst, sizeof(worst));
		ui_text_add(x, ui_attr(t, why ? UI_FAIL : UI_NORMAL), 13, "%s/%d %s%s%s%s%s",
		            ad->addr, ad->prefix, ad->scope, users[0] ? "  <- " : "", users,
		            why ? "; peers FAIL: " : "", why ? why : "");
	}
}

static void predictions_text(struct tui *t, size_t i, int w, struct ui_text *x)
{
	const struct node_prediction *p = netview_prediction(t, i);
	const struct nm_node *n = &t->s.m->nodes[i];
	char line[1024];

	ui_text_add(x, A_BOLD, 0, "\nWhat NCCL and Gloo would use (as configured now)");
	if (!p) {
		ui_text_add(x, ui_attr(t, UI_DIM), 2, "picks: after the check");
		return;
	}
	nccl_log_line(&p->nccl, line, sizeof(line));
	ui_text_add(x, ui_attr(t, p->nccl.npicks ? UI_NORMAL : UI_FAIL), 2, "%s", line);
	ui_text_add(x, ui_attr(t, UI_DIM), 6, "[%s] NCCL %s", p->nccl.rule,
	            n->nccl_version[0] ? n->nccl_version : "unknown: 2.28.3+ rules");
	nccl_log_line(&p->bootstrap, line, sizeof(line));
	ui_text_add(x, ui_attr(t, p->bootstrap.npicks ? UI_NORMAL : UI_FAIL), 2, "%s", line);
	if (p->gloo.npicks)
		ui_text_add(x, A_NORMAL, 2, "Gloo: %s:%s%s", p->gloo.picks[0].ifname,
		            p->gloo.picks[0].addr, p->gloo.npicks > 1 ? " ..." : "");
	else
		ui_text_add(x, ui_attr(t, UI_FAIL), 2, "Gloo: FAIL %s", p->gloo.error);
	ui_text_add(x, ui_attr(t, UI_DIM), 6, "[%s]", p->gloo.rule);
	if (p->data_iface[0])
		ui_text_add(x, ui_attr(t, UI_OK), 2, "verified: %s %s (every peer reached it)",
		            p->data_iface, p->data_addr);
}

static void node_probe_text(struct tui *t, size_t i, int w, struct ui_text *x)
{
	const struct nm_node *n = &t->s.m->nodes[i];

	ui_text_add(x, A_BOLD, 0, "\nInterfaces and addresses");
	for (size_t f = 0; f < n->nifaces; f++)
		iface_text(t, i, &n->ifaces[f], x);
	predictions_text(t, i, w, x);
	ui_text_add(x, A_BOLD, 0, "\nThe host name %s resolves to (what Gloo binds)", n->hostname);
	for (size_t a = 0; a < n->nhostaddrs; a++)
		ui_text_add(x, A_NORMAL, 2, "%s%s", n->hostaddrs[a].addr,
		            n->hostaddrs[a].bindable ? "" : "  (not bindable here)");
	if (n->hostname_error[0])
		ui_text_add(x, ui_attr(t, UI_WARN), 2, "%s", n->hostname_error);
	ui_text_add(x, A_BOLD, 0, "\nRoutes toward the peers' addresses");
	for (size_t r = 0; r < n->nroutes; r++)
		route_line(t, n, r, x);
	if (!n->nroutes)
		ui_text_add(x, ui_attr(t, UI_DIM), 2, "none looked up yet");
	ui_text_add(x, A_BOLD, 0, "\nVariables NCCL and Gloo read");
	for (size_t v = 0; v < n->nvars; v++)
		ui_text_add(x, A_NORMAL, 2, "%s=%s  (%s)", n->vars[v].name,
		            n->vars[v].value ? n->vars[v].value : "", n->vars[v].source);
	if (!n->nvars)
		ui_text_add(x, ui_attr(t, UI_DIM), 2, "none set: the defaults apply");
	ui_text_add(x, A_BOLD, 0, "\nEphemeral ports (ip_local_port_range)");
	if (n->port_lo)
		ui_text_add(x, A_NORMAL, 2, "%d-%d", n->port_lo, n->port_hi);
	else
		ui_text_add(x, ui_attr(t, UI_DIM), 2, "unknown");
	ui_text_add(x, A_BOLD, 0, "\nFirewall (input rules that drop or reject)");
	fwrules_text(t, i, NULL, 0, w, x);
}

void netview_node_text(struct tui *t, size_t i, int w, struct ui_text *x)
{
	const struct nm_node *n = &t->s.m->nodes[i];

	ui_text_add(x, A_BOLD, 0, "%s%s%s%s: its probe", n->host,
	            n->hostname[0] ? " (hostname " : "", n->hostname, n->hostname[0] ? ")" : "");
	if (n->error[0])
		ui_text_add(x, ui_attr(t, UI_FAIL), 2, "%s %s: %s", n->probed ? "partly:" : "FAIL",
		            n->error_code, n->error);
	else if (!n->probed)
		ui_text_add(x, ui_attr(t, UI_RUN), 2, "%s...",
		            netcheck_stage_name(session_node_stage(&t->s, i)));
	if (n->probed)
		node_probe_text(t, i, w, x);
	findings_text(t, i, i, 1, w, x);
}
