/* SPDX-License-Identifier: MIT */
/*
 * test_diagnose_rdma.c - the RDMA findings (probes/diagnose_rdma.c) on
 * models built from netprobe answers in the shape of the issue 36 contract
 * (probes/netprobe.h "rdma" ports and "rdma_node"): three nodes p, q, r of
 * routes-clean.json, each with two GPUs and two InfiniBand HDR ports
 * (mlx5_0/1, mlx5_1/1: ACTIVE, LinkUp, 200 Gb/s, active_mtu 4096),
 * nvidia_peermem loaded and memlock unlimited. Each row of the table breaks
 * one thing, and its finding must land on exactly its nodes with its
 * severity (or no RDMA finding at all); then the NCCL_IB_HCA parser's rows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "probes/diagnose.h"
#include "probes/diagnose_rdma.h"
#include "probes/nccl_ib.h"

#define FIXTURES "tests/fixtures/clusters/"

static const char *const rdma_ids[] = {
    "rdma-port-down",         "rdma-rate-mismatch", "rdma-mtu-mismatch", "rdma-memlock-low",
    "gpudirect-rdma-missing", "nccl-ib-hca-stale",  "nccl-ib-fallback",  "roce-gid-mismatch",
};

struct rfx {
	json_t *doc;
	struct netmodel *m;
	struct diagnosis *d;
};

static json_t *ib_port(const char *dev)
{
	return json_pack("{s:s, s:i, s:s, s:s, s:s, s:s, s:i, s:s, s:s, s:s, s:s, s:n, s:i, s:n,"
	                 " s:n, s:n, s:[]}",
	                 "device", dev, "port", 1, "state", "ACTIVE", "phys_state", "LinkUp",
	                 "link_layer", "InfiniBand", "rate", "200 Gb/sec (4X HDR)", "rate_gbps",
	                 200, "width", "4X", "lid", "0x12", "sm_lid", "0x1", "netdev", "ib0", "mtu",
	                 "active_mtu", 4096, "pci", "pci_path", "numa_node", "gids");
}

static json_t *healthy_rdma_node(void)
{
	return json_pack("{s:s, s:[s], s:s, s:n, s:b, s:{}}", "verbs_lib",
	                 "/usr/lib/x86_64-linux-gnu/libibverbs.so.1", "verbs_providers", "mlx5",
	                 "peermem", "nvidia_peermem", "memlock_bytes", "memlock_unlimited", 1,
	                 "nccl_vars");
}

static json_t *node_at(struct rfx *f, size_t i)
{
	return json_array_get(json_object_get(f->doc, "nodes"), i);
}

static json_t *probe(struct rfx *f, size_t i)
{
	return json_object_get(node_at(f, i), "probe");
}

static json_t *port(struct rfx *f, size_t i, size_t k)
{
	return json_array_get(json_object_get(probe(f, i), "rdma"), k);
}

static json_t *rnode(struct rfx *f, size_t i)
{
	return json_object_get(probe(f, i), "rdma_node");
}

static void setup_rfx(struct rfx *f)
{
	json_error_t jerr;
	json_t *node;
	size_t i;

	memset(f, 0, sizeof(*f));
	f->doc = json_load_file(FIXTURES "routes-clean.json", 0, &jerr);
	if (!f->doc)
		fail_msg("routes-clean.json: %s", jerr.text);
	json_array_foreach(json_object_get(f->doc, "nodes"), i, node)
	{
		json_t *pr = json_object_get(node, "probe");

		json_object_set_new(pr, "rdma",
		                    json_pack("[o, o]", ib_port("mlx5_0"), ib_port("mlx5_1")));
		json_object_set_new(pr, "rdma_node", healthy_rdma_node());
		json_object_set_new(json_object_get(node, "facts"), "gpus",
		                    json_pack("[{s:i}, {s:i}]", "index", 0, "index", 1));
	}
}

/* ---------------------------------------------------------------- the faults */

static void no_fault(struct rfx *f)
{
}

static void q_mlx5_1_polling(struct rfx *f)
{
	json_object_set_new(port(f, 1, 1), "state", json_string("DOWN"));
	json_object_set_new(port(f, 1, 1), "phys_state", json_string("Polling"));
}

static void r_every_port_init(struct rfx *f)
{
	for (size_t k = 0; k < 2; k++)
		json_object_set_new(port(f, 2, k), "state", json_string("INIT"));
}

static void every_port_of_every_node_down(struct rfx *f)
{
	for (size_t i = 0; i < 3; i++)
		for (size_t k = 0; k < 2; k++)
			json_object_set_new(port(f, i, k), "phys_state", json_string("Disabled"));
}

static void q_old_agent_with_a_down_port(struct rfx *f)
{
	json_t *old =
	    json_pack("[{s:s, s:i, s:s, s:s, s:s}]", "device", "mlx5_0", "port", 1, "state", "DOWN",
	              "link_layer", "InfiniBand", "rate", "100 Gb/sec (4X EDR)");

	json_object_set_new(probe(f, 1), "rdma", old);
	json_object_del(probe(f, 1), "rdma_node");
	json_object_set_new(json_object_get(node_at(f, 1), "facts"), "gpus", json_array());
}

static void r_without_rdma_ports_and_bad_settings(struct rfx *f)
{
	json_object_set_new(probe(f, 2), "rdma", json_array());
	json_object_set_new(rnode(f, 2), "peermem", json_null());
	json_object_set_new(rnode(f, 2), "memlock_unlimited", json_false());
	json_object_set_new(rnode(f, 2), "memlock_bytes", json_integer(65536));
	json_object_set_new(json_object_get(rnode(f, 2), "nccl_vars"), "NCCL_IB_HCA",
	                    json_string("mlx5_9"));
}

static void q_mlx5_0_at_100(struct rfx *f)
{
	json_object_set_new(port(f, 1, 0), "rate", json_string("100 Gb/sec (2X HDR)"));
	json_object_set_new(port(f, 1, 0), "rate_gbps", json_integer(100));
}

static void q_down_port_at_another_rate(struct rfx *f)
{
	q_mlx5_1_polling(f);
	json_object_set_new(port(f, 1, 1), "rate_gbps", json_integer(10));
}

static void rate_unknown_on_q(struct rfx *f)
{
	json_object_set_new(port(f, 1, 0), "rate_gbps", json_null());
	json_object_set_new(port(f, 1, 1), "rate_gbps", json_null());
}

static void r_mlx5_0_active_mtu_2048(struct rfx *f)
{
	json_object_set_new(port(f, 2, 0), "active_mtu", json_integer(2048));
}

/* RoCE everywhere, netdev MTU 9000; p's first port 1500 (active_mtu 1024). */
static void roce_p_mtu_1500(struct rfx *f)
{
	for (size_t i = 0; i < 3; i++)
		for (size_t k = 0; k < 2; k++) {
			json_object_set_new(port(f, i, k), "link_layer", json_string("Ethernet"));
			json_object_set_new(port(f, i, k), "netdev",
			                    json_string(k ? "ens1f1" : "ens1f0"));
			json_object_set_new(port(f, i, k), "mtu", json_integer(9000));
		}
	json_object_set_new(port(f, 0, 0), "mtu", json_integer(1500));
	json_object_set_new(port(f, 0, 0), "active_mtu", json_integer(1024));
}

static void q_memlock_64k(struct rfx *f)
{
	json_object_set_new(rnode(f, 1), "memlock_unlimited", json_false());
	json_object_set_new(rnode(f, 1), "memlock_bytes", json_integer(65536));
}

static void memlock_at_the_threshold_and_unknown(struct rfx *f)
{
	json_object_set_new(rnode(f, 0), "memlock_unlimited", json_false());
	json_object_set_new(rnode(f, 0), "memlock_bytes", json_integer(RDMA_MEMLOCK_MIN_BYTES));
	json_object_set_new(rnode(f, 1), "memlock_unlimited", json_false());
	json_object_set_new(rnode(f, 1), "memlock_bytes", json_null());
}

static void r_no_peermem(struct rfx *f)
{
	json_object_set_new(rnode(f, 2), "peermem", json_null());
}

static void p_no_peermem_and_no_gpus(struct rfx *f)
{
	json_object_set_new(rnode(f, 0), "peermem", json_null());
	json_object_set_new(json_object_get(node_at(f, 0), "facts"), "gpus", json_array());
}

static void set_hca(struct rfx *f, size_t i, const char *v)
{
	json_object_set_new(json_object_get(rnode(f, i), "nccl_vars"), "NCCL_IB_HCA",
	                    json_string(v));
}

static void q_hca_names_mlx5_9(struct rfx *f)
{
	set_hca(f, 1, "mlx5_0,mlx5_9");
}

static void p_hca_exact_mlx5_9_port_1(struct rfx *f)
{
	set_hca(f, 0, "=mlx5_9:1");
}

static void r_hca_in_nccl_conf(struct rfx *f)
{
	json_object_set_new(probe(f, 2), "nccl_conf",
	                    json_pack("[{s:s, s:{s:s}}]", "path", "/etc/nccl.conf", "vars",
	                              "NCCL_IB_HCA", "mlx5_2"));
}

static void q_hca_port_2(struct rfx *f)
{
	set_hca(f, 1, "mlx5_0:2,mlx5_1:1");
}

static void p_hca_excludes_mlx5_9(struct rfx *f)
{
	set_hca(f, 0, "^mlx5_9");
}

static void hcas_that_match(struct rfx *f)
{
	set_hca(f, 0, "mlx5");
	set_hca(f, 1, "=mlx5_0:1,mlx5_1");
	set_hca(f, 2, "^mlx5_1");
}

/* ---------------------------------------------------------------- the prediction's */

static void set_var(struct rfx *f, size_t i, const char *name, const char *v)
{
	json_object_set_new(json_object_get(rnode(f, i), "nccl_vars"), name, json_string(v));
}

static void q_ib_disabled(struct rfx *f)
{
	set_var(f, 1, "NCCL_IB_DISABLE", "1");
}

static void r_without_libibverbs(struct rfx *f)
{
	json_object_set_new(rnode(f, 2), "verbs_lib", json_null());
}

static void ib_disabled_everywhere(struct rfx *f)
{
	for (size_t i = 0; i < 3; i++)
		set_var(f, i, "NCCL_IB_DISABLE", "1");
}

static void p_hca_excludes_every_port(struct rfx *f)
{
	set_hca(f, 0, "^mlx5");
}

static json_t *gid(int index, const char *type, const char *gid, const char *family,
                   const char *address)
{
	return json_pack("{s:i, s:s, s:s, s:s, s:s, s:s}", "index", index, "gid", gid, "type", type,
	                 "ndev", "ens1f0", "family", family, "address", address);
}

#define LL_GID "fe80:0000:0000:0000:0ac0:ebff:fe12:3456"
#define V4_GID "0000:0000:0000:0000:0000:ffff:0a00:0b0c"

/* Node i's one port on RoCE (the other taken away), its GID table as the
 * roce-v2-idx3 fixture's (v1 and v2 link-local, v1 and v2 IPv4) when
 * idx3, else as roce-v2-idx1's (v1 link-local, v2 IPv4, v2 link-local). */
static void roce_node(struct rfx *f, size_t i, int idx3)
{
	json_t *p0 = port(f, i, 0), *gids;

	json_array_remove(json_object_get(probe(f, i), "rdma"), 1);
	json_object_set_new(p0, "link_layer", json_string("Ethernet"));
	json_object_set_new(p0, "netdev", json_string("ens1f0"));
	json_object_set_new(p0, "mtu", json_integer(9000));
	if (idx3)
		gids = json_pack(
		    "[o, o, o, o]",
		    gid(0, "IB/RoCE v1", LL_GID, "link-local", "fe80::ac0:ebff:fe12:3456"),
		    gid(1, "RoCE v2", LL_GID, "link-local", "fe80::ac0:ebff:fe12:3456"),
		    gid(2, "IB/RoCE v1", V4_GID, "ipv4", "10.0.11.12"),
		    gid(3, "RoCE v2", V4_GID, "ipv4", "10.0.11.12"));
	else
		gids = json_pack(
		    "[o, o, o]",
		    gid(0, "IB/RoCE v1", LL_GID, "link-local", "fe80::ac0:ebff:fe12:3456"),
		    gid(1, "RoCE v2", V4_GID, "ipv4", "10.0.11.12"),
		    gid(2, "RoCE v2", LL_GID, "link-local", "fe80::ac0:ebff:fe12:3456"));
	json_object_set_new(p0, "gids", gids);
}

static void roce_v2_at_index_3_on_p_and_1_on_q_and_r(struct rfx *f)
{
	roce_node(f, 0, 1);
	roce_node(f, 1, 0);
	roce_node(f, 2, 0);
}

static void q_gid_index_forced_to_link_local(struct rfx *f)
{
	roce_v2_at_index_3_on_p_and_1_on_q_and_r(f);
	set_var(f, 1, "NCCL_IB_GID_INDEX", "2");
}

/* p's table has a v1 IPv4 entry (index 2); q's and r's have none, so
 * there NCCL would still take the v2 IPv4 one (ncclUpdateGidIndex prefers
 * the family to the version). */
static void p_roce_version_1(struct rfx *f)
{
	roce_v2_at_index_3_on_p_and_1_on_q_and_r(f);
	json_object_set_new(probe(f, 0), "nccl_conf",
	                    json_pack("[{s:s, s:{s:s}}]", "path", "/etc/nccl.conf", "vars",
	                              "NCCL_IB_ROCE_VERSION_NUM", "1"));
}

static void ib_nodes_with_a_gid_index_set(struct rfx *f)
{
	set_var(f, 1, "NCCL_IB_GID_INDEX", "3");
}

/* ---------------------------------------------------------------- the table */

struct row {
	const char *name;            /* the test's name */
	void (*edit)(struct rfx *f); /* one fault on the healthy cluster */
	const char *id;              /* the one RDMA finding, NULL: none */
	unsigned nodes;              /* bit i: node i named */
	enum severity sev;
	const char *evidence; /* its exact evidence, NULL: not checked */
};

#define P 1u
#define Q 2u
#define R 4u

static const struct row rows[] = {
    {"healthy_ib_nodes_have_no_rdma_finding", no_fault, NULL, 0, 0, NULL},
    {"a_polling_port_beside_an_active_one_is_rdma_port_down_warning_on_its_node", q_mlx5_1_polling,
     "rdma-port-down", Q, SEV_WARNING, "q mlx5_1/1 (InfiniBand): state DOWN, phys_state Polling"},
    {"a_node_whose_every_port_is_init_is_rdma_port_down_error", r_every_port_init, "rdma-port-down",
     R, SEV_ERROR,
     "r mlx5_0/1 (InfiniBand): state INIT, phys_state LinkUp\n"
     "r mlx5_1/1 (InfiniBand): state INIT, phys_state LinkUp"},
    {"ports_down_on_every_node_only_warn_as_no_node_uses_rdma", every_port_of_every_node_down,
     "rdma-port-down", P | Q | R, SEV_WARNING, NULL},
    {"an_older_agents_answer_without_the_new_fields_gives_no_finding", q_old_agent_with_a_down_port,
     NULL, 0, 0, NULL},
    {"a_node_without_rdma_ports_gives_no_finding_whatever_its_settings",
     r_without_rdma_ports_and_bad_settings, NULL, 0, 0, NULL},
    {"a_port_at_half_the_others_rate_is_rdma_rate_mismatch_on_its_node", q_mlx5_0_at_100,
     "rdma-rate-mismatch", Q, SEV_WARNING,
     "q mlx5_0/1 (ib0): rate 100 Gb/s (100 Gb/sec (2X HDR)), 5 of 6 InfiniBand ports 200 Gb/s"},
    {"a_down_ports_rate_is_not_compared", q_down_port_at_another_rate, "rdma-port-down", Q,
     SEV_WARNING, NULL},
    {"an_unknown_rate_is_not_compared", rate_unknown_on_q, NULL, 0, 0, NULL},
    {"a_smaller_active_mtu_is_rdma_mtu_mismatch_on_its_node", r_mlx5_0_active_mtu_2048,
     "rdma-mtu-mismatch", R, SEV_WARNING,
     "r mlx5_0/1 (ib0): IB MTU (active_mtu) 2048, 5 of 6 InfiniBand ports 4096"},
    {"a_roce_netdev_at_mtu_1500_among_9000_is_rdma_mtu_mismatch_on_its_node", roce_p_mtu_1500,
     "rdma-mtu-mismatch", P, SEV_WARNING,
     "p mlx5_0/1 (ens1f0): IB MTU (active_mtu) 1024, 5 of 6 Ethernet ports 4096\n"
     "p mlx5_0/1 (ens1f0): netdev MTU 1500, 5 of 6 Ethernet ports 9000"},
    {"memlock_64_kib_is_rdma_memlock_low_error_on_its_node", q_memlock_64k, "rdma-memlock-low", Q,
     SEV_ERROR,
     "q: ulimit -l 64 KiB (65536 bytes), below the 9633792 bytes NCCL's IB transport registers "
     "for one connection"},
    {"memlock_at_the_threshold_or_unknown_gives_no_finding", memlock_at_the_threshold_and_unknown,
     NULL, 0, 0, NULL},
    {"gpus_and_rdma_ports_without_peermem_is_gpudirect_rdma_missing", r_no_peermem,
     "gpudirect-rdma-missing", R, SEV_WARNING,
     "r: 2 GPUs, 2 RDMA ports, no nvidia_peermem or nv_peer_mem in /proc/modules"},
    {"no_peermem_on_a_node_without_gpus_gives_no_finding", p_no_peermem_and_no_gpus, NULL, 0, 0,
     NULL},
    {"nccl_ib_hca_naming_a_missing_hca_beside_a_present_one_is_stale_warning", q_hca_names_mlx5_9,
     "nccl-ib-hca-stale", Q, SEV_WARNING,
     "q: NCCL_IB_HCA=mlx5_0,mlx5_9 (environment): mlx5_9 matches no HCA port of the node "
     "(mlx5_0, mlx5_1)"},
    {"nccl_ib_hca_matching_no_hca_at_all_is_stale_error", p_hca_exact_mlx5_9_port_1,
     "nccl-ib-hca-stale", P, SEV_ERROR,
     "p: NCCL_IB_HCA==mlx5_9:1 (environment): mlx5_9:1 matches no HCA port of the node "
     "(mlx5_0, mlx5_1)"},
    {"nccl_ib_hca_from_nccl_conf_names_its_file", r_hca_in_nccl_conf, "nccl-ib-hca-stale", R,
     SEV_ERROR,
     "r: NCCL_IB_HCA=mlx5_2 (/etc/nccl.conf): mlx5_2 matches no HCA port of the node "
     "(mlx5_0, mlx5_1)"},
    {"nccl_ib_hca_naming_a_port_the_hca_lacks_is_stale", q_hca_port_2, "nccl-ib-hca-stale", Q,
     SEV_WARNING, NULL},
    {"nccl_ib_hca_excluding_a_missing_hca_is_stale_info", p_hca_excludes_mlx5_9,
     "nccl-ib-hca-stale", P, SEV_INFO, NULL},
    {"nccl_ib_hca_prefixes_exact_names_ports_and_exclusions_that_match_give_no_finding",
     hcas_that_match, NULL, 0, 0, NULL},
    {"nccl_ib_disable_on_one_node_is_nccl_ib_fallback_error_on_it", q_ib_disabled,
     "nccl-ib-fallback", Q, SEV_ERROR,
     "q: 2 RDMA ports, NCCL will use NET/Socket: NCCL_IB_DISABLE=1 (from environment)"},
    {"a_node_without_libibverbs_is_nccl_ib_fallback_error_on_it", r_without_libibverbs,
     "nccl-ib-fallback", R, SEV_ERROR, "r: 2 RDMA ports, NCCL will use NET/Socket: no libibverbs"},
    {"nccl_ib_disable_everywhere_is_nccl_ib_fallback_warning_on_every_node", ib_disabled_everywhere,
     "nccl-ib-fallback", P | Q | R, SEV_WARNING, NULL},
    {"nccl_ib_hca_excluding_every_port_is_nccl_ib_fallback_naming_it", p_hca_excludes_every_port,
     "nccl-ib-fallback", P, SEV_ERROR,
     "p: 2 RDMA ports, NCCL will use NET/Socket: NCCL_IB_HCA=^mlx5 (from environment) excludes "
     "every ACTIVE port (mlx5_0, mlx5_1)"},
    {"roce_v2_ipv4_gids_at_different_indexes_are_no_roce_gid_mismatch",
     roce_v2_at_index_3_on_p_and_1_on_q_and_r, NULL, 0, 0, NULL},
    {"a_gid_index_forced_to_a_link_local_entry_is_roce_gid_mismatch_on_its_node",
     q_gid_index_forced_to_link_local, "roce-gid-mismatch", Q, SEV_ERROR,
     "p mlx5_0:1 GID 3 RoCE v2 ipv4 10.0.11.12\n"
     "q mlx5_0:1 GID 2 RoCE v2 link-local fe80::ac0:ebff:fe12:3456\n"
     "r mlx5_0:1 GID 1 RoCE v2 ipv4 10.0.11.12"},
    {"roce_version_1_from_nccl_conf_is_roce_gid_mismatch_on_its_node", p_roce_version_1,
     "roce-gid-mismatch", P, SEV_ERROR,
     "p mlx5_0:1 GID 2 RoCE v1 ipv4 10.0.11.12\n"
     "q mlx5_0:1 GID 1 RoCE v2 ipv4 10.0.11.12\n"
     "r mlx5_0:1 GID 1 RoCE v2 ipv4 10.0.11.12"},
    {"ib_only_nodes_give_no_roce_gid_mismatch_whatever_the_gid_index",
     ib_nodes_with_a_gid_index_set, NULL, 0, 0, NULL},
};

/* The row's finding (one per node where it is keyed by node) must name
 * exactly its nodes, each with its severity; no other RDMA finding. */
static void check_row(void **state)
{
	const struct row *row = *state;
	const struct finding *hit = NULL;
	char err[CD_ERRLEN] = "";
	struct rfx f;
	unsigned got = 0;
	size_t hits = 0;

	setup_rfx(&f);
	row->edit(&f);
	f.m = netmodel_load_json(f.doc, err, sizeof(err));
	if (!f.m)
		fail_msg("%s", err);
	f.d = diagnose(f.m);
	for (size_t k = 0; k < f.d->nfindings; k++)
		for (size_t r = 0; r < sizeof(rdma_ids) / sizeof(rdma_ids[0]); r++) {
			if (strcmp(f.d->findings[k].id, rdma_ids[r]) != 0)
				continue;
			if (!row->id || strcmp(row->id, rdma_ids[r]) != 0)
				fail_msg("unexpected %s: %s", rdma_ids[r],
				         f.d->findings[k].evidence);
			hit = &f.d->findings[k];
			hits++;
			assert_int_equal(hit->severity, row->sev);
			for (size_t q = 0; q < hit->nnodes; q++)
				got |= 1u << hit->nodes[q];
		}
	if (row->id) {
		if (!hit)
			fail_msg("no %s", row->id);
		assert_int_equal(got, row->nodes);
		if (row->evidence) {
			assert_int_equal(hits, 1);
			assert_string_equal(hit->evidence, row->evidence);
		}
	}
	diagnosis_free(f.d);
	netmodel_free(f.m);
	json_decref(f.doc);
}

int main(void)
{
	const size_t nrows = sizeof(rows) / sizeof(rows[0]);
	struct CMUnitTest *tests = calloc(nrows, sizeof(*tests));
	int rc;

	assert_non_null(tests);
	for (size_t k = 0; k < nrows; k++) {
		tests[k].name = rows[k].name;
		tests[k].test_func = check_row;
		tests[k].initial_state = (void *)&rows[k];
	}
	rc = _cmocka_run_group_tests("test_diagnose_rdma", tests, nrows, NULL, NULL);
	free(tests);
	return rc;
}
