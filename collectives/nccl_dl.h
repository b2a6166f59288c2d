/* SPDX-License-Identifier: MIT */
/*
 * nccl_dl.h - the slice of NCCL and of the CUDA runtime that the NCCL
 * backend (nccl.h) calls, declared here and resolved with dlopen/dlsym, so
 * that nothing links against them and no CUDA header is needed to build.
 * Internal to collectives/nccl*.c and tests/unit/test_nccl.c, which checks
 * every value below against nccl.h, driver_types.h and cuda_runtime_api.h
 * when they are installed at build time.
 *
 * ABI notes: ncclResult_t, ncclDataType_t, ncclRedOp_t, cudaError_t and
 * cudaMemcpyKind are C enums, passed as int; ncclComm_t, cudaStream_t and
 * cudaEvent_t are opaque pointers; ncclUniqueId is a struct of 128 chars,
 * passed by value.
 */
#ifndef CD_COLLECTIVES_NCCL_DL_H
#define CD_COLLECTIVES_NCCL_DL_H

#include <stddef.h>

typedef int nccl_result;                    /* ncclResult_t */
typedef int cuda_error;                     /* cudaError_t */
typedef struct nccl_comm_st *nccl_comm;     /* ncclComm_t */
typedef struct cuda_stream_st *cuda_stream; /* cudaStream_t */
typedef struct cuda_event_st *cuda_event;   /* cudaEvent_t */

#define NCCL_DL_ID_BYTES 128 /* NCCL_UNIQUE_ID_BYTES */

struct nccl_dl_id { /* ncclUniqueId */
	char internal[NCCL_DL_ID_BYTES];
};

/* ncclResult_t */
#define NCCL_DL_SUCCESS     0 /* ncclSuccess */
#define NCCL_DL_IN_PROGRESS 7 /* ncclInProgress (2.14) */

/* ncclDataType_t and ncclRedOp_t */
#define NCCL_DL_INT32    2 /* ncclInt32 */
#define NCCL_DL_FLOAT32  7 /* ncclFloat32 */
#define NCCL_DL_FLOAT64  8 /* ncclFloat64 */
#define NCCL_DL_BFLOAT16 9 /* ncclBfloat16 (2.10) */
#define NCCL_DL_SUM      0 /* ncclSum */

/*
 * ncclConfig_t as NCCL 2.14 declared it (struct ncclConfig_v21400), filled
 * as NCCL_CONFIG_INITIALIZER does. Later versions copy only `size` bytes of
 * it and give the fields they added their defaults when version is older
 * than theirs, so this layout works with every NCCL since 2.14.
 */
struct nccl_dl_config {
	size_t size;
	unsigned int magic;
	unsigned int version;
	int blocking;
};
#define NCCL_DL_CONFIG_MAGIC   0xcafebeefu
#define NCCL_DL_CONFIG_VERSION 21400 /* NCCL_VERSION(2, 14, 0) */

/* cudaError_t */
#define NCCL_DL_CUDA_SUCCESS             0   /* cudaSuccess */
#define NCCL_DL_CUDA_STUB_LIBRARY        34  /* cudaErrorStubLibrary */
#define NCCL_DL_CUDA_INSUFFICIENT_DRIVER 35  /* cudaErrorInsufficientDriver */
#define NCCL_DL_CUDA_NO_DEVICE           100 /* cudaErrorNoDevice */
#define NCCL_DL_CUDA_NOT_READY           600 /* cudaErrorNotReady */

/* cudaMemcpyKind, and the flags of cudaStreamCreateWithFlags and
 * cudaEventCreateWithFlags */
#define NCCL_DL_CUDA_HOST_TO_DEVICE       1 /* cudaMemcpyHostToDevice */
#define NCCL_DL_CUDA_DEVICE_TO_HOST       2 /* cudaMemcpyDeviceToHost */
#define NCCL_DL_CUDA_STREAM_NON_BLOCKING  1 /* cudaStreamNonBlocking */
#define NCCL_DL_CUDA_EVENT_DEFAULT        0 /* cudaEventDefault */
#define NCCL_DL_CUDA_EVENT_DISABLE_TIMING 2 /* cudaEventDisableTiming */

/* The loaded libraries. Each function pointer is the symbol named above it,
 * NULL only where that says "optional". */
struct nccl_dl {
	void *nccl_lib, *cudart_lib;
	char nccl_name[256], cudart_name[256]; /* the names that loaded */
	int nccl_version;                      /* ncclGetVersion's code, 22809 */

	/* ncclGetVersion */
	nccl_result (*get_version)(int *version);
	/* ncclGetUniqueId */
	nccl_result (*get_unique_id)(struct nccl_dl_id *id);
	/* ncclCommInitRank */
	nccl_result (*comm_init_rank)(nccl_comm *comm, int nranks, struct nccl_dl_id id, int rank);
	/* ncclCommInitRankConfig, optional (2.14) */
	nccl_result (*comm_init_rank_config)(nccl_comm *comm, int nranks, struct nccl_dl_id id,
	                                     int rank, struct nccl_dl_config *config);
	/* ncclCommGetAsyncError */
	nccl_result (*comm_get_async_error)(nccl_comm comm, nccl_result *state);
	/* ncclCommFinalize, optional (2.14) */
	nccl_result (*comm_finalize)(nccl_comm comm);
	/* ncclCommDestroy */
	nccl_result (*comm_destroy)(nccl_comm comm);
	/* ncclCommAbort */
	nccl_result (*comm_abort)(nccl_comm comm);
	/* ncclAllReduce */
	nccl_result (*all_reduce)(const void *send, void *recv, size_t count, int datatype, int op,
	                          nccl_comm comm, cuda_stream stream);
	/* ncclGetErrorString */
	const char *(*get_error_string)(nccl_result r);
	/* ncclGetLastError, optional (2.13) */
	const char *(*get_last_error)(nccl_comm comm);

	/* cudaGetDeviceCount */
	cuda_error (*get_device_count)(int *count);
	/* cudaGetErrorString */
	const char *(*cuda_error_string)(cuda_error e);
	/* cudaDriverGetVersion */
	cuda_error (*driver_get_version)(int *version);
	/* cudaRuntimeGetVersion */
	cuda_error (*runtime_get_version)(int *version);
	/* cudaSetDevice */
	cuda_error (*set_device)(int device);
	/* cudaMalloc */
	cuda_error (*device_malloc)(void **ptr, size_t n);
	/* cudaFree */
	cuda_error (*device_free)(void *ptr);
	/* cudaMemcpyAsync */
	cuda_error (*memcpy_async)(void *dst, const void *src, size_t n, int kind,
	                           cuda_stream stream);
	/* cudaMemsetAsync */
	cuda_error (*memset_async)(void *ptr, int value, size_t n, cuda_stream stream);
	/* cudaStreamCreateWithFlags */
	cuda_error (*stream_create)(cuda_stream *stream, unsigned int flags);
	/* cudaStreamDestroy */
	cuda_error (*stream_destroy)(cuda_stream stream);
	/* cudaStreamQuery */
	cuda_error (*stream_query)(cuda_stream stream);
	/* cudaEventCreateWithFlags */
	cuda_error (*event_create)(cuda_event *event, unsigned int flags);
	/* cudaEventRecord */
	cuda_error (*event_record)(cuda_event event, cuda_stream stream);
	/* cudaEventQuery */
	cuda_error (*event_query)(cuda_event event);
	/* cudaEventElapsedTime */
	cuda_error (*event_elapsed)(float *ms, cuda_event start, cuda_event end);
	/* cudaEventDestroy */
	cuda_error (*event_destroy)(cuda_event event);
};

/*
 * Load NCCL and the CUDA runtime into d, fresh: the names of nccl.h, or of
 * CLUSTERDOC_NCCL_LIB / CLUSTERDOC_CUDART_LIB as they are now. 0, or
 * CD_ERR_UNSUPPORTED with the reason in why (nothing stays loaded then).
 * Release with nccl_dl_close.
 */
int nccl_dl_open(struct nccl_dl *d, char *why, size_t whylen);

/* dlclose what nccl_dl_open loaded (a zeroed d is fine). */
void nccl_dl_close(struct nccl_dl *d);

/*
 * The process's libraries, loaded by nccl_dl_open at the first call (under
 * pthread_once) and kept. 0 with *d, or the first load's error and reason.
 */
int nccl_dl_get(const struct nccl_dl **d, char *why, size_t whylen);

/* "2.28.9" for 22809 (and "2.9.6" for the old encoding, 2906). */
void nccl_dl_version_string(int code, char *buf, size_t len);

#endif
