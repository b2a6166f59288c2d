/* SPDX-License-Identifier: MIT */
/*
 * jobplan_pick.c - a job plan's nodes from their probes where the check left
 * them open, and the interfaces a plan proved as the bench takes them
 * (jobplan.h).
 */
#include "jobplan.h"
#include "cd.h"
#include "collectives/bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int job_plan_pick_node(struct job_plan *p, size_t i, const struct nm_node *n, const char *iface,
                       char *err, size_t errlen)
{
	struct bench_node bn;

	if (!job_plan_needs_pick(p, i, iface))
		return 0;
	memset(&bn, 0, sizeof(bn));
	bn.host = p->nodes[i].host;
	if (bench_pick_address(n, iface, &bn) < 0) {
		snprintf(err, errlen, "%s", bn.error);
		return -1;
	}
	job_plan_take_pick(p, i, bn.ifname, bn.addr, bn.addr_rule);
	return 0;
}

const char **job_plan_proved_ifnames(const struct job_plan *p, size_t n)
{
	const char **names;

	if (!p || p->n != n)
		return NULL;
	names = cd_calloc(n ? n : 1, sizeof(*names));
	for (size_t i = 0; i < n; i++)
		if (p->nodes[i].proved && p->nodes[i].ifname[0])
			names[i] = p->nodes[i].ifname;
	return names;
}
