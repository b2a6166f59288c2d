/* SPDX-License-Identifier: MIT */
/*
 * fuzz_fwrules.c - libFuzzer harness for the firewall evidence reader
 * (probes/fwrules.h): whatever nft or iptables-save printed on a node, or a
 * broken agent sent, must never crash the head or give an impossible rule.
 *
 * The first input byte picks the reader (its low two bits, so the seeds
 * start with an ASCII digit); the rest of the input is its text:
 *   0 fwrules_from_iptables_save (as "iptables" and as "ip6tables")
 *   1 fwrules_from_nft_json      (the text parsed as JSON)
 *   2 fwrules_collect            (the text parsed as a netprobe "firewall"
 *                                 object; also with the text as the
 *                                 iptables rules next to an empty nft)
 *   3 all of the above
 * Seeds: tests/fuzz/corpus/fwrules/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "probes/fwrules.h"

static int is_one_of(const char *s, const char *const *set, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(s, set[i]) == 0)
			return 1;
	return 0;
}

/* Every rule is possible, and fwrules_match agrees with the list. */
static void check_rules(const struct nm_fwrule *rules, size_t n)
{
	static const char *const verdicts[] = {"drop", "reject"};
	static const char *const tools[] = {"nft", "iptables", "ip6tables"};
	static const int probes[] = {0, 22, 29500, 65535};

	for (size_t i = 0; i < n; i++) {
		const struct nm_fwrule *r = &rules[i];

		if (r->port_lo < 0 || r->port_hi > 65535 || r->port_lo > r->port_hi)
			abort();
		if (strnlen(r->text, sizeof(r->text)) == sizeof(r->text))
			abort();
		if (!is_one_of(r->verdict, verdicts, CD_ARRAY_LEN(verdicts)) ||
		    !is_one_of(r->tool, tools, CD_ARRAY_LEN(tools)))
			abort();
	}
	for (size_t k = 0; k < CD_ARRAY_LEN(probes); k++) {
		const struct nm_fwrule *m = fwrules_match(rules, n, probes[k]);
		size_t first = 0;

		while (first < n &&
		       !(rules[first].port_lo <= probes[k] && probes[k] <= rules[first].port_hi))
			first++;
		if (m != (first < n ? &rules[first] : NULL))
			abort();
	}
}

static void fuzz_iptables(const char *text)
{
	struct nm_fwrule *rules = NULL;
	size_t n = 0;

	fwrules_from_iptables_save(text, "iptables", &rules, &n);
	fwrules_from_iptables_save(text, "ip6tables", &rules, &n);
	check_rules(rules, n);
	free(rules);
}

static void fuzz_nft(const char *text)
{
	json_t *j = json_loads(text, JSON_DECODE_ANY, NULL);
	struct nm_fwrule *rules = NULL;
	size_t n = 0;

	fwrules_from_nft_json(j, &rules, &n);
	check_rules(rules, n);
	free(rules);
	json_decref(j);
}

static void collect_and_check(json_t *firewall)
{
	struct nm_fwrule *rules = NULL;
	size_t n = 0;
	char summary[160];

	memset(summary, 'x', sizeof(summary));
	fwrules_collect(firewall, &rules, &n, summary, sizeof(summary));
	if (strnlen(summary, sizeof(summary)) == sizeof(summary))
		abort();
	check_rules(rules, n);
	free(rules);
}

static void fuzz_collect(const char *text)
{
	json_t *j = json_loads(text, JSON_DECODE_ANY, NULL);
	json_t *fw = json_pack("{s:{s:[]}, s:{s:s}}", "nft", "ruleset", "iptables", "rules", text);

	collect_and_check(j);
	collect_and_check(fw);
	json_decref(fw);
	json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static void (*const readers[])(const char *) = {fuzz_iptables, fuzz_nft, fuzz_collect};
	unsigned sel;
	char *text;

	if (size == 0)
		return 0;
	sel = data[0] & 3u;
	if (!(text = malloc(size)))
		abort();
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	if (sel < CD_ARRAY_LEN(readers)) {
		readers[sel](text);
	} else {
		for (size_t i = 0; i < CD_ARRAY_LEN(readers); i++)
			readers[i](text);
	}
	free(text);
	return 0;
}
