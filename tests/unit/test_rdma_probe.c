/* SPDX-License-Identifier: MIT */
/*
 * test_rdma_probe.c - the RDMA facts collector (probes/rdma_probe.h) on the
 * fixture trees of tests/fixtures/rdma/ (the kernel's documented sysfs
 * layout; see the README there): one test per scenario, the bad-input tree
 * named in errors, the root taken from CLUSTERDOC_SYSFS_ROOT, the memlock
 * limit and the NCCL variables of the environment.
 */
#include "probes/rdma_probe.h"
#include "probes/rdma_libs.h"
#include "cd.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#define FIX "tests/fixtures/rdma/"

static const char *str(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static json_int_t num(json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

/* The ports of a scenario; *errors is set to the errors object (new). */
static json_t *ports_of(const char *scenario, json_t **errors)
{
	*errors = json_object();
	return rdma_probe_ports(scenario, *errors);
}

/* text into root/rel, making the folders on the way. */
static void put(const char *root, const char *rel, const char *text)
{
	char *path = cd_asprintf("%s/%s", root, rel), *slash;
	FILE *f;

	for (slash = strchr(path + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(path);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void a_two_port_hca_gives_each_port_the_netdev_of_its_dev_port(void **state)
{
	char root[] = "/tmp/rdmaprobe.XXXXXX";
	json_t *errors, *ports;
	const char *d = "sys/class/infiniband/mlx4_0";

	assert_non_null(mkdtemp(root));
	for (int port = 1; port <= 2; port++) {
		char *dir = cd_asprintf("%s/ports/%d", d, port), *f;

		f = cd_asprintf("%s/state", dir), put(root, f, "4: ACTIVE\n"), free(f);
		f = cd_asprintf("%s/link_layer", dir), put(root, f, "Ethernet\n"), free(f);
		/* uppercase, as no kernel writes it: the answer has the kernel's form */
		f = cd_asprintf("%s/gids/0", dir);
		put(root, f, "FE80:0000:0000:0000:0202:C9FF:FE00:0001\n");
		free(f);
		free(dir);
	}
	put(root, "sys/class/infiniband/mlx4_0/device/net/eth2/dev_port", "1\n");
	put(root, "sys/class/infiniband/mlx4_0/device/net/eth1/dev_port", "0\n");
	put(root, "sys/class/net/eth1/mtu", "1500\n");
	put(root, "sys/class/net/eth2/mtu", "9000\n");
	ports = ports_of(root, &errors);
	assert_int_equal(json_array_size(ports), 2);
	assert_string_equal(str(json_array_get(ports, 0), "netdev"), "eth1");
	assert_int_equal(num(json_array_get(ports, 0), "mtu"), 1500);
	assert_string_equal(str(json_array_get(ports, 1), "netdev"), "eth2");
	assert_int_equal(num(json_array_get(ports, 1), "mtu"), 9000);
	assert_string_equal(
	    str(json_array_get(json_object_get(json_array_get(ports, 1), "gids"), 0), "gid"),
	    "fe80:0000:0000:0000:0202:c9ff:fe00:0001");
	json_decref(ports);
	json_decref(errors);
	nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void ib_hdr_8_gives_eight_active_hdr_ports_in_name_order(void **state)
{
	json_t *errors, *ports = ports_of(FIX "ib-hdr-8", &errors), *p, *g;
	char name[32];
	size_t i;

	assert_int_equal(json_array_size(ports), 8);
	json_array_foreach(ports, i, p)
	{
		snprintf(name, sizeof(name), "mlx5_%zu", i);
		assert_string_equal(str(p, "device"), name);
		assert_int_equal(num(p, "port"), 1);
		assert_string_equal(str(p, "state"), "ACTIVE");
		assert_string_equal(str(p, "phys_state"), "LinkUp");
		assert_string_equal(str(p, "link_layer"), "InfiniBand");
		assert_string_equal(str(p, "rate"), "200 Gb/sec (4X HDR)");
		assert_int_equal(num(p, "rate_gbps"), 200);
		assert_string_equal(str(p, "width"), "4X");
		assert_string_equal(str(p, "sm_lid"), "0x1");
		assert_true(json_is_null(json_object_get(p, "netdev")));
		assert_int_equal(num(p, "numa_node"), i / 4);
		assert_int_equal(json_array_size(json_object_get(p, "gids")), 1);
		g = json_array_get(json_object_get(p, "gids"), 0);
		assert_int_equal(num(g, "index"), 0);
		assert_string_equal(str(g, "family"), "ib");
		assert_string_equal(str(g, "type"), "IB/RoCE v1");
		assert_true(json_is_null(json_object_get(g, "address")));
	}
	p = json_array_get(ports, 0);
	assert_string_equal(str(p, "lid"), "0x11");
	assert_string_equal(str(p, "pci"), "0000:17:00.0");
	assert_int_equal(json_array_size(json_object_get(p, "pci_path")), 2);
	assert_string_equal(json_string_value(json_array_get(json_object_get(p, "pci_path"), 0)),
	                    "0000:00:01.0");
	assert_int_equal(json_object_size(errors), 0);
	json_decref(ports);
	json_decref(errors);
}

/* The index of the IPv4 RoCE v2 GID of a scenario's only port. */
static int v2_ipv4_index(const char *scenario, const char *address)
{
	json_t *errors, *ports = ports_of(scenario, &errors), *p = json_array_get(ports, 0), *g;
	int found = -1;
	size_t i;

	assert_int_equal(json_array_size(ports), 1);
	assert_string_equal(str(p, "link_layer"), "Ethernet");
	assert_string_equal(str(p, "netdev"), "ens1f0");
	assert_int_equal(num(p, "mtu"), 9000);
	assert_true(json_is_null(json_object_get(p, "lid")));
	json_array_foreach(json_object_get(p, "gids"), i, g)
	{
		assert_string_equal(str(g, "ndev"), "ens1f0");
		if (strcmp(str(g, "type"), "RoCE v2") == 0 &&
		    strcmp(str(g, "family"), "ipv4") == 0) {
			assert_string_equal(str(g, "address"), address);
			found = (int)num(g, "index");
		}
	}
	assert_int_equal(json_object_size(errors), 0);
	json_decref(ports);
	json_decref(errors);
	return found;
}

static void roce_idx3_has_the_ipv4_v2_gid_at_index_3_and_no_zero_entry(void **state)
{
	json_t *errors, *ports = ports_of(FIX "roce-v2-idx3", &errors);
	json_t *gids = json_object_get(json_array_get(ports, 0), "gids");

	assert_int_equal(v2_ipv4_index(FIX "roce-v2-idx3", "10.0.11.12"), 3);
	assert_int_equal(json_array_size(gids), 4); /* index 4 is all zeros */
	assert_string_equal(str(json_array_get(gids, 0), "family"), "link-local");
	assert_string_equal(str(json_array_get(gids, 0), "type"), "IB/RoCE v1");
	assert_string_equal(str(json_array_get(gids, 1), "type"), "RoCE v2");
	json_decref(ports);
	json_decref(errors);
}

static void roce_idx1_has_the_ipv4_v2_gid_at_index_1(void **state)
{
	assert_int_equal(v2_ipv4_index(FIX "roce-v2-idx1", "10.0.11.13"), 1);
}

static void port_polling_shows_init_and_polling_beside_an_active_port(void **state)
{
	json_t *errors, *ports = ports_of(FIX "port-polling", &errors);

	assert_int_equal(json_array_size(ports), 2);
	assert_string_equal(str(json_array_get(ports, 0), "state"), "INIT");
	assert_string_equal(str(json_array_get(ports, 0), "phys_state"), "Polling");
	assert_string_equal(str(json_array_get(ports, 1), "state"), "ACTIVE");
	assert_string_equal(str(json_array_get(ports, 1), "phys_state"), "LinkUp");
	json_decref(ports);
	json_decref(errors);
}

static void no_verbs_has_ports_but_no_library_provider_or_peermem(void **state)
{
	json_t *errors = json_object(), *node = rdma_probe_node(FIX "no-verbs", NULL, errors);
	json_t *e2, *ports = ports_of(FIX "no-verbs", &e2);

	assert_int_equal(json_array_size(ports), 1);
	assert_true(json_is_null(json_object_get(node, "verbs_lib")));
	assert_int_equal(json_array_size(json_object_get(node, "verbs_providers")), 0);
	assert_true(json_is_null(json_object_get(node, "peermem")));
	assert_int_equal(json_object_size(errors), 0);
	json_decref(node);
	json_decref(errors);
	json_decref(ports);
	json_decref(e2);
}

static void a_node_with_verbs_names_library_provider_and_peermem(void **state)
{
	json_t *errors = json_object(), *node = rdma_probe_node(FIX "ib-hdr-8", NULL, errors);

	assert_string_equal(str(node, "verbs_lib"), "/usr/lib64/libibverbs.so.1");
	assert_int_equal(json_array_size(json_object_get(node, "verbs_providers")), 1);
	assert_string_equal(
	    json_string_value(json_array_get(json_object_get(node, "verbs_providers"), 0)), "mlx5");
	assert_string_equal(str(node, "peermem"), "nvidia_peermem");
	json_decref(node);
	json_decref(errors);
}

/* Every port of ib-hdr-8 is on an HCA bound to mlx5_core, which rdma-core's
 * mlx5 provider serves, and the tree's libibverbs.d names mlx5. */
static void each_port_names_its_kernel_driver_and_the_provider_that_serves_it(void **state)
{
	json_t *errors, *ports = ports_of(FIX "ib-hdr-8", &errors), *p;
	size_t i;

	json_array_foreach(ports, i, p)
	{
		assert_string_equal(str(p, "driver"), "mlx5_core");
		assert_string_equal(str(p, "provider"), "mlx5");
	}
	json_decref(ports);
	json_decref(errors);
}

/* no-provider: libibverbs only in the directory ld.so.conf.d/rdma-core.conf
 * names (through ld.so.conf's include), and only the rxe provider: the
 * mlx5_core HCA has none. */
static void no_provider_finds_libibverbs_through_ld_so_conf_and_no_provider_for_mlx5(void **state)
{
	json_t *errors = json_object(), *node = rdma_probe_node(FIX "no-provider", NULL, errors);
	json_t *e2, *ports = ports_of(FIX "no-provider", &e2);

	assert_string_equal(str(node, "verbs_lib"), "/opt/rdma-core/lib/libibverbs.so.1");
	assert_int_equal(json_array_size(json_object_get(node, "verbs_providers")), 1);
	assert_int_equal(json_array_size(ports), 1);
	assert_string_equal(str(json_array_get(ports, 0), "driver"), "mlx5_core");
	assert_true(json_is_null(json_object_get(json_array_get(ports, 0), "provider")));
	assert_int_equal(json_object_size(errors), 0);
	assert_int_equal(json_object_size(e2), 0);
	json_decref(node);
	json_decref(errors);
	json_decref(ports);
	json_decref(e2);
}

/* The directories as ldconfig reads them: includes expanded in place and in
 * name order, a relative pattern against the including file's directory; a
 * file that includes itself is followed RDMA_LIBS_CONF_DEPTH deep, named. */
static void ld_so_conf_directories_come_in_ldconfigs_order(void **state)
{
	char root[] = "/tmp/rdmaconf.XXXXXX";
	json_t *dirs = json_array(), *errors = json_object();
	char *dump;

	assert_non_null(mkdtemp(root));
	put(root, "etc/ld.so.conf", "/first\ninclude conf.d/*.conf\n/last\n");
	put(root, "etc/conf.d/b.conf", "/b\n");
	put(root, "etc/conf.d/a.conf", "/a/\n");
	put(root, "etc/conf.d/loop.conf", "include /etc/conf.d/loop.conf\n");
	rdma_libs_conf_dirs(root, dirs, errors);
	dump = json_dumps(dirs, JSON_COMPACT);
	assert_string_equal(dump, "[\"/first\",\"/a\",\"/b\",\"/last\"]");
	assert_string_equal(str(errors, "rdma_node"),
	                    "/etc/conf.d/loop.conf: includes nested deeper than 8, not followed");
	free(dump);
	json_decref(dirs);
	json_decref(errors);
	nftw(root, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* A soft-RoCE device has no parent device (no driver link): the provider
 * whose name starts its device name serves it. */
static void a_device_without_a_driver_link_matches_the_provider_it_is_named_after(void **state)
{
	char root[] = "/tmp/rdmarxe.XXXXXX";
	json_t *errors, *ports, *p;

	assert_non_null(mkdtemp(root));
	put(root, "sys/class/infiniband/rxe0/ports/1/state", "4: ACTIVE\n");
	put(root, "sys/class/infiniband/rxe0/ports/1/link_layer", "Ethernet\n");
	put(root, "etc/libibverbs.d/mlx5.driver", "driver mlx5\n");
	put(root, "etc/libibverbs.d/rxe.driver", "driver rxe\n");
	ports = ports_of(root, &errors);
	p = json_array_get(ports, 0);
	assert_true(json_is_null(json_object_get(p, "driver")));
	assert_string_equal(str(p, "provider"), "rxe");
	json_decref(ports);
	json_decref(errors);
	nftw(root, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static void bad_input_is_named_per_hca_and_port_and_the_rest_stands(void **state)
{
	json_t *errors, *ports = ports_of(FIX "bad-input", &errors), *p = json_array_get(ports, 0);
	json_t *gids = json_object_get(p, "gids");
	const char *e = str(errors, "rdma:mlx5_0/1");

	assert_int_equal(json_array_size(ports), 1); /* mlx5_1 has no ports */
	assert_string_equal(str(errors, "rdma:mlx5_1"), "no ports");
	assert_non_null(e);
	assert_non_null(strstr(e, "state: not in the kernel's format: \"4:\""));
	assert_non_null(strstr(e, "rate: cannot read"));
	assert_non_null(strstr(e, "gids/1: not a GID: \"fe80:0000:00\""));
	assert_non_null(strstr(e, "gid_attrs/types/0: not in the kernel's format: \"RoCE v3\""));
	assert_true(json_is_null(json_object_get(p, "state")));
	assert_string_equal(str(p, "phys_state"), "LinkUp");
	assert_true(json_is_null(json_object_get(p, "rate")));
	assert_true(json_is_null(json_object_get(p, "rate_gbps")));
	/* index 1 is half-written, index 2 all zeros: only index 0 is left */
	assert_int_equal(json_array_size(gids), 1);
	assert_string_equal(str(json_array_get(gids, 0), "address"), "10.0.11.14");
	assert_true(json_is_null(json_object_get(json_array_get(gids, 0), "type")));
	assert_int_equal(num(p, "mtu"), 1500);
	json_decref(ports);
	json_decref(errors);
}

static void a_root_without_infiniband_gives_no_ports_and_no_error(void **state)
{
	json_t *errors, *ports = ports_of("tests/fixtures/rdma/no-such-root", &errors);

	assert_int_equal(json_array_size(ports), 0);
	assert_int_equal(json_object_size(errors), 0);
	json_decref(ports);
	json_decref(errors);
}

static void the_root_comes_from_clusterdoc_sysfs_root_unless_given(void **state)
{
	unsetenv("CLUSTERDOC_SYSFS_ROOT");
	assert_string_equal(rdma_probe_root(NULL), "");
	setenv("CLUSTERDOC_SYSFS_ROOT", FIX "ib-hdr-8", 1);
	assert_string_equal(rdma_probe_root(NULL), FIX "ib-hdr-8");
	assert_string_equal(rdma_probe_root("/other"), "/other");
	setenv("CLUSTERDOC_SYSFS_ROOT", "", 1);
	assert_string_equal(rdma_probe_root(NULL), "");
	unsetenv("CLUSTERDOC_SYSFS_ROOT");
}

static void memlock_is_this_processs_soft_limit(void **state)
{
	struct rlimit old, low;
	json_t *errors = json_object(), *node;

	assert_int_equal(getrlimit(RLIMIT_MEMLOCK, &old), 0);
	low = old;
	low.rlim_cur = 64 * 1024;
	if (old.rlim_max != RLIM_INFINITY && old.rlim_max < low.rlim_cur)
		low.rlim_cur = old.rlim_max;
	assert_int_equal(setrlimit(RLIMIT_MEMLOCK, &low), 0);
	node = rdma_probe_node(FIX "no-verbs", NULL, errors);
	assert_int_equal(num(node, "memlock_bytes"), (json_int_t)low.rlim_cur);
	assert_false(json_is_true(json_object_get(node, "memlock_unlimited")));
	assert_int_equal(setrlimit(RLIMIT_MEMLOCK, &old), 0);
	json_decref(node);
	json_decref(errors);
}

static void nccl_vars_keep_nccl_ib_and_nccl_net_only(void **state)
{
	char *env[] = {"NCCL_IB_HCA=mlx5_9",
	               "NCCL_NET_GDR_LEVEL=PHB",
	               "NCCL_NET=IB",
	               "NCCL_SOCKET_IFNAME=eth0",
	               "NCCL_IBEXT=1",
	               "PATH=/bin",
	               NULL};
	json_t *errors = json_object(), *node = rdma_probe_node(FIX "no-verbs", env, errors);
	json_t *vars = json_object_get(node, "nccl_vars");

	assert_int_equal(json_object_size(vars), 3);
	assert_string_equal(str(vars, "NCCL_IB_HCA"), "mlx5_9");
	assert_string_equal(str(vars, "NCCL_NET_GDR_LEVEL"), "PHB");
	assert_string_equal(str(vars, "NCCL_NET"), "IB");
	json_decref(node);
	json_decref(errors);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(ib_hdr_8_gives_eight_active_hdr_ports_in_name_order),
	    cmocka_unit_test(roce_idx3_has_the_ipv4_v2_gid_at_index_3_and_no_zero_entry),
	    cmocka_unit_test(roce_idx1_has_the_ipv4_v2_gid_at_index_1),
	    cmocka_unit_test(port_polling_shows_init_and_polling_beside_an_active_port),
	    cmocka_unit_test(no_verbs_has_ports_but_no_library_provider_or_peermem),
	    cmocka_unit_test(a_node_with_verbs_names_library_provider_and_peermem),
	    cmocka_unit_test(each_port_names_its_kernel_driver_and_the_provider_that_serves_it),
	    cmocka_unit_test(
	        no_provider_finds_libibverbs_through_ld_so_conf_and_no_provider_for_mlx5),
	    cmocka_unit_test(ld_so_conf_directories_come_in_ldconfigs_order),
	    cmocka_unit_test(a_device_without_a_driver_link_matches_the_provider_it_is_named_after),
	    cmocka_unit_test(bad_input_is_named_per_hca_and_port_and_the_rest_stands),
	    cmocka_unit_test(a_root_without_infiniband_gives_no_ports_and_no_error),
	    cmocka_unit_test(a_two_port_hca_gives_each_port_the_netdev_of_its_dev_port),
	    cmocka_unit_test(the_root_comes_from_clusterdoc_sysfs_root_unless_given),
	    cmocka_unit_test(memlock_is_this_processs_soft_limit),
	    cmocka_unit_test(nccl_vars_keep_nccl_ib_and_nccl_net_only),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
