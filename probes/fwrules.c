/* SPDX-License-Identifier: MIT */
/*
 * fwrules.c - the input-path TCP drop/reject rules in a node's firewall
 * evidence: `nft -j list ruleset` JSON and iptables-save text (fwrules.h).
 * This file reads the whole firewall object (fwrules_collect) and holds what
 * the two readers share; nft's JSON is read in fwrules_nft.c, iptables-save
 * text in fwrules_iptables.c.
 *
 * This reads evidence, it does not emulate netfilter: a rule is reported
 * when it would drop or reject some TCP destination ports on input, in the
 * order the tool lists it, followed by its chain's drop policy.
 */
#include "fwrules.h"
#include "fwrules_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fwrules_rule_add(struct nm_fwrule **rules, size_t *n, int lo, int hi, const char *verdict,
                      const char *tool, const char *text)
{
	struct nm_fwrule *r;

	if (lo < 0 || hi > PORT_MAX || lo > hi)
		return;
	*rules = cd_realloc(*rules, (*n + 1) * sizeof(**rules));
	r = &(*rules)[(*n)++];
	memset(r, 0, sizeof(*r));
	r->port_lo = lo;
	r->port_hi = hi;
	snprintf(r->verdict, sizeof(r->verdict), "%s", verdict);
	snprintf(r->tool, sizeof(r->tool), "%s", tool);
	snprintf(r->text, sizeof(r->text), "%s", text);
}

const struct nm_fwrule *fwrules_match(const struct nm_fwrule *rules, size_t n, int port)
{
	for (size_t i = 0; i < n; i++)
		if (rules[i].port_lo <= port && port <= rules[i].port_hi)
			return &rules[i];
	return NULL;
}

/*
 * The whole firewall object
 */

/* Rules as the tool lists them: entries of one rule (a set) share a text. */
static size_t distinct_rules(const struct nm_fwrule *rules, size_t from, size_t to)
{
	size_t count = 0;

	for (size_t i = from; i < to; i++)
		count += i == from || strcmp(rules[i].text, rules[i - 1].text) != 0;
	return count;
}

static void summary_part(char *summary, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void summary_part(char *summary, size_t len, const char *fmt, ...)
{
	size_t used = strnlen(summary, len);
	va_list ap;

	if (used)
		cd_appendf(summary, len, "; ");
	used = strnlen(summary, len);
	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(summary + used, len - used, fmt, ap);
	va_end(ap);
}

static const char *plural(size_t n)
{
	return n == 1 ? "" : "s";
}

static int nft_read(json_t *firewall, struct nm_fwrule **rules, size_t *n, char *summary,
                    size_t len)
{
	json_t *nft = json_object_get(firewall, "nft");
	json_t *ruleset = json_object_get(nft, "ruleset");
	size_t before = *n, tables;

	if (!json_is_object(nft))
		return 0;
	if (!json_is_array(fwrules_nft_items(ruleset))) {
		summary_part(summary, len, "nftables: %s",
		             json_is_string(json_object_get(nft, "error"))
		                 ? json_string_value(json_object_get(nft, "error"))
		                 : "unreadable");
		return 0;
	}
	fwrules_from_nft_json(ruleset, rules, n);
	tables = fwrules_nft_table_count(ruleset);
	summary_part(summary, len, "nftables: %zu table%s, %zu input drop rule%s", tables,
	             plural(tables), distinct_rules(*rules, before, *n),
	             plural(distinct_rules(*rules, before, *n)));
	return 1;
}

static int same_ports_and_verdict(const struct nm_fwrule *a, const struct nm_fwrule *b)
{
	return a->port_lo == b->port_lo && a->port_hi == b->port_hi &&
	       strcmp(a->verdict, b->verdict) == 0;
}

static int already_listed(const struct nm_fwrule *rules, size_t n, const struct nm_fwrule *r)
{
	for (size_t i = 0; i < n; i++)
		if (same_ports_and_verdict(&rules[i], r))
			return 1;
	return 0;
}

/* iptables-save of the nf_tables backend lists rules nft already showed;
 * only what nft could not show (xt matches such as multiport) is new. */
static void ipt_read(json_t *firewall, const char *tool, int nft_seen, struct nm_fwrule **rules,
                     size_t *n, char *summary, size_t len)
{
	json_t *obj = json_object_get(firewall, tool);
	const char *text = json_string_value(json_object_get(obj, "rules"));
	int nf_tables = text && strstr(text, "(nf_tables)") != NULL;
	struct nm_fwrule *found = NULL;
	size_t nfound = 0, kept_from = *n;

	if (!text)
		return;
	fwrules_from_iptables_save(text, tool, &found, &nfound);
	for (size_t i = 0; i < nfound; i++)
		if (!(nf_tables && nft_seen && already_listed(*rules, kept_from, &found[i])))
			fwrules_rule_add(rules, n, found[i].port_lo, found[i].port_hi,
			                 found[i].verdict, found[i].tool, found[i].text);
	if (strchr(text, '*'))
		summary_part(summary, len, "%s%s: %zu input drop rule%s%s", tool,
		             nf_tables ? " (nf_tables)" : "", distinct_rules(found, 0, nfound),
		             plural(distinct_rules(found, 0, nfound)),
		             json_is_true(json_object_get(obj, "truncated")) ? " (truncated)" : "");
	free(found);
}

void fwrules_collect(json_t *firewall, struct nm_fwrule **rules, size_t *n, char *summary,
                     size_t summary_len)
{
	const char *ufw = json_string_value(json_object_get(firewall, "ufw"));
	const char *firewalld = json_string_value(json_object_get(firewall, "firewalld"));
	int nft_seen;

	if (summary_len)
		summary[0] = '\0';
	if (!json_is_object(firewall))
		return;
	nft_seen = nft_read(firewall, rules, n, summary, summary_len);
	ipt_read(firewall, "iptables", nft_seen, rules, n, summary, summary_len);
	ipt_read(firewall, "ip6tables", nft_seen, rules, n, summary, summary_len);
	if (ufw)
		summary_part(summary, summary_len, "ufw %s", ufw);
	if (firewalld)
		summary_part(summary, summary_len, "firewalld %s", firewalld);
}
