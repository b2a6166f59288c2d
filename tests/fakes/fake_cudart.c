/* SPDX-License-Identifier: MIT */
/*
 * fake_cudart.c - a CUDA runtime for the unit tests, loaded by the NCCL
 * backend through CLUSTERDOC_CUDART_LIB: only the functions it calls
 * (collectives/nccl_dl.h), with the real signatures and error codes
 * (cuda_runtime_api.h, driver_types.h), on the host.
 *
 * One device. Device memory is mmap()ed pages (outside the host heap, as on a
 * GPU); the copies check their direction against it. Work runs at once, so a
 * stream is idle but for the "GPU time" of FAKE_CUDA_STEP_MS; an event
 * completes when recorded (CLOCK_MONOTONIC), or at the end of that time.
 *
 * Environment, read at every call:
 *   FAKE_CUDA_DEVICES=0  no device: cudaGetDeviceCount and cudaSetDevice say
 *                        cudaErrorNoDevice
 *   FAKE_CUDA_HANG=1     cudaStreamQuery and cudaEventQuery say
 *                        cudaErrorNotReady forever
 *   FAKE_CUDA_STEP_MS=N  each cudaEventRecord ends a piece of GPU work of N
 *                        ms: the event completes N ms after the stream's
 *                        previous work, and the stream is busy until then
 */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <stdint.h>
#include <time.h>

typedef int cudaError_t;
typedef struct fake_stream *cudaStream_t;
typedef struct fake_event *cudaEvent_t;

enum {
	cudaSuccess = 0,
	cudaErrorInvalidValue = 1,
	cudaErrorMemoryAllocation = 2,
	cudaErrorNoDevice = 100,
	cudaErrorInvalidDevice = 101,
	cudaErrorInvalidResourceHandle = 400,
	cudaErrorNotReady = 600,
};
enum { cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2 };
enum { cudaEventDisableTiming = 2 };

cudaError_t cudaGetDeviceCount(int *count);
const char *cudaGetErrorString(cudaError_t error);
cudaError_t cudaDriverGetVersion(int *version);
cudaError_t cudaRuntimeGetVersion(int *version);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaMalloc(void **ptr, size_t size);
cudaError_t cudaFree(void *ptr);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, int kind,
                            cudaStream_t stream);
cudaError_t cudaMemsetAsync(void *ptr, int value, size_t count, cudaStream_t stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamQuery(cudaStream_t stream);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream);
cudaError_t cudaEventQuery(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end);
cudaError_t cudaEventDestroy(cudaEvent_t event);

#define MAX_ALLOCS  256
#define MAX_STREAMS 64
#define MAX_EVENTS  256

struct fake_stream {
	int used;
	int64_t busy_until; /* ns, CLOCK_MONOTONIC */
};

struct fake_event {
	int used, recorded;
	unsigned int flags;
	int64_t done_at; /* ns */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	char *base;
	size_t size;
} allocs[MAX_ALLOCS];
static struct fake_stream streams[MAX_STREAMS];
static struct fake_event events[MAX_EVENTS];

static int env_is(const char *name, const char *value)
{
	const char *v = getenv(name);

	return v && strcmp(v, value) == 0;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

cudaError_t cudaGetDeviceCount(int *count)
{
	if (env_is("FAKE_CUDA_DEVICES", "0")) {
		*count = 0;
		return cudaErrorNoDevice;
	}
	*count = 1;
	return cudaSuccess;
}

const char *cudaGetErrorString(cudaError_t error)
{
	switch (error) {
	case cudaSuccess:
		return "no error";
	case cudaErrorInvalidValue:
		return "invalid argument";
	case cudaErrorMemoryAllocation:
		return "out of memory";
	case cudaErrorNoDevice:
		return "no CUDA-capable device is detected";
	case cudaErrorInvalidDevice:
		return "invalid device ordinal";
	case cudaErrorInvalidResourceHandle:
		return "invalid resource handle";
	case cudaErrorNotReady:
		return "device not ready";
	}
	return "unrecognized error code";
}

cudaError_t cudaDriverGetVersion(int *version)
{
	*version = 13000;
	return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int *version)
{
	*version = 13000;
	return cudaSuccess;
}

cudaError_t cudaSetDevice(int device)
{
	if (env_is("FAKE_CUDA_DEVICES", "0"))
		return cudaErrorNoDevice;
	return device == 0 ? cudaSuccess : cudaErrorInvalidDevice;
}

cudaError_t cudaMalloc(void **ptr, size_t size)
{
	void *p =
	    mmap(NULL, size ? size : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cudaError_t rc = cudaErrorMemoryAllocation;

	if (p == MAP_FAILED)
		return cudaErrorMemoryAllocation;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < MAX_ALLOCS; i++) {
		if (!allocs[i].base) {
			allocs[i].base = p;
			allocs[i].size = size ? size : 1;
			*ptr = p;
			rc = cudaSuccess;
			break;
		}
	}
	pthread_mutex_unlock(&lock);
	if (rc != cudaSuccess)
		munmap(p, size ? size : 1);
	return rc;
}

cudaError_t cudaFree(void *ptr)
{
	cudaError_t rc = cudaErrorInvalidValue;

	if (!ptr)
		return cudaSuccess;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < MAX_ALLOCS; i++) {
		if (allocs[i].base == ptr) {
			munmap(allocs[i].base, allocs[i].size);
			allocs[i].base = NULL;
			rc = cudaSuccess;
			break;
		}
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

/* Whether [p, p + n) lies inside one device allocation. */
static int on_device(const void *p, size_t n)
{
	const char *c = p;
	int found = 0;

	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < MAX_ALLOCS && !found; i++) {
		found = allocs[i].base && c >= allocs[i].base &&
		        n <= allocs[i].size - (size_t)(c - allocs[i].base);
	}
	pthread_mutex_unlock(&lock);
	return found;
}

static int stream_ok(cudaStream_t s)
{
	return s >= streams && s < streams + MAX_STREAMS && s->used;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, int kind, cudaStream_t stream)
{
	if (!stream_ok(stream))
		return cudaErrorInvalidResourceHandle;
	if (kind == cudaMemcpyHostToDevice && on_device(dst, count) && !on_device(src, 1))
		memcpy(dst, src, count);
	else if (kind == cudaMemcpyDeviceToHost && on_device(src, count) && !on_device(dst, 1))
		memcpy(dst, src, count);
	else
		return cudaErrorInvalidValue;
	return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *ptr, int value, size_t count, cudaStream_t stream)
{
	if (!stream_ok(stream))
		return cudaErrorInvalidResourceHandle;
	if (!on_device(ptr, count))
		return cudaErrorInvalidValue;
	memset(ptr, value, count);
	return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags)
{
	cudaError_t rc = cudaErrorMemoryAllocation;

	if (flags > 1)
		return cudaErrorInvalidValue;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < MAX_STREAMS; i++) {
		if (!streams[i].used) {
			streams[i] = (struct fake_stream){.used = 1};
			*stream = &streams[i];
			rc = cudaSuccess;
			break;
		}
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
	if (!stream_ok(stream))
		return cudaErrorInvalidResourceHandle;
	pthread_mutex_lock(&lock);
	stream->used = 0;
	pthread_mutex_unlock(&lock);
	return cudaSuccess;
}

cudaError_t cudaStreamQuery(cudaStream_t stream)
{
	if (!stream_ok(stream))
		return cudaErrorInvalidResourceHandle;
	if (env_is("FAKE_CUDA_HANG", "1"))
		return cudaErrorNotReady;
	return now_ns() >= stream->busy_until ? cudaSuccess : cudaErrorNotReady;
}

static int event_ok(cudaEvent_t e)
{
	return e >= events && e < events + MAX_EVENTS && e->used;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
	cudaError_t rc = cudaErrorMemoryAllocation;

	if (flags > 0xf)
		return cudaErrorInvalidValue;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < MAX_EVENTS; i++) {
		if (!events[i].used) {
			events[i] = (struct fake_event){.used = 1, .flags = flags};
			*event = &events[i];
			rc = cudaSuccess;
			break;
		}
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
	const char *step = getenv("FAKE_CUDA_STEP_MS");
	int64_t now = now_ns(), start;

	if (!event_ok(event) || !stream_ok(stream))
		return cudaErrorInvalidResourceHandle;
	start = stream->busy_until > now ? stream->busy_until : now;
	event->done_at = start + (step ? atoll(step) * 1000000 : 0);
	event->recorded = 1;
	stream->busy_until = event->done_at;
	return cudaSuccess;
}

/* An event never recorded has nothing to wait for: cudaSuccess. */
cudaError_t cudaEventQuery(cudaEvent_t event)
{
	if (!event_ok(event))
		return cudaErrorInvalidResourceHandle;
	if (env_is("FAKE_CUDA_HANG", "1"))
		return cudaErrorNotReady;
	return !event->recorded || now_ns() >= event->done_at ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
	if (!event_ok(start) || !event_ok(end) || !start->recorded || !end->recorded ||
	    (start->flags | end->flags) & cudaEventDisableTiming)
		return cudaErrorInvalidResourceHandle;
	if (now_ns() < end->done_at)
		return cudaErrorNotReady;
	*ms = (float)((double)(end->done_at - start->done_at) / 1e6);
	return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event)
{
	if (!event_ok(event))
		return cudaErrorInvalidResourceHandle;
	pthread_mutex_lock(&lock);
	event->used = 0;
	pthread_mutex_unlock(&lock);
	return cudaSuccess;
}
