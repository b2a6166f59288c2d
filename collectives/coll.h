/* SPDX-License-Identifier: MIT */
/*
 * coll.h - what every allreduce backend shares: element types, the inputs
 * each rank contributes (chosen so that every sum is exact), the check of a
 * result against the exact expected value, and one rank's results of a size
 * sweep. Agent side; libc only.
 *
 * Inputs: element i of rank r (0-based) is a small non-negative integer
 * (coll_fill), so any summation order gives the same exact sum in every
 * type, bf16 included: every partial sum stays within the integers the type
 * holds exactly (256 in bf16, 2^24 in float), for any nranks up to
 * COLL_MAX_RANKS. Precisely: the first k = min(nranks, K) ranks contribute
 * a(i) + r and the others 0, where a(i) is a hash of i masked to [0, m];
 * K is 16 for bf16 and 4096 for the other types, and m is the largest
 * 2^b - 1 (at most 65535) with k*m + k(k-1)/2 within the type's exact range
 * (bf16: m = 255 for one rank, 127 for two, 7 for 16 or more). The sum is
 * k*a(i) + k(k-1)/2: it changes when a rank's contribution is lost, doubled
 * or taken from another rank, and, a(i) being a hash, when data lands at
 * the wrong offset. In bf16, ranks from 16 on contribute 0.
 * coll_check compares each element of a result with that sum exactly.
 */
#ifndef CD_COLLECTIVES_COLL_H
#define CD_COLLECTIVES_COLL_H

#include <stddef.h>
#include <stdint.h>

#define COLL_MAX_RANKS 4096

enum coll_dtype {
	COLL_FLOAT32,
	COLL_FLOAT64,
	COLL_INT32,
	COLL_BFLOAT16,
};

/* "float", "double", "int32", "bfloat16" (nccl-tests' names). */
const char *coll_dtype_name(enum coll_dtype t);

/* Accepts the names above and the aliases "float32", "f32", "float64",
 * "f64", "int", "i32", "bf16". 0 and *t, or CD_ERR_PARSE. */
int coll_dtype_parse(const char *name, enum coll_dtype *t);

/* Bytes per element: 4, 8, 4, 2. */
size_t coll_dtype_size(enum coll_dtype t);

/* Write rank's input: count elements of type t at buf. */
void coll_fill(void *buf, size_t count, enum coll_dtype t, int rank, int nranks);

/* The exact sum over nranks ranks of element i, as a double. */
double coll_expected(size_t i, enum coll_dtype t, int nranks);

/* How many of the count elements at buf differ from coll_expected (exact
 * comparison; a NaN is wrong). */
size_t coll_check(const void *buf, size_t count, enum coll_dtype t, int nranks);

/* dst[i] += src[i] for count elements of type t (bf16: summed in float and
 * rounded to nearest even). dst and src must not overlap. */
void coll_reduce_sum(void *dst, const void *src, size_t count, enum coll_dtype t);

/* dst[i] = a[i] + b[i]: the out-of-place form of coll_reduce_sum. dst may
 * be a or b. */
void coll_sum_into(void *dst, const void *a, const void *b, size_t count, enum coll_dtype t);

/* One size of a sweep, for one rank. */
struct coll_result {
	size_t bytes;    /* per rank: count * coll_dtype_size */
	size_t count;    /* elements */
	double time_us;  /* mean time of one allreduce over the timed iterations */
	long long wrong; /* elements that differ from the exact sum; -1 = not checked */
};

/* What a sweep runs. Sizes are bytes per rank; the element count of a size
 * is bytes / coll_dtype_size (at least 1), and a result's bytes are
 * count * coll_dtype_size. For each size: one checked call (the output is
 * poisoned first, then compared with coll_check when check is set), then
 * warmup untimed calls, then a barrier, then iters timed calls back to
 * back; time_us is their mean. */
struct coll_sweep {
	enum coll_dtype dtype;
	const size_t *sizes;
	size_t nsizes;
	int warmup; /* >= 0 */
	int iters;  /* >= 1 */
	int check;  /* 1 = count wrong elements, 0 = wrong is -1 */
};

#endif
