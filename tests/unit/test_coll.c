/* SPDX-License-Identifier: MIT */
/*
 * test_coll.c - what every allreduce backend shares: element type names
 * and sizes, inputs whose sums are exact in every type for any rank count,
 * the exact check, and the sums (bf16 rounding, in place).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "collectives/coll.h"

static const enum coll_dtype all_dtypes[] = {COLL_FLOAT32, COLL_FLOAT64, COLL_INT32, COLL_BFLOAT16};

static uint16_t bf16_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return (uint16_t)(u >> 16); /* exact for the values used here */
}

static float bf16_value(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

/* Element i of a buffer of type t, as a double. */
static double value_at(const void *buf, size_t i, enum coll_dtype t)
{
	switch (t) {
	case COLL_FLOAT32:
		return ((const float *)buf)[i];
	case COLL_FLOAT64:
		return ((const double *)buf)[i];
	case COLL_INT32:
		return ((const int32_t *)buf)[i];
	case COLL_BFLOAT16:
		return bf16_value(((const uint16_t *)buf)[i]);
	}
	return NAN;
}

/* --- names and sizes ------------------------------------------------------- */

static void dtype_names_are_nccl_tests_names(void **state)
{
	assert_string_equal(coll_dtype_name(COLL_FLOAT32), "float");
	assert_string_equal(coll_dtype_name(COLL_FLOAT64), "double");
	assert_string_equal(coll_dtype_name(COLL_INT32), "int32");
	assert_string_equal(coll_dtype_name(COLL_BFLOAT16), "bfloat16");
}

static void dtype_parse_takes_names_and_aliases(void **state)
{
	static const struct {
		const char *name;
		enum coll_dtype t;
	} cases[] = {
	    {"float", COLL_FLOAT32},     {"float32", COLL_FLOAT32}, {"f32", COLL_FLOAT32},
	    {"double", COLL_FLOAT64},    {"float64", COLL_FLOAT64}, {"f64", COLL_FLOAT64},
	    {"int32", COLL_INT32},       {"int", COLL_INT32},       {"i32", COLL_INT32},
	    {"bfloat16", COLL_BFLOAT16}, {"bf16", COLL_BFLOAT16},
	};

	for (size_t i = 0; i < CD_ARRAY_LEN(cases); i++) {
		enum coll_dtype t = cases[i].t == COLL_INT32 ? COLL_FLOAT32 : COLL_INT32;

		assert_int_equal(coll_dtype_parse(cases[i].name, &t), 0);
		assert_int_equal(t, cases[i].t);
	}
}

static void dtype_parse_rejects_other_names(void **state)
{
	static const char *const bad[] = {"", "Float", "half", "fp16", "int64", "bf16 ", "floa"};
	enum coll_dtype t = COLL_INT32;

	for (size_t i = 0; i < CD_ARRAY_LEN(bad); i++)
		assert_int_equal(coll_dtype_parse(bad[i], &t), CD_ERR_PARSE);
	assert_int_equal(t, COLL_INT32);
}

static void dtype_sizes_are_4_8_4_2(void **state)
{
	assert_int_equal(coll_dtype_size(COLL_FLOAT32), 4);
	assert_int_equal(coll_dtype_size(COLL_FLOAT64), 8);
	assert_int_equal(coll_dtype_size(COLL_INT32), 4);
	assert_int_equal(coll_dtype_size(COLL_BFLOAT16), 2);
}

/* --- inputs and the exact sum ----------------------------------------------- */

#define SUM_COUNT 97

/* The sum of every rank's input, added in the type itself by
 * coll_reduce_sum, first rank first or last rank first. */
static void *sum_of_inputs(enum coll_dtype t, int nranks, int reverse)
{
	size_t bytes = SUM_COUNT * coll_dtype_size(t);
	void *acc = calloc(1, bytes), *in = malloc(bytes);

	for (int k = 0; k < nranks; k++) {
		coll_fill(in, SUM_COUNT, t, reverse ? nranks - 1 - k : k, nranks);
		coll_reduce_sum(acc, in, SUM_COUNT, t);
	}
	free(in);
	return acc;
}

static void sums_of_inputs_are_exact_for_every_dtype_and_rank_count(void **state)
{
	static const int rank_counts[] = {1, 2, 3, 5, 255, 256, 4096};

	for (size_t d = 0; d < CD_ARRAY_LEN(all_dtypes); d++) {
		for (size_t k = 0; k < CD_ARRAY_LEN(rank_counts); k++) {
			enum coll_dtype t = all_dtypes[d];
			int n = rank_counts[k];
			void *forward = sum_of_inputs(t, n, 0), *backward = sum_of_inputs(t, n, 1);

			assert_int_equal(coll_check(forward, SUM_COUNT, t, n), 0);
			assert_int_equal(coll_check(backward, SUM_COUNT, t, n), 0);
			assert_memory_equal(forward, backward, SUM_COUNT * coll_dtype_size(t));
			free(forward);
			free(backward);
		}
	}
}

static void inputs_depend_on_rank_and_element(void **state)
{
	float r0[64], r1[64];
	size_t same_rank_diff = 0;

	coll_fill(r0, 64, COLL_FLOAT32, 0, 4);
	coll_fill(r1, 64, COLL_FLOAT32, 1, 4);
	for (size_t i = 0; i < 64; i++) {
		assert_true(r1[i] == r0[i] + 1); /* rank r adds r */
		same_rank_diff += r0[i] != r0[0];
	}
	assert_true(same_rank_diff > 32);
	assert_true(coll_expected(0, COLL_FLOAT32, 4) != coll_expected(1, COLL_FLOAT32, 4) ||
	            coll_expected(1, COLL_FLOAT32, 4) != coll_expected(2, COLL_FLOAT32, 4));
}

static void bf16_inputs_stay_exact_and_only_16_ranks_contribute(void **state)
{
	uint16_t in[256];

	for (int rank = 0; rank < 300; rank += 7) {
		coll_fill(in, 256, COLL_BFLOAT16, rank, 4096);
		for (size_t i = 0; i < 256; i++) {
			double v = value_at(in, i, COLL_BFLOAT16);

			if (rank >= 16)
				assert_true(v == 0);
			else
				assert_true(v >= rank && v <= 256 && v == floor(v));
		}
	}
	for (size_t i = 0; i < 256; i++)
		assert_true(coll_expected(i, COLL_BFLOAT16, 4096) <= 256);
}

static void expected_is_the_sum_of_the_inputs(void **state)
{
	double in[40], sum[40] = {0};

	for (int rank = 0; rank < 5; rank++) {
		coll_fill(in, 40, COLL_FLOAT64, rank, 5);
		for (size_t i = 0; i < 40; i++)
			sum[i] += in[i];
	}
	for (size_t i = 0; i < 40; i++)
		assert_true(coll_expected(i, COLL_FLOAT64, 5) == sum[i]);
}

/* --- the check --------------------------------------------------------------- */

/* The exact sum for 3 ranks, in a buffer of type t. */
static void *exact_result(enum coll_dtype t, size_t count)
{
	size_t bytes = count * coll_dtype_size(t);
	void *acc = calloc(1, bytes), *in = malloc(bytes);

	for (int rank = 0; rank < 3; rank++) {
		coll_fill(in, count, t, rank, 3);
		coll_reduce_sum(acc, in, count, t);
	}
	free(in);
	return acc;
}

static void check_counts_exactly_the_corrupted_elements(void **state)
{
	static const size_t corrupt[] = {0, 17, 500, 999};

	for (size_t d = 0; d < CD_ARRAY_LEN(all_dtypes); d++) {
		enum coll_dtype t = all_dtypes[d];
		char *buf = exact_result(t, 1000);
		size_t elsize = coll_dtype_size(t);

		assert_int_equal(coll_check(buf, 1000, t, 3), 0);
		for (size_t i = 0; i < CD_ARRAY_LEN(corrupt); i++) {
			buf[corrupt[i] * elsize + elsize - 1] ^=
			    0x40; /* flips an exponent or sign bit */
			assert_int_equal(coll_check(buf, 1000, t, 3), i + 1);
		}
		assert_int_equal(coll_check(buf, 17, t, 3), 1); /* only element 0 of these */
		free(buf);
	}
}

static void check_counts_nan_as_wrong(void **state)
{
	float f[8];
	double d[8];
	uint16_t h[8];

	coll_fill(f, 8, COLL_FLOAT32, 0, 1);
	coll_fill(d, 8, COLL_FLOAT64, 0, 1);
	coll_fill(h, 8, COLL_BFLOAT16, 0, 1);
	f[3] = NAN;
	d[5] = NAN;
	h[7] = 0x7fc0;
	assert_int_equal(coll_check(f, 8, COLL_FLOAT32, 1), 1);
	assert_int_equal(coll_check(d, 8, COLL_FLOAT64, 1), 1);
	assert_int_equal(coll_check(h, 8, COLL_BFLOAT16, 1), 1);
}

static void check_counts_poisoned_output_as_all_wrong(void **state)
{
	char buf[800];

	memset(buf, 0xff, sizeof(buf));
	for (size_t d = 0; d < CD_ARRAY_LEN(all_dtypes); d++) {
		size_t count = sizeof(buf) / coll_dtype_size(all_dtypes[d]);

		assert_int_equal(coll_check(buf, count, all_dtypes[d], 2), count);
	}
}

/* --- sums ----------------------------------------------------------------------- */

static void bf16_sum_rounds_to_nearest_even(void **state)
{
	/* 257 and 259 are ties between two bf16 neighbours (8 bits of
	 * precision): 257 goes down to 256 (even), 259 up to 260 (even);
	 * 257.5 is no tie and goes to the nearer 258. */
	uint16_t dst[4] = {bf16_bits(256), bf16_bits(258), bf16_bits(256), bf16_bits(-1)};
	uint16_t src[4] = {bf16_bits(1), bf16_bits(1), bf16_bits(1.5f), bf16_bits(0.5f)};

	coll_reduce_sum(dst, src, 4, COLL_BFLOAT16);
	assert_true(bf16_value(dst[0]) == 256);
	assert_true(bf16_value(dst[1]) == 260);
	assert_true(bf16_value(dst[2]) == 258);
	assert_true(bf16_value(dst[3]) == -0.5f);
}

static void bf16_sum_keeps_nan(void **state)
{
	uint16_t dst[1] = {0x7fc0}, src[1] = {bf16_bits(1)};

	coll_reduce_sum(dst, src, 1, COLL_BFLOAT16);
	assert_true(isnan(bf16_value(dst[0])));
}

/* a = i, b = 2i + 1 in type t, count elements (not a multiple of any
 * vector width, so the tail runs too). */
#define SUM_N 37

static void fill_operands(void *a, void *b, enum coll_dtype t)
{
	for (size_t i = 0; i < SUM_N; i++) {
		float x = (float)i, y = 2.0f * (float)i + 1;

		switch (t) {
		case COLL_FLOAT32:
			((float *)a)[i] = x;
			((float *)b)[i] = y;
			break;
		case COLL_FLOAT64:
			((double *)a)[i] = x;
			((double *)b)[i] = y;
			break;
		case COLL_INT32:
			((int32_t *)a)[i] = (int32_t)x;
			((int32_t *)b)[i] = (int32_t)y;
			break;
		case COLL_BFLOAT16:
			((uint16_t *)a)[i] = bf16_bits(x);
			((uint16_t *)b)[i] = bf16_bits(y);
			break;
		}
	}
}

static void assert_sums(const void *dst, enum coll_dtype t)
{
	for (size_t i = 0; i < SUM_N; i++)
		assert_true(value_at(dst, i, t) == 3.0 * (double)i + 1);
}

static void sum_into_works_out_of_place_and_in_place_for_every_dtype(void **state)
{
	double a[SUM_N], b[SUM_N], dst[SUM_N]; /* room for any type */

	for (size_t d = 0; d < CD_ARRAY_LEN(all_dtypes); d++) {
		enum coll_dtype t = all_dtypes[d];

		fill_operands(a, b, t);
		coll_sum_into(dst, a, b, SUM_N, t);
		assert_sums(dst, t);
		coll_sum_into(a, a, b, SUM_N, t); /* dst == a */
		assert_sums(a, t);
		fill_operands(a, b, t);
		coll_sum_into(b, a, b, SUM_N, t); /* dst == b */
		assert_sums(b, t);
		fill_operands(a, b, t);
		coll_reduce_sum(a, b, SUM_N, t);
		assert_sums(a, t);
	}
}

static void int32_sum_wraps_instead_of_overflowing(void **state)
{
	int32_t dst[1] = {INT32_MAX}, src[1] = {1};

	coll_reduce_sum(dst, src, 1, COLL_INT32);
	assert_int_equal(dst[0], INT32_MIN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(dtype_names_are_nccl_tests_names),
	    cmocka_unit_test(dtype_parse_takes_names_and_aliases),
	    cmocka_unit_test(dtype_parse_rejects_other_names),
	    cmocka_unit_test(dtype_sizes_are_4_8_4_2),
	    cmocka_unit_test(sums_of_inputs_are_exact_for_every_dtype_and_rank_count),
	    cmocka_unit_test(inputs_depend_on_rank_and_element),
	    cmocka_unit_test(bf16_inputs_stay_exact_and_only_16_ranks_contribute),
	    cmocka_unit_test(expected_is_the_sum_of_the_inputs),
	    cmocka_unit_test(check_counts_exactly_the_corrupted_elements),
	    cmocka_unit_test(check_counts_nan_as_wrong),
	    cmocka_unit_test(check_counts_poisoned_output_as_all_wrong),
	    cmocka_unit_test(bf16_sum_rounds_to_nearest_even),
	    cmocka_unit_test(bf16_sum_keeps_nan),
	    cmocka_unit_test(sum_into_works_out_of_place_and_in_place_for_every_dtype),
	    cmocka_unit_test(int32_sum_wraps_instead_of_overflowing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
