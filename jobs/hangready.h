/* SPDX-License-Identifier: MIT */
/*
 * hangready.h - what makes a job started by `clusterdoc run` ready for a
 * later hang inspection (docs/run.md, "Ready for a hang"): PyTorch's NCCL
 * flight recorder set to dump under the run directory, and Python's
 * faulthandler registered on a signal in every Python process of the job,
 * through a sitecustomize.py placed first on PYTHONPATH that chains any
 * sitecustomize it hides.
 */
#ifndef CD_COLLECTIVES_HANGREADY_H
#define CD_COLLECTIVES_HANGREADY_H

#include "jobs/runsync.h"

#include <stddef.h>

#define HANGREADY_MAX_ENV 16
/* The flight recorder's ring: entries (a collective's start or end each). */
#define HANGREADY_TRACE_ENTRIES 2000

/*
 * The files and environment that make a job ready for `clusterdoc hang`,
 * for a job whose run directory on the node is run_dir ("~/..." allowed:
 * resolved by the agent) and whose torch version is torch_version (""
 * when unknown: the TORCH_NCCL_* variables are then still set, they are
 * ignored by a torch that does not know them).
 *
 * site: "hang/sitecustomize.py" (relative to run_dir), mode 0644, its bytes
 * and SHA-256; with --sync, add it to the manifest (runsync_manifest_add):
 * sync_tree makes run_dir whole and refuses a run_dir already holding
 * anything else, so the file must not be pushed there before the sync. env: "NAME=value", in this
 * order: TORCH_NCCL_TRACE_BUFFER_SIZE=2000 (TORCH_FR_BUFFER_SIZE=2000 for
 *   torch 2.8 and later, which renamed it), TORCH_NCCL_DUMP_ON_TIMEOUT=1,
 *   TORCH_NCCL_DEBUG_INFO_TEMP_FILE=<run_dir>/hang/nccl_trace_rank_,
 *   TORCH_NCCL_DEBUG_INFO_PIPE_FILE=<run_dir>/hang/nccl_trace_pipe_
 *     (these four left out for a torch known to be older than 2.2),
 *   PYTHONPATH=<run_dir>/hang[:existing_pythonpath],
 *   CLUSTERDOC_DUMP_SIGNAL=SIGUSR2.
 * dump_signal: the signal's number (SIGUSR2), for the run's summary.
 *
 * Each Python process of the job then writes its threads' stacks, on that
 * signal, to <run_dir>/hang/py_stacks_<host>_<pid>.txt (the file's first
 * line names the process) and keeps running.
 *
 * 0, or CD_ERR_PARSE with err when run_dir is empty, not absolute nor
 * "~/...", or holds a ':' or a control character (it goes into
 * PYTHONPATH), or existing_pythonpath holds a control character. h is
 * empty on an error; hangready_free it either way.
 */
struct hangready {
	struct runsync_file site; /* "hang/sitecustomize.py" */
	char *env[HANGREADY_MAX_ENV];
	size_t nenv; /* "NAME=value" */
	int dump_signal;
};
int hangready_build(const char *run_dir, const char *torch_version, const char *existing_pythonpath,
                    struct hangready *h, char *err, size_t errlen);
void hangready_free(struct hangready *h);

#endif
