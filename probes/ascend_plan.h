/* SPDX-License-Identifier: MIT */
/*
 * ascend_plan.h - the device IP plan rules of Ascend training servers, as
 * Huawei's multi-server PyTorch training guide states them (configuring
 * device IPs with `hccn_tool -i N -ip -s address A netmask M`):
 *
 *   1. On each server devices i and i+half (0/4, 1/5, 2/6, 3/7 with eight)
 *      share a network segment, while devices 0..half-1 are in different
 *      segments (and so are half..n-1).
 *   2. Device i of every server is in the same segment.
 *   3. Every address is unique; addresses in one segment differ in their
 *      last eight bits.
 *
 * Pure: the addresses come from `hccn_tool -i N -ip -g` on every server.
 */
#ifndef CD_PROBES_ASCEND_PLAN_H
#define CD_PROBES_ASCEND_PLAN_H

#include <stddef.h>

enum ascend_rule {
	ASCEND_RULE_PAIR = 1,   /* rule 1: i and i+half in different segments */
	ASCEND_RULE_SPLIT,      /* rule 1: two of 0..half-1 (or half..n-1) share a segment */
	ASCEND_RULE_CROSS,      /* rule 2: device i of two servers in different segments */
	ASCEND_RULE_LAST_OCTET, /* rule 3: same segment, same last eight bits */
	ASCEND_RULE_DUPLICATE,  /* rule 3: the same address twice */
};

struct ascend_dev_addr {
	int dev;       /* the device id (hccn_tool -i) */
	char addr[16]; /* dotted quad; "" when the device has no address */
	char mask[16];
};

struct ascend_server_plan {
	const char *server; /* its name, for the texts (borrowed) */
	size_t n;
	const struct ascend_dev_addr *dev; /* n entries (borrowed) */
};

/*
 * Called once per broken rule instance: rule, the servers involved (s1 ==
 * s2 for a rule inside one server, indexes into the servers given) and a
 * text naming the devices, the servers, the addresses and the rule.
 */
typedef void (*ascend_plan_cb)(void *arg, enum ascend_rule rule, size_t s1, size_t s2,
                               const char *text);

/*
 * Check the plan of ns servers against the three rules. Devices without an
 * address or with an unparsable one are skipped (the probe reports them).
 * Rule 1 applies to servers with an even number (>= 2) of devices; rule 2
 * compares every server with the first server that has the same device.
 * Returns the number of broken rule instances (cb calls); cb may be NULL.
 */
size_t ascend_plan_check(const struct ascend_server_plan *s, size_t ns, ascend_plan_cb cb,
                         void *arg);

#endif
