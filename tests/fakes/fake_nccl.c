/*
 * fake_nccl.c - NCCL for the unit tests, loaded by the NCCL backend through
 * CLUSTERDOC_NCCL_LIB: only the functions it calls (collectives/nccl_dl.h),
 * with the real signatures and result codes (nccl.h), for a world of one
 * rank on the host: ncclAllReduce copies its input to its output.
 *
 * It behaves as a non-blocking NCCL does where the backend must cope:
 * ncclCommInitRankConfig with blocking = 0 and ncclCommFinalize answer
 * ncclInProgress and the state turns ncclSuccess at the next
 * ncclCommGetAsyncError; so does a communicator's first ncclAllReduce
 * (NCCL connecting lazily). A communicator of more than one rank never
 * completes its init (no peer ever comes). The ncclConfig_t is checked as
 * NCCL checks it (magic, version, blocking).
 *
 * Environment, read at every call:
 *   FAKE_NCCL_CORRUPT=1  ncclAllReduce flips the lowest bit of the first
 *                        element of its output: one wrong element
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int ncclResult_t;
typedef struct fake_comm *ncclComm_t;
typedef void *cudaStream_t;
typedef struct {
	char internal[128];
} ncclUniqueId;

/* ncclConfig_v21400, the fields every version has */
typedef struct {
	size_t size;
	unsigned int magic;
	unsigned int version;
	int blocking;
} fake_config;

enum {
	ncclSuccess = 0,
	ncclSystemError = 2,
	ncclInvalidArgument = 4,
	ncclInvalidUsage = 5,
	ncclInProgress = 7,
};

ncclResult_t ncclGetVersion(int *version);
ncclResult_t ncclGetUniqueId(ncclUniqueId *id);
ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank,
                                    fake_config *config);
ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank);
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *state);
ncclResult_t ncclCommFinalize(ncclComm_t comm);
ncclResult_t ncclCommDestroy(ncclComm_t comm);
ncclResult_t ncclCommAbort(ncclComm_t comm);
ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count, int datatype, int op,
                           ncclComm_t comm, cudaStream_t stream);
const char *ncclGetErrorString(ncclResult_t result);
const char *ncclGetLastError(ncclComm_t comm);

struct fake_comm {
	int nranks, rank, blocking;
	ncclResult_t state;
	int polls; /* ncclCommGetAsyncError calls until state turns ncclSuccess; -1 never */
	int calls; /* ncclAllReduce calls */
};

static _Thread_local char last_error[256];

static ncclResult_t fail(ncclResult_t r, const char *msg)
{
	snprintf(last_error, sizeof(last_error), "fake NCCL: %s", msg);
	return r;
}

/* Answer ncclInProgress now and turn ncclSuccess at the next poll. */
static ncclResult_t in_progress(struct fake_comm *c)
{
	c->state = ncclInProgress;
	c->polls = 1;
	return ncclInProgress;
}

ncclResult_t ncclGetVersion(int *version)
{
	*version = 22809;
	return ncclSuccess;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
	/* every byte value, the high ones too, over the 128 bytes */
	for (int i = 0; i < 128; i++)
		id->internal[i] = (char)(i * 2 + (i >= 64));
	return ncclSuccess;
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank,
                                    fake_config *config)
{
	fake_config cfg = {
	    .size = sizeof(cfg), .magic = 0xcafebeef, .version = 21400, .blocking = 1};
	struct fake_comm *c;

	(void)id;
	*comm = NULL;
	if (config) {
		if (config->magic != 0xcafebeef || config->size < sizeof(cfg))
			return fail(ncclInvalidArgument, "ncclConfig_t argument not initialized "
			                                 "via NCCL_CONFIG_INITIALIZER");
		if (config->version >= 21400 && config->blocking != INT_MIN)
			cfg.blocking = config->blocking;
	}
	if (cfg.blocking != 0 && cfg.blocking != 1)
		return fail(ncclInvalidArgument, "invalid config blocking attribute value");
	if (nranks < 1 || rank < 0 || rank >= nranks)
		return fail(ncclInvalidArgument, "invalid rank");
	if (nranks > 1 && cfg.blocking)
		return fail(ncclSystemError, "a blocking init of several ranks would never return");
	c = calloc(1, sizeof(*c));
	if (!c)
		return fail(ncclSystemError, "out of memory");
	*c = (struct fake_comm){.nranks = nranks, .rank = rank, .blocking = cfg.blocking};
	*comm = c;
	if (nranks > 1) {
		c->state = ncclInProgress;
		c->polls = -1;
		return ncclInProgress;
	}
	return cfg.blocking ? ncclSuccess : in_progress(c);
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
	return ncclCommInitRankConfig(comm, nranks, id, rank, NULL);
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *state)
{
	if (!comm)
		return fail(ncclInvalidArgument, "NULL communicator");
	if (comm->state == ncclInProgress && comm->polls > 0 && --comm->polls == 0)
		comm->state = ncclSuccess;
	*state = comm->state;
	return ncclSuccess;
}

ncclResult_t ncclCommFinalize(ncclComm_t comm)
{
	if (!comm || comm->state != ncclSuccess)
		return fail(ncclInvalidUsage, "finalize of a communicator that is not ready");
	return comm->blocking ? ncclSuccess : in_progress(comm);
}

ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
	if (comm && comm->state != ncclSuccess)
		return fail(ncclInvalidUsage, "destroy of a communicator that is not ready");
	free(comm);
	return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm)
{
	free(comm);
	return ncclSuccess;
}

static size_t type_size(int datatype)
{
	static const size_t sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};

	return datatype >= 0 && datatype < 12 ? sizes[datatype] : 0;
}

ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count, int datatype, int op,
                           ncclComm_t comm, cudaStream_t stream)
{
	const char *corrupt = getenv("FAKE_NCCL_CORRUPT");
	size_t size = type_size(datatype);

	if (!comm || comm->state != ncclSuccess)
		return fail(ncclInvalidUsage, "collective on a communicator that is not ready");
	if (!size || op != 0 || !send || !recv || !stream)
		return fail(ncclInvalidArgument, "bad ncclAllReduce argument");
	memmove(recv, send, count * size);
	if (count && corrupt && strcmp(corrupt, "1") == 0)
		((unsigned char *)recv)[0] ^= 1;
	if (comm->calls++ == 0 && !comm->blocking)
		return in_progress(comm);
	return ncclSuccess;
}

const char *ncclGetErrorString(ncclResult_t result)
{
	switch (result) {
	case ncclSuccess:
		return "no error";
	case ncclSystemError:
		return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
	case ncclInvalidArgument:
		return "invalid argument (run with NCCL_DEBUG=WARN for details)";
	case ncclInvalidUsage:
		return "invalid usage (run with NCCL_DEBUG=WARN for details)";
	case ncclInProgress:
		return "NCCL operation in progress";
	}
	return "unknown result code";
}

const char *ncclGetLastError(ncclComm_t comm)
{
	(void)comm;
	return last_error;
}
