/* SPDX-License-Identifier: MIT */
/*
 * bench_env.c - the NCCL variables each node's NCCL runs under in
 * `clusterdoc bench --backend nccl` (bench_internal.h): the check's plan's
 * (bench_opts.nccl_env, job_plan_nccl_env: what `run` sets in a job's
 * environment) over the node's login ones, or the login's alone when there
 * is no plan; sent with the requests, predicted with, reported; and, for a
 * node that fell back to sockets under its login's variables, whether a
 * check's plan would have avoided it.
 */
#include "collectives/bench_internal.h"
#include "collectives/nccl_env.h"
#include "cd.h"
#include "probes/diagnose.h"
#include "probes/diagnose_rdma.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const json_t *plan_env(const struct bench *b, size_t i)
{
	return b->o.nccl_env ? b->o.nccl_env[i] : NULL;
}

static void add_var(json_t *vars, const char *name, const char *value, const char *source)
{
	json_array_append_new(
	    vars, json_pack("{ssssss}", "name", name, "value", value, "source", source));
}

void bench_env_plan(struct bench *b)
{
	if (b->r.backend != BENCH_NCCL)
		return;
	for (size_t k = 0; k < b->nlive; k++) {
		size_t i = b->live[k];
		const struct nm_node *n = &b->m->nodes[i];
		const json_t *plan = plan_env(b, i);
		json_t *vars = json_array(), *v;
		const char *name;

		json_object_foreach((json_t *)plan, name, v)
		    add_var(vars, name, json_string_value(v), "plan");
		for (size_t j = 0; j < n->nvars; j++) {
			const struct nm_var *nv = &n->vars[j];

			if (strncmp(nv->name, "NCCL_", 5) != 0 || nccl_env_is_own(nv->name) ||
			    json_object_get(plan, nv->name) || !nv->value)
				continue;
			add_var(vars, nv->name, nv->value,
			        nv->source[0] ? nv->source : "environment");
		}
		json_decref(b->r.nodes[i].nccl_env);
		b->r.nodes[i].nccl_env =
		    json_pack("{ssso}", "from", plan ? "plan" : "login", "vars", vars);
	}
}

json_t *bench_env_request(const struct bench *b, size_t i)
{
	const json_t *plan = plan_env(b, i);

	return plan ? json_deep_copy(plan) : NULL;
}

void bench_env_predict(const struct bench *b, size_t i, const char *version,
                       struct nccl_ib_pick *pk)
{
	const struct nm_node *n = &b->m->nodes[i];
	struct nccl_ib_env e;
	const char *name;
	json_t *v;

	diagnose_rdma_env(n, &e);
	json_object_foreach((json_t *)plan_env(b, i), name, v)
	    nccl_ib_env_set(&e, name, json_string_value(v), "the plan");
	diagnose_rdma_predict_env(n, version, &e, pk);
}

void bench_env_avoid(struct bench *b, size_t i)
{
	struct bench_net *net = b->r.nodes[i].net;
	const struct nm_node *n = &b->m->nodes[i];
	const char *hca = NULL, *version;
	char gid[16] = "", devs[256] = "";
	struct nccl_ib_env e;
	struct nccl_ib_pick pk;

	if (!net || plan_env(b, i) || net->agrees != 1 ||
	    net->predicted.transport != NCCL_IB_SOCKET)
		return;
	if (!b->ib_made) {
		diagnose_suggest_ib(b->m, &b->ib);
		b->ib_made = 1;
	}
	if (b->ib.hca_per_node)
		hca = b->ib.hca_per_node[i];
	if (b->ib.gid_per_node && b->ib.gid_per_node[i] >= 0)
		snprintf(gid, sizeof(gid), "%d", b->ib.gid_per_node[i]);
	if (!hca && !gid[0])
		return;
	diagnose_rdma_env(n, &e);
	if (hca)
		nccl_ib_env_set(&e, "NCCL_IB_HCA", hca, "a check's plan");
	if (gid[0])
		nccl_ib_env_set(&e, "NCCL_IB_GID_INDEX", gid, "a check's plan");
	version = b->r.nodes[i].nccl_version[0] ? b->r.nodes[i].nccl_version : NULL;
	diagnose_rdma_predict_env(n, version, &e, &pk);
	if (pk.transport != NCCL_IB_IB)
		return;
	for (int k = 0; k < pk.ndevs; k++)
		cd_appendf(devs, sizeof(devs), " %s:%d/%s", pk.devs[k].dev, pk.devs[k].port,
		           pk.devs[k].roce ? "RoCE" : "IB");
	snprintf(net->avoid, sizeof(net->avoid),
	         "with %s%s%s%s%s NCCL would use NET/IB%s (`clusterdoc check` of these nodes "
	         "saves the plan; bench then sets it)",
	         hca ? "NCCL_IB_HCA=" : "", hca ? hca : "", hca && gid[0] ? " " : "",
	         gid[0] ? "NCCL_IB_GID_INDEX=" : "", gid, devs);
}
