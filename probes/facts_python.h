/* SPDX-License-Identifier: MIT */
/*
 * facts_python.h - the Python/torch part of the node facts.
 *
 * Importing torch takes seconds, so its result is cached per node. A warm
 * request starts no child at all: when the cache file's warm key
 * (facts_pywarm.h: stat() of the recorded interpreter, torch and sys.path
 * directories, the environment that steers them, the driver version and
 * $CUDA_VISIBLE_DEVICES, all computed here in C) is unchanged, the cached
 * python and torch facts are the answer. Otherwise the probe runs the
 * interpreter as a child process twice at most:
 *
 *   1. `python3 -c <info script>` (no torch import, ~30 ms): sys.executable,
 *      the version, importlib.util.find_spec('torch').origin, and the
 *      mtime_ns of the executable and of the torch package directory.
 *   2. Only when torch is installed and the cache does not hold a result for
 *      the same key: `<sys.executable> -c <torch script>`, which imports
 *      torch and prints its version, CUDA and NCCL facts. The result is
 *      written to the cache atomically (temp file + rename).
 *
 * The cache key is the executable path, the Python version, the torch
 * origin, both mtimes, the NVML driver version and $CUDA_VISIBLE_DEVICES (so
 * that installing a driver or hiding GPUs is noticed); a hit on it after a
 * changed warm key (a new PYTHONPATH, say) rewrites the file with the new
 * warm key, so only step 1 ran. The cache file is
 * <cache_dir>/python-facts-<hostname>.json: a home directory shared over NFS
 * by every node must not give one node's answer to another.
 *
 * Both children share one deadline, opts->python_timeout_ms from the start
 * of the probe. Children (facts_pyrun.h) run in their own process group with stdin from
 * /dev/null; on the deadline the whole group is killed with SIGKILL and the
 * child is reaped. Stdout is capped at 64 KiB (more is an error), stderr is
 * read to the end but only its last 2 KiB are kept, for error messages.
 *
 * Except step 2 when there is a cache file: a cold import can take longer
 * than any request waits (torch on NFS, a loaded node), and killing it would
 * leave the cache cold for every request after. So it runs in a detached
 * finisher process (facts_torch_bg.h) under a cap of its own (5 minutes),
 * stores the cache and then reports; the request waits for the report only
 * until its deadline, and past it reports the import as going on. One import
 * at a time per cache file: a request that finds one running waits for it
 * until its deadline and then answers from the cache it stored, without
 * importing torch itself. Without a cache file (HOME unset) the import is
 * the agent's own child, killed at the deadline, since nothing could be
 * warmed.
 */
#ifndef CD_PROBES_FACTS_PYTHON_H
#define CD_PROBES_FACTS_PYTHON_H

#include "probes/facts.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define FACTS_PYTHON_OUT_MAX (64 * 1024)

/*
 * Set facts["python"] and facts["torch"]:
 *   python: {"path": sys.executable, "version": "3.11.2"}, or null when
 *           python3 is not in PATH (no error then; when opts->python names an
 *           interpreter that does not exist, errors["python"] is set too).
 *   torch:  {"version", "cuda_available", "cuda_version", "nccl_version",
 *           "cached", "import_ms"} or null when torch is not installed.
 *           import_ms (how long `import torch` took) is present only when
 *           cached is false. nccl_version is null unless CUDA is available.
 *   python_candidates: set only when opts->python is NULL and the login
 *           python3 has no torch (or there is no python3): the interpreters
 *           in conda's and virtualenv's usual places (facts_pyfind.h) whose
 *           step 1 finds torch, [{"path", "version"}] in search order,
 *           possibly empty; path is the candidate as found, to pass as
 *           --python. The search shares the probe's deadline.
 * On failure the value is null and errors["python"] or errors["torch"] says
 * why ("importing torch took longer than 20.0 s; the import goes on in the
 * background (pid 4242) and its facts are cached when it ends", or "...; an
 * earlier import on this node is still running (pid 4242) and ..."); when
 * errors["python"] is set, torch was not probed. A cache that cannot be written sets
 * errors["cache"] and does not change the facts.
 *
 * opts must not be NULL (see facts_opts_init). gpu_driver (borrowed, may be
 * NULL) is part of the cache key. Returns within opts->python_timeout_ms plus
 * the few milliseconds that killing and reaping a child takes; a child that
 * cannot die at once (uninterruptible sleep) is waited for at most 1 s more,
 * then left unreaped. A background import is not the caller's child and
 * outlives the call; it never holds the caller's stdout or stderr.
 */
void facts_python_collect(const struct facts_opts *opts, const char *gpu_driver, json_t *facts,
                          json_t *errors);

/* What step 1 prints, parsed. */
struct facts_python_info {
	char *executable;            /* sys.executable, absolute */
	char *version;               /* "3.11.2" */
	char *torch_origin;          /* .../torch/__init__.py, NULL when torch is absent */
	int64_t executable_mtime_ns; /* -1 when os.stat failed */
	int64_t torch_mtime_ns;      /* of the torch package directory, -1 when unknown */
	json_t *paths; /* absolute sys.path directories and the user site directory, in
	                  order, at most FACTS_PYWARM_PATHS_MAX; never NULL after a parse */
};

/*
 * Parse the one JSON line step 1 prints. Returns 0 with *out filled (release
 * with facts_python_info_fini), or CD_ERR_PARSE with a message such as
 * `printed something that is not JSON: "hello"` in errbuf.
 */
int facts_python_parse_info(const char *buf, size_t len, struct facts_python_info *out,
                            char *errbuf, size_t errlen);
void facts_python_info_fini(struct facts_python_info *info);

/*
 * Parse the JSON line the torch script prints into a new torch object
 * {"version", "cuda_available", "cuda_version", "nccl_version", "import_ms"}
 * (*torch, caller decrefs). Returns 0; CD_ERR_IO when the script reports
 * that `import torch` raised (message "import torch failed: ..."); or
 * CD_ERR_PARSE for output of the wrong shape.
 */
int facts_python_parse_torch(const char *buf, size_t len, json_t **torch, char *errbuf,
                             size_t errlen);

#endif
