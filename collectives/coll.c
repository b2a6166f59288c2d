/* SPDX-License-Identifier: MIT */
/*
 * coll.c - element types, the exact inputs and their check, and the sums
 * every backend reduces with (see coll.h).
 *
 * The sums run on GCC vector types rather than plain loops: at -O2 GCC 12
 * vectorises no loop whose trip count is unknown, and these sums are on the
 * allreduce's critical path (float32 must run at memory speed). Each block
 * is loaded whole before it is stored, so dst may be a or b.
 */
#include "collectives/coll.h"
#include "cd.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

struct dtype_info {
	const char *name;
	size_t size;
	double exact_max; /* every integer in [0, exact_max] is exact */
	int contributors; /* K: ranks that contribute a non-zero input */
};

static const struct dtype_info dtypes[] = {
    [COLL_FLOAT32] = {.name = "float", .size = 4, .exact_max = 16777216.0, .contributors = 4096},
    [COLL_FLOAT64] = {.name = "double",
                      .size = 8,
                      .exact_max = 9007199254740992.0,
                      .contributors = 4096},
    [COLL_INT32] = {.name = "int32", .size = 4, .exact_max = 2147483647.0, .contributors = 4096},
    [COLL_BFLOAT16] = {.name = "bfloat16", .size = 2, .exact_max = 256.0, .contributors = 16},
};

static const struct {
	const char *name;
	enum coll_dtype type;
} dtype_aliases[] = {
    {"float", COLL_FLOAT32},     {"float32", COLL_FLOAT32}, {"f32", COLL_FLOAT32},
    {"double", COLL_FLOAT64},    {"float64", COLL_FLOAT64}, {"f64", COLL_FLOAT64},
    {"int32", COLL_INT32},       {"int", COLL_INT32},       {"i32", COLL_INT32},
    {"bfloat16", COLL_BFLOAT16}, {"bf16", COLL_BFLOAT16},
};

#define INPUT_MASK_MAX 65535u

const char *coll_dtype_name(enum coll_dtype t)
{
	return dtypes[t].name;
}

int coll_dtype_parse(const char *name, enum coll_dtype *t)
{
	for (size_t i = 0; i < CD_ARRAY_LEN(dtype_aliases); i++) {
		if (strcmp(name, dtype_aliases[i].name) == 0) {
			*t = dtype_aliases[i].type;
			return 0;
		}
	}
	return CD_ERR_PARSE;
}

size_t coll_dtype_size(enum coll_dtype t)
{
	return dtypes[t].size;
}

/* --- inputs and their exact sum ---------------------------------------- */

/* How the inputs of nranks ranks are shaped (coll.h): the first k ranks
 * contribute a(i) + r, a(i) in [0, mask]. */
struct input_shape {
	int k;
	uint32_t mask;
};

static struct input_shape input_shape(enum coll_dtype t, int nranks)
{
	const struct dtype_info *d = &dtypes[t];
	int ranks = nranks < 1 ? 1 : nranks;
	struct input_shape s = {.k = ranks < d->contributors ? ranks : d->contributors};
	double k = s.k, offsets = k * (k - 1) / 2;

	s.mask = INPUT_MASK_MAX;
	while (s.mask > 0 && k * s.mask + offsets > d->exact_max)
		s.mask >>= 1;
	return s;
}

/* a(i) before masking: the top half of a multiplicative (Fibonacci) hash,
 * so neighbouring elements and elements a power of two apart differ. */
static uint32_t input_hash(size_t i)
{
	return (uint32_t)(((uint64_t)i * 0x9E3779B97F4A7C15ull) >> 32);
}

static double expected_sum(const struct input_shape *s, size_t i)
{
	double k = s->k;

	return k * (input_hash(i) & s->mask) + k * (k - 1) / 2;
}

static float bf16_to_float(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

/* Round to nearest, ties to even; a NaN stays a (quiet) NaN. */
static uint16_t float_to_bf16(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((u >> 16) | 0x40);
	u += 0x7fffu + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}

void coll_fill(void *buf, size_t count, enum coll_dtype t, int rank, int nranks)
{
	struct input_shape s = input_shape(t, nranks);
	int contributes = rank < s.k;

	for (size_t i = 0; i < count; i++) {
		uint32_t v = contributes ? (input_hash(i) & s.mask) + (uint32_t)rank : 0;

		switch (t) {
		case COLL_FLOAT32:
			((float *)buf)[i] = (float)v;
			break;
		case COLL_FLOAT64:
			((double *)buf)[i] = v;
			break;
		case COLL_INT32:
			((int32_t *)buf)[i] = (int32_t)v;
			break;
		case COLL_BFLOAT16:
			((uint16_t *)buf)[i] = float_to_bf16((float)v);
			break;
		}
	}
}

double coll_expected(size_t i, enum coll_dtype t, int nranks)
{
	struct input_shape s = input_shape(t, nranks);

	return expected_sum(&s, i);
}

static double element_value(const void *buf, size_t i, enum coll_dtype t)
{
	switch (t) {
	case COLL_FLOAT32:
		return ((const float *)buf)[i];
	case COLL_FLOAT64:
		return ((const double *)buf)[i];
	case COLL_INT32:
		return ((const int32_t *)buf)[i];
	case COLL_BFLOAT16:
		return bf16_to_float(((const uint16_t *)buf)[i]);
	}
	return NAN;
}

size_t coll_check(const void *buf, size_t count, enum coll_dtype t, int nranks)
{
	struct input_shape s = input_shape(t, nranks);
	size_t wrong = 0;

	/* != is true for a NaN, so a NaN counts as wrong. */
	for (size_t i = 0; i < count; i++)
		wrong += element_value(buf, i, t) != expected_sum(&s, i);
	return wrong;
}

/* --- sums ----------------------------------------------------------------- */

/* Vectors of 16 bytes with the element's alignment, so any element pointer
 * may be read as one; may_alias because they read float/double/int32 data. */
typedef float vec_f32 __attribute__((vector_size(16), aligned(4), may_alias));
typedef double vec_f64 __attribute__((vector_size(16), aligned(8), may_alias));
typedef uint32_t vec_u32 __attribute__((vector_size(16), aligned(4), may_alias));

/* dst = a + b over count elements of type elem, four vectors of vec at a
 * time, then one element at a time. Each block is read whole before it is
 * written, so dst may equal a or b. */
#define DEFINE_SUM_INTO(name, elem, vec)                                                           \
	static void name(elem *dst, const elem *a, const elem *b, size_t count)                    \
	{                                                                                          \
		const size_t lanes = sizeof(vec) / sizeof(elem), block = 4 * lanes;                \
		size_t i = 0;                                                                      \
                                                                                                   \
		for (; i + block <= count; i += block) {                                           \
			vec x0 = *(const vec *)(a + i) + *(const vec *)(b + i);                    \
			vec x1 = *(const vec *)(a + i + lanes) + *(const vec *)(b + i + lanes);    \
			vec x2 =                                                                   \
			    *(const vec *)(a + i + 2 * lanes) + *(const vec *)(b + i + 2 * lanes); \
			vec x3 =                                                                   \
			    *(const vec *)(a + i + 3 * lanes) + *(const vec *)(b + i + 3 * lanes); \
			*(vec *)(dst + i) = x0;                                                    \
			*(vec *)(dst + i + lanes) = x1;                                            \
			*(vec *)(dst + i + 2 * lanes) = x2;                                        \
			*(vec *)(dst + i + 3 * lanes) = x3;                                        \
		}                                                                                  \
		for (; i < count; i++)                                                             \
			dst[i] = a[i] + b[i];                                                      \
	}

DEFINE_SUM_INTO(sum_f32, float, vec_f32)
DEFINE_SUM_INTO(sum_f64, double, vec_f64)
/* int32 sums in uint32: wrapping is defined there, overflow in int32 is not. */
DEFINE_SUM_INTO(sum_u32, uint32_t, vec_u32)

static void sum_bf16(uint16_t *dst, const uint16_t *a, const uint16_t *b, size_t count)
{
	for (size_t i = 0; i < count; i++)
		dst[i] = float_to_bf16(bf16_to_float(a[i]) + bf16_to_float(b[i]));
}

void coll_sum_into(void *dst, const void *a, const void *b, size_t count, enum coll_dtype t)
{
	switch (t) {
	case COLL_FLOAT32:
		sum_f32(dst, a, b, count);
		break;
	case COLL_FLOAT64:
		sum_f64(dst, a, b, count);
		break;
	case COLL_INT32:
		sum_u32(dst, a, b, count);
		break;
	case COLL_BFLOAT16:
		sum_bf16(dst, a, b, count);
		break;
	}
}

void coll_reduce_sum(void *dst, const void *src, size_t count, enum coll_dtype t)
{
	coll_sum_into(dst, dst, src, count, t);
}
