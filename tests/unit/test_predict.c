/* SPDX-License-Identifier: MIT */
/*
 * test_predict.c - NCCL's and Gloo's interface choice, emulated from a
 * node's getifaddrs order, flags and variables (probes/predict.h).
 *
 * Each node is built by hand, addresses in the order getifaddrs gives them
 * on Linux: every IPv4 entry first (interface order), then every IPv6 entry.
 * The layouts are the traps of the failure catalogue: an ib0 with only
 * fe80::, virbr0 before eth0, an IPv6-only second NIC, a down port, a
 * hostname on 127.0.1.1. Expectations follow NCCL 2.27.7/2.28.3
 * (ncclFindInterfaces) and PyTorch/Gloo (createDefaultDevice,
 * lookupAddrForIface).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "cd.h"
#include "probes/predict.h"

/* ---- helpers: a node built by hand ---- */

struct test_node {
	struct nm_node node;
	struct nm_iface ifaces[24];
	struct nm_addr addrs[48];
	struct nm_hostaddr hostaddrs[8];
	struct nm_var vars[8];
	char values[8][128];
};

static const struct nccl_version v2_27_7 = {2, 27, 7};
static const struct nccl_version v2_28_3 = {2, 28, 3};

static struct test_node *node_new(const char *hostname)
{
	struct test_node *t = cd_calloc(1, sizeof(*t));

	snprintf(t->node.hostname, sizeof(t->node.hostname), "%s", hostname);
	t->node.probed = 1;
	t->node.ifaces = t->ifaces;
	t->node.addrs = t->addrs;
	t->node.hostaddrs = t->hostaddrs;
	t->node.vars = t->vars;
	return t;
}

/* An interface; its index is its position + 1 (lo is 1, as on Linux). */
static void iface(struct test_node *t, const char *name, int running)
{
	struct nm_iface *f = &t->ifaces[t->node.nifaces];

	snprintf(f->name, sizeof(f->name), "%s", name);
	f->index = (int)t->node.nifaces + 1;
	f->up = 1;
	f->running = running;
	f->loopback = strcmp(name, "lo") == 0;
	t->node.nifaces++;
}

static int index_of(const struct test_node *t, const char *ifname)
{
	for (size_t i = 0; i < t->node.nifaces; i++)
		if (strcmp(t->ifaces[i].name, ifname) == 0)
			return t->ifaces[i].index;
	return 0;
}

/* The next getifaddrs entry; fe80:: gets its interface's index as scope. */
static void addr(struct test_node *t, const char *ifname, const char *text, int prefix)
{
	struct nm_addr *a = &t->addrs[t->node.naddrs];

	snprintf(a->ifname, sizeof(a->ifname), "%s", ifname);
	snprintf(a->addr, sizeof(a->addr), "%s", text);
	a->family = strchr(text, ':') ? AF_INET6 : AF_INET;
	a->prefix = prefix;
	if (strncmp(text, "fe80:", 5) == 0)
		a->scope_id = (unsigned)index_of(t, ifname);
	t->node.naddrs++;
}

static void hostaddr(struct test_node *t, const char *text, int bindable)
{
	struct nm_hostaddr *h = &t->hostaddrs[t->node.nhostaddrs++];

	h->family = strchr(text, ':') ? AF_INET6 : AF_INET;
	snprintf(h->addr, sizeof(h->addr), "%s", text);
	h->bindable = bindable;
}

static void var(struct test_node *t, const char *name, const char *value, const char *source)
{
	size_t i = t->node.nvars++;

	snprintf(t->vars[i].name, sizeof(t->vars[i].name), "%s", name);
	snprintf(t->values[i], sizeof(t->values[i]), "%s", value);
	t->vars[i].value = t->values[i];
	snprintf(t->vars[i].source, sizeof(t->vars[i].source), "%s", source);
}

/* lo, then eth0 10.0.0.1/24: the plain node most layouts start from. */
static struct test_node *plain_node(void)
{
	struct test_node *t = node_new("node1");

	iface(t, "lo", 1);
	iface(t, "eth0", 1);
	addr(t, "lo", "127.0.0.1", 8);
	addr(t, "eth0", "10.0.0.1", 24);
	addr(t, "lo", "::1", 128);
	addr(t, "eth0", "fe80::1", 64);
	return t;
}

static void predict_nccl(struct test_node *t, const struct nccl_version *v, int max_ifs,
                         struct nccl_prediction *p)
{
	struct net_env e;

	net_env_of(&t->node, &e);
	nccl_predict(&t->node, &e, v, max_ifs, p);
}

static void predict_gloo(struct test_node *t, struct gloo_prediction *p)
{
	struct net_env e;

	net_env_of(&t->node, &e);
	gloo_predict(&t->node, &e, p);
}

/* "eth0=10.0.0.1 ib0=fe80::1%3": the picks in one string to compare. */
static const char *picks_text(const struct net_pick *picks, int n)
{
	static char buf[1024];

	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		size_t used = strlen(buf);

		snprintf(buf + used, sizeof(buf) - used, "%s%s=%s", i ? " " : "", picks[i].ifname,
		         picks[i].addr);
		if (picks[i].scope_id) {
			used = strlen(buf);
			snprintf(buf + used, sizeof(buf) - used, "%%%u", picks[i].scope_id);
		}
	}
	return buf;
}

static const char *log_line(const struct nccl_prediction *p)
{
	static char buf[1024];

	nccl_log_line(p, buf, sizeof(buf));
	return buf;
}

/* ---- NCCL_SOCKET_IFNAME parsing ---- */

static void filter_caret_excludes_each_prefix(void **state)
{
	struct nccl_list f;

	nccl_filter_parse("^docker,lo", &f);
	assert_int_equal(f.exclude, 1);
	assert_int_equal(f.exact, 0);
	assert_int_equal(f.nitems, 2);
	assert_string_equal(f.items[0].prefix, "docker");
	assert_string_equal(f.items[1].prefix, "lo");
	assert_true(nccl_list_match(&f, "eth0", -1));
	assert_false(nccl_list_match(&f, "docker0", -1));
	assert_false(nccl_list_match(&f, "lo", -1));
	assert_false(nccl_list_match(&f, "lo2", -1));
}

static void filter_equals_matches_whole_names(void **state)
{
	struct nccl_list f;

	nccl_filter_parse("=eth0", &f);
	assert_int_equal(f.exclude, 0);
	assert_int_equal(f.exact, 1);
	assert_int_equal(f.nitems, 1);
	assert_string_equal(f.items[0].prefix, "eth0");
	assert_true(nccl_list_match(&f, "eth0", -1));
	assert_false(nccl_list_match(&f, "eth0.100", -1));
	assert_false(nccl_list_match(&f, "eth", -1));
}

static void filter_caret_equals_excludes_exact_names(void **state)
{
	struct nccl_list f;

	nccl_filter_parse("^=docker0,lo", &f);
	assert_int_equal(f.exclude, 1);
	assert_int_equal(f.exact, 1);
	assert_int_equal(f.nitems, 2);
	assert_false(nccl_list_match(&f, "docker0", -1));
	assert_false(nccl_list_match(&f, "lo", -1));
	assert_true(nccl_list_match(&f, "docker1", -1));
	assert_true(nccl_list_match(&f, "lo2", -1));
	assert_true(nccl_list_match(&f, "eth0", -1));
}

static void filter_equals_before_caret_is_part_of_the_name(void **state)
{
	struct nccl_list f;

	nccl_filter_parse("=^lo", &f);
	assert_int_equal(f.exclude, 0);
	assert_int_equal(f.exact, 1);
	assert_string_equal(f.items[0].prefix, "^lo");
	assert_false(nccl_list_match(&f, "lo", -1));
}

static void filter_prefix_matches_longer_names(void **state)
{
	struct nccl_list f;

	nccl_filter_parse("eth1", &f);
	assert_true(nccl_list_match(&f, "eth1", -1));
	assert_true(nccl_list_match(&f, "eth10", -1));
	assert_true(nccl_list_match(&f, "eth1.100", -1));
	assert_false(nccl_list_match(&f, "eth2", -1));
	assert_false(nccl_list_match(&f, "eth", -1));
}

static void filter_port_suffix_is_dropped(void **state)
{
	struct nccl_list f;

	nccl_filter_parse("eth0:1,ib:2:3,=x", &f);
	assert_int_equal(f.nitems, 3);
	assert_string_equal(f.items[0].prefix, "eth0");
	assert_string_equal(f.items[1].prefix, "ib");
	assert_string_equal(f.items[2].prefix, "=x");
	assert_true(nccl_list_match(&f, "eth0", -1));
	assert_true(nccl_list_match(&f, "eth0:1", -1));
}

static void filter_of_one_character_matches_everything(void **state)
{
	struct nccl_list f;

	nccl_filter_parse("e", &f);
	assert_int_equal(f.nitems, 0);
	assert_int_equal(f.exclude, 0);
	assert_true(nccl_list_match(&f, "docker0", -1));
	nccl_filter_parse("^", &f);
	assert_int_equal(f.exclude, 0);
	assert_true(nccl_list_match(&f, "lo", -1));
	nccl_filter_parse(NULL, &f);
	assert_true(nccl_list_match(&f, "lo", -1));
}

static void filter_empty_items_vanish(void **state)
{
	struct nccl_list f;

	nccl_filter_parse(",,eth0,,ib0,", &f);
	assert_int_equal(f.nitems, 2);
	assert_string_equal(f.items[0].prefix, "eth0");
	assert_string_equal(f.items[1].prefix, "ib0");
	nccl_filter_parse(":29500,eth1", &f);
	assert_int_equal(f.nitems, 1);
	assert_string_equal(f.items[0].prefix, "eth1");
}

static void filter_caret_with_no_items_matches_nothing(void **state)
{
	struct nccl_list f;

	nccl_filter_parse("^,", &f);
	assert_int_equal(f.exclude, 1);
	assert_int_equal(f.nitems, 0);
	assert_false(nccl_list_match(&f, "eth0", -1));
	nccl_filter_parse("^=", &f);
	assert_false(nccl_list_match(&f, "lo", -1));
}

static void filter_reads_at_most_sixteen_items(void **state)
{
	struct nccl_list f;

	nccl_filter_parse("a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14,a15,a16,eth0", &f);
	assert_int_equal(f.nitems, 16);
	assert_string_equal(f.items[15].prefix, "a16");
	assert_false(nccl_list_match(&f, "eth0", -1));
}

/* ---- versions ---- */

static void version_parses_three_numbers(void **state)
{
	struct nccl_version v;

	assert_int_equal(nccl_version_parse("2.28.3", &v), 0);
	assert_int_equal(v.major, 2);
	assert_int_equal(v.minor, 28);
	assert_int_equal(v.patch, 3);
	assert_int_equal(nccl_version_parse("2.28", &v), CD_ERR_PARSE);
	assert_int_equal(v.major, 0);
	assert_int_equal(nccl_version_parse("2.28.3-1", &v), CD_ERR_PARSE);
	assert_int_equal(nccl_version_parse("", &v), CD_ERR_PARSE);
	assert_int_equal(nccl_version_parse(NULL, &v), CD_ERR_PARSE);
	assert_int_equal(nccl_version_parse("v2.28.3", &v), CD_ERR_PARSE);
}

static void version_unknown_compares_as_newest(void **state)
{
	struct nccl_version unknown = {0, 0, 0}, v2_29_2 = {2, 29, 2};

	assert_int_equal(nccl_version_cmp(&v2_27_7, &v2_28_3), -1);
	assert_int_equal(nccl_version_cmp(&v2_28_3, &v2_27_7), 1);
	assert_int_equal(nccl_version_cmp(&v2_28_3, &v2_28_3), 0);
	assert_int_equal(nccl_version_cmp(&v2_29_2, &v2_28_3), 1);
	assert_int_equal(nccl_version_cmp(&unknown, &v2_29_2), 1);
	assert_int_equal(nccl_version_cmp(&v2_29_2, &unknown), -1);
	assert_int_equal(nccl_version_cmp(&unknown, &unknown), 0);
}

/* ---- NCCL: the default order ---- */

/* NVIDIA/nccl#1291: "Bootstrap : Using ib0:fe80::a288:c203:d2:aaf2%ib0<0>" */
static void ib_with_only_link_local_beats_a_good_eth0(void **state)
{
	struct test_node *t = node_new("node1");
	struct nccl_prediction p;

	iface(t, "lo", 1);
	iface(t, "eth0", 1);
	iface(t, "ib0", 1);
	addr(t, "lo", "127.0.0.1", 8);
	addr(t, "eth0", "10.0.0.1", 24);
	addr(t, "lo", "::1", 128);
	addr(t, "eth0", "fe80::1", 64);
	addr(t, "ib0", "fe80::a288:c203:d2:aaf2", 64);
	predict_nccl(t, NULL, 1, &p);
	assert_int_equal(p.npicks, 1);
	assert_string_equal(picks_text(p.picks, p.npicks), "ib0=fe80::a288:c203:d2:aaf2%3");
	assert_int_equal(p.picks[0].family, AF_INET6);
	assert_string_equal(p.rule, "default: ib");
	assert_string_equal(log_line(&p), "Bootstrap: Using ib0:fe80::a288:c203:d2:aaf2%ib0<0>");
	predict_nccl(t, NULL, NCCL_PREDICT_MAX_IFS, &p);
	assert_string_equal(log_line(&p),
	                    "NET/Socket : Using [0]ib0:fe80::a288:c203:d2:aaf2%ib0<0>");
	free(t);
}

static struct test_node *virbr_before_eth0(void)
{
	struct test_node *t = node_new("node1");

	iface(t, "lo", 1);
	iface(t, "virbr0", 1);
	iface(t, "eth0", 1);
	addr(t, "lo", "127.0.0.1", 8);
	addr(t, "virbr0", "192.168.122.1", 24);
	addr(t, "eth0", "10.0.0.1", 24);
	return t;
}

static void virbr_is_excluded_since_2_28_3(void **state)
{
	struct test_node *t = virbr_before_eth0();
	struct nccl_prediction p;

	predict_nccl(t, &v2_28_3, NCCL_PREDICT_MAX_IFS, &p);
	assert_string_equal(picks_text(p.picks, p.npicks), "eth0=10.0.0.1");
	assert_string_equal(p.rule, "default: ^docker,lo,virbr");
	free(t);
}

static void virbr_is_picked_first_before_2_28_3(void **state)
{
	struct test_node *t = virbr_before_eth0();
	struct nccl_prediction p;

	predict_nccl(t, &v2_27_7, NCCL_PREDICT_MAX_IFS, &p);
	assert_string_equal(picks_text(p.picks, p.npicks), "virbr0=192.168.122.1 eth0=10.0.0.1");
	assert_string_equal(p.rule, "default: ^docker,lo");
	predict_nccl(t, &v2_27_7, 1, &p);
	assert_string_equal(log_line(&p), "Bootstrap: Using virbr0:192.168.122.1<0>");
	free(t);
}

static void virbr_alone_is_the_last_resort_since_2_28_3(void **state)
{
	struct test_node *t = node_new("node1");
	struct nccl_prediction p;

	iface(t, "lo", 0);
	iface(t, "virbr0", 1);
	addr(t, "lo", "127.0.0.1", 8);
	addr(t, "virbr0", "192.168.122.1", 24);
	predict_nccl(t, &v2_28_3, NCCL_PREDICT_MAX_IFS, &p);
	assert_string_equal(picks_text(p.picks, p.npicks), "virbr0=192.168.122.1");
	assert_string_equal(p.rule, "default: virbr");
	free(t);
}

static void veth_and_bridges_are_not_excluded_by_default(void **state)
{
	struct test_node *t = node_new("node1");
	struct nccl_prediction p;

	iface(t, "lo", 1);
	iface(t, "eth0", 1);
	iface(t, "br-1a2b3c", 1);
	iface(t, "veth25f2e72", 1);
	addr(t, "lo", "127.0.0.1", 8);
	addr(t, "eth0", "172.18.40.41", 24);
	addr(t, "br-1a2b3c", "172.19.0.1", 16);
	addr(t, "lo", "::1", 128);
	addr(t, "veth25f2e72", "fe80::380d:ff:fe00:1", 64);
	predict_nccl(t, NULL, NCCL_PREDICT_MAX_IFS, &p);
	assert_string_equal(
	    picks_text(p.picks, p.npicks),
	    "eth0=172.18.40.41 br-1a2b3c=172.19.0.1 veth25f2e72=fe80::380d:ff:fe00:1%4");
	assert_string_equal(log_line(&p),
	                    "NET/Socket : Using [0]eth0:172.18.40.41<0> [1]br-1a2b3c:172.19.0.1<0> "
	                    "[2]veth25f2e72:fe80::380d:ff:fe00:1%veth25f2e72<0>");
	free(t);
}

static void docker0_is_excluded_by_default(void **state)
{
	struct test_node *t = node_new("node1");
	struct nccl_prediction p;

	iface(t, "lo", 1);
	iface(t, "docker0", 1);
	iface(t, "eth0", 1);
	addr(t, "lo", "127.0.0.1", 8);
	addr(t, "docker0", "172.17.0.1", 16);
	addr(t, "eth0", "10.0.0.1", 24);
	predict_nccl(t, NULL, NCCL_PREDICT_MAX_IFS, &p);
	assert_string_equal(picks_text(p.picks, p.npicks), "eth0=10.0.0.1");
	free(t);
}

static void docker_comes_before_lo_when_nothing_else_is_there(void **state)
{
	struct test_node *t = node_new("node1");
	struct nccl_prediction p;

	iface(t, "lo", 1);
	iface(t, "docker0", 1);
	addr(t, "lo", "127.0.0.1", 8);
	addr(t, "docker0", "172.17.0.1", 16);
	predict_nccl(t, NULL, NCCL_PREDICT_MAX_IFS, &p);
	assert_string_equal(picks_text(p.picks, p.npicks), "docker0=172.17.0.1");
	assert_string_equal(p.rule, "default: docker");
	free(t);
}

static void lo_is_the_fallback_and_its_ipv6_loopback_is_skipped(void **state)
{
	struct test_node *t = node_new("node1");
	struct nccl_prediction p;

	iface(t, "lo", 1);
	addr(t, "lo", "::1", 128);
	addr(t, "lo", "127.0.0.1", 8);
	predict_nccl(t, NULL, NCCL_PREDICT_MAX_IFS, &p);
	assert_string_equal(picks_text(p.picks, p.npicks), "lo=127.0.0.1");
	assert_string_equal(p.rule, "default: lo");
	free(t);
}

static struct test_node *eth0_down_eth1_up(void)
{
	struct test_node *t = node_new("node1");

	iface(t, "lo", 1);
	iface(t, "eth0", 0);
	iface(t, "eth1", 1);
	addr(t, "lo", "127.0.0.1", 8);
	addr(t, "eth0", "10.0.0.1", 24);
	addr(t, "eth1", "10.1.0.1", 24);
	return t;
}

static void interface_not_running_is_skipped_since_2_28_3(void **state)
{
	struct test_node *t = eth0_down_eth1_up();
	struct nccl_prediction p;

	predict_nccl(t, &v2_28_3, NCCL_PREDICT_MAX_IFS, &p);
	assert_string_equal(picks_text(p.picks, p.npicks), "eth1=10.1.0.1");
	predict_nccl(t, NULL, 1, &p);
	assert_string_equal(picks_text(p.picks, p.npicks), "eth1=10.1.0.1");
	free(t);
}

static void interface_not_running_is_kept_before_2_28_3(void **state)
{
	struct test_node *t = eth0_down_eth1_up();
	struct nccl_prediction p;

	predict_nccl(t, &v2_27_7, NCCL_PREDICT_MAX_IFS, &p);
	assert_string_equal(picks_text(p.picks, p.npicks), "eth0=10.0.0.1 eth1=10.1.0.1");
	predict_nccl(t, &v2_27_7, 1, &p);
	assert_string_equal(picks_text(p.picks, p.npicks), "eth0=10.0.0.1");
	free(t);
}

static void address_label_has_its_interface_flags(void **state)
{
	struct test_node *t = eth0_down_eth1_up();
	struct nccl_prediction p;

	addr(t, "eth0:1", "10.0.9.1", 24);
	predict_nccl(t, &v2_28_3, NCCL_PREDICT_MAX_IFS, &p);
	assert_string_equal(picks_text(p.picks, p.npicks), "eth1=10.1.0.1");
	predict_nccl(t, &v2_27_7, NCCL_PREDICT_MAX_IFS, &p);
	assert_string_equal(picks_text(p.picks, p.npicks),
	                    "eth0=10.0.0.1 eth1=10.1.0.1 eth0:1=10.0.9.1");
	free(t);
}

static void first_address_of_an_interface_wins(void **state)
{
	struct test_node *t = node_new("node1");
	struct nccl_prediction p;

	iface(t, "lo", 1);
	iface(t, "eth0", 1);
	addr(t, "lo", "127.0.0.1", 8);
	addr(t, "eth0", "10.0.0.1", 24);
	addr(t, "eth0", "10.0.0.2", 24);
	addr(t, "eth0", "2001:db8::1", 64);
	addr(t, "eth0", "fe80::1", 64);
	predict_nccl(t, NULL, NCCL_PREDICT_MAX_IFS, &p);
	assert_string_equal(picks_text(p.picks, p.npicks), "eth0=10.0.0.1");
	free(t);
}

static void socket_list_stops_at_max_ifs(void **state)
{
	struct test_node *t = node_new("node1");
	struct nccl_prediction p;
	char name[16], text[32];

	iface(t, "lo", 1);
	addr(t, "lo", "127.0.0.1", 8);
	for (int i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "eth%d", i);
		snprintf(text, sizeof(text), "10.0.%d.1", i);
		iface(t, name, 1);
		addr(t, name, text, 24);
	}
	predict_nccl(t, NULL, NCCL_PREDICT_MAX_IFS, &p);
	assert_int_equal(p.npicks, 16);
	assert_string_equal(p.picks[15].ifname, "eth15");
	predict_nccl(t, NULL, 1, &p);
	assert_int_equal(p.npicks, 1);
	assert_int_equal(p.bootstrap, 1);
	assert_string_equal(p.picks[0].ifname, "eth0");
	free(t);
}

/* ---- NCCL: NCCL_SOCKET_FAMILY and IPv6-only interfaces ---- */

static void family_inet6_picks_link_local_of_eth0(void **state)
{
	struct test_node *t = plain_node();
	struct nccl_prediction p;

	var(t, "NCCL_SOCKET_FAMILY", "AF_INET6", "environment");
	predict_nccl(t, NULL, NCCL_PREDICT_MAX_IFS, &p);
	assert_string_equal(picks_text(p.picks, p.npicks), "eth0=fe80::1%2");
	assert_string_equal(
	    p.rule, "default: ^docker,lo,virbr; NCCL_SOCKET_FAMILY=AF_INET6 (from environment)");
	assert_string_equal(log_line(&p), "NET/Socket : Using [0]eth0:fe80::1%eth0<0>");
	free(t);
}

static struct test_node *ipv6_only_ens6(void)
{
	struct test_node *t = node_new("node1");

	iface(t, "lo", 1);
	iface(t, "eth0", 1);
	iface(t, "ens6", 1);
	addr(t, "lo", "127.0.0.1", 8);
	addr(t, "eth0", "10.0.0.1", 24);
	addr(t, "lo", "::1", 128);
	addr(t, "ens6", "2001:db8::11", 64);
	addr(t, "eth0", "fe80::1", 64);
	addr(t, "ens6", "fe80::11", 64);
	return t;
}

static void family_inet_drops_an_ipv6_only_interface(void **state)
{
	struct test_node *t = ipv6_only_ens6();
	struct nccl_prediction p;

	predict_nccl(t, NULL, NCCL_PREDICT_MAX_IFS, &p);
	assert_string_equal(picks_text(p.picks, p.npicks), "eth0=10.0.0.1 ens6=2001:db8::11");
	var(t, "NCCL_SOCKET_FAMILY", "AF_INET", "/etc/nccl.conf");
	predict_nccl(t, NULL, NCCL_PREDICT_MAX_IFS, &p);
	assert_string_equal(picks_text(p.picks, p.npicks), "eth0=10.0.0.1");
	assert_string_equal(
	    p.rule, "default: ^docker,lo,virbr; NCCL_SOCKET_FAMILY=AF_INET (from /etc/nccl.conf)");
	free(t);
}

static void family_other_value_is_ignored(void **state)
{
	struct test_node *t = ipv6_only_ens6();
	struct nccl_prediction p;

	var(t, "NCCL_SOCKET_FAMILY", "inet", "environment");
	predict_nccl(t, NULL, NCCL_PREDICT_MAX_IFS, &p);
	assert_string_equal(picks_text(p.picks, p.npicks), "eth0=10.0.0.1 ens6=2001:db8::11");
	assert_string_equal(
	    p.rule,
	    "default: ^docker,lo,virbr; NCCL_SOCKET_FAMILY=inet (from environment) ignored");
	free(t);
}

static void ifname_prefix_selects_an_ipv6_only_interface(void **state)
{
	struct test_node *t = ipv6_only_ens6();
	struct nccl_prediction p;

	var(t, "NCCL_SOCKET_IFNAME", "ens", "/etc/nccl.conf");
	predict_nccl(t, NULL, NCCL_PREDICT_MAX_IFS, &p);
	assert_string_equal(picks_text(p.picks, p.npicks), "ens6=2001:db8::11");
	assert_int_equal(p.picks[0].family, AF_INET6);
	assert_string_equal(p.rule, "NCCL_SOCKET_IFNAME=ens (from /etc/nccl.conf)");
	assert_string_equal(log_line(&p), "NET/Socket : Using [0]ens6:2001:db8::11<0>");
	free(t);
}

static void log_line_lists_every_socket_interface(void **state)
{
	struct test_node *t = ipv6_only_ens6();
	struct nccl_prediction p;

	predict_nccl(t, NULL, NCCL_PREDICT_MAX_IFS, &p);
	assert_string_equal(log_line(&p),
	                    "NET/Socket : Using [0]eth0:10.0.0.1<0> [1]ens6:2001:db8::11<0>");
	predict_nccl(t, NULL, 1, &p);
	assert_string_equal(log_line(&p), "Bootstrap: Using eth0:10.0.0.1<0>");
	free(t);
}

/* ---- NCCL: NCCL_SOCKET_IFNAME ---- */

/* sjeaugey in horovod/horovod#700: "^docker0" alone drops the lo exclusion */
static void caret_docker0_alone_lets_lo_in(void **state)
{
	struct test_node *t = node_new("node1");
	struct nccl_prediction p;

	iface(t, "lo", 1);
	iface(t, "docker0", 1);
	iface(t, "eth0", 1);
	addr(t, "lo", "127.0.0.1", 8);
	addr(t, "docker0", "172.17.0.1", 16);
	addr(t, "eth0", "10.0.0.1", 24);
	var(t, "NCCL_SOCKET_IFNAME", "^docker0", "/etc/nccl.conf");
	predict_nccl(t, NULL, NCCL_PREDICT_MAX_IFS, &p);
	assert_string_equal(picks_text(p.picks, p.npicks), "lo=127.0.0.1 eth0=10.0.0.1");
	assert_string_equal(p.rule, "NCCL_SOCKET_IFNAME=^docker0 (from /etc/nccl.conf)");
	predict_nccl(t, NULL, 1, &p);
	assert_string_equal(log_line(&p), "Bootstrap: Using lo:127.0.0.1<0>");
	free(t);
}

static void ifname_overrides_the_ib_preference(void **state)
{
	struct test_node *t = node_new("node1");
	struct nccl_prediction p;

	iface(t, "lo", 1);
	iface(t, "eth0", 1);
	iface(t, "ib0", 1);
	addr(t, "eth0", "10.0.0.1", 24);
	addr(t, "ib0", "fe80::2", 64);
	var(t, "NCCL_SOCKET_IFNAME", "=eth0", "environment");
	predict_nccl(t, NULL, NCCL_PREDICT_MAX_IFS, &p);
	assert_string_equal(picks_text(p.picks, p.npicks), "eth0=10.0.0.1");
	assert_string_equal(p.rule, "NCCL_SOCKET_IFNAME==eth0 (from environment)");
	free(t);
}

static void ifname_matching_nothing_is_nccls_error(void **state)
{
	struct test_node *t = plain_node();
	struct nccl_prediction p;

	var(t, "NCCL_SOCKET_IFNAME", "bond0", "environment");
	predict_nccl(t, NULL, NCCL_PREDICT_MAX_IFS, &p);
	assert_int_equal(p.npicks, 0);
	assert_int_equal(p.cannot_predict, 0);
	assert_string_equal(p.error, "NET/Socket : no interface found");
	assert_string_equal(log_line(&p), "NET/Socket : no interface found");
	predict_nccl(t, NULL, 1, &p);
	assert_string_equal(p.error, "Bootstrap : no socket interface found");
	free(t);
}

static void ifname_of_one_character_is_ignored(void **state)
{
	struct test_node *t = plain_node();
	struct nccl_prediction p;

	var(t, "NCCL_SOCKET_IFNAME", "x", "environment");
	predict_nccl(t, NULL, NCCL_PREDICT_MAX_IFS, &p);
	assert_string_equal(picks_text(p.picks, p.npicks), "eth0=10.0.0.1");
	assert_string_equal(
	    p.rule, "default: ^docker,lo,virbr (NCCL_SOCKET_IFNAME=\"x\" ignored: 1 character)");
	t->values[0][0] = '\0';
	predict_nccl(t, NULL, NCCL_PREDICT_MAX_IFS, &p);
	assert_string_equal(picks_text(p.picks, p.npicks), "eth0=10.0.0.1");
	assert_string_equal(
	    p.rule, "default: ^docker,lo,virbr (NCCL_SOCKET_IFNAME=\"\" ignored: 0 characters)");
	free(t);
}

static void proposed_value_has_no_source(void **state)
{
	struct test_node *t = plain_node();
	struct nccl_prediction p;
	struct net_env e = {.nccl_socket_ifname = "eth"};

	var(t, "NCCL_SOCKET_IFNAME", "lo", "environment");
	nccl_predict(&t->node, &e, NULL, NCCL_PREDICT_MAX_IFS, &p);
	assert_string_equal(picks_text(p.picks, p.npicks), "eth0=10.0.0.1");
	assert_string_equal(p.rule, "NCCL_SOCKET_IFNAME=eth");
	free(t);
}

/* ---- NCCL: NCCL_COMM_ID ---- */

static struct test_node *two_subnets(void)
{
	struct test_node *t = node_new("node1");

	iface(t, "lo", 1);
	iface(t, "eth0", 1);
	iface(t, "eth1", 0);
	addr(t, "lo", "127.0.0.1", 8);
	addr(t, "eth0", "10.0.0.1", 24);
	addr(t, "eth1", "10.1.0.1", 16);
	addr(t, "lo", "::1", 128);
	addr(t, "eth0", "fe80::1", 64);
	addr(t, "eth1", "fe80::2", 64);
	return t;
}

static void comm_id_bootstrap_takes_the_subnet_match_only(void **state)
{
	struct test_node *t = two_subnets();
	struct nccl_prediction p;

	var(t, "NCCL_COMM_ID", "10.1.2.3:29500", "environment");
	var(t, "NCCL_SOCKET_IFNAME", "eth0", "environment");
	predict_nccl(t, NULL, 1, &p);
	/* eth1 is not RUNNING: the subnet match does not look */
	assert_string_equal(picks_text(p.picks, p.npicks), "eth1=10.1.0.1");
	assert_string_equal(p.rule, "NCCL_COMM_ID=10.1.2.3:29500 (from environment): its subnet "
	                            "(NCCL_SOCKET_IFNAME not used)");
	assert_string_equal(log_line(&p), "Bootstrap: Using eth1:10.1.0.1<0>");
	free(t);
}

static void comm_id_hints_the_socket_list_when_no_ib(void **state)
{
	struct test_node *t = two_subnets();
	struct nccl_prediction p;

	t->ifaces[2].running = 1;
	var(t, "NCCL_COMM_ID", "10.1.2.3:29500", "environment");
	predict_nccl(t, NULL, NCCL_PREDICT_MAX_IFS, &p);
	assert_string_equal(picks_text(p.picks, p.npicks), "eth1=10.1.0.1");
	assert_string_equal(p.rule, "NCCL_COMM_ID=10.1.2.3:29500 (from environment): its subnet");
	free(t);
}

static void comm_id_without_a_match_fails_the_bootstrap(void **state)
{
	struct test_node *t = two_subnets();
	struct nccl_prediction p;

	var(t, "NCCL_COMM_ID", "192.168.1.1:29500", "environment");
	predict_nccl(t, NULL, 1, &p);
	assert_int_equal(p.npicks, 0);
	assert_string_equal(p.error, "NET/Socket : No usable listening interface found");
	/* the socket transport goes on with the default lists */
	predict_nccl(t, NULL, NCCL_PREDICT_MAX_IFS, &p);
	assert_string_equal(picks_text(p.picks, p.npicks), "eth0=10.0.0.1");
	assert_string_equal(p.rule, "default: ^docker,lo,virbr");
	free(t);
}

static void comm_id_link_local_needs_the_same_scope(void **state)
{
	struct test_node *t = two_subnets();
	struct nccl_prediction p;

	var(t, "NCCL_COMM_ID", "[fe80::9%eth1]:29500", "environment");
	predict_nccl(t, NULL, 1, &p);
	assert_string_equal(picks_text(p.picks, p.npicks), "eth1=fe80::2%3");
	assert_string_equal(log_line(&p), "Bootstrap: Using eth1:fe80::2%eth1<0>");
	snprintf(t->values[0], sizeof(t->values[0]), "[fe80::9]:29500");
	predict_nccl(t, NULL, 1, &p);
	assert_int_equal(p.npicks, 0);
	assert_string_equal(p.error, "NET/Socket : No usable listening interface found");
	free(t);
}

static void comm_id_global_ipv6_matches_its_prefix(void **state)
{
	struct test_node *t = ipv6_only_ens6();
	struct nccl_prediction p;

	var(t, "NCCL_COMM_ID", "[2001:db8::99]:29500", "environment");
	predict_nccl(t, NULL, 1, &p);
	assert_string_equal(picks_text(p.picks, p.npicks), "ens6=2001:db8::11");
	free(t);
}

static void comm_id_host_name_cannot_be_predicted(void **state)
{
	struct test_node *t = two_subnets();
	struct nccl_prediction p;

	var(t, "NCCL_COMM_ID", "master:29500", "environment");
	predict_nccl(t, NULL, 1, &p);
	assert_int_equal(p.npicks, 0);
	assert_int_equal(p.cannot_predict, 1);
	assert_string_equal(
	    p.rule,
	    "NCCL_COMM_ID=master:29500 (from environment): a host name, resolved on the node");
	assert_string_equal(
	    p.error, "cannot predict: NCCL_COMM_ID names a host that NCCL resolves at run time");
	predict_nccl(t, NULL, NCCL_PREDICT_MAX_IFS, &p);
	assert_int_equal(p.cannot_predict, 1);
	free(t);
}

static void comm_id_is_not_consulted_when_ib_is_there(void **state)
{
	struct test_node *t = two_subnets();
	struct nccl_prediction p;

	iface(t, "ib0", 1);
	addr(t, "ib0", "192.168.0.1", 24);
	var(t, "NCCL_COMM_ID", "master:29500", "environment");
	predict_nccl(t, NULL, NCCL_PREDICT_MAX_IFS, &p);
	assert_int_equal(p.cannot_predict, 0);
	assert_string_equal(picks_text(p.picks, p.npicks), "ib0=192.168.0.1");
	free(t);
}

static void comm_id_malformed_is_nccls_error(void **state)
{
	struct test_node *t = two_subnets();
	struct nccl_prediction p;

	var(t, "NCCL_COMM_ID", "x", "environment");
	predict_nccl(t, NULL, 1, &p);
	assert_int_equal(p.npicks, 0);
	assert_string_equal(p.error, "Invalid NCCL_COMM_ID, please use format: <ipv4>:<port> or "
	                             "[<ipv6>]:<port> or <hostname>:<port>");
	/* one character: the socket list does not read it */
	predict_nccl(t, NULL, NCCL_PREDICT_MAX_IFS, &p);
	assert_string_equal(picks_text(p.picks, p.npicks), "eth0=10.0.0.1");
	snprintf(t->values[0], sizeof(t->values[0]), "[fe80::1:29500");
	predict_nccl(t, NULL, NCCL_PREDICT_MAX_IFS, &p);
	assert_int_equal(p.npicks, 0);
	assert_string_equal(p.error, "Net : No valid [IPv6]:port pair found");
	free(t);
}

/* ---- Gloo ---- */

static void gloo_takes_each_named_interface(void **state)
{
	struct test_node *t = ipv6_only_ens6();
	struct gloo_prediction p;

	var(t, "GLOO_SOCKET_IFNAME", "eth0,ens6,lo", "environment");
	predict_gloo(t, &p);
	assert_int_equal(p.from_hostname, 0);
	assert_string_equal(picks_text(p.picks, p.npicks),
	                    "eth0=10.0.0.1 ens6=2001:db8::11 lo=127.0.0.1");
	assert_string_equal(p.rule, "GLOO_SOCKET_IFNAME=eth0,ens6,lo (from environment)");
	assert_string_equal(p.error, "");
	free(t);
}

static void gloo_ignores_running_and_link_local(void **state)
{
	struct test_node *t = node_new("node1");
	struct gloo_prediction p;

	iface(t, "lo", 1);
	iface(t, "ib0", 0);
	addr(t, "lo", "127.0.0.1", 8);
	addr(t, "ib0", "fe80::a288:c203:d2:aaf2", 64);
	addr(t, "ib0", "2001:db8::5", 64);
	var(t, "GLOO_SOCKET_IFNAME", "ib0", "environment");
	predict_gloo(t, &p);
	assert_string_equal(picks_text(p.picks, p.npicks), "ib0=fe80::a288:c203:d2:aaf2%2");
	free(t);
}

static void gloo_nccl_syntax_names_no_interface(void **state)
{
	struct test_node *t = plain_node();
	struct gloo_prediction p;

	var(t, "GLOO_SOCKET_IFNAME", "^lo", "environment");
	predict_gloo(t, &p);
	assert_int_equal(p.npicks, 0);
	assert_string_equal(p.error, "Unable to find address for: ^lo");
	snprintf(t->values[0], sizeof(t->values[0]), "eth0,eth");
	predict_gloo(t, &p);
	assert_int_equal(p.npicks, 0);
	assert_string_equal(p.error, "Unable to find address for: eth");
	free(t);
}

static void gloo_empty_item_is_an_error_but_a_trailing_comma_is_not(void **state)
{
	struct test_node *t = plain_node();
	struct gloo_prediction p;

	var(t, "GLOO_SOCKET_IFNAME", "eth0,", "environment");
	predict_gloo(t, &p);
	assert_string_equal(picks_text(p.picks, p.npicks), "eth0=10.0.0.1");
	snprintf(t->values[0], sizeof(t->values[0]), "eth0,,lo");
	predict_gloo(t, &p);
	assert_int_equal(p.npicks, 0);
	assert_string_equal(p.error, "Unable to find address for: ");
	free(t);
}

/* pytorch/pytorch#15592, pytorch/gloo#223 */
static void gloo_hostname_on_127_0_1_1_binds_loopback(void **state)
{
	struct test_node *t = plain_node();
	struct gloo_prediction p;

	hostaddr(t, "127.0.1.1", 1);
	hostaddr(t, "10.0.0.1", 1);
	predict_gloo(t, &p);
	assert_int_equal(p.from_hostname, 1);
	assert_int_equal(p.loopback_fallback, 0);
	assert_string_equal(picks_text(p.picks, p.npicks), "lo=127.0.1.1");
	assert_string_equal(p.rule, "hostname node1: first bindable address (answer 1 of 2)");
	assert_string_equal(p.error, "");
	free(t);
}

static void gloo_hostname_skips_addresses_that_cannot_be_bound(void **state)
{
	struct test_node *t = plain_node();
	struct gloo_prediction p;

	hostaddr(t, "fe80::1", 0);
	hostaddr(t, "10.0.0.1", 1);
	predict_gloo(t, &p);
	assert_string_equal(picks_text(p.picks, p.npicks), "eth0=10.0.0.1");
	assert_int_equal(p.picks[0].family, AF_INET);
	free(t);
}

static void gloo_nothing_bindable_falls_back_to_loopback(void **state)
{
	struct test_node *t = plain_node();
	struct gloo_prediction p;

	hostaddr(t, "192.168.5.5", 0);
	predict_gloo(t, &p);
	assert_int_equal(p.from_hostname, 1);
	assert_int_equal(p.loopback_fallback, 1);
	assert_string_equal(picks_text(p.picks, p.npicks), "lo=127.0.0.1");
	assert_string_equal(p.rule, "hostname node1: no bindable address; loopback fallback");
	assert_string_equal(
	    p.error, "Unable to resolve hostname to a (local) address. Using the loopback "
	             "address as fallback. Manually set the network interface to bind to with "
	             "GLOO_SOCKET_IFNAME.");
	free(t);
}

static void gloo_one_character_ifname_is_ignored(void **state)
{
	struct test_node *t = plain_node();
	struct gloo_prediction p;

	var(t, "GLOO_SOCKET_IFNAME", "e", "environment");
	hostaddr(t, "10.0.0.1", 1);
	predict_gloo(t, &p);
	assert_int_equal(p.from_hostname, 1);
	assert_string_equal(picks_text(p.picks, p.npicks), "eth0=10.0.0.1");
	assert_string_equal(p.rule, "hostname node1: first bindable address (answer 1 of 1) "
	                            "(GLOO_SOCKET_IFNAME=\"e\" ignored: 1 character)");
	free(t);
}

/* ---- helpers of the model ---- */

static void iface_of_addr_is_by_exact_text(void **state)
{
	struct test_node *t = ipv6_only_ens6();

	assert_string_equal(predict_iface_of_addr(&t->node, "2001:db8::11"), "ens6");
	assert_string_equal(predict_iface_of_addr(&t->node, "10.0.0.1"), "eth0");
	assert_string_equal(predict_iface_of_addr(&t->node, "10.0.0.10"), "");
	assert_string_equal(predict_iface_of_addr(&t->node, "127.0.1.1"), "");
	free(t);
}

static void env_of_reads_the_effective_variables(void **state)
{
	struct test_node *t = plain_node();
	struct net_env e;

	var(t, "NCCL_SOCKET_IFNAME", "eth", "environment");
	var(t, "GLOO_SOCKET_IFNAME", "eth0", "environment");
	net_env_of(&t->node, &e);
	assert_string_equal(e.nccl_socket_ifname, "eth");
	assert_string_equal(e.gloo_socket_ifname, "eth0");
	assert_null(e.nccl_socket_family);
	assert_null(e.nccl_comm_id);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(filter_caret_excludes_each_prefix),
	    cmocka_unit_test(filter_equals_matches_whole_names),
	    cmocka_unit_test(filter_caret_equals_excludes_exact_names),
	    cmocka_unit_test(filter_equals_before_caret_is_part_of_the_name),
	    cmocka_unit_test(filter_prefix_matches_longer_names),
	    cmocka_unit_test(filter_port_suffix_is_dropped),
	    cmocka_unit_test(filter_of_one_character_matches_everything),
	    cmocka_unit_test(filter_empty_items_vanish),
	    cmocka_unit_test(filter_caret_with_no_items_matches_nothing),
	    cmocka_unit_test(filter_reads_at_most_sixteen_items),
	    cmocka_unit_test(version_parses_three_numbers),
	    cmocka_unit_test(version_unknown_compares_as_newest),
	    cmocka_unit_test(ib_with_only_link_local_beats_a_good_eth0),
	    cmocka_unit_test(virbr_is_excluded_since_2_28_3),
	    cmocka_unit_test(virbr_is_picked_first_before_2_28_3),
	    cmocka_unit_test(virbr_alone_is_the_last_resort_since_2_28_3),
	    cmocka_unit_test(veth_and_bridges_are_not_excluded_by_default),
	    cmocka_unit_test(docker0_is_excluded_by_default),
	    cmocka_unit_test(docker_comes_before_lo_when_nothing_else_is_there),
	    cmocka_unit_test(lo_is_the_fallback_and_its_ipv6_loopback_is_skipped),
	    cmocka_unit_test(interface_not_running_is_skipped_since_2_28_3),
	    cmocka_unit_test(interface_not_running_is_kept_before_2_28_3),
	    cmocka_unit_test(address_label_has_its_interface_flags),
	    cmocka_unit_test(first_address_of_an_interface_wins),
	    cmocka_unit_test(socket_list_stops_at_max_ifs),
	    cmocka_unit_test(family_inet6_picks_link_local_of_eth0),
	    cmocka_unit_test(family_inet_drops_an_ipv6_only_interface),
	    cmocka_unit_test(family_other_value_is_ignored),
	    cmocka_unit_test(ifname_prefix_selects_an_ipv6_only_interface),
	    cmocka_unit_test(log_line_lists_every_socket_interface),
	    cmocka_unit_test(caret_docker0_alone_lets_lo_in),
	    cmocka_unit_test(ifname_overrides_the_ib_preference),
	    cmocka_unit_test(ifname_matching_nothing_is_nccls_error),
	    cmocka_unit_test(ifname_of_one_character_is_ignored),
	    cmocka_unit_test(proposed_value_has_no_source),
	    cmocka_unit_test(comm_id_bootstrap_takes_the_subnet_match_only),
	    cmocka_unit_test(comm_id_hints_the_socket_list_when_no_ib),
	    cmocka_unit_test(comm_id_without_a_match_fails_the_bootstrap),
	    cmocka_unit_test(comm_id_link_local_needs_the_same_scope),
	    cmocka_unit_test(comm_id_global_ipv6_matches_its_prefix),
	    cmocka_unit_test(comm_id_host_name_cannot_be_predicted),
	    cmocka_unit_test(comm_id_is_not_consulted_when_ib_is_there),
	    cmocka_unit_test(comm_id_malformed_is_nccls_error),
	    cmocka_unit_test(gloo_takes_each_named_interface),
	    cmocka_unit_test(gloo_ignores_running_and_link_local),
	    cmocka_unit_test(gloo_nccl_syntax_names_no_interface),
	    cmocka_unit_test(gloo_empty_item_is_an_error_but_a_trailing_comma_is_not),
	    cmocka_unit_test(gloo_hostname_on_127_0_1_1_binds_loopback),
	    cmocka_unit_test(gloo_hostname_skips_addresses_that_cannot_be_bound),
	    cmocka_unit_test(gloo_nothing_bindable_falls_back_to_loopback),
	    cmocka_unit_test(gloo_one_character_ifname_is_ignored),
	    cmocka_unit_test(iface_of_addr_is_by_exact_text),
	    cmocka_unit_test(env_of_reads_the_effective_variables),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
