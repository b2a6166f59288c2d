/* SPDX-License-Identifier: MIT */
/*
 * fwrules.h - read the firewall evidence a node's agent collected
 * (netprobe.h "firewall") into the rules that matter for a training job:
 * rules on the input path that drop or reject TCP to a destination port or
 * port range. Pure functions on the captured text; head side.
 *
 * nftables: `nft -j list ruleset` JSON. A rule counts when it sits in a
 * chain with "hook": "input" (base chain) of family ip, ip6 or inet, its
 * expressions include a "match" on {"payload": {"protocol": "tcp", "field":
 * "dport"}} with op "==" (or "in") and a right side that is a number, a
 * {"range": [lo, hi]}, a {"set": [...]} of those or a named set "@name" of
 * the same table, and its verdict is "drop" or "reject" (also iptables-nft's
 * {"xt": {"type": "target", "name": "REJECT"}}). A drop/reject rule with no
 * condition at all (counters, logs, comments and "meta l4proto tcp" do not
 * count; firewalld's final "reject with icmpx admin-prohibited") covers
 * 0-65535. A chain policy of drop is reported after the rules as one rule
 * covering 0-65535 (accept rules before it are then reported as nothing:
 * this is evidence, not a firewall emulator). Text: "<family> <table>
 * <chain>: " and the rule rebuilt from its JSON, e.g. "inet filter input:
 * tcp dport { 22, 29500 } drop", or "... input: policy drop". A set gives
 * one entry per element, all with the rule's text.
 * iptables-save: "-A INPUT ... -p tcp ... --dport N[:M] ... -j DROP|REJECT"
 * lines, also "--dports a,b:c" (multiport; "! --dport" is skipped), a
 * "-A INPUT -j DROP|REJECT" without conditions (0-65535), "[pkts:bytes]"
 * prefixes (-c), and ":INPUT DROP" policies, reported at the table's COMMIT
 * with text "-P INPUT DROP". Other text: the line.
 */
#ifndef CD_PROBES_FWRULES_H
#define CD_PROBES_FWRULES_H

#include <jansson.h>

#include "netmodel.h"

/*
 * Append the rules found in firewall (netprobe's "firewall" object,
 * borrowed) to *rules / *n (cd_realloc'ed): nft first, then iptables, then
 * ip6tables. Malformed parts are skipped. iptables-save text of the
 * nf_tables backend ("(nf_tables)" in its header) shows the same rules as
 * nft, so when nft was read only its entries nft did not list (same ports
 * and verdict) are added: those behind xt matches such as multiport. Also
 * writes a one-line summary such as "nftables: 2 tables, 1 input drop rule;
 * iptables (nf_tables): 1 input drop rule; ufw inactive; firewalld absent"
 * into summary ("nftables: <error>" when nft gave none; iptables parts only
 * for text with a table).
 */
void fwrules_collect(json_t *firewall, struct nm_fwrule **rules, size_t *n, char *summary,
                     size_t summary_len);

/* Parse one tool's text (exposed for tests and fuzzing). */
void fwrules_from_nft_json(json_t *ruleset, struct nm_fwrule **rules, size_t *n);
void fwrules_from_iptables_save(const char *text, const char *tool, struct nm_fwrule **rules,
                                size_t *n);

/* The first rule covering port, or NULL. */
const struct nm_fwrule *fwrules_match(const struct nm_fwrule *rules, size_t n, int port);

#endif
