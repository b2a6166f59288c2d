/* SPDX-License-Identifier: MIT */
/*
 * test_fwrules.c - the firewall evidence reader (probes/fwrules.h) on
 * output captured from the real tools, in a throwaway network namespace
 * (tests/fixtures/firewall/):
 *   nft-inet-filter.json         nft 1.0.6 `nft -j list ruleset` of a native
 *                                ruleset: single ports, a range, an anonymous
 *                                and a named set, accept/!=/udp rules that
 *                                must not count, a regular chain, an output
 *                                chain, an ip6 drop policy, and a
 *                                firewalld-like final reject
 *   iptables-nft.txt             iptables-nft-save 1.8.9 of a ruleset with
 *                                multiport, "! --dport", a quoted comment and
 *                                ":INPUT DROP"
 *   ip6tables-nft-counters.txt   ip6tables-nft-save -c ("[0:0]" prefixes)
 *   nft-iptables-nft.json        `nft -j list ruleset` of those two: what
 *                                iptables-nft leaves as xt expressions
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "probes/fwrules.h"

/* ---- helpers ---- */

/* tests/unit/test_fwrules.c -> tests/fixtures/firewall/<name> */
static char *fixture_path(const char *name)
{
	const char *file = __FILE__, *unit = strstr(file, "unit/test_fwrules.c");

	return cd_asprintf("%.*sfixtures/firewall/%s", unit ? (int)(unit - file) : 0, file, name);
}

static char *fixture_text(const char *name)
{
	char *path = fixture_path(name), *text;
	FILE *f = fopen(path, "r");
	long size;

	if (!f)
		fail_msg("cannot open %s", path);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	text = cd_calloc(1, (size_t)size + 1);
	if (fread(text, 1, (size_t)size, f) != (size_t)size)
		fail_msg("cannot read %s", path);
	fclose(f);
	free(path);
	return text;
}

static json_t *fixture_json(const char *name)
{
	char *path = fixture_path(name);
	json_error_t e;
	json_t *j = json_load_file(path, 0, &e);

	if (!j)
		fail_msg("%s: %s", path, e.text);
	free(path);
	return j;
}

struct found {
	struct nm_fwrule *rules;
	size_t n;
};

static void assert_rule(const struct found *f, size_t i, int lo, int hi, const char *verdict,
                        const char *tool, const char *text)
{
	if (i >= f->n)
		fail_msg("rule %zu missing: only %zu", i, f->n);
	assert_int_equal(f->rules[i].port_lo, lo);
	assert_int_equal(f->rules[i].port_hi, hi);
	assert_string_equal(f->rules[i].verdict, verdict);
	assert_string_equal(f->rules[i].tool, tool);
	assert_string_equal(f->rules[i].text, text);
}

static void nft_fixture(const char *name, struct found *f)
{
	json_t *j = fixture_json(name);

	memset(f, 0, sizeof(*f));
	fwrules_from_nft_json(j, &f->rules, &f->n);
	json_decref(j);
}

static void ipt_fixture(const char *name, const char *tool, struct found *f)
{
	char *text = fixture_text(name);

	memset(f, 0, sizeof(*f));
	fwrules_from_iptables_save(text, tool, &f->rules, &f->n);
	free(text);
}

/* ---- nftables ---- */

static void nft_native_ruleset_gives_each_input_drop(void **state)
{
	struct found f;

	nft_fixture("nft-inet-filter.json", &f);
	assert_rule(&f, 0, 29500, 29500, "drop", "nft", "inet filter input: tcp dport 29500 drop");
	assert_rule(&f, 1, 40000, 50000, "reject", "nft",
	            "inet filter input: tcp dport 40000-50000 reject");
	assert_rule(&f, 2, 22, 22, "drop", "nft",
	            "inet filter input: tcp dport { 22, 29500 } drop");
	assert_rule(&f, 3, 29500, 29500, "drop", "nft",
	            "inet filter input: tcp dport { 22, 29500 } drop");
	assert_rule(&f, 4, 8080, 8080, "drop", "nft",
	            "inet filter input: ip saddr 192.168.0.0/16 tcp dport 8080 counter drop");
	assert_rule(&f, 5, 29400, 29400, "drop", "nft",
	            "inet filter input: tcp dport @blocked drop");
	assert_rule(&f, 6, 29600, 29700, "drop", "nft",
	            "inet filter input: tcp dport @blocked drop");
	assert_rule(&f, 7, 5000, 5000, "reject", "nft", "ip6 filter6 input: tcp dport 5000 reject");
	assert_rule(&f, 8, 0, 65535, "reject", "nft", "inet firewalld_like filter_INPUT: reject");
	assert_rule(&f, 9, 0, 65535, "drop", "nft", "ip6 filter6 input: policy drop");
	assert_int_equal(f.n, 10);
	free(f.rules);
}

static void nft_accept_negation_udp_and_other_chains_do_not_count(void **state)
{
	struct found f;

	nft_fixture("nft-inet-filter.json", &f);
	for (size_t i = 0; i < f.n; i++) {
		assert_null(strstr(f.rules[i].text, "accept"));
		assert_null(strstr(f.rules[i].text, "!="));
		assert_null(strstr(f.rules[i].text, "udp"));
		assert_null(strstr(f.rules[i].text, "custom"));
		assert_null(strstr(f.rules[i].text, "output"));
		assert_null(strstr(f.rules[i].text, "forward"));
	}
	free(f.rules);
}

static void nft_first_match_is_the_rule_listed_first(void **state)
{
	struct found f;

	nft_fixture("nft-inet-filter.json", &f);
	assert_ptr_equal(fwrules_match(f.rules, f.n, 29500), &f.rules[0]);
	assert_ptr_equal(fwrules_match(f.rules, f.n, 22), &f.rules[2]);
	assert_ptr_equal(fwrules_match(f.rules, f.n, 45000), &f.rules[1]);
	assert_ptr_equal(fwrules_match(f.rules, f.n, 29650), &f.rules[6]);
	/* everything else meets the firewalld-like reject */
	assert_ptr_equal(fwrules_match(f.rules, f.n, 443), &f.rules[8]);
	free(f.rules);
}

static void nft_of_iptables_nft_reads_xt_reject_and_skips_xt_matches(void **state)
{
	struct found f;

	nft_fixture("nft-iptables-nft.json", &f);
	assert_rule(&f, 0, 29500, 29500, "drop", "nft",
	            "ip filter INPUT: tcp dport 29500 counter drop");
	assert_rule(&f, 1, 40000, 50000, "reject", "nft",
	            "ip filter INPUT: tcp dport 40000-50000 counter xt target REJECT");
	assert_rule(&f, 2, 29500, 29500, "drop", "nft",
	            "ip6 filter INPUT: tcp dport 29500 xt match comment counter drop");
	assert_rule(&f, 3, 60000, 65535, "reject", "nft",
	            "ip6 filter INPUT: tcp dport 60000-65535 counter xt target REJECT");
	assert_rule(&f, 4, 0, 65535, "reject", "nft", "ip6 filter INPUT: counter xt target REJECT");
	assert_rule(&f, 5, 0, 65535, "drop", "nft", "ip filter INPUT: policy drop");
	assert_int_equal(f.n, 6);
	free(f.rules);
}

static void nft_accepts_the_bare_array(void **state)
{
	json_t *j = fixture_json("nft-inet-filter.json");
	struct found f = {0};

	fwrules_from_nft_json(json_object_get(j, "nftables"), &f.rules, &f.n);
	assert_int_equal(f.n, 10);
	free(f.rules);
	json_decref(j);
}

static void nft_malformed_parts_are_skipped(void **state)
{
	const char *text =
	    "{\"nftables\": [7, {\"chain\": []}, "
	    "{\"chain\": {\"family\": \"inet\", \"table\": \"t\", \"name\": \"in\", \"hook\": "
	    "\"input\"}}, "
	    "{\"rule\": {\"family\": \"inet\", \"table\": \"t\", \"chain\": \"in\", \"expr\": "
	    "[{\"match\": {\"op\": \"==\", \"left\": {\"payload\": {\"protocol\": \"tcp\", "
	    "\"field\": \"dport\"}}, \"right\": 70000}}, {\"drop\": null}]}}, "
	    "{\"rule\": {\"family\": \"inet\", \"table\": \"t\", \"chain\": \"in\", \"expr\": "
	    "[{\"match\": {\"op\": \"==\", \"left\": {\"payload\": {\"protocol\": \"tcp\", "
	    "\"field\": \"dport\"}}, \"right\": {\"range\": [9, 3]}}}, {\"drop\": null}]}}, "
	    "{\"rule\": {\"family\": \"inet\", \"table\": \"t\", \"chain\": \"in\", \"expr\": 5}}, "
	    "{\"rule\": {\"family\": \"inet\", \"table\": \"t\", \"chain\": \"in\", \"expr\": "
	    "[{\"match\": {\"op\": \"==\", \"left\": {\"payload\": {\"protocol\": \"tcp\", "
	    "\"field\": \"dport\"}}, \"right\": \"@missing\"}}, {\"drop\": null}]}}]}";
	json_t *j = json_loads(text, 0, NULL);
	struct found f = {0};

	assert_non_null(j);
	fwrules_from_nft_json(j, &f.rules, &f.n);
	assert_int_equal(f.n, 0);
	fwrules_from_nft_json(NULL, &f.rules, &f.n);
	assert_int_equal(f.n, 0);
	json_decref(j);
}

/* ---- iptables-save ---- */

static void iptables_save_gives_ports_multiport_and_the_policy(void **state)
{
	struct found f;

	ipt_fixture("iptables-nft.txt", "iptables", &f);
	assert_rule(&f, 0, 29500, 29500, "drop", "iptables",
	            "-A INPUT -p tcp -m tcp --dport 29500 -j DROP");
	assert_rule(&f, 1, 40000, 50000, "reject", "iptables",
	            "-A INPUT -p tcp -m tcp --dport 40000:50000 -j REJECT --reject-with "
	            "icmp-port-unreachable");
	assert_rule(&f, 2, 22, 22, "drop", "iptables",
	            "-A INPUT -p tcp -m multiport --dports 22,29500,1000:2000 -j DROP");
	assert_rule(&f, 3, 29500, 29500, "drop", "iptables",
	            "-A INPUT -p tcp -m multiport --dports 22,29500,1000:2000 -j DROP");
	assert_rule(&f, 4, 1000, 2000, "drop", "iptables",
	            "-A INPUT -p tcp -m multiport --dports 22,29500,1000:2000 -j DROP");
	assert_rule(&f, 5, 0, 65535, "drop", "iptables", "-P INPUT DROP");
	assert_int_equal(f.n, 6);
	free(f.rules);
}

static void ip6tables_save_with_counters_and_a_catch_all_reject(void **state)
{
	struct found f;

	ipt_fixture("ip6tables-nft-counters.txt", "ip6tables", &f);
	assert_rule(
	    &f, 0, 29500, 29500, "drop", "ip6tables",
	    "-A INPUT -p tcp -m tcp --dport 29500 -m comment --comment \"block rendezvous\" "
	    "-j DROP");
	assert_rule(&f, 1, 60000, 65535, "reject", "ip6tables",
	            "-A INPUT -p tcp -m tcp --dport 60000:65535 -j REJECT --reject-with tcp-reset");
	assert_rule(&f, 2, 0, 65535, "reject", "ip6tables",
	            "-A INPUT -j REJECT --reject-with icmp6-adm-prohibited");
	assert_int_equal(f.n, 3);
	free(f.rules);
}

/* Written from the iptables-save format: the legacy backend, a chain
 * other than INPUT, open-ended port ranges, a goto and a quoted '"'. */
static void iptables_save_legacy_lines_by_hand(void **state)
{
	const char *text =
	    "# Generated by iptables-save v1.8.7 on Mon Jan  1 00:00:00 2024\n"
	    "*filter\n"
	    ":INPUT ACCEPT [0:0]\n"
	    ":DOCKER-USER - [0:0]\n"
	    "-A INPUT -p tcp --dport :1023 -j DROP\n"
	    "-A INPUT -p tcp --destination-port 50000: -j REJECT\n"
	    "-A INPUT -p tcp --dport 8000 -g DOCKER-USER\n"
	    "-A INPUT -p tcp --dport 7000 -m comment --comment \"a \\\" b\" -j DROP\n"
	    "-A INPUT ! -p tcp --dport 6000 -j DROP\n"
	    "-A INPUT -p tcp --sport 5000 -j DROP\n"
	    "-A INPUT -p tcp -j DROP\n"
	    "-A DOCKER-USER -p tcp --dport 29500 -j DROP\n"
	    "COMMIT\n";
	struct found f = {0};

	fwrules_from_iptables_save(text, "iptables", &f.rules, &f.n);
	assert_rule(&f, 0, 0, 1023, "drop", "iptables", "-A INPUT -p tcp --dport :1023 -j DROP");
	assert_rule(&f, 1, 50000, 65535, "reject", "iptables",
	            "-A INPUT -p tcp --destination-port 50000: -j REJECT");
	assert_rule(&f, 2, 7000, 7000, "drop", "iptables",
	            "-A INPUT -p tcp --dport 7000 -m comment --comment \"a \\\" b\" -j DROP");
	assert_rule(&f, 3, 0, 65535, "drop", "iptables", "-A INPUT -p tcp -j DROP");
	assert_int_equal(f.n, 4);
	free(f.rules);
}

static void iptables_save_cut_before_commit_keeps_the_policy(void **state)
{
	struct found f = {0};

	fwrules_from_iptables_save("*filter\n:INPUT DROP [5:300]\n-A INPUT -p tcp --dport 22 -j "
	                           "ACCEPT\n-A INPUT -p tcp --dport 29",
	                           "iptables", &f.rules, &f.n);
	assert_rule(&f, 0, 0, 65535, "drop", "iptables", "-P INPUT DROP");
	assert_int_equal(f.n, 1);
	free(f.rules);
}

static void iptables_save_malformed_ports_are_skipped(void **state)
{
	struct found f = {0};

	fwrules_from_iptables_save("*filter\n"
	                           "-A INPUT -p tcp --dport 70000 -j DROP\n"
	                           "-A INPUT -p tcp --dport ssh -j DROP\n"
	                           "-A INPUT -p tcp --dport 9:3 -j DROP\n"
	                           "-A INPUT -p tcp --dports ,,: -j DROP\n"
	                           "-A INPUT -p tcp --dport\n"
	                           "-A INPUT -j\n"
	                           "COMMIT\n",
	                           "iptables", &f.rules, &f.n);
	assert_int_equal(f.n, 0);
}

/* ---- the firewall object ---- */

static json_t *firewall_of_fixtures(void)
{
	char *ipt = fixture_text("iptables-nft.txt");
	char *ip6 = fixture_text("ip6tables-nft-counters.txt");
	json_t *fw = json_pack("{s:{s:o}, s:{s:s}, s:{s:s}, s:s, s:s}", "nft", "ruleset",
	                       fixture_json("nft-iptables-nft.json"), "iptables", "rules", ipt,
	                       "ip6tables", "rules", ip6, "ufw", "inactive", "firewalld", "absent");

	free(ipt);
	free(ip6);
	return fw;
}

static void collect_adds_only_what_nft_could_not_show(void **state)
{
	json_t *fw = firewall_of_fixtures();
	struct found f = {0};
	char summary[160];

	fwrules_collect(fw, &f.rules, &f.n, summary, sizeof(summary));
	assert_int_equal(f.n, 8);
	assert_string_equal(f.rules[0].tool, "nft");
	assert_string_equal(f.rules[5].text, "ip filter INPUT: policy drop");
	/* multiport is an xt match in nft: only iptables-save shows its ports */
	assert_rule(&f, 6, 22, 22, "drop", "iptables",
	            "-A INPUT -p tcp -m multiport --dports 22,29500,1000:2000 -j DROP");
	assert_rule(&f, 7, 1000, 2000, "drop", "iptables",
	            "-A INPUT -p tcp -m multiport --dports 22,29500,1000:2000 -j DROP");
	assert_string_equal(summary,
	                    "nftables: 2 tables, 6 input drop rules; iptables (nf_tables): "
	                    "4 input drop rules; ip6tables (nf_tables): 3 input drop rules; "
	                    "ufw inactive; firewalld absent");
	free(f.rules);
	json_decref(fw);
}

static void collect_keeps_legacy_iptables_rules(void **state)
{
	json_t *fw =
	    json_pack("{s:{s:n, s:s}, s:{s:s}, s:s}", "nft", "ruleset", "error", "not installed",
	              "iptables", "rules",
	              "# Generated by iptables-legacy-save v1.8.9 (legacy)\n*filter\n"
	              ":INPUT ACCEPT [0:0]\n-A INPUT -p tcp --dport 29500 -j DROP\nCOMMIT\n",
	              "ufw", "active");
	struct found f = {0};
	char summary[160];

	fwrules_collect(fw, &f.rules, &f.n, summary, sizeof(summary));
	assert_rule(&f, 0, 29500, 29500, "drop", "iptables",
	            "-A INPUT -p tcp --dport 29500 -j DROP");
	assert_int_equal(f.n, 1);
	assert_string_equal(summary,
	                    "nftables: not installed; iptables: 1 input drop rule; ufw active");
	free(f.rules);
	json_decref(fw);
}

static void collect_of_nothing_is_empty(void **state)
{
	struct found f = {0};
	char summary[160] = "stale";
	json_t *fw = json_pack("{s:s}", "firewalld", "running");

	fwrules_collect(NULL, &f.rules, &f.n, summary, sizeof(summary));
	assert_int_equal(f.n, 0);
	assert_string_equal(summary, "");
	fwrules_collect(fw, &f.rules, &f.n, summary, sizeof(summary));
	assert_int_equal(f.n, 0);
	assert_string_equal(summary, "firewalld running");
	json_decref(fw);
}

static void collect_summary_is_truncated_not_overrun(void **state)
{
	json_t *fw = firewall_of_fixtures();
	struct found f = {0};
	char summary[24];

	fwrules_collect(fw, &f.rules, &f.n, summary, sizeof(summary));
	assert_string_equal(summary, "nftables: 2 tables, 6 i");
	free(f.rules);
	json_decref(fw);
}

static void match_without_rules_is_null(void **state)
{
	assert_null(fwrules_match(NULL, 0, 22));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(nft_native_ruleset_gives_each_input_drop),
	    cmocka_unit_test(nft_accept_negation_udp_and_other_chains_do_not_count),
	    cmocka_unit_test(nft_first_match_is_the_rule_listed_first),
	    cmocka_unit_test(nft_of_iptables_nft_reads_xt_reject_and_skips_xt_matches),
	    cmocka_unit_test(nft_accepts_the_bare_array),
	    cmocka_unit_test(nft_malformed_parts_are_skipped),
	    cmocka_unit_test(iptables_save_gives_ports_multiport_and_the_policy),
	    cmocka_unit_test(ip6tables_save_with_counters_and_a_catch_all_reject),
	    cmocka_unit_test(iptables_save_legacy_lines_by_hand),
	    cmocka_unit_test(iptables_save_cut_before_commit_keeps_the_policy),
	    cmocka_unit_test(iptables_save_malformed_ports_are_skipped),
	    cmocka_unit_test(collect_adds_only_what_nft_could_not_show),
	    cmocka_unit_test(collect_keeps_legacy_iptables_rules),
	    cmocka_unit_test(collect_of_nothing_is_empty),
	    cmocka_unit_test(collect_summary_is_truncated_not_overrun),
	    cmocka_unit_test(match_without_rules_is_null),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
