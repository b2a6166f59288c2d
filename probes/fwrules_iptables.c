/* SPDX-License-Identifier: MIT */
/*
 * fwrules_iptables.c - the input-path TCP drop/reject rules in iptables-save
 * text (fwrules_from_iptables_save; see fwrules.h).
 */
#include "fwrules.h"
#include "fwrules_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
			fwrules_rule_add(rules, n, lo, hi, verdict, tool, text);
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
		fwrules_rule_add(rules, n, 0, PORT_MAX, verdict, tool, line); /* every port */
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
			fwrules_rule_add(rules, n, 0, PORT_MAX, "drop", tool, "-P INPUT DROP");
			policy_drop = 0;
		}
	}
	if (policy_drop) /* a capture cut before COMMIT */
		fwrules_rule_add(rules, n, 0, PORT_MAX, "drop", tool, "-P INPUT DROP");
}
