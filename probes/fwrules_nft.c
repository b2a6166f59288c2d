/* SPDX-License-Identifier: MIT */
/*
 * fwrules_nft.c - the input-path TCP drop/reject rules in `nft -j list
 * ruleset` JSON (fwrules_from_nft_json; see fwrules.h).
 */
#include "fwrules.h"
#include "fwrules_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* nesting followed inside nft values (sets of ranges, wrapped elements) */
#define NFT_VALUE_DEPTH 4

static const char *str_member(json_t *obj, const char *key)
{
	const char *s = json_string_value(json_object_get(obj, key));

	return s ? s : "";
}

/* The one statement an nft expression object holds: {"drop": null} ->
 * "drop", its value in *value. */
static const char *stmt_kind(json_t *stmt, json_t **value)
{
	const char *key;
	json_t *v;

	*value = NULL;
	if (!json_is_object(stmt) || json_object_size(stmt) != 1)
		return "";
	json_object_foreach(stmt, key, v)
	{
		*value = v;
		return key;
	}
	return "";
}

static int family_is_ip(const char *family)
{
	return strcmp(family, "ip") == 0 || strcmp(family, "ip6") == 0 ||
	       strcmp(family, "inet") == 0;
}

/* A base chain on the input hook, which is where a listener's packets go. */
struct input_chain {
	const char *family, *table, *name;
	int policy_drop;
};

struct nft_view {
	json_t *items; /* the "nftables" array */
	struct input_chain *chains;
	size_t nchains;
};

static void collect_input_chains(struct nft_view *v)
{
	size_t i;
	json_t *item, *c;

	json_array_foreach(v->items, i, item)
	{
		c = json_object_get(item, "chain");
		if (!json_is_object(c) || strcmp(str_member(c, "hook"), "input") != 0 ||
		    !family_is_ip(str_member(c, "family")))
			continue;
		v->chains = cd_realloc(v->chains, (v->nchains + 1) * sizeof(*v->chains));
		v->chains[v->nchains++] = (struct input_chain){
		    .family = str_member(c, "family"),
		    .table = str_member(c, "table"),
		    .name = str_member(c, "name"),
		    .policy_drop = strcmp(str_member(c, "policy"), "drop") == 0,
		};
	}
}

static const struct input_chain *rule_input_chain(const struct nft_view *v, json_t *rule)
{
	for (size_t i = 0; i < v->nchains; i++) {
		const struct input_chain *c = &v->chains[i];

		if (strcmp(c->family, str_member(rule, "family")) == 0 &&
		    strcmp(c->table, str_member(rule, "table")) == 0 &&
		    strcmp(c->name, str_member(rule, "chain")) == 0)
			return c;
	}
	return NULL;
}

static int is_tcp_dport(json_t *left)
{
	json_t *p = json_object_get(left, "payload");

	return strcmp(str_member(p, "protocol"), "tcp") == 0 &&
	       strcmp(str_member(p, "field"), "dport") == 0;
}

static int value_is_tcp(json_t *v)
{
	return (json_is_string(v) && strcmp(json_string_value(v), "tcp") == 0) ||
	       (json_is_integer(v) && json_integer_value(v) == 6);
}

/* "meta l4proto tcp", "ip protocol tcp", "ip6 nexthdr tcp": they narrow a
 * rule to TCP, which is all this module looks at anyway. */
static int match_is_tcp_only(json_t *match)
{
	json_t *left = json_object_get(match, "left"), *p = json_object_get(left, "payload");
	const char *op = str_member(match, "op");
	const char *field = str_member(p, "field");

	if (strcmp(op, "==") != 0 || !value_is_tcp(json_object_get(match, "right")))
		return 0;
	if (strcmp(str_member(json_object_get(left, "meta"), "key"), "l4proto") == 0)
		return 1;
	return strcmp(field, "protocol") == 0 || strcmp(field, "nexthdr") == 0;
}

/* What a rule's expressions add up to for this module. */
struct nft_rule_shape {
	const char *verdict; /* "drop", "reject", or NULL (any other or none) */
	json_t *dport;       /* the right side of the first "tcp dport ==/in" */
	int conditions;      /* matches other than that one and TCP-only ones */
};

static void verdict_of_stmt(const char *kind, json_t *value, struct nft_rule_shape *s)
{
	static const char *const others[] = {"accept", "jump",     "goto",
	                                     "return", "continue", "queue"};

	if (strcmp(kind, "drop") == 0 || strcmp(kind, "reject") == 0) {
		s->verdict = kind;
		return;
	}
	/* iptables-nft keeps its REJECT target as an xtables extension */
	if (strcmp(kind, "xt") == 0 && strcmp(str_member(value, "type"), "target") == 0) {
		s->verdict = strcmp(str_member(value, "name"), "REJECT") == 0 ? "reject" : NULL;
		return;
	}
	for (size_t i = 0; i < CD_ARRAY_LEN(others); i++)
		if (strcmp(kind, others[i]) == 0)
			s->verdict = NULL;
}

static void shape_of_rule(json_t *expr, struct nft_rule_shape *s)
{
	size_t i;
	json_t *stmt, *value;

	memset(s, 0, sizeof(*s));
	json_array_foreach(expr, i, stmt)
	{
		const char *kind = stmt_kind(stmt, &value);

		if (strcmp(kind, "match") == 0) {
			const char *op = str_member(value, "op");
			int positive = strcmp(op, "==") == 0 || strcmp(op, "in") == 0;

			if (positive && is_tcp_dport(json_object_get(value, "left")) && !s->dport)
				s->dport = json_object_get(value, "right");
			else if (!match_is_tcp_only(value))
				s->conditions++;
		} else if (strcmp(kind, "xt") == 0 &&
		           strcmp(str_member(value, "type"), "match") == 0) {
			/* an iptables match nft cannot show (multiport, conntrack);
			 * a comment matches every packet */
			s->conditions += strcmp(str_member(value, "name"), "comment") != 0;
		} else {
			verdict_of_stmt(kind, value, s);
		}
	}
}

/* The elements of the named set "@name" in the rule's table, or NULL. */
static json_t *named_set_elems(const struct nft_view *v, json_t *rule, const char *ref)
{
	size_t i;
	json_t *item, *set;

	json_array_foreach(v->items, i, item)
	{
		set = json_object_get(item, "set");
		if (json_is_object(set) && strcmp(str_member(set, "name"), ref + 1) == 0 &&
		    strcmp(str_member(set, "family"), str_member(rule, "family")) == 0 &&
		    strcmp(str_member(set, "table"), str_member(rule, "table")) == 0)
			return json_object_get(set, "elem");
	}
	return NULL;
}

static int port_of(json_t *v, int *port)
{
	json_int_t p;

	if (!json_is_integer(v))
		return 0;
	p = json_integer_value(v);
	if (p < 0 || p > PORT_MAX)
		return 0;
	*port = (int)p;
	return 1;
}

struct port_sink {
	struct nm_fwrule **rules;
	size_t *n;
	const char *verdict, *tool, *text;
};

/* Every port or range a dport value covers: 22, {"range": [a, b]},
 * {"set": [...]}, "@named_set", {"elem": {"val": ...}} (set elements with
 * timeouts or counters). */
static void add_port_value(const struct nft_view *v, json_t *rule, json_t *value, int depth,
                           const struct port_sink *out)
{
	json_t *range = json_object_get(value, "range"), *elems = NULL, *e;
	int lo, hi;
	size_t i;

	if (depth > NFT_VALUE_DEPTH)
		return;
	if (port_of(value, &lo)) {
		fwrules_rule_add(out->rules, out->n, lo, lo, out->verdict, out->tool, out->text);
		return;
	}
	if (json_array_size(range) == 2 && port_of(json_array_get(range, 0), &lo) &&
	    port_of(json_array_get(range, 1), &hi)) {
		fwrules_rule_add(out->rules, out->n, lo, hi, out->verdict, out->tool, out->text);
		return;
	}
	if (json_is_object(json_object_get(value, "elem"))) {
		add_port_value(v, rule, json_object_get(json_object_get(value, "elem"), "val"),
		               depth + 1, out);
		return;
	}
	if (json_is_string(value) && json_string_value(value)[0] == '@')
		elems = named_set_elems(v, rule, json_string_value(value));
	else
		elems = json_is_array(value) ? value : json_object_get(value, "set");
	json_array_foreach(elems, i, e) add_port_value(v, rule, e, depth + 1, out);
}

static void render_value(char *buf, size_t len, json_t *v, int depth);

static void render_list(char *buf, size_t len, json_t *arr, const char *open, const char *sep,
                        const char *close, int depth)
{
	size_t i;
	json_t *e;

	cd_appendf(buf, len, "%s", open);
	json_array_foreach(arr, i, e)
	{
		cd_appendf(buf, len, "%s", i ? sep : "");
		render_value(buf, len, e, depth + 1);
	}
	cd_appendf(buf, len, "%s", close);
}

/* A value as nft prints it: 22, "lo", 40000-50000, { 22, 29500 },
 * 10.0.0.0/8, established,related. */
static void render_value(char *buf, size_t len, json_t *v, int depth)
{
	json_t *x;

	if (depth > NFT_VALUE_DEPTH)
		cd_appendf(buf, len, "...");
	else if (json_is_integer(v))
		cd_appendf(buf, len, "%lld", (long long)json_integer_value(v));
	else if (json_is_string(v))
		cd_appendf(buf, len, "%s", json_string_value(v));
	else if (json_is_array(v))
		render_list(buf, len, v, "", ",", "", depth);
	else if ((x = json_object_get(v, "range")) && json_array_size(x) == 2)
		render_list(buf, len, x, "", "-", "", depth);
	else if ((x = json_object_get(v, "set")))
		render_list(buf, len, x, "{ ", ", ", " }", depth);
	else if ((x = json_object_get(v, "prefix")))
		cd_appendf(buf, len, "%s/%lld", str_member(x, "addr"),
		           (long long)json_integer_value(json_object_get(x, "len")));
	else
		cd_appendf(buf, len, "?");
}

static void render_left(char *buf, size_t len, json_t *left)
{
	const char *kind;
	json_t *value;

	kind = stmt_kind(left, &value);
	if (strcmp(kind, "payload") == 0)
		cd_appendf(buf, len, "%s %s", str_member(value, "protocol"),
		           str_member(value, "field"));
	else if (strcmp(kind, "ct") == 0)
		cd_appendf(buf, len, "ct %s", str_member(value, "key"));
	else if (strcmp(kind, "meta") == 0 && strncmp(str_member(value, "key"), "iif", 3) != 0 &&
	         strncmp(str_member(value, "key"), "oif", 3) != 0)
		cd_appendf(buf, len, "meta %s", str_member(value, "key"));
	else if (strcmp(kind, "meta") == 0) /* nft prints iif, iifname, oif... bare */
		cd_appendf(buf, len, "%s", str_member(value, "key"));
	else
		cd_appendf(buf, len, "%s", kind[0] ? kind : "?");
}

static void render_stmt(char *buf, size_t len, json_t *stmt)
{
	json_t *value;
	const char *kind = stmt_kind(stmt, &value);
	const char *op;

	if (strcmp(kind, "match") == 0) {
		op = str_member(value, "op");
		render_left(buf, len, json_object_get(value, "left"));
		if (strcmp(op, "==") != 0 && strcmp(op, "in") != 0)
			cd_appendf(buf, len, " %s", op);
		cd_appendf(buf, len, " ");
		render_value(buf, len, json_object_get(value, "right"), 0);
	} else if (strcmp(kind, "xt") == 0) {
		cd_appendf(buf, len, "xt %s %s", str_member(value, "type"),
		           str_member(value, "name"));
	} else if (strcmp(kind, "jump") == 0 || strcmp(kind, "goto") == 0) {
		cd_appendf(buf, len, "%s %s", kind, str_member(value, "target"));
	} else {
		cd_appendf(buf, len, "%s", kind[0] ? kind : "?");
	}
}

/* "inet filter input: tcp dport { 22, 29500 } drop" */
static void render_rule(char *buf, size_t len, json_t *rule)
{
	json_t *expr = json_object_get(rule, "expr"), *stmt;
	size_t i;

	buf[0] = '\0';
	cd_appendf(buf, len, "%s %s %s:", str_member(rule, "family"), str_member(rule, "table"),
	           str_member(rule, "chain"));
	json_array_foreach(expr, i, stmt)
	{
		cd_appendf(buf, len, " ");
		render_stmt(buf, len, stmt);
	}
}

static void add_nft_rule(const struct nft_view *v, json_t *rule, struct nm_fwrule **rules,
                         size_t *n)
{
	struct nft_rule_shape s;
	char text[sizeof((*rules)->text)];
	struct port_sink out = {rules, n, NULL, "nft", text};

	shape_of_rule(json_object_get(rule, "expr"), &s);
	if (!s.verdict || (!s.dport && s.conditions > 0))
		return;
	render_rule(text, sizeof(text), rule);
	out.verdict = s.verdict;
	/* no condition at all: it stops every port, like a drop policy */
	if (!s.dport)
		fwrules_rule_add(rules, n, 0, PORT_MAX, s.verdict, "nft", text);
	else
		add_port_value(v, rule, s.dport, 0, &out);
}

static void add_nft_policies(const struct nft_view *v, struct nm_fwrule **rules, size_t *n)
{
	char text[sizeof((*rules)->text)];

	for (size_t i = 0; i < v->nchains; i++) {
		const struct input_chain *c = &v->chains[i];

		if (!c->policy_drop)
			continue;
		snprintf(text, sizeof(text), "%s %s %s: policy drop", c->family, c->table, c->name);
		fwrules_rule_add(rules, n, 0, PORT_MAX, "drop", "nft", text);
	}
}

json_t *fwrules_nft_items(json_t *ruleset)
{
	return json_is_array(ruleset) ? ruleset : json_object_get(ruleset, "nftables");
}

void fwrules_from_nft_json(json_t *ruleset, struct nm_fwrule **rules, size_t *n)
{
	struct nft_view v = {.items = fwrules_nft_items(ruleset)};
	size_t i;
	json_t *item, *rule;

	if (!json_is_array(v.items))
		return;
	collect_input_chains(&v);
	json_array_foreach(v.items, i, item)
	{
		rule = json_object_get(item, "rule");
		if (json_is_object(rule) && rule_input_chain(&v, rule))
			add_nft_rule(&v, rule, rules, n);
	}
	add_nft_policies(&v, rules, n);
	free(v.chains);
}

size_t fwrules_nft_table_count(json_t *ruleset)
{
	json_t *items = fwrules_nft_items(ruleset), *item;
	size_t i, count = 0;

	json_array_foreach(items, i, item) count += json_is_object(json_object_get(item, "table"));
	return count;
}
