/* SPDX-License-Identifier: MIT */
/*
 * test_expect.c - the [expect] keys (probes/expect.h): each row's parser on
 * good and bad values, an unknown key, and each row's finding
 * (probes/diagnose_expect.c) on a one-node model: met, not met (with its
 * evidence), and not declared.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cd.h"
#include "probes/diagnose.h"
#include "probes/expect.h"

struct parse_case {
	const char *key, *value;
	const char *err; /* NULL: accepted */
};

static const struct parse_case parse_cases[] = {
    {"gpus", "8", NULL},
    {"gpus", "0", "gpus = 0: a whole number of GPUs from 1 to 1024"},
    {"gpus", "8x", "gpus = 8x: a whole number of GPUs from 1 to 1024"},
    {"gpus", "-1", "gpus = -1: a whole number of GPUs from 1 to 1024"},
    {"ib-rate", "200", NULL},
    {"ib-rate", "200Gb", "ib-rate = 200Gb: a whole number of Gb/s from 1 to 100000"},
    {"mtu", "9000", NULL},
    {"mtu", "65537", "mtu = 65537: a whole number of bytes from 68 to 65536"},
    {"driver", "550.54.15", NULL},
    {"driver", "550..54", "driver = 550..54: a version as nvidia-smi prints it (550.54.15)"},
    {"driver", "r550", "driver = r550: a version as nvidia-smi prints it (550.54.15)"},
    {"drivers", "550", "unknown key drivers in [expect]; the keys are gpus, ib-rate, mtu, driver"},
};

static void each_key_takes_its_values_and_names_a_bad_one(void **state)
{
	for (size_t i = 0; i < CD_ARRAY_LEN(parse_cases); i++) {
		const struct parse_case *c = &parse_cases[i];
		struct expect e = {0};
		char err[CD_ERRLEN] = "";
		int rc = expect_set(&e, c->key, c->value, err, sizeof(err));

		if (!c->err) {
			assert_int_equal(rc, 0);
			assert_true(expect_declared(&e));
		} else {
			assert_int_equal(rc, CD_ERR_PARSE);
			assert_string_equal(err, c->err);
			assert_false(expect_declared(&e));
		}
	}
}

static void every_row_has_a_finding_in_the_catalogue_and_a_schema_key(void **state)
{
	const struct option *o = expect_options();

	for (size_t i = 0; i < expect_keys_len; i++) {
		int found = 0;

		for (size_t c = 0; c < finding_catalogue_len; c++)
			found |= strcmp(finding_catalogue[c].id, expect_keys[i].id) == 0 &&
			         finding_catalogue[c].severity == SEV_ERROR;
		assert_true(found);
		assert_string_equal(o[i].name, expect_keys[i].key);
		assert_int_equal(o[i].has_arg, required_argument);
	}
	assert_null(o[expect_keys_len].name);
}

/* One node "n1": eth0 up with a global address at MTU 1500, lo; two GPUs
 * on driver 550.54.15; mlx5_0/1 ACTIVE at 200 Gb/s and mlx5_1/1 ACTIVE at
 * 100 Gb/s (InfiniBand), mlx5_2/1 DOWN. */
static struct netmodel *one_node(void)
{
	const char *hosts[] = {"n1"};
	struct netmodel *m = netmodel_new(hosts, 1);
	struct nm_node *n = &m->nodes[0];

	n->probed = 1;
	n->nifaces = 2;
	n->ifaces = calloc(2, sizeof(*n->ifaces));
	n->ifaces[0] = (struct nm_iface){.name = "lo", .up = 1, .loopback = 1, .mtu = 65536};
	n->ifaces[1] = (struct nm_iface){.name = "eth0", .up = 1, .running = 1, .mtu = 1500};
	n->naddrs = 1;
	n->addrs = calloc(1, sizeof(*n->addrs));
	n->addrs[0] = (struct nm_addr){
	    .ifname = "eth0", .family = 2, .addr = "10.0.0.1", .prefix = 24, .scope = "global"};
	n->nvidia = json_pack("{s:[{s:i},{s:i}], s:s}", "gpus", "index", 0, "index", 1,
	                      "gpu_driver", "550.54.15");
	n->rdma =
	    json_pack("{s:[{s:s,s:i,s:s,s:s,s:i},{s:s,s:i,s:s,s:s,s:i},{s:s,s:i,s:s,s:s,s:i}]}",
	              "rdma", "device", "mlx5_0", "port", 1, "state", "ACTIVE", "link_layer",
	              "InfiniBand", "rate_gbps", 200, "device", "mlx5_1", "port", 1, "state",
	              "ACTIVE", "link_layer", "InfiniBand", "rate_gbps", 100, "device", "mlx5_2",
	              "port", 1, "state", "DOWN", "link_layer", "InfiniBand", "rate_gbps", 10);
	return m;
}

/* The finding id of m's diagnosis under e: its evidence, or NULL. */
static char *finding_under(const char *key, const char *value, const char *id)
{
	struct netmodel *m = one_node();
	struct diagnosis *d;
	char err[CD_ERRLEN];
	char *ev = NULL;

	assert_int_equal(expect_set(&m->expect, key, value, err, sizeof(err)), 0);
	d = diagnose(m);
	for (size_t k = 0; k < d->nfindings; k++)
		if (strcmp(d->findings[k].id, id) == 0) {
			assert_int_equal(d->findings[k].severity, SEV_ERROR);
			assert_int_equal(d->findings[k].nnodes, 1);
			ev = cd_strdup(d->findings[k].evidence);
		}
	diagnosis_free(d);
	netmodel_free(m);
	return ev;
}

struct finding_case {
	const char *key, *value, *id;
	const char *evidence; /* NULL: met, no finding */
};

static const struct finding_case finding_cases[] = {
    {"gpus", "2", "expect-gpus", NULL},
    {"gpus", "8", "expect-gpus", "n1: NVML lists 2 GPUs, [expect] gpus = 8"},
    {"ib-rate", "100", "expect-ib-rate", NULL},
    {"ib-rate", "200", "expect-ib-rate", "n1: [expect] ib-rate = 200 Gb/s; mlx5_1/1 at 100 Gb/s"},
    {"mtu", "1500", "expect-mtu", NULL},
    {"mtu", "9000", "expect-mtu", "n1: [expect] mtu = 9000; eth0 mtu 1500"},
    {"driver", "550.54.15", "expect-driver", NULL},
    {"driver", "535.104.05", "expect-driver",
     "n1: NVIDIA driver 550.54.15, [expect] driver = 535.104.05"},
};

static void each_row_is_an_error_with_evidence_only_when_unmet(void **state)
{
	for (size_t i = 0; i < CD_ARRAY_LEN(finding_cases); i++) {
		const struct finding_case *c = &finding_cases[i];
		char *ev = finding_under(c->key, c->value, c->id);

		if (!c->evidence)
			assert_null(ev);
		else
			assert_string_equal(ev, c->evidence);
		free(ev);
	}
}

static void nothing_declared_is_no_expect_finding(void **state)
{
	struct netmodel *m = one_node();
	struct diagnosis *d = diagnose(m);

	for (size_t k = 0; k < d->nfindings; k++)
		assert_false(strncmp(d->findings[k].id, "expect-", 7) == 0);
	diagnosis_free(d);
	netmodel_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(each_key_takes_its_values_and_names_a_bad_one),
	    cmocka_unit_test(every_row_has_a_finding_in_the_catalogue_and_a_schema_key),
	    cmocka_unit_test(each_row_is_an_error_with_evidence_only_when_unmet),
	    cmocka_unit_test(nothing_declared_is_no_expect_finding),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
