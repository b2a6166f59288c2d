/* SPDX-License-Identifier: MIT */
/* nccl.c - the NCCL backend (see nccl.h): whether it can run here, the
 * unique id, and one rank's sweep, every wait polled against a deadline. */
#include "collectives/nccl.h"
#include "collectives/nccl_dl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define POLL_NS  20000 /* between two polls of a stream or a communicator */
#define DRAIN_MS 100   /* after an abort, for the stream to empty before cudaFree */

/*
 * The calls in flight: an event (marks[i % MARKS]) is recorded after call i,
 * so that a wait sees the calls finish one by one. A stall is timeout_ms
 * without any call finishing while one is in flight: a slow size with many
 * iterations is not cut short, a hung call is found within timeout_ms. At
 * most MARKS calls are queued ahead of the GPU.
 */
#define MARKS 32

static const int nccl_dtypes[] = {
    [COLL_FLOAT32] = NCCL_DL_FLOAT32,
    [COLL_FLOAT64] = NCCL_DL_FLOAT64,
    [COLL_INT32] = NCCL_DL_INT32,
    [COLL_BFLOAT16] = NCCL_DL_BFLOAT16,
};

static const char *cuda_msg(const struct nccl_dl *d, cuda_error e)
{
	const char *s = d->cuda_error_string(e);

	return s ? s : "unknown CUDA error";
}

static const char *nccl_msg(const struct nccl_dl *d, nccl_result r)
{
	const char *s = d->get_error_string(r);

	return s ? s : "unknown NCCL error";
}

int nccl_backend_available(int *ngpus, char *why, size_t whylen)
{
	const struct nccl_dl *d;
	int n = 0, driver = 0, rc;
	cuda_error e;

	*ngpus = 0;
	if ((rc = nccl_dl_get(&d, why, whylen)) < 0)
		return rc;
	e = d->get_device_count(&n);
	if (e == NCCL_DL_CUDA_SUCCESS && n >= 1) {
		*ngpus = n;
		return 0;
	}
	switch (e) {
	case NCCL_DL_CUDA_SUCCESS:
		return cd_errf(why, whylen, CD_ERR_UNSUPPORTED,
		               "no CUDA device (cudaGetDeviceCount: %d devices)", n);
	case NCCL_DL_CUDA_NO_DEVICE:
		return cd_errf(why, whylen, CD_ERR_UNSUPPORTED,
		               "no CUDA device (cudaGetDeviceCount: %s)", cuda_msg(d, e));
	case NCCL_DL_CUDA_STUB_LIBRARY:
		return cd_errf(why, whylen, CD_ERR_UNSUPPORTED,
		               "no CUDA driver (cudaGetDeviceCount: %s)", cuda_msg(d, e));
	case NCCL_DL_CUDA_INSUFFICIENT_DRIVER:
		/* the runtime says this both for an old driver and for none */
		if (d->driver_get_version(&driver) != NCCL_DL_CUDA_SUCCESS || driver <= 0)
			return cd_errf(why, whylen, CD_ERR_UNSUPPORTED,
			               "no CUDA driver (cudaGetDeviceCount: %s)", cuda_msg(d, e));
		return cd_errf(why, whylen, CD_ERR_UNSUPPORTED,
		               "CUDA driver too old (driver %d.%d, %s: cudaGetDeviceCount: %s)",
		               driver / 1000, driver % 1000 / 10, d->cudart_name, cuda_msg(d, e));
	default:
		return cd_errf(why, whylen, CD_ERR_UNSUPPORTED,
		               "CUDA unusable (cudaGetDeviceCount: %s, CUDA error %d)",
		               cuda_msg(d, e), e);
	}
}

int nccl_backend_version(char *out, size_t outlen, char *err, size_t errlen)
{
	const struct nccl_dl *d;
	char v[32];
	size_t len;
	int rc;

	if ((rc = nccl_dl_get(&d, err, errlen)) < 0)
		return rc;
	nccl_dl_version_string(d->nccl_version, v, sizeof(v));
	len = strlen(v);
	if (len >= outlen)
		return cd_errf(err, errlen, CD_ERR_TOOBIG, "NCCL version %s does not fit %zu bytes",
		               v, outlen);
	memcpy(out, v, len + 1);
	return 0;
}

int nccl_backend_unique_id(char *hex, size_t hexlen, char *err, size_t errlen)
{
	static const char digits[] = "0123456789abcdef";
	const struct nccl_dl *d;
	struct nccl_dl_id id;
	nccl_result r;
	int rc;

	if (hexlen < NCCL_ID_HEX_LEN + 1)
		return cd_errf(err, errlen, CD_ERR_TOOBIG,
		               "an NCCL id needs %d bytes in hex, the buffer has %zu",
		               NCCL_ID_HEX_LEN + 1, hexlen);
	if ((rc = nccl_dl_get(&d, err, errlen)) < 0)
		return rc;
	memset(&id, 0, sizeof(id));
	if ((r = d->get_unique_id(&id)) != NCCL_DL_SUCCESS) {
		const char *last = d->get_last_error ? d->get_last_error(NULL) : NULL;

		return cd_errf(err, errlen, CD_ERR_IO, "ncclGetUniqueId: %s (NCCL error %d)%s%s",
		               nccl_msg(d, r), r, last && last[0] ? ": " : "", last ? last : "");
	}
	for (size_t i = 0; i < NCCL_DL_ID_BYTES; i++) {
		unsigned char b = (unsigned char)id.internal[i];

		hex[2 * i] = digits[b >> 4];
		hex[2 * i + 1] = digits[b & 15];
	}
	hex[NCCL_ID_HEX_LEN] = '\0';
	return 0;
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int parse_id(const char *s, struct nccl_dl_id *id, char *err, size_t errlen)
{
	size_t len = s ? strlen(s) : 0;

	if (len != NCCL_ID_HEX_LEN)
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "an NCCL id is %d hex characters, not %zu", NCCL_ID_HEX_LEN, len);
	for (size_t i = 0; i < NCCL_DL_ID_BYTES; i++) {
		int hi = hex_value(s[2 * i]), lo = hex_value(s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return cd_errf(err, errlen, CD_ERR_PARSE,
			               "the NCCL id has a character that is not hex at offset %zu",
			               hi < 0 ? 2 * i : 2 * i + 1);
		id->internal[i] = (char)(hi << 4 | lo);
	}
	return 0;
}

static int check_args(int rank, int nranks, int gpu, int timeout_ms, const struct coll_sweep *p,
                      char *err, size_t errlen)
{
	if (nranks < 1 || nranks > COLL_MAX_RANKS)
		return cd_errf(err, errlen, CD_ERR_PARSE, "nranks %d is not in 1..%d", nranks,
		               COLL_MAX_RANKS);
	if (rank < 0 || rank >= nranks)
		return cd_errf(err, errlen, CD_ERR_PARSE, "rank %d is not in 0..%d", rank,
		               nranks - 1);
	if (gpu < 0)
		return cd_errf(err, errlen, CD_ERR_PARSE, "GPU %d is not a device number", gpu);
	if (timeout_ms < 1)
		return cd_errf(err, errlen, CD_ERR_PARSE, "timeout of %d ms is not positive",
		               timeout_ms);
	if ((unsigned)p->dtype >= CD_ARRAY_LEN(nccl_dtypes))
		return cd_errf(err, errlen, CD_ERR_PARSE, "unknown data type %d", (int)p->dtype);
	if (p->nsizes == 0 || !p->sizes)
		return cd_errf(err, errlen, CD_ERR_PARSE, "the sweep has no sizes");
	if (p->iters < 1 || p->warmup < 0)
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "iters %d must be at least 1 and warmup %d at least 0", p->iters,
		               p->warmup);
	return 0;
}

/* One rank's sweep: what it holds, for the waits and the one cleanup. */
struct run {
	const struct nccl_dl *d;
	const struct coll_sweep *p;
	int rank, nranks, timeout_ms, dtype;
	size_t esize;
	nccl_comm comm;
	cuda_stream stream;
	cuda_event start, stop, marks[MARKS];
	long long issued, finished; /* calls queued, and those seen finished */
	int64_t progress_ms;        /* when the last call finished, or the first was queued */
	void *dev_in, *dev_out, *host;
	char stage[64]; /* what runs, for messages: "rank 2 on GPU 1", "allreduce of 8 bytes" */
	char *err;
	size_t errlen;
};

static int cuda_fail(struct run *r, cuda_error e, const char *call)
{
	return cd_errf(r->err, r->errlen, CD_ERR_IO, "%s: %s: %s (CUDA error %d)", r->stage, call,
	               cuda_msg(r->d, e), e);
}

static int nccl_fail(struct run *r, nccl_result e, const char *call)
{
	const char *last = r->d->get_last_error ? r->d->get_last_error(r->comm) : NULL;

	return cd_errf(r->err, r->errlen, CD_ERR_IO, "%s: %s: %s (NCCL error %d)%s%s", r->stage,
	               call, nccl_msg(r->d, e), e, last && last[0] ? ": " : "", last ? last : "");
}

static void poll_pause(void)
{
	struct timespec ts = {.tv_nsec = POLL_NS};

	nanosleep(&ts, NULL);
}

/* The communicator's state: 0 when ready, 1 while NCCL still works on it
 * (ncclInProgress), or CD_ERR_IO with the error NCCL found (a peer failed). */
static int comm_state(struct run *r)
{
	nccl_result state = NCCL_DL_SUCCESS, e;

	e = r->d->comm_get_async_error(r->comm, &state);
	if (e != NCCL_DL_SUCCESS)
		return nccl_fail(r, e, "ncclCommGetAsyncError");
	if (state == NCCL_DL_IN_PROGRESS)
		return 1;
	if (state != NCCL_DL_SUCCESS)
		return nccl_fail(r, state, "NCCL reports");
	return 0;
}

/* Until a non-blocking call that said ncclInProgress is done. 0, CD_ERR_IO,
 * or CD_ERR_TIMEOUT without a message (the caller knows what waited). */
static int wait_comm(struct run *r, int64_t deadline)
{
	for (;;) {
		int s = comm_state(r);

		if (s <= 0)
			return s;
		if (cd_now_ms() >= deadline)
			return CD_ERR_TIMEOUT;
		poll_pause();
	}
}

/* Until everything queued on the stream has run; as wait_comm. */
static int wait_stream(struct run *r, int64_t deadline)
{
	for (;;) {
		cuda_error e = r->d->stream_query(r->stream);
		int s;

		if (e == NCCL_DL_CUDA_SUCCESS)
			return 0;
		if (e != NCCL_DL_CUDA_NOT_READY)
			return cuda_fail(r, e, "cudaStreamQuery");
		if ((s = comm_state(r)) < 0)
			return s;
		if (cd_now_ms() >= deadline)
			return CD_ERR_TIMEOUT;
		poll_pause();
	}
}

/* Wait for the oldest call in flight. 0, CD_ERR_IO, or CD_ERR_TIMEOUT (no
 * message) when no call has finished for timeout_ms. */
static int wait_oldest(struct run *r)
{
	cuda_event mark = r->marks[r->finished % MARKS];

	for (;;) {
		cuda_error e = r->d->event_query(mark);
		int s;

		if (e == NCCL_DL_CUDA_SUCCESS) {
			r->finished++;
			r->progress_ms = cd_now_ms();
			return 0;
		}
		if (e != NCCL_DL_CUDA_NOT_READY)
			return cuda_fail(r, e, "cudaEventQuery");
		/* a peer's failure leaves the call waiting forever: NCCL's state says so */
		if ((s = comm_state(r)) < 0)
			return s;
		if (cd_now_ms() - r->progress_ms >= r->timeout_ms)
			return CD_ERR_TIMEOUT;
		poll_pause();
	}
}

static int wait_all(struct run *r)
{
	int rc;

	while (r->finished < r->issued) {
		if ((rc = wait_oldest(r)) < 0)
			return rc;
	}
	return 0;
}

/* Queue an allreduce of count elements and its mark. */
static int issue(struct run *r, size_t count)
{
	const struct nccl_dl *d = r->d;
	nccl_result e;
	cuda_error ce;
	int rc;

	if (r->issued - r->finished == MARKS && (rc = wait_oldest(r)) < 0)
		return rc;
	if (r->issued == r->finished)
		r->progress_ms = cd_now_ms();
	e = d->all_reduce(r->dev_in, r->dev_out, count, r->dtype, NCCL_DL_SUM, r->comm, r->stream);
	/* non-blocking: the call is queued once the state is ncclSuccess */
	if (e == NCCL_DL_IN_PROGRESS && (rc = wait_comm(r, cd_now_ms() + r->timeout_ms)) < 0)
		return rc;
	if (e != NCCL_DL_SUCCESS && e != NCCL_DL_IN_PROGRESS)
		return nccl_fail(r, e, "ncclAllReduce");
	ce = d->event_record(r->marks[r->issued % MARKS], r->stream);
	if (ce != NCCL_DL_CUDA_SUCCESS)
		return cuda_fail(r, ce, "cudaEventRecord");
	r->issued++;
	return 0;
}

static size_t count_of(const struct run *r, size_t bytes)
{
	size_t count = bytes / r->esize;

	return count ? count : 1;
}

/* One size of the sweep (coll.h) into *res. */
static int run_size(struct run *r, size_t bytes_asked, struct coll_result *res)
{
	const struct nccl_dl *d = r->d;
	size_t count = count_of(r, bytes_asked), bytes = count * r->esize;
	long long wrong = -1;
	cuda_error e;
	float ms = 0;
	int rc;

	snprintf(r->stage, sizeof(r->stage), "allreduce of %zu bytes", bytes);
	if ((e = d->memset_async(r->dev_out, 0xff, bytes, r->stream)) != NCCL_DL_CUDA_SUCCESS)
		return cuda_fail(r, e, "cudaMemsetAsync");
	if ((rc = issue(r, count)) < 0 || (rc = wait_all(r)) < 0)
		goto out;
	if (r->p->check) {
		/* the stream is idle: this copy into pageable memory returns when done */
		e = d->memcpy_async(r->host, r->dev_out, bytes, NCCL_DL_CUDA_DEVICE_TO_HOST,
		                    r->stream);
		if (e != NCCL_DL_CUDA_SUCCESS)
			return cuda_fail(r, e, "cudaMemcpyAsync");
		if ((rc = wait_stream(r, cd_now_ms() + r->timeout_ms)) < 0)
			goto out;
		wrong = (long long)coll_check(r->host, count, r->p->dtype, r->nranks);
	}
	for (int i = 0; i < r->p->warmup; i++) {
		if ((rc = issue(r, count)) < 0)
			goto out;
	}
	/* the barrier: every rank starts the timed calls together */
	if ((rc = issue(r, 1)) < 0 || (rc = wait_all(r)) < 0)
		goto out;
	if ((e = d->event_record(r->start, r->stream)) != NCCL_DL_CUDA_SUCCESS)
		return cuda_fail(r, e, "cudaEventRecord");
	for (int i = 0; i < r->p->iters; i++) {
		if ((rc = issue(r, count)) < 0)
			goto out;
	}
	if ((e = d->event_record(r->stop, r->stream)) != NCCL_DL_CUDA_SUCCESS)
		return cuda_fail(r, e, "cudaEventRecord");
	if ((rc = wait_all(r)) < 0 || (rc = wait_stream(r, cd_now_ms() + r->timeout_ms)) < 0)
		goto out;
	if ((e = d->event_elapsed(&ms, r->start, r->stop)) != NCCL_DL_CUDA_SUCCESS)
		return cuda_fail(r, e, "cudaEventElapsedTime");
	*res = (struct coll_result){.bytes = bytes,
	                            .count = count,
	                            .time_us = (double)ms * 1000.0 / r->p->iters,
	                            .wrong = wrong};
out:
	if (rc == CD_ERR_TIMEOUT)
		cd_errf(r->err, r->errlen, rc, "allreduce of %zu bytes did not finish within %d ms",
		        bytes, r->timeout_ms);
	return rc;
}

/* The stream, the events, and the buffers of the largest size, with the
 * input on the device. */
static int setup(struct run *r, int gpu)
{
	const struct nccl_dl *d = r->d;
	size_t max_count = 0, max_bytes;
	cuda_error e;

	for (size_t k = 0; k < r->p->nsizes; k++) {
		size_t c = count_of(r, r->p->sizes[k]);

		max_count = c > max_count ? c : max_count;
	}
	max_bytes = max_count * r->esize;
	if ((e = d->set_device(gpu)) != NCCL_DL_CUDA_SUCCESS)
		return cuda_fail(r, e, "cudaSetDevice");
	e = d->stream_create(&r->stream, NCCL_DL_CUDA_STREAM_NON_BLOCKING);
	if (e != NCCL_DL_CUDA_SUCCESS) {
		r->stream = NULL;
		return cuda_fail(r, e, "cudaStreamCreateWithFlags");
	}
	if ((e = d->event_create(&r->start, NCCL_DL_CUDA_EVENT_DEFAULT)) != NCCL_DL_CUDA_SUCCESS) {
		r->start = NULL;
		return cuda_fail(r, e, "cudaEventCreateWithFlags");
	}
	if ((e = d->event_create(&r->stop, NCCL_DL_CUDA_EVENT_DEFAULT)) != NCCL_DL_CUDA_SUCCESS) {
		r->stop = NULL;
		return cuda_fail(r, e, "cudaEventCreateWithFlags");
	}
	for (size_t i = 0; i < MARKS; i++) {
		e = d->event_create(&r->marks[i], NCCL_DL_CUDA_EVENT_DISABLE_TIMING);
		if (e != NCCL_DL_CUDA_SUCCESS) {
			r->marks[i] = NULL;
			return cuda_fail(r, e, "cudaEventCreateWithFlags");
		}
	}
	if ((e = d->device_malloc(&r->dev_in, max_bytes)) != NCCL_DL_CUDA_SUCCESS) {
		r->dev_in = NULL;
		return cuda_fail(r, e, "cudaMalloc");
	}
	if ((e = d->device_malloc(&r->dev_out, max_bytes)) != NCCL_DL_CUDA_SUCCESS) {
		r->dev_out = NULL;
		return cuda_fail(r, e, "cudaMalloc");
	}
	/* Every size's input is a prefix of the largest one's (element i does not
	 * depend on the count). From pageable memory the copy returns once the
	 * data is staged, so the host buffer is free again for the checks. */
	r->host = cd_malloc(max_bytes);
	coll_fill(r->host, max_count, r->p->dtype, r->rank, r->nranks);
	e = d->memcpy_async(r->dev_in, r->host, max_bytes, NCCL_DL_CUDA_HOST_TO_DEVICE, r->stream);
	if (e != NCCL_DL_CUDA_SUCCESS)
		return cuda_fail(r, e, "cudaMemcpyAsync");
	return 0;
}

/* Join the communicator, within timeout_ms. */
static int comm_create(struct run *r, const struct nccl_dl_id *id)
{
	const struct nccl_dl *d = r->d;
	int64_t deadline = cd_now_ms() + r->timeout_ms;
	struct nccl_dl_config config = {.size = sizeof(config),
	                                .magic = NCCL_DL_CONFIG_MAGIC,
	                                .version = NCCL_DL_CONFIG_VERSION,
	                                .blocking = 0};
	nccl_result e;
	int rc;

	if (!d->comm_init_rank_config) {
		e = d->comm_init_rank(&r->comm, r->nranks, *id, r->rank);
		return e == NCCL_DL_SUCCESS ? 0 : nccl_fail(r, e, "ncclCommInitRank");
	}
	e = d->comm_init_rank_config(&r->comm, r->nranks, *id, r->rank, &config);
	if (e != NCCL_DL_SUCCESS && e != NCCL_DL_IN_PROGRESS)
		return nccl_fail(r, e, "ncclCommInitRankConfig");
	if (!r->comm)
		return cd_errf(r->err, r->errlen, CD_ERR_IO,
		               "%s: ncclCommInitRankConfig returned no communicator", r->stage);
	rc = wait_comm(r, deadline);
	if (rc == CD_ERR_TIMEOUT)
		cd_errf(r->err, r->errlen, rc, "no NCCL peers within %d ms (rank %d of %d)",
		        r->timeout_ms, r->rank, r->nranks);
	return rc;
}

/* End the communicator: finalize and destroy after a sweep that went well,
 * abort after a failure or a finalize that does not end in time. */
static void comm_end(struct run *r, int failed)
{
	const struct nccl_dl *d = r->d;
	char ignored[CD_ERRLEN], *err = r->err;
	size_t errlen = r->errlen;

	if (!r->comm)
		return;
	if (!failed && d->comm_finalize) {
		int64_t deadline = cd_now_ms() + r->timeout_ms;
		nccl_result e = d->comm_finalize(r->comm);

		/* the sweep stands whatever happens here: no message */
		r->err = ignored;
		r->errlen = sizeof(ignored);
		if (e == NCCL_DL_SUCCESS || e == NCCL_DL_IN_PROGRESS)
			failed = wait_comm(r, deadline) != 0;
		else
			failed = 1;
		r->err = err;
		r->errlen = errlen;
	}
	if (failed)
		d->comm_abort(r->comm);
	else
		d->comm_destroy(r->comm);
	r->comm = NULL;
}

/* Whether the stream is empty, waiting up to DRAIN_MS: cudaFree waits for
 * the whole device, so it must not run while a kernel may still hang. */
static int drained(struct run *r)
{
	int64_t deadline = cd_now_ms() + DRAIN_MS;

	while (r->d->stream_query(r->stream) == NCCL_DL_CUDA_NOT_READY) {
		if (cd_now_ms() >= deadline)
			return 0;
		poll_pause();
	}
	return 1;
}

static void teardown(struct run *r, int failed)
{
	const struct nccl_dl *d = r->d;

	comm_end(r, failed);
	if (!r->stream || !failed || drained(r)) {
		if (r->dev_in)
			d->device_free(r->dev_in);
		if (r->dev_out)
			d->device_free(r->dev_out);
	}
	if (r->start)
		d->event_destroy(r->start);
	if (r->stop)
		d->event_destroy(r->stop);
	for (size_t i = 0; i < MARKS; i++) {
		if (r->marks[i])
			d->event_destroy(r->marks[i]);
	}
	if (r->stream)
		d->stream_destroy(r->stream);
	free(r->host);
}

int nccl_backend_sweep(const char *id_hex, int rank, int nranks, int gpu, int timeout_ms,
                       const struct coll_sweep *p, struct coll_result *out, size_t *done, char *err,
                       size_t errlen)
{
	struct run r = {.p = p,
	                .rank = rank,
	                .nranks = nranks,
	                .timeout_ms = timeout_ms,
	                .err = err,
	                .errlen = errlen};
	char version[32];
	struct nccl_dl_id id;
	int rc;

	__atomic_store_n(done, 0, __ATOMIC_RELEASE);
	if ((rc = parse_id(id_hex, &id, err, errlen)) < 0 ||
	    (rc = check_args(rank, nranks, gpu, timeout_ms, p, err, errlen)) < 0)
		return rc;
	if ((rc = nccl_dl_get(&r.d, err, errlen)) < 0)
		return rc;
	if (p->dtype == COLL_BFLOAT16 && r.d->nccl_version < 21000) {
		nccl_dl_version_string(r.d->nccl_version, version, sizeof(version));
		return cd_errf(err, errlen, CD_ERR_UNSUPPORTED,
		               "bfloat16 needs NCCL 2.10 or later, this is %s", version);
	}
	r.dtype = nccl_dtypes[p->dtype];
	r.esize = coll_dtype_size(p->dtype);
	snprintf(r.stage, sizeof(r.stage), "rank %d on GPU %d", rank, gpu);
	if ((rc = setup(&r, gpu)) < 0 || (rc = comm_create(&r, &id)) < 0)
		goto out;
	for (size_t k = 0; k < p->nsizes; k++) {
		if ((rc = run_size(&r, p->sizes[k], &out[k])) < 0)
			goto out;
		__atomic_store_n(done, k + 1, __ATOMIC_RELEASE); /* watched: nccl.h */
	}
out:
	teardown(&r, rc < 0);
	return rc;
}
