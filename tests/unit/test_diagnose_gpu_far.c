/* SPDX-License-Identifier: MIT */
/*
 * test_diagnose_gpu_far.c - gpu-nic-far (probes/diagnose_gpu_topo.c) on the
 * GPU fixture (gpu_fixture.h): every GPU of a node SYS from its data NIC,
 * the suggested interface or, on a node with RDMA ports, its RDMA NICs.
 */
#include "gpu_fixture.h"

/* q's GPUs under another host bridge, on NUMA node 1; eth0 on NUMA 0. */
static void move_gpus_far(struct fx *f, size_t node, int nic_numa)
{
	json_t *pci = json_object_get(facts_of(f, node), "gpu_pci");

	json_object_set_new(pci, "paths",
	                    json_pack("{s:s, s:s}", "0000:1a:00.0", FAR0, "0000:1b:00.0", FAR1));
	json_object_set_new(pci, "numa", json_pack("{s:i}", "eth0", nic_numa));
	set(health(f, node, 0), "numa_node", json_integer(1));
	set(health(f, node, 1), "numa_node", json_integer(1));
}

static void gpus_all_on_the_other_socket_from_the_data_nic_are_far(void **state)
{
	struct fx f;
	const struct finding *x;

	setup_fx(&f);
	move_gpus_far(&f, 1, 0);
	run(&f);
	x = only(&f, "gpu-nic-far", 1, SEV_WARNING);
	assert_string_equal(x->evidence, "q/gpu0: SYS from eth0 (GPU under pci0000:b0, NUMA 1; "
	                                 "eth0 under pci0000:17, NUMA 0)\n"
	                                 "q/gpu1: SYS from eth0 (GPU under pci0000:b0, NUMA 1; "
	                                 "eth0 under pci0000:17, NUMA 0)");
	done(&f);
}

static void another_host_bridge_of_the_same_numa_node_is_not_far(void **state)
{
	struct fx f;

	setup_fx(&f);
	move_gpus_far(&f, 1, 1);
	run(&f);
	no_gpu_findings(&f);
	done(&f);
}

/* Without NUMA nodes, another host bridge is taken for another socket (the
 * evidence says the NUMA nodes are unknown). */
static void another_host_bridge_with_numa_unknown_counts_as_sys(void **state)
{
	struct fx f;
	const struct finding *x;

	setup_fx(&f);
	move_gpus_far(&f, 2, 0);
	json_object_del(json_object_get(facts_of(&f, 2), "gpu_pci"), "numa");
	json_object_del(health(&f, 2, 0), "numa_node");
	json_object_del(health(&f, 2, 1), "numa_node");
	run(&f);
	x = only(&f, "gpu-nic-far", 2, SEV_WARNING);
	assert_non_null(strstr(x->evidence, "r/gpu1: SYS from eth0 (GPU under pci0000:b0, NUMA "
	                                    "unknown; eth0 under pci0000:17, NUMA unknown)"));
	done(&f);
}

/* q has RDMA ports and an IPoIB interface ib0: NCCL's IB transport takes
 * ib0's HCA, not eth0, so ib0's distance is what counts. First ib0 near the
 * GPUs and eth0 far: no finding; then ib0 far and eth0 near: ib0 named. */
static void with_rdma_the_rdma_nics_are_the_data_nics(void **state)
{
	json_t *probe, *pci;
	struct fx f;
	const struct finding *x;

	setup_fx(&f);
	probe = json_object_get(json_array_get(json_object_get(f.doc, "nodes"), 1), "probe");
	json_array_append_new(json_object_get(probe, "interfaces"),
	                      json_pack("{s:s, s:i, s:b, s:b, s:b, s:s, s:i, s:s}", "name", "ib0",
	                                "index", 9, "up", 1, "running", 1, "loopback", 0,
	                                "operstate", "up", "mtu", 2044, "kind", "ipoib"));
	json_object_set_new(probe, "rdma",
	                    json_pack("[{s:s, s:i, s:s, s:s}]", "device", "mlx5_0", "port", 1,
	                              "state", "ACTIVE", "link_layer", "InfiniBand"));
	pci = json_object_get(facts_of(&f, 1), "gpu_pci");
	set(pci, "nics.ib0", json_string(SW "0000:19:03.0/0000:1d:00.0"));
	set(pci, "nics.eth0", json_string(FAR0));
	set(pci, "numa", json_pack("{s:i}", "eth0", 1));
	run(&f);
	no_gpu_findings(&f);
	diagnosis_free(f.d);
	netmodel_free(f.m);
	set(pci, "nics.ib0", json_string("/sys/devices/pci0000:e0/0000:e0:01.0/0000:e1:00.0"));
	set(pci, "nics.eth0", json_string(ETH0));
	set(pci, "numa", json_pack("{s:i}", "ib0", 1));
	run(&f);
	x = only(&f, "gpu-nic-far", 1, SEV_WARNING);
	assert_string_equal(x->evidence, "q/gpu0: SYS from ib0 (GPU under pci0000:17, NUMA 0; ib0 "
	                                 "under pci0000:e0, NUMA 1)\n"
	                                 "q/gpu1: SYS from ib0 (GPU under pci0000:17, NUMA 0; ib0 "
	                                 "under pci0000:e0, NUMA 1)");
	done(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(gpus_all_on_the_other_socket_from_the_data_nic_are_far),
	    cmocka_unit_test(another_host_bridge_of_the_same_numa_node_is_not_far),
	    cmocka_unit_test(another_host_bridge_with_numa_unknown_counts_as_sys),
	    cmocka_unit_test(with_rdma_the_rdma_nics_are_the_data_nics),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
