/* SPDX-License-Identifier: MIT */
/*
 * test_diagnose.c - diagnose() on fixture clusters (tests/fixtures/clusters/):
 * the layouts of the failure catalogue, each with the findings it must
 * produce on the right nodes and the suggestions that must (or must not)
 * be made.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "probes/diagnose.h"

#ifndef FIXTURES
#define FIXTURES "tests/fixtures/clusters/"
#endif

struct fx {
	struct netmodel *m;
	struct diagnosis *d;
};

static void load(struct fx *f, const char *name)
{
	char path[256], err[CD_ERRLEN] = "";
	json_error_t jerr;
	json_t *doc;

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

static void unload(struct fx *f)
{
	diagnosis_free(f->d);
	netmodel_free(f->m);
}

/* Every finding with this id (one per cause) together must list exactly
 * these nodes, in order, and have this worst severity. */
static void expect_finding(const struct fx *f, const char *id, enum severity sev, const char *nodes)
{
	enum severity worst = SEV_INFO;
	char got[256] = "";
	int seen = 0;

	for (size_t k = 0; k < f->d->nfindings; k++) {
		const struct finding *x = &f->d->findings[k];

		if (strcmp(x->id, id) != 0)
			continue;
		seen = 1;
		if (x->severity < worst)
			worst = x->severity;
		assert_true(strlen(x->fix) > 10);
		for (size_t i = 0; i < x->nnodes; i++) {
			const char *h = f->m->nodes[x->nodes[i]].host;

			assert_true(strlen(got) + strlen(h) + 2 < sizeof(got));
			if (got[0])
				strcat(got, ",");
			strcat(got, h);
		}
	}
	if (!seen) {
		for (size_t i = 0; i < f->d->nfindings; i++)
			fprintf(stderr, "  have: %s\n", f->d->findings[i].id);
		fail_msg("no finding %s", id);
	}
	assert_string_equal(got, nodes);
	assert_int_equal(worst, sev);
}

/* The evidence of every finding with this id, joined. */
static const char *evidence(const struct fx *f, const char *id)
{
	static char all[4096];

	all[0] = '\0';
	for (size_t k = 0; k < f->d->nfindings; k++) {
		const struct finding *x = &f->d->findings[k];

		if (strcmp(x->id, id) == 0 && strlen(all) + strlen(x->evidence) + 2 < sizeof(all)) {
			strcat(all, x->evidence);
			strcat(all, "\n");
		}
	}
	return all;
}

static void ib0_with_only_link_local_is_flagged_and_excluded(void **state)
{
	struct fx f;

	load(&f, "ib0-link-local.json");
	/* NCCL puts ib* first: the fe80:: address wins over a good eth0 */
	assert_string_equal(f.d->pred[0].bootstrap.picks[0].ifname, "ib0");
	assert_string_equal(f.d->pred[0].bootstrap.picks[0].addr, "fe80::a288:c203:d2:aaf1");
	expect_finding(&f, "link-local-selected", SEV_ERROR, "gpu1,gpu2");
	assert_non_null(f.d->sugg.nccl_ifname);
	assert_string_equal(f.d->sugg.nccl_ifname, "eth0");
	assert_true(f.d->sugg.nccl_family_inet);
	assert_string_equal(f.d->sugg.gloo_ifname_per_node[1], "eth0");
	assert_string_equal(f.d->sugg.master_addr, "10.0.0.1");
	assert_int_equal(f.d->sugg.master_port, 29500);
	unload(&f);
}

/* ib0-link-local.json (gpu1 the master, 29500 reached by gpu2) with the
 * master's own attempts on its MASTER_PORT candidates added: 29500 with
 * self_29500's result, 29501 listened on, reached by gpu2 and by the master
 * itself. */
static void load_with_self_path(struct fx *f, const char *self_29500)
{
	char err[CD_ERRLEN] = "";
	json_error_t jerr;
	json_t *doc = json_load_file(FIXTURES "ib0-link-local.json", 0, &jerr), *mx;

	if (!doc)
		fail_msg("ib0-link-local.json: %s", jerr.text);
	json_array_append_new(
	    json_object_get(doc, "listeners"),
	    json_pack("{sssisb}", "host", "gpu1", "port", 29501, "fixed_port", 1));
	mx = json_object_get(doc, "matrix");
	json_array_append_new(mx, json_pack("{sssssssisbss}", "from", "gpu1", "to", "gpu1",
	                                    "address", "10.0.0.1", "port", 29500, "fixed_port", 1,
	                                    "result", self_29500));
	json_array_append_new(mx, json_pack("{sssssssisbss}", "from", "gpu2", "to", "gpu1",
	                                    "address", "10.0.0.1", "port", 29501, "fixed_port", 1,
	                                    "result", "ok"));
	json_array_append_new(mx, json_pack("{sssssssisbss}", "from", "gpu1", "to", "gpu1",
	                                    "address", "10.0.0.1", "port", 29501, "fixed_port", 1,
	                                    "result", "ok"));
	f->m = netmodel_load_json(doc, err, sizeof(err));
	json_decref(doc);
	if (!f->m)
		fail_msg("%s", err);
	f->d = diagnose(f->m);
}

static const struct finding *finding_of(const struct fx *f, const char *id)
{
	for (size_t k = 0; k < f->d->nfindings; k++) {
		if (strcmp(f->d->findings[k].id, id) == 0)
			return &f->d->findings[k];
	}
	return NULL;
}

static void the_masters_own_path_dropped_is_master_port_blocked_on_the_master(void **state)
{
	struct fx f;
	const struct finding *x;

	load_with_self_path(&f, "timeout");
	expect_finding(&f, "master-port-blocked", SEV_ERROR, "gpu1");
	x = finding_of(&f, "master-port-blocked");
	if (!x) {
		fail();
		return;
	}
	assert_string_equal(x->evidence, "gpu1 -> its own 10.0.0.1:29500: timed out");
	assert_non_null(strstr(x->message, "the master's own connection to MASTER_ADDR"));
	unload(&f);
}

static void the_suggested_master_port_is_one_the_master_itself_reached(void **state)
{
	struct fx f;

	load_with_self_path(&f, "timeout");
	assert_string_equal(f.d->sugg.master_addr, "10.0.0.1");
	assert_int_equal(f.d->sugg.master_port, 29501);
	unload(&f);
}

static void the_masters_own_path_open_is_no_finding_and_keeps_the_port(void **state)
{
	struct fx f;

	load_with_self_path(&f, "ok");
	assert_null(finding_of(&f, "master-port-blocked"));
	assert_int_equal(f.d->sugg.master_port, 29500);
	unload(&f);
}

static void virbr_and_veth_on_old_nccl(void **state)
{
	struct fx f;

	load(&f, "virbr-veth-2.27.json");
	/* 2.27.7 excludes only docker and lo: virbr0 comes first */
	assert_string_equal(f.d->pred[0].nccl.picks[0].ifname, "virbr0");
	expect_finding(&f, "virtual-iface-selected", SEV_WARNING, "h1,h2");
	expect_finding(&f, "duplicate-address", SEV_ERROR, "h1,h2");
	expect_finding(&f, "link-local-selected", SEV_ERROR, "h1,h2");
	/* the suggestion keeps only eth0 */
	assert_string_equal(f.d->sugg.nccl_ifname, "eth0");
	assert_string_equal(f.d->pred[1].data_iface, "eth0");
	unload(&f);
}

/* The fixture's two nodes plus copies of h2 named h3.. (count in all) with
 * their own eth0 address (10.1.0.3..), so that only virbr0's 192.168.122.1
 * is on every node; node rename_node's virbr0 is renamed to rename_to. */
static void load_copies(struct fx *f, size_t count, size_t rename_node, const char *rename_to)
{
	char err[CD_ERRLEN] = "";
	json_error_t jerr;
	json_t *doc, *nodes, *node, *addrs;
	size_t k, a;

	doc = json_load_file(FIXTURES "virbr-veth-2.27.json", 0, &jerr);
	if (!doc)
		fail_msg("%s", jerr.text);
	nodes = json_object_get(doc, "nodes");
	for (k = 2; k < count; k++) {
		char host[16];

		snprintf(host, sizeof(host), "h%zu", k + 1);
		node = json_deep_copy(json_array_get(nodes, 1));
		json_object_set_new(node, "host", json_string(host));
		json_object_set_new(json_object_get(node, "probe"), "hostname", json_string(host));
		addrs = json_object_get(json_object_get(node, "probe"), "addresses");
		for (a = 0; a < json_array_size(addrs); a++) {
			json_t *x = json_array_get(addrs, a);
			char addr[32];

			snprintf(addr, sizeof(addr), "10.1.0.%zu", k + 1);
			if (strcmp(json_string_value(json_object_get(x, "ifname")), "eth0") == 0)
				json_object_set_new(x, "address", json_string(addr));
		}
		json_array_append_new(nodes, node);
	}
	if (rename_to) {
		addrs = json_object_get(
		    json_object_get(json_array_get(nodes, rename_node), "probe"), "addresses");

		for (a = 0; a < json_array_size(addrs); a++) {
			json_t *x = json_array_get(addrs, a);

			if (strcmp(json_string_value(json_object_get(x, "ifname")), "virbr0") == 0)
				json_object_set_new(x, "ifname", json_string(rename_to));
		}
	}
	f->m = netmodel_load_json(doc, err, sizeof(err));
	json_decref(doc);
	if (!f->m)
		fail_msg("%s", err);
	f->d = diagnose(f->m);
}

static void duplicate_address_evidence_is_one_line_per_address(void **state)
{
	struct fx f;

	load(&f, "virbr-veth-2.27.json");
	assert_string_equal(evidence(&f, "duplicate-address"), "192.168.122.1 on virbr0: h[1-2]\n");
	unload(&f);
}

static void duplicate_address_on_four_nodes_folds_them(void **state)
{
	struct fx f;

	load_copies(&f, 4, 0, NULL);
	expect_finding(&f, "duplicate-address", SEV_ERROR, "h1,h2,h3,h4");
	assert_string_equal(evidence(&f, "duplicate-address"), "192.168.122.1 on virbr0: h[1-4]\n");
	unload(&f);
}

static void duplicate_address_on_differently_named_interfaces_groups_them(void **state)
{
	struct fx f;

	load_copies(&f, 4, 2, "br0");
	assert_string_equal(evidence(&f, "duplicate-address"),
	                    "192.168.122.1 on virbr0: h[1-2,4]; on br0: h3\n");
	unload(&f);
}

static void different_names_need_an_exact_list_when_a_prefix_overmatches(void **state)
{
	struct fx f;

	load(&f, "eno1-eno2.json");
	expect_finding(&f, "nic-name-mismatch", SEV_WARNING, "a,b");
	/* "eno1" as a prefix also matches eno10, which b cannot reach */
	assert_string_equal(f.d->sugg.nccl_ifname, "=eno1,eno2");
	assert_string_equal(f.d->sugg.gloo_ifname_per_node[0], "eno1");
	assert_string_equal(f.d->sugg.gloo_ifname_per_node[1], "eno2");
	/* by default NCCL would use eno10 too, which b reaches with ENETUNREACH */
	expect_finding(&f, "iface-unreachable", SEV_ERROR, "a");
	unload(&f);
}

/* jumbo-data-nic.json with the path-MTU probe's answer on its stalled
 * attempt (data0, a -> b): pmtu bytes echoed, up to pmtu_max tried. */
static void load_stall_with_pmtu(struct fx *f, int pmtu, int pmtu_max)
{
	char err[CD_ERRLEN] = "";
	json_error_t jerr;
	json_t *doc, *row;

	doc = json_load_file(FIXTURES "jumbo-data-nic.json", 0, &jerr);
	if (!doc)
		fail_msg("%s", jerr.text);
	row = json_array_get(json_object_get(doc, "matrix"), 0);
	assert_string_equal(json_string_value(json_object_get(row, "bulk")), "stalled");
	json_object_set_new(row, "pmtu", json_integer(pmtu));
	json_object_set_new(row, "pmtu_max", json_integer(pmtu_max));
	f->m = netmodel_load_json(doc, err, sizeof(err));
	json_decref(doc);
	if (!f->m)
		fail_msg("%s", err);
	f->d = diagnose(f->m);
}

/* The same stall, but the path-MTU probe of the pair echoed full 9000-byte
 * frames: the path is slow, not a black hole. A warning names both nodes,
 * nothing says MTU black hole, and data0 stays the data interface. */
static void bulk_stall_where_full_frames_pass_is_slow_not_a_black_hole(void **state)
{
	struct fx f;

	load_stall_with_pmtu(&f, 9000, 9000);
	expect_finding(&f, "bulk-transfer-slow", SEV_WARNING, "a,b");
	for (size_t k = 0; k < f.d->nfindings; k++) {
		const struct finding *x = &f.d->findings[k];

		assert_string_not_equal(x->id, "path-mtu-blackhole");
		if (strcmp(x->id, "bulk-transfer-slow") != 0)
			continue;
		assert_non_null(strstr(x->message, "carries full 9000-byte frames"));
		assert_non_null(strstr(x->evidence, "path-MTU probe: 9000 bytes echoed"));
	}
	assert_string_equal(f.d->pred[0].data_iface, "data0");
	assert_string_equal(f.d->pred[1].data_iface, "data0");
	unload(&f);
}

/* A smaller frame proven by the probe (1500 of the NICs' 9000) keeps the
 * black hole. */
static void bulk_stall_where_the_probe_proves_a_smaller_frame_is_a_black_hole(void **state)
{
	struct fx f;

	load_stall_with_pmtu(&f, 1500, 9000);
	expect_finding(&f, "path-mtu-blackhole", SEV_ERROR, "a,b");
	for (size_t k = 0; k < f.d->nfindings; k++)
		assert_string_not_equal(f.d->findings[k].id, "bulk-transfer-slow");
	assert_string_equal(f.d->pred[0].data_iface, "eth0");
	unload(&f);
}

/* data0 (MTU 9000, listed first) opens connections between a and b but its
 * bulk transfer (a -> b only: one proof per pair) stalls; eth0 (MTU 1500)
 * carries it. The black hole is an
 * error on both nodes, eth0 is chosen and suggested instead, and MTUs are
 * compared per network (9000 beside 1500 on another network is no mismatch). */
static void bulk_stall_is_a_black_hole_and_the_other_nic_is_suggested(void **state)
{
	struct fx f;

	load(&f, "jumbo-data-nic.json");
	expect_finding(&f, "path-mtu-blackhole", SEV_ERROR, "a,b");
	assert_string_equal(f.d->pred[0].data_iface, "eth0");
	assert_string_equal(f.d->pred[1].data_iface, "eth0");
	assert_non_null(f.d->sugg.nccl_ifname);
	assert_string_equal(f.d->sugg.gloo_ifname_per_node[0], "eth0");
	assert_string_equal(f.d->sugg.gloo_ifname_per_node[1], "eth0");
	for (size_t k = 0; k < f.d->nfindings; k++) {
		const struct finding *x = &f.d->findings[k];

		assert_string_not_equal(x->id, "mtu-mismatch");
		if (strcmp(x->id, "path-mtu-blackhole") != 0)
			continue;
		assert_non_null(strstr(x->message, "data0 (network 10.9.0.0/24, MTU 9000)"));
		assert_non_null(strstr(x->message, "no bulk transfer passed on this network"));
		assert_non_null(
		    strstr(x->evidence, "a (data0 mtu 9000) -> b 10.9.0.2 (data0 mtu 9000)"));
		assert_non_null(strstr(x->fix, "jumbo frames (MTU 9000)"));
	}
	unload(&f);
}

/* The ids of the findings that name node i, ","-joined, in order. */
static void ids_naming(const struct fx *f, size_t i, char *buf, size_t len)
{
	buf[0] = '\0';
	for (size_t k = 0; k < f->d->nfindings; k++) {
		if (finding_names(&f->d->findings[k], i))
			snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", buf[0] ? "," : "",
			         f->d->findings[k].id);
	}
}

/* A node that logged in but answered a request too late is slow, not
 * unreachable: its agent said hello ("slow") or did not start in time
 * ("request-timeout", whose deadline starts after login). A refused login
 * stays node-unreachable. */
static void a_slow_node_is_probe_incomplete_not_unreachable(void **state)
{
	static const struct {
		const char *code, *msg, *ids, *says;
	} cases[] = {
	    {"slow",
	     "s4: the agent did not answer request 2 in time; it logged in and its agent "
	     "said hello, so it is slow (overloaded or stopped), not unreachable",
	     "probe-incomplete", "hello but not the probe in time"},
	    {"request-timeout", "s4: the agent did not start within the deadline",
	     "probe-incomplete", "did not start and answer in time"},
	    {"refused", "s4: connection refused", "node-unreachable", "could not be checked"},
	};
	char ids[256];

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct fx f;

		load(&f, "stale-env.json");
		diagnosis_free(f.d);
		netmodel_node_failed(f.m, 3, cases[c].code, cases[c].msg);
		f.d = diagnose(f.m);
		ids_naming(&f, 3, ids, sizeof(ids));
		assert_string_equal(ids, cases[c].ids);
		for (size_t k = 0; k < f.d->nfindings; k++) {
			if (finding_names(&f.d->findings[k], 3))
				assert_non_null(strstr(f.d->findings[k].message, cases[c].says));
		}
		unload(&f);
	}
}

static void two_nics_on_one_subnet_route_through_the_other(void **state)
{
	struct fx f;

	load(&f, "two-nics-one-subnet.json");
	expect_finding(&f, "route-egress-mismatch", SEV_WARNING, "p");
	assert_non_null(strstr(evidence(&f, "route-egress-mismatch"),
	                       "ip route get 10.3.0.12 from 10.3.0.11 -> dev eth0"));
	unload(&f);
}

/* The finding ids that name node i, comma-separated, must be exactly ids. */
static void expect_ids_naming(const struct fx *f, size_t i, const char *ids)
{
	char got[512];

	ids_naming(f, i, got, sizeof(got));
	assert_string_equal(got, ids);
}

static void a_clean_cluster_has_no_route_findings(void **state)
{
	struct fx f;

	load(&f, "routes-clean.json");
	assert_int_equal(f.d->nfindings, 0);
	unload(&f);
}

/* q's stale /32 to r through ens7: q's connects to r time out. Only q is
 * named, with its own route answer and its failed connects; r, whose routes
 * and answers are fine, is named by nothing. */
static void a_stale_route_names_only_its_node(void **state)
{
	struct fx f;

	load(&f, "routes-stale.json");
	expect_finding(&f, "route-egress-mismatch", SEV_ERROR, "q");
	assert_string_equal(
	    evidence(&f, "route-egress-mismatch"),
	    "q: ip route get 10.3.0.3 from 10.3.0.2 -> dev ens7 src 10.3.0.2, but "
	    "10.3.0.2 belongs to eth0; q -> r port 40006: timeout (ETIMEDOUT); q -> "
	    "r port 29500: timeout (ETIMEDOUT)\n");
	expect_ids_naming(&f, 0, "");
	expect_ids_naming(&f, 2, "");
	unload(&f);
}

static void two_nics_in_one_subnet_with_strict_rp_filter_is_an_error_on_its_node(void **state)
{
	struct fx f;

	load(&f, "routes-strict-rpf.json");
	expect_finding(&f, "multiple-nics-same-subnet", SEV_ERROR, "p");
	assert_string_equal(evidence(&f, "multiple-nics-same-subnet"),
	                    "p: eth0 10.3.0.1/24 and eth1 10.3.0.101/24 share a subnet; rp_filter "
	                    "eth0=1 eth1=1; arp_ignore eth0=0 eth1=0; arp_announce eth0=0 eth1=0; "
	                    "ip route get 10.3.0.2 from 10.3.0.1 -> dev eth0\n");
	expect_ids_naming(&f, 0, "multiple-nics-same-subnet");
	expect_ids_naming(&f, 1, "");
	expect_ids_naming(&f, 2, "");
	unload(&f);
}

/* r's two same-metric routes to the subnet put eth1 first (NVIDIA/nccl#1581):
 * r's own answers leave eth1; p and q, with one route, are not named. */
static void a_route_order_that_prefers_the_other_nic_names_only_its_node(void **state)
{
	struct fx f;

	load(&f, "routes-order.json");
	expect_finding(&f, "route-egress-mismatch", SEV_WARNING, "r");
	expect_finding(&f, "multiple-nics-same-subnet", SEV_WARNING, "r");
	assert_non_null(strstr(evidence(&f, "multiple-nics-same-subnet"),
	                       "rp_filter eth0=0 eth1=0; arp_ignore eth0=0 eth1=0; arp_announce "
	                       "eth0=0 eth1=0; ip route get 10.3.0.1 from 10.3.0.3 -> dev eth1"));
	assert_non_null(
	    strstr(evidence(&f, "route-egress-mismatch"),
	           "r: ip route get 10.3.0.2 from 10.3.0.3 -> dev eth1 src 10.3.0.3, but "
	           "10.3.0.3 belongs to eth0"));
	expect_ids_naming(&f, 0, "");
	expect_ids_naming(&f, 1, "");
	unload(&f);
}

/* Suggestions follow the nodes' own routes: r's eth0 address leaves through
 * eth1, so eth0 is not r's data interface (and eth1, which this matrix never
 * tested, is not proved either), and the notes say why. */
static void a_route_order_node_is_not_suggested_the_nic_its_traffic_leaves_beside(void **state)
{
	struct fx f;

	load(&f, "routes-order.json");
	assert_string_equal(f.d->pred[2].data_iface, "");
	assert_string_equal(f.d->pred[0].data_iface, "eth0");
	assert_non_null(f.d->sugg.notes);
	assert_non_null(strstr(
	    f.d->sugg.notes, "r: eth0 is not suggested: its own route sends traffic from 10.3.0.3 "
	                     "to 10.3.0.1 (p) out of eth1 (route-egress-mismatch)"));
	expect_ids_naming(&f, 0, "");
	unload(&f);
}

/* q's stale route takes its eth0 traffic to r out of ens7: nothing is
 * suggested for q, and the notes say why. */
static void a_stale_route_node_is_suggested_nothing_its_route_refutes(void **state)
{
	struct fx f;

	load(&f, "routes-stale.json");
	assert_string_equal(f.d->pred[1].data_iface, "");
	assert_non_null(f.d->sugg.notes);
	assert_non_null(strstr(
	    f.d->sugg.notes, "q: eth0 is not suggested: its own route sends traffic from 10.3.0.2 "
	                     "to 10.3.0.3 (r) out of ens7 (route-egress-mismatch)"));
	unload(&f);
}

/* r is only the target of q's stale route: q's failed connects are q's
 * route's fault, so r's eth0 is still proved and suggested, like p's, and
 * no note is about r. */
static void a_stale_route_target_is_still_suggested_its_own_nic(void **state)
{
	struct fx f;

	load(&f, "routes-stale.json");
	assert_string_equal(f.d->pred[2].data_iface, "eth0");
	assert_string_equal(f.d->pred[0].data_iface, "eth0");
	assert_non_null(f.d->sugg.notes);
	assert_null(strstr(f.d->sugg.notes, "\nr: "));
	assert_true(strncmp(f.d->sugg.notes, "r: ", 3) != 0);
	expect_ids_naming(&f, 2, "");
	unload(&f);
}

static void every_route_trap_together_is_named_on_exactly_its_node(void **state)
{
	struct fx f;

	load(&f, "routes-all.json");
	expect_finding(&f, "multiple-nics-same-subnet", SEV_ERROR, "p,r");
	expect_finding(&f, "route-egress-mismatch", SEV_ERROR, "q,r");
	expect_ids_naming(&f, 0, "multiple-nics-same-subnet");
	expect_ids_naming(&f, 1, "route-egress-mismatch");
	expect_ids_naming(&f, 2, "multiple-nics-same-subnet,route-egress-mismatch");
	unload(&f);
}

static void stale_env_wrong_gloo_syntax_version_skew_and_a_dead_node(void **state)
{
	struct fx f;

	load(&f, "stale-env.json");
	expect_finding(&f, "node-unreachable", SEV_ERROR, "s4");
	expect_finding(&f, "stale-ifname-env", SEV_ERROR, "s1,s2");
	assert_non_null(
	    strstr(evidence(&f, "stale-ifname-env"), "Unable to find address for: ^lo"));
	expect_finding(&f, "version-mismatch", SEV_ERROR, "s1,s2,s3");
	/* the others still get verified values; the dead node gets none */
	assert_string_equal(f.d->sugg.nccl_ifname, "eth0");
	assert_null(f.d->sugg.gloo_ifname_per_node[3]);
	assert_null(f.d->sugg.torchrun[3]);
	assert_non_null(strstr(f.d->sugg.torchrun[2], "--nnodes=3 --node_rank=2"));
	/* errors first */
	assert_int_equal(f.d->findings[0].severity, SEV_ERROR);
	unload(&f);
}

static void no_matrix_means_no_suggestion(void **state)
{
	char err[CD_ERRLEN];
	json_t *doc = json_load_file(FIXTURES "eno1-eno2.json", 0, NULL);
	struct netmodel *m;
	struct diagnosis *d;

	assert_non_null(doc);
	json_object_set_new(doc, "matrix", json_array());
	json_object_set_new(doc, "matrix_done", json_false());
	m = netmodel_load_json(doc, err, sizeof(err));
	json_decref(doc);
	assert_non_null(m);
	d = diagnose(m);
	assert_null(d->sugg.nccl_ifname);
	assert_null(d->sugg.gloo_ifname_per_node[0]);
	assert_int_equal(d->sugg.master_port, 0);
	assert_non_null(d->sugg.notes);
	diagnosis_free(d);
	netmodel_free(m);
}

/* A node that answered its probe and then stopped (partial) is left out of
 * the suggestions, saying so, and is never the suggested master. */
static void partial_node_is_left_out_and_never_the_master(void **state)
{
	struct fx f;

	for (size_t partial = 0; partial < 2; partial++) {
		load(&f, "eno1-eno2.json");
		assert_non_null(f.d->sugg.torchrun[partial]);
		unload(&f);
		load(&f, "eno1-eno2.json");
		diagnosis_free(f.d);
		snprintf(f.m->nodes[partial].error, sizeof(f.m->nodes[partial].error),
		         "%s: the agent died", f.m->nodes[partial].host);
		assert_true(nm_node_partial(&f.m->nodes[partial]));
		assert_false(nm_node_complete(&f.m->nodes[partial]));
		f.d = diagnose(f.m);
		expect_finding(&f, "node-unreachable", SEV_ERROR, partial ? "b" : "a");
		assert_null(f.d->sugg.gloo_ifname_per_node[partial]);
		assert_null(f.d->sugg.nccl_ifname_per_node[partial]);
		assert_null(f.d->sugg.torchrun[partial]);
		assert_string_equal(f.d->sugg.master_addr, "");
		assert_int_equal(f.d->sugg.master_port, 0);
		assert_non_null(strstr(f.d->sugg.notes, partial
		                                            ? "b: left out: it stopped answering"
		                                            : "a: left out: it stopped answering"));
		if (partial == 0)
			assert_non_null(strstr(f.d->sugg.notes, "it cannot be the master"));
		unload(&f);
	}
}

/* stale-env.json with node i's entry changed: key set to value in the
 * object at path (a node member, then an optional member of it). */
static void set_in_node(json_t *doc, size_t i, const char *member, const char *key, json_t *value)
{
	json_t *node = json_array_get(json_object_get(doc, "nodes"), i);
	json_t *where = member ? json_object_get(node, member) : node;

	assert_non_null(where);
	json_object_set_new(where, key, value);
}

static void kernel_limits_shm_torch_and_an_unanswered_python(void **state)
{
	char err[CD_ERRLEN];
	json_t *doc = json_load_file(FIXTURES "stale-env.json", 0, NULL), *facts;
	struct fx f;

	assert_non_null(doc);
	/* s1: the neighbour table overflowed during the matrix; /dev/shm 64 MiB */
	set_in_node(doc, 0, NULL, "neigh_table_fulls", json_integer(7));
	set_in_node(doc, 0, "probe", "shm_bytes", json_integer(64 << 20));
	/* s2: gc_thresh3 below its 3 peers; torch not installed */
	set_in_node(doc, 1, "probe", "neigh_gc_thresh3", json_pack("{sisn}", "inet", 2, "inet6"));
	set_in_node(doc, 1, "facts", "torch", json_null());
	/* s3: python did not answer: torch unknown, not missing */
	facts = json_object_get(json_array_get(json_object_get(doc, "nodes"), 2), "facts");
	json_object_set_new(facts, "torch", json_null());
	json_object_set_new(facts, "errors",
	                    json_pack("{ss}", "python", "python3 did not answer within 20.0 s"));
	f.m = netmodel_load_json(doc, err, sizeof(err));
	json_decref(doc);
	assert_non_null(f.m);
	f.d = diagnose(f.m);

	expect_finding(&f, "neigh-table-overflow", SEV_ERROR, "s1,s2");
	assert_non_null(strstr(evidence(&f, "neigh-table-overflow"), "full 7 times"));
	assert_non_null(strstr(evidence(&f, "neigh-table-overflow"),
	                       "net.ipv4.neigh.default.gc_thresh3 = 2, peers: 3"));
	expect_finding(&f, "shm-small", SEV_WARNING, "s1");
	expect_finding(&f, "torch-missing", SEV_ERROR, "s2");
	expect_finding(&f, "probe-incomplete", SEV_WARNING, "s3");
	assert_non_null(strstr(evidence(&f, "probe-incomplete"), "s3: python3 did not answer"));
	unload(&f);
}

/* The finding with this id (the first), for its fix text. */
static const struct finding *finding(const struct fx *f, const char *id)
{
	for (size_t k = 0; k < f->d->nfindings; k++)
		if (strcmp(f->d->findings[k].id, id) == 0)
			return &f->d->findings[k];
	fail_msg("no finding %s", id);
	return NULL;
}

/* stale-env.json where s2's /usr/bin/python3 has no torch; with found, the
 * agent found torch in ~/miniconda3/envs/ml there. */
static void load_torch_missing(struct fx *f, const char *found, const char *found2)
{
	char err[CD_ERRLEN];
	json_t *doc = json_load_file(FIXTURES "stale-env.json", 0, NULL), *c = json_array();

	assert_non_null(doc);
	set_in_node(doc, 1, "facts", "torch", json_null());
	set_in_node(doc, 1, "facts", "python",
	            json_pack("{ssss}", "path", "/usr/bin/python3", "version", "3.11.2"));
	if (found)
		json_array_append_new(c, json_pack("{ssss}", "path", found, "version", "3.11.2"));
	if (found2)
		json_array_append_new(c, json_pack("{ssss}", "path", found2, "version", "3.10.12"));
	set_in_node(doc, 1, "facts", "python_candidates", c);
	f->m = netmodel_load_json(doc, err, sizeof(err));
	json_decref(doc);
	assert_non_null(f->m);
	f->d = diagnose(f->m);
}

static void torch_missing_names_the_interpreter_found_and_the_python_to_pass(void **state)
{
	struct fx f;

	load_torch_missing(&f, "/home/u/miniconda3/envs/ml/bin/python", "/home/u/.venv/bin/python");
	expect_finding(&f, "torch-missing", SEV_ERROR, "s2");
	assert_string_equal(evidence(&f, "torch-missing"),
	                    "s2: /usr/bin/python3 3.11.2 has no torch; torch is in "
	                    "/home/u/miniconda3/envs/ml/bin/python (Python 3.11.2) and 1 more\n");
	assert_non_null(strstr(finding(&f, "torch-missing")->fix,
	                       "Pass --python /home/u/miniconda3/envs/ml/bin/python to clusterdoc "
	                       "facts, check, mnist, run and tui"));
	unload(&f);
}

static void torch_missing_without_a_candidate_says_what_to_install(void **state)
{
	struct fx f;

	load_torch_missing(&f, NULL, NULL);
	assert_string_equal(evidence(&f, "torch-missing"),
	                    "s2: /usr/bin/python3 3.11.2 has no torch\n");
	assert_non_null(strstr(finding(&f, "torch-missing")->fix, "Install the same torch"));
	unload(&f);
}

static void ipv6_only_cluster_is_healthy_and_suggested_its_ipv6_addresses(void **state)
{
	struct fx f;
	char url[64];

	load(&f, "ipv6-only.json");
	assert_int_equal(f.d->nfindings, 0);
	assert_null(f.d->sugg.notes);
	assert_string_equal(f.d->pred[1].data_iface, "eth0");
	assert_string_equal(f.d->pred[1].data_addr, "fd00:db8::2");
	assert_string_equal(f.d->sugg.master_addr, "fd00:db8::1");
	assert_int_equal(f.d->sugg.master_port, 29500);
	assert_int_equal(diagnose_sugg_init_method(&f.d->sugg, url, sizeof(url)), 0);
	assert_string_equal(url, "tcp://[fd00:db8::1]:29500");
	assert_string_equal(f.d->sugg.nccl_ifname, "eth0");
	/* NCCL's own pick on eth0 is the proved address: no family */
	assert_null(diagnose_sugg_family(&f.d->sugg));
	assert_string_equal(f.d->sugg.gloo_ifname_per_node[0], "eth0");
	assert_string_equal(f.d->sugg.gloo_ifname_per_node[1], "eth0");
	assert_string_equal(f.d->sugg.torchrun[1],
	                    "torchrun --nnodes=2 --node_rank=1 --nproc_per_node=1 "
	                    "--master_addr=fd00:db8::1 --master_port=29500 train.py");
	unload(&f);
}

/* Put an IPv4 address that no peer reached before every other address of
 * node i's eth0: NCCL, free to take any family, takes it first. */
static void load_ipv6_with_stray_ipv4(struct fx *f, size_t i)
{
	char err[CD_ERRLEN] = "";
	json_error_t jerr;
	json_t *doc, *addrs;

	doc = json_load_file(FIXTURES "ipv6-only.json", 0, &jerr);
	if (!doc)
		fail_msg("%s", jerr.text);
	addrs = json_object_get(
	    json_object_get(json_array_get(json_object_get(doc, "nodes"), i), "probe"),
	    "addresses");
	json_array_insert_new(addrs, 1,
	                      json_pack("{sssssssisssi}", "ifname", "eth0", "family", "inet",
	                                "address", "192.0.2.2", "prefix", 24, "scope", "global",
	                                "scope_id", 0));
	f->m = netmodel_load_json(doc, err, sizeof(err));
	json_decref(doc);
	if (!f->m)
		fail_msg("%s", err);
	f->d = diagnose(f->m);
}

static void ipv6_data_with_an_unreachable_ipv4_needs_af_inet6_never_af_inet(void **state)
{
	struct fx f;

	load_ipv6_with_stray_ipv4(&f, 1);
	/* what NCCL picks today on gpu2: the IPv4 address nobody reached */
	assert_string_equal(f.d->pred[1].bootstrap.picks[0].addr, "192.0.2.2");
	assert_string_equal(f.d->pred[1].data_addr, "fd00:db8::2");
	assert_false(f.d->sugg.nccl_family_inet);
	assert_true(f.d->sugg.nccl_family_inet6);
	assert_string_equal(diagnose_sugg_family(&f.d->sugg), "AF_INET6");
	assert_string_equal(f.d->sugg.nccl_ifname_per_node[0], "eth0");
	assert_string_equal(f.d->sugg.nccl_ifname_per_node[1], "eth0");
	assert_string_equal(f.d->sugg.master_addr, "fd00:db8::1");
	unload(&f);
}

static void ipv6_only_nic_beside_ipv4_data_keeps_af_inet_and_an_ipv4_master(void **state)
{
	struct fx f;
	char url[64];

	load(&f, "ib0-link-local.json");
	assert_true(f.d->sugg.nccl_family_inet);
	assert_false(f.d->sugg.nccl_family_inet6);
	assert_int_equal(diagnose_sugg_init_method(&f.d->sugg, url, sizeof(url)), 0);
	assert_string_equal(url, "tcp://10.0.0.1:29500");
	unload(&f);
}

static void every_finding_id_is_documented(void **state)
{
	FILE *fp = fopen("docs/findings.md", "r");
	static char text[1 << 16];
	size_t n;

	assert_non_null(fp);
	n = fread(text, 1, sizeof(text) - 1, fp);
	text[n] = '\0';
	fclose(fp);
	for (size_t i = 0; i < finding_catalogue_len; i++) {
		char heading[96];

		snprintf(heading, sizeof(heading), "## %s\n", finding_catalogue[i].id);
		if (!strstr(text, heading))
			fail_msg("docs/findings.md has no section \"## %s\"",
			         finding_catalogue[i].id);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(ib0_with_only_link_local_is_flagged_and_excluded),
	    cmocka_unit_test(the_masters_own_path_dropped_is_master_port_blocked_on_the_master),
	    cmocka_unit_test(the_suggested_master_port_is_one_the_master_itself_reached),
	    cmocka_unit_test(the_masters_own_path_open_is_no_finding_and_keeps_the_port),
	    cmocka_unit_test(bulk_stall_is_a_black_hole_and_the_other_nic_is_suggested),
	    cmocka_unit_test(bulk_stall_where_full_frames_pass_is_slow_not_a_black_hole),
	    cmocka_unit_test(bulk_stall_where_the_probe_proves_a_smaller_frame_is_a_black_hole),
	    cmocka_unit_test(virbr_and_veth_on_old_nccl),
	    cmocka_unit_test(duplicate_address_evidence_is_one_line_per_address),
	    cmocka_unit_test(duplicate_address_on_four_nodes_folds_them),
	    cmocka_unit_test(duplicate_address_on_differently_named_interfaces_groups_them),
	    cmocka_unit_test(different_names_need_an_exact_list_when_a_prefix_overmatches),
	    cmocka_unit_test(two_nics_on_one_subnet_route_through_the_other),
	    cmocka_unit_test(stale_env_wrong_gloo_syntax_version_skew_and_a_dead_node),
	    cmocka_unit_test(no_matrix_means_no_suggestion),
	    cmocka_unit_test(partial_node_is_left_out_and_never_the_master),
	    cmocka_unit_test(kernel_limits_shm_torch_and_an_unanswered_python),
	    cmocka_unit_test(torch_missing_names_the_interpreter_found_and_the_python_to_pass),
	    cmocka_unit_test(torch_missing_without_a_candidate_says_what_to_install),
	    cmocka_unit_test(a_slow_node_is_probe_incomplete_not_unreachable),
	    cmocka_unit_test(a_clean_cluster_has_no_route_findings),
	    cmocka_unit_test(a_stale_route_names_only_its_node),
	    cmocka_unit_test(two_nics_in_one_subnet_with_strict_rp_filter_is_an_error_on_its_node),
	    cmocka_unit_test(a_route_order_that_prefers_the_other_nic_names_only_its_node),
	    cmocka_unit_test(a_route_order_node_is_not_suggested_the_nic_its_traffic_leaves_beside),
	    cmocka_unit_test(a_stale_route_node_is_suggested_nothing_its_route_refutes),
	    cmocka_unit_test(a_stale_route_target_is_still_suggested_its_own_nic),
	    cmocka_unit_test(every_route_trap_together_is_named_on_exactly_its_node),
	    cmocka_unit_test(ipv6_only_cluster_is_healthy_and_suggested_its_ipv6_addresses),
	    cmocka_unit_test(ipv6_data_with_an_unreachable_ipv4_needs_af_inet6_never_af_inet),
	    cmocka_unit_test(ipv6_only_nic_beside_ipv4_data_keeps_af_inet_and_an_ipv4_master),
	    cmocka_unit_test(every_finding_id_is_documented),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
