/* SPDX-License-Identifier: MIT */
/*
 * test_nccl_list.c - NCCL's list syntax (probes/nccl_list.h), the one parser
 * of NCCL_SOCKET_IFNAME and NCCL_IB_HCA. The socket variable's own rules
 * (16 items, a 1-character value ignored) are test_predict's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>
#include "probes/nccl_ib.h"
#include "probes/nccl_list.h"

/* NVIDIA/nccl src/misc/utils.cc parseStringList and matchIfList, and the
 * NCCL_IB_HCA entry of docs/env.rst ("^" exclude, then "=" exact, entries
 * "<hca>[:<port>[:<rail>[:<plane>]]]"), as nccl_list.c reads them. */
static void nccl_ib_hca_values_parse_as_nccl_reads_them(void **state)
{
	struct nccl_list l;

	nccl_list_parse("", NCCL_IB_MAX_DEVS, &l);
	assert_int_equal(l.nitems, 0);
	nccl_list_parse("^=mlx5_0:1,,mlx5_1", NCCL_IB_MAX_DEVS, &l);
	assert_int_equal(l.nitems, 2);
	assert_true(l.exclude && l.exact);
	assert_string_equal(l.items[0].prefix, "mlx5_0");
	assert_int_equal(l.items[0].port, 1);
	assert_string_equal(l.items[1].prefix, "mlx5_1");
	assert_int_equal(l.items[1].port, -1);
	/* "mlx5_0::0:0": atoi("") is port 0 (parseStringList: atoi(ptr+1));
	 * ":1": no name, skipped */
	nccl_list_parse("mlx5_0::0:0,:1", NCCL_IB_MAX_DEVS, &l);
	assert_int_equal(l.nitems, 1);
	assert_int_equal(l.items[0].port, 0);
	/* "=^x" is exact with a name "^x": '^' counts only first */
	nccl_list_parse("=^x", NCCL_IB_MAX_DEVS, &l);
	assert_int_equal(l.nitems, 1);
	assert_true(l.exact && !l.exclude);
	assert_string_equal(l.items[0].prefix, "^x");
	/* atoi: "2x" is 2, "x" is 0; a NUL ends the value */
	nccl_list_parse("a:2x,b:x\0,c", NCCL_IB_MAX_DEVS, &l);
	assert_int_equal(l.nitems, 2);
	assert_int_equal(l.items[0].port, 2);
	assert_int_equal(l.items[1].port, 0);
}

static void nccl_ib_hca_names_match_by_prefix_unless_exact(void **state)
{
	struct nccl_list l;

	nccl_list_parse("mlx5_1", NCCL_IB_MAX_DEVS, &l);
	assert_true(nccl_list_item_matches(&l, 0, "mlx5_10", 1));
	nccl_list_parse("=mlx5_1", NCCL_IB_MAX_DEVS, &l);
	assert_false(nccl_list_item_matches(&l, 0, "mlx5_10", 1));
	assert_true(nccl_list_item_matches(&l, 0, "mlx5_1", 2));
	nccl_list_parse("mlx5_1:2", NCCL_IB_MAX_DEVS, &l);
	assert_false(nccl_list_item_matches(&l, 0, "mlx5_1", 1));
	assert_true(nccl_list_item_matches(&l, 0, "mlx5_1", 2));
}

/* NCCL copies a name into netIf.prefix[64] unchecked: clusterdoc keeps no
 * item for a name that long rather than a truncated one that would match
 * names NCCL's never could. */
static void a_name_of_64_bytes_makes_no_item(void **state)
{
	char value[80];
	struct nccl_list l;

	memset(value, 'a', 64);
	strcpy(value + 64, ",mlx5_0");
	nccl_list_parse(value, NCCL_IB_MAX_DEVS, &l);
	assert_int_equal(l.nitems, 1);
	assert_string_equal(l.items[0].prefix, "mlx5_0");
}

static void the_callers_item_limit_is_kept(void **state)
{
	struct nccl_list l;

	nccl_list_parse("a,b,c,d", 3, &l);
	assert_int_equal(l.nitems, 3);
	nccl_list_parse("a,b,c,d", NCCL_LIST_CAP + 10, &l);
	assert_int_equal(l.nitems, 4);
}

static void an_empty_list_matches_everything_and_a_bare_caret_nothing(void **state)
{
	struct nccl_list l;

	nccl_list_parse(NULL, NCCL_IB_MAX_DEVS, &l);
	assert_true(nccl_list_match(&l, "mlx5_0", 1));
	nccl_list_parse("^", NCCL_IB_MAX_DEVS, &l);
	assert_false(nccl_list_match(&l, "mlx5_0", 1));
	nccl_list_parse("^mlx5_1:1", NCCL_IB_MAX_DEVS, &l);
	assert_true(nccl_list_match(&l, "mlx5_1", 2));
	assert_false(nccl_list_match(&l, "mlx5_1", 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(nccl_ib_hca_values_parse_as_nccl_reads_them),
	    cmocka_unit_test(nccl_ib_hca_names_match_by_prefix_unless_exact),
	    cmocka_unit_test(a_name_of_64_bytes_makes_no_item),
	    cmocka_unit_test(the_callers_item_limit_is_kept),
	    cmocka_unit_test(an_empty_list_matches_everything_and_a_bare_caret_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
