/* SPDX-License-Identifier: MIT */
/*
 * test_nccl_ib.c - the prediction of NCCL's IB transport (probes/nccl_ib.h)
 * from hand-written "rdma"/"rdma_node" JSON in the agent's shape
 * (docs/nccl.md), and the reading of NCCL's own
 * NCCL_DEBUG=INFO lines. Each row of the tables is one test, named for the
 * behaviour, and cites the NCCL rule it pins:
 *   env: docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html
 *   src: NVIDIA/nccl src/transport/net_ib.cc (net_ib/init.cc and
 *        net_ib/connect.cc since 2.23) and src/misc/utils.cc.
 */
#include "probes/nccl_ib.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the ports, as the agent's netprobe writes them ---- */

#define IBPORT(dev, port, state)                                                                   \
	"{\"device\":\"" dev "\",\"port\":" #port ",\"state\":\"" state                            \
	"\",\"phys_state\":\"LinkUp\",\"link_layer\":\"InfiniBand\",\"rate\":\"200 Gb/sec (4X "    \
	"HDR)\",\"rate_gbps\":200,\"width\":\"4X\",\"lid\":\"0x12\",\"sm_lid\":\"0x1\",\"gids\":[" \
	"{"                                                                                        \
	"\"index\":0,\"gid\":\"fe80:0000:0000:0000:0c42:a103:0003:0001\",\"type\":null,"           \
	"\"ndev\":null,\"family\":\"ib\",\"address\":null}]}"

/* An ACTIVE HDR port of an HCA bound to mlx5_core, with the provider the
 * agent found for it (rdma_libs.h): "\"mlx5\"" or "null". */
#define IBPORT_PROV(dev, prov)                                                               \
	"{\"device\":\"" dev "\",\"port\":1,\"state\":\"ACTIVE\",\"phys_state\":\"LinkUp\"," \
	"\"link_layer\":\"InfiniBand\",\"driver\":\"mlx5_core\",\"provider\":" prov          \
	",\"gids\":[]}"

#define HDR8                                                                                                              \
	"[" IBPORT("mlx5_0", 1, "ACTIVE") "," IBPORT("mlx5_1", 1, "ACTIVE") "," IBPORT("mlx5_2", 1, "ACTIVE") "," IBPORT( \
	    "mlx5_3", 1,                                                                                                  \
	    "ACTIVE") "," IBPORT("mlx5_4", 1,                                                                             \
	                         "ACTIVE") "," IBPORT("mlx5_5", 1,                                                        \
	                                              "ACTIVE") "," IBPORT("mlx5_6", 1,                                   \
	                                                                   "ACTIVE") "," IBPORT("mlx5_7",                 \
	                                                                                        1,                        \
	                                                                                        "ACTIVE") "]"

#define GID(i, text, type, fam, addr)                                                       \
	"{\"index\":" #i ",\"gid\":\"" text "\",\"type\":\"" type "\",\"ndev\":\"ens1f0\"," \
	"\"family\":\"" fam "\",\"address\":" addr "}"

#define LL_V1(i)                                                                      \
	GID(i, "fe80:0000:0000:0000:a288:c2ff:fe3b:506a", "IB/RoCE v1", "link-local", \
	    "\"fe80::a288:c2ff:fe3b:506a\"")
#define LL_V2(i)                                                                   \
	GID(i, "fe80:0000:0000:0000:a288:c2ff:fe3b:506a", "RoCE v2", "link-local", \
	    "\"fe80::a288:c2ff:fe3b:506a\"")
#define V4_V1(i, hex, dot) \
	GID(i, "0000:0000:0000:0000:0000:ffff:" hex, "IB/RoCE v1", "ipv4", "\"" dot "\"")
#define V4_V2(i, hex, dot) \
	GID(i, "0000:0000:0000:0000:0000:ffff:" hex, "RoCE v2", "ipv4", "\"" dot "\"")
#define V6_V1(i) \
	GID(i, "fd00:0000:0000:0000:0000:0000:0000:0005", "IB/RoCE v1", "ipv6", "\"fd00::5\"")
#define V6_V2(i) GID(i, "fd00:0000:0000:0000:0000:0000:0000:0005", "RoCE v2", "ipv6", "\"fd00::5\"")

#define ROCEPORT(dev, port, state, gids)                                                      \
	"{\"device\":\"" dev "\",\"port\":" #port ",\"state\":\"" state                       \
	"\",\"phys_state\":\"LinkUp\",\"link_layer\":\"Ethernet\",\"rate\":\"100 Gb/sec (4X " \
	"EDR)\","                                                                             \
	"\"netdev\":\"ens1f0\",\"mtu\":9000,\"gids\":[" gids "]}"

/* The GID table of ConnectX ports with one IPv4 address: index 3 is the
 * IPv4 RoCE v2 entry (roce-v2-idx3) or index 1 (roce-v2-idx1). */
#define GIDS_IDX3 \
	LL_V1(0)  \
	"," LL_V2(1) "," V4_V1(2, "0a00:0b0c", "10.0.11.12") "," V4_V2(3, "0a00:0b0c", "10.0.11.12")
#define GIDS_IDX1 \
	LL_V1(0) "," V4_V2(1, "0a00:0c0d", "10.0.12.13") "," V4_V1(2, "0a00:0c0d", "10.0.12.13")
#define GIDS_MIXED                                                                            \
	LL_V1(0)                                                                              \
	"," LL_V2(1) "," V4_V1(2, "0a00:0b0c", "10.0.11.12") "," V4_V2(                       \
	    3, "0a00:0b0c", "10.0.11.12") "," V6_V1(4) "," V6_V2(5) "," V4_V2(6, "c0a8:0105", \
	                                                                      "192.168.1.5")

#define VERBS  "{\"verbs_lib\":\"/usr/lib/x86_64-linux-gnu/libibverbs.so.1\",\"nccl_vars\":{}}"
#define NOVERB "{\"verbs_lib\":null,\"verbs_providers\":[],\"nccl_vars\":{}}"
#define VERBS_ENV(vars) \
	"{\"verbs_lib\":\"/usr/lib/x86_64-linux-gnu/libibverbs.so.1\",\"nccl_vars\":{" vars "}}"

struct row {
	const char *name;
	const char *rule; /* the NCCL rule pinned, with its source */
	const char *rdma, *node, *conf, *version;
	const char *transport;
	const char *devs; /* "dev:port" for IB, "dev:port/gidN" for RoCE, space-separated */
	const char *reason;
};

static const struct row rows[] = {
    {"ib_hdr_with_8_hcas_uses_every_active_port",
     "src ncclIbInit: every ACTIVE port with link layer IB or Ethernet is a device", HDR8, VERBS,
     NULL, "2.21.5", "ib",
     "mlx5_0:1 mlx5_1:1 mlx5_2:1 mlx5_3:1 mlx5_4:1 mlx5_5:1 mlx5_6:1 mlx5_7:1",
     "default: every ACTIVE port"},
    {"roce_v2_picks_index_3_where_the_ipv4_v2_gid_is_3",
     "src ncclIbGetGidIndex/ncclUpdateGidIndex; env NCCL_IB_ROCE_VERSION_NUM default 2, "
     "NCCL_IB_ADDR_FAMILY default AF_INET",
     "[" ROCEPORT("mlx5_0", 1, "ACTIVE", GIDS_IDX3) "]", VERBS, NULL, "2.21.5", "ib",
     "mlx5_0:1/gid3", NULL},
    {"roce_v2_picks_index_1_where_the_ipv4_v2_gid_is_1",
     "src ncclUpdateGidIndex: a v1 entry of the same family does not replace a v2 one",
     "[" ROCEPORT("mlx5_0", 1, "ACTIVE", GIDS_IDX1) "]", VERBS, NULL, NULL, "ib", "mlx5_0:1/gid1",
     NULL},
    {"a_port_in_init_polling_is_left_out",
     "src ncclIbInit: portAttr.state != IBV_PORT_ACTIVE is skipped",
     "[" IBPORT("mlx5_0", 1, "ACTIVE") "," IBPORT("mlx5_1", 1, "INIT") "]", VERBS, NULL, NULL, "ib",
     "mlx5_0:1", NULL},
    {"no_active_port_falls_back_to_socket",
     "src ncclIbInit: no device -> \"NET/IB : No device found.\", NET/Socket",
     "[" IBPORT("mlx5_0", 1, "INIT") "]", VERBS, NULL, NULL, "socket", "", "no ACTIVE port"},
    {"no_libibverbs_falls_back_to_socket",
     "src ncclIbInit: wrap_ibv_symbols fails -> ncclInternalError, NET/Socket", HDR8, NOVERB, NULL,
     NULL, "socket", "", "no libibverbs"},
    {"hcas_without_their_verbs_provider_are_not_seen_and_nccl_falls_back",
     "rdma-core libibverbs/init.c: ibv_get_device_list lists only the devices a provider of "
     "/etc/libibverbs.d claims; src ncclIbInit: no device -> \"NET/IB : No device found.\", "
     "NET/Socket",
     "[" IBPORT_PROV("mlx5_0", "null") "," IBPORT_PROV("mlx5_1", "null") "]", VERBS, NULL, NULL,
     "socket", "", "no verbs provider for mlx5_0, mlx5_1"},
    {"an_hca_with_its_provider_is_used_beside_one_without",
     "rdma-core: only the served device is listed; src ncclIbInit: every listed ACTIVE port",
     "[" IBPORT_PROV("mlx5_0", "\"mlx5\"") "," IBPORT_PROV("mlx5_1", "null") "]", VERBS, NULL, NULL,
     "ib", "mlx5_0:1", NULL},
    {"nccl_ib_hca_naming_a_missing_hca_falls_back_and_lists_the_node_s_hcas",
     "env NCCL_IB_HCA; src matchIfList: no match, no device",
     "[" IBPORT("mlx5_0", 1, "ACTIVE") "," IBPORT("mlx5_1", 1, "ACTIVE") "]",
     VERBS_ENV("\"NCCL_IB_HCA\":\"mlx5_9\""), NULL, NULL, "socket", "",
     "NCCL_IB_HCA=mlx5_9 (from environment) matches no HCA of the node (mlx5_0, mlx5_1)"},
    {"nccl_ib_disable_1_falls_back_to_socket",
     "env NCCL_IB_DISABLE=1; src ncclIbInit returns at once", HDR8,
     VERBS_ENV("\"NCCL_IB_DISABLE\":\"1\""), NULL, NULL, "socket", "",
     "NCCL_IB_DISABLE=1 (from environment)"},
    {"nccl_ib_disable_with_text_after_the_1_still_disables",
     "src param.cc ncclLoadParam: strtoll(str, NULL, 0), text after the number ignored", HDR8,
     VERBS_ENV("\"NCCL_IB_DISABLE\":\"1 # off\""), NULL, NULL, "socket", "",
     "NCCL_IB_DISABLE=1 # off (from environment)"},
    {"a_gid_index_that_is_not_a_number_reads_as_0",
     "src param.cc ncclLoadParam: strtoll gives 0 without errno for text",
     "[" ROCEPORT("mlx5_0", 1, "ACTIVE", GIDS_IDX3) "]",
     VERBS_ENV("\"NCCL_IB_GID_INDEX\":\"auto\""), NULL, NULL, "ib", "mlx5_0:1/gid0", NULL},
    {"nccl_ib_disable_0_keeps_ib", "env NCCL_IB_DISABLE: only a non-zero value disables",
     "[" IBPORT("mlx5_0", 1, "ACTIVE") "]", VERBS_ENV("\"NCCL_IB_DISABLE\":\"0\""), NULL, NULL,
     "ib", "mlx5_0:1", NULL},
    {"caret_excludes_by_prefix_mlx5_1_and_mlx5_10",
     "env NCCL_IB_HCA '^': exclude; src matchIf: strncmp over the item's length",
     "[" IBPORT("mlx5_0", 1, "ACTIVE") "," IBPORT("mlx5_1", 1, "ACTIVE") "," IBPORT("mlx5_10", 1,
                                                                                    "ACTIVE") "]",
     VERBS_ENV("\"NCCL_IB_HCA\":\"^mlx5_1\""), NULL, NULL, "ib", "mlx5_0:1", NULL},
    {"equals_with_port_keeps_exactly_that_port",
     "env NCCL_IB_HCA '=mlx5_0:1': exact name, port 1 only; src parseStringList",
     "[" IBPORT("mlx5_0", 1, "ACTIVE") "," IBPORT("mlx5_0", 2, "ACTIVE") "," IBPORT("mlx5_00", 1,
                                                                                    "ACTIVE") "]",
     VERBS_ENV("\"NCCL_IB_HCA\":\"=mlx5_0:1\""), NULL, NULL, "ib", "mlx5_0:1", NULL},
    {"a_plain_item_is_a_prefix", "env NCCL_IB_HCA 'mlx5': every card starting with mlx5",
     "[" IBPORT("mlx5_1", 1, "ACTIVE") "," IBPORT("mlx5_10", 1, "ACTIVE") "," IBPORT("irdma0", 1,
                                                                                     "ACTIVE") "]",
     VERBS_ENV("\"NCCL_IB_HCA\":\"mlx5_1\""), NULL, NULL, "ib", "mlx5_1:1 mlx5_10:1", NULL},
    {"a_caret_alone_excludes_every_port", "src ncclIbInit: no item matches all, '^' inverts it",
     "[" IBPORT("mlx5_0", 1, "ACTIVE") "]", VERBS_ENV("\"NCCL_IB_HCA\":\"^\""), NULL, NULL,
     "socket", "", "NCCL_IB_HCA=^ (from environment) excludes every ACTIVE port (mlx5_0)"},
    {"nccl_ib_hca_naming_only_a_down_port_says_so",
     "src ncclIbInit: the state test comes before the NCCL_IB_HCA match",
     "[" IBPORT("mlx5_0", 1, "ACTIVE") "," IBPORT("mlx5_1", 1, "DOWN") "]",
     VERBS_ENV("\"NCCL_IB_HCA\":\"=mlx5_1\""), NULL, NULL, "socket", "",
     "NCCL_IB_HCA==mlx5_1 (from environment) matches only ports that are not ACTIVE (mlx5_0, "
     "mlx5_1)"},
    {"nccl_gid_index_wins_over_the_selection",
     "env NCCL_IB_GID_INDEX; src ncclIbGetGidIndex: >= 0 is used as is",
     "[" ROCEPORT("mlx5_0", 1, "ACTIVE", GIDS_IDX3) "]", VERBS_ENV("\"NCCL_IB_GID_INDEX\":\"2\""),
     NULL, NULL, "ib", "mlx5_0:1/gid2", NULL},
    {"before_2_21_the_default_gid_index_is_0",
     "src 2.20 net_ib.cc NCCL_PARAM(IbGidIndex, \"IB_GID_INDEX\", 0); env: selection since 2.21",
     "[" ROCEPORT("mlx5_0", 1, "ACTIVE", GIDS_IDX3) "]", VERBS, NULL, "2.20.5", "ib",
     "mlx5_0:1/gid0", NULL},
    {"af_inet6_picks_the_ipv6_v2_gid", "env NCCL_IB_ADDR_FAMILY=AF_INET6; src ncclUpdateGidIndex",
     "[" ROCEPORT("mlx5_0", 1, "ACTIVE", GIDS_MIXED) "]",
     VERBS_ENV("\"NCCL_IB_ADDR_FAMILY\":\"AF_INET6\""), NULL, NULL, "ib", "mlx5_0:1/gid5", NULL},
    {"roce_version_1_picks_the_ipv4_v1_gid",
     "env NCCL_IB_ROCE_VERSION_NUM=1; src ncclUpdateGidIndex",
     "[" ROCEPORT("mlx5_0", 1, "ACTIVE", GIDS_IDX3) "]",
     VERBS_ENV("\"NCCL_IB_ROCE_VERSION_NUM\":\"1\""), NULL, NULL, "ib", "mlx5_0:1/gid2", NULL},
    {"addr_range_keeps_the_gid_inside_it", "env NCCL_IB_ADDR_RANGE; src matchGidAddrPrefix",
     "[" ROCEPORT("mlx5_0", 1, "ACTIVE", GIDS_MIXED) "]",
     VERBS_ENV("\"NCCL_IB_ADDR_RANGE\":\"192.168.1.0/24\""), NULL, NULL, "ib", "mlx5_0:1/gid6",
     NULL},
    {"the_environment_wins_over_nccl_conf",
     "env: /etc/nccl.conf is read without overriding the environment",
     "[" IBPORT("mlx5_0", 1, "ACTIVE") "," IBPORT("mlx5_1", 1, "ACTIVE") "]",
     VERBS_ENV("\"NCCL_IB_HCA\":\"=mlx5_1\""),
     "[{\"path\":\"/etc/nccl.conf\",\"vars\":{\"NCCL_IB_HCA\":\"=mlx5_0\",\"NCCL_IB_DISABLE\":"
     "\"0\"}}]",
     NULL, "ib", "mlx5_1:1", "NCCL_IB_HCA==mlx5_1 (from environment)"},
    {"nccl_conf_applies_when_the_environment_lacks_it",
     "env: /etc/nccl.conf sets what the environment does not", HDR8, VERBS,
     "[{\"path\":\"/etc/nccl.conf\",\"vars\":{\"NCCL_IB_DISABLE\":\"1\"}}]", NULL, "socket", "",
     "NCCL_IB_DISABLE=1 (from /etc/nccl.conf)"},
    {"nccl_net_socket_skips_ib", "src net.cc ncclNetInit: NCCL_NET compared with strcasecmp", HDR8,
     VERBS_ENV("\"NCCL_NET\":\"socket\""), NULL, NULL, "socket", "",
     "NCCL_NET=socket (from environment)"},
    {"an_unreadable_port_is_named_and_the_rest_goes_on",
     "clusterdoc: bad input is named, the rest predicted",
     "[{\"port\":1,\"state\":\"ACTIVE\"}," IBPORT("mlx5_1", 1, "ACTIVE") "]", VERBS, NULL, NULL,
     "ib", "mlx5_1:1", NULL},
};

static void render(const struct nccl_ib_pick *p, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < p->ndevs && used < len; i++) {
		const struct nccl_ib_dev *d = &p->devs[i];

		if (d->roce)
			used += (size_t)snprintf(buf + used, len - used, "%s%s:%d/gid%d",
			                         i ? " " : "", d->dev, d->port, d->gid_index);
		else
			used += (size_t)snprintf(buf + used, len - used, "%s%s:%d", i ? " " : "",
			                         d->dev, d->port);
	}
}

static void predict_row(void **state)
{
	const struct row *r = *state;
	json_error_t je;
	json_t *rdma = json_loads(r->rdma, 0, &je), *node, *conf = NULL;
	struct nccl_ib_env e;
	struct nccl_ib_pick p;
	char devs[512];

	assert_non_null(rdma);
	node = json_loads(r->node, 0, &je);
	assert_non_null(node);
	if (r->conf) {
		conf = json_loads(r->conf, 0, &je);
		assert_non_null(conf);
	}
	nccl_ib_env_from_json(node, conf, &e);
	nccl_ib_predict(rdma, node, &e, r->version, &p);
	render(&p, devs, sizeof(devs));
	if (strcmp(nccl_ib_transport_name(p.transport), r->transport) != 0 ||
	    strcmp(devs, r->devs) != 0 || (r->reason && strcmp(p.reason, r->reason) != 0))
		print_error("    the rule: %s\n", r->rule);
	assert_string_equal(nccl_ib_transport_name(p.transport), r->transport);
	assert_string_equal(devs, r->devs);
	if (r->reason)
		assert_string_equal(p.reason, r->reason);
	json_decref(rdma);
	json_decref(node);
	json_decref(conf);
}

/* ---- NCCL's lines ---- */

static void parse_str(const char *text, struct nccl_ib_pick *p, int want_rc)
{
	assert_int_equal(nccl_ib_parse_log(text, strlen(text), p), want_rc);
}

static void the_net_ib_line_gives_devices_and_link_layers(void **state)
{
	struct nccl_ib_pick p;

	(void)state;
	parse_str(
	    "node1:123:456 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so.\n"
	    "node1:123:456 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/IB [RO]; "
	    "OOB eth0:10.0.0.1<0>\n"
	    "node1:123:456 [0] NCCL INFO Using network IB\n",
	    &p, 0);
	assert_string_equal(nccl_ib_transport_name(p.transport), "ib");
	assert_int_equal(p.ndevs, 2);
	assert_string_equal(p.devs[0].dev, "mlx5_0");
	assert_int_equal(p.devs[0].port, 1);
	assert_true(p.devs[0].roce);
	assert_string_equal(p.devs[1].dev, "mlx5_1");
	assert_false(p.devs[1].roce);
}

static void no_device_then_socket_is_the_socket_transport_with_nccl_s_reason(void **state)
{
	struct nccl_ib_pick p;

	(void)state;
	parse_str("n:1:1 [0] NCCL INFO NET/IB : No device found.\n"
	          "n:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n",
	          &p, 0);
	assert_string_equal(nccl_ib_transport_name(p.transport), "socket");
	assert_string_equal(p.reason, "NET/IB : No device found.");
	assert_string_equal(p.socket, "[0]eth0:10.0.0.1<0>");
	assert_int_equal(p.ndevs, 0);
}

static void a_missing_libibverbs_line_is_the_no_libibverbs_reason(void **state)
{
	struct nccl_ib_pick p;

	(void)state;
	parse_str("n:1:1 [0] NCCL INFO Failed to open libibverbs.so[.1]\n"
	          "n:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n"
	          "n:1:1 [0] NCCL INFO Using network Socket\n",
	          &p, 0);
	assert_string_equal(nccl_ib_transport_name(p.transport), "socket");
	assert_string_equal(p.reason, "no libibverbs");
}

static void using_network_of_a_plugin_is_named(void **state)
{
	struct nccl_ib_pick p;

	(void)state;
	parse_str("n:1:1 [0] NCCL INFO NET/Plugin: Loaded net plugin AWS Libfabric (v8)\n"
	          "n:1:1 [0] NCCL INFO Using network AWS Libfabric\n",
	          &p, 0);
	assert_string_equal(nccl_ib_transport_name(p.transport), "plugin");
	assert_string_equal(p.reason, "network AWS Libfabric");
}

static void lines_without_a_network_are_not_found(void **state)
{
	struct nccl_ib_pick p;

	(void)state;
	parse_str("hello\nNCCL version 2.21.5+cuda12.4\n", &p, -7);
	assert_string_equal(nccl_ib_transport_name(p.transport), "unknown");
}

static void predict_json(const char *rdma_text, const char *node_text, struct nccl_ib_pick *p)
{
	json_error_t je;
	json_t *rdma = json_loads(rdma_text, 0, &je), *node = json_loads(node_text, 0, &je);
	struct nccl_ib_env e;

	assert_non_null(rdma);
	assert_non_null(node);
	nccl_ib_env_from_json(node, NULL, &e);
	nccl_ib_predict(rdma, node, &e, NULL, p);
	json_decref(rdma);
	json_decref(node);
}

static void the_same_devices_compare_equal_in_any_order(void **state)
{
	struct nccl_ib_pick pred, seen;
	char why[256];

	(void)state;
	predict_json("[" IBPORT("mlx5_0", 1, "ACTIVE") "," IBPORT("mlx5_1", 1, "ACTIVE") "]", VERBS,
	             &pred);
	parse_str("NET/IB : Using [0]mlx5_1:1/IB [1]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>\n", &seen, 0);
	assert_int_equal(nccl_ib_compare(&pred, &seen, why, sizeof(why)), 0);
	assert_string_equal(why, "");
}

static void different_devices_are_named_both_ways(void **state)
{
	struct nccl_ib_pick pred, seen;
	char why[256];

	(void)state;
	predict_json("[" IBPORT("mlx5_0", 1, "ACTIVE") "," IBPORT("mlx5_1", 1, "ACTIVE") "]", VERBS,
	             &pred);
	parse_str("NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_2:1/IB ; OOB ib0:10.0.0.1<0>\n", &seen, 0);
	assert_int_equal(nccl_ib_compare(&pred, &seen, why, sizeof(why)), 1);
	assert_string_equal(why, "NCCL also used mlx5_2:1; NCCL did not use mlx5_1:1");
}

static void a_different_transport_is_said_with_both_reasons(void **state)
{
	struct nccl_ib_pick pred, seen;
	char why[320];

	(void)state;
	predict_json("[" IBPORT("mlx5_0", 1, "ACTIVE") "]", VERBS, &pred);
	parse_str("NET/IB : No device found.\nNET/Socket : Using [0]eth0:10.0.0.1<0>\n", &seen, 0);
	assert_int_equal(nccl_ib_compare(&pred, &seen, why, sizeof(why)), 1);
	assert_string_equal(
	    why, "predicted ib (mlx5_0:1), NCCL used socket (NET/IB : No device found.)");
}

static void a_prediction_without_rdma_facts_is_unknown(void **state)
{
	struct nccl_ib_pick pred, seen;
	struct nccl_ib_env e;
	char why[128];

	(void)state;
	memset(&e, 0, sizeof(e));
	nccl_ib_predict(NULL, NULL, &e, NULL, &pred);
	assert_string_equal(nccl_ib_transport_name(pred.transport), "unknown");
	parse_str("NET/Socket : Using [0]eth0:10.0.0.1<0>\n", &seen, 0);
	assert_int_equal(nccl_ib_compare(&pred, &seen, why, sizeof(why)), -1);
	assert_string_equal(why, "no prediction (no RDMA facts)");
}

static void a_forced_gid_index_the_port_lacks_is_noted(void **state)
{
	json_error_t je;
	json_t *rdma = json_loads("[" ROCEPORT("mlx5_0", 1, "ACTIVE", GIDS_IDX1) "]", 0, &je);
	json_t *node = json_loads(VERBS_ENV("\"NCCL_IB_GID_INDEX\":\"5\""), 0, &je);
	struct nccl_ib_env e;
	struct nccl_ib_pick p;

	(void)state;
	nccl_ib_env_from_json(node, NULL, &e);
	nccl_ib_predict(rdma, node, &e, NULL, &p);
	assert_int_equal(p.ndevs, 1);
	assert_int_equal(p.devs[0].gid_index, 5);
	assert_string_equal(p.devs[0].note, "no GID at index 5");
	json_decref(rdma);
	json_decref(node);
}

static void the_chosen_gid_carries_its_type_family_and_address(void **state)
{
	struct nccl_ib_pick p;

	(void)state;
	predict_json("[" ROCEPORT("mlx5_0", 1, "ACTIVE", GIDS_IDX3) "]", VERBS, &p);
	assert_int_equal(p.devs[0].gid_index, 3);
	assert_int_equal(p.devs[0].gid_type, 2);
	assert_string_equal(p.devs[0].gid_family, "ipv4");
	assert_string_equal(p.devs[0].gid_address, "10.0.11.12");
}

static void an_unreadable_port_is_named_in_errors(void **state)
{
	struct nccl_ib_pick p;

	(void)state;
	predict_json("[{\"port\":1,\"state\":\"ACTIVE\"}," IBPORT("mlx5_1", 1, "ACTIVE") "]", VERBS,
	             &p);
	assert_string_equal(p.errors, "rdma[0]: a port without device name or number");
}

static void an_unreadable_gid_is_named_per_hca_and_port_and_the_rest_is_weighed(void **state)
{
	struct nccl_ib_pick p;

	(void)state;
	predict_json("[" ROCEPORT("mlx5_0", 1, "ACTIVE",
	                          LL_V1(0) ",{\"index\":2,\"gid\":\"not-a-gid\"}," V4_V2(
	                              3, "0a00:0b0c", "10.0.11.12")) "]",
	             VERBS, &p);
	assert_string_equal(p.errors, "mlx5_0/1: GID 2 \"not-a-gid\" unreadable");
	assert_int_equal(p.ndevs, 1);
	assert_int_equal(p.devs[0].gid_index, 3);
}

int main(void)
{
	enum { NROWS = sizeof(rows) / sizeof(rows[0]) };
	static struct CMUnitTest tests[NROWS + 16];
	const struct CMUnitTest fixed[] = {
	    cmocka_unit_test(the_net_ib_line_gives_devices_and_link_layers),
	    cmocka_unit_test(no_device_then_socket_is_the_socket_transport_with_nccl_s_reason),
	    cmocka_unit_test(a_missing_libibverbs_line_is_the_no_libibverbs_reason),
	    cmocka_unit_test(using_network_of_a_plugin_is_named),
	    cmocka_unit_test(lines_without_a_network_are_not_found),
	    cmocka_unit_test(the_same_devices_compare_equal_in_any_order),
	    cmocka_unit_test(different_devices_are_named_both_ways),
	    cmocka_unit_test(a_different_transport_is_said_with_both_reasons),
	    cmocka_unit_test(a_prediction_without_rdma_facts_is_unknown),
	    cmocka_unit_test(a_forced_gid_index_the_port_lacks_is_noted),
	    cmocka_unit_test(the_chosen_gid_carries_its_type_family_and_address),
	    cmocka_unit_test(an_unreadable_port_is_named_in_errors),
	    cmocka_unit_test(an_unreadable_gid_is_named_per_hca_and_port_and_the_rest_is_weighed),
	};
	size_t n = 0;

	for (size_t i = 0; i < NROWS; i++) {
		tests[n].name = rows[i].name;
		tests[n].test_func = predict_row;
		tests[n].initial_state = (void *)&rows[i];
		n++;
	}
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		tests[n++] = fixed[i];
	return _cmocka_run_group_tests("test_nccl_ib", tests, n, NULL, NULL);
}
