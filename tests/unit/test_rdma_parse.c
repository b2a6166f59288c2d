/* SPDX-License-Identifier: MIT */
/*
 * test_rdma_parse.c - the parsers of the RDMA sysfs words (probes/
 * rdma_parse.h), on the texts drivers/infiniband/core/sysfs.c writes and on
 * half-written or garbled ones.
 */
#include "probes/rdma_parse.h"
#include "cd.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

static void state_and_phys_state_give_their_word(void **state)
{
	char w[RDMA_WORD_MAX];

	assert_int_equal(rdma_parse_state("4: ACTIVE\n", w, sizeof(w)), 0);
	assert_string_equal(w, "ACTIVE");
	assert_int_equal(rdma_parse_state("5: LinkUp\n", w, sizeof(w)), 0);
	assert_string_equal(w, "LinkUp");
	assert_int_equal(rdma_parse_state("7: Phy Test\n", w, sizeof(w)), 0);
	assert_string_equal(w, "Phy Test");
}

static void half_written_states_are_parse_errors(void **state)
{
	char w[RDMA_WORD_MAX] = "keep";

	assert_int_equal(rdma_parse_state("4:", w, sizeof(w)), CD_ERR_PARSE);
	assert_int_equal(rdma_parse_state("4: ", w, sizeof(w)), CD_ERR_PARSE);
	assert_int_equal(rdma_parse_state("ACTIVE", w, sizeof(w)), CD_ERR_PARSE);
	assert_int_equal(rdma_parse_state("", w, sizeof(w)), CD_ERR_PARSE);
	assert_string_equal(w, "keep");
}

static void rates_give_gbps_and_width(void **state)
{
	char w[RDMA_WORD_MAX];
	double g;

	assert_int_equal(rdma_parse_rate("200 Gb/sec (4X HDR)\n", &g, w, sizeof(w)), 0);
	assert_true(g == 200.0);
	assert_string_equal(w, "4X");
	assert_int_equal(rdma_parse_rate("2.5 Gb/sec (1X SDR)", &g, w, sizeof(w)), 0);
	assert_true(g == 2.5);
	assert_string_equal(w, "1X");
	assert_int_equal(rdma_parse_rate("400 Gb/sec (4X NDR)", &g, w, sizeof(w)), 0);
	assert_true(g == 400.0);
}

static void garbled_rates_are_parse_errors(void **state)
{
	char w[RDMA_WORD_MAX];
	double g;

	assert_int_equal(rdma_parse_rate("200 Gb/sec (4X HDR", &g, w, sizeof(w)), CD_ERR_PARSE);
	assert_int_equal(rdma_parse_rate("200 Gb/sec", &g, w, sizeof(w)), CD_ERR_PARSE);
	assert_int_equal(rdma_parse_rate("x", &g, w, sizeof(w)), CD_ERR_PARSE);
	assert_int_equal(rdma_parse_rate("200 Gb/sec (X HDR)", &g, w, sizeof(w)), CD_ERR_PARSE);
}

static void an_ipv4_mapped_gid_encodes_its_address(void **state)
{
	unsigned char gid[RDMA_GID_LEN];
	char a[64];
	const char *f;

	assert_int_equal(rdma_parse_gid("0000:0000:0000:0000:0000:ffff:0a00:0b0c\n", gid), 0);
	f = rdma_gid_family(gid, 0);
	assert_string_equal(f, "ipv4");
	assert_int_equal(rdma_gid_address(gid, f, a, sizeof(a)), 0);
	assert_string_equal(a, "10.0.11.12");
}

static void a_fe80_gid_is_link_local_on_ethernet_and_ib_on_infiniband(void **state)
{
	unsigned char gid[RDMA_GID_LEN];
	char a[64];

	assert_int_equal(rdma_parse_gid("fe80:0000:0000:0000:0ac0:ebff:fe12:3456", gid), 0);
	assert_string_equal(rdma_gid_family(gid, 0), "link-local");
	assert_int_equal(rdma_gid_address(gid, "link-local", a, sizeof(a)), 0);
	assert_string_equal(a, "fe80::ac0:ebff:fe12:3456");
	assert_string_equal(rdma_gid_family(gid, 1), "ib");
	assert_int_equal(rdma_gid_address(gid, "ib", a, sizeof(a)), CD_ERR_PARSE);
}

static void a_global_ipv6_gid_is_ipv6(void **state)
{
	unsigned char gid[RDMA_GID_LEN];
	char a[64];

	assert_int_equal(rdma_parse_gid("fd00:0000:0000:0000:0000:0000:0000:0005", gid), 0);
	assert_string_equal(rdma_gid_family(gid, 0), "ipv6");
	assert_int_equal(rdma_gid_address(gid, "ipv6", a, sizeof(a)), 0);
	assert_string_equal(a, "fd00::5");
}

static void an_all_zero_gid_is_zero(void **state)
{
	unsigned char gid[RDMA_GID_LEN];

	assert_int_equal(rdma_parse_gid("0000:0000:0000:0000:0000:0000:0000:0000", gid), 0);
	assert_true(rdma_gid_is_zero(gid));
	assert_int_equal(rdma_parse_gid("0000:0000:0000:0000:0000:0000:0000:0001", gid), 0);
	assert_false(rdma_gid_is_zero(gid));
}

static void half_written_gids_are_parse_errors(void **state)
{
	unsigned char gid[RDMA_GID_LEN];

	assert_int_equal(rdma_parse_gid("fe80:0000:00", gid), CD_ERR_PARSE);
	assert_int_equal(rdma_parse_gid("fe80::1", gid), CD_ERR_PARSE);
	assert_int_equal(rdma_parse_gid("fe80:0000:0000:0000:0ac0:ebff:fe12:345g", gid),
	                 CD_ERR_PARSE);
	assert_int_equal(rdma_parse_gid("fe80-0000:0000:0000:0ac0:ebff:fe12:3456", gid),
	                 CD_ERR_PARSE);
}

static void gid_types_are_the_kernels_two_words(void **state)
{
	const char *t = NULL;

	assert_int_equal(rdma_parse_gid_type("RoCE v2\n", &t), 0);
	assert_string_equal(t, "RoCE v2");
	assert_int_equal(rdma_parse_gid_type("IB/RoCE v1", &t), 0);
	assert_string_equal(t, "IB/RoCE v1");
	assert_int_equal(rdma_parse_gid_type("RoCE v3", &t), CD_ERR_PARSE);
	assert_int_equal(rdma_parse_gid_type("", &t), CD_ERR_PARSE);
}

static void ndevs_are_interface_names(void **state)
{
	char n[RDMA_WORD_MAX];

	assert_int_equal(rdma_parse_ndev("ens1f0\n", n, sizeof(n)), 0);
	assert_string_equal(n, "ens1f0");
	assert_int_equal(rdma_parse_ndev("enp1s0f0np0.100", n, sizeof(n)), 0);
	assert_int_equal(rdma_parse_ndev("a/b", n, sizeof(n)), CD_ERR_PARSE);
	assert_int_equal(rdma_parse_ndev("eth0:1", n, sizeof(n)), CD_ERR_PARSE);
	assert_int_equal(rdma_parse_ndev("..", n, sizeof(n)), CD_ERR_PARSE);
	assert_int_equal(rdma_parse_ndev("a_name_of_16_ch", n, sizeof(n)), 0);
	assert_int_equal(rdma_parse_ndev("a_name_of_16_chr", n, sizeof(n)), CD_ERR_PARSE);
	assert_int_equal(rdma_parse_ndev("", n, sizeof(n)), CD_ERR_PARSE);
}

static void lids_are_hex_of_16_bits(void **state)
{
	char l[16];

	assert_int_equal(rdma_parse_lid("0x12\n", l, sizeof(l)), 0);
	assert_string_equal(l, "0x12");
	assert_int_equal(rdma_parse_lid("0xffff", l, sizeof(l)), 0);
	assert_int_equal(rdma_parse_lid("0x10000", l, sizeof(l)), CD_ERR_PARSE);
	assert_int_equal(rdma_parse_lid("0x", l, sizeof(l)), CD_ERR_PARSE);
	assert_int_equal(rdma_parse_lid("12", l, sizeof(l)), CD_ERR_PARSE);
}

static void driver_files_give_their_driver_lines(void **state)
{
	static const char text[] = "# rdma-core\ndriver mlx5\n\ndriver  rxe \nprovider x\n";
	json_t *a = json_array();

	assert_int_equal(rdma_parse_driver_file(text, strlen(text), a), 2);
	assert_string_equal(json_string_value(json_array_get(a, 0)), "mlx5");
	assert_string_equal(json_string_value(json_array_get(a, 1)), "rxe");
	json_decref(a);
}

static void peermem_is_found_by_the_first_field_of_proc_modules(void **state)
{
	static const char both[] = "nv_peer_mem 16384 0 - Live 0x0\n"
	                           "nvidia_peermem 16384 0 - Live 0x0\n";
	static const char used_by[] = "ib_core 450560 1 nvidia_peermem, Live 0x0\n";
	static const char old[] = "nvidia 1 0 - Live 0\nnv_peer_mem 16384 0 - Live 0x0\n";

	assert_string_equal(rdma_parse_peermem(both, strlen(both)), "nvidia_peermem");
	assert_null(rdma_parse_peermem(used_by, strlen(used_by)));
	assert_string_equal(rdma_parse_peermem(old, strlen(old)), "nv_peer_mem");
	assert_null(rdma_parse_peermem("", 0));
}

/* glibc's ldconfig (elf/ldconfig.c parse_conf): comments, blank lines,
 * "include" with several blank-separated globs, hwcap ignored, a trailing
 * '/' dropped, a relative directory refused; entries in file order. */
static void ld_so_conf_gives_directories_and_includes_in_file_order(void **state)
{
	static const char text[] = "# libc default configuration\n"
	                           "/usr/local/lib\n"
	                           "include /etc/ld.so.conf.d/*.conf\textra/*.conf\n"
	                           "\n"
	                           "hwcap 1 nosegneg\n"
	                           "  /opt/rdma-core/lib/  # OFED\n"
	                           "relative/lib\n"
	                           "includes/lib\n";
	json_t *a = json_array();
	char *dump;

	assert_int_equal(rdma_parse_ld_so_conf(text, strlen(text), a), 4);
	dump = json_dumps(a, JSON_COMPACT);
	assert_string_equal(dump, "[{\"dir\":\"/usr/local/lib\"},"
	                          "{\"include\":\"/etc/ld.so.conf.d/*.conf\"},"
	                          "{\"include\":\"extra/*.conf\"},"
	                          "{\"dir\":\"/opt/rdma-core/lib\"}]");
	free(dump);
	json_decref(a);
}

/* rdma-core's providers/<name>/ and the kernel drivers their match tables
 * claim. */
static void kernel_drivers_map_to_the_rdma_core_provider_that_serves_them(void **state)
{
	assert_string_equal(rdma_provider_of_driver("mlx5_core"), "mlx5");
	assert_string_equal(rdma_provider_of_driver("mlx4_core"), "mlx4");
	assert_string_equal(rdma_provider_of_driver("bnxt_en"), "bnxt_re");
	assert_string_equal(rdma_provider_of_driver("ice"), "irdma");
	assert_string_equal(rdma_provider_of_driver("hfi1"), "hfi1verbs");
	assert_string_equal(rdma_provider_of_driver("efa"), "efa");
	assert_string_equal(rdma_provider_of_driver("rdma_rxe"), "rxe");
	assert_null(rdma_provider_of_driver("e1000e"));
	assert_null(rdma_provider_of_driver(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(state_and_phys_state_give_their_word),
	    cmocka_unit_test(half_written_states_are_parse_errors),
	    cmocka_unit_test(rates_give_gbps_and_width),
	    cmocka_unit_test(garbled_rates_are_parse_errors),
	    cmocka_unit_test(an_ipv4_mapped_gid_encodes_its_address),
	    cmocka_unit_test(a_fe80_gid_is_link_local_on_ethernet_and_ib_on_infiniband),
	    cmocka_unit_test(a_global_ipv6_gid_is_ipv6),
	    cmocka_unit_test(an_all_zero_gid_is_zero),
	    cmocka_unit_test(half_written_gids_are_parse_errors),
	    cmocka_unit_test(gid_types_are_the_kernels_two_words),
	    cmocka_unit_test(ndevs_are_interface_names),
	    cmocka_unit_test(lids_are_hex_of_16_bits),
	    cmocka_unit_test(driver_files_give_their_driver_lines),
	    cmocka_unit_test(peermem_is_found_by_the_first_field_of_proc_modules),
	    cmocka_unit_test(ld_so_conf_gives_directories_and_includes_in_file_order),
	    cmocka_unit_test(kernel_drivers_map_to_the_rdma_core_provider_that_serves_them),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
