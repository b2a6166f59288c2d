/* SPDX-License-Identifier: MIT */
/*
 * mnist_plan.c - the plan of the MNIST job (mnist_plan in mnist_internal.h):
 * torch or embedded mode, the backend, and each node's address and ranks,
 * from the probe phase's answers. Nothing is sent from here.
 */
#include "collectives/bench.h"
#include "jobs/mnist_internal.h"
#include "jobs/run.h"
#include "jobs/torchrun.h"

#include <stdio.h>
#include <string.h>

/* Why node i cannot run torch (its facts), or NULL when it can. */
static const char *torch_missing(struct mnist *m, size_t i, char *why, size_t len)
{
	return torchrun_missing(m->job.nodes[i].info, m->r.nodes[i].host, m->o.python, why, len);
}

static int cuda_ready(json_t *facts)
{
	json_t *torch = json_object_get(facts, "torch");

	return json_is_true(json_object_get(torch, "cuda_available")) &&
	       !json_is_null(json_object_get(torch, "nccl_version")) &&
	       json_object_get(torch, "nccl_version");
}

static void choose_mode(struct mnist *m)
{
	char why[CD_ERRLEN];
	const char *first = NULL;

	if (m->o.mode == MNIST_EMBEDDED) {
		m->r.mode = MNIST_EMBEDDED;
		return;
	}
	for (size_t i = 0; i < m->n && !first; i++)
		first = torch_missing(m, i, why, sizeof(why));
	if (!first) {
		m->r.mode = MNIST_TORCH;
		return;
	}
	if (m->o.mode == MNIST_AUTO) {
		m->r.mode = MNIST_EMBEDDED;
		snprintf(m->r.mode_note, sizeof(m->r.mode_note),
		         "embedded, because %s (torch mode needs PyTorch on every node)", first);
		return;
	}
	m->r.mode = MNIST_TORCH;
	for (size_t i = 0; i < m->n; i++) {
		if (torch_missing(m, i, why, sizeof(why)))
			mnist_node_error(m, i, "no-torch", why);
	}
	mnist_fail_run(m,
	               "%s: install PyTorch there (Debian: python3-torch; or pip/conda in the PATH "
	               "the agent sees), pass --python with an interpreter that has it, or run "
	               "--mode embedded, which needs nothing on the nodes",
	               first);
}

/* --backend hccl: every node has an NPU and torch_npu, else the run fails
 * naming them; it needs torch mode. */
static void check_hccl(struct mnist *m)
{
	const char **hosts = cd_calloc(m->n ? m->n : 1, sizeof(*hosts));
	const char **missing = cd_calloc(m->n ? m->n : 1, sizeof(*missing));
	char why[CD_ERRLEN];

	if (m->o.mode == MNIST_EMBEDDED) {
		mnist_fail_run(m, "unavailable: --backend hccl is torch's (torch_npu): not with "
		                  "--mode embedded");
		goto out;
	}
	for (size_t i = 0; i < m->n; i++) {
		hosts[i] = m->r.nodes[i].host;
		missing[i] = run_hccl_missing(m->job.nodes[i].info);
		if (missing[i])
			mnist_node_error(m, i, "no-hccl", missing[i]);
	}
	if (run_hccl_refusal(hosts, missing, m->n, why, sizeof(why)))
		mnist_fail_run(m, "%s (nothing was started)", why);
out:
	free(hosts);
	free(missing);
}

static void choose_backend(struct mnist *m)
{
	const char *b = m->o.backend ? m->o.backend : "auto";
	int all_cuda = 1;

	if (m->r.mode == MNIST_EMBEDDED) {
		snprintf(m->r.backend, sizeof(m->r.backend), "tcp");
		return;
	}
	if (strcmp(b, "hccl") == 0) { /* check_hccl has seen to it */
		snprintf(m->r.backend, sizeof(m->r.backend), "hccl");
		return;
	}
	for (size_t i = 0; i < m->n; i++)
		all_cuda &= cuda_ready(m->job.nodes[i].info);
	if (strcmp(b, "auto") == 0)
		b = all_cuda ? "nccl" : "gloo";
	if (strcmp(b, "nccl") == 0 && !all_cuda) {
		for (size_t i = 0; i < m->n; i++) {
			if (!cuda_ready(m->job.nodes[i].info)) {
				mnist_node_error(m, i, "no-cuda",
				                 "torch there has no CUDA or no NCCL");
				mnist_fail_run(
				    m,
				    "%s: torch there has no CUDA or no NCCL, so --backend nccl "
				    "cannot run; use --backend gloo",
				    m->r.nodes[i].host);
				break;
			}
		}
	}
	snprintf(m->r.backend, sizeof(m->r.backend), "%s", b);
}

void mnist_plan(struct mnist *m)
{
	char err[CD_ERRLEN];
	int rank = 0;

	for (size_t i = 0; i < m->n; i++) {
		if (m->nodes[i].gone) {
			mnist_fail_run(m, "%s (a training job needs every node)",
			               m->r.nodes[i].error);
			return;
		}
	}
	if (m->r.failed)
		return;
	if (m->o.backend && strcmp(m->o.backend, "hccl") == 0) {
		check_hccl(m);
		if (m->r.failed)
			return;
		if (m->o.mode == MNIST_AUTO)
			m->o.mode = MNIST_TORCH; /* HCCL is torch_npu's: no embedded fallback */
	}
	choose_mode(m);
	if (m->r.failed)
		return;
	choose_backend(m);
	if (m->r.failed)
		return;
	for (size_t i = 0; i < m->n; i++) {
		struct mnist_node *n = &m->r.nodes[i];
		json_t *torch = json_object_get(m->job.nodes[i].info, "torch");

		netmodel_set_node(m->m, i, m->job.nodes[i].probe, NULL);
		if (job_plan_pick_node(m->plan, i, &m->m->nodes[i], m->o.iface, err, sizeof(err)) <
		    0) {
			mnist_node_error(m, i, "address", err);
			mnist_fail_run(m, "%s", err);
			return;
		}
		snprintf(n->ifname, sizeof(n->ifname), "%s", m->plan->nodes[i].ifname);
		snprintf(n->addr, sizeof(n->addr), "%s", m->plan->nodes[i].addr);
		snprintf(n->torch_version, sizeof(n->torch_version), "%s",
		         json_string_value(json_object_get(torch, "version"))
		             ? json_string_value(json_object_get(torch, "version"))
		             : "");
		m->nodes[i].python = json_string_value(
		    json_object_get(json_object_get(m->job.nodes[i].info, "python"), "path"));
		n->first_rank = rank;
		n->nranks = m->o.nproc_per_node;
		rank += n->nranks;
	}
	m->r.nranks = rank;
	job_plan_default_master(m->plan, m->o.master_port ? m->o.master_port : 29500);
}
