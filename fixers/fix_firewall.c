/* SPDX-License-Identifier: MIT */
/*
 * fix_firewall.c - the firewall fixer: allow TCP from the cluster's subnets
 * on the node's data interface, through whichever tool owns the ruleset,
 * never by disabling the firewall (the tutorials' `ufw disable`).
 *
 *   firewalld running   a rich rule in the data interface's zone, runtime
 *                       and permanent (two actions, two undos)
 *   ufw active          `ufw allow in on IF from SUBNET proto tcp`
 *   nftables            an accept rule inserted first in every input base
 *                       chain that drops or rejects: an accept ends only its
 *                       own chain, so a rule in a new table of ours would not
 *                       get past another table's drop; undone by its handle
 *   iptables            tables that iptables-nft made (ip filter INPUT) are
 *                       edited with iptables/ip6tables, which own them
 * Each rule also accepts the node's own connections to its addresses: they
 * come in on `lo` with a source in the data subnet, and torchrun's rank-0
 * agent makes one to its own MASTER_ADDR (a drop of MASTER_PORT on every
 * interface, with the accept on the data interface only, left the master
 * alone blocked). nft matches `iifname { IF, lo }` in one rule; iptables,
 * which takes one -i, gets a second rule for lo; ufw and firewalld accept
 * lo in their own base rules.
 * nft and iptables rules carry the comment "clusterdoc fix RUN", ufw's
 * "clusterdoc fix"; a chain, ufw or a zone that already allows the subnet
 * is left alone (idempotence). nft -j does not show an iptables-nft rule's
 * comment, so a second run adds a second iptables rule (its undo removes
 * that one).
 *
 * With port-range selected (a site that insists on a port list), the rules
 * open only MASTER_PORT and the range port-range narrows to, in each tool's
 * words: nft `tcp dport { P, LO-HI }`, iptables `-m multiport --dports
 * P,LO:HI`, ufw `to any port P,LO:HI`, firewalld one rich rule per port
 * element. Then an nft chain counts as done only when a clusterdoc rule
 * there holds those ports (nft merges adjacent elements, so holding is
 * checked, not the text); one of ours that opens all TCP is named in a note
 * and left alone, as is ufw's or firewalld's rule for all TCP from the
 * subnet. A range holding MASTER_PORT is refused here too, as port-range
 * refuses it.
 *
 * On an Ascend node (the check's ascend-hccl-settings names it) the rules
 * open only MASTER_PORT and HCCL's host ports (fix_hccl_ports) the same way,
 * instead of the guide's firewall turned off.
 */
#include "fix_internal.h"

#include <arpa/inet.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const fix_firewall_findings[] = {"master-port-blocked", "ephemeral-ports-blocked",
                                             "firewall-blocks-port", "ascend-hccl-settings", NULL};

#define MAX_NETS 8

struct nets {
	char net[MAX_NETS][NM_ADDR + 8]; /* "10.0.0.0/24" */
	int n;
	int family; /* AF_INET or AF_INET6 */
};

/* "10.1.2.11" + 24 -> "10.1.2.0/24" */
static int network_of(const char *addr, int prefix, int family, char *out, size_t len)
{
	unsigned char b[16];
	char txt[INET6_ADDRSTRLEN];
	int bytes = family == AF_INET ? 4 : 16;

	if (inet_pton(family, addr, b) != 1 || prefix < 0 || prefix > bytes * 8)
		return -1;
	for (int k = 0; k < bytes; k++) {
		int keep = prefix - k * 8;

		b[k] &= keep >= 8 ? 0xff : keep <= 0 ? 0 : (unsigned char)(0xff << (8 - keep));
	}
	inet_ntop(family, b, txt, sizeof(txt));
	snprintf(out, len, "%s/%d", txt, prefix);
	return 0;
}

/* The distinct networks of the checked nodes' data addresses, of node i's
 * family. */
static void cluster_nets(const struct fix_ctx *c, size_t i, struct nets *ns)
{
	const char *ifname, *addr;

	memset(ns, 0, sizeof(*ns));
	if (fix_data_iface(c->m, c->d, i, &ifname, &addr) < 0)
		return;
	ns->family = strchr(addr, ':') ? AF_INET6 : AF_INET;
	for (size_t j = 0; j < c->m->nnodes; j++) {
		const struct nm_node *n = &c->m->nodes[j];
		char net[NM_ADDR + 8];
		int dup = 0;

		if (!n->probed || fix_data_iface(c->m, c->d, j, &ifname, &addr) < 0 ||
		    (strchr(addr, ':') ? AF_INET6 : AF_INET) != ns->family)
			continue;
		for (size_t k = 0; k < n->naddrs; k++) {
			if (strcmp(n->addrs[k].addr, addr) != 0 ||
			    network_of(addr, n->addrs[k].prefix, ns->family, net, sizeof(net)) < 0)
				continue;
			for (int q = 0; q < ns->n; q++)
				dup |= strcmp(ns->net[q], net) == 0;
			if (!dup && ns->n < MAX_NETS)
				snprintf(ns->net[ns->n++], sizeof(ns->net[0]), "%s", net);
			break;
		}
	}
}

/* ---------------------------------------------------------------- ports */

/* The TCP ports the rules open: all (narrow 0), or MASTER_PORT and lo-hi. */
struct ports {
	int narrow;
	int master, lo, hi;
	char what[64]; /* for summaries: "TCP", "TCP to ports 29500, 40000-40999" */
};

/* Whether the check's ascend-hccl-settings finding names node i (an Ascend
 * node whose HCCL settings it verified). */
static int hccl_node(const struct fix_ctx *c, size_t i)
{
	for (size_t k = 0; k < c->d->nfindings; k++)
		if (strcmp(c->d->findings[k].id, "ascend-hccl-settings") == 0 &&
		    finding_names(&c->d->findings[k], i))
			return 1;
	return 0;
}

int fix_hccl_ports(json_t *ascend, int *lo, int *hi)
{
	const char *base =
	    json_string_value(json_object_get(json_object_get(ascend, "env"), "HCCL_IF_BASE_PORT"));
	size_t ndev = json_array_size(json_object_get(ascend, "npus"));
	char *end;
	long b = FIX_HCCL_BASE_PORT;

	if (base && *base) {
		b = strtol(base, &end, 10);
		if (*end || b < 1024 || b > 65535)
			return -1;
	}
	if (ndev == 0)
		ndev = 1;
	if (b + (long)ndev - 1 > 65535)
		return -1;
	*lo = (int)b;
	*hi = (int)(b + (long)ndev - 1);
	return 0;
}

/* pt for this run; -1 with a note when port-range is selected with a range
 * that holds MASTER_PORT, which it refuses (fix_ports.c says why). On a node
 * of ascend-hccl-settings, MASTER_PORT and HCCL's host ports only. */
static int rule_ports(const struct fix_ctx *c, size_t i, struct fix_node_plan *p, struct ports *pt)
{
	const struct fix_opts *o = c->o;

	memset(pt, 0, sizeof(*pt));
	snprintf(pt->what, sizeof(pt->what), "TCP");
	if (hccl_node(c, i)) {
		pt->narrow = 1;
		pt->master = c->m->master_port;
		if (fix_hccl_ports(c->m->nodes[i].ascend, &pt->lo, &pt->hi) < 0) {
			fix_note(p,
			         "firewall: left as is: HCCL_IF_BASE_PORT is not a port HCCL takes "
			         "(1024-65535, one port per device)");
			return -1;
		}
		if (pt->lo <= pt->master && pt->master <= pt->hi) {
			fix_note(p,
			         "firewall: left as is: MASTER_PORT %d is inside HCCL's host ports "
			         "%d-%d; give torch another --master-port",
			         pt->master, pt->lo, pt->hi);
			return -1;
		}
		if (fix_ports_selected(o))
			fix_note(p,
			         "firewall: an Ascend node: the rule opens MASTER_PORT and HCCL's "
			         "host ports, not port-range's range");
		snprintf(pt->what, sizeof(pt->what), "TCP to ports %d, %d-%d (HCCL)", pt->master,
		         pt->lo, pt->hi);
		return 0;
	}
	if (!fix_ports_selected(o))
		return 0;
	pt->narrow = 1;
	pt->master = c->m->master_port;
	fix_port_range(o, &pt->lo, &pt->hi);
	if (pt->lo <= pt->master && pt->master <= pt->hi) {
		fix_note(p,
		         "firewall: left as is: MASTER_PORT %d is inside the port range %d-%d, "
		         "which port-range refuses",
		         pt->master, pt->lo, pt->hi);
		return -1;
	}
	snprintf(pt->what, sizeof(pt->what), "TCP to ports %d, %d-%d", pt->master, pt->lo, pt->hi);
	return 0;
}

/* ---------------------------------------------------------------- nftables */

static int rule_has(json_t *expr, const char *key)
{
	size_t k;
	json_t *e;

	json_array_foreach(expr, k, e) if (json_object_get(e, key)) return 1;
	return 0;
}

/* iptables' rule spec for net after "-I INPUT" or "-D INPUT" */
static char **iptables_argv(const char *tool, const char *op, const char *ifname, const char *net,
                            const struct ports *pt, const char *comment)
{
	char dports[48];

	if (!pt->narrow)
		return fix_argv(tool, op, "INPUT", "-i", ifname, "-s", net, "-p", "tcp", "-m",
		                "comment", "--comment", comment, "-j", "ACCEPT", NULL);
	snprintf(dports, sizeof(dports), "%d,%d:%d", pt->master, pt->lo, pt->hi);
	return fix_argv(tool, op, "INPUT", "-i", ifname, "-s", net, "-p", "tcp", "-m", "multiport",
	                "--dports", dports, "-m", "comment", "--comment", comment, "-j", "ACCEPT",
	                NULL);
}

static void plan_iptables(struct fix_ctx *c, size_t i, struct fix_node_plan *p,
                          const struct nets *ns, const struct ports *pt, const char *ifname,
                          const char *tool)
{
	char comment[80], summary[256];
	/* the data interface, then lo: the node's own connections */
	const char *ifs[2] = {ifname, "lo"};

	snprintf(comment, sizeof(comment), FIX_RULE_COMMENT " %s", c->run);
	for (int q = 0; q < ns->n; q++) {
		for (int k = 0; k < 2; k++) {
			snprintf(summary, sizeof(summary),
			         "%s: accept %s from %s on %s%s, first in INPUT", tool, pt->what,
			         ns->net[q], ifs[k],
			         k ? " (the node's own connections to its addresses)" : "");
			fix_plan_cmd(p, "firewall", fix_needs_sudo(c, i), summary,
			             iptables_argv(tool, "-I", ifs[k], ns->net[q], pt, comment),
			             iptables_argv(tool, "-D", ifs[k], ns->net[q], pt, comment));
		}
	}
}

/* iptables-nft's own tables: edited with iptables, which owns them. */
static int xtables_chain(const char *family, const char *table, const char *chain)
{
	return (strcmp(family, "ip") == 0 || strcmp(family, "ip6") == 0) &&
	       strcmp(table, "filter") == 0 && strcmp(chain, "INPUT") == 0;
}

/* The right side of a rule's `tcp dport` match, NULL when it has none. */
static json_t *tcp_dport(json_t *expr)
{
	size_t k;
	json_t *e;

	json_array_foreach(expr, k, e)
	{
		json_t *m = json_object_get(e, "match");
		json_t *pl = json_object_get(json_object_get(m, "left"), "payload");

		if (strcmp(json_string_value(json_object_get(pl, "protocol")) ?: "", "tcp") == 0 &&
		    strcmp(json_string_value(json_object_get(pl, "field")) ?: "", "dport") == 0 &&
		    strcmp(json_string_value(json_object_get(m, "op")) ?: "", "!=") != 0)
			return json_object_get(m, "right");
	}
	return NULL;
}

/* Whether a rule's iifname match holds name: `iifname "lo"` or
 * `iifname { "eth0", "lo" }`. */
static int iifname_holds(json_t *expr, const char *name)
{
	size_t k, q;
	json_t *e, *v;

	json_array_foreach(expr, k, e)
	{
		json_t *m = json_object_get(e, "match"), *right = json_object_get(m, "right");

		if (strcmp(json_string_value(json_object_get(
		               json_object_get(json_object_get(m, "left"), "meta"), "key"))
		               ?: "",
		           "iifname") != 0 ||
		    strcmp(json_string_value(json_object_get(m, "op")) ?: "==", "==") != 0)
			continue;
		if (strcmp(json_string_value(right) ?: "", name) == 0)
			return 1;
		json_array_foreach(json_object_get(right, "set"), q, v)
		{
			if (strcmp(json_string_value(v) ?: "", name) == 0)
				return 1;
		}
	}
	return 0;
}

/* The last port of the element of v (a port, {"range": [a, b]}, or a
 * {"set": [...]} of those) that holds port at; -1 when none does. */
static long element_end(json_t *v, long at)
{
	json_t *r = json_object_get(v, "range"), *e;
	long end = -1;
	size_t k;

	if (json_is_integer(v))
		return json_integer_value(v) == at ? at : -1;
	if (json_array_size(r) == 2)
		return json_integer_value(json_array_get(r, 0)) <= at &&
		               at <= json_integer_value(json_array_get(r, 1))
		           ? (long)json_integer_value(json_array_get(r, 1))
		           : -1;
	json_array_foreach(json_object_get(v, "set"), k, e)
	{
		long x = element_end(e, at);

		end = x > end ? x : end;
	}
	return end;
}

/* Whether v holds every port of [lo, hi], over as many elements as it takes
 * (nft merges adjacent ones: { 39999, 40000-40999 } lists as { 39999-40999 }). */
static int dports_hold(json_t *v, long lo, long hi)
{
	for (long at = lo; at <= hi;) {
		long end = element_end(v, at);

		if (end < at)
			return 0;
		at = end + 1;
	}
	return 1;
}

static void plan_nft(struct fix_ctx *c, size_t i, struct fix_node_plan *p, const struct nets *ns,
                     const struct ports *pt, const char *ifname)
{
	json_error_t je;
	json_t *root = json_loads(c->states[i].nft_json, 0, &je), *list, *item;
	size_t k;
	int guarded = 0;
	char comment[80], set[48], ifs[NM_NAME + 16];
	/* what the rule matches after the address: any TCP, or pt's ports */
	const char *l4[3] = {"meta", "l4proto", "tcp"};

	snprintf(comment, sizeof(comment), "\"" FIX_RULE_COMMENT " %s\"", c->run);
	snprintf(ifs, sizeof(ifs), "{ %s, lo }", ifname);
	if (pt->narrow) {
		snprintf(set, sizeof(set), "{ %d, %d-%d }", pt->master, pt->lo, pt->hi);
		l4[0] = "tcp";
		l4[1] = "dport";
		l4[2] = set;
	}
	list = json_object_get(root, "nftables");
	if (!json_is_array(list)) {
		fix_note(p, "firewall: the nft ruleset could not be read (%s)", je.text);
		json_decref(root);
		return;
	}
	json_array_foreach(list, k, item)
	{
		json_t *ch = json_object_get(item, "chain"), *r2;
		const char *fam = json_string_value(json_object_get(ch, "family"));
		const char *tab = json_string_value(json_object_get(ch, "table"));
		const char *name = json_string_value(json_object_get(ch, "name"));
		const char *hook = json_string_value(json_object_get(ch, "hook"));
		const char *policy = json_string_value(json_object_get(ch, "policy"));
		int drops = policy && strcmp(policy, "drop") == 0, ours = 0, ours_all = 0;
		size_t q;

		if (!ch || !fam || !tab || !name || !hook || strcmp(hook, "input") != 0)
			continue;
		if (strcmp(fam, "inet") != 0 &&
		    strcmp(fam, ns->family == AF_INET ? "ip" : "ip6") != 0)
			continue;
		json_array_foreach(list, q, r2)
		{
			json_t *r = json_object_get(r2, "rule"), *dp;
			const char *cm = json_string_value(json_object_get(r, "comment"));

			if (!r ||
			    strcmp(json_string_value(json_object_get(r, "family")) ?: "", fam) ||
			    strcmp(json_string_value(json_object_get(r, "table")) ?: "", tab) ||
			    strcmp(json_string_value(json_object_get(r, "chain")) ?: "", name))
				continue;
			if (rule_has(json_object_get(r, "expr"), "drop") ||
			    rule_has(json_object_get(r, "expr"), "reject"))
				drops = 1;
			if (!cm || strncmp(cm, FIX_RULE_COMMENT, strlen(FIX_RULE_COMMENT)) != 0)
				continue;
			/* ours when it accepts the node's own connections too (an
			 * older run's rule for the data interface alone is not);
			 * with a port list, only when it holds those ports */
			if (!iifname_holds(json_object_get(r, "expr"), "lo"))
				continue;
			dp = tcp_dport(json_object_get(r, "expr"));
			if (!pt->narrow)
				ours = 1;
			else if (!dp)
				ours_all = 1;
			else if (dports_hold(dp, pt->master, pt->master) &&
			         dports_hold(dp, pt->lo, pt->hi))
				ours = 1;
		}
		if (!drops)
			continue;
		guarded = 1;
		if (ours) {
			fix_note(p, "firewall: %s %s %s already has clusterdoc's accept rule", fam,
			         tab, name);
			continue;
		}
		if (ours_all) {
			fix_note(
			    p,
			    "firewall: %s %s %s already has clusterdoc's accept rule for all "
			    "TCP, from a run without port-range; undo that run (clusterdoc fix "
			    "--list) to open only MASTER_PORT and the port range",
			    fam, tab, name);
			continue;
		}
		if (xtables_chain(fam, tab, name)) {
			plan_iptables(c, i, p, ns, pt, ifname,
			              strcmp(fam, "ip") == 0 ? "iptables" : "ip6tables");
			continue;
		}
		for (int n = 0; n < ns->n; n++) {
			char summary[256];

			snprintf(
			    summary, sizeof(summary),
			    "nft: accept %s from %s on %s and lo (the node's own connections), "
			    "first in chain %s %s %s",
			    pt->what, ns->net[n], ifname, fam, tab, name);
			fix_plan_cmd(p, "firewall", fix_needs_sudo(c, i), summary,
			             fix_argv("nft", "--echo", "--handle", "insert", "rule", fam,
			                      tab, name, "iifname", ifs,
			                      ns->family == AF_INET ? "ip" : "ip6", "saddr",
			                      ns->net[n], l4[0], l4[1], l4[2], "accept", "comment",
			                      comment, NULL),
			             fix_argv("nft", "delete", "rule", fam, tab, name, "handle",
			                      "{handle}", NULL));
		}
	}
	if (!guarded)
		fix_note(p, "firewall: no nftables input chain drops or rejects here; the blocking "
		            "rule is elsewhere (the check's evidence names it)");
	json_decref(root);
}

/* ---------------------------------------------------------------- ufw, firewalld */

/* Whether one line of `ufw status` allows net on "on IF", to the ports to
 * (the line's first column: "29500,40000:40999/tcp", "Anywhere"; NULL: any).
 * Plain `ufw status` prints inbound rules as "Anywhere on eth0  ALLOW
 * 10.0.0.0/24/tcp" and "29500,40000:40999/tcp on eth0  ALLOW  10.0.0.0/24". */
static int ufw_allows(const char *status, const char *to, const char *net, const char *on)
{
	for (const char *s = status; *s;) {
		size_t n = strcspn(s, "\n");
		char line[512];

		snprintf(line, sizeof(line), "%.*s", (int)n, s);
		if (strstr(line, net) && strstr(line, on) && strstr(line, "ALLOW") &&
		    !strstr(line, "(out)") &&
		    (!to || (strncmp(line, to, strlen(to)) == 0 && line[strlen(to)] == ' ')))
			return 1;
		s += n + (s[n] == '\n');
	}
	return 0;
}

static void plan_ufw(struct fix_ctx *c, size_t i, struct fix_node_plan *p, const struct nets *ns,
                     const struct ports *pt, const char *ifname)
{
	const char *status = c->states[i].ufw_status ? c->states[i].ufw_status : "";
	char dports[48], to[64];

	snprintf(dports, sizeof(dports), "%d,%d:%d", pt->master, pt->lo, pt->hi);
	snprintf(to, sizeof(to), "%s/tcp", dports);
	for (int q = 0; q < ns->n; q++) {
		char summary[256], on[96];

		snprintf(on, sizeof(on), "on %s ", ifname);
		if (ufw_allows(status, pt->narrow ? to : NULL, ns->net[q], on)) {
			if (pt->narrow)
				fix_note(p, "firewall: ufw already allows %s from %s on %s", to,
				         ns->net[q], ifname);
			else
				fix_note(p, "firewall: ufw already allows %s on %s", ns->net[q],
				         ifname);
			continue;
		}
		if (pt->narrow && ufw_allows(status, "Anywhere", ns->net[q], on)) {
			fix_note(p,
			         "firewall: ufw already allows all TCP from %s on %s; delete that "
			         "rule to open only MASTER_PORT and the port range",
			         ns->net[q], ifname);
			continue;
		}
		snprintf(summary, sizeof(summary), "ufw: allow %s in on %s from %s", pt->what,
		         ifname, ns->net[q]);
		if (!pt->narrow)
			fix_plan_cmd(p, "firewall", fix_needs_sudo(c, i), summary,
			             fix_argv("ufw", "allow", "in", "on", ifname, "from",
			                      ns->net[q], "proto", "tcp", "comment",
			                      FIX_RULE_COMMENT, NULL),
			             fix_argv("ufw", "delete", "allow", "in", "on", ifname, "from",
			                      ns->net[q], "proto", "tcp", NULL));
		else
			fix_plan_cmd(p, "firewall", fix_needs_sudo(c, i), summary,
			             fix_argv("ufw", "allow", "in", "on", ifname, "from",
			                      ns->net[q], "to", "any", "port", dports, "proto",
			                      "tcp", "comment", FIX_RULE_COMMENT, NULL),
			             fix_argv("ufw", "delete", "allow", "in", "on", ifname, "from",
			                      ns->net[q], "to", "any", "port", dports, "proto",
			                      "tcp", NULL));
	}
}

/* A rich rule for TCP from net: to all ports (port NULL) or to one port
 * element ("29500", "40000-40999"). */
static void rich_rule(char *out, size_t len, int family, const char *net, const char *port)
{
	if (port)
		snprintf(out, len,
		         "rule family=\"%s\" source address=\"%s\" port port=\"%s\" "
		         "protocol=\"tcp\" accept",
		         family == AF_INET ? "ipv4" : "ipv6", net, port);
	else
		snprintf(out, len,
		         "rule family=\"%s\" source address=\"%s\" protocol value=\"tcp\" accept",
		         family == AF_INET ? "ipv4" : "ipv6", net);
}

static void plan_firewalld(struct fix_ctx *c, size_t i, struct fix_node_plan *p,
                           const struct nets *ns, const struct ports *pt)
{
	const struct fix_node_state *st = &c->states[i];
	const char *rules = st->firewalld_rules ? st->firewalld_rules : "";
	char zone[96], master[16], range[32];
	/* a rich rule holds one port element: MASTER_PORT and the range are two */
	const char *ports[2] = {NULL, NULL};
	int nports = 1;

	if (!st->firewalld_zone[0]) {
		fix_note(p, "firewall: firewalld did not say which zone the data interface is in; "
		            "add it to a zone, then run fix again");
		return;
	}
	snprintf(zone, sizeof(zone), "--zone=%s", st->firewalld_zone);
	if (pt->narrow) {
		snprintf(master, sizeof(master), "%d", pt->master);
		snprintf(range, sizeof(range), "%d-%d", pt->lo, pt->hi);
		ports[0] = master;
		ports[1] = range;
		nports = 2;
	}
	for (int q = 0; q < ns->n; q++) {
		char rule[256], add[300], rm[300], summary[400];

		rich_rule(rule, sizeof(rule), ns->family, ns->net[q], NULL);
		if (pt->narrow && strstr(rules, rule)) {
			fix_note(p,
			         "firewall: firewalld zone %s already allows all TCP from %s (%s); "
			         "remove that rule to open only MASTER_PORT and the port range",
			         st->firewalld_zone, ns->net[q], rule);
			continue;
		}
		for (int e = 0; e < nports; e++) {
			rich_rule(rule, sizeof(rule), ns->family, ns->net[q], ports[e]);
			if (strstr(rules, rule)) {
				fix_note(p, "firewall: firewalld zone %s already has: %s",
				         st->firewalld_zone, rule);
				continue;
			}
			snprintf(add, sizeof(add), "--add-rich-rule=%s", rule);
			snprintf(rm, sizeof(rm), "--remove-rich-rule=%s", rule);
			snprintf(summary, sizeof(summary), "firewalld zone %s, now: %s",
			         st->firewalld_zone, rule);
			fix_plan_cmd(p, "firewall", fix_needs_sudo(c, i), summary,
			             fix_argv("firewall-cmd", zone, add, NULL),
			             fix_argv("firewall-cmd", zone, rm, NULL));
			snprintf(summary, sizeof(summary), "firewalld zone %s, after reboots: %s",
			         st->firewalld_zone, rule);
			fix_plan_cmd(p, "firewall", fix_needs_sudo(c, i), summary,
			             fix_argv("firewall-cmd", "--permanent", zone, add, NULL),
			             fix_argv("firewall-cmd", "--permanent", zone, rm, NULL));
		}
	}
}

void fix_firewall_plan(struct fix_ctx *c, size_t i, struct fix_node_plan *p)
{
	const struct fix_node_state *st = &c->states[i];
	const char *ifname, *addr;
	struct nets ns;
	struct ports pt;

	if (fix_data_iface(c->m, c->d, i, &ifname, &addr) < 0) {
		fix_note(p, "firewall: neither a verified data interface nor NCCL's pick is known "
		            "for this node; `clusterdoc check` says why");
		return;
	}
	cluster_nets(c, i, &ns);
	if (!ns.n) {
		fix_note(p, "firewall: the subnet of the data addresses is unknown");
		return;
	}
	if (!st->fw_gathered) {
		fix_note(p, "firewall: the firewall could not be read: %s",
		         st->nft_error[0] ? st->nft_error : "not gathered");
		return;
	}
	if (rule_ports(c, i, p, &pt) < 0)
		return;
	if (st->firewalld_running == 1)
		plan_firewalld(c, i, p, &ns, &pt);
	else if (st->ufw_active == 1)
		plan_ufw(c, i, p, &ns, &pt, ifname);
	else if (st->nft_json)
		plan_nft(c, i, p, &ns, &pt, ifname);
	else
		fix_note(p, "firewall: nft could not list the ruleset (%s); open the ports by hand",
		         st->nft_error[0] ? st->nft_error : "no nft");
}
