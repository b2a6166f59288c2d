/* SPDX-License-Identifier: MIT */
/*
 * run_plan_phase.c - the plan phase of `clusterdoc run` (run.h's phase 2):
 * from the probes' answers and the job's plan, each node's address, ranks,
 * command and environment (the pure parts are run_plan.c's), the master and
 * hang-ready's file; a node that cannot take part fails the run before
 * anything starts.
 */
#include "jobs/run_internal.h"
#include "jobs/torchrun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int gpu_count(json_t *facts)
{
	json_t *gpus = json_object_get(facts, "gpus");

	return json_is_array(gpus) ? (int)json_array_size(gpus) : 0;
}

/* --backend hccl on nodes without an NPU or torch_npu: refused, naming them. */
static int hccl_refused(struct run *r)
{
	const char **hosts = cd_calloc(r->n ? r->n : 1, sizeof(*hosts));
	const char **missing = cd_calloc(r->n ? r->n : 1, sizeof(*missing));
	char why[CD_ERRLEN];
	int refused;

	for (size_t i = 0; i < r->n; i++) {
		hosts[i] = r->r.nodes[i].host;
		missing[i] = run_hccl_missing(r->job.nodes[i].info);
		if (missing[i])
			run_node_error(r, i, "no-hccl", missing[i]);
	}
	refused = run_hccl_refusal(hosts, missing, r->n, why, sizeof(why));
	if (refused) {
		run_fail(r, "%s (nothing was started)", why);
		r->r.could_not_start = 1;
	}
	free(hosts);
	free(missing);
	return refused;
}

void run_plan_phase(struct run *r)
{
	char err[CD_ERRLEN];
	const char **hosts = NULL, **ifaces = NULL;
	int rank = 0, *nranks = NULL;

	for (size_t i = 0; i < r->n; i++) {
		if (r->nodes[i].gone) {
			run_fail(r, "%s (the job needs every node; nothing was started)",
			         r->r.nodes[i].error);
			r->r.could_not_start = 1;
			return;
		}
	}
	for (size_t i = 0; i < r->n && r->o.launcher == RUN_TORCHRUN; i++) {
		const char *why = torchrun_missing(r->job.nodes[i].info, r->r.nodes[i].host,
		                                   r->o.python, err, sizeof(err));

		if (why) {
			run_node_error(r, i, "no-torch", why);
			run_fail(
			    r,
			    "%s: torchrun needs PyTorch on every node: install it, pass --python "
			    "with an interpreter that has it, or --launcher none",
			    why);
			r->r.could_not_start = 1;
			return;
		}
	}
	if (r->o.hccl && hccl_refused(r))
		return;
	for (size_t i = 0; i < r->n; i++) {
		struct run_node *n = &r->r.nodes[i];
		json_t *facts = r->job.nodes[i].info, *torch = json_object_get(facts, "torch");

		netmodel_set_node(r->m, i, r->job.nodes[i].probe, NULL);
		if (job_plan_pick_node(r->plan, i, &r->m->nodes[i], r->o.iface, err, sizeof(err)) <
		    0) {
			run_node_error(r, i, "address", err);
			run_fail(r, "%s", err);
			r->r.could_not_start = 1;
			return;
		}
		snprintf(n->ifname, sizeof(n->ifname), "%s", r->plan->nodes[i].ifname);
		snprintf(n->addr, sizeof(n->addr), "%s", r->plan->nodes[i].addr);
		n->proved = r->plan->nodes[i].proved;
		snprintf(n->torch_version, sizeof(n->torch_version), "%s",
		         json_string_value(json_object_get(torch, "version")) ?: "");
		r->nodes[i].python =
		    json_string_value(json_object_get(json_object_get(facts, "python"), "path"));
		n->gpus = gpu_count(facts);
		n->first_rank = rank;
		n->nranks = run_plan_host_nproc(&r->o, n->host, facts);
		rank += n->nranks;
	}
	r->r.nranks = rank;
	job_plan_default_master(r->plan, r->o.master_port);
	snprintf(r->r.master_addr, sizeof(r->r.master_addr), "%s", r->plan->master_addr);
	r->r.master_port = r->plan->master_port;
	run_plan_dir(&r->o, r->r.run_id, r->r.run_dir, sizeof(r->r.run_dir));
	snprintf(r->r.cwd, sizeof(r->r.cwd), "%s",
	         r->o.sync    ? r->r.run_dir
	         : r->o.chdir ? r->o.chdir
	                      : "~/");
	r->r.synced = r->o.sync != NULL;
	/* every node, for mpirun's hostfile */
	hosts = cd_calloc(r->n, sizeof(*hosts));
	ifaces = cd_calloc(r->n, sizeof(*ifaces));
	nranks = cd_calloc(r->n, sizeof(*nranks));
	for (size_t i = 0; i < r->n; i++) {
		hosts[i] = r->r.nodes[i].host;
		ifaces[i] = r->r.nodes[i].ifname;
		nranks[i] = r->r.nodes[i].nranks;
	}
	for (size_t i = 0; i < r->n; i++) {
		struct run_node *n = &r->r.nodes[i];
		struct run_vars v = {
		    .hosts = hosts,
		    .nranks = nranks,
		    .ifaces = ifaces,
		    .run_dir = r->r.run_dir,
		    .node_rank = (int)i,
		    .nnodes = (int)r->n,
		    .nproc_per_node = n->nranks,
		    .world_size = rank,
		    .master_port = r->r.master_port,
		    .master_addr = r->r.master_addr,
		    .host = n->host,
		    .iface = n->ifname,
		    .plan = r->plan,
		};
		const char *python = r->o.python ? r->o.python : r->nodes[i].python;

		if (run_plan_node(&r->o, r->r.run_id, &v, python, n->torch_version, n->addr,
		                  &n->argv, &n->env, err, sizeof(err)) < 0 ||
		    (!r->o.no_hang_ready &&
		     run_plan_hang_ready(&r->o, r->r.run_dir, n->torch_version, n->env,
		                         r->have_hang ? NULL : &r->hang, err, sizeof(err)) < 0)) {
			run_fail(r, "%s", err);
			r->r.could_not_start = 1;
			goto out;
		}
		if (!r->o.no_hang_ready) {
			r->have_hang = 1;
			r->r.dump_signal = r->hang.dump_signal;
		}
	}
	if (r->o.sync && r->have_hang &&
	    runsync_manifest_add(r->o.sync, &r->hang.site, err, sizeof(err)) < 0) {
		run_fail(r,
		         "--sync: %s (clusterdoc's hang-ready file; --no-hang-ready leaves it out)",
		         err);
		r->r.could_not_start = 1;
		goto out;
	}
	r->r.sync_files = r->o.sync ? r->o.sync->n : 0;
	r->r.planned = 1;
out:
	free(hosts);
	free(ifaces);
	free(nranks);
}
