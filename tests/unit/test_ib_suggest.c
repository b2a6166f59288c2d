/* SPDX-License-Identifier: MIT */
/*
 * test_ib_suggest.c - the suggested NCCL_IB_HCA and NCCL_IB_GID_INDEX
 * (probes/ib_suggest.h), chosen from hand-written "rdma"/"rdma_node" JSON
 * in the agent's shape (docs/nccl.md) and verified with the IB prediction.
 * One row per behaviour; each row's name says what it pins.
 */
#include "probes/ib_suggest.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- ports, as the agent's netprobe writes them ---- */

#define PATH(root, dev) "[\"0000:" root ":01.0\",\"0000:" dev ":00.0\"]"

#define IB(dev, port, state, path)                                                      \
	"{\"device\":\"" dev "\",\"port\":" #port ",\"state\":\"" state                 \
	"\",\"phys_state\":\"LinkUp\",\"link_layer\":\"InfiniBand\",\"rate_gbps\":200," \
	"\"pci_path\":" path ",\"gids\":[]}"

#define GID(i, hex, type, fam) \
	"{\"index\":" #i ",\"gid\":\"" hex "\",\"type\":\"" type "\",\"family\":\"" fam "\"}"
#define LL_V1(i) GID(i, "fe80:0000:0000:0000:a288:c2ff:fe3b:506a", "IB/RoCE v1", "link-local")
#define LL_V2(i) GID(i, "fe80:0000:0000:0000:a288:c2ff:fe3b:506a", "RoCE v2", "link-local")
#define V4_V1(i) GID(i, "0000:0000:0000:0000:0000:ffff:0a00:0b0c", "IB/RoCE v1", "ipv4")
#define V4_V2(i) GID(i, "0000:0000:0000:0000:0000:ffff:0a00:0b0c", "RoCE v2", "ipv4")
#define V6_V2(i) GID(i, "fd00:0000:0000:0000:0000:0000:0000:0005", "RoCE v2", "ipv6")

#define ROCE(dev, gids)                                                                      \
	"{\"device\":\"" dev "\",\"port\":1,\"state\":\"ACTIVE\",\"phys_state\":\"LinkUp\"," \
	"\"link_layer\":\"Ethernet\",\"gids\":[" gids "]}"

/* the idx3 and idx1 tables of tests/fixtures/rdma/roce-v2-idx3 and -idx1 */
#define IDX3 ROCE("mlx5_0", LL_V1(0) "," LL_V2(1) "," V4_V1(2) "," V4_V2(3))
#define IDX1 ROCE("mlx5_0", LL_V1(0) "," V4_V2(1))

#define NODE_VARS(vars) "{\"verbs_lib\":\"/usr/lib/libibverbs.so.1\",\"nccl_vars\":{" vars "}}"
#define NODE            NODE_VARS("")
#define STALE           NODE_VARS("\"NCCL_IB_HCA\":\"mlx5_9\"")

#define TWO_HCAS                                                                      \
	"[" IB("mlx5_0", 1, "ACTIVE", PATH("00", "17")) "," IB("mlx5_1", 1, "ACTIVE", \
	                                                       PATH("40", "41")) "]"

struct row {
	const char *name;
	/* per node: the "rdma" array and the "rdma_node" object; NULL ends */
	const char *rdma[3], *rdma_node[3];
	const char *gpu_pci; /* of every node, or NULL */
	const char *hca;     /* common NCCL_IB_HCA, NULL = none */
	const char *hca_node[2];
	int gid, gid_node[2];
	const char *note; /* a substring of the notes, or NULL = no notes */
};

static const struct row rows[] = {
    {.name = "every_port_active_and_no_NCCL_IB_HCA_gets_no_NCCL_IB_HCA_as_it_changes_nothing",
     .rdma = {TWO_HCAS, TWO_HCAS},
     .rdma_node = {NODE, NODE},
     .gid = -1,
     .gid_node = {-1, -1}},
    {.name = "a_stale_NCCL_IB_HCA_gets_the_exact_list_of_ACTIVE_HCAs_on_every_node",
     .rdma = {TWO_HCAS, TWO_HCAS},
     .rdma_node = {STALE, NODE},
     .hca = "=mlx5_0,mlx5_1",
     .hca_node = {"=mlx5_0,mlx5_1", "=mlx5_0,mlx5_1"},
     .gid = -1,
     .gid_node = {-1, -1}},
    {.name = "an_HCA_without_its_verbs_provider_is_left_out_of_NCCL_IB_HCA",
     .rdma = {"[{\"device\":\"mlx5_0\",\"port\":1,\"state\":\"ACTIVE\",\"link_layer\":"
              "\"InfiniBand\",\"driver\":\"mlx5_core\",\"provider\":\"mlx5\",\"gids\":[]},"
              "{\"device\":\"bnxt_re0\",\"port\":1,\"state\":\"ACTIVE\",\"link_layer\":"
              "\"InfiniBand\",\"driver\":\"bnxt_en\",\"provider\":null,\"gids\":[]}]",
              TWO_HCAS},
     .rdma_node = {STALE, STALE},
     .hca_node = {"=mlx5_0", "=mlx5_0,mlx5_1"},
     .gid = -1,
     .gid_node = {-1, -1}},
    {.name = "a_two_port_HCA_with_one_port_down_is_named_with_its_ACTIVE_port",
     .rdma = {"[" IB("mlx5_0", 1, "ACTIVE", PATH("00", "17")) "," IB(
                  "mlx5_0", 2, "DOWN", PATH("00", "17")) "," IB("mlx5_1", 1, "ACTIVE",
                                                                PATH("40", "41")) "]",
              TWO_HCAS},
     .rdma_node = {STALE, STALE},
     .hca_node = {"=mlx5_0:1,mlx5_1", "=mlx5_0,mlx5_1"},
     .gid = -1,
     .gid_node = {-1, -1}},
    {.name = "the_HCAs_nearest_the_GPUs_come_first",
     .rdma = {TWO_HCAS, TWO_HCAS},
     .rdma_node = {STALE, STALE},
     .gpu_pci = "{\"paths\":{\"0000:42:00.0\":\"/sys/devices/pci0000:40/0000:40:01.0/"
                "0000:42:00.0\"}}",
     .hca = "=mlx5_1,mlx5_0",
     .hca_node = {"=mlx5_1,mlx5_0", "=mlx5_1,mlx5_0"},
     .gid = -1,
     .gid_node = {-1, -1}},
    {.name = "NCCL_IB_DISABLE_makes_the_NCCL_IB_HCA_fail_to_verify_and_says_so",
     .rdma = {TWO_HCAS, TWO_HCAS},
     .rdma_node = {NODE_VARS("\"NCCL_IB_HCA\":\"mlx5_9\",\"NCCL_IB_DISABLE\":\"1\""), STALE},
     .hca_node = {NULL, "=mlx5_0,mlx5_1"},
     .gid = -1,
     .gid_node = {-1, -1},
     .note = "a: NCCL_IB_HCA==mlx5_0,mlx5_1 did not verify (NCCL would use socket: "
             "NCCL_IB_DISABLE=1 (from environment))"},
    {.name = "roce_v2_at_index_3_and_at_index_1_is_given_per_node_and_said_so",
     .rdma = {"[" IDX3 "]", "[" IDX1 "]"},
     .rdma_node = {NODE, NODE},
     .gid = -1,
     .gid_node = {3, 1},
     .note = "NCCL_IB_GID_INDEX: no index holds a RoCE v2 GID of the same family on every "
             "RoCE node, so it is given per node"},
    {.name = "roce_v2_at_the_same_index_on_every_node_is_one_common_index",
     .rdma = {"[" IDX3 "]", "[" IDX3 "]"},
     .rdma_node = {NODE, NODE},
     .gid = 3,
     .gid_node = {3, 3}},
    {.name = "the_lowest_index_valid_on_every_node_wins_over_each_nodes_own_lowest",
     .rdma = {"[" ROCE("mlx5_0", LL_V2(0) "," V4_V2(1) "," V4_V2(3)) "]",
              "[" ROCE("mlx5_0", LL_V2(0) "," V4_V1(1) "," V4_V2(3)) "]"},
     .rdma_node = {NODE, NODE},
     .gid = 3,
     .gid_node = {3, 3}},
    {.name = "NCCL_IB_ADDR_FAMILY_AF_INET6_takes_the_ipv6_v2_index",
     .rdma = {"[" ROCE("mlx5_0", LL_V2(0) "," V4_V2(1) "," V6_V2(4)) "]",
              "[" ROCE("mlx5_0", LL_V2(0) "," V4_V2(3) "," V6_V2(4)) "]"},
     .rdma_node = {NODE_VARS("\"NCCL_IB_ADDR_FAMILY\":\"AF_INET6\""),
                   NODE_VARS("\"NCCL_IB_ADDR_FAMILY\":\"AF_INET6\"")},
     .gid = 4,
     .gid_node = {4, 4}},
    {.name = "a_roce_node_without_any_v2_ipv4_GID_gets_none_and_is_named",
     .rdma = {"[" IDX3 "]", "[" ROCE("mlx5_0", LL_V1(0) "," V4_V1(1)) "]"},
     .rdma_node = {NODE, NODE},
     .gid = -1,
     .gid_node = {3, -1},
     .note = "b: no NCCL_IB_GID_INDEX: no index holds a RoCE v2 ipv4 GID"},
    {.name = "nodes_without_RDMA_ports_get_nothing_and_no_note",
     .rdma = {"[]", "[]"},
     .rdma_node = {NODE, NODE},
     .gid = -1,
     .gid_node = {-1, -1}},
};

static void check_row(const struct row *r)
{
	struct ib_suggest_node in[2];
	json_t *keep[6] = {0};
	struct ib_suggestion s;
	json_error_t je;

	memset(in, 0, sizeof(in));
	for (int i = 0; i < 2; i++) {
		in[i].host = i ? "b" : "a";
		keep[3 * i] = json_loads(r->rdma[i], 0, &je);
		if (!keep[3 * i])
			fail_msg("%s: rdma %d: %s", r->name, i, je.text);
		keep[3 * i + 1] = json_loads(r->rdma_node[i], 0, &je);
		assert_non_null(keep[3 * i + 1]);
		if (r->gpu_pci)
			keep[3 * i + 2] = json_loads(r->gpu_pci, 0, &je);
		in[i].rdma = keep[3 * i];
		in[i].rdma_node = keep[3 * i + 1];
		in[i].gpu_pci = keep[3 * i + 2];
		ib_suggest_env(in[i].rdma_node, NULL, NULL, &in[i].env);
	}
	ib_suggest(in, 2, &s);
	if (r->hca)
		assert_string_equal(s.hca, r->hca);
	else
		assert_null(s.hca);
	for (int i = 0; i < 2; i++) {
		if (r->hca_node[i])
			assert_string_equal(s.hca_per_node[i], r->hca_node[i]);
		else
			assert_null(s.hca_per_node[i]);
		assert_int_equal(s.gid_per_node[i], r->gid_node[i]);
	}
	assert_int_equal(s.gid_index, r->gid);
	if (r->note) {
		assert_non_null(s.notes);
		if (!strstr(s.notes, r->note))
			fail_msg("%s: notes \"%s\" lack \"%s\"", r->name, s.notes, r->note);
	} else {
		assert_null(s.notes);
	}
	ib_suggestion_fini(&s, 2);
	for (int k = 0; k < 6; k++)
		json_decref(keep[k]);
}

static void run_row(void **state)
{
	check_row(*state);
}

/* the conf files fill what the login environment lacks; the login wins */
static const char *conf_get(const char *name, const char **source, const void *ctx)
{
	(void)ctx;
	*source = "/etc/nccl.conf";
	return strcmp(name, "NCCL_IB_HCA") == 0 || strcmp(name, "NCCL_IB_GID_INDEX") == 0 ? "mlx5_9"
	                                                                                  : NULL;
}

static void the_login_environment_wins_over_the_conf_files(void **state)
{
	json_t *node = json_loads(NODE_VARS("\"NCCL_IB_HCA\":\"mlx5_0\""), 0, NULL);
	struct nccl_ib_env e;

	(void)state;
	ib_suggest_env(node, conf_get, NULL, &e);
	assert_string_equal(e.ib_hca.value, "mlx5_0");
	assert_string_equal(e.ib_hca.source, "environment");
	assert_string_equal(e.ib_gid_index.value, "mlx5_9");
	assert_string_equal(e.ib_gid_index.source, "/etc/nccl.conf");
	assert_null(e.ib_disable.value);
	json_decref(node);
}

int main(void)
{
	struct CMUnitTest tests[sizeof(rows) / sizeof(rows[0]) + 1];
	size_t n = 0;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		tests[n++] = (struct CMUnitTest){
		    .name = rows[i].name, .test_func = run_row, .initial_state = (void *)&rows[i]};
	tests[n++] =
	    (struct CMUnitTest){.name = "the_login_environment_wins_over_the_conf_files",
	                        .test_func = the_login_environment_wins_over_the_conf_files};
	return _cmocka_run_group_tests("ib_suggest", tests, n, NULL, NULL);
}
