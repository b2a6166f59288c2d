/* SPDX-License-Identifier: MIT */
/*
 * test_rdma_matrix.c - the head's half of the matrix's RDMA proof
 * (probes/rdma_matrix.h): each node's end (the port and GID index NCCL
 * would use under the plan's NCCL_IB_HCA and NCCL_IB_GID_INDEX, else the
 * login's, or why the node cannot take part), why a pair is not tested,
 * the results in the model, the report row and the text, and
 * rdma-pair-failed on exactly the failed pair's two nodes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "probes/diagnose.h"
#include "probes/netmodel.h"
#include "probes/rdma_matrix.h"

static json_t *gid(int index, const char *type, const char *family, const char *address)
{
	const char *text = strcmp(family, "ipv4") == 0 ? "0000:0000:0000:0000:0000:ffff:0a00:0b0c"
	                                               : "fe80:0000:0000:0000:0000:0000:0000:0001";

	return json_pack("{sissssssssso}", "index", index, "gid", text, "type", type, "ndev",
	                 "ens1f0", "family", family, "address",
	                 address ? json_string(address) : json_null());
}

/* An ACTIVE RoCE port whose IPv4 RoCE v2 GID is at index 3 (a link-local
 * v2 before it), as roce-v2-idx3 of tests/fixtures/rdma/. */
static json_t *roce_port(const char *dev, const char *state)
{
	return json_pack(
	    "{sssisssssss[oooo]}", "device", dev, "port", 1, "state", state, "phys_state", "LinkUp",
	    "link_layer", "Ethernet", "gids", gid(0, "IB/RoCE v1", "link-local", "fe80::1"),
	    gid(1, "RoCE v2", "link-local", "fe80::1"), gid(2, "IB/RoCE v1", "ipv4", "10.0.11.12"),
	    gid(3, "RoCE v2", "ipv4", "10.0.11.12"));
}

static json_t *ib_port(const char *dev)
{
	return json_pack("{sssisssssssss[]}", "device", dev, "port", 1, "state", "ACTIVE",
	                 "phys_state", "LinkUp", "link_layer", "InfiniBand", "lid", "0x12", "gids");
}

static void node_with(struct nm_node *n, json_t *ports, const char *lib, json_t *vars)
{
	memset(n, 0, sizeof(*n));
	n->probed = 1;
	n->rdma = json_pack("{sos{sosos[]}}", "rdma", ports, "rdma_node", "verbs_lib",
	                    lib ? json_string(lib) : json_null(), "nccl_vars",
	                    vars ? vars : json_object(), "verbs_providers");
}

#define LIB "/usr/lib64/libibverbs.so.1"

static void roce_node_proves_with_nccls_port_and_gid_index(void **state)
{
	struct nm_node n;
	struct rdma_end e;

	node_with(&n, json_pack("[o]", roce_port("mlx5_0", "ACTIVE")), LIB, NULL);
	rdma_matrix_end(&n, NULL, -1, &e);
	if (!e.ok)
		fail_msg("%s", e.why);
	assert_string_equal(e.device, "mlx5_0");
	assert_int_equal(e.port, 1);
	assert_int_equal(e.gid_index, 3);
	assert_true(e.roce);
	json_decref(n.rdma);
}

static void nccl_ib_hca_chooses_the_port_of_the_proof(void **state)
{
	struct nm_node n;
	struct rdma_end e;

	node_with(&n, json_pack("[oo]", ib_port("mlx5_0"), ib_port("mlx5_1")), LIB,
	          json_pack("{ss}", "NCCL_IB_HCA", "mlx5_1"));
	rdma_matrix_end(&n, NULL, -1, &e);
	if (!e.ok)
		fail_msg("%s", e.why);
	assert_string_equal(e.device, "mlx5_1");
	assert_int_equal(e.gid_index, -1);
	assert_false(e.roce);
	json_decref(n.rdma);
}

/* node2 of the fault run: its login sets NCCL_IB_GID_INDEX=0 (a link-local
 * RoCE v1 GID), the plan sets 3; the job uses 3, so the proof does. */
static void the_plans_gid_index_is_proved_instead_of_the_logins(void **state)
{
	struct nm_node n;
	struct rdma_end e;

	node_with(&n, json_pack("[o]", roce_port("mlx5_0", "ACTIVE")), LIB,
	          json_pack("{ss}", "NCCL_IB_GID_INDEX", "0"));
	rdma_matrix_end(&n, NULL, 3, &e);
	if (!e.ok)
		fail_msg("%s", e.why);
	assert_int_equal(e.gid_index, 3);
	assert_true(e.gid_plan);
	assert_int_equal(e.login_gid_index, 0);
	json_decref(n.rdma);
}

static void without_a_plan_value_the_logins_gid_index_is_proved(void **state)
{
	struct nm_node n;
	struct rdma_end e;

	node_with(&n, json_pack("[o]", roce_port("mlx5_0", "ACTIVE")), LIB,
	          json_pack("{ss}", "NCCL_IB_GID_INDEX", "2"));
	rdma_matrix_end(&n, NULL, -1, &e);
	assert_int_equal(e.gid_index, 2);
	assert_false(e.gid_plan);
	assert_int_equal(e.login_gid_index, 2);
	json_decref(n.rdma);
}

/* node4 of the fault run: a stale NCCL_IB_HCA in the login, the plan's
 * value names the port the job will use. */
static void the_plans_nccl_ib_hca_chooses_the_port_over_the_logins(void **state)
{
	struct nm_node n;
	struct rdma_end e;

	node_with(&n,
	          json_pack("[oo]", roce_port("mlx5_0", "ACTIVE"), roce_port("mlx5_1", "ACTIVE")),
	          LIB, json_pack("{ss}", "NCCL_IB_HCA", "mlx5_9"));
	rdma_matrix_end(&n, "=mlx5_1", 3, &e);
	if (!e.ok)
		fail_msg("%s", e.why);
	assert_string_equal(e.device, "mlx5_1");
	assert_int_equal(e.gid_index, 3);
	assert_true(e.gid_plan);
	json_decref(n.rdma);
}

static void a_node_that_cannot_take_part_says_why(void **state)
{
	struct nm_node n;
	struct rdma_end e;

	node_with(&n, json_pack("[o]", roce_port("mlx5_0", "ACTIVE")), NULL, NULL);
	rdma_matrix_end(&n, NULL, -1, &e);
	assert_false(e.ok);
	assert_string_equal(e.why, "no libibverbs");
	json_decref(n.rdma);
	node_with(&n, json_array(), LIB, NULL);
	rdma_matrix_end(&n, NULL, -1, &e);
	assert_string_equal(e.why, "no RDMA device");
	json_decref(n.rdma);
	node_with(&n, json_pack("[o]", roce_port("mlx5_0", "INIT")), LIB, NULL);
	rdma_matrix_end(&n, NULL, -1, &e);
	assert_string_equal(e.why, "no ACTIVE port");
	json_decref(n.rdma);
	memset(&n, 0, sizeof(n)); /* an agent without RDMA facts */
	rdma_matrix_end(&n, NULL, -1, &e);
	assert_string_equal(e.why, "no libibverbs");
}

static void why_a_pair_is_not_tested_names_the_side_that_lacks(void **state)
{
	struct rdma_end ok = {.ok = 1, .roce = 1}, ib = {.ok = 1, .roce = 0},
	                none = {.ok = 0, .why = "no libibverbs"},
	                odd = {.ok = 0, .why = "no port NCCL would use (x)"};
	char buf[128];

	assert_null(rdma_matrix_why_not(&ok, &ok, buf, sizeof(buf)));
	assert_string_equal(rdma_matrix_why_not(&none, &ok, buf, sizeof(buf)), "no libibverbs");
	assert_string_equal(rdma_matrix_why_not(&ok, &none, buf, sizeof(buf)),
	                    "peer has no libibverbs");
	assert_string_equal(rdma_matrix_why_not(&ok, &odd, buf, sizeof(buf)),
	                    "peer has no port NCCL would use (x)");
	assert_string_equal(rdma_matrix_why_not(&ok, &ib, buf, sizeof(buf)), "link layers differ");
}

static void a_pair_without_any_rdma_port_is_left_alone(void **state)
{
	struct nm_node n;
	struct rdma_end plain, roce;

	node_with(&n, json_array(), LIB, NULL);
	rdma_matrix_end(&n, NULL, -1, &plain);
	json_decref(n.rdma);
	node_with(&n, json_pack("[o]", roce_port("mlx5_0", "ACTIVE")), LIB, NULL);
	rdma_matrix_end(&n, NULL, -1, &roce);
	json_decref(n.rdma);
	assert_false(rdma_matrix_relevant(&plain, &plain));
	assert_true(rdma_matrix_relevant(&plain, &roce));
	assert_true(rdma_matrix_relevant(&roce, &plain));
}

static void write_bytes_shrink_with_the_number_of_pairs(void **state)
{
	assert_int_equal(rdma_matrix_bytes(1), 4 * 1024 * 1024);
	assert_int_equal(rdma_matrix_bytes(8), 2 * 1024 * 1024);
	assert_int_equal(rdma_matrix_bytes(1000), 256 * 1024);
}

static json_t *ok_row(void)
{
	return json_pack("{sssIsfs{sssisi}s{sssisi}si}", "rdma", "ok", "rdma_bytes",
	                 (json_int_t)4194304, "rdma_ms", 2.0, "rdma_local", "device", "mlx5_0",
	                 "port", 1, "gid_index", 3, "rdma_peer", "device", "mlx5_1", "port", 1,
	                 "gid_index", 1, "active_mtu", 1024);
}

static void results_go_from_the_row_to_the_report_and_the_text(void **state)
{
	struct nm_attempt a = {0};
	json_t *row = ok_row(), *out = json_object();
	char text[256];

	rdma_matrix_set(&a, row);
	rdma_matrix_json(&a, out);
	assert_true(json_equal(row, out));
	assert_string_equal(rdma_matrix_text(&a, text, sizeof(text)),
	                    "ok 4.0 MiB in 2.0 ms (2097 MB/s), mlx5_0:1 gid 3 -> mlx5_1:1 gid 1, "
	                    "MTU 1024");
	json_decref(row);
	json_decref(out);
	memset(&a, 0, sizeof(a));
	rdma_matrix_not_tested(&a, "peer has no RDMA device");
	assert_string_equal(rdma_matrix_text(&a, text, sizeof(text)),
	                    "not tested: peer has no RDMA device");
	out = json_object();
	rdma_matrix_json(&a, out);
	assert_string_equal(json_string_value(json_object_get(out, "rdma_why")),
	                    "peer has no RDMA device");
	json_decref(out);
}

/* An attempt from node1 (the plan's 3, as its login) to node2 (the plan's
 * 3, its login 0), or with the given ends. */
static void attempt_with_sources(struct nm_attempt *a, const struct rdma_end *from,
                                 const struct rdma_end *to)
{
	json_t *row = ok_row();

	memset(a, 0, sizeof(*a));
	rdma_matrix_set(a, row);
	a->rdma_peer.gid_index = 3;
	rdma_matrix_sources(a, from, to);
	json_decref(row);
}

static void the_pairs_line_says_which_gid_index_was_proved_and_why(void **state)
{
	struct rdma_end
	    n1 = {.ok = 1, .roce = 1, .gid_index = 3, .gid_plan = 1, .login_gid_index = 3},
	    n2 = {.ok = 1, .roce = 1, .gid_index = 3, .gid_plan = 1, .login_gid_index = 0},
	    n3 = {.ok = 1, .roce = 1, .gid_index = 3, .gid_plan = 0, .login_gid_index = 3};
	struct nm_attempt a;
	char text[512];

	attempt_with_sources(&a, &n1, &n2);
	assert_string_equal(rdma_matrix_gid_text(&a, "node1", "node2", text, sizeof(text)),
	                    "node1 GID index 3, the plan's and the login's; node2 GID index 3, the "
	                    "plan's (the login's 0 is what run and mnist replace)");
	attempt_with_sources(&a, &n1, &n1);
	assert_string_equal(rdma_matrix_gid_text(&a, "node1", "node2", text, sizeof(text)),
	                    "GID index 3 at both ends, the plan's and the login's");
	attempt_with_sources(&a, &n3, &n3);
	assert_string_equal(rdma_matrix_gid_text(&a, "node1", "node2", text, sizeof(text)),
	                    "GID index 3 at both ends, the login's (the plan sets none)");
	memset(&a, 0, sizeof(a)); /* an InfiniBand pair, or a report without sources */
	assert_string_equal(rdma_matrix_gid_text(&a, "node1", "node2", text, sizeof(text)), "");
}

static void the_gid_sources_go_to_the_report_and_back(void **state)
{
	struct rdma_end
	    n1 = {.ok = 1, .roce = 1, .gid_index = 3, .gid_plan = 1, .login_gid_index = 3},
	    n2 = {.ok = 1, .roce = 1, .gid_index = 3, .gid_plan = 1, .login_gid_index = 0};
	struct nm_attempt a, back = {0};
	json_t *out = json_object();

	attempt_with_sources(&a, &n1, &n2);
	rdma_matrix_json(&a, out);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(out, "rdma_peer"), "gid_from")),
	    "plan");
	assert_int_equal(json_integer_value(
	                     json_object_get(json_object_get(out, "rdma_peer"), "login_gid_index")),
	                 0);
	rdma_matrix_set(&back, out);
	assert_string_equal(back.rdma_peer.gid_from, "plan");
	assert_int_equal(back.rdma_peer.login_gid_index, 0);
	assert_string_equal(back.rdma_local.gid_from, "plan");
	assert_int_equal(back.rdma_local.login_gid_index, 3);
	json_decref(out);
}

static void an_attempt_without_the_proof_adds_nothing(void **state)
{
	struct nm_attempt a = {0};
	json_t *row = json_pack("{ss}", "result", "ok"), *out = json_object();

	rdma_matrix_set(&a, row);
	assert_string_equal(a.rdma, "");
	rdma_matrix_json(&a, out);
	assert_int_equal(json_object_size(out), 0);
	json_decref(row);
	json_decref(out);
}

static void rdma_pair_failed_is_on_exactly_the_failed_pair(void **state)
{
	const char *hosts[] = {"node1", "node2", "node3"};
	struct netmodel *m = netmodel_new(hosts, 3);
	json_t *row = ok_row();
	struct nm_attempt *a;
	struct diagnosis *d;
	size_t found = 0;

	a = netmodel_add_attempt(m);
	a->from = 0;
	a->to = 1;
	snprintf(a->result, sizeof(a->result), "ok");
	rdma_matrix_set(a, row);
	snprintf(a->rdma, sizeof(a->rdma), "failed");
	snprintf(a->rdma_why, sizeof(a->rdma_why), "transport retry counter exceeded");
	a = netmodel_add_attempt(m);
	a->from = 0;
	a->to = 2;
	snprintf(a->result, sizeof(a->result), "ok");
	rdma_matrix_not_tested(a, "peer has no RDMA device");
	d = diagnose(m);
	for (size_t k = 0; k < d->nfindings; k++) {
		const struct finding *f = &d->findings[k];

		if (strcmp(f->id, "rdma-pair-failed") != 0)
			continue;
		found++;
		assert_int_equal(f->severity, SEV_ERROR);
		assert_int_equal(f->nnodes, 2);
		assert_int_equal(f->nodes[0], 0);
		assert_int_equal(f->nodes[1], 1);
		assert_non_null(strstr(f->message,
		                       "an RDMA write from node1 (mlx5_0:1, GID index 3) to "
		                       "node2 (mlx5_1:1, GID index 1) failed: transport "
		                       "retry counter exceeded"));
	}
	assert_int_equal(found, 1);
	diagnosis_free(d);
	netmodel_free(m);
	json_decref(row);
}

/* The seam: the suggestion the proof uses is known from the probes before
 * the matrix, and it is the one the diagnosis (and so the plan) gives. */
static void the_proofs_gid_index_is_the_one_the_plan_will_set(void **state)
{
	const char *hosts[] = {"node1", "node2"};
	struct netmodel *m = netmodel_new(hosts, 2);
	struct ib_suggestion s;
	struct diagnosis *d;
	struct rdma_end e;

	for (size_t i = 0; i < 2; i++) {
		struct nm_node n;

		node_with(&n, json_pack("[o]", roce_port("mlx5_0", "ACTIVE")), LIB,
		          i == 1 ? json_pack("{ss}", "NCCL_IB_GID_INDEX", "0") : NULL);
		m->nodes[i].probed = 1;
		m->nodes[i].rdma = n.rdma; /* the model owns it */
	}
	diagnose_suggest_ib(m, &s);
	m->matrix_done = 1; /* diagnose suggests nothing before the matrix ran */
	d = diagnose(m);
	assert_int_equal(s.gid_per_node[1], 3);
	assert_int_equal(d->sugg.ib.gid_per_node[0], s.gid_per_node[0]);
	assert_int_equal(d->sugg.ib.gid_per_node[1], s.gid_per_node[1]);
	rdma_matrix_end(&m->nodes[1], s.hca_per_node[1], s.gid_per_node[1], &e);
	assert_int_equal(e.gid_index, 3);
	assert_int_equal(e.login_gid_index, 0);
	ib_suggestion_fini(&s, 2);
	diagnosis_free(d);
	netmodel_free(m);
}

/* A pair that fails with the plan's own values stays rdma-pair-failed, and
 * its message says the indexes were the plan's. */
static void a_pair_failing_at_the_plans_index_keeps_its_finding(void **state)
{
	const char *hosts[] = {"node1", "node2"};
	struct netmodel *m = netmodel_new(hosts, 2);
	struct rdma_end
	    n1 = {.ok = 1, .roce = 1, .gid_index = 3, .gid_plan = 1, .login_gid_index = 3},
	    n2 = {.ok = 1, .roce = 1, .gid_index = 3, .gid_plan = 1, .login_gid_index = 0};
	struct nm_attempt *a = netmodel_add_attempt(m);
	json_t *row = ok_row();
	struct diagnosis *d;
	size_t found = 0;

	a->from = 0;
	a->to = 1;
	snprintf(a->result, sizeof(a->result), "ok");
	rdma_matrix_set(a, row);
	a->rdma_peer.gid_index = 3;
	rdma_matrix_sources(a, &n1, &n2);
	snprintf(a->rdma, sizeof(a->rdma), "failed");
	snprintf(a->rdma_why, sizeof(a->rdma_why), "transport retry counter exceeded");
	d = diagnose(m);
	for (size_t k = 0; k < d->nfindings; k++) {
		if (strcmp(d->findings[k].id, "rdma-pair-failed") != 0)
			continue;
		found++;
		assert_non_null(
		    strstr(d->findings[k].message,
		           "the same way (node1 GID index 3, the plan's and the login's; "
		           "node2 GID index 3, the plan's (the login's 0 is what run and "
		           "mnist replace))"));
	}
	assert_int_equal(found, 1);
	diagnosis_free(d);
	netmodel_free(m);
	json_decref(row);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(roce_node_proves_with_nccls_port_and_gid_index),
	    cmocka_unit_test(nccl_ib_hca_chooses_the_port_of_the_proof),
	    cmocka_unit_test(the_plans_gid_index_is_proved_instead_of_the_logins),
	    cmocka_unit_test(without_a_plan_value_the_logins_gid_index_is_proved),
	    cmocka_unit_test(the_plans_nccl_ib_hca_chooses_the_port_over_the_logins),
	    cmocka_unit_test(a_node_that_cannot_take_part_says_why),
	    cmocka_unit_test(why_a_pair_is_not_tested_names_the_side_that_lacks),
	    cmocka_unit_test(a_pair_without_any_rdma_port_is_left_alone),
	    cmocka_unit_test(write_bytes_shrink_with_the_number_of_pairs),
	    cmocka_unit_test(results_go_from_the_row_to_the_report_and_the_text),
	    cmocka_unit_test(the_pairs_line_says_which_gid_index_was_proved_and_why),
	    cmocka_unit_test(the_gid_sources_go_to_the_report_and_back),
	    cmocka_unit_test(an_attempt_without_the_proof_adds_nothing),
	    cmocka_unit_test(rdma_pair_failed_is_on_exactly_the_failed_pair),
	    cmocka_unit_test(the_proofs_gid_index_is_the_one_the_plan_will_set),
	    cmocka_unit_test(a_pair_failing_at_the_plans_index_keeps_its_finding),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
