/* SPDX-License-Identifier: MIT */
/*
 * test_rdma_pair.c - the CDRDMA1 lines, the write's pattern and the status
 * names of the matrix's RDMA proof (probes/rdma_pair.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes/rdma_pair.h"
#include "probes/verbs_abi.h"

#define TOKEN "0123456789abcdef0123456789abcdef"

static struct rdma_endpoint roce_endpoint(void)
{
	struct rdma_endpoint e = {.device = "mlx5_0",
	                          .port = 1,
	                          .lid = 0,
	                          .gid_index = 3,
	                          .gid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 11, 12},
	                          .qpn = 0x12d,
	                          .psn = 0xabcdef,
	                          .addr = 0x7f12a0000000ull,
	                          .rkey = 0x1234,
	                          .mtu = 1024};
	return e;
}

static int parse(const char *s, struct rdma_line *l)
{
	return rdma_line_parse(s, strlen(s), l);
}

static void endpoint_is_written_as_the_protocol_gives_it(void **state)
{
	struct rdma_endpoint e = roce_endpoint();
	char buf[RDMA_LINE_MAX];
	int n = rdma_endpoint_format(&e, buf, sizeof(buf));

	assert_int_equal(n, (int)strlen(buf));
	assert_string_equal(buf, "mlx5_0 1 0x0 3 0000:0000:0000:0000:0000:ffff:0a00:0b0c 0x12d "
	                         "0xabcdef 0x7f12a0000000 0x1234 1024");
}

static void write_line_parses_back_to_the_same_endpoint(void **state)
{
	struct rdma_endpoint e = roce_endpoint();
	char text[RDMA_LINE_MAX / 2], line[RDMA_LINE_MAX];
	struct rdma_line l;

	rdma_endpoint_format(&e, text, sizeof(text));
	snprintf(line, sizeof(line), "CDRDMA1 write 4194304 %s", text);
	assert_int_equal(parse(line, &l), 0);
	assert_int_equal(l.kind, RDMA_LINE_WRITE);
	assert_int_equal(l.bytes, 4194304);
	assert_memory_equal(&l.ep, &e, sizeof(e));
}

static void infiniband_endpoint_has_gid_index_minus_one(void **state)
{
	struct rdma_line l;

	assert_int_equal(
	    parse("CDRDMA1 ep mlx5_1 1 0x21 -1 0000:0000:0000:0000:0000:0000:0000:0000 "
	          "0x3 0x1 0x1000 0xffffffff 4096",
	          &l),
	    0);
	assert_int_equal(l.kind, RDMA_LINE_EP);
	assert_string_equal(l.ep.device, "mlx5_1");
	assert_int_equal(l.ep.lid, 0x21);
	assert_int_equal(l.ep.gid_index, -1);
	assert_int_equal(l.ep.mtu, 4096);
}

static void short_lines_carry_their_one_field(void **state)
{
	struct rdma_line l;

	assert_int_equal(parse("CDRDMA1 no no ACTIVE port", &l), 0);
	assert_int_equal(l.kind, RDMA_LINE_NO);
	assert_string_equal(l.why, "no ACTIVE port");
	assert_int_equal(parse("CDRDMA1 error ibv_reg_mr: Cannot allocate memory", &l), 0);
	assert_int_equal(l.kind, RDMA_LINE_ERROR);
	assert_string_equal(l.why, "ibv_reg_mr: Cannot allocate memory");
	assert_int_equal(parse("CDRDMA1 done 65536", &l), 0);
	assert_int_equal(l.kind, RDMA_LINE_DONE);
	assert_int_equal(l.bytes, 65536);
	assert_int_equal(parse("CDRDMA1 bad 17", &l), 0);
	assert_int_equal(l.kind, RDMA_LINE_BAD);
	assert_int_equal(l.offset, 17);
	assert_int_equal(parse("CDRDMA1 verified", &l), 0);
	assert_int_equal(l.kind, RDMA_LINE_VERIFIED);
	assert_int_equal(parse("CDRDMA1 failed", &l), 0);
	assert_int_equal(l.kind, RDMA_LINE_FAILED);
}

static void malformed_lines_are_refused(void **state)
{
	static const char *const bad[] = {
	    "",
	    "CDRDMA1",
	    "CDRDMA2 verified",
	    "CDRDMA1 verified ",
	    "CDRDMA1  verified",
	    "CDRDMA1 verified extra",
	    "CDRDMA1 done 0",
	    "CDRDMA1 done 4194305",
	    "CDRDMA1 done +5",
	    "CDRDMA1 done -",
	    "CDRDMA1 bad 4194304",
	    "CDRDMA1 no",
	    "CDRDMA1 ep mlx5_0 0 0x0 3 0000:0000:0000:0000:0000:ffff:0a00:0b0c 0x1 0x1 0x1 0x1 "
	    "1024",
	    "CDRDMA1 ep mlx5_0 1 0x0 256 0000:0000:0000:0000:0000:ffff:0a00:0b0c 0x1 0x1 0x1 0x1 "
	    "1024",
	    "CDRDMA1 ep mlx5_0 1 0x0 3 0000:0000:0000:0000:0000:ffff:0a00:0b0 0x1 0x1 0x1 0x1 1024",
	    "CDRDMA1 ep mlx5_0 1 0x0 3 0000:0000:0000:0000:0000:ffff:0a00:0b0c 0x1000000 0x1 0x1 "
	    "0x1 "
	    "1024",
	    "CDRDMA1 ep mlx5_0 1 0x0 3 0000:0000:0000:0000:0000:ffff:0a00:0b0c 0x1 0x1 0x1 0x1 "
	    "1000",
	    "CDRDMA1 ep mlx5_0 1 0x0 3 0000:0000:0000:0000:0000:ffff:0a00:0b0c 0x1 0x1 0x1 0x1",
	    "CDRDMA1 ep mlx5_0 1 12 3 0000:0000:0000:0000:0000:ffff:0a00:0b0c 0x1 0x1 0x1 0x1 1024",
	};
	struct rdma_line l;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse(bad[i], &l) == 0)
			fail_msg("accepted: \"%s\"", bad[i]);
	}
}

static void pattern_check_names_the_first_wrong_byte(void **state)
{
	size_t len = 100000;
	unsigned char *buf = malloc(len);

	rdma_pattern_fill(buf, len, TOKEN);
	assert_int_equal(rdma_pattern_check(buf, len, TOKEN), -1);
	buf[4097] ^= 1;
	assert_int_equal(rdma_pattern_check(buf, len, TOKEN), 4097);
	buf[4097] ^= 1;
	/* another run's token: another pattern */
	assert_int_equal(rdma_pattern_check(buf, len, "fedcba9876543210fedcba9876543210"), 0);
	memset(buf, 0, len);
	assert_true(rdma_pattern_check(buf, len, TOKEN) >= 0);
	free(buf);
}

static void mtu_enum_and_bytes_convert_both_ways(void **state)
{
	assert_int_equal(rdma_mtu_bytes(CD_IBV_MTU_256), 256);
	assert_int_equal(rdma_mtu_bytes(CD_IBV_MTU_4096), 4096);
	assert_int_equal(rdma_mtu_bytes(0), 0);
	assert_int_equal(rdma_mtu_bytes(6), 0);
	assert_int_equal(rdma_mtu_enum(1024), CD_IBV_MTU_1024);
	assert_int_equal(rdma_mtu_enum(1500), 0);
}

static void status_names_are_rdma_cores_words(void **state)
{
	assert_string_equal(rdma_wc_status_name(CD_IBV_WC_SUCCESS), "success");
	assert_string_equal(rdma_wc_status_name(CD_IBV_WC_RETRY_EXC_ERR),
	                    "transport retry counter exceeded");
	assert_string_equal(rdma_wc_status_name(CD_IBV_WC_REM_ACCESS_ERR), "remote access error");
	assert_string_equal(rdma_wc_status_name(-1), "unknown");
	assert_string_equal(rdma_wc_status_name(99), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(endpoint_is_written_as_the_protocol_gives_it),
	    cmocka_unit_test(write_line_parses_back_to_the_same_endpoint),
	    cmocka_unit_test(infiniband_endpoint_has_gid_index_minus_one),
	    cmocka_unit_test(short_lines_carry_their_one_field),
	    cmocka_unit_test(malformed_lines_are_refused),
	    cmocka_unit_test(pattern_check_names_the_first_wrong_byte),
	    cmocka_unit_test(mtu_enum_and_bytes_convert_both_ways),
	    cmocka_unit_test(status_names_are_rdma_cores_words),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
