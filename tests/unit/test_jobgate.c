/* SPDX-License-Identifier: MIT */
/*
 * test_jobgate.c - the job plan (jobs/jobplan.h) and its gate
 * (jobs/jobgate.h): the plan a check proves, the variables every job gets
 * from it, its saved form, and which findings its environment avoids. The
 * gate is fed every finding docs/findings.md documents.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jobs/jobgate.h"
#include "jobs/jobplan.h"

#define FIXTURES "tests/fixtures/clusters/"

static const char *const two[] = {"node1", "node2"};

/* A plan of node1 (master) and node2, both proved on eth0 with the
 * variables a check suggests, MASTER_PORT 29501 proved where the check
 * tried 29500 first. */
static struct job_plan *proved_plan(void)
{
	struct job_plan *p = job_plan_new(two, 2, 0);

	for (size_t i = 0; i < 2; i++) {
		struct job_plan_node *n = &p->nodes[i];

		snprintf(n->ifname, sizeof(n->ifname), "eth0");
		snprintf(n->addr, sizeof(n->addr), "10.0.0.%zu", i + 1);
		snprintf(n->nccl_ifname, sizeof(n->nccl_ifname), "eth0");
		snprintf(n->nccl_family, sizeof(n->nccl_family), "AF_INET");
		snprintf(n->gloo_ifname, sizeof(n->gloo_ifname), "eth0");
		n->proved = n->checked = 1;
	}
	p->proved = 1;
	p->port_tried = 29500;
	p->master_port = 29501;
	p->master_port_proved = 1;
	snprintf(p->master_addr, sizeof(p->master_addr), "10.0.0.1");
	return p;
}

/* Add one error finding with this id naming node i. */
static struct job_plan_finding *add_finding(struct job_plan *p, const char *id, size_t i)
{
	struct job_plan_finding *f;

	p->findings = realloc(p->findings, (p->nfindings + 1) * sizeof(*p->findings));
	f = &p->findings[p->nfindings++];
	memset(f, 0, sizeof(*f));
	snprintf(f->id, sizeof(f->id), "%s", id);
	f->severity = SEV_ERROR;
	f->message = strdup(id);
	f->nodes = calloc(1, sizeof(*f->nodes));
	f->nodes[0] = i;
	f->nnodes = 1;
	return f;
}

/* ------------------------------------------------------------ the table */

static void every_catalogue_id_has_one_gate_row_and_no_row_is_unknown(void **state)
{
	for (size_t k = 0; k < finding_catalogue_len; k++)
		if (!job_gate_rule(finding_catalogue[k].id))
			fail_msg("%s has no row in jobgate.c's table", finding_catalogue[k].id);
	assert_int_equal(job_gate_rules_len(), finding_catalogue_len);
	for (size_t k = 0; k < job_gate_rules_len(); k++) {
		int known = 0;

		for (size_t c = 0; c < finding_catalogue_len; c++)
			known |= strcmp(finding_catalogue[c].id, job_gate_rule_id(k)) == 0;
		if (!known)
			fail_msg("jobgate.c's row %s is no finding of the catalogue",
			         job_gate_rule_id(k));
	}
}

/* The findings a proved plan's environment avoids on a multi-node job: the
 * specification the table is held to. */
static const char *const avoided_by_the_environment[] = {
    "ipv6-no-route",
    "link-local-selected",
    "iface-unreachable",
    "hostname-loopback",
    "stale-ifname-env",
    "gloo-count-mismatch",
    "master-port-blocked",
    "master-port-in-use",
    "virtual-iface-selected",
    "nic-name-mismatch",
    "duplicate-address",
    /* left to the job, which tries the interpreter it starts */
    "torch-missing",
};

/* What still breaks a job on one node: the node's own state. */
static const char *const gate_a_one_node_job[] = {
    "node-unreachable",
    "master-port-held-by-run",
    "torch-missing",
    "shm-small",
    "probe-incomplete",
    "nccl-version-unknown",
    "ascend-probe-incomplete",
    "ascend-hccl-settings",
    "gpu-missing",
    "gpu-ecc-uncorrectable",
    "gpu-row-remap-pending",
    "gpu-retired-pages-pending",
    "gpu-row-remap-failure",
    "gpu-row-remap-unknown",
    "gpu-xid",
    "gpu-pcie-degraded",
    "gpu-nvlink-down",
    "gpu-throttled",
    "gpu-persistence-off",
    "gpu-slow",
    "gpu-dcgm-fail",
    "gpu-dcgm-warn",
    "gpu-dcgm-absent",
    "expect-gpus",
    "expect-driver",
};

static int listed(const char *const *list, size_t n, const char *id)
{
	for (size_t k = 0; k < n; k++)
		if (strcmp(list[k], id) == 0)
			return 1;
	return 0;
}

static void every_documented_finding_goes_through_the_gate(void **state)
{
	FILE *f = fopen("docs/findings.md", "r");
	char line[512];
	int seen = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char id[64], why[1024];
		struct job_plan *p;
		int many, one, want_many, want_one;

		if (sscanf(line, "## %63[a-z0-9-]", id) != 1)
			continue;
		seen++;
		p = proved_plan();
		/* MASTER_PORT findings name the master; the others node2 */
		add_finding(p, id, strncmp(id, "master-port", 11) == 0 ? 0 : 1);
		many = job_gate_avoided(p, &p->findings[0], 0, why, sizeof(why));
		one = job_gate_avoided(p, &p->findings[0], 1, why, sizeof(why));
		want_many = listed(avoided_by_the_environment,
		                   sizeof(avoided_by_the_environment) / sizeof(char *), id);
		want_one = !listed(gate_a_one_node_job,
		                   sizeof(gate_a_one_node_job) / sizeof(char *), id) ||
		           want_many;
		if (many != want_many)
			fail_msg("%s: avoided in a 2-node job is %d, expected %d", id, many,
			         want_many);
		if (one != want_one)
			fail_msg("%s: avoided in a 1-node job is %d, expected %d", id, one,
			         want_one);
		assert_int_equal(job_gate_judge(p, 0, NULL, NULL), !want_many);
		job_plan_free(p);
	}
	fclose(f);
	assert_int_equal(seen, (int)finding_catalogue_len);
}

/* ------------------------------------------------------------ the clauses */

static void hostname_loopback_is_avoided_by_the_nodes_gloo_ifname(void **state)
{
	struct job_plan *p = proved_plan();
	char *refused = NULL, *avoided = NULL;

	add_finding(p, "hostname-loopback", 1);
	assert_int_equal(job_gate_judge(p, 0, &refused, &avoided), 0);
	assert_null(refused);
	assert_string_equal(avoided,
	                    "avoided: hostname-loopback on node2 by GLOO_SOCKET_IFNAME=eth0\n");
	free(avoided);
	job_plan_free(p);
}

static void a_stale_nccl_ib_hca_is_avoided_only_by_the_nodes_verified_nccl_ib_hca(void **state)
{
	struct job_plan *p = proved_plan();
	char *refused = NULL, *avoided = NULL;

	add_finding(p, "nccl-ib-hca-stale", 1);
	assert_int_equal(job_gate_judge(p, 0, &refused, NULL), 1);
	assert_string_equal(refused, "  nccl-ib-hca-stale: nccl-ib-hca-stale\n");
	free(refused);
	refused = NULL;
	snprintf(p->nodes[1].nccl_ib_hca, sizeof(p->nodes[1].nccl_ib_hca), "=mlx5_0,mlx5_1");
	assert_int_equal(job_gate_judge(p, 0, &refused, &avoided), 0);
	assert_null(refused);
	assert_string_equal(avoided,
	                    "avoided: nccl-ib-hca-stale on node2 by NCCL_IB_HCA==mlx5_0,mlx5_1\n");
	free(avoided);
	job_plan_free(p);
}

static void a_roce_gid_mismatch_is_avoided_only_by_the_nodes_verified_gid_index(void **state)
{
	struct job_plan *p = proved_plan();
	char *refused = NULL, *avoided = NULL;

	add_finding(p, "roce-gid-mismatch", 1);
	assert_int_equal(job_gate_judge(p, 0, &refused, NULL), 1);
	assert_string_equal(refused, "  roce-gid-mismatch: roce-gid-mismatch\n");
	free(refused);
	refused = NULL;
	snprintf(p->nodes[1].nccl_ib_gid_index, sizeof(p->nodes[1].nccl_ib_gid_index), "3");
	assert_int_equal(job_gate_judge(p, 0, &refused, &avoided), 0);
	assert_null(refused);
	assert_string_equal(avoided,
	                    "avoided: roce-gid-mismatch on node2 by NCCL_IB_GID_INDEX=3\n");
	free(avoided);
	job_plan_free(p);
}

static void an_unproved_node_avoids_nothing(void **state)
{
	struct job_plan *p = proved_plan();
	char *refused = NULL;

	p->nodes[1].proved = 0;
	add_finding(p, "hostname-loopback", 1);
	assert_int_equal(job_gate_judge(p, 0, &refused, NULL), 1);
	assert_string_equal(refused, "  hostname-loopback: hostname-loopback\n");
	free(refused);
	job_plan_free(p);
}

static void a_blocked_master_port_is_avoided_only_by_another_proved_one(void **state)
{
	struct job_plan *p = proved_plan();
	char why[256];

	add_finding(p, "master-port-blocked", 0);
	assert_true(job_gate_avoided(p, &p->findings[0], 0, why, sizeof(why)));
	assert_string_equal(why, "on node1 by MASTER_PORT=29501 (proved; 29500 is not usable)");
	p->master_port = 29500; /* --master-port 29500 asked: the blocked one */
	assert_false(job_gate_avoided(p, &p->findings[0], 0, why, sizeof(why)));
	assert_string_equal(why, "");
	p->master_port = 29501;
	p->master_port_proved = 0;
	assert_false(job_gate_avoided(p, &p->findings[0], 0, why, sizeof(why)));
	job_plan_free(p);
}

static void a_finding_on_two_nodes_is_avoided_only_when_both_are(void **state)
{
	struct job_plan *p = proved_plan();
	struct job_plan_finding *f = add_finding(p, "ipv6-no-route", 0);
	char why[1024];

	f->nodes = realloc(f->nodes, 2 * sizeof(*f->nodes));
	f->nodes[1] = 1;
	f->nnodes = 2;
	assert_true(job_gate_avoided(p, f, 0, why, sizeof(why)));
	assert_string_equal(why, "on node1 by NCCL_SOCKET_IFNAME=eth0 NCCL_SOCKET_FAMILY=AF_INET "
	                         "GLOO_SOCKET_IFNAME=eth0; on node2 by NCCL_SOCKET_IFNAME=eth0 "
	                         "NCCL_SOCKET_FAMILY=AF_INET GLOO_SOCKET_IFNAME=eth0");
	p->nodes[1].gloo_ifname[0] = '\0';
	assert_false(job_gate_avoided(p, f, 0, why, sizeof(why)));
	job_plan_free(p);
}

static void warnings_never_gate_a_job(void **state)
{
	struct job_plan *p = proved_plan();

	add_finding(p, "mtu-mismatch", 1)->severity = SEV_WARNING;
	assert_int_equal(job_gate_judge(p, 0, NULL, NULL), 0);
	job_plan_free(p);
}

/* ------------------------------------------------------------ transports */

static void a_gloo_job_is_not_refused_for_findings_of_nccls_ib_transport_alone(void **state)
{
	struct job_plan *p = proved_plan();
	char *refused = NULL, *avoided = NULL;

	add_finding(p, "rdma-memlock-low", 0);
	add_finding(p, "rdma-pair-failed", 1);
	assert_int_equal(job_gate_judge_for(p, 0, JOB_USES_SOCKETS, &refused, &avoided), 0);
	assert_null(refused);
	assert_string_equal(avoided,
	                    "not for this job: rdma-memlock-low (NCCL's IB transport only): "
	                    "rdma-memlock-low\n"
	                    "not for this job: rdma-pair-failed (NCCL's IB transport only): "
	                    "rdma-pair-failed\n");
	free(avoided);
	/* a job that may use NCCL is refused as before */
	assert_int_equal(job_gate_judge_for(p, 0, JOB_USES_ALL, &refused, NULL), 2);
	assert_string_equal(refused, "  rdma-memlock-low: rdma-memlock-low\n"
	                             "  rdma-pair-failed: rdma-pair-failed\n");
	free(refused);
	assert_int_equal(job_gate_judge(p, 0, NULL, NULL), 2);
	job_plan_free(p);
}

static void a_gloo_job_is_still_refused_for_a_gpu_or_a_socket_finding(void **state)
{
	struct job_plan *p = proved_plan();
	char *refused = NULL;

	add_finding(p, "gpu-ecc-uncorrectable", 1);
	add_finding(p, "ephemeral-ports-blocked", 0);
	add_finding(p, "rdma-memlock-low", 0);
	assert_int_equal(job_gate_judge_for(p, 0, JOB_USES_SOCKETS, &refused, NULL), 2);
	assert_string_equal(refused, "  gpu-ecc-uncorrectable: gpu-ecc-uncorrectable\n"
	                             "  ephemeral-ports-blocked: ephemeral-ports-blocked\n");
	free(refused);
	job_plan_free(p);
}

/* ------------------------------------------------------------ drains */

static void only_the_nodes_own_state_drains_it(void **state)
{
	static const char *const drains[] = {
	    "node-unreachable", "gpu-ecc-uncorrectable",
	    "gpu-missing",      "gpu-dcgm-fail",
	    "expect-gpus",      "expect-mtu",
	    "expect-ib-rate",   "ephemeral-ports-blocked",
	    "rdma-port-down",   "path-mtu-blackhole",
	};
	static const struct {
		const char *id;
		enum job_drain why;
	} kept[] = {
	    {"hostname-loopback", DRAIN_NOT_AVOIDED},   {"ipv6-no-route", DRAIN_NOT_AVOIDED},
	    {"master-port-blocked", DRAIN_NOT_AVOIDED}, {"duplicate-address", DRAIN_NOT_AVOIDED},
	    {"nccl-ib-hca-stale", DRAIN_NOT_LOGIN},     {"roce-gid-mismatch", DRAIN_NOT_LOGIN},
	    {"rdma-memlock-low", DRAIN_NOT_LOGIN},      {"stale-ifname-env", DRAIN_NOT_LOGIN},
	    {"torch-missing", DRAIN_NOT_LOGIN},         {"rdma-pair-failed", DRAIN_NOT_PAIR},
	};

	for (size_t k = 0; k < sizeof(drains) / sizeof(drains[0]); k++)
		if (job_gate_drain(drains[k]) != DRAINS)
			fail_msg("%s does not drain", drains[k]);
	for (size_t k = 0; k < sizeof(kept) / sizeof(kept[0]); k++)
		if (job_gate_drain(kept[k].id) != kept[k].why)
			fail_msg("%s: drain column %d, not %d", kept[k].id,
			         job_gate_drain(kept[k].id), kept[k].why);
	/* an id the table lacks drains, as it gates */
	assert_int_equal(job_gate_drain("no-such-finding"), DRAINS);
	assert_string_equal(job_gate_drain_why(DRAIN_NOT_LOGIN),
	                    "it comes from the checking user's login environment, not the node");
}

/* Every finding the plan's environment can avoid on some node is, by that,
 * no drain reason: a job started with it does not meet it. */
static void no_finding_the_plan_avoids_drains(void **state)
{
	struct job_plan *p = proved_plan();

	snprintf(p->nodes[1].nccl_ib_hca, sizeof(p->nodes[1].nccl_ib_hca), "=mlx5_0");
	snprintf(p->nodes[1].nccl_ib_gid_index, sizeof(p->nodes[1].nccl_ib_gid_index), "3");
	for (size_t k = 0; k < job_gate_rules_len(); k++) {
		const char *id = job_gate_rule_id(k);
		struct job_plan_finding *f = add_finding(p, id, 1);
		char why[1024];

		if (job_gate_avoided(p, f, 0, why, sizeof(why)) && job_gate_drain(id) == DRAINS)
			fail_msg("%s is avoided (%s) but drains", id, why);
	}
	job_plan_free(p);
}

/* ------------------------------------------------------------ from a check */

static void load(const char *name, struct netmodel **m, struct diagnosis **d)
{
	char path[256], err[CD_ERRLEN] = "";
	json_error_t jerr;
	json_t *doc;

	snprintf(path, sizeof(path), FIXTURES "%s", name);
	doc = json_load_file(path, 0, &jerr);
	if (!doc)
		fail_msg("%s: %s", path, jerr.text);
	*m = netmodel_load_json(doc, err, sizeof(err));
	json_decref(doc);
	if (!*m)
		fail_msg("%s: %s", path, err);
	*d = diagnose(*m);
}

static void a_checks_plan_gives_each_node_the_suggested_variables(void **state)
{
	struct netmodel *m;
	struct diagnosis *d;
	struct job_plan *p;
	struct job_var v[JOB_PLAN_VARS];
	char got[1024] = "", why[1024];
	int n;

	load("ib0-link-local.json", &m, &d);
	p = job_plan_from_check(m, d, 0, NULL);
	assert_true(p->proved);
	n = job_plan_vars(p, 1, v);
	for (int k = 0; k < n; k++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s=%s\n", v[k].name,
		         v[k].value);
	assert_string_equal(got,
	                    "NCCL_SOCKET_IFNAME=eth0\nNCCL_SOCKET_FAMILY=AF_INET\n"
	                    "GLOO_SOCKET_IFNAME=eth0\nMASTER_ADDR=10.0.0.1\nMASTER_PORT=29500\n");
	assert_string_equal(p->nodes[1].addr, "10.0.0.2");
	/* the check's link-local-selected is what those variables avoid */
	for (size_t k = 0; k < p->nfindings; k++) {
		if (strcmp(p->findings[k].id, "link-local-selected") != 0)
			continue;
		assert_true(job_gate_avoided(p, &p->findings[k], 0, why, sizeof(why)));
		assert_non_null(strstr(why, "on gpu2 by NCCL_SOCKET_IFNAME=eth0"));
	}
	job_plan_free(p);
	diagnosis_free(d);
	netmodel_free(m);
}

static void a_checks_plan_takes_the_family_the_check_suggested(void **state)
{
	struct netmodel *m;
	struct diagnosis *d;
	struct job_plan *p;

	load("ipv6-only.json", &m, &d);
	p = job_plan_from_check(m, d, 0, NULL);
	assert_string_equal(p->master_addr, "fd00:db8::1");
	for (size_t i = 0; i < p->n; i++) {
		assert_string_equal(p->nodes[i].nccl_family, diagnose_sugg_family(&d->sugg)
		                                                 ? diagnose_sugg_family(&d->sugg)
		                                                 : "");
		assert_string_not_equal(p->nodes[i].nccl_family, "AF_INET");
	}
	job_plan_free(p);
	diagnosis_free(d);
	netmodel_free(m);
}

/* ------------------------------------------------------------ the probe's pick */

static void a_probes_pick_is_exact_and_unproved(void **state)
{
	struct job_plan *p = job_plan_new(two, 2, 0);
	json_t *env = json_object();
	char *s;

	assert_true(job_plan_needs_pick(p, 1, NULL));
	job_plan_take_pick(p, 1, "ens5", "fd00::2", "NCCL's first pick");
	assert_false(job_plan_needs_pick(p, 1, NULL));
	assert_true(job_plan_needs_pick(p, 1, "eth1"));
	assert_false(p->nodes[1].proved);
	job_plan_default_master(p, 29500); /* node1 has no address yet */
	assert_int_equal(p->master_port, 29500);
	job_plan_env(p, 1, env);
	s = json_dumps(env, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(
	    s, "{\"GLOO_SOCKET_IFNAME\":\"ens5\",\"MASTER_PORT\":\"29500\","
	       "\"NCCL_SOCKET_FAMILY\":\"AF_INET6\",\"NCCL_SOCKET_IFNAME\":\"=ens5\"}");
	assert_non_null(strstr(p->notes, "node2: ens5 fd00::2 (NCCL's first pick): not proved"));
	free(s);
	json_decref(env);
	job_plan_free(p);
}

/* ------------------------------------------------------------ saved */

static void a_saved_plan_reads_back_the_same(void **state)
{
	struct job_plan *p = proved_plan(), *back;
	json_t *a, *b;
	char err[256];

	add_finding(p, "hostname-loopback", 1);
	p->notes = strdup("node2: a note\n");
	a = job_plan_to_json(p);
	back = job_plan_from_json(a, err, sizeof(err));
	assert_non_null(back);
	b = job_plan_to_json(back);
	assert_true(json_equal(a, b));
	assert_string_equal(back->notes, "node2: a note\n");
	json_decref(a);
	json_decref(b);
	job_plan_free(back);
	job_plan_free(p);
}

static void a_saved_plan_keeps_the_ib_variables_and_sets_them_after_gloos(void **state)
{
	struct job_plan *p = proved_plan(), *back;
	struct job_var v[JOB_PLAN_VARS];
	char err[256], got[512] = "";
	json_t *a;
	int n;

	snprintf(p->nodes[1].nccl_ib_hca, sizeof(p->nodes[1].nccl_ib_hca), "=mlx5_0");
	snprintf(p->nodes[1].nccl_ib_gid_index, sizeof(p->nodes[1].nccl_ib_gid_index), "3");
	a = job_plan_to_json(p);
	assert_null(json_object_get(json_array_get(json_object_get(a, "nodes"), 0), "NCCL_IB_HCA"));
	back = job_plan_from_json(a, err, sizeof(err));
	assert_non_null(back);
	n = job_plan_vars(back, 1, v);
	for (int k = 0; k < n; k++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s ", v[k].name);
	assert_string_equal(got, "NCCL_SOCKET_IFNAME NCCL_SOCKET_FAMILY GLOO_SOCKET_IFNAME "
	                         "NCCL_IB_HCA NCCL_IB_GID_INDEX MASTER_ADDR MASTER_PORT ");
	assert_string_equal(back->nodes[1].nccl_ib_hca, "=mlx5_0");
	assert_string_equal(back->nodes[1].nccl_ib_gid_index, "3");
	json_decref(a);
	job_plan_free(back);
	job_plan_free(p);
}

/* What the bench sets for NCCL: run's variables of the node, the NCCL ones
 * only (Gloo's and the master's mean nothing to NCCL's bench). */
static void the_benchs_nccl_variables_are_runs_nccl_ones(void **state)
{
	struct job_plan *p = proved_plan();
	json_t *env = json_object(), *all = json_object(), *v;
	const char *name;
	char *s;

	snprintf(p->nodes[1].nccl_ib_hca, sizeof(p->nodes[1].nccl_ib_hca), "=mlx5_0");
	snprintf(p->nodes[1].nccl_ib_gid_index, sizeof(p->nodes[1].nccl_ib_gid_index), "3");
	assert_int_equal(job_plan_nccl_env(p, 1, env), 4);
	s = json_dumps(env, JSON_COMPACT);
	assert_string_equal(s, "{\"NCCL_SOCKET_IFNAME\":\"eth0\",\"NCCL_SOCKET_FAMILY\":"
	                       "\"AF_INET\",\"NCCL_IB_HCA\":\"=mlx5_0\",\"NCCL_IB_GID_INDEX\":"
	                       "\"3\"}");
	job_plan_env(p, 1, all);
	json_object_foreach(env, name, v) assert_true(json_equal(v, json_object_get(all, name)));
	free(s);
	json_decref(env);
	json_decref(all);
	job_plan_free(p);
}

static void a_plan_of_another_version_is_refused_with_the_reason(void **state)
{
	json_t *old =
	    json_pack("{sisIs[]s[]}", "version", 1, "time", (json_int_t)0, "errors", "ifaces");
	char err[256];

	assert_null(job_plan_from_json(old, err, sizeof(err)));
	assert_string_equal(err, "it was saved by another version of clusterdoc (plan version 1, "
	                         "this one reads 2)");
	json_decref(old);
}

static void a_plan_made_for_another_port_iface_or_nodes_does_not_fit(void **state)
{
	struct job_plan *p = proved_plan();
	static const char *const other[] = {"node2", "node1"};
	char why[256];

	assert_false(job_plan_key_differs(p, two, 2, 0, NULL, why, sizeof(why)));
	assert_true(job_plan_key_differs(p, two, 2, 29500, NULL, why, sizeof(why)));
	assert_string_equal(why, "it was made without --master-port (MASTER_PORT 29501), not for "
	                         "29500");
	p->port_asked = 29501;
	assert_true(job_plan_key_differs(p, two, 2, 29500, NULL, why, sizeof(why)));
	assert_string_equal(why, "it was made for --master-port 29501, not 29500");
	assert_true(job_plan_key_differs(p, two, 2, 0, NULL, why, sizeof(why)));
	assert_string_equal(why, "it was made for --master-port 29501");
	assert_true(job_plan_key_differs(p, two, 2, 29501, "eth1", why, sizeof(why)));
	assert_string_equal(why, "it was made for no --iface, not --iface eth1");
	assert_true(job_plan_key_differs(p, other, 2, 29501, NULL, why, sizeof(why)));
	assert_string_equal(why, "it was made for other nodes or another master");
	job_plan_free(p);
}

/* ------------------------------------------------------------ the refusal's words */

/* A refused error is said with up to three lines of its evidence. */
static void a_refused_error_shows_its_evidence_lines(void **state)
{
	struct job_plan *p = proved_plan();
	struct job_plan_finding *f = add_finding(p, "gpu-ecc-uncorrectable", 1);
	char *refused = NULL;

	(void)state;
	f->evidence = strdup("node2/gpu1: 2 uncorrectable\nnode2/gpu2: 1\nnode2/gpu3: 1\n"
	                     "node2/gpu4: 1\nnode2/gpu5: 1");
	assert_int_equal(job_gate_judge(p, 0, &refused, NULL), 1);
	assert_string_equal(refused, "  gpu-ecc-uncorrectable: gpu-ecc-uncorrectable\n"
	                             "      node2/gpu1: 2 uncorrectable\n"
	                             "      node2/gpu2: 1\n"
	                             "      node2/gpu3: 1\n"
	                             "      (2 more: `clusterdoc check` shows them all)\n");
	free(refused);
	job_plan_free(p);
}

/* Errors that are some nodes' own state name those nodes to leave out;
 * one between the nodes, or on every node, names none. */
static void the_nodes_to_leave_out_are_those_whose_own_state_refuses(void **state)
{
	static const char *const three[] = {"node1", "node2", "node3"};
	struct job_plan *p = job_plan_new(three, 3, 0);
	const char **hosts;

	(void)state;
	p->proved = 1;
	add_finding(p, "gpu-ecc-uncorrectable", 2);
	add_finding(p, "gpu-row-remap-failure", 1);
	assert_int_equal(job_gate_leave_out(p, 0, JOB_USES_ALL, &hosts), 1);
	assert_string_equal(hosts[0], "node2");
	assert_string_equal(hosts[1], "node3");
	assert_null(hosts[2]);
	free(hosts);
	add_finding(p, "gpu-xid", 0);
	assert_int_equal(job_gate_leave_out(p, 0, JOB_USES_ALL, &hosts), 0);
	assert_null(hosts);
	job_plan_free(p);
	p = job_plan_new(three, 3, 0);
	p->proved = 1;
	add_finding(p, "gpu-ecc-uncorrectable", 2);
	add_finding(p, "rdma-pair-failed", 1); /* between two nodes: no telling which */
	assert_int_equal(job_gate_leave_out(p, 0, JOB_USES_ALL, &hosts), 0);
	job_plan_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(every_catalogue_id_has_one_gate_row_and_no_row_is_unknown),
	    cmocka_unit_test(every_documented_finding_goes_through_the_gate),
	    cmocka_unit_test(hostname_loopback_is_avoided_by_the_nodes_gloo_ifname),
	    cmocka_unit_test(a_stale_nccl_ib_hca_is_avoided_only_by_the_nodes_verified_nccl_ib_hca),
	    cmocka_unit_test(a_roce_gid_mismatch_is_avoided_only_by_the_nodes_verified_gid_index),
	    cmocka_unit_test(an_unproved_node_avoids_nothing),
	    cmocka_unit_test(a_blocked_master_port_is_avoided_only_by_another_proved_one),
	    cmocka_unit_test(a_finding_on_two_nodes_is_avoided_only_when_both_are),
	    cmocka_unit_test(warnings_never_gate_a_job),
	    cmocka_unit_test(a_gloo_job_is_not_refused_for_findings_of_nccls_ib_transport_alone),
	    cmocka_unit_test(a_gloo_job_is_still_refused_for_a_gpu_or_a_socket_finding),
	    cmocka_unit_test(only_the_nodes_own_state_drains_it),
	    cmocka_unit_test(no_finding_the_plan_avoids_drains),
	    cmocka_unit_test(a_checks_plan_gives_each_node_the_suggested_variables),
	    cmocka_unit_test(a_checks_plan_takes_the_family_the_check_suggested),
	    cmocka_unit_test(a_probes_pick_is_exact_and_unproved),
	    cmocka_unit_test(a_saved_plan_reads_back_the_same),
	    cmocka_unit_test(a_saved_plan_keeps_the_ib_variables_and_sets_them_after_gloos),
	    cmocka_unit_test(the_benchs_nccl_variables_are_runs_nccl_ones),
	    cmocka_unit_test(a_plan_of_another_version_is_refused_with_the_reason),
	    cmocka_unit_test(a_plan_made_for_another_port_iface_or_nodes_does_not_fit),
	    cmocka_unit_test(a_refused_error_shows_its_evidence_lines),
	    cmocka_unit_test(the_nodes_to_leave_out_are_those_whose_own_state_refuses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
