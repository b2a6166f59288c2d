/* SPDX-License-Identifier: MIT */
/*
 * test_gpu_topo.c - the pure parts of the GPU findings: PCI distances from
 * sysfs paths as `nvidia-smi topo -m` names them, PCI addresses as NVML,
 * sysfs and the kernel write them (probes/gpu_topo.h), and the Xid table
 * against NVIDIA's immediate actions (probes/gpu_xid.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "probes/gpu_topo.h"
#include "probes/gpu_xid.h"

#define SW   "/sys/devices/pci0000:17/0000:17:01.0/0000:18:00.0/"
#define GPU0 SW "0000:19:00.0/0000:1a:00.0"
#define ETH0 SW "0000:19:02.0/0000:1c:00.0"
#define FAR0 "/sys/devices/pci0000:b0/0000:b0:01.0/0000:b1:00.0"

static void the_xid_table_follows_nvidias_immediate_actions(void **state)
{
	static const int fatal[] = {48, 64, 74, 79, 95, 119, 120};
	static const int not_fatal[] = {13, 31, 43, 45, 63, 92, 94};

	for (size_t k = 0; k < sizeof(fatal) / sizeof(fatal[0]); k++)
		assert_true(gpu_xid_lookup(fatal[k])->fatal);
	for (size_t k = 0; k < sizeof(not_fatal) / sizeof(not_fatal[0]); k++)
		assert_false(gpu_xid_lookup(not_fatal[k])->fatal);
	assert_null(gpu_xid_lookup(154));
	assert_string_equal(gpu_xid_lookup(64)->action, "RESET_GPU");
}

static void the_pci_distances_are_those_of_nvidia_smi_topo(void **state)
{
	unsigned long long a, b;

	assert_int_equal(gpu_topo_between(GPU0, ETH0, -1, -1), GPU_TOPO_PIX);
	assert_int_equal(
	    gpu_topo_between(GPU0, "/sys/devices/pci0000:17/0000:17:02.0/0000:20:00.0", -1, -1),
	    GPU_TOPO_PHB);
	assert_int_equal(gpu_topo_between(SW "0000:19:00.0/0000:1a:00.0/0000:1d:00.0/0000:1e:00.0",
	                                  ETH0, -1, -1),
	                 GPU_TOPO_PXB);
	assert_int_equal(gpu_topo_between(GPU0, FAR0, -1, -1), GPU_TOPO_SYS);
	assert_int_equal(gpu_topo_between(GPU0, FAR0, 0, 0), GPU_TOPO_NODE);
	assert_int_equal(gpu_topo_between(GPU0, "/sys/devices/virtual/net/lo", -1, -1),
	                 GPU_TOPO_UNKNOWN);
	assert_int_equal(gpu_pci_key("00000000:1B:00.0", &a), 0);
	assert_int_equal(gpu_pci_key("0000:1b:00", &b), 0);
	assert_true(a == b);
	assert_int_equal(gpu_pci_key("0000:1b:00.0x", &a), -1);
}

static void a_virtio_nics_path_ends_at_its_pci_device(void **state)
{
	char root[64];

	assert_int_equal(gpu_topo_between(GPU0, SW "0000:19:02.0/0000:1c:00.0/virtio3", -1, -1),
	                 GPU_TOPO_PIX);
	assert_int_equal(gpu_topo_root(FAR0, root, sizeof(root)), 0);
	assert_string_equal(root, "pci0000:b0");
	assert_int_equal(gpu_topo_root("/sys/devices/platform/eth0", root, sizeof(root)), -1);
	assert_string_equal(gpu_topo_name(GPU_TOPO_SYS), "SYS");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(the_xid_table_follows_nvidias_immediate_actions),
	    cmocka_unit_test(the_pci_distances_are_those_of_nvidia_smi_topo),
	    cmocka_unit_test(a_virtio_nics_path_ends_at_its_pci_device),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
