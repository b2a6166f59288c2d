/* SPDX-License-Identifier: MIT */
/*
 * ring_sweep.c - a size sweep on the ring (see coll.h, struct coll_sweep):
 * per size one checked call on a poisoned output, the warmup calls, a
 * barrier, then the timed calls.
 */
#include "collectives/ring.h"
#include "collectives/ring_internal.h"
#include "cd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The send and recv buffers of a sweep, sized for its largest size. */
struct sweep_buffers {
	void *send, *recv;
	size_t count; /* elements each holds */
};

static size_t size_count(size_t bytes, size_t elsize)
{
	return bytes / elsize ? bytes / elsize : 1;
}

static int check_sweep(const struct coll_sweep *p, struct ring_error *e)
{
	if (p->nsizes > 0 && !p->sizes)
		return ring_fail(e, RING_BAD_ARG, -1, 0, "a sweep of %zu sizes without sizes",
		                 p->nsizes);
	if (p->warmup < 0 || p->iters < 1)
		return ring_fail(e, RING_BAD_ARG, -1, 0, "warmup %d, iters %d: need >= 0, >= 1",
		                 p->warmup, p->iters);
	if (p->dtype < COLL_FLOAT32 || p->dtype > COLL_BFLOAT16)
		return ring_fail(e, RING_BAD_ARG, -1, 0, "unknown element type %d", (int)p->dtype);
	return 0;
}

/* Page-aligned, so that every size starts on a fresh page as a real
 * framework's tensors do; the send buffer holds this rank's input. */
static int alloc_buffers(const struct ring *r, const struct coll_sweep *p, struct sweep_buffers *b,
                         struct ring_error *e)
{
	size_t elsize = coll_dtype_size(p->dtype), page = (size_t)sysconf(_SC_PAGESIZE), bytes;
	int err;

	b->count = 0;
	for (size_t k = 0; k < p->nsizes; k++) {
		size_t count = size_count(p->sizes[k], elsize);

		if (count > b->count)
			b->count = count;
	}
	bytes = b->count * elsize;
	err = posix_memalign(&b->send, page, bytes);
	if (err == 0) {
		err = posix_memalign(&b->recv, page, bytes);
		if (err)
			free(b->send);
	}
	if (err) {
		b->send = b->recv = NULL;
		return ring_fail(e, RING_IO, -1, bytes, "cannot allocate 2 x %zu bytes: %s", bytes,
		                 strerror(err));
	}
	coll_fill(b->send, b->count, p->dtype, r->rank, r->nranks);
	return 0;
}

static double elapsed_us(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) * 1e6 + (double)(b->tv_nsec - a->tv_nsec) / 1e3;
}

/* Every rank leaves it only once every rank has entered it. */
static int barrier(struct ring *r, struct ring_error *e)
{
	float one = 1, sum;

	return ring_allreduce(r, &one, &sum, 1, COLL_FLOAT32, e);
}

static int run_size(struct ring *r, const struct coll_sweep *p, const struct sweep_buffers *b,
                    size_t count, struct coll_result *out, struct ring_error *e)
{
	struct timespec t0, t1;

	out->count = count;
	out->bytes = count * coll_dtype_size(p->dtype);
	memset(b->recv, 0xff, out->bytes);
	if (ring_allreduce(r, b->send, b->recv, count, p->dtype, e) < 0)
		return -1;
	out->wrong = p->check ? (long long)coll_check(b->recv, count, p->dtype, r->nranks) : -1;
	for (int i = 0; i < p->warmup; i++) {
		if (ring_allreduce(r, b->send, b->recv, count, p->dtype, e) < 0)
			return -1;
	}
	if (barrier(r, e) < 0)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < p->iters; i++) {
		if (ring_allreduce(r, b->send, b->recv, count, p->dtype, e) < 0)
			return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	out->time_us = elapsed_us(&t0, &t1) / p->iters;
	return 0;
}

int ring_sweep(struct ring *r, const struct coll_sweep *p, struct coll_result *out, size_t *done,
               struct ring_error *e)
{
	size_t elsize;
	struct sweep_buffers b;
	int rc = 0;

	__atomic_store_n(done, 0, __ATOMIC_RELEASE);
	ring_error_clear(e);
	if (check_sweep(p, e) < 0)
		return -1;
	if (p->nsizes == 0)
		return 0;
	if (alloc_buffers(r, p, &b, e) < 0)
		return -1;
	elsize = coll_dtype_size(p->dtype);
	for (size_t k = 0; k < p->nsizes && rc == 0; k++) {
		size_t count = size_count(p->sizes[k], elsize);

		rc = run_size(r, p, &b, count, &out[k], e);
		if (rc < 0)
			e->bytes = count * elsize;
		else /* another thread may be watching (ring.h) */
			__atomic_store_n(done, k + 1, __ATOMIC_RELEASE);
	}
	free(b.send);
	free(b.recv);
	return rc;
}
