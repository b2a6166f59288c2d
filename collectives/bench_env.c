/* SPDX-License-Identifier: MIT */
/*
 * bench_env.c - the NCCL variables each node's NCCL runs under in
 * `clusterdoc bench --backend nccl` (bench_internal.h): the check's plan's
 * (bench_opts.nccl_env, job_plan_nccl_env: what `run` sets in a job's
 * environment) over the node's login ones, or the login's alone when there
 * is no plan; sent with the requests, predicted with, reported.
 */
#include "collectives/bench_internal.h"
#include "cd.h"
#include "probes/diagnose_rdma.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The bench sets these itself to read NCCL's lines back (nccl_netlog.h). */
static int debug_var(const char *name)
{
	return strncmp(name, "NCCL_DEBUG", 10) == 0 &&
	       (!name[10] || strcmp(name + 10, "_SUBSYS") == 0 || strcmp(name + 10, "_FILE") == 0);
}

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

			if (strncmp(nv->name, "NCCL_", 5) != 0 || debug_var(nv->name) ||
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
