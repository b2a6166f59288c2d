/* SPDX-License-Identifier: MIT */
/*
 * test_fixplan.c - `clusterdoc fix`'s pure planning (fixers/fix.h:
 * fix_plan_build with the env, hosts, firewall and port-range fixers) on fixture
 * clusters (tests/fixtures/fix/) and hand-made gathered states, and the undo
 * journal (fixers/fix_journal.h) in a temporary XDG_STATE_HOME. Run from the
 * top of the tree, as `make unit` does.
 *
 * env-hosts.json: node1, node2 and node3 (hostname node3.cluster) each have
 * an IPv6-only ib0 that no peer reaches (ipv6-no-route on all three, so
 * NCCL_SOCKET_FAMILY=AF_INET); node1 and node2 use eth0, node3 eno1; node2
 * and node3 resolve their hostname to 127.0.1.1 (hostname-loopback).
 * firewall.json: gpu2 reaches MASTER_PORT on gpu1 but not an ephemeral
 * port (ephemeral-ports-blocked names gpu1); both are on 10.1.0.0/24.
 * Every node of both has ip_local_port_range 32768 60999 and MASTER_PORT is
 * 29500.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cd.h"
#include "fsutil.h"
#include "fixers/fix.h"
#include "fixers/fix_internal.h"
#include "fixers/fix_journal.h"
#include "report/fix_render.h"
#include "probes/diagnose.h"
#include "probes/netmodel.h"

#define FIXTURES "tests/fixtures/fix/"
#define RUN      "20261121-183005-3f9a"

/* ---------------------------------------------------------------- expected text */

#define ENV_SH_BLOCK                                                                         \
	"# >>> clusterdoc env >>>\n"                                                         \
	"# The interface variables `clusterdoc check` verified for PyTorch distributed\n"    \
	"# (NCCL and Gloo), per host as `uname -n` names it.\n"                              \
	"case \"$(uname -n)\" in\n"                                                          \
	"node1|node2) export NCCL_SOCKET_IFNAME='eth0,eno1' NCCL_SOCKET_FAMILY='AF_INET' "   \
	"GLOO_SOCKET_IFNAME='eth0' ;;\n"                                                     \
	"node3.cluster) export NCCL_SOCKET_IFNAME='eth0,eno1' NCCL_SOCKET_FAMILY='AF_INET' " \
	"GLOO_SOCKET_IFNAME='eno1' ;;\n"                                                     \
	"esac\n"                                                                             \
	"# <<< clusterdoc env <<<\n"

#define NCCL_CONF_BLOCK                                                                     \
	"# >>> clusterdoc env >>>\n"                                                        \
	"# The NCCL variables `clusterdoc check` verified. NCCL keeps the first value it\n" \
	"# reads and the environment wins over this file.\n"                                \
	"NCCL_SOCKET_IFNAME=eth0,eno1\n"                                                    \
	"NCCL_SOCKET_FAMILY=AF_INET\n"                                                      \
	"# <<< clusterdoc env <<<\n"

#define RC_BLOCK                                                                        \
	"# >>> clusterdoc env >>>\n"                                                    \
	"# clusterdoc fix: the interface variables for PyTorch distributed. First in\n" \
	"# the file, so shells that return early when not interactive read it too.\n"   \
	"if [ -r \"$HOME/.config/clusterdoc/env.sh\" ]; then . "                        \
	"\"$HOME/.config/clusterdoc/env.sh\"; fi\n"                                     \
	"# <<< clusterdoc env <<<\n"

/* The start of Debian's /etc/skel/.bashrc: it returns early when not interactive. */
#define DEBIAN_BASHRC                                                                  \
	"# ~/.bashrc: executed by bash(1) for non-login shells.\n"                     \
	"# see /usr/share/doc/bash/examples/startup-files (in the package bash-doc)\n" \
	"# for examples\n"                                                             \
	"\n"                                                                           \
	"# If not running interactively, don't do anything\n"                          \
	"case $- in\n"                                                                 \
	"    *i*) ;;\n"                                                                \
	"      *) return;;\n"                                                          \
	"esac\n"                                                                       \
	"\n"                                                                           \
	"# don't put duplicate lines or lines starting with space in the history.\n"   \
	"HISTCONTROL=ignoreboth\n"

#define HOSTS_HEADER                                                                          \
	"# clusterdoc fix: the hostname resolves to the data address, so Gloo and torchrun\n" \
	"# advertise an address peers can reach (getaddrinfo sorts loopback first, so\n"      \
	"# the loopback line for the hostname is kept here, commented).\n"

#define HOSTS_IPV6_TAIL                                                \
	"\n"                                                           \
	"# The following lines are desirable for IPv6 capable hosts\n" \
	"::1     localhost ip6-localhost ip6-loopback\n"               \
	"ff02::1 ip6-allnodes\n"                                       \
	"ff02::2 ip6-allrouters\n"

/* What Debian's installer writes for node2. */
#define DEBIAN_HOSTS_NODE2       \
	"127.0.0.1\tlocalhost\n" \
	"127.0.1.1\tnode2\n" HOSTS_IPV6_TAIL

#define NET      "10.1.0.0/24"
#define COMMENTQ "\"clusterdoc fix " RUN "\""
#define RICH     "rule family=\"ipv4\" source address=\"" NET "\" protocol value=\"tcp\" accept"

/* port-range's block for 40000-40999 */
#define PORTS_BLOCK                                                                     \
	"# >>> clusterdoc port-range >>>\n"                                             \
	"# clusterdoc fix: NCCL and Gloo take their listening ports from this range,\n" \
	"# so the firewall needs to open only it and MASTER_PORT 29500.\n"              \
	"net.ipv4.ip_local_port_range = 40000 40999\n"                                  \
	"# <<< clusterdoc port-range <<<\n"

/* ---------------------------------------------------------------- fixtures */

struct fx {
	struct netmodel *m;
	struct diagnosis *d;
	struct fix_node_state *st; /* [m->nnodes] */
	struct fix_plan *p;
};

static void load(struct fx *f, const char *name)
{
	char path[256], err[CD_ERRLEN] = "";
	json_error_t jerr;
	json_t *doc;

	memset(f, 0, sizeof(*f));
	snprintf(path, sizeof(path), FIXTURES "%s", name);
	doc = json_load_file(path, 0, &jerr);
	if (!doc)
		fail_msg("%s: %s", path, jerr.text);
	f->m = netmodel_load_json(doc, err, sizeof(err));
	json_decref(doc);
	if (!f->m)
		fail_msg("%s: %s", path, err);
	f->d = diagnose(f->m);
}

/* Set path in s to data (len bytes; NULL = read, but absent), replacing
 * what was there. */
static void put_file_n(struct fix_node_state *s, const char *path, const char *data, size_t len)
{
	struct fix_file_state *f = NULL;

	for (size_t k = 0; k < s->nfiles && !f; k++)
		if (strcmp(s->files[k].path, path) == 0)
			f = &s->files[k];
	if (!f)
		f = fix_state_add_file(s, path);
	free(f->data);
	f->read = 1;
	f->exists = data != NULL;
	f->data = data ? cd_strndup(data, len) : NULL;
	f->len = data ? len : 0;
	f->mode = data ? 0644 : 0;
	f->error[0] = '\0';
}

static void put_file(struct fix_node_state *s, const char *path, const char *data)
{
	put_file_n(s, path, data, data ? strlen(data) : 0);
}

/* Every node gathered, as user uid with shell; nothing in the env files,
 * a Debian ~/.bashrc, and /etc/hosts as Debian's installer writes it. */
static void gathered(struct fx *f, unsigned uid, const char *shell)
{
	f->st = cd_calloc(f->m->nnodes, sizeof(*f->st));
	for (size_t i = 0; i < f->m->nnodes; i++) {
		struct fix_node_state *s = &f->st[i];
		const char *h = f->m->nodes[i].hostname;
		char hosts[512];

		fix_node_state_init(s);
		s->gathered = 1;
		s->uid = uid;
		snprintf(s->user, sizeof(s->user), "%s", uid ? "alice" : "root");
		snprintf(s->home, sizeof(s->home), "%s", uid ? "/home/alice" : "/root");
		snprintf(s->shell, sizeof(s->shell), "%s", shell);
		s->has_sudo = 1;
		snprintf(hosts, sizeof(hosts),
		         "127.0.0.1\tlocalhost\n127.0.1.1\t%s\n" HOSTS_IPV6_TAIL, h);
		put_file(s, "~/.bashrc", DEBIAN_BASHRC);
		put_file(s, FIX_ENV_SH, NULL);
		put_file(s, FIX_NCCL_CONF, NULL);
		put_file(s, FIX_ETC_HOSTS, hosts);
		put_file(s, FIX_SYSCTL_PORTS, NULL);
	}
}

static void plan(struct fx *f, const char *only)
{
	struct fix_opts o = {.only = only};
	char err[CD_ERRLEN] = "";

	fix_plan_free(f->p);
	f->p = fix_plan_build(f->m, f->d, f->st, &o, RUN, err, sizeof(err));
	if (!f->p)
		fail_msg("fix_plan_build: %s", err);
}

/* The plan with --port-range lo-hi (0: the default range). */
static void plan_ports(struct fx *f, const char *only, int lo, int hi)
{
	struct fix_opts o = {.only = only, .port_lo = lo, .port_hi = hi};
	char err[CD_ERRLEN] = "";

	fix_plan_free(f->p);
	f->p = fix_plan_build(f->m, f->d, f->st, &o, RUN, err, sizeof(err));
	if (!f->p)
		fail_msg("fix_plan_build: %s", err);
}

/* The states the plan leaves: every file action's content read back. */
static void apply_to_states(struct fx *f)
{
	for (size_t i = 0; i < f->p->nnodes; i++)
		for (size_t k = 0; k < f->p->nodes[i].nactions; k++) {
			const struct fix_action *a = &f->p->nodes[i].actions[k];

			if (a->kind == FIX_FILE)
				put_file_n(&f->st[i], a->path, a->after, a->after_len);
		}
}

static void unload(struct fx *f)
{
	fix_plan_free(f->p);
	for (size_t i = 0; f->st && i < f->m->nnodes; i++)
		fix_node_state_fini(&f->st[i]);
	free(f->st);
	diagnosis_free(f->d);
	netmodel_free(f->m);
}

static char *read_fixture(const char *name)
{
	char path[256], err[CD_ERRLEN] = "";
	unsigned char *text = NULL;
	size_t len = 0;

	snprintf(path, sizeof(path), FIXTURES "%s", name);
	if (cd_read_file(path, 1 << 20, &text, &len, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	return (char *)text;
}

/* gpu1 of firewall.json with its firewall read: nft's ruleset from a fixture
 * (NULL: none). */
static void firewall_gathered(struct fx *f, unsigned uid, const char *nft_fixture)
{
	load(f, "firewall.json");
	gathered(f, uid, "/bin/bash");
	f->st[0].fw_gathered = 1;
	if (nft_fixture)
		f->st[0].nft_json = read_fixture(nft_fixture);
}

/* ---------------------------------------------------------------- assertions */

static const struct fix_action *action_for(const struct fix_node_plan *np, const char *path)
{
	for (size_t k = 0; k < np->nactions; k++)
		if (np->actions[k].path && strcmp(np->actions[k].path, path) == 0)
			return &np->actions[k];
	fail_msg("no action for %s", path);
	return NULL;
}

static int has_action_for(const struct fix_node_plan *np, const char *path)
{
	for (size_t k = 0; k < np->nactions; k++)
		if (np->actions[k].path && strcmp(np->actions[k].path, path) == 0)
			return 1;
	return 0;
}

static void assert_note(const struct fix_node_plan *np, const char *note)
{
	for (size_t k = 0; k < np->nnotes; k++)
		if (strcmp(np->notes[k], note) == 0)
			return;
	for (size_t k = 0; k < np->nnotes; k++)
		fprintf(stderr, "  note: %s\n", np->notes[k]);
	fail_msg("no note \"%s\"", note);
}

/* The file action's before and after, byte for byte. */
static void assert_file_action(const struct fix_action *a, const char *fixer, int sudo,
                               const char *before, const char *after)
{
	assert_int_equal(a->kind, FIX_FILE);
	assert_string_equal(a->fixer, fixer);
	assert_int_equal(a->sudo, sudo);
	assert_int_equal(a->before_exists, before != NULL);
	if (before) {
		assert_int_equal(a->before_len, strlen(before));
		assert_memory_equal(a->before, before, strlen(before));
	} else {
		assert_null(a->before);
		assert_int_equal(a->before_len, 0);
	}
	assert_string_equal(a->after, after);
	assert_int_equal(a->after_len, strlen(after));
	assert_int_equal(a->mode, 0644);
}

static void assert_argv(char **got, const char *const *want)
{
	size_t k;

	assert_non_null(got);
	for (k = 0; want[k]; k++) {
		if (!got[k])
			fail_msg("argv ends at %zu, wanted \"%s\"", k, want[k]);
		assert_string_equal(got[k], want[k]);
	}
	if (got[k])
		fail_msg("argv has more: \"%s\"", got[k]);
}

/* ---------------------------------------------------------------- env */

static void env_sh_has_one_case_arm_per_set_of_values(void **state)
{
	struct fx f;

	load(&f, "env-hosts.json");
	gathered(&f, 1000, "/bin/bash");
	plan(&f, NULL);
	assert_file_action(action_for(&f.p->nodes[0], FIX_ENV_SH), "env", 0, NULL, ENV_SH_BLOCK);
	assert_string_equal(action_for(&f.p->nodes[0], FIX_ENV_SH)->summary,
	                    "NCCL_SOCKET_IFNAME='eth0,eno1' NCCL_SOCKET_FAMILY='AF_INET' "
	                    "GLOO_SOCKET_IFNAME='eth0' on this host, in " FIX_ENV_SH);
	unload(&f);
}

static void env_sh_is_the_same_file_on_every_node(void **state)
{
	struct fx f;

	load(&f, "env-hosts.json");
	gathered(&f, 1000, "/bin/bash");
	plan(&f, NULL);
	for (size_t i = 0; i < f.m->nnodes; i++)
		assert_string_equal(action_for(&f.p->nodes[i], FIX_ENV_SH)->after, ENV_SH_BLOCK);
	unload(&f);
}

/* Every node's home has the token id ("" leaves it unknown). */
static void homes(struct fx *f, const char *const *ids)
{
	for (size_t i = 0; i < f->m->nnodes; i++)
		snprintf(f->st[i].home_id, sizeof(f->st[i].home_id), "%s", ids[i]);
}

static void shared_home_files_change_once_on_the_first_node(void **state)
{
	struct fx f;
	size_t n0;

	load(&f, "env-hosts.json");
	gathered(&f, 1000, "/bin/bash");
	homes(&f, (const char *const[]){"t1", "t1", "t1"});
	plan(&f, "env");
	n0 = f.p->nodes[0].nactions;
	assert_int_equal(n0, 3);
	for (size_t k = 0; k < n0; k++)
		assert_string_equal(f.p->nodes[0].actions[k].shared_by, "node[1-3]");
	assert_string_equal(action_for(&f.p->nodes[0], FIX_ENV_SH)->after, ENV_SH_BLOCK);
	for (size_t i = 1; i < 3; i++) {
		assert_int_equal(f.p->nodes[i].nactions, 0);
		assert_int_equal(f.p->nodes[i].nnotes, 3);
		assert_string_equal(f.p->nodes[i].notes[0],
		                    "env: " FIX_ENV_SH
		                    " is in the home directory node1 shares: changed once, there");
	}
	assert_int_equal(f.p->nactions, n0);
	unload(&f);
}

/* Only node1 is named by a finding: only it plans, yet the file it changes
 * is the one every node of its home reads, and shared_by says so. */
static void shared_home_file_one_node_changes_names_every_reader(void **state)
{
	struct fx f;

	load(&f, "env-hosts.json");
	for (size_t k = 0; k < f.d->nfindings; k++) {
		struct finding *fd = &f.d->findings[k];
		size_t keep = 0;

		for (size_t q = 0; q < fd->nnodes; q++)
			if (fd->nodes[q] == 0)
				fd->nodes[keep++] = 0;
		fd->nnodes = keep;
	}
	gathered(&f, 1000, "/bin/bash");
	homes(&f, (const char *const[]){"t1", "t1", "t2"});
	plan(&f, "env");
	assert_int_equal(f.p->nodes[0].nactions, 3);
	for (size_t k = 0; k < 3; k++)
		assert_string_equal(f.p->nodes[0].actions[k].shared_by, "node[1-2]");
	assert_int_equal(f.p->nodes[1].nactions, 0);
	assert_int_equal(f.p->nodes[2].nactions, 0);
	/* node2's ~/.bashrc is its own file (other bytes): not shared */
	put_file(&f.st[1], "~/.bashrc", "# node2's own\n");
	plan(&f, "env");
	assert_null(action_for(&f.p->nodes[0], "~/.bashrc")->shared_by);
	assert_string_equal(action_for(&f.p->nodes[0], FIX_ENV_SH)->shared_by, "node[1-2]");
	unload(&f);
}

static void shared_home_leaves_root_files_to_each_node(void **state)
{
	struct fx f;

	load(&f, "env-hosts.json");
	gathered(&f, 1000, "/bin/bash");
	homes(&f, (const char *const[]){"t1", "t1", "t1"});
	plan(&f, "hosts");
	for (size_t i = 0; i < 3; i++)
		if (has_action_for(&f.p->nodes[i], FIX_ETC_HOSTS))
			assert_null(action_for(&f.p->nodes[i], FIX_ETC_HOSTS)->shared_by);
	unload(&f);
}

static void separate_homes_each_get_their_own_change(void **state)
{
	struct fx f;

	load(&f, "env-hosts.json");
	gathered(&f, 1000, "/bin/bash");
	homes(&f, (const char *const[]){"t1", "t2", ""});
	plan(&f, "env");
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(f.p->nodes[i].nactions, 3);
		assert_null(f.p->nodes[i].actions[0].shared_by);
	}
	unload(&f);
}

static void one_home_with_different_bytes_in_a_file_is_not_one_file(void **state)
{
	struct fx f;

	/* the token says one home, yet node2's ~/.bashrc differs: a per-node
	 * file (a bind mount): it keeps its own change */
	load(&f, "env-hosts.json");
	gathered(&f, 1000, "/bin/bash");
	homes(&f, (const char *const[]){"t1", "t1", "t1"});
	put_file(&f.st[1], "~/.bashrc", "# node2's own\n");
	plan(&f, "env");
	assert_int_equal(f.p->nodes[1].nactions, 1);
	assert_string_equal(f.p->nodes[1].actions[0].path, "~/.bashrc");
	assert_null(f.p->nodes[1].actions[0].shared_by);
	assert_string_equal(action_for(&f.p->nodes[0], "~/.bashrc")->shared_by, "node[1,3]");
	unload(&f);
}

/* ---------------------------------------------------------------- env: IB */

/* A RoCE v2 port mlx5_0:1 on ens1f0 in the contract's shape (rdma_probe.h),
 * as tests/fixtures/rdma/roce-v2-idx3 and roce-v2-idx1 have it: the IPv4 v2
 * GID of addr at index v2, a link-local v2 entry before it. */
static json_t *roce_port(int v2, const char *gid, const char *addr)
{
	return json_pack(
	    "[{s:s, s:i, s:s, s:s, s:s, s:s, s:i, s:s, s:n, s:n, s:s, s:i, s:n, s:n, s:n, s:n,"
	    " s:[{s:i, s:s, s:s, s:s, s:s, s:s}, {s:i, s:s, s:s, s:s, s:s, s:s}]}]",
	    "device", "mlx5_0", "port", 1, "state", "ACTIVE", "phys_state", "LinkUp", "link_layer",
	    "Ethernet", "rate", "100 Gb/sec (4X EDR)", "rate_gbps", 100, "width", "4X", "lid",
	    "sm_lid", "netdev", "ens1f0", "mtu", 9000, "active_mtu", "pci", "pci_path", "numa_node",
	    "gids", "index", 0, "gid", "fe80:0000:0000:0000:0ac0:ebff:fe12:3456", "type", "RoCE v2",
	    "ndev", "ens1f0", "family", "link-local", "address", "fe80::ac0:ebff:fe12:3456",
	    "index", v2, "gid", gid, "type", "RoCE v2", "ndev", "ens1f0", "family", "ipv4",
	    "address", addr);
}

/* env-hosts.json with RoCE on every node: the IPv4 v2 GID at index 3 on
 * node1 and node3 and at index 1 on node2, and node1's login naming an HCA
 * it lacks (NCCL_IB_HCA=mlx5_9: nccl-ib-hca-stale). gid1 = 1: node2's at
 * index 3 too. */
static void load_roce(struct fx *f, int gid1)
{
	char err[CD_ERRLEN] = "";
	json_error_t jerr;
	json_t *doc = json_load_file(FIXTURES "env-hosts.json", 0, &jerr), *node;
	size_t i;

	if (!doc)
		fail_msg("env-hosts.json: %s", jerr.text);
	memset(f, 0, sizeof(*f));
	json_array_foreach(json_object_get(doc, "nodes"), i, node)
	{
		json_t *pr = json_object_get(node, "probe");
		int v2 = i == 1 && !gid1 ? 1 : 3;
		char gid[64], addr[32];

		snprintf(gid, sizeof(gid), "0000:0000:0000:0000:0000:ffff:0a00:0b%02zx", 12 + i);
		snprintf(addr, sizeof(addr), "10.0.11.%zu", 12 + i);
		json_object_set_new(pr, "rdma", roce_port(v2, gid, addr));
		json_object_set_new(pr, "rdma_node",
		                    json_pack("{s:s, s:[s], s:s, s:n, s:b, s:{}}", "verbs_lib",
		                              "/usr/lib64/libibverbs.so.1", "verbs_providers",
		                              "mlx5", "peermem", "nvidia_peermem", "memlock_bytes",
		                              "memlock_unlimited", 1, "nccl_vars"));
	}
	json_object_set_new(
	    json_object_get(
	        json_object_get(json_array_get(json_object_get(doc, "nodes"), 0), "probe"),
	        "rdma_node"),
	    "nccl_vars", json_pack("{s:s}", "NCCL_IB_HCA", "mlx5_9"));
	f->m = netmodel_load_json(doc, err, sizeof(err));
	json_decref(doc);
	if (!f->m)
		fail_msg("env-hosts.json with RoCE: %s", err);
	f->d = diagnose(f->m);
}

#define ENV_SH_IB_BLOCK                                                                      \
	"# >>> clusterdoc env >>>\n"                                                         \
	"# The interface variables `clusterdoc check` verified for PyTorch distributed\n"    \
	"# (NCCL and Gloo), per host as `uname -n` names it.\n"                              \
	"case \"$(uname -n)\" in\n"                                                          \
	"node1) export NCCL_SOCKET_IFNAME='eth0,eno1' NCCL_SOCKET_FAMILY='AF_INET' "         \
	"GLOO_SOCKET_IFNAME='eth0' NCCL_IB_HCA='=mlx5_0' NCCL_IB_GID_INDEX='3' ;;\n"         \
	"node2) export NCCL_SOCKET_IFNAME='eth0,eno1' NCCL_SOCKET_FAMILY='AF_INET' "         \
	"GLOO_SOCKET_IFNAME='eth0' NCCL_IB_HCA='=mlx5_0' NCCL_IB_GID_INDEX='1' ;;\n"         \
	"node3.cluster) export NCCL_SOCKET_IFNAME='eth0,eno1' NCCL_SOCKET_FAMILY='AF_INET' " \
	"GLOO_SOCKET_IFNAME='eno1' NCCL_IB_HCA='=mlx5_0' NCCL_IB_GID_INDEX='3' ;;\n"         \
	"esac\n"                                                                             \
	"# <<< clusterdoc env <<<\n"

/* The verified NCCL_IB_HCA and the GID index of each node (no index holds
 * the IPv4 v2 GID on every node) are exported per node, in the one env.sh. */
static void env_sh_exports_the_verified_ib_variables_per_node(void **state)
{
	struct fx f;

	load_roce(&f, 0);
	gathered(&f, 1000, "/bin/bash");
	plan(&f, NULL);
	for (size_t i = 0; i < f.m->nnodes; i++)
		assert_string_equal(action_for(&f.p->nodes[i], FIX_ENV_SH)->after, ENV_SH_IB_BLOCK);
	assert_string_equal(action_for(&f.p->nodes[1], FIX_ENV_SH)->summary,
	                    "NCCL_SOCKET_IFNAME='eth0,eno1' NCCL_SOCKET_FAMILY='AF_INET' "
	                    "GLOO_SOCKET_IFNAME='eth0' NCCL_IB_HCA='=mlx5_0' "
	                    "NCCL_IB_GID_INDEX='1' on this host, in " FIX_ENV_SH);
	unload(&f);
}

/* ~/.nccl.conf has no per-host syntax: NCCL_IB_HCA, the same on every node,
 * goes in; the GID index, 3 on two nodes and 1 on one, stays in env.sh. */
static void nccl_conf_takes_only_the_ib_values_every_node_shares(void **state)
{
	struct fx f;

	load_roce(&f, 0);
	gathered(&f, 1000, "/bin/bash");
	plan(&f, NULL);
	assert_string_equal(action_for(&f.p->nodes[0], FIX_NCCL_CONF)->after,
	                    "# >>> clusterdoc env >>>\n"
	                    "# The NCCL variables `clusterdoc check` verified. NCCL keeps the "
	                    "first value it\n# reads and the environment wins over this file.\n"
	                    "NCCL_SOCKET_IFNAME=eth0,eno1\nNCCL_SOCKET_FAMILY=AF_INET\n"
	                    "NCCL_IB_HCA==mlx5_0\n"
	                    "# <<< clusterdoc env <<<\n");
	unload(&f);
}

static void nccl_conf_takes_a_gid_index_every_node_shares(void **state)
{
	struct fx f;

	load_roce(&f, 1);
	gathered(&f, 1000, "/bin/bash");
	plan(&f, NULL);
	assert_string_equal(action_for(&f.p->nodes[0], FIX_NCCL_CONF)->after,
	                    "# >>> clusterdoc env >>>\n"
	                    "# The NCCL variables `clusterdoc check` verified. NCCL keeps the "
	                    "first value it\n# reads and the environment wins over this file.\n"
	                    "NCCL_SOCKET_IFNAME=eth0,eno1\nNCCL_SOCKET_FAMILY=AF_INET\n"
	                    "NCCL_IB_HCA==mlx5_0\nNCCL_IB_GID_INDEX=3\n"
	                    "# <<< clusterdoc env <<<\n");
	unload(&f);
}

/* A line of the rc file after clusterdoc's block that exports NCCL_IB_HCA
 * wins over env.sh: left as is, said so. */
static void rc_line_setting_nccl_ib_hca_after_the_block_is_named(void **state)
{
	struct fx f;

	load_roce(&f, 0);
	gathered(&f, 1000, "/bin/bash");
	put_file(&f.st[0], "~/.bashrc", DEBIAN_BASHRC "export NCCL_IB_HCA=mlx5_9\n");
	plan(&f, NULL);
	assert_note(&f.p->nodes[0], "env: left as is: ~/.bashrc line 13 sets NCCL_IB_HCA after "
	                            "clusterdoc's block and wins over it; remove that line");
	unload(&f);
}

/* env answers nccl-ib-hca-stale and roce-gid-mismatch, and nccl-ib-fallback
 * only when NCCL_IB_HCA is its cause: no variable installs libibverbs. */
static void env_answers_nccl_ib_fallback_only_where_nccl_ib_hca_is_the_cause(void **state)
{
	const struct fixer *env = fixer_find("env");
	struct finding hca = {.id = "nccl-ib-fallback",
	                      .evidence = "node1: 1 RDMA port, NCCL will use NET/Socket: "
	                                  "NCCL_IB_HCA=^mlx5 (from the login environment) "
	                                  "excludes every ACTIVE port (mlx5_0)"};
	struct finding lib = {.id = "nccl-ib-fallback",
	                      .evidence = "node3: 1 RDMA port, NCCL will use NET/Socket: "
	                                  "no libibverbs"};
	struct finding stale = {.id = "nccl-ib-hca-stale", .evidence = "node1: mlx5_9"};
	struct finding gid = {.id = "roce-gid-mismatch", .evidence = ""};
	char only[64];

	assert_true(fixer_answers_finding(env, &hca));
	assert_false(fixer_answers_finding(env, &lib));
	assert_true(fixer_answers_finding(env, &stale));
	assert_true(fixer_answers_finding(env, &gid));
	assert_false(fixer_answers_finding(fixer_find("hosts"), &stale));
	/* what the TUI offers: env for the NCCL_IB_HCA cause, nothing for the other */
	assert_int_equal(fix_fixers_for(&hca, only, sizeof(only)), 1);
	assert_string_equal(only, "env");
	assert_int_equal(fix_fixers_for(&lib, only, sizeof(only)), 0);
}

static void env_actions_are_env_sh_nccl_conf_then_the_rc_file(void **state)
{
	struct fx f;
	const struct fix_node_plan *np;

	load(&f, "env-hosts.json");
	gathered(&f, 1000, "/bin/bash");
	plan(&f, NULL);
	np = &f.p->nodes[0];
	assert_int_equal(np->nactions, 3);
	assert_string_equal(np->actions[0].path, FIX_ENV_SH);
	assert_string_equal(np->actions[1].path, FIX_NCCL_CONF);
	assert_string_equal(np->actions[2].path, "~/.bashrc");
	assert_int_equal(np->nfixers, 1);
	assert_string_equal(np->fixers[0], "env");
	assert_int_equal(np->nnotes, 0);
	unload(&f);
}

static void nccl_conf_block_goes_before_a_stale_setting(void **state)
{
	static const char stale[] = "NCCL_SOCKET_IFNAME=ib0\nNCCL_DEBUG=WARN\n";
	struct fx f;

	load(&f, "env-hosts.json");
	gathered(&f, 1000, "/bin/bash");
	put_file(&f.st[0], FIX_NCCL_CONF, stale);
	plan(&f, NULL);
	assert_file_action(action_for(&f.p->nodes[0], FIX_NCCL_CONF), "env", 0, stale,
	                   NCCL_CONF_BLOCK "NCCL_SOCKET_IFNAME=ib0\nNCCL_DEBUG=WARN\n");
	unload(&f);
}

/* The check suggested AF_INET6 (IPv6 data): ~/.nccl.conf and env.sh say
 * AF_INET6, as the job plan and `clusterdoc run` do, never AF_INET. */
static void nccl_conf_writes_the_family_the_check_suggested(void **state)
{
	struct fx f;
	const struct fix_action *a;

	load(&f, "env-hosts.json");
	f.d->sugg.nccl_family_inet = 0;
	f.d->sugg.nccl_family_inet6 = 1;
	gathered(&f, 1000, "/bin/bash");
	plan(&f, NULL);
	a = action_for(&f.p->nodes[0], FIX_NCCL_CONF);
	assert_non_null(a);
	assert_non_null(strstr(a->after, "NCCL_SOCKET_FAMILY=AF_INET6\n"));
	assert_null(strstr(a->after, "NCCL_SOCKET_FAMILY=AF_INET\n"));
	a = action_for(&f.p->nodes[0], FIX_ENV_SH);
	assert_non_null(strstr(a->after, "NCCL_SOCKET_FAMILY='AF_INET6'"));
	unload(&f);
}

static void bashrc_block_goes_above_the_interactive_guard(void **state)
{
	struct fx f;
	const struct fix_action *a;

	load(&f, "env-hosts.json");
	gathered(&f, 1000, "/bin/bash");
	plan(&f, NULL);
	a = action_for(&f.p->nodes[1], "~/.bashrc");
	assert_file_action(a, "env", 0, DEBIAN_BASHRC, RC_BLOCK DEBIAN_BASHRC);
	assert_true(strstr(a->after, "env.sh\"; fi\n") <
	            strstr(a->after, "case $- in\n    *i*) ;;\n      *) return;;\nesac\n"));
	assert_string_equal(a->summary, "source " FIX_ENV_SH " first in ~/.bashrc (login shell "
	                                "/bin/bash)");
	unload(&f);
}

static void rc_line_setting_a_variable_after_the_block_is_named(void **state)
{
	/* line 14 sets it; the comment on line 13 and another variable whose
	 * name ends like ours (line 15) do not count */
#define RC_OVERRIDE                                        \
	DEBIAN_BASHRC "# export NCCL_SOCKET_IFNAME=eth9\n" \
	              "export NCCL_SOCKET_IFNAME=ib0\n"    \
	              "MY_GLOO_SOCKET_IFNAME=eth3\n"
	struct fx f;

	load(&f, "env-hosts.json");
	gathered(&f, 1000, "/bin/bash");
	put_file(&f.st[0], "~/.bashrc", RC_OVERRIDE);
	plan(&f, NULL);
	assert_int_equal(f.p->nodes[0].nnotes, 1);
	assert_string_equal(f.p->nodes[0].notes[0],
	                    "env: left as is: ~/.bashrc line 14 sets NCCL_SOCKET_IFNAME after "
	                    "clusterdoc's block and wins over it; remove that line");
	/* the block is still planned */
	assert_string_equal(action_for(&f.p->nodes[0], "~/.bashrc")->after, RC_BLOCK RC_OVERRIDE);
	unload(&f);
}

static void zsh_gets_its_block_in_zshenv(void **state)
{
	struct fx f;

	load(&f, "env-hosts.json");
	gathered(&f, 1000, "/usr/bin/zsh");
	put_file(&f.st[0], "~/.zshenv", NULL);
	plan(&f, NULL);
	assert_file_action(action_for(&f.p->nodes[0], "~/.zshenv"), "env", 0, NULL, RC_BLOCK);
	assert_false(has_action_for(&f.p->nodes[0], "~/.bashrc"));
	assert_int_equal(f.p->nodes[0].nnotes, 0);
	unload(&f);
}

static void sh_gets_profile_and_a_note_that_ssh_skips_it(void **state)
{
#define PROFILE                                                                 \
	"# ~/.profile: executed by the command interpreter for login shells.\n" \
	"if [ -d \"$HOME/bin\" ] ; then\n    PATH=\"$HOME/bin:$PATH\"\nfi\n"
	struct fx f;

	load(&f, "env-hosts.json");
	gathered(&f, 1000, "/bin/sh");
	put_file(&f.st[0], "~/.profile", PROFILE);
	plan(&f, NULL);
	assert_file_action(action_for(&f.p->nodes[0], "~/.profile"), "env", 0, PROFILE,
	                   RC_BLOCK PROFILE);
	assert_false(has_action_for(&f.p->nodes[0], "~/.bashrc"));
	assert_int_equal(f.p->nodes[0].nnotes, 1);
	assert_string_equal(
	    f.p->nodes[0].notes[0],
	    "env: the login shell is /bin/sh, which reads ~/.profile only for login "
	    "shells; commands run by ssh will not see the variables: source "
	    "~/.config/clusterdoc/env.sh in the job script");
	unload(&f);
}

static void env_file_that_could_not_be_read_is_left_with_a_note(void **state)
{
	struct fx f;
	struct fix_file_state *nc;

	load(&f, "env-hosts.json");
	gathered(&f, 1000, "/bin/bash");
	nc = (struct fix_file_state *)fix_state_file(&f.st[0], FIX_NCCL_CONF);
	nc->read = 0;
	snprintf(nc->error, sizeof(nc->error), "node1: ~/.nccl.conf: Permission denied");
	plan(&f, NULL);
	assert_false(has_action_for(&f.p->nodes[0], FIX_NCCL_CONF));
	assert_int_equal(f.p->nodes[0].nactions, 2);
	assert_note(&f.p->nodes[0], "env: ~/.nccl.conf left as is: node1: ~/.nccl.conf: "
	                            "Permission denied");
	unload(&f);
}

static void env_second_plan_changes_nothing(void **state)
{
	struct fx f;
	const struct fix_node_plan *np;

	load(&f, "env-hosts.json");
	gathered(&f, 1000, "/bin/bash");
	put_file(&f.st[0], FIX_NCCL_CONF, "NCCL_DEBUG=WARN\n");
	plan(&f, "env");
	assert_int_equal(f.p->nactions, 9);
	apply_to_states(&f);
	plan(&f, "env");
	assert_int_equal(f.p->nactions, 0);
	np = &f.p->nodes[0];
	assert_int_equal(np->nactions, 0);
	assert_int_equal(np->nfixers, 0);
	assert_int_equal(np->nwanted, 1);
	assert_string_equal(np->wanted[0], "env");
	assert_int_equal(np->nnotes, 3);
	assert_string_equal(np->notes[0], "env: ~/.config/clusterdoc/env.sh already is as planned");
	assert_string_equal(np->notes[1], "env: ~/.nccl.conf already is as planned");
	assert_string_equal(np->notes[2], "env: ~/.bashrc already is as planned");
	unload(&f);
}

/* ---------------------------------------------------------------- hosts */

static void debian_loopback_line_moves_into_the_block(void **state)
{
	struct fx f;
	const struct fix_action *a;

	load(&f, "env-hosts.json");
	gathered(&f, 1000, "/bin/bash");
	put_file(&f.st[1], FIX_ETC_HOSTS, DEBIAN_HOSTS_NODE2);
	plan(&f, NULL);
	a = action_for(&f.p->nodes[1], FIX_ETC_HOSTS);
	assert_file_action(a, "hosts", 1, DEBIAN_HOSTS_NODE2,
	                   "127.0.0.1\tlocalhost\n"
	                   "# >>> clusterdoc hostname >>>\n" HOSTS_HEADER
	                   "# was: 127.0.1.1\tnode2\n"
	                   "10.0.0.2\tnode2\n"
	                   "# <<< clusterdoc hostname <<<\n" HOSTS_IPV6_TAIL);
	assert_string_equal(a->summary, "map node2 to 10.0.0.2 (eth0) instead of loopback");
	unload(&f);
}

static void other_names_on_the_loopback_line_stay_on_loopback(void **state)
{
	static const char hosts[] = "127.0.0.1 localhost node2\n::1 localhost\n";
	struct fx f;

	load(&f, "env-hosts.json");
	gathered(&f, 1000, "/bin/bash");
	put_file(&f.st[1], FIX_ETC_HOSTS, hosts);
	plan(&f, NULL);
	assert_file_action(action_for(&f.p->nodes[1], FIX_ETC_HOSTS), "hosts", 1, hosts,
	                   "# >>> clusterdoc hostname >>>\n" HOSTS_HEADER
	                   "# was: 127.0.0.1 localhost node2\n"
	                   "127.0.0.1\tlocalhost\n"
	                   "10.0.0.2\tnode2\n"
	                   "# <<< clusterdoc hostname <<<\n"
	                   "::1 localhost\n");
	unload(&f);
}

static void fqdn_hostname_also_maps_its_short_name(void **state)
{
	static const char hosts[] = "127.0.0.1\tlocalhost\n127.0.1.1\tnode3.cluster node3\n";
	struct fx f;
	const struct fix_action *a;

	load(&f, "env-hosts.json");
	gathered(&f, 1000, "/bin/bash");
	put_file(&f.st[2], FIX_ETC_HOSTS, hosts);
	plan(&f, NULL);
	a = action_for(&f.p->nodes[2], FIX_ETC_HOSTS);
	assert_file_action(a, "hosts", 1, hosts,
	                   "127.0.0.1\tlocalhost\n"
	                   "# >>> clusterdoc hostname >>>\n" HOSTS_HEADER
	                   "# was: 127.0.1.1\tnode3.cluster node3\n"
	                   "10.0.0.3\tnode3.cluster node3\n"
	                   "# <<< clusterdoc hostname <<<\n");
	assert_string_equal(a->summary, "map node3.cluster to 10.0.0.3 (eno1) instead of loopback");
	unload(&f);
}

static void without_a_loopback_line_the_block_follows_the_leading_comments(void **state)
{
	static const char hosts[] = "# Your system has configured 'manage_etc_hosts' as True.\n"
	                            "# Edit /etc/cloud/templates/hosts.debian.tmpl instead.\n"
	                            "\n"
	                            "127.0.0.1 localhost\n"
	                            "10.0.0.1 node1\n";
	struct fx f;

	load(&f, "env-hosts.json");
	gathered(&f, 1000, "/bin/bash");
	put_file(&f.st[1], FIX_ETC_HOSTS, hosts);
	plan(&f, NULL);
	assert_file_action(action_for(&f.p->nodes[1], FIX_ETC_HOSTS), "hosts", 1, hosts,
	                   "# Your system has configured 'manage_etc_hosts' as True.\n"
	                   "# Edit /etc/cloud/templates/hosts.debian.tmpl instead.\n"
	                   "\n"
	                   "# >>> clusterdoc hostname >>>\n"
	                   "10.0.0.2\tnode2\n"
	                   "# <<< clusterdoc hostname <<<\n"
	                   "127.0.0.1 localhost\n"
	                   "10.0.0.1 node1\n");
	unload(&f);
}

static void root_edits_etc_hosts_without_sudo(void **state)
{
	struct fx f;

	load(&f, "env-hosts.json");
	gathered(&f, 0, "/bin/bash");
	plan(&f, NULL);
	assert_int_equal(action_for(&f.p->nodes[1], FIX_ETC_HOSTS)->sudo, 0);
	assert_int_equal(action_for(&f.p->nodes[2], FIX_ETC_HOSTS)->sudo, 0);
	unload(&f);
}

static void hosts_fixer_acts_only_where_the_hostname_is_loopback(void **state)
{
	struct fx f;

	load(&f, "env-hosts.json");
	gathered(&f, 1000, "/bin/bash");
	plan(&f, NULL);
	assert_false(has_action_for(&f.p->nodes[0], FIX_ETC_HOSTS));
	assert_int_equal(f.p->nodes[0].nwanted, 1);
	assert_string_equal(f.p->nodes[0].wanted[0], "env");
	assert_int_equal(f.p->nodes[1].nwanted, 2);
	assert_string_equal(f.p->nodes[1].wanted[0], "env");
	assert_string_equal(f.p->nodes[1].wanted[1], "hosts");
	assert_int_equal(f.p->nodes[1].nfixers, 2);
	assert_string_equal(f.p->nodes[1].fixers[1], "hosts");
	unload(&f);
}

static void hosts_second_plan_changes_nothing(void **state)
{
	struct fx f;

	load(&f, "env-hosts.json");
	gathered(&f, 1000, "/bin/bash");
	put_file(&f.st[1], FIX_ETC_HOSTS, "127.0.0.1 localhost node2\n");
	plan(&f, "hosts");
	assert_int_equal(f.p->nactions, 2);
	apply_to_states(&f);
	plan(&f, "hosts");
	assert_int_equal(f.p->nactions, 0);
	for (size_t i = 1; i < 3; i++) {
		assert_int_equal(f.p->nodes[i].nnotes, 1);
		assert_string_equal(f.p->nodes[i].notes[0],
		                    "hosts: /etc/hosts already is as planned");
	}
	unload(&f);
}

static void hosts_with_broken_markers_is_left_alone(void **state)
{
	struct fx f;

	load(&f, "env-hosts.json");
	gathered(&f, 1000, "/bin/bash");
	put_file(&f.st[1], FIX_ETC_HOSTS,
	         "127.0.0.1\tlocalhost\n127.0.1.1\tnode2\n# >>> clusterdoc hostname >>>\n"
	         "10.0.0.9\tnode2\n");
	plan(&f, "hosts");
	assert_int_equal(f.p->nodes[1].nactions, 0);
	assert_true(strstr(f.p->nodes[1].notes[0], "fix or remove the clusterdoc markers by hand"));
	unload(&f);
}

/* ---------------------------------------------------------------- firewall */

static void nft_drop_chain_gets_one_accept_rule_first_for_the_data_nic_and_lo(void **state)
{
	static const char *const argv[] = {"nft",  "--echo", "--handle", "insert",  "rule",
	                                   "inet", "filter", "input",    "iifname", "{ eth0, lo }",
	                                   "ip",   "saddr",  NET,        "meta",    "l4proto",
	                                   "tcp",  "accept", "comment",  COMMENTQ,  NULL};
	static const char *const undo[] = {"nft",   "delete", "rule",     "inet", "filter",
	                                   "input", "handle", "{handle}", NULL};
	struct fx f;
	const struct fix_action *a;

	firewall_gathered(&f, 1000, "nft-inet-drop.json");
	plan(&f, NULL);
	assert_int_equal(f.p->nodes[0].nactions, 1);
	a = &f.p->nodes[0].actions[0];
	assert_int_equal(a->kind, FIX_CMD);
	assert_string_equal(a->fixer, "firewall");
	assert_int_equal(a->sudo, 1);
	assert_string_equal(a->summary,
	                    "nft: accept TCP from " NET " on eth0 and lo (the node's own "
	                    "connections), first in chain inet filter input");
	assert_argv(a->argv, argv);
	assert_argv(a->undo, undo);
	assert_int_equal(f.p->nodes[1].nactions, 0);
	assert_int_equal(f.p->nactions, 1);
	unload(&f);
}

static void nft_chain_with_our_rule_is_left_alone(void **state)
{
	struct fx f;

	firewall_gathered(&f, 1000, "nft-inet-ours.json");
	plan(&f, NULL);
	assert_int_equal(f.p->nodes[0].nactions, 0);
	assert_int_equal(f.p->nodes[0].nnotes, 1);
	assert_string_equal(f.p->nodes[0].notes[0],
	                    "firewall: inet filter input already has clusterdoc's accept rule");
	unload(&f);
}

/* A rule an older run added for the data interface alone leaves the
 * node's own connections blocked: a rule for both comes first. */
static void nft_chain_with_our_rule_for_the_data_nic_alone_gets_one_with_lo(void **state)
{
	struct fx f;

	firewall_gathered(&f, 1000, "nft-inet-ours-eth0-only.json");
	plan(&f, NULL);
	assert_int_equal(f.p->nodes[0].nactions, 1);
	assert_string_equal(f.p->nodes[0].actions[0].argv[9], "{ eth0, lo }");
	unload(&f);
}

/* iptables' rule, after the chain */
#define IPT_RULE(IF)                                                                           \
	"-i", IF, "-s", NET, "-p", "tcp", "-m", "comment", "--comment", "clusterdoc fix " RUN, \
	    "-j", "ACCEPT"

static void iptables_nft_chain_is_edited_with_iptables_for_the_data_nic_and_lo(void **state)
{
	static const char *const argv[] = {"iptables", "-I", "INPUT", IPT_RULE("eth0"), NULL};
	static const char *const undo[] = {"iptables", "-D", "INPUT", IPT_RULE("eth0"), NULL};
	static const char *const lo[] = {"iptables", "-I", "INPUT", IPT_RULE("lo"), NULL};
	static const char *const lo_undo[] = {"iptables", "-D", "INPUT", IPT_RULE("lo"), NULL};
	struct fx f;
	const struct fix_action *a;

	firewall_gathered(&f, 1000, "nft-iptables-nft.json");
	plan(&f, NULL);
	assert_int_equal(f.p->nodes[0].nactions, 2);
	a = &f.p->nodes[0].actions[0];
	assert_int_equal(a->kind, FIX_CMD);
	assert_string_equal(a->summary,
	                    "iptables: accept TCP from " NET " on eth0, first in INPUT");
	assert_argv(a->argv, argv);
	assert_argv(a->undo, undo);
	a = &f.p->nodes[0].actions[1];
	assert_string_equal(a->summary, "iptables: accept TCP from " NET " on lo (the node's own "
	                                "connections to its addresses), first in INPUT");
	assert_argv(a->argv, lo);
	assert_argv(a->undo, lo_undo);
	unload(&f);
}

static void active_ufw_gets_an_allow_rule(void **state)
{
	static const char *const argv[] = {
	    "ufw", "allow", "in",  "on",      "eth0",           "from",
	    NET,   "proto", "tcp", "comment", "clusterdoc fix", NULL};
	static const char *const undo[] = {"ufw",  "delete", "allow", "in",  "on", "eth0",
	                                   "from", NET,      "proto", "tcp", NULL};
	struct fx f;
	const struct fix_action *a;

	firewall_gathered(&f, 1000, "nft-inet-drop.json");
	f.st[0].ufw_active = 1;
	f.st[0].ufw_status = cd_strdup("Status: active\n\n"
	                               "To                         Action      From\n"
	                               "--                         ------      ----\n"
	                               "22/tcp                     ALLOW       Anywhere\n"
	                               "22/tcp (v6)                ALLOW       Anywhere (v6)\n");
	plan(&f, NULL);
	assert_int_equal(f.p->nodes[0].nactions, 1);
	a = &f.p->nodes[0].actions[0];
	assert_string_equal(a->summary, "ufw: allow TCP in on eth0 from " NET);
	assert_int_equal(a->sudo, 1);
	assert_argv(a->argv, argv);
	assert_argv(a->undo, undo);
	unload(&f);
}

/* gpu1 as an Ascend node of 8 NPUs (base_port: HCCL_IF_BASE_PORT, or NULL),
 * diagnosed again so the check's ascend-hccl-settings names it. */
static void ascend_node(struct fx *f, const char *base_port)
{
	json_t *npus = json_array(), *env = json_object();

	for (int d = 0; d < 8; d++)
		json_array_append_new(npus, json_pack("{s:i, s:s, s:s, s:s}", "id", d, "name",
		                                      "910B3", "health", "OK", "bus_id", "NA"));
	if (base_port)
		json_object_set_new(env, "HCCL_IF_BASE_PORT", json_string(base_port));
	netmodel_set_ascend(f->m, 0, "npus", npus);
	netmodel_set_ascend(f->m, 0, "env", env);
	json_decref(npus);
	json_decref(env);
	diagnosis_free(f->d);
	f->d = diagnose(f->m);
}

/* On an Ascend node the firewall opens MASTER_PORT and HCCL's host ports
 * (60000, one per device) from the cluster's subnet: never all TCP, never
 * the firewall off. */
static void ascend_node_gets_only_the_rendezvous_and_hccl_ports(void **state)
{
	static const char *const argv[] = {"ufw",
	                                   "allow",
	                                   "in",
	                                   "on",
	                                   "eth0",
	                                   "from",
	                                   NET,
	                                   "to",
	                                   "any",
	                                   "port",
	                                   "29500,60000:60007",
	                                   "proto",
	                                   "tcp",
	                                   "comment",
	                                   "clusterdoc fix",
	                                   NULL};
	static const char *const undo[] = {"ufw",   "delete", "allow", "in",
	                                   "on",    "eth0",   "from",  NET,
	                                   "to",    "any",    "port",  "29500,60000:60007",
	                                   "proto", "tcp",    NULL};
	const struct fix_action *a;
	int lo, hi;
	struct fx f;

	firewall_gathered(&f, 1000, "nft-inet-drop.json");
	assert_int_equal(f.m->master_port, 29500);
	f.st[0].ufw_active = 1;
	f.st[0].ufw_status = cd_strdup("Status: active\n\n"
	                               "To                         Action      From\n"
	                               "--                         ------      ----\n"
	                               "22/tcp                     ALLOW       Anywhere\n");
	ascend_node(&f, NULL);
	plan(&f, NULL);
	assert_int_equal(f.p->nodes[0].nactions, 1);
	a = &f.p->nodes[0].actions[0];
	assert_string_equal(a->fixer, "firewall");
	assert_string_equal(
	    a->summary, "ufw: allow TCP to ports 29500, 60000-60007 (HCCL) in on eth0 from " NET);
	assert_argv(a->argv, argv);
	assert_argv(a->undo, undo);
	unload(&f);

	/* HCCL_IF_BASE_PORT moves the range; one that is no port is left alone */
	firewall_gathered(&f, 1000, "nft-inet-drop.json");
	f.st[0].ufw_active = 1;
	f.st[0].ufw_status = cd_strdup("Status: active\n");
	ascend_node(&f, "61000");
	plan(&f, NULL);
	assert_int_equal(f.p->nodes[0].nactions, 1);
	assert_string_equal(
	    f.p->nodes[0].actions[0].summary,
	    "ufw: allow TCP to ports 29500, 61000-61007 (HCCL) in on eth0 from " NET);
	unload(&f);
	firewall_gathered(&f, 1000, "nft-inet-drop.json");
	f.st[0].ufw_active = 1;
	f.st[0].ufw_status = cd_strdup("Status: active\n");
	ascend_node(&f, "http");
	plan(&f, NULL);
	assert_int_equal(f.p->nodes[0].nactions, 0);
	unload(&f);

	assert_int_equal(fix_hccl_ports(NULL, &lo, &hi), 0); /* no devices known: one port */
	assert_int_equal(lo, 60000);
	assert_int_equal(hi, 60000);
}

/* Plain `ufw status` prints our own rule with "ALLOW", not "ALLOW IN". */
static void ufw_rule_already_there_is_left_alone(void **state)
{
	struct fx f;

	firewall_gathered(&f, 1000, "nft-inet-drop.json");
	f.st[0].ufw_active = 1;
	f.st[0].ufw_status = cd_strdup("Status: active\n\n"
	                               "To                         Action      From\n"
	                               "--                         ------      ----\n"
	                               "Anywhere on eth0           ALLOW       " NET
	                               "/tcp           # clusterdoc fix\n");
	plan(&f, NULL);
	assert_int_equal(f.p->nodes[0].nactions, 0);
	assert_string_equal(f.p->nodes[0].notes[0], "firewall: ufw already allows " NET " on eth0");
	unload(&f);
}

/* The interface, the subnet and ALLOW must be on one line. */
static void ufw_match_spread_over_lines_is_not_an_allow(void **state)
{
	struct fx f;

	firewall_gathered(&f, 1000, "nft-inet-drop.json");
	f.st[0].ufw_active = 1;
	f.st[0].ufw_status = cd_strdup("Status: active\n\n"
	                               "Anywhere on eth0           ALLOW IN    192.168.5.0/24\n"
	                               "22/tcp                     DENY IN     " NET "\n");
	plan(&f, NULL);
	assert_int_equal(f.p->nodes[0].nactions, 1);
	unload(&f);
}

static void running_firewalld_gets_a_runtime_and_a_permanent_rule(void **state)
{
	static const char *const add[] = {"firewall-cmd", "--zone=public", "--add-rich-rule=" RICH,
	                                  NULL};
	static const char *const rm[] = {"firewall-cmd", "--zone=public",
	                                 "--remove-rich-rule=" RICH, NULL};
	static const char *const padd[] = {"firewall-cmd", "--permanent", "--zone=public",
	                                   "--add-rich-rule=" RICH, NULL};
	static const char *const prm[] = {"firewall-cmd", "--permanent", "--zone=public",
	                                  "--remove-rich-rule=" RICH, NULL};
	struct fx f;
	const struct fix_node_plan *np;

	firewall_gathered(&f, 1000, "nft-inet-drop.json");
	f.st[0].firewalld_running = 1;
	snprintf(f.st[0].firewalld_zone, sizeof(f.st[0].firewalld_zone), "public");
	f.st[0].firewalld_rules = cd_strdup("");
	plan(&f, NULL);
	np = &f.p->nodes[0];
	assert_int_equal(np->nactions, 2);
	assert_string_equal(np->actions[0].summary, "firewalld zone public, now: " RICH);
	assert_argv(np->actions[0].argv, add);
	assert_argv(np->actions[0].undo, rm);
	assert_string_equal(np->actions[1].summary, "firewalld zone public, after reboots: " RICH);
	assert_argv(np->actions[1].argv, padd);
	assert_argv(np->actions[1].undo, prm);
	unload(&f);
}

static void firewalld_zone_with_the_rule_is_left_alone(void **state)
{
	struct fx f;

	firewall_gathered(&f, 1000, NULL);
	f.st[0].firewalld_running = 1;
	snprintf(f.st[0].firewalld_zone, sizeof(f.st[0].firewalld_zone), "internal");
	f.st[0].firewalld_rules = cd_strdup(RICH "\n");
	plan(&f, NULL);
	assert_int_equal(f.p->nodes[0].nactions, 0);
	assert_int_equal(f.p->nodes[0].nnotes, 1);
	assert_string_equal(f.p->nodes[0].notes[0],
	                    "firewall: firewalld zone internal already has: " RICH);
	unload(&f);
}

static void nft_without_a_dropping_input_chain_gets_a_note(void **state)
{
	struct fx f;

	firewall_gathered(&f, 1000, "nft-inet-accept.json");
	plan(&f, NULL);
	assert_int_equal(f.p->nodes[0].nactions, 0);
	assert_int_equal(f.p->nodes[0].nnotes, 1);
	assert_string_equal(f.p->nodes[0].notes[0],
	                    "firewall: no nftables input chain drops or rejects here; the blocking "
	                    "rule is elsewhere (the check's evidence names it)");
	unload(&f);
}

static void firewall_that_was_not_read_gets_a_note(void **state)
{
	struct fx f;

	firewall_gathered(&f, 1000, NULL);
	f.st[0].fw_gathered = 0;
	snprintf(f.st[0].nft_error, sizeof(f.st[0].nft_error),
	         "nft: Operation not permitted (you must be root)");
	plan(&f, NULL);
	assert_int_equal(f.p->nodes[0].nactions, 0);
	assert_int_equal(f.p->nodes[0].nnotes, 1);
	assert_string_equal(f.p->nodes[0].notes[0],
	                    "firewall: the firewall could not be read: nft: Operation not "
	                    "permitted (you must be root)");
	unload(&f);
}

static void firewall_is_wanted_only_where_a_finding_names_the_node(void **state)
{
	struct fx f;
	struct fix_opts env_only = {.only = "env"};

	load(&f, "firewall.json");
	assert_true(fix_wants_firewall(f.m, f.d, NULL, 0));
	assert_false(fix_wants_firewall(f.m, f.d, NULL, 1));
	assert_false(fix_wants_firewall(f.m, f.d, &env_only, 0));
	unload(&f);
}

/* ---------------------------------------------------------------- port-range */

static void port_range_as_root_sets_the_boot_file_and_the_running_range(void **state)
{
	static const char *const argv[] = {"sysctl", "-w",
	                                   "net.ipv4.ip_local_port_range=40000 40999", NULL};
	static const char *const undo[] = {"sysctl", "-w",
	                                   "net.ipv4.ip_local_port_range=32768 60999", NULL};
	struct fx f;
	const struct fix_node_plan *np;

	load(&f, "env-hosts.json");
	gathered(&f, 0, "/bin/bash");
	plan_ports(&f, "port-range", 40000, 40999);
	np = &f.p->nodes[0];
	assert_int_equal(np->nactions, 2);
	assert_file_action(&np->actions[0], "port-range", 0, NULL, PORTS_BLOCK);
	assert_string_equal(np->actions[0].path, FIX_SYSCTL_PORTS);
	assert_string_equal(np->actions[0].summary, "net.ipv4.ip_local_port_range = 40000 40999 "
	                                            "at boot, in " FIX_SYSCTL_PORTS);
	assert_int_equal(np->actions[1].kind, FIX_CMD);
	assert_string_equal(np->actions[1].fixer, "port-range");
	assert_int_equal(np->actions[1].sudo, 0);
	assert_string_equal(np->actions[1].summary,
	                    "net.ipv4.ip_local_port_range 32768-60999 -> 40000-40999 now");
	assert_argv(np->actions[1].argv, argv);
	assert_argv(np->actions[1].undo, undo);
	assert_int_equal(np->nnotes, 0);
	assert_int_equal(np->nwanted, 1);
	assert_string_equal(np->wanted[0], "port-range");
	assert_int_equal(np->nfixers, 1);
	assert_string_equal(np->fixers[0], "port-range");
	/* every node, whatever the check found on it */
	assert_int_equal(f.p->nactions, 6);
	unload(&f);
}

static void
port_range_through_sudo_sets_only_the_running_range_and_says_how_to_keep_it(void **state)
{
	static const char *const argv[] = {"sysctl", "-w",
	                                   "net.ipv4.ip_local_port_range=40000 40999", NULL};
	struct fx f;
	const struct fix_node_plan *np;

	load(&f, "env-hosts.json");
	gathered(&f, 1000, "/bin/bash");
	plan_ports(&f, "port-range", 40000, 40999);
	np = &f.p->nodes[0];
	assert_int_equal(np->nactions, 1);
	assert_int_equal(np->actions[0].kind, FIX_CMD);
	assert_int_equal(np->actions[0].sudo, 1);
	assert_argv(np->actions[0].argv, argv);
	assert_int_equal(np->nnotes, 1);
	assert_string_equal(np->notes[0],
	                    "port-range: through sudo the range is set until the next reboot only; "
	                    "to keep it, as root: printf 'net.ipv4.ip_local_port_range = 40000 "
	                    "40999\\n' > " FIX_SYSCTL_PORTS);
	assert_false(has_action_for(np, FIX_SYSCTL_PORTS));
	unload(&f);
}

static void port_range_block_goes_after_the_files_own_lines(void **state)
{
	static const char site[] = "# the site's\nnet.core.somaxconn = 4096\n";
	struct fx f;

	load(&f, "env-hosts.json");
	gathered(&f, 0, "/bin/bash");
	put_file(&f.st[1], FIX_SYSCTL_PORTS, site);
	plan_ports(&f, "port-range", 40000, 40999);
	assert_file_action(action_for(&f.p->nodes[1], FIX_SYSCTL_PORTS), "port-range", 0, site,
	                   "# the site's\nnet.core.somaxconn = 4096\n" PORTS_BLOCK);
	unload(&f);
}

static void port_range_default_is_the_dynamic_ports_and_root_needs_no_sudo(void **state)
{
	static const char *const argv[] = {"sysctl", "-w",
	                                   "net.ipv4.ip_local_port_range=49152 65535", NULL};
	struct fx f;
	const struct fix_node_plan *np;

	load(&f, "env-hosts.json");
	gathered(&f, 0, "/bin/bash");
	plan_ports(&f, "port-range", 0, 0);
	np = &f.p->nodes[2];
	assert_int_equal(np->nactions, 2);
	assert_int_equal(np->actions[0].sudo, 0);
	assert_int_equal(np->actions[1].sudo, 0);
	assert_argv(np->actions[1].argv, argv);
	unload(&f);
}

static void port_range_second_plan_changes_nothing(void **state)
{
	struct fx f;

	load(&f, "env-hosts.json");
	gathered(&f, 0, "/bin/bash");
	plan_ports(&f, "port-range", 40000, 40999);
	assert_int_equal(f.p->nactions, 6);
	/* what the apply left: the file written, the range set */
	apply_to_states(&f);
	for (size_t i = 0; i < f.m->nnodes; i++) {
		f.m->nodes[i].port_lo = 40000;
		f.m->nodes[i].port_hi = 40999;
	}
	plan_ports(&f, "port-range", 40000, 40999);
	assert_int_equal(f.p->nactions, 0);
	for (size_t i = 0; i < f.m->nnodes; i++) {
		assert_int_equal(f.p->nodes[i].nfixers, 0);
		assert_int_equal(f.p->nodes[i].nwanted, 1);
		assert_int_equal(f.p->nodes[i].nnotes, 1);
		assert_string_equal(
		    f.p->nodes[i].notes[0],
		    "port-range: net.ipv4.ip_local_port_range already is 40000 40999");
	}
	unload(&f);
}

static void port_range_holding_master_port_is_refused(void **state)
{
	struct fx f;

	load(&f, "env-hosts.json");
	gathered(&f, 1000, "/bin/bash");
	plan_ports(&f, "port-range", 29000, 30999);
	assert_int_equal(f.p->nactions, 0);
	for (size_t i = 0; i < f.m->nnodes; i++) {
		assert_int_equal(f.p->nodes[i].nnotes, 1);
		assert_string_equal(
		    f.p->nodes[i].notes[0],
		    "port-range: 29000-30999 left alone: it holds MASTER_PORT 29500, which a local "
		    "connection can then take as its source port, and the rendezvous fails with "
		    "\"address already in use\"; give a range without it");
	}
	unload(&f);
}

static void port_range_of_fewer_than_1000_ports_is_refused(void **state)
{
	struct fx f;

	load(&f, "env-hosts.json");
	gathered(&f, 1000, "/bin/bash");
	plan_ports(&f, "port-range", 40000, 40998);
	assert_int_equal(f.p->nactions, 0);
	assert_string_equal(f.p->nodes[0].notes[0],
	                    "port-range: 40000-40998 left alone: 999 ports are too few, as NCCL "
	                    "and Gloo open several sockets per peer on every rank; give at least "
	                    "1000");
	unload(&f);
}

static void port_range_unknown_on_a_node_leaves_that_node_alone(void **state)
{
	struct fx f;

	load(&f, "env-hosts.json");
	gathered(&f, 0, "/bin/bash");
	f.m->nodes[1].port_lo = 0;
	f.m->nodes[1].port_hi = 0;
	plan_ports(&f, "port-range", 40000, 40999);
	assert_int_equal(f.p->nodes[1].nactions, 0);
	assert_string_equal(f.p->nodes[1].notes[0],
	                    "port-range: left alone: the check could not read this node's "
	                    "net.ipv4.ip_local_port_range, so undo would have no range to put "
	                    "back");
	assert_int_equal(f.p->nodes[0].nactions, 2);
	assert_int_equal(f.p->nodes[2].nactions, 2);
	unload(&f);
}

static void port_range_sysctl_file_that_was_not_read_changes_nothing(void **state)
{
	struct fx f;
	struct fix_file_state *sf;

	load(&f, "env-hosts.json");
	gathered(&f, 0, "/bin/bash");
	sf = (struct fix_file_state *)fix_state_file(&f.st[0], FIX_SYSCTL_PORTS);
	sf->read = 0;
	snprintf(sf->error, sizeof(sf->error), "node1: %s: Permission denied", FIX_SYSCTL_PORTS);
	plan_ports(&f, "port-range", 40000, 40999);
	/* no sysctl -w either: the range would not survive a reboot */
	assert_int_equal(f.p->nodes[0].nactions, 0);
	assert_note(&f.p->nodes[0], "port-range: " FIX_SYSCTL_PORTS
	                            " left as is: node1: " FIX_SYSCTL_PORTS ": Permission denied");
	unload(&f);
}

/* ---------------------------------------------------------------- firewall with port-range */

#define PORTS_NFT_SET "{ 29500, 40000-40999 }"
#define PORTS_LIST    "29500,40000:40999"
#define RICH_PORT(p)                                                                            \
	"rule family=\"ipv4\" source address=\"" NET "\" port port=\"" p "\" protocol=\"tcp\" " \
	"accept"

static void nft_rule_with_port_range_opens_master_port_and_the_range(void **state)
{
	static const char *const argv[] = {
	    "nft",   "--echo",      "--handle",     "insert",  "rule",   "inet", "filter",
	    "input", "iifname",     "{ eth0, lo }", "ip",      "saddr",  NET,    "tcp",
	    "dport", PORTS_NFT_SET, "accept",       "comment", COMMENTQ, NULL};
	static const char *const undo[] = {"nft",   "delete", "rule",     "inet", "filter",
	                                   "input", "handle", "{handle}", NULL};
	struct fx f;
	const struct fix_node_plan *np;

	firewall_gathered(&f, 1000, "nft-inet-drop.json");
	plan_ports(&f, "firewall,port-range", 40000, 40999);
	np = &f.p->nodes[0];
	/* the rule, then port-range's sysctl (through sudo, no file) */
	assert_int_equal(np->nactions, 2);
	assert_string_equal(np->actions[0].fixer, "firewall");
	assert_string_equal(np->actions[0].summary,
	                    "nft: accept TCP to ports 29500, 40000-40999 from " NET
	                    " on eth0 and lo (the node's own connections), first in chain inet "
	                    "filter input");
	assert_argv(np->actions[0].argv, argv);
	assert_argv(np->actions[0].undo, undo);
	assert_string_equal(np->actions[1].fixer, "port-range");
	assert_int_equal(np->nfixers, 2);
	unload(&f);
}

static void iptables_rule_with_port_range_uses_multiport(void **state)
{
#define IPT_PORTS_RULE                                                                         \
	"-i", "eth0", "-s", NET, "-p", "tcp", "-m", "multiport", "--dports", PORTS_LIST, "-m", \
	    "comment", "--comment", "clusterdoc fix " RUN, "-j", "ACCEPT"
	static const char *const argv[] = {"iptables", "-I", "INPUT", IPT_PORTS_RULE, NULL};
	static const char *const undo[] = {"iptables", "-D", "INPUT", IPT_PORTS_RULE, NULL};
	struct fx f;
	const struct fix_action *a;

	firewall_gathered(&f, 1000, "nft-iptables-nft.json");
	plan_ports(&f, "firewall,port-range", 40000, 40999);
	a = &f.p->nodes[0].actions[0];
	assert_string_equal(a->summary, "iptables: accept TCP to ports 29500, 40000-40999 from " NET
	                                " on eth0, first in INPUT");
	assert_argv(a->argv, argv);
	assert_argv(a->undo, undo);
	unload(&f);
}

static void ufw_rule_with_port_range_lists_the_ports(void **state)
{
	static const char *const argv[] = {
	    "ufw",  "allow",    "in",    "on",  "eth0",    "from",           NET, "to", "any",
	    "port", PORTS_LIST, "proto", "tcp", "comment", "clusterdoc fix", NULL};
	static const char *const undo[] = {"ufw",  "delete",   "allow", "in",  "on",
	                                   "eth0", "from",     NET,     "to",  "any",
	                                   "port", PORTS_LIST, "proto", "tcp", NULL};
	struct fx f;
	const struct fix_action *a;

	firewall_gathered(&f, 1000, "nft-inet-drop.json");
	f.st[0].ufw_active = 1;
	f.st[0].ufw_status = cd_strdup("Status: active\n\n"
	                               "To                         Action      From\n"
	                               "--                         ------      ----\n"
	                               "22/tcp                     ALLOW       Anywhere\n");
	plan_ports(&f, "firewall,port-range", 40000, 40999);
	a = &f.p->nodes[0].actions[0];
	assert_string_equal(a->summary,
	                    "ufw: allow TCP to ports 29500, 40000-40999 in on eth0 from " NET);
	assert_argv(a->argv, argv);
	assert_argv(a->undo, undo);
	unload(&f);
}

static void ufw_with_the_port_rule_or_all_tcp_is_left_alone(void **state)
{
	struct fx f;

	firewall_gathered(&f, 1000, "nft-inet-drop.json");
	f.st[0].ufw_active = 1;
	f.st[0].ufw_status =
	    cd_strdup("Status: active\n\n" PORTS_LIST "/tcp on eth0      ALLOW       " NET
	              "                # clusterdoc fix\n");
	plan_ports(&f, "firewall,port-range", 40000, 40999);
	assert_string_equal(f.p->nodes[0].actions[0].fixer, "port-range");
	assert_note(&f.p->nodes[0],
	            "firewall: ufw already allows " PORTS_LIST "/tcp from " NET " on eth0");

	free(f.st[0].ufw_status);
	f.st[0].ufw_status = cd_strdup("Status: active\n\n"
	                               "Anywhere on eth0           ALLOW       " NET "/tcp\n");
	plan_ports(&f, "firewall,port-range", 40000, 40999);
	assert_string_equal(f.p->nodes[0].actions[0].fixer, "port-range");
	assert_note(&f.p->nodes[0], "firewall: ufw already allows all TCP from " NET
	                            " on eth0; delete that rule to open only MASTER_PORT and "
	                            "the port range");
	unload(&f);
}

static void firewalld_with_port_range_gets_a_rule_per_port_element(void **state)
{
	static const char *const add[] = {"firewall-cmd", "--zone=public",
	                                  "--add-rich-rule=" RICH_PORT("29500"), NULL};
	static const char *const rm[] = {"firewall-cmd", "--zone=public",
	                                 "--remove-rich-rule=" RICH_PORT("29500"), NULL};
	static const char *const padd[] = {"firewall-cmd", "--permanent", "--zone=public",
	                                   "--add-rich-rule=" RICH_PORT("40000-40999"), NULL};
	static const char *const prm[] = {"firewall-cmd", "--permanent", "--zone=public",
	                                  "--remove-rich-rule=" RICH_PORT("40000-40999"), NULL};
	struct fx f;
	const struct fix_node_plan *np;

	firewall_gathered(&f, 1000, "nft-inet-drop.json");
	f.st[0].firewalld_running = 1;
	snprintf(f.st[0].firewalld_zone, sizeof(f.st[0].firewalld_zone), "public");
	f.st[0].firewalld_rules = cd_strdup("");
	plan_ports(&f, "firewall,port-range", 40000, 40999);
	np = &f.p->nodes[0];
	/* MASTER_PORT now and after reboots, the range now and after reboots,
	 * then port-range's sysctl (through sudo, no file) */
	assert_int_equal(np->nactions, 5);
	assert_string_equal(np->actions[0].summary,
	                    "firewalld zone public, now: " RICH_PORT("29500"));
	assert_argv(np->actions[0].argv, add);
	assert_argv(np->actions[0].undo, rm);
	assert_string_equal(np->actions[3].summary,
	                    "firewalld zone public, after reboots: " RICH_PORT("40000-40999"));
	assert_argv(np->actions[3].argv, padd);
	assert_argv(np->actions[3].undo, prm);

	/* one of the two there already: the other is added */
	free(f.st[0].firewalld_rules);
	f.st[0].firewalld_rules = cd_strdup(RICH_PORT("29500") "\n");
	plan_ports(&f, "firewall,port-range", 40000, 40999);
	np = &f.p->nodes[0];
	assert_int_equal(np->nactions, 3);
	assert_argv(np->actions[1].argv, padd);
	assert_note(np, "firewall: firewalld zone public already has: " RICH_PORT("29500"));
	unload(&f);
}

static void nft_chain_with_our_port_rule_is_left_alone(void **state)
{
	struct fx f;

	firewall_gathered(&f, 1000, "nft-inet-ours-ports.json");
	plan_ports(&f, "firewall,port-range", 40000, 40999);
	assert_int_equal(f.p->nodes[0].nactions, 1);
	assert_string_equal(f.p->nodes[0].actions[0].fixer, "port-range");
	assert_note(&f.p->nodes[0], "firewall: inet filter input already has clusterdoc's accept "
	                            "rule");
	unload(&f);
}

/* nft lists a set as it merged or split it: holding the ports is what counts. */
static void nft_port_rule_over_several_elements_still_holds_them(void **state)
{
	static const char one[] = "{\"range\": [40000, 40999]}";
	static const char two[] = "{\"range\": [40000, 40499]}, {\"range\": [40500, 40999]}";
	struct fx f;
	char *json, *at;

	firewall_gathered(&f, 1000, "nft-inet-ours-ports.json");
	at = strstr(f.st[0].nft_json, one);
	assert_non_null(at);
	json = cd_malloc(strlen(f.st[0].nft_json) + sizeof(two));
	snprintf(json, strlen(f.st[0].nft_json) + sizeof(two), "%.*s%s%s",
	         (int)(at - f.st[0].nft_json), f.st[0].nft_json, two, at + strlen(one));
	free(f.st[0].nft_json);
	f.st[0].nft_json = json;
	plan_ports(&f, "firewall,port-range", 40000, 40999);
	assert_string_equal(f.p->nodes[0].actions[0].fixer, "port-range");
	assert_note(&f.p->nodes[0], "firewall: inet filter input already has clusterdoc's accept "
	                            "rule");
	unload(&f);
}

static void nft_port_rule_for_other_ports_gets_a_new_rule(void **state)
{
	struct fx f;

	firewall_gathered(&f, 1000, "nft-inet-ours-ports.json");
	plan_ports(&f, "firewall,port-range", 50000, 50999);
	assert_int_equal(f.p->nodes[0].nactions, 2);
	assert_string_equal(f.p->nodes[0].actions[0].fixer, "firewall");
	assert_string_equal(f.p->nodes[0].actions[0].argv[15], "{ 29500, 50000-50999 }");
	unload(&f);
}

static void nft_rule_of_ours_for_all_tcp_is_named_with_port_range(void **state)
{
	struct fx f;

	firewall_gathered(&f, 1000, "nft-inet-ours.json");
	plan_ports(&f, "firewall,port-range", 40000, 40999);
	assert_int_equal(f.p->nodes[0].nactions, 1);
	assert_string_equal(f.p->nodes[0].actions[0].fixer, "port-range");
	assert_note(&f.p->nodes[0],
	            "firewall: inet filter input already has clusterdoc's accept rule for all "
	            "TCP, from a run without port-range; undo that run (clusterdoc fix --list) to "
	            "open only MASTER_PORT and the port range");
	unload(&f);
}

static void only_firewall_keeps_its_rule_for_all_tcp(void **state)
{
	static const char *const argv[] = {"nft",  "--echo", "--handle", "insert",  "rule",
	                                   "inet", "filter", "input",    "iifname", "{ eth0, lo }",
	                                   "ip",   "saddr",  NET,        "meta",    "l4proto",
	                                   "tcp",  "accept", "comment",  COMMENTQ,  NULL};
	struct fx f;

	firewall_gathered(&f, 1000, "nft-inet-drop.json");
	plan_ports(&f, "env,firewall", 40000, 40999);
	assert_int_equal(f.p->nodes[0].nactions, 1);
	assert_string_equal(f.p->nodes[0].actions[0].summary,
	                    "nft: accept TCP from " NET " on eth0 and lo (the node's own "
	                    "connections), first in chain inet filter input");
	assert_argv(f.p->nodes[0].actions[0].argv, argv);
	unload(&f);
}

static void firewall_refuses_a_port_range_holding_master_port(void **state)
{
	struct fx f;

	firewall_gathered(&f, 1000, "nft-inet-drop.json");
	plan_ports(&f, "firewall,port-range", 29000, 30999);
	assert_int_equal(f.p->nodes[0].nactions, 0);
	assert_note(&f.p->nodes[0], "firewall: left as is: MASTER_PORT 29500 is inside the port "
	                            "range 29000-30999, which port-range refuses");
	unload(&f);
}

/* ---------------------------------------------------------------- selection, gather */

static void only_env_plans_env_alone(void **state)
{
	struct fx f;

	load(&f, "env-hosts.json");
	gathered(&f, 1000, "/bin/bash");
	plan(&f, "env");
	assert_int_equal(f.p->nodes[1].nactions, 3);
	for (size_t k = 0; k < f.p->nodes[1].nactions; k++)
		assert_string_equal(f.p->nodes[1].actions[k].fixer, "env");
	assert_int_equal(f.p->nodes[1].nwanted, 1);
	assert_string_equal(f.p->nodes[1].wanted[0], "env");
	unload(&f);
}

static void only_an_unknown_fixer_is_an_error_naming_the_known_ones(void **state)
{
	struct fx f;
	struct fix_opts o = {.only = "env,bogus"};
	char err[CD_ERRLEN] = "";

	load(&f, "env-hosts.json");
	gathered(&f, 1000, "/bin/bash");
	assert_null(fix_plan_build(f.m, f.d, f.st, &o, RUN, err, sizeof(err)));
	assert_string_equal(
	    err, "--only: no fixer \"bogus\" (known: ssh-key, env, hosts, firewall, port-range)");
	unload(&f);
}

static void node_not_gathered_gets_its_error_and_no_action(void **state)
{
	struct fx f;

	load(&f, "env-hosts.json");
	gathered(&f, 1000, "/bin/bash");
	f.st[1].gathered = 0;
	snprintf(f.st[1].error, sizeof(f.st[1].error),
	         "node2: ssh: connect to host node2 port 22: Connection refused");
	plan(&f, NULL);
	assert_int_equal(f.p->nodes[1].nactions, 0);
	assert_int_equal(f.p->nodes[1].nwanted, 0);
	assert_int_equal(f.p->nodes[1].nnotes, 1);
	assert_string_equal(f.p->nodes[1].notes[0],
	                    "node2: ssh: connect to host node2 port 22: Connection refused");
	assert_string_equal(f.p->run, RUN);
	/* node1: 3 env; node3: 3 env and 1 hosts */
	assert_int_equal(f.p->nactions, 7);
	unload(&f);
}

/* ---------------------------------------------------------------- journal */

static char state_dir[64];

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path);
}

static int journal_setup(void **state)
{
	snprintf(state_dir, sizeof(state_dir), "/tmp/test_fixplan.XXXXXX");
	if (!mkdtemp(state_dir))
		return -1;
	setenv("XDG_STATE_HOME", state_dir, 1);
	return 0;
}

static int journal_teardown(void **state)
{
	nftw(state_dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	unsetenv("XDG_STATE_HOME");
	return 0;
}

static struct fix_journal *save_and_load(struct fix_journal *j)
{
	struct fix_journal *back = NULL;
	char err[CD_ERRLEN] = "";

	if (fix_journal_save(j, err, sizeof(err)) != 0)
		fail_msg("save: %s", err);
	if (fix_journal_load(j->run, &back, err, sizeof(err)) != 0)
		fail_msg("load: %s", err);
	assert_non_null(back);
	return back;
}

static void utc_day(char out[16])
{
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(out, 16, "%Y%m%d-", &tm);
}

static void run_id_is_utc_time_and_four_hex_digits(void **state)
{
	char id[40], day0[16], day1[16];

	utc_day(day0);
	fix_run_id(id, sizeof(id));
	utc_day(day1);
	assert_int_equal(strlen(id), 20);
	for (size_t k = 0; k < 20; k++) {
		if (k == 8 || k == 15)
			assert_int_equal(id[k], '-');
		else if (k < 15)
			assert_true(id[k] >= '0' && id[k] <= '9');
		else
			assert_non_null(strchr("0123456789abcdef", id[k]));
	}
	/* today in UTC (either side of a midnight during the call) */
	assert_true(strncmp(id, day0, 9) == 0 || strncmp(id, day1, 9) == 0);
}

static void journal_keeps_a_files_before_bytes_and_after_digest(void **state)
{
	static const char before[] = "\x01\x02 \x7f\x80\xfe\xff\r\n\ttab\x1b[0m";
	const char *hosts[] = {"node1", "node2"};
	struct fix_journal *j = fix_journal_new(RUN, hosts, 2), *back;
	struct fix_action a = {.fixer = "hosts",
	                       .kind = FIX_FILE,
	                       .summary = "map node2",
	                       .sudo = 1,
	                       .path = FIX_ETC_HOSTS,
	                       .before_exists = 1,
	                       .before = (char *)before,
	                       .before_len = sizeof(before) - 1,
	                       .after = "abc",
	                       .after_len = 3};
	const struct fix_change *c;

	fix_journal_add(j, "node2", &a);
	back = save_and_load(j);
	assert_int_equal(back->nchanges, 1);
	c = &back->changes[0];
	assert_string_equal(c->host, "node2");
	assert_string_equal(c->fixer, "hosts");
	assert_string_equal(c->summary, "map node2");
	assert_int_equal(c->kind, FIX_FILE);
	assert_int_equal(c->sudo, 1);
	assert_string_equal(c->path, FIX_ETC_HOSTS);
	assert_int_equal(c->before_exists, 1);
	assert_int_equal(c->before_len, sizeof(before) - 1);
	assert_memory_equal(c->before, before, sizeof(before) - 1);
	assert_int_equal(c->after_exists, 1);
	/* SHA-256("abc"), FIPS 180-2's example */
	assert_string_equal(c->after_sha256,
	                    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	assert_null(c->backup);
	fix_journal_free(back);
	fix_journal_free(j);
}

static void journal_keeps_an_absent_file_as_empty_before(void **state)
{
	struct fix_journal *j = fix_journal_new(RUN, NULL, 0), *back;
	struct fix_action a = {.fixer = "env",
	                       .kind = FIX_FILE,
	                       .summary = "env.sh",
	                       .path = FIX_ENV_SH,
	                       .before_exists = 0,
	                       .before = NULL,
	                       .before_len = 0,
	                       .after = "",
	                       .after_len = 0};
	const struct fix_change *c;

	fix_journal_add(j, "node1", &a);
	back = save_and_load(j);
	assert_int_equal(back->nchanges, 1);
	c = &back->changes[0];
	assert_int_equal(c->before_exists, 0);
	assert_int_equal(c->before_len, 0);
	assert_int_equal(c->sudo, 0);
	/* SHA-256 of nothing */
	assert_string_equal(c->after_sha256,
	                    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	fix_journal_free(back);
	fix_journal_free(j);
}

/* A change to a file in a shared home keeps the nodes that read it, and the
 * run counts the nodes its changes reach, not the nodes it was given. */
static void journal_counts_the_nodes_a_shared_file_reaches(void **state)
{
	const char *hosts[] = {"node1", "node2", "node3", "node4", "node5"};
	struct fix_journal *j = fix_journal_new(RUN, hosts, 5), *back;
	struct fix_action a = {.fixer = "env",
	                       .kind = FIX_FILE,
	                       .summary = "rc",
	                       .path = "~/.bashrc",
	                       .after = "x",
	                       .after_len = 1,
	                       .shared_by = "node[1-3]"};
	struct fix_action h = {.fixer = "hosts",
	                       .kind = FIX_FILE,
	                       .summary = "hosts",
	                       .sudo = 1,
	                       .path = FIX_ETC_HOSTS,
	                       .after = "y",
	                       .after_len = 1};

	assert_int_equal(fix_journal_nodes_changed(j), 0);
	fix_journal_add(j, "node1", &h);
	assert_int_equal(fix_journal_nodes_changed(j), 1);
	fix_journal_add(j, "node1", &a);
	fix_journal_add(j, "node4", &h);
	back = save_and_load(j);
	assert_string_equal(back->changes[1].shared_by, "node[1-3]");
	assert_null(back->changes[0].shared_by);
	assert_int_equal(fix_journal_nodes_changed(back), 4);
	fix_journal_free(back);
	fix_journal_free(j);
}

static void journal_keeps_a_commands_argv_and_undo(void **state)
{
	static const char *const argv[] = {"nft", "insert", "rule", "comment", COMMENTQ, NULL};
	static const char *const undo[] = {"nft", "delete", "rule", "handle", "{handle}", NULL};
	struct fix_journal *j = fix_journal_new(RUN, NULL, 0), *back;
	struct fix_action a = {.fixer = "firewall", .kind = FIX_CMD, .summary = "nft", .sudo = 1};
	const struct fix_change *c;

	a.argv = fix_argv("nft", "insert", "rule", "comment", COMMENTQ, NULL);
	a.undo = fix_argv("nft", "delete", "rule", "handle", "{handle}", NULL);
	fix_journal_add(j, "gpu1", &a);
	fix_argv_free(a.argv);
	fix_argv_free(a.undo);
	back = save_and_load(j);
	assert_int_equal(back->nchanges, 1);
	c = &back->changes[0];
	assert_int_equal(c->kind, FIX_CMD);
	assert_string_equal(c->fixer, "firewall");
	assert_null(c->path);
	assert_argv(c->argv, argv);
	assert_argv(c->undo, undo);
	fix_journal_free(back);
	fix_journal_free(j);
}

/* The version the journal file says it is. */
static long long journal_file_version(const char *run)
{
	char path[256];
	json_error_t je;
	json_t *o;
	long long v;

	snprintf(path, sizeof(path), "%s/clusterdoc/runs/%s.json", state_dir, run);
	o = json_load_file(path, 0, &je);
	assert_non_null(o);
	v = json_integer_value(json_object_get(o, "version"));
	json_decref(o);
	return v;
}

static void journal_keeps_an_intent_of_unknown_outcome_as_version_2(void **state)
{
	struct fix_journal *j = fix_journal_new(RUN, NULL, 0), *back;
	struct fix_action a = {.fixer = "firewall", .kind = FIX_CMD, .summary = "nft", .sudo = 1};

	a.argv = fix_argv("nft", "insert", "rule", "comment", COMMENTQ, NULL);
	a.undo = fix_argv("nft", "delete", "rule", "handle", "{handle}", NULL);
	fix_journal_intend(j, "gpu1", &a);
	back = save_and_load(j);
	assert_int_equal(journal_file_version(RUN), 2);
	assert_int_equal(back->nchanges, 1);
	assert_int_equal(back->changes[0].outcome, FIX_OUTCOME_UNKNOWN);
	assert_int_equal(fix_journal_unknown(back), 1);
	fix_journal_free(back);

	/* the answer came: a finished run's journal is version 1 again */
	j->changes[0].outcome = FIX_OUTCOME_APPLIED;
	back = save_and_load(j);
	assert_int_equal(journal_file_version(RUN), 1);
	assert_int_equal(back->changes[0].outcome, FIX_OUTCOME_APPLIED);
	fix_journal_free(back);
	fix_argv_free(a.argv);
	fix_argv_free(a.undo);
	fix_journal_free(j);
}

static void journal_leaves_out_a_change_the_node_did_not_make(void **state)
{
	struct fix_journal *j = fix_journal_new(RUN, NULL, 0), *back;
	struct fix_action a = {.fixer = "port-range", .kind = FIX_CMD, .summary = "sysctl"};

	a.argv = fix_argv("sysctl", "-w", "x=1", NULL);
	a.undo = fix_argv("sysctl", "-w", "x=0", NULL);
	fix_journal_intend(j, "gpu1", &a)->outcome = FIX_OUTCOME_DROPPED;
	fix_journal_add(j, "gpu2", &a);
	assert_int_equal(fix_journal_count(j), 1);
	back = save_and_load(j);
	assert_int_equal(back->nchanges, 1);
	assert_string_equal(back->changes[0].host, "gpu2");
	fix_journal_free(back);
	fix_journal_compact(j);
	assert_int_equal(j->nchanges, 1);
	assert_string_equal(j->changes[0].host, "gpu2");
	fix_argv_free(a.argv);
	fix_argv_free(a.undo);
	fix_journal_free(j);
}

static void journal_keeps_that_the_run_was_interrupted(void **state)
{
	struct fix_journal *j = fix_journal_new(RUN, NULL, 0), *back;

	j->interrupted = 1795000001;
	back = save_and_load(j);
	assert_int_equal(journal_file_version(RUN), 2);
	assert_int_equal(back->interrupted, 1795000001);
	fix_journal_free(back);
	fix_journal_free(j);
}

static void journal_keeps_hosts_creation_and_undone_times(void **state)
{
	const char *hosts[] = {"gpu1", "gpu2", "gpu3"};
	struct fix_journal *j = fix_journal_new(RUN, hosts, 3), *back;

	back = save_and_load(j);
	assert_string_equal(back->run, RUN);
	assert_int_equal(back->created, j->created);
	assert_int_equal(back->undone, 0);
	assert_int_equal(back->nhosts, 3);
	assert_string_equal(back->hosts[2], "gpu3");
	assert_int_equal(back->nchanges, 0);
	fix_journal_free(back);

	j->undone = 1795000000;
	back = save_and_load(j);
	assert_int_equal(back->undone, 1795000000);
	fix_journal_free(back);
	fix_journal_free(j);
}

/* A journal of n changes, on gpu1 and gpu2 in turn, the first `unknown`
 * of them of unknown outcome (the intents a killed run sent). */
static struct fix_journal *journal_of(size_t n, size_t unknown)
{
	const char *hosts[] = {"gpu1", "gpu2"};
	struct fix_journal *j = fix_journal_new(RUN, hosts, 2);

	j->changes = cd_calloc(n, sizeof(*j->changes));
	for (size_t k = 0; k < n; k++) {
		j->changes[k].host = cd_strdup(hosts[k % 2]);
		j->changes[k].outcome = k < unknown ? FIX_OUTCOME_UNKNOWN : FIX_OUTCOME_APPLIED;
	}
	j->nchanges = n;
	return j;
}

static void assert_list_line(const struct fix_journal *j, const char *want)
{
	char *got = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&got, &len);

	fix_print_list_line(f, j);
	fclose(f);
	assert_string_equal(got, want);
	free(got);
}

/* fault-run-3 case 17: a killed apply (no "interrupted" stamp, 2 intents
 * without an answer) and an undo that failed for some changes are said */
static void list_line_says_a_killed_run_is_interrupted_with_how_much_was_made(void **state)
{
	struct fix_journal *j = journal_of(8, 2);

	assert_list_line(j, RUN "  8 changes on 2 nodes  (interrupted: 6 of 8 made, 2 of unknown "
	                        "outcome; undo with clusterdoc fix --undo " RUN ")\n");
	j->undone = 1795000000;
	assert_list_line(j, RUN "  8 changes on 2 nodes  (interrupted; undone)\n");
	fix_journal_free(j);
	j = journal_of(5, 0);
	assert_list_line(j, RUN "  5 changes on 2 nodes\n");
	fix_journal_free(j);
}

static void list_line_says_an_undo_that_failed_for_some_changes(void **state)
{
	struct fix_journal *j = journal_of(5, 0), *back;

	j->undo_failed = 3;
	assert_list_line(j, RUN "  5 changes on 2 nodes  (undo failed for 3 of 5; again: "
	                        "clusterdoc fix --undo " RUN ")\n");
	j->undo_failed = 0;
	j->undone = 1795000000;
	assert_list_line(j, RUN "  5 changes on 2 nodes  (undone)\n");
	fix_journal_free(j);
	/* the count is kept in the journal */
	j = journal_of(0, 0);
	j->undo_failed = 3;
	back = save_and_load(j);
	assert_int_equal(back->undo_failed, 3);
	fix_journal_free(back);
	fix_journal_free(j);
}

static void journal_file_is_0600_in_a_0700_directory(void **state)
{
	struct fix_journal *j = fix_journal_new(RUN, NULL, 0);
	char err[CD_ERRLEN] = "", dir[1024], path[1100];
	struct stat sb;

	assert_int_equal(fix_journal_save(j, err, sizeof(err)), 0);
	assert_int_equal(fix_journal_dir(dir, sizeof(dir), err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/clusterdoc/runs", state_dir);
	assert_string_equal(dir, path);
	assert_int_equal(stat(dir, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0700);
	snprintf(path, sizeof(path), "%s/" RUN ".json", dir);
	assert_int_equal(stat(path, &sb), 0);
	assert_true(S_ISREG(sb.st_mode));
	assert_int_equal(sb.st_mode & 07777, 0600);
	fix_journal_free(j);
}

static void loading_a_missing_run_says_how_to_list_them(void **state)
{
	struct fix_journal *j = (struct fix_journal *)1;
	char err[CD_ERRLEN] = "";

	assert_int_equal(fix_journal_load("20200101-000000-0000", &j, err, sizeof(err)),
	                 CD_ERR_NOTFOUND);
	assert_null(j);
	assert_non_null(strstr(err, "20200101-000000-0000"));
	assert_non_null(strstr(err, "clusterdoc fix --list"));
}

static void loading_a_run_id_with_a_slash_is_refused(void **state)
{
	struct fix_journal *j = (struct fix_journal *)1;
	char err[CD_ERRLEN] = "";

	assert_int_equal(fix_journal_load("../runs/20261121-183005-3f9a", &j, err, sizeof(err)),
	                 CD_ERR_PARSE);
	assert_null(j);
	assert_non_null(strstr(err, "is not a run id"));
}

static void list_gives_the_runs_newest_first(void **state)
{
	static const char *const runs[] = {"20250101-000000-aaaa", "20261121-183005-3f9a",
	                                   "20260615-120000-0b1c"};
	char err[CD_ERRLEN] = "", dir[1024], path[1100], **got = NULL;
	size_t n = 0;

	for (size_t k = 0; k < CD_ARRAY_LEN(runs); k++) {
		struct fix_journal *j = fix_journal_new(runs[k], NULL, 0);

		assert_int_equal(fix_journal_save(j, err, sizeof(err)), 0);
		fix_journal_free(j);
	}
	/* not journals: another extension, a name that is not a run id */
	assert_int_equal(fix_journal_dir(dir, sizeof(dir), err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/notes.txt", dir);
	assert_int_equal(cd_write_file_atomic(path, "x", 1, 0600, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/Backup_Copy.json", dir);
	assert_int_equal(cd_write_file_atomic(path, "{}", 2, 0600, err, sizeof(err)), 0);

	assert_int_equal(fix_journal_list(&got, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 3);
	assert_string_equal(got[0], "20261121-183005-3f9a");
	assert_string_equal(got[1], "20260615-120000-0b1c");
	assert_string_equal(got[2], "20250101-000000-aaaa");
	for (size_t k = 0; k < n; k++)
		free(got[k]);
	free(got);
}

static void list_without_a_directory_gives_no_runs(void **state)
{
	char err[CD_ERRLEN] = "", **got = (char **)1;
	size_t n = 7;

	assert_int_equal(fix_journal_list(&got, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 0);
	assert_null(got);
}

/* fault-run-3 case 17: run and mnist save their job plans as
 * runs/check-HASH.json beside the journals; --list leaves them out */
static void list_leaves_out_the_saved_check_plans(void **state)
{
	struct fix_journal *j = fix_journal_new(RUN, NULL, 0);
	char err[CD_ERRLEN] = "", dir[1024], path[1100], **got = NULL;
	size_t n = 0;

	assert_int_equal(fix_journal_save(j, err, sizeof(err)), 0);
	assert_int_equal(fix_journal_dir(dir, sizeof(dir), err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/check-a641c59d10d8f5e7.json", dir);
	assert_int_equal(cd_write_file_atomic(path, "{}", 2, 0600, err, sizeof(err)), 0);
	assert_int_equal(fix_journal_list(&got, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_string_equal(got[0], RUN);
	free(got[0]);
	free(got);
	fix_journal_free(j);
}

#define JTEST(t) cmocka_unit_test_setup_teardown(t, journal_setup, journal_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(env_sh_has_one_case_arm_per_set_of_values),
	    cmocka_unit_test(env_sh_is_the_same_file_on_every_node),
	    cmocka_unit_test(shared_home_files_change_once_on_the_first_node),
	    cmocka_unit_test(shared_home_file_one_node_changes_names_every_reader),
	    cmocka_unit_test(shared_home_leaves_root_files_to_each_node),
	    cmocka_unit_test(separate_homes_each_get_their_own_change),
	    cmocka_unit_test(one_home_with_different_bytes_in_a_file_is_not_one_file),
	    cmocka_unit_test(env_actions_are_env_sh_nccl_conf_then_the_rc_file),
	    cmocka_unit_test(env_sh_exports_the_verified_ib_variables_per_node),
	    cmocka_unit_test(nccl_conf_takes_only_the_ib_values_every_node_shares),
	    cmocka_unit_test(nccl_conf_takes_a_gid_index_every_node_shares),
	    cmocka_unit_test(rc_line_setting_nccl_ib_hca_after_the_block_is_named),
	    cmocka_unit_test(env_answers_nccl_ib_fallback_only_where_nccl_ib_hca_is_the_cause),
	    cmocka_unit_test(nccl_conf_block_goes_before_a_stale_setting),
	    cmocka_unit_test(nccl_conf_writes_the_family_the_check_suggested),
	    cmocka_unit_test(bashrc_block_goes_above_the_interactive_guard),
	    cmocka_unit_test(rc_line_setting_a_variable_after_the_block_is_named),
	    cmocka_unit_test(zsh_gets_its_block_in_zshenv),
	    cmocka_unit_test(sh_gets_profile_and_a_note_that_ssh_skips_it),
	    cmocka_unit_test(env_file_that_could_not_be_read_is_left_with_a_note),
	    cmocka_unit_test(env_second_plan_changes_nothing),
	    cmocka_unit_test(debian_loopback_line_moves_into_the_block),
	    cmocka_unit_test(other_names_on_the_loopback_line_stay_on_loopback),
	    cmocka_unit_test(fqdn_hostname_also_maps_its_short_name),
	    cmocka_unit_test(without_a_loopback_line_the_block_follows_the_leading_comments),
	    cmocka_unit_test(root_edits_etc_hosts_without_sudo),
	    cmocka_unit_test(hosts_fixer_acts_only_where_the_hostname_is_loopback),
	    cmocka_unit_test(hosts_second_plan_changes_nothing),
	    cmocka_unit_test(hosts_with_broken_markers_is_left_alone),
	    cmocka_unit_test(nft_drop_chain_gets_one_accept_rule_first_for_the_data_nic_and_lo),
	    cmocka_unit_test(nft_chain_with_our_rule_is_left_alone),
	    cmocka_unit_test(nft_chain_with_our_rule_for_the_data_nic_alone_gets_one_with_lo),
	    cmocka_unit_test(iptables_nft_chain_is_edited_with_iptables_for_the_data_nic_and_lo),
	    cmocka_unit_test(active_ufw_gets_an_allow_rule),
	    cmocka_unit_test(ascend_node_gets_only_the_rendezvous_and_hccl_ports),
	    cmocka_unit_test(ufw_rule_already_there_is_left_alone),
	    cmocka_unit_test(ufw_match_spread_over_lines_is_not_an_allow),
	    cmocka_unit_test(running_firewalld_gets_a_runtime_and_a_permanent_rule),
	    cmocka_unit_test(firewalld_zone_with_the_rule_is_left_alone),
	    cmocka_unit_test(nft_without_a_dropping_input_chain_gets_a_note),
	    cmocka_unit_test(firewall_that_was_not_read_gets_a_note),
	    cmocka_unit_test(firewall_is_wanted_only_where_a_finding_names_the_node),
	    cmocka_unit_test(port_range_as_root_sets_the_boot_file_and_the_running_range),
	    cmocka_unit_test(
	        port_range_through_sudo_sets_only_the_running_range_and_says_how_to_keep_it),
	    cmocka_unit_test(port_range_block_goes_after_the_files_own_lines),
	    cmocka_unit_test(port_range_default_is_the_dynamic_ports_and_root_needs_no_sudo),
	    cmocka_unit_test(port_range_second_plan_changes_nothing),
	    cmocka_unit_test(port_range_holding_master_port_is_refused),
	    cmocka_unit_test(port_range_of_fewer_than_1000_ports_is_refused),
	    cmocka_unit_test(port_range_unknown_on_a_node_leaves_that_node_alone),
	    cmocka_unit_test(port_range_sysctl_file_that_was_not_read_changes_nothing),
	    cmocka_unit_test(nft_rule_with_port_range_opens_master_port_and_the_range),
	    cmocka_unit_test(iptables_rule_with_port_range_uses_multiport),
	    cmocka_unit_test(ufw_rule_with_port_range_lists_the_ports),
	    cmocka_unit_test(ufw_with_the_port_rule_or_all_tcp_is_left_alone),
	    cmocka_unit_test(firewalld_with_port_range_gets_a_rule_per_port_element),
	    cmocka_unit_test(nft_chain_with_our_port_rule_is_left_alone),
	    cmocka_unit_test(nft_port_rule_over_several_elements_still_holds_them),
	    cmocka_unit_test(nft_port_rule_for_other_ports_gets_a_new_rule),
	    cmocka_unit_test(nft_rule_of_ours_for_all_tcp_is_named_with_port_range),
	    cmocka_unit_test(only_firewall_keeps_its_rule_for_all_tcp),
	    cmocka_unit_test(firewall_refuses_a_port_range_holding_master_port),
	    cmocka_unit_test(only_env_plans_env_alone),
	    cmocka_unit_test(only_an_unknown_fixer_is_an_error_naming_the_known_ones),
	    cmocka_unit_test(node_not_gathered_gets_its_error_and_no_action),
	    cmocka_unit_test(run_id_is_utc_time_and_four_hex_digits),
	    JTEST(journal_keeps_a_files_before_bytes_and_after_digest),
	    JTEST(journal_keeps_an_absent_file_as_empty_before),
	    JTEST(journal_counts_the_nodes_a_shared_file_reaches),
	    JTEST(journal_keeps_a_commands_argv_and_undo),
	    JTEST(journal_keeps_an_intent_of_unknown_outcome_as_version_2),
	    JTEST(journal_leaves_out_a_change_the_node_did_not_make),
	    JTEST(journal_keeps_that_the_run_was_interrupted),
	    JTEST(journal_keeps_hosts_creation_and_undone_times),
	    JTEST(list_line_says_a_killed_run_is_interrupted_with_how_much_was_made),
	    JTEST(list_line_says_an_undo_that_failed_for_some_changes),
	    JTEST(list_leaves_out_the_saved_check_plans),
	    JTEST(journal_file_is_0600_in_a_0700_directory),
	    JTEST(loading_a_missing_run_says_how_to_list_them),
	    JTEST(loading_a_run_id_with_a_slash_is_refused),
	    JTEST(list_gives_the_runs_newest_first),
	    JTEST(list_without_a_directory_gives_no_runs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
