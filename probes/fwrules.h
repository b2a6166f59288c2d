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
 * {"range": [lo, hi]} or a {"set": [...]} of those, and its verdict is
 * "drop" or "reject". A chain policy of drop is reported as one rule
 * covering 0-65535 with text "policy drop" (accept rules before it are then
 * reported as nothing: this is evidence, not a firewall emulator).
 * iptables-save: "-A INPUT ... -p tcp ... --dport N[:M] ... -j DROP|REJECT"
 * lines, also "--dports a,b:c" (multiport), and ":INPUT DROP" policies.
 */
#ifndef CD_PROBES_FWRULES_H
#define CD_PROBES_FWRULES_H

#include <jansson.h>

#include "netmodel.h"

/*
 * Append the rules found in firewall (netprobe's "firewall" object,
 * borrowed) to *rules / *n (cd_realloc'ed). Malformed parts are skipped.
 * Also writes a one-line summary such as "nftables: 2 tables, 1 input drop
 * rule; ufw inactive; firewalld absent" into summary.
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
