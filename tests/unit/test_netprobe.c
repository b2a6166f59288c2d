/* SPDX-License-Identifier: MIT */
/*
 * test_netprobe.c - the agent's network probe: the pure parsers, interface
 * classification on a fake sysfs tree, netprobe_collect with fake sysfs/etc
 * roots and fake firewall tools (hanging, flooding, failing), collection on
 * this machine, and route queries over netlink to loopback addresses.
 */
#include "probes/netprobe.h"
#include "cd.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <ftw.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* --- helpers -------------------------------------------------------------- */

struct tmp {
	char dir[64];
};

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static int tmp_setup(void **state)
{
	struct tmp *t = cd_calloc(1, sizeof(*t));

	snprintf(t->dir, sizeof(t->dir), "/tmp/test_netprobe.XXXXXX");
	if (!mkdtemp(t->dir))
		return -1;
	*state = t;
	return 0;
}

static int tmp_teardown(void **state)
{
	struct tmp *t = *state;

	nftw(t->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(t);
	return 0;
}

static const char *str_at(json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

static long long int_at(json_t *obj, const char *key)
{
	return json_integer_value(json_object_get(obj, key));
}

/* mkdir -p for the directory part of dir/rel (rel ends in a file name when
 * with_last is 0). */
static void make_dirs(const char *dir, const char *rel, int with_last)
{
	char *path = cd_asprintf("%s/%s", dir, rel);
	char *last = strrchr(path, '/');

	if (!with_last && last)
		*last = '\0';
	for (char *s = path + strlen(dir) + 1;; s++) {
		char c = *s;

		if (c != '/' && c != '\0')
			continue;
		*s = '\0';
		assert_true(mkdir(path, 0755) == 0 || errno == EEXIST);
		*s = c;
		if (!c)
			break;
	}
	free(path);
}

static void write_file(const char *dir, const char *rel, const char *content, mode_t mode)
{
	char *path = cd_asprintf("%s/%s", dir, rel);
	FILE *f;

	make_dirs(dir, rel, 0);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(content, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, mode), 0);
	free(path);
}

static void make_link(const char *dir, const char *rel, const char *target)
{
	char *path = cd_asprintf("%s/%s", dir, rel);

	make_dirs(dir, rel, 0);
	assert_int_equal(symlink(target, path), 0);
	free(path);
}

static void hostname_of_this_machine(char *host, size_t len)
{
	memset(host, 0, len);
	assert_int_equal(gethostname(host, len - 1), 0);
}

/* The array of strings as one "a|b|c" string, for comparisons. */
static char *joined(json_t *arr)
{
	char *s = cd_strdup(""), *n;
	size_t i;
	json_t *v;

	json_array_foreach(arr, i, v)
	{
		n = cd_asprintf("%s%s%s", s, i ? "|" : "", json_string_value(v));
		free(s);
		s = n;
	}
	return s;
}

/* --- netprobe_parse_neigh_stat --------------------------------------------- */

static void test_neigh_stat_sums_table_fulls_over_cpus(void **state)
{
	static const char two_cpus[] =
	    "entries  allocs   destroys hash_grows lookups  hits     res_failed "
	    "rcv_probes_mcast rcv_probes_ucast periodic_gc_runs forced_gc_runs "
	    "unresolved_discards table_fulls\n"
	    "00000002 00000fa5 000014a1 00000003   00010bdb 00007386 00000018   00000000 "
	    "00000000 00000263 00006afe 00000000 0000001a\n"
	    "00000002 00000f2d 00000a2f 00000005   00011340 0000744d 00000019   00000000 "
	    "00000000 00000000 0000800b 00000000 000000F0\n";
	long long fulls = -1;

	(void)state;
	assert_int_equal(netprobe_parse_neigh_stat(two_cpus, strlen(two_cpus), &fulls), 0);
	assert_int_equal(fulls, 0x1a + 0xf0);
	/* no such column, a short row, a row that is not hexadecimal */
	assert_int_equal(netprobe_parse_neigh_stat("entries allocs\n1 2\n", 20, &fulls),
	                 CD_ERR_PARSE);
	assert_int_equal(netprobe_parse_neigh_stat("a table_fulls\n1\n", 17, &fulls), CD_ERR_PARSE);
	assert_int_equal(netprobe_parse_neigh_stat("a table_fulls\n1 zz\n", 20, &fulls),
	                 CD_ERR_PARSE);
	/* a header alone is zero CPUs: zero */
	assert_int_equal(netprobe_parse_neigh_stat("a table_fulls\n", 14, &fulls), 0);
	assert_int_equal(fulls, 0);
}

/* --- netprobe_parse_port_range --------------------------------------------- */

static void test_port_range_parses_the_kernel_format(void **state)
{
	int lo = 0, hi = 0;

	assert_int_equal(netprobe_parse_port_range("32768\t60999\n", &lo, &hi), 0);
	assert_int_equal(lo, 32768);
	assert_int_equal(hi, 60999);
	assert_int_equal(netprobe_parse_port_range("  1024 65535", &lo, &hi), 0);
	assert_int_equal(lo, 1024);
	assert_int_equal(hi, 65535);
	assert_int_equal(netprobe_parse_port_range("5000\t5000\n", &lo, &hi), 0);
	assert_int_equal(lo, 5000);
	assert_int_equal(hi, 5000);
}

static void test_port_range_rejects_malformed_text(void **state)
{
	static const char *const bad[] = {
	    "",
	    "\n",
	    "abc",
	    "32768",
	    "32768\t",
	    "60999 100",
	    "1 70000",
	    "-1 5",
	    "1 2 3",
	    "1\t2x",
	    "0x10 20",
	    "1,2",
	    "99999999999999999999 1",
	    "+5 6",
	};
	int lo = -7, hi = -7;

	for (size_t i = 0; i < CD_ARRAY_LEN(bad); i++) {
		assert_int_equal(netprobe_parse_port_range(bad[i], &lo, &hi), CD_ERR_PARSE);
		assert_int_equal(lo, -7);
		assert_int_equal(hi, -7);
	}
	assert_int_equal(netprobe_parse_port_range(NULL, &lo, &hi), CD_ERR_PARSE);
}

/* --- netprobe_hosts_lines --------------------------------------------------- */

static void test_hosts_lines_keep_the_lines_naming_the_host(void **state)
{
	static const char hosts[] =
	    "# The following lines name node1\n"
	    "127.0.0.1\tlocalhost\n"
	    "127.0.1.1   node1.cluster.local    node1   # Debian puts it here\n"
	    "10.0.0.1 node1\n"
	    "10.0.0.2 node2 node2.cluster.local\n"
	    "10.0.0.10 node10\n"
	    "  10.0.0.11\t\tNODE1.Cluster.Local  \r\n"
	    "node1 10.0.0.12\n"
	    "#10.0.0.13 node1\n"
	    "10.0.0.14 node1.other.domain\n"
	    "fe80::1%eth0 node1";
	json_t *lines = netprobe_hosts_lines(hosts, sizeof(hosts) - 1, "node1.cluster.local");
	char *got = joined(lines);

	assert_string_equal(got, "127.0.1.1 node1.cluster.local node1|"
	                         "10.0.0.1 node1|"
	                         "10.0.0.11 NODE1.Cluster.Local|"
	                         "fe80::1%eth0 node1");
	free(got);
	json_decref(lines);
}

static void test_hosts_lines_match_the_short_hostname_too(void **state)
{
	static const char hosts[] = "127.0.1.1 gpu7\n10.1.1.7 gpu7.example.org gpu7\n"
	                            "10.1.1.8 gpu8\n";
	json_t *lines = netprobe_hosts_lines(hosts, sizeof(hosts) - 1, "gpu7");
	char *got = joined(lines);

	assert_string_equal(got, "127.0.1.1 gpu7|10.1.1.7 gpu7.example.org gpu7");
	free(got);
	json_decref(lines);
}

static void test_hosts_lines_without_a_hostname_are_empty(void **state)
{
	static const char hosts[] = "127.0.0.1 localhost\n";
	json_t *a = netprobe_hosts_lines(hosts, sizeof(hosts) - 1, "");
	json_t *b = netprobe_hosts_lines(hosts, sizeof(hosts) - 1, NULL);
	json_t *c = netprobe_hosts_lines(NULL, 0, "localhost");

	assert_int_equal(json_array_size(a), 0);
	assert_int_equal(json_array_size(b), 0);
	assert_int_equal(json_array_size(c), 0);
	json_decref(a);
	json_decref(b);
	json_decref(c);
}

static void test_hosts_lines_read_only_len_bytes(void **state)
{
	static const char hosts[] = "10.0.0.1 node1\n10.0.0.2 node1\n";
	json_t *lines = netprobe_hosts_lines(hosts, 15, "node1");

	assert_int_equal(json_array_size(lines), 1);
	json_decref(lines);
}

/* --- netprobe_parse_nccl_conf ----------------------------------------------- */

static void test_nccl_conf_is_read_as_nccl_reads_it(void **state)
{
	static const char conf[] = "# site defaults\n"
	                           "NCCL_SOCKET_IFNAME=eth0\n"
	                           "  NCCL_DEBUG =  INFO  \n"
	                           "\t# indented comment=1\n"
	                           "NCCL_SOCKET_IFNAME=ib0\n"
	                           "NCCL_IB_HCA\n"
	                           "=orphan\n"
	                           "NCCL_NET_PLUGIN=a=b\n"
	                           "NCCL_EMPTY=\r\n"
	                           "\n"
	                           "NCCL_LAST=1";
	json_t *vars = netprobe_parse_nccl_conf(conf, sizeof(conf) - 1);

	assert_int_equal(json_object_size(vars), 5);
	assert_string_equal(str_at(vars, "NCCL_SOCKET_IFNAME"), "eth0"); /* the first wins */
	assert_string_equal(str_at(vars, "NCCL_DEBUG"), "INFO");
	assert_string_equal(str_at(vars, "NCCL_NET_PLUGIN"), "a=b");
	assert_string_equal(str_at(vars, "NCCL_EMPTY"), "");
	assert_string_equal(str_at(vars, "NCCL_LAST"), "1");
	assert_null(json_object_get(vars, "NCCL_IB_HCA"));
	assert_null(json_object_get(vars, ""));
	json_decref(vars);
}

static void test_nccl_conf_empty_text_is_empty_object(void **state)
{
	json_t *a = netprobe_parse_nccl_conf("", 0), *b = netprobe_parse_nccl_conf(NULL, 0);

	assert_true(json_is_object(a));
	assert_int_equal(json_object_size(a), 0);
	assert_int_equal(json_object_size(b), 0);
	json_decref(a);
	json_decref(b);
}

/* --- netprobe_addr_scope ---------------------------------------------------- */

static const char *scope_of(const char *text)
{
	unsigned char buf[16];

	if (inet_pton(AF_INET, text, buf) == 1)
		return netprobe_addr_scope(AF_INET, buf);
	assert_int_equal(inet_pton(AF_INET6, text, buf), 1);
	return netprobe_addr_scope(AF_INET6, buf);
}

static void test_addr_scope_names(void **state)
{
	static const struct {
		const char *addr, *scope;
	} cases[] = {
	    {"127.0.0.1", "host"},   {"127.1.2.3", "host"},     {"10.0.0.1", "global"},
	    {"169.254.3.1", "link"}, {"169.253.3.1", "global"}, {"192.0.2.2", "global"},
	    {"::1", "host"},         {"fe80::1", "link"},       {"febf::1", "link"},
	    {"fd00::1", "ula"},      {"fc00::1", "ula"},        {"fec0::1", "site"},
	    {"feff::1", "site"},     {"2001:db8::1", "global"}, {"::", "global"},
	};

	for (size_t i = 0; i < CD_ARRAY_LEN(cases); i++)
		assert_string_equal(scope_of(cases[i].addr), cases[i].scope);
}

/* --- netprobe_iface_kind on a fake sysfs ------------------------------------- */

static void fake_iface(const char *root, const char *name, const char *type, int index, int iflink)
{
	char *rel = cd_asprintf("sys/class/net/%s/type", name), *v = cd_asprintf("%s\n", type);

	write_file(root, rel, v, 0644);
	free(rel);
	free(v);
	rel = cd_asprintf("sys/class/net/%s/ifindex", name);
	v = cd_asprintf("%d\n", index);
	write_file(root, rel, v, 0644);
	free(rel);
	free(v);
	rel = cd_asprintf("sys/class/net/%s/iflink", name);
	v = cd_asprintf("%d\n", iflink);
	write_file(root, rel, v, 0644);
	free(rel);
	free(v);
	rel = cd_asprintf("sys/class/net/%s/uevent", name);
	v = cd_asprintf("INTERFACE=%s\nIFINDEX=%d\n", name, index);
	write_file(root, rel, v, 0644);
	free(rel);
	free(v);
}

static void test_iface_kind_on_a_fake_sysfs(void **state)
{
	struct tmp *t = *state;
	const char *r = t->dir;

	fake_iface(r, "eth0", "1", 2, 2);
	make_dirs(r, "sys/class/net/eth0/device", 1);
	fake_iface(r, "br0", "1", 3, 3);
	make_dirs(r, "sys/class/net/br0/bridge", 1);
	fake_iface(r, "eth0.100", "1", 4, 2);
	write_file(r, "sys/class/net/eth0.100/uevent",
	           "DEVTYPE=vlan\nINTERFACE=eth0.100\nIFINDEX=4\n", 0644);
	fake_iface(r, "ib0", "32", 5, 5);
	make_dirs(r, "sys/class/net/ib0/device", 1);
	fake_iface(r, "ib0.8001", "32", 6, 5);
	fake_iface(r, "bond0", "1", 7, 7);
	make_dirs(r, "sys/class/net/bond0/bonding", 1);
	fake_iface(r, "tun0", "65534", 8, 8);
	write_file(r, "sys/class/net/tun0/tun_flags", "0x1002\n", 0644);
	fake_iface(r, "veth1a2b", "1", 9, 10);
	fake_iface(r, "dummy0", "1", 11, 11);
	fake_iface(r, "gre1", "778", 12, 2);
	fake_iface(r, "wg0", "65534", 13, 13);
	fake_iface(r, "docker0", "1", 14, 14);
	write_file(r, "sys/class/net/docker0/uevent", "DEVTYPE=bridge\nINTERFACE=docker0\n", 0644);

	assert_string_equal(netprobe_iface_kind(r, "eth0", 0), "physical");
	assert_string_equal(netprobe_iface_kind(r, "br0", 0), "bridge");
	assert_string_equal(netprobe_iface_kind(r, "docker0", 0), "bridge");
	assert_string_equal(netprobe_iface_kind(r, "eth0.100", 0), "vlan");
	assert_string_equal(netprobe_iface_kind(r, "ib0", 0), "ipoib");
	assert_string_equal(netprobe_iface_kind(r, "ib0.8001", 0), "ipoib");
	assert_string_equal(netprobe_iface_kind(r, "bond0", 0), "bond");
	assert_string_equal(netprobe_iface_kind(r, "tun0", 0), "tun");
	assert_string_equal(netprobe_iface_kind(r, "veth1a2b", 0), "veth");
	assert_string_equal(netprobe_iface_kind(r, "dummy0", 0), "virtual");
	assert_string_equal(netprobe_iface_kind(r, "gre1", 0), "virtual");
	assert_string_equal(netprobe_iface_kind(r, "wg0", 0), "virtual");
	/* the flag decides, whatever sysfs holds */
	assert_string_equal(netprobe_iface_kind(r, "eth0", 1), "loopback");
	/* gone (or never there): nothing to go by */
	assert_string_equal(netprobe_iface_kind(r, "nosuch0", 0), "virtual");
	/* names that would leave the directory are not followed */
	assert_string_equal(netprobe_iface_kind(r, "../net/eth0", 0), "virtual");
	assert_string_equal(netprobe_iface_kind(r, "..", 0), "virtual");
	assert_string_equal(netprobe_iface_kind(r, "", 0), "virtual");
}

/* --- netprobe_collect -------------------------------------------------------- */

static json_t *find_by(json_t *arr, const char *key, const char *value)
{
	size_t i;
	json_t *v;

	json_array_foreach(arr, i, v)
	{
		if (str_at(v, key) && strcmp(str_at(v, key), value) == 0)
			return v;
	}
	return NULL;
}

static void test_collect_reads_sysfs_and_etc_under_their_roots(void **state)
{
	struct tmp *t = *state;
	struct netprobe_opts o;
	char host[HOST_NAME_MAX + 2], *hosts, *user_conf, *etc_conf, *want;
	json_t *p, *lo, *rdma, *conf, *r;
	const char *const order[] = {
	    "hostname",  "interfaces",       "addresses", "hosts_lines", "port_range",
	    "shm_bytes", "neigh_gc_thresh3", "rdma",      "rdma_node",   "nccl_conf",
	    "env",       "firewall",         "errors"};
	const char *key;
	json_t *v;
	size_t k = 0;

	hostname_of_this_machine(host, sizeof(host));
	/* lo is in every network namespace: give it attributes to find */
	write_file(t->dir, "sys/class/net/lo/operstate", "unknown\n", 0644);
	write_file(t->dir, "sys/class/net/lo/mtu", "1234\n", 0644);
	write_file(t->dir, "sys/class/net/lo/address", "00:00:00:00:00:00\n", 0644);
	write_file(t->dir, "sys/class/net/lo/speed", "-1\n", 0644);
	make_link(t->dir, "sys/class/net/lo/master", "../../../devices/virtual/net/br-test");
	make_dirs(t->dir, "sys/class/net/lo/device", 1);
	make_link(t->dir, "sys/class/net/lo/device/driver", "../../../../bus/pci/drivers/fake_drv");
	write_file(t->dir, "sys/class/infiniband/mlx5_1/ports/1/state", "4: ACTIVE\n", 0644);
	write_file(t->dir, "sys/class/infiniband/mlx5_1/ports/1/link_layer", "InfiniBand\n", 0644);
	write_file(t->dir, "sys/class/infiniband/mlx5_1/ports/1/rate", "200 Gb/sec (4X HDR)\n",
	           0644);
	write_file(t->dir, "sys/class/infiniband/mlx5_0/ports/10/state", "1: DOWN\n", 0644);
	write_file(t->dir, "sys/class/infiniband/mlx5_0/ports/2/link_layer", "Ethernet\n", 0644);
	write_file(t->dir, "sys/class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n", 0644);
	hosts = cd_asprintf("127.0.0.1 localhost\n127.0.1.1 %s.example.com %s # added\n"
	                    "10.9.9.9 some-other-host\n",
	                    host, host);
	write_file(t->dir, "etc/hosts", hosts, 0644);
	write_file(t->dir, "etc/nccl.conf", "NCCL_DEBUG=WARN\nNCCL_IB_DISABLE=1\n", 0644);
	write_file(t->dir, "user.conf", "NCCL_DEBUG=INFO\n", 0644);
	user_conf = cd_asprintf("%s/user.conf", t->dir);
	etc_conf = cd_asprintf("%s/etc/nccl.conf", t->dir);
	setenv("NCCL_CONF_FILE", user_conf, 1);
	setenv("NCCL_SOCKET_IFNAME", "=eth0", 1);

	netprobe_opts_init(&o);
	o.sysfs_root = t->dir;
	o.etc_root = t->dir;
	o.no_firewall = 1;
	p = netprobe_collect(&o);
	unsetenv("NCCL_CONF_FILE");
	unsetenv("NCCL_SOCKET_IFNAME");

	/* keys in the documented order (hostname_addrs or hostname_error 4th) */
	json_object_foreach(p, key, v)
	{
		if (strcmp(key, "hostname_addrs") == 0 || strcmp(key, "hostname_error") == 0) {
			assert_int_equal(k, 3);
			continue;
		}
		assert_true(k < CD_ARRAY_LEN(order));
		assert_string_equal(key, order[k++]);
	}
	assert_int_equal(k, CD_ARRAY_LEN(order));

	lo = find_by(json_object_get(p, "interfaces"), "name", "lo");
	assert_non_null(lo);
	assert_int_equal(int_at(lo, "mtu"), 1234);
	assert_string_equal(str_at(lo, "operstate"), "unknown");
	assert_string_equal(str_at(lo, "mac"), "00:00:00:00:00:00");
	assert_true(json_is_null(json_object_get(lo, "speed_mbps")));
	assert_string_equal(str_at(lo, "driver"), "fake_drv");
	assert_string_equal(str_at(lo, "master"), "br-test");
	assert_string_equal(str_at(lo, "kind"), "loopback");
	assert_true(json_is_true(json_object_get(lo, "loopback")));

	want = cd_asprintf("127.0.1.1 %s.example.com %s", host, host);
	assert_int_equal(json_array_size(json_object_get(p, "hosts_lines")), 1);
	assert_string_equal(json_string_value(json_array_get(json_object_get(p, "hosts_lines"), 0)),
	                    want);
	free(want);

	rdma = json_object_get(p, "rdma");
	assert_int_equal(json_array_size(rdma), 4);
	r = json_array_get(rdma, 0);
	assert_string_equal(str_at(r, "device"), "mlx5_0");
	assert_int_equal(int_at(r, "port"), 1);
	assert_string_equal(str_at(r, "state"), "ACTIVE");
	assert_true(json_is_null(json_object_get(r, "link_layer")));
	r = json_array_get(rdma, 1);
	assert_int_equal(int_at(r, "port"), 2);
	assert_true(json_is_null(json_object_get(r, "state")));
	assert_string_equal(str_at(r, "link_layer"), "Ethernet");
	r = json_array_get(rdma, 2);
	assert_int_equal(int_at(r, "port"), 10);
	assert_string_equal(str_at(r, "state"), "DOWN");
	r = json_array_get(rdma, 3);
	assert_string_equal(str_at(r, "device"), "mlx5_1");
	assert_int_equal(int_at(r, "port"), 1);
	assert_string_equal(str_at(r, "link_layer"), "InfiniBand");
	assert_string_equal(str_at(r, "rate"), "200 Gb/sec (4X HDR)");

	conf = json_object_get(p, "nccl_conf");
	assert_int_equal(json_array_size(conf), 2);
	assert_string_equal(str_at(json_array_get(conf, 0), "path"), user_conf);
	assert_string_equal(str_at(json_object_get(json_array_get(conf, 0), "vars"), "NCCL_DEBUG"),
	                    "INFO");
	assert_string_equal(str_at(json_array_get(conf, 1), "path"), etc_conf);
	assert_string_equal(
	    str_at(json_object_get(json_array_get(conf, 1), "vars"), "NCCL_IB_DISABLE"), "1");

	assert_string_equal(str_at(json_object_get(p, "env"), "NCCL_SOCKET_IFNAME"), "=eth0");
	assert_true(json_is_null(json_object_get(p, "firewall")));
	assert_null(json_object_get(json_object_get(p, "errors"), "hosts_lines"));
	assert_null(json_object_get(json_object_get(p, "errors"), "nccl_conf"));
	json_decref(p);
	free(hosts);
	free(user_conf);
	free(etc_conf);
}

static void test_collect_with_empty_roots_reports_what_is_missing(void **state)
{
	struct tmp *t = *state;
	struct netprobe_opts o;
	json_t *p, *errors;

	netprobe_opts_init(&o);
	o.sysfs_root = t->dir;
	o.etc_root = t->dir;
	o.no_firewall = 1;
	setenv("NCCL_CONF_FILE", "/nonexistent/nccl.conf", 1);
	p = netprobe_collect(&o);
	unsetenv("NCCL_CONF_FILE");
	errors = json_object_get(p, "errors");
	/* no /etc/hosts is worth saying; no nccl.conf and no RDMA are facts */
	assert_non_null(strstr(str_at(errors, "hosts_lines"), "/etc/hosts"));
	assert_int_equal(json_array_size(json_object_get(p, "hosts_lines")), 0);
	assert_int_equal(json_array_size(json_object_get(p, "nccl_conf")), 0);
	assert_int_equal(json_array_size(json_object_get(p, "rdma")), 0);
	assert_null(json_object_get(errors, "nccl_conf"));
	assert_null(json_object_get(errors, "rdma"));
	json_decref(p);
}

static void test_collect_ignores_a_sysfs_of_another_namespace(void **state)
{
	struct tmp *t = *state;
	struct netprobe_opts o;
	json_t *p, *lo;
	const char *err;

	/* this "lo" is another link: its ifindex is not ours */
	write_file(t->dir, "sys/class/net/lo/ifindex", "999999\n", 0644);
	write_file(t->dir, "sys/class/net/lo/mtu", "1234\n", 0644);
	write_file(t->dir, "sys/class/net/lo/operstate", "up\n", 0644);
	netprobe_opts_init(&o);
	o.sysfs_root = t->dir;
	o.no_firewall = 1;
	p = netprobe_collect(&o);
	lo = find_by(json_object_get(p, "interfaces"), "name", "lo");
	assert_non_null(lo);
	assert_true(json_is_null(json_object_get(lo, "mtu")));
	assert_true(json_is_null(json_object_get(lo, "operstate")));
	assert_string_equal(str_at(lo, "kind"), "loopback"); /* from the flags */
	err = str_at(json_object_get(p, "errors"), "interfaces");
	assert_non_null(err);
	assert_non_null(strstr(err, "another network namespace: 1 link of this one (lo first)"));
	json_decref(p);
}

/* (ifname, address) of every inet/inet6 getifaddrs entry, "|"-joined. */
static char *getifaddrs_order(void)
{
	struct ifaddrs *list, *a;
	char *s = cd_strdup(""), *n, buf[INET6_ADDRSTRLEN];

	assert_int_equal(getifaddrs(&list), 0);
	for (a = list; a; a = a->ifa_next) {
		const void *raw;

		if (!a->ifa_addr)
			continue;
		if (a->ifa_addr->sa_family == AF_INET)
			raw = &((struct sockaddr_in *)(void *)a->ifa_addr)->sin_addr;
		else if (a->ifa_addr->sa_family == AF_INET6)
			raw = &((struct sockaddr_in6 *)(void *)a->ifa_addr)->sin6_addr;
		else
			continue;
		inet_ntop(a->ifa_addr->sa_family, raw, buf, sizeof(buf));
		n = cd_asprintf("%s%s %s|", s, a->ifa_name, buf);
		free(s);
		s = n;
	}
	freeifaddrs(list);
	return s;
}

static char *probe_order(json_t *addresses)
{
	char *s = cd_strdup(""), *n;
	size_t i;
	json_t *a;

	json_array_foreach(addresses, i, a)
	{
		n = cd_asprintf("%s%s %s|", s, str_at(a, "ifname"), str_at(a, "address"));
		free(s);
		s = n;
	}
	return s;
}

static void test_collect_on_this_machine(void **state)
{
	struct netprobe_opts o;
	char host[HOST_NAME_MAX + 2], *want = NULL, *got = NULL;
	json_t *p = NULL, *lo, *a127, *range, *ha;
	size_t i;

	netprobe_opts_init(&o);
	o.no_firewall = 1;
	/* other work on this machine may add or remove links between the two
	 * walks: the order must agree on one of a few tries */
	for (int try = 0; try < 5; try++) {
		free(want);
		free(got);
		json_decref(p);
		want = getifaddrs_order();
		p = netprobe_collect(&o);
		got = probe_order(json_object_get(p, "addresses"));
		if (strcmp(want, got) == 0)
			break;
	}
	assert_string_equal(got, want);

	hostname_of_this_machine(host, sizeof(host));
	assert_string_equal(str_at(p, "hostname"), host);
	lo = find_by(json_object_get(p, "interfaces"), "name", "lo");
	assert_non_null(lo);
	assert_int_equal(int_at(lo, "index"), if_nametoindex("lo"));
	assert_true(json_is_true(json_object_get(lo, "loopback")));
	assert_true(json_is_true(json_object_get(lo, "up")));
	assert_string_equal(str_at(lo, "kind"), "loopback");
	assert_true(json_is_integer(json_object_get(lo, "mtu")));

	a127 = find_by(json_object_get(p, "addresses"), "address", "127.0.0.1");
	assert_non_null(a127);
	assert_string_equal(str_at(a127, "ifname"), "lo");
	assert_string_equal(str_at(a127, "family"), "inet");
	assert_string_equal(str_at(a127, "scope"), "host");
	assert_int_equal(int_at(a127, "prefix"), 8);
	assert_int_equal(int_at(a127, "scope_id"), 0);

	range = json_object_get(p, "port_range");
	assert_int_equal(json_array_size(range), 2);
	assert_true(json_integer_value(json_array_get(range, 0)) <=
	            json_integer_value(json_array_get(range, 1)));
	assert_true(json_is_integer(json_object_get(p, "shm_bytes")));
	assert_true(json_is_array(json_object_get(p, "rdma")));
	assert_true(json_is_object(json_object_get(p, "env")));

	ha = json_object_get(p, "hostname_addrs");
	if (!ha) {
		assert_true(json_is_string(json_object_get(p, "hostname_error")));
	} else {
		json_array_foreach(ha, i, a127)
		{
			json_t *b = json_object_get(a127, "bindable");

			assert_true(json_is_boolean(b));
			assert_true(json_is_true(b) == !json_object_get(a127, "bind_error"));
			/* a loopback address of this machine always binds */
			if (strcmp(str_at(a127, "address"), "127.0.0.1") == 0)
				assert_true(json_is_true(b));
		}
	}
	assert_int_equal(json_object_size(json_object_get(p, "errors")), 0);
	free(want);
	free(got);
	json_decref(p);
}

/* --- firewall tools ------------------------------------------------------------ */

static json_t *collect_with_tools(const struct tmp *t)
{
	struct netprobe_opts o;
	char *bin = cd_asprintf("%s/bin", t->dir);
	json_t *p;

	netprobe_opts_init(&o);
	o.etc_root = t->dir;
	o.tool_dirs = bin;
	p = netprobe_collect(&o);
	free(bin);
	return p;
}

static void test_firewall_from_fake_tools(void **state)
{
	struct tmp *t = *state;
	json_t *p, *fw, *nft;

	write_file(t->dir, "bin/nft",
	           "#!/bin/sh\n"
	           "[ \"$*\" = '-j list ruleset' ] || exit 3\n"
	           "echo '{\"nftables\": [{\"metainfo\": {\"version\": \"1.0.6\"}}]}'\n",
	           0755);
	write_file(t->dir, "bin/iptables-save",
	           "#!/bin/sh\nprintf '*filter\\n:INPUT ACCEPT [0:0]\\n"
	           "-A INPUT -p tcp --dport 29500 -j DROP\\nCOMMIT\\n'\n",
	           0755);
	write_file(t->dir, "bin/ip6tables-save",
	           "#!/bin/sh\necho 'ip6tables-save v1.8.9 (nf_tables): Could not fetch rule set "
	           "generation id: Permission denied (you must be root)' >&2\n"
	           "echo 'second line' >&2\nexit 1\n",
	           0755);
	write_file(t->dir, "bin/ufw", "#!/bin/sh\nexit 0\n", 0755);
	write_file(t->dir, "etc/ufw/ufw.conf", "# comment\nENABLED=yes\nLOGLEVEL=low\n", 0644);
	write_file(t->dir, "bin/firewall-cmd", "#!/bin/sh\n[ \"$1\" = --state ] && echo running\n",
	           0755);
	/* not executable: not a tool */
	write_file(t->dir, "bin/not-a-tool", "", 0644);

	p = collect_with_tools(t);
	fw = json_object_get(p, "firewall");
	nft = json_object_get(fw, "nft");
	assert_true(json_is_array(json_object_get(json_object_get(nft, "ruleset"), "nftables")));
	assert_null(json_object_get(nft, "error"));
	assert_null(json_object_get(nft, "truncated"));
	assert_string_equal(str_at(json_object_get(fw, "iptables"), "rules"),
	                    "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -p tcp --dport 29500 -j "
	                    "DROP\nCOMMIT\n");
	assert_null(json_object_get(json_object_get(fw, "iptables"), "error"));
	assert_true(json_is_null(json_object_get(json_object_get(fw, "ip6tables"), "rules")));
	assert_string_equal(str_at(json_object_get(fw, "ip6tables"), "error"),
	                    "ip6tables-save exited with status 1: ip6tables-save v1.8.9 "
	                    "(nf_tables): Could not fetch rule set generation id: Permission "
	                    "denied (you must be root)");
	assert_string_equal(str_at(fw, "ufw"), "active");
	if (access("/run/firewalld/firewalld.pid", F_OK) != 0)
		assert_string_equal(str_at(fw, "firewalld"), "running");
	json_decref(p);

	/* ufw installed but not enabled; firewall-cmd answering "not running" */
	write_file(t->dir, "etc/ufw/ufw.conf", "ENABLED=no\n", 0644);
	write_file(t->dir, "bin/firewall-cmd", "#!/bin/sh\necho 'not running'\nexit 252\n", 0755);
	p = collect_with_tools(t);
	fw = json_object_get(p, "firewall");
	assert_string_equal(str_at(fw, "ufw"), "inactive");
	if (access("/run/firewalld/firewalld.pid", F_OK) != 0)
		assert_string_equal(str_at(fw, "firewalld"), "not running");
	json_decref(p);
}

static void test_firewall_without_tools_is_absent(void **state)
{
	struct tmp *t = *state;
	json_t *p, *fw;

	make_dirs(t->dir, "bin", 1);
	write_file(t->dir, "etc/ufw/ufw.conf", "ENABLED=yes\n", 0644);
	p = collect_with_tools(t);
	fw = json_object_get(p, "firewall");
	assert_true(json_is_null(json_object_get(json_object_get(fw, "nft"), "ruleset")));
	assert_string_equal(str_at(json_object_get(fw, "nft"), "error"), "not installed");
	assert_string_equal(str_at(json_object_get(fw, "iptables"), "error"), "not installed");
	assert_string_equal(str_at(json_object_get(fw, "ip6tables"), "error"), "not installed");
	assert_string_equal(str_at(fw, "ufw"), "absent"); /* a conf without the binary */
	if (access("/run/firewalld/firewalld.pid", F_OK) != 0)
		assert_string_equal(str_at(fw, "firewalld"), "absent");
	json_decref(p);
}

/* The process state letter of pid, or 0 when there is no such process. */
static char proc_state(long pid)
{
	char path[64], buf[256], *paren;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if (!(f = fopen(path, "r")))
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	paren = strrchr(buf, ')');
	return paren && paren[1] == ' ' ? paren[2] : '?';
}

static long read_pid(const char *dir, const char *name)
{
	char *path = cd_asprintf("%s/%s", dir, name);
	FILE *f = fopen(path, "r");
	long pid = 0;

	assert_non_null(f);
	assert_int_equal(fscanf(f, "%ld", &pid), 1);
	fclose(f);
	free(path);
	return pid;
}

static void test_firewall_tool_past_the_deadline_is_killed_with_its_children(void **state)
{
	struct tmp *t = *state;
	char *script = cd_asprintf("#!/bin/sh\nsleep 30 &\necho $! > %s/sleep.pid\nwait\n", t->dir);
	int64_t start, took;
	json_t *p, *fw;
	char st;

	write_file(t->dir, "bin/nft", script, 0755);
	/* a tool that floods stdout forever is cut at the cap, not at the deadline */
	write_file(t->dir, "bin/iptables-save", "#!/bin/sh\nexec yes -- '-A INPUT -j DROP'\n",
	           0755);
	start = cd_now_ms();
	p = collect_with_tools(t);
	took = cd_now_ms() - start;
	fw = json_object_get(p, "firewall");
	assert_string_equal(str_at(json_object_get(fw, "nft"), "error"),
	                    "nft did not finish within 3 s");
	assert_true(json_is_null(json_object_get(json_object_get(fw, "nft"), "ruleset")));
	assert_true(took >= 2900 && took < 5000);
	/* the grandchild went with the tool's process group: SIGKILL is sent to the
	 * group at the deadline, and a loaded machine may take a moment to run the
	 * killed process to its end */
	for (int k = 0; k < 200; k++) {
		st = proc_state(read_pid(t->dir, "sleep.pid"));
		if (st == 0 || st == 'Z' || st == 'X')
			break;
		usleep(10 * 1000);
	}
	assert_true(st == 0 || st == 'Z' || st == 'X');
	assert_true(json_is_true(json_object_get(json_object_get(fw, "iptables"), "truncated")));
	assert_null(json_object_get(json_object_get(fw, "iptables"), "error"));
	json_decref(p);
	free(script);
}

static void test_firewall_output_over_the_cap_is_truncated(void **state)
{
	struct tmp *t = *state;
	json_t *p, *fw, *nft, *ipt;
	const char *rules;
	size_t len;
	int64_t start;

	write_file(t->dir, "bin/nft",
	           "#!/bin/sh\nprintf '{\"nftables\": [\"'\nhead -c 300000 /dev/zero | tr '\\0' x\n"
	           "printf '\"]}'\n",
	           0755);
	write_file(t->dir, "bin/iptables-save",
	           "#!/bin/sh\nyes -- '-A INPUT -p tcp --dport 1 -j DROP' | head -c 400000\n",
	           0755);
	write_file(t->dir, "bin/ip6tables-save", "#!/bin/sh\nprintf 'not closed'\n", 0755);
	start = cd_now_ms();
	p = collect_with_tools(t);
	assert_true(cd_now_ms() - start < 2500);
	fw = json_object_get(p, "firewall");
	nft = json_object_get(fw, "nft");
	assert_true(json_is_null(json_object_get(nft, "ruleset")));
	assert_true(json_is_true(json_object_get(nft, "truncated")));
	assert_non_null(strstr(str_at(nft, "error"), "larger than 262144 bytes"));
	ipt = json_object_get(fw, "iptables");
	rules = str_at(ipt, "rules");
	assert_non_null(rules);
	len = strlen(rules);
	assert_true(len > 200000 && len <= NETPROBE_FIREWALL_MAX);
	assert_int_equal(rules[len - 1], '\n');
	assert_int_equal(len % strlen("-A INPUT -p tcp --dport 1 -j DROP\n"), 0);
	assert_true(json_is_true(json_object_get(ipt, "truncated")));
	/* short output keeps its last partial line, and no "truncated" */
	assert_string_equal(str_at(json_object_get(fw, "ip6tables"), "rules"), "not closed");
	assert_null(json_object_get(json_object_get(fw, "ip6tables"), "truncated"));
	json_decref(p);
}

static void test_firewall_nft_garbage_is_an_error(void **state)
{
	struct tmp *t = *state;
	json_t *p, *nft;

	write_file(t->dir, "bin/nft", "#!/bin/sh\necho 'table inet filter {'\n", 0755);
	p = collect_with_tools(t);
	nft = json_object_get(json_object_get(p, "firewall"), "nft");
	assert_true(json_is_null(json_object_get(nft, "ruleset")));
	assert_non_null(strstr(str_at(nft, "error"), "nft printed something that is not JSON"));
	json_decref(p);

	write_file(t->dir, "bin/nft", "#!/bin/sh\nkill -9 $$\n", 0755);
	p = collect_with_tools(t);
	nft = json_object_get(json_object_get(p, "firewall"), "nft");
	assert_string_equal(str_at(nft, "error"), "nft was killed by signal 9");
	json_decref(p);
}

/* --- netprobe_routes --------------------------------------------------------- */

static json_t *routes_for(const char *pairs_json)
{
	char err[CD_ERRLEN] = "";
	json_t *pairs = json_loads(pairs_json, 0, NULL), *r;

	assert_non_null(pairs);
	r = netprobe_routes(pairs, err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(json_array_size(r), json_array_size(pairs));
	json_decref(pairs);
	return r;
}

static void test_route_to_127_0_0_1_is_local_on_lo(void **state)
{
	json_t *r = routes_for("[{\"to\": \"127.0.0.1\"}, {\"to\": \"127.0.0.1\", \"from\": "
	                       "\"127.0.0.1\"}]");
	json_t *e = json_array_get(r, 0);

	assert_string_equal(str_at(e, "to"), "127.0.0.1");
	assert_true(json_is_null(json_object_get(e, "from")));
	assert_string_equal(str_at(e, "dev"), "lo");
	assert_string_equal(str_at(e, "type"), "local");
	assert_string_equal(str_at(e, "src"), "127.0.0.1");
	assert_true(json_is_null(json_object_get(e, "gateway")));
	assert_null(json_object_get(e, "error"));
	e = json_array_get(r, 1);
	assert_string_equal(str_at(e, "from"), "127.0.0.1");
	assert_string_equal(str_at(e, "dev"), "lo");
	assert_string_equal(str_at(e, "type"), "local");
	json_decref(r);
}

static void test_route_to_ipv6_loopback_is_local_on_lo(void **state)
{
	json_t *r = routes_for("[{\"to\": \"::1\", \"scope_id\": 0}]"), *e = json_array_get(r, 0);

	if (json_object_get(e, "error")) {
		/* IPv6 disabled on this machine */
		json_decref(r);
		skip();
	}
	assert_string_equal(str_at(e, "dev"), "lo");
	assert_string_equal(str_at(e, "type"), "local");
	json_decref(r);
}

static void test_route_bad_pairs_are_einval_entries(void **state)
{
	json_t *r = routes_for("[{\"to\": \"not-an-address\"}, 42, {}, {\"to\": 5},"
	                       " {\"to\": \"127.0.0.1\", \"from\": \"::1\"},"
	                       " {\"to\": \"127.0.0.1\", \"from\": \"nope\"},"
	                       " {\"to\": \"127.0.0.1\", \"scope_id\": \"lo\"},"
	                       " {\"to\": \"127.0.0.1\", \"scope_id\": -1},"
	                       " {\"to\": \"127.0.0.1\"}]");
	size_t i;
	json_t *e;

	json_array_foreach(r, i, e)
	{
		if (i == json_array_size(r) - 1) {
			assert_string_equal(str_at(e, "dev"),
			                    "lo"); /* the good one still answers */
			continue;
		}
		assert_string_equal(str_at(e, "errno_name"), "EINVAL");
		assert_string_equal(str_at(e, "error"), strerror(EINVAL));
		assert_null(json_object_get(e, "dev"));
	}
	assert_string_equal(str_at(json_array_get(r, 0), "to"), "not-an-address");
	assert_true(json_is_null(json_object_get(json_array_get(r, 1), "to")));
	assert_string_equal(str_at(json_array_get(r, 4), "from"), "::1");
	json_decref(r);
}

static void test_route_pairs_not_an_array_is_null(void **state)
{
	char err[CD_ERRLEN] = "";
	json_t *obj = json_pack("{s:s}", "to", "127.0.0.1"), *empty = json_array(), *r;

	assert_null(netprobe_routes(obj, err, sizeof(err)));
	assert_non_null(strstr(err, "pairs"));
	err[0] = '\0';
	assert_null(netprobe_routes(NULL, err, sizeof(err)));
	assert_true(err[0] != '\0');
	r = netprobe_routes(empty, err, sizeof(err));
	assert_true(json_is_array(r));
	assert_int_equal(json_array_size(r), 0);
	json_decref(r);
	json_decref(obj);
	json_decref(empty);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_neigh_stat_sums_table_fulls_over_cpus),
	    cmocka_unit_test(test_port_range_parses_the_kernel_format),
	    cmocka_unit_test(test_port_range_rejects_malformed_text),
	    cmocka_unit_test(test_hosts_lines_keep_the_lines_naming_the_host),
	    cmocka_unit_test(test_hosts_lines_match_the_short_hostname_too),
	    cmocka_unit_test(test_hosts_lines_without_a_hostname_are_empty),
	    cmocka_unit_test(test_hosts_lines_read_only_len_bytes),
	    cmocka_unit_test(test_nccl_conf_is_read_as_nccl_reads_it),
	    cmocka_unit_test(test_nccl_conf_empty_text_is_empty_object),
	    cmocka_unit_test(test_addr_scope_names),
	    cmocka_unit_test_setup_teardown(test_iface_kind_on_a_fake_sysfs, tmp_setup,
	                                    tmp_teardown),
	    cmocka_unit_test_setup_teardown(test_collect_reads_sysfs_and_etc_under_their_roots,
	                                    tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(test_collect_with_empty_roots_reports_what_is_missing,
	                                    tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(test_collect_ignores_a_sysfs_of_another_namespace,
	                                    tmp_setup, tmp_teardown),
	    cmocka_unit_test(test_collect_on_this_machine),
	    cmocka_unit_test_setup_teardown(test_firewall_from_fake_tools, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(test_firewall_without_tools_is_absent, tmp_setup,
	                                    tmp_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_firewall_tool_past_the_deadline_is_killed_with_its_children, tmp_setup,
	        tmp_teardown),
	    cmocka_unit_test_setup_teardown(test_firewall_output_over_the_cap_is_truncated,
	                                    tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(test_firewall_nft_garbage_is_an_error, tmp_setup,
	                                    tmp_teardown),
	    cmocka_unit_test(test_route_to_127_0_0_1_is_local_on_lo),
	    cmocka_unit_test(test_route_to_ipv6_loopback_is_local_on_lo),
	    cmocka_unit_test(test_route_bad_pairs_are_einval_entries),
	    cmocka_unit_test(test_route_pairs_not_an_array_is_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
