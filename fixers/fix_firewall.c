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
 * nft and iptables rules carry the comment "clusterdoc fix RUN", ufw's
 * "clusterdoc fix"; a chain, ufw or a zone that already allows the subnet
 * is left alone (idempotence). nft -j does not show an iptables-nft rule's
 * comment, so a second run adds a second iptables rule (its undo removes
 * that one).
 */
#include "fix_internal.h"

#include <arpa/inet.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const fix_firewall_findings[] = {"master-port-blocked", "ephemeral-ports-blocked",
                                             "firewall-blocks-port", NULL};

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

/* ---------------------------------------------------------------- nftables */

static int rule_has(json_t *expr, const char *key)
{
	size_t k;
	json_t *e;

	json_array_foreach(expr, k, e) if (json_object_get(e, key)) return 1;
	return 0;
}

static void plan_iptables(struct fix_ctx *c, size_t i, struct fix_node_plan *p,
                          const struct nets *ns, const char *ifname, const char *tool)
{
	char comment[80], summary[256];

	snprintf(comment, sizeof(comment), FIX_RULE_COMMENT " %s", c->run);
	for (int q = 0; q < ns->n; q++) {
		snprintf(summary, sizeof(summary), "%s: accept TCP from %s on %s, first in INPUT",
		         tool, ns->net[q], ifname);
		fix_plan_cmd(
		    p, "firewall", fix_needs_sudo(c, i), summary,
		    fix_argv(tool, "-I", "INPUT", "-i", ifname, "-s", ns->net[q], "-p", "tcp", "-m",
		             "comment", "--comment", comment, "-j", "ACCEPT", NULL),
		    fix_argv(tool, "-D", "INPUT", "-i", ifname, "-s", ns->net[q], "-p", "tcp", "-m",
		             "comment", "--comment", comment, "-j", "ACCEPT", NULL));
	}
}

/* iptables-nft's own tables: edited with iptables, which owns them. */
static int xtables_chain(const char *family, const char *table, const char *chain)
{
	return (strcmp(family, "ip") == 0 || strcmp(family, "ip6") == 0) &&
	       strcmp(table, "filter") == 0 && strcmp(chain, "INPUT") == 0;
}

static void plan_nft(struct fix_ctx *c, size_t i, struct fix_node_plan *p, const struct nets *ns,
                     const char *ifname)
{
	json_error_t je;
	json_t *root = json_loads(c->states[i].nft_json, 0, &je), *list, *item;
	size_t k;
	int guarded = 0;
	char comment[80];

	snprintf(comment, sizeof(comment), "\"" FIX_RULE_COMMENT " %s\"", c->run);
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
		int drops = policy && strcmp(policy, "drop") == 0, ours = 0;
		size_t q;

		if (!ch || !fam || !tab || !name || !hook || strcmp(hook, "input") != 0)
			continue;
		if (strcmp(fam, "inet") != 0 &&
		    strcmp(fam, ns->family == AF_INET ? "ip" : "ip6") != 0)
			continue;
		json_array_foreach(list, q, r2)
		{
			json_t *r = json_object_get(r2, "rule");
			const char *cm = json_string_value(json_object_get(r, "comment"));

			if (!r ||
			    strcmp(json_string_value(json_object_get(r, "family")) ?: "", fam) ||
			    strcmp(json_string_value(json_object_get(r, "table")) ?: "", tab) ||
			    strcmp(json_string_value(json_object_get(r, "chain")) ?: "", name))
				continue;
			if (rule_has(json_object_get(r, "expr"), "drop") ||
			    rule_has(json_object_get(r, "expr"), "reject"))
				drops = 1;
			if (cm && strncmp(cm, FIX_RULE_COMMENT, strlen(FIX_RULE_COMMENT)) == 0)
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
		if (xtables_chain(fam, tab, name)) {
			plan_iptables(c, i, p, ns, ifname,
			              strcmp(fam, "ip") == 0 ? "iptables" : "ip6tables");
			continue;
		}
		for (int n = 0; n < ns->n; n++) {
			char summary[256];

			snprintf(summary, sizeof(summary),
			         "nft: accept TCP from %s on %s, first in chain %s %s %s",
			         ns->net[n], ifname, fam, tab, name);
			fix_plan_cmd(p, "firewall", fix_needs_sudo(c, i), summary,
			             fix_argv("nft", "--echo", "--handle", "insert", "rule", fam,
			                      tab, name, "iifname", ifname,
			                      ns->family == AF_INET ? "ip" : "ip6", "saddr",
			                      ns->net[n], "meta", "l4proto", "tcp", "accept",
			                      "comment", comment, NULL),
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

/* Whether one line of `ufw status` allows net on "on IF". Plain `ufw
 * status` prints inbound rules as "Anywhere on eth0  ALLOW  10.0.0.0/24/tcp". */
static int ufw_allows(const char *status, const char *net, const char *on)
{
	for (const char *s = status; *s;) {
		size_t n = strcspn(s, "\n");
		char line[512];

		snprintf(line, sizeof(line), "%.*s", (int)n, s);
		if (strstr(line, net) && strstr(line, on) && strstr(line, "ALLOW") &&
		    !strstr(line, "(out)"))
			return 1;
		s += n + (s[n] == '\n');
	}
	return 0;
}

static void plan_ufw(struct fix_ctx *c, size_t i, struct fix_node_plan *p, const struct nets *ns,
                     const char *ifname)
{
	const char *status = c->states[i].ufw_status ? c->states[i].ufw_status : "";

	for (int q = 0; q < ns->n; q++) {
		char summary[256], on[96];

		snprintf(on, sizeof(on), "on %s ", ifname);
		if (ufw_allows(status, ns->net[q], on)) {
			fix_note(p, "firewall: ufw already allows %s on %s", ns->net[q], ifname);
			continue;
		}
		snprintf(summary, sizeof(summary), "ufw: allow TCP in on %s from %s", ifname,
		         ns->net[q]);
		fix_plan_cmd(p, "firewall", fix_needs_sudo(c, i), summary,
		             fix_argv("ufw", "allow", "in", "on", ifname, "from", ns->net[q],
		                      "proto", "tcp", "comment", FIX_RULE_COMMENT, NULL),
		             fix_argv("ufw", "delete", "allow", "in", "on", ifname, "from",
		                      ns->net[q], "proto", "tcp", NULL));
	}
}

static void plan_firewalld(struct fix_ctx *c, size_t i, struct fix_node_plan *p,
                           const struct nets *ns)
{
	const struct fix_node_state *st = &c->states[i];
	const char *rules = st->firewalld_rules ? st->firewalld_rules : "";
	char zone[96];

	if (!st->firewalld_zone[0]) {
		fix_note(p, "firewall: firewalld did not say which zone the data interface is in; "
		            "add it to a zone, then run fix again");
		return;
	}
	snprintf(zone, sizeof(zone), "--zone=%s", st->firewalld_zone);
	for (int q = 0; q < ns->n; q++) {
		char rule[256], add[300], rm[300], summary[400];

		snprintf(rule, sizeof(rule),
		         "rule family=\"%s\" source address=\"%s\" protocol value=\"tcp\" accept",
		         ns->family == AF_INET ? "ipv4" : "ipv6", ns->net[q]);
		if (strstr(rules, rule)) {
			fix_note(p, "firewall: firewalld zone %s already has: %s",
			         st->firewalld_zone, rule);
			continue;
		}
		snprintf(add, sizeof(add), "--add-rich-rule=%s", rule);
		snprintf(rm, sizeof(rm), "--remove-rich-rule=%s", rule);
		snprintf(summary, sizeof(summary), "firewalld zone %s, now: %s", st->firewalld_zone,
		         rule);
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

void fix_firewall_plan(struct fix_ctx *c, size_t i, struct fix_node_plan *p)
{
	const struct fix_node_state *st = &c->states[i];
	const char *ifname, *addr;
	struct nets ns;

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
	if (st->firewalld_running == 1)
		plan_firewalld(c, i, p, &ns);
	else if (st->ufw_active == 1)
		plan_ufw(c, i, p, &ns, ifname);
	else if (st->nft_json)
		plan_nft(c, i, p, &ns, ifname);
	else
		fix_note(p, "firewall: nft could not list the ruleset (%s); open the ports by hand",
		         st->nft_error[0] ? st->nft_error : "no nft");
}
