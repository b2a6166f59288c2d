/* SPDX-License-Identifier: MIT */
/*
 * fwrules_internal.h - what the readers of firewall evidence (fwrules.c,
 * fwrules_nft.c, fwrules_iptables.c) share. Not a public interface: include
 * it only from probes/fwrules*.c.
 */
#ifndef CD_PROBES_FWRULES_INTERNAL_H
#define CD_PROBES_FWRULES_INTERNAL_H

#include <jansson.h>
#include <stddef.h>

#include "netmodel.h"

#define PORT_MAX 65535

/* Append one rule for TCP ports lo..hi to *rules / *n (cd_realloc'ed);
 * ignored unless 0 <= lo <= hi <= PORT_MAX. verdict, tool and text are
 * copied (truncated to their fields); fwrules.c. */
void fwrules_rule_add(struct nm_fwrule **rules, size_t *n, int lo, int hi, const char *verdict,
                      const char *tool, const char *text);

/* The item array of nft's JSON (the ruleset itself, or its "nftables"
 * member), borrowed; not necessarily an array. fwrules_nft.c. */
json_t *fwrules_nft_items(json_t *ruleset);

/* How many tables nft's JSON lists; fwrules_nft.c. */
size_t fwrules_nft_table_count(json_t *ruleset);

#endif
