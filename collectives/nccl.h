/* SPDX-License-Identifier: MIT */
/*
 * nccl.h - the NCCL backend: allreduce over NCCL on this node's GPUs, one
 * rank per GPU, with the same sweep and check as every backend (coll.h).
 * Agent side. NCCL and the CUDA runtime are dlopen()ed at run time, never
 * linked and no CUDA header is needed to build, so the agent runs (and says
 * why NCCL cannot) on nodes without them.
 *
 * Libraries, tried in order until one loads:
 *     NCCL          "libnccl.so.2", "libnccl.so"
 *     CUDA runtime  "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0",
 *                   "libcudart.so"
 * The environment variables CLUSTERDOC_NCCL_LIB and CLUSTERDOC_CUDART_LIB
 * (a path or a soname; empty = unset) replace each list with that one name
 * (the unit tests load the fakes of tests/fakes/ this way). A runtime whose
 * CUDA version is newer than the installed driver's is passed over for the
 * next name. NCCL 2.14 or later is needed for the bounded wait for peers (see
 * nccl_backend_sweep); bfloat16 needs NCCL 2.10.
 *
 * The libraries are loaded once per process, at the first call of any of
 * these functions, under the environment of that moment; they stay loaded.
 * Every function is thread-safe: several ranks may run nccl_backend_sweep at
 * once in threads of one process, one GPU each. Nothing else is global.
 *
 * Errors: 0, or a negative enum cd_err with a one-line message in the
 * caller's buffer (CD_ERRLEN bytes are enough).
 */
#ifndef CD_COLLECTIVES_NCCL_H
#define CD_COLLECTIVES_NCCL_H

#include "cd.h"
#include "collectives/coll.h"

#include <stddef.h>

/* Characters of an ncclUniqueId in hex (128 bytes), without the NUL. */
#define NCCL_ID_HEX_LEN 256

/*
 * Whether the NCCL backend can run on this node. 0 with *ngpus (>= 1) the
 * number of CUDA devices; or CD_ERR_UNSUPPORTED with *ngpus 0 and the reason
 * in why, one line naming the library or the CUDA call, for example
 *     "libnccl.so.2 not found (dlopen: libnccl.so.2: cannot open shared ...)"
 *     "libcudart.so.13 not found (dlopen: ...)"
 *     "no CUDA driver (cudaGetDeviceCount: CUDA driver version is insufficient
 *      for CUDA runtime version)"
 *     "no CUDA device (cudaGetDeviceCount: no CUDA-capable device is detected)"
 *     "CUDA driver too old (driver 12.2, libcudart.so.13 needs 13.0)"
 * Safe on a machine without a driver: only cudaGetDeviceCount runs. The
 * device count is asked again at every call; the libraries are not.
 */
int nccl_backend_available(int *ngpus, char *why, size_t whylen);

/*
 * The loaded NCCL's version, "2.28.9" (from ncclGetVersion), into out
 * (outlen bytes; 16 are enough). 0, CD_ERR_UNSUPPORTED when NCCL cannot be
 * loaded (the reason in err), or CD_ERR_TOOBIG when out is too small.
 */
int nccl_backend_version(char *out, size_t outlen, char *err, size_t errlen);

/*
 * For rank 0's node: a new ncclUniqueId (ncclGetUniqueId, which opens NCCL's
 * bootstrap listener in this process) as NCCL_ID_HEX_LEN lowercase hex
 * characters and a NUL in hex (hexlen >= NCCL_ID_HEX_LEN + 1). 0;
 * CD_ERR_TOOBIG when hexlen is smaller; CD_ERR_UNSUPPORTED when NCCL cannot
 * be loaded; CD_ERR_IO when ncclGetUniqueId fails (NCCL's message in err).
 */
int nccl_backend_unique_id(char *hex, size_t hexlen, char *err, size_t errlen);

/*
 * Run one rank of an allreduce sweep: rank of nranks (0 <= rank < nranks <=
 * COLL_MAX_RANKS), on CUDA device gpu (cudaSetDevice in the calling
 * thread), in the communicator of id_hex (from nccl_backend_unique_id on
 * rank 0's node, the same for every rank; upper-case hex is accepted too).
 *
 * The communicator is made with ncclCommInitRankConfig, non-blocking, and
 * its state polled until ready; when not every rank has joined within
 * timeout_ms it is aborted and the sweep fails with CD_ERR_TIMEOUT,
 * "no NCCL peers within 10000 ms (rank 3 of 8)". (An NCCL older than 2.14
 * has only the blocking ncclCommInitRank: there NCCL's own bootstrap
 * timeout bounds that wait.)
 *
 * Then the sweep p, as coll.h describes it, on one CUDA stream: the input
 * (coll_fill for the largest size, made on the host and copied to the
 * device once; each size uses its first count elements) and the output are
 * device buffers of the largest size. For each size: the output is set to
 * 0xff bytes, one allreduce (out of place, ncclSum) is run and, with
 * p->check, copied back and counted with coll_check (wrong is -1 without
 * it); p->warmup untimed calls; a barrier (a one-element allreduce, waited
 * for); then p->iters calls back to back between two CUDA events, and
 * time_us = their elapsed time / p->iters.
 *
 * Every wait polls (cudaEventQuery, cudaStreamQuery, ncclCommGetAsyncError)
 * against a deadline. An event recorded after each call shows the calls
 * finish one by one, and timeout_ms without any of them finishing while one
 * is in flight is a stall (at most 32 calls are queued ahead of the GPU):
 * a large size with many iterations may take longer than timeout_ms in all,
 * a hung call is found within timeout_ms. On a stall the communicator is
 * aborted and the sweep fails with CD_ERR_TIMEOUT naming the size,
 * "allreduce of 4194304 bytes did not finish within 10000 ms". An error
 * NCCL reports meanwhile (a peer failed) aborts it too, CD_ERR_IO.
 *
 * out has room for p->nsizes results; out[k] is for p->sizes[k] and
 * out[0 .. *done - 1] hold the sizes completed, also after an error. As in
 * ring_sweep, *done moves to k + 1 as soon as size k has completed, with an
 * atomic store (release), so another thread may follow it with
 * __atomic_load_n(done, __ATOMIC_ACQUIRE) while the sweep runs.
 *
 * Returns 0; CD_ERR_PARSE for an id_hex that is not NCCL_ID_HEX_LEN hex
 * characters, or an invalid rank, nranks, gpu (negative), timeout_ms (< 1)
 * or sweep (no sizes, iters < 1, warmup < 0, an unknown dtype): nothing is
 * loaded or run then; CD_ERR_UNSUPPORTED when NCCL or CUDA cannot be loaded
 * or the dtype needs a newer NCCL; CD_ERR_TIMEOUT as above; CD_ERR_IO when a
 * CUDA or NCCL call fails (the call and its message in err).
 *
 * Frees what it allocated and ends the communicator (ncclCommFinalize, then
 * ncclCommDestroy; ncclCommAbort after an error, or when the finalize does
 * not end within timeout_ms, which is not an error: the sweep is complete).
 * After an abort, device buffers whose stream still does not drain are left
 * allocated rather than block in cudaFree (the agent's exit frees them).
 */
int nccl_backend_sweep(const char *id_hex, int rank, int nranks, int gpu, int timeout_ms,
                       const struct coll_sweep *p, struct coll_result *out, size_t *done, char *err,
                       size_t errlen);

#endif
