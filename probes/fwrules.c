/*
 * fwrules.c - the input-path TCP drop/reject rules in a node's firewall
 * evidence: `nft -j list ruleset` JSON and iptables-save text (fwrules.h).
 *
 * This reads evidence, it does not emulate netfilter: a rule is reported
 * when it would drop or reject some TCP destination ports on input, in the
 * order the tool lists it, followed by its chain's drop policy.
 */
#include "fwrules.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PORT_MAX 65535
/* nesting followed inside nft values (sets of ranges, wrapped elements) */
#define NFT_VALUE_DEPTH 4

static void text_append(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Append to a NUL-terminated buffer, truncating silently (evidence text). */
static void text_append(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strnlen(buf, len);
	va_list ap;

	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

static void rule_add(struct nm_fwrule **rules, size_t *n, int lo, int hi, const char *verdict,
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
 * nftables JSON
 */

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
		rule_add(out->rules, out->n, lo, lo, out->verdict, out->tool, out->text);
		return;
	}
	if (json_array_size(range) == 2 && port_of(json_array_get(range, 0), &lo) &&
	    port_of(json_array_get(range, 1), &hi)) {
		rule_add(out->rules, out->n, lo, hi, out->verdict, out->tool, out->text);
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

	text_append(buf, len, "%s", open);
	json_array_foreach(arr, i, e)
	{
		text_append(buf, len, "%s", i ? sep : "");
		render_value(buf, len, e, depth + 1);
	}
	text_append(buf, len, "%s", close);
}

/* A value as nft prints it: 22, "lo", 40000-50000, { 22, 29500 },
 * 10.0.0.0/8, established,related. */
static void render_value(char *buf, size_t len, json_t *v, int depth)
{
	json_t *x;

	if (depth > NFT_VALUE_DEPTH)
		text_append(buf, len, "...");
	else if (json_is_integer(v))
		text_append(buf, len, "%lld", (long long)json_integer_value(v));
	else if (json_is_string(v))
		text_append(buf, len, "%s", json_string_value(v));
	else if (json_is_array(v))
		render_list(buf, len, v, "", ",", "", depth);
	else if ((x = json_object_get(v, "range")) && json_array_size(x) == 2)
		render_list(buf, len, x, "", "-", "", depth);
	else if ((x = json_object_get(v, "set")))
		render_list(buf, len, x, "{ ", ", ", " }", depth);
	else if ((x = json_object_get(v, "prefix")))
		text_append(buf, len, "%s/%lld", str_member(x, "addr"),
		            (long long)json_integer_value(json_object_get(x, "len")));
	else
		text_append(buf, len, "?");
}

static void render_left(char *buf, size_t len, json_t *left)
{
	const char *kind;
	json_t *value;

	kind = stmt_kind(left, &value);
	if (strcmp(kind, "payload") == 0)
		text_append(buf, len, "%s %s", str_member(value, "protocol"),
		            str_member(value, "field"));
	else if (strcmp(kind, "ct") == 0)
		text_append(buf, len, "ct %s", str_member(value, "key"));
	else if (strcmp(kind, "meta") == 0 && strncmp(str_member(value, "key"), "iif", 3) != 0 &&
	         strncmp(str_member(value, "key"), "oif", 3) != 0)
		text_append(buf, len, "meta %s", str_member(value, "key"));
	else if (strcmp(kind, "meta") == 0) /* nft prints iif, iifname, oif... bare */
		text_append(buf, len, "%s", str_member(value, "key"));
	else
		text_append(buf, len, "%s", kind[0] ? kind : "?");
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
			text_append(buf, len, " %s", op);
		text_append(buf, len, " ");
		render_value(buf, len, json_object_get(value, "right"), 0);
	} else if (strcmp(kind, "xt") == 0) {
		text_append(buf, len, "xt %s %s", str_member(value, "type"),
		            str_member(value, "name"));
	} else if (strcmp(kind, "jump") == 0 || strcmp(kind, "goto") == 0) {
		text_append(buf, len, "%s %s", kind, str_member(value, "target"));
	} else {
		text_append(buf, len, "%s", kind[0] ? kind : "?");
	}
}

/* "inet filter input: tcp dport { 22, 29500 } drop" */
static void render_rule(char *buf, size_t len, json_t *rule)
{
	json_t *expr = json_object_get(rule, "expr"), *stmt;
	size_t i;

	buf[0] = '\0';
	text_append(buf, len, "%s %s %s:", str_member(rule, "family"), str_member(rule, "table"),
	            str_member(rule, "chain"));
	json_array_foreach(expr, i, stmt)
	{
		text_append(buf, len, " ");
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
		rule_add(rules, n, 0, PORT_MAX, s.verdict, "nft", text);
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
		rule_add(rules, n, 0, PORT_MAX, "drop", "nft", text);
	}
}

static json_t *nft_items(json_t *ruleset)
{
	return json_is_array(ruleset) ? ruleset : json_object_get(ruleset, "nftables");
}

void fwrules_from_nft_json(json_t *ruleset, struct nm_fwrule **rules, size_t *n)
{
	struct nft_view v = {.items = nft_items(ruleset)};
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

static size_t nft_table_count(json_t *ruleset)
{
	json_t *items = nft_items(ruleset), *item;
	size_t i, count = 0;

	json_array_foreach(items, i, item) count += json_is_object(json_object_get(item, "table"));
	return count;
}

/*
 * iptables-save text
 */

#define IPT_TOKEN 160

/* The next word of an iptables-save line. Quoted words ("with spaces",
 * \" and \\ escaped) are unquoted. NULL at the end of the line. */
static const char *next_word(const char *p, char *word, size_t len)
{
	size_t n = 0;
	int quoted = 0;

	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p)
		return NULL;
	for (; *p && (quoted || (*p != ' ' && *p != '\t')); p++) {
		if (*p == '"') {
			quoted = !quoted;
			continue;
		}
		if (quoted && *p == '\\' && (p[1] == '"' || p[1] == '\\'))
			p++;
		if (n + 1 < len)
			word[n++] = *p;
	}
	word[n] = '\0';
	return p;
}

/* What one "-A INPUT ..." line adds up to. */
struct ipt_rule {
	int input;             /* -A INPUT */
	int tcp;               /* -p tcp */
	int conditions;        /* any other match or option */
	int negated_ports;     /* ! --dport */
	char ports[IPT_TOKEN]; /* "29500", "40000:50000", "22,29500,1000:2000" */
	char target[IPT_TOKEN];
};

/* Options whose value says nothing about which packets match. */
static int option_is_neutral(const char *opt)
{
	static const char *const neutral[] = {"--comment", "--reject-with", "-c", "--set-counters"};

	for (size_t i = 0; i < CD_ARRAY_LEN(neutral); i++)
		if (strcmp(opt, neutral[i]) == 0)
			return 1;
	return 0;
}

static int option_is_dports(const char *opt)
{
	static const char *const names[] = {"--dport", "--destination-port", "--dports",
	                                    "--destination-ports", "--ports"};

	for (size_t i = 0; i < CD_ARRAY_LEN(names); i++)
		if (strcmp(opt, names[i]) == 0)
			return 1;
	return 0;
}

/* Read one option and its value (when it takes one we know of). */
static const char *ipt_option(const char *p, const char *opt, int negate, struct ipt_rule *r)
{
	char value[IPT_TOKEN] = "";

	if (strcmp(opt, "-A") == 0 || strcmp(opt, "--append") == 0) {
		p = next_word(p, value, sizeof(value));
		r->input = strcmp(value, "INPUT") == 0;
	} else if (strcmp(opt, "-p") == 0 || strcmp(opt, "--protocol") == 0) {
		p = next_word(p, value, sizeof(value));
		r->tcp = !negate && (strcmp(value, "tcp") == 0 || strcmp(value, "6") == 0);
		r->conditions += !r->tcp;
	} else if (strcmp(opt, "-m") == 0 || strcmp(opt, "--match") == 0) {
		p = next_word(p, value, sizeof(value));
		/* tcp and multiport carry the ports; a comment matches all */
		r->conditions += strcmp(value, "tcp") != 0 && strcmp(value, "multiport") != 0 &&
		                 strcmp(value, "comment") != 0;
	} else if (option_is_dports(opt)) {
		p = next_word(p, r->ports, sizeof(r->ports));
		r->negated_ports |= negate;
	} else if (strcmp(opt, "-j") == 0 || strcmp(opt, "--jump") == 0) {
		p = next_word(p, r->target, sizeof(r->target));
	} else if (strcmp(opt, "-g") == 0 || strcmp(opt, "--goto") == 0) {
		p = next_word(p, value, sizeof(value)); /* continues in another chain */
		r->target[0] = '\0';
	} else if (option_is_neutral(opt)) {
		p = next_word(p, value, sizeof(value));
	} else {
		r->conditions++;
	}
	return p;
}

static void parse_ipt_rule(const char *line, struct ipt_rule *r)
{
	char word[IPT_TOKEN];
	const char *p = line;
	int negate = 0;

	memset(r, 0, sizeof(*r));
	while (p && (p = next_word(p, word, sizeof(word)))) {
		if (strcmp(word, "!") == 0) {
			negate = 1;
			continue;
		}
		if (word[0] == '-')
			p = ipt_option(p, word, negate, r);
		negate = 0;
	}
}

/* "N", "N:M", ":M", "N:" */
static int parse_port_range(const char *s, size_t len, int *lo, int *hi)
{
	char buf[16], *colon, *end;
	long a = 0, b = PORT_MAX;

	if (len == 0 || len >= sizeof(buf))
		return 0;
	memcpy(buf, s, len);
	buf[len] = '\0';
	colon = strchr(buf, ':');
	if (colon)
		*colon = '\0';
	if (buf[0] && ((a = strtol(buf, &end, 10)) < 0 || *end || a > PORT_MAX))
		return 0;
	if (!colon)
		b = a;
	else if (colon[1] && ((b = strtol(colon + 1, &end, 10)) < 0 || *end || b > PORT_MAX))
		return 0;
	if (!buf[0] && (!colon || !colon[1]))
		return 0;
	*lo = (int)a;
	*hi = (int)b;
	return 1;
}

static void add_ipt_ports(const char *ports, const char *verdict, const char *tool,
                          const char *text, struct nm_fwrule **rules, size_t *n)
{
	const char *p = ports;
	int lo, hi;

	while (*p) {
		size_t len = strcspn(p, ",");

		if (parse_port_range(p, len, &lo, &hi))
			rule_add(rules, n, lo, hi, verdict, tool, text);
		p += len;
		if (*p == ',')
			p++;
	}
}

/* One "-A ..." line, with its "[packets:bytes] " prefix (-c) skipped. */
static void add_ipt_line(const char *line, const char *tool, struct nm_fwrule **rules, size_t *n)
{
	struct ipt_rule r;
	const char *verdict;

	if (line[0] == '[')
		line += strcspn(line, "]") + (strchr(line, ']') ? 1 : 0);
	line += strspn(line, " ");
	parse_ipt_rule(line, &r);
	if (!r.input)
		return;
	if (strcmp(r.target, "DROP") == 0)
		verdict = "drop";
	else if (strcmp(r.target, "REJECT") == 0)
		verdict = "reject";
	else
		return;
	if (r.ports[0] && r.tcp && !r.negated_ports)
		add_ipt_ports(r.ports, verdict, tool, line, rules, n);
	else if (!r.ports[0] && r.conditions == 0)
		rule_add(rules, n, 0, PORT_MAX, verdict, tool, line); /* every port */
}

void fwrules_from_iptables_save(const char *text, const char *tool, struct nm_fwrule **rules,
                                size_t *n)
{
	const char *p = text;
	int policy_drop = 0;
	char line[1024];

	while (p && *p) {
		size_t len = strcspn(p, "\n");

		snprintf(line, sizeof(line), "%.*s",
		         (int)(len < sizeof(line) ? len : sizeof(line) - 1), p);
		p += len + (p[len] == '\n');
		line[strcspn(line, "\r")] = '\0';
		if (strncmp(line, ":INPUT DROP", 11) == 0 && (line[11] == ' ' || !line[11]))
			policy_drop = 1;
		else if (line[0] == '-' || line[0] == '[')
			add_ipt_line(line, tool, rules, n);
		else if (strcmp(line, "COMMIT") == 0 && policy_drop) {
			/* after the table's rules, as the kernel applies it */
			rule_add(rules, n, 0, PORT_MAX, "drop", tool, "-P INPUT DROP");
			policy_drop = 0;
		}
	}
	if (policy_drop) /* a capture cut before COMMIT */
		rule_add(rules, n, 0, PORT_MAX, "drop", tool, "-P INPUT DROP");
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
		text_append(summary, len, "; ");
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
	if (!json_is_array(nft_items(ruleset))) {
		summary_part(summary, len, "nftables: %s",
		             json_is_string(json_object_get(nft, "error"))
		                 ? json_string_value(json_object_get(nft, "error"))
		                 : "unreadable");
		return 0;
	}
	fwrules_from_nft_json(ruleset, rules, n);
	tables = nft_table_count(ruleset);
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
			rule_add(rules, n, found[i].port_lo, found[i].port_hi, found[i].verdict,
			         found[i].tool, found[i].text);
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
